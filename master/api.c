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
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "nopsd.h"
#include "master.h"
#include "store.h"

struct api_req {
	uint32_t	 ar_id;
	uint32_t	 ar_peer;	/* WEB_PEER_* */
	uint32_t	 ar_uid;
	uint32_t	 ar_gid;
	const char	*ar_method;
	const char	*ar_path;	/* without the query */
	const char	*ar_query;	/* after '?', or "" */
	const char	*ar_ctype;
	const void	*ar_body;
	size_t		 ar_bodylen;
	char		 ar_actor[64];	/* for the audit log */
	int		 ar_admin;	/* local admin over the control socket */
};

struct api_resp {
	int		 status;
	json_t		*body;
};

static void
api_error(struct api_resp *resp, int status, const char *code,
    const char *fmt, ...) __attribute__((__format__(printf, 4, 5)));

static void
api_error(struct api_resp *resp, int status, const char *code,
    const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	resp->status = status;
	json_decref(resp->body);
	resp->body = json_pack("{s:{s:s,s:s}}", "error", "code", code,
	    "message", msg);
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

static json_t *
api_time_json(time_t t)
{
	char	 buf[32];

	if (api_time(t, buf, sizeof(buf)) == NULL)
		return json_null();
	return json_string(buf);
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
		wo = json_pack("{s:s,s:I,s:s,s:i,s:o,s:o}",
		    "name", w->w_title,
		    "pid", (json_int_t)w->w_pid,
		    "state", w->w_pid == 0 ? "restarting" :
		    (w->w_ready ? "running" : "starting"),
		    "restarts", (int)w->w_restarts,
		    "started_at", w->w_pid == 0 ? json_null() :
		    api_time_json(w->w_started),
		    "last_exit", w->w_lastexit[0] == '\0' ? json_null() :
		    json_string(w->w_lastexit));
		json_array_append_new(ws, wo);
	}
	o = json_pack("{s:s,s:I,s:o,s:s,s:o,s:i,s:i,s:i,s:o}",
	    "version", NOPS_VERSION,
	    "pid", (json_int_t)getpid(),
	    "started_at", api_time_json(env->n_started),
	    "config", env->n_conffile,
	    "config_loaded_at", api_time_json(env->n_conf_loaded),
	    "reloads", (int)env->n_reloads,
	    "reload_failures", (int)env->n_reload_failures,
	    "verbose", log_getverbose(),
	    "workers", ws);
	json_object_set_new(o, "database", json_pack("{s:s,s:i}",
	    "path", env->n_conf->database,
	    "schema_version", env->n_store != NULL ?
	    store_schema_version(env->n_store) : 0));
	return o;
}

/* Parse a JSON object body; writes need Content-Type: application/json. */
static json_t *
api_json_body(struct api_req *req, struct api_resp *resp)
{
	json_error_t	 jerr;
	json_t		*j;
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
	return j;
}

static void
api_reload(struct api_req *req, struct api_resp *resp)
{
	json_t	*body;

	if ((body = api_json_body(req, resp)) == NULL)
		return;
	json_decref(body);
	if (nopsd_reload(req->ar_actor) == -1) {
		api_error(resp, 422, "invalid_configuration",
		    "%s has errors; the running configuration is unchanged "
		    "(see the log for each error)", nopsd_env->n_conffile);
		return;
	}
	resp->status = 200;
	resp->body = json_pack("{s:b,s:o}", "reloaded", 1,
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
	resp->body = json_pack("{s:b}", "verbose", verbose);
}

struct api_route {
	const char	*method;
	const char	*path;
	int		 admin;		/* needs management */
	void		(*fn)(struct api_req *, struct api_resp *);
};

static void
api_get_status(struct api_req *req, struct api_resp *resp)
{
	resp->status = 200;
	resp->body = api_status();
}

static const struct api_route api_routes[] = {
	{ "GET",  "/api/v1/status",	1, api_get_status },
	{ "POST", "/api/v1/reload",	1, api_reload },
	{ "POST", "/api/v1/log",	1, api_log },
};

static void
api_route(struct api_req *req, struct api_resp *resp)
{
	const struct api_route	*r;
	size_t			 i;
	int			 pathmatch = 0;

	for (i = 0; i < sizeof(api_routes) / sizeof(api_routes[0]); i++) {
		r = &api_routes[i];
		if (strcmp(r->path, req->ar_path) != 0)
			continue;
		pathmatch = 1;
		if (strcmp(r->method, req->ar_method) != 0)
			continue;
		/*
		 * Until accounts and tokens exist, only the local admin on
		 * the control socket may use the API.
		 */
		if (r->admin && !req->ar_admin) {
			api_error(resp, 401, "unauthorized",
			    "authentication required");
			return;
		}
		r->fn(req, resp);
		return;
	}
	if (pathmatch)
		api_error(resp, 405, "bad_request", "method %s not allowed "
		    "on %s", req->ar_method, req->ar_path);
	else
		api_error(resp, 404, "not_found", "no such endpoint: %s",
		    req->ar_path);
}

static void
api_respond(struct worker *w, uint32_t id, struct api_resp *resp)
{
	struct msgw	 m;
	char		*s;

	s = json_dumps(resp->body, JSON_COMPACT);
	if (s == NULL)
		fatalx("json_dumps");
	msg_init(&m);
	msg_add_u32(&m, (uint32_t)resp->status);
	msg_add_str(&m, "application/json");
	msg_add_data(&m, s, strlen(s));
	if (imsgev_send(&w->w_iev, &m, IMSG_WEB_RESPONSE, id, -1) == -1)
		log_warn("IMSG_WEB_RESPONSE to %s", w->w_title);
	free(s);
}

void
api_dispatch_web(struct worker *w, struct imsg *imsg)
{
	struct api_req	 req;
	struct api_resp	 resp;
	struct msgr	 r;
	const char	*path, *q;
	static char	 pathbuf[WEB_PATH_MAX + 1];

	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.ar_id = imsg->hdr.peerid;
	msg_reader(&r, imsg);
	msg_get_u32(&r, &req.ar_peer);
	msg_get_u32(&r, &req.ar_uid);
	msg_get_u32(&r, &req.ar_gid);
	msg_get_str(&r, &req.ar_method, WEB_METHOD_MAX);
	msg_get_str(&r, &path, WEB_PATH_MAX);
	msg_get_str(&r, &req.ar_ctype, WEB_HEADER_MAX);
	msg_get_data(&r, &req.ar_body, &req.ar_bodylen, WEB_BODY_MAX);
	if (msg_end(&r) == -1 ||
	    (req.ar_peer != WEB_PEER_LOCAL && req.ar_peer != WEB_PEER_TCP)) {
		supervise_violation(w, "malformed %s (%s)",
		    imsg_to_str(imsg->hdr.type),
		    r.what != NULL ? r.what : "peer kind");
		return;
	}

	strlcpy(pathbuf, path, sizeof(pathbuf));
	if ((q = strchr(pathbuf, '?')) != NULL) {
		pathbuf[q - pathbuf] = '\0';
		req.ar_query = q + 1;
	} else
		req.ar_query = "";
	req.ar_path = pathbuf;

	if (req.ar_peer == WEB_PEER_LOCAL) {
		/* Reaching the socket at all took root or the group. */
		req.ar_admin = 1;
		if (req.ar_uid == 0)
			strlcpy(req.ar_actor, "root", sizeof(req.ar_actor));
		else
			snprintf(req.ar_actor, sizeof(req.ar_actor),
			    "uid:%u", req.ar_uid);
	} else
		strlcpy(req.ar_actor, "anonymous", sizeof(req.ar_actor));

	api_route(&req, &resp);
	if (resp.body == NULL)
		api_error(&resp, 500, "runtime_error", "no answer");
	api_respond(w, req.ar_id, &resp);
	json_decref(resp.body);
}
