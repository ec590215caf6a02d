/*
 * The TCP connections the webworker serves: a cap on how many, a deadline
 * for each request, TLS.  libevent 2.1's evhttp has neither a connection
 * limit nor a header deadline (its timeout restarts with every byte, so a
 * client sending one byte a second is never cut), so we keep our own
 * table.
 *
 * Each connection's bufferevent is ours (evhttp_set_bevcb): we take a
 * reference to it, so that it stays valid to look at after evhttp is done
 * with it.  evhttp's bufferevent_free() clears its callbacks; a sweep
 * every second drops our reference to such a one, which closes it.  Until
 * then a read high-water mark stops it from buffering what the client
 * still sends (it is above the body limit: evhttp wants a whole body
 * buffered before it takes it).  A connection past its deadline is shut
 * down, which evhttp sees as the client leaving.
 *
 * One address (an IPv6 /64) may hold max-connections-per-address ones;
 * past that a new one is answered 503 and closed as soon as its peer is
 * known, so that one source cannot fill the table and starve the others.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "log.h"
#include "web.h"

#define WEB_CONN_SLOTS	(WEB_CONN_MAX + WEB_CONN_GRACE)

static struct web_conn		 web_conns[WEB_CONN_SLOTS];
static size_t			 web_nconns;
static struct event		*web_sweep_ev;
static struct web_listener	*web_tcp[64];	/* to pause accepting */
static size_t			 web_ntcp;
static int			 web_paused;
static int			 web_untracked_warned;

time_t
web_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void
web_accept_pause(int pause)
{
	size_t	 i;

	if (pause == web_paused)
		return;
	for (i = 0; i < web_ntcp; i++) {
		if (web_tcp[i]->wl_lev == NULL)
			continue;
		if (pause)
			evconnlistener_disable(web_tcp[i]->wl_lev);
		else
			evconnlistener_enable(web_tcp[i]->wl_lev);
	}
	web_paused = pause;
	if (pause)
		log_warnx("%zu connections: not accepting more for now",
		    web_nconns);
	else
		log_info("accepting connections again");
}

static void
web_conn_free(struct web_conn *wn)
{
	web_edge_stop(wn);
	bufferevent_decref(wn->wn_bev);
	wn->wn_bev = NULL;
	wn->wn_gen++;
	web_nconns--;
	if (web_paused && web_nconns < WEB_CONN_MAX)
		web_accept_pause(0);
}

/* evhttp freed it (bufferevent_free() clears the callbacks). */
static int
web_conn_gone(struct web_conn *wn)
{
	bufferevent_data_cb	 rcb, wcb;
	bufferevent_event_cb	 ecb;
	void			*cbarg;

	bufferevent_getcb(wn->wn_bev, &rcb, &wcb, &ecb, &cbarg);
	return rcb == NULL && wcb == NULL && ecb == NULL;
}

void
web_conn_release(struct web_conn *wn)
{
	if (wn->wn_bev != NULL)
		web_conn_free(wn);
}

/* The key of a peer: IPv4 address, or the /64 of an IPv6 one. */
static int
web_conn_source(int fd, unsigned char *key, char *addr, size_t addrlen)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len = sizeof(ss);
	char			 a[INET6_ADDRSTRLEN];

	memset(key, 0, 9);
	memset(&ss, 0, sizeof(ss));
	if (getpeername(fd, (struct sockaddr *)&ss, &len) == -1)
		return -1;
	if (ss.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		key[0] = AF_INET;
		memcpy(key + 1, &sin6->sin6_addr.s6_addr[12], 4);
		inet_ntop(AF_INET, key + 1, a, sizeof(a));
	} else if (ss.ss_family == AF_INET6) {
		key[0] = AF_INET6;
		memcpy(key + 1, &sin6->sin6_addr, 8);
		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
	} else if (ss.ss_family == AF_INET) {
		key[0] = AF_INET;
		memcpy(key + 1, &sin->sin_addr, 4);
		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
	} else
		return -1;
	strlcpy(addr, a, addrlen);
	return 0;
}

/*
 * Run once evhttp has given the connection its descriptor: learn the
 * peer, refuse it if its source has too many.
 */
static void
web_conn_accepted(evutil_socket_t unused, short event, void *arg)
{
	struct web_conn	*wn, *o;
	uint64_t	 tok = (uint64_t)(uintptr_t)arg;
	size_t		 slot = (size_t)(tok >> 32), i, n = 0;
	int		 fd;

	if (slot == 0 || slot > WEB_CONN_SLOTS)
		return;
	wn = &web_conns[slot - 1];
	if (wn->wn_bev == NULL || wn->wn_gen != (uint32_t)tok)
		return;
	if ((fd = bufferevent_getfd(wn->wn_bev)) == -1 ||
	    web_conn_source(fd, wn->wn_src, wn->wn_addr,
	    sizeof(wn->wn_addr)) == -1)
		return;
	wn->wn_srcknown = 1;
	for (i = 0; i < WEB_CONN_SLOTS; i++) {
		o = &web_conns[i];
		if (o->wn_bev == NULL || o == wn || !o->wn_srcknown ||
		    o->wn_cut || o->wn_edge.we_state >= WE_ANSWER ||
		    memcmp(o->wn_src, wn->wn_src, 9) != 0)
			continue;
		/* Closed by evhttp, not yet swept: it does not count. */
		if (web_conn_gone(o)) {
			web_conn_free(o);
			continue;
		}
		n++;
	}
	if (n >= (size_t)wn->wn_wl->wl_per_source)
		web_edge_refuse(wn, 503, "too many connections from one "
		    "address", 0);
}

/*
 * Drop what evhttp is done with, cut what is past its deadline, accept
 * again once under the cap.
 */
static void
web_sweep(evutil_socket_t fd, short event, void *arg)
{
	struct web_conn		*wn;
	time_t			 now = web_now();
	size_t			 i;
	int			 sfd;

	for (i = 0; i < WEB_CONN_SLOTS; i++) {
		wn = &web_conns[i];
		if (wn->wn_bev == NULL)
			continue;
		if (web_conn_gone(wn)) {
			web_conn_free(wn);
			continue;
		}
		if (wn->wn_busy > 0 || wn->wn_cut || now < wn->wn_deadline ||
		    wn->wn_edge.we_state >= WE_ANSWER)
			continue;
		/* evhttp reads the shutdown as the client leaving. */
		if ((sfd = bufferevent_getfd(wn->wn_bev)) != -1) {
			log_debug("connection %d: past its deadline, cut",
			    sfd);
			shutdown(sfd, SHUT_RDWR);
		}
		wn->wn_cut = 1;
	}
	if (web_paused && web_nconns < WEB_CONN_MAX)
		web_accept_pause(0);
	web_edge_flush_logs();
}

/* Out of descriptors (EMFILE): stop accepting until the next sweep. */
static void
web_accept_error(struct evconnlistener *lev, void *arg)
{
	log_warn("accept");
	web_accept_pause(1);
}

void
web_conn_init(void)
{
	web_sweep_ev = web_every(1, web_sweep);
}

void
web_conn_listener(struct web_listener *wl)
{
	if (web_ntcp >= sizeof(web_tcp) / sizeof(web_tcp[0]))
		fatalx("too many listeners");
	web_tcp[web_ntcp++] = wl;
	if (wl->wl_lev != NULL)
		evconnlistener_set_error_cb(wl->wl_lev, web_accept_error);
}

/* evhttp_set_bevcb: a new TCP connection (its descriptor comes later). */
struct bufferevent *
web_conn_bev(struct event_base *base, void *arg)
{
	struct web_listener	*wl = arg;
	struct web_conn		*wn = NULL;
	struct bufferevent	*bev;
	struct timeval		 zero = { 0, 0 };
	SSL			*ssl;
	uint64_t		 tok;
	size_t			 i;

	if (wl->wl_ssl != NULL) {
		if ((ssl = SSL_new(wl->wl_ssl)) == NULL)
			fatalx("SSL_new");
		bev = bufferevent_openssl_socket_new(base, -1, ssl,
		    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
		if (bev != NULL)
			/* Clients close without close_notify all the time. */
			bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	} else
		bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		fatalx("bufferevent");
	/* A whole body and the head before it fit, as evhttp needs. */
	bufferevent_setwatermark(bev, EV_READ, 0,
	    wl->wl_body_max + 2 * WEB_HEADERS_SIZE);

	for (i = 0; i < WEB_CONN_SLOTS; i++)
		if (web_conns[i].wn_bev == NULL) {
			wn = &web_conns[i];
			break;
		}
	if (wn == NULL) {
		/* Accepting pauses before this; served, but not counted. */
		if (!web_untracked_warned++)
			log_warnx("connection table full");
		return bev;
	}
	bufferevent_incref(bev);
	wn->wn_bev = bev;
	wn->wn_wl = wl;
	wn->wn_srcknown = 0;
	strlcpy(wn->wn_addr, "?", sizeof(wn->wn_addr));
	wn->wn_busy = 0;
	wn->wn_cut = 0;
	wn->wn_nodelay = 0;
	wn->wn_refused = web_nconns >= WEB_CONN_MAX;
	wn->wn_deadline = web_now() + (wn->wn_refused ?
	    WEB_REFUSED_DEADLINE : WEB_HEADER_DEADLINE);
	web_nconns++;
	web_edge_start(wn);
	tok = (uint64_t)(wn - web_conns + 1) << 32 | wn->wn_gen;
	if (event_base_once(base, -1, EV_TIMEOUT, web_conn_accepted,
	    (void *)(uintptr_t)tok, &zero) == -1)
		fatalx("event_base_once");
	if (web_nconns >= WEB_CONN_SLOTS - 1)
		web_accept_pause(1);
	return bev;
}

static struct web_conn *
web_conn_find(uint64_t tok)
{
	size_t	 slot = (size_t)(tok >> 32);
	uint32_t gen = (uint32_t)tok;

	if (slot == 0 || slot > WEB_CONN_SLOTS)
		return NULL;
	if (web_conns[slot - 1].wn_bev == NULL ||
	    web_conns[slot - 1].wn_gen != gen)
		return NULL;
	return &web_conns[slot - 1];
}

uint64_t
web_conn_begin(struct evhttp_request *req, int *refused)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct web_conn			*wn;
	size_t				 i;

	*refused = 0;
	if ((evcon = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evcon)) == NULL)
		return 0;
	for (i = 0; i < WEB_CONN_SLOTS; i++) {
		wn = &web_conns[i];
		if (wn->wn_bev != bev)
			continue;
		if (wn->wn_refused) {
			*refused = 1;
			return 0;
		}
		if (!wn->wn_nodelay) {
			int	 on = 1, fd = bufferevent_getfd(bev);

			/*
			 * An answer goes out as headers then body; without
			 * this, Nagle holds the tail of a large one until the
			 * client's delayed ACK, some 40 ms.
			 */
			if (fd != -1)
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on,
				    sizeof(on));
			wn->wn_nodelay = 1;
		}
		wn->wn_busy++;
		return (uint64_t)(i + 1) << 32 | wn->wn_gen;
	}
	return 0;
}

/* The request is answered: the next one has until the idle timeout. */
void
web_conn_end(uint64_t tok)
{
	struct web_conn	*wn;

	if (tok == 0 || (wn = web_conn_find(tok)) == NULL)
		return;
	if (wn->wn_busy > 0)
		wn->wn_busy--;
	wn->wn_deadline = web_now() + web_idle_timeout();
}

/* A PEM callback that never asks: an encrypted key is refused. */
static int
web_no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

static void
web_tls_errors(const char *what)
{
	unsigned long	 e;

	while ((e = ERR_get_error()) != 0)
		log_warnx("tls: %s: %s", what, ERR_error_string(e, NULL));
}

/*
 * A server context from a PEM certificate chain (the leaf first) and a
 * PEM key, in memory: the webworker has no files.  TLS 1.2 at least.
 */
SSL_CTX *
web_tls_ctx(const void *cert, size_t certlen, const void *key, size_t keylen)
{
	SSL_CTX		*ctx;
	BIO		*bio = NULL;
	X509		*x = NULL;
	EVP_PKEY	*pk = NULL;
	int		 ok = 0;

	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL)
		goto out;
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1)
		goto out;
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
	if ((bio = BIO_new_mem_buf(cert, (int)certlen)) == NULL ||
	    (x = PEM_read_bio_X509_AUX(bio, NULL, web_no_passphrase,
	    NULL)) == NULL || SSL_CTX_use_certificate(ctx, x) != 1)
		goto out;
	X509_free(x);
	/* The rest of the chain, if any. */
	while ((x = PEM_read_bio_X509(bio, NULL, web_no_passphrase,
	    NULL)) != NULL) {
		if (SSL_CTX_add0_chain_cert(ctx, x) != 1)
			goto out;
		x = NULL;
	}
	ERR_clear_error();	/* the end of the PEM data */
	BIO_free(bio);
	if ((bio = BIO_new_mem_buf(key, (int)keylen)) == NULL ||
	    (pk = PEM_read_bio_PrivateKey(bio, NULL, web_no_passphrase,
	    NULL)) == NULL || SSL_CTX_use_PrivateKey(ctx, pk) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1)
		goto out;
	ok = 1;
out:
	if (!ok)
		web_tls_errors("certificate or key");
	X509_free(x);
	EVP_PKEY_free(pk);
	BIO_free(bio);
	if (!ok) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}
