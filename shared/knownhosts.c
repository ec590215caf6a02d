/*
 * Checking a host key against known_hosts text (OpenSSH's format: host
 * patterns with * and ?, [host]:port, hashed names, @revoked; no
 * certificate authorities).  There is no trust on first use: a host
 * with no entry is refused.  Used by the gitworker (git over ssh) and
 * the nomadworker (SSH hosts).
 */
#include "config.h"

#include <sys/types.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>

#include "log.h"
#include "knownhosts.h"

#define KH_LINE_MAX		16384
#define KH_KEY_MAX		8192	/* a decoded public key */

/* Decode standard base64 (padding optional); -1 on a bad character. */
int
knownhosts_b64(const char *s, size_t len, unsigned char *out, size_t max,
    size_t *outlen)
{
	static const char	 tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const char		*p;
	uint32_t		 acc = 0;
	size_t			 i, n = 0;
	int			 bits = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '=')
			break;
		if ((p = strchr(tab, s[i])) == NULL || s[i] == '\0')
			return -1;
		acc = (acc << 6) | (uint32_t)(p - tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == max)
				return -1;
			out[n++] = (acc >> bits) & 0xff;
		}
	}
	*outlen = n;
	return 0;
}

static void
kh_b64_encode(const unsigned char *in, size_t len, char *out, size_t max)
{
	static const char	 tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t		 acc = 0;
	size_t			 i, n = 0;
	int			 bits = 0;

	for (i = 0; i < len; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 6 && n + 1 < max) {
			bits -= 6;
			out[n++] = tab[(acc >> bits) & 0x3f];
		}
	}
	if (bits > 0 && n + 1 < max)
		out[n++] = tab[(acc << (6 - bits)) & 0x3f];
	out[n] = '\0';
}

/*
 * ssh's host patterns: '*' and '?' are the only wildcards (brackets are
 * literal, as in "[host]:port"); names compare without case.
 */
static int
kh_glob(const char *pat, const char *s)
{
	for (; *pat != '\0'; pat++, s++) {
		if (*pat == '*') {
			while (pat[1] == '*')
				pat++;
			for (;; s++) {
				if (kh_glob(pat + 1, s))
					return 1;
				if (*s == '\0')
					return 0;
			}
		}
		if (*s == '\0' || (*pat != '?' &&
		    tolower((unsigned char)*pat) != tolower((unsigned char)*s)))
			return 0;
	}
	return *s == '\0';
}

/* One pattern of a known_hosts host list against "host" or "[host]:port". */
static int
kh_pattern(const char *pat, size_t len, const char *name)
{
	unsigned char	 salt[64], hash[64], mac[EVP_MAX_MD_SIZE];
	char		 buf[512];
	const char	*bar;
	size_t		 saltlen, hashlen;
	unsigned int	 maclen;

	if (len >= sizeof(buf))
		return 0;
	/* |1|base64 salt|base64 HMAC-SHA1 of the name (HashKnownHosts) */
	if (len > 3 && strncmp(pat, "|1|", 3) == 0) {
		if ((bar = memchr(pat + 3, '|', len - 3)) == NULL ||
		    knownhosts_b64(pat + 3, bar - pat - 3, salt, sizeof(salt),
		    &saltlen) == -1 ||
		    knownhosts_b64(bar + 1, pat + len - bar - 1, hash,
		    sizeof(hash), &hashlen) == -1 || hashlen != 20)
			return 0;
		if (HMAC(EVP_sha1(), salt, (int)saltlen,
		    (const unsigned char *)name, strlen(name), mac,
		    &maclen) == NULL || maclen != 20)
			return 0;
		return CRYPTO_memcmp(mac, hash, 20) == 0;
	}
	memcpy(buf, pat, len);
	buf[len] = '\0';
	return kh_glob(buf, name);
}

/* A comma-separated host list: a negated match wins over any other. */
static int
kh_hosts_match(const char *list, size_t len, const char *name)
{
	const char	*p = list, *end = list + len, *comma;
	size_t		 n;
	int		 match = 0;

	while (p < end) {
		comma = memchr(p, ',', end - p);
		n = (comma != NULL ? comma : end) - p;
		if (n > 0 && p[0] == '!') {
			if (kh_pattern(p + 1, n - 1, name))
				return 0;
		} else if (n > 0 && kh_pattern(p, n, name))
			match = 1;
		p += n + 1;
	}
	return match;
}

/* The next whitespace-separated field of *p, or NULL. */
static const char *
kh_field(const char **p, size_t *len)
{
	const char	*s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0')
		return NULL;
	*len = strcspn(s, " \t");
	*p = s + *len;
	return s;
}

int
knownhosts_check(const char *known, size_t knownlen, const char *host,
    int port, const unsigned char *key, size_t keylen, char *why,
    size_t whylen)
{
	unsigned char	 blob[KH_KEY_MAX], md[EVP_MAX_MD_SIZE];
	char		 name[300], line[KH_LINE_MAX], fp[64], type[64];
	const char	*p, *eol, *end, *f, *hosts, *b64;
	size_t		 flen, hostslen, bloblen, n;
	unsigned int	 mdlen;
	int		 revoked, seen = 0, match = 0, bad = 0;

	if (port == 22 || port <= 0)
		snprintf(name, sizeof(name), "%s", host);
	else
		snprintf(name, sizeof(name), "[%s]:%d", host, port);

	end = known != NULL ? known + knownlen : NULL;
	for (p = known; p != NULL && p < end; p = eol + 1) {
		if ((eol = memchr(p, '\n', end - p)) == NULL)
			eol = end;
		n = eol - p;
		if (n >= sizeof(line))
			continue;
		memcpy(line, p, n);
		line[n] = '\0';
		line[strcspn(line, "\r")] = '\0';
		f = line;
		if ((hosts = kh_field(&f, &hostslen)) == NULL ||
		    hosts[0] == '#')
			continue;
		revoked = 0;
		if (hosts[0] == '@') {
			if (hostslen == 8 && strncmp(hosts, "@revoked", 8) == 0)
				revoked = 1;
			else
				continue;	/* @cert-authority: no CAs */
			if ((hosts = kh_field(&f, &hostslen)) == NULL)
				continue;
		}
		if (!kh_hosts_match(hosts, hostslen, name))
			continue;
		if (kh_field(&f, &flen) == NULL ||
		    (b64 = kh_field(&f, &flen)) == NULL ||
		    knownhosts_b64(b64, flen, blob, sizeof(blob),
		    &bloblen) == -1)
			continue;
		if (revoked) {
			if (bloblen == keylen && memcmp(blob, key, keylen) == 0)
				bad = 1;
			continue;
		}
		seen = 1;
		if (bloblen == keylen && memcmp(blob, key, keylen) == 0)
			match = 1;
	}

	/* The key blob starts with its type: uint32 length + name. */
	type[0] = '\0';
	if (keylen > 4) {
		n = ((size_t)key[0] << 24) | ((size_t)key[1] << 16) |
		    ((size_t)key[2] << 8) | key[3];
		if (n < sizeof(type) && n <= keylen - 4) {
			memcpy(type, key + 4, n);
			type[n] = '\0';
		}
	}
	if (EVP_Digest(key, keylen, md, &mdlen, EVP_sha256(), NULL) != 1)
		fatalx("EVP_Digest");
	kh_b64_encode(md, mdlen, fp, sizeof(fp));

	if (bad) {
		snprintf(why, whylen, "the host key of %s is revoked in the "
		    "known-hosts file (%s SHA256:%s)", name, type, fp);
		return -1;
	}
	if (match)
		return 0;
	if (!seen)
		snprintf(why, whylen, "no known-hosts entry for %s (it "
		    "presented %s SHA256:%s)", name, type, fp);
	else
		snprintf(why, whylen, "the host key of %s does not match the "
		    "known-hosts file (it presented %s SHA256:%s)", name, type,
		    fp);
	return -1;
}

