/*
 * Typed payloads for imsg messages.
 *
 * A sender builds a payload with msg_add_*() and sends it with msg_send();
 * a receiver walks it with msg_get_*() and ends with msg_end().  Decoding
 * fails closed: the first error (short payload, string without its NUL,
 * string longer than the caller allows, embedded NUL, a blob length past
 * the end) makes that and every later call fail, and msg_end() fails if
 * any byte is left over.  A message that does not decode is a protocol
 * violation by its sender.
 *
 * Encoding: integers in host order at their natural size, unaligned;
 * strings as uint32 length (without NUL) + bytes + NUL; blobs as uint32
 * length + bytes.
 *
 * Every msg_get_*() returns 0, or -1 once the payload is bad.
 * After a failed msg_get_*() the output is zeroed (NULL for pointers), so
 * a caller that checks only msg_end() never uses garbage; r.what names the
 * first failure for the log line ("u32: short payload", ...).
 */
#ifndef NOPS_MSG_H
#define NOPS_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "imsg.h"

struct msgw {
	uint8_t		*buf;
	size_t		 len;
	size_t		 size;
	int		 err;		/* allocation failed */
};

struct msgr {
	const uint8_t	*buf;
	size_t		 len;
	size_t		 off;
	int		 err;		/* sticky: set by the first failure */
	const char	*what;		/* what failed, for the log; or NULL */
};

void	 msg_init(struct msgw *);
void	 msg_add_u8(struct msgw *, uint8_t);
void	 msg_add_u32(struct msgw *, uint32_t);
void	 msg_add_i32(struct msgw *, int32_t);
void	 msg_add_u64(struct msgw *, uint64_t);
void	 msg_add_i64(struct msgw *, int64_t);
void	 msg_add_str(struct msgw *, const char *);	/* NULL sends "" */
void	 msg_add_data(struct msgw *, const void *, size_t);
/*
 * msg_send: compose the built payload on ibuf and free it (on failure too);
 * -1 with errno on error (ENOMEM if an msg_add_* failed, else what
 * imsg_compose says).  fd as with imsg_compose: the channel owns it once
 * this succeeds; on failure the caller still does.
 */
int	 msg_send(struct msgw *, struct imsgbuf *, uint32_t type,
	    uint32_t peerid, int fd);
void	 msg_free(struct msgw *);

void	 msg_reader(struct msgr *, const struct imsg *);
void	 msg_reader_buf(struct msgr *, const void *, size_t);
int	 msg_get_u8(struct msgr *, uint8_t *);
int	 msg_get_u32(struct msgr *, uint32_t *);
int	 msg_get_i32(struct msgr *, int32_t *);
int	 msg_get_u64(struct msgr *, uint64_t *);
int	 msg_get_i64(struct msgr *, int64_t *);
/*
 * msg_get_str: a string of at most maxlen bytes (not counting NUL), with no
 * embedded NUL.  *out points into the payload; valid while the imsg lives.
 */
int	 msg_get_str(struct msgr *, const char **out, size_t maxlen);
/* msg_get_strdup: the same, copied with strdup (fatal on ENOMEM). */
int	 msg_get_strdup(struct msgr *, char **out, size_t maxlen);
/* msg_get_data: a blob of at most maxlen bytes; *out points into it. */
int	 msg_get_data(struct msgr *, const void **out, size_t *len,
	    size_t maxlen);
/* msg_end: 0 if everything decoded and nothing is left over, else -1. */
int	 msg_end(struct msgr *);
/*
 * msg_fail: mark the payload bad for a reason of the caller's (a value out
 * of range), so one msg_end() check and one log line cover it; the first
 * failure's what is kept.
 */
void	 msg_fail(struct msgr *, const char *what);

#endif /* NOPS_MSG_H */
