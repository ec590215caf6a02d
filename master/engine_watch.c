/*
 * Event-driven drift: a blocking query on the job list and one on the
 * deployment list of every managed namespace, always outstanding.  Nomad
 * answers as soon as its index passes the one asked with (or after
 * NOMAD_BLOCK_WAIT_S with the same one), so a change is seen in the time
 * of a round trip:
 *
 * - a job list whose managed jobs' JobModifyIndex differ from what the
 *   last detection cycle planned against (a change made behind nops'
 *   back, a scale, a stop, a purge) starts a detection cycle, which plans
 *   only those jobs (engine_survey.c); any other change of the list (an
 *   allocation's status moves the job summaries) steps the deployments in
 *   progress;
 * - a deployment list that changed (progress, health counts, promotion,
 *   an end) steps the deployments in progress.
 *
 * Blocking queries and not the event stream: each answer is the whole
 * list as of an index, so nothing can be missed between two queries (a
 * reconnect asks from the last index seen and gets everything newer at
 * once), where the event stream replays only what is still in Nomad's
 * buffer (100 indexes by default) and a longer gap would have to be
 * found and filled by a list anyway.  A list that goes backwards (a
 * restore from a snapshot) starts over from index 0 and makes the next
 * cycle plan every job.  A failed query is retried with backoff (1 s
 * doubling to 60 s); the drift-interval stays as the fallback.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>
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
#include "nomad.h"
#include "deploy.h"
#include "engine.h"

#define WATCH_BACKOFF_MIN_MS	1000
#define WATCH_BACKOFF_MAX_MS	60000
#define WATCH_SPACING_MS	50	/* between two answers of one list */

struct watch {
	TAILQ_ENTRY(watch)	 w_entry;
	char			*w_ns;
	int			 w_deployments;	/* else the job list */
	uint64_t		 w_index;	/* last X-Nomad-Index seen */
	uint32_t		 w_req;		/* outstanding, or 0 */
	int			 w_backoff_ms;
	int			 w_failing;
	struct event		*w_timer;
	struct timespec		 w_last;	/* last answer */
};
TAILQ_HEAD(watches, watch);

static struct watches	 watches = TAILQ_HEAD_INITIALIZER(watches);

static void	 watch_send(struct watch *);

/*
 * Alike on purpose: nomad_parse_cache_flush (nomad_cache.c) and
 * hoststep_stop_all (hoststep.c) free and empty their own TAILQs the
 * same way; the element types differ, and one loop for all would need a
 * macro.
 */
static void
watch_free(struct watch *w)
{
	if (w->w_req != 0)
		nomad_cancel(w->w_req);
	event_free(w->w_timer);
	free(w->w_ns);
	free(w);
}

void
watch_shutdown(void)
{
	struct watch	*w;

	while ((w = TAILQ_FIRST(&watches)) != NULL) {
		TAILQ_REMOVE(&watches, w, w_entry);
		watch_free(w);
	}
}

static void
watch_timer_cb(int fd, short ev, void *arg)
{
	watch_send(arg);
}

static void
watch_later(struct watch *w, int ms)
{
	struct timeval	 tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(w->w_timer, &tv);
}

/*
 * Does the job list show a managed job whose live spec is not the one
 * the last cycle planned against?  Jobs outside git are not nops' concern.
 */
static int
watch_jobs_moved(struct watch *w, json_t *list)
{
	struct ejob	*ej;
	json_t		*stub, *byid;
	const char	*id;
	size_t		 i;
	int		 moved = 0;

	if ((byid = json_object()) == NULL)
		fatalx("json_object");
	json_array_foreach(list, i, stub)
		if ((id = json_string_value(json_object_get(stub, "ID"))) !=
		    NULL)
			json_object_set(byid, id, stub);
	RB_FOREACH(ej, ejobs, &engine_env->e_jobs) {
		if (strcmp(ej->ej_ns, w->w_ns) != 0 || !ej->ej_planned)
			continue;
		stub = json_object_get(byid, ej->ej_id);
		if ((stub == NULL) != !ej->ej_live_exists ||
		    (stub != NULL && (uint64_t)json_integer_value(
		    json_object_get(stub, "JobModifyIndex")) !=
		    ej->ej_live_index)) {
			log_debug("watch: %s/%s changed in Nomad", ej->ej_ns,
			    ej->ej_id);
			moved = 1;
			break;
		}
	}
	json_decref(byid);
	return moved;
}

static void
watch_answer(struct nomad_result *res, void *arg)
{
	struct watch	*w = arg;
	struct timespec	 now;
	long		 ms;
	int		 first;

	w->w_req = 0;
	if (!nomad_ok(res) || res->nr_index == 0 ||
	    !json_is_array(res->nr_json)) {
		if (!w->w_failing++)
			log_warnx("watch: %s of namespace %s: %s; retrying "
			    "with backoff (the drift-interval still applies)",
			    w->w_deployments ? "deployments" : "jobs", w->w_ns,
			    res->nr_error != NULL ? res->nr_error :
			    "not a list with an index");
		w->w_backoff_ms = w->w_backoff_ms == 0 ? WATCH_BACKOFF_MIN_MS :
		    w->w_backoff_ms * 2;
		if (w->w_backoff_ms > WATCH_BACKOFF_MAX_MS)
			w->w_backoff_ms = WATCH_BACKOFF_MAX_MS;
		/* jitter: +-25% */
		watch_later(w, w->w_backoff_ms * 3 / 4 +
		    (int)arc4random_uniform(
		    (uint32_t)w->w_backoff_ms / 2 + 1));
		return;
	}
	if (w->w_failing) {
		log_info("watch: %s of namespace %s answers again",
		    w->w_deployments ? "deployments" : "jobs", w->w_ns);
		w->w_failing = 0;
	}
	w->w_backoff_ms = 0;
	first = w->w_index == 0;
	if (res->nr_index < w->w_index) {
		/* A restore: nothing remembered can be trusted. */
		log_warnx("watch: the %s list of namespace %s went back from "
		    "index %llu to %llu", w->w_deployments ? "deployment" :
		    "job", w->w_ns, (unsigned long long)w->w_index,
		    (unsigned long long)res->nr_index);
		survey_doubt("a list's index went backwards");
		engine_detect("a Nomad index went backwards");
		engine_apply_kick();
	} else if (res->nr_index > w->w_index || first) {
		if (w->w_deployments)
			engine_apply_kick();
		else {
			if (!first || engine_env->e_cycles > 0) {
				if (watch_jobs_moved(w, res->nr_json))
					engine_detect("a job changed in Nomad");
			}
			/* Allocations moved: health may have changed. */
			engine_apply_kick();
		}
	}
	w->w_index = res->nr_index;
	/* Never more than one query per WATCH_SPACING_MS and list. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - w->w_last.tv_sec) * 1000 +
	    (now.tv_nsec - w->w_last.tv_nsec) / 1000000;
	w->w_last = now;
	if (ms < WATCH_SPACING_MS)
		watch_later(w, WATCH_SPACING_MS - (int)ms);
	else
		watch_send(w);
}

/*
 * Would a change behind nops' back start a cycle of its own?  Every
 * managed namespace's job list has answered and its query is not
 * failing.  A focused cycle (engine_focus.c) plans no other job on that
 * ground; without it every cycle asks Nomad's job lists.
 */
int
watch_current(void)
{
	const struct nops_conf	*cf = engine_conf();
	struct conf_str		*cs;
	struct watch		*w;

	if (cf == NULL)
		return 0;
	TAILQ_FOREACH(cs, &cf->nomad.namespaces, entry) {
		TAILQ_FOREACH(w, &watches, w_entry)
			if (!w->w_deployments && strcmp(w->w_ns, cs->str) == 0)
				break;
		if (w == NULL || w->w_index == 0 || w->w_failing)
			return 0;
	}
	return 1;
}

static void
watch_send(struct watch *w)
{
	if (w->w_req != 0)
		return;
	w->w_req = w->w_deployments ?
	    nomad_deployments_watch(w->w_ns, w->w_index, watch_answer, w) :
	    nomad_jobs_watch(w->w_ns, w->w_index, watch_answer, w);
}

static void
watch_add(const char *ns, int deployments)
{
	struct watch	*w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal("calloc");
	w->w_ns = xstrdup(ns);
	w->w_deployments = deployments;
	if ((w->w_timer = evtimer_new(nopsd_env->n_base, watch_timer_cb,
	    w)) == NULL)
		fatal("evtimer_new");
	TAILQ_INSERT_TAIL(&watches, w, w_entry);
	watch_send(w);
}

/*
 * (Re)start the watches for the namespaces configured now; on a reload
 * that keeps Nomad's address, the ones kept go on from their index.
 */
void
watch_configure(void)
{
	const struct nops_conf	*cf = engine_conf();
	struct watch		*w, *next;
	struct worker		*wk;
	struct conf_str		*cs;
	int			 found, d;

#ifdef NOPS_TEST_HOOKS
	/*
	 * A test of what stands behind the watches (the check-and-set at
	 * the register) needs a change that no watch reports first.
	 */
	if (getenv("NOPS_TEST_NO_WATCH") != NULL)
		return;
#endif
	for (w = TAILQ_FIRST(&watches); w != NULL; w = next) {
		next = TAILQ_NEXT(w, w_entry);
		found = 0;
		if (cf != NULL && cf->nomad.address != NULL)
			TAILQ_FOREACH(cs, &cf->nomad.namespaces, entry)
				if (strcmp(cs->str, w->w_ns) == 0)
					found = 1;
		if (!found) {
			TAILQ_REMOVE(&watches, w, w_entry);
			watch_free(w);
		} else if (w->w_req == 0 && !evtimer_pending(w->w_timer,
		    NULL))
			watch_send(w);
	}
	if (cf == NULL || cf->nomad.address == NULL)
		return;
	/* Not yet: nomad_worker_started() comes back here. */
	if ((wk = supervise_worker(PROC_NOMADWORKER)) == NULL ||
	    !wk->w_running)
		return;
	TAILQ_FOREACH(cs, &cf->nomad.namespaces, entry)
		for (d = 0; d <= 1; d++) {
			found = 0;
			TAILQ_FOREACH(w, &watches, w_entry)
				if (w->w_deployments == d &&
				    strcmp(w->w_ns, cs->str) == 0)
					found = 1;
			if (!found)
				watch_add(cs->str, d);
		}
}
