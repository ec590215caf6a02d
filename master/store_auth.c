/*
 * The store's rows of authentication: sessions, API tokens, and the
 * deployment facts the ACL decides on (store_auth.h).
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "log.h"
#include "store_priv.h"
#include "store_auth.h"

#define SA_SESSION_COLS	"id_hash, user, last_seen, expires_at"
#define SA_TOKEN_COLS	"id, name, hash, policy, created_by, created_at," \
			" expires_at, last_used, revoked_at"

/*
 * Alike on purpose: the row readers of store_hosts.c and
 * store_operation.c: each copies its own columns into its own struct.
 */
static void
store_auth_session_row(sqlite3_stmt *st, struct store_auth_session *sa)
{
	sa->sa_hash = store_col_text(st, 0);
	sa->sa_user = store_col_text(st, 1);
	sa->sa_last_seen = sqlite3_column_int64(st, 2);
	sa->sa_expires_at = sqlite3_column_int64(st, 3);
}

static void
store_auth_token_row(sqlite3_stmt *st, struct store_auth_token *at)
{
	at->at_id = sqlite3_column_int64(st, 0);
	at->at_name = store_col_text(st, 1);
	at->at_hash = store_col_text(st, 2);
	at->at_policy = store_col_text(st, 3);
	at->at_created_by = store_col_text(st, 4);
	at->at_created_at = sqlite3_column_int64(st, 5);
	at->at_expires_at = store_col_int(st, 6, 0);
	at->at_last_used = store_col_int(st, 7, 0);
	at->at_revoked_at = store_col_int(st, 8, 0);
}

/*
 * Pass the rows of a bound statement to cb, and reset it: the number of
 * rows passed, or -1.  The row is read by the session or token reader.
 */
static int
store_auth_walk(sqlite3_stmt *st, int token,
    int (*scb)(const struct store_auth_session *, void *),
    int (*tcb)(const struct store_auth_token *, void *), void *arg)
{
	struct store_auth_session	 sa;
	struct store_auth_token		 at;
	int				 n = 0, rc = SQLITE_DONE, stop = 0;

	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		n++;
		if (token) {
			store_auth_token_row(st, &at);
			stop = tcb(&at, arg);
		} else {
			store_auth_session_row(st, &sa);
			stop = scb(&sa, arg);
		}
	}
	(void)sqlite3_reset(st);
	return stop || rc == SQLITE_DONE ? n : -1;
}

/*
 * The rows of sql to the session or token reader, with ?1 bound to key,
 * or to n if key is NULL (a statement without ?1 ignores it).
 */
static int
store_auth_select(struct store *s, const char *sql, const char *key,
    int64_t n, int token,
    int (*scb)(const struct store_auth_session *, void *),
    int (*tcb)(const struct store_auth_token *, void *), void *arg)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, sql)) == NULL)
		return -1;
	if (key != NULL)
		store_bind_text(st, 1, key);
	else
		sqlite3_bind_int64(st, 1, n);
	return store_auth_walk(st, token, scb, tcb, arg);
}

/* Sessions. */

int
store_auth_session_insert(struct store *s, const char *hash,
    const char *user, const char *groups_json, const char *csrf_hash,
    int64_t now, int64_t expires_at)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "INSERT INTO sessions (id_hash, user,"
	    " groups, csrf, created_at, last_seen, expires_at) VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?5, ?6)")) == NULL)
		return -1;
	store_bind_text(st, 1, hash);
	store_bind_text(st, 2, user);
	store_bind_text(st, 3, groups_json);
	store_bind_text(st, 4, csrf_hash);
	sqlite3_bind_int64(st, 5, now);
	sqlite3_bind_int64(st, 6, expires_at);
	return store_done(st);
}

int
store_auth_session_find(struct store *s, const char *hash,
    int (*cb)(const struct store_auth_session *, void *), void *arg)
{
	return store_auth_select(s, "SELECT " SA_SESSION_COLS " FROM sessions"
	    " WHERE id_hash = ?1", hash, 0, 0, cb, NULL, arg);
}

int
store_auth_sessions_walk(struct store *s, int64_t since,
    int (*cb)(const struct store_auth_session *, void *), void *arg)
{
	return store_auth_select(s, "SELECT " SA_SESSION_COLS " FROM sessions"
	    " WHERE expires_at > ?1", NULL, since, 0, cb, NULL, arg);
}

int
store_auth_session_seen(struct store *s, const char *hash, int64_t at)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "UPDATE sessions SET last_seen = ?1"
	    " WHERE id_hash = ?2 AND last_seen < ?1")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, at);
	store_bind_text(st, 2, hash);
	return store_done(st);
}

int
store_auth_session_delete(struct store *s, const char *hash)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "DELETE FROM sessions WHERE"
	    " id_hash = ?1")) == NULL)
		return -1;
	store_bind_text(st, 1, hash);
	return store_done(st);
}

int
store_auth_session_delete_ended(struct store *s, const char *hash,
    int64_t now, int64_t idle_since)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "DELETE FROM sessions WHERE id_hash = ?1"
	    " AND (expires_at <= ?2 OR last_seen <= ?3)")) == NULL)
		return -1;
	store_bind_text(st, 1, hash);
	sqlite3_bind_int64(st, 2, now);
	sqlite3_bind_int64(st, 3, idle_since);
	return store_done(st);
}

int
store_auth_sessions_prune(struct store *s, int64_t now, int64_t idle_since)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "DELETE FROM sessions WHERE"
	    " expires_at <= ?1 OR last_seen <= ?2")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int64(st, 2, idle_since);
	return store_done(st);
}

int
store_auth_sessions_trim(struct store *s, const char *user, int keep,
    void (*gone)(const char *, void *), void *arg)
{
	sqlite3_stmt	*st;
	int		 rc;

	/* Past the newest keep, by sessions_user: no scan, no temp table. */
	if ((st = store_prepare(s, "DELETE FROM sessions WHERE"
	    " id_hash IN (SELECT id_hash FROM sessions WHERE user = ?1"
	    " ORDER BY created_at DESC LIMIT -1 OFFSET ?2)"
	    " RETURNING id_hash")) == NULL)
		return -1;
	store_bind_text(st, 1, user);
	sqlite3_bind_int(st, 2, keep);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		gone(store_col_text(st, 0), arg);
	(void)sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* API tokens. */

int
store_auth_token_insert(struct store *s, const char *name, const char *hash,
    const char *policy, const char *created_by, int64_t now,
    int64_t expires_at, int64_t *id)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = store_prepare(s, "INSERT INTO api_tokens (name, hash,"
	    " policy, created_by, created_at, expires_at) VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?6)")) == NULL)
		return -1;
	store_bind_text(st, 1, name);
	store_bind_text(st, 2, hash);
	store_bind_text(st, 3, policy);
	store_bind_text(st, 4, created_by);
	sqlite3_bind_int64(st, 5, now);
	if (expires_at != 0)
		sqlite3_bind_int64(st, 6, expires_at);
	else
		sqlite3_bind_null(st, 6);
	rc = sqlite3_step(st);
	(void)sqlite3_reset(st);
	if (rc == SQLITE_CONSTRAINT)
		return STORE_AUTH_EXISTS;
	if (rc != SQLITE_DONE)
		return -1;
	*id = sqlite3_last_insert_rowid(store_db(s));
	return 0;
}

int
store_auth_token_find(struct store *s, const char *hash,
    int (*cb)(const struct store_auth_token *, void *), void *arg)
{
	return store_auth_select(s, "SELECT " SA_TOKEN_COLS " FROM api_tokens"
	    " WHERE hash = ?1 AND revoked_at IS NULL", hash, 0, 1, NULL, cb,
	    arg);
}

/* Alike on purpose: the session lookups above: a query each, one reader. */
int
store_auth_tokens_walk(struct store *s,
    int (*cb)(const struct store_auth_token *, void *), void *arg)
{
	return store_auth_select(s, "SELECT " SA_TOKEN_COLS " FROM api_tokens"
	    " ORDER BY id", NULL, 0, 1, NULL, cb, arg);
}

int
store_auth_tokens_live(struct store *s, int64_t now,
    int (*cb)(const struct store_auth_token *, void *), void *arg)
{
	return store_auth_select(s, "SELECT " SA_TOKEN_COLS " FROM api_tokens"
	    " WHERE revoked_at IS NULL AND (expires_at IS NULL OR"
	    " expires_at > ?1)", NULL, now, 1, NULL, cb, arg);
}

int
store_auth_token_used(struct store *s, const char *hash, int64_t at)
{
	sqlite3_stmt	*st;

	if ((st = store_prepare(s, "UPDATE api_tokens SET last_used = ?1"
	    " WHERE hash = ?2 AND (last_used IS NULL OR last_used < ?1)")) ==
	    NULL)
		return -1;
	sqlite3_bind_int64(st, 1, at);
	store_bind_text(st, 2, hash);
	return store_done(st);
}

int
store_auth_token_revoke(struct store *s, int64_t id, const char *name,
    int64_t now, int (*cb)(const struct store_auth_token *, void *),
    void *arg)
{
	sqlite3_stmt	*st;

	/* The live name index makes it one row at most. */
	if ((st = store_prepare(s, "UPDATE api_tokens SET revoked_at = ?1"
	    " WHERE revoked_at IS NULL AND (id = ?2 OR name = ?3)"
	    " RETURNING " SA_TOKEN_COLS)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int64(st, 2, id);
	store_bind_text(st, 3, id == 0 ? name : "");
	return store_auth_walk(st, 1, NULL, cb, arg);
}

/* The ACL. */

int
store_auth_deployment_scope(struct store *s, int64_t id, char *ns,
    size_t nslen, int *is_plan)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = store_prepare(s, "SELECT kind, namespace FROM deployments"
	    " WHERE id = ?1")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		strlcpy(ns, store_col_text(st, 1), nslen);
		*is_plan = strcmp(store_col_text(st, 0), "plan") == 0;
	}
	(void)sqlite3_reset(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}
