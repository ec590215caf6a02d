/*
 * Who a client is, from the identities the master pushes (shared/nops.h,
 * "Pushed reads"): its access classes, and each live session and API
 * token known only by the SHA-256 of its secret.  web_identify() takes
 * the master's steps (master/api_auth.c, auth_identify) in the same
 * order, with the same messages, so that a read answered here refuses
 * exactly what the master would have refused.
 *
 * A table is replaced whole (BEGIN .. COMMIT, on start and reload) and
 * changed in place between (a login, a logout, a revoked token).  While
 * a new one is being pushed, the old one is not trusted for new reads:
 * those go to the master (web_auth_ready()).
 *
 * The master keeps when each session and token was last used; it used
 * to write that at most once a minute per credential, so the use of one
 * here is reported back (IMSG_WEB_SEEN) at the same rate, and a session
 * found expired is reported with the time 0 (the master deletes it, as
 * it did when it found one).  The same message carries the count of
 * answers given here, by status, for the master's HTTP metrics.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "authc.h"
#include "wire_auth.h"
#include "wire.h"
#include "web.h"

#define WEB_TOUCH_EVERY		60	/* s: the master's AUTH_TOUCH_EVERY */
#define WEB_SEEN_EVERY		5	/* s: between IMSG_WEB_SEEN */
#define WEB_STATUS_MIN		100
#define WEB_STATUS_MAX		599

/* A live session or API token. */
struct web_prin {
	RB_ENTRY(web_prin)	 pr_node;
	char			 pr_hash[WEB_HASH_HEX + 1];
	uint32_t		 pr_kind;	/* WEB_PRIN_* */
	uint32_t		 pr_class;
	char			 pr_name[WEB_PRIN_NAME_MAX + 1];
	int64_t			 pr_seen;	/* last use, here or pushed */
	int64_t			 pr_reported;	/* last use the master knows */
	int64_t			 pr_expires;	/* 0: never */
	json_t			*pr_groups;	/* a session's; a token: NULL */
	/*
	 * A session's CSRF token, made from its id at its first use here
	 * (an HMAC costs ten times the hash that finds the session).
	 */
	char			 pr_csrf[AUTH_SECRET_B64 + 1];
};
RB_HEAD(web_prins, web_prin);

/* An identity table: what one BEGIN .. COMMIT pushes. */
struct web_table {
	uint32_t		 wt_idle;	/* session idle timeout, s */
	char			 wt_boot[WEB_HASH_HEX + 1]; /* "" if none */
	uint32_t		 wt_manage;	/* bootstrap, control socket */
	uint32_t		 wt_anon;	/* 0: no anonymous access */
	json_t			*wt_class[WEB_CLASSES_MAX];
	struct web_prins	 wt_prins;
	size_t			 wt_nprins;
};

/* A use to report. */
struct web_seen {
	uint32_t		 ws_kind;
	char			 ws_hash[WEB_HASH_HEX + 1];
	int64_t			 ws_at;
};

static struct web_table		*web_live;	/* serves */
static struct web_table		*web_next;	/* being pushed */
static int			 web_pushing;	/* the master pushes reads */
static struct web_seen		*web_seen;
static size_t			 web_nseen, web_seensize;
static uint32_t			 web_codes[WEB_STATUS_MAX + 1];
static struct event		*web_seen_ev;

/*
 * Alike on purpose: auth_rl_cmp and its tree (master/auth.c): an RB tree by
 * a string key, each over its own struct; the macros need one cmp each.
 */
int	 web_prin_cmp(struct web_prin *, struct web_prin *);
RB_PROTOTYPE(web_prins, web_prin, pr_node, web_prin_cmp);

int
web_prin_cmp(struct web_prin *a, struct web_prin *b)
{
	return strcmp(a->pr_hash, b->pr_hash);
}
RB_GENERATE(web_prins, web_prin, pr_node, web_prin_cmp);

static struct web_table *
web_table_new(void)
{
	struct web_table	*t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		fatal("calloc");
	RB_INIT(&t->wt_prins);
	return t;
}

static void
web_prin_free(struct web_prin *pr)
{
	json_decref(pr->pr_groups);
	freezero(pr, sizeof(*pr));
}

static void
web_table_free(struct web_table *t)
{
	struct web_prin	*pr, *tmp;
	size_t		 i;

	if (t == NULL)
		return;
	RB_FOREACH_SAFE(pr, web_prins, &t->wt_prins, tmp) {
		RB_REMOVE(web_prins, &t->wt_prins, pr);
		web_prin_free(pr);
	}
	for (i = 0; i < WEB_CLASSES_MAX; i++)
		json_decref(t->wt_class[i]);
	freezero(t, sizeof(*t));
}

static struct web_prin *
web_prin_find(struct web_table *t, const char *hash)
{
	struct web_prin	 key;

	if (t == NULL)
		return NULL;
	strlcpy(key.pr_hash, hash, sizeof(key.pr_hash));
	return RB_FIND(web_prins, &t->wt_prins, &key);
}

static void
web_prin_remove(struct web_table *t, struct web_prin *pr)
{
	RB_REMOVE(web_prins, &t->wt_prins, pr);
	t->wt_nprins--;
	web_prin_free(pr);
}

/* Where CLASS and PRINCIPAL go: the table being pushed, else the live one. */
static struct web_table *
web_target_table(uint32_t type)
{
	if (web_next != NULL)
		return web_next;
	if (web_live == NULL)
		fatalx("%s before any identity table", imsg_to_str(type));
	return web_live;
}

void
web_auth_begin(struct imsg *imsg, const union imsg_payload *u)
{
	const struct wire_auth_begin	*b = &u->auth_begin;

	if (web_next != NULL)
		fatalx("%s before the last one's COMMIT",
		    imsg_to_str(imsg->hdr.type));
	web_next = web_table_new();
	web_next->wt_idle = b->idle;
	strlcpy(web_next->wt_boot, b->boot, sizeof(web_next->wt_boot));
	web_next->wt_manage = b->manage;
	web_next->wt_anon = b->anon;
	web_pushing = 1;
}

/* {"management": bool, "capabilities": [str], "namespaces": {ns: [str]}} */
static int
web_caps_valid(json_t *a)
{
	json_t	*v;
	size_t	 i;

	if (!json_is_array(a))
		return 0;
	json_array_foreach(a, i, v)
		if (!json_is_string(v))
			return 0;
	return 1;
}

static int
web_class_valid(json_t *j)
{
	json_t		*v;
	const char	*k;

	if (!json_is_object(j) ||
	    !json_is_boolean(json_object_get(j, "management")) ||
	    !web_caps_valid(json_object_get(j, "capabilities")) ||
	    !json_is_object(json_object_get(j, "namespaces")))
		return 0;
	json_object_foreach(json_object_get(j, "namespaces"), k, v)
		if (!web_caps_valid(v))
			return 0;
	return 1;
}

void
web_auth_class(struct imsg *imsg, const union imsg_payload *u)
{
	const struct wire_auth_class	*c = &u->auth_class;
	struct web_table		*t = web_target_table(imsg->hdr.type);
	json_t				*j;

	j = json_loadb(c->json, c->jsonlen, JSON_REJECT_DUPLICATES, NULL);
	if (j == NULL || !web_class_valid(j))
		fatalx("malformed %s", imsg_to_str(imsg->hdr.type));
	json_decref(t->wt_class[c->cls]);
	t->wt_class[c->cls] = j;
}

static int
web_groups_valid(json_t *j)
{
	return web_caps_valid(j);	/* an array of strings too */
}

void
web_auth_principal(struct imsg *imsg, const union imsg_payload *u)
{
	const struct wire_auth_principal	*p = &u->auth_principal;
	struct web_table			*t;
	struct web_prin				*pr, *old;
	json_t					*groups = NULL, *js;
	int					 bad;

	t = web_target_table(imsg->hdr.type);
	bad = t->wt_class[p->cls] == NULL;
	/* A session has its groups, maybe []; a token has none. */
	if (!bad && p->groupslen > 0) {
		groups = json_loadb(p->groups, p->groupslen,
		    JSON_REJECT_DUPLICATES, NULL);
		bad = groups == NULL || !web_groups_valid(groups);
	}
	/* Names go into JSON answers: text only. */
	if (!bad) {
		if ((js = json_string(p->name)) == NULL)
			bad = 1;
		json_decref(js);
	}
	if (bad) {
		json_decref(groups);
		fatalx("malformed %s", imsg_to_str(imsg->hdr.type));
	}
	if (p->kind == WEB_PRIN_TOKEN) {
		json_decref(groups);	/* a token has no groups */
		groups = NULL;
	}

	if ((pr = calloc(1, sizeof(*pr))) == NULL)
		fatal("calloc");
	strlcpy(pr->pr_hash, p->hash, sizeof(pr->pr_hash));
	pr->pr_kind = p->kind;
	pr->pr_class = p->cls;
	strlcpy(pr->pr_name, p->name, sizeof(pr->pr_name));
	pr->pr_seen = pr->pr_reported = p->seen;
	pr->pr_expires = p->expires;
	pr->pr_groups = groups;
	/*
	 * The master's last seen wins over a later use seen here: it is
	 * what the master itself would check (its record lags a use by up
	 * to WEB_TOUCH_EVERY too), and a time moved back there must hold.
	 */
	if ((old = RB_FIND(web_prins, &t->wt_prins, pr)) != NULL)
		web_prin_remove(t, old);
	/*
	 * Memory is bounded: past the cap a new identity is not kept (its
	 * client gets 401 until some leave), and the master is not trusted
	 * to count for us.
	 */
	if (t->wt_nprins >= WEB_PRINCIPALS_MAX) {
		static time_t	 warned;

		if (time(NULL) - warned >= 60) {
			log_warnx("more than %d sessions and tokens: the "
			    "newest are not served", WEB_PRINCIPALS_MAX);
			warned = time(NULL);
		}
		web_prin_free(pr);
		return;
	}
	RB_INSERT(web_prins, &t->wt_prins, pr);
	t->wt_nprins++;
}

void
web_auth_forget(struct imsg *imsg, const union imsg_payload *u)
{
	struct web_prin			*pr;
	const struct wire_auth_forget	*f = &u->auth_forget;
	const char			*hash;

	hash = f->hash;
	if (web_live == NULL && web_next == NULL)
		fatalx("%s before any identity table",
		    imsg_to_str(imsg->hdr.type));
	/* Already gone here (expired, seen here first) is no error. */
	if ((pr = web_prin_find(web_live, hash)) != NULL)
		web_prin_remove(web_live, pr);
	if ((pr = web_prin_find(web_next, hash)) != NULL)
		web_prin_remove(web_next, pr);
}

void
web_auth_commit(struct imsg *imsg, const union imsg_payload *u)
{
	if (web_next == NULL)
		fatalx("%s without BEGIN", imsg_to_str(imsg->hdr.type));
	/* The classes a client may get without a principal must be known. */
	if (web_next->wt_class[WEB_CLASS_NONE] == NULL ||
	    web_next->wt_class[web_next->wt_manage] == NULL ||
	    web_next->wt_class[web_next->wt_anon] == NULL)
		fatalx("%s: class 0, %u or %u was not pushed",
		    imsg_to_str(imsg->hdr.type), web_next->wt_manage,
		    web_next->wt_anon);
	web_table_free(web_live);
	web_live = web_next;
	web_next = NULL;
	log_debug("identity table: %zu sessions and tokens",
	    web_live->wt_nprins);
	/* Documents were for the old classes; the master forgot them. */
	web_docs_reset();
}


int
web_auth_ready(void)
{
	return web_live != NULL && web_next == NULL;
}

/* Uses and counts. */

/* A use of (kind, hash) at; at 0: a session found expired. */
static void
web_seen_add(uint32_t kind, const char *hash, int64_t at)
{
	size_t	 n;

	if (web_nseen == web_seensize) {
		n = web_seensize == 0 ? 64 : web_seensize * 2;
		/* cppcheck-suppress memleakOnRealloc ; fatal() exits */
		if ((web_seen = reallocarray(web_seen, n,
		    sizeof(*web_seen))) == NULL)
			fatal("reallocarray");
		web_seensize = n;
	}
	web_seen[web_nseen].ws_kind = kind;
	strlcpy(web_seen[web_nseen].ws_hash, hash,
	    sizeof(web_seen[web_nseen].ws_hash));
	web_seen[web_nseen].ws_at = at;
	web_nseen++;
}

static void
web_touch(struct web_prin *pr, int64_t now)
{
	pr->pr_seen = now;
	if (now - pr->pr_reported >= WEB_TOUCH_EVERY) {
		web_seen_add(pr->pr_kind, pr->pr_hash, now);
		pr->pr_reported = now;
	}
}

void
web_count(int status)
{
	if (status >= WEB_STATUS_MIN && status <= WEB_STATUS_MAX &&
	    web_codes[status] < UINT32_MAX)
		web_codes[status]++;
}

/* Everything queued, in as many IMSG_WEB_SEEN as the limits need. */
static void
web_seen_flush(void)
{
	static struct wire_web_seen	 ws;
	struct msgw			 m;
	size_t				 i, n, off = 0;
	int				 code = WEB_STATUS_MIN;

	/* A master that does not push reads does not expect this. */
	if (!web_pushing)
		return;
	for (;;) {
		while (code <= WEB_STATUS_MAX && web_codes[code] == 0)
			code++;
		if (off == web_nseen && code > WEB_STATUS_MAX)
			break;
		n = web_nseen - off;
		if (n > WEB_SEEN_MAX)
			n = WEB_SEEN_MAX;
		for (i = 0; i < n; i++) {
			ws.seen[i].kind = web_seen[off + i].ws_kind;
			ws.seen[i].hash = web_seen[off + i].ws_hash;
			ws.seen[i].at = web_seen[off + i].ws_at;
		}
		ws.nseen = (uint32_t)n;
		off += n;
		for (ws.ncodes = 0; code <= WEB_STATUS_MAX &&
		    ws.ncodes < WEB_CODES_MAX; code++) {
			if (web_codes[code] == 0)
				continue;
			ws.codes[ws.ncodes].status = (uint32_t)code;
			ws.codes[ws.ncodes++].count = web_codes[code];
			web_codes[code] = 0;
		}
		msg_init(&m);
		wire_put_web_seen(&m, &ws);
		web_master_send(&m, IMSG_WEB_SEEN);
	}
	web_nseen = 0;
	if (web_seensize > 1024) {
		/* A burst is over: give its memory back. */
		free(web_seen);
		web_seen = NULL;
		web_seensize = 0;
	}
}

static void
web_seen_timer(evutil_socket_t fd, short event, void *arg)
{
	web_seen_flush();
}

void
web_auth_init(void)
{
	web_seen_ev = web_every(WEB_SEEN_EVERY, web_seen_timer);
}

/* Identity. */

/* A header as the master would get it: longer ones are not forwarded. */
static const char *
web_auth_header(struct web_rq *rq, const char *name)
{
	const char	*v;

	if ((v = web_input_header(rq, name)) == NULL ||
	    strlen(v) > WEB_HEADER_MAX)
		return NULL;
	return v;
}

static void
web_ident_set(struct web_ident *id, enum web_kind kind, uint32_t cls,
    const char *actor)
{
	id->wi_kind = kind;
	id->wi_class = cls;
	strlcpy(id->wi_actor, actor, sizeof(id->wi_actor));
}

static int
web_ident_bad(struct web_ident *id, const char *why)
{
	web_ident_set(id, WEB_ID_NONE, WEB_CLASS_NONE, "anonymous");
	id->wi_why = why;
	return -1;
}

static int
web_identify_token(struct web_ident *id, const char *tok, int64_t now)
{
	struct web_prin	*pr;
	char		 hash[AUTH_SHA256_HEX + 1];
	char		 actor[sizeof("token:") + WEB_PRIN_NAME_MAX];

	auth_sha256_hex(tok, strlen(tok), hash);
	if (web_live->wt_boot[0] != '\0' &&
	    auth_equal(hash, web_live->wt_boot)) {
		web_ident_set(id, WEB_ID_BOOTSTRAP, web_live->wt_manage,
		    "token:bootstrap");
		return 0;
	}
	if (!auth_token_wellformed(tok) ||
	    (pr = web_prin_find(web_live, hash)) == NULL ||
	    pr->pr_kind != WEB_PRIN_TOKEN)
		return web_ident_bad(id, "invalid, expired or revoked token");
	if (pr->pr_expires != 0 && pr->pr_expires <= now)
		return web_ident_bad(id, "the token has expired");
	web_touch(pr, now);
	snprintf(actor, sizeof(actor), "token:%s", pr->pr_name);
	web_ident_set(id, WEB_ID_TOKEN, pr->pr_class, actor);
	return 0;
}

static int
web_identify_session(struct web_ident *id, const char *sid, int64_t now)
{
	struct web_prin	*pr;
	char		 hash[AUTH_SHA256_HEX + 1];

	id->wi_clear = 1;	/* unless it is good */
	if (!auth_session_wellformed(sid))
		return web_ident_bad(id, "no such session; log in again");
	auth_sha256_hex(sid, strlen(sid), hash);
	if ((pr = web_prin_find(web_live, hash)) == NULL ||
	    pr->pr_kind != WEB_PRIN_SESSION)
		return web_ident_bad(id, "no such session; log in again");
	if ((pr->pr_expires != 0 && pr->pr_expires <= now) ||
	    pr->pr_seen + web_live->wt_idle <= now) {
		/*
		 * The master deleted it when it saw it so: it is told (at
		 * 0), and we forget it too.
		 */
		web_seen_add(WEB_PRIN_SESSION, pr->pr_hash, 0);
		web_prin_remove(web_live, pr);
		return web_ident_bad(id, "the session has expired; log in "
		    "again");
	}
	web_touch(pr, now);
	id->wi_clear = 0;
	web_ident_set(id, WEB_ID_USER, pr->pr_class, pr->pr_name);
	id->wi_groups = json_incref(pr->pr_groups);
	if (pr->pr_csrf[0] == '\0')
		auth_csrf_token(sid, pr->pr_csrf);
	strlcpy(id->wi_csrf, pr->pr_csrf, sizeof(id->wi_csrf));
	return 0;
}

int
web_identify(struct web_rq *rq, struct web_ident *id)
{
	const struct web_client	*cl = &rq->wr_client;
	const char		*h, *tok;
	char			 actor[WEB_ACTOR_MAX];
	char			 sid[AUTH_SECRET_B64 + 2];
	int64_t			 now = time(NULL);
	int			 rc;

	memset(id, 0, sizeof(*id));
	if (web_live == NULL)
		fatalx("no identity table");
	if (cl->wc_peer == WEB_PEER_LOCAL) {
		/* Reaching the socket at all took root or the group. */
		if (cl->wc_uid == 0)
			strlcpy(actor, "root", sizeof(actor));
		else
			snprintf(actor, sizeof(actor), "uid:%u", cl->wc_uid);
		web_ident_set(id, WEB_ID_LOCAL, web_live->wt_manage, actor);
		return 0;
	}
	if ((h = web_auth_header(rq, "Authorization")) != NULL) {
		if ((tok = auth_bearer(h)) == NULL)
			return web_ident_bad(id, "Authorization must be "
			    "\"Bearer <token>\"");
		return web_identify_token(id, tok, now);
	}
	if ((h = web_auth_header(rq, "Cookie")) != NULL &&
	    auth_cookie_get(h, AUTH_SESSION_COOKIE, sid, sizeof(sid))) {
		rc = web_identify_session(id, sid, now);
		explicit_bzero(sid, sizeof(sid));
		return rc;
	}
	if (web_live->wt_anon != WEB_CLASS_NONE)
		web_ident_set(id, WEB_ID_ANONYMOUS, web_live->wt_anon,
		    "anonymous");
	else
		web_ident_set(id, WEB_ID_NONE, WEB_CLASS_NONE, "anonymous");
	return 0;
}

void
web_ident_clear(struct web_ident *id)
{
	json_decref(id->wi_groups);
	explicit_bzero(id, sizeof(*id));
}

const char *
web_clear_cookie(const struct web_rq *rq)
{
	return rq->wr_client.wc_tls ?
	    AUTH_SESSION_COOKIE "=; Path=/; Max-Age=0; HttpOnly; "
	    "SameSite=Strict; Secure" :
	    AUTH_SESSION_COOKIE "=; Path=/; Max-Age=0; HttpOnly; "
	    "SameSite=Strict";
}

static const char *
web_kind_str(enum web_kind kind)
{
	switch (kind) {
	case WEB_ID_LOCAL:
		return "local";
	case WEB_ID_USER:
		return "user";
	case WEB_ID_TOKEN:
		return "token";
	case WEB_ID_BOOTSTRAP:
		return "bootstrap";
	case WEB_ID_ANONYMOUS:
		return "anonymous";
	case WEB_ID_NONE:
		break;
	}
	return "none";
}

/* As the master's api_session (master/auth_login.c), field by field. */
json_t *
web_session_obj(const struct web_ident *id)
{
	json_t	*o, *cls;

	if (web_live == NULL || (cls = web_live->wt_class[id->wi_class]) ==
	    NULL)
		fatalx("class %u unknown", id->wi_class);
	o = json_object();
	json_object_set_new(o, "authenticated", json_boolean(
	    id->wi_kind != WEB_ID_NONE && id->wi_kind != WEB_ID_ANONYMOUS));
	json_object_set_new(o, "kind", json_string(web_kind_str(id->wi_kind)));
	json_object_set_new(o, "actor", json_string(id->wi_actor));
	json_object_set(o, "management", json_object_get(cls, "management"));
	json_object_set(o, "capabilities", json_object_get(cls,
	    "capabilities"));
	json_object_set_new(o, "user", id->wi_kind == WEB_ID_USER ?
	    json_string(id->wi_actor) : json_null());
	json_object_set_new(o, "groups", id->wi_kind == WEB_ID_USER &&
	    id->wi_groups != NULL ? json_incref(id->wi_groups) :
	    json_array());
	if (id->wi_kind == WEB_ID_USER)
		json_object_set_new(o, "csrf_token", json_string(id->wi_csrf));
	else
		json_object_set_new(o, "csrf_token", json_null());
	json_object_set(o, "namespaces", json_object_get(cls, "namespaces"));
	return o;
}
