/*
 * The API of hosts of deploy plans: GET /api/v1/hosts and a plan
 * deployment's steps (GET /api/v1/deployments/{id}/steps).
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "conf.h"
#include "store.h"
#include "store_hosts.h"
#include "api.h"
#include "jsonb.h"
#include "plan.h"
#include "plans.h"
#include "hosts.h"

static int
hosts_deploy_json(const struct store_hosts_deploy *hd, void *arg)
{
	json_t	**d = arg;

	if ((*d = json_pack("{s:I, s:s, s:s, s:s, s:s}", "id",
	    (json_int_t)hd->hd_id, "plan", hd->hd_plan, "state", hd->hd_state,
	    "spec_hash", hd->hd_spec_hash, "commit", hd->hd_commit)) == NULL)
		fatal("json_pack");
	return 0;
}

static int
hosts_step_json(const struct store_hosts_step *sh, void *arg)
{
	json_t	*o;

	o = json_pack("{s:i, s:s, s:i, s:s, s:s, s:s?, s:s?, s:s, s:s?}",
	    "phase_index", sh->sh_phase_index, "phase", sh->sh_phase,
	    "position", sh->sh_position, "host", sh->sh_host,
	    "step", sh->sh_step, "goal", sh->sh_goal,
	    "system", sh->sh_system, "state", sh->sh_state,
	    "error", sh->sh_error);
	if (o == NULL)
		fatal("json_pack");
	json_object_set_new(o, "started_at", sh->sh_started_at == 0 ?
	    json_null() : api_time_json(sh->sh_started_at));
	json_object_set_new(o, "ended_at", sh->sh_ended_at == 0 ?
	    json_null() : api_time_json(sh->sh_ended_at));
	json_array_append_new(arg, o);
	return 0;
}

/*
 * The steps of plan deployment id, phase by phase; NULL: none, or the
 * store failed (*bad set).
 */
json_t *
hosts_steps_json(int64_t id, int *bad)
{
	json_t		*items, *d = NULL;
	int		 rc;

	*bad = 1;
	if ((rc = store_hosts_deploy_get(hosts_store(), id, hosts_deploy_json,
	    &d)) != 1) {
		if (rc == 0)
			*bad = 0;
		return NULL;
	}
	if ((items = json_array()) == NULL)
		fatal("json_array");
	if (store_hosts_steps_walk(hosts_store(), id, hosts_step_json,
	    items) == -1) {
		/* Half a list of steps would misstate the deployment. */
		json_decref(items);
		json_decref(d);
		return NULL;
	}
	json_object_set_new(d, "steps", items);
	*bad = 0;
	return d;
}

/* One host of repo's plan pl at commit, as nops last saw it. */
static json_t *
hosts_item_json(const char *repo, const char *commit, const struct plan *pl,
    const struct plan_host *h)
{
	struct hosts_host	*hh;
	const char		*state;
	json_t			*o;

	hh = hosts_host_get(repo, h->ph_name, 0);
	if (pl->pl_nerrors_all > 0)
		state = "invalid_plan";
	else if (h->ph_phase < 0)
		state = "in_no_phase";
	else if (hh == NULL || hh->hh_seen_at == 0)
		state = "unknown";
	else if (hh->hh_error != NULL)
		state = "unreachable";
	else if (hh->hh_current != NULL &&
	    strcmp(hh->hh_current, h->ph_system) == 0)
		state = "in_sync";
	else
		state = "drifted";
	o = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:i, s:s}",
	    "name", h->ph_name, "repository", repo,
	    "commit", commit, "wanted", h->ph_system,
	    "address", h->ph_address, "port", h->ph_port,
	    "state", state);
	if (o == NULL)
		fatal("json_pack");
	json_object_set_new(o, "phase", h->ph_phase >= 0 ?
	    json_string(pl->pl_phases[h->ph_phase].pp_name) :
	    json_null());
	/* What a host said: text made valid (jsonb_str; NULL is null). */
	json_object_set_new(o, "current", jsonb_str(hh != NULL ?
	    hh->hh_current : NULL));
	json_object_set_new(o, "booted", jsonb_str(hh != NULL ?
	    hh->hh_booted : NULL));
	json_object_set_new(o, "error", jsonb_str(hh != NULL ?
	    hh->hh_error : NULL));
	json_object_set_new(o, "last_step", jsonb_str(hh != NULL ?
	    hh->hh_last_step : NULL));
	json_object_set_new(o, "seen_at", api_time_json(
	    hh != NULL ? hh->hh_seen_at : 0));
	return o;
}

/* GET /api/v1/hosts/{repository}/{host} without its actions; NULL: none. */
json_t *
hosts_host_json(const char *repo, const char *name)
{
	const struct plan	*pl;
	const struct plan_host	*h;
	const char		*commit;

	if ((pl = plans_get(repo, &commit)) == NULL ||
	    (h = plan_host_find(pl, name)) == NULL)
		return NULL;
	return hosts_item_json(repo, commit, pl, h);
}

/* GET /api/v1/hosts: every host of every plan, as nops last saw it. */
json_t *
hosts_json(void)
{
	const struct plan	*pl;
	const char		*repo, *commit;
	json_t			*items, *o;
	size_t			 i;

	if ((items = json_array()) == NULL)
		fatal("json_array");
	for (repo = plans_first(); repo != NULL; repo = plans_next(repo)) {
		if ((pl = plans_get(repo, &commit)) == NULL)
			continue;
		for (i = 0; i < pl->pl_nhosts; i++)
			json_array_append_new(items, hosts_item_json(repo,
			    commit, pl, &pl->pl_hosts[i]));
	}
	if ((o = json_pack("{s:o, s:n}", "items", items, "next")) == NULL)
		fatal("json_pack");
	return o;
}

static void
hosts_api_list(struct api_req *req, struct api_resp *resp)
{
	(void)req;
	resp->body = hosts_json();
	resp->status = 200;
}

/* GET /api/v1/deployments/{id}/steps: a plan deployment's host steps. */
static void
hosts_api_steps(struct api_req *req, struct api_resp *resp)
{
	const char	*errstr;
	long long	 id;
	int		 bad;

	id = strtonum(req->ar_args[0], 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		api_error(resp, 400, "bad_request", "deployment id %s is %s",
		    req->ar_args[0], errstr);
		return;
	}
	if ((resp->body = hosts_steps_json(id, &bad)) == NULL) {
		if (bad)
			api_error(resp, 500, "runtime_error", "plan deployment "
			    "%lld: the database: %s", (long long)id,
			    store_error(hosts_store()));
		else
			api_error(resp, 404, "not_found", "no plan deployment "
			    "%lld", (long long)id);
		return;
	}
	resp->status = 200;
}

/*
 * Reads in any namespace: hosts have none, and a plan's deployment is in
 * the namespace "".
 */
/*
 * Alike on purpose: a route table like plans.c's and hosts_ops.c's; the
 * rows are data api.c reads, only their layout repeats.
 */
const struct api_route hosts_routes[] = {
	{ "GET",  "/api/v1/hosts",		1, hosts_api_list, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/deployments/*/steps", 1, hosts_api_steps, CAP_READ,
	    API_NS_NONE },
	/* EachHost: acting on hosts, as a plan's deployment needs. */
	{ "POST", "/api/v1/plans/*/operations/*", 1, hosts_each_api,
	    CAP_HOSTS, API_NS_PLAN },
};
const size_t hosts_nroutes = sizeof(hosts_routes) / sizeof(hosts_routes[0]);
