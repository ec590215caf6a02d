/*
 * Unit tests for master/store_deploy.c beyond what test_deploy covers
 * (creation, transitions through deploy.c, hook runs by token): every
 * field of a deployment read back after its connection closed; the
 * recorded facts of an apply; a transition only from the state it names;
 * the last completed, ended or sourced deployment of a job; the list's
 * filters, cursor, permission check and stop; counts by state; the jobs
 * registered; acknowledgement; health progress; a hook run's output and
 * its clearing; hook revisions idle after their deployments ended;
 * missing rows and a store that cannot read.
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
#include "deploy.h"
#include "store_deploy.h"
#include "test.h"
#include "storefix.h"

struct seen {
	int		 n;
	int64_t		 ids[8];
	char		 text[8][128];
	int		 stop_at;
};

static void
fill(struct deploy *d, const char *ns, const char *job,
    enum deploy_state state)
{
	memset(d, 0, sizeof(*d));
	d->d_ns = (char *)ns;
	d->d_job = (char *)job;
	d->d_repo = "infra";
	d->d_commit = "c1";
	d->d_spec = "{\"ID\":\"api\"}";
	d->d_diff = "{\"Type\":\"Added\"}";
	d->d_spec_hash = "h1";
	d->d_cas_index = -1;
	d->d_policy = "auto";
	d->d_state = state;
}

static int64_t
insert(struct store *st, const char *ns, const char *job,
    enum deploy_state state)
{
	struct deploy	 d;

	fill(&d, ns, job, state);
	if (store_deploy_insert(st, &d) == -1)
		return -1;
	return d.d_id;
}

/* A deployment with one pre hook of revision rev: its id, or -1. */
static int64_t
insert_hooked(struct store *st, const char *job, enum deploy_state state,
    const char *rev)
{
	struct deploy	 d;

	fill(&d, "web", job, state);
	d.d_nhooks = 1;
	d.d_hooks[0] = (struct deploy_hook){ "pre", 0, "m", "{}", "aa",
	    (char *)rev, 60 };
	if (store_deploy_insert(st, &d) == -1)
		return -1;
	return d.d_id;
}

static void
t_roundtrip(struct store *st)
{
	struct deploy	 d, r;
	int64_t		 t0 = time(NULL);

	fill(&d, "web", "api", DS_PENDING_APPROVAL);
	d.d_cas_index = 42;
	d.d_reason = "new image";
	/* It retries an earlier one (a foreign key: that row must exist). */
	CHECK((d.d_retry_of = insert(st, "web", "api", DS_FAILED)) == 1);
	d.d_subject = "bump api";
	d.d_author = "ann <ann@example.org>";
	d.d_commit_time = 1700000000;
	d.d_path = "jobs/api.nomad.hcl";
	d.d_source = "job \"api\" {}";
	d.d_vars_source = "image = \"x\"";
	d.d_base_commit = "c0";
	d.d_git_change = "{\"Files\":1}";
	d.d_nhooks = 1;
	d.d_hooks[0] = (struct deploy_hook){ "pre", 0, "migrate",
	    "{\"ID\":\"migrate\"}", "bb22", "migrate-bb22bb22", 300 };
	CHECK(store_deploy_insert(st, &d) == 0);
	CHECK(d.d_id == 2 && d.d_created_at >= t0);
	CHECK(store_deploy_set_approval(st, d.d_id, "bob", "h1") == 0);
	CHECK(store_deploy_set_apply(st, d.d_id, 500, 900) == 0);
	CHECK(store_deploy_set_register(st, d.d_id, "eval-1", 7) == 0);
	CHECK(store_deploy_set_nomad_deployment(st, d.d_id, "nd-1") == 0);
	if ((st = storefix_reopen(st)) == NULL)
		return;

	if (store_deploy_load(st, d.d_id, &r) != 0) {
		CHECK(0);
		return;
	}
	CHECK_STR(r.d_ns, "web");
	CHECK_STR(r.d_job, "api");
	CHECK_STR(r.d_repo, "infra");
	CHECK_STR(r.d_commit, "c1");
	CHECK_STR(r.d_spec, "{\"ID\":\"api\"}");
	CHECK_STR(r.d_diff, "{\"Type\":\"Added\"}");
	CHECK_STR(r.d_spec_hash, "h1");
	CHECK(r.d_cas_index == 42);
	CHECK_STR(r.d_policy, "auto");
	CHECK(r.d_state == DS_PENDING_APPROVAL);
	CHECK_STR(r.d_reason, "new image");
	CHECK(r.d_retry_of == 1);
	CHECK(r.d_created_at == d.d_created_at);
	CHECK(r.d_ended_at == 0);
	CHECK_STR(r.d_approved_by, "bob");
	CHECK_STR(r.d_approved_hash, "h1");
	CHECK(r.d_approved_at >= t0);
	CHECK(r.d_apply_started_at == 500 && r.d_timeout_at == 900);
	CHECK_STR(r.d_eval_id, "eval-1");
	CHECK(r.d_job_version == 7);
	CHECK_STR(r.d_nomad_deployment, "nd-1");
	CHECK_STR(r.d_subject, "bump api");
	CHECK_STR(r.d_author, "ann <ann@example.org>");
	CHECK(r.d_commit_time == 1700000000);
	CHECK_STR(r.d_path, "jobs/api.nomad.hcl");
	CHECK_STR(r.d_source, "job \"api\" {}");
	CHECK_STR(r.d_vars_source, "image = \"x\"");
	CHECK_STR(r.d_base_commit, "c0");
	CHECK_STR(r.d_git_change, "{\"Files\":1}");
	CHECK(r.d_nhooks == 1);
	CHECK_STR(r.d_hooks[0].dh_revision, "migrate-bb22bb22");
	CHECK(r.d_hooks[0].dh_timeout == 300);
	deploy_free(&r);

	/* No timeout, unknown version: kept as none. */
	CHECK(store_deploy_set_apply(st, d.d_id, 600, 0) == 0);
	CHECK(store_deploy_set_register(st, d.d_id, "eval-2", -1) == 0);
	if (store_deploy_load(st, d.d_id, &r) != 0) {
		CHECK(0);
		return;
	}
	CHECK(r.d_timeout_at == 0 && r.d_job_version == -1);
	CHECK_STR(r.d_eval_id, "eval-2");
	deploy_free(&r);
	/* A missing row. */
	CHECK(store_deploy_load(st, d.d_id + 1, &r) == 1);
}

static void
t_state(struct store *st)
{
	struct deploy	 r;
	int64_t		 id;

	id = insert(st, "web", "api", DS_REGISTERING);
	CHECK(store_deploy_set_state(st, id, DS_PENDING_APPROVAL, DS_FAILED,
	    "x") == 0);
	CHECK(store_deploy_set_state(st, id, DS_REGISTERING,
	    DS_WAITING_HEALTH, NULL) == 1);
	if (store_deploy_load(st, id, &r) != 0) {
		CHECK(0);
		return;
	}
	CHECK(r.d_state == DS_WAITING_HEALTH && r.d_ended_at == 0);
	CHECK(r.d_reason == NULL);
	deploy_free(&r);
	CHECK(store_deploy_set_state(st, id, DS_WAITING_HEALTH, DS_FAILED,
	    "unhealthy") == 1);
	if (store_deploy_load(st, id, &r) != 0) {
		CHECK(0);
		return;
	}
	CHECK(r.d_state == DS_FAILED && r.d_ended_at > 0);
	CHECK_STR(r.d_reason, "unhealthy");
	deploy_free(&r);
	/* A NULL reason keeps the old one. */
	CHECK(store_deploy_set_state(st, id, DS_FAILED, DS_SUPERSEDED,
	    NULL) == 1);
	if (store_deploy_load(st, id, &r) != 0) {
		CHECK(0);
		return;
	}
	CHECK_STR(r.d_reason, "unhealthy");
	deploy_free(&r);
	CHECK(store_deploy_set_state(st, id + 1, DS_FAILED, DS_COMPLETED,
	    NULL) == 0);
}

static void
source_cb(const struct store_deploy_source *ds, void *arg)
{
	struct seen	*s = arg;

	snprintf(s->text[s->n++ % 8], sizeof(s->text[0]), "%s/%s/%s/%s",
	    ds->ds_commit, ds->ds_path, ds->ds_source,
	    ds->ds_vars_source != NULL ? ds->ds_vars_source : "-");
}

static void
ended_cb(int64_t id, const char *state, const char *hash, void *arg)
{
	struct seen	*s = arg;

	s->ids[s->n % 8] = id;
	snprintf(s->text[s->n++ % 8], sizeof(s->text[0]), "%s/%s", state,
	    hash != NULL ? hash : "-");
}

static void
t_last(struct store *st)
{
	struct deploy	 d;
	struct seen	 s;
	int64_t		 id, a, b, c;

	fill(&d, "web", "api", DS_COMPLETED);
	d.d_path = "api.hcl";
	d.d_source = "src1";
	CHECK(store_deploy_insert(st, &d) == 0);
	a = d.d_id;
	b = insert(st, "web", "api", DS_COMPLETED);	/* no source */
	c = insert(st, "web", "api", DS_SUPERSEDED);
	CHECK(insert(st, "ops", "api", DS_FAILED) > c);

	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_last_source(st, "web", "api", source_cb, &s) == 0);
	CHECK(s.n == 1);
	CHECK_STR(s.text[0], "c1/api.hcl/src1/-");
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_last_source(st, "web", "db", source_cb, &s) == 0);
	CHECK(s.n == 0);

	/* Superseded ones do not count. */
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_last_ended(st, "web", "api", ended_cb, &s) == 0);
	CHECK(s.n == 1 && s.ids[0] == b);
	CHECK_STR(s.text[0], "completed/h1");
	CHECK(store_deploy_last_ended(st, "web", "db", ended_cb, &s) == 1);

	CHECK(store_deploy_last_completed(st, "web", "api", &id) == 0);
	CHECK(id == b);
	CHECK(store_deploy_last_completed(st, "ops", "api", &id) == 0);
	CHECK(id == 0);
	if (store_deploy_last_terminal(st, "web", "api", &d) != 0) {
		CHECK(0);
		return;
	}
	CHECK(d.d_id == c);
	deploy_free(&d);
	CHECK(a > 0);
}

static int
list_cb(struct deploy *d, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8) {
		s->ids[s->n] = d->d_id;
		/* Never the spec or the diff in a list. */
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s/%s/%s/%s/%s",
		    d->d_ns, d->d_job, deploy_state_str(d->d_state),
		    d->d_spec != NULL ? "spec" : "-",
		    d->d_diff != NULL ? "diff" : "-");
	}
	s->n++;
	return s->stop_at != 0 && s->n >= s->stop_at;
}

static int
readable(const char *ns, void *arg)
{
	(void)arg;
	return strcmp(ns, "secret") != 0;
}

static void
t_list(struct store *st)
{
	struct store_deploy_filter f;
	struct seen	 s;
	int64_t		 a, b, c, d;

	a = insert(st, "web", "api", DS_COMPLETED);
	b = insert(st, "web", "db", DS_FAILED);
	c = insert(st, "secret", "vault", DS_COMPLETED);
	d = insert(st, "web", "api", DS_PENDING_APPROVAL);

	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_list(st, &f, list_cb, &s) == 0);
	CHECK(s.n == 4 && s.ids[0] == d && s.ids[3] == a);
	CHECK_STR(s.text[0], "web/api/pending_approval/-/-");
	f.df_readable = readable;
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_list(st, &f, list_cb, &s) == 0);
	CHECK(s.n == 3 && s.ids[1] == b);
	f.df_state = "completed";
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_list(st, &f, list_cb, &s) == 0);
	CHECK(s.n == 1 && s.ids[0] == a);
	f.df_state = NULL;
	f.df_ns = "web";
	f.df_job = "api";
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_list(st, &f, list_cb, &s) == 0);
	CHECK(s.n == 2);
	f.df_before = d;
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_list(st, &f, list_cb, &s) == 0);
	CHECK(s.n == 1 && s.ids[0] == a);
	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	CHECK(store_deploy_list(st, &f, list_cb, &s) == 0);
	CHECK(s.n == 2 && s.ids[1] == c);
}

static void
count_cb(const char *state, int64_t n, int64_t created, int64_t updated,
    void *arg)
{
	struct seen	*s = arg;

	snprintf(s->text[s->n++ % 8], sizeof(s->text[0]), "%s=%lld/%d",
	    state, (long long)n, created > 0 && updated >= created);
}

/* A row of two names and an id: registered jobs, idle hook revisions. */
static void
pair_cb(const char *a, const char *b, int64_t id, void *arg)
{
	struct seen	*s = arg;

	s->ids[s->n % 8] = id;
	snprintf(s->text[s->n++ % 8], sizeof(s->text[0]), "%s/%s", a, b);
}

static void
t_counts_registered(struct store *st)
{
	struct seen	 s;
	int64_t		 a, b, c;

	a = insert(st, "web", "api", DS_COMPLETED);
	b = insert(st, "web", "api", DS_COMPLETED);
	c = insert(st, "ops", "db", DS_FAILED);
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_count_states(st, count_cb, &s) == 0);
	CHECK(s.n == 2);
	CHECK_STR(s.text[0], "completed=2/1");
	CHECK_STR(s.text[1], "failed=1/1");

	/* Registered: the last deployment with an eval, per job. */
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_registered(st, pair_cb, &s) == 0);
	CHECK(s.n == 0);
	CHECK(store_deploy_set_register(st, a, "e1", 1) == 0);
	CHECK(store_deploy_set_register(st, b, "e2", 2) == 0);
	CHECK(store_deploy_set_register(st, c, "e3", 1) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_registered(st, pair_cb, &s) == 0);
	CHECK(s.n == 2);
	CHECK_STR(s.text[0], "ops/db");
	CHECK(s.ids[0] == c);
	CHECK_STR(s.text[1], "web/api");
	CHECK(s.ids[1] == b);
}

static void
t_ack_health(struct store *st)
{
	struct hook_run	 hr;
	char		*h;
	int64_t		 a, b;

	/* A hook run belongs to a hook of its deployment. */
	a = insert_hooked(st, "api", DS_FAILED, "m-aaaaaaaa");
	b = insert(st, "web", "db", DS_FAILED);
	CHECK(store_deploy_acknowledged(st, a) == 0);
	CHECK(store_begin(st) == 0);
	CHECK(store_event(st, "ann", "deployment.acknowledge",
	    "deployment/1", NULL) > 0);
	CHECK(store_event(st, "ann", "deployment.approve", "deployment/2",
	    NULL) > 0);
	CHECK(store_commit(st) == 0);
	CHECK(a == 1 && b == 2);
	CHECK(store_deploy_acknowledged(st, a) == 1);
	CHECK(store_deploy_acknowledged(st, b) == 0);

	CHECK(store_deploy_health(st, a) == NULL);
	CHECK(store_deploy_set_health(st, a, "{\"Healthy\":2}") == 0);
	h = store_deploy_health(st, a);
	CHECK_STR(h, "{\"Healthy\":2}");
	free(h);
	CHECK(store_deploy_health(st, 99) == NULL);

	/* A hook run's output is kept; clear lets it run afresh. */
	CHECK(store_deploy_hookrun_create(st, a, "pre", 0, "1:pre:0") == 0);
	CHECK(store_deploy_hookrun_set_output(st, "1:pre:0", "migrated\n")
	    == 0);
	CHECK(store_deploy_hookrun_get(st, "1:pre:0", &hr) == 0);
	CHECK_STR(hr.hr_output, "migrated\n");
	CHECK_STR(hr.hr_state, "pending");
	deploy_hookrun_free(&hr);
	CHECK(store_deploy_hookrun_clear(st, "1:pre:0") == 0);
	CHECK(store_deploy_hookrun_get(st, "1:pre:0", &hr) == 1);
	CHECK(store_deploy_hookrun_create(st, a, "pre", 0, "1:pre:0") == 0);
	/* The same token twice: refused. */
	CHECK(store_deploy_hookrun_create(st, a, "pre", 0, "1:pre:0") == -1);
	/* No such hook in the deployment: refused. */
	CHECK(store_deploy_hookrun_create(st, b, "pre", 0, "2:pre:0") == -1);
}

static void
t_idle_hooks(struct store *st)
{
	struct seen	 s;
	int64_t		 a;

	/* a ended with hook rev A; another is under way with rev B. */
	a = insert_hooked(st, "api", DS_FAILED, "m-aaaaaaaa");
	CHECK(insert_hooked(st, "api", DS_PRE_HOOKS, "m-bbbbbbbb") > a);

	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_idle_hooks(st, 0, pair_cb, &s) == 0);
	CHECK(s.n == 1 && s.ids[0] == a);
	CHECK_STR(s.text[0], "m-aaaaaaaa/web");
	/* Ended before since: not looked at. */
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_idle_hooks(st, time(NULL) + 10, pair_cb, &s) == 0);
	CHECK(s.n == 0);
	/* Rev A in use again by an active deployment: not idle. */
	CHECK(storefix_exec(st, "UPDATE deployment_hooks SET revision_job_id"
	    " = 'm-aaaaaaaa'") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_idle_hooks(st, 0, pair_cb, &s) == 0);
	CHECK(s.n == 0);
}

static void
t_errors(struct store *st)
{
	struct store_deploy_filter f;
	struct deploy	 d;
	struct seen	 s;
	int64_t		 id;

	CHECK(storefix_deployment(st, "web", "api", "completed") == 1);
	/* NOT NULL columns: refused. */
	fill(&d, "web", "api", DS_COMPLETED);
	d.d_repo = NULL;
	CHECK(store_deploy_insert(st, &d) == -1);
	CHECK(storefix_int(st, "SELECT count(*) FROM deployments") == 1);

	CHECK(storefix_exec(st, "DROP TABLE events") == 0);
	CHECK(store_deploy_acknowledged(st, 1) == -1);
	CHECK(storefix_exec(st, "DROP TABLE deployment_operations;"
	    " DROP TABLE operation_runs; DROP TABLE hook_runs;"
	    " DROP TABLE deployment_hooks; DROP TABLE deployments") == 0);
	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	CHECK(store_deploy_list(st, &f, list_cb, &s) == -1);
	CHECK(store_deploy_count_states(st, count_cb, &s) == -1);
	CHECK(store_deploy_last_completed(st, "web", "api", &id) == -1);
	CHECK(store_deploy_last_ended(st, "web", "api", ended_cb, &s) == -1);
	CHECK(store_deploy_load(st, 1, &d) == -1);
	CHECK(s.n == 0);
}

int
main(void)
{
	log_init(1, LOG_DAEMON);
	log_procinit("test_store_deploy");
	storefix_case("store_deploy: every field outlives its connection",
	    t_roundtrip);
	storefix_case("store_deploy: a transition only from its state",
	    t_state);
	storefix_case("store_deploy: a job's last source, ended, completed",
	    t_last);
	storefix_case("store_deploy: the list's filters, cursor and stop",
	    t_list);
	storefix_case("store_deploy: counts by state, registered jobs",
	    t_counts_registered);
	storefix_case("store_deploy: acknowledged, health, hook run output",
	    t_ack_health);
	storefix_case("store_deploy: hook revisions idle after their end",
	    t_idle_hooks);
	storefix_case("store_deploy: errors", t_errors);
	TEST_EXIT();
}
