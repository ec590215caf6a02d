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
	size_t			 wp_nvers;
	struct web_blob		*wp_html;
	struct web_splices	 wp_sp;
	uint64_t		 wp_used;	/* for the least recently used */
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
		    k->wp_local != (pg->wg_rq.wr_client.wc_peer == WEB_PEER_LOCAL) ||
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
web_kept_store(struct web_page *pg, struct wbuf *b,
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
	for (i = 1; i < pg->wg_ncalls; i++)
		k->wp_vers[i - 1] = pg->wg_calls[i].wk_docver;
	k->wp_html = web_blob_new(b->wb_buf, b->wb_len);
	k->wp_sp = *sp;
	return k;
}

/* Answer the kept page with this session's own text put in. */
static void
web_kept_reply(struct web_page *pg, struct web_kept *k)
{
	json_t		*s = pg->wg_calls[0].wk_json;
	struct web_blob	*bl = k->wp_html;
	struct evbuffer	*out;
	const char	*text;
	struct wbuf	 b;
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
		if (k->wp_sp.sp_kind[i] == WEB_SPLICE_CSRF)
			text = jstr(s, "csrf_token");
		else if ((text = jstr(s, "user")) == NULL)
			text = jstr(s, "actor");
		wbuf_init(&b);
		wbuf_htmlf(&b, "%s", text != NULL ? text : "");
		if (b.wb_err || evbuffer_add(out, b.wb_buf, b.wb_len) == -1)
			fatal("a session's text");
		wbuf_free(&b);
	}
	web_reply_evbuf(&pg->wg_rq, 200, "text/html; charset=utf-8", out);
	web_page_free(pg);
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
web_pages_keep(struct web_page *pg, struct wbuf *b,
    const struct web_splices *sp)
{
	struct web_kept	*k;

	k = web_kept_store(pg, b, sp);
	wbuf_free(b);
	web_kept_reply(pg, k);
}

