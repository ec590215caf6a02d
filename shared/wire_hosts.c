/*
 * The plan hosts' payload layouts (wire_hosts.h): each one's fields, in
 * payload order, for the generic coder of wire.c, and its checks.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "wire_hosts.h"

/*
 * Alike on purpose (whole file): one field table and one check per
 * layout, as in wire.c and every wire_*.c: a table lists its struct's
 * fields in payload order, a check its layout's own rules, so two of
 * the same shape are still two layouts, with nothing to fold.
 */

static const struct wire_field wire_ssh_key_fields[] = {
	WF_DATA(ssh_key, key, keylen, SSH_KEY_MAX),
};
WIRE_DEFINE(ssh_key, wire_ssh_key_fields, NULL)

static const struct wire_field wire_ssh_run_fields[] = {
	WF_STR(ssh_run, address, SSH_ADDRESS_MAX),
	WF_U32(ssh_run, port),
	WF_STR(ssh_run, user, SSH_USER_MAX),
	WF_DATA(ssh_run, known, knownlen, SSH_KNOWN_MAX),
	WF_STR(ssh_run, command, SSH_COMMAND_MAX),
	WF_U32(ssh_run, timeout),
	WF_U32(ssh_run, flags),
	WF_DATA(ssh_run, in, inlen, SSH_STDIN_MAX),
};

static void
wire_ssh_run_check(struct msgr *r, const void *p)
{
	const struct wire_ssh_run	*s = p;

	if (s->port == 0 || s->port > 65535 || s->timeout == 0 ||
	    s->timeout > SSH_TIMEOUT_MAX || (s->flags & ~SSH_F_ALL) != 0 ||
	    s->address[0] == '\0' || s->address[0] == '-' ||
	    s->user[0] == '\0' || s->command[0] == '\0')
		msg_fail(r, "a field out of range");
}
WIRE_DEFINE(ssh_run, wire_ssh_run_fields, wire_ssh_run_check)

static const struct wire_field wire_ssh_result_fields[] = {
	WF_I32(ssh_result, status),
	WF_U32(ssh_result, stage),
	WF_STR(ssh_result, error, SSH_ERROR_MAX),
	WF_DATA(ssh_result, out, outlen, SSH_OUTPUT_MAX),
};

static void
wire_ssh_result_check(struct msgr *r, const void *p)
{
	const struct wire_ssh_result	*s = p;

	if (s->stage < SSH_STAGE_CONNECT || s->stage > SSH_STAGE_DONE ||
	    s->status < -1 || s->status > 255 ||
	    (s->stage == SSH_STAGE_DONE) != (s->status != -1))
		msg_fail(r, "stage or status out of range");
}
WIRE_DEFINE(ssh_result, wire_ssh_result_fields, wire_ssh_result_check)

static const struct wire_field wire_http_probe_fields[] = {
	WF_STR(http_probe, url, PROBE_URL_MAX),
	WF_U32(http_probe, timeout),
};

static void
wire_http_probe_check(struct msgr *r, const void *q)
{
	const struct wire_http_probe	*p = q;

	if (strncmp(p->url, "https://", 8) != 0 &&
	    strncmp(p->url, "http://", 7) != 0)
		msg_fail(r, "not an http(s) URL");
	else if (p->timeout == 0 || p->timeout > PROBE_TIMEOUT_MAX_MS)
		msg_fail(r, "timeout out of range");
}
WIRE_DEFINE(http_probe, wire_http_probe_fields, wire_http_probe_check)

static const struct wire_field wire_http_probe_result_fields[] = {
	WF_U32(http_probe_result, status),
	WF_STR(http_probe_result, error, PROBE_ERROR_MAX),
	WF_DATA(http_probe_result, body, bodylen, PROBE_BODY_MAX),
};

static void
wire_http_probe_result_check(struct msgr *r, const void *q)
{
	const struct wire_http_probe_result	*p = q;

	if (p->status > 999 || (p->status != 0 && p->status < 100) ||
	    (p->status == 0) != (p->error[0] != '\0'))
		msg_fail(r, "status out of range, or an error with a status");
}
WIRE_DEFINE(http_probe_result, wire_http_probe_result_fields,
    wire_http_probe_result_check)
