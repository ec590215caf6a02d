/*
 * Hexadecimal, once for every process: lower case out, either case in.
 */
#ifndef NOPS_HEX_H
#define NOPS_HEX_H

#include <stddef.h>
#include <stdint.h>

/* hex_encode: len bytes as 2 * len lower-case digits and a NUL. */
void	 hex_encode(const void *, size_t len, char *out);
/* hex_value: a digit's value, or -1 if c is not a hex digit. */
int	 hex_value(int c);
/*
 * hex_decode: exactly 2 * outlen digits (either case) into outlen bytes;
 * 0, or -1 if s is of another length or holds a non-digit.
 */
int	 hex_decode(const char *s, uint8_t *out, size_t outlen);

#endif /* NOPS_HEX_H */
