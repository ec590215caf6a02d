/*
 * HTTP to Nomad: one libcurl multi handle driven by the worker's libevent
 * loop (curl tells us which sockets to watch and when to wake it), so
 * many requests are in flight at once.  Every request has its own
 * timeout; reads that fail for a reason that may pass (a transport error,
 * a 5xx, 429) are retried with backoff; writes are sent once and their
 * outcome, whatever it is, goes back to the master, which decides.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/time.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "growbuf.h"
#include "log.h"
#include "xmalloc.h"
#include "nops.h"
#include "nomadworker.h"
#include "nomad_curl.h"

#define HTTP_BACKOFF_MS		250	/* first retry; then x4 */
#define HTTP_CONNECT_MS		10000	/* at most */
#define HTTP_MAX_HOST_CONNS	8	/* more requests wait in curl */

struct http_req {
	TAILQ_ENTRY(http_req)	 hr_entry;
	uint32_t		 hr_id;
	CURL			*hr_easy;
	struct curl_slist	*hr_headers;
	struct nomad_wire	 hr_wire;
	char			*hr_url;
	uint32_t		 hr_timeout_ms;
	uint32_t		 hr_attempts;
	struct event		*hr_retry;
	char			 hr_errbuf[CURL_ERROR_SIZE];
	struct growbuf		 hr_resp;	/* cap: NOMAD_BODY_MAX */
	uint64_t		 hr_index;
};
TAILQ_HEAD(http_reqs, http_req);

static struct event_base	*http_base;
static struct curl_loop		 http_loop;	/* its multi handle */
/*
 * Blocking queries wait up to a minute for Nomad to change: they go on a
 * multi handle of their own, one connection each (at most one per list
 * and namespace), so that they never take one of the HTTP_MAX_HOST_CONNS
 * the other requests share.
 */
static struct curl_loop		 http_block_loop;
#define http_multi(hr)	 ((hr)->hr_wire.nw_block ? \
			    http_block_loop.cl_multi : http_loop.cl_multi)
static struct http_reqs		 http_reqs =
    TAILQ_HEAD_INITIALIZER(http_reqs);
static struct nomad_http_conf	 http_conf;
static void			(*http_done)(const struct nomad_answer *);

static void	 http_finish(struct http_req *, CURLcode);
static void	 http_ended(char *, CURLcode);

static size_t
http_write_cb(char *data, size_t size, size_t n, void *arg)
{
	struct http_req	*hr = arg;
	size_t		 len = size * n;

	/* Past the cap (GROWBUF_TOOBIG): curl stops, CURLE_WRITE_ERROR. */
	if (growbuf_xadd(&hr->hr_resp, data, len) == -1)
		return 0;
	return len;
}

/* Keep X-Nomad-Index; ignore every other header. */
static size_t
http_header_cb(char *data, size_t size, size_t n, void *arg)
{
	static const char	 name[] = "x-nomad-index:";
	struct http_req		*hr = arg;
	size_t			 len = size * n, i;
	char			 num[32];
	const char		*p, *end;
	char			*ep;
	unsigned long long	 v;

	/* A new response (a redirect or 100-continue): forget the last. */
	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0)
		hr->hr_index = 0;
	if (len <= sizeof(name) - 1 ||
	    strncasecmp(data, name, sizeof(name) - 1) != 0)
		return len;
	p = data + sizeof(name) - 1;
	end = data + len;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (i = 0; p < end && isdigit((unsigned char)*p) &&
	    i < sizeof(num) - 1; p++)
		num[i++] = *p;
	num[i] = '\0';
	if (i == 0 || i >= 20)
		return len;	/* not a number we can hold: no index */
	errno = 0;
	v = strtoull(num, &ep, 10);
	if (errno == 0 && *ep == '\0')
		hr->hr_index = v;
	return len;
}

void
nomad_http_init(struct event_base *base,
    void (*done)(const struct nomad_answer *))
{
	http_base = base;
	http_done = done;
	curl_loop_init(&http_loop, base, http_ended);
	curl_multi_setopt(http_loop.cl_multi, CURLMOPT_MAX_HOST_CONNECTIONS,
	    (long)HTTP_MAX_HOST_CONNS);
	curl_loop_init(&http_block_loop, base, http_ended);
}

static void
http_conf_clear(struct nomad_http_conf *c)
{
	free(c->hc_base);
	if (c->hc_token != NULL)
		freezero(c->hc_token, strlen(c->hc_token));
	free(c->hc_ca);
	memset(c, 0, sizeof(*c));
}

void
nomad_http_configure(struct nomad_http_conf *c)
{
	http_conf_clear(&http_conf);
	http_conf = *c;
	memset(c, 0, sizeof(*c));
}

int
nomad_http_configured(void)
{
	return http_conf.hc_base != NULL;
}

static void
http_free(struct http_req *hr)
{
	if (hr->hr_easy != NULL)
		curl_easy_cleanup(hr->hr_easy);
	/* The token header: wiped before the list goes back to malloc. */
	nomad_curl_headers_free(hr->hr_headers);
	if (hr->hr_retry != NULL)
		event_free(hr->hr_retry);
	nomad_wire_free(&hr->hr_wire);
	free(hr->hr_url);
	growbuf_free(&hr->hr_resp);
	free(hr);
}

static void
http_answer(struct http_req *hr, uint32_t status, const char *error)
{
	struct nomad_answer	 an;

	memset(&an, 0, sizeof(an));
	an.an_id = hr->hr_id;
	an.an_status = status;
	an.an_index = status != 0 ? hr->hr_index : 0;
	an.an_attempts = hr->hr_attempts;
	an.an_error = error != NULL ? error : "";
	if (status != 0) {
		an.an_body = hr->hr_resp.gb_buf;
		an.an_bodylen = hr->hr_resp.gb_len;
	}
	http_done(&an);
}

/* Answer a request that never reached curl (bad config, bad request). */
void
nomad_http_refuse(uint32_t id, const char *error)
{
	struct nomad_answer	 an;

	memset(&an, 0, sizeof(an));
	an.an_id = id;
	an.an_error = error;
	http_done(&an);
}

static int
http_add(struct http_req *hr)
{
	CURLMcode	 mc;

	hr->hr_attempts++;
	growbuf_reset(&hr->hr_resp);
	hr->hr_index = 0;
	hr->hr_errbuf[0] = '\0';
	if ((mc = curl_multi_add_handle(http_multi(hr), hr->hr_easy)) !=
	    CURLM_OK) {
		log_warnx("curl_multi_add_handle: %s",
		    curl_multi_strerror(mc));
		return -1;
	}
	return 0;
}

static void
http_retry_cb(int fd, short what, void *arg)
{
	struct http_req	*hr = arg;

	if (http_add(hr) == -1) {
		TAILQ_REMOVE(&http_reqs, hr, hr_entry);
		http_answer(hr, 0, "cannot start the request");
		http_free(hr);
	}
}

/* Worth trying a read again: the cause may have passed. */
static int
http_transient(CURLcode rc, long status)
{
	if (rc == CURLE_OK)
		return status == 429 || (status >= 500 && status <= 599);
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		/* TLS, protocol, a too large answer: it would fail again. */
		return 0;
	}
}

/* A transfer ended (curl_loop): its request is the easy handle's. */
static void
http_ended(char *priv, CURLcode rc)
{
	http_finish((struct http_req *)priv, rc);
}

static void
http_finish(struct http_req *hr, CURLcode rc)
{
	struct timeval	 tv;
	char		 err[NOMAD_ERROR_MAX];
	long		 status = 0, ms;
	uint32_t	 i;

	curl_multi_remove_handle(http_multi(hr), hr->hr_easy);
	if (rc == CURLE_OK)
		curl_easy_getinfo(hr->hr_easy, CURLINFO_RESPONSE_CODE,
		    &status);

	if (hr->hr_wire.nw_read && hr->hr_attempts < NOMAD_READ_ATTEMPTS &&
	    http_transient(rc, status)) {
		ms = HTTP_BACKOFF_MS;
		for (i = 1; i < hr->hr_attempts; i++)
			ms *= 4;
		/* jitter: +-25%, so retries of many requests spread out */
		ms += (long)arc4random_uniform((uint32_t)ms / 2) - ms / 4;
		log_debug("%s %s: %s; retry %u in %ld ms",
		    hr->hr_wire.nw_method, hr->hr_wire.nw_path,
		    rc == CURLE_OK ? "server error" : curl_easy_strerror(rc),
		    hr->hr_attempts, ms);
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		evtimer_add(hr->hr_retry, &tv);
		return;
	}

	TAILQ_REMOVE(&http_reqs, hr, hr_entry);
	if (rc == CURLE_OK) {
		http_answer(hr, (uint32_t)status, NULL);
	} else {
		if (hr->hr_resp.gb_err == GROWBUF_TOOBIG)
			snprintf(err, sizeof(err), "%s %s: answer larger than "
			    "%d bytes", hr->hr_wire.nw_method, hr->hr_url,
			    NOMAD_BODY_MAX);
		else
			snprintf(err, sizeof(err), "%s %s: %s%s%s%s",
			    hr->hr_wire.nw_method, hr->hr_url,
			    curl_easy_strerror(rc),
			    hr->hr_errbuf[0] != '\0' ? " (" : "",
			    hr->hr_errbuf,
			    hr->hr_errbuf[0] != '\0' ? ")" : "");
		if (hr->hr_attempts > 1) {
			char	 n[32];

			snprintf(n, sizeof(n), "; %u attempts",
			    hr->hr_attempts);
			strlcat(err, n, sizeof(err));
		}
		log_debug("%s", err);
		http_answer(hr, 0, err);
	}
	http_free(hr);
}

/* The easy handle's options: where, how safely, and where answers go. */
static void
http_setopts(struct http_req *hr)
{
	CURL		*e = hr->hr_easy;
	struct curl_blob blob;
	long		 connect_ms;

	connect_ms = hr->hr_timeout_ms < HTTP_CONNECT_MS ?
	    hr->hr_timeout_ms : HTTP_CONNECT_MS;
	nomad_curl_opts(e, hr->hr_url, (long)hr->hr_timeout_ms, connect_ms,
	    hr->hr_errbuf, http_write_cb, hr);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip");
	if (http_conf.hc_ca != NULL) {
		/* The configured CA only, from memory: no file after start. */
		blob.data = http_conf.hc_ca;
		blob.len = http_conf.hc_calen;
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_CAINFO, NULL);
		curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
	}
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, http_header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, hr);
	/*
	 * libcurl silently sends a request again when a reused keep-alive
	 * connection turns out closed.  Nomad may have acted on the first
	 * copy of a write: a write gets a connection of its own.
	 */
	if (!hr->hr_wire.nw_read) {
		curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	}
}

/*
 * Start one request.  Takes w (its strings are freed with the request).
 * The answer comes through the done callback, exactly once; for a request
 * that cannot start, before this returns.
 */
void
nomad_http_start(uint32_t id, struct nomad_wire *w, uint32_t timeout_ms)
{
	struct http_req	*hr;
	CURL		*e;
	char		*hdr;

	if (http_conf.hc_base == NULL) {
		nomad_wire_free(w);
		nomad_http_refuse(id, "the nomadworker has no Nomad address");
		return;
	}
	if ((hr = calloc(1, sizeof(*hr))) == NULL)
		fatal("calloc");
	hr->hr_id = id;
	hr->hr_wire = *w;
	memset(w, 0, sizeof(*w));
	hr->hr_timeout_ms = timeout_ms;
	hr->hr_resp.gb_first = 16384;
	hr->hr_resp.gb_max = NOMAD_BODY_MAX;
	hr->hr_url = xasprintf("%s%s", http_conf.hc_base, hr->hr_wire.nw_path);
	if ((hr->hr_retry = evtimer_new(http_base, http_retry_cb, hr)) ==
	    NULL)
		fatal("evtimer_new");
	if ((hr->hr_easy = e = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");

	http_setopts(hr);

	if (strcmp(hr->hr_wire.nw_method, "GET") == 0)
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	else {
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST,
		    hr->hr_wire.nw_method);
		if (hr->hr_wire.nw_body != NULL) {
			curl_easy_setopt(e, CURLOPT_POSTFIELDS,
			    hr->hr_wire.nw_body);
			curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
			    (curl_off_t)hr->hr_wire.nw_bodylen);
			hr->hr_headers = curl_slist_append(hr->hr_headers,
			    "Content-Type: application/json");
		}
	}
	/* No "Expect: 100-continue" round trip for larger bodies. */
	hr->hr_headers = curl_slist_append(hr->hr_headers, "Expect:");
	if (http_conf.hc_token != NULL) {
		hdr = xasprintf("X-Nomad-Token: %s", http_conf.hc_token);
		hr->hr_headers = curl_slist_append(hr->hr_headers, hdr);
		freezero(hdr, strlen(hdr));
	}
	if (hr->hr_headers == NULL)
		fatalx("curl_slist_append");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hr->hr_headers);

	TAILQ_INSERT_TAIL(&http_reqs, hr, hr_entry);
	if (http_add(hr) == -1) {
		TAILQ_REMOVE(&http_reqs, hr, hr_entry);
		http_answer(hr, 0, "cannot start the request");
		http_free(hr);
	}
}
