/*
 * Apply: carry each active deployment through its steps, every
 * engine-interval and as soon as a step ends.
 *
 *	pending_approval -> pre_hooks -> registering -> waiting_health
 *	    (awaiting_promotion while canaries wait) -> post_hooks -> completed
 *	or failed, rejected, superseded.
 *
 * Every step is saved before nops calls Nomad, so that after a crash the
 * first cycle (recovery) runs the same step again: a register plans again
 * and registers only if the live job is still the one detection saw; a
 * hook dispatch whose fate is unknown is looked for by its idempotency
 * token and fails, rather than run twice, if no run is found.
 * nops never rolls back and never stops the job it deploys.
 */
#include "config.h"

#include <sys/types.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "text.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "nomad.h"
#include "redact.h"
#include "deploy.h"
#include "store_deploy.h"
#include "engine.h"
#include "engine_apply.h"
#include "leftbehind.h"
#include "notify.h"
#include "suspend.h"
#include "xmalloc.h"

#define APPLY_BUSY_MAX	1024

/* Deployments with a Nomad call in flight: one step at a time each. */
static int64_t	 apply_busy_ids[APPLY_BUSY_MAX];
static size_t	 apply_nbusy;


static void	 apply_step(struct deploy *);
static size_t	 apply_npromotes;

int
apply_busy(int64_t id)
{
	size_t	 i;

	for (i = 0; i < apply_nbusy; i++)
		if (apply_busy_ids[i] == id)
			return 1;
	return 0;
}

int
apply_claim(int64_t id)
{
	if (apply_busy(id) || apply_nbusy >= APPLY_BUSY_MAX)
		return -1;
	apply_busy_ids[apply_nbusy++] = id;
	return 0;
}

void
apply_release(int64_t id)
{
	size_t	 i;

	for (i = 0; i < apply_nbusy; i++)
		if (apply_busy_ids[i] == id) {
			apply_busy_ids[i] = apply_busy_ids[--apply_nbusy];
			return;
		}
}

/*
 * Alike on purpose: op_recover_one (operation.c) allocates and fills a
 * struct oprun the same way; other fields from another source, so a
 * helper would only move the assignments.
 */
struct astep *
apply_step_new(const struct deploy *d)
{
	struct astep	*as;

	if ((as = calloc(1, sizeof(*as))) == NULL)
		fatal("calloc");
	as->as_id = d->d_id;
	as->as_ns = xstrdup(d->d_ns);
	as->as_job = xstrdup(d->d_job);
	as->as_commit = xstrdup(d->d_commit);
	as->as_cas = d->d_cas_index;
	as->as_version = d->d_job_version;
	as->as_nomad_deployment = xstrdup(d->d_nomad_deployment);
	return as;
}

/* End a step: free its context, let the deployment move again. */
/*
 * Alike on purpose: each_free (hosts_each.c) frees a struct each_run's
 * members the same way; the members differ.
 */
void
apply_step_done(struct astep *as)
{
	apply_release(as->as_id);
	if (apply_npromotes > 0)
		engine_apply_kick();	/* a promotion waited for this */
	free(as->as_ns);
	free(as->as_job);
	if (as->as_spec != NULL)
		freezero(as->as_spec, strlen(as->as_spec));
	free(as->as_diff);
	free(as->as_token);
	free(as->as_phase);
	free(as->as_revision);
	free(as->as_child);
	free(as->as_hook);
	free(as->as_commit);
	free(as->as_nomad_deployment);
	json_decref(as->as_meta);
	json_decref(as->as_dep);
	json_decref(as->as_allocs);
	if (as->as_timer != NULL)
		event_free(as->as_timer);
	free(as);
}

/*
 * A write of the apply failed and was rolled back: the deployment is as
 * it was before the step, as after a crash there, and the next apply
 * tick takes the step again.  Say so; never silently.
 */
void
apply_unsaved(int64_t id, const char *what)
{
	log_warnx("deployment %lld: %s not saved, the step is retried: %s",
	    (long long)id, what, store_error(engine_store()));
	store_rollback(engine_store());
}

/* Move a deployment, in its own transaction; 1 moved, 0 not, -1 error. */
int
apply_move(int64_t id, enum deploy_state from, enum deploy_state to,
    const char *action, const char *reason)
{
	int	 rc;

	rc = deploy_move(engine_store(), id, from, to, action, reason);
	if (rc == 1) {
		engine_apply_kick();
		if (deploy_state_terminal(to))
			engine_detect("a deployment ended");
		notify_deployment(id, to);
	}
	return rc;
}

void
apply_fail(int64_t id, enum deploy_state from, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	apply_vfail(id, from, fmt, ap);
	va_end(ap);
}

void
apply_vfail(int64_t id, enum deploy_state from, const char *fmt, va_list ap)
{
	char	 reason[1024];

	/* Nomad's words in it are text already; cut on a character. */
	text_vprintf(reason, sizeof(reason), 0, fmt, ap);
	log_warnx("deployment %lld failed: %s", (long long)id, reason);
	apply_move(id, from, DS_FAILED, "fail", reason);
}

/* Is this a failure worth trying again next cycle (no answer, 5xx)? */
int
apply_transient(const struct nomad_result *res)
{
	return res->nr_status == 0 || res->nr_status >= 500;
}

const char *
apply_err(const struct nomad_result *res)
{
	return res->nr_error != NULL ? res->nr_error : "no answer";
}

/* ---- register ---- */

static void	 register_plan(struct astep *, json_t *spec, int recheck);

static void
register_versioned(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	struct store	*s = engine_store();
	json_t		*v;
	int64_t		 version = -1;

	if (nomad_ok(res) && (v = json_object_get(res->nr_json, "Version")) !=
	    NULL && json_is_integer(v))
		version = json_integer_value(v);
	if (version == -1) {
		/* Try again next cycle; registering is saved. */
		apply_step_done(as);
		return;
	}
	if (store_begin(s) == -1 ||
	    store_deploy_set_register(s, as->as_id, as->as_child != NULL ?
	    as->as_child : "", version) == -1 ||
	    deploy_transition(s, as->as_id, DS_REGISTERING,
	    DS_WAITING_HEALTH, "system", "registered", NULL) == -1 ||
	    store_commit(s) == -1)
		apply_unsaved(as->as_id, "the registration");
	else {
			engine_apply_kick();
		log_info("deployment %lld: registered %s/%s version %lld",
		    (long long)as->as_id, as->as_ns, as->as_job,
		    (long long)version);
	}
	apply_step_done(as);
}

static void
register_done(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	uint64_t	 sent, stored;
	const char	*eval;

	if (!nomad_ok(res)) {
		switch (nomad_cas_error(res, &sent, &stored)) {
		case NOMAD_CAS_CONFLICT:
		case NOMAD_CAS_EXISTS:
		case NOMAD_CAS_MISSING:
			apply_fail(as->as_id, DS_REGISTERING, "the job changed "
			    "in Nomad between detection and register; nothing "
			    "was registered (Nomad: %s)", apply_err(res));
			apply_step_done(as);
			return;
		}
		if (apply_transient(res))
			log_warnx("deployment %lld: register: %s; the next "
			    "cycle plans again", (long long)as->as_id,
			    apply_err(res));
		else
			apply_fail(as->as_id, DS_REGISTERING, "register: %s",
			    apply_err(res));
		apply_step_done(as);
		return;
	}
	engine_crashpoint("registered");
	/* A write of the job: a suspend's stop left behind is moot. */
	leftbehind_clear(LB_SUSPEND, as->as_ns, as->as_job);
	eval = json_string_value(json_object_get(res->nr_json, "EvalID"));
	as->as_child = xstrdup(eval != NULL ? eval : "");
	nomad_job_read(as->as_ns, as->as_job, register_versioned, as);
}

static void
register_live(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	json_t		*spec, *fresh;

	if (!nomad_ok(res) && res->nr_status != 404) {
		apply_step_done(as);
		return;
	}
	spec = json_loads(as->as_spec, 0, NULL);
	fresh = detect_register_spec(spec, res->nr_status == 404 ? NULL :
	    res->nr_json);
	json_decref(spec);
	register_plan(as, fresh, 1);
	json_decref(fresh);
}

/*
 * A diff as the register compares it: without each group's planned update
 * counts ("Updates": ignore, place, ...), which follow the live counts an
 * autoscaler moves, not the change that was approved.
 */
static char *
register_comparable(json_t *diff)
{
	json_t	*tg;
	size_t	 i;

	json_array_foreach(json_object_get(diff, "TaskGroups"), i, tg)
		json_object_del(tg, "Updates");
	return engine_json_canonical(diff);
}

static void
register_planned(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	json_t		*diff, *red, *spec, *approved;
	const char	*type;
	char		*dump, *adump;
	uint64_t	 index;
	int		 same;

	if (!nomad_ok(res) || !json_is_object(res->nr_json)) {
		if (apply_transient(res))
			log_warnx("deployment %lld: plan before register: %s",
			    (long long)as->as_id, apply_err(res));
		else
			apply_fail(as->as_id, DS_REGISTERING, "plan before "
			    "register: %s", apply_err(res));
		apply_step_done(as);
		return;
	}
	diff = json_object_get(res->nr_json, "Diff");
	type = json_string_value(json_object_get(diff, "Type"));
	index = (uint64_t)json_integer_value(json_object_get(res->nr_json,
	    "JobModifyIndex"));

	if (type != NULL && (strcmp(type, "None") == 0 ||
	    !detect_diff_changed(diff))) {
		/*
		 * The live job is already what we register: our own register
		 * before a restart (or the same change made by hand).
		 */
		log_info("deployment %lld: the live job already matches; "
		    "treating it as registered", (long long)as->as_id);
		nomad_job_read(as->as_ns, as->as_job, register_versioned, as);
		return;
	}
	if ((as->as_cas == -1 && index == 0) ||
	    (as->as_cas >= 0 && (uint64_t)as->as_cas == index)) {
		spec = json_loads(as->as_spec, 0, NULL);
		nomad_register(as->as_ns, as->as_job, spec, 1,
		    as->as_cas == -1 ? 0 : (uint64_t)as->as_cas,
		    register_done, as);
		json_decref(spec);
		return;
	}
	if (!as->as_rechecked) {
		/*
		 * The job moved since detection.  If only an autoscaler's
		 * count moved, the diff with the live counts is the one that
		 * was approved: read the live job and plan once more.
		 */
		as->as_rechecked = 1;
		as->as_index = index;
		nomad_job_read(as->as_ns, as->as_job, register_live, as);
		return;
	}
	red = json_deep_copy(diff);
	redact_diff(red);
	dump = register_comparable(red);
	json_decref(red);
	approved = as->as_diff != NULL ? json_loads(as->as_diff, 0, NULL) :
	    NULL;
	adump = approved != NULL ? register_comparable(approved) : NULL;
	json_decref(approved);
	same = adump != NULL && strcmp(dump, adump) == 0;
	free(dump);
	free(adump);
	if (!same) {
		apply_fail(as->as_id, DS_REGISTERING, "the job changed in "
		    "Nomad since detection (its modify index moved from %lld "
		    "to %" PRIu64 ") and the plan no longer shows the "
		    "difference that was approved; nothing was registered",
		    (long long)as->as_cas, index);
		apply_step_done(as);
		return;
	}
	log_info("deployment %lld: only counts kept for an autoscaler moved; "
	    "registering at index %" PRIu64, (long long)as->as_id, index);
	as->as_cas = (int64_t)index;
	/* register_plan() kept the spec it planned, with the live counts. */
	spec = json_loads(as->as_spec, 0, NULL);
	nomad_register(as->as_ns, as->as_job, spec, 1, index, register_done,
	    as);
	json_decref(spec);
}

static void
register_plan(struct astep *as, json_t *spec, int recheck)
{
	if (recheck) {
		/* What is planned now is what will be registered. */
		char *s = engine_json_canonical(spec);

		freezero(as->as_spec, strlen(as->as_spec));
		as->as_spec = s;
	}
	nomad_plan(as->as_ns, as->as_job, spec, register_planned, as);
}

static void
apply_register(struct deploy *d)
{
	struct astep	*as;
	json_t		*spec;

	if (d->d_timeout_at > 0 && time(NULL) > d->d_timeout_at) {
		apply_fail(d->d_id, DS_REGISTERING, "not registered within "
		    "apply-timeout");
		return;
	}
	if ((spec = json_loads(d->d_spec, 0, NULL)) == NULL) {
		apply_fail(d->d_id, DS_REGISTERING, "the stored spec does not "
		    "parse");
		return;
	}
	if (d->d_timeout_at == 0) {
		struct store	*s = engine_store();
		int64_t		 now = time(NULL);

		/*
		 * Registering straight from detection: the timeout starts,
		 * and nothing is registered until it is saved.
		 */
		if (store_begin(s) == -1 || store_deploy_set_apply(s,
		    d->d_id, now, now + engine_conf()->apply_timeout) == -1 ||
		    store_commit(s) == -1) {
			apply_unsaved(d->d_id, "the apply timeout");
			json_decref(spec);
			return;
		}
	}
	if (apply_claim(d->d_id) == -1) {
		json_decref(spec);
		return;
	}
	engine_crashpoint("registering");
	as = apply_step_new(d);
	/* Made before a suspend: it carries the suspend all the same. */
	if (!json_is_true(json_object_get(spec, "Stop")) &&
	    suspend_carry(d->d_ns, d->d_job, spec) == 1)
		as->as_spec = engine_json_canonical(spec);
	else
		as->as_spec = xstrdup(d->d_spec);
	as->as_diff = xstrdup(d->d_diff);
	register_plan(as, spec, 0);
	json_decref(spec);
}

/* ---- promotion (waiting for health: engine_health.c) ---- */

static void
promote_done(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	struct store	*s = engine_store();
	char		 target[64];

	snprintf(target, sizeof(target), "deployment/%lld",
	    (long long)as->as_id);
	if (store_begin(s) == -1 || store_event(s, as->as_hook,
	    nomad_ok(res) ? "deployment.promote" : "deployment.promote_failed",
	    target, nomad_ok(res) ? NULL : apply_err(res)) == -1 ||
	    store_commit(s) == -1)
		apply_unsaved(as->as_id, "the promotion's audit event");
	apply_step_done(as);
}

/* Promotions asked for while the deployment had a step in flight. */
struct apromote {
	int64_t		 ap_id;
	char		*ap_who;
};
static struct apromote	*apply_promotes;

static void
promote_start(const struct deploy *d, const char *who)
{
	struct astep	*as;

	as = apply_step_new(d);
	as->as_hook = xstrdup(who);
	nomad_deployment_promote(d->d_ns, d->d_nomad_deployment, NULL,
	    promote_done, as);
}

/*
 * Promote the canaries of a deployment that waits for it.  Answers 0 (the
 * promotion is sent now, or as soon as the step in flight ends), or an
 * HTTP status with err: 404, 409 when no canaries wait, 500.
 */
int
apply_promote(int64_t id, const char *who, char *err, size_t errlen)
{
	struct deploy	 d;
	int		 rc;

	if ((rc = store_deploy_load(engine_store(), id, &d)) != 0) {
		if (rc == 1)
			snprintf(err, errlen, "no deployment %lld",
			    (long long)id);
		else
			snprintf(err, errlen, "deployment %lld: %s",
			    (long long)id, store_error(engine_store()));
		return rc == 1 ? 404 : 500;
	}
	if ((d.d_state != DS_AWAITING_PROMOTION &&
	    d.d_state != DS_WAITING_HEALTH) || d.d_nomad_deployment == NULL) {
		snprintf(err, errlen, "deployment %lld is %s: no canaries wait "
		    "for promotion", (long long)id,
		    deploy_state_str(d.d_state));
		deploy_free(&d);
		return 409;
	}
	if (apply_claim(id) == -1) {
		/* A poll is in flight: promote right after it. */
		apply_promotes = reallocarray(apply_promotes,
		    apply_npromotes + 1, sizeof(*apply_promotes));
		if (apply_promotes == NULL)
			fatal("reallocarray");
		apply_promotes[apply_npromotes].ap_id = id;
		apply_promotes[apply_npromotes++].ap_who = xstrdup(who);
		deploy_free(&d);
		return 0;
	}
	promote_start(&d, who);
	deploy_free(&d);
	return 0;
}

/* Send the promotions that waited for a step to end. */
static void
apply_promotes_run(void)
{
	struct deploy	 d;
	size_t		 i = 0;

	while (i < apply_npromotes) {
		struct apromote *ap = &apply_promotes[i];

		if (apply_busy(ap->ap_id)) {
			i++;
			continue;
		}
		if (store_deploy_load(engine_store(), ap->ap_id, &d) == 0) {
			if ((d.d_state == DS_AWAITING_PROMOTION ||
			    d.d_state == DS_WAITING_HEALTH) &&
			    d.d_nomad_deployment != NULL &&
			    apply_claim(ap->ap_id) == 0)
				promote_start(&d, ap->ap_who);
			deploy_free(&d);
		}
		free(ap->ap_who);
		apply_promotes[i] = apply_promotes[--apply_npromotes];
	}
}

static void
apply_step(struct deploy *d)
{
	switch (d->d_state) {
	case DS_PRE_HOOKS:
		hooks_apply(d, "pre");
		break;
	case DS_REGISTERING:
		apply_register(d);
		break;
	case DS_WAITING_HEALTH:
		health_apply(d);
		break;
	case DS_AWAITING_PROMOTION:
		health_promotion(d);
		break;
	case DS_POST_HOOKS:
		hooks_apply(d, "post");
		break;
	default:
		/* pending_approval waits for a person; terminal: nothing. */
		break;
	}
}

void
apply_cycle(void)
{
	struct store	*s = engine_store();
	struct deploy	 d;
	int64_t		*ids;
	size_t		 n, i;

	if (s == NULL)
		return;
	apply_promotes_run();
	if (store_deploy_active_ids(s, &ids, &n) == -1)
		return;
	if (!engine_env->e_recovered) {
		engine_env->e_recovered = 1;
		if (n > 0)
			log_info("recovery: resuming %zu unfinished "
			    "deployment(s)", n);
	}
	for (i = 0; i < n; i++) {
		if (apply_busy(ids[i]))
			continue;
		if (store_deploy_load(s, ids[i], &d) != 0)
			continue;
		apply_step(&d);
		deploy_free(&d);
	}
	free(ids);
	engine_env->e_last_apply = time(NULL);
}
