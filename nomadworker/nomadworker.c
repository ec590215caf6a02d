/*
 * nomadworker: the only process that talks to Nomad (and, later, SSH hosts
 * and notification endpoints).  It starts as root just long enough to
 * initialise libcurl and OpenSSL, then drops to the unprivileged user,
 * confines its file system to the CA and resolver files and installs its
 * syscall filter.  Nomad's address, token and CA arrive from the master in
 * IMSG_NOMAD_CONFIG (the token is a secret: it is wiped wherever this
 * process copied it); each IMSG_NOMAD_REQUEST names an operation, which
 * this process turns into HTTP and answers with the status, the
 * X-Nomad-Index and the body, chunked when large.  What the answer means
 * is the master's business.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <curl/curl.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "sandbox.h"
#include "wire_nomad.h"
#include "nomadworker.h"
#include "nomad_notify.h"

struct nomad_ns {
	TAILQ_ENTRY(nomad_ns)	 ns_entry;
	char			*ns_name;
};
TAILQ_HEAD(nomad_nss, nomad_ns);

struct imsgev		 nomad_iev;
static struct nomad_nss	 nomad_namespaces =
    TAILQ_HEAD_INITIALIZER(nomad_namespaces);
static char		 nomad_conf_error[256] = "no configuration yet";

static void
nomad_ns_clear(void)
{
	struct nomad_ns	*ns;

	while ((ns = TAILQ_FIRST(&nomad_namespaces)) != NULL) {
		TAILQ_REMOVE(&nomad_namespaces, ns, ns_entry);
		free(ns->ns_name);
		free(ns);
	}
}

static int
nomad_ns_allowed(const char *name)
{
	struct nomad_ns	*ns;

	TAILQ_FOREACH(ns, &nomad_namespaces, ns_entry)
		if (strcmp(ns->ns_name, name) == 0)
			return 1;
	return 0;
}

/* Only visible ASCII: the token goes into an HTTP header. */
static int
nomad_token_ok(const uint8_t *p, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (p[i] <= 0x20 || p[i] >= 0x7f)
			return 0;
	return 1;
}

/*
 * IMSG_NOMAD_CONFIG: str address, data CA (PEM), u32 count, count x str
 * namespace, data token (last, so the master can wipe its buffer without
 * copies left by growing it).  Empty address: Nomad is not configured.
 */
static void
nomad_config(struct imsg *imsg, const union imsg_payload *u)
{
	struct nomad_http_conf		 hc;
	struct nomad_ns			*ns;
	const struct wire_nomad_config	*c = &u->nomad_config;
	uint32_t			 i;
	char				 base[NOMAD_ADDRESS_MAX + 1];
	char				 err[sizeof(nomad_conf_error)];

	memset(&hc, 0, sizeof(hc));
	nomad_ns_clear();
	for (i = 0; i < c->nnames; i++) {
		if ((ns = calloc(1, sizeof(*ns))) == NULL ||
		    (ns->ns_name = strdup(c->names[i])) == NULL)
			fatal("calloc");
		TAILQ_INSERT_TAIL(&nomad_namespaces, ns, ns_entry);
	}
	err[0] = '\0';
	if (c->address[0] == '\0')
		strlcpy(err, "Nomad is not configured (no nomad block)",
		    sizeof(err));
	else if (nomad_address_parse(c->address, base, sizeof(base), err,
	    sizeof(err)) == -1)
		;
	else if (!nomad_token_ok(c->token, c->tokenlen))
		strlcpy(err, "the Nomad token has characters that cannot go "
		    "in an HTTP header", sizeof(err));
	if (err[0] != '\0') {
		/* Forget the old settings: never talk to a stale address. */
		nomad_http_configure(&hc);
		strlcpy(nomad_conf_error, err, sizeof(nomad_conf_error));
		if (c->address[0] == '\0')
			log_debug("%s", err);
		else
			log_warnx("%s", err);
	} else {
		if ((hc.hc_base = strdup(base)) == NULL)
			fatal("strdup");
		if (c->tokenlen > 0) {
			if ((hc.hc_token = malloc(c->tokenlen + 1)) == NULL)
				fatal("malloc");
			memcpy(hc.hc_token, c->token, c->tokenlen);
			hc.hc_token[c->tokenlen] = '\0';
		}
		if (c->calen > 0) {
			if ((hc.hc_ca = malloc(c->calen)) == NULL)
				fatal("malloc");
			memcpy(hc.hc_ca, c->ca, c->calen);
			hc.hc_calen = c->calen;
		}
		nomad_http_configure(&hc);
		nomad_conf_error[0] = '\0';
		log_debug("Nomad at %s, %s, %s CA, %u namespace(s)", base,
		    c->tokenlen > 0 ? "with a token" : "no token",
		    c->calen > 0 ? "configured" : "system", c->nnames);
	}
	/* The token was in this message: do not leave it in the heap. */
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->datalen);
}

/* A message to the master; one that cannot be queued is fatal. */
void
nomad_send(struct imsgev *iev, struct msgw *m, uint32_t type, uint32_t id)
{
	if (imsgev_send(iev, m, type, id, -1) == -1)
		fatal("%s", imsg_to_str(type));
}

/* Send the answer: the head with the first chunk, then the rest. */
static void
nomad_answer_cb(const struct nomad_answer *an)
{
	struct msgw			 m;
	struct wire_nomad_response	 a;
	struct wire_nomad_body		 b;
	const uint8_t			*body = an->an_body;
	size_t				 off, n;

	n = an->an_bodylen < NOMAD_CHUNK_MAX ? an->an_bodylen :
	    NOMAD_CHUNK_MAX;
	a.status = an->an_status;
	a.index = an->an_index;
	a.attempts = an->an_attempts;
	a.error = an->an_error;
	a.total = (uint64_t)an->an_bodylen;
	a.chunk = body;
	a.chunklen = n;
	msg_init(&m);
	wire_put_nomad_response(&m, &a);
	nomad_send(&nomad_iev, &m, IMSG_NOMAD_RESPONSE, an->an_id);
	for (off = n; off < an->an_bodylen; off += n) {
		n = an->an_bodylen - off;
		if (n > NOMAD_CHUNK_MAX)
			n = NOMAD_CHUNK_MAX;
		b.chunk = body + off;
		b.chunklen = n;
		msg_init(&m);
		wire_put_nomad_body(&m, &b);
		nomad_send(&nomad_iev, &m, IMSG_NOMAD_BODY, an->an_id);
	}
}

/*
 * IMSG_NOMAD_REQUEST (shared/wire_nomad.h).  Which fields an operation
 * uses is in shared/nops.h; the rest are empty.
 */
static void
nomad_request(struct imsg *imsg, const union imsg_payload *u)
{
	struct nomad_ask		 a;
	struct nomad_wire		 w;
	const struct wire_nomad_request	*q = &u->nomad_request;
	char				 err[512];

	memset(&a, 0, sizeof(a));
	a.na_op = q->op;
	a.na_flags = q->flags;
	a.na_timeout_ms = q->timeout_ms;
	a.na_ns = q->ns;
	a.na_id = q->id;
	a.na_task = q->task;
	a.na_prefix = q->prefix;
	a.na_idem = q->idem;
	a.na_index = q->index;
	a.na_tail = q->tail;
	a.na_data1 = q->data1;
	a.na_data1len = q->data1len;
	a.na_data2 = q->data2;
	a.na_data2len = q->data2len;

	if (!nomad_http_configured()) {
		nomad_http_refuse(imsg->hdr.peerid, nomad_conf_error);
		return;
	}
	if (!nomad_ns_allowed(a.na_ns)) {
		snprintf(err, sizeof(err), "namespace \"%s\" is not one of "
		    "the configured namespaces", a.na_ns);
		nomad_http_refuse(imsg->hdr.peerid, err);
		return;
	}
	if (nomad_wire_build(&a, &w, err, sizeof(err)) == -1) {
		log_warnx("request %u: %s", imsg->hdr.peerid, err);
		nomad_http_refuse(imsg->hdr.peerid, err);
		return;
	}
	log_debug("request %u: %s %s", imsg->hdr.peerid, w.nw_method,
	    w.nw_path);
	nomad_http_start(imsg->hdr.peerid, &w, a.na_timeout_ms);
}

/*
 * The nomadworker's dispatch table: the rows of NOPS_IMSGS to NOMAD and
 * WORKER (IMSG_HANDLER_ROW, nops.h).  Alike on purpose: supervise.c,
 * gitworker.c and webworker.c choose their rows with the same five
 * lines.  The choice is made here, by the preprocessor, because a table
 * may name only its own process's handlers (a worker links no master
 * code); a matrix of the choices in nops.h would repeat these lines
 * there, one block per receiver.
 */
#define IMSG_TO_MASTER(h)	NULL
#define IMSG_TO_WORKER(h)	h
#define IMSG_TO_GIT(h)		NULL
#define IMSG_TO_NOMAD(h)	h
#define IMSG_TO_WEB(h)		NULL
static const worker_handler nomad_handlers[IMSG_MAX] = {
	NOPS_IMSGS(IMSG_HANDLER_ROW)
};

static void
nomad_dispatch_master(int fd, short event, void *arg)
{
	proc_worker_read(&nomad_iev, event, nomad_handlers);
}

static struct worker_init nomad_wi;

/* As root, after IMSG_INIT: libcurl and OpenSSL read their files now. */
void
nomadworker_init(struct proc_ctx *pc)
{
	nomad_wi = pc->pc_wi;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("curl_global_init failed");
}

void
nomadworker_loop(struct proc_ctx *pc)
{
	if ((pc->pc_base = event_base_new()) == NULL)
		fatalx("event_base_new");
	imsgev_attach(&nomad_iev, pc->pc_base, "nomadworker",
	    nomad_dispatch_master, NULL);
	nomad_http_init(pc->pc_base, nomad_answer_cb);
	nomad_notify_init(pc->pc_base, &nomad_iev);
	nomad_ssh_init(pc->pc_base, &nomad_iev);
	nomad_probe_init(pc->pc_base, &nomad_iev);
}

void
nomadworker_run(struct proc_ctx *pc)
{
	imsgev_compose(&nomad_iev, IMSG_WORKER_READY, 0, -1, NULL, 0);
#ifdef NOPS_TEST_HOOKS
	proc_worker_testhooks(&nomad_wi, &nomad_iev);
	if (proc_testhook(&nomad_wi, "nomad-stray-answer")) {
		/* An answer to a request the master never made. */
		log_info("test hook: answering request %u", 0x7fffffffU);
		nomad_http_refuse(0x7fffffffU, "stray");
	}
#endif
	log_debug("ready");
	/* Messages that arrived with IMSG_INIT are handled first. */
	nomad_dispatch_master(PROC_CHILD_FD, 0, NULL);
	event_base_dispatch(pc->pc_base);
}
