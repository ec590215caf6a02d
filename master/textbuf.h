/*
 * A growing, NUL-terminated text (master/textbuf.c): the diffs of
 * gitctx.c and the /metrics exposition of metrics.c.  An allocation
 * failure is fatal.  Start from a zeroed struct; free(3) tb_text.
 */
#ifndef NOPS_TEXTBUF_H
#define NOPS_TEXTBUF_H

#include <stddef.h>

struct textbuf {
	char	*tb_text;	/* NUL-terminated once anything is added */
	size_t	 tb_len;	/* without the NUL */
	size_t	 tb_size;
};

/* n bytes of s (n may be 0: the text is then at least ""). */
void	 textbuf_add(struct textbuf *, const char *, size_t);
void	 textbuf_str(struct textbuf *, const char *);

#endif
