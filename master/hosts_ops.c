/*
 * Operations of a deploy plan's hosts (seed 003, scope "instance") and
 * the run log of every operation run on a host, by a host action or by
 * EachHost (hosts_each.c).
 *
 * The operations a host offers are those of its plan as last deployed
 * (the spec of the plan's last completed deployment, which its spec hash
 * covers), so a plan that only failed never offers one it cannot do.
 * The detail of a host (GET /api/v1/hosts/{repository}/{host}) lists
 * them as actions <host>.<operation>; the generic procedure
 * (POST .../actions/{action}) checks the rules of master/action.c's
 * table, the input against the operation's schema, saves the run (never
 * the input) with its audit event operation.<host>.<operation>, and runs
 * the command over a new SSH connection with the input on its standard
 * input, waiting at most OPERATION_TIMEOUT seconds.  The answer is the
 * run: exit code (non-zero is a result), the last 64 KiB of output
 * (redacted; a sensitive operation's as it is, in this answer only).
 *
 * Runs are rows of operation_runs with namespace "", job the plan's
 * repository and instance the host; each host keeps its last
 * OPERATION_RUNS_MAX.  SSH runs do not outlive nopsd: a run still
 * "running" at start is "lost".
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "nops.h"
#include "conf.h"
#include "store.h"
#include "store_hosts.h"
#include "deploy.h"
#include "store_deploy.h"
#include "api.h"
#include "acl.h"
#include "jsonb.h"
#include "schema.h"
#include "plan.h"
#include "plans.h"
#include "action.h"
#include "auth.h"
#include "operation.h"
#include "webpub.h"
#include "hosts.h"

/* An operation without a schema takes no input: an empty object. */
#define HOSTS_OP_NO_INPUT \
	"{\"type\":\"object\",\"additionalProperties\":false}"

struct hosts_oprun {
	struct api_later	*hr_later;
	int64_t			 hr_id;
	int			 hr_sensitive;
	uint32_t		 hr_ssh;
};

/* ---- the plan as deployed ---- */

/* The deployed plan, parsed, and where it came from. */
struct hosts_deployed_plan {
	struct plan	*dp_plan;
	int64_t		 dp_id;
	char		*dp_commit;
	size_t		 dp_commitlen;
};

static int
hosts_deployed_row(const struct store_hosts_deploy *hd, void *arg)
{
	struct hosts_deployed_plan	*dp = arg;

	dp->dp_id = hd->hd_id;
	if ((dp->dp_plan = plan_parse(hd->hd_spec, hd->hd_speclen)) == NULL)
		fatal("plan_parse");
	if (dp->dp_commit != NULL)
		strlcpy(dp->dp_commit, hd->hd_commit, dp->dp_commitlen);
	return 0;
}

struct plan *
hosts_deployed(const char *repo, int64_t *id, char *commit, size_t len,
    int *bad)
{
	struct hosts_deployed_plan	 dp = { NULL, 0, commit, len };
	struct plan			*pl;

	*bad = store_hosts_plan_find(hosts_store(), repo,
	    STORE_HOSTS_LAST_COMPLETED, hosts_deployed_row, &dp) == -1;
	pl = dp.dp_plan;
	*id = dp.dp_id;
	if (pl != NULL && pl->pl_nerrors_all > 0) {
		/* Deployed plans were checked; one that is not is lost. */
		log_warnx("plan %s: deployment %lld's spec does not parse: %s",
		    repo, (long long)*id, pl->pl_errors[0]);
		plan_free(pl);
		pl = NULL;
		*bad = 1;
	}
	return pl;
}

/* A deployment of repo's plan under way (approval aside): 1, 0, -1. */
int
hosts_plan_busy(const char *repo)
{
	struct deploy	 d;
	int		 rc, busy;

	if ((rc = store_deploy_active(hosts_store(), "", repo, &d)) == -1)
		return -1;
	if (rc != 0)
		return 0;
	busy = d.d_state != DS_PENDING_APPROVAL;
	deploy_free(&d);
	return busy;
}

/* ---- the run log ---- */

int64_t
hosts_run_create(const char *repo, const char *host, const char *op,
    const char *actor, int sensitive, int64_t deployment, int audit)
{
	struct oprun_new	 n;
	char			 action[256], target[256];

	snprintf(action, sizeof(action), "operation.%s.%s", host, op);
	snprintf(target, sizeof(target), "host/%s/%s", repo, host);
	memset(&n, 0, sizeof(n));
	n.on_deployment = deployment;
	n.on_ns = "";
	n.on_job = repo;
	n.on_instance = host;
	n.on_operation = op;
	n.on_actor = actor;
	n.on_sensitive = sensitive;
	/* The runs each host keeps; a test-hooks build may lower it. */
	n.on_keep = operation_limit("NOPS_TEST_HOST_RUNS_MAX",
	    OPERATION_RUNS_MAX);
	n.on_event = audit ? action : NULL;
	n.on_target = target;
	return operation_run_create(hosts_store(), &n);
}

/* A run ended; a sensitive run's output is never stored. */
void
hosts_run_end(int64_t id, const char *state, int exit_code,
    const char *output, const char *error, int sensitive)
{
	if (id <= 0)
		return;
	if (operation_run_end(hosts_store(), id, state, exit_code, output,
	    error, sensitive) == -1)
		log_warnx("host operation run %lld: cannot save its end: %s",
		    (long long)id, store_error(hosts_store()));
	webpub_changed();
}

/* Runs left "running" by an earlier nopsd: SSH runs do not outlive it. */
void
hosts_runs_lost(void)
{
	struct store	*s = hosts_store();

	if (store_begin(s) == -1)
		return;
	if (store_hosts_runs_lost(s, time(NULL)) == -1 ||
	    store_commit(s) == -1)
		store_rollback(s);
}

/* GET /api/v1/plans/{repository}/operations/runs[?host=&limit=&cursor=] */
static void
hosts_api_runs(struct api_req *req, struct api_resp *resp)
{
	char	*host = api_query(req, "host");

	operation_runs_answer(hosts_store(), req, resp, "", req->ar_args[0],
	    host);
	free(host);
}

/* GET /api/v1/plans/{repository}/operations/runs/{id} */
static void
hosts_api_run(struct api_req *req, struct api_resp *resp)
{
	const char	*errstr = NULL;
	json_t		*run;
	int64_t		 id;

	id = strtonum(req->ar_args[1], 1, INT64_MAX, &errstr);
	run = errstr == NULL ? operation_run_read(hosts_store(), id, "",
	    req->ar_args[0]) : NULL;
	if (run == NULL) {
		api_error(resp, 404, "not_found", "plan %s has no operation "
		    "run %s", req->ar_args[0], req->ar_args[1]);
		return;
	}
	resp->status = 200;
	resp->body = run;
}

/* ---- a host's operations as actions ---- */

/* The operation op of host in pl, or NULL. */
static json_t *
hosts_op_find(const struct plan *pl, const char *host, const char *op)
{
	const struct plan_host	*h;

	if (pl == NULL || op == NULL || (h = plan_host_find(pl, host)) ==
	    NULL || h->ph_operations == NULL)
		return NULL;
	return json_object_get(h->ph_operations, op);
}

/* "alpha.greet" of host alpha: "greet"; else NULL. */
static const char *
hosts_op_name(const char *host, const char *id)
{
	size_t	 l = strlen(host);

	if (id == NULL || strncmp(id, host, l) != 0 || id[l] != '.' ||
	    id[l + 1] == '\0')
		return NULL;
	return id + l + 1;
}

/* The conditions of ac (ac_job: the repository, ac_host: the host). */
static void
hosts_action_ctx(struct action_ctx *ac, struct api_req *req, const char *repo,
    const char *host, const struct plan *deployed, int64_t deployed_id)
{
	int	 rc;

	memset(ac, 0, sizeof(*ac));
	ac->ac_req = req;
	ac->ac_ns = "";
	ac->ac_job = repo;
	ac->ac_host = host;
	ac->ac_last_ok = deployed_id;
	if (deployed != NULL)
		ac->ac_cond |= ACOND_DEPLOYED;
	if ((rc = hosts_plan_busy(repo)) == 0)
		ac->ac_cond |= ACOND_IDLE;
	else if (rc == -1)
		ac->ac_store_err = 1;
}

static int
hosts_key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The "actions" of a host's detail: its operations, in name order. */
json_t *
hosts_actions_json(struct api_req *req, const char *repo, const char *host)
{
	const struct action_def	*ad;
	const struct plan_host	*h;
	struct action_def	 tmp;
	struct action_ctx	 ac;
	struct plan		*pl;
	json_t			*list, *op, *o, *v;
	const char		*k, **names = NULL;
	char			 id[192], desc[512], group[PLAN_NAME_MAX + 1];
	char			*schema;
	size_t			 i, n = 0;
	int64_t			 did;
	int			 bad;

	list = json_array();
	pl = hosts_deployed(repo, &did, NULL, 0, &bad);
	if ((ad = action_find(ACTION_ON_HOST, "*.*")) == NULL || pl == NULL ||
	    (h = plan_host_find(pl, host)) == NULL ||
	    h->ph_operations == NULL)
		goto out;
	hosts_action_ctx(&ac, req, repo, host, pl, did);
	ac.ac_cond |= ACOND_HAS_OPERATION;
	if ((names = calloc(json_object_size(h->ph_operations) + 1,
	    sizeof(*names))) == NULL)
		fatal("calloc");
	json_object_foreach(h->ph_operations, k, v)
		names[n++] = k;
	qsort(names, n, sizeof(*names), hosts_key_cmp);
	for (i = 0; i < n; i++) {
		op = json_object_get(h->ph_operations, names[i]);
		snprintf(id, sizeof(id), "%s.%s", host, names[i]);
		v = json_object_get(op, "description");
		if (json_is_string(v))
			snprintf(desc, sizeof(desc), "%s",
			    json_string_value(v));
		else
			snprintf(desc, sizeof(desc), "Run %s once on host %s%s",
			    names[i], host, json_is_true(json_object_get(op,
			    "sensitive")) ? "; its output is shown once and "
			    "never stored" : "");
		v = json_object_get(op, "schema");
		schema = v != NULL ? json_dumps(v, JSON_COMPACT |
		    JSON_ENCODE_ANY) : strdup(HOSTS_OP_NO_INPUT);
		if (schema == NULL)
			fatal("json_dumps");
		tmp = *ad;
		tmp.ad_id = id;
		tmp.ad_title = names[i];
		tmp.ad_description = desc;
		tmp.ad_confirm = json_string_value(json_object_get(op,
		    "confirm"));
		tmp.ad_input = schema;
		ac.ac_operation = id;
		o = action_json_row(&tmp, &ac);
		free(schema);
		/* a boolean schema does not load as an object */
		if (json_object_get(o, "input_schema") == NULL)
			json_object_set(o, "input_schema", v != NULL ? v :
			    json_object());
		strlcpy(group, names[i], sizeof(group));
		group[strcspn(group, "-")] = '\0';
		json_object_set_new(o, "group", json_string(group));
		json_object_set_new(o, "sensitive", json_boolean(json_is_true(
		    json_object_get(op, "sensitive"))));
		json_array_append_new(list, o);
	}
out:
	free(names);
	plan_free(pl);
	return list;
}

static void
hosts_oprun_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hosts_oprun	*r = arg;
	struct api_resp		 resp;
	json_t			*run;
	const char		*state;
	char			 err[SSH_ERROR_MAX + 64];
	int			 ran = res->hr_stage == SSH_STAGE_DONE;

	if (ran) {
		state = res->hr_status == 0 ? "succeeded" : "failed";
		hosts_run_end(r->hr_id, state, res->hr_status, res->hr_shown,
		    NULL, r->hr_sensitive);
	} else {
		snprintf(err, sizeof(err), "the command did not start: %s",
		    res->hr_error);
		hosts_run_end(r->hr_id, "error", -1, NULL, err,
		    r->hr_sensitive);
	}
	log_info("host operation run %lld ended: %s", (long long)r->hr_id,
	    ran ? (res->hr_status == 0 ? "exit 0" : "non-zero exit") :
	    res->hr_error);
	memset(&resp, 0, sizeof(resp));
	if (!ran) {
		resp.status = 500;
		resp.body = api_error_json("runtime_error", "run %lld: the "
		    "command did not start: %s", (long long)r->hr_id,
		    res->hr_error);
	} else if ((run = operation_run_read(hosts_store(), r->hr_id, "",
	    NULL)) == NULL) {
		resp.status = 500;
		resp.body = api_error_json("runtime_error", "run %lld: "
		    "cannot read it back: %s", (long long)r->hr_id,
		    store_error(hosts_store()));
	} else {
		/* A sensitive run's output: this once, as it is. */
		if (r->hr_sensitive)
			json_object_set_new(run, "output",
			    jsonb_str(res->hr_out));
		resp.status = 200;
		resp.body = run;
	}
	api_later_answer(r->hr_later, &resp);
	free(r);
}

/* The procedure of the host action row (master/action.c). */
void
hosts_action_run(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	const struct plan_host	*h;
	struct hosts_oprun	*r;
	struct plan		*pl;
	json_t			*op, *schema, *cmd;
	const char		*name;
	char			 err[512], *text = NULL, *line = NULL;
	int64_t			 did;
	int			 bad, sensitive, rc;

	name = hosts_op_name(ac->ac_host, ac->ac_operation);
	pl = hosts_deployed(ac->ac_job, &did, NULL, 0, &bad);
	if ((op = hosts_op_find(pl, ac->ac_host, name)) == NULL ||
	    (h = plan_host_find(pl, ac->ac_host)) == NULL ||
	    !json_is_string(cmd = json_object_get(op, "command"))) {
		api_error(resp, 404, "not_found", "host %s of plan %s has no "
		    "operation %s in its plan as deployed", ac->ac_host,
		    ac->ac_job, ac->ac_operation);
		goto out;
	}
	sensitive = json_is_true(json_object_get(op, "sensitive"));
	if ((schema = json_object_get(op, "schema")) != NULL)
		json_incref(schema);
	else if ((schema = json_loads(HOSTS_OP_NO_INPUT, 0, NULL)) == NULL)
		fatal("json_loads");
	rc = schema_validate(schema, input, err, sizeof(err));
	json_decref(schema);
	if (rc == SCHEMA_INVALID) {
		api_error(resp, 422, "invalid_configuration", "input of %s "
		    "does not agree with its schema: at %s", ac->ac_operation,
		    err);
		goto out;
	}
	if (rc != SCHEMA_VALID) {
		api_error(resp, 422, "invalid_configuration", "host %s: the "
		    "input schema of %s cannot be used: %s", ac->ac_host,
		    ac->ac_operation, err);
		goto out;
	}
	if ((text = json_dumps(input, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		fatal("json_dumps");
	line = xasprintf("%s\n", text);
	if (strlen(line) > SSH_STDIN_MAX) {
		api_error(resp, 413, "too_large", "input: more than %d bytes",
		    SSH_STDIN_MAX);
		goto out;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->hr_sensitive = sensitive;
	if ((r->hr_id = hosts_run_create(ac->ac_job, ac->ac_host, name,
	    ac->ac_req->ar_actor, sensitive, did, 1)) == -1) {
		free(r);
		api_error(resp, 500, "runtime_error", "the store refused the "
		    "run: %s", store_error(hosts_store()));
		goto out;
	}
	r->hr_ssh = hosts_ssh(h, json_string_value(cmd), OPERATION_TIMEOUT,
	    line, strlen(line), -1, hosts_oprun_done, r);
	if (r->hr_ssh == 0) {
		hosts_run_end(r->hr_id, "error", -1, NULL, "the command did "
		    "not start: the nomadworker is not running", sensitive);
		api_error(resp, 500, "runtime_error", "run %lld: the command "
		    "did not start: the nomadworker is not running",
		    (long long)r->hr_id);
		free(r);
		goto out;
	}
	log_info("host operation %s of plan %s run %lld started by %s",
	    ac->ac_operation, ac->ac_job, (long long)r->hr_id,
	    ac->ac_req->ar_actor);
	r->hr_later = api_later(ac->ac_req);
	resp->status = API_DEFERRED;
out:
	if (text != NULL)
		freezero(text, strlen(text));
	if (line != NULL)
		freezero(line, strlen(line));
	plan_free(pl);
}

/* The host of repo's current plan, or of its deployed one; NULL: none. */
static int
hosts_known(const char *repo, const char *host, const struct plan *deployed)
{
	const struct plan	*pl;
	const char		*commit;

	if ((pl = plans_get(repo, &commit)) != NULL &&
	    plan_host_find(pl, host) != NULL)
		return 1;
	return deployed != NULL && plan_host_find(deployed, host) != NULL;
}

/* POST /api/v1/hosts/{repository}/{host}/actions/{action} */
static void
hosts_api_action(struct api_req *req, struct api_resp *resp)
{
	const struct action_def	*ad;
	struct action_ctx	 ac;
	struct plan		*pl;
	json_t			*body;
	const char		*repo = req->ar_args[0], *host =
	    req->ar_args[1];
	const char		*id = req->ar_args[2];
	int64_t			 did;
	int			 bad;

	if ((ad = action_find(ACTION_ON_HOST, id)) == NULL) {
		action_not_found(resp, ACTION_ON_HOST, id);
		return;
	}
	if ((body = api_json_body(req, resp)) == NULL)
		return;
	pl = hosts_deployed(repo, &did, NULL, 0, &bad);
	if (bad) {
		api_error(resp, 500, "runtime_error", "plan %s: cannot read "
		    "its last deployment: %s", repo,
		    store_error(hosts_store()));
		goto out;
	}
	if (!hosts_known(repo, host, pl)) {
		api_error(resp, 404, "not_found", "no host %s in the plan of "
		    "%s", host, repo);
		goto out;
	}
	hosts_action_ctx(&ac, req, repo, host, pl, did);
	ac.ac_operation = id;
	if (hosts_op_find(pl, host, hosts_op_name(host, id)) != NULL)
		ac.ac_cond |= ACOND_HAS_OPERATION;
	action_take(ad, &ac, body, resp);
out:
	plan_free(pl);
	json_decref(body);
}

/* GET /api/v1/hosts/{repository}/{host}: as in the list, with actions. */
static void
hosts_api_host(struct api_req *req, struct api_resp *resp)
{
	json_t	*o;

	if ((o = hosts_host_json(req->ar_args[0], req->ar_args[1])) == NULL) {
		api_error(resp, 404, "not_found", "no host %s in the plan of "
		    "%s", req->ar_args[1], req->ar_args[0]);
		return;
	}
	json_object_set_new(o, "actions", hosts_actions_json(req,
	    req->ar_args[0], req->ar_args[1]));
	resp->status = 200;
	resp->body = o;
}

/*
 * Alike on purpose: a route table like operation.c's and leftbehind.c's;
 * the rows are data api.c reads, only their layout repeats.
 */
const struct api_route hosts_ops_routes[] = {
	{ "GET",  "/api/v1/hosts/*/*",	1, hosts_api_host, CAP_READ,
	    API_NS_PLAN },
	{ "POST", "/api/v1/hosts/*/*/actions/*", 1, hosts_api_action,
	    ACL_ROUTE_ACTION, API_NS_PLAN },
	{ "GET",  "/api/v1/plans/*/operations/runs", 1, hosts_api_runs,
	    CAP_READ, API_NS_PLAN },
	{ "GET",  "/api/v1/plans/*/operations/runs/*", 1, hosts_api_run,
	    CAP_READ, API_NS_PLAN },
};
const size_t hosts_ops_nroutes = sizeof(hosts_ops_routes) /
    sizeof(hosts_ops_routes[0]);

/*
 * The "actions" of a plan (GET /api/v1/plans[/{repository}]): EachHost of
 * each operation its hosts in a phase declare in the plan as deployed,
 * id the operation's name, for a client to draw like any other action.
 * The input schema and sensitive are those of the first host that has
 * it (each host's schema checks the input again when it runs).
 */
json_t *
hosts_each_actions_json(struct api_req *req, const char *repo)
{
	const struct plan_host	*h;
	struct plan		*pl;
	json_t			*list, *seen, *op, *o, *v;
	const char		*k, *why = NULL;
	char			 desc[512], confirm[512],
				 group[PLAN_NAME_MAX + 1];
	size_t			 i;
	int64_t			 did;
	int			 bad, busy;

	list = json_array();
	if ((pl = hosts_deployed(repo, &did, NULL, 0, &bad)) == NULL)
		return list;
	if ((busy = hosts_plan_busy(repo)) != 0)
		why = busy == -1 ? "the state of the plan cannot be read now" :
		    "a deployment of the plan is under way; try again when it "
		    "ends";
	else if (!api_auth_allows(req, CAP_HOSTS, ""))
		why = "needs the hosts capability in namespace \"\"";
	seen = json_object();
	for (i = 0; i < pl->pl_nhosts; i++) {
		h = &pl->pl_hosts[i];
		if (h->ph_phase < 0 || h->ph_operations == NULL)
			continue;
		json_object_foreach(h->ph_operations, k, op) {
			if (json_object_get(seen, k) != NULL)
				continue;
			json_object_set_new(seen, k, json_true());
			v = json_object_get(op, "description");
			snprintf(desc, sizeof(desc), "On each host of the plan "
			    "that declares it, one host after the other; no "
			    "host starts after a failure%s%s",
			    json_is_string(v) ? ". " : "", json_is_string(v) ?
			    json_string_value(v) : "");
			v = json_object_get(op, "confirm");
			snprintf(confirm, sizeof(confirm), "%s",
			    json_is_string(v) ? json_string_value(v) : "");
			strlcpy(group, k, sizeof(group));
			group[strcspn(group, "-")] = '\0';
			o = jsonb_pack("{s:s,s:s,s:s,s:b,s:s,s:s,s:s,s:b}",
			    "id", k, "title", k, "description", desc,
			    "enabled", why == NULL, "scope", "target",
			    "kind", "operation", "group", group,
			    "sensitive", json_is_true(json_object_get(op,
			    "sensitive")));
			if (why != NULL)
				json_object_set_new(o, "disabled_reason",
				    json_string(why));
			if (confirm[0] != '\0')
				json_object_set_new(o, "confirm",
				    json_string(confirm));
			v = json_object_get(op, "schema");
			json_object_set_new(o, "input_schema", v != NULL ?
			    json_incref(v) : json_object());
			json_array_append_new(list, o);
		}
	}
	json_decref(seen);
	plan_free(pl);
	return list;
}
