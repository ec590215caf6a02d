/*
 * Credentials as both the master and the webworker see them: hashes of
 * secrets, the CSRF token of a session, and picking a session id or a
 * bearer token out of request headers.  Pure functions (OpenSSL only).
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include "log.h"
#include "authc.h"
#include "hex.h"

static const char auth_b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void
auth_b64url(const void *in, size_t len, char *out)
{
	const unsigned char	*p = in;
	uint32_t		 v;
	size_t			 i, o = 0;

	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		out[o++] = auth_b64chars[(v >> 18) & 63];
		out[o++] = auth_b64chars[(v >> 12) & 63];
		out[o++] = auth_b64chars[(v >> 6) & 63];
		out[o++] = auth_b64chars[v & 63];
	}
	if (len - i == 1) {
		v = (uint32_t)p[i] << 16;
		out[o++] = auth_b64chars[(v >> 18) & 63];
		out[o++] = auth_b64chars[(v >> 12) & 63];
	} else if (len - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		out[o++] = auth_b64chars[(v >> 18) & 63];
		out[o++] = auth_b64chars[(v >> 12) & 63];
		out[o++] = auth_b64chars[(v >> 6) & 63];
	}
	out[o] = '\0';
}

/*
 * SHA-256 fetched from its provider once: EVP_sha256() looks it up again
 * on every use, which the webworker did twice per request (the session's
 * hash and its CSRF token).
 */
static const EVP_MD *
auth_sha256(void)
{
	static EVP_MD	*md;

	if (md == NULL && (md = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL)
		fatalx("EVP_MD_fetch sha256");
	return md;
}

void
auth_sha256_hex(const void *data, size_t len, char out[AUTH_SHA256_HEX + 1])
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;

	if (EVP_Digest(data, len, md, &mdlen, auth_sha256(), NULL) != 1 ||
	    mdlen != 32)
		fatalx("EVP_Digest sha256");
	hex_encode(md, mdlen, out);
}

int
auth_equal(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b);

	/* The length of a random secret is no secret. */
	if (la != lb)
		return 0;
	return CRYPTO_memcmp(a, b, la) == 0;
}

static int
auth_b64_wellformed(const char *s, size_t len)
{
	return strlen(s) == len && strspn(s, auth_b64chars) == len;
}

int
auth_session_wellformed(const char *s)
{
	return auth_b64_wellformed(s, AUTH_SECRET_B64);
}

int
auth_token_wellformed(const char *s)
{
	size_t	 plen = strlen(AUTH_TOKEN_PREFIX);

	return strncmp(s, AUTH_TOKEN_PREFIX, plen) == 0 &&
	    auth_b64_wellformed(s + plen, AUTH_SECRET_B64);
}

/*
 * The CSRF token is a MAC of the session id, not stored: the database
 * holds neither (only hashes), and the token of a session can be given
 * again to the page that asks (GET /api/v1/session).
 */
void
auth_csrf_token(const char *sid, char out[AUTH_SECRET_B64 + 1])
{
	static const char	 label[] = "nops csrf v1";
	static EVP_MAC_CTX	*tmpl;
	EVP_MAC_CTX		*ctx;
	EVP_MAC			*mac;
	OSSL_PARAM		 params[2];
	unsigned char		 md[EVP_MAX_MD_SIZE];
	size_t			 mdlen = 0;

	/*
	 * HMAC() fetches the MAC and the digest again on every call (a
	 * login's and each session probe's cost): a context with the
	 * digest set is made once and copied for each key.
	 */
	if (tmpl == NULL) {
		params[0] = OSSL_PARAM_construct_utf8_string("digest",
		    (char *)"SHA256", 0);
		params[1] = OSSL_PARAM_construct_end();
		if ((mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL ||
		    (tmpl = EVP_MAC_CTX_new(mac)) == NULL ||
		    EVP_MAC_CTX_set_params(tmpl, params) != 1)
			fatalx("EVP_MAC HMAC sha256");
		EVP_MAC_free(mac);	/* the context keeps its own */
	}
	if ((ctx = EVP_MAC_CTX_dup(tmpl)) == NULL ||
	    EVP_MAC_init(ctx, (const unsigned char *)sid, strlen(sid),
	    NULL) != 1 ||
	    EVP_MAC_update(ctx, (const unsigned char *)label,
	    sizeof(label) - 1) != 1 ||
	    EVP_MAC_final(ctx, md, &mdlen, sizeof(md)) != 1 || mdlen != 32)
		fatalx("HMAC sha256");
	EVP_MAC_CTX_free(ctx);
	auth_b64url(md, mdlen, out);
	explicit_bzero(md, sizeof(md));
}

/* "a=1; nops_session=xyz; b=2": RFC 6265 pairs separated by "; ". */
int
auth_cookie_get(const char *h, const char *name, char *out, size_t outlen)
{
	size_t	 nlen = strlen(name), vlen;

	while (*h != '\0') {
		while (*h == ' ' || *h == '\t' || *h == ';')
			h++;
		if (strncmp(h, name, nlen) == 0 && h[nlen] == '=') {
			h += nlen + 1;
			vlen = strcspn(h, ";");
			while (vlen > 0 && (h[vlen - 1] == ' ' ||
			    h[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= 2 && h[0] == '"' && h[vlen - 1] == '"') {
				h++;
				vlen -= 2;
			}
			if (vlen >= outlen)
				return 0;
			memcpy(out, h, vlen);
			out[vlen] = '\0';
			return 1;
		}
		h += strcspn(h, ";");
	}
	return 0;
}

const char *
auth_bearer(const char *h)
{
	if (strncasecmp(h, "Bearer ", 7) != 0)
		return NULL;
	h += 7;
	while (*h == ' ')
		h++;
	return *h != '\0' ? h : NULL;
}
