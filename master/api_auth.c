/*
 * Who is asking, and may they: the identity of each API request and the
 * ACL check before its handler runs.  The routes of authentication
 * (login, logout, the session probe, API tokens) are in auth_login.c.
 *
 * Identities, in the order they are looked for: the control socket's
 * peer (a local admin: management), "Authorization: Bearer" (the
 * bootstrap token of the config, or an API token), the nops_session
 * cookie (a login session), and last the config's anonymous policy.  A
 * credential that is presented but bad is refused (401), never ignored.
 *
 * Secrets are kept hashed (SHA-256) in the store: session ids and API
 * tokens are 256 random bits, so a fast hash is enough.
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_auth.h"
#include "api.h"
#include "acl.h"
#include "auth.h"
#include "webpub.h"
#include "action.h"

/* Refresh last_seen / last_used at most this often: fewer writes. */
#define AUTH_TOUCH_EVERY	60

static struct {
	struct auth_users	*users;
	char			 boot_hash[AUTH_SHA256_HEX + 1];
	int			 has_boot;
} auth_env;

/* The request being answered: identity and session, if any. */
static struct {
	const struct api_req	*req;
	struct acl_ident	 id;
	char			 sid[AUTH_SECRET_B64 + 1];
	char			 sid_hash[AUTH_SHA256_HEX + 1];
	int			 clear_cookie;	/* a dead session cookie came */
	int			 pushed;	/* a read rendered for a
						   class */
} auth_cur;

struct store *
api_auth_store(void)
{
	return nopsd_env != NULL ? nopsd_env->n_store : NULL;
}

const struct nops_conf *
api_auth_conf(void)
{
	return nopsd_env->n_conf;
}

const char *
api_auth_bootstrap_hash(void)
{
	return auth_env.has_boot ? auth_env.boot_hash : NULL;
}

const struct auth_users *
api_auth_users(void)
{
	return auth_env.users;
}

/* Configuration. */

int
api_auth_configure(const struct nops_conf *conf, int check)
{
	struct auth_users	*users = NULL;
	char			 err[512], tok[AUTH_BOOTSTRAP_MAX + 1];
	char			 hash[AUTH_SHA256_HEX + 1];
	int			 has_boot = 0, rv = 0;

	/* A route or action without its row never runs: refuse to start. */
	if (api_auth_tables_check() == -1)
		fatalx("the route or action table has a row without its "
		    "capability or namespace rule");
	if (conf->users_file != NULL) {
		if ((users = auth_users_load(conf->users_file, err,
		    sizeof(err))) == NULL)
			rv = -1;	/* each error is logged */
	} else if ((users = calloc(1, sizeof(*users))) == NULL)
		fatal("calloc");
	if (conf->bootstrap_token_file != NULL) {
		if (auth_secret_file(conf->bootstrap_token_file, tok,
		    sizeof(tok), err, sizeof(err)) == -1) {
			log_warnx("bootstrap token file %s", err);
			rv = -1;
		} else {
			auth_sha256_hex(tok, strlen(tok), hash);
			explicit_bzero(tok, sizeof(tok));
			has_boot = 1;
		}
	}
	if (rv == -1 || check) {
		auth_users_free(users);
		explicit_bzero(hash, sizeof(hash));
		return rv;
	}
	auth_users_free(auth_env.users);
	auth_env.users = users;
	memcpy(auth_env.boot_hash, hash, sizeof(hash));
	auth_env.has_boot = has_boot;
	explicit_bzero(hash, sizeof(hash));
	if (conf->users_file != NULL)
		log_info("users file %s: %zu users", conf->users_file,
		    users->au_n);
	return 0;
}

void
api_auth_shutdown(void)
{
	auth_users_free(auth_env.users);
	auth_env.users = NULL;
	explicit_bzero(auth_env.boot_hash, sizeof(auth_env.boot_hash));
	auth_env.has_boot = 0;
	auth_login_shutdown();
}

/* Identity. */

static void
api_auth_ident_set(struct acl_ident *id, enum acl_kind kind, const char *name,
    const char *policy, const char *actor)
{
	memset(id, 0, sizeof(*id));
	id->ai_kind = kind;
	if (name != NULL)
		strlcpy(id->ai_name, name, sizeof(id->ai_name));
	if (policy != NULL)
		strlcpy(id->ai_policy, policy, sizeof(id->ai_policy));
	strlcpy(id->ai_actor, actor, sizeof(id->ai_actor));
}

/* A token's row, as the lookup needs it. */
struct api_auth_token {
	struct acl_ident	*tk_id;
	int64_t			 tk_expires;
	int64_t			 tk_used;
};

static int
api_auth_token_row(const struct store_auth_token *at, void *arg)
{
	struct api_auth_token	*tk = arg;
	char			 actor[ACL_ACTOR_MAX];

	snprintf(actor, sizeof(actor), "token:%s", at->at_name);
	api_auth_ident_set(tk->tk_id, ACL_TOKEN, at->at_name, at->at_policy,
	    actor);
	tk->tk_id->ai_token_id = at->at_id;
	tk->tk_expires = at->at_expires_at;
	tk->tk_used = at->at_last_used;
	return 0;
}

/* 1: a live token (id set), 0: none, -1: a store error. */
static int
api_auth_token_lookup(const char *token, struct acl_ident *id, const char **why)
{
	struct store		*s = api_auth_store();
	struct api_auth_token	 tk = { id, 0, 0 };
	char			 hash[AUTH_SHA256_HEX + 1];
	time_t			 now = time(NULL);
	int			 rc;

	if (s == NULL)
		return -1;
	auth_sha256_hex(token, strlen(token), hash);
	if ((rc = store_auth_token_find(s, hash, api_auth_token_row, &tk)) !=
	    1)
		return rc;
	if (tk.tk_expires != 0 && tk.tk_expires <= now) {
		*why = "the token has expired";
		return 0;
	}
	/* Best effort: last_used is shown, it decides nothing. */
	if (now - tk.tk_used >= AUTH_TOUCH_EVERY)
		(void)store_auth_token_used(s, hash, now);
	return 1;
}

/*
 * Delete a session row; 0, or -1 (the row may still be there).  The
 * webworker forgets the session either way: a lookup refuses an expired
 * row by itself, and a logout that failed says so.
 */
static int
api_auth_session_delete(const char *hash)
{
	webpub_forget(hash);
	if (api_auth_store() == NULL)
		return -1;
	if (store_auth_session_delete(api_auth_store(), hash) == -1) {
		log_warnx("session delete: %s", store_error(api_auth_store()));
		return -1;
	}
	return 0;
}

/* A session's row, as the lookup needs it. */
struct api_auth_session {
	char		 ss_user[NOPS_NAME_MAX + 1];
	int64_t		 ss_seen;
	int64_t		 ss_expires;
};

static int
api_auth_session_row(const struct store_auth_session *sa, void *arg)
{
	struct api_auth_session	*ss = arg;

	strlcpy(ss->ss_user, sa->sa_user, sizeof(ss->ss_user));
	ss->ss_seen = sa->sa_last_seen;
	ss->ss_expires = sa->sa_expires_at;
	return 0;
}

/* 1: a live session (id set), 0: none or dead (*why), -1: error. */
static int
api_auth_session_lookup(const char *sid, struct acl_ident *id, const char **why)
{
	const struct nops_conf	*conf = api_auth_conf();
	struct store		*s = api_auth_store();
	struct api_auth_session	 ss;
	const char		*user = ss.ss_user;
	time_t			 now = time(NULL);
	int64_t			 seen, expires;
	int			 rc;

	if (s == NULL)
		return -1;
	auth_sha256_hex(sid, strlen(sid), auth_cur.sid_hash);
	if ((rc = store_auth_session_find(s, auth_cur.sid_hash,
	    api_auth_session_row, &ss)) != 1) {
		*why = "no such session; log in again";
		return rc;
	}
	seen = ss.ss_seen;
	expires = ss.ss_expires;
	if (expires <= now || seen + conf->session_idle <= now) {
		(void)api_auth_session_delete(auth_cur.sid_hash);
		*why = "the session has expired; log in again";
		return 0;
	}
	/* An account removed from the users file ends its sessions. */
	if (auth_users_hash(auth_env.users, user) == NULL) {
		(void)api_auth_session_delete(auth_cur.sid_hash);
		*why = "the account no longer exists";
		return 0;
	}
	/*
	 * Best effort: a lost touch can only end an idle session early,
	 * never keep one alive.
	 */
	if (now - seen >= AUTH_TOUCH_EVERY)
		(void)store_auth_session_seen(s, auth_cur.sid_hash, now);
	api_auth_ident_set(id, ACL_USER, user, NULL, user);
	strlcpy(auth_cur.sid, sid, sizeof(auth_cur.sid));
	return 1;
}

/*
 * Fill auth_cur.id.  Returns 0 (the identity may be ACL_NONE), or -1
 * with *why when a credential was presented and is not good.
 */
static int
api_auth_identify(struct api_req *req, const char **why)
{
	const struct nops_conf	*conf = api_auth_conf();
	struct acl_ident	*id = &auth_cur.id;
	const char		*h, *tok;
	char			 actor[ACL_ACTOR_MAX],
				 hash[AUTH_SHA256_HEX + 1];
	char			 sid[AUTH_SECRET_B64 + 2];
	int			 rc;

	if (req->ar_peer == WEB_PEER_LOCAL) {
		/* Reaching the socket at all took root or the group. */
		if (req->ar_uid == 0)
			strlcpy(actor, "root", sizeof(actor));
		else
			snprintf(actor, sizeof(actor), "uid:%u", req->ar_uid);
		api_auth_ident_set(id, ACL_LOCAL, NULL, NULL, actor);
		return 0;
	}
	if ((h = api_header(req, "Authorization")) != NULL) {
		if ((tok = auth_bearer(h)) == NULL) {
			*why = "Authorization must be \"Bearer <token>\"";
			return -1;
		}
		if (auth_env.has_boot) {
			auth_sha256_hex(tok, strlen(tok), hash);
			if (auth_equal(hash, auth_env.boot_hash)) {
				api_auth_ident_set(id, ACL_BOOTSTRAP,
				    "bootstrap", CONF_POLICY_MANAGEMENT,
				    "token:bootstrap");
				return 0;
			}
		}
		*why = "invalid, expired or revoked token";
		if (!auth_token_wellformed(tok))
			return -1;
		if ((rc = api_auth_token_lookup(tok, id, why)) == 1)
			return 0;
		if (rc == -1)
			*why = "cannot check the token now";
		api_auth_ident_set(id, ACL_NONE, NULL, NULL, "anonymous");
		return -1;
	}
	if ((h = api_header(req, "Cookie")) != NULL &&
	    auth_cookie_get(h, AUTH_SESSION_COOKIE, sid, sizeof(sid))) {
		*why = "no such session; log in again";
		if (auth_session_wellformed(sid)) {
			if ((rc = api_auth_session_lookup(sid, id, why)) == 1)
				return 0;
			if (rc == -1)
				*why = "cannot check the session now";
		}
		explicit_bzero(sid, sizeof(sid));
		auth_cur.clear_cookie = 1;
		api_auth_ident_set(id, ACL_NONE, NULL, NULL, "anonymous");
		return -1;
	}
	if (conf->anonymous_policy != NULL)
		api_auth_ident_set(id, ACL_ANONYMOUS, NULL,
		    conf->anonymous_policy, "anonymous");
	else
		api_auth_ident_set(id, ACL_NONE, NULL, NULL, "anonymous");
	return 0;
}

void
api_auth_cookie_header(struct api_resp *resp, const struct api_req *req,
    const char *sid, int maxage)
{
	char	 buf[256];

	snprintf(buf, sizeof(buf), "%s=%s; Path=/; Max-Age=%d; HttpOnly; "
	    "SameSite=Strict%s", AUTH_SESSION_COOKIE, sid, maxage,
	    req->ar_tls ? "; Secure" : "");
	api_add_header(resp, "Set-Cookie", buf);
	explicit_bzero(buf, sizeof(buf));
}

/*
 * Every route names its capability and where its namespace is, and every
 * action its capability (master/action.c): a row without them is refused
 * here, at start-up, never allowed.
 */
static void
api_auth_route_check(const struct api_route *r, void *arg)
{
	int	*bad = arg;

	if (r->ns < API_NS_NONE || r->ns > API_NS_PLAN) {
		log_warnx("route %s %s names no namespace rule (API_NS_*)",
		    r->method, r->path);
		*bad = 1;
	}
	if ((r->cap & ACL_ROUTE_ACTION) && (r->ns == API_NS_NONE ||
	    strstr(r->path, "/actions/*") == NULL)) {
		log_warnx("route %s %s takes an action's capability but names "
		    "no action or namespace", r->method, r->path);
		*bad = 1;
	}
}

int
api_auth_tables_check(void)
{
	int	 bad = 0;

	api_route_foreach(api_auth_route_check, &bad);
	if (action_table_check() == -1)
		bad = 1;
	return bad ? -1 : 0;
}

/*
 * What a route needs: capabilities and, if it has one, a namespace.
 * Returns 0, -1 on a store error, or 1 for an action no row names (the
 * request is answered 404: never allowed, never guessed).
 */
static int
api_auth_scope(struct api_req *req, const struct api_route *r, uint32_t *caps,
    char *ns, size_t nslen, int *has_ns)
{
	const struct action_def	*ad;
	const char		*errstr = NULL;
	int64_t			 id;
	int			 arg, is_plan;

	*caps = r->cap;
	*has_ns = 0;
	if (r->cap & ACL_ROUTE_ACTION) {
		if (req->ar_nargs == 0 || (ad = action_find(r->ns ==
		    API_NS_JOB ? ACTION_ON_JOB : r->ns == API_NS_PLAN ?
		    ACTION_ON_HOST : ACTION_ON_DEPLOYMENT,
		    req->ar_args[req->ar_nargs - 1])) == NULL)
			return 1;
		*caps = ad->ad_cap;
	}
	switch (r->ns) {
	case API_NS_JOB:
		strlcpy(ns, req->ar_args[0], nslen);
		*has_ns = 1;
		return 0;
	case API_NS_PLAN:
		/* Plans and their hosts have no namespace: "". */
		strlcpy(ns, "", nslen);
		*has_ns = 1;
		return 0;
	case API_NS_DEPLOYMENT:
		arg = 0;
		break;
	case API_NS_DEPLOYMENT_ARG1:
		arg = 1;
		break;
	default:
		return 0;
	}
	id = strtonum(req->ar_args[arg], 1, INT64_MAX, &errstr);
	if (errstr != NULL || api_auth_store() == NULL)
		return 0;	/* the handler answers 404 */
	switch (store_auth_deployment_scope(api_auth_store(), id, ns, nslen,
	    &is_plan)) {
	case -1:
		return -1;
	case 1:
		*has_ns = 1;
		/* Acting on a deploy plan's hosts needs "hosts" too. */
		if (is_plan && *caps != CAP_READ)
			*caps |= CAP_HOSTS;
		break;
	}
	return 0;
}

static int
api_auth_is_write(const struct api_req *req)
{
	return strcmp(req->ar_method, "GET") != 0 &&
	    strcmp(req->ar_method, "HEAD") != 0;
}

static void
api_auth_caps_str(uint32_t caps, char *buf, size_t len)
{
	uint32_t	 c;

	buf[0] = '\0';
	for (c = 1; c <= CAP_MANAGEMENT; c <<= 1) {
		if (!(caps & c) || config_cap_name(c) == NULL)
			continue;
		if (buf[0] != '\0')
			strlcat(buf, " ", len);
		strlcat(buf, config_cap_name(c), len);
	}
}

static int	 api_auth_check(struct api_req *, const struct api_route *,
		    struct api_resp *, int, const char *);

int
api_auth_request(struct api_req *req, const struct api_route *r,
    struct api_resp *resp)
{
	struct acl_ident	*id = &auth_cur.id;
	const char		*why = NULL;
	int			 bad;

	memset(&auth_cur, 0, sizeof(auth_cur));
	auth_cur.req = req;
	bad = api_auth_identify(req, &why) == -1;
	strlcpy(req->ar_actor, id->ai_actor, sizeof(req->ar_actor));
	req->ar_admin = id->ai_kind == ACL_LOCAL;
	if (auth_cur.clear_cookie)
		api_auth_cookie_header(resp, req, "", 0);
	return api_auth_check(req, r, resp, bad, why);
}

/*
 * A read rendered for an access class (master/webpub.c): the identity is
 * given, nothing is looked up or touched, nothing is logged, and a
 * refusal names no one (every identity of the class shares the answer).
 */
int
api_auth_request_as(struct api_req *req, const struct api_route *r,
    struct api_resp *resp, const struct acl_ident *as)
{
	memset(&auth_cur, 0, sizeof(auth_cur));
	auth_cur.req = req;
	auth_cur.id = *as;
	auth_cur.pushed = 1;
	strlcpy(req->ar_actor, as->ai_kind == ACL_USER ? "this user" :
	    as->ai_kind == ACL_TOKEN ? "this token" : as->ai_actor,
	    sizeof(req->ar_actor));
	req->ar_admin = 0;
	return api_auth_check(req, r, resp, 0, NULL);
}

static int
api_auth_check(struct api_req *req, const struct api_route *r,
    struct api_resp *resp, int bad, const char *why)
{
	const struct nops_conf	*conf = api_auth_conf();
	struct acl_ident	*id = &auth_cur.id;
	const char		*h;
	char			 ns[NOPS_NAME_MAX * 4 + 1],
				 csrf[AUTH_SECRET_B64 + 1];
	char			 need[160];
	uint32_t		 caps;
	size_t			 n;
	int			 has_ns, rc;

	/* Login and the session probe work for anyone. */
	if (r->cap & ACL_ROUTE_PUBLIC)
		return 0;
	if (bad || id->ai_kind == ACL_NONE) {
		api_add_header(resp, "WWW-Authenticate",
		    "Bearer realm=\"nops\"");
		api_error(resp, 401, "unauthorized", "%s", why != NULL ? why :
		    "authentication required: log in, or send "
		    "\"Authorization: Bearer <token>\"");
		if (!auth_cur.pushed)
			log_debug("%s %s from %s: 401 (%s)", req->ar_method,
			    req->ar_path, req->ar_remote, why != NULL ? why :
			    "no credential");
		goto deny;
	}
	/* A session cookie rides along by itself: writes prove intent. */
	if (id->ai_kind == ACL_USER && api_auth_is_write(req)) {
		auth_csrf_token(auth_cur.sid, csrf);
		h = api_header(req, "X-CSRF-Token");
		if (h == NULL || !auth_equal(h, csrf)) {
			explicit_bzero(csrf, sizeof(csrf));
			api_error(resp, 403, "forbidden", "%s", h == NULL ?
			    "a write with a session needs the X-CSRF-Token "
			    "header (GET /api/v1/session gives it)" :
			    "wrong X-CSRF-Token");
			log_info("%s %s by %s from %s: 403 (CSRF token %s)",
			    req->ar_method, req->ar_path, req->ar_actor,
			    req->ar_remote, h == NULL ? "missing" : "wrong");
			goto deny;
		}
		explicit_bzero(csrf, sizeof(csrf));
	}
	if (!(r->cap & ACL_ROUTE_IDENTIFIED)) {
		if ((rc = api_auth_scope(req, r, &caps, ns, sizeof(ns),
		    &has_ns)) == -1) {
			api_error(resp, 500, "runtime_error", "cannot check "
			    "access now");
			goto deny;
		}
		if (rc == 1) {
			action_not_found(resp, r->ns == API_NS_JOB ?
			    ACTION_ON_JOB : ACTION_ON_DEPLOYMENT,
			    req->ar_args[req->ar_nargs - 1]);
			goto deny;
		}
		if (!acl_allowed(conf, id, caps, has_ns ? ns : NULL)) {
			api_auth_caps_str(caps == 0 ? CAP_MANAGEMENT : caps,
			    need, sizeof(need));
			/* Logging in may help the anonymous; nothing else. */
			if (id->ai_kind == ACL_ANONYMOUS) {
				api_add_header(resp, "WWW-Authenticate",
				    "Bearer realm=\"nops\"");
				api_error(resp, 401, "unauthorized",
				    "authentication required (needs %s)",
				    need);
			} else
				api_error(resp, 403, "forbidden", "%s may not "
				    "do this: needs %s%s%s", req->ar_actor,
				    need, has_ns ? " in namespace " : "",
				    has_ns ? ns : "");
			if (!auth_cur.pushed)
				log_info("%s %s by %s from %s: denied "
				    "(needs %s%s%s)", req->ar_method,
				    req->ar_path, req->ar_actor,
				    req->ar_remote, need, has_ns ? " in " : "",
				    has_ns ? ns : "");
			goto deny;
		}
	}
	/* API writes are JSON only: a form post cannot forge one. */
	if (strncmp(req->ar_path, "/api/", 5) == 0 && api_auth_is_write(req) &&
	    (strcmp(req->ar_method, "DELETE") != 0 || req->ar_bodylen > 0)) {
		n = strcspn(req->ar_ctype, ";");
		if (n != strlen("application/json") ||
		    strncasecmp(req->ar_ctype, "application/json", n) != 0) {
			api_error(resp, 415, "bad_request", "writes need "
			    "Content-Type: application/json");
			goto deny;
		}
	}
	return 0;
deny:
	memset(&auth_cur, 0, sizeof(auth_cur));
	return -1;
}

const struct acl_ident *
api_auth_ident(const struct api_req *req)
{
	if (req == NULL || auth_cur.req != req)
		return NULL;
	return &auth_cur.id;
}

int
api_auth_allows(const struct api_req *req, uint32_t caps, const char *ns)
{
	const struct acl_ident	*id;

	/* Outside of its request an identity is nobody's: deny. */
	if ((id = api_auth_ident(req)) == NULL)
		return 0;
	return acl_allowed(api_auth_conf(), id, caps, ns);
}

void
api_auth_request_done(struct api_req *req, struct api_resp *resp)
{
	json_t		*items, *it, *nsv;
	size_t		 i;

	if (auth_cur.req != req)
		return;
	/* Lists show only what the client may read. */
	if (strcmp(req->ar_method, "GET") == 0 && resp->status == 200 &&
	    json_is_object(resp->body) &&
	    (items = json_object_get(resp->body, "items")) != NULL &&
	    json_is_array(items) &&
	    !acl_allowed(api_auth_conf(), &auth_cur.id, CAP_MANAGEMENT, NULL)) {
		for (i = 0; i < json_array_size(items); ) {
			it = json_array_get(items, i);
			nsv = json_object_get(it, "namespace");
			if (json_is_string(nsv) && !acl_allowed(api_auth_conf(),
			    &auth_cur.id, CAP_READ, json_string_value(nsv)))
				json_array_remove(items, i);
			else
				i++;
		}
	}
	explicit_bzero(&auth_cur, sizeof(auth_cur));
}

const char *
api_auth_session_id(const struct api_req *req)
{
	if (api_auth_ident(req) == NULL || auth_cur.id.ai_kind != ACL_USER)
		return NULL;
	return auth_cur.sid;
}

int
api_auth_session_end(const struct api_req *req)
{
	if (api_auth_session_id(req) == NULL)
		return 0;
	return api_auth_session_delete(auth_cur.sid_hash);
}
