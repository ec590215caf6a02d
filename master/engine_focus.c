/*
 * A focused detection cycle: after a push of a few job files, only the
 * jobs of those files are read, planned and decided.  Every other job
 * keeps its last plan (as the skip of engine_survey.c would, without
 * asking Nomad's job lists: the watches of engine_watch.c start a full
 * cycle of their own when a job moves behind nops' back) and, when
 * nothing its decision reads has moved since the last cycle's decisions,
 * its last decision too.  The cycle still reads every file (from what
 * their contents gave before) and classifies and hashes every job, so
 * that the job table is the one a full cycle makes.
 *
 * A cycle is focused only when all of this holds, else it is a full one:
 *
 * - it was started by new snapshots alone (no reload, no request, no
 *   pause, no retry after a store error, no job moved in Nomad ...), and
 *   the last cycle decided every job without an error, every file parsed
 *   and Nomad answered;
 * - there are plans in memory, no doubt (survey_doubt), the
 *   replan-interval has not passed, no request of a person waits, and
 *   the job list of every managed namespace is watched and answering;
 * - each repository has what it had but for the content of job files
 *   and their variables files (no file added, removed or renamed, no
 *   plan, schema or Nix file changed); and
 * - each changed file declared one managed job that no other job names
 *   as a hook or an operation, and once parsed declares the same one:
 *   the cycle's managed jobs are the last cycle's.
 *
 * A job whose last plan cannot stand (its hash changed, its plan
 * failed, ...) is planned as in a full cycle.  Decisions: the changed
 * files' jobs and every job planned are decided; the others keep their
 * last decision when the store's decision tables (store_decide_gen) did
 * not move since the last cycle's decisions, the job has no sync window
 * (its decision depends on the time) and no request waits; otherwise
 * they are decided as in a full cycle.  See nopsd.8, DETECTION.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "conf.h"
#include "store.h"
#include "repo.h"
#include "meta.h"
#include "engine.h"
#include "engine_detect.h"

/* More changed job files than this: a full cycle (little to gain). */
#define FOCUS_FILES_MAX		16

static void
focus_add(struct dcycle *dc, const struct repo_snap *snap,
    const struct repo_file *rf)
{
	struct dfchanged	*fc;
	size_t			 i;

	for (i = 0; i < dc->dc_nfchanged; i++)
		if (dc->dc_fchanged[i].fc_file == rf)
			return;
	dc->dc_fchanged = reallocarray(dc->dc_fchanged, dc->dc_nfchanged + 1,
	    sizeof(*dc->dc_fchanged));
	if (dc->dc_fchanged == NULL)
		fatal("reallocarray");
	fc = &dc->dc_fchanged[dc->dc_nfchanged++];
	fc->fc_snap = snap;
	fc->fc_file = rf;
}

/*
 * The job files of snap that changed since old: 0, or -1 when anything
 * else changed.
 */
static int
focus_diff(struct dcycle *dc, const struct repo_snap *old,
    const struct repo_snap *snap)
{
	const struct repo_file	*a, *b;
	size_t			 i, j;

	if (strcmp(old->rs_repo, snap->rs_repo) != 0 ||
	    old->rs_nfiles != snap->rs_nfiles)
		return -1;
	for (i = 0; i < snap->rs_nfiles; i++) {
		a = &old->rs_files[i];
		b = &snap->rs_files[i];
		if (a->rf_kind != b->rf_kind ||
		    strcmp(a->rf_path, b->rf_path) != 0 ||
		    (a->rf_vars == NULL) != (b->rf_vars == NULL))
			return -1;
		if (strcmp(a->rf_sha256, b->rf_sha256) == 0)
			continue;
		if (b->rf_kind == GITW_FILE_JOB)
			focus_add(dc, snap, b);
		else if (b->rf_kind == GITW_FILE_VARS) {
			for (j = 0; j < snap->rs_nfiles; j++)
				if (snap->rs_files[j].rf_vars == b)
					focus_add(dc, snap, &snap->rs_files[j]);
		} else
			return -1;
		if (dc->dc_nfchanged > FOCUS_FILES_MAX)
			return -1;
	}
	return 0;
}

/* Was the job in the last cycle's queue (a managed job to decide)? */
static int
focus_was_queued(const struct ejob *ej)
{
	return ej->ej_meta.jm_role == META_MANAGED && ej->ej_in_ns &&
	    ej->ej_error == NULL && !ej->ej_unparsed;
}

/* Does any job name id (in ns) as a hook or an operation? */
static int
focus_named(const char *ns, const char *id)
{
	struct ejob	*ej;
	size_t		 i;

	RB_FOREACH(ej, ejobs, &engine_env->e_jobs) {
		if (strcmp(ej->ej_ns, ns) != 0)
			continue;
		for (i = 0; i < ej->ej_meta.jm_npre; i++)
			if (strcmp(ej->ej_meta.jm_pre[i], id) == 0)
				return 1;
		for (i = 0; i < ej->ej_meta.jm_npost; i++)
			if (strcmp(ej->ej_meta.jm_post[i], id) == 0)
				return 1;
		for (i = 0; i < ej->ej_meta.jm_nops; i++)
			if (strcmp(ej->ej_meta.jm_ops[i], id) == 0)
				return 1;
	}
	return 0;
}

/* Each changed file declared one managed job that no other job names. */
static int
focus_old_jobs(struct dcycle *dc)
{
	struct dfchanged	*fc;
	struct ejob		*ej;
	size_t			 i, n;

	for (i = 0; i < dc->dc_nfchanged; i++) {
		fc = &dc->dc_fchanged[i];
		n = 0;
		RB_FOREACH(ej, ejobs, &engine_env->e_jobs) {
			if (strcmp(ej->ej_path, fc->fc_file->rf_path) != 0 ||
			    strcmp(ej->ej_repo, fc->fc_snap->rs_repo) != 0)
				continue;
			if (!focus_was_queued(ej) || !ej->ej_planned ||
			    ej->ej_plan_error != NULL ||
			    focus_named(ej->ej_ns, ej->ej_id))
				return -1;
			n++;
		}
		if (n != 1)
			return -1;
	}
	return 0;
}

/* Why this cycle cannot be focused, or NULL. */
static const char *
focus_why_not(struct dcycle *dc)
{
	struct engine	*e = engine_env;
	size_t		 i;

	if (engine_no_skip())
		return "test hook";
	if (e->e_asked_other)
		return "not started by new snapshots alone";
	if (!e->e_last_clean || dc->dc_incomplete)
		return "the last cycle or this one is incomplete";
	if (e->e_nomad_version == NULL || e->e_doubt != NULL ||
	    time(NULL) - e->e_full_at >= engine_conf()->replan_interval)
		return "a full re-plan is due";
	if (decide_requests_pending())
		return "a request waits";
	if (!watch_current())
		return "a job list is not watched";
	if (dc->dc_nsnaps != e->e_nsnaps)
		return "repositories changed";
	for (i = 0; i < dc->dc_nsnaps; i++)
		if (dc->dc_snaps[i] != e->e_snaps[i] &&
		    focus_diff(dc, e->e_snaps[i], dc->dc_snaps[i]) == -1)
			return "files other than job files changed";
	if (focus_old_jobs(dc) == -1)
		return "a changed file's job is not a plain managed job";
	return NULL;
}

int
focus_begin(struct dcycle *dc)
{
	const char	*why;

	why = focus_why_not(dc);
	engine_env->e_asked_other = 0;
	dc->dc_prev_queued = engine_env->e_last_queued;
	if (why != NULL) {
		free(dc->dc_fchanged);
		dc->dc_fchanged = NULL;
		dc->dc_nfchanged = 0;
		log_debug("detection: a full cycle: %s", why);
		return 0;
	}
	dc->dc_focus = 1;
	return 1;
}

static int
focus_changed(struct dcycle *dc, const struct ejob *ej)
{
	size_t	 i;

	for (i = 0; i < dc->dc_nfchanged; i++)
		if (dc->dc_fchanged[i].fc_file == ej->ej_file)
			return 1;
	return 0;
}

/*
 * Can the last plan of old stand for this cycle's of ej?  What the skip
 * asks (engine_survey.c), but the live job: the watches stand for it.
 */
static int
focus_plan_same(const struct ejob *ej, const struct ejob *old)
{
	return strcmp(old->ej_hash, ej->ej_hash) == 0 && old->ej_planned &&
	    old->ej_plan_error == NULL && !old->ej_unparsed &&
	    old->ej_live_index != ENGINE_INDEX_UNSURE;
}

int
focus_classified(struct dcycle *dc)
{
	struct ejob	*ej, *old;
	size_t		 i, n;

	/* The same managed jobs as the last cycle's, or a full cycle. */
	if (dc->dc_nqueue != dc->dc_prev_queued)
		goto full;
	for (i = 0; i < dc->dc_nqueue; i++) {
		ej = dc->dc_queue[i];
		if ((old = engine_job(ej->ej_ns, ej->ej_id)) == NULL ||
		    !focus_was_queued(old))
			goto full;
	}
	for (i = n = 0; i < dc->dc_nqueue; i++) {
		ej = dc->dc_queue[i];
		old = engine_job(ej->ej_ns, ej->ej_id);
		if (!focus_changed(dc, ej) && focus_plan_same(ej, old)) {
			survey_reuse(dc, ej, old);
			continue;
		}
		/* Read and planned, then decided, as in a full cycle. */
		ej->ej_focus = 1;
		dc->dc_queue[n++] = ej;
	}
	dc->dc_nqueue = n;
	log_debug("detection: focused on %zu changed files, %zu jobs to plan",
	    dc->dc_nfchanged, n);
	detect_plan(dc);
	return 1;
full:
	log_debug("detection: the changed files declare other jobs: a full "
	    "cycle");
	dc->dc_focus = 0;
	return 0;
}

/* The cycle ends: what it read, for the next one to compare. */
void
focus_end(struct dcycle *dc)
{
	struct engine	*e = engine_env;
	size_t		 i;

	for (i = 0; i < e->e_nsnaps; i++)
		repo_snap_unref(e->e_snaps[i]);
	free(e->e_snaps);
	e->e_snaps = dc->dc_snaps;
	e->e_nsnaps = dc->dc_nsnaps;
	dc->dc_snaps = NULL;
	dc->dc_nsnaps = 0;
	e->e_last_clean = !dc->dc_incomplete && dc->dc_outage == NULL &&
	    dc->dc_nerrs == 0 && !dc->dc_orphans_bad && !e->e_decide_failed;
	e->e_decide_failed = 0;
	e->e_last_focused = dc->dc_focus;
	e->e_last_decided = dc->dc_decided;
	if (dc->dc_focus)
		e->e_total_focused++;
	free(dc->dc_fchanged);
	dc->dc_fchanged = NULL;
}
