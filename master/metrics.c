/*
 * GET /metrics in the Prometheus text format (0.0.4), so that the usual
 * alerts can be written: a loop that stopped succeeding, deployments
 * waiting for a person, drift, failed fetches, restarting workers,
 * failing notifications.  Everything is read from what the master holds
 * in memory, plus one GROUP BY over the deployments: a scrape is cheap.
 *
 * Access: with "metrics token file" in the config, a scraper presents
 * "Authorization: Bearer <token>" (compared in constant time); the local
 * admin on the control socket may always read.  Without a token the
 * route follows the API's access rules: it needs read in some namespace,
 * and the per-job series show only the namespaces the client may read.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "logflood.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "deploy.h"
#include "store_deploy.h"
#include "store_job.h"
#include "engine.h"
#include "repo.h"
#include "api.h"
#include "metrics.h"
#include "cfile.h"
#include "webpub.h"
#include "acl.h"
#include "auth.h"
#include "notify.h"
#include "webhook.h"
#include "webhook_verify.h"

#define METRICS_STATUS_MAX	600

static uint64_t	 metrics_http[METRICS_STATUS_MAX];
static char	*metrics_token;
static size_t	 metrics_tokenlen;

/* Short names for the exposition's text (a growbuf), written in many places. */
static void
mo_add(struct metrics_out *mo, const char *s, size_t n)
{
	growbuf_xadd(&mo->mo_text, s, n);
}

static void
mo_str(struct metrics_out *mo, const char *s)
{
	growbuf_xputs(&mo->mo_text, s);
}

/* A label value: backslash, double quote and newline are escaped. */
static void
mo_label_value(struct metrics_out *mo, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '\\':
			mo_str(mo, "\\\\");
			break;
		case '"':
			mo_str(mo, "\\\"");
			break;
		case '\n':
			mo_str(mo, "\\n");
			break;
		default:
			mo_add(mo, s, 1);
		}
	}
}

void
metrics_family(struct metrics_out *mo, const char *name, const char *type,
    const char *help)
{
	mo_str(mo, "# HELP ");
	mo_str(mo, name);
	mo_str(mo, " ");
	/* HELP text escapes only backslash and newline; ours has neither. */
	mo_str(mo, help);
	mo_str(mo, "\n# TYPE ");
	mo_str(mo, name);
	mo_str(mo, " ");
	mo_str(mo, type);
	mo_str(mo, "\n");
}

void
metrics_sample(struct metrics_out *mo, const char *name, int64_t value, ...)
{
	va_list		 ap;
	const char	*k, *v;
	char		 num[32];
	int		 first = 1;

	mo_str(mo, name);
	va_start(ap, value);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, const char *);
		mo_str(mo, first ? "{" : ",");
		first = 0;
		mo_str(mo, k);
		mo_str(mo, "=\"");
		mo_label_value(mo, v != NULL ? v : "");
		mo_str(mo, "\"");
	}
	va_end(ap);
	if (!first)
		mo_str(mo, "}");
	snprintf(num, sizeof(num), " %lld\n", (long long)value);
	mo_str(mo, num);
}

void
metrics_ones(struct metrics_out *mo, const struct metrics_one *m, size_t n)
{
	for (; n > 0; m++, n--) {
		metrics_family(mo, m->m_name, m->m_type, m->m_help);
		metrics_sample(mo, m->m_name, m->m_value, METRICS_END);
	}
}

void
metrics_http_count(int status)
{
	if (status >= 100 && status < METRICS_STATUS_MAX)
		metrics_http[status]++;
}

void
metrics_http_add(int status, uint32_t n)
{
	if (status >= 100 && status < METRICS_STATUS_MAX)
		metrics_http[status] += n;
}

void
metrics_configure(const struct nops_conf *conf)
{
	char	 err[512];

	/* Coalesced logs end their windows on time (logflood.h). */
	log_flood_timer(nopsd_env->n_base);
	cfile_free(metrics_token, metrics_tokenlen);
	metrics_token = NULL;
	metrics_tokenlen = 0;
	if (conf->metrics_token_file == NULL)
		return;
	if (cfile_read(conf->metrics_token_file, METRICS_TOKEN_MAX,
	    CFILE_SECRET, &metrics_token, &metrics_tokenlen, err,
	    sizeof(err)) == -1) {
		/* Fail closed: a token was wanted, so none will match. */
		log_warnx("metrics token file %s; /metrics answers only the "
		    "local admin", err);
		if ((metrics_token = calloc(1, 1)) == NULL)
			fatal("calloc");
		metrics_tokenlen = 0;
	}
}

static time_t
metrics_iso_time(const char *s)
{
	struct tm	 tm;
	const char	*end;

	if (s == NULL)
		return 0;
	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm)) == NULL ||
	    *end != '\0')
		return 0;
	return timegm(&tm);
}

static void
metrics_process(struct metrics_out *mo)
{
	struct nopsd		*env = nopsd_env;
	struct worker		*w;
	struct log_flood	*lf;
	enum nops_proc		 id;
	char			 code[8];
	int			 status;
	const struct metrics_one one[] = {
		{ "nops_start_time_seconds", "gauge",
		    "When nopsd started, in unix seconds.",
		    (int64_t)env->n_started },
		{ "nops_config_last_load_timestamp_seconds", "gauge",
		    "When the running configuration was loaded, in unix "
		    "seconds.", (int64_t)env->n_conf_loaded },
		{ "nops_config_reload_failures_total", "counter",
		    "Reloads refused because the configuration had errors.",
		    (int64_t)env->n_reload_failures },
	};

	metrics_family(mo, "nops_build_info", "gauge",
	    "Always 1; the version of nopsd as a label.");
	metrics_sample(mo, "nops_build_info", 1, "version", NOPS_VERSION,
	    METRICS_END);
	metrics_ones(mo, one, sizeof(one) / sizeof(one[0]));

	metrics_family(mo, "nops_worker_up", "gauge",
	    "1 while the worker runs and has said it is ready.");
	for (id = PROC_GITWORKER; id < PROC_MAX; id++) {
		w = &workers[id];
		metrics_sample(mo, "nops_worker_up",
		    w->w_pid != 0 && w->w_ready, "worker", w->w_title,
		    METRICS_END);
	}
	metrics_family(mo, "nops_worker_restarts_total", "counter",
	    "Restarts of each worker since nopsd started.");
	for (id = PROC_GITWORKER; id < PROC_MAX; id++) {
		w = &workers[id];
		metrics_sample(mo, "nops_worker_restarts_total",
		    (int64_t)w->w_restarts, "worker", w->w_title, METRICS_END);
	}

	metrics_family(mo, "nops_http_requests_total", "counter",
	    "HTTP answers by status: the master's, and those the "
	    "webworker gave by itself (reads, refusals), reported every "
	    "few seconds.");
	for (status = 100; status < METRICS_STATUS_MAX; status++) {
		if (metrics_http[status] == 0)
			continue;
		snprintf(code, sizeof(code), "%d", status);
		metrics_sample(mo, "nops_http_requests_total",
		    (int64_t)metrics_http[status], "code", code, METRICS_END);
	}

	metrics_family(mo, "nops_log_events_total", "counter",
	    "Events of kinds that are logged coalesced (rejected webhooks, "
	    "failed and throttled logins), each counted.");
	for (lf = log_flood_first(); lf != NULL; lf = lf->lf_next)
		metrics_sample(mo, "nops_log_events_total",
		    (int64_t)lf->lf_total, "what", lf->lf_what, METRICS_END);
	/*
	 * Alike on purpose: the loop above, another counter; a family's
	 * samples stand together in the text format, so one pass each.
	 */
	metrics_family(mo, "nops_log_suppressed_total", "counter",
	    "Lines of those events not logged one by one (summed up in the "
	    "log every 10 s instead).");
	for (lf = log_flood_first(); lf != NULL; lf = lf->lf_next)
		metrics_sample(mo, "nops_log_suppressed_total",
		    (int64_t)lf->lf_suppressed, "what", lf->lf_what,
		    METRICS_END);
}

static void
metrics_repos(struct metrics_out *mo)
{
	json_t		*all, *list, *r;
	size_t		 i;

	all = repo_json_list();
	list = json_object_get(all, "items");
	metrics_family(mo,
	    "nops_repository_last_fetch_success_timestamp_seconds", "gauge",
	    "When a poll of the repository last succeeded, in unix seconds "
	    "(0: never).");
	json_array_foreach(list, i, r)
		metrics_sample(mo,
		    "nops_repository_last_fetch_success_timestamp_seconds",
		    (int64_t)metrics_iso_time(json_string_value(
		    json_object_get(r, "checked_at"))), "repository",
		    json_string_value(json_object_get(r, "name")), METRICS_END);
	metrics_family(mo, "nops_repository_fetch_errors_total", "counter",
	    "Polls of the repository that failed.");
	json_array_foreach(list, i, r)
		metrics_sample(mo, "nops_repository_fetch_errors_total",
		    (int64_t)json_integer_value(json_object_get(r, "errors")),
		    "repository",
		    json_string_value(json_object_get(r, "name")), METRICS_END);
	metrics_family(mo, "nops_repository_up", "gauge",
	    "1 when the repository's last poll succeeded.");
	json_array_foreach(list, i, r)
		metrics_sample(mo, "nops_repository_up",
		    json_is_null(json_object_get(r, "last_error")) &&
		    !json_is_null(json_object_get(r, "checked_at")),
		    "repository",
		    json_string_value(json_object_get(r, "name")), METRICS_END);
	json_decref(all);
}

/* Per-job series: the namespaces req may read; NULL: every one. */
static int
metrics_ns_ok(const struct api_req *req, const char *ns)
{
	return req == NULL || api_auth_allows(req, CAP_READ, ns);
}

/* The detection and apply loops' totals and last cycle. */
static void
metrics_engine_totals(struct metrics_out *mo, const struct engine *e)
{
	const struct metrics_one	 one[] = {
		/*
		 * Alike on purpose: metrics_process' rows; a metric a row,
		 * each its own name, words and value.
		 */
		{ "nops_detection_last_success_timestamp_seconds", "gauge",
		    "When the last complete detection cycle ended, in unix "
		    "seconds (0: none yet).", (int64_t)e->e_last_detect },
		{ "nops_detection_cycles_total", "counter",
		    "Complete detection cycles.", (int64_t)e->e_cycles },
		/* Plan only what may have changed (engine_survey.c). */
		{ "nops_detection_nomad_requests_total", "counter",
		    "Nomad requests made by detection cycles (parses answered "
		    "from memory are not counted).",
		    (int64_t)e->e_total_requests },
		{ "nops_detection_jobs_planned_total", "counter",
		    "Managed jobs read and planned in Nomad by detection "
		    "cycles.", (int64_t)e->e_total_planned },
		{ "nops_detection_jobs_unchanged_total", "counter",
		    "Managed jobs decided from their last plan, without a "
		    "request, because neither git nor Nomad moved.",
		    (int64_t)e->e_total_skipped },
		{ "nops_detection_full_cycles_total", "counter",
		    "Detection cycles that planned every managed job (a "
		    "start, a doubt, replan-interval).",
		    (int64_t)e->e_total_full },
		{ "nops_detection_focused_cycles_total", "counter",
		    "Detection cycles focused on the jobs of the job files a "
		    "push changed (engine_focus.c).",
		    (int64_t)e->e_total_focused },
		/*
		 * Alike on purpose: the rows above, a metric a row; from
		 * here, the last complete cycle's gauges.
		 */
		{ "nops_detection_last_nomad_requests", "gauge",
		    "Nomad requests of the last complete detection cycle.",
		    (int64_t)e->e_last_requests },
		{ "nops_detection_last_jobs_planned", "gauge",
		    "Managed jobs planned in Nomad by the last detection "
		    "cycle.", (int64_t)e->e_last_planned },
		{ "nops_detection_last_jobs_unchanged", "gauge",
		    "Managed jobs the last detection cycle decided from their "
		    "last plan.", (int64_t)e->e_last_skipped },
		{ "nops_detection_last_full", "gauge",
		    "1 when the last detection cycle planned every managed "
		    "job.", e->e_last_full != 0 },
		{ "nops_detection_last_focused", "gauge",
		    "1 when the last detection cycle was focused on the "
		    "changed files' jobs.", e->e_last_focused != 0 },
		{ "nops_detection_last_jobs_decided", "gauge",
		    "Managed jobs the last detection cycle decided (a focused "
		    "cycle keeps the others' decisions).",
		    (int64_t)e->e_last_decided },
		{ "nops_apply_last_success_timestamp_seconds", "gauge",
		    "When the last apply cycle ran, in unix seconds (0: none "
		    "yet).", (int64_t)e->e_last_apply },
		{ "nops_unparsed_files", "gauge",
		    "Job files that did not parse in the last detection "
		    "cycle.", (int64_t)e->e_nfile_errors },
		{ "nops_orphan_jobs", "gauge",
		    "Jobs nops deployed that are gone from git but still run.",
		    (int64_t)e->e_norphans },
	};

	metrics_ones(mo, one, sizeof(one) / sizeof(one[0]));
}

static void
metrics_engine(struct metrics_out *mo, const struct api_req *req)
{
	struct engine	*e = engine_env;
	struct ejob	*ej;
	int		 paused;

	if (e == NULL)
		return;
	metrics_engine_totals(mo, e);
	/* Per managed job: three families, one pass each. */
	metrics_family(mo, "nops_job_drift", "gauge",
	    "1 when the managed job differs from git.");
	RB_FOREACH(ej, ejobs, &e->e_jobs)
		if (ej->ej_meta.jm_role == META_MANAGED &&
		    metrics_ns_ok(req, ej->ej_ns))
			metrics_sample(mo, "nops_job_drift", ej->ej_drift != 0,
			    "namespace", ej->ej_ns, "job", ej->ej_id,
			    METRICS_END);
	metrics_family(mo, "nops_job_paused", "gauge",
	    "1 when a person paused the managed job.");
	RB_FOREACH(ej, ejobs, &e->e_jobs) {
		if (ej->ej_meta.jm_role != META_MANAGED ||
		    !metrics_ns_ok(req, ej->ej_ns))
			continue;
		paused = store_job_get(engine_store(), STORE_JOB_PAUSE,
		    ej->ej_ns, ej->ej_id, NULL, NULL, NULL) == 1;
		metrics_sample(mo, "nops_job_paused", paused, "namespace",
		    ej->ej_ns, "job", ej->ej_id, METRICS_END);
	}
	metrics_family(mo, "nops_job_blocked", "gauge",
	    "1 when a failed or rejected deployment blocks the managed job.");
	RB_FOREACH(ej, ejobs, &e->e_jobs)
		if (ej->ej_meta.jm_role == META_MANAGED &&
		    metrics_ns_ok(req, ej->ej_ns))
			metrics_sample(mo, "nops_job_blocked",
			    ej->ej_state != NULL &&
			    strcmp(ej->ej_state, "blocked") == 0,
			    "namespace", ej->ej_ns, "job", ej->ej_id,
			    METRICS_END);
}

/* The deployments of each state, as metrics_deployments() counts them. */
struct metrics_states {
	int64_t		 ms_count[DS_MAX];
	int64_t		 ms_oldest_created[DS_MAX];
	int64_t		 ms_oldest_updated[DS_MAX];
};

static void
metrics_state_cb(const char *name, int64_t count, int64_t oldest_created,
    int64_t oldest_updated, void *arg)
{
	struct metrics_states *ms = arg;
	enum deploy_state ds;

	if (deploy_state_parse(name, &ds) == -1)
		return;
	ms->ms_count[ds] = count;
	ms->ms_oldest_created[ds] = oldest_created;
	ms->ms_oldest_updated[ds] = oldest_updated;
}

/* Deployments by state, and how long the oldest waits for a person. */
static void
metrics_deployments(struct metrics_out *mo)
{
	struct metrics_states ms;
	int64_t		*count = ms.ms_count;
	int64_t		*oldest_created = ms.ms_oldest_created;
	int64_t		*oldest_updated = ms.ms_oldest_updated;
	int64_t		 now = time(NULL), age;
	int		 i;

	memset(&ms, 0, sizeof(ms));
	if (nopsd_env->n_store == NULL)
		return;
	if (store_deploy_count_states(nopsd_env->n_store, metrics_state_cb,
	    &ms) == -1)
		log_warnx("metrics: deployments by state: %s",
		    store_error(nopsd_env->n_store));

	metrics_family(mo, "nops_deployments", "gauge",
	    "Deployments in the store, by state.");
	for (i = 0; i < DS_MAX; i++)
		metrics_sample(mo, "nops_deployments", count[i], "state",
		    deploy_state_str(i), METRICS_END);
	/* A pending approval waits since it was made. */
	age = count[DS_PENDING_APPROVAL] > 0 ?
	    now - oldest_created[DS_PENDING_APPROVAL] : 0;
	metrics_family(mo, "nops_oldest_pending_approval_age_seconds", "gauge",
	    "How long the oldest deployment pending approval has waited "
	    "(0: none waits).");
	metrics_sample(mo, "nops_oldest_pending_approval_age_seconds",
	    age > 0 ? age : 0, METRICS_END);
	/* Awaiting promotion is entered later: its last update. */
	age = count[DS_AWAITING_PROMOTION] > 0 ?
	    now - oldest_updated[DS_AWAITING_PROMOTION] : 0;
	metrics_family(mo, "nops_oldest_awaiting_promotion_age_seconds",
	    "gauge", "How long the oldest deployment awaiting canary "
	    "promotion has waited (0: none waits).");
	metrics_sample(mo, "nops_oldest_awaiting_promotion_age_seconds",
	    age > 0 ? age : 0, METRICS_END);
}

char *
metrics_render(const struct api_req *req, size_t *len)
{
	struct metrics_out	 mo;

	memset(&mo, 0, sizeof(mo));
	mo_add(&mo, "", 0);	/* "" when nothing follows */
	metrics_process(&mo);
	metrics_repos(&mo);
	metrics_engine(&mo, req);
	metrics_deployments(&mo);
	webhook_metrics(&mo);
	notify_metrics(&mo);
	webpub_metrics(&mo);
	auth_hash_metrics(&mo);
	*len = mo.mo_text.gb_len;
	return mo.mo_text.gb_buf;
}

static int
metrics_bearer_ok(const struct api_req *req)
{
	const char	*h = api_header(req, "Authorization");
	size_t		 n = sizeof("Bearer ") - 1;

	if (h == NULL || strncasecmp(h, "Bearer ", n) != 0)
		return 0;
	h += n;
	while (*h == ' ')
		h++;
	return metrics_tokenlen > 0 && webhook_secret_equal(h, strlen(h),
	    metrics_token, metrics_tokenlen);
}

static void
metrics_get(struct api_req *req, struct api_resp *resp)
{
	const struct acl_ident	*id;
	int			 all = req->ar_admin;

	if (metrics_token != NULL) {
		if (!all && !metrics_bearer_ok(req)) {
			api_add_header(resp, "WWW-Authenticate",
			    "Bearer realm=\"nops metrics\"");
			api_error(resp, 401, "unauthorized", "/metrics needs "
			    "Authorization: Bearer and the metrics token");
			return;
		}
		all = 1;
	} else if (!all && !api_auth_allows(req, CAP_READ, NULL)) {
		/* No token: whoever may read the API, as the API says. */
		id = api_auth_ident(req);
		if (id == NULL || id->ai_kind == ACL_NONE ||
		    id->ai_kind == ACL_ANONYMOUS) {
			api_add_header(resp, "WWW-Authenticate",
			    "Bearer realm=\"nops\"");
			api_error(resp, 401, "unauthorized", "authentication "
			    "required (needs read)");
		} else
			api_error(resp, 403, "forbidden", "%s may not read "
			    "/metrics: needs read", req->ar_actor);
		return;
	}
	resp->status = 200;
	resp->ctype = METRICS_CTYPE;
	resp->raw = metrics_render(all ? NULL : req, &resp->rawlen);
}

/*
 * Public to the router: the handler decides (the metrics token, else
 * read as the ACL grants it), so that a scraper needs no account.
 */
const struct api_route metrics_routes[] = {
	{ "GET",  "/metrics",		0, metrics_get, ACL_ROUTE_PUBLIC,
	    API_NS_NONE },
};
const size_t metrics_nroutes = sizeof(metrics_routes) /
    sizeof(metrics_routes[0]);
