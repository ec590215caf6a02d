/*
 * Hexadecimal encoding and decoding (hex.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hex.h"

void
hex_encode(const void *data, size_t len, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	const uint8_t		*p = data;
	size_t			 i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0x0f];
	}
	out[2 * len] = '\0';
}

int
hex_lower(const char *s, size_t len)
{
	return strlen(s) == len && strspn(s, "0123456789abcdef") == len;
}

int
hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
hex_decode(const char *s, uint8_t *out, size_t outlen)
{
	size_t	 i;
	int	 hi, lo;

	if (strlen(s) != outlen * 2)
		return -1;
	for (i = 0; i < outlen; i++) {
		if ((hi = hex_value((unsigned char)s[2 * i])) == -1 ||
		    (lo = hex_value((unsigned char)s[2 * i + 1])) == -1)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

ssize_t
hex_pct_decode(const char *src, size_t len, char *dst, size_t dstlen,
    int flags)
{
	size_t	 i, o = 0;
	int	 hi = -1, lo = -1;
	char	 c;

	for (i = 0; i < len; i++) {
		c = src[i];
		if (c == '%') {
			if (i + 2 < len) {
				hi = hex_value((unsigned char)src[i + 1]);
				lo = hex_value((unsigned char)src[i + 2]);
			}
			if (i + 2 < len && hi != -1 && lo != -1) {
				c = (char)(hi << 4 | lo);
				i += 2;
			} else if (!(flags & HEX_PCT_LENIENT))
				return -1;
		} else if (c == '+' && (flags & HEX_PCT_PLUS))
			c = ' ';
		if (o + 1 >= dstlen)
			return -1;
		dst[o++] = c;
	}
	if (dstlen == 0)
		return -1;
	dst[o] = '\0';
	return (ssize_t)o;
}
