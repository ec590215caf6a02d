/*
 * Authentication to remotes.  ssh: the private key comes from the master
 * in memory (never a file, never an agent, never a password prompt) and
 * the host key must match an entry of the known_hosts text the master
 * sent: there is no trust on first use.  http(s): anonymous only; the
 * TLS certificate is checked by libgit2 against the system CA store.
 */
#include "config.h"

#include <sys/types.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>

#include "log.h"
#include "text.h"
#include "nops.h"
#include "git.h"

#define KH_LINE_MAX		16384
#define KH_KEY_MAX		8192	/* a decoded public key */

int
git_cb_credentials(git_credential **out, const char *url,
    const char *user_from_url, unsigned int allowed, void *payload)
{
	struct git_repo	*r = payload;
	const char	*user;

	user = user_from_url != NULL && user_from_url[0] != '\0' ?
	    user_from_url : "git";
	if (allowed & GIT_CREDENTIAL_USERNAME)
		return git_credential_username_new(out, user);
	/* One key, one try: a refused key is an error, not a prompt. */
	if (r->gr_auth_tries++ > 0) {
		snprintf(r->gr_why, sizeof(r->gr_why), "the remote refused "
		    "the ssh key for user %s", user);
		return GIT_EUSER;
	}
	if (allowed & GIT_CREDENTIAL_SSH_MEMORY) {
		if (r->gr_key == NULL) {
			snprintf(r->gr_why, sizeof(r->gr_why), "the remote "
			    "wants an ssh key and none is configured");
			return GIT_EUSER;
		}
		return git_credential_ssh_key_memory_new(out, user, NULL,
		    r->gr_key, NULL);
	}
	snprintf(r->gr_why, sizeof(r->gr_why), "the remote asks for "
	    "credentials nops does not give (only anonymous http(s) and "
	    "ssh keys are supported)");
	return GIT_EUSER;
}

/* Decode standard base64 (padding optional); -1 on a bad character. */
static int
kh_b64(const char *s, size_t len, unsigned char *out, size_t max,
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
		    kh_b64(pat + 3, bar - pat - 3, salt, sizeof(salt),
		    &saltlen) == -1 ||
		    kh_b64(bar + 1, pat + len - bar - 1, hash, sizeof(hash),
		    &hashlen) == -1 || hashlen != 20)
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
git_known_hosts_check(const char *known, size_t knownlen, const char *host,
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
		    kh_b64(b64, flen, blob, sizeof(blob), &bloblen) == -1)
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
	text_clean_inplace(why, whylen, 0);
	return -1;
}

/* The port of an ssh URL: ssh://[user@]host[:port]/path; scp-like is 22. */
int
git_url_port(const char *url)
{
	const char	*p, *slash, *colon;
	long		 port;
	char		*end;

	if (strncmp(url, "ssh://", 6) != 0)
		return 22;
	p = url + 6;
	if ((slash = strchr(p, '/')) == NULL)
		slash = p + strlen(p);
	if ((colon = memchr(p, '@', slash - p)) != NULL)
		p = colon + 1;
	if (*p == '[') {
		if ((p = memchr(p, ']', slash - p)) == NULL)
			return 22;
		p++;
	}
	if ((colon = memchr(p, ':', slash - p)) == NULL)
		return 22;
	port = strtol(colon + 1, &end, 10);
	if (end != slash || port < 1 || port > 65535)
		return 22;
	return (int)port;
}

int
git_cb_certificate(git_cert *cert, int valid, const char *host,
    void *payload)
{
	struct git_repo		*r = payload;
	git_cert_hostkey	*hk;

	if (cert->cert_type == GIT_CERT_HOSTKEY_LIBSSH2) {
		hk = (git_cert_hostkey *)cert;
		if (!(hk->type & GIT_CERT_SSH_RAW) || hk->hostkey == NULL) {
			snprintf(r->gr_why, sizeof(r->gr_why), "%s sent no "
			    "host key to check", host);
			return GIT_ECERTIFICATE;
		}
		if (r->gr_known == NULL) {
			snprintf(r->gr_why, sizeof(r->gr_why), "no known-hosts "
			    "file is configured: ssh host keys are pinned");
			return GIT_ECERTIFICATE;
		}
		if (git_known_hosts_check(r->gr_known, r->gr_knownlen, host,
		    git_url_port(r->gr_url),
		    (const unsigned char *)hk->hostkey, hk->hostkey_len,
		    r->gr_why, sizeof(r->gr_why)) == -1)
			return GIT_ECERTIFICATE;
		return 0;
	}
	/* TLS: libgit2 checked the chain and the name. */
	if (!valid) {
		snprintf(r->gr_why, sizeof(r->gr_why), "the TLS certificate "
		    "of %s does not verify against the system's CA store",
		    host);
		return GIT_ECERTIFICATE;
	}
	return 0;
}
