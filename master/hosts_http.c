/*
 * HTTP checks of plan hosts (hosts.h): the master decides the URL and
 * the time limit, the nomadworker (the process that talks to the
 * network) makes the request and answers with the status, an error and
 * the head of the body, which are checked here like any worker's words.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "hosts.h"
#include "wire_hosts.h"

struct hosts_http_run {
	TAILQ_ENTRY(hosts_http_run) hh_entry;
	uint32_t		 hh_id;
	hosts_http_cb		 hh_cb;
	void			*hh_arg;
};

static TAILQ_HEAD(, hosts_http_run) hosts_http_runs =
    TAILQ_HEAD_INITIALIZER(hosts_http_runs);
static uint32_t		 hosts_http_nextid = 1;

/*
 * Alike on purpose: hosts_run_find (hosts.c), hoststep_find and
 * nixrun_find search their own TAILQ by id the same way; the element
 * types differ, and one search for all would need a macro.
 */
static struct hosts_http_run *
hosts_http_find(uint32_t id)
{
	struct hosts_http_run	*r;

	TAILQ_FOREACH(r, &hosts_http_runs, hh_entry)
		if (r->hh_id == id)
			return r;
	return NULL;
}

uint32_t
hosts_http(const char *url, int timeout_ms, hosts_http_cb cb, void *arg)
{
	struct worker		*w = supervise_worker(PROC_NOMADWORKER);
	struct hosts_http_run	*r;
	struct wire_http_probe	 p;
	struct msgw		 m;

	if (w == NULL || !w->w_running)
		return 0;
	if (timeout_ms < 1)
		timeout_ms = 1;
	if (timeout_ms > PROBE_TIMEOUT_MAX_MS)
		timeout_ms = PROBE_TIMEOUT_MAX_MS;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->hh_id = hosts_http_nextid++;
	if (hosts_http_nextid == 0)
		hosts_http_nextid = 1;
	r->hh_cb = cb;
	r->hh_arg = arg;
	p.url = url;
	p.timeout = (uint32_t)timeout_ms;
	msg_init(&m);
	wire_put_http_probe(&m, &p);
	if (imsgev_send(&w->w_iev, &m, IMSG_HTTP_PROBE, r->hh_id, -1) == -1)
		fatal("%s", imsg_to_str(IMSG_HTTP_PROBE));
	TAILQ_INSERT_TAIL(&hosts_http_runs, r, hh_entry);
	return r->hh_id;
}

void
hosts_http_cancel(uint32_t id)
{
	struct hosts_http_run	*r;

	if ((r = hosts_http_find(id)) != NULL)
		r->hh_cb = NULL;
}

/* The nomadworker ended: every check it had gets its answer now. */
void
hosts_http_worker_exited(void)
{
	struct hosts_http_run	*r;

	while ((r = TAILQ_FIRST(&hosts_http_runs)) != NULL) {
		TAILQ_REMOVE(&hosts_http_runs, r, hh_entry);
		if (r->hh_cb != NULL)
			r->hh_cb(0, "the nomadworker ended before answering",
			    "", r->hh_arg);
		free(r);
	}
}

/*
 * Alike on purpose: nomad_body (nomad.c) opens the same way, as a handler
 * of a worker's answer does (find the request by peerid); another message.
 */
/* IMSG_HTTP_PROBE_RESULT from the nomadworker: untrusted, checked. */
void
hosts_probe_result(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	const struct wire_http_probe_result	*p = &u->http_probe_result;
	struct hosts_http_run			*r;
	size_t					 i;
	char					 text[PROBE_BODY_MAX + 1];

	if ((r = hosts_http_find(imsg->hdr.peerid)) == NULL) {
		supervise_violation(w, "%s for a check never asked for (%u)",
		    imsg_to_str(imsg->hdr.type), imsg->hdr.peerid);
		return;
	}
	TAILQ_REMOVE(&hosts_http_runs, r, hh_entry);
	/* The body is shown: one line of plain text, secrets out. */
	memcpy(text, p->body, p->bodylen);
	text[p->bodylen] = '\0';
	for (i = 0; i < p->bodylen; i++)
		if ((unsigned char)text[i] < 0x20 ||
		    (unsigned char)text[i] >= 0x7f)
			text[i] = ' ';
	hosts_redact(text);
	if (r->hh_cb != NULL)
		r->hh_cb((int)p->status, p->error, text, r->hh_arg);
	free(r);
}
