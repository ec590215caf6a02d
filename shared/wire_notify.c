/*
 * Encoders and decoders of a notification's payloads (wire_notify.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire_notify.h"

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

/* Alike on purpose: each wire_*.c coder walks wire_notify.h in order. */
void
wire_put_notify(struct msgw *m, const struct wire_notify *n)
{
	msg_add_u32(m, n->kind);
	msg_add_str(m, n->url);
	msg_add_str(m, n->title);
	msg_add_str(m, n->tags);
	msg_add_str(m, n->click);
	msg_add_data(m, n->body, n->bodylen);
	msg_add_data(m, n->token, n->tokenlen);
}

int
wire_get_notify(struct msgr *r, struct wire_notify *n)
{
	msg_get_u32(r, &n->kind);
	msg_get_str(r, &n->url, NOTIFY_URL_MAX);
	msg_get_str(r, &n->title, NOTIFY_TITLE_MAX);
	msg_get_str(r, &n->tags, NOTIFY_TAGS_MAX);
	msg_get_str(r, &n->click, NOTIFY_URL_MAX);
	msg_get_data(r, &n->body, &n->bodylen, NOTIFY_BODY_MAX);
	msg_get_data(r, &n->token, &n->tokenlen, NOTIFY_TOKEN_MAX);
	if (msg_end(r) == -1)
		return -1;
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
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_notify.h in order. */
void
wire_put_notify_result(struct msgw *m, const struct wire_notify_result *n)
{
	msg_add_u32(m, n->status);
	msg_add_str(m, n->error);
}

int
wire_get_notify_result(struct msgr *r, struct wire_notify_result *n)
{
	msg_get_u32(r, &n->status);
	msg_get_str(r, &n->error, NOTIFY_ERROR_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (n->status > 599 || (n->status != 0 && n->status < 100))
		msg_fail(r, "HTTP status");
	return r->err ? -1 : 0;
}
