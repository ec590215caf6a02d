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
#include <sqlite3.h>

#include "log.h"
#include "conf.h"
#include "store.h"
#include "api.h"
#include "plan.h"
#include "plans.h"
#include "hosts.h"

/*
 * The steps of plan deployment id, phase by phase; NULL: none, or the
 * store failed (*bad set).
 */
json_t *
hosts_steps_json(int64_t id, int *bad)
{
	sqlite3_stmt	*st;
	json_t		*items, *o, *d;
	int		 i, rc;

	*bad = 1;
	st = store_prepare(hosts_store(), "SELECT job, state, spec_hash, commit_id"
	    " FROM deployments WHERE id = ? AND kind = 'plan'");
	if (st == NULL)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_reset(st);
		if (rc == SQLITE_DONE)
			*bad = 0;
		return NULL;
	}
	d = json_pack("{s:I, s:s, s:s, s:s, s:s}", "id", (json_int_t)id,
	    "plan", (const char *)sqlite3_column_text(st, 0),
	    "state", (const char *)sqlite3_column_text(st, 1),
	    "spec_hash", (const char *)sqlite3_column_text(st, 2),
	    "commit", (const char *)sqlite3_column_text(st, 3));
	sqlite3_reset(st);
	if (d == NULL)
		fatal("json_pack");
	st = store_prepare(hosts_store(), "SELECT phase_index, phase, position,"
	    " host, step, goal, system, state, error, started_at, ended_at"
	    " FROM deployment_steps WHERE deployment_id = ? ORDER BY"
	    " phase_index, position");
	if (st == NULL) {
		json_decref(d);
		return NULL;
	}
	sqlite3_bind_int64(st, 1, id);
	if ((items = json_array()) == NULL)
		fatal("json_array");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		o = json_pack("{s:i, s:s, s:i, s:s, s:s, s:s?, s:s?, s:s, s:s?}",
		    "phase_index", sqlite3_column_int(st, 0),
		    "phase", (const char *)sqlite3_column_text(st, 1),
		    "position", sqlite3_column_int(st, 2),
		    "host", (const char *)sqlite3_column_text(st, 3),
		    "step", (const char *)sqlite3_column_text(st, 4),
		    "goal", (const char *)sqlite3_column_text(st, 5),
		    "system", (const char *)sqlite3_column_text(st, 6),
		    "state", (const char *)sqlite3_column_text(st, 7),
		    "error", (const char *)sqlite3_column_text(st, 8));
		if (o == NULL)
			fatal("json_pack");
		for (i = 9; i <= 10; i++)
			json_object_set_new(o, i == 9 ? "started_at" :
			    "ended_at", sqlite3_column_type(st, i) ==
			    SQLITE_NULL ? json_null() :
			    api_time_json(sqlite3_column_int64(st, i)));
		json_array_append_new(items, o);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
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
	json_object_set_new(o, "current", hh != NULL &&
	    hh->hh_current != NULL ?
	    json_string(hh->hh_current) : json_null());
	json_object_set_new(o, "booted", hh != NULL &&
	    hh->hh_booted != NULL ?
	    json_string(hh->hh_booted) : json_null());
	json_object_set_new(o, "error", hh != NULL &&
	    hh->hh_error != NULL ?
	    json_string(hh->hh_error) : json_null());
	json_object_set_new(o, "last_step", hh != NULL &&
	    hh->hh_last_step != NULL ?
	    json_string(hh->hh_last_step) : json_null());
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
