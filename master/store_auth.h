/*
 * The store's rows of authentication: login sessions and API tokens
 * (both kept by the SHA-256 of their secret), and what the ACL needs to
 * know of a deployment.  The caller opens the transaction where a group
 * of writes must be one (store_begin(), store.h).
 *
 * Row callbacks get strings valid only during the call, must not use the
 * store, and stop the walk by returning non-zero.  Times are unix
 * seconds; a time the row does not have (NULL) is 0.
 */
#ifndef NOPS_STORE_AUTH_H
#define NOPS_STORE_AUTH_H

#include <stddef.h>
#include <stdint.h>

struct store;

/* A row of sessions. */
struct store_auth_session {
	const char	*sa_hash;	/* of the session id */
	const char	*sa_user;
	int64_t		 sa_last_seen;
	int64_t		 sa_expires_at;
};

/* A row of api_tokens. */
struct store_auth_token {
	int64_t		 at_id;
	const char	*at_name;
	const char	*at_hash;	/* of the token */
	const char	*at_policy;
	const char	*at_created_by;
	int64_t		 at_created_at;
	int64_t		 at_expires_at;	/* 0: never */
	int64_t		 at_last_used;	/* 0: never */
	int64_t		 at_revoked_at;	/* 0: live */
};

/* store_auth_token_insert(): a live token has that name already. */
#define STORE_AUTH_EXISTS	1

/*
 * Sessions.  The lookups return 1 (cb was called), 0 (no such row) or
 * -1; the walks the number of rows passed to cb, or -1; the others 0 or
 * -1.
 */
int	store_auth_session_insert(struct store *, const char *hash,
	    const char *user, const char *groups_json, const char *csrf_hash,
	    int64_t now, int64_t expires_at);
int	store_auth_session_find(struct store *, const char *hash,
	    int (*cb)(const struct store_auth_session *, void *), void *);
/* The sessions whose expiry is after since, expired ones included. */
int	store_auth_sessions_walk(struct store *, int64_t since,
	    int (*cb)(const struct store_auth_session *, void *), void *);
/* Seen at at: last_seen moves forward, never back. */
int	store_auth_session_seen(struct store *, const char *hash, int64_t at);
int	store_auth_session_delete(struct store *, const char *hash);
/* Delete the session if it ended (expired at now, or idle since then). */
int	store_auth_session_delete_ended(struct store *, const char *hash,
	    int64_t now, int64_t idle_since);
/* Delete every session that ended. */
int	store_auth_sessions_prune(struct store *, int64_t now,
	    int64_t idle_since);
/*
 * Delete user's sessions but the keep newest; gone() gets the hash of
 * each deleted one.
 */
int	store_auth_sessions_trim(struct store *, const char *user, int keep,
	    void (*gone)(const char *hash, void *), void *);

/* API tokens. */
/* 0 (*id set), STORE_AUTH_EXISTS, or -1. */
int	store_auth_token_insert(struct store *, const char *name,
	    const char *hash, const char *policy, const char *created_by,
	    int64_t now, int64_t expires_at, int64_t *id);
/* The live (not revoked) token of that hash: 1, 0 or -1. */
int	store_auth_token_find(struct store *, const char *hash,
	    int (*cb)(const struct store_auth_token *, void *), void *);
/* Every token, by id; or only those live and not expired at now. */
int	store_auth_tokens_walk(struct store *,
	    int (*cb)(const struct store_auth_token *, void *), void *);
int	store_auth_tokens_live(struct store *, int64_t now,
	    int (*cb)(const struct store_auth_token *, void *), void *);
/* Used at at: last_used moves forward, never back. */
int	store_auth_token_used(struct store *, const char *hash, int64_t at);
/*
 * Revoke the live token of that id (if id is not 0) or name (if it is):
 * 1 with cb called on the row as it was, 0 none, -1.
 */
int	store_auth_token_revoke(struct store *, int64_t id, const char *name,
	    int64_t now, int (*cb)(const struct store_auth_token *, void *),
	    void *);

/*
 * What the ACL asks of a deployment: its namespace (copied to ns) and
 * whether it is a deploy plan's.  1 found, 0 none, -1.
 */
int	store_auth_deployment_scope(struct store *, int64_t id, char *ns,
	    size_t nslen, int *is_plan);

#endif /* NOPS_STORE_AUTH_H */
