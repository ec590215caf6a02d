/*
 * JSON builders that cannot hand back NULL (nopsd(8), BOUNDARY).
 * jansson refuses strings that are not UTF-8 and returns NULL; a caller
 * that passes that on crashes the master or answers nothing.  These
 * always return a value: text is normalised (shared/text.c), and a pack
 * that still fails is logged with where it was and gives an empty
 * object or array of the shape asked for.
 */
#ifndef NOPS_JSONB_H
#define NOPS_JSONB_H

#include <stddef.h>
#include <jansson.h>

#define jsonb_pack(...)	jsonb_pack_at(__func__, __VA_ARGS__)

json_t	*jsonb_pack_at(const char *, const char *, ...);
json_t	*jsonb_str(const char *);		/* NULL gives JSON null */
json_t	*jsonb_strn(const char *, size_t);
json_t	*jsonb_printf(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));
char	*jsonb_dump(const json_t *, size_t);	/* json_dumps, never NULL */

#endif
