/*
 * The deployments table and what hangs off it, in SQLite (store_deploy.h).
 * The engine saves every step here before it acts, so that recovery
 * after a crash is the same step run again.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "log.h"
#include "store_priv.h"
#include "store_deploy.h"

static int
store_deploy_int(sqlite3_stmt *st, int i, int64_t v, int64_t null_value)
{
	if (v == null_value)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_int64(st, i, v);
}

/* store_done(), saying what failed. */
static int
store_deploy_done(struct store *s, sqlite3_stmt *st, const char *what)
{
	if (store_done(st) == -1) {
		log_warnx("store: %s: %s", what, sqlite3_errmsg(store_db(s)));
		return -1;
	}
	return 0;
}

int
store_deploy_insert(struct store *s, struct deploy *d)
{
	sqlite3_stmt	*st;
	size_t		 i;
	int64_t		 now = time(NULL);

	st = store_prepare(s, "INSERT INTO deployments (kind, namespace, job,"
	    " repository, commit_id, spec, diff, spec_hash, cas_index, policy,"
	    " state, reason, retry_of, created_at, updated_at, ended_at,"
	    " commit_subject, commit_author, commit_time, path, source,"
	    " vars_source, base_commit, git_change)"
	    " VALUES ('job', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
	    " ?, ?, ?, ?, ?, ?, ?, ?)");
	if (st == NULL)
		return -1;
	/* Alike on purpose: store_deploy_list's binds; other columns. */
	store_bind_text(st, 1, d->d_ns);
	store_bind_text(st, 2, d->d_job);
	store_bind_text(st, 3, d->d_repo);
	store_bind_text(st, 4, d->d_commit);
	store_bind_text(st, 5, d->d_spec);
	store_bind_text(st, 6, d->d_diff);
	store_bind_text(st, 7, d->d_spec_hash);
	store_deploy_int(st, 8, d->d_cas_index, -1);
	store_bind_text(st, 9, d->d_policy);
	store_bind_text(st, 10, deploy_state_str(d->d_state));
	store_bind_text(st, 11, d->d_reason);
	store_deploy_int(st, 12, d->d_retry_of, 0);
	sqlite3_bind_int64(st, 13, now);
	sqlite3_bind_int64(st, 14, now);
	if (deploy_state_terminal(d->d_state))
		sqlite3_bind_int64(st, 15, now);
	else
		sqlite3_bind_null(st, 15);
	store_bind_text(st, 16, d->d_subject);
	store_bind_text(st, 17, d->d_author);
	store_deploy_int(st, 18, d->d_commit_time, 0);
	store_bind_text(st, 19, d->d_path);
	store_bind_text(st, 20, d->d_source);
	store_bind_text(st, 21, d->d_vars_source);
	store_bind_text(st, 22, d->d_base_commit);
	store_bind_text(st, 23, d->d_git_change);
	if (store_deploy_done(s, st, "insert deployment") == -1)
		return -1;
	d->d_id = sqlite3_last_insert_rowid(store_db(s));
	d->d_created_at = d->d_updated_at = now;

	for (i = 0; i < d->d_nhooks; i++) {
		struct deploy_hook *h = &d->d_hooks[i];

		st = store_prepare(s, "INSERT INTO deployment_hooks"
		    " (deployment_id, phase, position, hook_id, spec,"
		    " spec_hash, revision_job_id, timeout)"
		    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
		if (st == NULL)
			return -1;
		sqlite3_bind_int64(st, 1, d->d_id);
		store_bind_text(st, 2, h->dh_phase);
		sqlite3_bind_int(st, 3, h->dh_position);
		store_bind_text(st, 4, h->dh_hook_id);
		store_bind_text(st, 5, h->dh_spec);
		store_bind_text(st, 6, h->dh_spec_hash);
		store_bind_text(st, 7, h->dh_revision);
		sqlite3_bind_int(st, 8, h->dh_timeout);
		if (store_deploy_done(s, st, "insert deployment hook") == -1)
			return -1;
	}

	return 0;
}

int
store_deploy_set_state(struct store *s, int64_t id, enum deploy_state from,
    enum deploy_state to, const char *reason)
{
	sqlite3_stmt	*st;
	int64_t		 now = time(NULL);

	st = store_prepare(s, "UPDATE deployments SET state = ?,"
	    " reason = coalesce(?, reason), updated_at = ?,"
	    " ended_at = CASE WHEN ? THEN ? ELSE ended_at END"
	    " WHERE id = ? AND state = ?");
	if (st == NULL)
		return -1;
	store_bind_text(st, 1, deploy_state_str(to));
	store_bind_text(st, 2, reason);
	sqlite3_bind_int64(st, 3, now);
	sqlite3_bind_int(st, 4, deploy_state_terminal(to));
	sqlite3_bind_int64(st, 5, now);
	sqlite3_bind_int64(st, 6, id);
	store_bind_text(st, 7, deploy_state_str(from));
	if (store_deploy_done(s, st, "deployment transition") == -1)
		return -1;
	return sqlite3_changes(store_db(s)) > 0;
}

static int
store_deploy_update(struct store *s, const char *sql, int64_t id,
    const char *a, const char *b, int64_t x, int64_t y, const char *what)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, sql)) == NULL)
		return -1;
	/*
	 * Parameters ?1..?6 are always id, a, b, x, y, now; a statement
	 * uses the ones it needs (binding an unused index is a no-op).
	 * Alike on purpose: store_hosts_step_save binds its own columns.
	 */
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, a);
	store_bind_text(st, 3, b);
	sqlite3_bind_int64(st, 4, x);
	sqlite3_bind_int64(st, 5, y);
	sqlite3_bind_int64(st, 6, time(NULL));
	return store_deploy_done(s, st, what);
}

int
store_deploy_set_approval(struct store *s, int64_t id, const char *who,
    const char *hash)
{
	return store_deploy_update(s, "UPDATE deployments SET approved_by = ?2,"
	    " approved_hash = ?3, approved_at = ?6, updated_at = ?6"
	    " WHERE id = ?1", id, who, hash, 0, 0,
	    "record approval");
}

int
store_deploy_set_apply(struct store *s, int64_t id, int64_t started,
    int64_t timeout_at)
{
	return store_deploy_update(s, "UPDATE deployments SET"
	    " apply_started_at = ?4, timeout_at = nullif(?5, 0),"
	    " updated_at = ?6 WHERE id = ?1",
	    id, NULL, NULL, started, timeout_at, "record apply start");
}

int
store_deploy_set_register(struct store *s, int64_t id, const char *eval_id,
    int64_t job_version)
{
	return store_deploy_update(s, "UPDATE deployments SET eval_id = ?2,"
	    " job_version = nullif(?4, -1), updated_at = ?6"
	    " WHERE id = ?1",
	    id, eval_id, NULL, job_version, 0, "record register");
}

int
store_deploy_set_nomad_deployment(struct store *s, int64_t id, const char *nd)
{
	return store_deploy_update(s, "UPDATE deployments SET"
	    " nomad_deployment_id = ?2, updated_at = ?6"
	    " WHERE id = ?1",
	    id, nd, NULL, 0, 0, "record nomad deployment");
}

#define DEPLOY_COLUMNS							\
	"id, namespace, job, repository, commit_id, spec, diff, spec_hash,"\
	" cas_index, policy, state, reason, retry_of, created_at,"	\
	" updated_at, approved_by, approved_at, approved_hash,"		\
	" apply_started_at, timeout_at, nomad_deployment_id, eval_id,"	\
	" job_version, ended_at, commit_subject, commit_author,"	\
	" commit_time, path, source, vars_source, base_commit, git_change"

static int
store_deploy_row(struct store *s, sqlite3_stmt *st, struct deploy *d)
{
	sqlite3_stmt	*hs;
	const char	*state;
	int		 rc;

	memset(d, 0, sizeof(*d));
	d->d_id = sqlite3_column_int64(st, 0);
	d->d_ns = store_col_strdup(st, 1);
	d->d_job = store_col_strdup(st, 2);
	d->d_repo = store_col_strdup(st, 3);
	d->d_commit = store_col_strdup(st, 4);
	d->d_spec = store_col_strdup(st, 5);
	d->d_diff = store_col_strdup(st, 6);
	d->d_spec_hash = store_col_strdup(st, 7);
	d->d_cas_index = store_col_int(st, 8, -1);
	d->d_policy = store_col_strdup(st, 9);
	state = store_col_text(st, 10);
	if (state == NULL || deploy_state_parse(state, &d->d_state) == -1) {
		log_warnx("deployment %lld has an unknown state %s",
		    (long long)d->d_id, state != NULL ? state : "NULL");
		return -1;
	}
	d->d_reason = store_col_strdup(st, 11);
	d->d_retry_of = store_col_int(st, 12, 0);
	d->d_created_at = store_col_int(st, 13, 0);
	d->d_updated_at = store_col_int(st, 14, 0);
	d->d_approved_by = store_col_strdup(st, 15);
	d->d_approved_at = store_col_int(st, 16, 0);
	d->d_approved_hash = store_col_strdup(st, 17);
	d->d_apply_started_at = store_col_int(st, 18, 0);
	d->d_timeout_at = store_col_int(st, 19, 0);
	d->d_nomad_deployment = store_col_strdup(st, 20);
	d->d_eval_id = store_col_strdup(st, 21);
	d->d_job_version = store_col_int(st, 22, -1);
	d->d_ended_at = store_col_int(st, 23, 0);
	d->d_subject = store_col_strdup(st, 24);
	d->d_author = store_col_strdup(st, 25);
	d->d_commit_time = store_col_int(st, 26, 0);
	d->d_path = store_col_strdup(st, 27);
	d->d_source = store_col_strdup(st, 28);
	d->d_vars_source = store_col_strdup(st, 29);
	d->d_base_commit = store_col_strdup(st, 30);
	d->d_git_change = store_col_strdup(st, 31);

	hs = store_prepare(s, "SELECT phase, position, hook_id, spec,"
	    " spec_hash, revision_job_id, timeout FROM deployment_hooks"
	    " WHERE deployment_id = ? ORDER BY phase DESC, position");
	if (hs == NULL)
		return -1;
	/* "pre" sorts after "post": DESC puts pre hooks first. */
	sqlite3_bind_int64(hs, 1, d->d_id);
	while ((rc = sqlite3_step(hs)) == SQLITE_ROW &&
	    d->d_nhooks < DEPLOY_HOOKS_MAX) {
		struct deploy_hook *h = &d->d_hooks[d->d_nhooks++];

		h->dh_phase = store_col_strdup(hs, 0);
		h->dh_position = sqlite3_column_int(hs, 1);
		h->dh_hook_id = store_col_strdup(hs, 2);
		h->dh_spec = store_col_strdup(hs, 3);
		h->dh_spec_hash = store_col_strdup(hs, 4);
		h->dh_revision = store_col_strdup(hs, 5);
		h->dh_timeout = sqlite3_column_int(hs, 6);
	}
	/* A deployment whose hooks could not all be read is not read. */
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("store: read hooks of deployment %lld: %s",
		    (long long)d->d_id, store_error(s));
		sqlite3_reset(hs);
		return -1;
	}
	sqlite3_reset(hs);
	return 0;
}

static int
store_deploy_one(struct store *s, sqlite3_stmt *st, struct deploy *d)
{
	int	 rc;

	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return 1;
	}
	if (rc != SQLITE_ROW) {
		log_warnx("store: read deployment: %s",
		    sqlite3_errmsg(store_db(s)));
		sqlite3_reset(st);
		return -1;
	}
	/* Copy the row before the hooks query reuses the connection. */
	rc = store_deploy_row(s, st, d);
	sqlite3_reset(st);
	if (rc == -1) {
		deploy_free(d);
		return -1;
	}
	return 0;
}

int
store_deploy_load(struct store *s, int64_t id, struct deploy *d)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "SELECT " DEPLOY_COLUMNS
	    " FROM deployments WHERE id = ?");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	return store_deploy_one(s, st, d);
}

/* The deployment of ns/job that sql (?1 ns, ?2 job) selects. */
static int
store_deploy_job_one(struct store *s, const char *sql, const char *ns,
    const char *job, struct deploy *d)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare_job(s, sql, ns, job)) == NULL)
		return -1;
	return store_deploy_one(s, st, d);
}

int
store_deploy_active(struct store *s, const char *ns, const char *job,
    struct deploy *d)
{
	return store_deploy_job_one(s, "SELECT " DEPLOY_COLUMNS
	    " FROM deployments WHERE namespace = ? AND job = ? AND state NOT IN"
	    " ('completed', 'failed', 'rejected', 'superseded')", ns, job, d);
}

int
store_deploy_last_terminal(struct store *s, const char *ns, const char *job,
    struct deploy *d)
{
	return store_deploy_job_one(s, "SELECT " DEPLOY_COLUMNS
	    " FROM deployments WHERE namespace = ? AND job = ? AND state IN"
	    " ('completed', 'failed', 'rejected', 'superseded')"
	    " ORDER BY id DESC LIMIT 1", ns, job, d);
}

int
store_deploy_active_ids(struct store *s, int64_t **idsp, size_t *np)
{
	sqlite3_stmt	*st;
	int64_t		*ids = NULL;
	size_t		 n = 0;
	int		 rc;

	/*
	 * Plans' deployments are master/hosts.c's.  The states are named
	 * (not "NOT IN" the ended ones) so that the state index finds the
	 * few active rows among a million ended ones.
	 */
	st = store_prepare(s, "SELECT id FROM deployments WHERE state IN"
	    " ('pending_approval', 'pre_hooks', 'registering',"
	    " 'waiting_health', 'awaiting_promotion', 'post_hooks',"
	    " 'preflight', 'deploying') AND kind = 'job' ORDER BY id");
	if (st == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* cppcheck-suppress memleakOnRealloc ; fatal() exits */
		if ((ids = reallocarray(ids, n + 1, sizeof(*ids))) == NULL)
			fatal("reallocarray");
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(ids);
		return -1;
	}
	*idsp = ids;
	*np = n;
	return 0;
}

int
store_deploy_hookrun_get(struct store *s, const char *token,
    struct hook_run *hr)
{
	sqlite3_stmt	*st;
	int		 rc;

	memset(hr, 0, sizeof(*hr));
	st = store_prepare(s, "SELECT id, idempotency_token,"
	    " dispatched_job_id, state, exit_code, error, started_at, ended_at,"
	    " output FROM hook_runs WHERE idempotency_token = ?");
	if (st == NULL)
		return -1;
	store_bind_text(st, 1, token);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		hr->hr_id = sqlite3_column_int64(st, 0);
		hr->hr_token = store_col_strdup(st, 1);
		hr->hr_child = store_col_strdup(st, 2);
		hr->hr_state = store_col_strdup(st, 3);
		hr->hr_exit_code = (int)store_col_int(st, 4, -1);
		hr->hr_error = store_col_strdup(st, 5);
		hr->hr_started_at = store_col_int(st, 6, 0);
		hr->hr_ended_at = store_col_int(st, 7, 0);
		hr->hr_output = store_col_strdup(st, 8);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : -1;
}

int
store_deploy_hookrun_create(struct store *s, int64_t deployment,
    const char *phase, int position, const char *token)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "INSERT INTO hook_runs (deployment_id, phase,"
	    " position, idempotency_token, state, started_at)"
	    " VALUES (?, ?, ?, ?, 'pending', ?)");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, deployment);
	store_bind_text(st, 2, phase);
	sqlite3_bind_int(st, 3, position);
	store_bind_text(st, 4, token);
	sqlite3_bind_int64(st, 5, time(NULL));
	return store_deploy_done(s, st, "insert hook run");
}

int
store_deploy_hookrun_update(struct store *s, const char *token,
    const char *state, const char *child, int exit_code, const char *error)
{
	sqlite3_stmt	*st;
	int		 terminal;

	terminal = strcmp(state, "succeeded") == 0 ||
	    strcmp(state, "failed") == 0;
	st = store_prepare(s, "UPDATE hook_runs SET state = ?,"
	    " dispatched_job_id = coalesce(?, dispatched_job_id),"
	    " exit_code = coalesce(?, exit_code), error = coalesce(?, error),"
	    " ended_at = CASE WHEN ? THEN ? ELSE ended_at END"
	    " WHERE idempotency_token = ?");
	if (st == NULL)
		return -1;
	store_bind_text(st, 1, state);
	store_bind_text(st, 2, child);
	store_deploy_int(st, 3, exit_code, -1);
	store_bind_text(st, 4, error);
	sqlite3_bind_int(st, 5, terminal);
	sqlite3_bind_int64(st, 6, time(NULL));
	store_bind_text(st, 7, token);
	return store_deploy_done(s, st, "update hook run");
}

int
store_deploy_hookrun_set_output(struct store *s, const char *token,
    const char *output)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "UPDATE hook_runs SET output = ?"
	    " WHERE idempotency_token = ?");
	if (st == NULL)
		return -1;
	store_bind_text(st, 1, output);
	store_bind_text(st, 2, token);
	return store_deploy_done(s, st, "keep hook output");
}

int
store_deploy_set_health(struct store *s, int64_t id, const char *progress)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "UPDATE deployments SET health = ? WHERE id = ?");
	if (st == NULL)
		return -1;
	store_bind_text(st, 1, progress);
	sqlite3_bind_int64(st, 2, id);
	return store_deploy_done(s, st, "keep health progress");
}

char *
store_deploy_health(struct store *s, int64_t id)
{
	sqlite3_stmt	*st;
	char		*text = NULL;

	st = store_prepare(s, "SELECT health FROM deployments WHERE id = ?");
	if (st == NULL)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		text = store_col_strdup(st, 0);
	sqlite3_reset(st);
	return text;
}

int
store_deploy_hookrun_clear(struct store *s, const char *token)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "DELETE FROM hook_runs WHERE"
	    " idempotency_token = ?");
	if (st == NULL)
		return -1;
	store_bind_text(st, 1, token);
	return store_deploy_done(s, st, "clear hook run");
}


int
store_deploy_last_source(struct store *s, const char *ns, const char *job,
    void (*cb)(const struct store_deploy_source *, void *), void *arg)
{
	struct store_deploy_source ds;
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare_job(s, "SELECT commit_id, path, source,"
	    " vars_source FROM deployments WHERE namespace = ? AND job = ? AND"
	    " state = 'completed' AND source IS NOT NULL"
	    " ORDER BY id DESC LIMIT 1", ns, job);
	if (st == NULL)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ds.ds_commit = store_col_text(st, 0);
		ds.ds_path = store_col_text(st, 1);
		ds.ds_source = store_col_text(st, 2);
		ds.ds_vars_source = store_col_text(st, 3);
		cb(&ds, arg);
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int
store_deploy_last_ended(struct store *s, const char *ns, const char *job,
    void (*cb)(int64_t, const char *, const char *, void *), void *arg)
{
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare_job(s, "SELECT id, state, spec_hash FROM"
	    " deployments WHERE namespace = ? AND job = ? AND state IN"
	    " ('completed', 'failed', 'rejected') ORDER BY id DESC LIMIT 1",
	    ns, job);
	if (st == NULL)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		cb(sqlite3_column_int64(st, 0),
		    store_col_text(st, 1),
		    store_col_text(st, 2), arg);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : -1;
}

/* A listed row: only the fields a list shows. */
static void
store_deploy_list_row(sqlite3_stmt *st, struct deploy *d)
{
	const char	*state;

	memset(d, 0, sizeof(*d));
	d->d_id = sqlite3_column_int64(st, 0);
	d->d_ns = store_col_strdup(st, 1);
	d->d_job = store_col_strdup(st, 2);
	d->d_repo = store_col_strdup(st, 3);
	state = store_col_text(st, 4);
	if (state == NULL || deploy_state_parse(state, &d->d_state) == -1)
		d->d_state = DS_FAILED;
	d->d_commit = store_col_strdup(st, 5);
	d->d_spec_hash = store_col_strdup(st, 6);
	d->d_policy = store_col_strdup(st, 7);
	d->d_created_at = store_col_int(st, 8, 0);
	d->d_updated_at = store_col_int(st, 9, 0);
	d->d_reason = store_col_strdup(st, 10);
	d->d_approved_by = store_col_strdup(st, 11);
	d->d_approved_at = store_col_int(st, 12, 0);
	d->d_retry_of = store_col_int(st, 13, 0);
	d->d_nomad_deployment = store_col_strdup(st, 14);
	d->d_job_version = store_col_int(st, 15, -1);
	d->d_timeout_at = store_col_int(st, 16, 0);
	d->d_ended_at = store_col_int(st, 17, 0);
}

int
store_deploy_list(struct store *s, const struct store_deploy_filter *f,
    int (*cb)(struct deploy *, void *), void *arg)
{
	sqlite3_stmt	*st;
	struct deploy	 d;
	int		 rc, stop = 0;

	/*
	 * Newest first, in one pass the callback stops.  Only the listed
	 * columns are read: never the spec, the diff or the hooks.
	 */
	st = store_prepare(s, "SELECT id, namespace, job,"
	    " repository, state, commit_id, spec_hash, policy, created_at,"
	    " updated_at, reason, approved_by, approved_at, retry_of,"
	    " nomad_deployment_id, job_version, timeout_at, ended_at"
	    " FROM deployments WHERE (?1 IS NULL OR state = ?1) AND"
	    " (?2 IS NULL OR namespace = ?2) AND (?3 IS NULL OR job = ?3) AND"
	    " (?4 = 0 OR id < ?4) ORDER BY id DESC");
	if (st == NULL)
		return -1;
	/* Alike on purpose: store_deploy_insert's binds; other columns. */
	store_bind_text(st, 1, f->df_state);
	store_bind_text(st, 2, f->df_ns);
	store_bind_text(st, 3, f->df_job);
	sqlite3_bind_int64(st, 4, f->df_before);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (f->df_readable != NULL && !f->df_readable(
		    store_col_text(st, 1), arg))
			continue;
		store_deploy_list_row(st, &d);
		stop = cb(&d, arg);
		deploy_free(&d);
		if (stop)
			break;
	}
	sqlite3_reset(st);
	/* A read that failed midway is not the end of the list. */
	return stop || rc == SQLITE_DONE ? 0 : -1;
}

int
store_deploy_count_states(struct store *s,
    void (*cb)(const char *, int64_t, int64_t, int64_t, void *), void *arg)
{
	sqlite3_stmt	*st;
	const char	*name;
	int		 rc;

	st = store_prepare(s, "SELECT state, COUNT(*),"
	    " MIN(created_at), MIN(updated_at) FROM deployments"
	    " GROUP BY state");
	if (st == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((name = store_col_text(st, 0)) == NULL)
			continue;
		cb(name, sqlite3_column_int64(st, 1),
		    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
		    arg);
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_deploy_idle_hooks(struct store *s, int64_t since,
    void (*cb)(const char *, const char *, int64_t, void *), void *arg)
{
	return store_walk_names_id(s, "SELECT h.revision_job_id,"
	    " d.namespace, max(d.id) FROM deployment_hooks h JOIN deployments d"
	    " ON d.id = h.deployment_id WHERE d.state IN ('completed',"
	    " 'failed', 'rejected', 'superseded') AND d.ended_at > ? AND"
	    " h.revision_job_id NOT IN (SELECT h2.revision_job_id FROM"
	    " deployment_hooks h2 JOIN deployments d2 ON d2.id ="
	    " h2.deployment_id WHERE d2.state NOT IN ('completed', 'failed',"
	    " 'rejected', 'superseded')) GROUP BY h.revision_job_id,"
	    " d.namespace", since, cb, arg);
}

int
store_deploy_registered(struct store *s,
    void (*cb)(const char *, const char *, int64_t, void *), void *arg)
{
	/* The last registered deployment per job (store.c, version 5). */
	return store_walk_names_id(s, "SELECT namespace, job, last_id"
	    " FROM registered_jobs ORDER BY namespace, job", 0, cb, arg);
}

int
store_deploy_acknowledged(struct store *s, int64_t id)
{
	sqlite3_stmt	*st;
	char		 target[64];
	int		 rc;

	snprintf(target, sizeof(target), "deployment/%lld", (long long)id);
	st = store_prepare(s, "SELECT 1 FROM events WHERE"
	    " target = ? AND action = 'deployment.acknowledge' LIMIT 1");
	if (st == NULL)
		return -1;
	store_bind_text(st, 1, target);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_deploy_last_completed(struct store *s, const char *ns, const char *job,
    int64_t *id)
{
	sqlite3_stmt	*st;
	int		 rc;

	*id = 0;
	st = store_prepare_job(s, "SELECT max(id) FROM deployments WHERE"
	    " namespace = ?1 AND job = ?2 AND kind = 'job' AND"
	    " state = 'completed'", ns, job);
	if (st == NULL)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : -1;
}
