/*
 * Encoders and decoders of the identity table's payloads (wire_auth.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire_auth.h"

/* A SHA-256 in lower-case hex, as sessions and tokens are known. */
static int
wire_hash_ok(const char *s)
{
	return strlen(s) == WEB_HASH_HEX &&
	    strspn(s, "0123456789abcdef") == WEB_HASH_HEX;
}

/* Alike on purpose: each wire_*.c coder walks wire_auth.h in order. */
void
wire_put_auth_begin(struct msgw *m, const struct wire_auth_begin *b)
{
	msg_add_u32(m, b->idle);
	msg_add_str(m, b->boot);
	msg_add_u32(m, b->manage);
	msg_add_u32(m, b->anon);
}

int
wire_get_auth_begin(struct msgr *r, struct wire_auth_begin *b)
{
	msg_get_u32(r, &b->idle);
	msg_get_str(r, &b->boot, WEB_HASH_HEX);
	msg_get_u32(r, &b->manage);
	msg_get_u32(r, &b->anon);
	if (msg_end(r) == -1)
		return -1;
	if (b->idle == 0)
		msg_fail(r, "no idle timeout");
	else if (b->manage >= WEB_CLASSES_MAX || b->anon >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
	else if (*b->boot != '\0' && !wire_hash_ok(b->boot))
		msg_fail(r, "bootstrap hash");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_auth.h in order. */
void
wire_put_auth_class(struct msgw *m, const struct wire_auth_class *c)
{
	msg_add_u32(m, c->cls);
	msg_add_data(m, c->json, c->jsonlen);
}

int
wire_get_auth_class(struct msgr *r, struct wire_auth_class *c)
{
	msg_get_u32(r, &c->cls);
	msg_get_data(r, &c->json, &c->jsonlen, WEB_CLASS_JSON_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (c->cls >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
	else if (c->jsonlen == 0)
		msg_fail(r, "no view");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_auth.h in order. */
void
wire_put_auth_principal(struct msgw *m, const struct wire_auth_principal *p)
{
	msg_add_u32(m, p->kind);
	msg_add_str(m, p->hash);
	msg_add_str(m, p->name);
	msg_add_u32(m, p->cls);
	msg_add_i64(m, p->seen);
	msg_add_i64(m, p->expires);
	msg_add_data(m, p->groups, p->groupslen);
}

int
wire_get_auth_principal(struct msgr *r, struct wire_auth_principal *p)
{
	msg_get_u32(r, &p->kind);
	msg_get_str(r, &p->hash, WEB_HASH_HEX);
	msg_get_str(r, &p->name, WEB_PRIN_NAME_MAX);
	msg_get_u32(r, &p->cls);
	msg_get_i64(r, &p->seen);
	msg_get_i64(r, &p->expires);
	msg_get_data(r, &p->groups, &p->groupslen, WEB_GROUPS_JSON_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (p->kind != WEB_PRIN_SESSION && p->kind != WEB_PRIN_TOKEN)
		msg_fail(r, "principal kind");
	else if (!wire_hash_ok(p->hash))
		msg_fail(r, "hash");
	else if (*p->name == '\0')
		msg_fail(r, "empty name");
	else if (p->cls >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
	else if (p->seen < 0 || p->expires < 0)
		msg_fail(r, "negative time");
	else if (p->kind == WEB_PRIN_SESSION && p->groupslen == 0)
		msg_fail(r, "a session without its groups");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_auth.h in order. */
void
wire_put_auth_forget(struct msgw *m, const struct wire_auth_forget *f)
{
	msg_add_str(m, f->hash);
}

int
wire_get_auth_forget(struct msgr *r, struct wire_auth_forget *f)
{
	msg_get_str(r, &f->hash, WEB_HASH_HEX);
	if (msg_end(r) == -1)
		return -1;
	if (!wire_hash_ok(f->hash))
		msg_fail(r, "hash");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_auth.h in order. */
void
wire_put_empty(struct msgw *m, const struct wire_empty *e)
{
	(void)m;
	(void)e;
}

int
wire_get_empty(struct msgr *r, struct wire_empty *e)
{
	(void)e;
	return msg_end(r);
}
