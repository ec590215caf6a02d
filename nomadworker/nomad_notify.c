/*
 * Notifications: the master builds each request (URL, body, title, the
 * token); this process sends it once and answers IMSG_NOTIFY_RESULT with
 * the HTTP status or the transport error.  A retry would be a second
 * notification for one event, so there is none.
 *
 * The requests run on a libcurl multi handle of their own, driven by the
 * worker's libevent loop like nomad_http.c's: that one is bound to
 * Nomad's address, token, CA and answer format, none of which fits a
 * notification, whose receivers are verified against the system CAs.
 * Only http and https, no redirect, no proxy from the environment.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "log.h"
#include "xmalloc.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "wire_notify.h"
#include "nomadworker.h"
#include "nomad_notify.h"
#include "nomad_curl.h"

#define NOTIFY_CONNECT_MS	5000
#define NOTIFY_RESP_MAX		(64 * 1024)	/* read and dropped */

struct notify_req {
	TAILQ_ENTRY(notify_req)	 nr_entry;
	uint32_t		 nr_id;
	CURL			*nr_easy;
	struct curl_slist	*nr_headers;
	char			*nr_body;
	size_t			 nr_bodylen;
	size_t			 nr_got;
	char			 nr_errbuf[CURL_ERROR_SIZE];
};
TAILQ_HEAD(notify_reqs, notify_req);

static struct imsgev		*nn_iev;
static struct curl_loop		 nn_loop;	/* its multi handle */
#define nn_multi		 (nn_loop.cl_multi)
static struct notify_reqs	 nn_reqs = TAILQ_HEAD_INITIALIZER(nn_reqs);


static void
nn_result(uint32_t id, uint32_t status, const char *error)
{
	struct msgw			 m;
	struct wire_notify_result	 n = { status, error };

	msg_init(&m);
	wire_put_notify_result(&m, &n);
	nomad_send(nn_iev, &m, IMSG_NOTIFY_RESULT, id);
}

/* The receiver's answer is not ours to keep; only its size is bounded. */
static size_t
nn_write_cb(char *data, size_t size, size_t n, void *arg)
{
	struct notify_req	*nr = arg;
	size_t			 len = size * n;

	if (len > NOTIFY_RESP_MAX - nr->nr_got)
		return 0;
	nr->nr_got += len;
	return len;
}

/* Alike on purpose: repo_free (master/repo.c) ends so too, other members. */
static void
nn_free(struct notify_req *nr)
{
	if (nr->nr_easy != NULL)
		curl_easy_cleanup(nr->nr_easy);
	/* The Authorization header holds the token. */
	nomad_curl_headers_free(nr->nr_headers);
	free(nr->nr_body);
	free(nr);
}

static void
nn_finish(struct notify_req *nr, CURLcode rc)
{
	char	 err[NOTIFY_ERROR_MAX];
	long	 status = 0;

	curl_multi_remove_handle(nn_multi, nr->nr_easy);
	TAILQ_REMOVE(&nn_reqs, nr, nr_entry);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(nr->nr_easy, CURLINFO_RESPONSE_CODE, &status);
		nn_result(nr->nr_id, (uint32_t)status, "");
	} else {
		/* curl's words name the host at most, never the URL's path. */
		snprintf(err, sizeof(err), "%s%s%s%s", curl_easy_strerror(rc),
		    nr->nr_errbuf[0] != '\0' ? " (" : "", nr->nr_errbuf,
		    nr->nr_errbuf[0] != '\0' ? ")" : "");
		log_debug("notification %u: %s", nr->nr_id, err);
		nn_result(nr->nr_id, 0, err);
	}
	nn_free(nr);
}

/* A transfer ended (curl_loop): its request is the easy handle's. */
static void
nn_ended(char *priv, CURLcode rc)
{
	nn_finish((struct notify_req *)priv, rc);
}

void
nomad_notify_init(struct event_base *base, struct imsgev *iev)
{
	nn_iev = iev;
	curl_loop_init(&nn_loop, base, nn_ended);
}

/* Visible ASCII and spaces: it goes into an HTTP header line. */
static void
nn_header(struct notify_req *nr, const char *name, const char *value,
    size_t len)
{
	char	*h;

	h = xasprintf("%s: %.*s", name, (int)len, value);
	if ((nr->nr_headers = curl_slist_append(nr->nr_headers, h)) == NULL)
		fatalx("curl_slist_append");
	freezero(h, strlen(h));
}

/*
 * IMSG_NOTIFY: u32 kind, str url, str title, str tags, str click,
 * data body, data token.  Text requests carry the title, tags and the
 * link as ntfy headers; JSON requests leave them empty.
 */
void
nomad_notify(struct imsg *imsg, const union imsg_payload *u)
{
	struct notify_req		*nr;
	const struct wire_notify	*n = &u->notify;
	CURL				*e;

	if ((nr = calloc(1, sizeof(*nr))) == NULL)
		fatal("calloc");
	nr->nr_id = imsg->hdr.peerid;
	if ((nr->nr_body = malloc(n->bodylen + 1)) == NULL)
		fatal("malloc");
	memcpy(nr->nr_body, n->body, n->bodylen);
	nr->nr_body[n->bodylen] = '\0';
	nr->nr_bodylen = n->bodylen;
	if ((nr->nr_easy = e = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");

	nomad_curl_opts(e, n->url, (long)NOTIFY_TIMEOUT_MS,
	    (long)NOTIFY_CONNECT_MS, nr->nr_errbuf, nn_write_cb, nr);
	/* One request, one connection: nothing is sent twice. */
	curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, nr->nr_body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)nr->nr_bodylen);

	if (n->kind == NOTIFY_KIND_JSON)
		nn_header(nr, "Content-Type", "application/json", 16);
	else {
		nn_header(nr, "Content-Type", "text/plain; charset=utf-8", 25);
		if (*n->title != '\0')
			nn_header(nr, "Title", n->title, strlen(n->title));
		if (*n->tags != '\0')
			nn_header(nr, "Tags", n->tags, strlen(n->tags));
		if (*n->click != '\0')
			nn_header(nr, "Click", n->click, strlen(n->click));
	}
	/* No "Expect: 100-continue" round trip. */
	if ((nr->nr_headers = curl_slist_append(nr->nr_headers, "Expect:")) ==
	    NULL)
		fatalx("curl_slist_append");
	if (n->tokenlen > 0) {
		char	 b[sizeof("Bearer ") + NOTIFY_TOKEN_MAX];

		snprintf(b, sizeof(b), "Bearer %.*s", (int)n->tokenlen,
		    (const char *)n->token);
		nn_header(nr, "Authorization", b, strlen(b));
		explicit_bzero(b, sizeof(b));
	}
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, nr->nr_headers);
	/* The token came in this message: do not leave it in the heap. */
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->datalen);

	TAILQ_INSERT_TAIL(&nn_reqs, nr, nr_entry);
	if (curl_multi_add_handle(nn_multi, e) != CURLM_OK) {
		TAILQ_REMOVE(&nn_reqs, nr, nr_entry);
		nn_result(nr->nr_id, 0, "cannot start the request");
		nn_free(nr);
	}
}
