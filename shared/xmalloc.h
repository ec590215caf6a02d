/*
 * Allocation that cannot fail: out of memory is fatal (fatal(), log.h)
 * in every process, so callers need no error path for it.
 */
#ifndef NOPS_XMALLOC_H
#define NOPS_XMALLOC_H

#include <stdarg.h>

/* strdup(3) that exits on failure; NULL stays NULL. */
char	*xstrdup(const char *);
/* asprintf(3) and vasprintf(3) that exit on failure: the new string. */
char	*xasprintf(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));
char	*xvasprintf(const char *, va_list)
	    __attribute__((__format__(printf, 1, 0)));

#endif
