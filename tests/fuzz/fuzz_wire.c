/*
 * libFuzzer target: the payload layouts of shared/wire*.c, through the
 * generic coder (wire.c) as the message table runs it.  The first byte
 * picks a layout, the rest is its payload.  Invariants (abort on
 * violation): a payload that decodes re-encodes to the same bytes; one
 * that does not says what failed.
 */
/* FUZZ-SOURCES: shared/wire.c shared/msg.c shared/imsg.c shared/log.c */
/* FUZZ-SOURCES: shared/wire_git.c shared/wire_nomad.c */
/* FUZZ-SOURCES: shared/wire_notify.c shared/wire_auth.c */
/* FUZZ-SOURCES: shared/wire_proc.c shared/wire_hosts.c shared/hex.c */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "wire.h"
#include "wire_auth.h"
#include "wire_git.h"
#include "wire_hosts.h"
#include "wire_nomad.h"
#include "wire_notify.h"
#include "wire_proc.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Every layout of shared/wire*.h: the list the message table uses. */
#define ROW(name)	&wire_layout_##name,
static const struct wire_layout *const layouts[] = {
	WIRE_LAYOUTS(ROW)
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static union imsg_payload	 v;	/* web_seen is large */
	const struct wire_layout	*l;
	struct msgr			 r;
	struct msgw			 w;

	if (size < 1)
		return 0;
	l = layouts[data[0] % (sizeof(layouts) / sizeof(layouts[0]))];
	data++;
	size--;
	memset(&v, 0, sizeof(v));
	msg_reader_buf(&r, data, size);
	if (wire_get(&r, l, &v) == -1) {
		if (r.err == 0 || r.what == NULL)
			abort();
		return 0;
	}
	if (r.what != NULL)
		abort();
	msg_init(&w);
	wire_put(&w, l, &v);
	/* An empty payload leaves w.buf NULL: nothing to compare. */
	if (w.err || w.len != size ||
	    (size > 0 && memcmp(w.buf, data, size) != 0))
		abort();
	msg_free(&w);
	return 0;
}
