/*
 * Unit tests for master/store_leftbehind.c: a record of what a
 * deployment left behind is listed oldest first with every field; a
 * refresh changes the error of the one record of kind/environment/object
 * and says whether there was one; delete of a missing record is no
 * error; forget removes a record only with its own deployment; a record
 * outlives its deployment and its connection.
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
#include "store_leftbehind.h"
#include "test.h"
#include "storefix.h"

struct seen {
	int		 n;
	int64_t		 ids[8];
	char		 text[8][128];	/* kind/env/object/error */
	int64_t		 created;
};

static void
row_cb(const struct store_leftbehind_row *lr, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8) {
		s->ids[s->n] = lr->lr_id;
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s/%s/%s/%s",
		    lr->lr_kind, lr->lr_env, lr->lr_object,
		    lr->lr_error != NULL ? lr->lr_error : "-");
	}
	s->n++;
	s->created = lr->lr_created_at;
}

static void
t_list(struct store *st)
{
	struct seen	 s;
	int64_t		 t0 = time(NULL);

	CHECK(store_leftbehind_insert(st, 7, "hook_revision", "web",
	    "migrate-aa", "timeout") == 0);
	CHECK(store_leftbehind_insert(st, 7, "suspend", "web", "api",
	    NULL) == 0);
	CHECK(store_leftbehind_insert(st, 8, "hook_revision", "ops",
	    "smoke-bb", "gone") == 0);
	/* No foreign key: deployment 7 needs no row. */
	CHECK(storefix_int(st, "SELECT count(*) FROM deployments") == 0);
	if ((st = storefix_reopen(st)) == NULL)
		return;

	memset(&s, 0, sizeof(s));
	CHECK(store_leftbehind_list(st, 7, row_cb, &s) == 2);
	CHECK(s.n == 2);
	CHECK(s.ids[0] < s.ids[1]);
	CHECK_STR(s.text[0], "hook_revision/web/migrate-aa/timeout");
	CHECK_STR(s.text[1], "suspend/web/api/-");
	CHECK(s.created >= t0 && s.created <= time(NULL));
	memset(&s, 0, sizeof(s));
	CHECK(store_leftbehind_list(st, 8, row_cb, &s) == 1);
	CHECK_STR(s.text[0], "hook_revision/ops/smoke-bb/gone");
	memset(&s, 0, sizeof(s));
	CHECK(store_leftbehind_list(st, 9, row_cb, &s) == 0);
	CHECK(s.n == 0);
}

static void
t_refresh_delete(struct store *st)
{
	struct seen	 s;

	CHECK(store_leftbehind_insert(st, 7, "hook_revision", "web",
	    "migrate-aa", "timeout") == 0);
	CHECK(store_leftbehind_insert(st, 7, "hook_revision", "ops",
	    "migrate-aa", "timeout") == 0);
	CHECK(store_leftbehind_refresh(st, "hook_revision", "web",
	    "migrate-aa", "403") == 1);
	/* Another environment, kind or object: no such record. */
	CHECK(store_leftbehind_refresh(st, "hook_revision", "dev",
	    "migrate-aa", "x") == 0);
	CHECK(store_leftbehind_refresh(st, "suspend", "web", "migrate-aa",
	    "x") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_leftbehind_list(st, 7, row_cb, &s) == 2);
	CHECK_STR(s.text[0], "hook_revision/web/migrate-aa/403");
	CHECK_STR(s.text[1], "hook_revision/ops/migrate-aa/timeout");

	CHECK(store_leftbehind_delete(st, "hook_revision", "web",
	    "migrate-aa") == 0);
	CHECK(store_leftbehind_delete(st, "hook_revision", "web",
	    "migrate-aa") == 0);	/* none is no error */
	memset(&s, 0, sizeof(s));
	CHECK(store_leftbehind_list(st, 7, row_cb, &s) == 1);
	CHECK_STR(s.text[0], "hook_revision/ops/migrate-aa/timeout");
}

static void
t_forget(struct store *st)
{
	struct seen	 s;

	CHECK(store_leftbehind_insert(st, 7, "suspend", "web", "api",
	    "x") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_leftbehind_list(st, 7, row_cb, &s) == 1);
	/* Only with its own deployment. */
	CHECK(store_leftbehind_forget(st, s.ids[0], 8) == 0);
	CHECK(store_leftbehind_forget(st, s.ids[0] + 1, 7) == 0);
	CHECK(store_leftbehind_forget(st, s.ids[0], 7) == 1);
	CHECK(store_leftbehind_forget(st, s.ids[0], 7) == 0);
	CHECK(storefix_int(st, "SELECT count(*) FROM left_behind") == 0);
}

static void
t_errors(struct store *st)
{
	struct seen	 s;

	/* kind and object are NOT NULL: refused, nothing written. */
	CHECK(store_leftbehind_insert(st, 7, NULL, "web", "api", "x") == -1);
	CHECK(store_leftbehind_insert(st, 7, "suspend", "web", NULL,
	    "x") == -1);
	CHECK(storefix_int(st, "SELECT count(*) FROM left_behind") == 0);
	CHECK(storefix_exec(st, "DROP TABLE left_behind") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_leftbehind_list(st, 7, row_cb, &s) == -1);
	CHECK(store_leftbehind_refresh(st, "suspend", "web", "api",
	    "x") == -1);
	CHECK(store_leftbehind_delete(st, "suspend", "web", "api") == -1);
	CHECK(store_leftbehind_forget(st, 1, 7) == -1);
	CHECK(store_leftbehind_insert(st, 7, "suspend", "web", "api",
	    "x") == -1);
}

int
main(void)
{
	log_init(1, LOG_DAEMON);
	log_procinit("test_store_leftbehind");
	storefix_case("store_leftbehind: records listed oldest first",
	    t_list);
	storefix_case("store_leftbehind: refresh and delete by object",
	    t_refresh_delete);
	storefix_case("store_leftbehind: forget with its deployment only",
	    t_forget);
	storefix_case("store_leftbehind: errors", t_errors);
	TEST_EXIT();
}
