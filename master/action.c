/*
 * Actions as data.  One table below says, for every action a client can
 * take on a job (a target) or a deployment: its capability, its title and
 * description, the states it leaves from and moves to, the conditions it
 * needs with the error each answers, the input it takes, and the
 * procedure that carries it out.  The details list the rows (enabled or
 * with the reason why not), the generic procedure runs them, and the ACL
 * takes each action's capability from here (api_auth.c): a client, and
 * this file, need no new code path for a new action.
 *
 * Errors are those of seed 003: not_found 404, conflict 409, queue_full
 * 429, invalid_configuration 422, runtime_error 500 (nopsd(8)).
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "deploy.h"
#include "store_deploy.h"
#include "store_job.h"
#include "engine.h"
#include "hosts.h"
#include "api.h"
#include "jsonb.h"
#include "auth.h"
#include "action.h"
#include "suspend.h"
#include "operation.h"

#define DSB(s)		(1U << (s))

static void	 act_approve(struct action_ctx *, json_t *, struct api_resp *);
static void	 act_reject(struct action_ctx *, json_t *, struct api_resp *);
static void	 act_retry(struct action_ctx *, json_t *, struct api_resp *);
static void	 act_promote(struct action_ctx *, json_t *, struct api_resp *);
static void	 act_acknowledge(struct action_ctx *, json_t *,
		    struct api_resp *);
static void	 act_pause(struct action_ctx *, json_t *, struct api_resp *);
static void	 act_unpause(struct action_ctx *, json_t *, struct api_resp *);
static void	 act_deploy_now(struct action_ctx *, json_t *,
		    struct api_resp *);

#define R_MANAGED	{ ACOND_MANAGED, 404, "not_found", \
	"is not a managed job in git" }
#define R_NOT_PAUSED	{ ACOND_NOT_PAUSED, 409, "conflict", \
	"is paused; resume it first" }
#define R_NOT_SUSPENDED	{ ACOND_NOT_SUSPENDED, 409, "conflict", \
	"is suspended; unsuspend it first" }
#define R_DEPLOYED	{ ACOND_DEPLOYED, 409, "conflict", \
	"has nothing deployed: no deployment of it completed" }
#define R_IDLE		{ ACOND_IDLE, 429, "queue_full", \
	"has a deployment under way; try again when it ends" }
#define R_CAN_SUSPEND	{ ACOND_CAN_SUSPEND, 422, "invalid_configuration", \
	"is a job type suspend means nothing for (only service and system " \
	"jobs can be suspended)" }

#define INPUT_REASON_OPT \
	"{\"type\":\"object\",\"properties\":{\"reason\":{\"type\":\"string\","\
	"\"maxLength\":1024,\"title\":\"Reason (optional)\"}}}"
#define INPUT_REASON \
	"{\"type\":\"object\",\"required\":[\"reason\"],\"properties\":" \
	"{\"reason\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":1024," \
	"\"title\":\"Reason\"}}}"

/*
 * The action table, in display order.  Deployment rows: ad_from is the
 * states they leave from (a rule checked first, 409 otherwise), ad_to the
 * state they move to (-1: none, e.g. retry makes a new deployment).
 */
static const struct action_def action_table[] = {
	{ "approve", ACTION_ON_DEPLOYMENT, CAP_APPROVE, ACTION_BUILTIN,
	    "Approve", "Start this deployment: its hooks, the register and "
	    "the health wait, as the plan shows", NULL,
	    DSB(DS_PENDING_APPROVAL), DS_PRE_HOOKS,
	    { R_NOT_PAUSED, R_NOT_SUSPENDED },
	    "{\"type\":\"object\",\"properties\":{\"spec_hash\":"
	    "{\"type\":\"string\"}}}", act_approve },
	{ "reject", ACTION_ON_DEPLOYMENT, CAP_APPROVE, ACTION_BUILTIN,
	    "Reject", "Refuse this deployment; the job stays blocked on this "
	    "spec until a new commit or a retry", NULL,
	    DSB(DS_PENDING_APPROVAL), DS_REJECTED, { { 0 } },
	    INPUT_REASON_OPT, act_reject },
	{ "retry", ACTION_ON_DEPLOYMENT, CAP_RETRY, ACTION_BUILTIN,
	    "Retry", "Make a new deployment of the same job from git as it "
	    "is now", NULL, DSB(DS_FAILED) | DSB(DS_REJECTED), -1,
	    { { ACOND_RETRYABLE, 409, "conflict", "has a later or an active "
	    "deployment: retry the last one" } }, NULL, act_retry },
	{ "acknowledge", ACTION_ON_DEPLOYMENT, CAP_RETRY, ACTION_BUILTIN,
	    "Acknowledge", "Seen: take this failure off the Overview", NULL,
	    DSB(DS_FAILED), -1,
	    { { ACOND_NOT_ACKED, 409, "conflict", "is acknowledged "
	    "already" } }, INPUT_REASON_OPT, act_acknowledge },
	{ "promote", ACTION_ON_DEPLOYMENT, CAP_PROMOTE, ACTION_BUILTIN,
	    "Promote canaries", "The canaries are healthy: roll the new "
	    "version out to every allocation", NULL,
	    DSB(DS_AWAITING_PROMOTION), DS_WAITING_HEALTH, { { 0 } }, NULL,
	    act_promote },

	{ "deploy-now", ACTION_ON_JOB, CAP_DEPLOY_NOW, ACTION_BUILTIN,
	    "Deploy now", "Deploy the job's drift now, without approval and "
	    "whatever its policy or sync window says", NULL, 0, -1,
	    { R_MANAGED, R_NOT_PAUSED, R_NOT_SUSPENDED }, NULL,
	    act_deploy_now },
	{ "pause", ACTION_ON_JOB, CAP_PAUSE, ACTION_BUILTIN,
	    "Pause", "Start no new deployment of this job until it is "
	    "resumed (one under way goes on)", NULL, 0, -1,
	    { R_MANAGED, { ACOND_NOT_PAUSED, 409, "conflict",
	    "is already paused" } }, INPUT_REASON, act_pause },
	{ "resume", ACTION_ON_JOB, CAP_PAUSE, ACTION_BUILTIN,
	    "Resume", "End the pause: deployments start again", NULL, 0, -1,
	    { { ACOND_PAUSED, 409, "conflict", "is not paused" } }, NULL,
	    act_unpause },
	{ "suspend", ACTION_ON_JOB, CAP_SUSPEND, ACTION_TOGGLE,
	    "Suspend", "Stop the job in Nomad (its allocations stop and its "
	    "services leave discovery; volumes and data stay) and keep it "
	    "stopped: every later deployment carries the suspend",
	    "Stop every allocation of this job until it is unsuspended?",
	    0, -1,
	    { R_MANAGED, R_DEPLOYED,
	    { ACOND_MAY_SUSPEND, 409, "conflict", "is already suspended" },
	    R_IDLE, R_CAN_SUSPEND }, INPUT_REASON_OPT, suspend_action },
	{ "unsuspend", ACTION_ON_JOB, CAP_SUSPEND, ACTION_TOGGLE,
	    "Unsuspend", "Start the job again: register the spec of its last "
	    "successful deployment (not one that only failed)", NULL, 0, -1,
	    { R_MANAGED, R_DEPLOYED,
	    { ACOND_MAY_UNSUSPEND, 409, "conflict", "is not suspended" },
	    R_IDLE, R_CAN_SUSPEND }, NULL, suspend_undo_action },
	/* Every operation <job>.<operation> the deployed revision has. */
	{ "*", ACTION_ON_JOB, CAP_OPERATE, ACTION_OPERATION,
	    NULL, NULL, NULL, 0, -1,
	    { R_MANAGED, R_DEPLOYED,
	    { ACOND_HAS_OPERATION, 404, "not_found", "has no such operation "
	    "in its deployed revision" },
	    { ACOND_OPERATIONS, 422, "invalid_configuration", "was deployed "
	    "by a revision that cannot do this operation (it is invalid "
	    "there)" },
	    { ACOND_NOT_SUSPENDED, 409, "conflict", "is suspended" },
	    R_IDLE }, NULL, operation_action },
	/* Every operation <host>.<operation> of a plan's host, as deployed. */
	{ "*", ACTION_ON_HOST, CAP_OPERATE | CAP_HOSTS, ACTION_OPERATION,
	    NULL, NULL, NULL, 0, -1,
	    { { ACOND_DEPLOYED, 409, "conflict", "has nothing deployed: no "
	    "deployment of its plan completed" },
	    { ACOND_HAS_OPERATION, 404, "not_found", "has no such operation "
	    "in its plan as deployed" },
	    { ACOND_IDLE, 429, "queue_full", "has a deployment of its plan "
	    "under way; try again when it ends" } }, NULL,
	    hosts_action_run },
};
static const size_t action_ntable = sizeof(action_table) /
    sizeof(action_table[0]);

const struct action_def *
action_find(enum action_on on, const char *id)
{
	size_t	 i;

	for (i = 0; i < action_ntable; i++) {
		if (action_table[i].ad_on != on)
			continue;
		if (strcmp(action_table[i].ad_id, id) == 0)
			return &action_table[i];
		/* An operation's id is <job>.<operation>. */
		if (strcmp(action_table[i].ad_id, "*") == 0 &&
		    strchr(id, '.') != NULL)
			return &action_table[i];
	}
	return NULL;
}

int
action_table_check(void)
{
	const struct action_def	*ad;
	size_t			 i, j;
	int			 rv = 0;

	for (i = 0; i < action_ntable; i++) {
		ad = &action_table[i];
		if (ad->ad_id == NULL || ad->ad_cap == 0 ||
		    (ad->ad_cap & ~CAP_MANAGEMENT & 0xffff) == 0 ||
		    (ad->ad_on != ACTION_ON_JOB &&
		    ad->ad_on != ACTION_ON_DEPLOYMENT &&
		    ad->ad_on != ACTION_ON_HOST) || ad->ad_run == NULL) {
			log_warnx("action table: row %zu (%s) names no "
			    "capability, target or procedure", i,
			    ad->ad_id != NULL ? ad->ad_id : "?");
			rv = -1;
		}
		if (ad->ad_on == ACTION_ON_DEPLOYMENT && ad->ad_from == 0) {
			log_warnx("action table: %s leaves from no state",
			    ad->ad_id);
			rv = -1;
		}
		for (j = 0; j < i; j++)
			if (action_table[j].ad_on == ad->ad_on &&
			    strcmp(action_table[j].ad_id, ad->ad_id) == 0) {
				log_warnx("action table: %s twice", ad->ad_id);
				rv = -1;
			}
		if (ad->ad_input != NULL) {
			json_t	*schema = json_loads(ad->ad_input, 0, NULL);

			if (!json_is_object(schema)) {
				log_warnx("action table: %s: input schema is "
				    "not a JSON object", ad->ad_id);
				rv = -1;
			}
			json_decref(schema);
		}
	}
	return rv;
}

int
action_reason_ok(const char *r)
{
	const unsigned char	*p;

	if (r == NULL)
		return 1;
	if (strlen(r) > 1024)
		return 0;
	for (p = (const unsigned char *)r; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

/* ---- the conditions of a job ---- */

/*
 * Retry is allowed for the last ended deployment of its job (superseded
 * ones aside) while the job has no active one; what the retry action
 * checks, so that a client shows it only where it works.
 */
static int
action_retry_allowed(const struct deploy *d)
{
	struct store	*s = engine_store();
	struct deploy	 last;
	int		 rc, ok = 1;

	rc = store_deploy_last_terminal(s, d->d_ns, d->d_job, &last);
	if (rc == -1)
		return -1;
	if (rc == 0) {
		if (last.d_id != d->d_id && last.d_state != DS_SUPERSEDED)
			ok = 0;
		deploy_free(&last);
	}
	if (ok && (rc = store_deploy_active(s, d->d_ns, d->d_job,
	    &last)) != 1) {
		if (rc == -1)
			return -1;
		ok = 0;
		deploy_free(&last);
	}
	return ok;
}


static void
action_ctx_fill(struct action_ctx *ac, struct api_req *req, const char *ns,
    const char *job)
{
	struct store	*s = engine_store();
	struct deploy	 d;
	int		 rc;

	memset(ac, 0, sizeof(*ac));
	ac->ac_req = req;
	ac->ac_ns = ns;
	ac->ac_job = job;
	ac->ac_ej = engine_job(ns, job);
	if (ac->ac_ej != NULL && ac->ac_ej->ej_meta.jm_role == META_MANAGED &&
	    ac->ac_ej->ej_in_ns)
		ac->ac_cond |= ACOND_MANAGED;
	if ((rc = store_job_get(engine_store(), STORE_JOB_PAUSE, ns, job,
	    NULL, NULL, NULL)) == -1)
		ac->ac_store_err = 1;
	ac->ac_cond |= rc == 1 ? ACOND_PAUSED : ACOND_NOT_PAUSED;
	if ((rc = store_job_get(engine_store(), STORE_JOB_SUSPEND, ns, job,
	    NULL, NULL, NULL)) == -1)
		ac->ac_store_err = 1;
	ac->ac_cond |= rc == 1 ? ACOND_SUSPENDED : ACOND_NOT_SUSPENDED;
	if ((rc = store_deploy_active(s, ns, job, &d)) == 0) {
		if (d.d_state != DS_PENDING_APPROVAL)
			ac->ac_active = d.d_id;
		deploy_free(&d);
	} else if (rc == -1)
		ac->ac_store_err = 1;
	if (ac->ac_active == 0 && !suspend_busy(ns, job))
		ac->ac_cond |= ACOND_IDLE;
	if (store_deploy_last_completed(s, ns, job, &ac->ac_last_ok) == -1)
		ac->ac_store_err = 1;
	if (ac->ac_last_ok > 0)
		ac->ac_cond |= ACOND_DEPLOYED;
	ac->ac_cond |= (ac->ac_cond & ACOND_SUSPENDED) ? ACOND_MAY_UNSUSPEND :
	    ACOND_MAY_SUSPEND;
	if ((rc = store_deploy_last_terminal(s, ns, job, &d)) == 0) {
		if (d.d_state == DS_FAILED)
			ac->ac_cond |= ACOND_MAY_SUSPEND | ACOND_MAY_UNSUSPEND;
		deploy_free(&d);
	} else if (rc == -1)
		ac->ac_store_err = 1;
	if (suspend_job_type_ok(ac))
		ac->ac_cond |= ACOND_CAN_SUSPEND;
}

/*
 * The first rule of ad that does not hold in ac, or NULL when it may run.
 * A deployment's state comes first.
 */
static const struct action_rule *
action_broken(const struct action_def *ad, struct action_ctx *ac,
    char *why, size_t whylen)
{
	/* The reason is written to why; these rules hold no pointer to it. */
	static const struct action_rule	 state_rule = { ACOND_STATE, 409,
	    "conflict", "is in another state" };
	static const struct action_rule	 store_rule = { ACOND_STATE, 500,
	    "runtime_error", "cannot be read" };
	const struct action_rule	*r;
	char				 states[256];
	size_t				 i;

	/* Conditions read from a failing store decide nothing. */
	if (ac->ac_store_err) {
		snprintf(why, whylen, "cannot read the state of %s %s/%s: %s",
		    ac->ac_host != NULL ? "host" : "job", ac->ac_host != NULL ?
		    ac->ac_job : ac->ac_ns, ac->ac_host != NULL ? ac->ac_host :
		    ac->ac_job, store_error(engine_store()));
		return &store_rule;
	}
	/* A deployment's actions are only looked at with it (ac_d). */
	if (ad->ad_on == ACTION_ON_DEPLOYMENT &&
	    !(ad->ad_from & DSB(ac->ac_d->d_state))) {
		states[0] = '\0';
		for (i = 0; i < DS_MAX; i++) {
			if (!(ad->ad_from & DSB(i)))
				continue;
			if (states[0] != '\0')
				strlcat(states, " or ", sizeof(states));
			strlcat(states, deploy_state_str(i), sizeof(states));
		}
		snprintf(why, whylen, "deployment %lld is %s: %s is for a "
		    "deployment that is %s", (long long)ac->ac_d->d_id,
		    deploy_state_str(ac->ac_d->d_state), ad->ad_id, states);
		return &state_rule;
	}
	if (ad->ad_kind == ACTION_OPERATION && ad->ad_on == ACTION_ON_JOB)
		operation_conditions(ac);
	for (i = 0; i < ACTION_RULES_MAX; i++) {
		r = &ad->ad_rules[i];
		if (r->ar_need == 0)
			break;
		if (ac->ac_cond & r->ar_need)
			continue;
		if (ad->ad_on == ACTION_ON_HOST)
			snprintf(why, whylen, "host %s of plan %s %s",
			    ac->ac_host, ac->ac_job, r->ar_why);
		else if (ad->ad_on == ACTION_ON_DEPLOYMENT)
			snprintf(why, whylen, "job %s/%s of deployment %lld "
			    "%s", ac->ac_ns, ac->ac_job,
			    (long long)ac->ac_d->d_id, r->ar_why);
		else
			snprintf(why, whylen, "job %s/%s %s", ac->ac_ns,
			    ac->ac_job, r->ar_why);
		/* An invalid operation says what is wrong with it. */
		if (r->ar_need == ACOND_OPERATIONS &&
		    ac->ac_op_error[0] != '\0') {
			strlcat(why, ": ", whylen);
			strlcat(why, ac->ac_op_error, whylen);
		}
		return r;
	}
	return NULL;
}

static const char *
action_scope_str(const struct action_def *ad)
{
	/* A Nomad job is one instance of itself; a plan has hosts. */
	return ad->ad_on == ACTION_ON_HOST ? "instance" : "target";
}

static const char *
action_kind_str(enum action_kind k)
{
	switch (k) {
	case ACTION_TOGGLE:
		return "toggle";
	case ACTION_OPERATION:
		return "operation";
	case ACTION_BUILTIN:
		break;
	}
	return NULL;
}

static json_t *
action_json(const struct action_def *ad, struct action_ctx *ac)
{
	json_t		*o, *schema;
	char		 why[512], need[64];
	int		 enabled;

	enabled = action_broken(ad, ac, why, sizeof(why)) == NULL;
	if (enabled && !api_auth_allows(ac->ac_req, ad->ad_cap, ac->ac_ns)) {
		enabled = 0;
		config_cap_name(ad->ad_cap) != NULL ?
		    snprintf(need, sizeof(need), "%s",
		    config_cap_name(ad->ad_cap)) :
		    snprintf(need, sizeof(need), "management");
		if (ad->ad_cap == (CAP_OPERATE | CAP_HOSTS))
			snprintf(need, sizeof(need), "operate and hosts");
		snprintf(why, sizeof(why), "needs the %s capability in "
		    "namespace %s", need, ac->ac_ns);
	}
	o = jsonb_pack("{s:s,s:s,s:s,s:b,s:s}", "id", ad->ad_id,
	    "title", ad->ad_title, "description", ad->ad_description,
	    "enabled", enabled, "scope", action_scope_str(ad));
	if (!enabled)
		json_object_set_new(o, "disabled_reason", jsonb_str(why));
	if (ad->ad_confirm != NULL)
		json_object_set_new(o, "confirm", json_string(ad->ad_confirm));
	if (action_kind_str(ad->ad_kind) != NULL)
		json_object_set_new(o, "kind",
		    json_string(action_kind_str(ad->ad_kind)));
	if (ad->ad_input != NULL &&
	    (schema = json_loads(ad->ad_input, 0, NULL)) != NULL) {
		/* approve: the spec approved is the one shown. */
		if (strcmp(ad->ad_id, "approve") == 0 && ac->ac_d != NULL)
			json_object_set_new(json_object_get(json_object_get(
			    schema, "properties"), "spec_hash"), "const",
			    json_string(ac->ac_d->d_spec_hash));
		json_object_set_new(o, "input_schema", schema);
	}
	return o;
}

json_t *
action_list_job(struct api_req *req, const char *ns, const char *job)
{
	struct action_ctx	 ac;
	json_t			*a;
	size_t			 i;

	a = json_array();
	action_ctx_fill(&ac, req, ns, job);
	for (i = 0; i < action_ntable; i++) {
		if (action_table[i].ad_on != ACTION_ON_JOB)
			continue;
		if (action_table[i].ad_kind == ACTION_OPERATION) {
			operation_list(&ac, &action_table[i], a);
			continue;
		}
		/* Suspend only where it means something, or is in force. */
		if (action_table[i].ad_kind == ACTION_TOGGLE &&
		    !(ac.ac_cond & (ACOND_CAN_SUSPEND | ACOND_SUSPENDED)))
			continue;
		json_array_append_new(a, action_json(&action_table[i], &ac));
	}
	return a;
}

/*
 * While a job is suspended, a deployment that would start it cannot be
 * approved; one that carries the suspend (made after it) can.
 */
static void
action_ctx_deployment(struct action_ctx *ac, struct deploy *d)
{
	json_t	*spec;
	int	 rc;

	ac->ac_d = d;
	if ((rc = action_retry_allowed(d)) == 1)
		ac->ac_cond |= ACOND_RETRYABLE;
	else if (rc == -1)
		ac->ac_store_err = 1;
	if ((rc = store_deploy_acknowledged(engine_store(), d->d_id)) == 0)
		ac->ac_cond |= ACOND_NOT_ACKED;
	else if (rc == -1)
		ac->ac_store_err = 1;
	if (!(ac->ac_cond & ACOND_SUSPENDED))
		return;
	spec = json_loads(d->d_spec, 0, NULL);
	if (json_is_true(json_object_get(spec, "Stop")))
		ac->ac_cond |= ACOND_NOT_SUSPENDED;
	json_decref(spec);
}

json_t *
action_list_deployment(struct api_req *req, struct deploy *d)
{
	struct action_ctx	 ac;
	json_t			*a;
	size_t			 i;

	a = json_array();
	action_ctx_fill(&ac, req, d->d_ns, d->d_job);
	action_ctx_deployment(&ac, d);
	for (i = 0; i < action_ntable; i++)
		if (action_table[i].ad_on == ACTION_ON_DEPLOYMENT)
			json_array_append_new(a, action_json(&action_table[i],
			    &ac));
	return a;
}

/* An action's row as JSON for an operation (master/operation.c). */
json_t *
action_json_row(const struct action_def *ad, struct action_ctx *ac)
{
	return action_json(ad, ac);
}

/* ---- the generic procedure ---- */

/*
 * The input: {"input": {...}} as the generic procedure takes it; a body
 * without "input" is the input itself (approve's spec_hash, a reason),
 * as the routes took it before actions were data.
 */
static json_t *
action_input(json_t *body, struct api_resp *resp)
{
	json_t	*in;

	if ((in = json_object_get(body, "input")) == NULL)
		return json_incref(body);
	if (!json_is_object(in)) {
		api_error(resp, 400, "bad_request", "input must be a JSON "
		    "object");
		return NULL;
	}
	return json_incref(in);
}

static void
action_run(const struct action_def *ad, struct action_ctx *ac,
    json_t *body, struct api_resp *resp)
{
	const struct action_rule	*r;
	json_t				*input;
	char				 why[512];

	if ((r = action_broken(ad, ac, why, sizeof(why))) != NULL) {
		api_error(resp, r->ar_status, r->ar_code, "%s", why);
		return;
	}
	if ((input = action_input(body, resp)) == NULL)
		return;
	ad->ad_run(ac, input, resp);
	json_decref(input);
}

void
action_take(const struct action_def *ad, struct action_ctx *ac, json_t *body,
    struct api_resp *resp)
{
	action_run(ad, ac, body, resp);
}

void
action_not_found(struct api_resp *resp, enum action_on on, const char *id)
{
	char	 list[512];
	size_t	 i;

	if (on == ACTION_ON_DEPLOYMENT &&
	    action_find(ACTION_ON_JOB, id) != NULL) {
		api_error(resp, 404, "not_found", "%s is an action of a job: "
		    "POST /api/v1/jobs/{namespace}/{job}/actions/%s", id, id);
		return;
	}

	list[0] = '\0';
	for (i = 0; i < action_ntable; i++) {
		if (action_table[i].ad_on != on)
			continue;
		if (list[0] != '\0')
			strlcat(list, ", ", sizeof(list));
		strlcat(list, strcmp(action_table[i].ad_id, "*") != 0 ?
		    action_table[i].ad_id : on == ACTION_ON_HOST ?
		    "<host>.<operation>" : "<job>.<operation>", sizeof(list));
	}
	api_error(resp, 404, "not_found", "no action %s on a %s (%s)", id,
	    on == ACTION_ON_JOB ? "job" : on == ACTION_ON_HOST ? "host" :
	    "deployment", list);
}

void
action_api_job(struct api_req *req, struct api_resp *resp)
{
	const struct action_def	*ad;
	struct action_ctx	 ac;
	json_t			*body;
	const char		*id = req->ar_args[2];

	if ((ad = action_find(ACTION_ON_JOB, id)) == NULL) {
		action_not_found(resp, ACTION_ON_JOB, id);
		return;
	}
	if ((body = api_json_body(req, resp)) == NULL)
		return;
	action_ctx_fill(&ac, req, req->ar_args[0], req->ar_args[1]);
	if (ad->ad_kind == ACTION_OPERATION)
		ac.ac_operation = id;
	action_run(ad, &ac, body, resp);
	json_decref(body);
}

void
action_api_deployment(struct api_req *req, struct api_resp *resp)
{
	const struct action_def	*ad;
	struct action_ctx	 ac;
	struct deploy		 d;
	json_t			*body;
	int64_t			 id;
	int			 rc;

	if (api_engine_deploy_id(req, resp, &id) == -1)
		return;
	if ((ad = action_find(ACTION_ON_DEPLOYMENT, req->ar_args[1])) ==
	    NULL) {
		action_not_found(resp, ACTION_ON_DEPLOYMENT, req->ar_args[1]);
		return;
	}
	if ((body = api_json_body(req, resp)) == NULL)
		return;
	if ((rc = store_deploy_load(engine_store(), id, &d)) != 0) {
		api_engine_deploy_error(resp, rc, id);
		json_decref(body);
		return;
	}
	action_ctx_fill(&ac, req, d.d_ns, d.d_job);
	action_ctx_deployment(&ac, &d);
	action_run(ad, &ac, body, resp);
	deploy_free(&d);
	json_decref(body);
}

/* ---- the built-in procedures ---- */

static const char *
input_str(json_t *input, const char *key)
{
	return json_string_value(json_object_get(input, key));
}

/* The deployment as it is now, as the answer. */
static void
act_answer_deployment(int64_t id, struct api_resp *resp)
{
	struct deploy	 d;

	if (store_deploy_load(engine_store(), id, &d) == 0) {
		resp->status = 200;
		resp->body = api_engine_deploy_json(&d);
		deploy_free(&d);
	} else
		api_error(resp, 500, "runtime_error", "cannot read deployment: "
		    "%s", store_error(engine_store()));
}

static void
act_approve(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	struct store	*s = engine_store();
	struct deploy	*d = ac->ac_d;
	const char	*hash = input_str(input, "spec_hash");
	enum deploy_state to;
	size_t		 i;
	int		 rc;

	if (hash != NULL && strcmp(hash, d->d_spec_hash) != 0) {
		api_error(resp, 409, "conflict", "stale approval: the "
		    "deployment's spec hash is %.12s, not %.12s",
		    d->d_spec_hash, hash);
		return;
	}
	/* The table's ad_to, unless the deployment has no pre hooks. */
	to = DS_REGISTERING;
	for (i = 0; i < d->d_nhooks; i++)
		if (strcmp(d->d_hooks[i].dh_phase, "pre") == 0)
			to = DS_PRE_HOOKS;
	if (d->d_ns[0] == '\0')
		to = DS_DEPLOYING;	/* a deploy plan's (master/hosts.c) */
	if (store_begin(s) == -1)
		goto fail;
	rc = deploy_transition(s, d->d_id, DS_PENDING_APPROVAL, to,
	    ac->ac_req->ar_actor, "approve", NULL);
	if (rc != 1 || store_deploy_set_approval(s, d->d_id,
	    ac->ac_req->ar_actor, d->d_spec_hash) == -1 ||
	    store_commit(s) == -1) {
		store_rollback(s);
		if (rc == 0) {
			api_error(resp, 409, "conflict", "deployment %lld "
			    "moved meanwhile", (long long)d->d_id);
			return;
		}
		goto fail;
	}
	log_info("deployment %lld approved by %s", (long long)d->d_id,
	    ac->ac_req->ar_actor);
	engine_apply_kick();
	hosts_kick();
	act_answer_deployment(d->d_id, resp);
	return;
fail:
	api_error(resp, 500, "runtime_error", "the store refused the "
	    "change: %s", store_error(engine_store()));
}

static void
act_reject(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	struct store	*s = engine_store();
	const char	*reason = input_str(input, "reason");
	int		 rc;

	if (!action_reason_ok(reason)) {
		api_error(resp, 400, "bad_request", "a reason is at most 1024 "
		    "bytes, without control characters");
		return;
	}
	if (store_begin(s) == -1)
		goto fail;
	rc = deploy_transition(s, ac->ac_d->d_id, DS_PENDING_APPROVAL,
	    DS_REJECTED, ac->ac_req->ar_actor, "reject", reason != NULL ?
	    reason : "rejected");
	if (rc != 1 || store_commit(s) == -1) {
		store_rollback(s);
		if (rc == 0) {
			api_error(resp, 409, "conflict", "deployment %lld "
			    "moved meanwhile", (long long)ac->ac_d->d_id);
			return;
		}
		goto fail;
	}
	engine_detect("a deployment was rejected");
	act_answer_deployment(ac->ac_d->d_id, resp);
	return;
fail:
	api_error(resp, 500, "runtime_error", "the store refused the "
	    "change: %s", store_error(engine_store()));
}

static void
act_queued(struct api_resp *resp, int64_t id, const char *action)
{
	resp->status = 202;
	resp->body = jsonb_pack("{s:I,s:s,s:b}", "id", (json_int_t)id,
	    "action", action, "queued", 1);
}

static void
act_retry(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	struct store	*s = engine_store();
	struct deploy	*d = ac->ac_d, last;
	char		 target[64];
	int		 rc;

	rc = store_deploy_last_terminal(s, d->d_ns, d->d_job, &last);
	if (rc == 0 && last.d_id != d->d_id && last.d_state != DS_SUPERSEDED) {
		api_error(resp, 409, "conflict", "deployment %lld is not the "
		    "last of %s/%s (%lld is)", (long long)d->d_id, d->d_ns,
		    d->d_job, (long long)last.d_id);
		deploy_free(&last);
		return;
	}
	if (rc == 0)
		deploy_free(&last);
	if (store_deploy_active(s, d->d_ns, d->d_job, &last) == 0) {
		api_error(resp, 409, "conflict", "%s/%s already has deployment "
		    "%lld", d->d_ns, d->d_job, (long long)last.d_id);
		deploy_free(&last);
		return;
	}
	if (store_begin(s) == 0) {
		snprintf(target, sizeof(target), "deployment/%lld",
		    (long long)d->d_id);
		if (store_event(s, ac->ac_req->ar_actor, "deployment.retry",
		    target, NULL) == -1 || store_commit(s) == -1)
			store_rollback(s);
	}
	decide_request_retry(d->d_ns, d->d_job, d->d_id);
	act_queued(resp, d->d_id, "retry");
}

/* A failed deployment seen: off the Overview (an audit event). */
static void
act_acknowledge(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	struct store	*s = engine_store();
	const char	*reason = input_str(input, "reason");
	char		 target[64];

	if (!action_reason_ok(reason)) {
		api_error(resp, 400, "bad_request", "a reason is at most 1024 "
		    "bytes, without control characters");
		return;
	}
	snprintf(target, sizeof(target), "deployment/%lld",
	    (long long)ac->ac_d->d_id);
	if (store_begin(s) == -1 || store_event(s, ac->ac_req->ar_actor,
	    "deployment.acknowledge", target, reason != NULL ? reason :
	    "seen; off the Overview") == -1 || store_commit(s) == -1) {
		store_rollback(s);
		api_error(resp, 500, "runtime_error", "the store refused the "
		    "change: %s", store_error(s));
		return;
	}
	act_answer_deployment(ac->ac_d->d_id, resp);
}

static void
act_promote(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	char	 err[256];
	int	 rc;

	if ((rc = apply_promote(ac->ac_d->d_id, ac->ac_req->ar_actor, err,
	    sizeof(err))) != 0) {
		api_error(resp, rc, rc == 404 ? "not_found" : rc == 409 ?
		    "conflict" : "runtime_error", "%s", err);
		return;
	}
	act_queued(resp, ac->ac_d->d_id, "promote");
}

static void
act_job_done(struct action_ctx *ac, const char *action,
    struct api_resp *resp)
{
	resp->status = 200;
	resp->body = jsonb_pack("{s:s,s:s,s:s}", "namespace", ac->ac_ns,
	    "id", ac->ac_job, "action", action);
}

static void
act_pause(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	const char	*reason = input_str(input, "reason");

	if (reason == NULL || *reason == '\0' || !action_reason_ok(reason)) {
		api_error(resp, 400, "bad_request", "a pause needs a reason (1 "
		    "to 1024 bytes, without control characters)");
		return;
	}
	if (engine_hold_pause(ac->ac_ns, ac->ac_job, ac->ac_req->ar_actor,
	    reason) == -1) {
		api_error(resp, 500, "runtime_error", "cannot pause");
		return;
	}
	act_job_done(ac, "pause", resp);
}

static void
act_unpause(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	int	 rc;

	if ((rc = engine_hold_resume(ac->ac_ns, ac->ac_job,
	    ac->ac_req->ar_actor)) == -1) {
		api_error(resp, 500, "runtime_error", "cannot resume");
		return;
	}
	if (rc == 0) {
		api_error(resp, 409, "conflict", "job %s/%s is not paused",
		    ac->ac_ns, ac->ac_job);
		return;
	}
	act_job_done(ac, "resume", resp);
}

static void
act_deploy_now(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	api_engine_deploy_now(ac->ac_req, resp, ac->ac_ej);
}
