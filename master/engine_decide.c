/*
 * Detection's decisions, per managed job, once Nomad planned it: complete
 * or supersede its waiting deployment, create a new one, or nothing, and
 * say why (the job's state on the dashboard).  Also the requests people
 * make between cycles (retry, deploy-now).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "conf.h"
#include "store.h"
#include "repo.h"
#include "gitctx.h"
#include "meta.h"
#include "deploy.h"
#include "store_deploy.h"
#include "store_job.h"
#include "engine.h"
#include "engine_detect.h"
#include "notify.h"
#include "suspend.h"
#include "operation.h"

static struct drequest	*drequests;
static size_t		 ndrequests;
/* A request whose decision failed on a store error: kept for the retry. */
static struct drequest	*dcarry;
static size_t		 ndcarry;
static int		 decide_failed;	/* set by decide_fail() */

/* A new request at the end of the array *a of *n; its dr_who is unset. */
static struct drequest *
drequest_push(struct drequest **a, size_t *n, const char *ns, const char *id,
    int kind, int64_t of)
{
	struct drequest	*r;

	if ((*a = reallocarray(*a, *n + 1, sizeof(**a))) == NULL)
		fatal("reallocarray");
	r = &(*a)[(*n)++];
	r->dr_ns = xstrdup(ns);
	r->dr_id = xstrdup(id);
	r->dr_kind = kind;
	r->dr_of = of;
	return r;
}

/* who is taken. */
static void
drequest_carry(const char *ns, const char *id, int kind, int64_t of,
    char *who)
{
	drequest_push(&dcarry, &ndcarry, ns, id, kind, of)->dr_who = who;
}

static void
drequest_add(const char *ns, const char *id, int kind, int64_t of,
    const char *who)
{
	drequest_push(&drequests, &ndrequests, ns, id, kind, of)->dr_who =
	    xstrdup(who);
}

void
decide_request_retry(const char *ns, const char *id, int64_t of)
{
	drequest_add(ns, id, DREQ_RETRY, of, "system");
	engine_detect("retry");
}

void
decide_request_deploy_now(const char *ns, const char *id, const char *who)
{
	drequest_add(ns, id, DREQ_DEPLOY_NOW, 0, who);
	engine_detect("deploy-now");
}

/* Take (and remove) a pending request of kind for the job. */
static int
drequest_take(const char *ns, const char *id, int kind, int64_t *of,
    char **who)
{
	size_t	 i;

	for (i = 0; i < ndrequests; i++) {
		struct drequest *r = &drequests[i];

		if (r->dr_kind != kind || strcmp(r->dr_ns, ns) != 0 ||
		    strcmp(r->dr_id, id) != 0)
			continue;
		if (of != NULL)
			*of = r->dr_of;
		if (who != NULL)
			*who = r->dr_who;
		else
			free(r->dr_who);
		free(r->dr_ns);
		free(r->dr_id);
		drequests[i] = drequests[--ndrequests];
		return 1;
	}
	return 0;
}

/* Transition in its own transaction; logs and returns -1 on error. */
static int
decide_move(int64_t id, enum deploy_state from, enum deploy_state to,
    const char *action, const char *reason)
{
	int	 rc;

	if ((rc = deploy_move(engine_store(), id, from, to, action,
	    reason)) == 1)
		notify_deployment(id, to);
	return rc;
}

/*
 * The commit's subject, author and time, and the job file's text and its
 * change since the last completed deployment (gitctx.c).  The texts are
 * the caller's to free; the rest is borrowed from the snapshot.
 */
static void
decide_git_context(struct ejob *ej, struct deploy *d)
{
	const struct repo_file	*f = ej->ej_file;

	if (ej->ej_snap == NULL || f == NULL)
		return;
	d->d_subject = ej->ej_snap->rs_subject;
	d->d_author = ej->ej_snap->rs_author;
	d->d_commit_time = ej->ej_snap->rs_time;
	d->d_path = f->rf_path;
	d->d_source = gitctx_redact_source((const char *)f->rf_data);
	d->d_vars_source = f->rf_vars != NULL ?
	    gitctx_redact_source((const char *)f->rf_vars->rf_data) : NULL;
	if (deploy_git_change(engine_store(), d) == -1)
		log_warnx("%s/%s: cannot read its last deployment to compare "
		    "the job file: %s", ej->ej_ns, ej->ej_id,
		    store_error(engine_store()));
}

static int
decide_create(struct ejob *ej, enum deploy_state state, const char *reason,
    int64_t retry_of, const char *actor)
{
	struct store	*s = engine_store();
	struct deploy	 d;
	json_t		*spec;
	char		*specs, *diffs, *why, policy[16];
	size_t		 i;
	int		 rc;

	spec = detect_register_spec(detect_job_json(ej), ej->ej_live);
	specs = engine_json_canonical(spec);
	json_decref(spec);
	diffs = xstrdup(ej->ej_diff);

	/*
	 * Alike on purpose: repo_send_one (repo.c) fills a wire struct
	 * field by field the same way; other fields from another source.
	 */
	memset(&d, 0, sizeof(d));
	d.d_ns = ej->ej_ns;
	d.d_job = ej->ej_id;
	d.d_repo = ej->ej_repo;
	d.d_commit = ej->ej_commit;
	d.d_spec = specs;
	d.d_diff = diffs;
	d.d_spec_hash = ej->ej_hash;
	d.d_cas_index = ej->ej_live_exists ? (int64_t)ej->ej_modify_index : -1;
	(void)strlcpy(policy, meta_policy_str(ej->ej_meta.jm_policy),
	    sizeof(policy));
	d.d_policy = policy;
	d.d_state = state;
	d.d_reason = why = xstrdup(reason);
	d.d_retry_of = retry_of;
	for (i = 0; i < ej->ej_nhooks; i++)
		d.d_hooks[i] = ej->ej_hooks[i];
	d.d_nhooks = ej->ej_nhooks;
	decide_git_context(ej, &d);

	rc = -1;
	if (store_begin(s) == 0) {
		if (deploy_create(s, &d, actor) == 0 &&
		    operation_store(s, d.d_id, ej) == 0 &&
		    store_commit(s) == 0)
			rc = 0;
		else
			store_rollback(s);
	}
	explicit_bzero(specs, strlen(specs));
	free(specs);
	free(diffs);
	free(why);
	free(d.d_source);
	free(d.d_vars_source);
	free(d.d_base_commit);
	free(d.d_git_change);
	if (rc == 0) {
		ej->ej_deployment = d.d_id;
		log_info("deployment %lld created for %s/%s at %.12s (%s)",
		    (long long)d.d_id, ej->ej_ns, ej->ej_id, ej->ej_commit,
		    deploy_state_str(state));
		notify_deployment(d.d_id, state);
	}
	return rc;
}

/* The newest ended deployment of a job, as decide_blocked() reads it. */
struct decide_last {
	struct ejob	*dl_job;
	int64_t		*dl_last;
	int		 dl_blocked;
};

static void
decide_last_cb(int64_t id, const char *state, const char *hash, void *arg)
{
	struct decide_last *dl = arg;

	*dl->dl_last = id;
	dl->dl_blocked = state != NULL && hash != NULL &&
	    strcmp(state, "completed") != 0 &&
	    strcmp(hash, dl->dl_job->ej_hash) == 0;
}

/*
 * Is the job blocked by a failed or rejected deployment of this spec?
 * 1 or 0, or -1 on a store error.
 */
static int
decide_blocked(struct ejob *ej, int64_t *last)
{
	struct decide_last dl = { ej, last, 0 };

	if (store_deploy_last_ended(engine_store(), ej->ej_ns, ej->ej_id,
	    decide_last_cb, &dl) == -1)
		return -1;
	return dl.dl_blocked;
}

/*
 * Alike on purpose: sc_fail (schema.c) is a printf-like setter too; it
 * writes a bounded buffer once, this replaces an allocated note.
 */
static void
decide_note(struct ejob *ej, const char *state, const char *fmt, ...)
	__attribute__((__format__(printf, 3, 4)));

static void
decide_note(struct ejob *ej, const char *state, const char *fmt, ...)
{
	va_list	 ap;

	ej->ej_state = state;
	free(ej->ej_note);
	ej->ej_note = NULL;
	if (fmt == NULL)
		return;
	va_start(ap, fmt);
	ej->ej_note = xvasprintf(fmt, ap);
	va_end(ap);
}

/*
 * A store write or read failed: the decision is abandoned (nothing after
 * it is done on a half-made state), the job shows the error, and the
 * cycle runs again soon rather than at the next drift tick.
 */
static void
decide_fail(struct ejob *ej, const char *what)
{
	const char	*err = store_error(engine_store());

	decide_failed = 1;
	engine_env->e_decide_failed = 1;
	decide_note(ej, "error", "%s: %s; trying again in %d s", what, err,
	    ENGINE_STORE_RETRY);
	log_warnx("%s/%s: %s: %s", ej->ej_ns, ej->ej_id, what, err);
	engine_detect_retry("a store error");
}

/* What decide_job() learnt before deciding, and a person's requests. */
struct decide_ctx {
	int		 dx_paused;	/* a person's hold */
	int		 dx_held;	/* outside its sync window */
	int		 dx_retry;	/* a retry of deployment dx_retry_of */
	int64_t		 dx_retry_of;
	int		 dx_now;	/* deploy-now, asked by dx_nowho */
	char		*dx_nowho;
	char		*dx_who, *dx_reason;	/* of the hold */
};

/*
 * The job's deployment waiting for approval (act, freed): completed
 * when the job is in sync, kept while it still fits, else superseded.
 * 1 when that decided the job for this cycle, 0 to go on and decide a
 * new deployment.
 */
static int
decide_waiting(struct ejob *ej, struct deploy *act,
    const struct decide_ctx *dx)
{
	const char	*why;

	ej->ej_deployment = act->d_id;
	if (act->d_state != DS_PENDING_APPROVAL) {
		/* Started: apply carries it to its end. */
		decide_note(ej, "deploying", "deployment %lld is %s",
		    (long long)act->d_id, deploy_state_str(act->d_state));
		deploy_free(act);
		return 1;
	}
	why = NULL;
	if (!ej->ej_drift) {
		if (decide_move(act->d_id, DS_PENDING_APPROVAL, DS_COMPLETED,
		    "complete", "already in sync: nothing to deploy") == -1) {
			deploy_free(act);
			decide_fail(ej, "completing its waiting deployment");
			return 1;
		}
	} else if (strcmp(act->d_spec_hash, ej->ej_hash) != 0)
		why = "superseded: the job or its hooks changed in git";
	else if (act->d_cas_index != (ej->ej_live_exists ?
	    (int64_t)ej->ej_modify_index : -1))
		why = "superseded: the live job changed in Nomad";
	else if (dx->dx_paused)
		why = "superseded: the job is paused";
	else if (dx->dx_held)
		why = "superseded: the sync window is closed";
	else if (ej->ej_meta.jm_policy != POLICY_APPROVAL && !dx->dx_now)
		why = "superseded: the job's policy changed";
	if (why == NULL && ej->ej_drift) {
		decide_note(ej, "pending_approval", "deployment %lld waits "
		    "for approval", (long long)act->d_id);
		deploy_free(act);
		return 1;
	}
	/*
	 * A supersede that failed leaves the old deployment waiting: a new
	 * one would only fail on the one-active rule.  Stop here; the retry
	 * supersedes it and creates the new one.
	 */
	if (why != NULL && decide_move(act->d_id, DS_PENDING_APPROVAL,
	    DS_SUPERSEDED, "supersede", why) == -1) {
		deploy_free(act);
		decide_fail(ej, "superseding its waiting deployment");
		return 1;
	}
	ej->ej_deployment = 0;
	deploy_free(act);
	return 0;
}

/* No deployment waits: note the job's state, or create its deployment. */
static void
decide_new(struct ejob *ej, const struct decide_ctx *dx)
{
	int64_t		 last = 0;
	int		 blocked;
	enum deploy_state first;

	if (!ej->ej_drift) {
		if (store_job_get(engine_store(), STORE_JOB_SUSPEND,
		    ej->ej_ns, ej->ej_id, NULL, NULL, NULL) == 1)
			decide_note(ej, "suspended", "suspended: registered "
			    "stopped until it is unsuspended");
		else
			decide_note(ej, "in_sync", NULL);
		return;
	}
	/*
	 * A suspended job whose plan saw it running, or planned a spec
	 * without the Stop: the suspend landed while this cycle ran (its
	 * register in flight or just done), or its stop failed (left
	 * behind, which a retry registers again).  Stopping it is the
	 * suspend's business, never a deployment's: none is made from this
	 * plan.  The suspend's register starts a new cycle when it ends,
	 * which plans the job stopped and deploys a real change with the
	 * Stop.
	 */
	if (store_job_get(engine_store(), STORE_JOB_SUSPEND, ej->ej_ns,
	    ej->ej_id, NULL, NULL, NULL) == 1 &&
	    (!json_is_true(json_object_get(detect_job_json(ej), "Stop")) ||
	    (ej->ej_live != NULL && !json_is_true(json_object_get(ej->ej_live,
	    "Stop"))))) {
		decide_note(ej, "suspended", "suspended while this cycle "
		    "planned it, or its stop is left behind: no deployment "
		    "until Nomad has it stopped");
		return;
	}
	if (dx->dx_paused) {
		decide_note(ej, "paused", "paused by %s: %s", dx->dx_who,
		    dx->dx_reason);
		return;
	}
	if (ej->ej_meta.jm_policy == POLICY_NONE && !dx->dx_now) {
		decide_note(ej, "drift", ej->ej_meta.jm_errors > 0 ?
		    "invalid nops_ meta: policy none until it is fixed" :
		    "policy none: nops shows the drift and deploys nothing");
		return;
	}
	if (dx->dx_held && !dx->dx_now) {
		decide_note(ej, "held", "outside its sync window");
		return;
	}
	if ((blocked = decide_blocked(ej, &last)) == -1) {
		decide_fail(ej, "reading its last deployment");
		return;
	}
	if (blocked && !(dx->dx_retry && dx->dx_retry_of == last)) {
		decide_note(ej, "blocked", "deployment %lld failed or was "
		    "rejected for this spec; retry it or push a new commit",
		    (long long)last);
		return;
	}
	if (ej->ej_hook_error != NULL) {
		/* A missing or invalid hook fails the deployment now. */
		if (decide_create(ej, DS_FAILED, ej->ej_hook_error,
		    dx->dx_retry ? dx->dx_retry_of : 0, "system") == -1)
			decide_fail(ej, "recording the failed deployment");
		else
			decide_note(ej, "blocked", "%s", ej->ej_hook_error);
		return;
	}
	if (dx->dx_now || ej->ej_meta.jm_policy == POLICY_AUTO)
		first = ej->ej_meta.jm_npre > 0 ? DS_PRE_HOOKS : DS_REGISTERING;
	else
		first = DS_PENDING_APPROVAL;
	if (decide_create(ej, first, dx->dx_now ? "deploy now" : NULL,
	    dx->dx_retry ? dx->dx_retry_of : 0,
	    dx->dx_now ? dx->dx_nowho : "system") == 0) {
		decide_note(ej, first == DS_PENDING_APPROVAL ?
		    "pending_approval" : "deploying", "deployment %lld",
		    (long long)ej->ej_deployment);
		engine_apply_kick();
	} else
		decide_fail(ej, "creating its deployment");
}

/* Decide for one managed, planned job.  See nopsd.8, DETECTION. */
static void
decide_job(struct ejob *ej)
{
	struct store		*s = engine_store();
	struct deploy		 act;
	struct decide_ctx	 dx;
	int			 have;

	if (ej->ej_plan_error != NULL) {
		decide_note(ej, "error", "%s", ej->ej_plan_error);
		return;
	}
	decide_failed = 0;
	memset(&dx, 0, sizeof(dx));
	dx.dx_retry = drequest_take(ej->ej_ns, ej->ej_id, DREQ_RETRY,
	    &dx.dx_retry_of, NULL);
	dx.dx_now = drequest_take(ej->ej_ns, ej->ej_id, DREQ_DEPLOY_NOW, NULL,
	    &dx.dx_nowho);
	if ((dx.dx_paused = store_job_get(engine_store(), STORE_JOB_PAUSE,
	    ej->ej_ns, ej->ej_id, &dx.dx_who, &dx.dx_reason, NULL)) == -1) {
		decide_fail(ej, "reading the job's hold");
		goto out;
	}
	dx.dx_held = !meta_window_open(&ej->ej_meta, time(NULL));

	have = store_deploy_active(s, ej->ej_ns, ej->ej_id, &act);
	if (have == -1) {
		decide_fail(ej, "reading its waiting deployment");
		goto out;
	}
	if (have == 0 && decide_waiting(ej, &act, &dx))
		goto out;
	decide_new(ej, &dx);
out:
	/* A person's retry or deploy-now is not lost to a store error. */
	if (decide_failed && dx.dx_retry)
		drequest_carry(ej->ej_ns, ej->ej_id, DREQ_RETRY,
		    dx.dx_retry_of, xstrdup("system"));
	if (decide_failed && dx.dx_now) {
		drequest_carry(ej->ej_ns, ej->ej_id, DREQ_DEPLOY_NOW, 0,
		    dx.dx_nowho);
		dx.dx_nowho = NULL;
	}
	free(dx.dx_who);
	free(dx.dx_reason);
	free(dx.dx_nowho);
}

int
decide_requests_pending(void)
{
	return ndrequests > 0 || ndcarry > 0;
}

/*
 * A focused cycle (engine_focus.c) keeps the last decision of a job it
 * did not plan when nothing that decision read can have moved: no row
 * of the store's decision tables written since the last cycle's
 * decisions, no request waiting, no sync window (the time decides it),
 * and that decision wrote nothing itself (a deployment it created is
 * "waiting for approval" the next time).
 */
static int
decide_keep(struct dcycle *dc, struct ejob *ej, int unmoved)
{
	struct ejob	*old;

	if (!dc->dc_focus || ej->ej_focus || !unmoved ||
	    ej->ej_meta.jm_has_window ||
	    (old = engine_job(ej->ej_ns, ej->ej_id)) == NULL ||
	    old->ej_wrote)
		return 0;
	ej->ej_state = old->ej_state;
	ej->ej_note = xstrdup(old->ej_note);
	ej->ej_deployment = old->ej_deployment;
	return 1;
}

/* Each deployment waiting for approval whose job left git is superseded. */
static void
decide_supersede(struct dcycle *dc)
{
	struct ejob	*ej, key;
	struct deploy	 d;
	int64_t		*ids;
	size_t		 i, n;
	int		 rc;

	if (store_deploy_active_ids(engine_store(), &ids, &n) == -1) {
		log_warnx("detection: reading active deployments: %s",
		    store_error(engine_store()));
		engine_detect_retry("a store error");
		return;
	}
	for (i = 0; i < n; i++) {
		if ((rc = store_deploy_load(engine_store(), ids[i],
		    &d)) == -1) {
			log_warnx("detection: deployment %lld: %s",
			    (long long)ids[i], store_error(engine_store()));
			engine_detect_retry("a store error");
		}
		if (rc != 0)
			continue;
		if (d.d_state == DS_PENDING_APPROVAL) {
			memset(&key, 0, sizeof(key));
			key.ej_ns = d.d_ns;
			key.ej_id = d.d_job;
			ej = RB_FIND(ejobs, &dc->dc_jobs, &key);
			if ((ej == NULL ||
			    ej->ej_meta.jm_role != META_MANAGED) &&
			    decide_move(d.d_id, DS_PENDING_APPROVAL,
			    DS_SUPERSEDED, "supersede", "superseded: the job "
			    "is no longer managed in git") == -1)
				engine_detect_retry("a store error");
		}
		deploy_free(&d);
	}
	free(ids);
}

/*
 * After a cycle: requests for jobs that had nothing to do are dropped;
 * those whose decision failed wait for the retry.
 */
static void
decide_requests_next(void)
{
	while (ndrequests > 0) {
		ndrequests--;
		free(drequests[ndrequests].dr_ns);
		free(drequests[ndrequests].dr_id);
		free(drequests[ndrequests].dr_who);
	}
	free(drequests);
	drequests = dcarry;
	ndrequests = ndcarry;
	dcarry = NULL;
	ndcarry = 0;
}

void
decide_cycle(struct dcycle *dc)
{
	struct ejob	*ej;
	int		 unmoved;
	uint64_t	 gen;

	unmoved = store_decide_gen(engine_store()) ==
	    engine_env->e_decide_gen && ndrequests == 0;
	RB_FOREACH(ej, ejobs, &dc->dc_jobs) {
		if (ej->ej_unparsed == 1)
			decide_note(ej, "unparsed", "%s does not parse: %s",
			    ej->ej_path, ej->ej_error);
		else if (ej->ej_unparsed == 2 || (dc->dc_outage != NULL &&
		    ej->ej_meta.jm_role == META_MANAGED))
			/* An outage: nothing is decided until Nomad is back. */
			decide_note(ej, "error", "Nomad could not parse the "
			    "job files (%s); nothing is decided until it can",
			    dc->dc_outage);
		else if (ej->ej_meta.jm_role == META_HOOK)
			decide_note(ej, "hook", NULL);
		else if (ej->ej_meta.jm_role == META_OPERATION)
			decide_note(ej, "operation", NULL);
		else if (ej->ej_meta.jm_role != META_MANAGED)
			decide_note(ej, "unmanaged", NULL);
		else if (!ej->ej_in_ns)
			decide_note(ej, "unmanaged", "namespace %s is not "
			    "managed (see namespaces in nops.conf)", ej->ej_ns);
		else if (ej->ej_error != NULL)
			decide_note(ej, "error", "%s", ej->ej_error);
		else if (!decide_keep(dc, ej, unmoved)) {
			/*
			 * A decision that wrote (created or moved a
			 * deployment) is decided again next time: its
			 * outcome is not the one the next cycle finds.
			 */
			gen = store_decide_gen(engine_store());
			decide_job(ej);
			ej->ej_wrote = store_decide_gen(engine_store()) != gen;
			dc->dc_decided++;
		}
	}

	/*
	 * A waiting deployment whose job left git is superseded, but only
	 * when every file parsed: a file that fails to parse looks just like
	 * a deleted one.  A focused cycle has the last one's managed jobs:
	 * with no deployment written since, the last one superseded all.
	 */
	if (!dc->dc_incomplete && !(dc->dc_focus && unmoved))
		decide_supersede(dc);
	decide_requests_next();
	engine_env->e_decide_gen = store_decide_gen(engine_store());
	detect_orphans(dc);
}

