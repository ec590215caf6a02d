/*
 * A notification's payload layouts (wire_notify.h): each one's fields,
 * in payload order, for the generic coder of wire.c, and its checks.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "wire_notify.h"

/*
 * Alike on purpose (whole file): one field table and one check per
 * layout, as in wire.c and every wire_*.c: a table lists its struct's
 * fields in payload order, a check its layout's own rules, so two of
 * the same shape are still two layouts, with nothing to fold.
 */

/* A header value: printable ASCII, with spaces if allowed. */
static int
wire_header_ok(const char *s, size_t len, int spaces)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < (spaces ? 0x20 : 0x21) ||
		    (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

static const struct wire_field wire_notify_fields[] = {
	WF_U32(notify, kind),
	WF_STR(notify, url, NOTIFY_URL_MAX),
	WF_STR(notify, title, NOTIFY_TITLE_MAX),
	WF_STR(notify, tags, NOTIFY_TAGS_MAX),
	WF_STR(notify, click, NOTIFY_URL_MAX),
	WF_DATA(notify, body, bodylen, NOTIFY_BODY_MAX),
	WF_DATA(notify, token, tokenlen, NOTIFY_TOKEN_MAX),
};

static void
wire_notify_check(struct msgr *r, const void *p)
{
	const struct wire_notify	*n = p;

	if (n->kind != NOTIFY_KIND_JSON && n->kind != NOTIFY_KIND_TEXT)
		msg_fail(r, "unknown kind");
	else if (strncmp(n->url, "https://", 8) != 0 &&
	    strncmp(n->url, "http://", 7) != 0)
		msg_fail(r, "not an http(s) URL");
	else if (!wire_header_ok(n->title, strlen(n->title), 1) ||
	    !wire_header_ok(n->tags, strlen(n->tags), 0) ||
	    !wire_header_ok(n->click, strlen(n->click), 0) ||
	    !wire_header_ok(n->token, n->tokenlen, 0))
		msg_fail(r, "a header value with control characters");
}
WIRE_DEFINE(notify, wire_notify_fields, wire_notify_check)

static const struct wire_field wire_notify_result_fields[] = {
	WF_U32(notify_result, status),
	WF_STR(notify_result, error, NOTIFY_ERROR_MAX),
};

static void
wire_notify_result_check(struct msgr *r, const void *p)
{
	const struct wire_notify_result	*n = p;

	if (n->status > 599 || (n->status != 0 && n->status < 100))
		msg_fail(r, "HTTP status");
}
WIRE_DEFINE(notify_result, wire_notify_result_fields,
    wire_notify_result_check)
