/*
 * webworker: serves HTTP on the sockets the master hands it (the local
 * control socket and the TCP listeners).  It is chrooted in an empty
 * directory with no filesystem and no outbound network.  It parses HTTP and
 * passes each request to the master, which decides and answers; the
 * webworker never holds state of its own.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "sandbox.h"
#include "webworker.h"

#define WEB_MAX_HEADERS_SIZE	(16 * 1024)
#define WEB_TIMEOUT_SECS	30
#define WEB_MAX_PENDING		1024

/* A request waiting for the master's answer. */
struct web_pending {
	TAILQ_ENTRY(web_pending) wp_entry;
	uint32_t		 wp_id;
	struct evhttp_request	*wp_req;
};
TAILQ_HEAD(web_pendings, web_pending);

static struct imsgev		 web_iev;
static struct event_base	*web_base;
static struct evhttp		*web_http_ctl;	/* control socket */
static struct evhttp		*web_http_tcp;	/* network listeners */
static struct web_pendings	 web_pending = TAILQ_HEAD_INITIALIZER(web_pending);
static size_t			 web_npending;
static uint32_t			 web_nextid = 1;

static void
web_headers(struct evhttp_request *req, const char *ctype)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Content-Type", ctype);
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_add_header(h, "Content-Security-Policy",
	    "default-src 'self'; frame-ancestors 'none'");
	evhttp_add_header(h, "X-Frame-Options", "DENY");
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "Referrer-Policy", "same-origin");
}

static void
web_error(struct evhttp_request *req, int status, const char *code,
    const char *message)
{
	struct evbuffer	*buf;

	if ((buf = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	/* code and message are our own constants: no escaping needed. */
	evbuffer_add_printf(buf, "{\"error\":{\"code\":\"%s\",\"message\":"
	    "\"%s\"}}", code, message);
	web_headers(req, "application/json");
	evhttp_send_reply(req, status, NULL, buf);
	evbuffer_free(buf);
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

/* Who is on the other end of a control-socket connection. */
static int
web_peercred(struct evhttp_request *req, struct ucred *uc)
{
	struct evhttp_connection	*conn;
	struct bufferevent		*bev;
	socklen_t			 len = sizeof(*uc);
	int				 fd;

	if ((conn = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(conn)) == NULL ||
	    (fd = bufferevent_getfd(bev)) == -1)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &len) == -1) {
		log_warn("SO_PEERCRED");
		return -1;
	}
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

static void
web_add_headers(struct msgw *m, struct evhttp_request *req)
{
	struct evkeyvalq	*in = evhttp_request_get_input_headers(req);
	const char		*names[WEB_HEADERS_MAX], *values[WEB_HEADERS_MAX];
	const char		*v;
	size_t			 i, n = 0;

	for (i = 0; i < sizeof(web_fwd_headers) / sizeof(web_fwd_headers[0]) &&
	    n < WEB_HEADERS_MAX; i++) {
		v = evhttp_find_header(in, web_fwd_headers[i]);
		if (v == NULL || strlen(v) > WEB_HEADER_MAX)
			continue;
		names[n] = web_fwd_headers[i];
		values[n++] = v;
	}
	msg_add_u32(m, (uint32_t)n);
	for (i = 0; i < n; i++) {
		msg_add_str(m, names[i]);
		msg_add_str(m, values[i]);
	}
}

static void
web_request(struct evhttp_request *req, void *arg)
{
	uint32_t		 peer = (uint32_t)(uintptr_t)arg;
	struct web_pending	*wp;
	struct ucred		 uc;
	struct evbuffer		*in;
	struct msgw		 m;
	const char		*method, *uri, *ctype;
	unsigned char		*body;
	size_t			 bodylen;
	char			 remote[WEB_REMOTE_MAX];
	char			*host;
	ev_uint16_t		 port;

	if ((method = web_method(evhttp_request_get_command(req))) == NULL) {
		web_error(req, 405, "bad_request", "method not allowed");
		return;
	}
	uri = evhttp_request_get_uri(req);
	if (uri == NULL || uri[0] != '/' || strlen(uri) > WEB_PATH_MAX) {
		web_error(req, 400, "bad_request", "bad request target");
		return;
	}
	ctype = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Content-Type");
	if (ctype == NULL)
		ctype = "";
	if (strlen(ctype) > WEB_HEADER_MAX) {
		web_error(req, 400, "bad_request", "Content-Type too long");
		return;
	}
	if (peer == WEB_PEER_TCP) {
		evhttp_connection_get_peer(evhttp_request_get_connection(req),
		    &host, &port);
		snprintf(remote, sizeof(remote), "%s:%u", host != NULL ? host :
		    "?", port);
	} else
		strlcpy(remote, "local", sizeof(remote));
	memset(&uc, 0, sizeof(uc));
	if (peer == WEB_PEER_LOCAL && web_peercred(req, &uc) == -1) {
		web_error(req, 500, "runtime_error", "no peer credentials");
		return;
	}
	if (web_npending >= WEB_MAX_PENDING) {
		web_error(req, 429, "queue_full", "too many requests in "
		    "flight; try again");
		return;
	}

	in = evhttp_request_get_input_buffer(req);
	bodylen = evbuffer_get_length(in);
	if (bodylen > WEB_BODY_MAX) {
		web_error(req, 413, "bad_request", "request body too large");
		return;
	}
	body = bodylen > 0 ? evbuffer_pullup(in, -1) : NULL;

	if ((wp = calloc(1, sizeof(*wp))) == NULL)
		fatal("calloc");
	wp->wp_id = web_nextid++;
	if (web_nextid == 0)
		web_nextid = 1;
	wp->wp_req = req;
	TAILQ_INSERT_TAIL(&web_pending, wp, wp_entry);
	web_npending++;

	msg_init(&m);
	msg_add_u32(&m, peer);
	msg_add_u32(&m, (uint32_t)uc.uid);
	msg_add_u32(&m, (uint32_t)uc.gid);
	msg_add_str(&m, remote);
	msg_add_u32(&m, 0);		/* TLS: see web_listen */
	msg_add_str(&m, method);
	msg_add_str(&m, uri);
	msg_add_str(&m, ctype);
	web_add_headers(&m, req);
	msg_add_data(&m, body, bodylen);
	if (imsgev_send(&web_iev, &m, IMSG_WEB_REQUEST, wp->wp_id, -1) == -1)
		fatal("IMSG_WEB_REQUEST");
}

static void
web_response(struct imsg *imsg)
{
	struct web_pending	*wp;
	struct evbuffer		*buf;
	struct msgr		 r;
	const char		*ctype;
	const void		*body;
	size_t			 bodylen;
	uint32_t		 status, nh = 0, i;
	const char		*hname[WEB_HEADERS_MAX];
	const char		*hvalue[WEB_HEADERS_MAX];

	TAILQ_FOREACH(wp, &web_pending, wp_entry)
		if (wp->wp_id == imsg->hdr.peerid)
			break;
	if (wp == NULL)
		fatalx("response to unknown request %u", imsg->hdr.peerid);

	msg_reader(&r, imsg);
	msg_get_u32(&r, &status);
	msg_get_str(&r, &ctype, 128);
	msg_get_u32(&r, &nh);
	if (nh > WEB_HEADERS_MAX)
		msg_fail(&r, "too many headers");
	for (i = 0; i < nh && r.err == 0; i++) {
		msg_get_str(&r, &hname[i], WEB_HNAME_MAX);
		msg_get_str(&r, &hvalue[i], WEB_HEADER_MAX);
	}
	msg_get_data(&r, &body, &bodylen, WEBWORKER_MSG_MAX);
	if (msg_end(&r) == -1 || status < 100 || status > 599)
		fatalx("malformed %s", imsg_to_str(imsg->hdr.type));

	TAILQ_REMOVE(&web_pending, wp, wp_entry);
	web_npending--;
	if ((buf = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	evbuffer_add(buf, body, bodylen);
	web_headers(wp->wp_req, ctype);
	for (i = 0; i < nh; i++)
		evhttp_add_header(evhttp_request_get_output_headers(
		    wp->wp_req), hname[i], hvalue[i]);
	/* If the client left meanwhile, libevent just frees the request. */
	evhttp_send_reply(wp->wp_req, (int)status, NULL, buf);
	evbuffer_free(buf);
	free(wp);
}

static struct evhttp *
web_http_new(uint32_t peer)
{
	struct evhttp	*http;

	if ((http = evhttp_new(web_base)) == NULL)
		fatalx("evhttp_new");
	/* libevent's defaults are unlimited: set every limit. */
	evhttp_set_max_headers_size(http, WEB_MAX_HEADERS_SIZE);
	evhttp_set_max_body_size(http, WEB_BODY_MAX);
	evhttp_set_timeout(http, WEB_TIMEOUT_SECS);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_PATCH);
	evhttp_set_default_content_type(http, "text/plain; charset=utf-8");
	evhttp_set_gencb(http, web_request, (void *)(uintptr_t)peer);
	return http;
}

static void
web_listen(struct imsg *imsg)
{
	struct msgr	 r;
	const char	*name;
	uint32_t	 kind;
	struct evhttp	*http;

	msg_reader(&r, imsg);
	msg_get_u32(&r, &kind);
	msg_get_str(&r, &name, WEB_NAME_MAX);
	if (msg_end(&r) == -1 || imsg->fd == -1 ||
	    (kind != WEB_LISTEN_CONTROL && kind != WEB_LISTEN_TCP))
		fatalx("malformed %s", imsg_to_str(imsg->hdr.type));
	http = kind == WEB_LISTEN_CONTROL ? web_http_ctl : web_http_tcp;
	if (evhttp_accept_socket_with_handle(http, imsg->fd) == NULL)
		fatalx("cannot serve %s", name);
	imsg->fd = -1;	/* evhttp owns it now */
	log_debug("serving %s", name);
}

static void
web_dispatch_master_msg(struct imsg *imsg, void *arg)
{
	switch (imsg->hdr.type) {
	case IMSG_WEB_LISTEN:
		web_listen(imsg);
		break;
	case IMSG_WEB_RESPONSE:
		web_response(imsg);
		break;
	default:
		fatalx("unexpected %s from the master",
		    imsg_to_str(imsg->hdr.type));
	}
}

static void
web_dispatch_master(int fd, short event, void *arg)
{
	proc_worker_read(&web_iev, event, web_dispatch_master_msg, NULL);
}

void
webworker_main(int debug, int verbose)
{
	struct worker_init	 wi;

	log_init(debug, LOG_DAEMON);
	log_setverbose(verbose);
	log_procinit("webworker");

	if (imsgbuf_init(&web_iev.ibuf, PROC_CHILD_FD, IMSGF_PASSFD,
	    WEBWORKER_MSG_MAX) == -1)
		fatal("imsgbuf_init");
	proc_worker_init("webworker", &web_iev.ibuf, &wi);

	sandbox_drop("webworker", wi.wi_chroot, wi.wi_uid, wi.wi_gid);
	webworker_sandbox_fs();
	if ((web_base = event_base_new()) == NULL)
		fatalx("event_base_new");
	web_http_ctl = web_http_new(WEB_PEER_LOCAL);
	web_http_tcp = web_http_new(WEB_PEER_TCP);
	/*
	 * Keep what the channel already buffered (the listeners may have
	 * arrived with IMSG_INIT): hand the imsgbuf over as it is.
	 */
	imsgev_attach(&web_iev, web_base, "webworker", web_dispatch_master,
	    NULL);
	webworker_sandbox_syscalls();

	imsgev_compose(&web_iev, IMSG_WORKER_READY, 0, -1, NULL, 0);
#ifdef NOPS_TEST_HOOKS
	proc_worker_testhooks(&wi, &web_iev);
#endif
	/* Messages that arrived with IMSG_INIT are handled first. */
	web_dispatch_master(PROC_CHILD_FD, 0, NULL);
	event_base_dispatch(web_base);
	exit(0);
}
