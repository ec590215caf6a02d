/*
 * Operations in SQLite: each deployment's frozen operations and the run
 * log (store_operation.h).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "store_priv.h"
#include "store_operation.h"

static int64_t
store_operation_int(sqlite3_stmt *st, int i)
{
	return store_col_int(st, i, STORE_OPERATION_NULL);
}

int
store_operation_def_put(struct store *s, int64_t deployment,
    const struct store_operation_def *od)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "INSERT OR REPLACE INTO"
	    " deployment_operations (deployment_id, name, job_id, grp,"
	    " spec, spec_hash, revision, input_schema, sensitive,"
	    " description, confirm, error) VALUES (?1, ?2, ?3, ?4, ?5,"
	    " ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
	if (st == NULL)
		return -1;
	/* Alike on purpose: store_hosts_step_add's binds; other columns. */
	sqlite3_bind_int64(st, 1, deployment);
	store_bind_text(st, 2, od->od_name);
	store_bind_text(st, 3, od->od_job_id);
	store_bind_text(st, 4, od->od_group);
	store_bind_text(st, 5, od->od_spec);
	store_bind_text(st, 6, od->od_spec_hash);
	store_bind_text(st, 7, od->od_revision);
	store_bind_text(st, 8, od->od_schema);
	sqlite3_bind_int(st, 9, od->od_sensitive);
	store_bind_text(st, 10, od->od_description);
	store_bind_text(st, 11, od->od_confirm);
	store_bind_text(st, 12, od->od_error);
	return store_done(st);
}

int
store_operation_defs(struct store *s, int64_t deployment, const char *name,
    void (*cb)(const struct store_operation_def *, void *), void *arg)
{
	struct store_operation_def od;
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare(s, "SELECT name, job_id, grp, spec,"
	    " revision, input_schema, sensitive, description, confirm, error"
	    " FROM deployment_operations WHERE deployment_id = ?1 AND"
	    " (?2 IS NULL OR name = ?2) ORDER BY grp, name");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, deployment);
	store_bind_text(st, 2, name);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		od.od_name = store_col_text(st, 0);
		od.od_job_id = store_col_text(st, 1);
		od.od_group = store_col_text(st, 2);
		od.od_spec = store_col_text(st, 3);
		od.od_spec_hash = NULL;
		od.od_revision = store_col_text(st, 4);
		od.od_schema = store_col_text(st, 5);
		od.od_sensitive = sqlite3_column_int(st, 6);
		od.od_description = store_col_text(st, 7);
		od.od_confirm = store_col_text(st, 8);
		od.od_error = store_col_text(st, 9);
		cb(&od, arg);
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* sql prepared, with ns, job and instance bound as ?1, ?2 and ?3. */
static sqlite3_stmt *
store_operation_prepare(struct store *s, const char *sql, const char *ns,
    const char *job, const char *instance)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare_job(s, sql, ns, job)) == NULL)
		return NULL;
	store_bind_text(st, 3, instance);
	return st;
}

int64_t
store_operation_run_insert(struct store *s, int64_t deployment,
    const char *ns, const char *job, const char *instance,
    const char *operation, const char *actor, int sensitive)
{
	sqlite3_stmt	*st;

	st = store_operation_prepare(s, "INSERT INTO operation_runs"
	    " (namespace, job, instance, deployment_id, operation, actor,"
	    " sensitive, started_at, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
	    " ?7, ?8, 'running')", ns, job, instance);
	if (st == NULL)
		return -1;
	/*
	 * Alike on purpose: store_operation_run_trim opens the same way
	 * (store_operation_prepare binds the run's keys); the columns bound
	 * here are the insert's own.
	 */
	sqlite3_bind_int64(st, 4, deployment);
	store_bind_text(st, 5, operation);
	store_bind_text(st, 6, actor);
	sqlite3_bind_int(st, 7, sensitive != 0);
	sqlite3_bind_int64(st, 8, time(NULL));
	if (store_done(st) == -1)
		return -1;
	return sqlite3_last_insert_rowid(store_db(s));
}

int
store_operation_run_trim(struct store *s, const char *ns, const char *job,
    const char *instance, int keep)
{
	sqlite3_stmt	*st;

	st = store_operation_prepare(s, "DELETE FROM operation_runs WHERE id IN"
	    " (SELECT id FROM operation_runs WHERE namespace = ?1 AND"
	    " job = ?2 AND instance = ?3 ORDER BY id DESC LIMIT -1"
	    " OFFSET ?4)", ns, job, instance);
	if (st == NULL)
		return -1;
	sqlite3_bind_int(st, 4, keep);
	return store_done(st);
}

int
store_operation_run_end(struct store *s, int64_t id, const char *state,
    int exit_code, const char *output, const char *error)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "UPDATE operation_runs SET ended_at = ?2,"
	    " exit_code = ?3, output = ?4, error = ?5, state = ?6"
	    " WHERE id = ?1");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, time(NULL));
	if (exit_code >= 0)
		sqlite3_bind_int(st, 3, exit_code);
	else
		sqlite3_bind_null(st, 3);
	/* A NULL text binds NULL. */
	store_bind_text(st, 4, output);
	store_bind_text(st, 5, error);
	store_bind_text(st, 6, state);
	return store_done(st);
}

int
store_operation_run_lost(struct store *s, int64_t id, const char *why)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "UPDATE operation_runs SET state = 'lost',"
	    " ended_at = ?2, error = ?3 WHERE id = ?1 AND state = 'running'");
	if (st == NULL)
		return -1;
	/* Alike on purpose: store_leftbehind_forget's binds; other columns. */
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, time(NULL));
	store_bind_text(st, 3, why);
	return store_done(st);
}

int
store_operation_run_forget(struct store *s, const char *ns, const char *job)
{
	sqlite3_stmt	*st;

	st = store_prepare_job(s, "DELETE FROM operation_runs WHERE"
	    " namespace = ?1 AND job = ?2", ns, job);
	if (st == NULL)
		return -1;
	return store_done_changes(s, st);
}

#define STORE_OPERATION_RUN_COLUMNS	"id, namespace, job, instance," \
	" operation, deployment_id, actor, sensitive, started_at, ended_at," \
	" state, exit_code, output, error"

static void
store_operation_run_row(sqlite3_stmt *st, struct store_operation_run *r)
{
	r->or_id = sqlite3_column_int64(st, 0);
	r->or_ns = store_col_text(st, 1);
	r->or_job = store_col_text(st, 2);
	r->or_instance = store_col_text(st, 3);
	r->or_operation = store_col_text(st, 4);
	r->or_deployment = sqlite3_column_int64(st, 5);
	r->or_actor = store_col_text(st, 6);
	r->or_sensitive = sqlite3_column_int(st, 7);
	r->or_started_at = store_operation_int(st, 8);
	r->or_ended_at = store_operation_int(st, 9);
	r->or_state = store_col_text(st, 10);
	r->or_exit_code = store_operation_int(st, 11);
	r->or_output = store_col_text(st, 12);
	r->or_error = store_col_text(st, 13);
}

int
store_operation_run_get(struct store *s, int64_t id, const char *ns,
    const char *job, void (*cb)(const struct store_operation_run *, void *),
    void *arg)
{
	struct store_operation_run r;
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare(s, "SELECT " STORE_OPERATION_RUN_COLUMNS
	    " FROM operation_runs"
	    " WHERE id = ?1 AND namespace = ?2 AND (?3 IS NULL OR job = ?3)");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, ns);
	store_bind_text(st, 3, job);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_operation_run_row(st, &r);
		cb(&r, arg);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_operation_run_page(struct store *s, const char *ns, const char *job,
    const char *instance, int64_t before, int64_t limit,
    int (*cb)(const struct store_operation_run *, void *), void *arg)
{
	struct store_operation_run r;
	sqlite3_stmt	*st;
	int		 rc, stop = 0;

	st = store_operation_prepare(s, "SELECT " STORE_OPERATION_RUN_COLUMNS
	    " FROM operation_runs"
	    " WHERE namespace = ?1 AND job = ?2 AND (?3 IS NULL OR"
	    " instance = ?3) AND (?4 = 0 OR id < ?4) ORDER BY id DESC"
	    " LIMIT ?5", ns, job, instance);
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 4, before);
	sqlite3_bind_int64(st, 5, limit);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_operation_run_row(st, &r);
		stop = cb(&r, arg);
	}
	sqlite3_reset(st);
	return stop || rc == SQLITE_DONE ? 0 : -1;
}

int
store_operation_running(struct store *s,
    int (*cb)(const struct store_operation_run *, const char *, void *),
    void *arg)
{
	struct store_operation_run r;
	sqlite3_stmt	*st;
	int		 rc, stop = 0;

	st = store_prepare(s, "SELECT r.id, r.namespace, r.job,"
	    " r.operation, r.sensitive, r.started_at, o.revision FROM"
	    " operation_runs r LEFT JOIN deployment_operations o ON"
	    " o.deployment_id = r.deployment_id AND o.name = r.operation"
	    " WHERE r.state = 'running' ORDER BY r.id");
	if (st == NULL)
		return -1;
	/*
	 * Alike on purpose: store_dash_walk's loop (store_dash.c): each
	 * copies its own columns into its own row type and passes it to a
	 * callback of that type; a shared loop would need a void * adapter
	 * per type, longer than the loop.
	 */
	memset(&r, 0, sizeof(r));
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		r.or_id = sqlite3_column_int64(st, 0);
		r.or_ns = store_col_text(st, 1);
		r.or_job = store_col_text(st, 2);
		r.or_operation = store_col_text(st, 3);
		r.or_sensitive = sqlite3_column_int(st, 4);
		r.or_started_at = sqlite3_column_int64(st, 5);
		stop = cb(&r, store_col_text(st, 6), arg);
	}
	sqlite3_reset(st);
	return stop || rc == SQLITE_DONE ? 0 : -1;
}

int
store_operation_revision_busy(struct store *s, const char *ns,
    const char *rev)
{
	sqlite3_stmt	*st;
	int		 busy = 1;

	st = store_prepare(s, "SELECT count(*) FROM"
	    " operation_runs r JOIN deployment_operations o ON"
	    " o.deployment_id = r.deployment_id AND o.name = r.operation"
	    " WHERE r.state = 'running' AND r.namespace = ?1 AND"
	    " o.revision = ?2");
	if (st == NULL)
		return 1;
	store_bind_text(st, 1, ns);
	store_bind_text(st, 2, rev);
	if (sqlite3_step(st) == SQLITE_ROW)
		busy = sqlite3_column_int(st, 0) > 0;
	sqlite3_reset(st);
	return busy;
}

/*
 * Alike on purpose: store_deploy_idle_hooks (store_deploy.c), one call
 * of store_walk_names_id each; only the query differs, and it is all
 * that the function says.
 */
int
store_operation_idle_revisions(struct store *s, int64_t since,
    void (*cb)(const char *, const char *, int64_t, void *), void *arg)
{
	return store_walk_names_id(s, "SELECT o.revision, r.namespace,"
	    " max(o.deployment_id) FROM operation_runs r JOIN"
	    " deployment_operations o ON o.deployment_id = r.deployment_id AND"
	    " o.name = r.operation WHERE r.started_at > ?1 AND"
	    " o.revision IS NOT NULL AND o.revision NOT IN ("
	    "  SELECT o2.revision FROM deployment_operations o2 JOIN"
	    "  deployments d ON d.id = o2.deployment_id WHERE o2.revision IS"
	    "  NOT NULL AND (d.state NOT IN ('completed', 'failed',"
	    "  'rejected', 'superseded') OR d.id = (SELECT max(d3.id) FROM"
	    "  deployments d3 WHERE d3.namespace = d.namespace AND"
	    "  d3.job = d.job AND d3.state = 'completed')))"
	    " AND NOT EXISTS (SELECT 1 FROM operation_runs r4 JOIN"
	    "  deployment_operations o4 ON o4.deployment_id = r4.deployment_id"
	    "  AND o4.name = r4.operation WHERE r4.state = 'running' AND"
	    "  r4.namespace = r.namespace AND o4.revision = o.revision)"
	    " GROUP BY o.revision, r.namespace", since, cb, arg);
}
