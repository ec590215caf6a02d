/*
 * libFuzzer target: a payload decoded with a fixed sequence (u32,
 * str(64), data(1024), u64, end).  Invariants (abort on violation): a
 * payload that decodes re-encodes to the same bytes, its string is a C
 * string within the bound; a payload that does not says what failed.
 */
/* FUZZ-SOURCES: shared/msg.c shared/imsg.c shared/log.c */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"
#include "msg.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msgr	 r;
	struct msgw	 w;
	const char	*s;
	const void	*d;
	size_t		 dlen;
	uint32_t	 u32;
	uint64_t	 u64;

	msg_reader_buf(&r, data, size);
	msg_get_u32(&r, &u32);
	msg_get_str(&r, &s, 64);
	msg_get_data(&r, &d, &dlen, 1024);
	msg_get_u64(&r, &u64);
	if (msg_end(&r) == -1) {
		if (r.err == 0 || r.what == NULL)
			abort();
		return 0;
	}
	if (r.what != NULL || s == NULL || strlen(s) > 64 || dlen > 1024 ||
	    (dlen > 0 && d == NULL))
		abort();

	msg_init(&w);
	msg_add_u32(&w, u32);
	msg_add_str(&w, s);
	msg_add_data(&w, d, dlen);
	msg_add_u64(&w, u64);
	if (w.err || w.len != size || memcmp(w.buf, data, size) != 0)
		abort();
	msg_free(&w);
	return 0;
}
