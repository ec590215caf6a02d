/*
 * Allocation that cannot fail (xmalloc.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
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

char *
xasprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	char	*s;

	if (vasprintf(&s, fmt, ap) == -1)
		fatal("vasprintf");
	return s;
}
