/*
 * Unit tests for master/store_hosts.c (a plan's deployments: the active
 * one, the last ended or completed, the running ones; host steps in
 * phase order with preflight first, saved with their times; host runs
 * left running become lost, job runs do not) and master/store_dash.c
 * (the overview's lists, and a failed deployment that leaves the list
 * once acknowledged or followed by a completed one).
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "store.h"
#include "store_hosts.h"
#include "store_dash.h"
#include "test.h"
#include "storefix.h"

struct seen {
	int		 n;
	int64_t		 ids[16];
	char		 text[16][64];	/* state, or host of a step */
	int64_t		 started, ended;
	size_t		 speclen;
};

static int
deploy_cb(const struct store_hosts_deploy *hd, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 16) {
		s->ids[s->n] = hd->hd_id;
		strlcpy(s->text[s->n], hd->hd_state, sizeof(s->text[0]));
	}
	s->n++;
	s->speclen = hd->hd_speclen;
	return 0;
}

static int
step_cb(const struct store_hosts_step *sh, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 16) {
		s->ids[s->n] = sh->sh_id;
		snprintf(s->text[s->n], sizeof(s->text[0]), "%d/%s/%s/%s",
		    sh->sh_phase_index, sh->sh_host, sh->sh_state,
		    sh->sh_goal != NULL ? sh->sh_goal : "-");
	}
	s->n++;
	s->started = sh->sh_started_at;
	s->ended = sh->sh_ended_at;
	return 0;
}

static int
dash_cb(const struct store_dash_row *dr, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 16) {
		s->ids[s->n] = dr->dr_id;
		strlcpy(s->text[s->n], dr->dr_job, sizeof(s->text[0]));
	}
	s->n++;
	return 0;
}

static int64_t
plan_new(struct store *st, const char *plan, const char *state, int64_t now)
{
	struct store_hosts_new	 hn;
	int64_t			 id = 0;

	memset(&hn, 0, sizeof(hn));
	hn.hn_plan = plan;
	hn.hn_commit = "c0ffee";
	hn.hn_spec = "{\"x\":1}";
	hn.hn_spec_hash = state;	/* tells them apart */
	hn.hn_policy = "auto";
	hn.hn_state = state;
	hn.hn_reason = "drift";
	hn.hn_now = now;
	hn.hn_started = 1;
	if (store_hosts_deploy_create(st, &hn, &id) == -1)
		return -1;
	return id;
}

static void
t_plans(struct store *st)
{
	struct seen	 s;
	int64_t		 ids[4], a, b, c;

	a = plan_new(st, "r", "completed", 10);
	b = plan_new(st, "r", "failed", 20);
	c = plan_new(st, "r", "deploying", 30);
	CHECK(a > 0 && b > a && c > b);
	CHECK(plan_new(st, "other", "preflight", 40) > c);

	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_plan_find(st, "r", STORE_HOSTS_ACTIVE, deploy_cb,
	    &s) == 1);
	CHECK(s.ids[0] == c);
	CHECK(s.speclen == strlen("{\"x\":1}"));
	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_plan_find(st, "r", STORE_HOSTS_LAST_ENDED,
	    deploy_cb, &s) == 1);
	CHECK(s.ids[0] == b);
	CHECK_STR(s.text[0], "failed");
	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_plan_find(st, "r", STORE_HOSTS_LAST_COMPLETED,
	    deploy_cb, &s) == 1);
	CHECK(s.ids[0] == a);
	CHECK(store_hosts_plan_find(st, "none", STORE_HOSTS_ACTIVE,
	    deploy_cb, &s) == 0);

	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_deploy_get(st, b, deploy_cb, &s) == 1);
	CHECK_STR(s.text[0], "failed");
	CHECK(store_hosts_deploy_get(st, 999, deploy_cb, &s) == 0);

	CHECK(store_hosts_deploy_running(st, ids, 4) == 2);
	CHECK(ids[0] == c);
	CHECK(store_hosts_deploy_running(st, ids, 1) == 1);
}

static void
t_steps(struct store *st)
{
	struct store_hosts_step	 sh;
	struct seen		 s;
	int64_t			 d;

	d = plan_new(st, "r", "deploying", 10);
	memset(&sh, 0, sizeof(sh));
	sh.sh_phase_index = 0;
	sh.sh_phase = "one";
	sh.sh_host = "h1";
	sh.sh_step = "record";
	sh.sh_system = "/nix/store/x";
	sh.sh_state = "skipped";
	sh.sh_error = "already runs the wanted system";
	CHECK(store_hosts_step_add(st, d, &sh) == 0);
	sh.sh_position = 1;
	sh.sh_host = "h2";
	sh.sh_step = "copy";
	sh.sh_state = sh.sh_error = NULL;
	CHECK(store_hosts_step_add(st, d, &sh) == 0);
	sh.sh_phase_index = -1;
	sh.sh_phase = sh.sh_step = "preflight";
	sh.sh_position = 0;
	sh.sh_host = "t1";
	sh.sh_system = NULL;
	CHECK(store_hosts_step_add(st, d, &sh) == 0);
	/* One row per (deployment, phase, position). */
	CHECK(store_hosts_step_add(st, d, &sh) == -1);

	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_steps_walk(st, d, step_cb, &s) == 3);
	CHECK_STR(s.text[0], "-1/t1/pending/-");
	CHECK_STR(s.text[1], "0/h1/skipped/-");
	CHECK_STR(s.text[2], "0/h2/pending/-");

	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_step_next(st, d, step_cb, &s) == 1);
	CHECK_STR(s.text[0], "-1/t1/pending/-");
	CHECK(store_hosts_step_save(st, s.ids[0], "preflight", "running", NULL,
	    NULL, 100, 0) == 0);
	CHECK(store_hosts_step_save(st, s.ids[0], "preflight", "succeeded",
	    NULL, NULL, 110, 1) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_steps_walk(st, d, step_cb, &s) == 3);
	CHECK_STR(s.text[0], "-1/t1/succeeded/-");
	CHECK(s.started == 0);	/* the last row's, h2's */
	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_step_next(st, d, step_cb, &s) == 1);
	CHECK_STR(s.text[0], "0/h2/pending/-");
	CHECK(s.started == 0 && s.ended == 0);
	CHECK(store_hosts_step_save(st, s.ids[0], "activate", "running",
	    "switch", NULL, 200, 0) == 0);
	CHECK(store_hosts_step_save(st, s.ids[0], "activate", "failed",
	    "switch", "no route", 250, 1) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_hosts_step_next(st, d, step_cb, &s) == 1);
	CHECK_STR(s.text[0], "0/h2/failed/switch");
	CHECK(s.started == 200 && s.ended == 250);
	CHECK(store_hosts_step_save(st, s.ids[0], "activate", "succeeded",
	    NULL, NULL, 260, 1) == 0);
	CHECK(store_hosts_step_next(st, d, step_cb, &s) == 0);

	/* It started at its creation: the first start stays. */
	CHECK(store_hosts_deploy_started(st, d, 999) == 0);
	CHECK(storefix_int(st, "SELECT apply_started_at FROM deployments") ==
	    10);
}

static void
t_runs_lost(struct store *st)
{
	int64_t		 d;

	d = plan_new(st, "r", "completed", 10);
	CHECK(d > 0);
	CHECK(storefix_exec(st, "INSERT INTO operation_runs (deployment_id,"
	    " operation, instance, actor, started_at, namespace, job) VALUES"
	    " (1, 'op', 'h1', 'root', 5, '', 'r'),"
	    " (1, 'op', '', 'root', 5, 'web', 'j')") == 0);
	CHECK(store_hosts_runs_lost(st, 50) == 0);
	CHECK(storefix_int(st, "SELECT count(*) FROM operation_runs WHERE"
	    " state = 'lost' AND ended_at = 50 AND namespace = ''") == 1);
	CHECK(storefix_int(st, "SELECT count(*) FROM operation_runs WHERE"
	    " state = 'running' AND namespace = 'web'") == 1);
}

static void
t_dash(struct store *st)
{
	struct seen	 s;

#define D(ns, job, state) "('job', '" ns "', '" job "', 'r', 'c', '{}', 'h',"\
	" 'auto', '" state "', 1, 1)"
	CHECK(storefix_exec(st, "INSERT INTO deployments (kind, namespace,"
	    " job, repository, commit_id, spec, spec_hash, policy, state,"
	    " created_at, updated_at) VALUES "
	    D("a", "j1", "failed") ", "		/* 1: later completed */
	    D("a", "j1", "completed") ", "
	    D("a", "j2", "failed") ", "		/* 3: acknowledged */
	    D("a", "j3", "completed") ", "
	    D("a", "j3", "failed") ", "		/* 5: listed */
	    D("b", "j4", "pending_approval") ", "
	    D("b", "j5", "registering") ", "
	    D("b", "j6", "awaiting_promotion")) == 0);
#undef D
	CHECK(storefix_exec(st, "BEGIN; INSERT INTO events (at, actor,"
	    " action, target) VALUES (1, 'ann', 'deployment.acknowledge',"
	    " 'deployment/3');"
	    " COMMIT") == 0);

	memset(&s, 0, sizeof(s));
	CHECK(store_dash_walk(st, STORE_DASH_FAILED, dash_cb, &s) == 1);
	CHECK(s.ids[0] == 5);
	memset(&s, 0, sizeof(s));
	CHECK(store_dash_walk(st, STORE_DASH_APPROVAL, dash_cb, &s) == 1);
	CHECK_STR(s.text[0], "j4");
	memset(&s, 0, sizeof(s));
	CHECK(store_dash_walk(st, STORE_DASH_PROMOTION, dash_cb, &s) == 1);
	CHECK_STR(s.text[0], "j6");
	memset(&s, 0, sizeof(s));
	CHECK(store_dash_walk(st, STORE_DASH_IN_PROGRESS, dash_cb, &s) == 1);
	CHECK_STR(s.text[0], "j5");
}

int
main(void)
{
	log_init(1, LOG_DAEMON);
	log_procinit("test_store_hosts");
	storefix_case("store_hosts: a plan's deployments", t_plans);
	storefix_case("store_hosts: host steps", t_steps);
	storefix_case("store_hosts: host runs left running are lost",
	    t_runs_lost);
	storefix_case("store_dash: the overview's lists", t_dash);
	TEST_EXIT();
}
