/*
 * EachHost (the seed's Plan.EachHost): one operation a plan declares,
 * run on every host of the plan (or the hosts named), at most limit at
 * once, regardless of phases.  Ad-hoc work over many hosts goes this way:
 * the command is the plan's (from git, reviewed), never a client's.
 *
 *	POST /api/v1/plans/{repository}/operations/{operation}
 *	{"limit": 1..64, "hosts": ["name", ...], "input": {...}}
 *
 * The operation is that of the plan as last deployed (its last completed
 * deployment), as for a host's actions (hosts_ops.c); none while a
 * deployment of the plan is under way.  Each host's run is written to
 * the run log (hosts_ops.c), never its input.
 *
 * The input is checked against the operation's schema when it declares
 * one, and is given to the command on stdin as JSON, never in its command
 * line.  Each host's run waits at most EACH_TIMEOUT seconds.  The first
 * host that fails (no connection, a refused key, a non-zero exit) stops
 * the start of others, as an errgroup's context does; those already
 * running finish.  The answer comes once every started host is done,
 * with each host's state, exit code and output (the last 64 KiB,
 * redacted; none for a sensitive operation), and the first failure.
 * The start and the end are in the audit log.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "api.h"
#include "jsonb.h"
#include "schema.h"
#include "plan.h"
#include "plans.h"
#include "hosts.h"
#include "xmalloc.h"

#define EACH_TIMEOUT	300	/* seconds, one host's run */
#define EACH_LIMIT_MAX	64

#define EACH_PENDING	0	/* not started (yet) */
#define EACH_RUNNING	1
#define EACH_SUCCEEDED	2
#define EACH_FAILED	3

struct each_run;

struct each_host {
	struct each_run		*eh_run;
	const struct plan_host	*eh_host;
	const char		*eh_command;
	uint32_t		 eh_ssh;
	int			 eh_state;	/* EACH_* */
	int			 eh_status;	/* exit code, -1: none */
	int64_t			 eh_run_id;	/* in the run log, or 0 */
	char			*eh_output;	/* redacted, or NULL */
	char			*eh_error;
};

struct each_run {
	TAILQ_ENTRY(each_run)	 er_entry;
	struct api_later	*er_later;
	char			 er_actor[64];
	char			*er_repo;
	char			 er_commit[GITW_COMMIT_HEXLEN + 1];
	int64_t			 er_deployment;	/* the plan's, deployed */
	char			*er_op;
	struct plan		*er_plan;	/* its own copy */
	char			*er_input;	/* JSON + "\n", or NULL */
	int			 er_sensitive;
	int			 er_limit;
	struct each_host	*er_hosts;
	size_t			 er_nhosts;
	size_t			 er_next;	/* the next to start */
	size_t			 er_running;
	char			*er_first_error;
};

static TAILQ_HEAD(, each_run) each_runs = TAILQ_HEAD_INITIALIZER(each_runs);

static void	 each_start(struct each_run *);

static void
each_audit(struct each_run *er, const char *detail)
{
	struct store	*s = hosts_store();
	char		 target[NOPS_NAME_MAX + 8], action[128];

	snprintf(target, sizeof(target), "plan/%s", er->er_repo);
	snprintf(action, sizeof(action), "plan_%s.%s", er->er_repo, er->er_op);
	if (store_begin(s) == -1)
		return;
	if (store_event(s, er->er_actor, action, target, detail) == -1 ||
	    store_commit(s) == -1)
		store_rollback(s);
}

static void
each_free(struct each_run *er)
{
	size_t	 i;

	TAILQ_REMOVE(&each_runs, er, er_entry);
	for (i = 0; i < er->er_nhosts; i++) {
		if (er->er_hosts[i].eh_ssh != 0)
			hosts_ssh_cancel(er->er_hosts[i].eh_ssh);
		free(er->er_hosts[i].eh_output);
		free(er->er_hosts[i].eh_error);
	}
	free(er->er_hosts);
	plan_free(er->er_plan);
	if (er->er_input != NULL)
		freezero(er->er_input, strlen(er->er_input));
	free(er->er_repo);
	free(er->er_op);
	free(er->er_first_error);
	free(er);
}

static const char *
each_state_name(int state)
{
	switch (state) {
	case EACH_SUCCEEDED:
		return "succeeded";
	case EACH_FAILED:
		return "failed";
	case EACH_RUNNING:
		return "running";
	default:
		return "not_started";
	}
}

/* Every started host is done: answer and forget the run. */
static void
each_finish(struct each_run *er)
{
	struct api_resp	 resp;
	json_t		*hosts, *o;
	size_t		 i, n[4] = { 0, 0, 0, 0 };
	char		 detail[512];

	if ((hosts = json_array()) == NULL)
		fatal("json_array");
	for (i = 0; i < er->er_nhosts; i++) {
		struct each_host *eh = &er->er_hosts[i];

		n[eh->eh_state]++;
		o = jsonb_pack("{s:s, s:o, s:s, s:o, s:o, s:o}",
		    "name", eh->eh_host->ph_name, "run", eh->eh_run_id > 0 ?
		    json_integer(eh->eh_run_id) : json_null(),
		    "state", each_state_name(eh->eh_state),
		    "exit_code", eh->eh_status >= 0 ?
		    json_integer(eh->eh_status) : json_null(),
		    "output", jsonb_str(eh->eh_output),
		    "error", jsonb_str(eh->eh_error));
		json_array_append_new(hosts, o);
	}
	memset(&resp, 0, sizeof(resp));
	resp.status = 200;
	resp.body = jsonb_pack("{s:s, s:s, s:s, s:i, s:b, s:o, s:I, s:I, s:I,"
	    " s:o}", "repository", er->er_repo, "commit", er->er_commit,
	    "operation", er->er_op, "limit", er->er_limit,
	    "sensitive", er->er_sensitive, "hosts", hosts,
	    "succeeded", (json_int_t)n[EACH_SUCCEEDED],
	    "failed", (json_int_t)n[EACH_FAILED],
	    "not_started", (json_int_t)n[EACH_PENDING],
	    "error", jsonb_str(er->er_first_error));
	snprintf(detail, sizeof(detail), "operation %s on the hosts of plan "
	    "%s: %zu succeeded, %zu failed, %zu not started", er->er_op,
	    er->er_repo, n[EACH_SUCCEEDED], n[EACH_FAILED], n[EACH_PENDING]);
	each_audit(er, detail);
	log_info("%s", detail);
	api_later_answer(er->er_later, &resp);
	er->er_later = NULL;
	each_free(er);
}

static void
each_done(const struct hosts_ssh_res *res, void *arg)
{
	struct each_host	*eh = arg;
	struct each_run		*er = eh->eh_run;
	char			 err[SSH_ERROR_MAX + 64];

	eh->eh_ssh = 0;
	er->er_running--;
	eh->eh_status = res->hr_stage == SSH_STAGE_DONE ? res->hr_status : -1;
	if (!er->er_sensitive)
		eh->eh_output = xstrdup(res->hr_shown);
	if (res->hr_stage == SSH_STAGE_DONE)
		hosts_run_end(eh->eh_run_id, res->hr_status == 0 ? "succeeded" :
		    "failed", res->hr_status, res->hr_shown, NULL,
		    er->er_sensitive);
	else {
		snprintf(err, sizeof(err), "the command did not start: %s",
		    res->hr_error);
		hosts_run_end(eh->eh_run_id, "error", -1, NULL, err,
		    er->er_sensitive);
	}
	if (res->hr_stage == SSH_STAGE_DONE && res->hr_status == 0)
		eh->eh_state = EACH_SUCCEEDED;
	else {
		eh->eh_state = EACH_FAILED;
		if (res->hr_stage == SSH_STAGE_DONE)
			snprintf(err, sizeof(err), "exit %d", res->hr_status);
		else
			snprintf(err, sizeof(err), "%s", res->hr_error);
		eh->eh_error = xstrdup(err);
		if (er->er_first_error == NULL) {
			snprintf(err, sizeof(err), "host %s: %s",
			    eh->eh_host->ph_name, eh->eh_error);
			er->er_first_error = xstrdup(err);
			log_warnx("operation %s on plan %s: %s; no other host "
			    "starts", er->er_op, er->er_repo, err);
		}
	}
	each_start(er);
}

/* Start hosts up to the limit; after a failure, none. */
static void
each_start(struct each_run *er)
{
	struct each_host	*eh;

	while (er->er_first_error == NULL && er->er_next < er->er_nhosts &&
	    er->er_running < (size_t)er->er_limit) {
		eh = &er->er_hosts[er->er_next++];
		eh->eh_state = EACH_RUNNING;
		er->er_running++;
		eh->eh_run_id = hosts_run_create(er->er_repo,
		    eh->eh_host->ph_name, er->er_op, er->er_actor,
		    er->er_sensitive, er->er_deployment, 0);
		if (eh->eh_run_id == -1) {
			log_warnx("operation %s on %s of plan %s: the run log "
			    "refused the run: %s", er->er_op,
			    eh->eh_host->ph_name, er->er_repo,
			    store_error(hosts_store()));
			eh->eh_run_id = 0;
		}
		eh->eh_ssh = hosts_ssh(eh->eh_host, eh->eh_command,
		    EACH_TIMEOUT, er->er_input, er->er_input != NULL ?
		    strlen(er->er_input) : 0, -1, each_done, eh);
		if (eh->eh_ssh == 0) {
			er->er_running--;
			eh->eh_state = EACH_FAILED;
			eh->eh_error = xstrdup("the nomadworker is not "
			    "running");
			hosts_run_end(eh->eh_run_id, "error", -1, NULL, "the "
			    "command did not start: the nomadworker is not "
			    "running", er->er_sensitive);
			if (er->er_first_error == NULL)
				er->er_first_error = xstrdup("the "
				    "nomadworker is not running");
		}
	}
	if (er->er_running == 0)
		each_finish(er);
}

/* The hosts named in the body, or every host in a phase; 0 or -1. */
static int
each_hosts(struct each_run *er, json_t *names, struct api_resp *resp)
{
	const struct plan	*pl = er->er_plan;
	const struct plan_host	*h;
	json_t			*v;
	size_t			 i, j;

	if ((er->er_hosts = calloc(pl->pl_nhosts + 1,
	    sizeof(*er->er_hosts))) == NULL)
		fatal("calloc");
	er->er_nhosts = 0;	/* the list just made is empty */
	if (names == NULL) {
		for (i = 0; i < pl->pl_nhosts; i++)
			if (pl->pl_hosts[i].ph_phase >= 0)
				er->er_hosts[er->er_nhosts++].eh_host =
				    &pl->pl_hosts[i];
		return 0;
	}
	if (!json_is_array(names) || json_array_size(names) == 0) {
		api_error(resp, 400, "bad_request", "hosts: not a list of "
		    "host names");
		return -1;
	}
	json_array_foreach(names, i, v) {
		if (!json_is_string(v) || (h = plan_host_find(pl,
		    json_string_value(v))) == NULL || h->ph_phase < 0) {
			api_error(resp, 422, "invalid_input", "hosts: item %zu "
			    "is not a host of plan %s in a phase", i + 1,
			    er->er_repo);
			return -1;
		}
		for (j = 0; j < er->er_nhosts; j++)
			if (er->er_hosts[j].eh_host == h)
				break;
		if (j == er->er_nhosts && er->er_nhosts < pl->pl_nhosts)
			er->er_hosts[er->er_nhosts++].eh_host = h;
	}
	return 0;
}

/*
 * Each host's own operation (defaults merged under it): a command, an
 * optional schema the input must agree with, sensitive.  0 or -1.
 */
static int
each_operation(struct each_run *er, json_t *input, struct api_resp *resp)
{
	struct each_host	*eh;
	json_t			*op, *cmd, *schema, *sens;
	char			 err[512];
	size_t			 i, declared;
	int			 rc;

	/*
	 * An operation no chosen host declares is unknown (404, as seed
	 * 003's table says); one that only some declare cannot run on the
	 * others (422 below).
	 */
	for (i = declared = 0; i < er->er_nhosts; i++) {
		op = er->er_hosts[i].eh_host->ph_operations != NULL ?
		    json_object_get(er->er_hosts[i].eh_host->ph_operations,
		    er->er_op) : NULL;
		if (json_is_object(op))
			declared++;
	}
	if (declared == 0 && er->er_nhosts > 0) {
		api_error(resp, 404, "not_found", "no host of plan %s "
		    "declares an operation %s", er->er_repo, er->er_op);
		return -1;
	}
	for (i = 0; i < er->er_nhosts; i++) {
		eh = &er->er_hosts[i];
		eh->eh_run = er;
		eh->eh_status = -1;
		op = eh->eh_host->ph_operations != NULL ? json_object_get(
		    eh->eh_host->ph_operations, er->er_op) : NULL;
		cmd = json_is_object(op) ? json_object_get(op, "command") :
		    NULL;
		if (!json_is_string(cmd)) {
			api_error(resp, 422, "invalid_configuration", "host %s "
			    "of plan %s declares no operation %s",
			    eh->eh_host->ph_name, er->er_repo, er->er_op);
			return -1;
		}
		eh->eh_command = json_string_value(cmd);
		if ((sens = json_object_get(op, "sensitive")) != NULL &&
		    json_is_true(sens))
			er->er_sensitive = 1;
		if ((schema = json_object_get(op, "schema")) == NULL)
			continue;
		rc = schema_validate(schema, input != NULL ? input :
		    json_null(), err, sizeof(err));
		if (rc == SCHEMA_UNUSABLE) {
			api_error(resp, 422, "invalid_configuration",
			    "host %s: operation %s: its schema cannot be "
			    "used: %s", eh->eh_host->ph_name, er->er_op, err);
			return -1;
		}
		if (rc == SCHEMA_INVALID) {
			api_error(resp, 422, "invalid_input", "host %s: "
			    "operation %s: input: %s", eh->eh_host->ph_name,
			    er->er_op, err);
			return -1;
		}
	}
	return 0;
}

/*
 * The plan's last completed deployment, if no deployment of it is under
 * way; else NULL, with the error answered.
 */
static struct plan *
each_deployed(struct api_req *req, struct api_resp *resp, int64_t *did,
    char *dcommit, size_t dcommitsz)
{
	const struct plan	*pl;
	struct plan		*deployed;
	const char		*commit;
	int			 bad, busy;

	deployed = hosts_deployed(req->ar_args[0], did, dcommit, dcommitsz,
	    &bad);
	if (bad) {
		api_error(resp, 500, "runtime_error", "plan %s: cannot read "
		    "its last deployment: %s", req->ar_args[0],
		    store_error(hosts_store()));
		return NULL;
	}
	if (deployed == NULL) {
		pl = plans_get(req->ar_args[0], &commit);
		if (pl == NULL)
			api_error(resp, 404, "not_found", "no plan in "
			    "repository %s", req->ar_args[0]);
		else
			api_error(resp, 409, "conflict", "the plan of %s has "
			    "nothing deployed: no deployment of it completed",
			    req->ar_args[0]);
		return NULL;
	}
	if ((busy = hosts_plan_busy(req->ar_args[0])) != 0) {
		plan_free(deployed);
		if (busy == -1)
			api_error(resp, 500, "runtime_error", "plan %s: the "
			    "database: %s", req->ar_args[0],
			    store_error(hosts_store()));
		else
			api_error(resp, 429, "queue_full", "a deployment of "
			    "plan %s is under way; try again when it ends",
			    req->ar_args[0]);
		return NULL;
	}
	return deployed;
}

/* POST /api/v1/plans/{repository}/operations/{operation} */
void
hosts_each_api(struct api_req *req, struct api_resp *resp)
{
	struct plan		*deployed;
	struct each_run		*er;
	json_t			*body, *v, *input;
	char			*text, detail[512],
				 dcommit[GITW_COMMIT_HEXLEN + 1];
	int64_t			 did;

	if ((body = api_json_body(req, resp)) == NULL)
		return;
	if ((deployed = each_deployed(req, resp, &did, dcommit,
	    sizeof(dcommit))) == NULL)
		goto out;
	if ((er = calloc(1, sizeof(*er))) == NULL)
		fatal("calloc");
	TAILQ_INSERT_TAIL(&each_runs, er, er_entry);
	er->er_repo = xstrdup(req->ar_args[0]);
	er->er_op = xstrdup(req->ar_args[1]);
	strlcpy(er->er_commit, dcommit, sizeof(er->er_commit));
	strlcpy(er->er_actor, req->ar_actor, sizeof(er->er_actor));
	/* Its own: a new deployment may come meanwhile. */
	er->er_plan = deployed;
	er->er_deployment = did;
	er->er_limit = 1;
	if ((v = json_object_get(body, "limit")) != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > EACH_LIMIT_MAX) {
			api_error(resp, 400, "bad_request", "limit: not a "
			    "number from 1 to %d", EACH_LIMIT_MAX);
			each_free(er);
			goto out;
		}
		er->er_limit = (int)json_integer_value(v);
	}
	input = json_object_get(body, "input");
	if (each_hosts(er, json_object_get(body, "hosts"), resp) == -1 ||
	    each_operation(er, input, resp) == -1) {
		each_free(er);
		goto out;
	}
	if (er->er_nhosts == 0) {
		api_error(resp, 422, "invalid_configuration", "plan %s has no "
		    "host in a phase", er->er_repo);
		each_free(er);
		goto out;
	}
	if (input != NULL) {
		if ((text = json_dumps(input, JSON_COMPACT | JSON_ENCODE_ANY))
		    == NULL)
			fatal("json_dumps");
		er->er_input = xasprintf("%s\n", text);
		freezero(text, strlen(text));
		if (strlen(er->er_input) > SSH_STDIN_MAX) {
			api_error(resp, 413, "too_large", "input: more than %d "
			    "bytes", SSH_STDIN_MAX);
			each_free(er);
			goto out;
		}
	}
	snprintf(detail, sizeof(detail), "operation %s on %zu host%s of plan "
	    "%s at %.12s, %d at once", er->er_op, er->er_nhosts,
	    er->er_nhosts == 1 ? "" : "s", er->er_repo, er->er_commit,
	    er->er_limit);
	each_audit(er, detail);
	log_info("%s (by %s)", detail, er->er_actor);
	er->er_later = api_later(req);
	resp->status = API_DEFERRED;
	each_start(er);
out:
	json_decref(body);
}
