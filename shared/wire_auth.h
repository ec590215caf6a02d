/*
 * Payload layouts of the identity table the master pushes to the
 * webworker (IMSG_WEB_AUTH_*; what they mean is in nops.h, "Pushed
 * reads"), and of the messages without a payload; as wire.h for the web
 * channel.  JSON in a payload is the receiver's to parse and check.
 */
#ifndef NOPS_WIRE_AUTH_H
#define NOPS_WIRE_AUTH_H

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

/*
 * IMSG_WEB_AUTH_BEGIN: u32 session idle timeout (s, not 0), str bootstrap
 * token hash ("" or 64 hex), u32 management class, u32 anonymous class
 * (0: none); classes below WEB_CLASSES_MAX.
 */
struct wire_auth_begin {
	uint32_t	 idle;
	const char	*boot;
	uint32_t	 manage;
	uint32_t	 anon;
};
WIRE_DECLARE(auth_begin);

/* IMSG_WEB_AUTH_CLASS: u32 class, data its view (JSON, not empty). */
struct wire_auth_class {
	uint32_t	 cls;
	const void	*json;
	size_t		 jsonlen;
};
WIRE_DECLARE(auth_class);

/*
 * IMSG_WEB_AUTH_PRINCIPAL: u32 kind (WEB_PRIN_*), str hash (64 hex), str
 * name (not empty), u32 class, i64 last seen, i64 expires (both >= 0),
 * data groups (JSON; empty for a token).
 */
struct wire_auth_principal {
	uint32_t	 kind;
	const char	*hash;
	const char	*name;
	uint32_t	 cls;
	int64_t		 seen;
	int64_t		 expires;
	const void	*groups;
	size_t		 groupslen;
};
WIRE_DECLARE(auth_principal);

/* IMSG_WEB_AUTH_FORGET: str hash (64 hex). */
struct wire_auth_forget {
	const char	*hash;
};
WIRE_DECLARE(auth_forget);

/* IMSG_WEB_AUTH_COMMIT, IMSG_WORKER_READY, IMSG_GIT_REPO_END: nothing. */
struct wire_empty {
	char		 unused;
};
WIRE_DECLARE(empty);

#endif /* NOPS_WIRE_AUTH_H */
