/*
 * Unit tests of the webworker's pushed reads (webworker/web_auth.c,
 * webworker/web_docs.c): the webworker's own code runs in this process
 * with its event loop, this test plays the master at the other end of
 * its channel, and clients speak HTTP to it over TCP and the control
 * socket.  Identities, the session probe, refusals worded as the
 * master's, documents wanted, answered, replaced and dropped, pages
 * built from them, a client that leaves while it waits, and the report
 * of uses and answers.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "authc.h"
#include "web.h"
#include "test.h"

#define BOOT_TOKEN	"bootstrap-secret-for-the-test"
#define CLS_NONE	0
#define CLS_MANAGE	1
#define CLS_READER	2
#define CLS_OTHER	3

static struct imsgbuf	 mb;		/* the master's end */
static int		 tcp_port;
static char		 unix_path[64];
static char		 sid[AUTH_SECRET_B64 + 1];	/* alice's session */
static char		 sid_old[AUTH_SECRET_B64 + 1];	/* idle too long */
static char		 sid_bob[AUTH_SECRET_B64 + 1];	/* alice's class */
static char		 sid_carol[AUTH_SECRET_B64 + 1];	/* another class */
static char		 tok[AUTH_TOKEN_LEN + 1];	/* "ci", a reader */
static char		 tok_old[AUTH_TOKEN_LEN + 1];	/* expired */
static char		 tok_hash[AUTH_SHA256_HEX + 1];

/* What IMSG_WEB_SEEN said, over every one received. */
static int		 seen_tok;	/* tok's use was reported */
static int		 seen_sid;	/* sid's use was reported */
static int		 seen_expired;	/* sid_old was reported expired */
static char		 sid_old_hash[AUTH_SHA256_HEX + 1];
static unsigned		 seen_codes[600];
static int		 seen_msgs;

struct hresp {
	int	 status;
	char	 head[8192];
	char	*body;
	size_t	 len;
};

static void
spin(int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(web_base, &tv);
	event_base_dispatch(web_base);
}

static void
seen_record(struct imsg *im)
{
	struct msgr	 r;
	const char	*hash;
	uint32_t	 n, i, kind, code, count;
	int64_t		 at;

	msg_reader(&r, im);
	msg_get_u32(&r, &n);
	for (i = 0; i < n && r.err == 0; i++) {
		msg_get_u32(&r, &kind);
		msg_get_str(&r, &hash, WEB_HASH_HEX);
		msg_get_i64(&r, &at);
		if (r.err == 0 && kind == WEB_PRIN_TOKEN &&
		    strcmp(hash, tok_hash) == 0 && at > time(NULL) - 30)
			seen_tok = 1;
		if (r.err == 0 && kind == WEB_PRIN_SESSION && at == 0 &&
		    strcmp(hash, sid_old_hash) == 0)
			seen_expired++;
		else if (r.err == 0 && kind == WEB_PRIN_SESSION && at != 0)
			seen_sid = 1;
	}
	msg_get_u32(&r, &n);
	for (i = 0; i < n && r.err == 0; i++) {
		msg_get_u32(&r, &code);
		msg_get_u32(&r, &count);
		if (r.err == 0 && code < 600)
			seen_codes[code] += count;
	}
	if (msg_end(&r) == -1) {
		printf("# malformed IMSG_WEB_SEEN\n");
		exit(1);
	}
	seen_msgs++;
}

/* The next message from the webworker but IMSG_WEB_SEEN; 0 if none. */
static int
m_get(struct imsg *im, int ms)
{
	ssize_t	 n;
	int	 waited = 0;

	for (;;) {
		while ((n = imsg_get(&mb, im)) > 0) {
			if (im->hdr.type != IMSG_WEB_SEEN)
				return 1;
			seen_record(im);
			imsg_free(im);
		}
		if (n == -1) {
			printf("# imsg_get: %s\n", strerror(errno));
			exit(1);
		}
		if (waited >= ms)
			return 0;
		spin(10);
		waited += 10;
		if (imsgbuf_read(&mb) == 0) {
			printf("# the webworker's channel closed\n");
			exit(1);
		}
	}
}

static void
m_send(struct msgw *m, uint32_t type, uint32_t peerid, int fd)
{
	if (msg_send(m, &mb, type, peerid, fd) == -1 ||
	    imsgbuf_flush(&mb) == -1) {
		printf("# send to the webworker: %s\n", strerror(errno));
		exit(1);
	}
	spin(5);
}

/* A WANT or UNWANT: 1 if it is for (cls, target). */
static int
m_is_want(struct imsg *im, uint32_t type, uint32_t cls, const char *target)
{
	struct msgr	 r;
	const char	*t;
	uint32_t	 c;

	if (im->hdr.type != type)
		return 0;
	msg_reader(&r, im);
	msg_get_u32(&r, &c);
	msg_get_str(&r, &t, WEB_PATH_MAX);
	return msg_end(&r) == 0 && c == cls && strcmp(t, target) == 0;
}

static int
m_want(uint32_t type, uint32_t cls, const char *target)
{
	struct imsg	 im;
	int		 ok;

	if (!m_get(&im, 2000)) {
		printf("# no message (wanted %s %u %s)\n",
		    imsg_to_str(type), cls, target);
		return 0;
	}
	ok = m_is_want(&im, type, cls, target);
	if (!ok)
		printf("# got %s, wanted %s %u %s\n",
		    imsg_to_str(im.hdr.type), imsg_to_str(type), cls, target);
	imsg_free(&im);
	return ok;
}

/* Nothing for the master (a read answered here, or refused). */
static int
m_quiet(int ms)
{
	struct imsg	 im;

	if (!m_get(&im, ms))
		return 1;
	printf("# unexpected %s\n", imsg_to_str(im.hdr.type));
	imsg_free(&im);
	return 0;
}

static void
push_doc(uint32_t cls, const char *target, int status, const char *hname,
    const char *hvalue, const char *body)
{
	struct msgw	 m;

	msg_init(&m);
	msg_add_u32(&m, cls);
	msg_add_str(&m, target);
	msg_add_u32(&m, (uint32_t)status);
	msg_add_str(&m, "application/json");
	msg_add_u32(&m, hname != NULL ? 1 : 0);
	if (hname != NULL) {
		msg_add_str(&m, hname);
		msg_add_str(&m, hvalue);
	}
	msg_add_data(&m, body, strlen(body));
	m_send(&m, IMSG_WEB_DOC, 0, -1);
}

static void
push_stale(uint32_t cls, const char *target)
{
	struct msgw	 m;

	msg_init(&m);
	msg_add_u32(&m, cls);
	msg_add_str(&m, target);
	m_send(&m, IMSG_WEB_STALE, 0, -1);
}

static void
push_class(uint32_t cls, const char *json)
{
	struct msgw	 m;

	msg_init(&m);
	msg_add_u32(&m, cls);
	msg_add_data(&m, json, strlen(json));
	m_send(&m, IMSG_WEB_AUTH_CLASS, 0, -1);
}

static void
push_prin(uint32_t kind, const char *secret, const char *name, uint32_t cls,
    int64_t seen, int64_t expires, const char *groups)
{
	struct msgw	 m;
	char		 hash[AUTH_SHA256_HEX + 1];

	auth_sha256_hex(secret, strlen(secret), hash);
	msg_init(&m);
	msg_add_u32(&m, kind);
	msg_add_str(&m, hash);
	msg_add_str(&m, name);
	msg_add_u32(&m, cls);
	msg_add_i64(&m, seen);
	msg_add_i64(&m, expires);
	msg_add_data(&m, groups, strlen(groups));
	m_send(&m, IMSG_WEB_AUTH_PRINCIPAL, 0, -1);
}

static void
push_forget(const char *secret)
{
	struct msgw	 m;
	char		 hash[AUTH_SHA256_HEX + 1];

	auth_sha256_hex(secret, strlen(secret), hash);
	msg_init(&m);
	msg_add_str(&m, hash);
	m_send(&m, IMSG_WEB_AUTH_FORGET, 0, -1);
}

static void
push_begin(void)
{
	struct msgw	 m;
	char		 hash[AUTH_SHA256_HEX + 1];

	auth_sha256_hex(BOOT_TOKEN, strlen(BOOT_TOKEN), hash);
	msg_init(&m);
	msg_add_u32(&m, 1800);
	msg_add_str(&m, hash);
	msg_add_u32(&m, CLS_MANAGE);
	msg_add_u32(&m, 0);
	m_send(&m, IMSG_WEB_AUTH_BEGIN, 0, -1);
}

static void
push_commit(void)
{
	struct msgw	 m;

	msg_init(&m);
	m_send(&m, IMSG_WEB_AUTH_COMMIT, 0, -1);
}

/* The whole table: classes, alice's sessions, the ci tokens. */
static void
push_table(void)
{
	time_t	 now = time(NULL);

	push_begin();
	push_class(CLS_NONE, "{\"management\":false,\"capabilities\":[],"
	    "\"namespaces\":{\"default\":[]}}");
	push_class(CLS_MANAGE, "{\"management\":true,\"capabilities\":"
	    "[\"read\",\"approve\"],\"namespaces\":{\"default\":[\"read\","
	    "\"approve\"]}}");
	push_class(CLS_READER, "{\"management\":false,\"capabilities\":"
	    "[\"read\"],\"namespaces\":{\"default\":[\"read\"]}}");
	push_class(CLS_OTHER, "{\"management\":false,\"capabilities\":"
	    "[],\"namespaces\":{\"default\":[]}}");
	push_prin(WEB_PRIN_SESSION, sid, "alice", CLS_READER, now,
	    now + 3600, "[\"ops\"]");
	push_prin(WEB_PRIN_SESSION, sid_old, "alice", CLS_READER, now - 4000,
	    now + 3600, "[\"ops\"]");
	push_prin(WEB_PRIN_SESSION, sid_bob, "bob", CLS_READER, now,
	    now + 3600, "[\"ops\"]");
	push_prin(WEB_PRIN_SESSION, sid_carol, "carol", CLS_OTHER, now,
	    now + 3600, "[]");
	push_prin(WEB_PRIN_TOKEN, tok, "ci", CLS_READER, now - 120, 0, "");
	push_prin(WEB_PRIN_TOKEN, tok_old, "old", CLS_READER, now - 120,
	    now - 10, "");
	push_commit();
}

/* HTTP: one request on a new connection, read to its end. */

static int
http_connect_tcp(void)
{
	struct sockaddr_in	 sin;
	int			 fd;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(tcp_port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
http_connect_unix(void)
{
	struct sockaddr_un	 sun;
	int			 fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, unix_path, sizeof(sun.sun_path));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
http_start(int local, const char *method, const char *path,
    const char *headers)
{
	char	 req[4096];
	int	 fd, n;

	fd = local ? http_connect_unix() : http_connect_tcp();
	if (fd == -1) {
		printf("# connect: %s\n", strerror(errno));
		exit(1);
	}
	n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: test\r\n"
	    "Connection: close\r\n%s\r\n", method, path,
	    headers != NULL ? headers : "");
	if (write(fd, req, n) != n) {
		printf("# write: %s\n", strerror(errno));
		exit(1);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Read until the server closes; 0, or -1 if it did not in ms. */
static int
http_finish(int fd, struct hresp *r, int ms)
{
	static char	 buf[256 * 1024];
	size_t		 len = 0;
	ssize_t		 n;
	char		*end;
	int		 waited = 0;

	memset(r, 0, sizeof(*r));
	for (;;) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n == 0)
			break;
		if (n > 0) {
			len += n;
			continue;
		}
		if (errno != EAGAIN || waited >= ms) {
			close(fd);
			return -1;
		}
		spin(10);
		waited += 10;
	}
	close(fd);
	buf[len] = '\0';
	if ((end = strstr(buf, "\r\n\r\n")) == NULL)
		return -1;
	*end = '\0';
	strlcpy(r->head, buf, sizeof(r->head));
	r->body = end + 4;
	r->len = len - (end + 4 - buf);
	if (sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1)
		return -1;
	return 0;
}

static int
http(int local, const char *method, const char *path, const char *headers,
    struct hresp *r)
{
	return http_finish(http_start(local, method, path, headers), r, 3000);
}

/* A header's value (the first), or NULL. */
static const char *
hdr(struct hresp *r, const char *name)
{
	static char	 val[1024];
	const char	*p = r->head;
	size_t		 nlen = strlen(name), n;

	while ((p = strstr(p, "\r\n")) != NULL) {
		p += 2;
		if (strncasecmp(p, name, nlen) == 0 && p[nlen] == ':') {
			p += nlen + 1;
			while (*p == ' ')
				p++;
			n = strcspn(p, "\r\n");
			if (n >= sizeof(val))
				n = sizeof(val) - 1;
			memcpy(val, p, n);
			val[n] = '\0';
			return val;
		}
	}
	return NULL;
}

/* Answer the master's IMSG_WEB_REQUEST with a plain 200. */
static int
m_answer_request(const char *want_method, const char *want_target)
{
	struct imsg	 im;
	struct msgr	 r;
	struct msgw	 m;
	const char	*remote, *method, *target;
	uint32_t	 u;
	int		 ok;

	if (!m_get(&im, 2000)) {
		printf("# no IMSG_WEB_REQUEST\n");
		return 0;
	}
	ok = im.hdr.type == IMSG_WEB_REQUEST;
	if (ok) {
		msg_reader(&r, &im);
		msg_get_u32(&r, &u);
		msg_get_u32(&r, &u);
		msg_get_u32(&r, &u);
		msg_get_str(&r, &remote, WEB_REMOTE_MAX);
		msg_get_u32(&r, &u);
		msg_get_str(&r, &method, WEB_METHOD_MAX);
		msg_get_str(&r, &target, WEB_PATH_MAX);
		ok = r.err == 0 && strcmp(method, want_method) == 0 &&
		    strcmp(target, want_target) == 0;
		if (!ok)
			printf("# request %s %s\n", r.err ? "?" : method,
			    r.err ? "?" : target);
		msg_init(&m);
		msg_add_u32(&m, 200);
		msg_add_str(&m, "application/json");
		msg_add_u32(&m, 0);
		msg_add_data(&m, "{\"from\":\"master\"}", 17);
		m_send(&m, IMSG_WEB_RESPONSE, im.hdr.peerid, -1);
	} else
		printf("# got %s\n", imsg_to_str(im.hdr.type));
	imsg_free(&im);
	return ok;
}

static void
secret(char *out, const char *prefix, int n)
{
	unsigned char	 rnd[AUTH_SECRET_BYTES];

	memset(rnd, n, sizeof(rnd));
	strlcpy(out, prefix, AUTH_TOKEN_LEN + 1);
	auth_b64url(rnd, sizeof(rnd), out + strlen(prefix));
}

static void
setup(void)
{
	struct sockaddr_in	 sin;
	struct sockaddr_un	 sun;
	socklen_t		 slen = sizeof(sin);
	struct msgw		 m;
	int			 sv[2], lfd, ufd;

	signal(SIGPIPE, SIG_IGN);
	log_init(1, LOG_DAEMON);
	log_setverbose(getenv("TEST_VERBOSE") != NULL ? 2 : 0);
	secret(sid, "", 1);
	secret(sid_old, "", 2);
	secret(sid_bob, "", 5);
	secret(sid_carol, "", 6);
	secret(tok, AUTH_TOKEN_PREFIX, 3);
	secret(tok_old, AUTH_TOKEN_PREFIX, 4);
	auth_sha256_hex(tok, strlen(tok), tok_hash);
	auth_sha256_hex(sid_old, strlen(sid_old), sid_old_hash);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		fatal("socketpair");
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	if (imsgbuf_init(&mb, sv[0], IMSGF_PASSFD, WEBWORKER_MSG_MAX) == -1)
		fatal("imsgbuf_init");
	webworker_test_init(sv[1]);

	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		fatal("socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 64) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen) == -1)
		fatal("tcp listener");
	fcntl(lfd, F_SETFL, O_NONBLOCK);
	tcp_port = ntohs(sin.sin_port);
	msg_init(&m);
	msg_add_u32(&m, WEB_LISTEN_TCP);
	msg_add_str(&m, "test tcp");
	msg_add_u32(&m, 0);
	msg_add_data(&m, NULL, 0);
	msg_add_data(&m, NULL, 0);
	msg_add_u32(&m, WEB_BODY_DEFAULT);
	msg_add_u32(&m, 0);
	msg_add_u32(&m, 1);
	msg_add_str(&m, "test");
	msg_add_u32(&m, WEB_CONN_SOURCE_DEFAULT);
	m_send(&m, IMSG_WEB_LISTEN, 0, lfd);

	snprintf(unix_path, sizeof(unix_path), "/tmp/test_web_pushed.%d",
	    (int)getpid());
	unlink(unix_path);
	if ((ufd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		fatal("socket");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, unix_path, sizeof(sun.sun_path));
	if (bind(ufd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(ufd, 16) == -1)
		fatal("unix listener");
	fcntl(ufd, F_SETFL, O_NONBLOCK);
	msg_init(&m);
	msg_add_u32(&m, WEB_LISTEN_CONTROL);
	msg_add_str(&m, "test control");
	msg_add_u32(&m, 0);
	msg_add_data(&m, NULL, 0);
	msg_add_data(&m, NULL, 0);
	msg_add_u32(&m, WEB_BODY_DEFAULT);
	msg_add_u32(&m, 0);
	msg_add_u32(&m, 0);
	msg_add_u32(&m, WEB_CONN_SOURCE_DEFAULT);
	m_send(&m, IMSG_WEB_LISTEN, 0, ufd);
}

static const char *
cookie(const char *s)
{
	static char	 buf[256];

	snprintf(buf, sizeof(buf), "Cookie: a=b; nops_session=%s\r\n", s);
	return buf;
}

static const char *
bearer(const char *s)
{
	static char	 buf[256];

	snprintf(buf, sizeof(buf), "Authorization: Bearer %s\r\n", s);
	return buf;
}

static int
body_is(struct hresp *r, const char *want)
{
	if (r->body != NULL && strlen(want) == r->len &&
	    memcmp(r->body, want, r->len) == 0)
		return 1;
	printf("# body %.*s\n#   != %s\n", (int)r->len,
	    r->body != NULL ? r->body : "", want);
	return 0;
}

static const char *
clear_cookie(void)
{
	return "nops_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict";
}

static void
test_before_table(void)
{
	int	 fd;
	struct hresp r;

	TEST_BEGIN("before any identity table, reads go to the master");
	fd = http_start(0, "GET", "/api/v1/jobs", bearer(tok));
	CHECK(m_answer_request("GET", "/api/v1/jobs"));
	CHECK(http_finish(fd, &r, 3000) == 0);
	CHECK(r.status == 200);
	CHECK(body_is(&r, "{\"from\":\"master\"}"));
	TEST_END();
}

static void
test_session(void)
{
	struct hresp	 r;
	char		 csrf[AUTH_SECRET_B64 + 1], want[1024];

	TEST_BEGIN("session: no credential is class 0's view, kind none");
	CHECK(http(0, "GET", "/api/v1/session", NULL, &r) == 0);
	CHECK(r.status == 200);
	CHECK_STR(hdr(&r, "Content-Type"), "application/json");
	CHECK(body_is(&r, "{\"authenticated\":false,\"kind\":\"none\","
	    "\"actor\":\"anonymous\",\"management\":false,\"capabilities\":[],"
	    "\"user\":null,\"groups\":[],\"csrf_token\":null,\"namespaces\":"
	    "{\"default\":[]}}"));
	CHECK(hdr(&r, "Set-Cookie") == NULL);
	CHECK(m_quiet(50));
	TEST_END();

	TEST_BEGIN("session: a login session shows the user, groups, CSRF "
	    "token");
	auth_csrf_token(sid, csrf);
	snprintf(want, sizeof(want), "{\"authenticated\":true,\"kind\":"
	    "\"user\",\"actor\":\"alice\",\"management\":false,"
	    "\"capabilities\":[\"read\"],\"user\":\"alice\",\"groups\":"
	    "[\"ops\"],\"csrf_token\":\"%s\",\"namespaces\":{\"default\":"
	    "[\"read\"]}}", csrf);
	CHECK(http(0, "GET", "/api/v1/session?x=1", cookie(sid), &r) == 0);
	CHECK(r.status == 200);
	CHECK(body_is(&r, want));
	TEST_END();

	TEST_BEGIN("session: the bootstrap token is management");
	CHECK(http(0, "GET", "/api/v1/session", bearer(BOOT_TOKEN), &r) == 0);
	CHECK(r.status == 200);
	CHECK(body_is(&r, "{\"authenticated\":true,\"kind\":\"bootstrap\","
	    "\"actor\":\"token:bootstrap\",\"management\":true,"
	    "\"capabilities\":[\"read\",\"approve\"],\"user\":null,"
	    "\"groups\":[],\"csrf_token\":null,\"namespaces\":{\"default\":"
	    "[\"read\",\"approve\"]}}"));
	TEST_END();

	TEST_BEGIN("session: an API token is kind token, actor token:name");
	CHECK(http(0, "GET", "/api/v1/session", bearer(tok), &r) == 0);
	CHECK(r.status == 200 && r.body != NULL &&
	    strstr(r.body, "\"kind\":\"token\",\"actor\":\"token:ci\"") !=
	    NULL);
	TEST_END();

	TEST_BEGIN("session: over the control socket, kind local, management");
	snprintf(want, sizeof(want), "\"kind\":\"local\",\"actor\":\"%s\","
	    "\"management\":true", geteuid() == 0 ? "root" : "uid:");
	CHECK(http(1, "GET", "/api/v1/session", cookie("bad"), &r) == 0);
	CHECK(r.status == 200 && r.body != NULL &&
	    strstr(r.body, want) != NULL);
	CHECK(hdr(&r, "Set-Cookie") == NULL);
	TEST_END();

	TEST_BEGIN("session: a dead cookie is nobody's view, and is cleared");
	CHECK(http(0, "GET", "/api/v1/session", cookie("not-a-session"),
	    &r) == 0);
	CHECK(r.status == 200);
	CHECK(r.body != NULL && strstr(r.body, "\"kind\":\"none\"") != NULL);
	CHECK_STR(hdr(&r, "Set-Cookie"), clear_cookie());
	TEST_END();
}

static void
test_refusals(void)
{
	struct hresp	 r;

	TEST_BEGIN("read: no credential is 401 with the master's words");
	CHECK(http(0, "GET", "/api/v1/jobs", NULL, &r) == 0);
	CHECK(r.status == 401);
	CHECK(body_is(&r, "{\"error\":{\"code\":\"unauthorized\",\"message\":"
	    "\"authentication required: log in, or send \\\"Authorization: "
	    "Bearer <token>\\\"\"}}"));
	CHECK_STR(hdr(&r, "WWW-Authenticate"), "Bearer realm=\"nops\"");
	CHECK(m_quiet(50));
	TEST_END();

	TEST_BEGIN("read: Authorization that is not Bearer is 401");
	CHECK(http(0, "GET", "/api/v1/jobs", "Authorization: Basic eDp5\r\n",
	    &r) == 0);
	CHECK(r.status == 401);
	CHECK(body_is(&r, "{\"error\":{\"code\":\"unauthorized\",\"message\":"
	    "\"Authorization must be \\\"Bearer <token>\\\"\"}}"));
	TEST_END();

	TEST_BEGIN("read: an unknown or malformed token is 401");
	CHECK(http(0, "GET", "/api/v1/jobs", bearer("nops_nope"), &r) == 0);
	CHECK(r.status == 401 && r.body != NULL &&
	    strstr(r.body, "invalid, expired or revoked token") != NULL);
	CHECK(http(0, "GET", "/api/v1/jobs", bearer(sid), &r) == 0);
	CHECK(r.status == 401);
	TEST_END();

	TEST_BEGIN("read: an expired token is 401, the token has expired");
	CHECK(http(0, "GET", "/api/v1/jobs", bearer(tok_old), &r) == 0);
	CHECK(r.status == 401 && r.body != NULL &&
	    strstr(r.body, "the token has expired") != NULL);
	TEST_END();

	TEST_BEGIN("read: an idle session is 401, cleared, then unknown");
	CHECK(http(0, "GET", "/api/v1/jobs", cookie(sid_old), &r) == 0);
	CHECK(r.status == 401 && r.body != NULL &&
	    strstr(r.body, "the session has expired; log in again") != NULL);
	CHECK_STR(hdr(&r, "Set-Cookie"), clear_cookie());
	CHECK(http(0, "GET", "/api/v1/jobs", cookie(sid_old), &r) == 0);
	CHECK(r.status == 401 && r.body != NULL &&
	    strstr(r.body, "no such session; log in again") != NULL);
	CHECK_STR(hdr(&r, "Set-Cookie"), clear_cookie());
	CHECK(m_quiet(50));
	TEST_END();

	TEST_BEGIN("HEAD and writes go to the master");
	{
		int	 fd;

		fd = http_start(0, "HEAD", "/api/v1/jobs", bearer(tok));
		CHECK(m_answer_request("HEAD", "/api/v1/jobs"));
		CHECK(http_finish(fd, &r, 3000) == 0 && r.status == 200);
		fd = http_start(0, "POST", "/api/v1/jobs/default/web/actions/"
		    "pause", bearer(tok));
		CHECK(m_answer_request("POST", "/api/v1/jobs/default/web/"
		    "actions/pause"));
		CHECK(http_finish(fd, &r, 3000) == 0 && r.status == 200);
		fd = http_start(0, "GET", "/api/v1/login-probe", bearer(tok));
		CHECK(m_answer_request("GET", "/api/v1/login-probe"));
		CHECK(http_finish(fd, &r, 3000) == 0 && r.status == 200);
	}
	TEST_END();
}

static void
test_docs(void)
{
	struct hresp	 r;
	int		 fd;

	TEST_BEGIN("document: the first read asks the master and waits");
	fd = http_start(0, "GET", "/api/v1/jobs?limit=5", bearer(tok));
	CHECK(m_want(IMSG_WEB_WANT, CLS_READER, "/api/v1/jobs?limit=5"));
	push_doc(CLS_READER, "/api/v1/jobs?limit=5", 200, "X-Doc", "1",
	    "{\"items\":[1]}");
	CHECK(http_finish(fd, &r, 3000) == 0);
	CHECK(r.status == 200);
	CHECK(body_is(&r, "{\"items\":[1]}"));
	CHECK_STR(hdr(&r, "X-Doc"), "1");
	CHECK_STR(hdr(&r, "Content-Type"), "application/json");
	TEST_END();

	TEST_BEGIN("document: the same class reads it from memory");
	CHECK(http(0, "GET", "/api/v1/jobs?limit=5", cookie(sid), &r) == 0);
	CHECK(r.status == 200 && body_is(&r, "{\"items\":[1]}"));
	CHECK(m_quiet(50));
	TEST_END();

	TEST_BEGIN("document: another class or target is another document");
	fd = http_start(0, "GET", "/api/v1/jobs?limit=5", bearer(BOOT_TOKEN));
	CHECK(m_want(IMSG_WEB_WANT, CLS_MANAGE, "/api/v1/jobs?limit=5"));
	push_doc(CLS_MANAGE, "/api/v1/jobs?limit=5", 200, NULL, NULL,
	    "{\"items\":[1,2]}");
	CHECK(http_finish(fd, &r, 3000) == 0 &&
	    body_is(&r, "{\"items\":[1,2]}"));
	fd = http_start(0, "GET", "/api/v1/jobs", bearer(tok));
	CHECK(m_want(IMSG_WEB_WANT, CLS_READER, "/api/v1/jobs"));
	push_doc(CLS_READER, "/api/v1/jobs", 403, NULL, NULL,
	    "{\"error\":{}}");
	CHECK(http_finish(fd, &r, 3000) == 0 && r.status == 403);
	TEST_END();

	TEST_BEGIN("document: a push replaces it; a stray one is unwanted");
	push_doc(CLS_READER, "/api/v1/jobs?limit=5", 200, NULL, NULL,
	    "{\"items\":[3]}");
	CHECK(http(0, "GET", "/api/v1/jobs?limit=5", bearer(tok), &r) == 0);
	CHECK(r.status == 200 && body_is(&r, "{\"items\":[3]}"));
	CHECK(hdr(&r, "X-Doc") == NULL);
	push_doc(CLS_READER, "/api/v1/overview", 200, NULL, NULL, "{}");
	CHECK(m_want(IMSG_WEB_UNWANT, CLS_READER, "/api/v1/overview"));
	TEST_END();

	TEST_BEGIN("document: a stale one is asked again at its next read");
	push_stale(CLS_READER, "/api/v1/jobs?limit=5");
	/* Dropped, not asked for until read: nothing goes to the master. */
	CHECK(m_quiet(50));
	fd = http_start(0, "GET", "/api/v1/jobs?limit=5", bearer(tok));
	CHECK(m_want(IMSG_WEB_WANT, CLS_READER, "/api/v1/jobs?limit=5"));
	push_doc(CLS_READER, "/api/v1/jobs?limit=5", 200, NULL, NULL,
	    "{\"items\":[4]}");
	CHECK(http_finish(fd, &r, 3000) == 0);
	CHECK(r.status == 200 && body_is(&r, "{\"items\":[4]}"));
	/* Asked once: the next read is from memory again. */
	CHECK(http(0, "GET", "/api/v1/jobs?limit=5", cookie(sid), &r) == 0);
	CHECK(r.status == 200 && body_is(&r, "{\"items\":[4]}"));
	CHECK(m_quiet(50));
	/* Stale for one that is not held: nothing happens. */
	push_stale(CLS_READER, "/api/v1/never-read");
	CHECK(m_quiet(50));
	TEST_END();

	TEST_BEGIN("document: public ones are class 0's; a dead cookie ends");
	fd = http_start(0, "GET", "/api/v1/openapi.json",
	    cookie("dead-cookie"));
	CHECK(m_want(IMSG_WEB_WANT, CLS_NONE, "/api/v1/openapi.json"));
	push_doc(CLS_NONE, "/api/v1/openapi.json", 200, NULL, NULL,
	    "{\"openapi\":\"3.0.3\"}");
	CHECK(http_finish(fd, &r, 3000) == 0 && r.status == 200);
	CHECK_STR(hdr(&r, "Set-Cookie"), clear_cookie());
	CHECK(http(0, "GET", "/api/v1/openapi.json", bearer(tok), &r) == 0);
	CHECK(r.status == 200 && body_is(&r, "{\"openapi\":\"3.0.3\"}"));
	CHECK(hdr(&r, "Set-Cookie") == NULL);
	CHECK(m_quiet(50));
	TEST_END();

	TEST_BEGIN("document: a client that leaves while waiting is no harm");
	fd = http_start(0, "GET", "/api/v1/deployments/7", bearer(tok));
	CHECK(m_want(IMSG_WEB_WANT, CLS_READER, "/api/v1/deployments/7"));
	close(fd);
	spin(100);
	push_doc(CLS_READER, "/api/v1/deployments/7", 404, NULL, NULL,
	    "{\"error\":{\"code\":\"not_found\"}}");
	spin(100);
	CHECK(http(0, "GET", "/api/v1/deployments/7", bearer(tok), &r) == 0);
	CHECK(r.status == 404);
	TEST_END();

	TEST_BEGIN("identity: a forgotten token is refused at once");
	{
		char	 other[AUTH_TOKEN_LEN + 1];

		secret(other, AUTH_TOKEN_PREFIX, 5);
		push_prin(WEB_PRIN_TOKEN, other, "gone", CLS_READER,
		    time(NULL), 0, "");
		CHECK(http(0, "GET", "/api/v1/jobs", bearer(other), &r) == 0);
		CHECK(r.status == 403);	/* the class's document */
		push_forget(other);
		CHECK(http(0, "GET", "/api/v1/jobs", bearer(other), &r) == 0);
		CHECK(r.status == 401);
	}
	TEST_END();
}

static void
test_pages(void)
{
	struct hresp	 r;
	char		 csrf_a[AUTH_SECRET_B64 + 1];
	char		 csrf_b[AUTH_SECRET_B64 + 1];
	int		 fd;

	TEST_BEGIN("page: built from the session and a document read here");
	fd = http_start(0, "GET", "/", cookie(sid));
	CHECK(m_want(IMSG_WEB_WANT, CLS_READER, "/api/v1/overview"));
	push_doc(CLS_READER, "/api/v1/overview", 200, NULL, NULL,
	    "{\"attention\":[],\"in_progress\":[],\"repositories\":[],"
	    "\"workers\":[]}");
	CHECK(http_finish(fd, &r, 3000) == 0);
	CHECK(r.status == 200);
	CHECK(r.body != NULL && strstr(r.body, "alice") != NULL);
	TEST_END();

	TEST_BEGIN("page: a cached document answers at once; none is login");
	CHECK(http(0, "GET", "/", cookie(sid), &r) == 0);
	CHECK(r.status == 200);
	CHECK(m_quiet(50));
	CHECK(http(0, "GET", "/jobs", NULL, &r) == 0);
	CHECK(r.status == 303);
	CHECK_STR(hdr(&r, "Location"), "/login?next=%2Fjobs");
	TEST_END();

	/*
	 * Pages are rendered once per class and documents' versions and
	 * reused: each session still sees its own name and CSRF token, a
	 * new push is shown, and another class never gets this class's page.
	 */
	TEST_BEGIN("page: reused for another session of the class, with its "
	    "own name and CSRF token");
	auth_csrf_token(sid, csrf_a);
	auth_csrf_token(sid_bob, csrf_b);
	CHECK(http(0, "GET", "/", cookie(sid), &r) == 0);
	CHECK(r.status == 200);
	CHECK(r.body != NULL && strstr(r.body, ">alice<") != NULL &&
	    strstr(r.body, csrf_a) != NULL);
	CHECK(http(0, "GET", "/", cookie(sid_bob), &r) == 0);
	CHECK(r.status == 200);
	CHECK(r.body != NULL && strstr(r.body, ">bob<") != NULL &&
	    strstr(r.body, csrf_b) != NULL);
	CHECK(r.body != NULL && strstr(r.body, "alice") == NULL &&
	    strstr(r.body, csrf_a) == NULL);
	CHECK(m_quiet(50));
	TEST_END();

	TEST_BEGIN("page: a kept page is never given to a dead cookie");
	CHECK(http(0, "GET", "/", cookie("not-a-session"), &r) == 0);
	CHECK(r.status == 303);
	CHECK(r.body == NULL || (strstr(r.body, "alice") == NULL &&
	    strstr(r.body, csrf_a) == NULL));
	TEST_END();

	TEST_BEGIN("page: a new push of its document is shown at once");
	push_doc(CLS_READER, "/api/v1/overview", 200, NULL, NULL,
	    "{\"attention\":[],\"in_progress\":[],\"repositories\":"
	    "{\"items\":[{\"name\":\"repo-pushed-later\"}]},\"workers\":[]}");
	CHECK(m_quiet(50));
	CHECK(http(0, "GET", "/", cookie(sid), &r) == 0);
	CHECK(r.status == 200);
	CHECK(r.body != NULL && strstr(r.body, "repo-pushed-later") !=
	    NULL && strstr(r.body, ">alice<") != NULL);
	TEST_END();

	TEST_BEGIN("page: another class gets its own document, never the "
	    "page kept for this one");
	fd = http_start(0, "GET", "/", cookie(sid_carol));
	CHECK(m_want(IMSG_WEB_WANT, CLS_OTHER, "/api/v1/overview"));
	push_doc(CLS_OTHER, "/api/v1/overview", 200, NULL, NULL,
	    "{\"attention\":[],\"in_progress\":[],\"repositories\":"
	    "{\"items\":[{\"name\":\"carols-only\"}]},\"workers\":[]}");
	CHECK(http_finish(fd, &r, 3000) == 0);
	CHECK(r.status == 200);
	CHECK(r.body != NULL && strstr(r.body, "carols-only") != NULL &&
	    strstr(r.body, "repo-pushed-later") == NULL &&
	    strstr(r.body, ">carol<") != NULL);
	CHECK(http(0, "GET", "/", cookie(sid), &r) == 0);
	CHECK(r.body != NULL && strstr(r.body, "carols-only") == NULL &&
	    strstr(r.body, "repo-pushed-later") != NULL);
	TEST_END();
}

static void
test_reload(void)
{
	struct hresp	 r;
	int		 fd, fd2;

	TEST_BEGIN("reload: between BEGIN and COMMIT reads go to the master");
	fd = http_start(0, "GET", "/api/v1/events", bearer(tok));
	CHECK(m_want(IMSG_WEB_WANT, CLS_READER, "/api/v1/events"));
	push_begin();
	fd2 = http_start(0, "GET", "/api/v1/jobs?limit=5", bearer(tok));
	CHECK(m_answer_request("GET", "/api/v1/jobs?limit=5"));
	CHECK(http_finish(fd2, &r, 3000) == 0 && body_is(&r,
	    "{\"from\":\"master\"}"));
	TEST_END();

	TEST_BEGIN("reload: COMMIT drops documents, waiters get 503; the "
	    "master's last seen holds");
	push_class(CLS_NONE, "{\"management\":false,\"capabilities\":[],"
	    "\"namespaces\":{}}");
	push_class(CLS_MANAGE, "{\"management\":true,\"capabilities\":[],"
	    "\"namespaces\":{}}");
	push_class(CLS_OTHER, "{\"management\":false,\"capabilities\":[],"
	    "\"namespaces\":{}}");
	push_prin(WEB_PRIN_TOKEN, tok, "ci", CLS_OTHER, time(NULL), 0, "");
	/* Used a moment ago here, but the master says long ago: it holds. */
	push_prin(WEB_PRIN_SESSION, sid, "alice", CLS_OTHER, time(NULL) - 4000,
	    time(NULL) + 3600, "[]");
	push_commit();
	CHECK(http_finish(fd, &r, 3000) == 0);
	CHECK(r.status == 503);
	CHECK(body_is(&r, "{\"error\":{\"code\":\"queue_full\",\"message\":"
	    "\"the configuration changed; try again\"}}"));
	CHECK_STR(hdr(&r, "Retry-After"), "1");
	/* Under the new table the token is another class, asked anew. */
	fd = http_start(0, "GET", "/api/v1/jobs?limit=5", bearer(tok));
	CHECK(m_want(IMSG_WEB_WANT, CLS_OTHER, "/api/v1/jobs?limit=5"));
	push_doc(CLS_OTHER, "/api/v1/jobs?limit=5", 200, NULL, NULL,
	    "{\"items\":[]}");
	CHECK(http_finish(fd, &r, 3000) == 0 && body_is(&r,
	    "{\"items\":[]}"));
	CHECK(http(0, "GET", "/api/v1/jobs", cookie(sid), &r) == 0);
	CHECK(r.status == 401 && r.body != NULL &&
	    strstr(r.body, "the session has expired") != NULL);
	/* sid_old was not pushed again: gone. */
	CHECK(http(0, "GET", "/api/v1/jobs", cookie(sid_old), &r) == 0);
	CHECK(r.status == 401 && r.body != NULL &&
	    strstr(r.body, "no such session") != NULL);
	TEST_END();
}

static void
test_seen(void)
{
	int	 waited;

	TEST_BEGIN("IMSG_WEB_SEEN reports uses and the answers given here");
	for (waited = 0; waited < 7000 && !(seen_tok && seen_codes[401] > 0);
	    waited += 100)
		m_quiet(100);
	CHECK(seen_tok);
	CHECK(seen_codes[401] >= 8);
	CHECK(seen_codes[200] >= 10);
	CHECK(seen_codes[503] >= 1);
	/* alice's session was pushed as used now: nothing to report. */
	CHECK(!seen_sid);
	/* The idle one, once: at 0, for the master to delete. */
	CHECK(seen_expired == 1);
	TEST_END();
}

int
main(void)
{
	setup();
	test_before_table();
	push_table();
	test_session();
	test_refusals();
	test_docs();
	test_pages();
	test_reload();
	test_seen();
	unlink(unix_path);
	TEST_EXIT();
}
