/*
 * The engine's part of the JSON API: jobs, deployments, orphans, and the
 * actions people take (approve, reject, retry, promote; pause, resume,
 * deploy-now).  Reads come from the last detection cycle (jobs) and the
 * store (deployments); every write is checked against the state it acts
 * on and answers 409 conflict when that state moved.
 */
#include "config.h"

#include <sys/types.h>
#include <errno.h>
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
#include "repo.h"
#include "engine.h"
#include "api.h"
#include "auth.h"
#include "jsonb.h"
#include "acl.h"
#include "action.h"
#include "suspend.h"

#define API_PAGE_DEFAULT	50
#define API_PAGE_MAX		500

static int
api_limit(struct api_req *req, struct api_resp *resp, int *limit)
{
	char		*v = api_query(req, "limit");
	const char	*errstr = NULL;

	*limit = API_PAGE_DEFAULT;
	if (v != NULL) {
		*limit = (int)strtonum(v, 1, API_PAGE_MAX, &errstr);
		free(v);
		if (errstr != NULL) {
			api_error(resp, 400, "bad_request", "limit is %s "
			    "(1 to %d)", errstr, API_PAGE_MAX);
			return -1;
		}
	}
	return 0;
}

static json_t *
json_str_or_null(const char *s)
{
	return s != NULL ? jsonb_str(s) : json_null();
}

static json_t *
job_json(const struct ejob *ej, int detail)
{
	json_t	*o, *issues, *hooks;
	size_t	 i;

	const char	*state = ej->ej_state;
	char		*note = NULL;

	/*
	 * A pause shows at once, not after the cycle it starts: the hold is
	 * in the store already.
	 */
	if (ej->ej_meta.jm_role == META_MANAGED && state != NULL &&
	    strcmp(state, "paused") != 0 && strcmp(state, "deploying") != 0 &&
	    store_job_get(engine_store(), STORE_JOB_PAUSE, ej->ej_ns,
	    ej->ej_id, NULL, NULL, NULL) == 1)
		state = "paused";
	if (state != ej->ej_state)
		note = "paused; detection takes it into account next cycle";
	/*
	 * And a sync window that closed since the cycle: held at once, as
	 * the next cycle will find it.
	 */
	if (state == ej->ej_state && ej->ej_meta.jm_has_window &&
	    ej->ej_drift && state != NULL && strcmp(state, "held") != 0 &&
	    strcmp(state, "deploying") != 0 &&
	    strcmp(state, "blocked") != 0 &&
	    !meta_window_open(&ej->ej_meta, time(NULL))) {
		state = "held";
		note = "outside its sync window (it closed since the last "
		    "detection cycle)";
	}
	o = jsonb_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:o,s:o}",
	    "namespace", ej->ej_ns, "id", ej->ej_id,
	    "repository", ej->ej_repo, "path", ej->ej_path,
	    "commit", ej->ej_commit,
	    "role", meta_role_str(ej->ej_meta.jm_role),
	    "policy", meta_policy_str(ej->ej_meta.jm_policy),
	    "drift", ej->ej_drift,
	    "state", json_str_or_null(state),
	    "note", json_str_or_null(note != NULL ? note : ej->ej_note));
	json_object_set_new(o, "deployment", ej->ej_deployment > 0 ?
	    json_integer(ej->ej_deployment) : json_null());
	json_object_set_new(o, "error", json_str_or_null(ej->ej_error != NULL ?
	    ej->ej_error : ej->ej_hook_error));
	issues = json_array();
	for (i = 0; i < ej->ej_meta.jm_nissues; i++)
		json_array_append_new(issues, jsonb_pack("{s:s,s:s,s:s}",
		    "severity", ej->ej_meta.jm_issues[i].mi_severity ==
		    META_ERROR ? "error" : "warning",
		    "key", ej->ej_meta.jm_issues[i].mi_key,
		    "message", ej->ej_meta.jm_issues[i].mi_msg));
	json_object_set_new(o, "issues", issues);
	if (detail) {
		hooks = json_array();
		for (i = 0; i < ej->ej_nhooks; i++)
			json_array_append_new(hooks, jsonb_pack(
			    "{s:s,s:i,s:s,s:s,s:i}",
			    "phase", ej->ej_hooks[i].dh_phase,
			    "position", ej->ej_hooks[i].dh_position,
			    "hook", ej->ej_hooks[i].dh_hook_id,
			    "revision", ej->ej_hooks[i].dh_revision,
			    "timeout", ej->ej_hooks[i].dh_timeout));
		json_object_set_new(o, "hooks", hooks);
		json_object_set_new(o, "spec_hash", ej->ej_hash[0] != '\0' ?
		    jsonb_str(ej->ej_hash) : json_null());
		json_object_set_new(o, "diff", engine_diffview(ej->ej_diff,
		    ej->ej_file != NULL ? (const char *)ej->ej_file->rf_data :
		    NULL));
	}
	return o;
}

static void
api_jobs(struct api_req *req, struct api_resp *resp)
{
	struct ejob	*ej, key;
	json_t		*items;
	char		*cursor, *slash;
	int		 limit, n = 0;

	if (api_limit(req, resp, &limit) == -1)
		return;
	items = json_array();
	/* The cursor is "namespace/id" of the last item of the page. */
	if ((cursor = api_query(req, "cursor")) != NULL &&
	    (slash = strchr(cursor, '/')) != NULL) {
		*slash = '\0';
		memset(&key, 0, sizeof(key));
		key.ej_ns = cursor;
		key.ej_id = slash + 1;
		ej = RB_NFIND(ejobs, &engine_env->e_jobs, &key);
		if (ej != NULL && detect_job_cmp(ej, &key) == 0)
			ej = RB_NEXT(ejobs, &engine_env->e_jobs, ej);
	} else
		ej = RB_MIN(ejobs, &engine_env->e_jobs);
	free(cursor);
	/* Only readable jobs count toward the page, so pages stay full. */
	for (; ej != NULL && n < limit;
	    ej = RB_NEXT(ejobs, &engine_env->e_jobs, ej)) {
		if (!api_auth_allows(req, CAP_READ, ej->ej_ns))
			continue;
		json_array_append_new(items, job_json(ej, 0));
		n++;
	}
	resp->status = 200;
	resp->body = jsonb_pack("{s:o,s:o}", "items", items, "next",
	    ej != NULL && n > 0 ? jsonb_printf("%s/%s",
	    json_string_value(json_object_get(json_array_get(items, n - 1),
	    "namespace")), json_string_value(json_object_get(
	    json_array_get(items, n - 1), "id"))) : json_null());
}

static void
api_job(struct api_req *req, struct api_resp *resp)
{
	struct ejob	*ej;
	json_t		*o;
	char		*who = NULL, *reason = NULL;
	int64_t		 since = 0;

	if ((ej = engine_job(req->ar_args[0], req->ar_args[1])) == NULL) {
		api_error(resp, 404, "not_found", "no job %s/%s in git",
		    req->ar_args[0], req->ar_args[1]);
		return;
	}
	o = job_json(ej, 1);
	if (store_job_get(engine_store(), STORE_JOB_PAUSE, ej->ej_ns,
	    ej->ej_id, &who, &reason, &since) == 1)
		json_object_set_new(o, "paused", jsonb_pack("{s:s,s:s,s:o}",
		    "by", who, "reason", reason, "since",
		    api_time_json(since)));
	else
		json_object_set_new(o, "paused", json_null());
	free(who);
	free(reason);
	json_object_set_new(o, "suspended", suspend_json(ej->ej_ns,
	    ej->ej_id));
	json_object_set_new(o, "actions", action_list_job(req, ej->ej_ns,
	    ej->ej_id));
	resp->status = 200;
	resp->body = o;
}

static json_t	*api_deploy_json(const struct deploy *);

json_t *
api_engine_deploy_json(const struct deploy *d)
{
	return api_deploy_json(d);
}

static json_t *
api_deploy_json(const struct deploy *d)
{
	json_t	*o;

	o = jsonb_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o}",
	    "id", (json_int_t)d->d_id,
	    "namespace", d->d_ns, "job", d->d_job,
	    "repository", d->d_repo, "state", deploy_state_str(d->d_state),
	    "commit", d->d_commit, "spec_hash", d->d_spec_hash,
	    "policy", d->d_policy,
	    "created_at", api_time_json(d->d_created_at),
	    "updated_at", api_time_json(d->d_updated_at),
	    "reason", json_str_or_null(d->d_reason));
	json_object_set_new(o, "approved_by", json_str_or_null(
	    d->d_approved_by));
	json_object_set_new(o, "approved_at", api_time_json(d->d_approved_at));
	json_object_set_new(o, "retry_of", d->d_retry_of > 0 ?
	    json_integer(d->d_retry_of) : json_null());
	json_object_set_new(o, "nomad_deployment", json_str_or_null(
	    d->d_nomad_deployment));
	json_object_set_new(o, "job_version", d->d_job_version >= 0 ?
	    json_integer(d->d_job_version) : json_null());
	json_object_set_new(o, "timeout_at", api_time_json(d->d_timeout_at));
	json_object_set_new(o, "ended_at", api_time_json(d->d_ended_at));
	return o;
}

/* A page of the deployments list, as api_deployments() fills it. */
struct api_deploy_page {
	struct api_req	*dp_req;
	json_t		*dp_items;
	int64_t		 dp_last;
	int		 dp_limit;
	int		 dp_n;
	int		 dp_more;
};

static int
api_deploy_readable(const char *ns, void *arg)
{
	struct api_deploy_page *dp = arg;

	return api_auth_allows(dp->dp_req, CAP_READ, ns);
}

static int
api_deploy_item(struct deploy *d, void *arg)
{
	struct api_deploy_page *dp = arg;

	if (dp->dp_n == dp->dp_limit) {
		dp->dp_more = 1;
		return 1;
	}
	json_array_append_new(dp->dp_items, api_deploy_json(d));
	dp->dp_last = d->d_id;
	dp->dp_n++;
	return 0;
}

static void
api_deployments(struct api_req *req, struct api_resp *resp)
{
	struct store_deploy_filter f;
	struct api_deploy_page dp;
	json_t		*items;
	char		*state, *ns, *job, *cursor;
	const char	*errstr = NULL;
	int64_t		 before = 0, last = 0;
	enum deploy_state ds;
	int		 limit, more = 0;

	memset(&f, 0, sizeof(f));
	memset(&dp, 0, sizeof(dp));
	if (api_limit(req, resp, &limit) == -1)
		return;
	state = api_query(req, "state");
	ns = api_query(req, "namespace");
	job = api_query(req, "job");
	if ((cursor = api_query(req, "cursor")) != NULL) {
		before = strtonum(cursor, 1, INT64_MAX, &errstr);
		free(cursor);
		if (errstr != NULL) {
			api_error(resp, 400, "bad_request", "cursor is %s",
			    errstr);
			goto out;
		}
	}
	if (state != NULL && deploy_state_parse(state, &ds) == -1) {
		api_error(resp, 400, "bad_request", "no state %s (states: "
		    "pending_approval pre_hooks registering waiting_health "
		    "awaiting_promotion post_hooks completed failed rejected "
		    "superseded)", state);
		goto out;
	}
	/*
	 * Newest first, in one pass that stops once the page and one more
	 * readable row are found; rows the client may not read are skipped
	 * so that a page is full whenever more rows exist.
	 */
	/* Alike on purpose: a filter filled field by field. */
	f.df_state = state;
	f.df_ns = ns;
	f.df_job = job;
	f.df_before = before;
	f.df_readable = api_deploy_readable;
	dp.dp_req = req;
	dp.dp_items = items = json_array();
	dp.dp_limit = limit;
	if (store_deploy_list(engine_store(), &f, api_deploy_item, &dp) == -1) {
		json_decref(items);
		api_error(resp, 500, "runtime_error",
		    "cannot read deployments");
		goto out;
	}
	more = dp.dp_more;
	last = dp.dp_last;
	resp->status = 200;
	resp->body = jsonb_pack("{s:o,s:o}", "items", items, "next",
	    more ? jsonb_printf("%lld", (long long)last) : json_null());
out:
	free(state);
	free(ns);
	free(job);
}

/*
 * Alike on purpose: dash_event_cb (api_dashboard.c) packs the same event
 * with its target; a job's events need none (the path names the job),
 * and a flag for one member would not read better than two packs.
 */
static int
api_event_cb(const struct store_event_row *r, void *arg)
{
	json_t	*a = arg;

	json_array_append_new(a, jsonb_pack("{s:I,s:o,s:s,s:s,s:o}",
	    "id", (json_int_t)r->er_id, "at", api_time_json(r->er_at),
	    "actor", r->er_actor, "action", r->er_action,
	    "detail", json_str_or_null(r->er_detail)));
	return 0;
}

/* store_deploy_load() said 1 (no such row) or -1: a store error, as itself. */
void
api_engine_deploy_error(struct api_resp *resp, int rc, int64_t id)
{
	if (rc == 1)
		api_error(resp, 404, "not_found", "no deployment %lld",
		    (long long)id);
	else
		api_error(resp, 500, "runtime_error", "deployment %lld: the "
		    "database: %s", (long long)id,
		    store_error(engine_store()));
}

/* The deployment id of the path's first argument; 404 if it is none. */
int
api_engine_deploy_id(struct api_req *req, struct api_resp *resp, int64_t *id)
{
	const char	*errstr = NULL;

	*id = strtonum(req->ar_args[0], 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		api_error(resp, 404, "not_found", "no deployment %s",
		    req->ar_args[0]);
		return -1;
	}
	return 0;
}

/*
 * The git context: the commit (subject, author, time, its web link) and
 * whether the job file changed in git since the commit last deployed
 * (a git-side change, shown as a diff) or not (the change came from
 * outside the file: the live job, its hooks).
 */
static json_t *
api_deploy_git_json(const struct deploy *d)
{
	json_t	*o;
	char	*url;

	url = repo_commit_url(d->d_repo, d->d_commit);
	o = jsonb_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o}",
	    "commit", d->d_commit,
	    "subject", json_str_or_null(d->d_subject),
	    "author", json_str_or_null(d->d_author),
	    "time", d->d_commit_time != 0 ? api_time_json(d->d_commit_time) :
	    json_null(),
	    "url", json_str_or_null(url),
	    "path", json_str_or_null(d->d_path),
	    "base_commit", json_str_or_null(d->d_base_commit));
	free(url);
	if (d->d_path == NULL || d->d_base_commit == NULL) {
		json_object_set_new(o, "changed", json_null());
		json_object_set_new(o, "change", json_null());
		json_object_set_new(o, "summary", jsonb_str(d->d_path == NULL ?
		    "no git context kept for this deployment" : "the first "
		    "deployment of this job by nops: no earlier commit to "
		    "compare the job file with"));
		return o;
	}
	json_object_set_new(o, "changed", json_boolean(d->d_git_change !=
	    NULL));
	json_object_set_new(o, "change", json_str_or_null(d->d_git_change));
	if (d->d_git_change != NULL)
		json_object_set_new(o, "summary", jsonb_printf("git-side "
		    "change: %s changed since commit %.12s, the last one "
		    "deployed", d->d_path, d->d_base_commit));
	else
		json_object_set_new(o, "summary", jsonb_printf("outside "
		    "change: %s is the same as at commit %.12s, the last one "
		    "deployed; the difference comes from outside the file "
		    "(the live job in Nomad, or its hooks)", d->d_path,
		    d->d_base_commit));
	return o;
}

static void
api_deployment(struct api_req *req, struct api_resp *resp)
{
	struct deploy	 d;
	struct hook_run	 hr;
	json_t		*o, *hooks, *h, *events, *diff;
	char		 token[128], target[64];
	size_t		 i;
	int64_t		 id;
	int		 rc;

	if (api_engine_deploy_id(req, resp, &id) == -1)
		return;
	if ((rc = store_deploy_load(engine_store(), id, &d)) != 0) {
		api_engine_deploy_error(resp, rc, id);
		return;
	}
	o = api_deploy_json(&d);
	json_object_set_new(o, "git", api_deploy_git_json(&d));
	/* While waiting for health (and after): what Nomad said last. */
	json_object_set_new(o, "health", health_progress(id) != NULL ?
	    json_deep_copy(health_progress(id)) : json_null());
	diff = d.d_diff != NULL ? json_loads(d.d_diff, 0, NULL) : NULL;
	json_object_set_new(o, "diff", diff != NULL ? diffview(diff,
	    d.d_source) : json_null());
	json_decref(diff);
	hooks = json_array();
	for (i = 0; i < d.d_nhooks; i++) {
		h = jsonb_pack("{s:s,s:i,s:s,s:s,s:i}",
		    "phase", d.d_hooks[i].dh_phase,
		    "position", d.d_hooks[i].dh_position,
		    "hook", d.d_hooks[i].dh_hook_id,
		    "revision", d.d_hooks[i].dh_revision,
		    "timeout", d.d_hooks[i].dh_timeout);
		snprintf(token, sizeof(token), "%lld:%s:%d", (long long)id,
		    d.d_hooks[i].dh_phase, d.d_hooks[i].dh_position);
		if (store_deploy_hookrun_get(engine_store(), token, &hr) == 0) {
			json_object_set_new(h, "run", jsonb_pack(
			    "{s:s,s:o,s:o,s:o,s:o,s:o}",
			    "state", hr.hr_state,
			    "child", json_str_or_null(hr.hr_child),
			    "exit_code", hr.hr_exit_code >= 0 ?
			    json_integer(hr.hr_exit_code) : json_null(),
			    "error", json_str_or_null(hr.hr_error),
			    "started_at", api_time_json(hr.hr_started_at),
			    "ended_at", api_time_json(hr.hr_ended_at)));
			/* The last 64 KiB of its output, redacted. */
			json_object_set_new(json_object_get(h, "run"),
			    "output", json_str_or_null(hr.hr_output));
			deploy_hookrun_free(&hr);
		} else
			json_object_set_new(h, "run", json_null());
		json_array_append_new(hooks, h);
	}
	json_object_set_new(o, "hooks", hooks);
	/* What a client can do to it: the action table's rows. */
	json_object_set_new(o, "actions", action_list_deployment(req, &d));
	events = json_array();
	snprintf(target, sizeof(target), "deployment/%lld", (long long)id);
	store_events_page(engine_store(), target, 0, 200, api_event_cb,
	    events);
	json_object_set_new(o, "events", events);
	deploy_free(&d);
	resp->status = 200;
	resp->body = o;
}

/*
 * deploy-now (nopsctl.8): a deployment waiting for approval starts now,
 * without it; drift that policy none or a closed sync window keeps back
 * is deployed at the next cycle.  Refused (409, saying why) for a job in
 * sync, blocked by a failure (retry is the way), already deploying, or
 * that cannot be planned.  Judged on the last detection cycle.
 */
void
api_engine_deploy_now(struct api_req *req, struct api_resp *resp,
    struct ejob *ej)
{
	struct store	*s = engine_store();
	struct deploy	 act;
	enum deploy_state to;
	const char	*ns = ej->ej_ns, *id = ej->ej_id;
	char		 why[160], target[300];
	size_t		 i;
	int		 rc;

	if ((rc = store_deploy_active(s, ns, id, &act)) == -1) {
		api_error(resp, 500, "runtime_error", "cannot read the "
		    "deployments of %s/%s: %s", ns, id, store_error(s));
		return;
	}
	if (rc == 0 && act.d_state != DS_PENDING_APPROVAL) {
		api_error(resp, 409, "conflict", "job %s/%s is already being "
		    "deployed: deployment %lld is %s", ns, id,
		    (long long)act.d_id, deploy_state_str(act.d_state));
		deploy_free(&act);
		return;
	}
	if (rc == 0) {
		to = DS_REGISTERING;
		for (i = 0; i < act.d_nhooks; i++)
			if (strcmp(act.d_hooks[i].dh_phase, "pre") == 0)
				to = DS_PRE_HOOKS;
		snprintf(why, sizeof(why), "deployed now by %s, without "
		    "approval", req->ar_actor);
		if (store_begin(s) == -1) {
			deploy_free(&act);
			api_error(resp, 500, "runtime_error",
			    "the store refused the change: %s", store_error(s));
			return;
		}
		rc = deploy_transition(s, act.d_id, DS_PENDING_APPROVAL, to,
		    req->ar_actor, "deploy_now", why);
		if (rc != 1 || store_commit(s) == -1) {
			store_rollback(s);
			if (rc == 0)
				api_error(resp, 409, "conflict",
				    "deployment %lld moved meanwhile",
				    (long long)act.d_id);
			else
				api_error(resp, 500, "runtime_error",
				    "the store refused the change: %s",
				    store_error(s));
			deploy_free(&act);
			return;
		}
		log_info("deployment %lld of %s/%s deployed now by %s",
		    (long long)act.d_id, ns, id, req->ar_actor);
		engine_apply_kick();
		resp->status = 200;
		resp->body = jsonb_pack("{s:s,s:s,s:s,s:I,s:s}",
		    "namespace", ns, "id", id, "action", "deploy-now",
		    "deployment", (json_int_t)act.d_id,
		    "state", deploy_state_str(to));
		deploy_free(&act);
		return;
	}
	if (ej->ej_state != NULL && strcmp(ej->ej_state, "in_sync") == 0) {
		api_error(resp, 409, "conflict", "job %s/%s is in sync "
		    "with git: nothing to deploy", ns, id);
		return;
	}
	if (ej->ej_state != NULL && (strcmp(ej->ej_state, "blocked") == 0 ||
	    strcmp(ej->ej_state, "error") == 0)) {
		api_error(resp, 409, "conflict", "job %s/%s is %s: %s", ns, id,
		    ej->ej_state, ej->ej_note != NULL ? ej->ej_note :
		    "see the job");
		return;
	}
	/* Queued only once the audit log holds who asked. */
	snprintf(target, sizeof(target), "job/%s/%s", ns, id);
	if (store_begin(s) == -1 || store_event(s, req->ar_actor,
	    "job.deploy_now", target, "queued for the next detection cycle") ==
	    -1 || store_commit(s) == -1) {
		api_error(resp, 500, "runtime_error", "deploy-now not queued, "
		    "the audit event could not be written: %s",
		    store_error(s));
		store_rollback(s);
		return;
	}
	decide_request_deploy_now(ns, id, req->ar_actor);
	resp->status = 202;
	resp->body = jsonb_pack("{s:s,s:s,s:s,s:b}", "namespace", ns,
	    "id", id, "action", "deploy-now", "queued", 1);
}

json_t *
api_engine_orphan_json(const struct eorphan *eo)
{
	return jsonb_pack("{s:s,s:s,s:I}", "namespace", eo->eo_ns, "id",
	    eo->eo_id, "last_deployment", (json_int_t)eo->eo_last_deployment);
}

json_t *
api_engine_file_error_json(const struct efile_error *fe)
{
	return jsonb_pack("{s:s,s:s,s:s}", "repository", fe->fe_repo,
	    "path", fe->fe_path, "error", fe->fe_error);
}

static void
api_orphans(struct api_req *req, struct api_resp *resp)
{
	json_t	*items;
	size_t	 i;

	items = json_array();
	for (i = 0; i < engine_env->e_norphans; i++)
		json_array_append_new(items,
		    api_engine_orphan_json(&engine_env->e_orphans[i]));
	resp->status = 200;
	resp->body = jsonb_pack("{s:o,s:o,s:b}", "items", items, "next",
	    json_null(), "complete", engine_env->e_orphans_known);
}

/*
 * Alike on purpose: api_orphans lists another of the engine's arrays,
 * another element type and its JSON form, and adds "complete"; a walk
 * shared by the two would take a callback for three lines of loop.
 */
static void
api_file_errors(struct api_req *req, struct api_resp *resp)
{
	json_t	*items;
	size_t	 i;

	items = json_array();
	for (i = 0; i < engine_env->e_nfile_errors; i++)
		json_array_append_new(items,
		    api_engine_file_error_json(&engine_env->e_file_errors[i]));
	resp->status = 200;
	resp->body = jsonb_pack("{s:o,s:o}", "items", items, "next",
	    json_null());
}

static void
api_engine(struct api_req *req, struct api_resp *resp)
{
	struct engine	*e = engine_env;

	resp->status = 200;
	resp->body = jsonb_pack("{s:I,s:o,s:o,s:f,s:I,s:I,s:I,s:I,s:b,s:o,"
	    "s:b,s:I,s:b}",
	    "cycles", (json_int_t)e->e_cycles,
	    "last_detection", api_time_json(e->e_last_detect),
	    "last_apply", api_time_json(e->e_last_apply),
	    "last_detection_ms", e->e_last_detect_ms,
	    "last_detection_requests", (json_int_t)e->e_last_requests,
	    "last_detection_planned", (json_int_t)e->e_last_planned,
	    "last_detection_unchanged", (json_int_t)e->e_last_skipped,
	    "last_detection_files_reused", (json_int_t)e->e_last_files_reused,
	    "last_detection_full", e->e_last_full,
	    "last_detection_full_why", e->e_last_full_why != NULL ?
	    json_string(e->e_last_full_why) : json_null(),
	    "last_detection_focused", e->e_last_focused,
	    "last_detection_decided", (json_int_t)e->e_last_decided,
	    "detecting", e->e_detecting);
}

/* Alike on purpose: a route table, one row per route. */
const struct api_route api_engine_routes[] = {
	{ "GET",  "/api/v1/engine",		1, api_engine, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/jobs",		1, api_jobs, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/jobs/*/*",		1, api_job, CAP_READ,
	    API_NS_JOB },
	{ "POST", "/api/v1/jobs/*/*/actions/*", 1, action_api_job,
	    ACL_ROUTE_ACTION, API_NS_JOB },
	{ "GET",  "/api/v1/deployments",	1, api_deployments, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/deployments/*",	1, api_deployment, CAP_READ,
	    API_NS_DEPLOYMENT },
	{ "POST", "/api/v1/deployments/*/actions/*", 1, action_api_deployment,
	    ACL_ROUTE_ACTION, API_NS_DEPLOYMENT },
	{ "GET",  "/api/v1/orphans",		1, api_orphans, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/files/errors",	1, api_file_errors, CAP_READ,
	    API_NS_NONE },
};
const size_t api_engine_nroutes =
    sizeof(api_engine_routes) / sizeof(api_engine_routes[0]);
