/*
 * The store's rows of deploy plans' hosts: plan deployments, their host
 * steps, and host operation runs left running (store_hosts.h).
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "log.h"
#include "store_priv.h"
#include "store_hosts.h"

#define SH_DEPLOY_COLS	"id, job, state, spec_hash, commit_id, spec"
#define SH_PLAN_WHERE	"kind = 'plan' AND namespace = '' AND job = ?1"
#define SH_STEP_COLS	"id, phase_index, phase, position, host, step," \
			" goal, system, state, error, started_at, ended_at"

/*
 * Alike on purpose: the row readers of store_auth.c and
 * store_operation.c: each copies its own columns into its own struct.
 */
static void
store_hosts_deploy_row(sqlite3_stmt *st, struct store_hosts_deploy *hd)
{
	hd->hd_id = sqlite3_column_int64(st, 0);
	hd->hd_plan = store_col_text(st, 1);
	hd->hd_state = store_col_text(st, 2);
	hd->hd_spec_hash = store_col_text(st, 3);
	hd->hd_commit = store_col_text(st, 4);
	hd->hd_spec = store_col_text(st, 5);
	hd->hd_speclen = (size_t)sqlite3_column_bytes(st, 5);
}

static void
store_hosts_step_row(sqlite3_stmt *st, struct store_hosts_step *sh)
{
	sh->sh_id = sqlite3_column_int64(st, 0);
	sh->sh_phase_index = sqlite3_column_int(st, 1);
	sh->sh_phase = store_col_text(st, 2);
	sh->sh_position = sqlite3_column_int(st, 3);
	sh->sh_host = store_col_text(st, 4);
	sh->sh_step = store_col_text(st, 5);
	sh->sh_goal = store_col_text(st, 6);
	sh->sh_system = store_col_text(st, 7);
	sh->sh_state = store_col_text(st, 8);
	sh->sh_error = store_col_text(st, 9);
	sh->sh_started_at = store_col_int(st, 10, 0);
	sh->sh_ended_at = store_col_int(st, 11, 0);
}

/* The first row of a bound deployment query to cb: 1, 0 or -1. */
static int
store_hosts_deploy_one(sqlite3_stmt *st,
    int (*cb)(const struct store_hosts_deploy *, void *), void *arg)
{
	struct store_hosts_deploy	 hd;
	int				 rc;

	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_hosts_deploy_row(st, &hd);
		(void)cb(&hd, arg);
	}
	(void)sqlite3_reset(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/*
 * The rows of the step query sql, with ?1 bound to deployment, to cb
 * until it returns non-zero: the number passed, or -1.
 */
static int
store_hosts_step_walk(struct store *s, const char *sql, int64_t deployment,
    int (*cb)(const struct store_hosts_step *, void *), void *arg)
{
	struct store_hosts_step	 sh;
	sqlite3_stmt		*st;
	int			 n = 0, rc = SQLITE_DONE, stop = 0;

	if ((st = store_prepare(s, sql)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, deployment);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_hosts_step_row(st, &sh);
		n++;
		stop = cb(&sh, arg);
	}
	(void)sqlite3_reset(st);
	return stop || rc == SQLITE_DONE ? n : -1;
}

/* Plan deployments. */

int
store_hosts_plan_find(struct store *s, const char *plan,
    enum store_hosts_which which,
    int (*cb)(const struct store_hosts_deploy *, void *), void *arg)
{
	sqlite3_stmt	*st;
	const char	*sql;

	switch (which) {
	case STORE_HOSTS_ACTIVE:
		sql = "SELECT " SH_DEPLOY_COLS " FROM deployments WHERE "
		    SH_PLAN_WHERE " AND state NOT IN ('completed', 'failed',"
		    " 'rejected', 'superseded')";
		break;
	case STORE_HOSTS_LAST_ENDED:
		sql = "SELECT " SH_DEPLOY_COLS " FROM deployments WHERE "
		    SH_PLAN_WHERE " AND state IN ('completed', 'failed',"
		    " 'rejected') ORDER BY id DESC LIMIT 1";
		break;
	case STORE_HOSTS_LAST_COMPLETED:
		sql = "SELECT " SH_DEPLOY_COLS " FROM deployments WHERE "
		    SH_PLAN_WHERE " AND state = 'completed' ORDER BY id DESC"
		    " LIMIT 1";
		break;
	default:
		return -1;
	}
	if ((st = store_prepare(s, sql)) == NULL)
		return -1;
	store_bind_text(st, 1, plan);
	return store_hosts_deploy_one(st, cb, arg);
}

int
store_hosts_deploy_get(struct store *s, int64_t id,
    int (*cb)(const struct store_hosts_deploy *, void *), void *arg)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "SELECT " SH_DEPLOY_COLS " FROM deployments"
	    " WHERE id = ?1 AND kind = 'plan'")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	return store_hosts_deploy_one(st, cb, arg);
}

int
store_hosts_deploy_running(struct store *s, int64_t *ids, size_t max)
{
	sqlite3_stmt	*st;
	size_t		 n = 0;
	int		 rc = SQLITE_DONE;

	if ((st = store_prepare(s, "SELECT id FROM deployments WHERE"
	    " kind = 'plan' AND state IN ('deploying', 'preflight')"
	    " ORDER BY id")) == NULL)
		return -1;
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
		ids[n++] = sqlite3_column_int64(st, 0);
	(void)sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? (int)n : -1;
}

int
store_hosts_deploy_create(struct store *s, const struct store_hosts_new *hn,
    int64_t *id)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "INSERT INTO deployments (kind,"
	    " namespace, job, repository, commit_id, spec, diff, spec_hash,"
	    " policy, state, reason, created_at, updated_at, apply_started_at)"
	    " VALUES ('plan', '', ?1, ?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?8, ?8,"
	    " ?9)")) == NULL)
		return -1;
	store_bind_text(st, 1, hn->hn_plan);
	store_bind_text(st, 2, hn->hn_commit);
	store_bind_text(st, 3, hn->hn_spec);
	store_bind_text(st, 4, hn->hn_spec_hash);
	store_bind_text(st, 5, hn->hn_policy);
	store_bind_text(st, 6, hn->hn_state);
	store_bind_text(st, 7, hn->hn_reason);
	sqlite3_bind_int64(st, 8, hn->hn_now);
	if (hn->hn_started)
		sqlite3_bind_int64(st, 9, hn->hn_now);
	else
		sqlite3_bind_null(st, 9);
	if (store_done(st) == -1)
		return -1;
	*id = sqlite3_last_insert_rowid(store_db(s));
	return 0;
}

int
store_hosts_deploy_started(struct store *s, int64_t id, int64_t now)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "UPDATE deployments SET"
	    " apply_started_at = coalesce(apply_started_at, ?1)"
	    " WHERE id = ?2")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int64(st, 2, id);
	return store_done(st);
}

/* Host steps. */

int
store_hosts_step_add(struct store *s, int64_t deployment,
    const struct store_hosts_step *sh)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "INSERT INTO deployment_steps"
	    " (deployment_id, phase_index, phase, position, host, step,"
	    " system, state, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
	    " coalesce(?8, 'pending'), ?9)")) == NULL)
		return -1;
	/* Alike on purpose: store_operation_def_put's binds; other columns. */
	sqlite3_bind_int64(st, 1, deployment);
	sqlite3_bind_int(st, 2, sh->sh_phase_index);
	store_bind_text(st, 3, sh->sh_phase);
	sqlite3_bind_int(st, 4, sh->sh_position);
	store_bind_text(st, 5, sh->sh_host);
	store_bind_text(st, 6, sh->sh_step);
	store_bind_text(st, 7, sh->sh_system);
	store_bind_text(st, 8, sh->sh_state);
	store_bind_text(st, 9, sh->sh_error);
	return store_done(st);
}

int
store_hosts_steps_walk(struct store *s, int64_t deployment,
    int (*cb)(const struct store_hosts_step *, void *), void *arg)
{
	return store_hosts_step_walk(s, "SELECT " SH_STEP_COLS " FROM"
	    " deployment_steps WHERE deployment_id = ?1 ORDER BY phase_index,"
	    " position", deployment, cb, arg);
}

int
store_hosts_step_next(struct store *s, int64_t deployment,
    int (*cb)(const struct store_hosts_step *, void *), void *arg)
{
	/* Preflight tests (phase_index -1) come first. */
	return store_hosts_step_walk(s, "SELECT " SH_STEP_COLS " FROM"
	    " deployment_steps WHERE deployment_id = ?1 AND state NOT IN"
	    " ('succeeded', 'skipped') ORDER BY phase_index, position"
	    " LIMIT 1", deployment, cb, arg);
}

int
store_hosts_step_save(struct store *s, int64_t id, const char *step,
    const char *state, const char *goal, const char *error, int64_t now,
    int terminal)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "UPDATE deployment_steps SET step = ?1,"
	    " state = ?2, goal = ?3, error = ?4,"
	    " started_at = coalesce(started_at, ?5),"
	    " ended_at = CASE WHEN ?6 THEN ?5 ELSE NULL END WHERE id = ?7")) ==
	    NULL)
		return -1;
	/* Alike on purpose: store_deploy_update's binds; other columns. */
	store_bind_text(st, 1, step);
	store_bind_text(st, 2, state);
	store_bind_text(st, 3, goal);
	store_bind_text(st, 4, error);
	sqlite3_bind_int64(st, 5, now);
	sqlite3_bind_int(st, 6, terminal);
	sqlite3_bind_int64(st, 7, id);
	return store_done(st);
}

/* Operation runs. */

int
store_hosts_runs_lost(struct store *s, int64_t now)
{
	sqlite3_stmt	*st;

	/* The runs of hosts are those of namespace "". */
	if ((st = store_prepare(s, "UPDATE operation_runs SET state = 'lost',"
	    " ended_at = ?1, error = 'nopsd stopped while it ran'"
	    " WHERE namespace = '' AND state = 'running'")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, now);
	return store_done(st);
}
