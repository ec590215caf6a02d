/*
 * A job's pause and suspend in SQLite (store_job.h).  Both are one row
 * per job with who, reason and since; they differ only in the table.
 */
#include "config.h"

#include <stdint.h>
#include <time.h>

#include <sqlite3.h>

#include "store_priv.h"
#include "store_job.h"

/* Each kind's statements: ?1 ns, ?2 job, ?3 who, ?4 reason, ?5 now. */
static const struct store_job_sql {
	const char	*js_get;
	const char	*js_set;
	const char	*js_clear;
} store_job_sql[] = {
	[STORE_JOB_PAUSE] = {
		"SELECT who, reason, created_at FROM holds WHERE"
		" namespace = ?1 AND job = ?2 AND kind = 'pause'",
		"INSERT INTO holds (namespace, job, kind, who, reason,"
		" created_at) VALUES (?1, ?2, 'pause', ?3, ?4, ?5)"
		" ON CONFLICT (namespace, job, kind) DO UPDATE SET"
		" who = excluded.who, reason = excluded.reason",
		"DELETE FROM holds WHERE namespace = ?1 AND job = ?2"
		" AND kind = 'pause'"
	},
	[STORE_JOB_SUSPEND] = {
		"SELECT who, reason, created_at FROM suspends WHERE"
		" namespace = ?1 AND job = ?2",
		"INSERT INTO suspends (namespace, job, who, reason,"
		" created_at) VALUES (?1, ?2, ?3, ?4, ?5)"
		" ON CONFLICT (namespace, job) DO UPDATE SET"
		" who = excluded.who, reason = excluded.reason",
		"DELETE FROM suspends WHERE namespace = ?1 AND job = ?2"
	}
};

int
store_job_get(struct store *s, enum store_job_kind kind, const char *ns,
    const char *job, char **who, char **reason, int64_t *since)
{
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare_job(s, store_job_sql[kind].js_get, ns, job);
	if (st == NULL)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (who != NULL)
			*who = store_col_strdup(st, 0);
		if (reason != NULL)
			*reason = store_col_strdup(st, 1);
		if (since != NULL)
			*since = sqlite3_column_int64(st, 2);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_job_set(struct store *s, enum store_job_kind kind, const char *ns,
    const char *job, const char *who, const char *reason)
{
	sqlite3_stmt	*st;

	st = store_prepare_job(s, store_job_sql[kind].js_set, ns, job);
	if (st == NULL)
		return -1;
	store_bind_text(st, 3, who);
	store_bind_text(st, 4, reason != NULL ? reason : "");
	sqlite3_bind_int64(st, 5, time(NULL));
	return store_done(st);
}

int
store_job_clear(struct store *s, enum store_job_kind kind, const char *ns,
    const char *job)
{
	sqlite3_stmt	*st;

	st = store_prepare_job(s, store_job_sql[kind].js_clear, ns, job);
	if (st == NULL)
		return -1;
	return store_done_changes(s, st);
}
