/*
 * Encoders and decoders of the plan hosts' payloads (wire_hosts.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire_hosts.h"

/* Alike on purpose: each wire_*.c coder walks wire_hosts.h in order. */
void
wire_put_ssh_key(struct msgw *m, const struct wire_ssh_key *k)
{
	msg_add_data(m, k->key, k->keylen);
}

int
wire_get_ssh_key(struct msgr *r, struct wire_ssh_key *k)
{
	msg_get_data(r, &k->key, &k->keylen, SSH_KEY_MAX);
	return msg_end(r);
}

/* Alike on purpose: each wire_*.c coder walks wire_hosts.h in order. */
void
wire_put_ssh_run(struct msgw *m, const struct wire_ssh_run *s)
{
	msg_add_str(m, s->address);
	msg_add_u32(m, s->port);
	msg_add_str(m, s->user);
	msg_add_data(m, s->known, s->knownlen);
	msg_add_str(m, s->command);
	msg_add_u32(m, s->timeout);
	msg_add_u32(m, s->flags);
	msg_add_data(m, s->in, s->inlen);
}

/* Alike on purpose: each wire_*.c decoder checks wire_hosts.h's fields. */
int
wire_get_ssh_run(struct msgr *r, struct wire_ssh_run *s)
{
	msg_get_str(r, &s->address, SSH_ADDRESS_MAX);
	msg_get_u32(r, &s->port);
	msg_get_str(r, &s->user, SSH_USER_MAX);
	msg_get_data(r, &s->known, &s->knownlen, SSH_KNOWN_MAX);
	msg_get_str(r, &s->command, SSH_COMMAND_MAX);
	msg_get_u32(r, &s->timeout);
	msg_get_u32(r, &s->flags);
	msg_get_data(r, &s->in, &s->inlen, SSH_STDIN_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (s->port == 0 || s->port > 65535 || s->timeout == 0 ||
	    s->timeout > SSH_TIMEOUT_MAX || (s->flags & ~SSH_F_ALL) != 0 ||
	    s->address[0] == '\0' || s->address[0] == '-' ||
	    s->user[0] == '\0' || s->command[0] == '\0')
		msg_fail(r, "a field out of range");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_hosts.h in order. */
void
wire_put_ssh_result(struct msgw *m, const struct wire_ssh_result *s)
{
	msg_add_i32(m, s->status);
	msg_add_u32(m, s->stage);
	msg_add_str(m, s->error);
	msg_add_data(m, s->out, s->outlen);
}

int
wire_get_ssh_result(struct msgr *r, struct wire_ssh_result *s)
{
	msg_get_i32(r, &s->status);
	msg_get_u32(r, &s->stage);
	msg_get_str(r, &s->error, SSH_ERROR_MAX);
	msg_get_data(r, &s->out, &s->outlen, SSH_OUTPUT_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (s->stage < SSH_STAGE_CONNECT || s->stage > SSH_STAGE_DONE ||
	    s->status < -1 || s->status > 255 ||
	    (s->stage == SSH_STAGE_DONE) != (s->status != -1))
		msg_fail(r, "stage or status out of range");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_hosts.h in order. */
void
wire_put_http_probe(struct msgw *m, const struct wire_http_probe *p)
{
	msg_add_str(m, p->url);
	msg_add_u32(m, p->timeout);
}

int
wire_get_http_probe(struct msgr *r, struct wire_http_probe *p)
{
	msg_get_str(r, &p->url, PROBE_URL_MAX);
	msg_get_u32(r, &p->timeout);
	if (msg_end(r) == -1)
		return -1;
	if (strncmp(p->url, "https://", 8) != 0 &&
	    strncmp(p->url, "http://", 7) != 0)
		msg_fail(r, "not an http(s) URL");
	else if (p->timeout == 0 || p->timeout > PROBE_TIMEOUT_MAX_MS)
		msg_fail(r, "timeout out of range");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_hosts.h in order. */
void
wire_put_http_probe_result(struct msgw *m,
    const struct wire_http_probe_result *p)
{
	msg_add_u32(m, p->status);
	msg_add_str(m, p->error);
	msg_add_data(m, p->body, p->bodylen);
}

int
wire_get_http_probe_result(struct msgr *r, struct wire_http_probe_result *p)
{
	msg_get_u32(r, &p->status);
	msg_get_str(r, &p->error, PROBE_ERROR_MAX);
	msg_get_data(r, &p->body, &p->bodylen, PROBE_BODY_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (p->status > 999 || (p->status != 0 && p->status < 100) ||
	    (p->status == 0) != (p->error[0] != '\0'))
		msg_fail(r, "status out of range, or an error with a status");
	return r->err ? -1 : 0;
}
