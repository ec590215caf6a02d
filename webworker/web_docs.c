/*
 * Read documents (shared/nops.h, "Pushed reads"): the master's whole
 * answer to "GET target" for an access class, kept here and answered
 * from memory.  The first read of one asks the master (IMSG_WEB_WANT)
 * and waits; the master answers and pushes it again each time it
 * changes, until we say we no longer want it (IMSG_WEB_UNWANT).  So a
 * document here is always the master's latest, and a client's write,
 * whose changes the master pushes before it answers the write, is seen
 * by the client's next read.  A document the master marks stale
 * (IMSG_WEB_STALE: the audit log after a login, not rendered) loses its
 * answer; its next read sends WANT again and waits for the new one.
 *
 * Bounds: WEB_DOCS_MAX documents and WEB_DOCS_BYTES of bodies; past
 * them the least recently read one that nobody waits for goes.  One not
 * read for WEB_DOC_IDLE goes too.  A wait the master does not answer in
 * WEB_DOC_WAIT fails.
 *
 * Who waits: a client's request (kept until it is answered: evhttp
 * keeps a request whose client left until we answer it, then frees it)
 * or a dashboard page's call (the page may go first: web_docs_cancel).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/http.h>
#include <jansson.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "wire.h"
#include "web.h"

#define WEB_DOCS_BYTES		(64 * 1024 * 1024)
#define WEB_DOC_IDLE		120	/* s without a read: dropped */
#define WEB_DOC_WAIT		15	/* s for the master to answer */
#define WEB_DOC_SWEEP		10	/* s between idle sweeps */
#define WEB_SESSION_PATH	"/api/v1/session"

/* A request or a page's call waiting for a document. */
struct web_waiter {
	TAILQ_ENTRY(web_waiter)	 ww_entry;
	struct web_doc		*ww_doc;	/* NULL: being answered */
	struct web_rq		*ww_rq;		/* a client's request, or */
	struct web_page		*ww_page;	/* a page's call */
	size_t			 ww_slot;
	int			 ww_clear;	/* end the session cookie */
};
TAILQ_HEAD(web_waiters, web_waiter);

struct web_doc {
	RB_ENTRY(web_doc)	 wd_node;
	TAILQ_ENTRY(web_doc)	 wd_lru;	/* least recently read first */
	uint32_t		 wd_class;
	char			*wd_target;
	int			 wd_have;	/* the master answered */
	int			 wd_stale;	/* WANT again when read */
	int			 wd_status;
	char			*wd_ctype;
	size_t			 wd_nh;
	char			*wd_hname[WEB_HEADERS_MAX];
	char			*wd_hvalue[WEB_HEADERS_MAX];
	struct web_blob		*wd_body;	/* sent by reference */
	size_t			 wd_len;
	char			 wd_clen[24];	/* its Content-Length */
	json_t			*wd_json;	/* the body parsed, for pages */
	uint64_t		 wd_version;	/* new with every answer */
	time_t			 wd_read;	/* monotonic */
	time_t			 wd_wanted;	/* WANT sent */
	struct web_waiters	 wd_waiters;
	size_t			 wd_nwaiters;
};
RB_HEAD(web_docs, web_doc);
TAILQ_HEAD(web_doclru, web_doc);

static struct web_docs		 web_docs = RB_INITIALIZER(&web_docs);
static struct web_doclru	 web_lru = TAILQ_HEAD_INITIALIZER(web_lru);
static size_t			 web_ndocs;
static size_t			 web_bytes;
static size_t			 web_nwaiting;
static struct event		*web_docs_ev;
static time_t			 web_next_sweep;
static uint64_t			 web_doc_versions;	/* the last given */

/*
 * Alike on purpose: webpub_sub_cmp and its tree (master/webpub.c).  The
 * order is one function, web_doc_key_cmp (shared/webdoc.c); what is left
 * is each process's own struct and the RB macros that name it.
 */
int	 web_doc_cmp(struct web_doc *, struct web_doc *);
RB_PROTOTYPE(web_docs, web_doc, wd_node, web_doc_cmp);

int
web_doc_cmp(struct web_doc *a, struct web_doc *b)
{
	return web_doc_key_cmp(a->wd_class, a->wd_target, b->wd_class,
	    b->wd_target);
}
RB_GENERATE(web_docs, web_doc, wd_node, web_doc_cmp);

static void
web_want_send(uint32_t type, uint32_t cls, const char *target)
{
	struct wire_web_want	 w = { cls, target };
	struct msgw		 m;

	msg_init(&m);
	wire_put_web_want(&m, &w);
	web_master_send(&m, type);
}

static struct web_doc *
web_doc_find(uint32_t cls, const char *target)
{
	struct web_doc	*d = RB_ROOT(&web_docs);
	int		 c;

	/* web_doc_cmp's order, walked by hand: a key would drop const. */
	while (d != NULL) {
		if (cls != d->wd_class)
			c = cls < d->wd_class ? -1 : 1;
		else
			c = strcmp(target, d->wd_target);
		if (c == 0)
			return d;
		d = c < 0 ? RB_LEFT(d, wd_node) : RB_RIGHT(d, wd_node);
	}
	return NULL;
}

/* Alike on purpose: detect_finish (engine_detect.c) clears other fields. */
static void
web_doc_content_free(struct web_doc *d)
{
	size_t	 i;

	for (i = 0; i < d->wd_nh; i++) {
		free(d->wd_hname[i]);
		free(d->wd_hvalue[i]);
	}
	d->wd_nh = 0;
	free(d->wd_ctype);
	d->wd_ctype = NULL;
	/* Answers still being written keep their reference. */
	web_blob_unref(d->wd_body);
	d->wd_body = NULL;
	json_decref(d->wd_json);
	d->wd_json = NULL;
	web_bytes -= d->wd_len;
	d->wd_len = 0;
	d->wd_have = 0;
}

/*
 * The body of d parsed, once: a page renders from it again and again
 * (nothing changes a call's JSON).  NULL if it is not JSON.
 */
static json_t *
web_doc_json(struct web_doc *d)
{
	if (d->wd_json == NULL && web_is_json(d->wd_ctype) && d->wd_len > 0)
		d->wd_json = json_loadb(d->wd_body->bl_data, d->wd_len, 0,
		    NULL);
	return d->wd_json;
}

/* Take the waiters off d, onto list, to answer once d may be gone. */
static void
web_doc_detach(struct web_doc *d, struct web_waiters *list)
{
	struct web_waiter	*ww;

	while ((ww = TAILQ_FIRST(&d->wd_waiters)) != NULL) {
		TAILQ_REMOVE(&d->wd_waiters, ww, ww_entry);
		ww->ww_doc = NULL;
		TAILQ_INSERT_TAIL(list, ww, ww_entry);
	}
	web_nwaiting -= d->wd_nwaiters;
	d->wd_nwaiters = 0;
}

/* Free d (its waiters detached first); unwant: tell the master. */
static void
web_doc_drop(struct web_doc *d, int unwant)
{
	if (d->wd_nwaiters != 0)
		fatalx("waiters left");
	if (unwant)
		web_want_send(IMSG_WEB_UNWANT, d->wd_class, d->wd_target);
	RB_REMOVE(web_docs, &web_docs, d);
	TAILQ_REMOVE(&web_lru, d, wd_lru);
	web_ndocs--;
	web_doc_content_free(d);
	free(d->wd_target);
	free(d);
}

static void
web_doc_read(struct web_doc *d)
{
	d->wd_read = web_now();
	TAILQ_REMOVE(&web_lru, d, wd_lru);
	TAILQ_INSERT_TAIL(&web_lru, d, wd_lru);
}

/* Drop the least recently read document nobody waits for; -1 if none. */
static int
web_doc_evict(const struct web_doc *keep)
{
	struct web_doc	*d;

	TAILQ_FOREACH(d, &web_lru, wd_lru)
		/* cppcheck-suppress nullPointerRedundantCheck ; d != NULL in
		   the loop */
		if (d->wd_nwaiters == 0 && d != keep) {
			web_doc_drop(d, 1);
			return 0;
		}
	return -1;
}

/*
 * Answer a request or a page's call from here: the answer plus, for a
 * client with a dead session cookie, the header that ends it.  Counted
 * for the master's metrics.
 */
static void
web_local_answer(struct web_rq *rq, struct web_page *pg, size_t slot,
    int clear, int status, const char *ctype, size_t nh,
    const char *const *hname, const char *const *hvalue, const void *body,
    size_t len, json_t *json)
{
	const char	*names[WEB_HEADERS_MAX + 1];
	const char	*values[WEB_HEADERS_MAX + 1];
	size_t		 i;

	for (i = 0; i < nh; i++) {
		names[i] = hname[i];
		values[i] = hvalue[i];
	}
	web_count(status);
	if (rq != NULL) {
		if (clear)
			web_add_header(rq, "Set-Cookie", web_clear_cookie(rq));
		for (i = 0; i < nh; i++)
			web_add_header(rq, names[i], values[i]);
		web_reply(rq, status, ctype, body, len);
		return;
	}
	if (clear) {
		names[nh] = "Set-Cookie";
		values[nh++] = web_clear_cookie(&pg->wg_rq);
	}
	web_call_answer(pg, slot, status, ctype, names, values, nh, body, len,
	    json);
}

/* An error of ours, as the master words them: {"error": {...}}. */
static void
web_local_error(struct web_rq *rq, struct web_page *pg, size_t slot,
    int clear, int status, const char *code, const char *message,
    const char *hname, const char *hvalue)
{
	json_t	*j;
	char	*s;

	if ((j = json_pack("{s:{s:s,s:s}}", "error", "code", code,
	    "message", message)) == NULL ||
	    (s = json_dumps(j, JSON_COMPACT)) == NULL)
		fatalx("json");
	json_decref(j);
	web_local_answer(rq, pg, slot, clear, status, "application/json",
	    hname != NULL ? 1 : 0, &hname, &hvalue, s, strlen(s), NULL);
	free(s);
}

/* Answer each waiter of list (taken off their document) and free it. */
static void
web_waiters_answer(struct web_waiters *list, int status, const char *ctype,
    size_t nh, const char *const *hname, const char *const *hvalue,
    const void *body, size_t len, uint64_t version)
{
	struct web_waiter	*ww;

	while ((ww = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, ww, ww_entry);
		if (ww->ww_page != NULL)
			ww->ww_page->wg_calls[ww->ww_slot].wk_waiter = NULL;
		if (ww->ww_rq != NULL) {
			web_local_answer(ww->ww_rq, NULL, 0, ww->ww_clear,
			    status, ctype, nh, hname, hvalue, body, len, NULL);
			free(ww->ww_rq);
		} else if (ww->ww_page != NULL) {
			ww->ww_page->wg_calls[ww->ww_slot].wk_docver = version;
			/* This may end the page, or start other calls. */
			web_local_answer(NULL, ww->ww_page, ww->ww_slot,
			    ww->ww_clear, status, ctype, nh, hname, hvalue,
			    body, len, NULL);
		}
		free(ww);
	}
}

static void
web_waiters_error(struct web_waiters *list, int status, const char *code,
    const char *message)
{
	struct web_waiter	*ww;
	const char		*hname = "Retry-After", *hvalue = "1";

	while ((ww = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, ww, ww_entry);
		if (ww->ww_page != NULL)
			ww->ww_page->wg_calls[ww->ww_slot].wk_waiter = NULL;
		if (ww->ww_rq != NULL || ww->ww_page != NULL)
			web_local_error(ww->ww_rq, ww->ww_page, ww->ww_slot,
			    ww->ww_clear, status, code, message,
			    status == 503 && strcmp(code, "queue_full") == 0 ?
			    hname : NULL, hvalue);
		free(ww->ww_rq);
		free(ww);
	}
}

void
web_docs_cancel(struct web_waiter *ww)
{
	struct web_doc	*d = ww->ww_doc;

	if (d == NULL) {
		/* On a list being answered: skipped, freed there. */
		ww->ww_page = NULL;
		return;
	}
	TAILQ_REMOVE(&d->wd_waiters, ww, ww_entry);
	d->wd_nwaiters--;
	web_nwaiting--;
	free(ww);
}

size_t
web_docs_waiting(void)
{
	return web_nwaiting;
}

/* The session probe: who the client of who is, answered from memory. */
static void
web_docs_session(struct web_rq *who, struct web_rq *rq, struct web_page *pg,
    size_t slot)
{
	struct web_ident	 id;
	json_t			*o;
	char			*s;
	size_t			 len;

	/* Public: a bad credential shows as nobody's view. */
	web_identify(who, &id);
	o = web_session_obj(&id);
	if (rq != NULL) {
		if ((s = json_dumps(o, JSON_COMPACT)) == NULL)
			fatalx("json_dumps");
		len = strlen(s);
		web_local_answer(rq, NULL, 0, id.wi_clear, 200,
		    "application/json", 0, NULL, NULL, s, len, NULL);
		freezero(s, len);
	} else {
		/* The page may be one rendered for this class. */
		pg->wg_classknown = 1;
		pg->wg_class = id.wi_class;
		pg->wg_kind = id.wi_kind;
		/* A page's call takes the object as it is. */
		web_local_answer(NULL, pg, slot, id.wi_clear, 200,
		    "application/json", 0, NULL, NULL, NULL, 0, o);
	}
	json_decref(o);
	web_ident_clear(&id);
}

/*
 * The document of class cls for target, asked of the master if it is
 * new; NULL (answered 503) when no more can be kept.
 */
static struct web_doc *
web_doc_open(uint32_t cls, const char *target, struct web_rq *rq,
    struct web_page *pg, size_t slot, int clear)
{
	struct web_doc	*d;

	if ((d = web_doc_find(cls, target)) != NULL) {
		if (d->wd_stale) {
			d->wd_stale = 0;
			d->wd_wanted = web_now();
			web_want_send(IMSG_WEB_WANT, cls, target);
		}
		return d;
	}
	if (web_ndocs >= WEB_DOCS_MAX && web_doc_evict(NULL) == -1) {
		web_local_error(rq, pg, slot, clear, 503, "queue_full",
		    "too many documents being read; try again",
		    "Retry-After", "1");
		return NULL;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL ||
	    (d->wd_target = strdup(target)) == NULL)
		fatal(NULL);
	d->wd_class = cls;
	TAILQ_INIT(&d->wd_waiters);
	RB_INSERT(web_docs, &web_docs, d);
	TAILQ_INSERT_TAIL(&web_lru, d, wd_lru);
	web_ndocs++;
	d->wd_wanted = web_now();
	web_want_send(IMSG_WEB_WANT, cls, target);
	return d;
}

/* Answer rq or the page's call from d once the master pushes it. */
static void
web_doc_wait(struct web_doc *d, struct web_rq *rq, struct web_page *pg,
    size_t slot, int clear)
{
	struct web_waiter	*ww;

	if (rq == NULL && pg == NULL)
		fatalx("neither a request nor a page to answer");
	if ((ww = calloc(1, sizeof(*ww))) == NULL)
		fatal("calloc");
	ww->ww_doc = d;
	ww->ww_clear = clear;
	if (rq != NULL) {
		/* The caller's copy lives on its stack. */
		if ((ww->ww_rq = malloc(sizeof(*ww->ww_rq))) == NULL)
			fatal("malloc");
		*ww->ww_rq = *rq;
	} else {
		ww->ww_page = pg;
		ww->ww_slot = slot;
		pg->wg_calls[slot].wk_waiter = ww;
	}
	TAILQ_INSERT_TAIL(&d->wd_waiters, ww, ww_entry);
	d->wd_nwaiters++;
	web_nwaiting++;
}

/*
 * GET target for the client of who: a session probe or a document,
 * answered to rq (a client's request, copied if it must wait) or to a
 * page's call.  0 if it is neither: the master's.
 */
static int
web_docs_get(struct web_rq *who, struct web_rq *rq, struct web_page *pg,
    size_t slot, const char *target)
{
	struct web_ident	 id;
	struct web_doc		*d;
	char			 path[WEB_PATH_MAX + 1];
	int			 route, bad, clear;
	uint32_t		 cls;

	if (!web_auth_ready() || strlen(target) > WEB_PATH_MAX)
		return 0;
	strlcpy(path, target, sizeof(path));
	path[strcspn(path, "?")] = '\0';
	if (strcmp(path, WEB_SESSION_PATH) == 0) {
		web_docs_session(who, rq, pg, slot);
		return 1;
	}
	if ((route = web_doc_route(path)) == WEB_DOC_NO)
		return 0;

	/* Public documents are everyone's, but a dead cookie still ends. */
	bad = web_identify(who, &id) == -1;
	clear = id.wi_clear;
	cls = id.wi_class;
	if (route == WEB_DOC_READ && (bad || id.wi_kind == WEB_ID_NONE)) {
		log_debug("GET %s from %s: 401 (%s)", path,
		    who->wr_client.wc_remote, id.wi_why != NULL ? id.wi_why :
		    "no credential");
		web_local_error(rq, pg, slot, clear, 401, "unauthorized",
		    id.wi_why != NULL ? id.wi_why : "authentication required: "
		    "log in, or send \"Authorization: Bearer <token>\"",
		    "WWW-Authenticate", "Bearer realm=\"nops\"");
		web_ident_clear(&id);
		return 1;
	}
	web_ident_clear(&id);
	if (route == WEB_DOC_PUBLIC)
		cls = WEB_CLASS_NONE;

	if ((d = web_doc_open(cls, target, rq, pg, slot, clear)) == NULL)
		return 1;
	web_doc_read(d);
	if (pg != NULL) {
		/* What a kept page checks before it is answered again. */
		pg->wg_calls[slot].wk_doccls = cls;
		free(pg->wg_calls[slot].wk_doctarget);
		if ((pg->wg_calls[slot].wk_doctarget = strdup(target)) == NULL)
			fatal("strdup");
	}
	if (d->wd_have && rq != NULL && !clear) {
		/* The common read: prebuilt, nothing copied. */
		web_count(d->wd_status);
		web_reply_blob(rq, d->wd_status, d->wd_ctype, d->wd_nh,
		    (const char *const *)d->wd_hname,
		    (const char *const *)d->wd_hvalue, d->wd_clen, d->wd_body);
	} else if (d->wd_have) {
		if (pg != NULL)
			pg->wg_calls[slot].wk_docver = d->wd_version;
		web_local_answer(rq, pg, slot, clear, d->wd_status, d->wd_ctype,
		    d->wd_nh, (const char *const *)d->wd_hname,
		    (const char *const *)d->wd_hvalue,
		    d->wd_body != NULL ? d->wd_body->bl_data : NULL, d->wd_len,
		    pg != NULL ? web_doc_json(d) : NULL);
	} else
		web_doc_wait(d, rq, pg, slot, clear);
	return 1;
}

int
web_docs_current(uint32_t cls, const char *target, uint64_t ver)
{
	struct web_doc	*d;

	if ((d = web_doc_find(cls, target)) == NULL || !d->wd_have ||
	    d->wd_version != ver)
		return 0;
	web_doc_read(d);
	return 1;
}

int
web_docs_request(struct web_rq *rq)
{
	if (strcmp(rq->wr_method, "GET") != 0)
		return 0;
	return web_docs_get(rq, rq, NULL, 0, rq->wr_target);
}

int
web_docs_call(struct web_page *pg, size_t slot, const char *target)
{
	return web_docs_get(&pg->wg_rq, NULL, pg, slot, target);
}

void
web_docs_dispatch(struct imsg *imsg, const union imsg_payload *u)
{
	const struct wire_web_doc	*doc = &u->web_doc;
	const struct wire_web_answer	*a = &doc->answer;
	struct web_doc			*d;
	struct web_waiters		 list = TAILQ_HEAD_INITIALIZER(list);
	uint32_t			 i;

	if ((d = web_doc_find(doc->cls, doc->target)) == NULL) {
		/*
		 * Sent before our UNWANT reached the master, or wanted under
		 * the old identity table: make sure it stops.
		 */
		log_debug("document %u %s: not wanted", doc->cls, doc->target);
		web_want_send(IMSG_WEB_UNWANT, doc->cls, doc->target);
		return;
	}
	web_doc_content_free(d);
	d->wd_stale = 0;
	if ((d->wd_ctype = strdup(a->ctype)) == NULL)
		fatal("strdup");
	for (i = 0; i < a->nheaders; i++)
		if ((d->wd_hname[i] = strdup(a->hname[i])) == NULL ||
		    (d->wd_hvalue[i] = strdup(a->hvalue[i])) == NULL)
			fatal("strdup");
	d->wd_nh = a->nheaders;
	if (a->bodylen > 0)
		d->wd_body = web_blob_new(a->body, a->bodylen);
	d->wd_len = a->bodylen;
	(void)snprintf(d->wd_clen, sizeof(d->wd_clen), "%zu", a->bodylen);
	d->wd_status = (int)a->status;
	d->wd_version = ++web_doc_versions;
	d->wd_have = 1;
	web_bytes += a->bodylen;
	while (web_bytes > WEB_DOCS_BYTES && web_doc_evict(d) == 0)
		;
	if (d->wd_nwaiters == 0)
		return;
	web_doc_read(d);
	/* Answered from the message: an answer may start calls that evict d. */
	web_doc_detach(d, &list);
	web_waiters_answer(&list, (int)a->status, a->ctype, a->nheaders,
	    a->hname, a->hvalue, a->body, a->bodylen, d->wd_version);
}

void
web_docs_stale(struct imsg *imsg, const union imsg_payload *u)
{
	struct web_doc			*d;
	const struct wire_web_want	*w = &u->web_want;

	/* Gone already (UNWANT on its way), or waited for: nothing held. */
	if ((d = web_doc_find(w->cls, w->target)) == NULL || !d->wd_have)
		return;
	web_doc_content_free(d);
	d->wd_stale = 1;
}

void
web_docs_reset(void)
{
	struct web_waiters	 list = TAILQ_HEAD_INITIALIZER(list);
	struct web_doc		*d;

	while ((d = TAILQ_FIRST(&web_lru)) != NULL) {
		web_doc_detach(d, &list);
		web_doc_drop(d, 0);
	}
	web_pages_forget();
	web_waiters_error(&list, 503, "queue_full", "the configuration "
	    "changed; try again");
}

/* The first document whose master is late, or NULL. */
static struct web_doc *
web_doc_late(time_t now)
{
	struct web_doc	*d;

	TAILQ_FOREACH(d, &web_lru, wd_lru)
		if (!d->wd_have && !d->wd_stale &&
		    now - d->wd_wanted >= WEB_DOC_WAIT)
			return d;
	return NULL;
}

static void
web_docs_sweep(evutil_socket_t fd, short event, void *arg)
{
	struct web_waiters	 list = TAILQ_HEAD_INITIALIZER(list);
	struct web_doc		*d, *tmp;
	time_t			 now = web_now();

	/* One at a time: answering may change the documents. */
	while ((d = web_doc_late(now)) != NULL) {
		log_warnx("document %u %s: the master did not answer in %d s",
		    d->wd_class, d->wd_target, WEB_DOC_WAIT);
		web_doc_detach(d, &list);
		web_doc_drop(d, 1);
		web_waiters_error(&list, 503, "runtime_error",
		    "the master did not answer in time");
	}
	if (now < web_next_sweep)
		return;
	web_next_sweep = now + WEB_DOC_SWEEP;
	TAILQ_FOREACH_SAFE(d, &web_lru, wd_lru, tmp)
		if (d->wd_nwaiters == 0 && now - d->wd_read >= WEB_DOC_IDLE)
			web_doc_drop(d, 1);
}

void
web_docs_init(void)
{
	/* Each second for late answers; idle documents every WEB_DOC_SWEEP. */
	web_docs_ev = web_every(1, web_docs_sweep);
	web_next_sweep = web_now() + WEB_DOC_SWEEP;
}
