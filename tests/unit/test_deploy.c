/* Deployments in the store: creation, compare-and-set transitions, hooks. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "log.h"
#include "store.h"
#include "deploy.h"
#include "store_deploy.h"
#include "storefix.h"

static void
fill(struct deploy *d, const char *job, enum deploy_state state)
{
	memset(d, 0, sizeof(*d));
	d->d_ns = "default";
	d->d_job = (char *)(uintptr_t)job;
	d->d_repo = "infra";
	d->d_commit = "0123456789abcdef0123456789abcdef01234567";
	d->d_spec = "{\"ID\":\"web\",\"Env\":{\"PASSWORD\":\"x\"}}";
	d->d_diff = "{\"Type\":\"Edited\"}";
	d->d_spec_hash = "aa11";
	d->d_cas_index = 42;
	d->d_policy = "approval";
	d->d_state = state;
}

int
main(void)
{
	struct store	*s;
	struct deploy	 d, e, r;
	struct hook_run	 hr;
	char		 err[256];
	int64_t		*ids;
	size_t		 n;

	log_init(1, 0);
	s = store_open(":memory:", err, sizeof(err));
	if (s == NULL) {
		printf("not ok - open store # %s\n", err);
		return 1;
	}

	TEST_BEGIN("deploy: create with hooks writes its event");
	fill(&d, "web", DS_PENDING_APPROVAL);
	d.d_nhooks = 2;
	d.d_hooks[0] = (struct deploy_hook){ "pre", 0, "migrate",
	    "{\"ID\":\"migrate\"}", "bb22", "migrate-bb22bb22", 300 };
	d.d_hooks[1] = (struct deploy_hook){ "post", 0, "smoke",
	    "{\"ID\":\"smoke\"}", "cc33", "smoke-cc33cc33", 60 };
	CHECK(deploy_create(s, &d, "system") == -1);	/* no transaction */
	CHECK(store_begin(s) == 0);
	CHECK(deploy_create(s, &d, "system") == 0);
	CHECK(store_commit(s) == 0);
	CHECK(d.d_id > 0);
	CHECK(storefix_int(s, "SELECT count(*) FROM events WHERE action = "
	    "'deployment.create'") == 1);
	TEST_END();

	TEST_BEGIN("deploy: load returns what was stored, hooks in order");
	CHECK(store_deploy_load(s, d.d_id, &r) == 0);
	CHECK_STR(r.d_job, "web");
	CHECK(r.d_state == DS_PENDING_APPROVAL);
	CHECK(r.d_cas_index == 42);
	CHECK(r.d_nhooks == 2);
	CHECK_STR(r.d_hooks[0].dh_phase, "pre");
	CHECK_STR(r.d_hooks[1].dh_revision, "smoke-cc33cc33");
	CHECK(r.d_hooks[0].dh_timeout == 300);
	deploy_free(&r);
	CHECK(store_deploy_load(s, 9999, &r) == 1);
	TEST_END();

	TEST_BEGIN("deploy: one active deployment per job");
	fill(&e, "web", DS_PRE_HOOKS);
	CHECK(store_begin(s) == 0);
	CHECK(deploy_create(s, &e, "system") == -1);
	store_rollback(s);
	CHECK(store_deploy_active(s, "default", "web", &r) == 0);
	CHECK(r.d_id == d.d_id);
	deploy_free(&r);
	TEST_END();

	TEST_BEGIN("deploy: transitions are compare-and-set with an event");
	CHECK(store_begin(s) == 0);
	CHECK(deploy_transition(s, d.d_id, DS_PRE_HOOKS, DS_REGISTERING,
	    "system", "register", NULL) == 0);
	CHECK(deploy_transition(s, d.d_id, DS_PENDING_APPROVAL, DS_PRE_HOOKS,
	    "alice", "approve", NULL) == 1);
	CHECK(store_deploy_set_approval(s, d.d_id, "alice", "aa11") == 0);
	CHECK(store_commit(s) == 0);
	CHECK(storefix_int(s, "SELECT count(*) FROM events WHERE action = "
	    "'deployment.approve' AND actor = 'alice'") == 1);
	CHECK(store_deploy_load(s, d.d_id, &r) == 0);
	CHECK(r.d_state == DS_PRE_HOOKS);
	CHECK_STR(r.d_approved_by, "alice");
	CHECK(r.d_ended_at == 0);
	deploy_free(&r);
	TEST_END();

	TEST_BEGIN("deploy: a terminal state frees the job for a new one");
	CHECK(store_begin(s) == 0);
	CHECK(deploy_transition(s, d.d_id, DS_PRE_HOOKS, DS_FAILED, "system",
	    "fail", "hook migrate failed: exit 3") == 1);
	CHECK(store_commit(s) == 0);
	CHECK(store_deploy_active(s, "default", "web", &r) == 1);
	CHECK(store_deploy_last_terminal(s, "default", "web", &r) == 0);
	CHECK(r.d_state == DS_FAILED);
	CHECK_STR(r.d_reason, "hook migrate failed: exit 3");
	CHECK(r.d_ended_at > 0);
	deploy_free(&r);
	fill(&e, "web", DS_PENDING_APPROVAL);
	e.d_retry_of = d.d_id;
	CHECK(store_begin(s) == 0);
	CHECK(deploy_create(s, &e, "bob") == 0);
	CHECK(store_commit(s) == 0);
	CHECK(store_deploy_active_ids(s, &ids, &n) == 0);
	CHECK(n == 1 && ids[0] == e.d_id);
	free(ids);
	TEST_END();

	TEST_BEGIN("deploy: a rollback leaves neither state nor event");
	CHECK(store_begin(s) == 0);
	CHECK(deploy_transition(s, e.d_id, DS_PENDING_APPROVAL, DS_REJECTED,
	    "bob", "reject", "not now") == 1);
	store_rollback(s);
	CHECK(store_deploy_load(s, e.d_id, &r) == 0);
	CHECK(r.d_state == DS_PENDING_APPROVAL);
	deploy_free(&r);
	CHECK(storefix_int(s, "SELECT count(*) FROM events WHERE action = "
	    "'deployment.reject'") == 0);
	TEST_END();

	TEST_BEGIN("deploy: hook runs by idempotency token");
	CHECK(store_begin(s) == 0);
	CHECK(store_deploy_hookrun_create(s, d.d_id, "pre", 0, "1:pre:0") == 0);
	CHECK(store_deploy_hookrun_create(s, d.d_id, "pre", 0, "1:pre:0") == -1);
	CHECK(store_deploy_hookrun_update(s, "1:pre:0", "dispatched",
	    "migrate-bb22bb22/dispatch-1-abcdef01", -1, NULL) == 0);
	CHECK(store_commit(s) == 0);
	CHECK(store_deploy_hookrun_get(s, "1:pre:0", &hr) == 0);
	CHECK_STR(hr.hr_state, "dispatched");
	CHECK_STR(hr.hr_child, "migrate-bb22bb22/dispatch-1-abcdef01");
	CHECK(hr.hr_exit_code == -1);
	deploy_hookrun_free(&hr);
	CHECK(store_begin(s) == 0);
	CHECK(store_deploy_hookrun_update(s, "1:pre:0", "failed", NULL, 3,
	    "exit 3") == 0);
	CHECK(store_commit(s) == 0);
	CHECK(store_deploy_hookrun_get(s, "1:pre:0", &hr) == 0);
	CHECK(hr.hr_exit_code == 3 && hr.hr_ended_at > 0);
	CHECK_STR(hr.hr_child, "migrate-bb22bb22/dispatch-1-abcdef01");
	deploy_hookrun_free(&hr);
	CHECK(store_deploy_hookrun_get(s, "nope", &hr) == 1);
	TEST_END();

	store_close(s);
	TEST_EXIT();
}
