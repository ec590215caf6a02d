/*
 * Payload layouts of the start-up channel (master -> any worker), as
 * wire.h for the web channel.
 */
#ifndef NOPS_WIRE_PROC_H
#define NOPS_WIRE_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"

/*
 * Alike on purpose (whole file): one struct per layout, its members in
 * payload order, as in every wire_*.h; layouts whose fields have the
 * same types look alike and are still different messages.
 */

#define WIRE_INIT_USER_MAX	256
#define WIRE_INIT_PATH_MAX	1024

/*
 * IMSG_INIT: u32 uid, u32 gid, u32 verbose, str user, str state
 * directory, str chroot, str test hooks ("" in a build without them).
 */
struct wire_init {
	uint32_t	 uid;
	uint32_t	 gid;
	uint32_t	 verbose;
	const char	*user;
	const char	*statedir;
	const char	*chroot;
	const char	*testhook;
};
WIRE_DECLARE(init);

/* IMSG_CTL_VERBOSE: u32 level (that of -v given n times). */
struct wire_verbose {
	uint32_t	 level;
};
WIRE_DECLARE(verbose);

#endif /* NOPS_WIRE_PROC_H */
