/*
 * HTTP checks of the hosts of deploy plans (man/nops-plan.5): the master
 * names a URL and a time limit; this process makes one GET and answers
 * with the HTTP status (0: none), the transport error, and the first
 * PROBE_BODY_MAX bytes of the body.  Whether that is healthy, and when
 * to ask again, is the master's business.
 *
 * The request runs on a libcurl multi handle of its own, driven by the
 * worker's event loop as the notifications' are: a check is neither
 * Nomad (address, token, CA) nor a notification.  Only http and https,
 * no redirect, no proxy from the environment, certificates verified
 * against the system CAs, one new connection per attempt.
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
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "nomadworker.h"
#include "nomad_curl.h"
#include "wire_hosts.h"

#define PROBE_CONNECT_MS	5000
#define PROBE_READ_MAX		(64 * 1024)	/* read, the rest dropped */

struct probe_req {
	TAILQ_ENTRY(probe_req)	 pr_entry;
	uint32_t		 pr_id;
	CURL			*pr_easy;
	char			 pr_body[PROBE_BODY_MAX];
	size_t			 pr_bodylen;
	size_t			 pr_got;
	char			 pr_errbuf[CURL_ERROR_SIZE];
};
TAILQ_HEAD(probe_reqs, probe_req);

static struct imsgev		*np_iev;
static struct curl_loop		 np_loop;
static struct probe_reqs	 np_reqs = TAILQ_HEAD_INITIALIZER(np_reqs);

/* Alike on purpose: nn_result (nomad_notify.c) sends another message type. */
static void
np_result(uint32_t id, uint32_t status, const char *error, const void *body,
    size_t bodylen)
{
	struct wire_http_probe_result	 p = { status, error, body, bodylen };
	struct msgw			 m;

	msg_init(&m);
	wire_put_http_probe_result(&m, &p);
	nomad_send(np_iev, &m, IMSG_HTTP_PROBE_RESULT, id);
}

/* The head of the body is kept for the message; the rest is counted. */
static size_t
np_write_cb(char *data, size_t size, size_t n, void *arg)
{
	struct probe_req	*pr = arg;
	size_t			 len = size * n, keep;

	if (len > PROBE_READ_MAX - pr->pr_got)
		return 0;
	pr->pr_got += len;
	keep = sizeof(pr->pr_body) - pr->pr_bodylen;
	if (keep > len)
		keep = len;
	memcpy(pr->pr_body + pr->pr_bodylen, data, keep);
	pr->pr_bodylen += keep;
	return len;
}

static void
np_ended(char *priv, CURLcode rc)
{
	struct probe_req	*pr = (struct probe_req *)priv;
	char			 err[PROBE_ERROR_MAX];
	long			 status = 0;

	curl_multi_remove_handle(np_loop.cl_multi, pr->pr_easy);
	TAILQ_REMOVE(&np_reqs, pr, pr_entry);
	curl_easy_getinfo(pr->pr_easy, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && status != 0))
		np_result(pr->pr_id, (uint32_t)status, "", pr->pr_body,
		    pr->pr_bodylen);
	else {
		snprintf(err, sizeof(err), "%s%s%s%s", curl_easy_strerror(rc),
		    pr->pr_errbuf[0] != '\0' ? " (" : "", pr->pr_errbuf,
		    pr->pr_errbuf[0] != '\0' ? ")" : "");
		np_result(pr->pr_id, 0, err, "", 0);
	}
	curl_easy_cleanup(pr->pr_easy);
	free(pr);
}

void
nomad_probe_init(struct event_base *base, struct imsgev *iev)
{
	np_iev = iev;
	curl_loop_init(&np_loop, base, np_ended);
}

/* IMSG_HTTP_PROBE: see shared/wire_hosts.h. */
void
nomad_probe(struct imsg *imsg, const union imsg_payload *u)
{
	struct probe_req		*pr;
	const struct wire_http_probe	*p = &u->http_probe;
	const char			*url;
	uint32_t			 timeout;
	CURL				*e;

	url = p->url;
	timeout = p->timeout;

	if ((pr = calloc(1, sizeof(*pr))) == NULL)
		fatal("calloc");
	pr->pr_id = imsg->hdr.peerid;
	if ((pr->pr_easy = e = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");
	nomad_curl_opts(e, url, (long)timeout,
	    (long)(timeout < PROBE_CONNECT_MS ? timeout : PROBE_CONNECT_MS),
	    pr->pr_errbuf, np_write_cb, pr);
	curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	TAILQ_INSERT_TAIL(&np_reqs, pr, pr_entry);
	if (curl_multi_add_handle(np_loop.cl_multi, e) != CURLM_OK) {
		TAILQ_REMOVE(&np_reqs, pr, pr_entry);
		np_result(pr->pr_id, 0, "cannot start the request", "", 0);
		curl_easy_cleanup(e);
		free(pr);
	}
}
