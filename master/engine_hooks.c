/*
 * Hook runs: each hook of a phase, in order, registered as its revision
 * <hook>-<8 hex of its spec hash> and dispatched with the idempotency
 * token <deployment>:<phase>:<position>.  A run is saved as pending before
 * the dispatch.  A dispatch without an answer (no answer, a 5xx) is sent
 * again with the same token, a few times with backoff: Nomad answers a
 * repeated token with the run it already made, so this never runs a hook
 * twice.  A run still pending later (after a restart, or after those
 * attempts) is looked for by its token; when Nomad has none it is
 * dispatched again with the token while Nomad would still know a run made
 * with it, and fails only after that, when the run cannot be known.
 */
#include "config.h"

#include <sys/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "nomad.h"
#include "deploy.h"
#include "store_deploy.h"
#include "engine.h"
#include "engine_apply.h"
#include "redact.h"
#include "webpub.h"
#include "jsonb.h"
#include "leftbehind.h"

/* Repeats of a dispatch without an answer, 1 2 4 8 s apart. */
#define HOOK_DISPATCH_ATTEMPTS	5
/*
 * How long a run may stay pending and still be dispatched again with its
 * token: well inside the time Nomad keeps a finished dispatched job
 * (job_gc_threshold, 4h by default), so that a run it made is found.
 */
#define HOOK_PENDING_REDISPATCH	3600

static void	 hook_dispatch(struct astep *);
static void	 hook_dispatch_again(int, short, void *);
static int	 hook_dispatch_unknown(const struct nomad_result *);
static void	 hook_fail(struct astep *, int, const char *, const char *, ...)
		    __attribute__((__format__(printf, 4, 5)));

/* The state a deployment is in while the hooks of phase run. */
static enum deploy_state
hook_state(const char *phase)
{
	return strcmp(phase, "pre") == 0 ? DS_PRE_HOOKS : DS_POST_HOOKS;
}

static void
hook_run_update(const char *token, const char *state, const char *child,
    int exit_code, const char *error)
{
	struct store	*s = engine_store();

	if (store_begin(s) == -1 || store_deploy_hookrun_update(s, token, state,
	    child, exit_code, error) == -1 || store_commit(s) == -1) {
		log_warnx("hook run %s: %s not saved, polled again: %s", token,
		    state, store_error(s));
		store_rollback(s);
	}
}

/*
 * A hook's run failed (its exit code or -1, and why, kept with the run),
 * and so does the deployment, for the reason fmt says.
 */
static void
hook_fail(struct astep *as, int code, const char *why, const char *fmt, ...)
{
	va_list	 ap;

	hook_run_update(as->as_token, "failed", NULL, code, why);
	va_start(ap, fmt);
	apply_vfail(as->as_id, hook_state(as->as_phase), fmt, ap);
	va_end(ap);
}

/* Nomad refused a hook's call for good: the run and the deployment fail. */
static void
hook_nomad_failed(struct astep *as, const char *what, const char *name,
    struct nomad_result *res)
{
	hook_fail(as, -1, apply_err(res), "%s %s: %s", what, name,
	    apply_err(res));
	apply_step_done(as);
}

static void
hook_registered(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;

	if (!nomad_ok(res)) {
		if (apply_transient(res)) {
			/* Nothing dispatched yet: the run starts over. */
			log_warnx("deployment %lld: registering hook revision "
			    "%s: %s; trying again", (long long)as->as_id,
			    as->as_revision, apply_err(res));
			hook_run_update(as->as_token, "failed", NULL, -1,
			    "revision register failed; retried");
			apply_step_done(as);
			return;
		}
		hook_nomad_failed(as, "registering hook revision",
		    as->as_revision, res);
		return;
	}
	/* A write of the revision: a record of it left behind goes. */
	hooks_left_behind_clear(as->as_ns, as->as_revision);
	hook_dispatch(as);
}

static void
hook_dispatched(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	const char	*child;

	child = nomad_ok(res) ? json_string_value(json_object_get(res->nr_json,
	    "DispatchedJobID")) : NULL;
	if (child != NULL)
		engine_crashpoint(strcmp(as->as_phase, "pre") == 0 ?
		    "pre-hook-dispatched" : "post-hook-dispatched");
	if (child == NULL) {
		if (hook_dispatch_unknown(res) && ++as->as_attempts <
		    HOOK_DISPATCH_ATTEMPTS) {
			struct timeval	 tv = { 1 << (as->as_attempts - 1), 0 };

			log_warnx("deployment %lld: dispatch of %s (token %s): "
			    "%s; sending it again with the same token in "
			    "%llds", (long long)as->as_id, as->as_revision,
			    as->as_token, apply_err(res),
			    (long long)tv.tv_sec);
			if (as->as_timer == NULL && (as->as_timer = evtimer_new(
			    nopsd_env->n_base, hook_dispatch_again, as)) ==
			    NULL)
				fatal("evtimer_new");
			evtimer_add(as->as_timer, &tv);
			return;
		}
		if (hook_dispatch_unknown(res)) {
			/*
			 * The dispatch may have happened: leave the run
			 * pending; the next cycle looks for it by token.
			 */
			log_warnx("deployment %lld: dispatch of %s (token %s): "
			    "%s after %d attempts; the next cycle looks for "
			    "its run", (long long)as->as_id, as->as_revision,
			    as->as_token, apply_err(res), as->as_attempts);
			apply_step_done(as);
			return;
		}
		hook_nomad_failed(as, "dispatching hook", as->as_hook, res);
		return;
	}
	hook_run_update(as->as_token, "dispatched", child, -1, NULL);
	engine_apply_kick();
	log_info("deployment %lld: %s hook %s dispatched as %s",
	    (long long)as->as_id, as->as_phase, as->as_hook, child);
	apply_step_done(as);
}

/*
 * Dispatch meta: only the keys the hook declares (Nomad refuses others),
 * from the deployment's facts.
 */
static json_t *
hook_meta(const json_t *hookspec, const struct astep *as)
{
	char		 id[32];
	const char	*kv[] = { "nops_deployment", id, "nops_job", as->as_job,
	    "nops_namespace", as->as_ns, "nops_commit", as->as_commit,
	    "nops_phase", as->as_phase, NULL };

	snprintf(id, sizeof(id), "%lld", (long long)as->as_id);
	return nomad_dispatch_meta(hookspec, kv);
}

/*
 * Could the dispatch have made a run?  Not when Nomad answered with one
 * of its refusals (a 500 with a known text, NOMAD-API.md 6.1) or a 4xx;
 * yes when there was no answer or another 5xx (no leader, a proxy).
 */
static int
hook_dispatch_unknown(const struct nomad_result *res)
{
	static const char *const refusals[] = {
		"parameterized job not found", "Specified job",
		"Payload ", "Dispatch request included", "Dispatch did not "
		"provide", "dispatch job priority", "Permission denied",
		"job not found",
	};
	size_t	 i;

	if (!apply_transient(res))
		return 0;
	if (res->nr_status == 500 && res->nr_error != NULL)
		for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
			if (strncmp(res->nr_error, refusals[i],
			    strlen(refusals[i])) == 0)
				return 0;
	return 1;
}

static void
hook_dispatch_again(int fd, short what, void *arg)
{
	hook_dispatch(arg);
}

static void
hook_dispatch(struct astep *as)
{
	nomad_job_dispatch(as->as_ns, as->as_revision, NULL, 0, as->as_meta,
	    as->as_token, hook_dispatched, as);
}

/* A new run: save it as pending, register the revision, dispatch. */
static void
hook_start(struct astep *as, const struct deploy_hook *h)
{
	struct store	*s = engine_store();
	json_t		*spec;
	int64_t		 id = as->as_id;

	if (store_begin(s) == -1 || store_deploy_hookrun_create(s, id,
	    h->dh_phase, h->dh_position, as->as_token) == -1 ||
	    store_commit(s) == -1) {
		store_rollback(s);
		apply_step_done(as);
		return;
	}
	engine_crashpoint(strcmp(h->dh_phase, "pre") == 0 ?
	    "pre-hook-pending" : "post-hook-pending");
	spec = json_loads(h->dh_spec, 0, NULL);
	if (spec == NULL) {
		apply_fail(id, hook_state(h->dh_phase), "hook %s: its frozen "
		    "spec does not parse", h->dh_hook_id);
		apply_step_done(as);
		return;
	}
	as->as_meta = hook_meta(spec, as);
	json_object_set_new(spec, "ID", jsonb_str(h->dh_revision));
	json_object_set_new(spec, "Name", jsonb_str(h->dh_revision));
	log_info("deployment %lld: running %s hook %s (revision %s)",
	    (long long)id, h->dh_phase, h->dh_hook_id, h->dh_revision);
	nomad_register(as->as_ns, h->dh_revision, spec, 0, 0, hook_registered,
	    as);
	json_decref(spec);
}

/*
 * After a restart, looking for a pending run's child.  A list stub has no
 * idempotency token (Nomad's JobListStub): each child of the revision is
 * read in full, newest first, until one carries ours.
 */
struct hook_search {
	struct astep	*hs_as;
	json_t		*hs_ids;	/* children of the revision */
	size_t		 hs_left;	/* not read yet: hs_ids[0 .. left) */
};

static void	 hook_search_next(struct hook_search *);

/* A read in the search for a run failed: if for good, the deployment fails. */
static void
hook_search_failed(struct astep *as, const struct nomad_result *res)
{
	if (!apply_transient(res))
		apply_fail(as->as_id, hook_state(as->as_phase), "looking for "
		    "hook %s's run: %s", as->as_hook, apply_err(res));
}

static void
hook_search_end(struct hook_search *hs)
{
	json_decref(hs->hs_ids);
	apply_step_done(hs->hs_as);
	free(hs);
}

static void
hook_child_read(struct nomad_result *res, void *arg)
{
	struct hook_search *hs = arg;
	struct astep	*as = hs->hs_as;
	const char	*id;

	/* A child gone meanwhile (garbage collected) is not ours to know. */
	if (!nomad_ok(res) && res->nr_status != 404) {
		hook_search_failed(as, res);
		hook_search_end(hs);
		return;
	}
	if ((id = nomad_child_of(res, as->as_token)) != NULL) {
		log_info("deployment %lld: found the run of %s hook %s after a "
		    "restart: %s", (long long)as->as_id, as->as_phase,
		    as->as_hook, id);
		hook_run_update(as->as_token, "dispatched", id, -1, NULL);
		hook_search_end(hs);
		return;
	}
	hook_search_next(hs);
}

static void
hook_search_next(struct hook_search *hs)
{
	struct astep	*as = hs->hs_as;

	if (hs->hs_left > 0) {
		hs->hs_left--;
		nomad_job_read(as->as_ns, json_string_value(json_array_get(
		    hs->hs_ids, hs->hs_left)), hook_child_read, hs);
		return;
	}
	if (as->as_meta != NULL &&
	    time(NULL) - as->as_started < HOOK_PENDING_REDISPATCH) {
		/*
		 * Nomad has no run with the token: the dispatch never got
		 * there.  Send it again with the token; a run made meanwhile
		 * would be the answer.
		 */
		json_t	*spec;

		log_info("deployment %lld: no run of %s hook %s with token %s "
		    "yet; dispatching it with that token", (long long)as->as_id,
		    as->as_phase, as->as_hook, as->as_token);
		json_decref(hs->hs_ids);
		free(hs);
		/* The revision first: the crash may have come before it. */
		spec = json_loads(as->as_spec, 0, NULL);
		json_object_set_new(spec, "ID", jsonb_str(as->as_revision));
		json_object_set_new(spec, "Name", jsonb_str(as->as_revision));
		nomad_register(as->as_ns, as->as_revision, spec, 0, 0,
		    hook_registered, as);
		json_decref(spec);
		return;
	}
	hook_fail(as, -1, "dispatch fate unknown, no run found", "%s hook %s: "
	    "the dispatch's fate is unknown: it has been pending for %lld s "
	    "and Nomad has no run with its token (a run may have ended and "
	    "been garbage collected); nops does not dispatch again rather "
	    "than risk running it twice",
	    as->as_phase, as->as_hook, (long long)(time(NULL) -
	    as->as_started));
	hook_search_end(hs);
}

static void
hook_found(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	struct hook_search *hs;
	json_t		*j;
	const char	*parent, *id;
	size_t		 i;

	if (!nomad_ok(res)) {
		hook_search_failed(as, res);
		apply_step_done(as);
		return;
	}
	if ((hs = calloc(1, sizeof(*hs))) == NULL)
		fatal("calloc");
	hs->hs_as = as;
	hs->hs_ids = json_array();
	json_array_foreach(res->nr_json, i, j) {
		parent = json_string_value(json_object_get(j, "ParentID"));
		id = json_string_value(json_object_get(j, "ID"));
		if (parent != NULL && id != NULL &&
		    strcmp(parent, as->as_revision) == 0)
			json_array_append_new(hs->hs_ids, jsonb_str(id));
	}
	hs->hs_left = json_array_size(hs->hs_ids);
	hook_search_next(hs);
}

/*
 * Hook output: the last 64 KiB of a finished run's stdout and stderr,
 * from Nomad's logs, redacted like a diff, kept with the run in the store.
 */
#define HOOK_OUTPUT_MAX		(64 * 1024)

struct hook_logs {
	char	*hl_token;
	char	*hl_ns;
	char	*hl_alloc;
	char	*hl_task;
	char	*hl_stdout;
};

static void
hook_output_keep(const char *token, char *text)
{
	struct store	*s = engine_store();

	if (store_begin(s) == 0) {
		if (store_deploy_hookrun_set_output(s, token, text) == -1 ||
		    store_commit(s) == -1) {
			store_rollback(s);
			log_warnx("hook run %s: cannot keep its output: %s",
			    token, store_error(s));
		}
	}
	free(text);
	webpub_changed();
}

/* One stream of an allocation's task log, its last HOOK_OUTPUT_MAX bytes. */
static void
hook_logs_read(struct hook_logs *hl, int use_stderr, nomad_cb cb)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = hl->hl_ns;
	a.na_id = hl->hl_alloc;
	a.na_task = hl->hl_task;
	a.na_tail = HOOK_OUTPUT_MAX;
	a.na_flags = use_stderr ? NOMAD_F_STDERR : 0;
	nomad_call(NOMAD_OP_ALLOC_LOGS, &a, cb, hl);
}

/*
 * Alike on purpose: repo_free (repo.c), nixrun_free (nixrun.c) and
 * nomad_call_free (nomad.c) free their own structs' members the same way.
 */
static void
hook_logs_free(struct hook_logs *hl)
{
	free(hl->hl_token);
	free(hl->hl_ns);
	free(hl->hl_alloc);
	free(hl->hl_task);
	free(hl->hl_stdout);
	free(hl);
}

static void
hook_logs_stderr(struct nomad_result *res, void *arg)
{
	struct hook_logs *hl = arg;
	const char	*err = nomad_ok(res) && res->nr_body != NULL ?
			    res->nr_body : "";
	size_t		 elen = nomad_ok(res) ? res->nr_bodylen : 0;
	char		*all, *red;
	size_t		 olen = strlen(hl->hl_stdout), n;

	/* stdout, then stderr; the last 64 KiB of the two. */
	all = xasprintf("%s%s%.*s", hl->hl_stdout, elen > 0 ?
	    (olen > 0 && hl->hl_stdout[olen - 1] != '\n' ? "\n--- stderr "
	    "---\n" : "--- stderr ---\n") : "", (int)elen, err);
	n = strlen(all);
	red = redact_text(n > HOOK_OUTPUT_MAX ? all + n - HOOK_OUTPUT_MAX :
	    all, n > HOOK_OUTPUT_MAX ? HOOK_OUTPUT_MAX : n);
	free(all);
	if (red != NULL)
		hook_output_keep(hl->hl_token, red);
	hook_logs_free(hl);
}

static void
hook_logs_stdout(struct nomad_result *res, void *arg)
{
	struct hook_logs *hl = arg;

	if (nomad_ok(res) && res->nr_body != NULL) {
		if ((hl->hl_stdout = strndup(res->nr_body,
		    res->nr_bodylen)) == NULL)
			fatal("strndup");
	} else
		hl->hl_stdout = xstrdup("");
	hook_logs_read(hl, 1, hook_logs_stderr);
}

/* A run ended: read its allocation's logs (the first task's). */
static void
hook_logs_fetch(const struct astep *as, const json_t *alloc)
{
	struct hook_logs *hl;
	const char	*id, *task = NULL;
	json_t		*v;

	id = json_string_value(json_object_get(alloc, "ID"));
	json_object_foreach(json_object_get(alloc, "TaskStates"), task, v)
		break;
	if (id == NULL || task == NULL)
		return;
	if ((hl = calloc(1, sizeof(*hl))) == NULL)
		fatal("calloc");
	hl->hl_token = xstrdup(as->as_token);
	hl->hl_ns = xstrdup(as->as_ns);
	hl->hl_alloc = xstrdup(id);
	hl->hl_task = xstrdup(task);
	hook_logs_read(hl, 0, hook_logs_stdout);
}

static void
hook_stopped(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;

	if (!nomad_ok(res))
		log_warnx("deployment %lld: stopping timed-out hook run %s: %s",
		    (long long)as->as_id, as->as_child, apply_err(res));
	apply_step_done(as);
}

/* The exit code of a dead allocation's task: its last Terminated event. */
int
hooks_exit_code(const json_t *alloc)
{
	json_t		*states, *ts, *ev;
	const char	*k, *type;
	size_t		 i;
	int		 code = -1;

	states = json_object_get(alloc, "TaskStates");
	json_object_foreach(states, k, ts) {
		json_array_foreach(json_object_get(ts, "Events"), i, ev) {
			type = json_string_value(json_object_get(ev, "Type"));
			if (type != NULL && strcmp(type, "Terminated") == 0)
				code = (int)json_integer_value(
				    json_object_get(ev, "ExitCode"));
		}
	}
	return code;
}

static void
hook_polled(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	json_t		*a;
	const char	*cs;
	size_t		 i;
	int		 running = 0, failed = 0, complete = 0, code = -1;

	if (!nomad_ok(res)) {
		if (!apply_transient(res) && res->nr_status != 404)
			log_warnx("deployment %lld: reading hook run %s: %s",
			    (long long)as->as_id, as->as_child, apply_err(res));
		apply_step_done(as);
		return;
	}
	json_array_foreach(res->nr_json, i, a) {
		cs = json_string_value(json_object_get(a, "ClientStatus"));
		if (cs == NULL)
			continue;
		if (strcmp(cs, "complete") == 0)
			complete++;
		else if (strcmp(cs, "failed") == 0 || strcmp(cs, "lost") == 0) {
			failed++;
			code = hooks_exit_code(a);
		} else
			running++;
	}
	if (running == 0 && (failed > 0 || complete > 0))
		hook_logs_fetch(as, json_array_get(res->nr_json,
		    json_array_size(res->nr_json) - 1));
	if (failed > 0 && running == 0) {
		char	 why[256];

		snprintf(why, sizeof(why), "exit code %d", code);
		hook_fail(as, code, why, "%s hook %s failed (%s)",
		    as->as_phase, as->as_hook, why);
	} else if (complete > 0 && running == 0 && failed == 0) {
		hook_run_update(as->as_token, "succeeded", NULL, 0, NULL);
		engine_apply_kick();
		log_info("deployment %lld: %s hook %s succeeded",
		    (long long)as->as_id, as->as_phase, as->as_hook);
	} else if (running > 0)
		hook_run_update(as->as_token, "running", NULL, -1, NULL);
	apply_step_done(as);
}

/*
 * Carry on with hook h's run (hr; rc 1: none yet) in step as: start it,
 * find it again by its token, or poll it within its timeout.
 */
static void
hooks_resume(struct deploy *d, struct deploy_hook *h, struct astep *as,
    struct hook_run *hr, int rc)
{
	struct store	*s = engine_store();
	char		 prefix[320];

	if (rc == 1 || (strcmp(hr->hr_state, "failed") == 0 &&
	    hr->hr_child == NULL)) {
		/*
		 * No run yet (or the revision register failed before
		 * any dispatch): start it.  A failed pre-dispatch run
		 * is cleared first, its token reused.
		 */
		if (rc == 0) {
			deploy_hookrun_free(hr);
			if (store_begin(s) == -1 ||
			    store_deploy_hookrun_clear(s, as->as_token) == -1 ||
			    store_commit(s) == -1) {
				/* The apply tick tries again. */
				log_warnx("deployment %lld: cannot clear "
				    "hook run %s: %s",
				    (long long)d->d_id, as->as_token,
				    store_error(s));
				store_rollback(s);
				apply_step_done(as);
				return;
			}
		}
		hook_start(as, h);
		return;
	}
	if (strcmp(hr->hr_state, "pending") == 0) {
		json_t	*spec;

		/* Fate unknown: look for a child with our token. */
		as->as_started = hr->hr_started_at;
		deploy_hookrun_free(hr);
		if ((spec = json_loads(h->dh_spec, 0, NULL)) != NULL) {
			as->as_meta = hook_meta(spec, as);
			as->as_spec = xstrdup(h->dh_spec);
			json_decref(spec);
		}
		snprintf(prefix, sizeof(prefix), "%s/dispatch-",
		    h->dh_revision);
		nomad_jobs_list(d->d_ns, prefix, hook_found, as);
		return;
	}
	/* dispatched or running: poll it, within its timeout */
	as->as_child = xstrdup(hr->hr_child);
	as->as_started = hr->hr_started_at;
	deploy_hookrun_free(hr);
	if (as->as_timeout > 0 &&
	    time(NULL) > as->as_started + as->as_timeout) {
		char	 why[128];

		snprintf(why, sizeof(why), "timed out after %ds",
		    as->as_timeout);
		hook_fail(as, -1, why, "%s hook %s %s; its run %s is stopped",
		    as->as_phase, h->dh_hook_id, why, as->as_child);
		nomad_job_stop(d->d_ns, as->as_child, 0, hook_stopped,
		    as);
		return;
	}
	nomad_job_allocations(d->d_ns, as->as_child, hook_polled, as);
}

/* Every hook of the phase succeeded: register, or complete. */
static void
hooks_phase_done(struct deploy *d, enum deploy_state st)
{
	struct store	*s = engine_store();

	/* Every hook of the phase succeeded. */
	if (st == DS_PRE_HOOKS) {
		int64_t	 now = time(NULL);

		if (store_begin(s) == -1 || store_deploy_set_apply(s,
		    d->d_id, now, now + engine_conf()->apply_timeout) == -1 ||
		    deploy_transition(s, d->d_id, DS_PRE_HOOKS,
		    DS_REGISTERING, "system", "register", NULL) == -1 ||
		    store_commit(s) == -1)
			apply_unsaved(d->d_id, "the end of the pre hooks");
		engine_apply_kick();
	} else
		apply_move(d->d_id, DS_POST_HOOKS, DS_COMPLETED, "complete",
		    NULL);
}

void
hooks_apply(struct deploy *d, const char *phase)
{
	struct store		*s = engine_store();
	struct deploy_hook	*h;
	struct hook_run		 hr;
	struct astep		*as;
	enum deploy_state	 st = hook_state(phase);
	size_t			 i;
	char			 token[128];
	int			 rc;

	for (i = 0; i < d->d_nhooks; i++) {
		h = &d->d_hooks[i];
		if (strcmp(h->dh_phase, phase) != 0)
			continue;
		snprintf(token, sizeof(token), "%lld:%s:%d",
		    (long long)d->d_id, phase, h->dh_position);
		rc = store_deploy_hookrun_get(s, token, &hr);
		if (rc == -1)
			return;
		if (rc == 0 && strcmp(hr.hr_state, "succeeded") == 0) {
			deploy_hookrun_free(&hr);
			continue;
		}
		if (rc == 0 && strcmp(hr.hr_state, "failed") == 0 &&
		    hr.hr_child != NULL) {
			deploy_hookrun_free(&hr);
			apply_fail(d->d_id, st, "%s hook %s failed", phase,
			    h->dh_hook_id);
			return;
		}
		if (apply_claim(d->d_id) == -1) {
			if (rc == 0)
				deploy_hookrun_free(&hr);
			return;
		}
		as = apply_step_new(d);
		as->as_token = xstrdup(token);
		as->as_phase = xstrdup(phase);
		as->as_revision = xstrdup(h->dh_revision);
		as->as_hook = xstrdup(h->dh_hook_id);
		as->as_timeout = h->dh_timeout;
		hooks_resume(d, h, as, &hr, rc);
		return;
	}
	hooks_phase_done(d, st);
}


/* ---- hook revisions no active deployment needs ---- */

static struct leftbehind_clean hooks_clean = {
	LB_HOOK_REVISION, "hook", "no active deployment needs it", NULL, 0
};

/* A later successful write of a hook revision removes its record. */
void
hooks_left_behind_clear(const char *ns, const char *rev)
{
	leftbehind_clear(LB_HOOK_REVISION, ns, rev);
}

/*
 * After each detection cycle: stop the hook revisions that only ended
 * deployments (of the last week) used.  A stop that fails is left behind.
 */
void
hooks_cleanup(void)
{
	if (hooks_clean.lk_inflight > 0)
		return;
	(void)store_deploy_idle_hooks(engine_store(), time(NULL) - 7 * 86400,
	    leftbehind_clean_one, &hooks_clean);
}
