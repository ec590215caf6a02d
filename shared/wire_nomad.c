/*
 * Encoders and decoders of the Nomad channel's payloads (wire_nomad.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "nops.h"
#include "wire_nomad.h"

/* Alike on purpose: each wire_*.c coder walks wire_nomad.h in order. */
void
wire_put_nomad_config(struct msgw *m, const struct wire_nomad_config *c)
{
	uint32_t	 i;

	msg_add_str(m, c->address);
	msg_add_data(m, c->ca, c->calen);
	msg_add_u32(m, c->nnames);
	for (i = 0; i < c->nnames; i++)
		msg_add_str(m, c->names[i]);
	msg_add_data(m, c->token, c->tokenlen);
}

int
wire_get_nomad_config(struct msgr *r, struct wire_nomad_config *c)
{
	uint32_t	 i;

	msg_get_str(r, &c->address, NOMAD_ADDRESS_MAX);
	msg_get_data(r, &c->ca, &c->calen, NOMAD_CA_MAX);
	msg_get_u32(r, &c->nnames);
	if (c->nnames > NOMAD_NAMESPACES_MAX)
		msg_fail(r, "too many namespaces");
	for (i = 0; i < c->nnames && r->err == 0; i++)
		msg_get_str(r, &c->names[i], NOMAD_NS_MAX);
	if (r->err != 0)
		c->nnames = 0;
	msg_get_data(r, &c->token, &c->tokenlen, NOMAD_TOKEN_MAX);
	return msg_end(r);
}

/* Alike on purpose: each wire_*.c coder walks wire_nomad.h in order. */
void
wire_put_nomad_request(struct msgw *m, const struct wire_nomad_request *q)
{
	msg_add_u32(m, q->op);
	msg_add_u32(m, q->flags);
	msg_add_u32(m, q->timeout_ms);
	msg_add_str(m, q->ns);
	msg_add_str(m, q->id);
	msg_add_str(m, q->task);
	msg_add_str(m, q->prefix);
	msg_add_str(m, q->idem);
	msg_add_u64(m, q->index);
	msg_add_u64(m, q->tail);
	msg_add_data(m, q->data1, q->data1len);
	msg_add_data(m, q->data2, q->data2len);
}

int
wire_get_nomad_request(struct msgr *r, struct wire_nomad_request *q)
{
	msg_get_u32(r, &q->op);
	msg_get_u32(r, &q->flags);
	msg_get_u32(r, &q->timeout_ms);
	msg_get_str(r, &q->ns, NOMAD_NS_MAX);
	msg_get_str(r, &q->id, NOMAD_ID_MAX);
	msg_get_str(r, &q->task, NOMAD_TASK_MAX);
	msg_get_str(r, &q->prefix, NOMAD_ID_MAX);
	msg_get_str(r, &q->idem, NOMAD_IDEM_MAX);
	msg_get_u64(r, &q->index);
	msg_get_u64(r, &q->tail);
	msg_get_data(r, &q->data1, &q->data1len, NOMAD_JOB_MAX);
	msg_get_data(r, &q->data2, &q->data2len, NOMAD_VARS_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (q->op == NOMAD_OP_NONE || q->op >= NOMAD_OP_MAX)
		msg_fail(r, "unknown operation");
	else if ((q->flags & ~NOMAD_F_ALL) != 0)
		msg_fail(r, "unknown flags");
	else if (q->timeout_ms == 0 || q->timeout_ms > NOMAD_TIMEOUT_MAX_MS)
		msg_fail(r, "timeout out of range");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_nomad.h in order. */
void
wire_put_nomad_response(struct msgw *m, const struct wire_nomad_response *a)
{
	msg_add_u32(m, a->status);
	msg_add_u64(m, a->index);
	msg_add_u32(m, a->attempts);
	msg_add_str(m, a->error);
	msg_add_u64(m, a->total);
	msg_add_data(m, a->chunk, a->chunklen);
}

int
wire_get_nomad_response(struct msgr *r, struct wire_nomad_response *a)
{
	msg_get_u32(r, &a->status);
	msg_get_u64(r, &a->index);
	msg_get_u32(r, &a->attempts);
	msg_get_str(r, &a->error, NOMAD_ERROR_MAX);
	msg_get_u64(r, &a->total);
	msg_get_data(r, &a->chunk, &a->chunklen, NOMAD_CHUNK_MAX);
	if (msg_end(r) == -1)
		return -1;
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
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_nomad.h in order. */
void
wire_put_nomad_body(struct msgw *m, const struct wire_nomad_body *b)
{
	msg_add_data(m, b->chunk, b->chunklen);
}

int
wire_get_nomad_body(struct msgr *r, struct wire_nomad_body *b)
{
	msg_get_data(r, &b->chunk, &b->chunklen, NOMAD_CHUNK_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (b->chunklen == 0)
		msg_fail(r, "empty chunk");
	return r->err ? -1 : 0;
}
