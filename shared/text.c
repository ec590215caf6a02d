/*
 * One routine for untrusted text (see text.h): every process uses it,
 * for checking (names, paths) and for normalising (reasons, messages,
 * anything shown or stored).
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "text.h"

static const char	 text_repl[] = "\xef\xbf\xbd";	/* U+FFFD */
static const char	 text_more[] = "\xe2\x80\xa6";	/* U+2026 */

size_t
text_utf8_len(const void *v, size_t left)
{
	const unsigned char	*p = v;
	uint32_t		 cp, min;
	size_t			 n, i;

	if (left == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (n > left)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates, past U+10FFFF. */
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int
text_is_control(const void *v, size_t n)
{
	const unsigned char	*p = v;

	if (n == 1)
		return p[0] < 0x20 || p[0] == 0x7f;
	/* C1 controls, U+0080..U+009F: some terminals obey them. */
	return n == 2 && p[0] == 0xc2 && p[1] < 0xa0;
}

const char *
text_check(const void *v, size_t len)
{
	const unsigned char	*p = v;
	size_t			 i, n;

	for (i = 0; i < len; i += n) {
		if ((n = text_utf8_len(p + i, len - i)) == 0)
			return "bad UTF-8";
		if (text_is_control(p + i, n))
			return "a control character";
	}
	return NULL;
}

int
text_valid(const void *v, size_t len)
{
	const unsigned char	*p = v;
	size_t			 i, n;

	for (i = 0; i < len; i += n)
		if ((n = text_utf8_len(p + i, len - i)) == 0)
			return 0;
	return 1;
}

size_t
text_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	/* Back over continuation bytes to the start of a character. */
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

size_t
text_clean(char *dst, size_t dstsize, const void *v, size_t srclen,
    int flags)
{
	const unsigned char	*p = v;
	const char		*add;
	size_t			 i, n, o = 0, alen, limit;

	if (dstsize == 0)
		fatalx("no room");
	limit = dstsize - 1;
	for (i = 0; i < srclen; i += n) {
		if ((n = text_utf8_len(p + i, srclen - i)) == 0) {
			n = 1;
			add = text_repl;
			alen = 3;
		} else if (text_is_control(p + i, n)) {
			if ((flags & TEXT_LINES) && (p[i] == '\n' ||
			    p[i] == '\t')) {
				add = (const char *)p + i;
				alen = 1;
			} else if (!(flags & TEXT_LINES) && (p[i] == '\n' ||
			    p[i] == '\t' || p[i] == '\r')) {
				add = " ";
				alen = 1;
			} else
				continue;
		} else {
			add = (const char *)p + i;
			alen = n;
		}
		if (o + alen > limit) {
			/* Cut between characters, leaving room for "…". */
			if (limit >= 3) {
				while (o > limit - 3)
					o = text_cut(dst, o, o - 1);
				memcpy(dst + o, text_more, 3);
				o += 3;
			}
			break;
		}
		memcpy(dst + o, add, alen);
		o += alen;
	}
	dst[o] = '\0';
	return o;
}

char *
text_dup(const void *src, size_t srclen, size_t max, int flags)
{
	char	*s;
	size_t	 size;

	/* Each byte becomes at most three. */
	size = srclen < max / 3 ? srclen * 3 + 1 : max + 1;
	if ((s = malloc(size)) == NULL)
		fatal(NULL);
	text_clean(s, size, src, srclen, flags);
	return s;
}

void
text_clean_inplace(char *s, size_t size, int flags)
{
	char	*t;
	size_t	 len = strlen(s);

	if (text_check(s, len) == NULL)
		return;
	t = text_dup(s, len, size - 1, flags);
	memcpy(s, t, strlen(t) + 1);
	free(t);
}

size_t
text_vprintf(char *dst, size_t size, int flags, const char *fmt, va_list ap)
{
	char	*s;
	int	 n;
	size_t	 len;

	if ((n = vasprintf(&s, fmt, ap)) == -1)
		fatal(NULL);
	len = text_clean(dst, size, s, (size_t)n, flags);
	free(s);
	return len;
}

size_t
text_printf(char *dst, size_t size, int flags, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 len;

	va_start(ap, fmt);
	len = text_vprintf(dst, size, flags, fmt, ap);
	va_end(ap);
	return len;
}

int
text_path_parts_ok(const char *path)
{
	const char	*p;
	size_t		 n;

	for (p = path; *p != '\0'; p += n + (p[n] == '/')) {
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.') ||
		    (p[n] == '/' && p[n + 1] == '\0'))
			return 0;
	}
	return 1;
}
