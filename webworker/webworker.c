/*
 * webworker: serves HTTP on the sockets the master hands it (the local
 * control socket and the TCP listeners, some with TLS).  It is chrooted
 * in an empty directory with no filesystem and no outbound network.
 *
 * Reads are answered here, from state the master pushes: the identity
 * table (web_auth.c) and the read documents clients asked for
 * (web_docs.c), which the master pushes again when they change.  No
 * database, no ACL of its own: a document is the master's own answer
 * for the client's access class.  Everything else, writes above all,
 * goes to the master as IMSG_WEB_REQUEST, which checks the ACL and
 * answers.  Dashboard pages it renders itself from JSON answers to calls
 * it makes on the client's behalf (web_dash.c), read here or by the
 * master like any other request.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <openssl/ssl.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "wire.h"
#include "sandbox.h"
#include "webworker.h"
#include "web.h"

/* A call waiting for the master's answer. */
struct web_pending {
	TAILQ_ENTRY(web_pending) wp_entry;
	uint32_t		 wp_id;
	struct web_rq		*wp_rq;		/* an API request passed on */
	struct web_page		*wp_page;	/* or a page's call */
	size_t			 wp_slot;
};
TAILQ_HEAD(web_pendings, web_pending);

struct event_base		*web_base;
struct imsgev			 web_iev;
static struct web_listeners	 web_listeners =
				    TAILQ_HEAD_INITIALIZER(web_listeners);
static struct web_pendings	 web_pending =
				    TAILQ_HEAD_INITIALIZER(web_pending);
static size_t			 web_npending;
static uint32_t			 web_nextid = 1;

void
web_master_send(struct msgw *m, uint32_t type)
{
	if (imsgev_send(&web_iev, m, type, 0, -1) == -1)
		fatal("%s", imsg_to_str(type));
}

const char *
web_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 421: return "Misdirected Request";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return status < 400 ? "OK" : "Error";
	}
}

/*
 * Headers of every answer, ours and the edge's refusals (web_edge.c).
 * The CSP allows our own scripts and styles only (the pages have no
 * inline ones), no framing, forms to ourselves.
 */
const char *const web_sec_headers[][2] = {
	{ "Content-Security-Policy", "default-src 'self'; "
	    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; "
	    "object-src 'none'" },
	{ "X-Frame-Options", "DENY" },
	{ "X-Content-Type-Options", "nosniff" },
	{ "Referrer-Policy", "same-origin" },
	{ "Cross-Origin-Opener-Policy", "same-origin" },
	{ NULL, NULL }
};

void
web_headers(struct evhttp_request *req, const char *ctype)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	size_t			 i;

	evhttp_remove_header(h, "Content-Type");
	evhttp_add_header(h, "Content-Type", ctype);
	if (evhttp_find_header(h, "Cache-Control") == NULL)
		evhttp_add_header(h, "Cache-Control", "no-store");
	for (i = 0; web_sec_headers[i][0] != NULL; i++)
		evhttp_add_header(h, web_sec_headers[i][0],
		    web_sec_headers[i][1]);
}

void
web_add_header(struct web_rq *rq, const char *name, const char *value)
{
	/* libevent refuses a value with a bare CR or LF. */
	if (evhttp_add_header(evhttp_request_get_output_headers(rq->wr_req),
	    name, value) == -1)
		log_warnx("%s: refused header %s", __func__, name);
}

const char *
web_input_header(struct web_rq *rq, const char *name)
{
	return evhttp_find_header(evhttp_request_get_input_headers(
	    rq->wr_req), name);
}

static void	 web_send_reply(struct web_rq *, int, const char *,
		    struct evbuffer *);

void
web_reply_evbuf(struct web_rq *rq, int status, const char *ctype,
    struct evbuffer *buf)
{
	char		 clen[32];
	size_t		 len = evbuffer_get_length(buf);

	if (evhttp_request_get_command(rq->wr_req) == EVHTTP_REQ_HEAD) {
		/* libevent would send the body: the length, no body. */
		snprintf(clen, sizeof(clen), "%zu", len);
		evhttp_remove_header(evhttp_request_get_output_headers(
		    rq->wr_req), "Content-Length");
		web_add_header(rq, "Content-Length", clen);
		evbuffer_drain(buf, len);
	}
	web_send_reply(rq, status, ctype, buf);
}

/* The answer with its headers; buf is freed. */
static void
web_send_reply(struct web_rq *rq, int status, const char *ctype,
    struct evbuffer *buf)
{
	web_headers(rq->wr_req, ctype);
	/* If the client left meanwhile, libevent just frees the request. */
	evhttp_send_reply(rq->wr_req, status, web_reason(status), buf);
	evbuffer_free(buf);
	web_conn_end(rq->wr_conn);
	rq->wr_conn = 0;
	rq->wr_req = NULL;
}

void
web_reply_blob(struct web_rq *rq, int status, const char *ctype, size_t nh,
    const char *const *hname, const char *const *hvalue, const char *clen,
    struct web_blob *bl)
{
	struct evbuffer	*buf;
	size_t		 i;

	if ((buf = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	for (i = 0; i < nh; i++)
		if (strcasecmp(hname[i], "Content-Length") != 0)
			web_add_header(rq, hname[i], hvalue[i]);
	/* evhttp would print it for every answer; a HEAD sends no body. */
	web_add_header(rq, "Content-Length", clen);
	if (bl != NULL &&
	    evhttp_request_get_command(rq->wr_req) != EVHTTP_REQ_HEAD)
		web_blob_add(buf, bl, 0, bl->bl_len);
	web_send_reply(rq, status, ctype, buf);
}

void
web_reply(struct web_rq *rq, int status, const char *ctype,
    const void *body, size_t len)
{
	struct evbuffer	*buf;

	if ((buf = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	if (len > 0 && evbuffer_add(buf, body, len) == -1)
		fatal("evbuffer_add");
	web_reply_evbuf(rq, status, ctype, buf);
}

void
web_reply_wbuf(struct web_rq *rq, int status, const char *ctype,
    struct growbuf *b)
{
	if (b->gb_err) {
		log_warnx("page %s: out of memory or a bad format",
		    rq->wr_target);
		web_reply(rq, 500, "text/plain; charset=utf-8",
		    "internal error\n", 15);
		return;
	}
	web_reply(rq, status, ctype, b->gb_buf, b->gb_len);
}

void
web_redirect(struct web_rq *rq, const char *location)
{
	web_add_header(rq, "Location", location);
	web_reply(rq, 303, "text/plain; charset=utf-8", NULL, 0);
}

void
web_json_error(struct web_rq *rq, int status, const char *code,
    const char *message)
{
	char	 buf[512];
	int	 n;

	/* code and message are our own constants: no escaping needed. */
	n = snprintf(buf, sizeof(buf), "{\"error\":{\"code\":\"%s\","
	    "\"message\":\"%s\"}}", code, message);
	web_reply(rq, status, "application/json", buf,
	    n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : 0);
}

static const char *
web_method(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET:
		return "GET";
	case EVHTTP_REQ_POST:
		return "POST";
	case EVHTTP_REQ_HEAD:
		return "HEAD";
	case EVHTTP_REQ_PUT:
		return "PUT";
	case EVHTTP_REQ_DELETE:
		return "DELETE";
	case EVHTTP_REQ_PATCH:
		return "PATCH";
	default:
		return NULL;
	}
}

/* The socket of a request's connection, or -1. */
static int
web_request_fd(struct evhttp_request *req)
{
	struct evhttp_connection	*conn;
	struct bufferevent		*bev;

	if (req == NULL ||
	    (conn = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(conn)) == NULL)
		return -1;
	return bufferevent_getfd(bev);
}

/* Who is on the other end of a control-socket connection. */
static int
web_peercred(struct evhttp_request *req, struct ucred *uc)
{
	socklen_t			 len = sizeof(*uc);
	int				 fd;

	if ((fd = web_request_fd(req)) == -1)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &len) == -1) {
		log_warn("SO_PEERCRED");
		return -1;
	}
	return 0;
}

static int
web_client_get(struct evhttp_request *req, struct web_listener *wl,
    struct web_client *cl)
{
	struct evhttp_connection	*conn;
	struct ucred			 uc;
	char				*host = NULL;
	ev_uint16_t			 port = 0;

	memset(cl, 0, sizeof(*cl));
	cl->wc_peer = wl->wl_peer;
	cl->wc_tls = wl->wl_ssl != NULL;
	if (wl->wl_peer == WEB_PEER_LOCAL) {
		if (web_peercred(req, &uc) == -1)
			return -1;
		cl->wc_uid = uc.uid;
		cl->wc_gid = uc.gid;
		strlcpy(cl->wc_remote, "local", sizeof(cl->wc_remote));
		return 0;
	}
	if ((conn = evhttp_request_get_connection(req)) == NULL)
		return -1;
	evhttp_connection_get_peer(conn, &host, &port);
	snprintf(cl->wc_remote, sizeof(cl->wc_remote), "%s:%u",
	    host != NULL ? host : "?", port);
	return 0;
}

/* The headers the master may need, forwarded by name; others stay. */
static const char *const web_fwd_headers[] = {
	"Authorization", "Cookie", "X-CSRF-Token", "Accept", "Origin",
	"X-Hub-Signature-256", "X-GitHub-Delivery", "X-GitHub-Event",
	"X-Gitea-Signature", "X-Gitea-Delivery", "X-Gitea-Event",
	"X-Gitlab-Token", "X-Gitlab-Event-UUID", "X-Gitlab-Event",
	"User-Agent",
};

/* What a page's call carries of the client's: who it is, nothing else. */
static const char *const web_page_headers[] = {
	"Authorization", "Cookie", "Origin", "User-Agent",
};

/*
 * Forward the client's headers of the list; with page set, those of a
 * page's call plus our own X-CSRF-Token (the form's) and Accept.
 */
static void
web_add_headers(struct wire_web_request *q, struct evhttp_request *req,
    int page, const char *csrf)
{
	struct evkeyvalq	*in = evhttp_request_get_input_headers(req);
	const char *const	*list = page ? web_page_headers :
				    web_fwd_headers;
	size_t			 nlist = page ?
				    sizeof(web_page_headers) / sizeof(list[0]) :
				    sizeof(web_fwd_headers) / sizeof(list[0]);
	const char		*v;
	size_t			 i, n = 0;

	for (i = 0; i < nlist && n < WEB_HEADERS_MAX; i++) {
		v = evhttp_find_header(in, list[i]);
		if (v == NULL || strlen(v) > WEB_HEADER_MAX)
			continue;
		q->hname[n] = list[i];
		q->hvalue[n++] = v;
	}
	if (page && n + 2 <= WEB_HEADERS_MAX) {
		q->hname[n] = "Accept";
		q->hvalue[n++] = "application/json";
		if (csrf != NULL && *csrf != '\0' &&
		    strlen(csrf) <= WEB_HEADER_MAX) {
			q->hname[n] = "X-CSRF-Token";
			q->hvalue[n++] = csrf;
		}
	}
	q->nheaders = (uint32_t)n;
}

static struct web_pending *
web_pending_new(void)
{
	struct web_pending	*wp;

	if ((wp = calloc(1, sizeof(*wp))) == NULL)
		fatal("calloc");
	wp->wp_id = web_nextid++;
	if (web_nextid == 0)
		web_nextid = 1;
	TAILQ_INSERT_TAIL(&web_pending, wp, wp_entry);
	web_npending++;
	return wp;
}

/*
 * Send a request to the master.  A body with a secret (a login's
 * password) is zeroed once queued: msg_send() frees its buffer zeroed.
 * A control-socket request carries its connection: the master believes
 * only the socket itself (nopsd(8), CONTROL SOCKET), not what we say.
 */
static void
web_send(uint32_t id, struct web_rq *rq, int page, const char *method,
    const char *uri, const char *ctype, const char *csrf, const void *body,
    size_t bodylen)
{
	struct wire_web_request	 q;
	struct msgw		 m;
	int			 fd = -1;

	memset(&q, 0, sizeof(q));
	q.peer = rq->wr_client.wc_peer;
	if (q.peer == WEB_PEER_LOCAL) {
		if ((fd = web_request_fd(rq->wr_req)) == -1 ||
		    (fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) {
			/*
			 * The client is gone: nobody to answer with
			 * authority.
			 */
			log_debug("request %u: its control connection is gone",
			    id);
			q.peer = WEB_PEER_TCP;
		}
	}
	q.uid = rq->wr_client.wc_uid;
	q.gid = rq->wr_client.wc_gid;
	q.remote = rq->wr_client.wc_remote;
	q.tls = rq->wr_client.wc_tls;
	q.method = method;
	q.target = uri;
	q.ctype = ctype;
	web_add_headers(&q, rq->wr_req, page, csrf);
	q.body = body;
	q.bodylen = bodylen;
	msg_init(&m);
	wire_put_web_request(&m, &q);
	/* The channel closes fd once it is sent. */
	if (imsgev_send(&web_iev, &m, IMSG_WEB_REQUEST, id, fd) == -1)
		fatal("IMSG_WEB_REQUEST");
}

int
web_call(struct web_page *pg, const char *method, const char *uri,
    const char *ctype, const char *csrf, const void *body, size_t len)
{
	struct web_pending	*wp;
	size_t			 slot;

	if (pg->wg_ncalls >= WEB_CALLS_MAX)
		fatalx("too many calls for a page");
	if (web_npending + web_docs_waiting() >= WEB_MAX_PENDING ||
	    strlen(uri) > WEB_PATH_MAX)
		return -1;
	slot = pg->wg_ncalls++;
	pg->wg_waiting++;
	/* A read may be answered here, even before this returns. */
	if (strcmp(method, "GET") == 0 && web_docs_call(pg, slot, uri))
		return 0;
	wp = web_pending_new();
	wp->wp_page = pg;
	wp->wp_slot = slot;
	web_send(wp->wp_id, &pg->wg_rq, 1, method, uri, ctype, csrf, body,
	    len);
	return 0;
}

struct web_page *
web_page_new(struct web_rq *rq)
{
	struct web_page	*pg;

	if ((pg = calloc(1, sizeof(*pg))) == NULL)
		fatal("calloc");
	pg->wg_rq = *rq;
	return pg;
}

void
web_page_free(struct web_page *pg)
{
	struct web_pending	*wp;
	size_t			 i, j;

	/* Answers still due are dropped when they come. */
	TAILQ_FOREACH(wp, &web_pending, wp_entry)
		if (wp->wp_page == pg)
			wp->wp_page = NULL;
	for (i = 0; i < pg->wg_ncalls; i++) {
		if (pg->wg_calls[i].wk_waiter != NULL)
			web_docs_cancel(pg->wg_calls[i].wk_waiter);
		json_decref(pg->wg_calls[i].wk_json);
		for (j = 0; j < pg->wg_calls[i].wk_ncookies; j++)
			freezero(pg->wg_calls[i].wk_cookies[j],
			    strlen(pg->wg_calls[i].wk_cookies[j]));
		free(pg->wg_calls[i].wk_retry);
		free(pg->wg_calls[i].wk_doctarget);
	}
	web_form_free(&pg->wg_form);
	web_form_free(&pg->wg_query);
	if (pg->wg_rq.wr_req != NULL)
		web_conn_end(pg->wg_rq.wr_conn);
	free(pg);
}

void
web_page_then(struct web_page *pg, void (*next)(struct web_page *))
{
	pg->wg_next = next;
	if (pg->wg_waiting == 0) {
		pg->wg_next = NULL;
		next(pg);
	}
}

/* A refusal before anything else: ours, so counted here. */
static void
web_early_error(struct web_rq *rq, int status, const char *code,
    const char *message)
{
	web_count(status);
	web_json_error(rq, status, code, message);
}

/* A request for the master, as it came (the JSON API, webhooks, ...). */
static void
web_forward(struct web_rq *orig)
{
	struct web_pending	*wp;
	struct web_rq		*rq;
	struct evbuffer		*in;
	const char		*ctype;
	unsigned char		*body;
	size_t			 bodylen;

	in = evhttp_request_get_input_buffer(orig->wr_req);
	bodylen = evbuffer_get_length(in);
	if (bodylen > orig->wr_body_max) {
		web_early_error(orig, 413, "bad_request",
		    "request body too large");
		return;
	}
	body = bodylen > 0 ? evbuffer_pullup(in, -1) : NULL;
	ctype = web_input_header(orig, "Content-Type");
	if ((rq = malloc(sizeof(*rq))) == NULL)
		fatal("malloc");
	*rq = *orig;
	wp = web_pending_new();
	wp->wp_rq = rq;
	web_send(wp->wp_id, rq, 0, rq->wr_method, rq->wr_target,
	    ctype != NULL ? ctype : "", NULL, body, bodylen);
}

/* The size of the request line and headers, as the client sent them. */
static size_t
web_headers_size(struct evhttp_request *req)
{
	struct evkeyvalq	*in = evhttp_request_get_input_headers(req);
	struct evkeyval		*kv;
	size_t			 n = strlen(evhttp_request_get_uri(req)) + 16;

	TAILQ_FOREACH(kv, in, next)
		n += strlen(kv->key) + strlen(kv->value) + 4;
	return n;
}

static void
web_request(struct evhttp_request *req, void *arg)
{
	struct web_listener	*wl = arg;
	struct web_rq		 rq;
	const char		*ctype;
	int			 refused = 0;

	memset(&rq, 0, sizeof(rq));
	rq.wr_req = req;
	rq.wr_body_max = wl->wl_body_max;
	if (wl->wl_peer == WEB_PEER_TCP)
		rq.wr_conn = web_conn_begin(req, &refused);
	if (refused) {
		web_add_header(&rq, "Connection", "close");
		web_add_header(&rq, "Retry-After", "5");
		web_early_error(&rq, 503, "queue_full", "too many connections; "
		    "try again");
		return;
	}
	rq.wr_target = evhttp_request_get_uri(req);
	if ((rq.wr_method = web_method(evhttp_request_get_command(req))) ==
	    NULL) {
		web_early_error(&rq, 405, "bad_request", "method not allowed");
		return;
	}
	if (rq.wr_target == NULL || rq.wr_target[0] != '/' ||
	    strlen(rq.wr_target) > WEB_PATH_MAX) {
		web_early_error(&rq, 400, "bad_request", "bad request target");
		return;
	}
	if (web_headers_size(req) > WEB_HEADERS_SIZE) {
		web_add_header(&rq, "Connection", "close");
		web_early_error(&rq, 431, "bad_request", "request headers too "
		    "large");
		return;
	}
	ctype = web_input_header(&rq, "Content-Type");
	if (ctype != NULL && strlen(ctype) > WEB_HEADER_MAX) {
		web_early_error(&rq, 400, "bad_request",
		    "Content-Type too long");
		return;
	}
	if (web_client_get(req, wl, &rq.wr_client) == -1) {
		web_early_error(&rq, 500, "runtime_error",
		    "no peer credentials");
		return;
	}
	if (web_npending + web_docs_waiting() >= WEB_MAX_PENDING) {
		web_add_header(&rq, "Retry-After", "1");
		web_early_error(&rq, 429, "queue_full", "too many requests in "
		    "flight; try again");
		return;
	}
	if (web_dash_request(&rq))
		return;
	if (web_docs_request(&rq))
		return;
	web_forward(&rq);
}

int
web_is_json(const char *ctype)
{
	size_t	 n = strcspn(ctype, ";");

	return n == strlen("application/json") &&
	    strncasecmp(ctype, "application/json", n) == 0;
}

/* A page's call answered: keep what the page may use. */
static void
web_call_done(struct web_call *wk, int status, const char *ctype,
    const char *const *hname, const char *const *hvalue, size_t nh,
    const void *body, size_t bodylen, json_t *json)
{
	size_t	 i;

	wk->wk_status = status;
	if (json != NULL)
		wk->wk_json = json_incref(json);
	else if (web_is_json(ctype) && bodylen > 0)
		wk->wk_json = json_loadb(body, bodylen, 0, NULL);
	for (i = 0; i < nh; i++) {
		if (strcasecmp(hname[i], "Set-Cookie") == 0 &&
		    wk->wk_ncookies < sizeof(wk->wk_cookies) /
		    sizeof(wk->wk_cookies[0])) {
			if ((wk->wk_cookies[wk->wk_ncookies++] =
			    strdup(hvalue[i])) == NULL)
				fatal("strdup");
		} else if (strcasecmp(hname[i], "Retry-After") == 0 &&
		    wk->wk_retry == NULL) {
			if ((wk->wk_retry = strdup(hvalue[i])) == NULL)
				fatal("strdup");
		}
	}
}

/*
 * A page's call answered (by the master or here): the page goes on once
 * its last call is; not before web_page_then() said how.
 */
void
web_call_answer(struct web_page *pg, size_t slot, int status,
    const char *ctype, const char *const *hname, const char *const *hvalue,
    size_t nh, const void *body, size_t bodylen, json_t *json)
{
	void	(*next)(struct web_page *);

	web_call_done(&pg->wg_calls[slot], status, ctype, hname, hvalue, nh,
	    body, bodylen, json);
	if (--pg->wg_waiting == 0 && pg->wg_next != NULL) {
		next = pg->wg_next;
		pg->wg_next = NULL;
		next(pg);
	}
}

static void
web_response(struct imsg *imsg, const union imsg_payload *u)
{
	struct web_pending		*wp;
	struct web_page			*pg;
	const struct wire_web_answer	*a = &u->web_answer;
	uint32_t			 i;

	/* The master answers in order, but for deferred answers. */
	TAILQ_FOREACH(wp, &web_pending, wp_entry)
		if (wp->wp_id == imsg->hdr.peerid)
			break;
	if (wp == NULL)
		fatalx("response to unknown request %u", imsg->hdr.peerid);

	TAILQ_REMOVE(&web_pending, wp, wp_entry);
	web_npending--;
	if (wp->wp_rq != NULL) {
		for (i = 0; i < a->nheaders; i++)
			web_add_header(wp->wp_rq, a->hname[i], a->hvalue[i]);
		web_reply(wp->wp_rq, (int)a->status, a->ctype, a->body,
		    a->bodylen);
		free(wp->wp_rq);
	} else if ((pg = wp->wp_page) != NULL)
		web_call_answer(pg, wp->wp_slot, (int)a->status, a->ctype,
		    a->hname, a->hvalue, a->nheaders, a->body, a->bodylen,
		    NULL);
	free(wp);
}

static struct evhttp *
web_http_new(struct web_listener *wl)
{
	struct evhttp	*http;

	if ((http = evhttp_new(web_base)) == NULL)
		fatalx("evhttp_new");
	/*
	 * libevent's defaults are unlimited: set every limit.  Its header
	 * limit is a backstop (it answers 400); ours, checked per request,
	 * answers 431.
	 */
	evhttp_set_max_headers_size(http, WEB_HEADERS_HARD);
	evhttp_set_max_body_size(http, wl->wl_body_max);
	evhttp_set_timeout(http, web_idle_timeout());
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_PATCH);
	evhttp_set_default_content_type(http, "text/plain; charset=utf-8");
	evhttp_set_gencb(http, web_request, wl);
	if (wl->wl_peer == WEB_PEER_TCP)
		evhttp_set_bevcb(http, web_conn_bev, wl);
	return http;
}

static void
web_listen(struct imsg *imsg, const union imsg_payload *u)
{
	const struct wire_web_listen	*l = &u->web_listen;
	struct web_listener		*wl;
	struct evhttp_bound_socket	*bound;
	const char			*name;
	uint32_t			 i, tls;

	if (imsg->fd == -1)
		fatalx("malformed %s (no socket)",
		    imsg_to_str(imsg->hdr.type));
	name = l->name;
	tls = l->tls;

	if ((wl = calloc(1, sizeof(*wl))) == NULL)
		fatal("calloc");
	wl->wl_body_max = l->bodymax;
	wl->wl_per_source = (int)l->persrc;
	wl->wl_hostflags = l->hflags;
	if (l->nhosts > 0 && (wl->wl_hosts = calloc(l->nhosts,
	    sizeof(*wl->wl_hosts))) == NULL)
		fatal("calloc");
	for (i = 0; i < l->nhosts; i++)
		if ((wl->wl_hosts[wl->wl_nhosts++] = strdup(l->hosts[i])) ==
		    NULL)
			fatal("strdup");
	wl->wl_peer = l->kind == WEB_LISTEN_CONTROL ? WEB_PEER_LOCAL :
	    WEB_PEER_TCP;
	strlcpy(wl->wl_name, name, sizeof(wl->wl_name));
	if (tls && (wl->wl_ssl = web_tls_ctx(l->cert, l->certlen, l->key,
	    l->keylen)) == NULL)
		fatalx("%s: the tls certificate or key does not load", name);
	/* The key is in the SSL_CTX now: no copy of it stays around. */
	explicit_bzero(imsg->data, imsg->datalen);
	wl->wl_http = web_http_new(wl);
	if ((bound = evhttp_accept_socket_with_handle(wl->wl_http,
	    imsg->fd)) == NULL)
		fatalx("cannot serve %s", name);
	imsg->fd = -1;	/* evhttp owns it now */
	wl->wl_lev = evhttp_bound_socket_get_listener(bound);
	TAILQ_INSERT_TAIL(&web_listeners, wl, wl_entry);
	if (wl->wl_peer == WEB_PEER_TCP)
		web_conn_listener(wl);
	log_debug("serving %s%s", name, tls ? " with tls" : "");
}

/*
 * The webworker's dispatch table: the rows of NOPS_IMSGS to WEB and
 * WORKER (IMSG_HANDLER_ROW, nops.h).  Alike on purpose: supervise.c,
 * gitworker.c and nomadworker.c choose their rows with the same five
 * lines.  The choice is made here, by the preprocessor, because a table
 * may name only its own process's handlers (a worker links no master
 * code); a matrix of the choices in nops.h would repeat these lines
 * there, one block per receiver.
 */
#define IMSG_TO_MASTER(h)	NULL
#define IMSG_TO_WORKER(h)	h
#define IMSG_TO_GIT(h)		NULL
#define IMSG_TO_NOMAD(h)	NULL
#define IMSG_TO_WEB(h)		h
static const worker_handler web_handlers[IMSG_MAX] = {
	NOPS_IMSGS(IMSG_HANDLER_ROW)
};

static void
web_dispatch_master(int fd, short event, void *arg)
{
	proc_worker_read(&web_iev, event, web_handlers);
}

struct event *
web_every(int secs, event_callback_fn cb)
{
	struct timeval	 tv = { secs, 0 };
	struct event	*ev;

	if ((ev = event_new(web_base, -1, EV_PERSIST, cb, NULL)) == NULL ||
	    event_add(ev, &tv) == -1)
		fatalx("event");
	return ev;
}

/* The event loop and what runs on it; the channel is set up. */
static void
web_loop_init(void)
{
	struct event_config	*cfg;

	/*
	 * epoll's changelist: adds and deletes are batched into the next
	 * epoll_wait (2 epoll_ctl per answer instead of 4).  libevent warns
	 * that a descriptor dup()ed elsewhere may outlive its close here:
	 * the deferred EPOLL_CTL_DEL then finds it closed and the kernel
	 * keeps the registration until the last copy is closed.  The only
	 * copies are of control-socket connections, sent to the master
	 * (web_send), which closes its copy on receipt (api_control_peer).
	 * Until then such a registration can only report spurious events
	 * under its old number; every descriptor here is non-blocking, and
	 * libevent retries a MOD that finds no entry as an ADD, so a
	 * connection that reuses the number still gets its own events
	 * (test_control_trust drops control connections mid-request while
	 * others reuse their numbers).
	 */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_flag(cfg,
	    EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST) == -1 ||
	    (web_base = event_base_new_with_config(cfg)) == NULL)
		fatalx("event_base_new_with_config");
	event_config_free(cfg);
	web_conn_init();
	web_auth_init();
	web_docs_init();
	/*
	 * Keep what the channel already buffered (the listeners may have
	 * arrived with IMSG_INIT): hand the imsgbuf over as it is.
	 */
	imsgev_attach(&web_iev, web_base, "webworker", web_dispatch_master,
	    NULL);
}

void
webworker_test_init(int fd)
{
	if (imsgbuf_init(&web_iev.ibuf, fd, IMSGF_PASSFD,
	    WEBWORKER_MSG_MAX) == -1)
		fatal("imsgbuf_init");
	web_loop_init();
	web_dispatch_master(fd, 0, NULL);	/* arms the channel's event */
}

#ifdef NOPS_TEST_HOOKS
/*
 * "forged-admin": a compromised webworker's forgery, one request that
 * claims to come from root on the control socket (POST /api/v1/log,
 * which only an admin may make); ":fd" sends a socket that is not a
 * control connection with it (our own channel).  The master must refuse
 * it as a violation (api_control_peer).
 */
static void
web_testhooks(const struct worker_init *wi)
{
	struct wire_web_request	 q;
	struct msgw		 m;
	const char		*body = "{\"verbose\": false}";
	int			 fd = -1;

	if (!proc_testhook(wi, "forged-admin"))
		return;
	if (strcmp(wi->wi_testhook, "forged-admin:fd") == 0 &&
	    (fd = fcntl(PROC_CHILD_FD, F_DUPFD_CLOEXEC, 0)) == -1)
		fatal("test hook: dup");
	log_info("test hook: sending a forged control-socket request%s",
	    fd != -1 ? " with a socket" : "");
	memset(&q, 0, sizeof(q));
	q.peer = WEB_PEER_LOCAL;	/* and uid 0: root, it claims */
	q.remote = "local";
	q.method = "POST";
	q.target = "/api/v1/log";
	q.ctype = "application/json";
	q.body = body;
	q.bodylen = strlen(body);
	msg_init(&m);
	wire_put_web_request(&m, &q);
	if (imsgev_send(&web_iev, &m, IMSG_WEB_REQUEST, 1, fd) == -1)
		fatal("test hook: IMSG_WEB_REQUEST");
}
#endif

static struct worker_init web_wi;

#ifdef NOPS_TEST_HOOKS
const char *
web_testhook(const char *name)
{
	size_t	 len = strlen(name);

	if (!proc_testhook(&web_wi, name))
		return NULL;
	return web_wi.wi_testhook[len] == ':' ? web_wi.wi_testhook + len + 1 :
	    "";
}
#endif

/*
 * The idle timeout.  A test-hooks build takes "idle-timeout:N" (from
 * NOPS_TEST_HOOK=webworker:idle-timeout:N), so that the suite can wait
 * past it in seconds rather than half a minute.
 */
int
web_idle_timeout(void)
{
#ifdef NOPS_TEST_HOOKS
	const char	*errstr;
	long long	 v;

	if (proc_testhook(&web_wi, "idle-timeout") &&
	    web_wi.wi_testhook[strlen("idle-timeout")] == ':') {
		v = strtonum(web_wi.wi_testhook + strlen("idle-timeout:"), 1,
		    WEB_IDLE_TIMEOUT, &errstr);
		if (errstr == NULL)
			return (int)v;
	}
#endif
	return WEB_IDLE_TIMEOUT;
}

/* As root, after IMSG_INIT: OpenSSL reads its configuration now. */
void
webworker_init(struct proc_ctx *pc)
{
	web_wi = pc->pc_wi;
	if (OPENSSL_init_ssl(0, NULL) != 1)
		fatalx("OPENSSL_init_ssl");
}

void
webworker_loop(struct proc_ctx *pc)
{
	web_loop_init();
	pc->pc_base = web_base;
}

void
webworker_run(struct proc_ctx *pc)
{
	imsgev_compose(&web_iev, IMSG_WORKER_READY, 0, -1, NULL, 0);
#ifdef NOPS_TEST_HOOKS
	proc_worker_testhooks(&web_wi, &web_iev);
	web_testhooks(&web_wi);
#endif
	/* Messages that arrived with IMSG_INIT are handled first. */
	web_dispatch_master(PROC_CHILD_FD, 0, NULL);
	event_base_dispatch(web_base);
}
