/*
 * Credentials shared by the master and the webworker (shared/authc.c):
 * the shapes of session ids and API tokens, their hashes, CSRF tokens.
 */
#ifndef NOPS_AUTHC_H
#define NOPS_AUTHC_H

#include <stddef.h>

#define AUTH_SECRET_BYTES	32	/* session ids, tokens */
#define AUTH_SECRET_B64		43	/* 32 bytes in base64url, unpadded */
#define AUTH_TOKEN_PREFIX	"nops_"
#define AUTH_TOKEN_LEN		(5 + AUTH_SECRET_B64)
#define AUTH_SHA256_HEX		64
#define AUTH_SESSION_COOKIE	"nops_session"

/* out gets 4 * len / 3 rounded up, + NUL. */
void		 auth_b64url(const void *, size_t, char *out);
void		 auth_sha256_hex(const void *, size_t,
		    char out[AUTH_SHA256_HEX + 1]);
/* Constant time for strings of equal length; 1 if equal. */
int		 auth_equal(const char *, const char *);
/* "nops_" + 43 base64url characters. */
int		 auth_token_wellformed(const char *);
/* 43 base64url characters. */
int		 auth_session_wellformed(const char *);
/* A session's CSRF token, derived from its id (HMAC-SHA256). */
void		 auth_csrf_token(const char *sid,
		    char out[AUTH_SECRET_B64 + 1]);
/* The value of cookie name in a Cookie header, copied to out; 1 found. */
int		 auth_cookie_get(const char *header, const char *name,
		    char *out, size_t outlen);
/* The token of "Bearer <token>", or NULL. */
const char	*auth_bearer(const char *authorization);

#endif /* NOPS_AUTHC_H */
