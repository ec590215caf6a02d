/*
 * A growing, NUL-terminated text (see textbuf.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "textbuf.h"

#define TEXTBUF_FIRST	1024

void
textbuf_add(struct textbuf *tb, const char *s, size_t n)
{
	size_t	 size;
	char	*p;

	if (tb->tb_len + n + 1 > tb->tb_size) {
		size = tb->tb_size == 0 ? TEXTBUF_FIRST : tb->tb_size;
		while (size < tb->tb_len + n + 1)
			size *= 2;
		if ((p = realloc(tb->tb_text, size)) == NULL)
			fatal("realloc");
		tb->tb_text = p;
		tb->tb_size = size;
	}
	memcpy(tb->tb_text + tb->tb_len, s, n);
	tb->tb_len += n;
	tb->tb_text[tb->tb_len] = '\0';
}

void
textbuf_str(struct textbuf *tb, const char *s)
{
	textbuf_add(tb, s, strlen(s));
}
