/*
 * Unit tests of master/auth.c: the users file (good lines, each kind of
 * bad line with its file:line, no password echoed), bcrypt verification
 * (right, wrong, the 72-byte rule, refused hashes), API token and session
 * secrets (format, randomness, SHA-256), CSRF tokens, cookie and bearer
 * parsing, the bootstrap token file and the login rate limiter.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <crypt.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "log.h"
#include "conf.h"
#include "auth.h"
#include "test.h"

static char	 tdir[] = "/tmp/test_auth.XXXXXX";
static char	 errbuf[65536];	/* what the last parse logged */

/* A bcrypt hash of pw at cost, made as nopsctl hash-password does. */
static char *
mkhash(const char *pw, int cost)
{
	static char		 out[CRYPT_OUTPUT_SIZE];
	struct crypt_data	 cd;
	char			 salt[CRYPT_GENSALT_OUTPUT_SIZE];
	const char		*h;

	if (crypt_gensalt_rn("$2b$", cost, NULL, 0, salt, sizeof(salt)) ==
	    NULL) {
		perror("crypt_gensalt_rn");
		exit(1);
	}
	memset(&cd, 0, sizeof(cd));
	if ((h = crypt_r(pw, salt, &cd)) == NULL || h[0] == '*') {
		perror("crypt_r");
		exit(1);
	}
	strlcpy(out, h, sizeof(out));
	return out;
}

/* Parse text as a users file; errbuf gets what was logged. */
static struct auth_users *
users_text(const char *text, char *err, size_t errlen)
{
	struct auth_users	*u;
	char			 path[PATH_MAX];
	FILE			*fp, *cap;
	size_t			 n;
	int			 saved;

	snprintf(path, sizeof(path), "%s/users", tdir);
	if ((fp = fopen(path, "w")) == NULL) {
		perror(path);
		exit(1);
	}
	fputs(text, fp);
	fclose(fp);
	fflush(stderr);
	if ((cap = tmpfile()) == NULL || (saved = dup(STDERR_FILENO)) == -1 ||
	    dup2(fileno(cap), STDERR_FILENO) == -1) {
		perror("capture stderr");
		exit(1);
	}
	u = auth_users_load(path, err, errlen);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(cap);
	n = fread(errbuf, 1, sizeof(errbuf) - 1, cap);
	errbuf[n] = '\0';
	fclose(cap);
	return u;
}

static int
count_lines(const char *s, const char *needle)
{
	int	 n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s++;
	}
	return n;
}

static void
test_users_good(void)
{
	struct auth_users	*u;
	char			 text[1024], h1[64], h2[64], err[256];

	strlcpy(h1, mkhash("alice-pw", 10), sizeof(h1));
	strlcpy(h2, mkhash("bob-pw", 10), sizeof(h2));
	snprintf(text, sizeof(text), "# users of nops\n\nzed:%s\r\n"
	    "alice:%s\nbob.b+x@example:%s", h1, h2, h1);

	TEST_BEGIN("users: comments, blank lines, CRLF, no final newline");
	u = users_text(text, err, sizeof(err));
	CHECK(u != NULL);
	CHECK(u != NULL && u->au_n == 3);
	CHECK_STR(auth_users_hash(u, "alice"), h2);
	CHECK_STR(auth_users_hash(u, "zed"), h1);
	CHECK_STR(auth_users_hash(u, "bob.b+x@example"), h1);
	CHECK(auth_users_hash(u, "nobody") == NULL);
	CHECK(auth_users_hash(u, "ALICE") == NULL);
	CHECK(errbuf[0] == '\0');
	auth_users_free(u);
	TEST_END();

	TEST_BEGIN("users: an empty file has no users");
	u = users_text("", err, sizeof(err));
	CHECK(u != NULL && u->au_n == 0);
	CHECK(auth_users_hash(u, "alice") == NULL);
	auth_users_free(u);
	TEST_END();

	TEST_BEGIN("users: htpasswd -B -C 12 hashes ($2y$) are accepted");
	CHECK(auth_check_hash("$2y$12$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQ"
	    "RSTUVWXYZ01234") == NULL);
	TEST_END();
}

static void
test_users_bad(void)
{
	struct auth_users	*u;
	char			 text[2048], h[64], err[256], want[512];

	strlcpy(h, mkhash("pw", 10), sizeof(h));
	snprintf(text, sizeof(text),
	    "alice:%s\n"				/* 1 ok */
	    "hunter2-typed-here\n"			/* 2 no colon */
	    "bad user:%s\n"				/* 3 name */
	    "carol:$1$abc$def\n"			/* 4 md5crypt */
	    "dave:$2b$05$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n"
	    "erin:$2b$15$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n"
	    "fred:$2b$12$tooshort\n"			/* 7 malformed */
	    "alice:%s\n"				/* 8 twice */
	    "gina:$2a$12$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n"
	    "%s:%s\n",					/* 10 long name */
	    h, h, h, "x123456789x123456789x123456789x123456789x123456789"
	    "x123456789xyzw", h);

	TEST_BEGIN("users: every bad line is an error with file:line");
	u = users_text(text, err, sizeof(err));
	CHECK(u == NULL);
	snprintf(want, sizeof(want), "%s/users:2: expected name:hash", tdir);
	CHECK(strstr(errbuf, want) != NULL);
	CHECK_STR(err, want);
	snprintf(want, sizeof(want), "%s/users:3: bad user name", tdir);
	CHECK(strstr(errbuf, want) != NULL);
	snprintf(want, sizeof(want), "%s/users:4: user \"carol\": not a "
	    "bcrypt hash", tdir);
	CHECK(strstr(errbuf, want) != NULL);
	snprintf(want, sizeof(want), "%s/users:5: user \"dave\": bcrypt "
	    "cost below 10", tdir);
	CHECK(strstr(errbuf, want) != NULL);
	snprintf(want, sizeof(want), "%s/users:6: user \"erin\": bcrypt "
	    "cost above 14", tdir);
	CHECK(strstr(errbuf, want) != NULL);
	snprintf(want, sizeof(want), "%s/users:7: user \"fred\": malformed",
	    tdir);
	CHECK(strstr(errbuf, want) != NULL);
	snprintf(want, sizeof(want), "%s/users:8: user \"alice\" listed "
	    "twice", tdir);
	CHECK(strstr(errbuf, want) != NULL);
	snprintf(want, sizeof(want), "%s/users:9: user \"gina\": not a "
	    "bcrypt hash", tdir);
	CHECK(strstr(errbuf, want) != NULL);
	snprintf(want, sizeof(want), "%s/users:10: user name longer than "
	    "63", tdir);
	CHECK(strstr(errbuf, want) != NULL);
	CHECK(count_lines(errbuf, "/users:") == 9);
	TEST_END();

	TEST_BEGIN("users: a bad line is never echoed (it may be a password)");
	CHECK(strstr(errbuf, "hunter2") == NULL);
	CHECK(strstr(err, "hunter2") == NULL);
	TEST_END();

	TEST_BEGIN("users: a missing file is an error");
	{
		char	 path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/nonexistent", tdir);
		fflush(stderr);
		u = auth_users_load(path, err, sizeof(err));
		CHECK(u == NULL);
		CHECK(strstr(err, "No such file") != NULL);
	}
	TEST_END();

	TEST_BEGIN("users: a NUL byte is an error");
	{
		FILE	*fp;
		char	 buf[] = "alice\0:x\n";

		fp = fmemopen(buf, sizeof(buf) - 1, "r");
		u = auth_users_parse(fp, "mem", err, sizeof(err));
		fclose(fp);
		CHECK(u == NULL);
		CHECK(strstr(err, "mem:1: NUL byte") != NULL);
	}
	TEST_END();
}

static void
test_bcrypt(void)
{
	char	 h[64], pw72[80], pw73[80];

	strlcpy(h, mkhash("correct horse", 10), sizeof(h));

	TEST_BEGIN("bcrypt: the right password matches, a wrong one not");
	CHECK(auth_password_verify("correct horse", 13, h) == 1);
	CHECK(auth_password_verify("correct horsE", 13, h) == 0);
	CHECK(auth_password_verify("correct hors", 12, h) == 0);
	CHECK(auth_password_verify("", 0, h) == 0);
	TEST_END();

	TEST_BEGIN("bcrypt: only the first 72 bytes count");
	memset(pw72, 'a', 72);
	pw72[72] = '\0';
	strlcpy(h, mkhash(pw72, 10), sizeof(h));
	memcpy(pw73, pw72, 72);
	pw73[72] = 'b';
	pw73[73] = '\0';
	CHECK(auth_password_verify(pw72, 72, h) == 1);
	CHECK(auth_password_verify(pw73, 73, h) == 1);
	CHECK(auth_password_verify(pw72, 71, h) == 0);
	TEST_END();

	TEST_BEGIN("bcrypt: a NUL in the password or a refused hash fails");
	strlcpy(h, mkhash("ab", 10), sizeof(h));
	CHECK(auth_password_verify("a\0b", 3, h) == -1);
	CHECK(auth_password_verify("ab", 2, h) == 1);
	CHECK(auth_password_verify("ab", 2, mkhash("ab", 4)) == -1);
	CHECK(auth_password_verify("ab", 2, "$1$x$y") == -1);
	TEST_END();
}

static void
test_secrets(void)
{
	char	 a[AUTH_TOKEN_LEN + 1], b[AUTH_TOKEN_LEN + 1];
	char	 s1[AUTH_SECRET_B64 + 1], s2[AUTH_SECRET_B64 + 1];
	char	 c1[AUTH_SECRET_B64 + 1], c2[AUTH_SECRET_B64 + 1];
	char	 hex[AUTH_SHA256_HEX + 1], out[64];
	unsigned char	 raw[2] = { 0xfb, 0xff };

	TEST_BEGIN("secrets: base64url without padding");
	auth_b64url("", 0, out);
	CHECK_STR(out, "");
	auth_b64url("f", 1, out);
	CHECK_STR(out, "Zg");
	auth_b64url("fo", 2, out);
	CHECK_STR(out, "Zm8");
	auth_b64url("foo", 3, out);
	CHECK_STR(out, "Zm9v");
	auth_b64url("foobar", 6, out);
	CHECK_STR(out, "Zm9vYmFy");
	auth_b64url(raw, 2, out);
	CHECK_STR(out, "-_8");
	TEST_END();

	TEST_BEGIN("secrets: SHA-256 in hex");
	auth_sha256_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
	TEST_END();

	TEST_BEGIN("secrets: tokens are nops_ + 43 base64url, each new");
	auth_token_new(a);
	auth_token_new(b);
	CHECK(strlen(a) == 48 && strncmp(a, "nops_", 5) == 0);
	CHECK(auth_token_wellformed(a) && auth_token_wellformed(b));
	CHECK(strcmp(a, b) != 0);
	CHECK(!auth_token_wellformed("nops_short"));
	CHECK(!auth_token_wellformed(a + 5));
	a[20] = '+';
	CHECK(!auth_token_wellformed(a));
	TEST_END();

	TEST_BEGIN("secrets: session ids are 43 base64url, each new");
	auth_session_new(s1);
	auth_session_new(s2);
	CHECK(strlen(s1) == 43 && auth_session_wellformed(s1));
	CHECK(strcmp(s1, s2) != 0);
	CHECK(!auth_session_wellformed("abc"));
	CHECK(!auth_session_wellformed("nops_session"));
	TEST_END();

	TEST_BEGIN("secrets: a CSRF token is per session, not its hash");
	auth_csrf_token(s1, c1);
	auth_csrf_token(s1, c2);
	CHECK_STR(c1, c2);
	auth_csrf_token(s2, c2);
	CHECK(strcmp(c1, c2) != 0);
	CHECK(strlen(c1) == 43 && strcmp(c1, s1) != 0);
	auth_sha256_hex(s1, strlen(s1), hex);
	CHECK(strstr(hex, c1) == NULL);
	/* HMAC-SHA256 keyed by the id, of "nops csrf v1", base64url. */
	{
		unsigned char	 md[EVP_MAX_MD_SIZE];
		unsigned int	 mdlen = 0;

		CHECK(HMAC(EVP_sha256(), s1, (int)strlen(s1),
		    (const unsigned char *)"nops csrf v1", 12, md, &mdlen) !=
		    NULL && mdlen == 32);
		auth_b64url(md, mdlen, c2);
		CHECK_STR(c1, c2);
	}
	TEST_END();

	TEST_BEGIN("secrets: constant-time equal");
	CHECK(auth_equal("abc", "abc"));
	CHECK(!auth_equal("abc", "abd"));
	CHECK(!auth_equal("abc", "abcd"));
	CHECK(!auth_equal("", "a"));
	TEST_END();
}

static void
test_headers(void)
{
	char	 v[64];

	TEST_BEGIN("cookie: found among others, quoted or not");
	CHECK(auth_cookie_get("nops_session=abc", "nops_session", v,
	    sizeof(v)) && strcmp(v, "abc") == 0);
	CHECK(auth_cookie_get("a=1; nops_session=xyz; b=2", "nops_session",
	    v, sizeof(v)) && strcmp(v, "xyz") == 0);
	CHECK(auth_cookie_get("a=1;nops_session=\"q\"", "nops_session", v,
	    sizeof(v)) && strcmp(v, "q") == 0);
	TEST_END();

	TEST_BEGIN("cookie: a similar name or a long value is not taken");
	CHECK(!auth_cookie_get("xnops_session=abc", "nops_session", v,
	    sizeof(v)));
	CHECK(!auth_cookie_get("nops_session_x=abc", "nops_session", v,
	    sizeof(v)));
	CHECK(!auth_cookie_get("a=nops_session=abc", "nops_session", v,
	    sizeof(v)));
	CHECK(!auth_cookie_get("nops_session=0123456789", "nops_session", v,
	    8));
	CHECK(!auth_cookie_get("", "nops_session", v, sizeof(v)));
	TEST_END();

	TEST_BEGIN("bearer: the scheme is case-insensitive, the token not empty");
	CHECK_STR(auth_bearer("Bearer nops_x"), "nops_x");
	CHECK_STR(auth_bearer("bearer  tok"), "tok");
	CHECK(auth_bearer("Basic dXNlcjpwdw==") == NULL);
	CHECK(auth_bearer("Bearer ") == NULL);
	CHECK(auth_bearer("Bearertok") == NULL);
	TEST_END();
}

static void
test_secret_file(void)
{
	char	 path[PATH_MAX], out[300], err[256];
	FILE	*fp;

	snprintf(path, sizeof(path), "%s/boot", tdir);

	TEST_BEGIN("bootstrap file: one line of 32 to 256 characters");
	fp = fopen(path, "w");
	fputs("0123456789abcdef0123456789abcdef\n", fp);
	fclose(fp);
	CHECK(auth_secret_file(path, out, sizeof(out), err, sizeof(err)) ==
	    0);
	CHECK_STR(out, "0123456789abcdef0123456789abcdef");
	fp = fopen(path, "w");
	fputs("short\n", fp);
	fclose(fp);
	CHECK(auth_secret_file(path, out, sizeof(out), err, sizeof(err)) ==
	    -1);
	CHECK(strstr(err, "32 to 256") != NULL);
	fp = fopen(path, "w");
	fputs("0123456789abcdef 0123456789abcdef\n", fp);
	fclose(fp);
	CHECK(auth_secret_file(path, out, sizeof(out), err, sizeof(err)) ==
	    -1);
	CHECK(strstr(err, "without spaces") != NULL);
	unlink(path);
	TEST_END();
}

static void
test_ratelimit(void)
{
	struct auth_rl	*rl;
	char		 key[32];
	int		 i;

	TEST_BEGIN("rate limit: 5 failures in the window, then wait");
	rl = auth_rl_new(16, 5, 300);
	for (i = 0; i < 5; i++) {
		CHECK(auth_rl_check(rl, "u:alice", 1000 + i) == 0);
		auth_rl_fail(rl, "u:alice", 1000 + i);
	}
	CHECK(auth_rl_check(rl, "u:alice", 1010) == 290);
	CHECK(auth_rl_check(rl, "u:alice", 1299) == 1);
	CHECK(auth_rl_check(rl, "u:bob", 1010) == 0);
	CHECK(auth_rl_check(rl, "u:alice", 1300) == 0);
	/* A new window starts from zero. */
	auth_rl_fail(rl, "u:alice", 1301);
	CHECK(auth_rl_check(rl, "u:alice", 1302) == 0);
	auth_rl_free(rl);
	TEST_END();

	TEST_BEGIN("rate limit: a full table reuses the oldest slot");
	rl = auth_rl_new(2, 1, 300);
	auth_rl_fail(rl, "a:1", 100);
	auth_rl_fail(rl, "a:2", 101);
	CHECK(auth_rl_check(rl, "a:1", 102) > 0);
	auth_rl_fail(rl, "a:3", 103);
	CHECK(auth_rl_check(rl, "a:3", 104) > 0);
	CHECK(auth_rl_check(rl, "a:2", 104) > 0);
	CHECK(auth_rl_check(rl, "a:1", 104) == 0);
	auth_rl_free(rl);
	TEST_END();

	TEST_BEGIN("rate limit: many keys each counted apart, a reused slot's "
	    "old key no more");
	rl = auth_rl_new(64, 2, 300);
	for (i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "a:10.0.0.%d", i);
		auth_rl_fail(rl, key, 100);
		if (i % 2 == 0)
			auth_rl_fail(rl, key, 101);
	}
	for (i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "a:10.0.0.%d", i);
		CHECK(auth_rl_check(rl, key, 102) == (i % 2 == 0 ? 298 : 0));
		CHECK(auth_rl_count(rl, key, 102, NULL, NULL) ==
		    (i % 2 == 0 ? 2 : 1));
	}
	/* The table is full: the oldest slot (10.0.0.0's) is reused. */
	auth_rl_fail(rl, "a:10.0.1.1", 150);
	auth_rl_fail(rl, "a:10.0.1.1", 151);
	CHECK(auth_rl_check(rl, "a:10.0.1.1", 152) == 298);
	CHECK(auth_rl_count(rl, "a:10.0.0.0", 152, NULL, NULL) == 0);
	CHECK(auth_rl_count(rl, "a:10.0.0.2", 152, NULL, NULL) == 2);
	/* A window over: its key counts nothing, its slot is taken again. */
	CHECK(auth_rl_check(rl, "a:10.0.0.2", 500) == 0);
	CHECK(auth_rl_count(rl, "a:10.0.0.2", 500, NULL, NULL) == 0);
	auth_rl_fail(rl, "a:10.0.0.2", 501);
	CHECK(auth_rl_count(rl, "a:10.0.0.2", 502, NULL, NULL) == 1);
	auth_rl_free(rl);
	TEST_END();
}

/* The login policy (auth_throttle.c): only sources that failed wait. */
static void
test_throttle(void)
{
	char	 a[64], b[64];
	int	 i;

	TEST_BEGIN("throttle: a source with 5 failures waits, another not");
	for (i = 0; i < 5; i++) {
		CHECK(auth_throttle_check("10.0.0.1:5000", "alice",
		    1000 + i) == 0);
		auth_throttle_failed("10.0.0.1:5000", "alice", 1000 + i);
	}
	CHECK(auth_throttle_check("10.0.0.1:6000", "alice", 1010) == 290);
	CHECK(auth_throttle_check("10.0.0.1:6000", "bob", 1010) == 290);
	CHECK(auth_throttle_check("10.0.0.2:5000", "alice", 1010) == 0);
	TEST_END();

	TEST_BEGIN("throttle: a name under attack is not locked out");
	/* alice has 5 failures now (above): a source that failed waits. */
	auth_throttle_failed("10.0.1.1:1", "bob", 1011);
	CHECK(auth_throttle_check("10.0.1.1:1", "bob", 1012) == 0);
	CHECK(auth_throttle_check("10.0.1.1:1", "alice", 1012) == 299);
	/* A source that never failed still tries, even for alice. */
	CHECK(auth_throttle_check("10.0.1.2:1", "alice", 1012) == 0);
	TEST_END();

	TEST_BEGIN("throttle: the brake spaces failed sources, not others");
	for (i = 0; i < AUTH_RL_GLOBAL_FAILS; i++) {
		snprintf(a, sizeof(a), "10.1.%d.%d:80", i / 200, i % 200);
		auth_throttle_failed(a, NULL, 2000);
	}
	CHECK(auth_throttle_check("10.1.0.7:81", "carol", 2010) ==
	    AUTH_RL_BRAKE_SPACING - 10);
	CHECK(auth_throttle_check("10.1.0.7:81", "carol", 2000 +
	    AUTH_RL_BRAKE_SPACING) == 0);
	CHECK(auth_throttle_check("10.2.0.1:81", "carol", 2010) == 0);
	TEST_END();

	TEST_BEGIN("throttle: the brake's minute slides, it does not reset");
	/* 10 at 4000, 40 at 4055, 20 at 4062: 60 within the last minute. */
	for (i = 0; i < 70; i++) {
		snprintf(a, sizeof(a), "10.9.%d.%d:1", i / 200, i % 200);
		auth_throttle_failed(a, NULL, i < 10 ? 4000 : i < 50 ? 4055 :
		    4062);
	}
	CHECK(auth_throttle_global(4062) == 60);
	CHECK(auth_throttle_check("10.9.0.69:2", "erin", 4063) ==
	    AUTH_RL_BRAKE_SPACING - 1);
	/* A minute after the 40, only the 20 remain: the brake is off. */
	CHECK(auth_throttle_global(4116) == 20);
	CHECK(auth_throttle_check("10.9.0.69:2", "erin", 4116) == 0);
	TEST_END();

	TEST_BEGIN("throttle: unknown names share one entry");
	for (i = 0; i < 5; i++) {
		snprintf(a, sizeof(a), "10.3.0.%d:1", i);
		auth_throttle_failed(a, NULL, 3000);
	}
	/* 10.3.0.0 failed once, for an unknown name: "?" is under attack. */
	CHECK(auth_throttle_check("10.3.0.0:1", NULL, 3001) > 0);
	CHECK(auth_throttle_check("10.3.0.0:1", "dave", 3001) == 0);
	TEST_END();

	TEST_BEGIN("throttle: an IPv6 source is its /64");
	auth_throttle_source("[2001:db8:1:2::5]:443", a, sizeof(a));
	auth_throttle_source("[2001:db8:1:2:ffff::9]:80", b, sizeof(b));
	CHECK(strcmp(a, b) == 0);
	CHECK(strcmp(a, "a:2001:db8:1:2::/64") == 0);
	auth_throttle_source("[2001:db8:1:3::5]:443", b, sizeof(b));
	CHECK(strcmp(a, b) != 0);
	auth_throttle_source("192.0.2.7:443", a, sizeof(a));
	CHECK(strcmp(a, "a:192.0.2.7") == 0);
	auth_throttle_shutdown();
	TEST_END();
}

int
main(void)
{
	char	 path[PATH_MAX];

	log_init(1, LOG_DAEMON);
	if (mkdtemp(tdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_users_good();
	test_users_bad();
	test_bcrypt();
	test_secrets();
	test_headers();
	test_secret_file();
	test_ratelimit();
	test_throttle();
	snprintf(path, sizeof(path), "%s/users", tdir);
	unlink(path);
	rmdir(tdir);
	TEST_EXIT();
}
