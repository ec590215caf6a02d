/*
 * A bare libevent evhttp server for bench/web_overview: it answers GET of
 * each given path with the given file's bytes and the headers the
 * webworker sends (type, no-store, the security headers), from memory,
 * on one thread as the webworker does.  What is left between it and
 * nginx is evhttp's own cost; what is left between nopsd and it is ours.
 *
 *	bare_evhttp [-m mode] port path file content-type [...]
 *
 * mode (what evhttp allows, measured apart):
 *	copy	the body copied into each answer (evbuffer_add), 7 headers
 *	ref	the body by reference (evbuffer_add_reference), 7 headers,
 *		Content-Length made once: as the webworker answers now
 *	min	by reference, Content-Type alone: evhttp's floor
 *	cl	as ref, with libevent's epoll changelist (fewer epoll_ctl)
 *
 * Built by bench/web_overview with the C compiler; not installed.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

struct doc {
	const char	*path;
	const char	*ctype;
	char		*body;
	size_t		 len;
	char		 clen[24];
};

static struct doc	*docs;
static int		 ndocs;
static int		 mode_ref, mode_min;

static const char *const sec[][2] = {
	{ "Content-Security-Policy", "default-src 'self'; "
	    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; "
	    "object-src 'none'" },
	{ "X-Frame-Options", "DENY" },
	{ "X-Content-Type-Options", "nosniff" },
	{ "Referrer-Policy", "same-origin" },
	{ "Cross-Origin-Opener-Policy", "same-origin" },
};

static void
answer(struct evhttp_request *req, void *arg)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evbuffer		*buf;
	const char		*uri = evhttp_request_get_uri(req);
	size_t			 i;
	int			 d;

	(void)arg;
	for (d = 0; d < ndocs; d++)
		if (strcmp(uri, docs[d].path) == 0)
			break;
	if (d == ndocs) {
		evhttp_send_error(req, 404, NULL);
		return;
	}
	evhttp_add_header(h, "Content-Type", docs[d].ctype);
	if (!mode_min) {
		evhttp_add_header(h, "Cache-Control", "no-store");
		for (i = 0; i < sizeof(sec) / sizeof(sec[0]); i++)
			evhttp_add_header(h, sec[i][0], sec[i][1]);
	}
	if ((buf = evbuffer_new()) == NULL)
		errx(1, "evbuffer");
	if (mode_ref) {
		evhttp_add_header(h, "Content-Length", docs[d].clen);
		if (evbuffer_add_reference(buf, docs[d].body, docs[d].len,
		    NULL, NULL) == -1)
			errx(1, "evbuffer");
	} else if (evbuffer_add(buf, docs[d].body, docs[d].len) == -1)
		errx(1, "evbuffer");
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
}

static struct bufferevent *
newbev(struct event_base *base, void *arg)
{
	(void)arg;
	return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
}

int
main(int argc, char *argv[])
{
	struct event_base	*base;
	struct evhttp		*http;
	FILE			*f;
	long			 n;
	int			 i;

	struct event_config	*cfg;
	struct evhttp_bound_socket *bound;
	int			 changelist = 0, on = 1;

	if (argc > 2 && strcmp(argv[1], "-m") == 0) {
		if (strcmp(argv[2], "ref") == 0)
			mode_ref = 1;
		else if (strcmp(argv[2], "min") == 0)
			mode_ref = mode_min = 1;
		else if (strcmp(argv[2], "cl") == 0)
			mode_ref = changelist = 1;
		else if (strcmp(argv[2], "copy") != 0)
			errx(2, "bad mode %s", argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc < 5 || (argc - 2) % 3 != 0)
		errx(2, "usage: bare_evhttp [-m copy|ref|min|cl] port path "
		    "file type ...");
	ndocs = (argc - 2) / 3;
	if ((docs = calloc(ndocs, sizeof(*docs))) == NULL)
		err(1, "calloc");
	for (i = 0; i < ndocs; i++) {
		docs[i].path = argv[2 + 3 * i];
		docs[i].ctype = argv[4 + 3 * i];
		if ((f = fopen(argv[3 + 3 * i], "rb")) == NULL)
			err(1, "%s", argv[3 + 3 * i]);
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		if (n < 0 || (docs[i].body = malloc(n + 1)) == NULL ||
		    fread(docs[i].body, 1, n, f) != (size_t)n)
			err(1, "%s", argv[3 + 3 * i]);
		docs[i].len = n;
		snprintf(docs[i].clen, sizeof(docs[i].clen), "%ld", n);
		fclose(f);
	}
	/* As the webworker: a client gone mid-answer is an error, not death. */
	signal(SIGPIPE, SIG_IGN);
	if ((cfg = event_config_new()) == NULL)
		errx(1, "libevent");
	/* Environment variables would change what is measured. */
	event_config_set_flag(cfg, EVENT_BASE_FLAG_IGNORE_ENV);
	if (changelist)
		event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	if ((base = event_base_new_with_config(cfg)) == NULL ||
	    (http = evhttp_new(base)) == NULL)
		errx(1, "libevent");
	event_config_free(cfg);
	evhttp_set_bevcb(http, newbev, NULL);
	evhttp_set_gencb(http, answer, NULL);
	if ((bound = evhttp_bind_socket_with_handle(http, "127.0.0.1",
	    (unsigned short)atoi(argv[1]))) == NULL)
		errx(1, "bind port %s", argv[1]);
	/*
	 * As the webworker: no Nagle wait between headers and body.  Set
	 * once on the listener, which Linux passes to each accepted socket
	 * (the webworker sets it once per connection).
	 */
	if (setsockopt(evhttp_bound_socket_get_fd(bound), IPPROTO_TCP,
	    TCP_NODELAY, &on, sizeof(on)) == -1)
		err(1, "TCP_NODELAY");
	printf("ready\n");
	fflush(stdout);
	event_base_dispatch(base);
	return 0;
}
