/*
 * The identity table's payload layouts (wire_auth.h): each one's fields,
 * in payload order, for the generic coder of wire.c, and its checks.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "hex.h"
#include "wire_auth.h"

/*
 * Alike on purpose (whole file): one field table and one check per
 * layout, as in wire.c and every wire_*.c: a table lists its struct's
 * fields in payload order, a check its layout's own rules, so two of
 * the same shape are still two layouts, with nothing to fold.
 */

/* A SHA-256 in lower-case hex, as sessions and tokens are known. */
static int
wire_hash_ok(const char *s)
{
	return hex_lower(s, WEB_HASH_HEX);
}

static const struct wire_field wire_auth_begin_fields[] = {
	WF_U32(auth_begin, idle),
	WF_STR(auth_begin, boot, WEB_HASH_HEX),
	WF_U32(auth_begin, manage),
	WF_U32(auth_begin, anon),
};

static void
wire_auth_begin_check(struct msgr *r, const void *p)
{
	const struct wire_auth_begin	*b = p;

	if (b->idle == 0)
		msg_fail(r, "no idle timeout");
	else if (b->manage >= WEB_CLASSES_MAX || b->anon >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
	else if (*b->boot != '\0' && !wire_hash_ok(b->boot))
		msg_fail(r, "bootstrap hash");
}
WIRE_DEFINE(auth_begin, wire_auth_begin_fields, wire_auth_begin_check)

static const struct wire_field wire_auth_class_fields[] = {
	WF_U32(auth_class, cls),
	WF_DATA(auth_class, json, jsonlen, WEB_CLASS_JSON_MAX),
};

static void
wire_auth_class_check(struct msgr *r, const void *p)
{
	const struct wire_auth_class	*c = p;

	if (c->cls >= WEB_CLASSES_MAX)
		msg_fail(r, "class out of range");
	else if (c->jsonlen == 0)
		msg_fail(r, "no view");
}
WIRE_DEFINE(auth_class, wire_auth_class_fields, wire_auth_class_check)

static const struct wire_field wire_auth_principal_fields[] = {
	WF_U32(auth_principal, kind),
	WF_STR(auth_principal, hash, WEB_HASH_HEX),
	WF_STR(auth_principal, name, WEB_PRIN_NAME_MAX),
	WF_U32(auth_principal, cls),
	WF_I64(auth_principal, seen),
	WF_I64(auth_principal, expires),
	WF_DATA(auth_principal, groups, groupslen, WEB_GROUPS_JSON_MAX),
};

static void
wire_auth_principal_check(struct msgr *r, const void *q)
{
	const struct wire_auth_principal	*p = q;

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
}
WIRE_DEFINE(auth_principal, wire_auth_principal_fields,
    wire_auth_principal_check)

static const struct wire_field wire_auth_forget_fields[] = {
	WF_STR(auth_forget, hash, WEB_HASH_HEX),
};

static void
wire_auth_forget_check(struct msgr *r, const void *p)
{
	const struct wire_auth_forget	*f = p;

	if (!wire_hash_ok(f->hash))
		msg_fail(r, "hash");
}
WIRE_DEFINE(auth_forget, wire_auth_forget_fields, wire_auth_forget_check)

/* IMSG_WEB_AUTH_COMMIT and the others without a payload. */
WIRE_DEFINE_N(empty, NULL, 0, NULL)
