/*
 * A job's pause and suspend in SQLite (store_job.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "log.h"
#include "store_priv.h"
#include "store_job.h"

static void
store_job_bind(sqlite3_stmt *st, const char *ns, const char *job)
{
	sqlite3_bind_text(st, 1, ns, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, job, -1, SQLITE_TRANSIENT);
}

int
store_job_pause_get(struct store *s, const char *ns, const char *job,
    char **who, char **reason, int64_t *since)
{
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare(s, "SELECT who, reason, created_at FROM"
	    " holds WHERE namespace = ? AND job = ? AND kind = 'pause'");
	if (st == NULL)
		return -1;
	store_job_bind(st, ns, job);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (who != NULL)
			*who = strdup((const char *)sqlite3_column_text(st, 0));
		if (reason != NULL)
			*reason = strdup((const char *)sqlite3_column_text(st,
			    1));
		if (since != NULL)
			*since = sqlite3_column_int64(st, 2);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_job_pause_set(struct store *s, const char *ns, const char *job,
    const char *who, const char *reason)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "INSERT INTO holds (namespace, job,"
	    " kind, who, reason, created_at) VALUES (?, ?, 'pause', ?, ?, ?)"
	    " ON CONFLICT (namespace, job, kind) DO UPDATE SET who ="
	    " excluded.who, reason = excluded.reason");
	if (st == NULL)
		return -1;
	store_job_bind(st, ns, job);
	sqlite3_bind_text(st, 3, who, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, time(NULL));
	return store_done(st);
}

int
store_job_pause_clear(struct store *s, const char *ns, const char *job)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "DELETE FROM holds WHERE namespace = ?"
	    " AND job = ? AND kind = 'pause'");
	if (st == NULL)
		return -1;
	store_job_bind(st, ns, job);
	if (store_done(st) == -1)
		return -1;
	return sqlite3_changes(store_db(s));
}

int
store_job_suspend_get(struct store *s, const char *ns, const char *job,
    char **who, char **reason, int64_t *since)
{
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare(s, "SELECT who, reason, created_at"
	    " FROM suspends WHERE namespace = ?1 AND job = ?2");
	if (st == NULL)
		return -1;
	store_job_bind(st, ns, job);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (who != NULL && (*who = strdup((const char *)
		    sqlite3_column_text(st, 0))) == NULL)
			fatal("strdup");
		if (reason != NULL && (*reason = strdup((const char *)
		    sqlite3_column_text(st, 1))) == NULL)
			fatal("strdup");
		if (since != NULL)
			*since = sqlite3_column_int64(st, 2);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_job_suspend_set(struct store *s, const char *ns, const char *job,
    const char *who, const char *reason)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "INSERT INTO suspends (namespace, job,"
	    " who, reason, created_at) VALUES (?1, ?2, ?3, ?4, ?5)"
	    " ON CONFLICT (namespace, job) DO UPDATE SET"
	    " who = excluded.who, reason = excluded.reason");
	if (st == NULL)
		return -1;
	store_job_bind(st, ns, job);
	sqlite3_bind_text(st, 3, who, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, reason != NULL ? reason : "", -1,
	    SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, time(NULL));
	return store_done(st);
}

int
store_job_suspend_clear(struct store *s, const char *ns, const char *job)
{
	sqlite3_stmt	*st;

	st = store_prepare(s, "DELETE FROM suspends WHERE"
	    " namespace = ?1 AND job = ?2");
	if (st == NULL)
		return -1;
	store_job_bind(st, ns, job);
	if (store_done(st) == -1)
		return -1;
	return sqlite3_changes(store_db(s));
}
