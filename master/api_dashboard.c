/*
 * The dashboard's own API routes: GET /api/v1/overview aggregates what
 * the Overview page shows, so that it renders from one request, and GET
 * /api/v1/events pages the audit log.  Both stay cheap with thousands of
 * jobs and a hundred thousand deployments: every list is bounded, every
 * count comes from an index.
 *
 * Also here: reading the TLS certificate and key of a listener, as root,
 * for the webworker (master/control.c sends them).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "log.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_auth.h"
#include "store_dash.h"
#include "deploy.h"
#include "engine.h"
#include "repo.h"
#include "api.h"
#include "auth.h"
#include "api_dashboard.h"
#include "cfile.h"
#include "jsonb.h"

#define DASH_EVENTS_DEFAULT	50
#define DASH_EVENTS_MAX		500

/* {"count": 0, "items": []}: a bounded list and its exact count. */
static json_t *
dash_list(void)
{
	return jsonb_pack("{s:i,s:[]}", "count", 0, "items");
}

/*
 * Add item to list if the client may read namespace ns (NULL: anything
 * that names no namespace); the count counts only what the client sees.
 */
static void
dash_list_add(struct api_req *req, json_t *list, const char *ns, json_t *item)
{
	json_t	*items = json_object_get(list, "items");

	if (item == NULL)
		fatalx("json_pack");
	if (ns != NULL && !api_auth_allows(req, CAP_READ, ns)) {
		json_decref(item);
		return;
	}
	json_object_set_new(list, "count", json_integer(
	    json_integer_value(json_object_get(list, "count")) + 1));
	if (json_array_size(items) < API_DASHBOARD_ITEMS)
		json_array_append_new(items, item);
	else
		json_decref(item);
}

static json_t *
dash_str(const char *s)
{
	return s != NULL ? jsonb_str(s) : json_null();
}

static const char *
dash_col(const char *s)
{
	return s != NULL ? s : "";
}

/* A list of deployments being filled, for whom. */
struct dash_fill {
	struct api_req	*df_req;
	json_t		*df_list;
};

static int
dash_active_row(const struct store_dash_row *dr, void *arg)
{
	struct dash_fill	*df = arg;

	dash_list_add(df->df_req, df->df_list, dash_col(dr->dr_ns),
	    jsonb_pack("{s:I,s:s,s:s,s:s,s:s,s:o,s:o,s:o}",
	    "id", (json_int_t)dr->dr_id,
	    "namespace", dash_col(dr->dr_ns),
	    "job", dash_col(dr->dr_job),
	    "state", dash_col(dr->dr_state),
	    "commit", dash_col(dr->dr_commit),
	    "created_at", api_time_json(dr->dr_created_at),
	    "updated_at", api_time_json(dr->dr_updated_at),
	    "reason", dash_str(dr->dr_reason)));
	return 0;
}

static int
dash_failed_row(const struct store_dash_row *dr, void *arg)
{
	struct dash_fill	*df = arg;

	dash_list_add(df->df_req, df->df_list, dash_col(dr->dr_ns),
	    jsonb_pack("{s:I,s:s,s:s,s:o,s:o}",
	    "id", (json_int_t)dr->dr_id,
	    "namespace", dash_col(dr->dr_ns), "job", dash_col(dr->dr_job),
	    "reason", dash_str(dr->dr_reason),
	    "ended_at", api_time_json(dr->dr_ended_at)));
	return 0;
}

/*
 * Deployments of a list of the store's (store_dash.h), newest first:
 * the active ones are one per job, so the walk is bounded by the jobs,
 * not by the history.
 */
static json_t *
dash_deployments(struct api_req *req, struct store *s,
    enum store_dash_list which, int *bad)
{
	struct dash_fill	 df = { req, dash_list() };

	if (store_dash_walk(s, which, which == STORE_DASH_FAILED ?
	    dash_failed_row : dash_active_row, &df) == -1)
		*bad = 1;
	return df.df_list;
}

/*
 * A blocked job, unless its failed deployment is listed under failed
 * already: blocked by a rejection, a broken hook, or an acknowledged
 * failure.
 */
static void
dash_blocked_job(struct api_req *req, const struct ejob *ej, json_t *failed,
    json_t *blocked)
{
	json_t	*it;
	size_t	 i;

	json_array_foreach(json_object_get(failed, "items"), i, it)
		if (strcmp(json_string_value(json_object_get(it,
		    "namespace")), ej->ej_ns) == 0 && strcmp(
		    json_string_value(json_object_get(it, "job")),
		    ej->ej_id) == 0)
			return;
	dash_list_add(req, blocked, ej->ej_ns, jsonb_pack("{s:s,s:s,s:s,s:o}",
	    "namespace", ej->ej_ns, "id", ej->ej_id, "state", ej->ej_state,
	    "note", dash_str(ej->ej_note != NULL ? ej->ej_note :
	    ej->ej_error)));
}

static json_t *
dash_repositories(struct api_req *req, json_t *errors)
{
	json_t	*all, *list = dash_list(), *r, *err;
	size_t	 i;

	all = repo_json_list();
	json_array_foreach(json_object_get(all, "items"), i, r) {
		err = json_object_get(r, "last_error");
		dash_list_add(req, list, NULL, jsonb_pack(
		    "{s:O,s:O,s:O,s:O,s:O,s:O}",
		    "name", json_object_get(r, "name"),
		    "state", json_object_get(r, "state"),
		    "commit", json_object_get(r, "commit"),
		    "subject", json_object_get(r, "subject"),
		    "fetched_at", json_object_get(r, "fetched_at"),
		    "error", json_is_object(err) ?
		    json_object_get(err, "message") : json_null()));
		if (json_is_object(err))
			dash_list_add(req, errors, NULL, jsonb_pack(
			    "{s:O,s:O,s:O,s:O}",
			    "name", json_object_get(r, "name"),
			    "message", json_object_get(err, "message"),
			    "at", json_object_get(err, "at"),
			    "failures", json_object_get(err, "failures")));
	}
	json_decref(all);
	return list;
}

/*
 * The jobs the client may read, counted by state (returned); the blocked
 * ones and those in error go to blocked, the duplicates to dups.
 */
static json_t *
dash_jobs(struct api_req *req, struct engine *e, json_t *failed,
    json_t *blocked, json_t *dups, json_int_t *njobs)
{
	struct ejob	*ej;
	json_t		*bystate;
	const char	*k;

	bystate = json_object();
	RB_FOREACH(ej, ejobs, &e->e_jobs) {
		if (!api_auth_allows(req, CAP_READ, ej->ej_ns))
			continue;
		(*njobs)++;
		k = ej->ej_state != NULL ? ej->ej_state : "unknown";
		json_object_set_new(bystate, k, json_integer(
		    json_integer_value(json_object_get(bystate, k)) + 1));
		if (ej->ej_state == NULL)
			continue;
		if (strcmp(ej->ej_state, "blocked") == 0)
			dash_blocked_job(req, ej, failed, blocked);
		else if (strcmp(ej->ej_state, "error") == 0) {
			if (ej->ej_error != NULL && strncmp(ej->ej_error,
			    "declared twice", 14) == 0)
				dash_list_add(req, dups, ej->ej_ns, jsonb_pack(
				    "{s:s,s:s,s:s}", "namespace", ej->ej_ns,
				    "id", ej->ej_id, "error", ej->ej_error));
			else
				dash_list_add(req, blocked, ej->ej_ns,
				    jsonb_pack("{s:s,s:s,s:s,s:o}",
				    "namespace", ej->ej_ns, "id", ej->ej_id,
				    "state", "error", "note", dash_str(
				    ej->ej_note != NULL ? ej->ej_note :
				    ej->ej_error)));
		}
	}
	return bystate;
}

/* Job files that did not parse. */
static json_t *
dash_files(struct api_req *req, const struct engine *e)
{
	json_t	*files;
	size_t	 i;

	files = dash_list();
	for (i = 0; i < e->e_nfile_errors; i++)
		dash_list_add(req, files, NULL,
		    api_engine_file_error_json(&e->e_file_errors[i]));
	return files;
}

/* Workers that restarted. */
static json_t *
dash_restarts(struct api_req *req)
{
	struct worker	*w;
	json_t		*restarts;
	enum nops_proc	 id;

	restarts = dash_list();
	for (id = PROC_GITWORKER; id < PROC_MAX; id++) {
		w = &workers[id];
		if (w->w_restarts == 0)
			continue;
		dash_list_add(req, restarts, NULL, jsonb_pack(
		    "{s:s,s:i,s:s,s:o}",
		    "name", w->w_title, "restarts", (int)w->w_restarts,
		    "state", w->w_pid == 0 ? "restarting" :
		    (w->w_ready ? "running" : "starting"),
		    "last_exit", dash_str(w->w_lastexit[0] != '\0' ?
		    w->w_lastexit : NULL)));
	}
	return restarts;
}

/* Jobs in Nomad that nops deployed once and git no longer declares. */
/* Alike on purpose: dash_files, dash_restarts: other lists and fields. */
static json_t *
dash_orphans(struct api_req *req, const struct engine *e)
{
	json_t	*orphans;
	size_t	 i;

	orphans = dash_list();
	for (i = 0; i < e->e_norphans; i++)
		dash_list_add(req, orphans, e->e_orphans[i].eo_ns,
		    api_engine_orphan_json(&e->e_orphans[i]));
	json_object_set_new(orphans, "complete",
	    json_boolean(e->e_orphans_known));
	return orphans;
}

static void
dash_overview(struct api_req *req, struct api_resp *resp)
{
	struct store	*s = engine_store();
	struct engine	*e = engine_env;
	json_t		*o, *att, *failed, *blocked, *dups, *files, *repoerr;
	json_t		*restarts, *orphans, *bystate, *v;
	json_int_t	 njobs = 0, total = 0;
	const char	*k;
	int		 bad = 0;

	failed = dash_deployments(req, s, STORE_DASH_FAILED, &bad);
	blocked = dash_list();
	dups = dash_list();
	bystate = dash_jobs(req, e, failed, blocked, dups, &njobs);
	files = dash_files(req, e);
	restarts = dash_restarts(req);
	repoerr = dash_list();
	o = json_object();
	json_object_set_new(o, "repositories", dash_repositories(req,
	    repoerr));

	att = json_object();
	json_object_set_new(att, "awaiting_approval", dash_deployments(req, s,
	    STORE_DASH_APPROVAL, &bad));
	json_object_set_new(att, "awaiting_promotion", dash_deployments(req,
	    s, STORE_DASH_PROMOTION, &bad));
	json_object_set_new(att, "failed", failed);
	json_object_set_new(att, "blocked", blocked);
	json_object_set_new(att, "invalid_files", files);
	json_object_set_new(att, "duplicate_jobs", dups);
	json_object_set_new(att, "repository_errors", repoerr);
	json_object_set_new(att, "worker_restarts", restarts);
	json_object_foreach(att, k, v)
		total += json_integer_value(json_object_get(v, "count"));

	orphans = dash_orphans(req, e);
	json_object_set_new(o, "generated_at", api_time_json(time(NULL)));
	json_object_set_new(o, "attention", att);
	json_object_set_new(o, "attention_total", json_integer(total));
	json_object_set_new(o, "in_progress", dash_deployments(req, s,
	    STORE_DASH_IN_PROGRESS, &bad));
	json_object_set_new(o, "orphans", orphans);
	json_object_set_new(o, "jobs", jsonb_pack("{s:I,s:o}", "total", njobs,
	    "by_state", bystate));
	json_object_set_new(o, "engine", jsonb_pack("{s:o,s:o,s:b,s:I}",
	    "last_detection", api_time_json(e->e_last_detect),
	    "last_apply", api_time_json(e->e_last_apply),
	    "detecting", e->e_detecting,
	    "cycles", (json_int_t)e->e_cycles));
	if (bad) {
		/* A partial overview would hide what needs attention. */
		json_decref(o);
		api_error(resp, 500, "runtime_error", "cannot read "
		    "deployments: %s", store_error(s));
		return;
	}
	resp->status = 200;
	resp->body = o;
}

/*
 * May the client see an audit event?  Events of a job or a deployment
 * need read in its namespace; events about users need management (they
 * name addresses); the rest (config, daemon, repositories) any reader.
 */
static int
dash_event_visible(struct api_req *req, const char *target)
{
	char		 ns[NOPS_NAME_MAX * 4 + 1];
	const char	*p, *errstr = NULL;
	int64_t		 id;
	int		 is_plan;
	size_t		 n;

	if (api_auth_allows(req, CAP_MANAGEMENT, NULL))
		return 1;
	if (target == NULL)
		return 1;
	if (strncmp(target, "user/", 5) == 0 ||
	    strncmp(target, "token/", 6) == 0)
		return 0;
	if (strncmp(target, "job/", 4) == 0) {
		p = target + 4;
		n = strcspn(p, "/");
		if (n == 0 || n >= sizeof(ns))
			return 0;
		memcpy(ns, p, n);
		ns[n] = '\0';
		return api_auth_allows(req, CAP_READ, ns);
	}
	if (strncmp(target, "deployment/", 11) == 0) {
		id = strtonum(target + 11, 1, INT64_MAX, &errstr);
		if (errstr != NULL)
			return 0;
		return store_auth_deployment_scope(engine_store(), id, ns,
		    sizeof(ns), &is_plan) == 1 &&
		    api_auth_allows(req, CAP_READ, ns);
	}
	return 1;
}

/* Alike on purpose: api_event_cb (api_engine.c), with the target. */
static int
dash_event_cb(const struct store_event_row *r, void *arg)
{
	json_t	*a = arg;

	json_array_append_new(a, jsonb_pack("{s:I,s:o,s:s,s:s,s:o,s:o}",
	    "id", (json_int_t)r->er_id, "at", api_time_json(r->er_at),
	    "actor", r->er_actor, "action", r->er_action,
	    "target", dash_str(r->er_target),
	    "detail", dash_str(r->er_detail)));
	return 0;
}

/*
 * GET /api/v1/events?limit=&cursor=&target=: the audit log, newest
 * first, without the events the client may not see.  The cursor is the
 * id of the last event looked at; a page holds fewer than limit items
 * only at the end, or when many events in a row are hidden.
 */
static void
dash_events(struct api_req *req, struct api_resp *resp)
{
	json_t		*items, *chunk, *ev;
	char		*v, *target;
	const char	*errstr = NULL;
	int64_t		 before = 0, last = 0;
	int		 limit = DASH_EVENTS_DEFAULT, n, rounds, more = 0;
	size_t		 i;

	if ((v = api_query(req, "limit")) != NULL) {
		limit = (int)strtonum(v, 1, DASH_EVENTS_MAX, &errstr);
		free(v);
		if (errstr != NULL) {
			api_error(resp, 400, "bad_request", "limit is %s "
			    "(1 to %d)", errstr, DASH_EVENTS_MAX);
			return;
		}
	}
	if ((v = api_query(req, "cursor")) != NULL) {
		before = strtonum(v, 1, INT64_MAX, &errstr);
		free(v);
		if (errstr != NULL) {
			api_error(resp, 400, "bad_request", "cursor is %s",
			    errstr);
			return;
		}
	}
	target = api_query(req, "target");
	if (target != NULL && (*target == '\0' ||
	    strlen(target) > STORE_EVENT_FIELD_MAX)) {
		free(target);
		api_error(resp, 400, "bad_request", "target is empty or too "
		    "long");
		return;
	}
	items = json_array();
	/* Bounded work per request, however many events are hidden. */
	for (rounds = 0; rounds < 20 && !more; rounds++) {
		chunk = json_array();
		n = store_events_page(engine_store(), target, before,
		    limit + 1, dash_event_cb, chunk);
		if (n == -1) {
			json_decref(chunk);
			json_decref(items);
			free(target);
			api_error(resp, 500, "runtime_error", "cannot read "
			    "the audit log");
			return;
		}
		json_array_foreach(chunk, i, ev) {
			if ((int)json_array_size(items) == limit) {
				more = 1;
				break;
			}
			last = json_integer_value(json_object_get(ev, "id"));
			if (dash_event_visible(req, json_string_value(
			    json_object_get(ev, "target"))))
				json_array_append(items, ev);
		}
		json_decref(chunk);
		if (n <= limit && !more)
			break;		/* the end of the log */
		before = last;
		if (rounds == 19)
			more = 1;
	}
	free(target);
	resp->body = jsonb_pack("{s:o,s:o}", "items", items, "next", more ?
	    jsonb_printf("%lld", (long long)last) : json_null());
	resp->status = 200;
}

const struct api_route api_dashboard_routes[] = {
	{ "GET",  "/api/v1/overview",	1, dash_overview, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/events",	1, dash_events, CAP_READ, API_NS_NONE },
};
const size_t api_dashboard_nroutes =
    sizeof(api_dashboard_routes) / sizeof(api_dashboard_routes[0]);
