/*
 * Payload layouts of the plan hosts' channel (master <-> nomadworker):
 * SSH runs and HTTP checks, as wire.h for the web channel.  peerid is
 * the run's or the check's id.
 */
#ifndef NOPS_WIRE_HOSTS_H
#define NOPS_WIRE_HOSTS_H

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

/* IMSG_SSH_KEY: data the client's private key (PEM), or empty. */
struct wire_ssh_key {
	const void	*key;
	size_t		 keylen;
};
WIRE_DECLARE(ssh_key);

/*
 * IMSG_SSH_RUN: str address (not empty, no leading '-'), u32 port
 * (1-65535), str user (not empty), data known_hosts lines, str command
 * (not empty), u32 timeout (s, 1-SSH_TIMEOUT_MAX), u32 flags (SSH_F_*),
 * data inline stdin.  With SSH_F_STDIN_FD the message carries a
 * descriptor to read stdin from (the receiver checks it is there).
 */
struct wire_ssh_run {
	const char	*address;
	uint32_t	 port;
	const char	*user;
	const void	*known;
	size_t		 knownlen;
	const char	*command;
	uint32_t	 timeout;
	uint32_t	 flags;
	const void	*in;
	size_t		 inlen;
};
WIRE_DECLARE(ssh_run);

/*
 * IMSG_SSH_RESULT: i32 exit status (-1 unless the stage is
 * SSH_STAGE_DONE, else 0-255), u32 stage reached (SSH_STAGE_*), str
 * error, data the output's tail (bytes as they came).
 */
struct wire_ssh_result {
	int32_t		 status;
	uint32_t	 stage;
	const char	*error;
	const void	*out;
	size_t		 outlen;
};
WIRE_DECLARE(ssh_result);

/* IMSG_HTTP_PROBE: str url (http:// or https://), u32 timeout (ms). */
struct wire_http_probe {
	const char	*url;
	uint32_t	 timeout;
};
WIRE_DECLARE(http_probe);

/*
 * IMSG_HTTP_PROBE_RESULT: u32 HTTP status (100-999, or 0 with an error),
 * str error ("" with a status), data the head of the body.
 */
struct wire_http_probe_result {
	uint32_t	 status;
	const char	*error;
	const void	*body;
	size_t		 bodylen;
};
WIRE_DECLARE(http_probe_result);

#endif /* NOPS_WIRE_HOSTS_H */
