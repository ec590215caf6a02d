/*
 * What every nops process agrees on: the processes, the message types
 * between them, and limits on what those messages may carry.
 */
#ifndef NOPS_NOPS_H
#define NOPS_NOPS_H

#include <stdint.h>

#define NOPS_VERSION		PACKAGE_VERSION

/* Processes; the order is the order of the process table. */
enum nops_proc {
	PROC_MASTER = 0,
	PROC_GITWORKER,
	PROC_NOMADWORKER,
	PROC_WEBWORKER,
	PROC_MAX
};

/*
 * Message types.  IMSG_<AREA>_<VERB>.  The master's permit table
 * (master/supervise.c) says which worker may send which; a worker treats
 * anything unexpected from the master as fatal.
 */
enum imsg_type {
	IMSG_NONE = 0,

	/* master -> any worker */
	IMSG_INIT,		/* start-up parameters, before sandboxing */
	IMSG_CTL_VERBOSE,	/* u32 log verbosity */

	/* any worker -> master */
	IMSG_WORKER_READY,	/* sandboxed and serving */

	/* master -> webworker */
	IMSG_WEB_LISTEN,	/* fd: a listening socket + its kind and name */
	IMSG_WEB_RESPONSE,	/* the answer to an IMSG_WEB_REQUEST */

	/* webworker -> master */
	IMSG_WEB_REQUEST,	/* an HTTP request for the master to answer */

	IMSG_MAX
};

const char	*imsg_to_str(uint32_t);
const char	*proc_to_str(enum nops_proc);

/* Bounds of what the workers may send (decoders enforce them). */
#define WEB_METHOD_MAX		16
#define WEB_PATH_MAX		2048
#define WEB_HEADER_MAX		4096
#define WEB_BODY_MAX		(1024 * 1024)
#define WEB_NAME_MAX		256

/* IMSG_WEB_LISTEN kinds */
#define WEB_LISTEN_CONTROL	1	/* AF_UNIX control socket */
#define WEB_LISTEN_TCP		2

/* Identity of an HTTP client, as the webworker saw it. */
#define WEB_PEER_LOCAL		1	/* control socket: SO_PEERCRED */
#define WEB_PEER_TCP		2

#endif /* NOPS_NOPS_H */
