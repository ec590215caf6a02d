/*
 * A buffer that grows by doubling (growbuf.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "growbuf.h"

void
growbuf_init(struct growbuf *gb)
{
	memset(gb, 0, sizeof(*gb));
}

void
growbuf_free(struct growbuf *gb)
{
	free(gb->gb_buf);
	memset(gb, 0, sizeof(*gb));
}

void
growbuf_reset(struct growbuf *gb)
{
	gb->gb_len = 0;
	gb->gb_err = 0;
	if (gb->gb_buf != NULL)
		gb->gb_buf[0] = '\0';
}

/* Room for n more bytes and the NUL: 0, or -1 with gb_err set. */
static int
growbuf_room(struct growbuf *gb, size_t n)
{
	size_t	 size;
	char	*p;

	if (gb->gb_max != 0 && n > gb->gb_max - gb->gb_len) {
		gb->gb_err = GROWBUF_TOOBIG;
		return -1;
	}
	if (n < gb->gb_size - gb->gb_len)
		return 0;
	if (n > SIZE_MAX / 2 - gb->gb_len) {
		gb->gb_err = GROWBUF_NOMEM;
		return -1;
	}
	size = gb->gb_size != 0 ? gb->gb_size :
	    gb->gb_first != 0 ? gb->gb_first : GROWBUF_FIRST;
	while (size - gb->gb_len <= n)
		size *= 2;
	if (gb->gb_max != 0 && size > gb->gb_max + 1)
		size = gb->gb_max + 1;
	if ((p = realloc(gb->gb_buf, size)) == NULL) {
		gb->gb_err = GROWBUF_NOMEM;
		return -1;
	}
	gb->gb_buf = p;
	gb->gb_size = size;
	return 0;
}

int
growbuf_add(struct growbuf *gb, const void *data, size_t n)
{
	if (gb->gb_err != 0 || growbuf_room(gb, n) == -1)
		return -1;
	if (n > 0)
		memcpy(gb->gb_buf + gb->gb_len, data, n);
	gb->gb_len += n;
	gb->gb_buf[gb->gb_len] = '\0';
	return 0;
}

int
growbuf_puts(struct growbuf *gb, const char *s)
{
	return growbuf_add(gb, s, strlen(s));
}

int
growbuf_xadd(struct growbuf *gb, const void *data, size_t n)
{
	if (growbuf_add(gb, data, n) == -1 && gb->gb_err == GROWBUF_NOMEM)
		fatalx("out of memory");
	return gb->gb_err != 0 ? -1 : 0;
}

int
growbuf_xputs(struct growbuf *gb, const char *s)
{
	return growbuf_xadd(gb, s, strlen(s));
}
