/*
 * The edge: every byte a TCP client sends is checked here before evhttp
 * parses it, so that nops and a proxy in front of it agree on where a
 * request ends, and so that every refusal carries our headers (libevent
 * 2.1 answers its own errors with no way to add any).
 *
 * We watch the connection's input buffer (an evbuffer callback runs as
 * bytes are added, before evhttp's read callback sees them) and follow
 * the stream: request line, headers, then the body by Content-Length or
 * by chunks, then the next request.  What we refuse (see nopsd.8, HTTP
 * FRAMING) we answer ourselves: the connection's callbacks are taken
 * from evhttp, the answer written, what the client still sends read and
 * dropped for a moment (so that our answer is not lost to a reset), and
 * then evhttp is told the client left, which frees its side.
 *
 * What is checked, line by line as it completes: CRLF line ends only (a
 * bare CR or LF is refused), the request line (a method we serve, an
 * origin-form target of visible ASCII, HTTP/1.0 or 1.1), header names
 * (tokens, no whitespace before the colon), no obsolete line folding, no
 * control bytes in values; at the end of the head: one Content-Length at
 * most, of digits, or one Transfer-Encoding, which must be "chunked",
 * never both, Host present once on HTTP/1.1 and one the listener answers
 * for, Expect only 100-continue, a body only where evhttp reads one, and
 * the body limit: a Content-Length past it is refused at once, chunks as
 * soon as their sum would pass it.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "log.h"
#include "logflood.h"
#include "web.h"

static struct log_flood	 web_edge_flood =
    LOG_FLOOD_INITIALIZER("refused requests", LOG_WARNING);

/* The methods we serve (as web_method() in webworker.c). */
static const struct {
	const char	*name;
	int		 cmd;
	int		 body;	/* evhttp reads a body for it */
} web_edge_methods[] = {
	{ "GET",	EVHTTP_REQ_GET,		0 },
	{ "HEAD",	EVHTTP_REQ_HEAD,	0 },
	{ "POST",	EVHTTP_REQ_POST,	1 },
	{ "PUT",	EVHTTP_REQ_PUT,		1 },
	{ "DELETE",	EVHTTP_REQ_DELETE,	0 },
	{ "PATCH",	EVHTTP_REQ_PATCH,	1 },
};

static int	web_edge_bytes(struct web_conn *, const unsigned char *,
		    size_t);

void
web_edge_flush_logs(void)
{
	log_flood_flush(&web_edge_flood);
}

/* RFC 9110 tchar */
static int
web_edge_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || (c != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static void
web_edge_head_reset(struct web_edge *we)
{
	we->we_state = WE_HEAD;
	we->we_headlen = 0;
	we->we_nlines = 0;
	we->we_method = 0;
	we->we_http11 = 0;
	we->we_ncl = we->we_nte = we->we_nhost = we->we_hostok = 0;
	we->we_cl = 0;
	we->we_left = 0;
	we->we_body = 0;
}

/* Bytes were added to the input: check them, in order. */
static void
web_edge_input(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct web_conn		*wn = arg;
	struct web_edge		*we = &wn->wn_edge;
	struct evbuffer_iovec	 v[4];
	struct evbuffer_ptr	 pos;
	size_t			 len, off, i;
	int			 n;

	if (info->n_added == 0)
		return;
	if (we->we_state == WE_DISCARD) {
		evbuffer_drain(buf, evbuffer_get_length(buf));
		return;
	}
	if (we->we_state >= WE_ANSWER)
		return;
	len = evbuffer_get_length(buf);
	off = info->n_added < len ? len - info->n_added : 0;
	while (off < len && we->we_state < WE_DISCARD) {
		if (evbuffer_ptr_set(buf, &pos, off, EVBUFFER_PTR_SET) == -1)
			break;
		n = evbuffer_peek(buf, len - off, &pos, v, 4);
		if (n <= 0)
			break;
		if (n > 4)
			n = 4;
		for (i = 0; i < (size_t)n && off < len; i++) {
			if (v[i].iov_len > len - off)
				v[i].iov_len = len - off;
			if (web_edge_bytes(wn, v[i].iov_base,
			    v[i].iov_len) == -1)
				return;
			off += v[i].iov_len;
		}
	}
}

void
web_edge_start(struct web_conn *wn)
{
	struct web_edge	*we = &wn->wn_edge;

	memset(we, 0, sizeof(*we));
	web_edge_head_reset(we);
	if ((we->we_cb = evbuffer_add_cb(bufferevent_get_input(wn->wn_bev),
	    web_edge_input, wn)) == NULL)
		fatalx("evbuffer_add_cb");
}

void
web_edge_stop(struct web_conn *wn)
{
	struct web_edge	*we = &wn->wn_edge;

	if (we->we_cb != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_input(wn->wn_bev),
		    we->we_cb);
	we->we_cb = NULL;
	free(we->we_line);
	we->we_line = NULL;
	we->we_state = WE_DONE;
}

/* Hand the connection back to evhttp as closed by the client. */
static void
web_edge_finish(struct web_conn *wn)
{
	struct web_edge		*we = &wn->wn_edge;
	struct bufferevent	*bev = wn->wn_bev;

	we->we_state = WE_DONE;
	bufferevent_disable(bev, EV_READ | EV_WRITE);
	bufferevent_setcb(bev, we->we_rcb, we->we_wcb, we->we_ecb,
	    we->we_cbarg);
	if (we->we_ecb != NULL)
		we->we_ecb(bev, BEV_EVENT_EOF | BEV_EVENT_READING,
		    we->we_cbarg);
	web_conn_release(wn);
}

static void
web_edge_readcb(struct bufferevent *bev, void *arg)
{
	struct web_conn	*wn = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	size_t		 n = evbuffer_get_length(in);

	evbuffer_drain(in, n);
	wn->wn_edge.we_lingered += n;
	/* Enough: a client that keeps sending gets a reset. */
	if (wn->wn_edge.we_lingered > 2 * wn->wn_wl->wl_body_max)
		web_edge_finish(wn);
}

static void
web_edge_writecb(struct bufferevent *bev, void *arg)
{
	struct web_conn	*wn = arg;
	struct web_edge	*we = &wn->wn_edge;
	struct timeval	 tv = { WEB_LINGER, 0 };
	int		 fd;

	if (we->we_state != WE_ANSWER ||
	    evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return;
	/*
	 * Closing with unread bytes queued sends a reset, which may destroy
	 * the answer before the client reads it: say we are done, read and
	 * drop what still comes for a moment, then close.
	 */
	if (we->we_lingered == 0 && wn->wn_wl->wl_ssl == NULL &&
	    (fd = bufferevent_getfd(bev)) != -1 &&
	    shutdown(fd, SHUT_WR) == 0) {
		we->we_state = WE_LINGER;
		bufferevent_disable(bev, EV_WRITE);
		bufferevent_set_timeouts(bev, &tv, &tv);
		bufferevent_enable(bev, EV_READ);
		return;
	}
	web_edge_finish(wn);
}

static void
web_edge_eventcb(struct bufferevent *bev, short what, void *arg)
{
	web_edge_finish(arg);
}

static void
web_edge_json_escaped(struct evbuffer *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			evbuffer_add_printf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			evbuffer_add_printf(b, "\\u%04x", (unsigned char)*s);
		else
			evbuffer_add(b, s, 1);
	}
}

void
web_edge_refuse(struct web_conn *wn, int status, const char *why,
    int linger)
{
	struct web_edge		*we = &wn->wn_edge;
	struct bufferevent	*bev = wn->wn_bev;
	struct evbuffer		*in, *body, *out;
	struct timeval		 tv = { web_idle_timeout(), 0 };
	size_t			 i;

	in = bufferevent_get_input(bev);
	log_flood(&web_edge_flood, "refused %s on %s: %d %s",
	    wn->wn_addr, wn->wn_wl->wl_name, status, why);
	web_count(status);
	if (wn->wn_busy > 0) {
		/*
		 * evhttp is answering an earlier request of this connection:
		 * let it, and drop what comes after; the connection idles
		 * out.
		 */
		we->we_state = WE_DISCARD;
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	we->we_state = WE_ANSWER;
	we->we_lingered = linger ? 0 : 1;
	evbuffer_drain(in, evbuffer_get_length(in));
	bufferevent_getcb(bev, &we->we_rcb, &we->we_wcb, &we->we_ecb,
	    &we->we_cbarg);
	if (!linger && wn->wn_wl->wl_ssl != NULL) {
		/* No handshake for one we refuse: just close. */
		web_edge_finish(wn);
		return;
	}
	bufferevent_setcb(bev, web_edge_readcb, web_edge_writecb,
	    web_edge_eventcb, wn);
	bufferevent_disable(bev, EV_READ);
	bufferevent_set_timeouts(bev, NULL, &tv);

	if ((body = evbuffer_new()) == NULL || (out = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	evbuffer_add_printf(body, "{\"error\": {\"code\": \"%s\", "
	    "\"message\": \"", status == 503 ? "queue_full" : "bad_request");
	web_edge_json_escaped(body, why);
	evbuffer_add_printf(body, "\"}}\n");
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %zu\r\n"
	    "Connection: close\r\n"
	    "Cache-Control: no-store\r\n", status, web_reason(status),
	    evbuffer_get_length(body));
	for (i = 0; web_sec_headers[i][0] != NULL; i++)
		evbuffer_add_printf(out, "%s: %s\r\n", web_sec_headers[i][0],
		    web_sec_headers[i][1]);
	if (status == 503)
		evbuffer_add_printf(out, "Retry-After: 5\r\n");
	evbuffer_add_printf(out, "\r\n");
	if (we->we_method != EVHTTP_REQ_HEAD)
		evbuffer_add_buffer(out, body);
	bufferevent_write_buffer(bev, out);
	evbuffer_free(out);
	evbuffer_free(body);
	bufferevent_enable(bev, EV_WRITE);
}

static int
web_edge_fail(struct web_conn *wn, int status, const char *why)
{
	web_edge_refuse(wn, status, why, 1);
	return -1;
}

/* The request line: METHOD SP origin-form SP HTTP/1.x */
static int
web_edge_request_line(struct web_conn *wn, char *line, size_t len)
{
	struct web_edge	*we = &wn->wn_edge;
	char		*sp1, *sp2, *ver, *p;
	size_t		 i;

	if ((sp1 = memchr(line, ' ', len)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line))) ==
	    NULL || memchr(sp2 + 1, ' ', len - (size_t)(sp2 + 1 - line)) !=
	    NULL)
		return web_edge_fail(wn, 400, "malformed request line");
	*sp1 = *sp2 = '\0';
	ver = sp2 + 1;
	for (i = 0; i < sizeof(web_edge_methods) /
	    sizeof(web_edge_methods[0]); i++)
		if (strcmp(line, web_edge_methods[i].name) == 0)
			we->we_method = web_edge_methods[i].cmd;
	if (we->we_method == 0) {
		for (p = line; *p != '\0'; p++)
			if (!web_edge_tchar((unsigned char)*p))
				break;
		if (p == line || *p != '\0')
			return web_edge_fail(wn, 400,
			    "malformed request line");
		return web_edge_fail(wn, 501, "method not implemented");
	}
	if (strcmp(ver, "HTTP/1.1") == 0)
		we->we_http11 = 1;
	else if (strcmp(ver, "HTTP/1.0") != 0) {
		if (strncmp(ver, "HTTP/", 5) == 0 && ver[5] >= '0' &&
		    ver[5] <= '9' && ver[6] == '.' && ver[7] >= '0' &&
		    ver[7] <= '9' && ver[8] == '\0')
			return web_edge_fail(wn, 505,
			    "HTTP version not supported");
		return web_edge_fail(wn, 400, "malformed request line");
	}
	if (sp1[1] != '/')
		return web_edge_fail(wn, 400, "the request target must be a "
		    "path");
	if (strlen(sp1 + 1) > WEB_PATH_MAX)
		return web_edge_fail(wn, 414, "request target too long");
	for (p = sp1 + 1; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return web_edge_fail(wn, 400, "a byte in the request "
			    "target that is not visible ASCII");
	return 0;
}

/* The host part of a Host value: "[v6]:port", "name:port", "name". */
static int
web_edge_host_part(const char *v, char *host, size_t hostlen, int *v6)
{
	const char	*end, *port;
	size_t		 n;

	*v6 = 0;
	if (*v == '[') {
		if ((end = strchr(v, ']')) == NULL)
			return -1;
		port = end + 1;
		v++;
		*v6 = 1;
	} else {
		end = v + strcspn(v, ":");
		port = end;
	}
	if (*port == ':') {
		port++;
		if (*port == '\0' || strspn(port, "0123456789") !=
		    strlen(port) || strlen(port) > 5)
			return -1;
	} else if (*port != '\0')
		return -1;
	n = (size_t)(end - v);
	if (n == 0 || n >= hostlen)
		return -1;
	memcpy(host, v, n);
	host[n] = '\0';
	return 0;
}

int
web_edge_host_ok(const struct web_listener *wl, const char *value)
{
	char		 host[256];
	unsigned char	 a[16];
	size_t		 i;
	int		 v6;

	if (web_edge_host_part(value, host, sizeof(host), &v6) == -1)
		return 0;
	for (i = 0; i < wl->wl_nhosts; i++)
		if (strcasecmp(host, wl->wl_hosts[i]) == 0)
			return 1;
	/* An address literal cannot be rebound by DNS. */
	if (wl->wl_hostflags & WEB_HOSTS_IPLITERAL)
		return v6 ? inet_pton(AF_INET6, host, a) == 1 :
		    inet_pton(AF_INET, host, a) == 1;
	return 0;
}

/* OWS-trimmed value of a header line after its colon. */
static char *
web_edge_trim(char *v)
{
	size_t	 n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		v[--n] = '\0';
	return v;
}

/* A header (or trailer) line: name ":" OWS value OWS. */
static int
web_edge_field(struct web_conn *wn, char *line, size_t len, int trailer)
{
	struct web_edge	*we = &wn->wn_edge;
	char		*colon, *v;
	size_t		 i;

	if (line[0] == ' ' || line[0] == '\t')
		return web_edge_fail(wn, 400, "obsolete line folding");
	if ((colon = memchr(line, ':', len)) == NULL)
		return web_edge_fail(wn, 400, "a header line without a "
		    "colon");
	if (colon == line)
		return web_edge_fail(wn, 400, "a header without a name");
	if (colon[-1] == ' ' || colon[-1] == '\t')
		return web_edge_fail(wn, 400, "whitespace before a header "
		    "colon");
	for (i = 0; line + i < colon; i++)
		if (!web_edge_tchar((unsigned char)line[i]))
			return web_edge_fail(wn, 400, "a bad header name");
	for (i = (size_t)(colon + 1 - line); i < len; i++)
		if (((unsigned char)line[i] < 0x20 && line[i] != '\t') ||
		    (unsigned char)line[i] == 0x7f)
			return web_edge_fail(wn, 400, "a control byte in a "
			    "header");
	*colon = '\0';
	v = web_edge_trim(colon + 1);
	if (trailer)
		return 0;
	if (strcasecmp(line, "Content-Length") == 0) {
		if (++we->we_ncl > 1)
			return web_edge_fail(wn, 400, "more than one "
			    "Content-Length");
		if (*v == '\0' || strlen(v) > 18 ||
		    strspn(v, "0123456789") != strlen(v))
			return web_edge_fail(wn, 400, "a bad Content-Length");
		we->we_cl = strtoull(v, NULL, 10);
	} else if (strcasecmp(line, "Transfer-Encoding") == 0) {
		if (++we->we_nte > 1)
			return web_edge_fail(wn, 400, "more than one "
			    "Transfer-Encoding");
		if (strcasecmp(v, "chunked") != 0)
			return web_edge_fail(wn, 501, "a Transfer-Encoding "
			    "other than chunked");
	} else if (strcasecmp(line, "Host") == 0) {
		if (++we->we_nhost > 1)
			return web_edge_fail(wn, 400, "more than one Host");
		we->we_hostok = web_edge_host_ok(wn->wn_wl, v);
	} else if (strcasecmp(line, "Expect") == 0) {
		if (strcasecmp(v, "100-continue") != 0)
			return web_edge_fail(wn, 417, "an Expect other than "
			    "100-continue");
	}
	return 0;
}

static int
web_edge_head_end(struct web_conn *wn)
{
	struct web_edge	*we = &wn->wn_edge;
	size_t		 i;
	int		 body = 0;

	if (we->we_nte > 0 && we->we_ncl > 0)
		return web_edge_fail(wn, 400, "both Content-Length and "
		    "Transfer-Encoding");
	if (we->we_http11 && we->we_nhost == 0)
		return web_edge_fail(wn, 400, "no Host header");
	if (we->we_nhost > 0 && !we->we_hostok)
		return web_edge_fail(wn, 421, "this server does not answer "
		    "for that Host");
	for (i = 0; i < sizeof(web_edge_methods) /
	    sizeof(web_edge_methods[0]); i++)
		if (web_edge_methods[i].cmd == we->we_method)
			body = web_edge_methods[i].body;
	if (!body && (we->we_nte > 0 || we->we_cl > 0))
		return web_edge_fail(wn, 400, "a body on a request whose "
		    "method takes none");
	if (we->we_cl > wn->wn_wl->wl_body_max)
		return web_edge_fail(wn, 413, "request body too large");
	if (we->we_nte > 0) {
		web_edge_head_reset(we);
		we->we_state = WE_CHUNK_SIZE;
	} else if (we->we_cl > 0) {
		uint64_t cl = we->we_cl;

		web_edge_head_reset(we);
		we->we_state = WE_BODY;
		we->we_left = cl;
	} else
		web_edge_head_reset(we);
	return 0;
}

static int
web_edge_chunk_size(struct web_conn *wn, const char *line, size_t len)
{
	struct web_edge	*we = &wn->wn_edge;
	uint64_t	 size;

	if (len == 0 || len > 15 || strspn(line, "0123456789abcdefABCDEF") !=
	    len)
		return web_edge_fail(wn, 400, "a bad chunk size (chunk "
		    "extensions are not accepted)");
	size = strtoull(line, NULL, 16);
	if (size == 0) {
		we->we_state = WE_TRAILER;
		return 0;
	}
	if (we->we_body + size > wn->wn_wl->wl_body_max)
		return web_edge_fail(wn, 413, "request body too large");
	we->we_body += size;
	we->we_left = size;
	we->we_state = WE_CHUNK_DATA;
	return 0;
}

/*
 * A whole line (CRLF taken off) in we_line.  Alike on purpose: the end of
 * hcl.c's string lexer and lx_next's locals (shared/hcl.c): the same shape
 * of fields set, a return and the next function's locals, nothing shared.
 */
static int
web_edge_line(struct web_conn *wn)
{
	struct web_edge	*we = &wn->wn_edge;
	char		*line = we->we_line;
	size_t		 len = we->we_linelen;

	line[len] = '\0';
	we->we_linelen = 0;
	if (memchr(line, '\0', len) != NULL)
		return web_edge_fail(wn, 400, "a NUL byte in the request "
		    "head");
	switch (we->we_state) {
	case WE_HEAD:
		if (we->we_nlines++ == 0)
			return web_edge_request_line(wn, line, len);
		if (len == 0)
			return web_edge_head_end(wn);
		return web_edge_field(wn, line, len, 0);
	case WE_CHUNK_SIZE:
		return web_edge_chunk_size(wn, line, len);
	case WE_TRAILER:
		if (len == 0) {
			web_edge_head_reset(we);
			return 0;
		}
		return web_edge_field(wn, line, len, 1);
	default:
		return 0;
	}
}

static int
web_edge_bytes(struct web_conn *wn, const unsigned char *p, size_t n)
{
	struct web_edge	*we = &wn->wn_edge;
	size_t		 i = 0, k, max;
	unsigned char	 c;

	while (i < n) {
		switch (we->we_state) {
		case WE_BODY:
		case WE_CHUNK_DATA:
			k = n - i < we->we_left ? n - i : (size_t)we->we_left;
			we->we_left -= k;
			i += k;
			if (we->we_left == 0) {
				if (we->we_state == WE_BODY)
					web_edge_head_reset(we);
				else
					we->we_state = WE_CHUNK_CR;
			}
			continue;
		case WE_CHUNK_CR:
		case WE_CHUNK_LF:
			if (p[i++] != (we->we_state == WE_CHUNK_CR ? '\r' :
			    '\n'))
				return web_edge_fail(wn, 400, "a chunk not "
				    "followed by CRLF");
			we->we_state = we->we_state == WE_CHUNK_CR ?
			    WE_CHUNK_LF : WE_CHUNK_SIZE;
			continue;
		case WE_HEAD:
		case WE_CHUNK_SIZE:
		case WE_TRAILER:
			break;
		default:
			return -1;
		}
		if (we->we_line == NULL &&
		    (we->we_line = malloc(WEB_HEADERS_SIZE + 1)) == NULL)
			fatal("malloc");
		c = p[i++];
		max = we->we_state == WE_CHUNK_SIZE ? WEB_CHUNK_LINE_MAX :
		    WEB_HEADERS_SIZE;
		if (we->we_state != WE_CHUNK_SIZE &&
		    ++we->we_headlen > WEB_HEADERS_SIZE)
			return web_edge_fail(wn, 431, "request headers too "
			    "large");
		if (c == '\n') {
			if (!we->we_cr)
				return web_edge_fail(wn, 400, "a bare LF in "
				    "the request head");
			we->we_cr = 0;
			if (web_edge_line(wn) == -1)
				return -1;
			continue;
		}
		if (we->we_cr)
			return web_edge_fail(wn, 400, "a bare CR in the "
			    "request head");
		if (c == '\r') {
			we->we_cr = 1;
			continue;
		}
		if (we->we_linelen >= max)
			return web_edge_fail(wn, we->we_state == WE_CHUNK_SIZE ?
			    400 : 431, we->we_state == WE_CHUNK_SIZE ?
			    "a bad chunk size" : "request headers too large");
		we->we_line[we->we_linelen++] = (char)c;
	}
	return 0;
}
