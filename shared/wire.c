/*
 * The generic encoder and decoder of the payload layouts (wire.h), and
 * the web channel's layouts.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"

/*
 * Alike on purpose (whole file): wire_put_fields() and wire_get_fields()
 * have one case per kind each, the two directions of msg.h's encoding;
 * and below, as in every wire_*.c, one field table and one check per
 * layout: a table lists its struct's fields in payload order, a check
 * its layout's own rules, so two of the same shape are still two
 * layouts, with nothing to fold.
 */

static void	 wire_put_fields(struct msgw *, const struct wire_field *,
		    size_t, const uint8_t *);
static void	 wire_get_fields(struct msgr *, const struct wire_field *,
		    size_t, uint8_t *);
static void	 wire_check(struct msgr *, const struct wire_layout *,
		    const uint8_t *);

static void
wire_put_fields(struct msgw *m, const struct wire_field *f, size_t n,
    const uint8_t *base)
{
	const void	*p;
	const size_t	*len;
	const uint32_t	*count;
	uint32_t	 i;

	for (; n > 0; f++, n--) {
		p = base + f->wf_off;
		switch (f->wf_kind) {
		case WIRE_U8:
			msg_add_u8(m, *(const uint8_t *)p);
			break;
		case WIRE_U32:
			msg_add_u32(m, *(const uint32_t *)p);
			break;
		case WIRE_I32:
			msg_add_i32(m, *(const int32_t *)p);
			break;
		case WIRE_U64:
			msg_add_u64(m, *(const uint64_t *)p);
			break;
		case WIRE_I64:
			msg_add_i64(m, *(const int64_t *)p);
			break;
		case WIRE_STR:
			msg_add_str(m, *(const char *const *)p);
			break;
		case WIRE_DATA:
			len = (const void *)(base + f->wf_aux);
			msg_add_data(m, *(const void *const *)p, *len);
			break;
		case WIRE_LIST:
			count = p;
			if (*count > f->wf_max) {
				m->err = ERANGE;
				return;
			}
			msg_add_u32(m, *count);
			for (i = 0; i < *count; i++)
				wire_put_fields(m, f->wf_items, f->wf_nitems,
				    base + f->wf_aux + i * f->wf_stride);
			break;
		case WIRE_PART:
			wire_put_fields(m, f->wf_part->wl_fields,
			    f->wf_part->wl_nfields, p);
			break;
		}
	}
}

void
wire_put(struct msgw *m, const struct wire_layout *l, const void *p)
{
	wire_put_fields(m, l->wl_fields, l->wl_nfields, p);
}

/*
 * Every field is read even after a failure: msg_get_*() then zeroes its
 * output, so a caller never sees a field the payload did not hold.
 */
static void
wire_get_fields(struct msgr *r, const struct wire_field *f, size_t n,
    uint8_t *base)
{
	void		*p;
	uint32_t	*count;
	uint32_t	 i;

	for (; n > 0; f++, n--) {
		p = base + f->wf_off;
		switch (f->wf_kind) {
		case WIRE_U8:
			msg_get_u8(r, p);
			break;
		case WIRE_U32:
			msg_get_u32(r, p);
			break;
		case WIRE_I32:
			msg_get_i32(r, p);
			break;
		case WIRE_U64:
			msg_get_u64(r, p);
			break;
		case WIRE_I64:
			msg_get_i64(r, p);
			break;
		case WIRE_STR:
			msg_get_str(r, p, f->wf_max);
			break;
		case WIRE_DATA:
			msg_get_data(r, p, (void *)(base + f->wf_aux),
			    f->wf_max);
			break;
		case WIRE_LIST:
			count = p;
			msg_get_u32(r, count);
			if (*count > f->wf_max)
				msg_fail(r, f->wf_what);
			for (i = 0; i < *count && r->err == 0; i++)
				wire_get_fields(r, f->wf_items, f->wf_nitems,
				    base + f->wf_aux + i * f->wf_stride);
			if (r->err != 0)
				*count = 0;
			break;
		case WIRE_PART:
			wire_get_fields(r, f->wf_part->wl_fields,
			    f->wf_part->wl_nfields, p);
			break;
		}
	}
}

/* A part's checks first, then the layout's own, up to the first failure. */
static void
wire_check(struct msgr *r, const struct wire_layout *l, const uint8_t *base)
{
	size_t	 i;

	for (i = 0; i < l->wl_nfields; i++)
		if (l->wl_fields[i].wf_kind == WIRE_PART)
			wire_check(r, l->wl_fields[i].wf_part,
			    base + l->wl_fields[i].wf_off);
	if (r->err == 0 && l->wl_check != NULL)
		l->wl_check(r, base);
}

int
wire_get(struct msgr *r, const struct wire_layout *l, void *p)
{
	wire_get_fields(r, l->wl_fields, l->wl_nfields, p);
	if (msg_end(r) == -1)
		return -1;
	wire_check(r, l, p);
	return r->err ? -1 : 0;
}

/* n x (str name, str value), as requests and answers carry them. */
static const struct wire_field wire_request_headers[] = {
	WF_STR(web_request, hname[0], WEB_HNAME_MAX),
	WF_STR(web_request, hvalue[0], WEB_HEADER_MAX),
};
static const struct wire_field wire_answer_headers[] = {
	WF_STR(web_answer, hname[0], WEB_HNAME_MAX),
	WF_STR(web_answer, hvalue[0], WEB_HEADER_MAX),
};

static const struct wire_field wire_web_request_fields[] = {
	WF_U32(web_request, peer),
	WF_U32(web_request, uid),
	WF_U32(web_request, gid),
	WF_STR(web_request, remote, WEB_REMOTE_MAX),
	WF_U32(web_request, tls),
	WF_STR(web_request, method, WEB_METHOD_MAX),
	WF_STR(web_request, target, WEB_PATH_MAX),
	WF_STR(web_request, ctype, WEB_HEADER_MAX),
	WF_STRS(web_request, nheaders, WEB_HEADERS_MAX, "too many headers",
	    wire_request_headers),
	WF_DATA(web_request, body, bodylen, WEB_BODY_MAX),
};

static void
wire_web_request_check(struct msgr *r, const void *p)
{
	const struct wire_web_request	*q = p;

	if (q->tls > 1)
		msg_fail(r, "tls flag");
	else if (q->peer != WEB_PEER_LOCAL && q->peer != WEB_PEER_TCP)
		msg_fail(r, "peer kind");
}
WIRE_DEFINE(web_request, wire_web_request_fields, wire_web_request_check)

static const struct wire_field wire_web_answer_fields[] = {
	WF_U32(web_answer, status),
	WF_STR(web_answer, ctype, WEB_CTYPE_MAX),
	WF_STRS(web_answer, nheaders, WEB_HEADERS_MAX, "too many headers",
	    wire_answer_headers),
	WF_DATA(web_answer, body, bodylen, WEBWORKER_MSG_MAX),
};

static void
wire_web_answer_check(struct msgr *r, const void *p)
{
	const struct wire_web_answer	*a = p;
	uint32_t			 i;

	if (a->status < 100 || a->status > 599)
		msg_fail(r, "status");
	else if (*a->ctype == '\0')
		msg_fail(r, "empty content type");
	for (i = 0; i < a->nheaders && r->err == 0; i++)
		if (*a->hname[i] == '\0')
			msg_fail(r, "empty header name");
}
WIRE_DEFINE(web_answer, wire_web_answer_fields, wire_web_answer_check)

static const struct wire_field wire_web_doc_fields[] = {
	WF_U32(web_doc, cls),
	WF_STR(web_doc, target, WEB_PATH_MAX),
	WF_PART(web_doc, answer, &wire_layout_web_answer),
};

static void
wire_web_doc_check(struct msgr *r, const void *p)
{
	const struct wire_web_doc	*d = p;

	if (d->cls >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
	else if (*d->target != '/')
		msg_fail(r, "target");
}
WIRE_DEFINE(web_doc, wire_web_doc_fields, wire_web_doc_check)

static const struct wire_field wire_web_want_fields[] = {
	WF_U32(web_want, cls),
	WF_STR(web_want, target, WEB_PATH_MAX),
};

static void
wire_web_want_check(struct msgr *r, const void *p)
{
	const struct wire_web_want	*w = p;

	if (w->cls >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
}
WIRE_DEFINE(web_want, wire_web_want_fields, wire_web_want_check)

static const struct wire_field wire_web_listen_hosts[] = {
	WF_STR(web_listen, hosts[0], WEB_NAME_MAX),
};

static const struct wire_field wire_web_listen_fields[] = {
	WF_U32(web_listen, kind),
	WF_STR(web_listen, name, WEB_NAME_MAX),
	WF_U32(web_listen, tls),
	WF_DATA(web_listen, cert, certlen, WEB_TLS_PEM_MAX),
	WF_DATA(web_listen, key, keylen, WEB_TLS_PEM_MAX),
	WF_U32(web_listen, bodymax),
	WF_U32(web_listen, hflags),
	WF_STRS(web_listen, nhosts, WEB_HOSTS_MAX, "too many hostnames",
	    wire_web_listen_hosts),
	WF_U32(web_listen, persrc),
};

static void
wire_web_listen_check(struct msgr *r, const void *p)
{
	const struct wire_web_listen	*l = p;

	if (l->kind != WEB_LISTEN_CONTROL && l->kind != WEB_LISTEN_TCP)
		msg_fail(r, "listener kind");
	else if (l->tls > 1 || (l->tls && (l->kind != WEB_LISTEN_TCP ||
	    l->certlen == 0 || l->keylen == 0)) ||
	    (!l->tls && (l->certlen != 0 || l->keylen != 0)))
		msg_fail(r, "tls flag, certificate and key");
	else if (l->bodymax < WEB_BODY_MIN || l->bodymax > WEB_BODY_MAX)
		msg_fail(r, "max-body-size out of range");
	else if (l->persrc < 1 || l->persrc > WEB_CONN_SOURCE_MAX)
		msg_fail(r, "connections per source out of range");
	else if ((l->hflags & ~WEB_HOSTS_IPLITERAL) != 0)
		msg_fail(r, "host flags");
}
WIRE_DEFINE(web_listen, wire_web_listen_fields, wire_web_listen_check)

static const struct wire_field wire_web_seen_entries[] = {
	WF_U32(web_seen_entry, kind),
	WF_STR(web_seen_entry, hash, WEB_HASH_HEX),
	WF_I64(web_seen_entry, at),
};
static const struct wire_field wire_web_seen_codes[] = {
	WF_U32(web_seen_code, status),
	WF_U32(web_seen_code, count),
};

static const struct wire_field wire_web_seen_fields[] = {
	WF_RECS(web_seen, nseen, WEB_SEEN_MAX, "too many entries", seen,
	    wire_web_seen_entries),
	WF_RECS(web_seen, ncodes, WEB_CODES_MAX, "too many statuses", codes,
	    wire_web_seen_codes),
};

/*
 * The entries are checked once the whole payload has decoded: one that
 * is bad and cut short says what cut it short.
 */
static void
wire_web_seen_check(struct msgr *r, const void *p)
{
	const struct wire_web_seen		*s = p;
	const struct wire_web_seen_entry	*e;
	const struct wire_web_seen_code		*c;
	uint32_t				 i;

	for (i = 0; i < s->nseen && r->err == 0; i++) {
		e = &s->seen[i];
		if ((e->kind != WEB_PRIN_SESSION &&
		    e->kind != WEB_PRIN_TOKEN) ||
		    strlen(e->hash) != WEB_HASH_HEX || e->at < 0 ||
		    (e->at == 0 && e->kind != WEB_PRIN_SESSION))
			msg_fail(r, "bad entry");
	}
	for (i = 0; i < s->ncodes && r->err == 0; i++) {
		c = &s->codes[i];
		if (c->status < 100 || c->status > 599 ||
		    c->count > WEB_SEEN_COUNT_MAX)
			msg_fail(r, "bad status count");
	}
}
WIRE_DEFINE(web_seen, wire_web_seen_fields, wire_web_seen_check)
