/*
 * The boundary policy for untrusted text (nopsd(8), BOUNDARY): whatever
 * enters from outside (Nomad answers, HTTP requests, git files, notifier
 * answers) becomes valid UTF-8 without control characters, bounded in
 * length and cut only between characters, once, where it enters.  Code
 * behind the door then trusts it, and jansson never refuses it.
 */
#ifndef NOPS_TEXT_H
#define NOPS_TEXT_H

#include <stdarg.h>
#include <stddef.h>

#define TEXT_LINES	0x01	/* keep newlines and tabs (multi-line text) */

/* Length of the valid UTF-8 character at p (at most left bytes), or 0. */
size_t		 text_utf8_len(const void *, size_t);
/* Is the valid character of n bytes at p a control (C0, DEL, C1)? */
int		 text_is_control(const void *, size_t);
/* NULL if s[0..len) is valid UTF-8 without controls, else why not. */
const char	*text_check(const void *, size_t);
/* A relative path's parts: none empty, ".", ".." or after a last "/". */
int		 text_path_parts_ok(const char *);
/* Is s[0..len) valid UTF-8 (controls allowed)? */
int		 text_valid(const void *, size_t);
/* The longest prefix of s[0..len) of at most max bytes that ends on a
 * character boundary (s valid UTF-8). */
size_t		 text_cut(const char *, size_t, size_t);
/*
 * Normalise src[0..srclen) into dst (dstsize > 0): bytes that are not
 * UTF-8 become U+FFFD, controls are dropped (without TEXT_LINES a
 * newline, CR or tab becomes a space), and the result is cut between
 * characters to fit, ending with U+2026 when cut.  Returns the length
 * written; dst is NUL-terminated.
 */
size_t		 text_clean(char *, size_t, const void *, size_t, int);
/* The same into a new string of at most max bytes; free(3) it. */
char		*text_dup(const void *, size_t, size_t, int);
/* In place: the string in the buffer s of size bytes, normalised. */
void		 text_clean_inplace(char *, size_t, int);

/*
 * snprintf(3) whose result is normalised as text_clean() does: a message
 * that quotes untrusted text is valid UTF-8 and cut between characters.
 */
size_t		 text_printf(char *, size_t, int, const char *, ...)
		    __attribute__((__format__(printf, 4, 5)));
size_t		 text_vprintf(char *, size_t, int, const char *, va_list)
		    __attribute__((__format__(printf, 4, 0)));

#endif
