/*
 * JSON builders that cannot return NULL (see jsonb.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "text.h"
#include "jsonb.h"

json_t *
jsonb_pack_at(const char *where, const char *fmt, ...)
{
	json_error_t	 jerr;
	json_t		*j;
	va_list		 ap;
	const char	*p;

	va_start(ap, fmt);
	j = json_vpack_ex(&jerr, 0, fmt, ap);
	va_end(ap);
	if (j != NULL)
		return j;
	log_warnx("%s: JSON not built: %s (%s, at %d)", where, jerr.text,
	    jerr.source, jerr.position);
	p = fmt + strspn(fmt, " \t\n,:");
	if (*p == '[')
		j = json_array();
	else if (*p == '{')
		j = json_object();
	else
		j = json_null();
	if (j == NULL)
		fatalx("%s: out of memory", where);
	return j;
}

json_t *
jsonb_strn(const char *s, size_t len)
{
	json_t	*j;
	char	*t;

	if (s == NULL)
		return json_null();
	if (text_valid(s, len) && memchr(s, '\0', len) == NULL)
		j = json_stringn(s, len);
	else {
		t = text_dup(s, len, len * 3, TEXT_LINES);
		j = json_string(t);
		free(t);
	}
	if (j == NULL)
		fatalx("out of memory");
	return j;
}

json_t *
jsonb_str(const char *s)
{
	return s == NULL ? json_null() : jsonb_strn(s, strlen(s));
}

json_t *
jsonb_printf(const char *fmt, ...)
{
	va_list	 ap;
	json_t	*j;
	char	*s;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatal(NULL);
	j = jsonb_strn(s, (size_t)n);
	free(s);
	return j;
}

char *
jsonb_dump(const json_t *j, size_t flags)
{
	char	*s;

	if ((s = json_dumps(j, flags)) == NULL)
		fatalx("json_dumps");
	return s;
}
