/*
 * The HTTP JSON API as the master answers it.  The webworker parses HTTP
 * and forwards each request (method, path, the client's identity as it saw
 * it, body); the master decides who may do what and answers with a status
 * and a JSON body.  Everything in a request is untrusted input.
 */
#include "config.h"

#include <sys/types.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "log.h"
#include "text.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "wire.h"
#include "hex.h"
#include "conf.h"
#include "master.h"
#include "nomad.h"
#include "repo.h"
#include "store.h"
#include "api.h"
#include "webpub.h"
#include "acl.h"
#include "auth.h"
#include "api_dashboard.h"
#include "openapi.h"
#include "webhook.h"
#include "metrics.h"
#include "plans.h"
#include "jsonb.h"
#include "hosts.h"
#include "operation.h"



void
api_error(struct api_resp *resp, int status, const char *code,
    const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];

	/* The message may quote the request: text, cut on a character. */
	va_start(ap, fmt);
	text_vprintf(msg, sizeof(msg), 0, fmt, ap);
	va_end(ap);
	resp->status = status;
	json_decref(resp->body);
	resp->body = jsonb_pack("{s:{s:s,s:o}}", "error", "code", code,
	    "message", jsonb_str(msg));
}

/* Alike on purpose: op_error (operation.c) formats so, to its own end. */
json_t *
api_error_json(const char *code, const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return jsonb_pack("{s:{s:s,s:s}}", "error", "code", code, "message",
	    msg);
}

static const char *
api_time(time_t t, char *buf, size_t len)
{
	struct tm	 tm;

	if (t == 0 || gmtime_r(&t, &tm) == NULL)
		return NULL;
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

json_t *
api_time_json(time_t t)
{
	char	 buf[32];

	if (api_time(t, buf, sizeof(buf)) == NULL)
		return json_null();
	return jsonb_str(buf);
}

json_t *
api_status(void)
{
	struct nopsd	*env = nopsd_env;
	struct worker	*w;
	json_t		*o, *ws, *wo;
	enum nops_proc	 id;

	ws = json_array();
	for (id = PROC_GITWORKER; id < PROC_MAX; id++) {
		w = &workers[id];
		wo = jsonb_pack("{s:s,s:I,s:s,s:i,s:o,s:o}",
		    "name", w->w_title,
		    "pid", (json_int_t)w->w_pid,
		    "state", w->w_pid == 0 ? "restarting" :
		    (w->w_ready ? "running" : "starting"),
		    "restarts", (int)w->w_restarts,
		    "started_at", w->w_pid == 0 ? json_null() :
		    api_time_json(w->w_started),
		    "last_exit", w->w_lastexit[0] == '\0' ? json_null() :
		    jsonb_str(w->w_lastexit));
		json_array_append_new(ws, wo);
	}
	o = jsonb_pack("{s:s,s:I,s:o,s:s,s:o,s:i,s:i,s:i,s:o}",
	    "version", NOPS_VERSION,
	    "pid", (json_int_t)getpid(),
	    "started_at", api_time_json(env->n_started),
	    "config", env->n_conffile,
	    "config_loaded_at", api_time_json(env->n_conf_loaded),
	    "reloads", (int)env->n_reloads,
	    "reload_failures", (int)env->n_reload_failures,
	    "verbose", log_getverbose(),
	    "workers", ws);
	json_object_set_new(o, "database", jsonb_pack("{s:s,s:i}",
	    "path", env->n_conf->database,
	    "schema_version", env->n_store != NULL ?
	    store_schema_version(env->n_store) : 0));
	return o;
}

/*
 * Strings of a request body as text (nopsd(8), BOUNDARY): jansson has
 * checked UTF-8; controls other than newline and tab go (a "\u001b"
 * escape included).  -1 with why when a key is not text.
 */
static int
api_body_text(json_t *j, int depth, const char **why)
{
	const char	*k, *s;
	json_t		*v;
	size_t		 i, len;
	char		*t;

	if (json_is_string(j)) {
		s = json_string_value(j);
		len = json_string_length(j);
		if (text_check(s, len) != NULL) {
			t = text_dup(s, len, len, TEXT_LINES);
			json_string_set(j, t);
			free(t);
		}
		return 0;
	}
	if (depth > 64) {
		*why = "nests too deep";
		return -1;
	}
	if (json_is_object(j)) {
		json_object_foreach(j, k, v) {
			if (text_check(k, strlen(k)) != NULL) {
				*why = "has a key that is not text";
				return -1;
			}
			if (api_body_text(v, depth + 1, why) == -1)
				return -1;
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if (api_body_text(v, depth + 1, why) == -1)
				return -1;
	}
	return 0;
}

/* Parse a JSON object body; writes need Content-Type: application/json. */
json_t *
api_json_body(struct api_req *req, struct api_resp *resp)
{
	json_error_t	 jerr;
	json_t		*j;
	const char	*why;
	size_t		 n;

	n = strcspn(req->ar_ctype, ";");
	if (n != strlen("application/json") ||
	    strncasecmp(req->ar_ctype, "application/json", n) != 0) {
		api_error(resp, 415, "bad_request",
		    "writes need Content-Type: application/json");
		return NULL;
	}
	if (req->ar_bodylen == 0)
		return json_object();
	j = json_loadb(req->ar_body, req->ar_bodylen, JSON_REJECT_DUPLICATES,
	    &jerr);
	if (j == NULL) {
		api_error(resp, 400, "bad_request",
		    "request body, line %d column %d: %s", jerr.line,
		    jerr.column, jerr.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		api_error(resp, 400, "bad_request",
		    "request body must be a JSON object");
		return NULL;
	}
	if (api_body_text(j, 0, &why) == -1) {
		json_decref(j);
		api_error(resp, 400, "bad_request", "request body %s", why);
		return NULL;
	}
	return j;
}

int
api_json_body_check(struct api_req *req, struct api_resp *resp)
{
	json_t	*body;

	if ((body = api_json_body(req, resp)) == NULL)
		return -1;
	json_decref(body);
	return 0;
}

static void
api_reload(struct api_req *req, struct api_resp *resp)
{
	if (api_json_body_check(req, resp) == -1)
		return;
	if (nopsd_reload(req->ar_actor) == -1) {
		api_error(resp, 422, "invalid_configuration",
		    "%s has errors; the running configuration is unchanged "
		    "(see the log for each error)", nopsd_env->n_conffile);
		return;
	}
	resp->status = 200;
	resp->body = jsonb_pack("{s:b,s:o}", "reloaded", 1,
	    "config_loaded_at", api_time_json(nopsd_env->n_conf_loaded));
}

static void
api_log(struct api_req *req, struct api_resp *resp)
{
	json_t	*body, *v;
	int	 verbose;

	if ((body = api_json_body(req, resp)) == NULL)
		return;
	v = json_object_get(body, "verbose");
	if (!json_is_boolean(v) || json_object_size(body) != 1) {
		json_decref(body);
		api_error(resp, 400, "bad_request",
		    "expected {\"verbose\": true|false}");
		return;
	}
	verbose = json_is_true(v) ? 1 : 0;
	json_decref(body);
	nopsd_set_verbose(verbose);
	log_info("log level set to %s by %s", verbose ? "verbose" : "brief",
	    req->ar_actor);
	resp->status = 200;
	resp->body = jsonb_pack("{s:b}", "verbose", verbose);
}


/*
 * A "*" segment of a route's path (web_path_match(), the rule the pushed
 * documents' paths follow too): percent-decoded (a job ID may hold
 * characters a URL escapes, an encoded '/' too: dispatched children have
 * one), without control characters once decoded, copied to the next of
 * req->ar_args.
 */
static int
api_path_arg(void *arg, const char *seg, size_t n)
{
	struct api_req	*req = arg;
	char		*a;
	ssize_t		 len;
	size_t		 i, o;

	if (req->ar_nargs >= API_ARGS_MAX)
		return -1;
	a = req->ar_args[req->ar_nargs++];
	if ((len = hex_pct_decode(seg, n, a, sizeof(req->ar_args[0]),
	    0)) == -1)
		return -1;
	o = (size_t)len;
	for (i = 0; i < o; i++)
		if ((unsigned char)a[i] < 0x20 || a[i] == 0x7f)
			return -1;
	/* Names are text (nopsd(8), BOUNDARY): %ff is none. */
	if (text_check(a, o) != NULL)
		return -1;
	return 0;
}

static int
api_path_match(const char *pattern, const char *path, struct api_req *req)
{
	req->ar_nargs = 0;
	return web_path_match(pattern, path, api_path_arg, req);
}

/* The value of a query parameter, percent-decoded; NULL if absent. */
char *
api_query(const struct api_req *req, const char *name)
{
	const char	*q = req->ar_query, *end;
	size_t		 nlen = strlen(name), o;
	char		*v, *t;

	while (*q != '\0') {
		end = q + strcspn(q, "&");
		if ((size_t)(end - q) > nlen && strncmp(q, name, nlen) == 0 &&
		    q[nlen] == '=') {
			q += nlen + 1;
			if ((v = malloc(end - q + 1)) == NULL)
				fatal("malloc");
			/* Lenient, and never longer than what it decodes. */
			o = (size_t)hex_pct_decode(q, (size_t)(end - q), v,
			    (size_t)(end - q) + 1,
			    HEX_PCT_PLUS | HEX_PCT_LENIENT);
			if (text_check(v, o) != NULL) {
				/* The door's policy: text, cleaned. */
				t = text_dup(v, o, o * 3, 0);
				free(v);
				v = t;
			}
			return v;
		}
		q = *end == '&' ? end + 1 : end;
	}
	return NULL;
}

static void
api_repos_list(struct api_req *req, struct api_resp *resp)
{
	resp->status = 200;
	resp->body = repo_json_list();
}

/* Alike on purpose: plans_api_one (plans.c), another lookup and error. */
static void
api_repos_one(struct api_req *req, struct api_resp *resp)
{
	if ((resp->body = repo_json_one(req->ar_args[0])) == NULL) {
		api_error(resp, 404, "not_found", "no repository %s",
		    req->ar_args[0]);
		return;
	}
	resp->status = 200;
}

/* Poll the repository now; the answer does not wait for the fetch. */
static void
api_repos_fetch(struct api_req *req, struct api_resp *resp)
{
	if (api_json_body_check(req, resp) == -1)
		return;
	if (repo_fetch_now(req->ar_args[0], req->ar_actor) == -1) {
		api_error(resp, 404, "not_found", "no repository %s",
		    req->ar_args[0]);
		return;
	}
	resp->status = 202;
	resp->body = jsonb_pack("{s:s,s:b}", "name", req->ar_args[0],
	    "queued", 1);
}

static void
api_get_status(struct api_req *req, struct api_resp *resp)
{
	resp->status = 200;
	resp->body = api_status();
}


static void	 api_respond(struct worker *, uint32_t, struct api_resp *);

/* A deferred answer goes to the webworker that asked, if it still runs. */
struct api_later {
	pid_t		 al_pid;
	uint32_t	 al_id;
};

struct api_later *
api_later(const struct api_req *req)
{
	struct api_later	*al;
	struct worker		*w = supervise_worker(PROC_WEBWORKER);

	if ((al = calloc(1, sizeof(*al))) == NULL)
		fatal(NULL);
	al->al_pid = w != NULL ? w->w_pid : 0;
	al->al_id = req->ar_id;
	return al;
}

/*
 * Answer a request that was API_DEFERRED, as api_dispatch_web would
 * have: what the write changed is pushed first.  Frees al and resp.
 */
void
api_later_answer(struct api_later *al, struct api_resp *resp)
{
	struct worker	*w = supervise_worker(PROC_WEBWORKER);

	webpub_flush();
	if (resp->body == NULL && resp->raw == NULL)
		api_error(resp, 500, "runtime_error", "no answer");
	if (w != NULL && w->w_running && w->w_pid == al->al_pid)
		api_respond(w, al->al_id, resp);
	api_resp_free(resp);
	free(al);
}

/* A deferred answer the handler gave after all: forget it. */
void
api_later_cancel(struct api_later *al)
{
	free(al);
}

#ifdef NOPS_TEST_HOOKS
static void
api_answer_later(void *arg, int status, json_t *body)
{
	struct api_resp		 resp;

	memset(&resp, 0, sizeof(resp));
	resp.status = status;
	resp.body = body;
	api_later_answer(arg, &resp);
}

/* Test builds: one Nomad call (master/nomad.c), answered once done. */
static void
api_debug_nomad(struct api_req *req, struct api_resp *resp)
{
	struct api_later	*al;
	json_t			*body;
	char			 err[256];

	if ((body = api_json_body(req, resp)) == NULL)
		return;
	al = api_later(req);
	if (nomad_debug(body, api_answer_later, al, err, sizeof(err)) == -1) {
		free(al);
		api_error(resp, 400, "bad_request", "%s", err);
	} else
		resp->status = API_DEFERRED;
	json_decref(body);
}
#endif

/* Alike on purpose: a route table, one row per route. */
static const struct api_route api_routes[] = {
	{ "GET",  "/api/v1/status",	1, api_get_status, CAP_READ,
	    API_NS_NONE },
	{ "POST", "/api/v1/reload",	1, api_reload, 0, API_NS_NONE },
	{ "POST", "/api/v1/log",	1, api_log, 0, API_NS_NONE },
	{ "GET",  "/api/v1/repositories", 1, api_repos_list, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/repositories/*", 1, api_repos_one, CAP_READ,
	    API_NS_NONE },
	{ "POST", "/api/v1/repositories/*/fetch", 1, api_repos_fetch,
	    CAP_FETCH, API_NS_NONE },
#ifdef NOPS_TEST_HOOKS
	{ "POST", "/api/v1/debug/nomad", 1, api_debug_nomad, 0, API_NS_NONE },
#endif
};
static const size_t api_nroutes = sizeof(api_routes) / sizeof(api_routes[0]);

static const struct api_route *
api_find(const struct api_route *table, size_t n, struct api_req *req,
    int *pathmatch)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (!api_path_match(table[i].path, req->ar_path, req))
			continue;
		*pathmatch = 1;
		if (strcmp(table[i].method, req->ar_method) == 0)
			return &table[i];
	}
	return NULL;
}

/*
 * Each master module's routes; a module adds its table here.  Sizes are
 * pointers so that a table's size may live in its own file.
 */
static const struct {
	const struct api_route	*table;
	const size_t		*n;
} tables[] = {
	{ api_routes, &api_nroutes },
	{ api_engine_routes, &api_engine_nroutes },
	{ leftbehind_routes, &leftbehind_nroutes },
	{ operation_routes, &operation_nroutes },
	{ auth_routes, &auth_nroutes },
	{ api_dashboard_routes, &api_dashboard_nroutes },
	{ openapi_routes, &openapi_nroutes },
	{ webhook_routes, &webhook_nroutes },
	{ metrics_routes, &metrics_nroutes },
	{ plans_routes, &plans_nroutes },
	{ hosts_routes, &hosts_nroutes },
	{ hosts_ops_routes, &hosts_ops_nroutes },
};

void
api_route_foreach(void (*fn)(const struct api_route *, void *), void *arg)
{
	size_t	 i, j;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		for (j = 0; j < *tables[i].n; j++)
			fn(&tables[i].table[j], arg);
}

/* The route of req, or NULL with resp answered (404, 405). */
static const struct api_route *
api_lookup(struct api_req *req, struct api_resp *resp)
{
	const struct api_route	*r;
	int			 pathmatch = 0;
	size_t			 i;

	r = NULL;
	for (i = 0; r == NULL && i < sizeof(tables) / sizeof(tables[0]); i++)
		r = api_find(tables[i].table, *tables[i].n, req, &pathmatch);
	if (r == NULL) {
		if (pathmatch)
			api_error(resp, 405, "bad_request", "method %s not "
			    "allowed on %s", req->ar_method, req->ar_path);
		else
			api_error(resp, 404, "not_found", "no such endpoint: "
			    "%s", req->ar_path);
	}
	return r;
}

static void
api_route(struct api_req *req, struct api_resp *resp)
{
	const struct api_route	*r;

	if ((r = api_lookup(req, resp)) == NULL)
		return;
	/* Who asks, and may they (master/api_auth.c): 401, 403, 415. */
	if (api_auth_request(req, r, resp) == -1)
		return;
	r->fn(req, resp);
	api_auth_request_done(req, resp);
}

/* Split "path?query" into pathbuf (WEB_PATH_MAX + 1) and req. */
static void
api_target(struct api_req *req, const char *target, char *pathbuf)
{
	char	*q;

	strlcpy(pathbuf, target, WEB_PATH_MAX + 1);
	if ((q = strchr(pathbuf, '?')) != NULL) {
		*q = '\0';
		req->ar_query = q + 1;
	} else
		req->ar_query = "";
	req->ar_path = pathbuf;
}

void
api_render(const char *target, const struct acl_ident *as,
    struct api_resp *resp)
{
	struct api_req		 req;
	const struct api_route	*r;
	static char		 pathbuf[WEB_PATH_MAX + 1];

	memset(&req, 0, sizeof(req));
	memset(resp, 0, sizeof(*resp));
	req.ar_peer = WEB_PEER_TCP;
	req.ar_method = "GET";
	req.ar_ctype = "";
	req.ar_remote = "pushed";
	api_target(&req, target, pathbuf);
	if ((r = api_lookup(&req, resp)) != NULL &&
	    api_auth_request_as(&req, r, resp, as) == 0) {
		r->fn(&req, resp);
		api_auth_request_done(&req, resp);
	}
	if (resp->status == API_DEFERRED || (resp->body == NULL &&
	    resp->raw == NULL)) {
		api_resp_free(resp);
		api_error(resp, 500, "runtime_error", "no answer");
	}
}

const char api_too_large[] = "{\"error\":{\"code\":\"runtime_error\","
    "\"message\":\"answer too large\"}}";

/* The body of an answer as bytes: resp->raw, or its JSON dumped. */
char *
api_resp_text(const struct api_resp *resp, size_t *len)
{
	char	*s;

	if (resp->raw != NULL) {
		if ((s = malloc(resp->rawlen + 1)) == NULL)
			fatal("malloc");
		memcpy(s, resp->raw, resp->rawlen);
		s[resp->rawlen] = '\0';
		*len = resp->rawlen;
		return s;
	}
	if ((s = json_dumps(resp->body, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	*len = strlen(s);
	return s;
}

/*
 * The wire form of an answer whose body is text (api_resp_text()); it
 * points into resp and text.
 */
void
api_answer(const struct api_resp *resp, const char *text, size_t len,
    struct wire_web_answer *a)
{
	json_t	*h;
	size_t	 i;

	memset(a, 0, sizeof(*a));
	a->status = (uint32_t)resp->status;
	a->ctype = resp->ctype != NULL ? resp->ctype : "application/json";
	json_array_foreach(resp->headers, i, h) {
		if (i >= WEB_HEADERS_MAX) {
			log_warnx("%s: more than %d headers, the rest dropped",
			    __func__, WEB_HEADERS_MAX);
			break;
		}
		a->hname[i] = json_string_value(json_array_get(h, 0));
		a->hvalue[i] = json_string_value(json_array_get(h, 1));
		a->nheaders++;
	}
	a->body = text;
	a->bodylen = len;
}

/* What is sent instead of an answer too large for the channel. */
void
api_answer_too_large(struct wire_web_answer *a)
{
	memset(a, 0, sizeof(*a));
	a->status = 500;
	a->ctype = "application/json";
	a->body = api_too_large;
	a->bodylen = strlen(api_too_large);
}

static void
api_respond(struct worker *w, uint32_t id, struct api_resp *resp)
{
	struct wire_web_answer	 a;
	struct msgw		 m;
	char			*body;
	size_t			 len;

	body = api_resp_text(resp, &len);
	metrics_http_count(resp->status);
	api_answer(resp, body, len, &a);
	msg_init(&m);
	wire_put_web_answer(&m, &a);
	if (imsgev_send(&w->w_iev, &m, IMSG_WEB_RESPONSE, id, -1) == -1) {
		/* Too large for the channel: say so rather than hang. */
		log_warn("IMSG_WEB_RESPONSE of %zu bytes to %s", len,
		    w->w_title);
		api_answer_too_large(&a);
		msg_init(&m);
		wire_put_web_answer(&m, &a);
		if (imsgev_send(&w->w_iev, &m, IMSG_WEB_RESPONSE, id, -1) == -1)
			log_warn("IMSG_WEB_RESPONSE to %s", w->w_title);
	}
	free(body);
}

void
api_add_header(struct api_resp *resp, const char *name, const char *value)
{
	if (resp->headers == NULL)
		resp->headers = json_array();
	json_array_append_new(resp->headers, jsonb_pack("[s,s]", name, value));
}

const char *
api_header(const struct api_req *req, const char *name)
{
	size_t	 i;

	for (i = 0; i < req->ar_nheaders; i++)
		if (strcasecmp(req->ar_hname[i], name) == 0)
			return req->ar_hvalue[i];
	return NULL;
}

void
api_resp_free(struct api_resp *resp)
{
	json_decref(resp->body);
	json_decref(resp->headers);
	free(resp->raw);
	memset(resp, 0, sizeof(*resp));
}

/*
 * The door for HTTP (nopsd(8), BOUNDARY): the request line and the
 * headers must be text, valid UTF-8 without control characters; the
 * body is checked where it is parsed (api_json_body).  -1 with resp
 * answered (400) otherwise.
 */
static int
api_request_text(struct api_req *req, struct api_resp *resp)
{
	const char	*why, *where = NULL;
	size_t		 i;

	if ((why = text_check(req->ar_method, strlen(req->ar_method))) != NULL)
		where = "the method";
	else if ((why = text_check(req->ar_path, strlen(req->ar_path))) !=
	    NULL || (why = text_check(req->ar_query,
	    strlen(req->ar_query))) != NULL)
		where = "the target";
	else if ((why = text_check(req->ar_remote,
	    strlen(req->ar_remote))) != NULL)
		where = "the peer address";
	else if ((why = text_check(req->ar_ctype,
	    strlen(req->ar_ctype))) != NULL)
		where = "Content-Type";
	for (i = 0; where == NULL && i < req->ar_nheaders; i++)
		if ((why = text_check(req->ar_hname[i],
		    strlen(req->ar_hname[i]))) != NULL ||
		    (why = text_check(req->ar_hvalue[i],
		    strlen(req->ar_hvalue[i]))) != NULL)
			where = "a header";
	if (where == NULL)
		return 0;
	api_error(resp, 400, "bad_request", "%s holds %s", where, why);
	return -1;
}

static void
api_close_fd(struct imsg *imsg)
{
	if (imsg->fd != -1) {
		close(imsg->fd);
		imsg->fd = -1;
	}
}

/*
 * The control socket's authority is the connection the request came on,
 * checked by the master (control_peer): never the webworker's word.  A
 * control-socket request without one, or with a socket that is not a
 * client's connection to the control socket, is forged: refused and a
 * violation.  One whose client has gone is answered as anonymous (nobody
 * reads the answer).  A network request carries no descriptor.  The
 * descriptor is closed here; -1 when the request is not to be answered.
 */
static int
api_control_peer(struct worker *w, struct imsg *imsg, struct api_req *req)
{
	const char	*why = "no connection came with it";
	uid_t		 uid;
	gid_t		 gid;
	int		 rc = -1;

	if (req->ar_peer != WEB_PEER_LOCAL) {
		if (imsg->fd == -1)
			return 0;
		why = "a network request with a descriptor";
	} else if (imsg->fd != -1)
		rc = control_peer(imsg->fd, &uid, &gid, &why);
	api_close_fd(imsg);
	if (rc == 0) {
		req->ar_uid = uid;
		req->ar_gid = gid;
		return 0;
	}
	if (rc == 1) {
		log_info("control-socket request %u: %s; answered as "
		    "anonymous", req->ar_id, why);
		req->ar_peer = WEB_PEER_TCP;
		return 0;
	}
	log_warnx("forged control-socket request %u (%s %s claimed uid %u): "
	    "%s; refused", req->ar_id, text_check(req->ar_method,
	    strlen(req->ar_method)) == NULL ? req->ar_method : "?",
	    text_check(req->ar_path, strlen(req->ar_path)) == NULL ?
	    req->ar_path : "?", req->ar_uid, why);
	supervise_violation(w, "forged control-socket request: %s", why);
	return -1;
}

void
api_dispatch_web(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	const struct wire_web_request	*q = &u->web_request;
	struct api_req			 req;
	struct api_resp			 resp;
	static char			 pathbuf[WEB_PATH_MAX + 1];
	uint32_t			 i;

	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.ar_id = imsg->hdr.peerid;
	req.ar_peer = q->peer;
	req.ar_uid = q->uid;
	req.ar_gid = q->gid;
	req.ar_remote = q->remote;
	req.ar_tls = q->tls != 0;
	req.ar_method = q->method;
	req.ar_ctype = q->ctype;
	for (i = 0; i < q->nheaders; i++) {
		req.ar_hname[i] = q->hname[i];
		req.ar_hvalue[i] = q->hvalue[i];
	}
	req.ar_nheaders = q->nheaders;
	req.ar_body = q->body;
	req.ar_bodylen = q->bodylen;

	api_target(&req, q->target, pathbuf);
	if (api_control_peer(w, imsg, &req) == -1)
		return;
	if (api_request_text(&req, &resp) == -1) {
		api_respond(w, req.ar_id, &resp);
		api_resp_free(&resp);
		return;
	}

	if (req.ar_peer == WEB_PEER_LOCAL) {
		/*
		 * Reaching the socket at all took root or the group; the
		 * master has seen the connection itself (api_control_peer).
		 */
		req.ar_admin = 1;
		if (req.ar_uid == 0)
			strlcpy(req.ar_actor, "root", sizeof(req.ar_actor));
		else
			snprintf(req.ar_actor, sizeof(req.ar_actor),
			    "uid:%u", req.ar_uid);
	} else
		strlcpy(req.ar_actor, "anonymous", sizeof(req.ar_actor));

	api_route(&req, &resp);
	/*
	 * A write may have changed what pushed reads show: push that before
	 * the answer, so that the client's next read sees its write (a
	 * deferred answer pushes before it is sent: api_later_answer()).
	 */
	if (strcmp(req.ar_method, "GET") != 0 &&
	    strcmp(req.ar_method, "HEAD") != 0 && resp.status != API_DEFERRED)
		webpub_flush();
	if (resp.status == API_DEFERRED) {
		api_resp_free(&resp);
		return;
	}
	if (resp.body == NULL && resp.raw == NULL)
		api_error(&resp, 500, "runtime_error", "no answer");
	api_respond(w, req.ar_id, &resp);
	api_resp_free(&resp);
}
