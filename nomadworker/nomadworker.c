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
#include "nops.h"
#include "proc.h"
#include "sandbox.h"
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
nomad_config(struct imsg *imsg)
{
	struct nomad_http_conf	 hc;
	struct nomad_ns		*ns;
	struct msgr		 r;
	const char		*addr, *name;
	const void		*token, *ca;
	size_t			 tokenlen, calen;
	uint32_t		 n, i;
	char			 base[NOMAD_ADDRESS_MAX + 1];
	char			 err[sizeof(nomad_conf_error)];

	memset(&hc, 0, sizeof(hc));
	nomad_ns_clear();
	msg_reader(&r, imsg);
	msg_get_str(&r, &addr, NOMAD_ADDRESS_MAX);
	msg_get_data(&r, &ca, &calen, NOMAD_CA_MAX);
	msg_get_u32(&r, &n);
	if (n > NOMAD_NAMESPACES_MAX)
		msg_fail(&r, "too many namespaces");
	for (i = 0; i < n && r.err == 0; i++) {
		if (msg_get_str(&r, &name, NOMAD_NS_MAX) == -1)
			break;
		if ((ns = calloc(1, sizeof(*ns))) == NULL ||
		    (ns->ns_name = strdup(name)) == NULL)
			fatal("calloc");
		TAILQ_INSERT_TAIL(&nomad_namespaces, ns, ns_entry);
	}
	msg_get_data(&r, &token, &tokenlen, NOMAD_TOKEN_MAX);
	if (msg_end(&r) == -1)
		fatalx("malformed %s (%s)", imsg_to_str(imsg->hdr.type),
		    r.what != NULL ? r.what : "trailing bytes");

	err[0] = '\0';
	if (addr[0] == '\0')
		strlcpy(err, "Nomad is not configured (no nomad block)",
		    sizeof(err));
	else if (nomad_address_parse(addr, base, sizeof(base), err,
	    sizeof(err)) == -1)
		;
	else if (!nomad_token_ok(token, tokenlen))
		strlcpy(err, "the Nomad token has characters that cannot go "
		    "in an HTTP header", sizeof(err));
	if (err[0] != '\0') {
		/* Forget the old settings: never talk to a stale address. */
		nomad_http_configure(&hc);
		strlcpy(nomad_conf_error, err, sizeof(nomad_conf_error));
		if (addr[0] == '\0')
			log_debug("%s", err);
		else
			log_warnx("%s", err);
	} else {
		if ((hc.hc_base = strdup(base)) == NULL)
			fatal("strdup");
		if (tokenlen > 0) {
			if ((hc.hc_token = malloc(tokenlen + 1)) == NULL)
				fatal("malloc");
			memcpy(hc.hc_token, token, tokenlen);
			hc.hc_token[tokenlen] = '\0';
		}
		if (calen > 0) {
			if ((hc.hc_ca = malloc(calen)) == NULL)
				fatal("malloc");
			memcpy(hc.hc_ca, ca, calen);
			hc.hc_calen = calen;
		}
		nomad_http_configure(&hc);
		nomad_conf_error[0] = '\0';
		log_debug("Nomad at %s, %s, %s CA, %u namespace(s)", base,
		    tokenlen > 0 ? "with a token" : "no token",
		    calen > 0 ? "configured" : "system", n);
	}
	/* The token was in this message: do not leave it in the heap. */
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->datalen);
}

/* Send the answer: the head with the first chunk, then the rest. */
static void
nomad_answer_cb(const struct nomad_answer *an)
{
	struct msgw	 m;
	const uint8_t	*body = an->an_body;
	size_t		 off, n;

	n = an->an_bodylen < NOMAD_CHUNK_MAX ? an->an_bodylen :
	    NOMAD_CHUNK_MAX;
	msg_init(&m);
	msg_add_u32(&m, an->an_status);
	msg_add_u64(&m, an->an_index);
	msg_add_u32(&m, an->an_attempts);
	msg_add_str(&m, an->an_error);
	msg_add_u64(&m, (uint64_t)an->an_bodylen);
	msg_add_data(&m, body, n);
	if (imsgev_send(&nomad_iev, &m, IMSG_NOMAD_RESPONSE, an->an_id,
	    -1) == -1)
		fatal("%s", imsg_to_str(IMSG_NOMAD_RESPONSE));
	for (off = n; off < an->an_bodylen; off += n) {
		n = an->an_bodylen - off;
		if (n > NOMAD_CHUNK_MAX)
			n = NOMAD_CHUNK_MAX;
		msg_init(&m);
		msg_add_data(&m, body + off, n);
		if (imsgev_send(&nomad_iev, &m, IMSG_NOMAD_BODY, an->an_id,
		    -1) == -1)
			fatal("%s", imsg_to_str(IMSG_NOMAD_BODY));
	}
}

static void
nomad_refuse(uint32_t id, const char *error)
{
	struct nomad_answer	 an;

	memset(&an, 0, sizeof(an));
	an.an_id = id;
	an.an_error = error;
	nomad_answer_cb(&an);
}

/*
 * IMSG_NOMAD_REQUEST: u32 op, u32 flags, u32 timeout_ms, str namespace,
 * str id, str task, str prefix, str idempotency token, u64 index,
 * u64 tail, data data1, data data2.  Which fields an operation uses is in
 * shared/nops.h; the rest are empty.
 */
static void
nomad_request(struct imsg *imsg)
{
	struct nomad_ask	 a;
	struct nomad_wire	 w;
	struct msgr		 r;
	char			 err[512];

	memset(&a, 0, sizeof(a));
	msg_reader(&r, imsg);
	msg_get_u32(&r, &a.na_op);
	msg_get_u32(&r, &a.na_flags);
	msg_get_u32(&r, &a.na_timeout_ms);
	msg_get_str(&r, &a.na_ns, NOMAD_NS_MAX);
	msg_get_str(&r, &a.na_id, NOMAD_ID_MAX);
	msg_get_str(&r, &a.na_task, NOMAD_TASK_MAX);
	msg_get_str(&r, &a.na_prefix, NOMAD_ID_MAX);
	msg_get_str(&r, &a.na_idem, NOMAD_IDEM_MAX);
	msg_get_u64(&r, &a.na_index);
	msg_get_u64(&r, &a.na_tail);
	msg_get_data(&r, &a.na_data1, &a.na_data1len, NOMAD_JOB_MAX);
	msg_get_data(&r, &a.na_data2, &a.na_data2len, NOMAD_VARS_MAX);
	if (r.err == 0 && (a.na_op == NOMAD_OP_NONE ||
	    a.na_op >= NOMAD_OP_MAX))
		msg_fail(&r, "unknown operation");
	if (r.err == 0 && (a.na_flags & ~NOMAD_F_ALL) != 0)
		msg_fail(&r, "unknown flags");
	if (r.err == 0 && (a.na_timeout_ms == 0 ||
	    a.na_timeout_ms > NOMAD_TIMEOUT_MAX_MS))
		msg_fail(&r, "timeout out of range");
	if (msg_end(&r) == -1)
		fatalx("malformed %s (%s)", imsg_to_str(imsg->hdr.type),
		    r.what != NULL ? r.what : "trailing bytes");

	if (!nomad_http_configured()) {
		nomad_refuse(imsg->hdr.peerid, nomad_conf_error);
		return;
	}
	if (!nomad_ns_allowed(a.na_ns)) {
		snprintf(err, sizeof(err), "namespace \"%s\" is not one of "
		    "the configured namespaces", a.na_ns);
		nomad_refuse(imsg->hdr.peerid, err);
		return;
	}
	if (nomad_wire_build(&a, &w, err, sizeof(err)) == -1) {
		log_warnx("request %u: %s", imsg->hdr.peerid, err);
		nomad_refuse(imsg->hdr.peerid, err);
		return;
	}
	log_debug("request %u: %s %s", imsg->hdr.peerid, w.nw_method,
	    w.nw_path);
	nomad_http_start(imsg->hdr.peerid, &w, a.na_timeout_ms);
}

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
		nomad_refuse(0x7fffffffU, "stray");
	}
#endif
	log_debug("ready");
	/* Messages that arrived with IMSG_INIT are handled first. */
	nomad_dispatch_master(PROC_CHILD_FD, 0, NULL);
	event_base_dispatch(pc->pc_base);
}
