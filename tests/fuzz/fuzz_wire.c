/*
 * libFuzzer target: the payload decoders of shared/wire.c.  The first
 * byte picks a layout, the rest is its payload.  Invariants (abort on
 * violation): a payload that decodes re-encodes to the same bytes; one
 * that does not says what failed.
 */
/* FUZZ-SOURCES: shared/wire.c shared/msg.c shared/imsg.c shared/log.c */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "wire.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct layout {
	int	(*get)(struct msgr *, void *);
	void	(*put)(struct msgw *, const void *);
};

#define LAYOUT(name)							\
static int								\
get_##name(struct msgr *r, void *p)					\
{									\
	return wire_get_##name(r, p);					\
}									\
static void								\
put_##name(struct msgw *m, const void *p)				\
{									\
	wire_put_##name(m, p);						\
}
#define ROW(name)	{ get_##name, put_##name }

/* Every layout of wire.h: one LAYOUT() and one ROW() each. */
LAYOUT(web_request)
LAYOUT(web_answer)
LAYOUT(web_doc)
LAYOUT(web_want)

static const struct layout layouts[] = {
	ROW(web_request),
	ROW(web_answer),
	ROW(web_doc),
	ROW(web_want),
};

/* Large enough for any wire_* struct. */
union wire_any {
	struct wire_web_request	 request;
	struct wire_web_answer	 answer;
	struct wire_web_doc	 doc;
	struct wire_web_want	 want;
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct layout	*l;
	union wire_any		 v;
	struct msgr		 r;
	struct msgw		 w;

	if (size < 1)
		return 0;
	l = &layouts[data[0] % (sizeof(layouts) / sizeof(layouts[0]))];
	data++;
	size--;
	memset(&v, 0, sizeof(v));
	msg_reader_buf(&r, data, size);
	if (l->get(&r, &v) == -1) {
		if (r.err == 0 || r.what == NULL)
			abort();
		return 0;
	}
	if (r.what != NULL)
		abort();
	msg_init(&w);
	l->put(&w, &v);
	if (w.err || w.len != size || memcmp(w.buf, data, size) != 0)
		abort();
	msg_free(&w);
	return 0;
}
