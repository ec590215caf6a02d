/*
 * The master's side of the Nomad client.  Calls are asynchronous: each
 * becomes an IMSG_NOMAD_REQUEST to the nomadworker and waits in a table
 * of outstanding requests, with a deadline, until the worker answers.
 * The answer is untrusted input: it must match an outstanding request
 * and its sizes are bounded, or the worker is killed.  If the worker
 * dies, every request it held completes with an error, so a caller always
 * hears back.  The configuration is in nomad_conf.c, the parse cache in
 * nomad_cache.c.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "text.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "conf.h"
#include "master.h"
#include "nomad.h"
#include "jsonb.h"
#include "wire_nomad.h"

/* On top of the worker's own timeouts: its retries and some slack. */
#define NOMAD_DEADLINE_SLACK_MS	5000
#define NOMAD_BACKOFF_MAX_MS	2000	/* the worker's backoffs */
#define NOMAD_EXPIRED_KEEP	256	/* late answers to ignore */

struct nomad_call {
	RB_ENTRY(nomad_call)	 nc_node;	/* while outstanding */
	TAILQ_ENTRY(nomad_call)	 nc_done;	/* while completing */
	uint32_t		 nc_id;
	int			 nc_op;
	nomad_cb		 nc_cb;
	void			*nc_arg;
	int			 nc_cancelled;
	struct event		*nc_deadline;
	char			 nc_what[160];	/* for the log */

	/* the answer */
	int			 nc_head;	/* its head arrived */
	uint32_t		 nc_status;
	uint64_t		 nc_index;
	uint32_t		 nc_attempts;
	char			*nc_error;
	char			*nc_body;	/* NUL-terminated */
	size_t			 nc_bodylen;
	size_t			 nc_bodytotal;
	json_t			*nc_json;
	int			 nc_cached;

	/* parse: its cache key */
	int			 nc_cacheable;
	uint8_t			 nc_key[NOMAD_KEY_LEN];
};
RB_HEAD(nomad_calls, nomad_call);
TAILQ_HEAD(nomad_doneq, nomad_call);

static int	 nomad_call_cmp(struct nomad_call *, struct nomad_call *);

static struct nomad_calls	 nomad_calls = RB_INITIALIZER(&nomad_calls);
static struct nomad_doneq	 nomad_doneq =
    TAILQ_HEAD_INITIALIZER(nomad_doneq);
static size_t			 nomad_ncalls;
static uint32_t			 nomad_nextid = 1;
static uint32_t			 nomad_expired[NOMAD_EXPIRED_KEEP];
static size_t			 nomad_nexpired;
static struct event		*nomad_done_ev;

static void	 nomad_done_cb(int, short, void *);
static void	 nomad_finish(struct nomad_call *);

static int
nomad_call_cmp(struct nomad_call *a, struct nomad_call *b)
{
	return a->nc_id < b->nc_id ? -1 : a->nc_id > b->nc_id;
}

/* libbsd leaves __unused undefined (a Linux header uses the name). */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define NOMAD_UNDEF_UNUSED
#endif
RB_GENERATE_STATIC(nomad_calls, nomad_call, nc_node, nomad_call_cmp)
#ifdef NOMAD_UNDEF_UNUSED
#undef __unused
#undef NOMAD_UNDEF_UNUSED
#endif

void
nomad_init(void)
{
	nomad_done_ev = evtimer_new(nopsd_env->n_base, nomad_done_cb, NULL);
	if (nomad_done_ev == NULL)
		fatal("evtimer_new");
}

/* ---------------------------------------------------------- completion */

/*
 * Alike on purpose: repo_free (repo.c) and nixrun_free (nixrun.c) free
 * their own structs' members the same way; the members differ.
 */
static void
nomad_call_free(struct nomad_call *c)
{
	if (c->nc_deadline != NULL)
		event_free(c->nc_deadline);
	free(c->nc_error);
	free(c->nc_body);
	json_decref(c->nc_json);
	free(c);
}

static void
nomad_remember_expired(uint32_t id)
{
	nomad_expired[nomad_nexpired++ % NOMAD_EXPIRED_KEEP] = id;
}

static int
nomad_was_expired(uint32_t id)
{
	size_t	 i, n;

	n = nomad_nexpired < NOMAD_EXPIRED_KEEP ? nomad_nexpired :
	    NOMAD_EXPIRED_KEEP;
	for (i = 0; i < n; i++)
		if (nomad_expired[i] == id)
			return 1;
	return 0;
}

/* Call the callback (unless cancelled) and free the call. */
static void
nomad_deliver(struct nomad_call *c)
{
	struct nomad_result	 res;

	memset(&res, 0, sizeof(res));
	res.nr_id = c->nc_id;
	res.nr_op = c->nc_op;
	res.nr_status = (int)c->nc_status;
	res.nr_index = c->nc_index;
	res.nr_json = c->nc_json;
	res.nr_error = c->nc_error;
	res.nr_body = c->nc_body != NULL ? c->nc_body : "";
	res.nr_bodylen = c->nc_bodylen;
	res.nr_attempts = c->nc_attempts;
	res.nr_cached = c->nc_cached;
	c->nc_json = NULL;
	if (!c->nc_cancelled && c->nc_cb != NULL)
		c->nc_cb(&res, c->nc_arg);
	json_decref(res.nr_json);
	nomad_call_free(c);
}

static void
nomad_done_cb(int fd, short event, void *arg)
{
	struct nomad_call	*c;
	size_t			 n = 0;

	/*
	 * Only those queued now: calls made by the callbacks wait for the
	 * next round.  The rest stay on the queue, where nomad_cancel()
	 * finds them.
	 */
	TAILQ_FOREACH(c, &nomad_doneq, nc_done)
		n++;
	while (n-- > 0 && (c = TAILQ_FIRST(&nomad_doneq)) != NULL) {
		TAILQ_REMOVE(&nomad_doneq, c, nc_done);
		nomad_deliver(c);
	}
}

/* Complete from the event loop, never inside the caller's call. */
static void
nomad_complete_later(struct nomad_call *c)
{
	struct timeval	 tv = { 0, 0 };

	if (nomad_done_ev == NULL) {
		/* After nomad_shutdown(): nobody is left to hear back. */
		nomad_call_free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&nomad_doneq, c, nc_done);
	evtimer_add(nomad_done_ev, &tv);
}

static void
nomad_fail_later(struct nomad_call *c, const char *fmt, ...)
    __attribute__((__format__(printf, 2, 3)));

static void
nomad_fail_later(struct nomad_call *c, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	c->nc_error = xvasprintf(fmt, ap);
	va_end(ap);
	c->nc_status = 0;
	nomad_complete_later(c);
}

/* Take an outstanding call out of the table. */
static void
nomad_unlink(struct nomad_call *c)
{
	RB_REMOVE(nomad_calls, &nomad_calls, c);
	nomad_ncalls--;
	if (c->nc_deadline != NULL)
		evtimer_del(c->nc_deadline);
}

static void
nomad_deadline_cb(int fd, short event, void *arg)
{
	struct nomad_call	*c = arg;

	nomad_unlink(c);
	nomad_remember_expired(c->nc_id);
	free(c->nc_error);
	free(c->nc_body);
	c->nc_body = NULL;
	c->nc_bodylen = 0;
	c->nc_status = 0;
	c->nc_error = xasprintf("no answer from the nomadworker in time "
	    "(%s)", c->nc_what);
	log_warnx("nomad: %s", c->nc_error);
	nomad_deliver(c);
}

/* Every call the worker held fails: it died, or is being restarted. */
void
nomad_worker_exited(struct worker *w, const char *why)
{
	struct nomad_call	*c;
	size_t			 n = 0;

	while ((c = RB_MIN(nomad_calls, &nomad_calls)) != NULL) {
		nomad_unlink(c);
		free(c->nc_error);
		free(c->nc_body);
		c->nc_body = NULL;
		c->nc_bodylen = 0;
		c->nc_status = 0;
		c->nc_error = xasprintf("the nomadworker ended before "
		    "answering (%s): %s", c->nc_what, why);
		nomad_complete_later(c);
		n++;
	}
	if (n > 0)
		log_warnx("nomad: %zu request(s) failed: the nomadworker "
		    "ended: %s", n, why);
}

void
nomad_shutdown(void)
{
	struct nomad_call	*c;

	/* No callbacks at exit: the engine is going away too. */
	while ((c = RB_MIN(nomad_calls, &nomad_calls)) != NULL) {
		nomad_unlink(c);
		nomad_call_free(c);
	}
	while ((c = TAILQ_FIRST(&nomad_doneq)) != NULL) {
		TAILQ_REMOVE(&nomad_doneq, c, nc_done);
		nomad_call_free(c);
	}
	nomad_parse_cache_flush();
	nomad_conf_clear();
	if (nomad_done_ev != NULL) {
		event_free(nomad_done_ev);
		nomad_done_ev = NULL;
	}
}

void
nomad_cancel(uint32_t id)
{
	struct nomad_call	 key, *c;

	key.nc_id = id;
	if ((c = RB_FIND(nomad_calls, &nomad_calls, &key)) != NULL) {
		c->nc_cancelled = 1;
		return;
	}
	TAILQ_FOREACH(c, &nomad_doneq, nc_done)
		if (c->nc_id == id)
			c->nc_cancelled = 1;
}

size_t
nomad_outstanding(void)
{
	return nomad_ncalls;
}

/* -------------------------------------------------------------- calls */

/* What a request carries besides its fields, as the worker gets it. */
struct nomad_payload {
	const void	*np_d1, *np_d2;
	size_t		 np_d1len, np_d2len;
	char		*np_dump;	/* JSON text d1 or d2 is, or NULL */
};

/* 0 if a's fields may go to the worker, else -1 and c fails later. */
static int
nomad_call_check(struct nomad_call *c, int op, const struct nomad_args *a,
    const char *ns)
{
	const char	*cerr;

	if (op <= NOMAD_OP_NONE || op >= NOMAD_OP_MAX) {
		nomad_fail_later(c, "unknown Nomad operation %d", op);
		return -1;
	}
	if ((cerr = nomad_conf_error()) != NULL) {
		nomad_fail_later(c, "%s", cerr);
		return -1;
	}
	if ((a->na_flags & ~NOMAD_F_ALL) != 0 || ns == NULL ||
	    strlen(ns) > NOMAD_NS_MAX ||
	    (a->na_id != NULL && strlen(a->na_id) > NOMAD_ID_MAX) ||
	    (a->na_task != NULL && strlen(a->na_task) > NOMAD_TASK_MAX) ||
	    (a->na_prefix != NULL && strlen(a->na_prefix) > NOMAD_ID_MAX) ||
	    (a->na_idem != NULL && strlen(a->na_idem) > NOMAD_IDEM_MAX)) {
		nomad_fail_later(c, "%s: invalid arguments", c->nc_what);
		return -1;
	}
	return 0;
}

/*
 * The payload of op in p (free p->np_dump): 0; 1 when the parse cache
 * answered (c completes later); -1 when too large (c fails later).
 */
static int
nomad_call_payload(struct nomad_call *c, int op, const struct nomad_args *a,
    struct nomad_payload *p)
{
	char	*dump = NULL;

	memset(p, 0, sizeof(*p));
	switch (op) {
	case NOMAD_OP_PARSE:
		if (a->na_datalen > NOMAD_HCL_MAX ||
		    a->na_varslen > NOMAD_VARS_MAX) {
			nomad_fail_later(c, "parse: the job file or its "
			    "variables are too large");
			return -1;
		}
		p->np_d1 = a->na_data;
		p->np_d1len = a->na_datalen;
		p->np_d2 = a->na_vars;
		p->np_d2len = a->na_varslen;
		nomad_cache_key(p->np_d1, p->np_d1len, p->np_d2, p->np_d2len,
		    c->nc_key);
		c->nc_cacheable = 1;
		if (nomad_cache_get(c->nc_key, &c->nc_status, &c->nc_index,
		    &c->nc_json, &c->nc_error)) {
			c->nc_cached = 1;
			log_debug("nomad: %s answered from the cache",
			    c->nc_what);
			nomad_complete_later(c);
			return 1;
		}
		break;
	case NOMAD_OP_PLAN:
	case NOMAD_OP_REGISTER:
		if (!json_is_object(a->na_job) || (dump = json_dumps(a->na_job,
		    JSON_COMPACT)) == NULL || strlen(dump) > NOMAD_JOB_MAX) {
			free(dump);
			nomad_fail_later(c, "%s: no job, or the job is too "
			    "large", c->nc_what);
			return -1;
		}
		p->np_d1 = p->np_dump = dump;
		p->np_d1len = strlen(dump);
		break;
	case NOMAD_OP_DEPLOYMENT_PROMOTE:
		if (a->na_groups != NULL && (!json_is_array(a->na_groups) ||
		    (dump = json_dumps(a->na_groups, JSON_COMPACT)) ==
		    NULL || strlen(dump) > NOMAD_META_MAX)) {
			free(dump);
			nomad_fail_later(c, "%s: bad groups", c->nc_what);
			return -1;
		}
		p->np_d1 = p->np_dump = dump;
		p->np_d1len = dump != NULL ? strlen(dump) : 0;
		break;
	case NOMAD_OP_DISPATCH:
		if (a->na_datalen > NOMAD_PAYLOAD_MAX ||
		    (a->na_meta != NULL && (!json_is_object(a->na_meta) ||
		    (dump = json_dumps(a->na_meta, JSON_COMPACT)) == NULL ||
		    strlen(dump) > NOMAD_META_MAX))) {
			free(dump);
			nomad_fail_later(c, "%s: payload or meta too large",
			    c->nc_what);
			return -1;
		}
		p->np_d1 = a->na_data;
		p->np_d1len = a->na_datalen;
		p->np_d2 = p->np_dump = dump;
		p->np_d2len = dump != NULL ? strlen(dump) : 0;
		break;
	}
	return 0;
}

/*
 * Send c to the worker w (p's dump freed) and wait for the answer with a
 * deadline; else c fails later.
 */
static void
nomad_call_send(struct nomad_call *c, struct worker *w,
    const struct nomad_args *a, const char *ns, uint32_t timeout,
    struct nomad_payload *p)
{
	struct msgw			 m;
	struct wire_nomad_request	 q;
	struct timeval			 tv;
	long long			 ms;

	/*
	 * Alike on purpose: proc_send_init (shared/proc.c) and
	 * repo_send_one (repo.c) fill their wire structs field by field
	 * too; other fields from other sources.
	 */
	q.op = (uint32_t)c->nc_op;
	q.flags = a->na_flags;
	q.timeout_ms = timeout;
	q.ns = ns;
	q.id = a->na_id;
	q.task = a->na_task;
	q.prefix = a->na_prefix;
	q.idem = a->na_idem;
	q.index = a->na_index;
	q.tail = a->na_tail;
	q.data1 = p->np_d1;
	q.data1len = p->np_d1len;
	q.data2 = p->np_d2;
	q.data2len = p->np_d2len;
	msg_init(&m);
	wire_put_nomad_request(&m, &q);
	free(p->np_dump);
	p->np_dump = NULL;
	if (imsgev_send(&w->w_iev, &m, IMSG_NOMAD_REQUEST, c->nc_id,
	    -1) == -1) {
		nomad_fail_later(c, "%s: cannot queue the request: %s",
		    c->nc_what, strerror(errno));
		return;
	}

	/* The worker answers within its timeouts; this is a safety net. */
	ms = (long long)timeout * NOMAD_READ_ATTEMPTS + NOMAD_BACKOFF_MAX_MS +
	    NOMAD_DEADLINE_SLACK_MS;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	if ((c->nc_deadline = evtimer_new(nopsd_env->n_base,
	    nomad_deadline_cb, c)) == NULL)
		fatal("evtimer_new");
	evtimer_add(c->nc_deadline, &tv);
	RB_INSERT(nomad_calls, &nomad_calls, c);
	nomad_ncalls++;
	log_debug("nomad: request %u: %s", c->nc_id, c->nc_what);
}

/*
 * The one way to call Nomad.  Returns the request id (never 0); the
 * callback runs later, exactly once unless nomad_cancel()ed.
 */
uint32_t
nomad_call(int op, const struct nomad_args *a, nomad_cb cb, void *arg)
{
	struct nomad_call	*c;
	struct nomad_payload	 p;
	struct worker		*w;
	const char		*ns;
	uint32_t		 timeout, id;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("calloc");
	/*
	 * The id is returned after nomad_complete_later(), which frees c
	 * once the master is shutting down.
	 */
	id = c->nc_id = nomad_nextid++;
	if (nomad_nextid == 0)
		nomad_nextid = 1;
	c->nc_op = op;
	c->nc_cb = cb;
	c->nc_arg = arg;

	if ((ns = a->na_ns) == NULL)
		ns = nomad_conf_namespace();
	snprintf(c->nc_what, sizeof(c->nc_what), "%s%s%s in %s",
	    nomad_op_name(op), a->na_id != NULL ? " " : "",
	    a->na_id != NULL ? a->na_id : "", ns != NULL ? ns : "?");

	if (nomad_call_check(c, op, a, ns) == -1 ||
	    nomad_call_payload(c, op, a, &p) != 0)
		return id;
	timeout = a->na_timeout_ms != 0 ? a->na_timeout_ms : NOMAD_TIMEOUT_MS;
	if (timeout > NOMAD_TIMEOUT_MAX_MS)
		timeout = NOMAD_TIMEOUT_MAX_MS;

	w = supervise_worker(PROC_NOMADWORKER);
	if (w == NULL || !w->w_running) {
		free(p.np_dump);
		nomad_fail_later(c, "the nomadworker is not running (%s)",
		    w != NULL && w->w_lastexit[0] != '\0' ? w->w_lastexit :
		    "starting");
		return id;
	}
	if (nomad_ncalls >= NOMAD_MAX_OUTSTANDING) {
		free(p.np_dump);
		nomad_fail_later(c, "too many Nomad requests in flight (%d)",
		    NOMAD_MAX_OUTSTANDING);
		return id;
	}
	nomad_call_send(c, w, a, ns, timeout, &p);
	return id;
}

/*
 * Alike on purpose: each wrapper below sets the struct nomad_args fields
 * its request takes and calls nomad_call; a caller reads the wrapper's
 * named arguments better than a struct it fills itself.
 */
uint32_t
nomad_parse(const char *ns, const char *hcl, size_t hcllen, const char *vars,
    size_t varslen, nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_data = hcl;
	a.na_datalen = hcllen;
	a.na_vars = vars;
	a.na_varslen = varslen;
	return nomad_call(NOMAD_OP_PARSE, &a, cb, arg);
}

uint32_t
nomad_plan(const char *ns, const char *id, json_t *job, nomad_cb cb,
    void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_id = id;
	a.na_job = job;
	return nomad_call(NOMAD_OP_PLAN, &a, cb, arg);
}

uint32_t
nomad_register(const char *ns, const char *id, json_t *job, int enforce,
    uint64_t modify_index, nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_id = id;
	a.na_job = job;
	a.na_index = modify_index;
	a.na_flags = enforce ? NOMAD_F_ENFORCE_INDEX : 0;
	return nomad_call(NOMAD_OP_REGISTER, &a, cb, arg);
}

uint32_t
nomad_read(int op, const char *ns, const char *id, nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_id = id;
	return nomad_call(op, &a, cb, arg);
}

uint32_t
nomad_deployment_promote(const char *ns, const char *id, json_t *groups,
    nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_id = id;
	a.na_groups = groups;
	return nomad_call(NOMAD_OP_DEPLOYMENT_PROMOTE, &a, cb, arg);
}

uint32_t
nomad_job_dispatch(const char *ns, const char *id, const void *payload,
    size_t payloadlen, json_t *meta, const char *idempotency_token,
    nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_id = id;
	a.na_data = payload;
	a.na_datalen = payloadlen;
	a.na_meta = meta;
	a.na_idem = idempotency_token;
	return nomad_call(NOMAD_OP_DISPATCH, &a, cb, arg);
}

uint32_t
nomad_job_stop(const char *ns, const char *id, int purge, nomad_cb cb,
    void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_id = id;
	a.na_flags = purge ? NOMAD_F_PURGE : 0;
	return nomad_call(NOMAD_OP_JOB_STOP, &a, cb, arg);
}

uint32_t
nomad_jobs_list(const char *ns, const char *prefix, nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_prefix = prefix;
	return nomad_call(NOMAD_OP_JOBS_LIST, &a, cb, arg);
}

static uint32_t
nomad_watch(int op, const char *ns, uint64_t index, nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	a.na_ns = ns;
	a.na_index = index;
	a.na_flags = NOMAD_F_BLOCK;
	/* The wait, Nomad's jitter (wait/16) and time to answer. */
	a.na_timeout_ms = (NOMAD_BLOCK_WAIT_S + NOMAD_BLOCK_WAIT_S / 16 +
	    15) * 1000;
	return nomad_call(op, &a, cb, arg);
}

uint32_t
nomad_jobs_watch(const char *ns, uint64_t index, nomad_cb cb, void *arg)
{
	return nomad_watch(NOMAD_OP_JOBS_LIST, ns, index, cb, arg);
}

uint32_t
nomad_deployments_watch(const char *ns, uint64_t index, nomad_cb cb,
    void *arg)
{
	return nomad_watch(NOMAD_OP_DEPLOYMENTS_LIST, ns, index, cb, arg);
}

uint32_t
nomad_status_leader(nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	return nomad_call(NOMAD_OP_STATUS_LEADER, &a, cb, arg);
}

uint32_t
nomad_agent_self(nomad_cb cb, void *arg)
{
	struct nomad_args	 a;

	memset(&a, 0, sizeof(a));
	return nomad_call(NOMAD_OP_AGENT_SELF, &a, cb, arg);
}

/* ------------------------------------------------------------ answers */

/* The whole answer is in: make sense of it and call back. */
static void
nomad_finish(struct nomad_call *c)
{
	json_error_t	 jerr;

	nomad_unlink(c);
	if (c->nc_status >= 200 && c->nc_status <= 299) {
		if (c->nc_op != NOMAD_OP_ALLOC_LOGS) {
			c->nc_json = json_loadb(c->nc_body, c->nc_bodylen,
			    JSON_DECODE_ANY, &jerr);
			if (c->nc_json == NULL)
				c->nc_error = xasprintf("Nomad answered %u to "
				    "%s with invalid JSON: %s", c->nc_status,
				    c->nc_what, jerr.text);
		}
	} else if (c->nc_status != 0) {
		/*
		 * Nomad's errors are plain text: pass them on as text
		 * (nopsd(8), BOUNDARY), bounded and cut between characters.
		 */
		if (c->nc_bodylen > 0 && c->nc_body[0] != '\0')
			c->nc_error = text_dup(c->nc_body, c->nc_bodylen,
			    NOMAD_REASON_MAX, 0);
		else
			c->nc_error = xasprintf("HTTP %u with no message",
			    c->nc_status);
	}
	log_debug("nomad: request %u: %s: %u%s%s", c->nc_id, c->nc_what,
	    c->nc_status, c->nc_error != NULL ? ": " : "",
	    c->nc_error != NULL ? c->nc_error : "");
	if (c->nc_cacheable)
		nomad_cache_put(c->nc_key, c->nc_status, c->nc_index,
		    c->nc_json, c->nc_error, c->nc_bodylen);
	nomad_deliver(c);
}

/*
 * The outstanding call an answer is for.  NULL if there is none: a late
 * answer to a call that timed out is dropped, anything else is a
 * violation (and the worker is being killed).
 */
static struct nomad_call *
nomad_lookup(struct worker *w, struct imsg *imsg)
{
	struct nomad_call	 key, *c;

	key.nc_id = imsg->hdr.peerid;
	if ((c = RB_FIND(nomad_calls, &nomad_calls, &key)) != NULL)
		return c;
	if (imsg->hdr.peerid != 0 && nomad_was_expired(imsg->hdr.peerid)) {
		/* We gave up on it; the worker answered late. */
		log_debug("nomad: late answer to request %u dropped",
		    imsg->hdr.peerid);
		return NULL;
	}
	supervise_violation(w, "%s for request %u, which is not outstanding",
	    imsg_to_str(imsg->hdr.type), imsg->hdr.peerid);
	return NULL;
}

void
nomad_response(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	const struct wire_nomad_response	*a = &u->nomad_response;
	struct nomad_call			*c;

	if ((c = nomad_lookup(w, imsg)) == NULL)
		return;
	if (c->nc_head) {
		supervise_violation(w, "second %s for request %u",
		    imsg_to_str(imsg->hdr.type), c->nc_id);
		return;
	}
	c->nc_status = a->status;
	c->nc_index = a->index;
	c->nc_attempts = a->attempts;
	c->nc_head = 1;
	if (c->nc_status == 0)
		c->nc_error = text_dup(a->error, strlen(a->error),
		    NOMAD_REASON_MAX, 0);
	c->nc_bodytotal = (size_t)a->total;
	if ((c->nc_body = malloc(c->nc_bodytotal + 1)) == NULL)
		fatal("malloc");
	memcpy(c->nc_body, a->chunk, a->chunklen);
	c->nc_bodylen = a->chunklen;
	c->nc_body[c->nc_bodylen] = '\0';
	if (c->nc_bodylen == c->nc_bodytotal)
		nomad_finish(c);
}

void
nomad_body(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	const struct wire_nomad_body	*b = &u->nomad_body;
	struct nomad_call		*c;
	size_t				 left;

	if ((c = nomad_lookup(w, imsg)) == NULL)
		return;
	if (!c->nc_head || c->nc_bodylen >= c->nc_bodytotal) {
		supervise_violation(w, "%s for request %u, which expects none",
		    imsg_to_str(imsg->hdr.type), c->nc_id);
		return;
	}
	left = c->nc_bodytotal - c->nc_bodylen;
	if (b->chunklen != (left < NOMAD_CHUNK_MAX ? left : NOMAD_CHUNK_MAX)) {
		supervise_violation(w, "malformed %s (chunk length)",
		    imsg_to_str(imsg->hdr.type));
		return;
	}
	memcpy(c->nc_body + c->nc_bodylen, b->chunk, b->chunklen);
	c->nc_bodylen += b->chunklen;
	c->nc_body[c->nc_bodylen] = '\0';
	if (c->nc_bodylen == c->nc_bodytotal)
		nomad_finish(c);
}

/* ------------------------------------------------------------ results */

int
nomad_ok(const struct nomad_result *res)
{
	return res->nr_status >= 200 && res->nr_status <= 299 &&
	    res->nr_error == NULL;
}

/*
 * A dispatched child's job as read from Nomad: its ID when it was
 * dispatched with this idempotency token, else NULL (not read, not
 * found, or another run's child).
 */
const char *
nomad_child_of(const struct nomad_result *res, const char *token)
{
	const char	*tok, *id;

	if (!nomad_ok(res))
		return NULL;
	tok = json_string_value(json_object_get(res->nr_json,
	    "DispatchIdempotencyToken"));
	id = json_string_value(json_object_get(res->nr_json, "ID"));
	if (tok == NULL || id == NULL || strcmp(tok, token) != 0)
		return NULL;
	return id;
}

/*
 * Recognise Nomad's check-and-set refusals of a register.  They are
 * plain fmt.Errorf texts (HTTP 500), so matching the text is the only
 * way; the prefix is a constant of Nomad's API package.
 */
int
nomad_cas_error(const struct nomad_result *res, uint64_t *sent,
    uint64_t *stored)
{
	static const char	 prefix[] = "Enforcing job modify index ";
	const char		*p;
	char			*ep;
	unsigned long long	 a, b;

	*sent = *stored = 0;
	if (res->nr_status == 0 || res->nr_error == NULL ||
	    (p = strstr(res->nr_error, prefix)) == NULL)
		return NOMAD_CAS_NONE;
	p += sizeof(prefix) - 1;
	errno = 0;
	a = strtoull(p, &ep, 10);
	if (ep == p || errno != 0 || strncmp(ep, ": ", 2) != 0)
		return NOMAD_CAS_NONE;
	p = ep + 2;
	*sent = a;
	if (strncmp(p, "job already exists", 18) == 0)
		return NOMAD_CAS_EXISTS;
	if (strncmp(p, "job does not exist", 18) == 0)
		return NOMAD_CAS_MISSING;
	if (strncmp(p, "job exists with conflicting job modify index: ",
	    46) == 0) {
		p += 46;
		errno = 0;
		b = strtoull(p, &ep, 10);
		if (ep == p || errno != 0)
			return NOMAD_CAS_NONE;
		*stored = b;
		return NOMAD_CAS_CONFLICT;
	}
	return NOMAD_CAS_NONE;
}

/*
 * The Meta of a dispatch: each key the parameterized job declares
 * (MetaRequired, MetaOptional) that kv names gets its value; kv holds
 * key and value in turn and ends at a NULL key.
 */
json_t *
nomad_dispatch_meta(const json_t *spec, const char *const *kv)
{
	json_t		*pj, *meta, *k;
	const char	*key, *const *p;
	size_t		 i, l;
	const char	*lists[] = { "MetaRequired", "MetaOptional" };

	meta = json_object();
	pj = json_object_get(spec, "ParameterizedJob");
	for (l = 0; l < 2; l++)
		json_array_foreach(json_object_get(pj, lists[l]), i, k) {
			if ((key = json_string_value(k)) == NULL)
				continue;
			for (p = kv; p[0] != NULL; p += 2)
				if (strcmp(key, p[0]) == 0) {
					json_object_set_new(meta, key,
					    jsonb_str(p[1]));
					break;
				}
		}
	return meta;
}
