/*
 * Payload layouts of the Nomad channel (master <-> nomadworker), as
 * wire.h for the web channel.  peerid of a request, its answer and the
 * answer's body chunks is the request's id.  Whether an answer belongs
 * to a request in flight, and how much body is still due, are the
 * receiver's to check.
 */
#ifndef NOPS_WIRE_NOMAD_H
#define NOPS_WIRE_NOMAD_H

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
 * IMSG_NOMAD_CONFIG: str address ("" when Nomad is not usable), data CA
 * bundle (PEM, may be empty), u32 n, n x str namespace, data token (may
 * be empty; last, so that nothing grows the buffer after it).
 */
struct wire_nomad_config {
	const char	*address;
	const void	*ca;
	size_t		 calen;
	uint32_t	 nnames;
	const char	*names[NOMAD_NAMESPACES_MAX];
	const void	*token;
	size_t		 tokenlen;
};
WIRE_DECLARE(nomad_config);

/*
 * IMSG_NOMAD_REQUEST: u32 op (NOMAD_OP_*), u32 flags (NOMAD_F_*), u32
 * timeout of an attempt (ms, 1 to NOMAD_TIMEOUT_MAX_MS), str namespace,
 * str id, str task, str prefix, str idempotency token, u64 index, u64
 * tail, data data1 (NOMAD_JOB_MAX), data data2 (NOMAD_VARS_MAX).  Which
 * fields an operation uses is in nops.h; the others are empty.
 */
struct wire_nomad_request {
	uint32_t	 op;
	uint32_t	 flags;
	uint32_t	 timeout_ms;
	const char	*ns;
	const char	*id;
	const char	*task;
	const char	*prefix;
	const char	*idem;
	uint64_t	 index;
	uint64_t	 tail;
	const void	*data1;
	size_t		 data1len;
	const void	*data2;
	size_t		 data2len;
};
WIRE_DECLARE(nomad_request);

/*
 * IMSG_NOMAD_RESPONSE: u32 HTTP status (0: no answer, then an error and
 * no body), u64 X-Nomad-Index, u32 attempts (1 to NOMAD_READ_ATTEMPTS
 * with a status), str error ("" with a status), u64 body length in all
 * (NOMAD_BODY_MAX), data its first chunk (all of it up to
 * NOMAD_CHUNK_MAX).  IMSG_NOMAD_BODY: data the next chunk (not empty;
 * all that is left up to NOMAD_CHUNK_MAX, which the receiver checks).
 */
struct wire_nomad_response {
	uint32_t	 status;
	uint64_t	 index;
	uint32_t	 attempts;
	const char	*error;
	uint64_t	 total;
	const void	*chunk;
	size_t		 chunklen;
};
WIRE_DECLARE(nomad_response);

struct wire_nomad_body {
	const void	*chunk;
	size_t		 chunklen;
};
WIRE_DECLARE(nomad_body);

#endif /* NOPS_WIRE_NOMAD_H */
