/*
 * Suspend and unsuspend, the toggle of a job's desired state.
 *
 * Suspend writes the suspend (who, why, when) before it acts, then
 * registers the spec of the job's last successful deployment with Stop
 * set, checked and set against the live job's modify index.  Detection
 * puts the Stop into every later spec it plans and hashes
 * (suspend_carry()), and apply into every spec it registers, so that a
 * new commit, a retry or a deployment made just before the suspend
 * never starts the job again.  A stop that fails leaves the suspend in
 * force and a record left behind, which a retry registers again.
 *
 * Unsuspend removes the suspend and registers the spec of the last
 * successful deployment without Stop: never a configuration that only
 * failed.  Both answer once Nomad has answered the register.
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_job.h"
#include "nomad.h"
#include "deploy.h"
#include "store_deploy.h"
#include "engine.h"
#include "api.h"
#include "jsonb.h"
#include "action.h"
#include "suspend.h"
#include "leftbehind.h"

#define SUSPEND_BUSY_MAX	64

struct sreg {
	char		*sr_ns;
	char		*sr_job;
	int		 sr_stop;		/* suspend: 1, unsuspend: 0 */
	int64_t		 sr_deployment;		/* whose spec */
	json_t		*sr_spec;
	struct api_later *sr_later;		/* NULL: a retry */
	void		(*sr_done)(void *, int, const char *);
	void		*sr_arg;
};

static struct sreg	*suspend_inflight[SUSPEND_BUSY_MAX];
static size_t		 suspend_ninflight;

json_t *
suspend_json(const char *ns, const char *job)
{
	json_t	*o;
	char	*who = NULL, *reason = NULL;
	int64_t	 since = 0;

	if (store_job_get(engine_store(), STORE_JOB_SUSPEND, ns, job, &who,
	    &reason, &since) != 1)
		return json_null();
	o = jsonb_pack("{s:s,s:s,s:o}", "by", who, "reason", reason, "since",
	    api_time_json(since));
	free(who);
	free(reason);
	return o;
}

int
suspend_busy(const char *ns, const char *job)
{
	size_t	 i;

	for (i = 0; i < suspend_ninflight; i++)
		if (strcmp(suspend_inflight[i]->sr_ns, ns) == 0 &&
		    strcmp(suspend_inflight[i]->sr_job, job) == 0)
			return 1;
	return 0;
}

/*
 * Long-running jobs: a stopped service or system job is one that is
 * suspended.  A batch job ends by itself, and a periodic or parameterized
 * one places nothing of its own to stop.
 */
int
suspend_type_suspendable(const json_t *job)
{
	const char	*type;

	type = json_string_value(json_object_get(job, "Type"));
	if (type == NULL)
		type = "service";
	if (json_is_object(json_object_get(job, "Periodic")) ||
	    json_is_object(json_object_get(job, "ParameterizedJob")))
		return 0;
	return strcmp(type, "service") == 0 || strcmp(type, "system") == 0;
}

int
suspend_job_type_ok(const struct action_ctx *ac)
{
	return ac->ac_ej != NULL && ac->ac_ej->ej_suspendable;
}

int
suspend_carry(const char *ns, const char *job, json_t *spec)
{
	if (store_job_get(engine_store(), STORE_JOB_SUSPEND, ns, job, NULL,
	    NULL, NULL) != 1)
		return 0;
	json_object_set_new(spec, "Stop", json_true());
	return 1;
}

static void
sreg_free(struct sreg *sr)
{
	size_t	 i;

	for (i = 0; i < suspend_ninflight; i++)
		if (suspend_inflight[i] == sr) {
			suspend_inflight[i] =
			    suspend_inflight[--suspend_ninflight];
			break;
		}
	free(sr->sr_ns);
	free(sr->sr_job);
	json_decref(sr->sr_spec);
	free(sr);
}

static void
sreg_end(struct sreg *sr, int status, const char *code, const char *err)
{
	struct api_resp	 resp;

	if (err == NULL) {
		log_info("job %s/%s registered %s (the spec of deployment "
		    "%lld)", sr->sr_ns, sr->sr_job, sr->sr_stop ? "stopped" :
		    "running again", (long long)sr->sr_deployment);
		/* A write of the job: a stop left behind is moot. */
		leftbehind_clear(LB_SUSPEND, sr->sr_ns, sr->sr_job);
	} else {
		log_warnx("job %s/%s: %s: %s", sr->sr_ns, sr->sr_job,
		    sr->sr_stop ? "suspend" : "unsuspend", err);
		/* The suspend stays in force; the stop is left behind. */
		if (sr->sr_stop)
			leftbehind_add(LB_SUSPEND, sr->sr_ns, sr->sr_job,
			    sr->sr_deployment, err);
	}
	if (sr->sr_later != NULL) {
		memset(&resp, 0, sizeof(resp));
		resp.status = err == NULL ? 200 : status;
		if (err == NULL)
			resp.body = jsonb_pack(
			    "{s:s,s:s,s:s,s:I}", "namespace", sr->sr_ns,
			    "id", sr->sr_job, "action", sr->sr_stop ?
			    "suspend" : "unsuspend", "deployment",
			    (json_int_t)sr->sr_deployment);
		else
			resp.body = api_error_json(code, "job %s/%s: %s%s",
			    sr->sr_ns, sr->sr_job, err, sr->sr_stop ? "; the "
			    "suspend stays and the stop is left behind" : "");
		api_later_answer(sr->sr_later, &resp);
	}
	if (sr->sr_done != NULL)
		sr->sr_done(sr->sr_arg, err == NULL ? 0 : -1, err);
	sreg_free(sr);
	engine_detect(status == 200 ? "a job was suspended or unsuspended" :
	    "a suspend or unsuspend failed");
}

static void
sreg_registered(struct nomad_result *res, void *arg)
{
	struct sreg	*sr = arg;
	uint64_t	 sent, stored;

	if (nomad_ok(res)) {
		sreg_end(sr, 200, NULL, NULL);
		return;
	}
	if (nomad_cas_error(res, &sent, &stored) != NOMAD_CAS_NONE)
		sreg_end(sr, 409, "conflict", "the job changed in Nomad "
		    "meanwhile; try again");
	else
		sreg_end(sr, 500, "runtime_error", res->nr_error != NULL ?
		    res->nr_error : "no answer from Nomad");
}

static void
sreg_live(struct nomad_result *res, void *arg)
{
	struct sreg	*sr = arg;
	uint64_t	 index = 0;
	json_t		*spec;

	if (nomad_ok(res) && json_is_object(res->nr_json)) {
		index = (uint64_t)json_integer_value(json_object_get(
		    res->nr_json, "JobModifyIndex"));
		/* Counts an autoscaler keeps stay as they are. */
		spec = detect_register_spec(sr->sr_spec, res->nr_json);
		json_decref(sr->sr_spec);
		sr->sr_spec = spec;
	} else if (res->nr_status != 404) {
		sreg_end(sr, 500, "runtime_error", res->nr_error != NULL ?
		    res->nr_error : "no answer from Nomad");
		return;
	}
	json_object_set_new(sr->sr_spec, "Stop", json_boolean(sr->sr_stop));
	nomad_register(sr->sr_ns, sr->sr_job, sr->sr_spec, 1, index,
	    sreg_registered, sr);
}

/*
 * Register the spec of deployment dep stopped or not.  Returns 0 (the
 * answer comes later), or -1 with err when nothing was started.
 */
static int
suspend_register(const char *ns, const char *job, int64_t dep, int stop,
    struct api_later *later, void (*done)(void *, int, const char *),
    void *arg, char *err, size_t errlen)
{
	struct deploy	 d;
	struct sreg	*sr;
	json_t		*spec;

	if (suspend_ninflight >= SUSPEND_BUSY_MAX) {
		snprintf(err, errlen, "too many suspends under way");
		return -1;
	}
	if (store_deploy_load(engine_store(), dep, &d) != 0) {
		snprintf(err, errlen, "cannot read deployment %lld",
		    (long long)dep);
		return -1;
	}
	spec = json_loads(d.d_spec, 0, NULL);
	deploy_free(&d);
	if (!json_is_object(spec)) {
		json_decref(spec);
		snprintf(err, errlen, "the spec of deployment %lld does not "
		    "parse", (long long)dep);
		return -1;
	}
	if ((sr = calloc(1, sizeof(*sr))) == NULL)
		fatal("calloc");
	/*
	 * Alike on purpose: config_new (config.c) sets its defaults a field
	 * at a time the same way; other fields, nothing to share.
	 */
	sr->sr_ns = xstrdup(ns);
	sr->sr_job = xstrdup(job);
	sr->sr_stop = stop;
	sr->sr_deployment = dep;
	sr->sr_spec = spec;
	sr->sr_later = later;
	sr->sr_done = done;
	sr->sr_arg = arg;
	suspend_inflight[suspend_ninflight++] = sr;
	nomad_job_read(ns, job, sreg_live, sr);
	return 0;
}

/* Write (stop) or remove the suspend, with its audit event. */
static int
suspend_store(const char *ns, const char *job, int stop, const char *who,
    const char *reason)
{
	struct store	*s = engine_store();
	char		 target[512];
	int		 rc;

	if (store_begin(s) == -1)
		return -1;
	if (stop)
		rc = store_job_set(s, STORE_JOB_SUSPEND, ns, job, who, reason);
	else
		rc = store_job_clear(s, STORE_JOB_SUSPEND, ns, job);
	if (rc == -1)
		goto fail;
	snprintf(target, sizeof(target), "job/%s/%s", ns, job);
	if (store_event(s, who, stop ? "job.suspend" : "job.unsuspend",
	    target, reason) == -1 || store_commit(s) == -1)
		goto fail;
	return 0;
fail:
	store_rollback(s);
	return -1;
}

static void
suspend_toggle(struct action_ctx *ac, json_t *input, struct api_resp *resp,
    int stop)
{
	struct api_later *later;
	const char	*reason;
	char		 err[256];

	reason = json_string_value(json_object_get(input, "reason"));
	if (!action_reason_ok(reason)) {
		api_error(resp, 400, "bad_request", "a reason is at most 1024 "
		    "bytes, without control characters");
		return;
	}
	if (suspend_store(ac->ac_ns, ac->ac_job, stop, ac->ac_req->ar_actor,
	    reason) == -1) {
		api_error(resp, 500, "runtime_error", "the store refused the "
		    "change: %s", store_error(engine_store()));
		return;
	}
	log_info("job %s/%s %s by %s", ac->ac_ns, ac->ac_job, stop ?
	    "suspended" : "unsuspended", ac->ac_req->ar_actor);
	/* Pending deployments without the Stop are superseded. */
	engine_detect(stop ? "job suspended" : "job unsuspended");
	later = api_later(ac->ac_req);
	if (suspend_register(ac->ac_ns, ac->ac_job, ac->ac_last_ok, stop,
	    later, NULL, NULL, err, sizeof(err)) == -1) {
		api_later_cancel(later);
		api_error(resp, 500, "runtime_error", "job %s/%s: %s",
		    ac->ac_ns, ac->ac_job, err);
		if (stop)
			leftbehind_add(LB_SUSPEND, ac->ac_ns, ac->ac_job,
			    ac->ac_last_ok, err);
		return;
	}
	resp->status = API_DEFERRED;
}

void
suspend_action(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	suspend_toggle(ac, input, resp, 1);
}

void
suspend_undo_action(struct action_ctx *ac, json_t *input,
    struct api_resp *resp)
{
	suspend_toggle(ac, input, resp, 0);
}

/*
 * The retry of a suspend left behind (master/leftbehind.c): register the
 * job stopped again, if it is still suspended.  done(arg, 0|-1, error).
 */
int
suspend_retry(const char *ns, const char *job, int64_t dep,
    void (*done)(void *, int, const char *), void *arg, char *err,
    size_t errlen)
{
	if (store_job_get(engine_store(), STORE_JOB_SUSPEND, ns, job, NULL,
	    NULL, NULL) != 1) {
		snprintf(err, errlen, "job %s/%s is no longer suspended", ns,
		    job);
		return -1;
	}
	if (suspend_busy(ns, job)) {
		snprintf(err, errlen, "a suspend of %s/%s is under way", ns,
		    job);
		return -1;
	}
	return suspend_register(ns, job, dep, 1, NULL, done, arg, err,
	    errlen);
}
