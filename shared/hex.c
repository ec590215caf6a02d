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
