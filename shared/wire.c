/*
 * Encoders and decoders of the message payloads (wire.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"

/* n x (str name, str value), as requests and answers carry them. */
static void
wire_put_headers(struct msgw *m, uint32_t n, const char *const *name,
    const char *const *value)
{
	uint32_t	 i;

	msg_add_u32(m, n);
	for (i = 0; i < n; i++) {
		msg_add_str(m, name[i]);
		msg_add_str(m, value[i]);
	}
}

static void
wire_get_headers(struct msgr *r, uint32_t *n, const char **name,
    const char **value)
{
	uint32_t	 i;

	*n = 0;
	msg_get_u32(r, n);
	if (*n > WEB_HEADERS_MAX)
		msg_fail(r, "too many headers");
	for (i = 0; i < *n && r->err == 0; i++) {
		msg_get_str(r, &name[i], WEB_HNAME_MAX);
		msg_get_str(r, &value[i], WEB_HEADER_MAX);
	}
	if (r->err != 0)
		*n = 0;
}

/* Alike on purpose: each wire_*.c coder walks wire.h in order. */
void
wire_put_web_request(struct msgw *m, const struct wire_web_request *q)
{
	msg_add_u32(m, q->peer);
	msg_add_u32(m, q->uid);
	msg_add_u32(m, q->gid);
	msg_add_str(m, q->remote);
	msg_add_u32(m, q->tls);
	msg_add_str(m, q->method);
	msg_add_str(m, q->target);
	msg_add_str(m, q->ctype);
	wire_put_headers(m, q->nheaders, q->hname, q->hvalue);
	msg_add_data(m, q->body, q->bodylen);
}

int
wire_get_web_request(struct msgr *r, struct wire_web_request *q)
{
	msg_get_u32(r, &q->peer);
	msg_get_u32(r, &q->uid);
	msg_get_u32(r, &q->gid);
	msg_get_str(r, &q->remote, WEB_REMOTE_MAX);
	msg_get_u32(r, &q->tls);
	msg_get_str(r, &q->method, WEB_METHOD_MAX);
	msg_get_str(r, &q->target, WEB_PATH_MAX);
	msg_get_str(r, &q->ctype, WEB_HEADER_MAX);
	wire_get_headers(r, &q->nheaders, q->hname, q->hvalue);
	msg_get_data(r, &q->body, &q->bodylen, WEB_BODY_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (q->tls > 1)
		msg_fail(r, "tls flag");
	else if (q->peer != WEB_PEER_LOCAL && q->peer != WEB_PEER_TCP)
		msg_fail(r, "peer kind");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire.h in order. */
void
wire_put_web_answer(struct msgw *m, const struct wire_web_answer *a)
{
	msg_add_u32(m, a->status);
	msg_add_str(m, a->ctype);
	wire_put_headers(m, a->nheaders, a->hname, a->hvalue);
	msg_add_data(m, a->body, a->bodylen);
}

int
wire_get_web_answer(struct msgr *r, struct wire_web_answer *a)
{
	uint32_t	 i;

	msg_get_u32(r, &a->status);
	msg_get_str(r, &a->ctype, WEB_CTYPE_MAX);
	wire_get_headers(r, &a->nheaders, a->hname, a->hvalue);
	msg_get_data(r, &a->body, &a->bodylen, WEBWORKER_MSG_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (a->status < 100 || a->status > 599)
		msg_fail(r, "status");
	else if (*a->ctype == '\0')
		msg_fail(r, "empty content type");
	for (i = 0; i < a->nheaders && r->err == 0; i++)
		if (*a->hname[i] == '\0')
			msg_fail(r, "empty header name");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire.h in order. */
void
wire_put_web_doc(struct msgw *m, const struct wire_web_doc *d)
{
	msg_add_u32(m, d->cls);
	msg_add_str(m, d->target);
	wire_put_web_answer(m, &d->answer);
}

int
wire_get_web_doc(struct msgr *r, struct wire_web_doc *d)
{
	msg_get_u32(r, &d->cls);
	msg_get_str(r, &d->target, WEB_PATH_MAX);
	if (wire_get_web_answer(r, &d->answer) == -1)
		return -1;
	if (d->cls >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
	else if (*d->target != '/')
		msg_fail(r, "target");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire.h in order. */
void
wire_put_web_want(struct msgw *m, const struct wire_web_want *w)
{
	msg_add_u32(m, w->cls);
	msg_add_str(m, w->target);
}

int
wire_get_web_want(struct msgr *r, struct wire_web_want *w)
{
	msg_get_u32(r, &w->cls);
	msg_get_str(r, &w->target, WEB_PATH_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (w->cls >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire.h in order. */
void
wire_put_web_listen(struct msgw *m, const struct wire_web_listen *l)
{
	uint32_t	 i;

	msg_add_u32(m, l->kind);
	msg_add_str(m, l->name);
	msg_add_u32(m, l->tls);
	msg_add_data(m, l->cert, l->certlen);
	msg_add_data(m, l->key, l->keylen);
	msg_add_u32(m, l->bodymax);
	msg_add_u32(m, l->hflags);
	msg_add_u32(m, l->nhosts);
	for (i = 0; i < l->nhosts; i++)
		msg_add_str(m, l->hosts[i]);
	msg_add_u32(m, l->persrc);
}

int
wire_get_web_listen(struct msgr *r, struct wire_web_listen *l)
{
	uint32_t	 i;

	msg_get_u32(r, &l->kind);
	msg_get_str(r, &l->name, WEB_NAME_MAX);
	msg_get_u32(r, &l->tls);
	msg_get_data(r, &l->cert, &l->certlen, WEB_TLS_PEM_MAX);
	msg_get_data(r, &l->key, &l->keylen, WEB_TLS_PEM_MAX);
	msg_get_u32(r, &l->bodymax);
	msg_get_u32(r, &l->hflags);
	msg_get_u32(r, &l->nhosts);
	if (r->err == 0 && l->nhosts > WEB_HOSTS_MAX)
		msg_fail(r, "too many hostnames");
	for (i = 0; i < l->nhosts && r->err == 0; i++)
		msg_get_str(r, &l->hosts[i], WEB_NAME_MAX);
	msg_get_u32(r, &l->persrc);
	if (msg_end(r) == -1)
		return -1;
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
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire.h in order. */
void
wire_put_web_seen(struct msgw *m, const struct wire_web_seen *s)
{
	uint32_t	 i;

	msg_add_u32(m, s->nseen);
	for (i = 0; i < s->nseen; i++) {
		msg_add_u32(m, s->seen[i].kind);
		msg_add_str(m, s->seen[i].hash);
		msg_add_i64(m, s->seen[i].at);
	}
	msg_add_u32(m, s->ncodes);
	for (i = 0; i < s->ncodes; i++) {
		msg_add_u32(m, s->codes[i].status);
		msg_add_u32(m, s->codes[i].count);
	}
}

int
wire_get_web_seen(struct msgr *r, struct wire_web_seen *s)
{
	struct wire_web_seen_entry	*e;
	struct wire_web_seen_code	*c;
	uint32_t			 i;

	msg_get_u32(r, &s->nseen);
	if (r->err == 0 && s->nseen > WEB_SEEN_MAX)
		msg_fail(r, "too many entries");
	for (i = 0; i < s->nseen && r->err == 0; i++) {
		e = &s->seen[i];
		msg_get_u32(r, &e->kind);
		msg_get_str(r, &e->hash, WEB_HASH_HEX);
		msg_get_i64(r, &e->at);
		if (r->err == 0 && ((e->kind != WEB_PRIN_SESSION &&
		    e->kind != WEB_PRIN_TOKEN) ||
		    strlen(e->hash) != WEB_HASH_HEX || e->at < 0 ||
		    (e->at == 0 && e->kind != WEB_PRIN_SESSION)))
			msg_fail(r, "bad entry");
	}
	msg_get_u32(r, &s->ncodes);
	if (r->err == 0 && s->ncodes > WEB_CODES_MAX)
		msg_fail(r, "too many statuses");
	for (i = 0; i < s->ncodes && r->err == 0; i++) {
		c = &s->codes[i];
		msg_get_u32(r, &c->status);
		msg_get_u32(r, &c->count);
		if (r->err == 0 && (c->status < 100 || c->status > 599 ||
		    c->count > WEB_SEEN_COUNT_MAX))
			msg_fail(r, "bad status count");
	}
	return msg_end(r);
}
