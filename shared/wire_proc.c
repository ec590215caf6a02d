/*
 * Encoders and decoders of the start-up channel's payloads (wire_proc.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "nops.h"
#include "wire_proc.h"

/* Alike on purpose: each wire_*.c coder walks wire_proc.h in order. */
void
wire_put_init(struct msgw *m, const struct wire_init *w)
{
	msg_add_u32(m, w->uid);
	msg_add_u32(m, w->gid);
	msg_add_u32(m, w->verbose);
	msg_add_str(m, w->user);
	msg_add_str(m, w->statedir);
	msg_add_str(m, w->chroot);
	msg_add_str(m, w->testhook);
}

int
wire_get_init(struct msgr *r, struct wire_init *w)
{
	msg_get_u32(r, &w->uid);
	msg_get_u32(r, &w->gid);
	msg_get_u32(r, &w->verbose);
	msg_get_str(r, &w->user, WIRE_INIT_USER_MAX);
	msg_get_str(r, &w->statedir, WIRE_INIT_PATH_MAX);
	msg_get_str(r, &w->chroot, WIRE_INIT_PATH_MAX);
	msg_get_str(r, &w->testhook, WIRE_INIT_USER_MAX);
	return msg_end(r);
}

/* Alike on purpose: each wire_*.c coder walks wire_proc.h in order. */
void
wire_put_verbose(struct msgw *m, const struct wire_verbose *w)
{
	msg_add_u32(m, w->level);
}

int
wire_get_verbose(struct msgr *r, struct wire_verbose *w)
{
	msg_get_u32(r, &w->level);
	return msg_end(r);
}
