/*
 * A buffer that grows by doubling, NUL-terminated once anything is added
 * (shared/growbuf.c).  Every process links it; each user keeps its own
 * policy on failure:
 *   - growbuf_add() never exits: a failed allocation or a passed cap sets
 *     gb_err, and every later add does nothing, so a caller that builds a
 *     whole text (the webworker's pages) checks once at the end;
 *   - growbuf_xadd() treats running out of memory as fatal (xmalloc.h), as
 *     the master's texts (gitctx.c, metrics.c) and the nomadworker's
 *     answers do; it still fails, with GROWBUF_TOOBIG, on the cap.
 * Start from a zeroed struct (growbuf_init), optionally set gb_first and
 * gb_max before the first add, and free with growbuf_free.
 */
#ifndef NOPS_GROWBUF_H
#define NOPS_GROWBUF_H

#include <stddef.h>

#define GROWBUF_FIRST	1024	/* the first allocation when gb_first is 0 */

#define GROWBUF_NOMEM	1	/* an allocation failed */
#define GROWBUF_TOOBIG	2	/* an add would pass gb_max */
#define GROWBUF_BAD	3	/* its user marked it bad (web_parse.c: a
				   format it cannot convert) */

struct growbuf {
	char	*gb_buf;	/* NUL-terminated once anything is added */
	size_t	 gb_len;	/* without the NUL */
	size_t	 gb_size;
	size_t	 gb_first;	/* first allocation; 0: GROWBUF_FIRST */
	size_t	 gb_max;	/* most bytes held (without the NUL);
				   0: no cap */
	int	 gb_err;	/* sticky: 0 or a GROWBUF_ code above */
};

void	 growbuf_init(struct growbuf *);
/* Free the memory and zero the struct (gb_first and gb_max too). */
void	 growbuf_free(struct growbuf *);
/* Empty it and clear gb_err, keeping the memory, gb_first and gb_max. */
void	 growbuf_reset(struct growbuf *);
/*
 * Append n bytes (n may be 0: the text is then at least "").  0, or -1
 * with gb_err set (and kept: every later add returns -1 at once).
 */
int	 growbuf_add(struct growbuf *, const void *, size_t);
int	 growbuf_puts(struct growbuf *, const char *);
/* As growbuf_add, but GROWBUF_NOMEM is fatal; -1 only on the cap. */
int	 growbuf_xadd(struct growbuf *, const void *, size_t);
int	 growbuf_xputs(struct growbuf *, const char *);

#endif
