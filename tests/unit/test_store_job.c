/*
 * Unit tests for master/store_job.c: a job's pause and suspend are one
 * row each, read back with who, reason and since; setting again replaces
 * who and reason but keeps since; the two kinds (and a sync window) do
 * not see each other; clear says whether a row went; a table the store
 * cannot read is an error, not "not set".
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"
#include "store.h"
#include "store_job.h"
#include "test.h"
#include "storefix.h"

static void
t_roundtrip(struct store *st)
{
	char		*who = NULL, *reason = NULL;
	int64_t		 since = 0, t0 = time(NULL);

	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "api", &who, &reason,
	    &since) == 0);
	CHECK(who == NULL && reason == NULL && since == 0);
	CHECK(store_job_set(st, STORE_JOB_PAUSE, "web", "api", "ann",
	    "freeze") == 0);
	if ((st = storefix_reopen(st)) == NULL)
		return;
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "api", &who, &reason,
	    &since) == 1);
	CHECK_STR(who, "ann");
	CHECK_STR(reason, "freeze");
	CHECK(since >= t0 && since <= time(NULL));
	free(who);
	free(reason);
	/* NULL pointers: only the answer. */
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "api", NULL, NULL,
	    NULL) == 1);
	/* Another job, another namespace: not paused. */
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "db", NULL, NULL,
	    NULL) == 0);
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "ops", "api", NULL, NULL,
	    NULL) == 0);
	CHECK(storefix_int(st, "SELECT count(*) FROM holds WHERE"
	    " kind = 'pause'") == 1);
}

static void
t_replace(struct store *st)
{
	char		*who = NULL, *reason = NULL;
	int64_t		 since = 0;

	CHECK(store_job_set(st, STORE_JOB_SUSPEND, "web", "api", "ann",
	    "night") == 0);
	CHECK(storefix_exec(st, "UPDATE suspends SET created_at = 5") == 0);
	CHECK(store_job_set(st, STORE_JOB_SUSPEND, "web", "api", "bob",
	    NULL) == 0);
	CHECK(store_job_get(st, STORE_JOB_SUSPEND, "web", "api", &who,
	    &reason, &since) == 1);
	CHECK_STR(who, "bob");
	CHECK_STR(reason, "");		/* NULL is kept as "" */
	CHECK(since == 5);		/* since the first set */
	free(who);
	free(reason);
	CHECK(storefix_int(st, "SELECT count(*) FROM suspends") == 1);

	/* The same for a pause, whose NULL reason is kept as "" too. */
	CHECK(store_job_set(st, STORE_JOB_PAUSE, "web", "api", "cy",
	    NULL) == 0);
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "api", NULL, &reason,
	    NULL) == 1);
	CHECK_STR(reason, "");
	free(reason);
}

static void
t_kinds(struct store *st)
{
	CHECK(store_job_set(st, STORE_JOB_SUSPEND, "web", "api", "ann",
	    "x") == 0);
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "api", NULL, NULL,
	    NULL) == 0);
	/* A closed sync window is a hold too, but not a pause. */
	CHECK(storefix_exec(st, "INSERT INTO holds (namespace, job, kind,"
	    " who, created_at) VALUES ('web', 'db', 'window', 'sys', 1)") == 0);
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "db", NULL, NULL,
	    NULL) == 0);
	CHECK(store_job_clear(st, STORE_JOB_PAUSE, "web", "db") == 0);
	CHECK(storefix_int(st, "SELECT count(*) FROM holds") == 1);

	CHECK(store_job_set(st, STORE_JOB_PAUSE, "web", "api", "bob",
	    "y") == 0);
	CHECK(store_job_clear(st, STORE_JOB_SUSPEND, "web", "api") == 1);
	CHECK(store_job_clear(st, STORE_JOB_SUSPEND, "web", "api") == 0);
	CHECK(store_job_get(st, STORE_JOB_SUSPEND, "web", "api", NULL, NULL,
	    NULL) == 0);
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "api", NULL, NULL,
	    NULL) == 1);
	CHECK(store_job_clear(st, STORE_JOB_PAUSE, "web", "api") == 1);
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "api", NULL, NULL,
	    NULL) == 0);
}

static void
t_errors(struct store *st)
{
	char	*who = NULL;

	CHECK(store_job_set(st, STORE_JOB_PAUSE, "web", "api", "ann",
	    "x") == 0);
	/* who is NOT NULL: refused, and the row stays as it was. */
	CHECK(store_job_set(st, STORE_JOB_PAUSE, "web", "api", NULL,
	    "y") == -1);
	CHECK(store_job_get(st, STORE_JOB_PAUSE, "web", "api", &who, NULL,
	    NULL) == 1);
	CHECK_STR(who, "ann");
	free(who);
	/* A table the store cannot read: -1, never "not set". */
	CHECK(storefix_exec(st, "DROP TABLE suspends") == 0);
	CHECK(store_job_get(st, STORE_JOB_SUSPEND, "web", "api", NULL, NULL,
	    NULL) == -1);
	CHECK(store_job_set(st, STORE_JOB_SUSPEND, "web", "api", "ann",
	    "x") == -1);
	CHECK(store_job_clear(st, STORE_JOB_SUSPEND, "web", "api") == -1);
}

int
main(void)
{
	log_init(1, LOG_DAEMON);
	log_procinit("test_store_job");
	storefix_case("store_job: a pause outlives its connection",
	    t_roundtrip);
	storefix_case("store_job: set again replaces who and reason, not since",
	    t_replace);
	storefix_case("store_job: pause, suspend and a window are apart",
	    t_kinds);
	storefix_case("store_job: errors", t_errors);
	TEST_EXIT();
}
