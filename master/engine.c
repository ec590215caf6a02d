/*
 * The engine's lifecycle and triggers: detection at start, on every new
 * snapshot, every drift-interval and after anything that changes a job's
 * state; apply every engine-interval and right after a step ends.  Also
 * a person's pause of a job (the holds table).
 */
#include "config.h"

#include <sys/types.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "log.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_job.h"
#include "repo.h"
#include "nomad.h"
#include "engine.h"
#include "operation.h"
#include "plans.h"

struct engine		*engine_env;
static struct store	*engine_db;
static const struct nops_conf *engine_cf;
static struct event	*engine_ev_drift;
static struct event	*engine_ev_apply;
static struct event	*engine_ev_kick;
static struct event	*engine_ev_detect;
static struct event	*engine_ev_retry;	/* after a store error */
static char		 engine_detect_why[128];

#ifdef NOPS_TEST_HOOKS
/*
 * The crash tests kill the master at each step of an apply, right after
 * it saved the step or right after Nomad answered and before the answer
 * is saved, and check that the restarted master neither registers nor
 * dispatches twice and ends every deployment.
 */
void
engine_crashpoint(const char *point)
{
	const char	*at = getenv("NOPS_CRASH_AT");

	if (at != NULL && strcmp(at, point) == 0) {
		log_warnx("test hook: crashing at %s", point);
		kill(getpid(), SIGKILL);
	}
}
#endif

/*
 * The test hook NOPS_TEST_NO_SKIP: the equivalence test's reference, in
 * which every cycle is a full one, plans every job and parses every file
 * (survey, focus and memo skip nothing).  0 in a build without test hooks.
 */
int
engine_no_skip(void)
{
#ifdef NOPS_TEST_HOOKS
	return getenv("NOPS_TEST_NO_SKIP") != NULL;
#else
	return 0;
#endif
}

const struct nops_conf *
engine_conf(void)
{
	return engine_cf;
}

struct store *
engine_store(void)
{
	return engine_db;
}

void
engine_sha256_hex(const void *data, size_t len, char out[ENGINE_HASHLEN + 1])
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen = 0, i;

	if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32)
		fatalx("EVP_Digest sha256");
	for (i = 0; i < mdlen; i++) {
		out[i * 2] = hex[md[i] >> 4];
		out[i * 2 + 1] = hex[md[i] & 0xf];
	}
	out[ENGINE_HASHLEN] = '\0';
}

char *
engine_json_canonical(const json_t *j)
{
	char	*s;

	if ((s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENCODE_ANY)) == NULL)
		fatalx("json_dumps");
	return s;
}

json_t *
engine_diffview(const char *text, const char *source)
{
	json_t	*d, *v;

	if (text == NULL || (d = json_loads(text, 0, NULL)) == NULL)
		return json_null();
	v = diffview(d, source);
	json_decref(d);
	return v;
}

int
engine_ns_managed(const char *ns)
{
	struct conf_str	*cs;

	if (engine_cf == NULL || engine_cf->nomad.address == NULL)
		return 0;
	TAILQ_FOREACH(cs, &engine_cf->nomad.namespaces, entry)
		if (strcmp(cs->str, ns) == 0)
			return 1;
	return 0;
}

struct ejob *
engine_job(const char *ns, const char *id)
{
	return detect_job_find(&engine_env->e_jobs, ns, id);
}

static void
engine_detect_cb(int fd, short ev, void *arg)
{
	log_debug("detection: %s", engine_detect_why);
	detect_start();
}

/*
 * Start a detection cycle soon (from the event loop, never from inside a
 * caller that holds state), or queue one if a cycle runs.
 */
void
engine_detect(const char *why)
{
	/* Whatever it is, the next cycle decides every job. */
	if (engine_env != NULL)
		engine_env->e_asked_other = 1;
	engine_detect_snapshot(why);
}

/*
 * A new snapshot (or a cycle queued meanwhile, whose triggers said what
 * they were): the next cycle may be a focused one (engine_focus.c).
 */
void
engine_detect_snapshot(const char *why)
{
	struct timeval	 tv = { 0, 0 };

	if (engine_env == NULL)
		return;
	strlcpy(engine_detect_why, why, sizeof(engine_detect_why));
	if (engine_env->e_detecting) {
		engine_env->e_rerun = 1;
		return;
	}
	evtimer_add(engine_ev_detect, &tv);
}

static void
engine_retry_cb(int fd, short ev, void *arg)
{
	engine_detect("retry after a store error");
}

/*
 * A decision failed on a store error (a full disk): detect again in a
 * few seconds, not at the next drift tick, which may be a day away.
 */
void
engine_detect_retry(const char *why)
{
	struct timeval	 tv = { ENGINE_STORE_RETRY, 0 };

	if (engine_ev_retry == NULL || evtimer_pending(engine_ev_retry, NULL))
		return;
	log_info("detection: again in %d s after %s", ENGINE_STORE_RETRY,
	    why);
	evtimer_add(engine_ev_retry, &tv);
}

static void
engine_drift_cb(int fd, short ev, void *arg)
{
	struct timeval	 tv;

	engine_detect("drift-interval");
	tv.tv_sec = engine_cf->drift_interval;
	tv.tv_usec = 0;
	evtimer_add(engine_ev_drift, &tv);
}

/*
 * A job held outside its sync window is deployed when the window opens,
 * not at the next drift-interval: looked at every engine-interval (no
 * call to Nomad; only the cron of each held job).
 */
static void
engine_window_check(void)
{
	static time_t	 last;
	struct ejob	*ej;
	time_t		 now = time(NULL);

	/* Windows open on a minute; a cycle that cannot deploy waits. */
	if (now - last < 60)
		return;
	RB_FOREACH(ej, ejobs, &engine_env->e_jobs)
		if (ej->ej_state != NULL && strcmp(ej->ej_state, "held") == 0 &&
		    meta_window_open(&ej->ej_meta, now)) {
			last = now;
			engine_detect("a sync window opened");
			return;
		}
}

static void
engine_apply_cb(int fd, short ev, void *arg)
{
	struct timeval	 tv;

	engine_window_check();
	apply_cycle();
	tv.tv_sec = engine_cf->engine_interval;
	tv.tv_usec = 0;
	evtimer_add(engine_ev_apply, &tv);
}

static void
engine_kick_cb(int fd, short ev, void *arg)
{
	apply_cycle();
}

void
engine_apply_kick(void)
{
	struct timeval	 tv = { 0, 0 };

	if (engine_ev_kick != NULL && !evtimer_pending(engine_ev_kick, NULL))
		evtimer_add(engine_ev_kick, &tv);
}

static void
engine_snapshot(struct repo *r, const struct repo_snap *snap, void *arg)
{
	char	 why[128];

	snprintf(why, sizeof(why), "new snapshot of %s at %.12s",
	    repo_name(r), snap->rs_commit);
	plans_snapshot(repo_name(r), snap);
	engine_detect_snapshot(why);
}

void
engine_init(struct store *db, const struct nops_conf *conf)
{
	struct event_base	*base = nopsd_env->n_base;
	struct timeval		 tv;

	if ((engine_env = calloc(1, sizeof(*engine_env))) == NULL)
		fatal("calloc");
	RB_INIT(&engine_env->e_jobs);
	engine_db = db;
	engine_cf = conf;
	engine_ev_drift = evtimer_new(base, engine_drift_cb, NULL);
	engine_ev_apply = evtimer_new(base, engine_apply_cb, NULL);
	engine_ev_kick = evtimer_new(base, engine_kick_cb, NULL);
	engine_ev_detect = evtimer_new(base, engine_detect_cb, NULL);
	engine_ev_retry = evtimer_new(base, engine_retry_cb, NULL);
	if (engine_ev_drift == NULL || engine_ev_apply == NULL ||
	    engine_ev_kick == NULL || engine_ev_detect == NULL ||
	    engine_ev_retry == NULL)
		fatal("evtimer_new");
	repo_set_listener(engine_snapshot, NULL);

	/* The first apply cycle is recovery: it resumes unfinished steps. */
	tv.tv_sec = 1;
	tv.tv_usec = 0;
	evtimer_add(engine_ev_apply, &tv);
	tv.tv_sec = conf->drift_interval;
	evtimer_add(engine_ev_drift, &tv);
	watch_configure();
	/* Operation runs under way at the last stop: found again. */
	operation_recover();
	engine_detect("start");
}

void
engine_reconfigure(const struct nops_conf *conf)
{
	engine_cf = conf;
	/* Nomad's address or namespaces may have changed: watch anew. */
	watch_shutdown();
	watch_configure();
	engine_detect("configuration reloaded");
}

void
engine_shutdown(void)
{
	if (engine_env == NULL)
		return;
	watch_shutdown();
	event_free(engine_ev_drift);
	event_free(engine_ev_apply);
	event_free(engine_ev_kick);
	event_free(engine_ev_detect);
	event_free(engine_ev_retry);
	engine_ev_drift = engine_ev_apply = engine_ev_kick = NULL;
	engine_ev_detect = engine_ev_retry = NULL;
}

/* Holds: a person's pause, kept in the store with who and why. */

int
engine_hold_pause(const char *ns, const char *id, const char *who,
    const char *reason)
{
	char		 target[512];

	if (store_begin(engine_db) == -1)
		return -1;
	if (store_job_set(engine_db, STORE_JOB_PAUSE, ns, id, who,
	    reason) == -1)
		goto fail;
	snprintf(target, sizeof(target), "job/%s/%s", ns, id);
	if (store_event(engine_db, who, "job.pause", target, reason) == -1 ||
	    store_commit(engine_db) == -1)
		goto fail;
	engine_detect("job paused");
	return 0;
fail:
	store_rollback(engine_db);
	return -1;
}

int
engine_hold_resume(const char *ns, const char *id, const char *who)
{
	char		 target[512];
	int		 n;

	if (store_begin(engine_db) == -1)
		return -1;
	if ((n = store_job_clear(engine_db, STORE_JOB_PAUSE, ns, id)) == -1)
		goto fail;
	snprintf(target, sizeof(target), "job/%s/%s", ns, id);
	if (n > 0 && store_event(engine_db, who, "job.resume", target,
	    NULL) == -1)
		goto fail;
	if (store_commit(engine_db) == -1)
		return -1;
	if (n > 0)
		engine_detect("job resumed");
	return n > 0 ? 1 : 0;
fail:
	store_rollback(engine_db);
	return -1;
}
