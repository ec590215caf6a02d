/*
 * Allocation that cannot fail: out of memory is fatal (fatal(), log.h)
 * in every process, so callers need no error path for it.
 */
#ifndef NOPS_XMALLOC_H
#define NOPS_XMALLOC_H

/* strdup(3) that exits on failure; NULL stays NULL. */
char	*xstrdup(const char *);

#endif
