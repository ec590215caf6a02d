/*
 * Webhook verification (master/webhook_verify.c): GitHub, Gitea and
 * GitLab signatures, malformed headers, constant-time comparisons,
 * delivery ids and the replay set.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "hex.h"
#include "webhook_verify.h"

/* GitHub's documented example: this secret, this body, this signature. */
#define GH_SECRET	"It's a Secret to Everybody"
#define GH_BODY		"Hello, World!"
#define GH_HEX		"757107ea0eb2509fc211221cce984b8a" \
			"37570b6d7586c22c46f4379c8b043e17"
/* HMAC-SHA256 of the empty body with "s3cret" (openssl dgst -hmac). */
#define EMPTY_HEX	"91dfac70c5348b04e1babb8b421ac92cec08b565b49ca1613" \
			"0dccb72503647b7"

static const uint8_t	*secret = (const uint8_t *)GH_SECRET;
static const size_t	 secretlen = sizeof(GH_SECRET) - 1;

static struct webhook_req
req(void)
{
	struct webhook_req	 wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_body = GH_BODY;
	wr.wr_bodylen = sizeof(GH_BODY) - 1;
	return wr;
}

static enum webhook_verdict
verify(const struct webhook_req *wr)
{
	const char	*why;

	return webhook_verify(wr, secret, secretlen, &why);
}

static void
test_github(void)
{
	struct webhook_req	 wr = req();
	const char		*why = "unset";
	char			 up[128];
	size_t			 i;

	TEST_BEGIN("github: the documented example verifies");
	wr.wr_hub256 = "sha256=" GH_HEX;
	CHECK(webhook_verify(&wr, secret, secretlen, &why) == WEBHOOK_VALID);
	CHECK(why == NULL);
	TEST_END();

	TEST_BEGIN("github: upper-case hex is the same signature");
	snprintf(up, sizeof(up), "sha256=%s", GH_HEX);
	for (i = 7; up[i] != '\0'; i++)
		if (up[i] >= 'a' && up[i] <= 'f')
			up[i] -= 'a' - 'A';
	wr.wr_hub256 = up;
	CHECK(verify(&wr) == WEBHOOK_VALID);
	TEST_END();

	TEST_BEGIN("github: blanks around the value are ignored");
	wr.wr_hub256 = "  sha256=" GH_HEX "\t";
	CHECK(verify(&wr) == WEBHOOK_VALID);
	TEST_END();

	TEST_BEGIN("github: a changed body does not verify");
	wr = req();
	wr.wr_hub256 = "sha256=" GH_HEX;
	wr.wr_body = "Hello, World?";
	CHECK(webhook_verify(&wr, secret, secretlen, &why) ==
	    WEBHOOK_MISMATCH);
	CHECK(why != NULL && strstr(why, "does not match") != NULL);
	TEST_END();

	TEST_BEGIN("github: another secret does not verify");
	wr = req();
	wr.wr_hub256 = "sha256=" GH_HEX;
	CHECK(webhook_verify(&wr, (const uint8_t *)"It's a Secret to "
	    "Everybodz", secretlen, &why) == WEBHOOK_MISMATCH);
	TEST_END();

	TEST_BEGIN("github: one wrong digit, first or last, does not verify");
	wr.wr_hub256 = "sha256=657107ea0eb2509fc211221cce984b8a"
	    "37570b6d7586c22c46f4379c8b043e17";
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	wr.wr_hub256 = "sha256=757107ea0eb2509fc211221cce984b8a"
	    "37570b6d7586c22c46f4379c8b043e18";
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	TEST_END();

	TEST_BEGIN("github: malformed headers are malformed, not mismatches");
	wr.wr_hub256 = GH_HEX;				/* no prefix */
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	wr.wr_hub256 = "sha1=" GH_HEX;		/* other algorithm */
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	wr.wr_hub256 = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c2"
	    "2c46f4379c8b043e1";				/* truncated */
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	wr.wr_hub256 = "sha256=" GH_HEX "00";		/* too long */
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	wr.wr_hub256 = "sha256=g57107ea0eb2509fc211221cce984b8a37570b6d7586c22"
	    "c46f4379c8b043e17";				/* not hex */
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	wr.wr_hub256 = "sha256=";
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	wr.wr_hub256 = "";
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	wr.wr_hub256 = "SHA256=" GH_HEX;	/* the prefix is exact */
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	TEST_END();

	TEST_BEGIN("github: an empty body has a signature too");
	wr = req();
	wr.wr_body = NULL;
	wr.wr_bodylen = 0;
	wr.wr_hub256 = "sha256=" EMPTY_HEX;
	CHECK(webhook_verify(&wr, (const uint8_t *)"s3cret", 6, &why) ==
	    WEBHOOK_VALID);
	TEST_END();
}

static void
test_gitea(void)
{
	struct webhook_req	 wr = req();
	const char		*why;

	TEST_BEGIN("gitea: bare hex verifies");
	wr.wr_gitea = GH_HEX;
	CHECK(verify(&wr) == WEBHOOK_VALID);
	TEST_END();

	TEST_BEGIN("gitea: with the prefix GitHub uses it is malformed");
	wr.wr_gitea = "sha256=" GH_HEX;
	CHECK(webhook_verify(&wr, secret, secretlen, &why) ==
	    WEBHOOK_MALFORMED);
	CHECK(why != NULL && strstr(why, "X-Gitea-Signature") != NULL);
	TEST_END();

	TEST_BEGIN("gitea: wrong and truncated signatures");
	wr.wr_gitea = "0000000000000000000000000000000000000000000000000000"
	    "000000000000";
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	wr.wr_gitea = "757107ea0eb2509fc211221cce984b8a";
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	TEST_END();

	TEST_BEGIN("gitea: both its header and GitHub's must match");
	wr.wr_gitea = GH_HEX;
	wr.wr_hub256 = "sha256=" GH_HEX;
	CHECK(verify(&wr) == WEBHOOK_VALID);
	wr.wr_hub256 = "sha256=0000000000000000000000000000000000000000000000"
	    "000000000000000000";
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	wr.wr_hub256 = "sha256=" GH_HEX;
	wr.wr_gitea = "00";
	CHECK(verify(&wr) == WEBHOOK_MALFORMED);
	TEST_END();
}

static void
test_gitlab(void)
{
	struct webhook_req	 wr = req();
	const char		*why;

	TEST_BEGIN("gitlab: the token is the secret");
	wr.wr_gitlab = GH_SECRET;
	CHECK(verify(&wr) == WEBHOOK_VALID);
	TEST_END();

	TEST_BEGIN("gitlab: the body does not matter");
	wr.wr_body = "anything at all";
	wr.wr_bodylen = 15;
	CHECK(verify(&wr) == WEBHOOK_VALID);
	TEST_END();

	TEST_BEGIN("gitlab: a prefix, an extension or another token fails");
	wr.wr_gitlab = "It's a Secret";
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	wr.wr_gitlab = GH_SECRET "!";
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	wr.wr_gitlab = "";
	CHECK(webhook_verify(&wr, secret, secretlen, &why) ==
	    WEBHOOK_MISMATCH);
	CHECK(why != NULL && strstr(why, "X-Gitlab-Token") != NULL);
	TEST_END();

	TEST_BEGIN("gitlab: a good token does not excuse a bad signature");
	wr.wr_gitlab = GH_SECRET;
	wr.wr_hub256 = "sha256=0000000000000000000000000000000000000000000000"
	    "000000000000000000";
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	TEST_END();
}

static void
test_unsigned(void)
{
	struct webhook_req	 wr = req();
	const char		*why;

	TEST_BEGIN("unsigned: no header is its own verdict");
	CHECK(webhook_verify(&wr, secret, secretlen, &why) ==
	    WEBHOOK_UNSIGNED);
	CHECK(why != NULL);
	TEST_END();

	TEST_BEGIN("unsigned: an empty secret verifies nothing");
	wr.wr_gitlab = "";
	CHECK(webhook_verify(&wr, (const uint8_t *)"", 0, &why) ==
	    WEBHOOK_MISMATCH);
	wr.wr_gitlab = NULL;
	wr.wr_hub256 = "sha256=" GH_HEX;
	CHECK(webhook_verify(&wr, (const uint8_t *)"", 0, &why) ==
	    WEBHOOK_MISMATCH);
	TEST_END();
}

static void
test_constant_time(void)
{
	struct webhook_req	 wr = req();
	size_t			 n, b;

	/*
	 * Every comparison of secret material goes through CRYPTO_memcmp
	 * over the full digest, whether the first byte differs, the last,
	 * or none: nothing returns early on the first difference.
	 */
	TEST_BEGIN("constant time: signatures compared in full");
	wr.wr_hub256 = "sha256=" GH_HEX;
	n = webhook_ct_compares;
	b = webhook_ct_bytes;
	CHECK(verify(&wr) == WEBHOOK_VALID);
	CHECK(webhook_ct_compares == n + 1 && webhook_ct_bytes == b + 32);
	wr.wr_hub256 = "sha256=057107ea0eb2509fc211221cce984b8a37570b6d7586c2"
	    "2c46f4379c8b043e17";
	n = webhook_ct_compares;
	b = webhook_ct_bytes;
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	CHECK(webhook_ct_compares == n + 1 && webhook_ct_bytes == b + 32);
	TEST_END();

	TEST_BEGIN("constant time: tokens of any length compared by digest");
	wr = req();
	wr.wr_gitlab = "x";
	n = webhook_ct_compares;
	b = webhook_ct_bytes;
	CHECK(verify(&wr) == WEBHOOK_MISMATCH);
	CHECK(webhook_ct_compares == n + 1 && webhook_ct_bytes == b + 32);
	CHECK(webhook_secret_equal("abc", 3, "abc", 3));
	CHECK(!webhook_secret_equal("abc", 3, "abd", 3));
	CHECK(!webhook_secret_equal("abc", 3, "abc\0", 4));
	CHECK(webhook_secret_equal("", 0, "", 0));
	TEST_END();

	TEST_BEGIN("constant time: every header present is checked");
	wr = req();
	wr.wr_hub256 = "sha256=" GH_HEX;
	wr.wr_gitea = GH_HEX;
	wr.wr_gitlab = GH_SECRET;
	n = webhook_ct_compares;
	CHECK(verify(&wr) == WEBHOOK_VALID);
	CHECK(webhook_ct_compares == n + 3);
	TEST_END();
}

static void
test_hex(void)
{
	uint8_t	 out[2];

	TEST_BEGIN("hex: exact length, either case");
	CHECK(hex_decode("aB0f", out, 2) == 0 && out[0] == 0xab &&
	    out[1] == 0x0f);
	CHECK(hex_decode("ab0", out, 2) == -1);
	CHECK(hex_decode("ab0ff", out, 2) == -1);
	CHECK(hex_decode("ab 0", out, 2) == -1);
	CHECK(hex_decode("", out, 0) == 0);
	TEST_END();

	TEST_BEGIN("hex_lower: exactly len lower-case digits");
	CHECK(hex_lower("09af", 4));
	CHECK(!hex_lower("09aF", 4));
	CHECK(!hex_lower("09a", 4));
	CHECK(!hex_lower("09af0", 4));
	CHECK(!hex_lower("09g0", 4));
	CHECK(hex_lower("", 0));
	TEST_END();

	TEST_BEGIN("percent-decoding: strict, lenient, plus, bounded");
	{
		char	 d[8];

		CHECK(hex_pct_decode("a%2Fb", 5, d, sizeof(d), 0) == 3);
		CHECK_STR(d, "a/b");
		CHECK(hex_pct_decode("a%2", 3, d, sizeof(d), 0) == -1);
		CHECK(hex_pct_decode("%zz", 3, d, sizeof(d), 0) == -1);
		CHECK(hex_pct_decode("%zz+", 4, d, sizeof(d),
		    HEX_PCT_LENIENT | HEX_PCT_PLUS) == 4);
		CHECK_STR(d, "%zz ");
		CHECK(hex_pct_decode("a+b", 3, d, sizeof(d), 0) == 3);
		CHECK_STR(d, "a+b");
		CHECK(hex_pct_decode("12345678", 8, d, sizeof(d), 0) == -1);
		CHECK(hex_pct_decode("1234567", 7, d, sizeof(d), 0) == 7);
		CHECK(hex_pct_decode("", 0, d, 0, 0) == -1);
	}
	TEST_END();
}

static void
test_delivery(void)
{
	struct webhook_req	 wr = req();
	const char		*id;
	char			 big[WEBHOOK_DELIVERY_MAX + 2];

	TEST_BEGIN("delivery: GitHub's id first, then Gitea's, then GitLab's");
	CHECK(webhook_delivery(&wr, &id) == 0 && id == NULL);
	wr.wr_gitlab_id = "c3b1a2d0-1111-2222-3333-444455556666";
	CHECK(webhook_delivery(&wr, &id) == 0 && id == wr.wr_gitlab_id);
	wr.wr_gitea_id = "gitea-1";
	CHECK(webhook_delivery(&wr, &id) == 0 && id == wr.wr_gitea_id);
	wr.wr_github_id = "72d3162e-cc78-11e3-81ab-4c9367dc0958";
	CHECK(webhook_delivery(&wr, &id) == 0 && id == wr.wr_github_id);
	TEST_END();

	TEST_BEGIN("delivery: malformed ids are refused");
	wr.wr_github_id = "";
	CHECK(webhook_delivery(&wr, &id) == -1 && id == NULL);
	wr.wr_github_id = "a b";
	CHECK(webhook_delivery(&wr, &id) == -1);
	wr.wr_github_id = "a/../b";
	CHECK(webhook_delivery(&wr, &id) == -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	wr.wr_github_id = big;
	CHECK(webhook_delivery(&wr, &id) == -1);
	big[WEBHOOK_DELIVERY_MAX] = '\0';
	CHECK(webhook_delivery(&wr, &id) == 0 && id == big);
	TEST_END();
}

static void
test_seen(void)
{
	struct webhook_seen	*ws;
	char			 key[32];
	int			 i, dup;

	TEST_BEGIN("replay: a second delivery of an id is a replay");
	ws = webhook_seen_new(4, 100);
	CHECK(ws != NULL);
	CHECK(webhook_seen_add(ws, "repo\nid-1", 1000) == 0);
	CHECK(webhook_seen_add(ws, "repo\nid-1", 1001) == 1);
	CHECK(webhook_seen_add(ws, "other\nid-1", 1001) == 0);
	CHECK(webhook_seen_count(ws) == 2);
	TEST_END();

	TEST_BEGIN("replay: an id is forgotten after the ttl");
	CHECK(webhook_seen_add(ws, "repo\nid-1", 1099) == 1);
	CHECK(webhook_seen_add(ws, "repo\nid-1", 1100) == 0);
	TEST_END();

	TEST_BEGIN("replay: the set is bounded, the oldest goes first");
	webhook_seen_free(ws);
	ws = webhook_seen_new(4, 100);
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		CHECK(webhook_seen_add(ws, key, 2000 + i) == 0);
		CHECK(webhook_seen_count(ws) <= 4);
	}
	CHECK(webhook_seen_add(ws, "k9", 2011) == 1);
	CHECK(webhook_seen_add(ws, "k6", 2011) == 1);
	dup = webhook_seen_add(ws, "k0", 2011);
	CHECK(dup == 0);
	webhook_seen_free(ws);
	TEST_END();

	TEST_BEGIN("replay: a zero-sized set is refused");
	CHECK(webhook_seen_new(0, 10) == NULL);
	TEST_END();
}

int
main(void)
{
	test_github();
	test_gitea();
	test_gitlab();
	test_unsigned();
	test_constant_time();
	test_hex();
	test_delivery();
	test_seen();
	TEST_EXIT();
}
