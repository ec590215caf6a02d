/*
 * The store tests' set-up (test_store_*.c), after test.h: each case runs
 * on a store of its own, a real SQLite file in a new temporary directory,
 * migrated to the latest schema; the directory and what SQLite left in it
 * are removed after the case.  A case that cannot get its store fails
 * with the reason.  storefix_reopen() closes and opens the file again, so
 * a case can show a row outlives its connection.  storefix_exec() and
 * storefix_int() seed rows and read them back with raw SQL, where a test
 * sets up what no store_<group> function writes.
 */
#ifndef NOPS_STOREFIX_H
#define NOPS_STOREFIX_H

#include <sys/types.h>
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store_priv.h"

static char	 storefix_dir[PATH_MAX];
static char	 storefix_path[PATH_MAX];
static struct store *storefix_cur;	/* the case's store, to close */

static inline struct store *
storefix_open(void)
{
	char		 err[256];
	struct store	*st;

	if ((st = store_open(storefix_path, err, sizeof(err))) == NULL)
		printf("# %s: store_open %s: %s\n", test_cur_name,
		    storefix_path, err);
	return storefix_cur = st;
}

/* Close st and open its file again: the new store, or NULL. */
static inline struct store *
storefix_reopen(struct store *st)
{
	store_close(st);
	return storefix_open();
}

static inline void
storefix_rmdir(void)
{
	char		 p[PATH_MAX];
	DIR		*dp;
	struct dirent	*de;

	if ((dp = opendir(storefix_dir)) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", storefix_dir,
			    de->d_name);
			if (unlink(p) == -1)
				printf("# unlink %s failed\n", p);
		}
		closedir(dp);
	}
	if (rmdir(storefix_dir) == -1)
		printf("# rmdir %s failed\n", storefix_dir);
}

/* Run fn as the test case name, on a fresh store. */
static inline void
storefix_case(const char *name, void (*fn)(struct store *))
{
	const char	*tmp;

	TEST_BEGIN(name);
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(storefix_dir, sizeof(storefix_dir), "%s/nops-storefix.XXXXXX",
	    tmp);
	if (mkdtemp(storefix_dir) == NULL) {
		printf("# %s: mkdtemp %s failed\n", name, storefix_dir);
		CHECK(0);
		TEST_END();
		return;
	}
	snprintf(storefix_path, sizeof(storefix_path), "%s/nops.db",
	    storefix_dir);
	if (storefix_open() == NULL)
		CHECK(0);
	else {
		fn(storefix_cur);
		if (storefix_cur != NULL)
			store_close(storefix_cur);
		else
			CHECK(0);	/* a reopen failed */
	}
	storefix_rmdir();
	TEST_END();
}

/* Run sql (several statements may follow each other): 0 or -1. */
static inline int
storefix_exec(struct store *st, const char *sql)
{
	char	*msg = NULL;

	if (sqlite3_exec(store_db(st), sql, NULL, NULL, &msg) != SQLITE_OK) {
		printf("# %s: %s\n", sql, msg);
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* The first column of sql's first row as an integer, or -1. */
static inline int64_t
storefix_int(struct store *st, const char *sql)
{
	sqlite3_stmt	*q;
	int64_t		 v = -1;

	if (sqlite3_prepare_v2(store_db(st), sql, -1, &q, NULL) != SQLITE_OK) {
		printf("# %s: %s\n", sql, sqlite3_errmsg(store_db(st)));
		return -1;
	}
	if (sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/*
 * A deployments row of ns/job in state (raw, no hooks, created at 1):
 * its id, or -1.
 */
static inline int64_t
storefix_deployment(struct store *st, const char *ns, const char *job,
    const char *state)
{
	char	 sql[512];

	snprintf(sql, sizeof(sql), "INSERT INTO deployments (kind, namespace,"
	    " job, repository, commit_id, spec, spec_hash, policy, state,"
	    " created_at, updated_at) VALUES ('%s', '%s', '%s', 'r', 'c',"
	    " '{}', 'h', 'auto', '%s', 1, 1)", *ns == '\0' ? "plan" : "job",
	    ns, job, state);
	if (storefix_exec(st, sql) == -1)
		return -1;
	return sqlite3_last_insert_rowid(store_db(st));
}

#endif /* NOPS_STOREFIX_H */
