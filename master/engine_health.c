/*
 * Waiting for health (waiting_health, awaiting_promotion).
 *
 * Healthy: the Nomad deployment of the version nops registered is
 * successful; without one, every allocation of that version is running or
 * complete; a job that places nothing is healthy once registered.
 *
 * The version nops registered is the one to judge, not the job's latest:
 * auto_revert (or a person) makes a newer version, and the latest Nomad
 * deployment is then the revert's.  nops finds the deployment of its own
 * version (remembered, or named by its allocations) and fails when that
 * one failed, naming what was unhealthy.  Each poll also keeps the
 * progress (per group, per allocation) that the API and the dashboard
 * show while waiting.
 */
#include "config.h"

#include <sys/types.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "nomad.h"
#include "deploy.h"
#include "store_deploy.h"
#include "engine.h"
#include "engine_apply.h"
#include "webpub.h"
#include "api.h"
#include "jsonb.h"

#define HEALTH_KEEP		256	/* deployments whose progress
					   is cached */
#define HEALTH_ALLOCS_MAX	32	/* allocations shown per deployment */
#define HEALTH_EVENTS_MAX	3	/* last task events per allocation */

/*
 * The last progress of each deployment is kept in the store (it outlives
 * a restart); the most recent ones are cached here, newest polls last.
 */
static struct {
	int64_t	 hp_id;
	json_t	*hp_progress;
} health_kept[HEALTH_KEEP];
static size_t	 health_nkept;

static void	 health_read_allocs(struct astep *);
static void	 health_evaluate(struct astep *, const json_t *job);

/* Put progress in the cache (it takes the reference). */
static void
health_cache(size_t i, int64_t id, json_t *progress)
{
	if (i == health_nkept) {
		if (health_nkept == HEALTH_KEEP) {
			/* Forget the oldest. */
			json_decref(health_kept[0].hp_progress);
			memmove(&health_kept[0], &health_kept[1],
			    (HEALTH_KEEP - 1) * sizeof(health_kept[0]));
			i = --health_nkept;
		}
		health_nkept++;
	} else
		json_decref(health_kept[i].hp_progress);
	health_kept[i].hp_id = id;
	health_kept[i].hp_progress = progress;
}

json_t *
health_progress(int64_t id)
{
	json_t	*p;
	char	*text;
	size_t	 i;

	for (i = 0; i < health_nkept; i++)
		if (health_kept[i].hp_id == id)
			return health_kept[i].hp_progress;
	/* Kept before a restart, or pushed out of the cache. */
	if ((text = store_deploy_health(engine_store(), id)) == NULL)
		return NULL;
	p = json_loads(text, 0, NULL);
	free(text);
	if (!json_is_object(p)) {
		json_decref(p);
		return NULL;
	}
	health_cache(health_nkept, id, p);
	return p;
}

static void
health_keep(int64_t id, json_t *progress)
{
	struct store	*s = engine_store();
	char		*text;
	size_t		 i;

	for (i = 0; i < health_nkept; i++)
		if (health_kept[i].hp_id == id)
			break;
	if (i < health_nkept &&
	    json_equal(health_kept[i].hp_progress, progress)) {
		json_decref(progress);
		return;
	}
	/* Best effort: a store that fails keeps the cached one only. */
	if ((text = json_dumps(progress, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	if (store_begin(s) == 0) {
		if (store_deploy_set_health(s, id, text) == -1 ||
		    store_commit(s) == -1)
			store_rollback(s);
	}
	free(text);
	health_cache(i, id, progress);
	webpub_changed();
}

static const char *
health_str(const json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* A number of Nomad's, for a pack's "I" (0 when it is not one). */
static json_int_t
health_int(const json_t *o, const char *key)
{
	return (json_int_t)json_integer_value(json_object_get(o, key));
}

/* An allocation's health in its deployment: 1, 0, or -1 not set. */
static int
health_alloc_healthy(const json_t *a)
{
	json_t	*h = json_object_get(json_object_get(a, "DeploymentStatus"),
	    "Healthy");

	if (json_is_true(h))
		return 1;
	if (json_is_false(h))
		return 0;
	return -1;
}

static int
health_alloc_canary(const json_t *a)
{
	return json_is_true(json_object_get(json_object_get(a,
	    "DeploymentStatus"), "Canary"));
}

/*
 * What an allocation's tasks last said: "exit code 1, <last event>", from
 * the newest Terminated event and the newest event of any kind.
 */
static void
health_alloc_said(const json_t *a, char *buf, size_t len)
{
	json_t		*ts, *ev, *last = NULL, *term = NULL;
	const char	*k;
	int64_t		 lt = -1, tt = -1, t;
	size_t		 i;

	json_object_foreach(json_object_get(a, "TaskStates"), k, ts) {
		json_array_foreach(json_object_get(ts, "Events"), i, ev) {
			t = json_integer_value(json_object_get(ev, "Time"));
			if (t >= lt) {
				lt = t;
				last = ev;
			}
			if (strcmp(health_str(ev, "Type"), "Terminated") == 0 &&
			    t >= tt) {
				tt = t;
				term = ev;
			}
		}
	}
	buf[0] = '\0';
	if (term != NULL)
		snprintf(buf, len, "exit code %lld", (long long)
		    json_integer_value(json_object_get(term, "ExitCode")));
	if (last != NULL && last != term) {
		size_t	 n = strlen(buf);

		snprintf(buf + n, len - n, "%s%s: %s", n > 0 ? ", " : "",
		    health_str(last, "Type"), health_str(last,
		    "DisplayMessage"));
	}
}

/* The allocations of the registered version, as the API shows them. */
static json_t *
health_allocs_json(const struct astep *as, const json_t *allocs)
{
	json_t		*out, *a, *o, *events, *ts, *ev;
	const char	*k;
	size_t		 i, j, n;
	int		 h;
	char		 said[256];

	out = json_array();
	json_array_foreach(allocs, i, a) {
		if (json_integer_value(json_object_get(a, "JobVersion")) !=
		    as->as_version)
			continue;
		if (json_array_size(out) >= HEALTH_ALLOCS_MAX)
			break;
		events = json_array();
		json_object_foreach(json_object_get(a, "TaskStates"), k, ts) {
			n = json_array_size(json_object_get(ts, "Events"));
			for (j = n > HEALTH_EVENTS_MAX ? n - HEALTH_EVENTS_MAX :
			    0; j < n; j++) {
				ev = json_array_get(json_object_get(ts,
				    "Events"), j);
				json_array_append_new(events, jsonb_pack(
				    "{s:s,s:s,s:s,s:o}", "task", k, "type",
				    health_str(ev, "Type"), "message",
				    health_str(ev, "DisplayMessage"), "time",
				    api_time_json(json_integer_value(
				    json_object_get(ev, "Time")) /
				    1000000000)));
			}
		}
		h = health_alloc_healthy(a);
		health_alloc_said(a, said, sizeof(said));
		o = jsonb_pack("{s:s,s:s,s:s,s:s,s:o,s:b,s:s,s:o}",
		    "id", health_str(a, "ID"),
		    "group", health_str(a, "TaskGroup"),
		    "client_status", health_str(a, "ClientStatus"),
		    "desired_status", health_str(a, "DesiredStatus"),
		    "healthy", h == -1 ? json_null() : json_boolean(h),
		    "canary", health_alloc_canary(a),
		    "last", said,
		    "events", events);
		json_array_append_new(out, o);
	}
	return out;
}

/* Per group: from the Nomad deployment, else counted from allocations. */
static json_t *
health_groups_json(const struct astep *as, const json_t *dep,
    const json_t *allocs)
{
	json_t		*out, *g, *a, *o;
	const char	*k;
	size_t		 i;

	out = json_array();
	if (json_is_object(dep)) {
		json_object_foreach(json_object_get(dep, "TaskGroups"), k, g) {
			o = jsonb_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:b}",
			    "name", k,
			    "desired", health_int(g, "DesiredTotal"),
			    "placed", health_int(g, "PlacedAllocs"),
			    "healthy", health_int(g, "HealthyAllocs"),
			    "unhealthy", health_int(g, "UnhealthyAllocs"),
			    "desired_canaries",
			    health_int(g, "DesiredCanaries"),
			    "placed_canaries", (json_int_t)json_array_size(
			    json_object_get(g, "PlacedCanaries")),
			    "promoted", json_is_true(json_object_get(g,
			    "Promoted")));
			json_array_append_new(out, o);
		}
		return out;
	}
	/* No deployment (batch jobs): count the allocations per group. */
	json_array_foreach(allocs, i, a) {
		const char	*name = health_str(a, "TaskGroup"), *cs;
		size_t		 j;

		if (json_integer_value(json_object_get(a, "JobVersion")) !=
		    as->as_version)
			continue;
		o = NULL;
		json_array_foreach(out, j, g)
			if (strcmp(health_str(g, "name"), name) == 0)
				o = g;
		if (o == NULL) {
			o = jsonb_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:b}",
			    "name", name, "desired", (json_int_t)0, "placed",
			    (json_int_t)0, "healthy", (json_int_t)0,
			    "unhealthy", (json_int_t)0, "desired_canaries",
			    (json_int_t)0, "placed_canaries", (json_int_t)0,
			    "promoted", 0);
			json_array_append_new(out, o);
		}
		cs = health_str(a, "ClientStatus");
#define BUMP(key)	json_object_set_new(o, key, json_integer( \
			    json_integer_value(json_object_get(o, key)) + 1))
		BUMP("placed");
		if (strcmp(cs, "running") == 0 || strcmp(cs, "complete") == 0)
			BUMP("healthy");
		else if (strcmp(cs, "failed") == 0 || strcmp(cs, "lost") == 0)
			BUMP("unhealthy");
#undef BUMP
	}
	return out;
}

/*
 * What was unhealthy, for a failure's reason, from the progress: each
 * group short of healthy, and the first unhealthy (or not yet healthy)
 * allocations with what their tasks last said.
 */
static void
health_what(const json_t *progress, char *buf, size_t len)
{
	json_t		*g, *a;
	const char	*sep = "", *said;
	size_t		 i, n, shown = 0;
	int		 pass, bad;

	buf[0] = '\0';
	json_array_foreach(json_object_get(progress, "groups"), i, g) {
		if (json_integer_value(json_object_get(g, "healthy")) >=
		    json_integer_value(json_object_get(g, "desired")) &&
		    json_integer_value(json_object_get(g, "unhealthy")) == 0)
			continue;
		n = strlen(buf);
		snprintf(buf + n, len - n, "%sgroup %s: %lld of %lld healthy "
		    "(%lld placed, %lld unhealthy)", sep,
		    health_str(g, "name"),
		    (long long)json_integer_value(json_object_get(g,
		    "healthy")),
		    (long long)json_integer_value(json_object_get(g,
		    "desired")),
		    (long long)json_integer_value(json_object_get(g,
		    "placed")),
		    (long long)json_integer_value(json_object_get(g,
		    "unhealthy")));
		sep = "; ";
	}
	/* Unhealthy allocations first, then those not healthy yet. */
	for (pass = 0; pass < 2; pass++) {
		json_array_foreach(json_object_get(progress, "allocations"), i,
		    a) {
			if (shown >= 3)
				return;
			bad = json_is_false(json_object_get(a, "healthy")) ||
			    strcmp(health_str(a, "client_status"), "failed") ==
			    0 || strcmp(health_str(a, "client_status"),
			    "lost") == 0;
			if (pass == 0 ? !bad : (bad || json_is_true(
			    json_object_get(a, "healthy")) ||
			    strcmp(health_str(a, "desired_status"),
			    "run") != 0))
				continue;
			said = health_str(a, "last");
			n = strlen(buf);
			snprintf(buf + n, len - n,
			    "%sallocation %.8s (%s) %s%s%s",
			    sep, health_str(a, "id"), health_str(a, "group"),
			    pass == 0 ? health_str(a, "client_status") :
			    "not healthy yet", *said != '\0' ? ": " : "", said);
			sep = "; ";
			shown++;
		}
	}
}

static json_t *
health_progress_json(const struct astep *as, const json_t *dep)
{
	json_t	*nd = json_null();

	if (json_is_object(dep))
		nd = jsonb_pack("{s:s,s:s,s:s,s:I}",
		    "id", health_str(dep, "ID"),
		    "status", health_str(dep, "Status"),
		    "description", health_str(dep, "StatusDescription"),
		    "job_version", health_int(dep, "JobVersion"));
	return jsonb_pack("{s:I,s:o,s:o,s:o,s:o}",
	    "job_version", (json_int_t)as->as_version,
	    "nomad_deployment", nd,
	    "groups", health_groups_json(as, dep, as->as_allocs),
	    "allocations", health_allocs_json(as, as->as_allocs),
	    "updated_at", api_time_json(time(NULL)));
}

/* Remember the Nomad deployment of this register, once. */
static void
health_note_deployment(struct astep *as, const json_t *dep)
{
	struct store	*s = engine_store();
	const char	*id = json_string_value(json_object_get(dep, "ID"));

	if (id == NULL || (as->as_nomad_deployment != NULL &&
	    strcmp(as->as_nomad_deployment, id) == 0))
		return;
	if (store_begin(s) == -1 ||
	    store_deploy_set_nomad_deployment(s, as->as_id, id) == -1 ||
	    store_commit(s) == -1)
		apply_unsaved(as->as_id, "the Nomad deployment id");
}

static void
health_healthy(struct astep *as)
{
	enum deploy_state	 to;
	struct deploy		 d;

	engine_crashpoint("healthy");
	to = DS_COMPLETED;
	if (store_deploy_load(engine_store(), as->as_id, &d) == 0) {
		size_t	 i;

		for (i = 0; i < d.d_nhooks; i++)
			if (strcmp(d.d_hooks[i].dh_phase, "post") == 0)
				to = DS_POST_HOOKS;
		deploy_free(&d);
	}
	apply_move(as->as_id, DS_WAITING_HEALTH, to, to == DS_COMPLETED ?
	    "complete" : "healthy", NULL);
}

int
health_awaiting_promotion(const json_t *dep)
{
	json_t		*tg;
	const char	*k;

	json_object_foreach(json_object_get(dep, "TaskGroups"), k, tg) {
		if (json_integer_value(json_object_get(tg,
		    "DesiredCanaries")) > 0 &&
		    !json_is_true(json_object_get(tg, "Promoted")) &&
		    !json_is_true(json_object_get(tg, "AutoPromote")) &&
		    json_integer_value(json_object_get(tg, "HealthyAllocs")) >=
		    json_integer_value(json_object_get(tg, "DesiredCanaries")))
			return 1;
	}
	return 0;
}

/* The Nomad deployment of our version, or the allocations' judgement. */
static void
health_evaluate(struct astep *as, const json_t *job)
{
	json_t		*progress, *dep = as->as_dep, *a, *tg;
	const char	*status, *cs;
	char		 what[700];
	size_t		 i;
	int64_t		 count = 0, current = -1;
	int		 mine = 0, ok = 0, bad = 0;

	progress = health_progress_json(as, dep);
	health_what(progress, what, sizeof(what));
	health_keep(as->as_id, progress);

	if (json_is_object(dep)) {
		health_note_deployment(as, dep);
		status = health_str(dep, "Status");
		if (strcmp(status, "successful") == 0)
			health_healthy(as);
		else if (strcmp(status, "failed") == 0 ||
		    strcmp(status, "cancelled") == 0)
			apply_fail(as->as_id, DS_WAITING_HEALTH, "Nomad "
			    "deployment %.8s of version %lld %s: %s%s%s",
			    health_str(dep, "ID"), (long long)as->as_version,
			    status, health_str(dep, "StatusDescription"),
			    what[0] != '\0' ? "; " : "", what);
		else if (health_awaiting_promotion(dep))
			apply_move(as->as_id, DS_WAITING_HEALTH,
			    DS_AWAITING_PROMOTION, "await_promotion",
			    "canaries are healthy and wait for promotion; the "
			    "apply timeout is paused");
		apply_step_done(as);
		return;
	}

	if (json_is_object(job)) {
		/*
		 * Periodic and parameterized jobs place nothing, nor does
		 * a job registered stopped (suspended: master/suspend.c).
		 */
		if (json_is_object(json_object_get(job, "Periodic")) ||
		    json_is_object(json_object_get(job, "ParameterizedJob")) ||
		    json_is_true(json_object_get(job, "Stop"))) {
			health_healthy(as);
			apply_step_done(as);
			return;
		}
		json_array_foreach(json_object_get(job, "TaskGroups"), i, tg)
			count += json_integer_value(json_object_get(tg,
			    "Count"));
		current = json_integer_value(json_object_get(job, "Version"));
	}
	json_array_foreach(as->as_allocs, i, a) {
		if (json_integer_value(json_object_get(a, "JobVersion")) !=
		    as->as_version)
			continue;
		mine++;
		cs = health_str(a, "ClientStatus");
		if (strcmp(cs, "complete") == 0 || (strcmp(cs, "running") ==
		    0 && strcmp(health_str(a, "DesiredStatus"), "run") == 0))
			ok++;
		else if (strcmp(cs, "failed") == 0 || strcmp(cs, "lost") == 0)
			bad++;
	}
	if (bad > 0)
		apply_fail(as->as_id, DS_WAITING_HEALTH, "%d allocation(s) of "
		    "version %lld failed: %s", bad, (long long)as->as_version,
		    what);
	else if (current > as->as_version)
		apply_fail(as->as_id, DS_WAITING_HEALTH, "the job moved on to "
		    "version %lld in Nomad (a revert or a change by hand) "
		    "before version %lld was healthy%s%s",
		    (long long)current, (long long)as->as_version,
		    what[0] != '\0' ? ": " : "", what);
	else if (mine > 0 && ok == mine)
		health_healthy(as);
	else if (mine == 0 && json_is_object(job) && count == 0)
		/* A job with nothing to place: healthy once registered. */
		health_healthy(as);
	apply_step_done(as);
}

static void
health_job_read(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;

	if (!nomad_ok(res) || !json_is_object(res->nr_json)) {
		apply_step_done(as);
		return;
	}
	health_evaluate(as, res->nr_json);
}

static void
health_dep_read(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;

	if (!nomad_ok(res) || !json_is_object(res->nr_json) ||
	    json_integer_value(json_object_get(res->nr_json, "JobVersion")) !=
	    as->as_version) {
		apply_step_done(as);
		return;
	}
	json_decref(as->as_dep);
	as->as_dep = json_incref(res->nr_json);
	if (as->as_allocs == NULL)
		health_read_allocs(as);
	else
		health_evaluate(as, NULL);
}

/*
 * Alike on purpose: hook_polled (engine_hooks.c) opens the same way, as
 * every step's Nomad callback does; what each reads of the answer differs.
 */
static void
health_allocs_read(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	json_t		*a;
	const char	*did;
	size_t		 i;

	if (!nomad_ok(res) || !json_is_array(res->nr_json)) {
		apply_step_done(as);
		return;
	}
	as->as_allocs = json_incref(res->nr_json);
	if (as->as_dep == NULL) {
		/* The deployment of our version, named by its allocations. */
		json_array_foreach(as->as_allocs, i, a) {
			did = json_string_value(json_object_get(a,
			    "DeploymentID"));
			if (did != NULL && *did != '\0' &&
			    json_integer_value(json_object_get(a,
			    "JobVersion")) == as->as_version) {
				nomad_deployment_read(as->as_ns, did,
				    health_dep_read, as);
				return;
			}
		}
		nomad_job_read(as->as_ns, as->as_job, health_job_read, as);
		return;
	}
	health_evaluate(as, NULL);
}

static void
health_read_allocs(struct astep *as)
{
	nomad_job_allocations(as->as_ns, as->as_job, health_allocs_read, as);
}

static void
health_latest(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	json_t		*dep = res->nr_json;
	int64_t		 version;

	if (!nomad_ok(res)) {
		apply_step_done(as);
		return;
	}
	version = json_is_object(dep) ? json_integer_value(json_object_get(
	    dep, "JobVersion")) : -1;
	if (version == as->as_version)
		as->as_dep = json_incref(dep);
	else if (version > as->as_version && as->as_nomad_deployment != NULL) {
		/* A newer version's deployment (a revert): read ours. */
		nomad_deployment_read(as->as_ns, as->as_nomad_deployment,
		    health_dep_read, as);
		return;
	}
	health_read_allocs(as);
}

void
health_apply(struct deploy *d)
{
	struct astep	*as;
	json_t		*p;
	char		 what[700];

	if (d->d_timeout_at > 0 && time(NULL) > d->d_timeout_at) {
		what[0] = '\0';
		if ((p = health_progress(d->d_id)) != NULL)
			health_what(p, what, sizeof(what));
		apply_fail(d->d_id, DS_WAITING_HEALTH, "not healthy within "
		    "apply-timeout (%ds)%s%s", engine_conf()->apply_timeout,
		    what[0] != '\0' ? ": " : "", what);
		return;
	}
	if (apply_claim(d->d_id) == -1)
		return;
	as = apply_step_new(d);
	nomad_job_deployment(d->d_ns, d->d_job, health_latest, as);
}

/* Canaries wait for a person: no timeout; promotion restarts it in full. */
static void
promotion_deployment(struct nomad_result *res, void *arg)
{
	struct astep	*as = arg;
	struct store	*s = engine_store();
	json_t		*dep = res->nr_json;
	const char	*status;
	int64_t		 now = time(NULL);

	if (!nomad_ok(res) || !json_is_object(dep)) {
		apply_step_done(as);
		return;
	}
	if (json_integer_value(json_object_get(dep, "JobVersion")) ==
	    as->as_version)
		health_keep(as->as_id, health_progress_json(as, dep));
	status = json_string_value(json_object_get(dep, "Status"));
	if (json_integer_value(json_object_get(dep, "JobVersion")) !=
	    as->as_version) {
		apply_fail(as->as_id, DS_AWAITING_PROMOTION, "the job moved on "
		    "to version %lld in Nomad while the canaries of version "
		    "%lld waited for promotion", (long long)json_integer_value(
		    json_object_get(dep, "JobVersion")),
		    (long long)as->as_version);
	} else if (status != NULL && (strcmp(status, "failed") == 0 ||
	    strcmp(status, "cancelled") == 0)) {
		apply_fail(as->as_id, DS_AWAITING_PROMOTION, "Nomad deployment "
		    "%s while canaries waited for promotion: %s", status,
		    health_str(dep, "StatusDescription"));
	} else if (!health_awaiting_promotion(dep)) {
		if (store_begin(s) == -1 || store_deploy_set_apply(s, as->as_id,
		    now, now + engine_conf()->apply_timeout) == -1 ||
		    deploy_transition(s, as->as_id, DS_AWAITING_PROMOTION,
		    DS_WAITING_HEALTH, "system", "promoted", "canaries "
		    "promoted; the apply timeout restarts in full") == -1 ||
		    store_commit(s) == -1)
			apply_unsaved(as->as_id, "the promotion");
		else
			engine_apply_kick();
	}
	apply_step_done(as);
}

void
health_promotion(struct deploy *d)
{
	struct astep	*as;

	if (apply_claim(d->d_id) == -1)
		return;
	as = apply_step_new(d);
	nomad_job_deployment(d->d_ns, d->d_job, promotion_deployment, as);
}
