/*
 * Webhook authenticity, kept free of the rest of the master so that the
 * unit tests and the fuzzer link it alone.
 *
 * GitHub signs the raw body with HMAC-SHA256 ("sha256=<hex>"), Gitea
 * too (bare hex; it also sends GitHub's header), GitLab sends the shared
 * secret itself.  Every comparison of secret material is constant time:
 * signatures are decoded to bytes and compared with CRYPTO_memcmp, and a
 * token is compared through its SHA-256, so neither its content nor its
 * length shows in the timing.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "hex.h"
#include "webhook_verify.h"

#define WEBHOOK_MACLEN		32	/* SHA-256 */
#define WEBHOOK_HUB_PREFIX	"sha256="

size_t	 webhook_ct_compares;
size_t	 webhook_ct_bytes;

static int
webhook_ct_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	webhook_ct_compares++;
	webhook_ct_bytes += len;
	return CRYPTO_memcmp(a, b, len) == 0;
}

int
webhook_secret_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	uint8_t	 da[SHA256_DIGEST_LENGTH], db[SHA256_DIGEST_LENGTH];
	int	 eq;

	/* Equal digests of equal-length inputs; lengths compared after. */
	SHA256(alen > 0 ? a : (const void *)"", alen, da);
	SHA256(blen > 0 ? b : (const void *)"", blen, db);
	eq = webhook_ct_equal(da, db, sizeof(da)) & (alen == blen);
	explicit_bzero(da, sizeof(da));
	explicit_bzero(db, sizeof(db));
	return eq;
}

/* Header values are trimmed of surrounding blanks, nothing else. */
static const char *
webhook_trim(const char *s, char *buf, size_t len)
{
	size_t	 n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n >= len)
		return NULL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

/*
 * One signature header, GitHub's or Gitea's: after prefix, 64 hex digits
 * that must be mac.  ret is the verdict of the headers checked before: a
 * malformed header wins over a mismatch (the client is broken, not
 * forging), but every header present is checked either way.
 */
static enum webhook_verdict
webhook_verify_hmac(const char *hdr, const char *prefix, const uint8_t *mac,
    const char *malformed, const char *mismatch, enum webhook_verdict ret,
    const char **why)
{
	uint8_t		 sig[WEBHOOK_MACLEN];
	char		 buf[2 * WEBHOOK_MACLEN +
		    sizeof(WEBHOOK_HUB_PREFIX) + 1];
	const char	*v;
	size_t		 plen = strlen(prefix);

	v = webhook_trim(hdr, buf, sizeof(buf));
	if (v == NULL || strncmp(v, prefix, plen) != 0 ||
	    hex_decode(v + plen, sig, sizeof(sig)) == -1) {
		*why = malformed;
		ret = WEBHOOK_MALFORMED;
	} else if (!webhook_ct_equal(mac, sig, sizeof(sig)) &&
	    ret == WEBHOOK_VALID) {
		*why = mismatch;
		ret = WEBHOOK_MISMATCH;
	}
	explicit_bzero(sig, sizeof(sig));
	return ret;
}

enum webhook_verdict
webhook_verify(const struct webhook_req *wr, const uint8_t *secret,
    size_t secretlen, const char **why)
{
	uint8_t		 mac[EVP_MAX_MD_SIZE];
	unsigned int	 maclen = 0;
	const void	*body = wr->wr_bodylen > 0 ? wr->wr_body : "";
	enum webhook_verdict ret = WEBHOOK_VALID;
	int		 any = 0, ok;

	*why = NULL;
	if (secretlen == 0) {
		/* Never reached with a configured secret: refuse. */
		*why = "no secret";
		return WEBHOOK_MISMATCH;
	}
	if (wr->wr_hub256 != NULL || wr->wr_gitea != NULL) {
		if (HMAC(EVP_sha256(), secret, (int)secretlen, body,
		    wr->wr_bodylen, mac, &maclen) == NULL ||
		    maclen != WEBHOOK_MACLEN) {
			*why = "cannot compute HMAC-SHA256";
			return WEBHOOK_MISMATCH;
		}
	}

	if (wr->wr_hub256 != NULL) {
		any = 1;
		ret = webhook_verify_hmac(wr->wr_hub256, WEBHOOK_HUB_PREFIX,
		    mac, "X-Hub-Signature-256 is not sha256= and 64 hex digits",
		    "X-Hub-Signature-256 does not match", ret, why);
	}
	if (wr->wr_gitea != NULL) {
		any = 1;
		ret = webhook_verify_hmac(wr->wr_gitea, "", mac,
		    "X-Gitea-Signature is not 64 hex digits",
		    "X-Gitea-Signature does not match", ret, why);
	}
	if (wr->wr_gitlab != NULL) {
		any = 1;
		ok = webhook_secret_equal(wr->wr_gitlab,
		    strlen(wr->wr_gitlab), secret, secretlen);
		if (!ok && ret == WEBHOOK_VALID) {
			*why = "X-Gitlab-Token does not match";
			ret = WEBHOOK_MISMATCH;
		}
	}
	explicit_bzero(mac, sizeof(mac));
	if (!any) {
		*why = "no X-Hub-Signature-256, X-Gitea-Signature or "
		    "X-Gitlab-Token header";
		return WEBHOOK_UNSIGNED;
	}
	return ret;
}

static int
webhook_id_ok(const char *s)
{
	size_t	 n = strlen(s);

	if (n == 0 || n > WEBHOOK_DELIVERY_MAX)
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_.") == n;
}

int
webhook_delivery(const struct webhook_req *wr, const char **id)
{
	if (wr->wr_github_id != NULL)
		*id = wr->wr_github_id;
	else if (wr->wr_gitea_id != NULL)
		*id = wr->wr_gitea_id;
	else if (wr->wr_gitlab_id != NULL)
		*id = wr->wr_gitlab_id;
	else {
		*id = NULL;
		return 0;
	}
	if (!webhook_id_ok(*id)) {
		*id = NULL;
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- replay set */

struct seen_entry {
	RB_ENTRY(seen_entry)	 se_node;
	TAILQ_ENTRY(seen_entry)	 se_age;	/* oldest first */
	time_t			 se_at;
	char			*se_key;
};

static int
seen_cmp(struct seen_entry *a, struct seen_entry *b)
{
	return strcmp(a->se_key, b->se_key);
}

RB_HEAD(seen_tree, seen_entry);
/* libbsd leaves __unused undefined (a Linux header uses the name). */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define WEBHOOK_UNDEF_UNUSED
#endif
RB_GENERATE_STATIC(seen_tree, seen_entry, se_node, seen_cmp)
#ifdef WEBHOOK_UNDEF_UNUSED
#undef __unused
#endif

struct webhook_seen {
	struct seen_tree		 ws_tree;
	TAILQ_HEAD(, seen_entry)	 ws_age;
	size_t				 ws_count;
	size_t				 ws_max;
	time_t				 ws_ttl;
};

struct webhook_seen *
webhook_seen_new(size_t max, time_t ttl)
{
	struct webhook_seen	*ws;

	if (max == 0 || (ws = calloc(1, sizeof(*ws))) == NULL)
		return NULL;
	RB_INIT(&ws->ws_tree);
	TAILQ_INIT(&ws->ws_age);
	ws->ws_max = max;
	ws->ws_ttl = ttl;
	return ws;
}

static void
seen_drop(struct webhook_seen *ws, struct seen_entry *se)
{
	RB_REMOVE(seen_tree, &ws->ws_tree, se);
	TAILQ_REMOVE(&ws->ws_age, se, se_age);
	ws->ws_count--;
	free(se->se_key);
	free(se);
}

/* RB_FIND by key, walked by hand: a key struct would drop const. */
static struct seen_entry *
seen_find(struct webhook_seen *ws, const char *key)
{
	struct seen_entry	*se = RB_ROOT(&ws->ws_tree);
	int			 c;

	while (se != NULL) {
		if ((c = strcmp(key, se->se_key)) == 0)
			return se;
		se = c < 0 ? RB_LEFT(se, se_node) : RB_RIGHT(se, se_node);
	}
	return NULL;
}

int
webhook_seen_add(struct webhook_seen *ws, const char *key, time_t now)
{
	struct seen_entry	*se, *next;

	/* Forget what expired; the list is in the order of arrival. */
	TAILQ_FOREACH_SAFE(se, &ws->ws_age, se_age, next) {
		if (se->se_at + ws->ws_ttl > now && se->se_at <= now)
			break;
		seen_drop(ws, se);
	}
	if (seen_find(ws, key) != NULL)
		return 1;
	if (ws->ws_count >= ws->ws_max)
		seen_drop(ws, TAILQ_FIRST(&ws->ws_age));
	if ((se = calloc(1, sizeof(*se))) == NULL ||
	    (se->se_key = strdup(key)) == NULL) {
		/* Out of memory: better a replay than a lost delivery. */
		free(se);
		return 0;
	}
	se->se_at = now;
	RB_INSERT(seen_tree, &ws->ws_tree, se);
	TAILQ_INSERT_TAIL(&ws->ws_age, se, se_age);
	ws->ws_count++;
	return 0;
}

size_t
webhook_seen_count(const struct webhook_seen *ws)
{
	return ws->ws_count;
}

void
webhook_seen_free(struct webhook_seen *ws)
{
	struct seen_entry	*se, *next;

	if (ws == NULL)
		return;
	TAILQ_FOREACH_SAFE(se, &ws->ws_age, se_age, next)
		seen_drop(ws, se);
	free(ws);
}
