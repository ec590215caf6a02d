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

#include "log.h"
#include "xmalloc.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_leftbehind.h"
#include "store_operation.h"
#include "engine.h"
#include "nomad.h"
#include "engine_apply.h"
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
	char		 line[512], target[64];
	int		 rc;

	leftbehind_last_line(error != NULL ? error : "failed", line,
	    sizeof(line));
	if (store_begin(s) == -1)
		return -1;
	/* Already recorded: keep the record, refresh its error. */
	if ((rc = store_leftbehind_refresh(s, kind, env, object, line)) == -1)
		goto fail;
	if (rc > 0)
		goto commit;
	if (store_leftbehind_insert(s, deployment, kind, env, object,
	    line) == -1)
		goto fail;
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

	if (store_begin(s) == -1)
		return -1;
	if (store_leftbehind_delete(s, kind, env, object) == 0 &&
	    store_commit(s) == 0)
		return 0;
	store_rollback(s);
	return -1;
}

/* ---- revisions no one needs ---- */

/* One object being stopped: by a cleanup, or by a retry (the API). */
struct lb_one {
	struct leftbehind_clean	*lo_clean;	/* a cleanup's kind, or NULL */
	struct lb_retry		*lo_r;		/* a retry's, or NULL */
	char			*lo_kind;
	char			*lo_env;
	char			*lo_object;
	int64_t			 lo_deployment;
};

static struct lb_one *
lb_one_new(const char *kind, const char *env, const char *object,
    int64_t deployment)
{
	struct lb_one	*lo;

	if ((lo = calloc(1, sizeof(*lo))) == NULL)
		fatal("%s", __func__);
	lo->lo_kind = xstrdup(kind);
	lo->lo_env = xstrdup(env);
	lo->lo_object = xstrdup(object);
	lo->lo_deployment = deployment;
	return lo;
}

static void
lb_one_free(struct lb_one *lo)
{
	if (lo->lo_clean != NULL)
		lo->lo_clean->lk_inflight--;
	free(lo->lo_kind);
	free(lo->lo_env);
	free(lo->lo_object);
	free(lo);
}

/* A stop's answer: stopped or gone, the record goes (1); else it stays. */
static int
lb_stop_answered(const struct nomad_result *res, const char *kind,
    const char *env, const char *object, int64_t deployment,
    const char *error)
{
	if (nomad_ok(res) || res->nr_status == 404) {
		leftbehind_clear(kind, env, object);
		return 1;
	}
	leftbehind_add(kind, env, object, deployment, error);
	return 0;
}

static void
lb_cleaned(struct nomad_result *res, void *arg)
{
	struct lb_one			*lo = arg;
	const struct leftbehind_clean	*k = lo->lo_clean;

	if (lb_stop_answered(res, lo->lo_kind, lo->lo_env, lo->lo_object,
	    lo->lo_deployment, apply_err(res)))
		log_info("stopped %s revision %s/%s: %s", k->lk_what,
		    lo->lo_env, lo->lo_object, k->lk_why);
	else
		log_warnx("stopping %s revision %s/%s: %s; left behind",
		    k->lk_what, lo->lo_env, lo->lo_object, apply_err(res));
	lb_one_free(lo);
}

static void
lb_clean_read(struct nomad_result *res, void *arg)
{
	struct lb_one			*lo = arg;
	const struct leftbehind_clean	*k = lo->lo_clean;

	/* Gone, stopped, or unknown now (asked again after a cycle). */
	if (!nomad_ok(res) || json_is_true(json_object_get(res->nr_json,
	    "Stop")) || (k->lk_busy != NULL && k->lk_busy(engine_store(),
	    lo->lo_env, lo->lo_object))) {
		lb_one_free(lo);
		return;
	}
	nomad_job_stop(lo->lo_env, lo->lo_object, 0, lb_cleaned, lo);
}

void
leftbehind_clean_one(const char *rev, const char *ns, int64_t deployment,
    void *arg)
{
	struct lb_one	*lo;

	lo = lb_one_new(((struct leftbehind_clean *)arg)->lk_kind, ns, rev,
	    deployment);
	lo->lo_clean = arg;
	lo->lo_clean->lk_inflight++;
	nomad_job_read(lo->lo_env, lo->lo_object, lb_clean_read, lo);
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

/* The records of a deployment, as lb_list() shows them. */
struct lb_page {
	json_t		*lp_items;
	int64_t		 lp_deployment;
};

static void
lb_list_row(const struct store_leftbehind_row *lr, void *arg)
{
	struct lb_page	*lp = arg;

	json_array_append_new(lp->lp_items, jsonb_pack(
	    "{s:I,s:I,s:s,s:s,s:s,s:o,s:o}",
	    "id", (json_int_t)lr->lr_id,
	    "deployment", (json_int_t)lp->lp_deployment,
	    "kind", lr->lr_kind,
	    "object", lr->lr_object,
	    "environment", lr->lr_env,
	    "error", jsonb_str(lr->lr_error),
	    "created_at", api_time_json(lr->lr_created_at)));
}

static void
lb_list(struct api_req *req, struct api_resp *resp)
{
	struct lb_page	 lp;
	int64_t		 id;

	if (lb_deployment_arg(req, resp, 0, &id) == -1)
		return;
	lp.lp_items = json_array();
	lp.lp_deployment = id;
	if (store_leftbehind_list(engine_store(), id, lb_list_row, &lp) == -1) {
		json_decref(lp.lp_items);
		api_error(resp, 500, "runtime_error", "the database: %s",
		    store_error(engine_store()));
		return;
	}
	resp->status = 200;
	resp->body = jsonb_pack("{s:I,s:o,s:o}", "deployment", (json_int_t)id,
	    "items", lp.lp_items, "next", json_null());
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
lb_stopped(struct nomad_result *res, void *arg)
{
	struct lb_one	*lo = arg;
	struct lb_retry	*r = lo->lo_r;

	if (lb_stop_answered(res, lo->lo_kind, lo->lo_env, lo->lo_object,
	    lo->lo_deployment, res->nr_error != NULL ? res->nr_error :
	    "no answer from Nomad"))
		r->lr_removed++;
	else
		r->lr_failing++;
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

/* The walk of lb_retry(): its request, and the retry once a row came. */
struct lb_walk {
	struct api_req	*lw_req;
	struct lb_retry	*lw_retry;
	int64_t		 lw_deployment;
};

static void
lb_retry_new(struct lb_walk *lw)
{
	if ((lw->lw_retry = calloc(1, sizeof(*lw->lw_retry))) == NULL)
		fatal("calloc");
	lw->lw_retry->lr_deployment = lw->lw_deployment;
	lw->lw_retry->lr_later = api_later(lw->lw_req);
	lw->lw_retry->lr_pending = 1;	/* the walk's own */
}

static void
lb_retry_one(const struct store_leftbehind_row *lr, void *arg)
{
	struct lb_walk	*lw = arg;
	struct lb_retry	*r;
	struct lb_one	*lo;
	char		 err[256];

	if (lw->lw_retry == NULL)
		lb_retry_new(lw);
	r = lw->lw_retry;
	lo = lb_one_new(lr->lr_kind, lr->lr_env, lr->lr_object,
	    r->lr_deployment);
	lo->lo_r = r;
	if (strcmp(lo->lo_kind, LB_HOOK_REVISION) == 0 ||
	    (strcmp(lo->lo_kind, LB_OPERATION_REVISION) == 0 &&
	    !store_operation_revision_busy(engine_store(), lo->lo_env,
	    lo->lo_object))) {
		/* Never an operation revision a run is under way on. */
		r->lr_pending++;
		nomad_job_stop(lo->lo_env, lo->lo_object, 0, lb_stopped, lo);
	} else if (strcmp(lo->lo_kind, LB_SUSPEND) == 0 &&
	    suspend_retry(lo->lo_env, lo->lo_object, r->lr_deployment,
	    lb_resuspended, lo, err, sizeof(err)) == 0) {
		r->lr_pending++;
	} else {
		/* A kind nops cannot retry, or a refusal. */
		r->lr_refused++;
		lb_one_free(lo);
	}
}

static void
lb_retry(struct api_req *req, struct api_resp *resp)
{
	struct lb_walk	 lw;
	int64_t		 id;

	if (lb_deployment_arg(req, resp, 0, &id) == -1 ||
	    api_json_body_check(req, resp) == -1)
		return;
	if (lb_target_busy(resp, id))
		return;
	lw.lw_req = req;
	lw.lw_retry = NULL;
	lw.lw_deployment = id;
	/* A read that fails before the first row answers; later, it ends. */
	if (store_leftbehind_list(engine_store(), id, lb_retry_one,
	    &lw) == -1 && lw.lw_retry == NULL) {
		api_error(resp, 500, "runtime_error", "the database: %s",
		    store_error(engine_store()));
		return;
	}
	if (lw.lw_retry == NULL)
		lb_retry_new(&lw);
	resp->status = API_DEFERRED;
	lb_retry_end(lw.lw_retry);
}

static void
lb_forget(struct api_req *req, struct api_resp *resp)
{
	struct store	*s = engine_store();
	const char	*errstr = NULL;
	char		 target[64];
	int64_t		 entry, id;
	int		 rc;

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
	if ((rc = store_leftbehind_forget(s, entry, id)) == -1)
		goto fail;
	if (rc == 0) {
		store_rollback(s);
		api_error(resp, 404, "not_found", "no record %lld of "
		    "deployment %lld", (long long)entry, (long long)id);
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

/*
 * Alike on purpose: a route table like hosts_ops.c's and operation.c's;
 * the rows are data api.c reads, only their layout repeats.
 */
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
