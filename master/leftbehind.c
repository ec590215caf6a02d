/*
 * Objects left behind: the records, and the API that lists, retries and
 * forgets them (GET/POST /api/v1/deployments/left-behind/{deployment},
 * DELETE /api/v1/deployments/left-behind/{entry}/{deployment}).
 *
 * A record holds what its retry needs and nothing secret: the kind of
 * object, its environment (a namespace), its name, the last line of the
 * error and the deployment it belongs to.  There is no foreign key: the
 * records stay when the deployment is gone.
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sqlite3.h>

#include "log.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "engine.h"
#include "nomad.h"
#include "deploy.h"
#include "store_deploy.h"
#include "api.h"
#include "jsonb.h"
#include "suspend.h"
#include "leftbehind.h"
#include "operation.h"

/* The last non-empty line of an error, bounded: what a record keeps. */
static void
leftbehind_last_line(const char *error, char *buf, size_t len)
{
	const char	*end, *start;

	end = error + strlen(error);
	while (end > error && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' '))
		end--;
	start = end;
	while (start > error && start[-1] != '\n')
		start--;
	if ((size_t)(end - start) >= len)
		start = end - (len - 1);
	memcpy(buf, start, end - start);
	buf[end - start] = '\0';
}

int
leftbehind_add(const char *kind, const char *env, const char *object,
    int64_t deployment, const char *error)
{
	struct store	*s = engine_store();
	sqlite3_stmt	*st;
	char		 line[512], target[64];

	leftbehind_last_line(error != NULL ? error : "failed", line,
	    sizeof(line));
	if (store_begin(s) == -1)
		return -1;
	/* Already recorded: keep the record, refresh its error. */
	st = store_prepare(s, "UPDATE left_behind SET error = ?1 WHERE"
	    " kind = ?2 AND environment = ?3 AND object = ?4");
	if (st == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, line, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, env, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, object, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
	if (sqlite3_changes(store_db(s)) > 0)
		goto commit;
	st = store_prepare(s, "INSERT INTO left_behind (deployment_id, kind,"
	    " object, environment, error, created_at) VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?6)");
	if (st == NULL)
		goto fail;
	sqlite3_bind_int64(st, 1, deployment);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, object, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, env, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, line, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, time(NULL));
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
	snprintf(target, sizeof(target), "deployment/%lld",
	    (long long)deployment);
	if (store_event(s, "system", "left_behind.add", target, object) == -1)
		goto fail;
commit:
	if (store_commit(s) == 0)
		return 0;
fail:
	store_rollback(s);
	log_warnx("cannot record %s %s/%s left behind", kind, env, object);
	return -1;
}

int
leftbehind_clear(const char *kind, const char *env, const char *object)
{
	struct store	*s = engine_store();
	sqlite3_stmt	*st;
	int		 rc;

	if (store_begin(s) == -1)
		return -1;
	st = store_prepare(s, "DELETE FROM left_behind WHERE kind = ?1 AND"
	    " environment = ?2 AND object = ?3");
	if (st == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, env, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, object, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE && store_commit(s) == 0)
		return 0;
fail:
	store_rollback(s);
	return -1;
}

/* ---- the API ---- */

struct lb_retry {
	struct api_later *lr_later;
	int64_t		 lr_deployment;
	int		 lr_pending;
	int		 lr_removed;
	int		 lr_failing;
	int		 lr_refused;
};

struct lb_one {
	struct lb_retry	*lo_r;
	char		*lo_kind;
	char		*lo_env;
	char		*lo_object;
};

static int
lb_deployment_arg(struct api_req *req, struct api_resp *resp, int arg,
    int64_t *id)
{
	const char	*errstr = NULL;

	*id = strtonum(req->ar_args[arg], 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		api_error(resp, 404, "not_found", "no deployment %s",
		    req->ar_args[arg]);
		return -1;
	}
	return 0;
}

/*
 * 409 while a deployment of the deployment's target is unfinished: its
 * cleanup may be under way.  A deployment that is gone has no target.
 */
static int
lb_target_busy(struct api_resp *resp, int64_t id)
{
	struct deploy	 d, act;
	int		 busy = 0;

	if (store_deploy_load(engine_store(), id, &d) != 0)
		return 0;
	if (store_deploy_active(engine_store(), d.d_ns, d.d_job, &act) == 0) {
		api_error(resp, 409, "conflict", "%s/%s has deployment %lld "
		    "unfinished; try again when it ends", d.d_ns, d.d_job,
		    (long long)act.d_id);
		deploy_free(&act);
		busy = 1;
	}
	deploy_free(&d);
	return busy;
}

static void
lb_list(struct api_req *req, struct api_resp *resp)
{
	sqlite3_stmt	*st;
	json_t		*items;
	int64_t		 id;
	int		 rc;

	if (lb_deployment_arg(req, resp, 0, &id) == -1)
		return;
	st = store_prepare(engine_store(), "SELECT id, kind, object,"
	    " environment, error, created_at FROM left_behind WHERE"
	    " deployment_id = ?1 ORDER BY id");
	if (st == NULL) {
		api_error(resp, 500, "runtime_error", "the database: %s",
		    store_error(engine_store()));
		return;
	}
	sqlite3_bind_int64(st, 1, id);
	items = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, jsonb_pack(
		    "{s:I,s:I,s:s,s:s,s:s,s:o,s:o}",
		    "id", (json_int_t)sqlite3_column_int64(st, 0),
		    "deployment", (json_int_t)id,
		    "kind", (const char *)sqlite3_column_text(st, 1),
		    "object", (const char *)sqlite3_column_text(st, 2),
		    "environment", (const char *)sqlite3_column_text(st, 3),
		    "error", jsonb_str((const char *)sqlite3_column_text(st,
		    4)),
		    "created_at", api_time_json(sqlite3_column_int64(st, 5))));
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		json_decref(items);
		api_error(resp, 500, "runtime_error", "the database: %s",
		    store_error(engine_store()));
		return;
	}
	resp->status = 200;
	resp->body = jsonb_pack("{s:I,s:o,s:o}", "deployment", (json_int_t)id,
	    "items", items, "next", json_null());
}

static void
lb_retry_end(struct lb_retry *r)
{
	struct api_resp	 resp;

	if (--r->lr_pending > 0)
		return;
	memset(&resp, 0, sizeof(resp));
	resp.status = 200;
	resp.body = jsonb_pack("{s:I,s:i,s:i,s:i}", "deployment",
	    (json_int_t)r->lr_deployment, "removed", r->lr_removed,
	    "still_failing", r->lr_failing, "refused", r->lr_refused);
	api_later_answer(r->lr_later, &resp);
	free(r);
}

static void
lb_one_free(struct lb_one *lo)
{
	free(lo->lo_kind);
	free(lo->lo_env);
	free(lo->lo_object);
	free(lo);
}

static void
lb_stopped(struct nomad_result *res, void *arg)
{
	struct lb_one	*lo = arg;
	struct lb_retry	*r = lo->lo_r;

	if (nomad_ok(res) || res->nr_status == 404) {
		leftbehind_clear(lo->lo_kind, lo->lo_env, lo->lo_object);
		r->lr_removed++;
	} else {
		leftbehind_add(lo->lo_kind, lo->lo_env, lo->lo_object,
		    r->lr_deployment, res->nr_error != NULL ? res->nr_error :
		    "no answer from Nomad");
		r->lr_failing++;
	}
	lb_one_free(lo);
	lb_retry_end(r);
}

static void
lb_resuspended(void *arg, int rc, const char *err)
{
	struct lb_one	*lo = arg;
	struct lb_retry	*r = lo->lo_r;

	/* suspend.c cleared or refreshed the record itself. */
	if (rc == 0)
		r->lr_removed++;
	else
		r->lr_failing++;
	lb_one_free(lo);
	lb_retry_end(r);
}

static void
lb_retry(struct api_req *req, struct api_resp *resp)
{
	sqlite3_stmt	*st;
	struct lb_retry	*r;
	struct lb_one	*lo;
	json_t		*body;
	char		 err[256];
	int64_t		 id;

	if (lb_deployment_arg(req, resp, 0, &id) == -1)
		return;
	if ((body = api_json_body(req, resp)) == NULL)
		return;
	json_decref(body);
	if (lb_target_busy(resp, id))
		return;
	st = store_prepare(engine_store(), "SELECT kind, environment, object"
	    " FROM left_behind WHERE deployment_id = ?1 ORDER BY id");
	if (st == NULL) {
		api_error(resp, 500, "runtime_error", "the database: %s",
		    store_error(engine_store()));
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->lr_deployment = id;
	r->lr_later = api_later(req);
	r->lr_pending = 1;	/* this loop's own */
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if ((lo = calloc(1, sizeof(*lo))) == NULL ||
		    (lo->lo_kind = strdup((const char *)
		    sqlite3_column_text(st, 0))) == NULL ||
		    (lo->lo_env = strdup((const char *)
		    sqlite3_column_text(st, 1))) == NULL ||
		    (lo->lo_object = strdup((const char *)
		    sqlite3_column_text(st, 2))) == NULL)
			fatal("%s", __func__);
		lo->lo_r = r;
		if (strcmp(lo->lo_kind, LB_HOOK_REVISION) == 0 ||
		    (strcmp(lo->lo_kind, LB_OPERATION_REVISION) == 0 &&
		    !operation_revision_busy(lo->lo_env, lo->lo_object))) {
			/* Never an operation revision a run is under way on. */
			r->lr_pending++;
			nomad_job_stop(lo->lo_env, lo->lo_object, 0,
			    lb_stopped, lo);
		} else if (strcmp(lo->lo_kind, LB_SUSPEND) == 0 &&
		    suspend_retry(lo->lo_env, lo->lo_object, id,
		    lb_resuspended, lo, err, sizeof(err)) == 0) {
			r->lr_pending++;
		} else {
			/* A kind nops cannot retry, or a refusal. */
			r->lr_refused++;
			lb_one_free(lo);
		}
	}
	sqlite3_reset(st);
	resp->status = API_DEFERRED;
	lb_retry_end(r);
}

static void
lb_forget(struct api_req *req, struct api_resp *resp)
{
	struct store	*s = engine_store();
	sqlite3_stmt	*st;
	const char	*errstr = NULL;
	char		 target[64];
	int64_t		 entry, id;

	entry = strtonum(req->ar_args[0], 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		api_error(resp, 404, "not_found", "no record %s",
		    req->ar_args[0]);
		return;
	}
	if (lb_deployment_arg(req, resp, 1, &id) == -1)
		return;
	if (lb_target_busy(resp, id))
		return;
	if (store_begin(s) == -1)
		goto fail;
	st = store_prepare(s, "DELETE FROM left_behind WHERE id = ?1 AND"
	    " deployment_id = ?2");
	if (st == NULL)
		goto fail;
	sqlite3_bind_int64(st, 1, entry);
	sqlite3_bind_int64(st, 2, id);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
	if (sqlite3_changes(store_db(s)) == 0) {
		store_rollback(s);
		api_error(resp, 404, "not_found", "no record %lld of deployment "
		    "%lld", (long long)entry, (long long)id);
		return;
	}
	snprintf(target, sizeof(target), "deployment/%lld", (long long)id);
	if (store_event(s, req->ar_actor, "left_behind.forget", target,
	    req->ar_args[0]) == -1 || store_commit(s) == -1)
		goto fail;
	resp->status = 200;
	resp->body = jsonb_pack("{s:I,s:I,s:b}", "id", (json_int_t)entry,
	    "deployment", (json_int_t)id, "forgotten", 1);
	return;
fail:
	store_rollback(s);
	api_error(resp, 500, "runtime_error", "the store refused the change: "
	    "%s", store_error(s));
}

const struct api_route leftbehind_routes[] = {
	{ "GET",    "/api/v1/deployments/left-behind/*", 1, lb_list, CAP_READ,
	    API_NS_DEPLOYMENT },
	{ "POST",   "/api/v1/deployments/left-behind/*", 1, lb_retry,
	    CAP_LEFT_BEHIND, API_NS_DEPLOYMENT },
	{ "DELETE", "/api/v1/deployments/left-behind/*/*", 1, lb_forget,
	    CAP_LEFT_BEHIND, API_NS_DEPLOYMENT_ARG1 },
};
const size_t leftbehind_nroutes = sizeof(leftbehind_routes) /
    sizeof(leftbehind_routes[0]);
