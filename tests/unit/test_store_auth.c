/*
 * Unit tests for master/store_auth.c: API tokens (a live name is taken
 * once, revoked frees it, last_used only moves forward, expired ones are
 * not live), sessions (trim keeps the newest and names the ones it
 * dropped, last_seen only moves forward, only ended ones are deleted) and
 * the ACL's question about a deployment.
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "store.h"
#include "store_auth.h"
#include "test.h"
#include "storefix.h"

/* What the callbacks saw. */
struct seen {
	int		 n;
	char		 names[8][64];
	int64_t		 last;		/* last_used or last_seen */
	int64_t		 expires;
	int64_t		 revoked;
	int64_t		 id;
};

static int
token_cb(const struct store_auth_token *at, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8)
		strlcpy(s->names[s->n], at->at_name, sizeof(s->names[0]));
	s->n++;
	s->last = at->at_last_used;
	s->expires = at->at_expires_at;
	s->revoked = at->at_revoked_at;
	s->id = at->at_id;
	return 0;
}

static int
session_cb(const struct store_auth_session *sa, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8)
		strlcpy(s->names[s->n], sa->sa_user, sizeof(s->names[0]));
	s->n++;
	s->last = sa->sa_last_seen;
	s->expires = sa->sa_expires_at;
	return 0;
}

static void
gone_cb(const char *hash, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 8)
		strlcpy(s->names[s->n], hash, sizeof(s->names[0]));
	s->n++;
}

static void
t_tokens(struct store *st)
{
	struct seen	 s;
	int64_t		 id1 = 0, id2 = 0, id3 = 0;

	CHECK(store_auth_token_insert(st, "ci", "h1", "p", "root", 100, 0,
	    &id1) == 0);
	CHECK(id1 > 0);
	CHECK(store_auth_token_insert(st, "ci", "h2", "p", "root", 100, 0,
	    &id2) == STORE_AUTH_EXISTS);
	CHECK(store_auth_token_insert(st, "old", "h3", "p", "root", 100, 150,
	    &id3) == 0);

	memset(&s, 0, sizeof(s));
	CHECK(store_auth_token_find(st, "h1", token_cb, &s) == 1);
	CHECK_STR(s.names[0], "ci");
	CHECK(s.last == 0 && s.expires == 0 && s.revoked == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_token_find(st, "nope", token_cb, &s) == 0);
	CHECK(s.n == 0);

	CHECK(store_auth_token_used(st, "h1", 200) == 0);
	CHECK(store_auth_token_used(st, "h1", 190) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_token_find(st, "h1", token_cb, &s) == 1);
	CHECK(s.last == 200);

	memset(&s, 0, sizeof(s));
	CHECK(store_auth_tokens_live(st, 160, token_cb, &s) == 1);
	CHECK_STR(s.names[0], "ci");
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_tokens_walk(st, token_cb, &s) == 2);
	CHECK(s.expires == 150);

	/* By name, then by id; a revoked one is revoked once. */
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_token_revoke(st, 0, "ci", 300, token_cb, &s) == 1);
	CHECK(s.id == id1);
	CHECK(store_auth_token_revoke(st, 0, "ci", 301, token_cb, &s) == 0);
	CHECK(store_auth_token_revoke(st, id1, NULL, 301, token_cb, &s) == 0);
	CHECK(store_auth_token_find(st, "h1", token_cb, &s) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_token_revoke(st, id3, NULL, 302, token_cb, &s) == 1);
	CHECK_STR(s.names[0], "old");
	/* A revoked token's name may be taken again. */
	CHECK(store_auth_token_insert(st, "ci", "h4", "p", "root", 400, 0,
	    &id2) == 0);
	CHECK(id2 > id3);
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_tokens_walk(st, token_cb, &s) == 3);
}

static void
t_sessions(struct store *st)
{
	struct seen	 s;

	CHECK(store_auth_session_insert(st, "s1", "ann", "[]", "c", 100,
	    1000) == 0);
	CHECK(store_auth_session_insert(st, "s2", "ann", "[]", "c", 110,
	    1000) == 0);
	CHECK(store_auth_session_insert(st, "s3", "ann", "[]", "c", 120,
	    1000) == 0);
	CHECK(store_auth_session_insert(st, "s4", "bob", "[]", "c", 100,
	    500) == 0);
	CHECK(store_auth_session_insert(st, "s4", "bob", "[]", "c", 100,
	    500) == -1);

	/* Keep ann's two newest: s1 goes, and is named. */
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_sessions_trim(st, "ann", 2, gone_cb, &s) == 0);
	CHECK(s.n == 1);
	CHECK_STR(s.names[0], "s1");
	CHECK(store_auth_session_find(st, "s1", session_cb, &s) == 0);

	memset(&s, 0, sizeof(s));
	CHECK(store_auth_session_find(st, "s2", session_cb, &s) == 1);
	CHECK_STR(s.names[0], "ann");
	CHECK(s.last == 110 && s.expires == 1000);
	CHECK(store_auth_session_seen(st, "s2", 200) == 0);
	CHECK(store_auth_session_seen(st, "s2", 150) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_session_find(st, "s2", session_cb, &s) == 1);
	CHECK(s.last == 200);

	memset(&s, 0, sizeof(s));
	CHECK(store_auth_sessions_walk(st, 600, session_cb, &s) == 2);

	/* Not ended yet: kept; ended by idleness: deleted. */
	CHECK(store_auth_session_delete_ended(st, "s2", 300, 100) == 0);
	CHECK(store_auth_session_find(st, "s2", session_cb, &s) == 1);
	CHECK(store_auth_session_delete_ended(st, "s2", 300, 250) == 0);
	CHECK(store_auth_session_find(st, "s2", session_cb, &s) == 0);

	/* s4 expired at 500; s3 was seen at 120. */
	CHECK(store_auth_sessions_prune(st, 600, 100) == 0);
	CHECK(store_auth_session_find(st, "s4", session_cb, &s) == 0);
	CHECK(store_auth_session_find(st, "s3", session_cb, &s) == 1);
	CHECK(store_auth_session_delete(st, "s3") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_auth_sessions_walk(st, 0, session_cb, &s) == 0);
}

static void
t_deployment_scope(struct store *st)
{
	char		 ns[16];
	int		 is_plan = -1;

	CHECK(storefix_deployment(st, "web", "j", "completed") == 1);
	CHECK(storefix_deployment(st, "", "p", "completed") == 2);
	CHECK(store_auth_deployment_scope(st, 1, ns, sizeof(ns),
	    &is_plan) == 1);
	CHECK_STR(ns, "web");
	CHECK(is_plan == 0);
	CHECK(store_auth_deployment_scope(st, 2, ns, sizeof(ns),
	    &is_plan) == 1);
	CHECK_STR(ns, "");
	CHECK(is_plan == 1);
	CHECK(store_auth_deployment_scope(st, 3, ns, sizeof(ns),
	    &is_plan) == 0);
}

int
main(void)
{
	log_init(1, LOG_DAEMON);
	log_procinit("test_store_auth");
	storefix_case("store_auth: tokens", t_tokens);
	storefix_case("store_auth: sessions", t_sessions);
	storefix_case("store_auth: the ACL's scope of a deployment",
	    t_deployment_scope);
	TEST_EXIT();
}
