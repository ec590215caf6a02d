/*
 * Host keys against known_hosts text (shared/knownhosts.c).
 */
#ifndef NOPS_KNOWNHOSTS_H
#define NOPS_KNOWNHOSTS_H

#include <stddef.h>

/*
 * 0 if key (the raw blob the server presented) matches an entry for
 * host and port (22: "host", else "[host]:port") in known; else -1 with
 * why (naming the host, the key type and its SHA256 fingerprint).
 */
int	 knownhosts_check(const char *known, size_t knownlen,
	    const char *host, int port, const unsigned char *key,
	    size_t keylen, char *why, size_t whylen);
/* Standard base64 (padding optional); -1 on a bad character. */
int	 knownhosts_b64(const char *s, size_t len, unsigned char *out,
	    size_t max, size_t *outlen);

#endif /* NOPS_KNOWNHOSTS_H */
