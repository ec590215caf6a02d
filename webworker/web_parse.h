/*
 * What the webworker parses and escapes, in pure functions: no libevent,
 * no I/O, so that the fuzz target (tests/fuzz/fuzz_web_request.c) and the
 * unit test link this file alone.  Everything here takes untrusted input:
 * bounds are checked, malformed input is refused, never repaired.
 */
#ifndef NOPS_WEB_PARSE_H
#define NOPS_WEB_PARSE_H

#include <stdarg.h>
#include <stddef.h>

#include "growbuf.h"

#define WEB_FORM_MAX		(16 * 1024)	/* an urlencoded body or
						   query */
#define WEB_FORM_FIELDS_MAX	16
#define WEB_FORM_NAME_MAX	32
#define WEB_FORM_VALUE_MAX	4096
#define WEB_COOKIE_VALUE_MAX	256
#define WEB_SEGS_MAX		8		/* path segments of a page */
#define WEB_SEG_MAX		256		/* one segment, decoded */
#define WEB_TOKEN_HEXLEN	64		/* a form token: 32 random
						   bytes */

/*
 * Pages are built in a growbuf (shared/growbuf.h) with growbuf_add and
 * growbuf_puts, which never exit: a failed allocation sets gb_err and
 * every later add does nothing, so a caller checks once at the end.
 * growbuf_puts is for trusted markup only: a constant of ours, never a
 * value; values go through the escapes below.
 */
/* The one HTML escape: & < > " ' become entities; NULL adds nothing. */
void	 wbuf_html(struct growbuf *, const char *);
void	 wbuf_htmln(struct growbuf *, const char *, size_t);
/*
 * HTML from a format: the format's own text is trusted markup, every %s
 * argument is escaped with wbuf_html().  Conversions: %s %d %u %ld %lu
 * %lld %llu %zu %x %%; anything else marks the buffer bad.
 */
void	 wbuf_htmlf(struct growbuf *, const char *fmt, ...)
	    __attribute__((__format__(printf, 2, 3)));
void	 wbuf_vhtmlf(struct growbuf *, const char *fmt, va_list);
/* Percent-encode everything but unreserved characters (RFC 3986). */
void	 wbuf_urlenc(struct growbuf *, const char *);

/* Percent-encode s into dst (a path segment or query value). */
int	 web_urlenc(const char *s, char *dst, size_t dstlen);

/*
 * Percent-decode len bytes of src into dst (NUL-terminated); with plus,
 * '+' is a space (forms).  -1 on a bad escape, a NUL or control byte
 * (other than tab) once decoded, or no room.  Returns the length.
 */
int	 web_urldecode(const char *src, size_t len, char *dst, size_t dstlen,
	    int plus);

/*
 * application/x-www-form-urlencoded (a POST body or a query string).
 * Names and values are decoded copies; a name twice, a field without
 * '=', too many fields or a field too long makes the whole form bad.
 */
struct web_form {
	size_t		 wf_n;
	char		*wf_name[WEB_FORM_FIELDS_MAX];
	char		*wf_value[WEB_FORM_FIELDS_MAX];
};

/* 0, or -1 with a short reason (a constant) in *why. */
int	 web_form_parse(struct web_form *, const char *src, size_t len,
	    const char **why);
const char *web_form_get(const struct web_form *, const char *name);
/* Frees and zeroes every value (a form may hold a password). */
void	 web_form_free(struct web_form *);

/*
 * The value of cookie name in a Cookie header.  Returns 1 and the value
 * in out, 0 if absent, -1 if the header is malformed where it matters: the
 * cookie is there twice, its value is too long or holds bytes outside
 * RFC 6265's cookie-octet.
 */
int	 web_cookie_get(const char *header, const char *name, char *out,
	    size_t outlen);

/*
 * Split the path of a request target (up to '?' or the end) into decoded
 * segments: "/" gives 0 segments, "/a/b" gives "a" and "b".  -1 for a
 * path that does not start with '/', an empty segment (but a trailing
 * '/'), "." or "..", a '/' or control byte once decoded, or too many or
 * too long segments.
 */
int	 web_path_split(const char *target, char segs[][WEB_SEG_MAX],
	    size_t maxsegs);

/* The query of a request target (after '?'), or "". */
const char *web_target_query(const char *target);

/* A redirect target of our own site: "/..." but not "//" or "/\". */
int	 web_local_path(const char *);

/* Equal strings, in time that does not depend on where they differ. */
int	 web_token_eq(const char *, const char *);

/* A token of form: exactly WEB_TOKEN_HEXLEN lowercase hex digits. */
int	 web_token_valid(const char *);

#endif /* NOPS_WEB_PARSE_H */
