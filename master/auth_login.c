/*
 * The routes of authentication: login (bcrypt, rate limited), logout,
 * the session probe the dashboard asks what to show, and API tokens.
 *
 * Passwords are checked off the event loop, in the hashing processes of
 * auth_hash.c (~57 ms at cost 10, ~230 ms at 12); the throttle runs
 * before bcrypt, so a flood of attempts costs nothing past it, and at
 * most AUTH_HASH_QUEUE_MAX checks wait at once.
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "logflood.h"
#include "nops.h"
#include "conf.h"
#include "store.h"
#include "store_auth.h"
#include "api.h"
#include "acl.h"
#include "auth.h"
#include "webpub.h"
#include "jsonb.h"

#define AUTH_SESSIONS_PER_USER	100
#define AUTH_TOKEN_NAME_MAX	48	/* "token:" + name fits an actor */
#define AUTH_TOKEN_TTL_MAX	(10 * 365 * 86400)
#define AUTH_PRUNE_EVERY	60	/* s between two deletes of
					   ended sessions */

/*
 * An unknown user name is checked against a hash too, so that the
 * answer's delay does not tell which names exist: a real user's hash
 * (same cost as the users'; the result is thrown away), or without
 * users this one, of a random password nobody knows, at the cost of
 * nopsctl hash-password.
 */
static const char auth_dummy_hash[] =
    "$2b$12$1kRwYI2eGayip8e5EzskNO6Va75DNRIrJHADKi5qOLuChd19erx16";

/* Failed and refused logins come in floods: logged coalesced. */
static struct log_flood	 auth_fail_flood =
			    LOG_FLOOD_INITIALIZER("failed logins", LOG_INFO);
static struct log_flood	 auth_refuse_flood =
			    LOG_FLOOD_INITIALIZER("throttled logins", LOG_INFO);

void
auth_login_shutdown(void)
{
	auth_throttle_shutdown();
	auth_hash_shutdown();
}

/* Login, logout, session. */

static void
auth_group_add(const char *group, void *arg)
{
	json_array_append_new(arg, jsonb_str(group));
}

json_t *
auth_groups_json(const char *user)
{
	json_t	*a = json_array();

	acl_user_groups(api_auth_conf(), user, auth_group_add, a);
	return a;
}

static json_t *
auth_caps_json(uint32_t caps)
{
	json_t		*a = json_array();
	uint32_t	 c;

	for (c = 1; c <= CAP_MANAGEMENT; c <<= 1)
		if ((caps & c) && config_cap_name(c) != NULL)
			json_array_append_new(a, jsonb_str(
			    config_cap_name(c)));
	return a;
}

/* The client's address without the port: "10.0.0.1:5678" -> "10.0.0.1". */
static void
auth_addr_key(const char *remote, char *buf, size_t len)
{
	const char	*colon = strrchr(remote, ':');
	size_t		 n = colon != NULL ? (size_t)(colon - remote) :
			    strlen(remote);

	snprintf(buf, len, "a:%.*s", (int)n, remote);
}

/*
 * A login's commit adds a session and an audit event, a logout's ends
 * one: of the documents the webworker holds, only the audit log's are
 * rendered again.
 */
static int
auth_login_commit(struct store *s)
{
	int	 rc;

	webpub_audit_only(1);
	rc = store_commit(s);
	webpub_audit_only(0);
	return rc;
}

/*
 * A login's rows (its session, its audit line) do not wait for the disk
 * (store_begin_lazy()): written in the event loop, an fsync per login
 * would delay every other answer during a burst.  A power cut may lose
 * the last logins: their users log in again.
 */
static void
auth_audit_login(const char *actor, const char *action, const char *target,
    const char *detail)
{
	struct store	*s = api_auth_store();

	if (s == NULL)
		return;
	if (store_begin_lazy(s) == -1 ||
	    store_event(s, actor, action, target, detail) == -1 ||
	    auth_login_commit(s) == -1) {
		log_warnx("audit %s %s lost: %s", action, target,
		    store_error(s));
		store_rollback(s);
	}
}

static void
auth_session_gone(const char *hash, void *arg)
{
	webpub_forget(hash);
}

/*
 * A new session row for user, its id in sid and its CSRF token in csrf;
 * 0, or -1.
 */
static int
auth_session_create(const char *user, const char *addr, char *sid,
    char *csrf, time_t *expires)
{
	static time_t		 pruned;
	const struct nops_conf	*conf = api_auth_conf();
	struct store		*s = api_auth_store();
	json_t			*groups;
	char			 hash[AUTH_SHA256_HEX + 1];
	char			 chash[AUTH_SHA256_HEX + 1];
	char			*gs, target[NOPS_NAME_MAX + 8];
	time_t			 now = time(NULL);
	int			 ok, prune;

	if (s == NULL)
		return -1;
	auth_session_new(sid);
	auth_sha256_hex(sid, strlen(sid), hash);
	auth_csrf_token(sid, csrf);
	/* Only its hash is kept: the token is derived again from the id. */
	auth_sha256_hex(csrf, strlen(csrf), chash);
	*expires = now + conf->session_lifetime;
	groups = auth_groups_json(user);
	if ((gs = json_dumps(groups, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	json_decref(groups);
	if (store_begin_lazy(s) == -1) {
		free(gs);
		return -1;
	}
	/*
	 * Sessions that ended (at most once a minute: an ended one is
	 * refused all the same, and the webworker reports those it finds),
	 * and the oldest of a user with too many: the webworker forgets
	 * those pushed out.
	 */
	prune = now < pruned || now - pruned >= AUTH_PRUNE_EVERY;
	ok = (!prune || store_auth_sessions_prune(s, now,
	    now - conf->session_idle) == 0) &&
	    store_auth_sessions_trim(s, user, AUTH_SESSIONS_PER_USER - 1,
	    auth_session_gone, NULL) == 0 &&
	    store_auth_session_insert(s, hash, user, gs, chash, now,
	    *expires) == 0;
	free(gs);
	snprintf(target, sizeof(target), "user/%s", user);
	if (!ok || store_event(s, user, "auth.login", target, addr) == -1 ||
	    auth_login_commit(s) == -1) {
		store_rollback(s);
		explicit_bzero(sid, AUTH_SECRET_B64 + 1);
		explicit_bzero(csrf, AUTH_SECRET_B64 + 1);
		return -1;
	}
	if (prune)
		pruned = now;
	webpub_session_add(hash, user, now, *expires);
	return 0;
}

/* A login whose password is being checked (auth_hash.c). */
struct auth_login {
	struct api_later	*al_later;
	int			 al_known;
	int			 al_tls;
	char			 al_user[AUTH_USER_NAME_MAX + 1];
	char			 al_remote[WEB_REMOTE_MAX + 1];
	char			 al_addr[WEB_REMOTE_MAX + 8];
};

/* The password is checked: answer the login, in the event loop. */
static void
auth_login_done(int result, void *arg)
{
	struct auth_login	*l = arg;
	const struct nops_conf	*conf = api_auth_conf();
	struct api_resp		 resp;
	struct api_req		 req;
	char			 sid[AUTH_SECRET_B64 + 1], detail[160];
	char			 csrf[AUTH_SECRET_B64 + 1], target[80];
	time_t			 now = time(NULL), expires;
	int			 good;

	memset(&resp, 0, sizeof(resp));
	/* The users file may have been reloaded while bcrypt ran. */
	good = result == 1 && l->al_known &&
	    auth_users_hash(api_auth_users(), l->al_user) != NULL;
	if (!good) {
		auth_throttle_failed(l->al_remote, l->al_known ? l->al_user :
		    NULL, now);
		/* An unknown name may be a password typed in the wrong box. */
		snprintf(target, sizeof(target), "user/%s", l->al_known ?
		    l->al_user : "?");
		snprintf(detail, sizeof(detail), "from %s: %s", l->al_addr,
		    l->al_known ? "wrong password" : "unknown user name");
		auth_audit_login("anonymous", "auth.login_failed", target,
		    detail);
		log_flood(&auth_fail_flood, "failed login for %s from %s",
		    l->al_known ? l->al_user : "an unknown user name",
		    l->al_addr);
		api_error(&resp, 401, "unauthorized", "wrong user name or "
		    "password");
		goto out;
	}
	snprintf(detail, sizeof(detail), "from %s", l->al_addr);
	if (auth_session_create(l->al_user, detail, sid, csrf,
	    &expires) == -1) {
		api_error(&resp, 500, "runtime_error", "cannot create the "
		    "session");
		goto out;
	}
	log_info("%s logged in from %s", l->al_user, l->al_addr);
	memset(&req, 0, sizeof(req));
	req.ar_tls = l->al_tls;
	api_auth_cookie_header(&resp, &req, sid, conf->session_lifetime);
	resp.status = 200;
	resp.body = jsonb_pack("{s:s,s:o,s:s,s:o,s:i}", "user", l->al_user,
	    "groups", auth_groups_json(l->al_user), "csrf_token", csrf,
	    "expires_at", api_time_json(expires),
	    "idle_timeout", conf->session_idle);
	explicit_bzero(sid, sizeof(sid));
	explicit_bzero(csrf, sizeof(csrf));
out:
	api_later_answer(l->al_later, &resp);
	free(l);
}

/*
 * POST /api/v1/login.  The throttle is checked here; bcrypt runs in the
 * hashing threads and auth_login_done() answers (API_DEFERRED).
 */
static void
auth_api_login(struct api_req *req, struct api_resp *resp)
{
	struct auth_login	*l = NULL;
	json_t			*body, *ju, *jp;
	const char		*user, *pw, *hash = NULL;
	char			 akey[WEB_REMOTE_MAX + 8], retry[16];
	size_t			 pwlen;
	time_t			 now = time(NULL);
	int			 wait, known;

	if ((body = api_json_body(req, resp)) == NULL)
		return;
	ju = json_object_get(body, "username");
	jp = json_object_get(body, "password");
	if (!json_is_string(ju) || !json_is_string(jp)) {
		api_error(resp, 400, "bad_request", "expected {\"username\": "
		    "\"...\", \"password\": \"...\"}");
		goto out;
	}
	user = json_string_value(ju);
	pw = json_string_value(jp);
	pwlen = json_string_length(jp);
	if (pwlen > AUTH_PASSWORD_BODY_MAX || strlen(user) > 256) {
		api_error(resp, 400, "bad_request", "user name or password "
		    "too long");
		goto out;
	}
	known = config_check_username(user) == NULL &&
	    strlen(user) <= AUTH_USER_NAME_MAX &&
	    (hash = auth_users_hash(api_auth_users(), user)) != NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		fatal(NULL);
	l->al_known = known;
	l->al_tls = req->ar_tls;
	if (known)
		strlcpy(l->al_user, user, sizeof(l->al_user));
	strlcpy(l->al_remote, req->ar_remote, sizeof(l->al_remote));
	auth_addr_key(req->ar_remote, akey, sizeof(akey));
	strlcpy(l->al_addr, akey + 2, sizeof(l->al_addr));

	/* Before bcrypt: a refused attempt costs the master nothing. */
	wait = auth_throttle_check(req->ar_remote, known ? user : NULL,
	    now);
	if (wait > 0) {
		snprintf(retry, sizeof(retry), "%d", wait);
		api_add_header(resp, "Retry-After", retry);
		api_error(resp, 429, "queue_full", "too many failed logins; "
		    "try again in %d seconds", wait);
		log_flood(&auth_refuse_flood, "login from %s refused: "
		    "throttled for %d s", l->al_addr, wait);
		goto out;
	}
	if (!known)
		hash = api_auth_users() != NULL && api_auth_users()->au_n > 0 ?
		    api_auth_users()->au_users[0].au_hash : auth_dummy_hash;
	l->al_later = api_later(req);
	if (auth_hash_verify(pw, pwlen, hash, auth_login_done, l) == -1) {
		free(l->al_later);
		api_add_header(resp, "Retry-After", "1");
		api_error(resp, 429, "queue_full", "too many logins at once; "
		    "try again in a second");
		log_flood(&auth_refuse_flood, "login from %s refused: %d "
		    "password checks wait already", l->al_addr,
		    AUTH_HASH_QUEUE_MAX);
		goto out;
	}
	l = NULL;		/* auth_login_done() has it */
	resp->status = API_DEFERRED;
out:
	free(l);
	/* jsonwipe_init() (nopsd.c) has jansson wipe the password. */
	json_decref(body);
}

static void
auth_api_logout(struct api_req *req, struct api_resp *resp)
{
	const struct acl_ident	*id = api_auth_ident(req);
	char			 target[80];

	if (api_json_body_check(req, resp) == -1)
		return;
	if (id == NULL || id->ai_kind != ACL_USER) {
		api_error(resp, 400, "bad_request", "not a login session "
		    "(a token is revoked, not logged out)");
		return;
	}
	snprintf(target, sizeof(target), "user/%s", id->ai_name);
	if (store_begin(api_auth_store()) == -1 ||
	    api_auth_session_end(req) == -1 ||
	    store_event(api_auth_store(), id->ai_actor, "auth.logout", target,
	    NULL) == -1 || auth_login_commit(api_auth_store()) == -1) {
		/* The session may live on: say so rather than pretend. */
		api_error(resp, 500, "runtime_error", "logout not recorded, "
		    "the session may still be valid: %s",
		    store_error(api_auth_store()));
		store_rollback(api_auth_store());
		return;
	}
	api_auth_cookie_header(resp, req, "", 0);
	resp->status = 200;
	resp->body = jsonb_pack("{s:b}", "logged_out", 1);
}

/* Who the client is, and what it may do: the dashboard hides buttons. */
static void
auth_api_session(struct api_req *req, struct api_resp *resp)
{
	const struct acl_ident	*id = api_auth_ident(req);
	json_t			*o, *view;
	char			 csrf[AUTH_SECRET_B64 + 1];

	if (id == NULL) {
		api_error(resp, 500, "runtime_error", "no identity");
		return;
	}
	o = jsonb_pack("{s:b,s:s,s:s}",
	    "authenticated", id->ai_kind != ACL_NONE &&
	    id->ai_kind != ACL_ANONYMOUS,
	    "kind", acl_kind_str(id->ai_kind),
	    "actor", id->ai_actor);
	view = auth_class_view(id);
	json_object_update(o, view);
	json_decref(view);
	json_object_set_new(o, "user", id->ai_kind == ACL_USER ?
	    jsonb_str(id->ai_name) : json_null());
	json_object_set_new(o, "groups", id->ai_kind == ACL_USER ?
	    auth_groups_json(id->ai_name) : json_array());
	if (id->ai_kind == ACL_USER) {
		auth_csrf_token(api_auth_session_id(req), csrf);
		json_object_set_new(o, "csrf_token", jsonb_str(csrf));
		explicit_bzero(csrf, sizeof(csrf));
	} else
		json_object_set_new(o, "csrf_token", json_null());
	resp->status = 200;
	resp->body = o;
}

json_t *
auth_class_view(const struct acl_ident *id)
{
	const struct nops_conf	*conf = api_auth_conf();
	const struct conf_str	*ns;
	json_t			*nss;
	uint32_t		 any;

	any = acl_caps(conf, id, NULL);
	/* Per managed namespace, what each may do there. */
	nss = json_object();
	TAILQ_FOREACH(ns, &conf->nomad.namespaces, entry)
		json_object_set_new(nss, ns->str, auth_caps_json(
		    acl_caps(conf, id, ns->str)));
	return jsonb_pack("{s:b,s:o,s:o}",
	    "management", (any & CAP_MANAGEMENT) != 0,
	    "capabilities", auth_caps_json(any),
	    "namespaces", nss);
}

/* API tokens. */

static const char *
auth_token_name_check(const char *name)
{
	const char	*why;

	if ((why = config_check_name(name)) != NULL)
		return why;
	if (strlen(name) > AUTH_TOKEN_NAME_MAX)
		return "a token name is at most 48 characters";
	if (strspn(name, "0123456789") == strlen(name))
		return "a token name cannot be all digits (those are ids)";
	return NULL;
}

/* A token as the list shows it (never its hash); appended to the array. */
static int
auth_token_row_json(const struct store_auth_token *at, void *arg)
{
	time_t	 now = time(NULL);
	int	 revoked = at->at_revoked_at != 0;
	int	 expired = at->at_expires_at != 0 && at->at_expires_at <= now;
	json_t	*o;

	o = jsonb_pack("{s:I,s:s,s:s,s:s,s:o,s:s}",
	    "id", (json_int_t)at->at_id,
	    "name", at->at_name,
	    "policy", at->at_policy,
	    "created_by", at->at_created_by,
	    "created_at", api_time_json(at->at_created_at),
	    "state", revoked ? "revoked" : expired ? "expired" : "active");
	json_object_set_new(o, "expires_at", at->at_expires_at == 0 ?
	    json_null() : api_time_json(at->at_expires_at));
	json_object_set_new(o, "last_used", at->at_last_used == 0 ?
	    json_null() : api_time_json(at->at_last_used));
	json_object_set_new(o, "revoked_at", revoked ?
	    api_time_json(at->at_revoked_at) : json_null());
	json_array_append_new(arg, o);
	return 0;
}

static void
auth_api_tokens_list(struct api_req *req, struct api_resp *resp)
{
	json_t		*items;

	items = json_array();
	if (store_auth_tokens_walk(api_auth_store(), auth_token_row_json,
	    items) == -1) {
		json_decref(items);
		api_error(resp, 500, "runtime_error", "cannot read tokens");
		return;
	}
	resp->status = 200;
	resp->body = jsonb_pack("{s:o,s:n}", "items", items, "next");
}

static void
auth_api_token_create(struct api_req *req, struct api_resp *resp)
{
	struct store	*s = api_auth_store();
	json_t		*body, *jexp;
	const char	*name, *policy, *why;
	char		 tok[AUTH_TOKEN_LEN + 1], hash[AUTH_SHA256_HEX + 1];
	char		 target[64], detail[160];
	time_t		 now = time(NULL), expires = 0;
	int64_t		 tid;
	int		 secs, rc;

	if ((body = api_json_body(req, resp)) == NULL)
		return;
	name = json_string_value(json_object_get(body, "name"));
	policy = json_string_value(json_object_get(body, "policy"));
	jexp = json_object_get(body, "expires");
	if (name == NULL || policy == NULL) {
		api_error(resp, 400, "bad_request", "expected {\"name\": "
		    "\"...\", \"policy\": \"...\", \"expires\": \"30d\" (or "
		    "null)}");
		goto out;
	}
	if ((why = auth_token_name_check(name)) != NULL) {
		api_error(resp, 400, "bad_request", "token name \"%s\": %s",
		    name, why);
		goto out;
	}
	if (config_check_name(policy) != NULL ||
	    !acl_policy_exists(api_auth_conf(), policy)) {
		api_error(resp, 400, "bad_request", "no policy \"%s\" in the "
		    "configuration (or the built-in \"%s\")", policy,
		    CONF_POLICY_MANAGEMENT);
		goto out;
	}
	if (jexp != NULL && !json_is_null(jexp)) {
		if (!json_is_string(jexp) ||
		    (why = config_parse_duration(json_string_value(jexp),
		    &secs)) != NULL || secs < 60 ||
		    secs > AUTH_TOKEN_TTL_MAX) {
			api_error(resp, 400, "bad_request", "expires: %s",
			    why != NULL ? why : "a duration from 1m to 3650d "
			    "(e.g. \"90d\"), or null for none");
			goto out;
		}
		expires = now + secs;
	}
	auth_token_new(tok);
	auth_sha256_hex(tok, strlen(tok), hash);
	if (store_begin(s) == -1)
		goto fail;
	rc = store_auth_token_insert(s, name, hash, policy, req->ar_actor, now,
	    expires, &tid);
	if (rc == STORE_AUTH_EXISTS) {
		store_rollback(s);
		api_error(resp, 409, "conflict", "a live token is named %s; "
		    "revoke it first or pick another name", name);
		goto out;
	}
	if (rc == -1) {
		store_rollback(s);
		goto fail;
	}
	snprintf(target, sizeof(target), "token/%lld", (long long)tid);
	snprintf(detail, sizeof(detail), "name %s, policy %s", name, policy);
	if (store_event(s, req->ar_actor, "token.create", target, detail) ==
	    -1 || store_commit(s) == -1) {
		store_rollback(s);
		goto fail;
	}
	log_info("token %s (policy %s) created by %s", name, policy,
	    req->ar_actor);
	webpub_token_add(hash, name, policy, 0, expires);
	resp->status = 201;
	resp->body = jsonb_pack("{s:I,s:s,s:s,s:s,s:o,s:o}",
	    "id", (json_int_t)tid, "name", name, "policy", policy,
	    "token", tok, "created_at", api_time_json(now),
	    "expires_at", expires != 0 ? api_time_json(expires) : json_null());
	explicit_bzero(tok, sizeof(tok));
	goto out;
fail:
	explicit_bzero(tok, sizeof(tok));
	api_error(resp, 500, "runtime_error", "the store refused the "
	    "token: %s", store_error(api_auth_store()));
out:
	json_decref(body);
}

/* The token as it was revoked. */
struct auth_revoked {
	int64_t		 ar_id;
	char		 ar_name[NOPS_NAME_MAX + 1];
	char		 ar_hash[AUTH_SHA256_HEX + 1];
};

/* Alike on purpose: hosts_found_row (hosts_drift.c), another row copied. */
static int
auth_token_revoked(const struct store_auth_token *at, void *arg)
{
	struct auth_revoked	*r = arg;

	r->ar_id = at->at_id;
	strlcpy(r->ar_name, at->at_name, sizeof(r->ar_name));
	strlcpy(r->ar_hash, at->at_hash, sizeof(r->ar_hash));
	return 1;
}

/* DELETE /api/v1/tokens/{id|name} or POST .../{id|name}/revoke. */
static void
auth_api_token_revoke(struct api_req *req, struct api_resp *resp)
{
	struct store		*s = api_auth_store();
	struct auth_revoked	 r;
	const char		*arg = req->ar_args[0], *errstr = NULL;
	char			 target[64];
	int64_t			 tid = 0;
	int			 found;

	if (strcmp(req->ar_method, "POST") == 0 &&
	    api_json_body_check(req, resp) == -1)
		return;
	if (strspn(arg, "0123456789") == strlen(arg))
		tid = strtonum(arg, 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		api_error(resp, 404, "not_found", "no token %s", arg);
		return;
	}
	if (store_begin(s) == -1)
		goto fail;
	found = store_auth_token_revoke(s, tid, arg, time(NULL),
	    auth_token_revoked, &r);
	if (found != 1) {
		store_rollback(s);
		if (found == -1)
			goto fail;
		api_error(resp, 404, "not_found", "no live token %s", arg);
		return;
	}
	snprintf(target, sizeof(target), "token/%lld", (long long)r.ar_id);
	if (store_event(s, req->ar_actor, "token.revoke", target,
	    r.ar_name) == -1 || store_commit(s) == -1) {
		store_rollback(s);
		goto fail;
	}
	log_info("token %s revoked by %s", r.ar_name, req->ar_actor);
	webpub_forget(r.ar_hash);
	resp->status = 200;
	resp->body = jsonb_pack("{s:I,s:s,s:b}", "id", (json_int_t)r.ar_id,
	    "name", r.ar_name, "revoked", 1);
	return;
fail:
	api_error(resp, 500, "runtime_error", "the store refused the "
	    "change: %s", store_error(api_auth_store()));
}

/* Alike on purpose: a route table, one row per route. */
const struct api_route auth_routes[] = {
	{ "POST", "/api/v1/login",	0, auth_api_login, ACL_ROUTE_PUBLIC,
	    API_NS_NONE },
	{ "GET",  "/api/v1/session",	0, auth_api_session, ACL_ROUTE_PUBLIC,
	    API_NS_NONE },
	{ "POST", "/api/v1/logout",	0, auth_api_logout,
	    ACL_ROUTE_IDENTIFIED, API_NS_NONE },
	{ "GET",  "/api/v1/tokens",	0, auth_api_tokens_list, 0,
	    API_NS_NONE },
	{ "POST", "/api/v1/tokens",	0, auth_api_token_create, 0,
	    API_NS_NONE },
	{ "DELETE", "/api/v1/tokens/*",	0, auth_api_token_revoke, 0,
	    API_NS_NONE },
	{ "POST", "/api/v1/tokens/*/revoke", 0, auth_api_token_revoke, 0,
	    API_NS_NONE },
};
const size_t auth_nroutes = sizeof(auth_routes) / sizeof(auth_routes[0]);
