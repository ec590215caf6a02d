/*
 * The Nomad channel's payload layouts (wire_nomad.h): each one's fields,
 * in payload order, for the generic coder of wire.c, and its checks.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "wire_nomad.h"

/*
 * Alike on purpose (whole file): one field table and one check per
 * layout, as in wire.c and every wire_*.c: a table lists its struct's
 * fields in payload order, a check its layout's own rules, so two of
 * the same shape are still two layouts, with nothing to fold.
 */

static const struct wire_field wire_nomad_config_names[] = {
	WF_STR(nomad_config, names[0], NOMAD_NS_MAX),
};

static const struct wire_field wire_nomad_config_fields[] = {
	WF_STR(nomad_config, address, NOMAD_ADDRESS_MAX),
	WF_DATA(nomad_config, ca, calen, NOMAD_CA_MAX),
	WF_STRS(nomad_config, nnames, NOMAD_NAMESPACES_MAX,
	    "too many namespaces", wire_nomad_config_names),
	WF_DATA(nomad_config, token, tokenlen, NOMAD_TOKEN_MAX),
};
WIRE_DEFINE(nomad_config, wire_nomad_config_fields, NULL)

static const struct wire_field wire_nomad_request_fields[] = {
	WF_U32(nomad_request, op),
	WF_U32(nomad_request, flags),
	WF_U32(nomad_request, timeout_ms),
	WF_STR(nomad_request, ns, NOMAD_NS_MAX),
	WF_STR(nomad_request, id, NOMAD_ID_MAX),
	WF_STR(nomad_request, task, NOMAD_TASK_MAX),
	WF_STR(nomad_request, prefix, NOMAD_ID_MAX),
	WF_STR(nomad_request, idem, NOMAD_IDEM_MAX),
	WF_U64(nomad_request, index),
	WF_U64(nomad_request, tail),
	WF_DATA(nomad_request, data1, data1len, NOMAD_JOB_MAX),
	WF_DATA(nomad_request, data2, data2len, NOMAD_VARS_MAX),
};

static void
wire_nomad_request_check(struct msgr *r, const void *p)
{
	const struct wire_nomad_request	*q = p;

	if (q->op == NOMAD_OP_NONE || q->op >= NOMAD_OP_MAX)
		msg_fail(r, "unknown operation");
	else if ((q->flags & ~NOMAD_F_ALL) != 0)
		msg_fail(r, "unknown flags");
	else if (q->timeout_ms == 0 || q->timeout_ms > NOMAD_TIMEOUT_MAX_MS)
		msg_fail(r, "timeout out of range");
}
WIRE_DEFINE(nomad_request, wire_nomad_request_fields,
    wire_nomad_request_check)

static const struct wire_field wire_nomad_response_fields[] = {
	WF_U32(nomad_response, status),
	WF_U64(nomad_response, index),
	WF_U32(nomad_response, attempts),
	WF_STR(nomad_response, error, NOMAD_ERROR_MAX),
	WF_U64(nomad_response, total),
	WF_DATA(nomad_response, chunk, chunklen, NOMAD_CHUNK_MAX),
};

static void
wire_nomad_response_check(struct msgr *r, const void *p)
{
	const struct wire_nomad_response	*a = p;

	if (a->status != 0 && (a->status < 100 || a->status > 599))
		msg_fail(r, "status out of range");
	else if (a->status == 0 && (a->total != 0 || a->error[0] == '\0'))
		msg_fail(r, "no status, but a body or no error");
	else if (a->status != 0 && a->error[0] != '\0')
		msg_fail(r, "a status and an error");
	else if (a->attempts > NOMAD_READ_ATTEMPTS ||
	    (a->status != 0 && a->attempts == 0))
		msg_fail(r, "attempts out of range");
	else if (a->total > NOMAD_BODY_MAX || a->chunklen !=
	    (a->total < NOMAD_CHUNK_MAX ? a->total : NOMAD_CHUNK_MAX))
		msg_fail(r, "body length");
}
WIRE_DEFINE(nomad_response, wire_nomad_response_fields,
    wire_nomad_response_check)

static const struct wire_field wire_nomad_body_fields[] = {
	WF_DATA(nomad_body, chunk, chunklen, NOMAD_CHUNK_MAX),
};

static void
wire_nomad_body_check(struct msgr *r, const void *p)
{
	const struct wire_nomad_body	*b = p;

	if (b->chunklen == 0)
		msg_fail(r, "empty chunk");
}
WIRE_DEFINE(nomad_body, wire_nomad_body_fields, wire_nomad_body_check)
