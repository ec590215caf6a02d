/*
 * Allocation that cannot fail (xmalloc.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

char *
xstrdup(const char *s)
{
	char	*p;

	if (s == NULL)
		return NULL;
	if ((p = strdup(s)) == NULL)
		fatal("strdup");
	return p;
}
