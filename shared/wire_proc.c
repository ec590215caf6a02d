/*
 * The start-up channel's payload layouts (wire_proc.h): each one's
 * fields, in payload order, for the generic coder of wire.c.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "wire_proc.h"

/*
 * Alike on purpose (whole file): one field table per layout, as in
 * wire.c and every wire_*.c: a table lists its struct's fields in
 * payload order, so two of the same shape are still two layouts.
 */

static const struct wire_field wire_init_fields[] = {
	WF_U32(init, uid),
	WF_U32(init, gid),
	WF_U32(init, verbose),
	WF_STR(init, user, WIRE_INIT_USER_MAX),
	WF_STR(init, statedir, WIRE_INIT_PATH_MAX),
	WF_STR(init, chroot, WIRE_INIT_PATH_MAX),
	WF_STR(init, testhook, WIRE_INIT_USER_MAX),
};
WIRE_DEFINE(init, wire_init_fields, NULL)

static const struct wire_field wire_verbose_fields[] = {
	WF_U32(verbose, level),
};
WIRE_DEFINE(verbose, wire_verbose_fields, NULL)
