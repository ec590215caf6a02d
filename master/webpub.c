/*
 * Pushed reads: the webworker answers reads from state the master
 * pushes, and holds no database (the protocol: shared/nops.h, "Pushed
 * reads").
 *
 * Identities.  Every identity falls in an access class: the same kind
 * and the same policies, hence the same answer to every read.  The
 * webworker gets each live session and API token by the SHA-256 of its
 * secret, with its class; it identifies a client itself and asks for the
 * documents of the client's class.  The ACL stays decided here: a
 * document is this master's whole answer for the class, a 403 included,
 * rendered by the same route handlers and the same checks as a request
 * (api_render), as the class's first identity.
 *
 * Documents.  The webworker says which (class, target) it holds (WANT,
 * UNWANT); each is rendered at once and again after every change
 * (a commit to the store, a detection cycle, a fetch, a worker restart),
 * at once when the last flush is WEBPUB_SOON_MS old (or four times as
 * long as it took, when rendering is slow), else when it is, before
 * the answer to any write, and when there was none for WEBPUB_TICK
 * seconds (checked every second); only an answer whose bytes changed is
 * pushed.  A commit that only adds to the audit log (a login's session
 * and event: webpub_audit_only()) renders nothing: the audit log's
 * documents are marked stale (IMSG_WEB_STALE), the webworker drops them
 * and asks for them again (WANT) on their next read, and they are
 * rendered then, once however many logins came between.  A burst of
 * logins costs no rendering, and the next read still sees every login
 * answered before it (the mark goes out before the login's answer).  A
 * top-level "generated_at" is the time the answer last changed, and
 * does not count as a change by itself.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "wire.h"
#include "hex.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_auth.h"
#include "api.h"
#include "acl.h"
#include "auth.h"
#include "metrics.h"
#include "webpub.h"
#include "wire_auth.h"

#define WEBPUB_SOON_MS		5	/* between two flushes, at least */
#define WEBPUB_TICK		2	/* s without a flush: flush */
#define WEBPUB_SUBS_MAX		(2 * WEB_DOCS_MAX)	/* with races */

/* An access class: an identity renders its reads. */
struct webpub_class {
	char			*wc_key;	/* kind and policies */
	struct acl_ident	 wc_rep;
};

/* A document the webworker holds. */
struct webpub_sub {
	RB_ENTRY(webpub_sub)	 ws_node;
	uint32_t		 ws_class;
	char			*ws_target;
	char			 ws_hash[AUTH_SHA256_HEX + 1];
	time_t			 ws_generated;
	int			 ws_audit;	/* the audit log's */
	int			 ws_stale;	/* dropped until wanted again */
};
RB_HEAD(webpub_subs, webpub_sub);
int	 webpub_sub_cmp(struct webpub_sub *, struct webpub_sub *);
RB_PROTOTYPE(webpub_subs, webpub_sub, ws_node, webpub_sub_cmp);

int
webpub_sub_cmp(struct webpub_sub *a, struct webpub_sub *b)
{
	return web_doc_key_cmp(a->ws_class, a->ws_target, b->ws_class,
	    b->ws_target);
}
RB_GENERATE(webpub_subs, webpub_sub, ws_node, webpub_sub_cmp);

static struct {
	struct webpub_class	*classes;	/* by id */
	size_t			 nclasses;
	struct webpub_subs	 subs;
	size_t			 nsubs;
	struct event		*soon;
	struct event		*tick;
	int			 soon_pending;
	int			 due_all;	/* a change anything may show */
	int			 due_audit;	/* one only the audit
						   log shows */
	int			 audit_only;	/* webpub_audit_only() */
	long			 soon_ms;	/* between two flushes */
	long			 render_ms;	/* the last flush took */
	long long		 soon_due_us;	/* when soon fires, monotonic */
	time_t			 flushed;	/* monotonic s,
						   last whole flush */
	struct timespec		 flushed_at;	/* its end, monotonic */
	uint64_t		 renders;	/* for /metrics */
	uint64_t		 pushes;
	uint64_t		 stales;
	uint64_t		 resets;
} wp = {
	.subs = RB_INITIALIZER(&wp.subs),
	.soon_ms = WEBPUB_SOON_MS,
};

static void	 webpub_flush_cb(int, short, void *);
static void	 webpub_tick_cb(int, short, void *);

static struct worker *
webpub_web(void)
{
	struct worker	*w = &workers[PROC_WEBWORKER];

	return w->w_pid != 0 && w->w_running ? w : NULL;
}

static void
webpub_send(struct msgw *m, uint32_t type)
{
	struct worker	*w;

	if ((w = webpub_web()) == NULL) {
		msg_free(m);
		return;
	}
	if (imsgev_send(&w->w_iev, m, type, 0, -1) == -1)
		log_warn("%s to %s", imsg_to_str(type), w->w_title);
}

void
webpub_init(void)
{
	struct timeval	 tv = { 1, 0 };

	store_committed = webpub_changed;
	if ((wp.soon = evtimer_new(nopsd_env->n_base, webpub_flush_cb,
	    NULL)) == NULL || (wp.tick = event_new(nopsd_env->n_base, -1,
	    EV_PERSIST, webpub_tick_cb, NULL)) == NULL)
		fatalx("event_new");
	evtimer_add(wp.tick, &tv);
}

static void
webpub_subs_clear(void)
{
	struct webpub_sub	*ws, *next;

	RB_FOREACH_SAFE(ws, webpub_subs, &wp.subs, next) {
		RB_REMOVE(webpub_subs, &wp.subs, ws);
		free(ws->ws_target);
		free(ws);
	}
	wp.nsubs = 0;
}

static void
webpub_classes_clear(void)
{
	size_t	 i;

	for (i = 0; i < wp.nclasses; i++)
		free(wp.classes[i].wc_key);
	free(wp.classes);
	wp.classes = NULL;
	wp.nclasses = 0;
}

void
webpub_shutdown(void)
{
	store_committed = NULL;
	webpub_subs_clear();
	webpub_classes_clear();
	if (wp.soon != NULL)
		event_free(wp.soon);
	if (wp.tick != NULL)
		event_free(wp.tick);
	wp.soon = wp.tick = NULL;
}

/* Classes. */

static void
webpub_class_send(uint32_t id)
{
	struct msgw		 m;
	struct wire_auth_class	 c;
	json_t			*view;
	char			*s;

	view = auth_class_view(&wp.classes[id].wc_rep);
	if ((s = json_dumps(view, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	json_decref(view);
	c.cls = id;
	c.json = s;
	c.jsonlen = strlen(s);
	msg_init(&m);
	wire_put_auth_class(&m, &c);
	webpub_send(&m, IMSG_WEB_AUTH_CLASS);
	free(s);
}

/* The class of key (new ones are told to the webworker), or -1: full. */
static int64_t
webpub_class(const char *key, const struct acl_ident *rep)
{
	struct webpub_class	*c;
	size_t			 i;

	for (i = 0; i < wp.nclasses; i++)
		if (strcmp(wp.classes[i].wc_key, key) == 0)
			return (int64_t)i;
	if (wp.nclasses >= WEB_CLASSES_MAX) {
		log_warnx("more than %d access classes: the newest are "
		    "served by the master only", WEB_CLASSES_MAX);
		return -1;
	}
	if ((c = reallocarray(wp.classes, wp.nclasses + 1,
	    sizeof(*c))) == NULL)
		fatal("reallocarray");
	wp.classes = c;
	c = &wp.classes[wp.nclasses];
	if ((c->wc_key = strdup(key)) == NULL)
		fatal("strdup");
	c->wc_rep = *rep;
	wp.nclasses++;
	webpub_class_send((uint32_t)(wp.nclasses - 1));
	return (int64_t)(wp.nclasses - 1);
}

struct webpub_policies {
	const char	**p;
	size_t		  n;
};

static void
webpub_policy_add(const char *policy, void *arg)
{
	struct webpub_policies	*ps = arg;
	const char		**p;

	if ((p = reallocarray(ps->p, ps->n + 1, sizeof(*p))) == NULL)
		fatal("reallocarray");
	ps->p = p;
	ps->p[ps->n++] = policy;
}

static int
webpub_strcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "U:p1,p2": a user's kind and the policies bound to it, sorted. */
static void
webpub_user_key(const char *user, char *key, size_t len)
{
	struct webpub_policies	 ps = { NULL, 0 };
	size_t			 i;

	acl_user_policies(nopsd_env->n_conf, user, webpub_policy_add, &ps);
	if (ps.n > 0)
		qsort(ps.p, ps.n, sizeof(*ps.p), webpub_strcmp);
	strlcpy(key, "U:", len);
	for (i = 0; i < ps.n; i++) {
		if (i > 0 && strcmp(ps.p[i], ps.p[i - 1]) == 0)
			continue;
		if (i > 0)
			strlcat(key, ",", len);
		if (strlcat(key, ps.p[i], len) >= len) {
			/* Too many to name: this user is a class alone. */
			snprintf(key, len, "u:%s", user);
			break;
		}
	}
	free((void *)ps.p);
}

static int64_t
webpub_user_class(const char *user)
{
	struct acl_ident	 rep;
	char			 key[4096];

	webpub_user_key(user, key, sizeof(key));
	memset(&rep, 0, sizeof(rep));
	rep.ai_kind = ACL_USER;
	strlcpy(rep.ai_name, user, sizeof(rep.ai_name));
	strlcpy(rep.ai_actor, user, sizeof(rep.ai_actor));
	return webpub_class(key, &rep);
}

static int64_t
webpub_token_class(const char *name, const char *policy)
{
	struct acl_ident	 rep;
	char			 key[NOPS_NAME_MAX + 8];

	snprintf(key, sizeof(key), "T:%s", policy);
	memset(&rep, 0, sizeof(rep));
	rep.ai_kind = ACL_TOKEN;
	strlcpy(rep.ai_name, name, sizeof(rep.ai_name));
	strlcpy(rep.ai_policy, policy, sizeof(rep.ai_policy));
	snprintf(rep.ai_actor, sizeof(rep.ai_actor), "token:%s", name);
	return webpub_class(key, &rep);
}

/* Principals. */

static void
webpub_principal(uint32_t kind, const char *hash, const char *name,
    int64_t cls, time_t seen, time_t expires, json_t *groups)
{
	struct msgw			 m;
	struct wire_auth_principal	 p;
	char				*g = NULL;

	if (cls < 0)
		return;		/* past the classes: the webworker says 401 */
	if (groups != NULL && (g = json_dumps(groups, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	p.kind = kind;
	p.hash = hash;
	p.name = name;
	p.cls = (uint32_t)cls;
	p.seen = seen;
	p.expires = expires;
	p.groups = g;
	p.groupslen = g != NULL ? strlen(g) : 0;
	msg_init(&m);
	wire_put_auth_principal(&m, &p);
	webpub_send(&m, IMSG_WEB_AUTH_PRINCIPAL);
	free(g);
}

void
webpub_session_add(const char *hash, const char *user, time_t seen,
    time_t expires)
{
	json_t	*groups;

	if (webpub_web() == NULL)
		return;
	groups = auth_groups_json(user);
	webpub_principal(WEB_PRIN_SESSION, hash, user, webpub_user_class(user),
	    seen, expires, groups);
	json_decref(groups);
}

void
webpub_token_add(const char *hash, const char *name, const char *policy,
    time_t used, time_t expires)
{
	if (webpub_web() == NULL)
		return;
	webpub_principal(WEB_PRIN_TOKEN, hash, name,
	    webpub_token_class(name, policy), used, expires, NULL);
}

void
webpub_forget(const char *hash)
{
	struct msgw		 m;
	struct wire_auth_forget	 f = { hash };

	msg_init(&m);
	wire_put_auth_forget(&m, &f);
	webpub_send(&m, IMSG_WEB_AUTH_FORGET);
}

static int
webpub_session_row(const struct store_auth_session *sa, void *arg)
{
	/* An account gone from the users file has no sessions. */
	if (sa->sa_user != NULL &&
	    auth_users_hash(api_auth_users(), sa->sa_user) != NULL)
		webpub_session_add(sa->sa_hash, sa->sa_user, sa->sa_last_seen,
		    sa->sa_expires_at);
	return 0;
}

static void
webpub_sessions_send(struct store *s, time_t now)
{
	/*
	 * Expired ones too: the webworker says "expired" rather than "no
	 * such session", and reports them for deletion.
	 */
	(void)store_auth_sessions_walk(s, now - 7 * 24 * 3600,
	    webpub_session_row, NULL);
}

static int
webpub_token_row(const struct store_auth_token *at, void *arg)
{
	webpub_token_add(at->at_hash, at->at_name, at->at_policy,
	    at->at_last_used, at->at_expires_at);
	return 0;
}

static void
webpub_tokens_send(struct store *s, time_t now)
{
	(void)store_auth_tokens_live(s, now, webpub_token_row, NULL);
}

void
webpub_reset(void)
{
	const struct nops_conf	*conf = nopsd_env->n_conf;
	struct acl_ident	 rep;
	struct msgw		 m;
	struct wire_auth_begin	 b;
	const char		*boot;
	char			 key[NOPS_NAME_MAX + 8];
	int64_t			 anon = 0;
	time_t			 now = time(NULL);

	webpub_subs_clear();
	webpub_classes_clear();
	if (webpub_web() == NULL)
		return;
	wp.resets++;
	boot = api_auth_bootstrap_hash();
	b.idle = (uint32_t)conf->session_idle;
	b.boot = boot != NULL ? boot : "";
	b.manage = 1;				/* the management class */
	b.anon = conf->anonymous_policy != NULL ? 2 : 0;
	msg_init(&m);
	wire_put_auth_begin(&m, &b);
	webpub_send(&m, IMSG_WEB_AUTH_BEGIN);

	/* 0: nobody (public reads), 1: management, 2: anonymous. */
	memset(&rep, 0, sizeof(rep));
	rep.ai_kind = ACL_NONE;
	strlcpy(rep.ai_actor, "anonymous", sizeof(rep.ai_actor));
	(void)webpub_class("N", &rep);
	memset(&rep, 0, sizeof(rep));
	rep.ai_kind = ACL_BOOTSTRAP;
	strlcpy(rep.ai_name, "bootstrap", sizeof(rep.ai_name));
	strlcpy(rep.ai_policy, CONF_POLICY_MANAGEMENT, sizeof(rep.ai_policy));
	strlcpy(rep.ai_actor, "token:bootstrap", sizeof(rep.ai_actor));
	(void)webpub_class("M", &rep);
	if (conf->anonymous_policy != NULL) {
		memset(&rep, 0, sizeof(rep));
		rep.ai_kind = ACL_ANONYMOUS;
		strlcpy(rep.ai_policy, conf->anonymous_policy,
		    sizeof(rep.ai_policy));
		strlcpy(rep.ai_actor, "anonymous", sizeof(rep.ai_actor));
		snprintf(key, sizeof(key), "A:%s", conf->anonymous_policy);
		anon = webpub_class(key, &rep);
	}
	if (anon != (conf->anonymous_policy != NULL ? 2 : 0))
		fatalx("class numbering");
	if (nopsd_env->n_store != NULL) {
		webpub_sessions_send(nopsd_env->n_store, now);
		webpub_tokens_send(nopsd_env->n_store, now);
	}
	msg_init(&m);
	webpub_send(&m, IMSG_WEB_AUTH_COMMIT);
}

/* Documents. */

static void
webpub_hash(int status, const char *ctype, json_t *headers, const char *text,
    size_t len, char out[AUTH_SHA256_HEX + 1])
{
	EVP_MD_CTX	*ctx;
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	char		 head[160], *hs = NULL;

	snprintf(head, sizeof(head), "%d\n%s\n", status, ctype);
	if (headers != NULL && (hs = json_dumps(headers, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, head, strlen(head)) != 1 ||
	    EVP_DigestUpdate(ctx, hs != NULL ? hs : "", hs != NULL ?
	    strlen(hs) + 1 : 1) != 1 ||
	    EVP_DigestUpdate(ctx, text, len) != 1 ||
	    EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)
		fatalx("sha256");
	EVP_MD_CTX_free(ctx);
	free(hs);
	hex_encode(md, mdlen, out);
}

/*
 * Render sub and push it if its answer changed (or always, with force).
 * The hash covers status, type, headers and body without "generated_at".
 */
static void
webpub_render(struct webpub_sub *ws, int force)
{
	struct api_resp		 resp;
	struct wire_web_doc	 doc;
	struct msgw		 m;
	char			*text, hash[AUTH_SHA256_HEX + 1];
	const char		*ctype;
	size_t			 len;
	int			 gen;

	wp.renders++;
	api_render(ws->ws_target, &wp.classes[ws->ws_class].wc_rep, &resp);
	ctype = resp.ctype != NULL ? resp.ctype : "application/json";
	gen = resp.raw == NULL && json_is_object(resp.body) &&
	    json_object_del(resp.body, "generated_at") == 0;
	text = api_resp_text(&resp, &len);
	webpub_hash(resp.status, ctype, resp.headers, text, len, hash);
	if (!force && strcmp(hash, ws->ws_hash) == 0)
		goto out;
	if (strcmp(hash, ws->ws_hash) != 0 || ws->ws_generated == 0)
		ws->ws_generated = time(NULL);
	strlcpy(ws->ws_hash, hash, sizeof(ws->ws_hash));
	if (gen) {
		free(text);
		json_object_set_new(resp.body, "generated_at",
		    api_time_json(ws->ws_generated));
		text = api_resp_text(&resp, &len);
	}
	doc.cls = ws->ws_class;
	doc.target = ws->ws_target;
	if (len + strlen(ws->ws_target) + 4096 > WEBWORKER_MSG_MAX) {
		log_warnx("%s: answer of %zu bytes is too large to push",
		    ws->ws_target, len);
		api_answer_too_large(&doc.answer);
	} else
		api_answer(&resp, text, len, &doc.answer);
	msg_init(&m);
	wire_put_web_doc(&m, &doc);
	webpub_send(&m, IMSG_WEB_DOC);
	wp.pushes++;
out:
	free(text);
	api_resp_free(&resp);
}

/*
 * The audit log changed: the webworker drops ws and asks for it again
 * when it is read (webpub_subscribe renders it then).  A stale document
 * is not rendered by a flush.
 */
static void
webpub_stale(struct webpub_sub *ws)
{
	struct wire_web_want	 w;
	struct msgw		 m;

	if (ws->ws_stale)
		return;
	ws->ws_stale = 1;
	ws->ws_hash[0] = '\0';
	w.cls = ws->ws_class;
	w.target = ws->ws_target;
	msg_init(&m);
	wire_put_web_want(&m, &w);
	webpub_send(&m, IMSG_WEB_STALE);
	wp.stales++;
}

/*
 * Push what may have changed: when only the audit log did, mark its
 * documents stale; else render every document not stale (also when
 * nothing was announced: before the answer to a write, whatever it
 * changed).
 */
void
webpub_flush(void)
{
	struct webpub_sub	*ws;
	struct timespec		 t0, t1;
	long			 ms;
	int			 all = wp.due_all || !wp.due_audit;

	if (wp.soon_pending) {
		evtimer_del(wp.soon);
		wp.soon_pending = 0;
	}
	wp.due_all = wp.due_audit = 0;
	if (webpub_web() == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!all) {
		RB_FOREACH(ws, webpub_subs, &wp.subs)
			if (ws->ws_audit)
				webpub_stale(ws);
		return;
	}
	RB_FOREACH(ws, webpub_subs, &wp.subs)
		if (!ws->ws_stale)
			webpub_render(ws, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	wp.flushed_at = t1;
	wp.flushed = t1.tv_sec;
	/*
	 * Rendering costs the master its loop: the next flush after a
	 * change waits four times as long as this one took, so that pushes
	 * take at most a fifth of the master however busy the engine is.
	 */
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	    (t1.tv_nsec - t0.tv_nsec) / 1000000;
	wp.render_ms = ms;
	wp.soon_ms = ms * 4 < WEBPUB_SOON_MS ? WEBPUB_SOON_MS :
	    ms * 4 > WEBPUB_TICK * 1000 ? WEBPUB_TICK * 1000 : ms * 4;
}

static void
webpub_flush_cb(int fd, short event, void *arg)
{
	wp.soon_pending = 0;
	webpub_flush();
}

/* The safety net: what changed unannounced; skipped right after a flush. */
static void
webpub_tick_cb(int fd, short event, void *arg)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - wp.flushed >= WEBPUB_TICK) {
		wp.due_all = 1;
		webpub_flush();
	}
}

/* Flush once the last flush is spacing_ms old (now if it is). */
static void
webpub_arm(long spacing_ms)
{
	struct timeval	 tv;
	struct timespec	 now;
	long long	 now_us, wait_us;

	clock_gettime(CLOCK_MONOTONIC, &now);
	now_us = (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
	wait_us = (long long)wp.flushed_at.tv_sec * 1000000 +
	    wp.flushed_at.tv_nsec / 1000 + (long long)spacing_ms * 1000 -
	    now_us;
	if (wait_us < 0)
		wait_us = 0;
	if (wp.soon_pending && wp.soon_due_us <= now_us + wait_us)
		return;
	tv.tv_sec = wait_us / 1000000;
	tv.tv_usec = wait_us % 1000000;
	evtimer_add(wp.soon, &tv);
	wp.soon_pending = 1;
	wp.soon_due_us = now_us + wait_us;
}

/*
 * Something changed: flush on the next turn of the loop (what else this
 * turn changes goes with it), unless the last flush is more recent than
 * soon_ms; then when it is that old.  A change after a quiet spell (a
 * webhook's deployment) is pushed at once, and a busy engine still
 * spends at most a fifth of its time rendering.
 */
void
webpub_changed(void)
{
	if (wp.audit_only)
		wp.due_audit = 1;
	else
		wp.due_all = 1;
	if (wp.soon == NULL || wp.soon_pending || wp.nsubs == 0)
		return;
	webpub_arm(wp.soon_ms);
}

/*
 * Between webpub_audit_only(1) and (0), what is committed adds to the
 * audit log and to nothing else a document shows (a login's session and
 * its event): the next flush renders only the audit log's documents.
 */
void
webpub_audit_only(int on)
{
	wp.audit_only = on;
}

/*
 * An outcome readers wait for (the end of a detection cycle): pushed
 * once the last flush is as old as it took, not four times as old.  A
 * cycle waits on Nomad between two of these, and rendering still takes
 * at most half of the master.
 */
void
webpub_changed_now(void)
{
	wp.due_all = 1;
	if (wp.soon == NULL || wp.nsubs == 0)
		return;
	webpub_arm(wp.render_ms);
}

static void
webpub_subscribe(struct worker *w, struct imsg *imsg,
    const struct wire_web_want *want_msg, int want)
{
	struct webpub_sub	 key, *ws;
	const char		*target;
	char			 path[WEB_PATH_MAX + 1];
	uint32_t		 cls;

	cls = want_msg->cls;
	target = want_msg->target;
	strlcpy(path, target, sizeof(path));
	path[strcspn(path, "?")] = '\0';
	if (web_doc_route(path) == WEB_DOC_NO) {
		supervise_violation(w, "malformed %s (not a pushed read)",
		    imsg_to_str(imsg->hdr.type));
		return;
	}
	/* A class of the table before a reset: the webworker drops it. */
	if (cls >= wp.nclasses)
		return;
	strlcpy(path, target, sizeof(path));
	key.ws_class = cls;
	key.ws_target = path;
	ws = RB_FIND(webpub_subs, &wp.subs, &key);
	if (!want) {
		if (ws != NULL) {
			RB_REMOVE(webpub_subs, &wp.subs, ws);
			wp.nsubs--;
			free(ws->ws_target);
			free(ws);
		}
		return;
	}
	/*
	 * A change waiting to be pushed goes first: else this new read would
	 * show it before the ones held, and a client could see it come and
	 * go.
	 */
	if (wp.soon_pending)
		webpub_flush();
	if (ws == NULL) {
		if (wp.nsubs >= WEBPUB_SUBS_MAX) {
			supervise_violation(w, "more than %d documents wanted",
			    WEBPUB_SUBS_MAX);
			return;
		}
		if ((ws = calloc(1, sizeof(*ws))) == NULL ||
		    (ws->ws_target = strdup(target)) == NULL)
			fatal("calloc");
		ws->ws_class = cls;
		path[strcspn(path, "?")] = '\0';
		ws->ws_audit = strcmp(path, "/api/v1/events") == 0;
		RB_INSERT(webpub_subs, &wp.subs, ws);
		wp.nsubs++;
	}
	ws->ws_stale = 0;
	webpub_render(ws, 1);
}

/* The webworker found a session expired: delete it if it is. */
static void
webpub_expired(struct store *s, const char *hash, time_t now)
{
	/* Best effort: an expired row is refused when read all the same. */
	if (s != NULL)
		(void)store_auth_session_delete_ended(s, hash, now,
		    now - nopsd_env->n_conf->session_idle);
}

void
webpub_seen(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	const struct wire_web_seen	*ws = &u->web_seen;
	struct store			*s = nopsd_env->n_store;
	const char			*hash;
	uint32_t			 i;
	int64_t				 at;
	time_t				 now = time(NULL);

	for (i = 0; i < ws->nseen; i++) {
		hash = ws->seen[i].hash;
		if ((at = ws->seen[i].at) == 0) {
			webpub_expired(s, hash, now);
			continue;
		}
		if (at > now)
			at = now;
		if (s == NULL)
			continue;
		/* Best effort, as in api_auth.c: a lost touch ends early. */
		if (ws->seen[i].kind == WEB_PRIN_SESSION)
			(void)store_auth_session_seen(s, hash, at);
		else
			(void)store_auth_token_used(s, hash, at);
	}
	for (i = 0; i < ws->ncodes; i++)
		metrics_http_add((int)ws->codes[i].status, ws->codes[i].count);
}

void
webpub_metrics(struct metrics_out *mo)
{
	/* Alike on purpose: one row per metric. */
	const struct metrics_one	 one[] = {
		{ "nops_web_documents", "gauge",
		    "Read documents the webworker holds and the master keeps "
		    "current.", (int64_t)wp.nsubs },
		{ "nops_web_access_classes", "gauge",
		    "Access classes of the identities the webworker knows.",
		    (int64_t)wp.nclasses },
		{ "nops_web_document_renders_total", "counter",
		    "Read documents the master rendered to see if they "
		    "changed.", (int64_t)wp.renders },
		{ "nops_web_document_pushes_total", "counter",
		    "Read documents the master pushed to the webworker.",
		    (int64_t)wp.pushes },
		{ "nops_web_document_stale_total", "counter",
		    "Read documents the master marked stale (the audit log "
		    "after a login or logout), rendered when next read.",
		    (int64_t)wp.stales },
		{ "nops_web_identity_resets_total", "counter",
		    "Whole identity tables sent to the webworker (its start, "
		    "reloads).", (int64_t)wp.resets },
	};

	metrics_ones(mo, one, sizeof(one) / sizeof(one[0]));
}

void
webpub_want(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	webpub_subscribe(w, imsg, &u->web_want, 1);
}

void
webpub_unwant(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	webpub_subscribe(w, imsg, &u->web_want, 0);
}
