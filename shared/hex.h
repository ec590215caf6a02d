/*
 * Hexadecimal, once for every process: lower case out, either case in.
 */
#ifndef NOPS_HEX_H
#define NOPS_HEX_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

/* hex_encode: len bytes as 2 * len lower-case digits and a NUL. */
void	 hex_encode(const void *, size_t len, char *out);
/* hex_value: a digit's value, or -1 if c is not a hex digit. */
int	 hex_value(int c);
/* hex_lower: 1 if s is exactly len lower-case hex digits, else 0. */
int	 hex_lower(const char *s, size_t len);
/*
 * hex_decode: exactly 2 * outlen digits (either case) into outlen bytes;
 * 0, or -1 if s is of another length or holds a non-digit.
 */
int	 hex_decode(const char *s, uint8_t *out, size_t outlen);

/*
 * hex_pct_decode: percent-decode len bytes of src into dst, dstlen bytes
 * with the NUL.  HEX_PCT_PLUS: '+' is a space (query strings, forms).
 * HEX_PCT_LENIENT: a '%' without two hex digits after it is kept as it
 * is; without it, that fails.  The decoded length, or -1 (a bad escape,
 * no room).  What bytes the result may hold is the caller's rule.
 */
#define HEX_PCT_PLUS	0x01
#define HEX_PCT_LENIENT	0x02
ssize_t	 hex_pct_decode(const char *src, size_t len, char *dst,
	    size_t dstlen, int flags);

#endif /* NOPS_HEX_H */
