/*
 * Dashboard pages rendered once and reused (web_dash.c renders them).
 * A page is a function of the client's access class and kind, the
 * page's target, and the documents its calls
 * read (each answer from a document has a version, new whenever the
 * master pushes it); the session's own text, the user name and the CSRF
 * token, is put in at the offsets the rendering left for it.  A page is
 * reused only for a client identified here, in the same class, whose
 * calls read the same versions: what the master rendered for that class,
 * so nothing the ACL would refuse it.  A new identity table drops them.
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "web.h"

#define WEB_PAGES_KEPT		32

struct web_kept {
	char			*wp_target;	/* NULL: a free slot */
	uint32_t		 wp_class;
	int			 wp_kind;
	int			 wp_local;
	int			 wp_what;
	uint64_t		 wp_vers[WEB_CALLS_MAX];
	uint32_t		 wp_doccls[WEB_CALLS_MAX];
	char			*wp_doctarget[WEB_CALLS_MAX];
	size_t			 wp_nvers;
	struct web_blob		*wp_html;
	struct web_splices	 wp_sp;
	uint64_t		 wp_used;	/* for the least recently
						   used */
};

static struct web_kept	 web_kept[WEB_PAGES_KEPT];
static uint64_t		 web_kept_clock;

struct web_blob *
web_blob_new(const void *data, size_t len)
{
	struct web_blob	*bl;

	if ((bl = malloc(sizeof(*bl) + len)) == NULL)
		fatal("malloc");
	bl->bl_refs = 1;
	bl->bl_len = len;
	if (len > 0)
		memcpy(bl->bl_data, data, len);
	return bl;
}

void
web_blob_unref(struct web_blob *bl)
{
	if (bl != NULL && --bl->bl_refs == 0)
		free(bl);
}

/* evbuffer_add_reference's cleanup: an answer is done with the bytes. */
static void
web_blob_sent(const void *data, size_t len, void *arg)
{
	web_blob_unref(arg);
}

void
web_blob_add(struct evbuffer *buf, struct web_blob *bl, size_t off,
    size_t len)
{
	if (len == 0)
		return;
	bl->bl_refs++;
	if (evbuffer_add_reference(buf, bl->bl_data + off, len, web_blob_sent,
	    bl) == -1)
		fatal("evbuffer_add_reference");
}

static void
web_kept_free(struct web_kept *k)
{
	size_t	 i;

	for (i = 0; i < k->wp_nvers; i++)
		free(k->wp_doctarget[i]);
	free(k->wp_target);
	web_blob_unref(k->wp_html);
	memset(k, 0, sizeof(*k));
}

void
web_pages_forget(void)
{
	size_t	 i;

	for (i = 0; i < WEB_PAGES_KEPT; i++)
		web_kept_free(&web_kept[i]);
}

/* Could this page's rendering be reused?  Every call read here. */
static int
web_kept_ok(struct web_page *pg)
{
	size_t	 i;

	if (!pg->wg_classknown || pg->wg_ncalls < 2 ||
	    pg->wg_calls[0].wk_status != 200 ||
	    !json_is_object(pg->wg_calls[0].wk_json))
		return 0;
	for (i = 1; i < pg->wg_ncalls; i++)
		if (pg->wg_calls[i].wk_docver == 0 ||
		    pg->wg_calls[i].wk_doctarget == NULL ||
		    pg->wg_calls[i].wk_ncookies > 0)
			return 0;
	return 1;
}

static struct web_kept *
web_kept_find(struct web_page *pg)
{
	struct web_kept	*k;
	size_t		 i;

	for (i = 0; i < WEB_PAGES_KEPT; i++) {
		k = &web_kept[i];
		if (k->wp_target == NULL || k->wp_class != pg->wg_class ||
		    k->wp_kind != pg->wg_kind || k->wp_what != pg->wg_what ||
		    k->wp_local !=
		    (pg->wg_rq.wr_client.wc_peer == WEB_PEER_LOCAL) ||
		    strcmp(k->wp_target, pg->wg_rq.wr_target) != 0)
			continue;
		return k;
	}
	return NULL;
}

static int
web_kept_current(struct web_kept *k, struct web_page *pg)
{
	size_t	 i;

	if (k->wp_nvers != pg->wg_ncalls - 1)
		return 0;
	for (i = 1; i < pg->wg_ncalls; i++)
		if (k->wp_vers[i - 1] != pg->wg_calls[i].wk_docver)
			return 0;
	return 1;
}

/* Keep b (taken) as pg's page; the slot, or NULL if it is not kept. */
static struct web_kept *
web_kept_store(struct web_page *pg, struct growbuf *b,
    const struct web_splices *sp)
{
	struct web_kept	*k, *old = NULL;
	size_t		 i;

	if ((k = web_kept_find(pg)) == NULL)
		for (i = 0; i < WEB_PAGES_KEPT; i++) {
			k = &web_kept[i];
			if (k->wp_target == NULL)
				break;
			if (old == NULL || k->wp_used < old->wp_used)
				old = k;
			k = NULL;
		}
	if (k == NULL)
		k = old;
	web_kept_free(k);
	if ((k->wp_target = strdup(pg->wg_rq.wr_target)) == NULL)
		fatal("strdup");
	k->wp_class = pg->wg_class;
	k->wp_kind = pg->wg_kind;
	k->wp_local = (pg->wg_rq.wr_client.wc_peer == WEB_PEER_LOCAL);
	k->wp_what = pg->wg_what;
	k->wp_nvers = pg->wg_ncalls - 1;
	for (i = 1; i < pg->wg_ncalls; i++) {
		k->wp_vers[i - 1] = pg->wg_calls[i].wk_docver;
		k->wp_doccls[i - 1] = pg->wg_calls[i].wk_doccls;
		/* Taken from the call. */
		k->wp_doctarget[i - 1] = pg->wg_calls[i].wk_doctarget;
		pg->wg_calls[i].wk_doctarget = NULL;
	}
	k->wp_html = web_blob_new(b->gb_buf, b->gb_len);
	k->wp_sp = *sp;
	return k;
}

/* Answer rq with the kept page, who and csrf put in (HTML-escaped). */
static void
web_kept_send(struct web_rq *rq, struct web_kept *k, const char *who,
    const char *csrf)
{
	struct web_blob	*bl = k->wp_html;
	struct evbuffer	*out;
	const char	*text;
	struct growbuf	 b;
	size_t		 i, at = 0, n;

	k->wp_used = ++web_kept_clock;
	if ((out = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	/* The page's bytes by reference; the session's own text copied. */
	for (i = 0; i <= k->wp_sp.sp_n; i++) {
		n = (i < k->wp_sp.sp_n ? k->wp_sp.sp_off[i] : bl->bl_len) - at;
		web_blob_add(out, bl, at, n);
		if (i == k->wp_sp.sp_n)
			break;
		at = k->wp_sp.sp_off[i];
		text = k->wp_sp.sp_kind[i] == WEB_SPLICE_CSRF ? csrf : who;
		growbuf_init(&b);
		wbuf_html(&b, text != NULL ? text : "");
		if (b.gb_err || evbuffer_add(out, b.gb_buf, b.gb_len) == -1)
			fatal("a session's text");
		growbuf_free(&b);
	}
	web_reply_evbuf(rq, 200, "text/html; charset=utf-8", out);
}

/* Answer the kept page with this session's own text put in. */
static void
web_kept_reply(struct web_page *pg, struct web_kept *k)
{
	json_t		*s = pg->wg_calls[0].wk_json;
	const char	*who;

	if ((who = jstr(s, "user")) == NULL)
		who = jstr(s, "actor");
	web_kept_send(&pg->wg_rq, k, who, jstr(s, "csrf_token"));
	web_page_free(pg);
}

/*
 * A GET of a page kept for this client's class and kind whose documents
 * are still the versions it was rendered from: answered as web_page_get()
 * would answer it after reading the session and those documents (and
 * counted so), without the page's calls.  0: not here; take the long way.
 */
int
web_pages_answer(struct web_rq *rq)
{
	struct web_ident	 id;
	struct web_kept		*k = NULL;
	size_t			 i;
	int			 local = rq->wr_client.wc_peer ==
	    WEB_PEER_LOCAL;

	if (!web_auth_ready())
		return 0;
	for (i = 0; i < WEB_PAGES_KEPT && k == NULL; i++)
		if (web_kept[i].wp_target != NULL &&
		    strcmp(web_kept[i].wp_target, rq->wr_target) == 0)
			k = &web_kept[i];
	if (k == NULL)
		return 0;
	/* A bad credential is answered the long way, which ends it. */
	if (web_identify(rq, &id) == -1 || id.wi_clear) {
		web_ident_clear(&id);
		return 0;
	}
	for (k = NULL, i = 0; i < WEB_PAGES_KEPT && k == NULL; i++)
		if (web_kept[i].wp_target != NULL &&
		    web_kept[i].wp_class == id.wi_class &&
		    web_kept[i].wp_kind == (int)id.wi_kind &&
		    web_kept[i].wp_local == local &&
		    strcmp(web_kept[i].wp_target, rq->wr_target) == 0)
			k = &web_kept[i];
	for (i = 0; k != NULL && i < k->wp_nvers; i++)
		if (!web_docs_current(k->wp_doccls[i], k->wp_doctarget[i],
		    k->wp_vers[i]))
			k = NULL;
	if (k == NULL) {
		web_ident_clear(&id);
		return 0;
	}
	/* The session's read and each document's, as the long way counts. */
	for (i = 0; i <= k->wp_nvers; i++)
		web_count(200);
	web_kept_send(rq, k, id.wi_actor, id.wi_kind == WEB_ID_USER ?
	    id.wi_csrf : "");
	web_ident_clear(&id);
	return 1;
}

int
web_pages_reuse(struct web_page *pg, struct web_splices *sp)
{
	struct web_kept	*k;

	if (!web_kept_ok(pg))
		return -1;
	if ((k = web_kept_find(pg)) != NULL && web_kept_current(k, pg)) {
		web_kept_reply(pg, k);
		return 1;
	}
	memset(sp, 0, sizeof(*sp));
	return 0;
}

void
web_pages_keep(struct web_page *pg, struct growbuf *b,
    const struct web_splices *sp)
{
	struct web_kept	*k;

	k = web_kept_store(pg, b, sp);
	growbuf_free(b);
	web_kept_reply(pg, k);
}

