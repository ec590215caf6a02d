/*
 * libFuzzer target for webhook verification (master/webhook_verify.c).
 * The input is split into the three signature headers, a delivery id and
 * a body; verification must not crash, and must say "valid" only when
 * the headers present are exactly the secret's signature (or the secret
 * itself for GitLab).  The correct signature of the fuzzed body, put in
 * each header in turn, must verify.  Delivery ids go through the replay
 * set, whose size must stay bounded.  Build inputs for tests/fuzz/build:
 */
/* FUZZ-SOURCES: master/webhook_verify.c shared/hex.c */
/* FUZZ-LIBS: libcrypto */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/hmac.h>

#include "webhook_verify.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const uint8_t	 fuzz_secret[] = "fuzz-secret";
#define FUZZ_SECRETLEN	(sizeof(fuzz_secret) - 1)

static struct webhook_seen	*fuzz_seen;
static time_t			 fuzz_now = 1000;

/* Take the next piece of the input, up to a 0xff byte. */
static char *
piece(const uint8_t **p, size_t *left)
{
	size_t	 n = 0;
	char	*s;

	while (n < *left && (*p)[n] != 0xff)
		n++;
	if ((s = malloc(n + 1)) == NULL)
		abort();
	memcpy(s, *p, n);
	s[n] = '\0';
	/* A NUL ends a C string early, as a header value would be. */
	*p += n < *left ? n + 1 : n;
	*left -= n < *left ? n + 1 : n;
	return s;
}

/* v, blanks around it aside, is want (either case). */
static int
same_sig(const char *v, const char *want)
{
	size_t	 n = strlen(want);

	while (*v == ' ' || *v == '\t')
		v++;
	if (strncasecmp(v, want, n) != 0)
		return 0;
	for (v += n; *v != '\0'; v++)
		if (*v != ' ' && *v != '\t')
			return 0;
	return 1;
}

static void
hexify(const uint8_t *mac, char *out)
{
	size_t	 i;

	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct webhook_req	 wr;
	enum webhook_verdict	 v;
	const char		*why, *id;
	uint8_t			 mac[EVP_MAX_MD_SIZE];
	unsigned int		 maclen;
	char			 hex[65], hub[72], key[200];
	char			*h1, *h2, *h3, *d;
	int			 flags;

	if (size < 1)
		return 0;
	if (fuzz_seen == NULL && (fuzz_seen = webhook_seen_new(64, 50)) ==
	    NULL)
		abort();
	flags = data[0];
	data++;
	size--;
	h1 = piece(&data, &size);
	h2 = piece(&data, &size);
	h3 = piece(&data, &size);
	d = piece(&data, &size);

	memset(&wr, 0, sizeof(wr));
	wr.wr_hub256 = (flags & 1) ? h1 : NULL;
	wr.wr_gitea = (flags & 2) ? h2 : NULL;
	wr.wr_gitlab = (flags & 4) ? h3 : NULL;
	wr.wr_github_id = (flags & 8) ? d : NULL;
	wr.wr_gitlab_id = (flags & 16) ? d : NULL;
	wr.wr_body = data;
	wr.wr_bodylen = size;

	v = webhook_verify(&wr, fuzz_secret, FUZZ_SECRETLEN, &why);
	if (v != WEBHOOK_VALID && why == NULL)
		abort();
	if ((flags & 7) == 0 && v != WEBHOOK_UNSIGNED)
		abort();
	if (HMAC(EVP_sha256(), fuzz_secret, FUZZ_SECRETLEN,
	    size > 0 ? data : (const uint8_t *)"", size, mac, &maclen) ==
	    NULL || maclen != 32)
		abort();
	hexify(mac, hex);
	snprintf(hub, sizeof(hub), "sha256=%s", hex);
	if (v == WEBHOOK_VALID) {
		/* A forgery would need the secret: only exact values pass. */
		if (wr.wr_gitlab != NULL &&
		    strcmp(wr.wr_gitlab, (const char *)fuzz_secret) != 0)
			abort();
		if (wr.wr_hub256 != NULL && !same_sig(wr.wr_hub256, hub))
			abort();
		if (wr.wr_gitea != NULL && !same_sig(wr.wr_gitea, hex))
			abort();
	}

	/* The right signature in each header verifies. */
	memset(&wr, 0, sizeof(wr));
	wr.wr_body = data;
	wr.wr_bodylen = size;
	wr.wr_hub256 = hub;
	if (webhook_verify(&wr, fuzz_secret, FUZZ_SECRETLEN, &why) !=
	    WEBHOOK_VALID)
		abort();
	wr.wr_hub256 = NULL;
	wr.wr_gitea = hex;
	if (webhook_verify(&wr, fuzz_secret, FUZZ_SECRETLEN, &why) !=
	    WEBHOOK_VALID)
		abort();

	/* Delivery ids: a valid one is remembered, then a replay. */
	memset(&wr, 0, sizeof(wr));
	wr.wr_github_id = (flags & 8) ? d : NULL;
	wr.wr_gitea_id = (flags & 32) ? h1 : NULL;
	wr.wr_gitlab_id = (flags & 16) ? d : NULL;
	if (webhook_delivery(&wr, &id) == 0 && id != NULL) {
		snprintf(key, sizeof(key), "repo\n%s", id);
		fuzz_now += flags >> 6;
		(void)webhook_seen_add(fuzz_seen, key, fuzz_now);
		if (webhook_seen_add(fuzz_seen, key, fuzz_now) != 1)
			abort();
	}
	if (webhook_seen_count(fuzz_seen) > 64)
		abort();

	free(h1);
	free(h2);
	free(h3);
	free(d);
	return 0;
}
