/*
 * What the workers really do, run inside their sandboxes: the gitworker's
 * libgit2 ls-remote and fetch, outbound TCP, the nomadworker's libcurl
 * HTTPS request, the webworker's evhttp (plain and TLS) and its channel
 * to the master.  Each child_* runs in the forked child and returns its
 * exit code; each parent_* plays the peer meanwhile and returns non-zero
 * on failure.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/util.h>
#include <git2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "log.h"
#include "sandbox.h"
#include "harness.h"

/* ----------------------------------------------------- gitworker */

static int
git_fail(const char *what)
{
	const git_error	*e = git_error_last();

	errno = 0;
	return cfail("%s: %s", what, e != NULL ? e->message : "?");
}

/*
 * What the gitworker does: the head check (detached remote + ls) and a
 * fetch into a bare repository of its cache, from a file:// remote that
 * Landlock lets it read (made by root before the sandbox, like a remote
 * on this machine would be).
 */
int
child_git(struct run *r)
{
	git_repository		*src, *dst;
	git_signature		*sig;
	git_treebuilder		*tb;
	git_tree		*tree;
	git_remote		*remote;
	const git_remote_head	**heads;
	git_oid			 blob, treeid, commit, got;
	git_fetch_options	 fo;
	char			 path[PATH_MAX + 64], url[PATH_MAX + 128];
	char			*refspec = "+refs/heads/main:refs/remotes/origin/main";
	const char		*remotes[1];
	git_strarray		 refspecs = { &refspec, 1 };
	static const int	 levels[] = { GIT_CONFIG_LEVEL_SYSTEM,
				    GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL,
				    GIT_CONFIG_LEVEL_PROGRAMDATA };
	size_t			 nheads, i;
	int			 found = 0;

	/* As gitworker_main() does before its sandbox. */
	if (git_libgit2_init() < 0 ||
	    git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION) < 0)
		return cfail("git_libgit2_init");
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i],
		    "/nonexistent") < 0)
			return git_fail("GIT_OPT_SET_SEARCH_PATH");
	if (git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0) < 0)
		return git_fail("GIT_OPT_SET_OWNER_VALIDATION");

	snprintf(path, sizeof(path), "%s/remote.git", tmpdir);
	if (git_repository_init(&src, path, 1) < 0)
		return git_fail("init remote");
	if (git_signature_new(&sig, "nops", "nops@localhost", 1700000000,
	    0) < 0 ||
	    git_blob_create_from_buffer(&blob, src, "job \"x\" {}\n", 12) < 0 ||
	    git_treebuilder_new(&tb, src, NULL) < 0 ||
	    git_treebuilder_insert(NULL, tb, "x.nomad.hcl", &blob,
	    GIT_FILEMODE_BLOB) < 0 ||
	    git_treebuilder_write(&treeid, tb) < 0 ||
	    git_tree_lookup(&tree, src, &treeid) < 0 ||
	    git_commit_create(&commit, src, "refs/heads/main", sig, sig, NULL,
	    "a job\n", tree, 0, NULL) < 0)
		return git_fail("commit");
	git_tree_free(tree);
	git_treebuilder_free(tb);
	git_signature_free(sig);
	git_repository_free(src);

	sandbox_drop("gitworker", NULL, nops_uid, nops_gid);
	remotes[0] = path;
	/* ABI 1 cannot allow renames: gitworker then goes without. */
	if (gitworker_sandbox_fs_remotes(cachedir, remotes, 1) !=
	    (ll_abi == 1 ? 0 : ll_abi))
		return cfail("unexpected Landlock ABI");
	gitworker_sandbox_syscalls();

	snprintf(url, sizeof(url), "file://%s", path);
	if (git_remote_create_detached(&remote, url) < 0 ||
	    git_remote_connect(remote, GIT_DIRECTION_FETCH, NULL, NULL,
	    NULL) < 0 || git_remote_ls(&heads, &nheads, remote) < 0)
		return git_fail("ls-remote");
	for (i = 0; i < nheads; i++)
		if (strcmp(heads[i]->name, "refs/heads/main") == 0 &&
		    git_oid_equal(&heads[i]->oid, &commit))
			found = 1;
	git_remote_free(remote);
	if (!found)
		return cfail("ls-remote does not show the commit");

	snprintf(path, sizeof(path), "%s/dst.git", cachedir);
	if (git_repository_init(&dst, path, 1) < 0)
		return git_fail("init the cache repository");
	if (git_remote_create_anonymous(&remote, dst, url) < 0 ||
	    git_remote_fetch(remote, &refspecs, &fo, NULL) < 0)
		return git_fail("fetch");
	if (git_reference_name_to_id(&got, dst,
	    "refs/remotes/origin/main") < 0)
		return git_fail("fetched ref");
	if (!git_oid_equal(&got, &commit))
		return cfail("fetched the wrong commit");
	git_remote_free(remote);
	git_repository_free(dst);
	return 0;
}

/* Outbound TCP, as to a git:// or https:// remote. */
int
child_connect(struct run *r)
{
	int	 fd;

	enter(r->r_prof, STAGE_ALL);
	if ((fd = tcp_connect(r->r_port)) == -1)
		return cfail("connect to 127.0.0.1:%d", r->r_port);
	if (write(fd, "hi", 2) != 2)
		return cfail("write");
	close(fd);
	return 0;
}

int
parent_accept(struct run *r, pid_t pid)
{
	struct pollfd	 pfd[2];
	char		 buf[2];
	int		 fd, bad = 1;

	pfd[0].fd = r->r_lfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = r->r_ready[0];
	pfd[1].events = POLLIN;
	if (poll(pfd, 2, WAIT_MS) <= 0 || !(pfd[0].revents & POLLIN) ||
	    (fd = accept(r->r_lfd, NULL, NULL)) == -1) {
		printf("# no connection from the child\n");
		return 1;
	}
	pfd[0].fd = fd;
	if (poll(pfd, 1, WAIT_MS) == 1 && read(fd, buf, 2) == 2 &&
	    memcmp(buf, "hi", 2) == 0)
		bad = 0;
	close(fd);
	return bad;
}

/* --------------------------------------------------- nomadworker */

static size_t
curl_collect(char *data, size_t size, size_t nmemb, void *arg)
{
	char	*buf = arg;
	size_t	 have = strlen(buf), n = size * nmemb;

	if (have + n >= 256)
		return 0;
	memcpy(buf + have, data, n);
	buf[have + n] = '\0';
	return n;
}

/* What the nomadworker does: an HTTPS request with libcurl. */
int
child_nomad_https(struct run *r)
{
	struct curl_blob	 ca;
	CURL			*c;
	CURLcode		 rc;
	char			 url[64], body[256] = "";
	long			 code = 0;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return cfail("curl_global_init");
	enter(NOMAD, STAGE_ALL);
	if ((c = curl_easy_init()) == NULL)
		return cfail("curl_easy_init");
	snprintf(url, sizeof(url), "https://localhost:%d/v1/jobs", r->r_port);
	ca.data = tls_cert_pem;
	ca.len = strlen(tls_cert_pem);
	ca.flags = CURL_BLOB_COPY;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)(WAIT_MS / 1000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	if ((rc = curl_easy_perform(c)) != CURLE_OK) {
		errno = 0;
		return cfail("curl: %s", curl_easy_strerror(rc));
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	if (code != 200 || strcmp(body, "[]") != 0)
		return cfail("answer %ld \"%s\"", code, body);
	return 0;
}

/* A one-request HTTPS server standing in for Nomad. */
int
parent_nomad_server(struct run *r, pid_t pid)
{
	static const char ans[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\nContent-Length: 2\r\n"
	    "Connection: close\r\n\r\n[]";
	struct pollfd	 pfd[2];
	struct timeval	 tv = { WAIT_MS / 1000, 0 };
	SSL_CTX		*ctx = NULL;
	SSL		*ssl = NULL;
	char		 buf[2048] = "";
	size_t		 len = 0;
	int		 fd = -1, n, bad = 1;

	pfd[0].fd = r->r_lfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = r->r_ready[0];	/* EOF: the child died */
	pfd[1].events = POLLIN;
	if (poll(pfd, 2, WAIT_MS) <= 0 || !(pfd[0].revents & POLLIN)) {
		printf("# no connection from the child\n");
		return 1;
	}
	if ((fd = accept(r->r_lfd, NULL, NULL)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1)
		return 1;
	if ((ctx = tls_server_ctx()) == NULL || (ssl = SSL_new(ctx)) == NULL ||
	    SSL_set_fd(ssl, fd) != 1 || SSL_accept(ssl) != 1) {
		printf("# server TLS handshake failed: %s\n",
		    ERR_error_string(ERR_get_error(), NULL));
		goto done;
	}
	while (strstr(buf, "\r\n\r\n") == NULL && len < sizeof(buf) - 1) {
		if ((n = SSL_read(ssl, buf + len, sizeof(buf) - 1 - len)) <= 0)
			goto done;
		len += n;
		buf[len] = '\0';
	}
	if (strncmp(buf, "GET /v1/jobs HTTP/1.1\r\n", 23) != 0) {
		printf("# unexpected request: %.60s\n", buf);
		goto done;
	}
	if (SSL_write(ssl, ans, sizeof(ans) - 1) == (int)sizeof(ans) - 1)
		bad = 0;
	SSL_shutdown(ssl);
 done:
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
	return bad;
}

/* ---------------------------------------------------- webworker */

static int	 web_served;

static void
web_done(struct evhttp_request *req, void *arg)
{
	web_served = 1;
	event_base_loopexit(arg, NULL);
}

static void
web_reply(struct evhttp_request *req, void *arg)
{
	struct evbuffer	*body;

	if ((body = evbuffer_new()) == NULL)
		return;
	evbuffer_add_printf(body, "pong");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; charset=utf-8");
	evhttp_request_set_on_complete_cb(req, web_done, arg);
	evhttp_send_reply(req, HTTP_OK, "OK", body);
	evbuffer_free(body);
}

static struct bufferevent *
web_bevcb(struct event_base *base, void *arg)
{
	SSL	*ssl;

	if ((ssl = SSL_new(arg)) == NULL)
		return NULL;
	return bufferevent_openssl_socket_new(base, -1, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
}

/* What the webworker does: evhttp on a listener it was handed. */
int
child_web_http(struct run *r)
{
	struct event_base	*base;
	struct evhttp		*http;
	SSL_CTX			*ctx;

	if ((base = event_base_new()) == NULL ||
	    (http = evhttp_new(base)) == NULL)
		return cfail("libevent setup");
	/* Certificates are loaded as root, before the sandbox. */
	if (r->r_tls) {
		if ((ctx = tls_server_ctx()) == NULL)
			return cfail("SSL_CTX");
		evhttp_set_bevcb(http, web_bevcb, ctx);
	}
	evhttp_set_gencb(http, web_reply, base);
	evhttp_set_timeout(http, WAIT_MS / 1000);
	enter(WEB, STAGE_ALL);
	/* Listeners arrive from the master once the worker is sandboxed. */
	if (evutil_make_socket_nonblocking(r->r_lfd) == -1 ||
	    evhttp_accept_socket_with_handle(http, r->r_lfd) == NULL)
		return cfail("evhttp_accept_socket_with_handle");
	child_ready(r);
	if (event_base_dispatch(base) == -1)
		return cfail("event_base_dispatch");
	if (!web_served)
		return cfail("no request served");
	return 0;
}

int
parent_web_client(struct run *r, pid_t pid)
{
	static const char req[] = "GET /ping HTTP/1.0\r\nHost: localhost\r\n\r\n";
	char		 buf[2048];
	SSL_CTX		*ctx = NULL;
	SSL		*ssl = NULL;
	size_t		 len = 0;
	int		 fd, n, bad = 0;

	if (parent_wait_ready(r) == -1)
		return 1;
	if ((fd = tcp_connect(r->r_port)) == -1) {
		printf("# connect: %s\n", strerror(errno));
		return 1;
	}
	if (r->r_tls) {
		/* Verify the server as a client would. */
		if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
		    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx),
		    tls_cert) != 1 || (ssl = SSL_new(ctx)) == NULL ||
		    SSL_set1_host(ssl, "localhost") != 1 ||
		    SSL_set_fd(ssl, fd) != 1) {
			printf("# client TLS setup failed\n");
			bad = 1;
			goto done;
		}
		SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL);
		if (SSL_connect(ssl) != 1) {
			printf("# SSL_connect failed: %s\n",
			    ERR_error_string(ERR_get_error(), NULL));
			bad = 1;
			goto done;
		}
		n = SSL_write(ssl, req, sizeof(req) - 1);
	} else
		n = write(fd, req, sizeof(req) - 1);
	if (n != (int)sizeof(req) - 1) {
		printf("# cannot send the request\n");
		bad = 1;
		goto done;
	}
	for (;;) {
		n = r->r_tls ? SSL_read(ssl, buf + len, sizeof(buf) - 1 - len) :
		    read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += n;
		if (len == sizeof(buf) - 1)
			break;
	}
	buf[len] = '\0';
	if (strncmp(buf, "HTTP/1.", 7) != 0 || strstr(buf, " 200 ") == NULL ||
	    len < 4 || strcmp(buf + len - 4, "pong") != 0) {
		printf("# unexpected answer: %.80s\n", buf);
		bad = 1;
	}
 done:
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
	return bad;
}

/* The master's channel: peer credentials and a descriptor passed in. */
int
child_web_passfd(struct run *r)
{
	struct ucred	 cred;
	struct msghdr	 msg;
	struct cmsghdr	*cmsg;
	struct iovec	 iov;
	socklen_t	 len = sizeof(cred);
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;
	char		 c;
	int		 fd;

	enter(WEB, STAGE_ALL);
	if (getsockopt(r->r_sv[1], SOL_SOCKET, SO_PEERCRED, &cred,
	    &len) == -1)
		return cfail("SO_PEERCRED");
	if (cred.uid != 0 || cred.pid != getppid())
		return cfail("peer is uid %u pid %d", (unsigned int)cred.uid,
		    (int)cred.pid);
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	if (recvmsg(r->r_sv[1], &msg, MSG_CMSG_CLOEXEC) != 1)
		return cfail("recvmsg");
	if ((cmsg = CMSG_FIRSTHDR(&msg)) == NULL ||
	    cmsg->cmsg_type != SCM_RIGHTS)
		return cfail("no descriptor arrived");
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(fd));
	if (write(fd, "ok", 2) != 2)
		return cfail("write to the passed descriptor");
	close(fd);
	return 0;
}

int
parent_web_passfd(struct run *r, pid_t pid)
{
	struct msghdr	 msg;
	struct cmsghdr	*cmsg;
	struct iovec	 iov;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;
	struct pollfd	 pfd;
	char		 buf[8];
	int		 p[2];

	if (pipe(p) == -1)
		return 1;
	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = "f";
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &p[1], sizeof(int));
	if (sendmsg(r->r_sv[0], &msg, 0) != 1) {
		printf("# sendmsg: %s\n", strerror(errno));
		return 1;
	}
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, WAIT_MS) != 1 || read(p[0], buf, 2) != 2 ||
	    memcmp(buf, "ok", 2) != 0) {
		printf("# nothing came back through the passed pipe\n");
		close(p[0]);
		return 1;
	}
	close(p[0]);
	return 0;
}
