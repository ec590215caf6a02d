/*
 * Unit tests for master/store_operation.c: the operations frozen into a
 * deployment (saved, replaced, read all or by name in group and name
 * order) and the run log (a run starts "running", ends with its exit
 * code or none, is lost only while running; trim keeps the newest of an
 * instance; pages go newest first below a cursor; a run is found only in
 * its namespace; the runs under way name their revision, or none once
 * its deployment is gone; which revisions are busy or idle).
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
#include "store_operation.h"
#include "test.h"
#include "storefix.h"

struct seen {
	int		 n;
	int64_t		 ids[8];
	char		 text[8][160];
	int64_t		 exit_code, ended, started;
	int		 stop_at;	/* stop the walk after this many */
};

static void
def_cb(const struct store_operation_def *od, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8)
		snprintf(s->text[s->n], sizeof(s->text[0]),
		    "%s/%s/%s/%s/%s/%d/%s/%s/%s", od->od_group, od->od_name,
		    od->od_job_id, od->od_revision ? od->od_revision : "-",
		    od->od_spec ? od->od_spec : "-", od->od_sensitive,
		    od->od_description ? od->od_description : "-",
		    od->od_confirm ? od->od_confirm : "-",
		    od->od_error ? od->od_error : "-");
	s->n++;
}

static void
run_cb(const struct store_operation_run *r, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8) {
		s->ids[s->n] = r->or_id;
		snprintf(s->text[s->n], sizeof(s->text[0]),
		    "%s/%s/%s/%s/%lld/%s/%d/%s/%s/%s", r->or_ns, r->or_job,
		    r->or_instance, r->or_operation,
		    (long long)r->or_deployment, r->or_actor, r->or_sensitive,
		    r->or_state, r->or_output ? r->or_output : "-",
		    r->or_error ? r->or_error : "-");
	}
	s->n++;
	s->exit_code = r->or_exit_code;
	s->ended = r->or_ended_at;
	s->started = r->or_started_at;
}

static int
page_cb(const struct store_operation_run *r, void *arg)
{
	struct seen	*s = arg;

	run_cb(r, arg);
	return s->stop_at != 0 && s->n >= s->stop_at;
}

static int
running_cb(const struct store_operation_run *r, const char *rev, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8) {
		s->ids[s->n] = r->or_id;
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s/%s/%s/%s",
		    r->or_ns, r->or_job, r->or_operation,
		    rev != NULL ? rev : "-");
	}
	s->n++;
	return 0;
}

static void
idle_cb(const char *rev, const char *ns, int64_t deployment, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8)
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s/%s/%lld",
		    rev, ns, (long long)deployment);
	s->n++;
}

static void
def_put(struct store *st, int64_t d, const char *grp, const char *name,
    const char *rev)
{
	struct store_operation_def od;

	memset(&od, 0, sizeof(od));
	od.od_name = name;
	od.od_job_id = "api";
	od.od_group = grp;
	od.od_spec = "{}";
	od.od_spec_hash = "hh";
	od.od_revision = rev;
	od.od_description = "d";
	CHECK(store_operation_def_put(st, d, &od) == 0);
}

static void
t_defs(struct store *st)
{
	struct store_operation_def od;
	struct seen	 s;
	int64_t		 d;

	d = storefix_deployment(st, "web", "api", "completed");
	CHECK(d > 0);
	def_put(st, d, "web", "restart", "api-11111111");
	def_put(st, d, "db", "vacuum", "api-22222222");
	def_put(st, d, "db", "backup", "api-33333333");
	/* Replaced: a frozen operation that cannot run says why. */
	memset(&od, 0, sizeof(od));
	od.od_name = "vacuum";
	od.od_job_id = "api";
	od.od_group = "db";
	od.od_sensitive = 1;
	od.od_confirm = "yes";
	od.od_error = "bad schema";
	CHECK(store_operation_def_put(st, d, &od) == 0);
	if ((st = storefix_reopen(st)) == NULL)
		return;

	memset(&s, 0, sizeof(s));
	CHECK(store_operation_defs(st, d, NULL, def_cb, &s) == 0);
	CHECK(s.n == 3);
	CHECK_STR(s.text[0], "db/backup/api/api-33333333/{}/0/d/-/-");
	CHECK_STR(s.text[1], "db/vacuum/api/-/-/1/-/yes/bad schema");
	CHECK_STR(s.text[2], "web/restart/api/api-11111111/{}/0/d/-/-");
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_defs(st, d, "restart", def_cb, &s) == 0);
	CHECK(s.n == 1);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_defs(st, d, "nope", def_cb, &s) == 0);
	CHECK(store_operation_defs(st, d + 1, NULL, def_cb, &s) == 0);
	CHECK(s.n == 0);
	/* A deployment that does not exist takes none (foreign key). */
	memset(&od, 0, sizeof(od));
	od.od_name = "x";
	od.od_job_id = "api";
	od.od_group = "g";
	CHECK(store_operation_def_put(st, d + 1, &od) == -1);
}

static void
t_runs(struct store *st)
{
	struct seen	 s;
	int64_t		 d, r1, r2, r3, t0 = time(NULL);

	d = storefix_deployment(st, "web", "api", "completed");
	r1 = store_operation_run_insert(st, d, "web", "api", "", "restart",
	    "ann", 0);
	r2 = store_operation_run_insert(st, d, "web", "api", "", "dump",
	    "bob", 1);
	CHECK(r1 > 0 && r2 > r1);
	CHECK(store_operation_run_end(st, r1, "succeeded", 0, "done\n",
	    NULL) == 0);
	CHECK(store_operation_run_end(st, r2, "failed", -1, NULL,
	    "no alloc") == 0);
	if ((st = storefix_reopen(st)) == NULL)
		return;

	memset(&s, 0, sizeof(s));
	CHECK(store_operation_run_get(st, r1, "web", "api", run_cb, &s) == 1);
	CHECK_STR(s.text[0], "web/api//restart/1/ann/0/succeeded/done\n/-");
	CHECK(s.exit_code == 0);
	CHECK(s.started >= t0 && s.ended >= s.started);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_run_get(st, r2, "web", NULL, run_cb, &s) == 1);
	CHECK_STR(s.text[0], "web/api//dump/1/bob/1/failed/-/no alloc");
	CHECK(s.exit_code == STORE_OPERATION_NULL);
	/* Only in its namespace and job. */
	CHECK(store_operation_run_get(st, r1, "ops", NULL, run_cb, &s) == 0);
	CHECK(store_operation_run_get(st, r1, "web", "db", run_cb, &s) == 0);
	CHECK(store_operation_run_get(st, r2 + 1, "web", NULL, run_cb,
	    &s) == 0);

	/* Lost only while running. */
	r3 = store_operation_run_insert(st, d, "web", "api", "", "restart",
	    "ann", 0);
	CHECK(store_operation_run_lost(st, r1, "restart") == 0);
	CHECK(store_operation_run_lost(st, r3, "restart") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_run_get(st, r1, "web", NULL, run_cb, &s) == 1);
	CHECK(store_operation_run_get(st, r3, "web", NULL, run_cb, &s) == 1);
	CHECK_STR(s.text[0], "web/api//restart/1/ann/0/succeeded/done\n/-");
	CHECK_STR(s.text[1], "web/api//restart/1/ann/0/lost/-/restart");
	CHECK(s.exit_code == STORE_OPERATION_NULL);

	CHECK(store_operation_run_forget(st, "web", "api") == 3);
	CHECK(store_operation_run_forget(st, "web", "api") == 0);
}

static void
t_page_trim(struct store *st)
{
	struct seen	 s;
	int64_t		 d, id[6];
	int		 i;

	d = storefix_deployment(st, "", "hosts", "completed");
	for (i = 0; i < 6; i++)
		id[i] = store_operation_run_insert(st, d, "", "hosts",
		    i % 2 ? "h2" : "h1", "reboot", "ann", 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_run_page(st, "", "hosts", NULL, 0, 10, page_cb,
	    &s) == 0);
	CHECK(s.n == 6 && s.ids[0] == id[5] && s.ids[5] == id[0]);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_run_page(st, "", "hosts", "h1", id[4], 10,
	    page_cb, &s) == 0);
	CHECK(s.n == 2 && s.ids[0] == id[2] && s.ids[1] == id[0]);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_run_page(st, "", "hosts", NULL, 0, 2, page_cb,
	    &s) == 0);
	CHECK(s.n == 2);
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	CHECK(store_operation_run_page(st, "", "hosts", NULL, 0, 10, page_cb,
	    &s) == 0);
	CHECK(s.n == 1);

	/* Keep h1's newest two: id[0] goes, h2's stay. */
	CHECK(store_operation_run_trim(st, "", "hosts", "h1", 2) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_run_page(st, "", "hosts", "h1", 0, 10, page_cb,
	    &s) == 0);
	CHECK(s.n == 2 && s.ids[0] == id[4] && s.ids[1] == id[2]);
	CHECK(storefix_int(st, "SELECT count(*) FROM operation_runs") == 5);
}

static void
t_revisions(struct store *st)
{
	struct seen	 s;
	int64_t		 d1, d2, r1, r2;

	/* d1 is superseded by d2, which no longer offers "dump". */
	d1 = storefix_deployment(st, "web", "api", "superseded");
	d2 = storefix_deployment(st, "web", "api", "completed");
	def_put(st, d1, "g", "dump", "api-aaaaaaaa");
	def_put(st, d1, "g", "restart", "api-bbbbbbbb");
	def_put(st, d2, "g", "restart", "api-bbbbbbbb");
	r1 = store_operation_run_insert(st, d1, "web", "api", "", "dump",
	    "ann", 0);
	r2 = store_operation_run_insert(st, d2, "web", "api", "", "restart",
	    "ann", 0);
	CHECK(storefix_exec(st, "UPDATE operation_runs SET started_at = 100")
	    == 0);

	memset(&s, 0, sizeof(s));
	CHECK(store_operation_running(st, running_cb, &s) == 0);
	CHECK(s.n == 2 && s.ids[0] == r1 && s.ids[1] == r2);
	CHECK_STR(s.text[0], "web/api/dump/api-aaaaaaaa");
	CHECK(store_operation_revision_busy(st, "web", "api-aaaaaaaa") == 1);
	CHECK(store_operation_revision_busy(st, "ops", "api-aaaaaaaa") == 0);
	CHECK(store_operation_revision_busy(st, "web", "api-cccccccc") == 0);
	/* Busy: not idle yet. */
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_idle_revisions(st, 50, idle_cb, &s) == 0);
	CHECK(s.n == 0);

	CHECK(store_operation_run_end(st, r1, "succeeded", 0, NULL,
	    NULL) == 0);
	CHECK(store_operation_revision_busy(st, "web", "api-aaaaaaaa") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_idle_revisions(st, 50, idle_cb, &s) == 0);
	CHECK(s.n == 1 && strncmp(s.text[0], "api-aaaaaaaa/web/", 17) == 0 &&
	    strtoll(s.text[0] + 17, NULL, 10) == d1);
	/* Only runs started after since count. */
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_idle_revisions(st, 100, idle_cb, &s) == 0);
	CHECK(s.n == 0);

	/* Its deployment gone: the run under way has no revision. */
	CHECK(storefix_exec(st, "DELETE FROM deployment_operations WHERE"
	    " deployment_id = 2") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_running(st, running_cb, &s) == 0);
	CHECK(s.n == 1);
	CHECK_STR(s.text[0], "web/api/restart/-");
}

static void
t_errors(struct store *st)
{
	struct seen	 s;

	/* A run of no deployment: refused by the foreign key. */
	CHECK(store_operation_run_insert(st, 99, "web", "api", "", "x", "ann",
	    0) == -1);
	CHECK(storefix_exec(st, "DROP TABLE operation_runs") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_operation_run_get(st, 1, "web", NULL, run_cb, &s) == -1);
	CHECK(store_operation_run_page(st, "web", "api", NULL, 0, 10, page_cb,
	    &s) == -1);
	CHECK(store_operation_running(st, running_cb, &s) == -1);
	CHECK(store_operation_run_forget(st, "web", "api") == -1);
	/* The store cannot tell: busy, so nothing is stopped. */
	CHECK(store_operation_revision_busy(st, "web", "api-aaaaaaaa") == 1);
	CHECK(s.n == 0);
}

int
main(void)
{
	log_init(1, LOG_DAEMON);
	log_procinit("test_store_operation");
	storefix_case("store_operation: operations frozen into a deployment",
	    t_defs);
	storefix_case("store_operation: a run from start to end or lost",
	    t_runs);
	storefix_case("store_operation: pages newest first, trim per instance",
	    t_page_trim);
	storefix_case("store_operation: revisions under way and idle",
	    t_revisions);
	storefix_case("store_operation: errors", t_errors);
	TEST_EXIT();
}
