/*
 * What deployments left behind, in SQLite (store_leftbehind.h).
 */
#include "config.h"

#include <stdint.h>
#include <time.h>

#include <sqlite3.h>

#include "store_priv.h"
#include "store_leftbehind.h"

/* sql prepared, with kind, env and object bound as ?1, ?2 and ?3. */
static sqlite3_stmt *
store_leftbehind_prepare(struct store *s, const char *sql, const char *kind,
    const char *env, const char *object)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, sql)) == NULL)
		return NULL;
	store_bind_text(st, 1, kind);
	store_bind_text(st, 2, env);
	store_bind_text(st, 3, object);
	return st;
}

/*
 * Alike on purpose: store_leftbehind_delete opens the same way
 * (store_leftbehind_prepare binds the three keys); this one binds the
 * error too and counts the rows changed.
 */
int
store_leftbehind_refresh(struct store *s, const char *kind, const char *env,
    const char *object, const char *error)
{
	sqlite3_stmt	*st;

	st = store_leftbehind_prepare(s, "UPDATE left_behind SET error = ?4"
	    " WHERE kind = ?1 AND environment = ?2 AND object = ?3", kind, env,
	    object);
	if (st == NULL)
		return -1;
	store_bind_text(st, 4, error);
	return store_done_changes(s, st);
}

int
store_leftbehind_insert(struct store *s, int64_t deployment,
    const char *kind, const char *env, const char *object, const char *error)
{
	sqlite3_stmt	*st;

	st = store_leftbehind_prepare(s, "INSERT INTO left_behind (kind,"
	    " environment, object, deployment_id, error, created_at) VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?6)", kind, env, object);
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 4, deployment);
	store_bind_text(st, 5, error);
	sqlite3_bind_int64(st, 6, time(NULL));
	return store_done(st);
}

int
store_leftbehind_delete(struct store *s, const char *kind, const char *env,
    const char *object)
{
	sqlite3_stmt	*st;

	st = store_leftbehind_prepare(s, "DELETE FROM left_behind WHERE"
	    " kind = ?1 AND environment = ?2 AND object = ?3", kind, env,
	    object);
	if (st == NULL)
		return -1;
	return store_done(st);
}

int
store_leftbehind_forget(struct store *s, int64_t id, int64_t deployment)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "DELETE FROM left_behind WHERE id = ?1 AND"
	    " deployment_id = ?2");
	if (st == NULL)
		return -1;
	/*
	 * Alike on purpose: store_operation_run_lost and
	 * store_deploy_hookrun_set_output bind two values as well, into
	 * other tables' columns.
	 */
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, deployment);
	return store_done_changes(s, st);
}

int
store_leftbehind_list(struct store *s, int64_t deployment,
    void (*cb)(const struct store_leftbehind_row *, void *), void *arg)
{
	struct store_leftbehind_row lr;
	sqlite3_stmt	*st;
	int		 n = 0, rc;

	st = store_prepare(s, "SELECT id, kind, object,"
	    " environment, error, created_at FROM left_behind WHERE"
	    " deployment_id = ?1 ORDER BY id");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, deployment);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		lr.lr_id = sqlite3_column_int64(st, 0);
		lr.lr_kind = store_col_text(st, 1);
		lr.lr_object = store_col_text(st, 2);
		lr.lr_env = store_col_text(st, 3);
		lr.lr_error = store_col_text(st, 4);
		lr.lr_created_at = sqlite3_column_int64(st, 5);
		cb(&lr, arg);
		n++;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? n : -1;
}
