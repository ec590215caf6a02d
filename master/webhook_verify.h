/*
 * Git webhooks: POST /webhook/git/{repository} from GitHub, Gitea or
 * GitLab.  A delivery is authentic when every signature it carries
 * matches the repository's webhook secret; it then only asks for an
 * immediate fetch of that repository.  The payload is never parsed.
 *
 * This header: master/webhook_verify.c, what can be tested alone
 * (signature checks, delivery ids, the replay set).  The route and the
 * secrets are master/webhook.c (webhook.h).
 */
#ifndef NOPS_WEBHOOK_VERIFY_H
#define NOPS_WEBHOOK_VERIFY_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define WEBHOOK_SECRET_MAX	4096	/* bytes of a secret file */
#define WEBHOOK_DELIVERY_MAX	128	/* a delivery id */
#define WEBHOOK_SEEN_MAX	4096	/* deliveries remembered */
#define WEBHOOK_SEEN_TTL	(24 * 3600)	/* seconds remembered */

/* The headers of a delivery (NULL when absent) and its raw body. */
struct webhook_req {
	const char	*wr_hub256;	/* X-Hub-Signature-256 */
	const char	*wr_gitea;	/* X-Gitea-Signature: <hex> */
	const char	*wr_gitlab;	/* X-Gitlab-Token: <secret> */
	const char	*wr_github_id;	/* X-GitHub-Delivery */
	const char	*wr_gitea_id;	/* X-Gitea-Delivery */
	const char	*wr_gitlab_id;	/* X-Gitlab-Event-UUID */
	const void	*wr_body;
	size_t		 wr_bodylen;
};

enum webhook_verdict {
	WEBHOOK_VALID = 0,	/* every signature present matches */
	WEBHOOK_UNSIGNED,	/* no signature or token header at all */
	WEBHOOK_MALFORMED,	/* a header that cannot be a signature */
	WEBHOOK_MISMATCH,	/* a signature or token does not match */
};

/*
 * webhook_verify: check every signature header present against secret.
 * Hex may be upper or lower case.  *why says what failed (a constant).
 */
enum webhook_verdict webhook_verify(const struct webhook_req *,
		    const uint8_t *secret, size_t secretlen, const char **why);

/*
 * webhook_delivery: the delivery id (GitHub's, else Gitea's, else
 * GitLab's), or NULL when none was sent.  Returns -1 when the one chosen
 * is malformed (1 to WEBHOOK_DELIVERY_MAX of A-Z a-z 0-9 - _ .).
 */
int		 webhook_delivery(const struct webhook_req *,
		    const char **id);

/* Constant-time equality of two secrets of any lengths. */
int		 webhook_secret_equal(const void *, size_t, const void *,
		    size_t);

/* Counts of constant-time comparisons made, and of the bytes compared. */
extern size_t	 webhook_ct_compares;
extern size_t	 webhook_ct_bytes;

/*
 * The replay set: delivery keys seen within ttl seconds, at most max of
 * them (the oldest goes first).  webhook_seen_add() returns 1 if key was
 * there already (a replay), else 0 and remembers it.
 */
struct webhook_seen;
struct webhook_seen *webhook_seen_new(size_t max, time_t ttl);
int		 webhook_seen_add(struct webhook_seen *, const char *key,
		    time_t now);
size_t		 webhook_seen_count(const struct webhook_seen *);
void		 webhook_seen_free(struct webhook_seen *);

#endif /* NOPS_WEBHOOK_VERIFY_H */
