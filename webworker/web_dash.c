/*
 * The dashboard: which requests are its pages and forms, the calls to
 * the master each one makes on the client's behalf (with the client's
 * own cookie or token, so the master's ACL decides), and what it answers.
 *
 * Pages are GETs rendered from the JSON API; forms are urlencoded POSTs
 * turned into the JSON API's writes.  Every form carries a CSRF token:
 * the session's (GET /api/v1/session), checked here and again by the
 * master from the X-CSRF-Token header; the login form, which has no
 * session yet, a double-submit cookie of ours.
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "hex.h"
#include "web.h"

#define WEB_HTML		"text/html; charset=utf-8"
#define WEB_FORM_TYPE		"application/x-www-form-urlencoded"
#define WEB_LOGIN_COOKIE	"nops_csrf"
#define WEB_SESSION_COOKIE	"nops_session"

enum web_what {
	WEB_OVERVIEW = 1,
	WEB_JOBS,
	WEB_JOB,
	WEB_DEPLOYMENTS,
	WEB_DEPLOYMENT,
	WEB_ACTIVITY,
	WEB_HOSTS,
	WEB_HOST,		/* one host of a plan, with its actions */
	WEB_LEFT_BEHIND,	/* a deployment's objects left behind */
	WEB_ACT_LEFT_BEHIND,	/* retry them, or forget one */
	WEB_ACT_DEPLOYMENT,	/* approve, reject, retry, promote, ack. */
	WEB_ACT_JOB,		/* pause, resume, deploy-now */
	WEB_ACT_HOST,		/* a host's operation <host>.<operation> */
	WEB_ACT_EACH,		/* EachHost: a plan's operation on its hosts */
	WEB_LOGIN,
	WEB_LOGOUT,
	/* A test hook's: a form no case below knows (web_dash_request). */
	WEB_TEST_UNKNOWN = 999,
};

static const char *const web_deploy_actions[] = {
	"approve", "reject", "retry", "promote", "acknowledge", NULL
};
static const char *const web_job_actions[] = {
	"pause", "resume", "deploy-now", NULL
};

/*
 * The pages web_page_get() draws, a row each: the view's title, the tab it
 * lights, its refresh in seconds, whether its splices are rendered for
 * reuse (web_pages.c), whether it shows the notice after an action.
 */
static const struct web_page_view {
	const char	*pv_title;
	const char	*pv_nav;
	int		 pv_refresh;
	int		 pv_splices;
	int		 pv_notice;
} web_page_views[] = {
	[WEB_OVERVIEW] =	{ "Overview",	 "overview",	 5, 1, 0 },
	[WEB_JOBS] =		{ "Jobs",	 "jobs",	10, 1, 0 },
	[WEB_JOB] =		{ "Job",	 "jobs",	 5, 1, 1 },
	[WEB_DEPLOYMENTS] =	{ "Deployments", "deployments",	10, 1, 0 },
	[WEB_DEPLOYMENT] =	{ "Deployment",	 "deployments",	 3, 1, 1 },
	[WEB_ACTIVITY] =	{ "Activity",	 "activity",	10, 1, 0 },
	[WEB_HOSTS] =		{ "Hosts",	 "hosts",	 5, 1, 0 },
	[WEB_HOST] =		{ "Host",	 "hosts",	10, 0, 1 },
	[WEB_LEFT_BEHIND] =	{ "Left behind", "deployments",	10, 0, 1 },
};

/* The pages web_page_get() draws: a GET of one of these, and only that. */
static int
web_dash_page(int what)
{
	return what > 0 && (size_t)what < sizeof(web_page_views) /
	    sizeof(web_page_views[0]) && web_page_views[what].pv_title != NULL;
}

/* The first path segments that are the dashboard's; the rest is the API. */
static const char *const web_dash_tops[] = {
	"", "jobs", "deployments", "activity", "hosts", "login", "logout",
	"static", NULL
};

/* An action id of the generic procedure: a name, or <job>.<operation>. */
static int
web_action_id_ok(const char *s)
{
	size_t	 n = strlen(s);

	return n > 0 && n <= 128 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int
web_in(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

static int
web_is_local(const struct web_page *pg)
{
	return pg->wg_rq.wr_client.wc_peer == WEB_PEER_LOCAL;
}

static void
web_view_init(struct web_view *v, struct web_page *pg, const char *title,
    const char *nav)
{
	struct web_call	*s = &pg->wg_calls[0];

	memset(v, 0, sizeof(*v));
	v->wv_title = title;
	v->wv_nav = nav;
	v->wv_local = web_is_local(pg);
	/* Call 0 of every page is the session; without it, no user shown. */
	if (pg->wg_ncalls > 0 && s->wk_status == 200 && json_is_object(
	    s->wk_json))
		v->wv_session = s->wk_json;
}

/* The message of an error answer {"error": {"message": ...}}, or a word. */
static const char *
web_call_message(struct web_call *wk)
{
	const char	*m;

	m = json_string_value(json_object_get(json_object_get(wk->wk_json,
	    "error"), "message"));
	if (m != NULL)
		return m;
	if (wk->wk_status == 0)
		return "no answer";
	return "the request failed";
}

static void
web_page_reply(struct web_page *pg, int status, struct growbuf *b)
{
	web_reply_wbuf(&pg->wg_rq, status, WEB_HTML, b);
	growbuf_free(b);
	web_page_free(pg);
}

static void
web_page_error(struct web_page *pg, int status, const char *message)
{
	struct web_view	 v;
	struct growbuf	 b;

	web_view_init(&v, pg, status == 404 ? "Not found" : status == 403 ?
	    "Forbidden" : "Error", NULL);
	growbuf_init(&b);
	html_error_page(&b, &v, status, message);
	web_page_reply(pg, status, &b);
}

/* Send the client to the address built in b (freed), and end the page. */
static void
web_page_goto(struct web_page *pg, struct growbuf *b)
{
	if (b->gb_err)
		web_page_error(pg, 500, "out of memory");
	else {
		web_redirect(&pg->wg_rq, b->gb_buf);
		web_page_free(pg);
	}
	growbuf_free(b);
}

/*
 * A client that must log in first: to the login page, and back after.
 * Where its session cookie named an ended session, the master's answers
 * end the cookie; the redirect passes that on (once).
 */
static void
web_page_login(struct web_page *pg)
{
	struct growbuf	 b;
	const char	*back = pg->wg_rq.wr_target;
	const char	*cookie = NULL;
	size_t		 i, j;

	if (web_is_local(pg)) {
		/* The control socket is root's: nothing to log in to. */
		web_page_error(pg, 401, "authentication required");
		return;
	}
	for (i = 0; i < pg->wg_ncalls; i++)
		for (j = 0; j < pg->wg_calls[i].wk_ncookies; j++)
			if (cookie == NULL ||
			    strcmp(cookie,
			    pg->wg_calls[i].wk_cookies[j]) != 0) {
				cookie = pg->wg_calls[i].wk_cookies[j];
				web_add_header(&pg->wg_rq, "Set-Cookie",
				    cookie);
			}
	if (strcmp(pg->wg_rq.wr_method, "POST") == 0)
		back = pg->wg_back;
	growbuf_init(&b);
	growbuf_puts(&b, "/login");
	if (web_local_path(back) && strcmp(back, "/") != 0) {
		growbuf_puts(&b, "?next=");
		wbuf_urlenc(&b, back);
	}
	web_page_goto(pg, &b);
}

/* What a failed call to the master means for the page. */
static void
web_page_failed(struct web_page *pg, struct web_call *wk)
{
	switch (wk->wk_status) {
	case 401:
		web_page_login(pg);
		return;
	case 400:
	case 403:
	case 404:
	case 409:
	case 413:
	case 415:
	case 422:
		web_page_error(pg, wk->wk_status, web_call_message(wk));
		return;
	case 429:
	case 503:
		/* Busy, or a read that must be asked again: say when. */
		if (wk->wk_retry != NULL)
			web_add_header(&pg->wg_rq, "Retry-After", wk->wk_retry);
		web_page_error(pg, wk->wk_status, web_call_message(wk));
		return;
	default:
		web_page_error(pg, 502, web_call_message(wk));
		return;
	}
}

/* "?limit=..." plus the query fields of the page the client gave. */
static void
web_query_add(struct growbuf *b, const struct web_form *q, const char *name)
{
	const char	*v = web_form_get(q, name);

	if (v == NULL || *v == '\0')
		return;
	growbuf_puts(b, "&");
	growbuf_puts(b, name);
	growbuf_puts(b, "=");
	wbuf_urlenc(b, v);
}

static int
web_page_call(struct web_page *pg, const char *method, struct growbuf *uri)
{
	int	 rc = -1;

	if (!uri->gb_err)
		rc = web_call(pg, method, uri->gb_buf, "", NULL, NULL, 0);
	growbuf_free(uri);
	return rc;
}

static void
web_render(struct web_page *pg)
{
	struct web_call		*mc = &pg->wg_calls[1];
	const struct web_page_view *pv;
	struct web_view		 v;
	struct growbuf		 b;
	struct web_splices	 sp, *spp = NULL;

	if (mc->wk_status != 200 || !json_is_object(mc->wk_json)) {
		if (mc->wk_status == 200)
			mc->wk_status = 502;
		web_page_failed(pg, mc);
		return;
	}
	switch (web_pages_reuse(pg, &sp)) {
	case 1:
		return;		/* answered */
	case 0:
		spp = &sp;	/* render it for reuse */
		break;
	}
	if (!web_dash_page(pg->wg_what))
		fatalx("page %d", pg->wg_what);
	pv = &web_page_views[pg->wg_what];
	web_view_init(&v, pg, pv->pv_title, pv->pv_nav);
	if (pv->pv_splices)
		v.wv_splices = spp;
	v.wv_refresh = pv->pv_refresh;
	if (pv->pv_notice)
		v.wv_notice = html_done_text(web_form_get(&pg->wg_query,
		    "done"));
	growbuf_init(&b);
	switch (pg->wg_what) {
	case WEB_OVERVIEW:
		html_overview(&b, &v, mc->wk_json);
		break;
	case WEB_JOBS:
		html_jobs(&b, &v, mc->wk_json);
		break;
	case WEB_JOB:
		html_job(&b, &v, mc->wk_json,
		    pg->wg_calls[2].wk_status == 200 ?
		    pg->wg_calls[2].wk_json : NULL);
		break;
	case WEB_DEPLOYMENTS:
		html_deployments(&b, &v, mc->wk_json, &pg->wg_query);
		break;
	case WEB_DEPLOYMENT:
		html_deployment(&b, &v, mc->wk_json,
		    pg->wg_calls[2].wk_status == 200 &&
		    json_is_object(pg->wg_calls[2].wk_json) ?
		    pg->wg_calls[2].wk_json : NULL);
		break;
	case WEB_HOSTS:
		html_hosts(&b, &v, mc->wk_json,
		    pg->wg_calls[2].wk_status == 200 ?
		    pg->wg_calls[2].wk_json : NULL);
		break;
	case WEB_HOST:
		html_host(&b, &v, mc->wk_json);
		break;
	case WEB_LEFT_BEHIND:
		html_left_behind(&b, &v, mc->wk_json, pg->wg_segs[1]);
		break;
	case WEB_ACTIVITY:
		html_activity(&b, &v, mc->wk_json,
		    web_form_get(&pg->wg_query, "target"));
		break;
	default:
		fatalx("page %d", pg->wg_what);
	}
	if (spp != NULL && !sp.sp_full && !b.gb_err) {
		web_pages_keep(pg, &b, &sp);
		return;
	}
	web_page_reply(pg, 200, &b);
}

/* A GET of a page: the session, then what the page shows. */
static void
web_page_get(struct web_page *pg)
{
	struct growbuf	 uri;
	const char	*q;
	const char	*errstr = NULL;

	q = web_target_query(pg->wg_rq.wr_target);
	if (web_form_parse(&pg->wg_query, q, strlen(q), &errstr) == -1) {
		web_page_error(pg, 400, errstr);
		return;
	}
	if (web_call(pg, "GET", "/api/v1/session", "", NULL, NULL, 0) == -1)
		goto busy;
	growbuf_init(&uri);
	switch (pg->wg_what) {
	case WEB_OVERVIEW:
		growbuf_puts(&uri, "/api/v1/overview");
		break;
	case WEB_JOBS:
		wbuf_htmlf(&uri, "/api/v1/jobs?limit=%d", WEB_PAGE_SIZE);
		web_query_add(&uri, &pg->wg_query, "cursor");
		break;
	case WEB_JOB:
	case WEB_DEPLOYMENT:
		if (pg->wg_what == WEB_JOB) {
			growbuf_puts(&uri, "/api/v1/jobs/");
			wbuf_urlenc(&uri, pg->wg_segs[1]);
			growbuf_puts(&uri, "/");
			wbuf_urlenc(&uri, pg->wg_segs[2]);
		} else {
			growbuf_puts(&uri, "/api/v1/deployments/");
			wbuf_urlenc(&uri, pg->wg_segs[1]);
		}
		if (web_page_call(pg, "GET", &uri) == -1)
			goto busy;
		if (pg->wg_what == WEB_DEPLOYMENT) {
			/* A plan's host steps (404 for a job's). */
			growbuf_init(&uri);
			growbuf_puts(&uri, "/api/v1/deployments/");
			wbuf_urlenc(&uri, pg->wg_segs[1]);
			growbuf_puts(&uri, "/steps");
			if (web_page_call(pg, "GET", &uri) == -1)
				goto busy;
		}
		if (pg->wg_what == WEB_JOB) {
			growbuf_init(&uri);
			growbuf_puts(&uri, "/api/v1/deployments?limit=10"
			    "&namespace=");
			wbuf_urlenc(&uri, pg->wg_segs[1]);
			growbuf_puts(&uri, "&job=");
			wbuf_urlenc(&uri, pg->wg_segs[2]);
			if (web_page_call(pg, "GET", &uri) == -1)
				goto busy;
		}
		web_page_then(pg, web_render);
		return;
	case WEB_DEPLOYMENTS:
		wbuf_htmlf(&uri, "/api/v1/deployments?limit=%d",
		    WEB_PAGE_SIZE);
		web_query_add(&uri, &pg->wg_query, "cursor");
		web_query_add(&uri, &pg->wg_query, "state");
		web_query_add(&uri, &pg->wg_query, "namespace");
		web_query_add(&uri, &pg->wg_query, "job");
		break;
	case WEB_HOSTS:
		growbuf_puts(&uri, "/api/v1/hosts");
		if (web_page_call(pg, "GET", &uri) == -1)
			goto busy;
		growbuf_init(&uri);
		growbuf_puts(&uri, "/api/v1/plans");
		if (web_page_call(pg, "GET", &uri) == -1)
			goto busy;
		web_page_then(pg, web_render);
		return;
	case WEB_HOST:
		growbuf_puts(&uri, "/api/v1/hosts/");
		wbuf_urlenc(&uri, pg->wg_segs[1]);
		growbuf_puts(&uri, "/");
		wbuf_urlenc(&uri, pg->wg_segs[2]);
		break;
	case WEB_LEFT_BEHIND:
		growbuf_puts(&uri, "/api/v1/deployments/left-behind/");
		wbuf_urlenc(&uri, pg->wg_segs[1]);
		break;
	case WEB_ACTIVITY:
		wbuf_htmlf(&uri, "/api/v1/events?limit=%d", WEB_PAGE_SIZE);
		web_query_add(&uri, &pg->wg_query, "cursor");
		web_query_add(&uri, &pg->wg_query, "target");
		break;
	}
	if (web_page_call(pg, "GET", &uri) == -1)
		goto busy;
	web_page_then(pg, web_render);
	return;
busy:
	web_page_error(pg, 429, "too many requests in flight; try again");
}

/* A fresh token for the login form, in the form and in a cookie. */
static void
web_login_form(struct web_page *pg, int status, const char *message)
{
	struct growbuf	 b, c;
	unsigned char	 rnd[WEB_TOKEN_HEXLEN / 2];
	char		 tok[WEB_TOKEN_HEXLEN + 1];
	const char	*next;

	arc4random_buf(rnd, sizeof(rnd));
	hex_encode(rnd, sizeof(rnd), tok);
	explicit_bzero(rnd, sizeof(rnd));
	growbuf_init(&c);
	wbuf_htmlf(&c, "%s=%s; Path=/login; HttpOnly; SameSite=Strict%s",
	    WEB_LOGIN_COOKIE, tok, pg->wg_rq.wr_client.wc_tls ?
	    "; Secure" : "");
	if (!c.gb_err)
		web_add_header(&pg->wg_rq, "Set-Cookie", c.gb_buf);
	growbuf_free(&c);
	next = web_form_get(&pg->wg_form, "next");
	if (next == NULL)
		next = web_form_get(&pg->wg_query, "next");
	if (!web_local_path(next))
		next = NULL;
	growbuf_init(&b);
	html_login_page(&b, tok, next, message);
	web_page_reply(pg, status, &b);
}

/*
 * Alike on purpose: web_page_failed's cases answer such statuses with an
 * error page; a failed login shows its form again, with the message.
 */
static void
web_login_done(struct web_page *pg)
{
	struct web_call	*wk = &pg->wg_calls[0];
	const char	*next;
	size_t		 i;

	switch (wk->wk_status) {
	case 200:
		for (i = 0; i < wk->wk_ncookies; i++)
			web_add_header(&pg->wg_rq, "Set-Cookie",
			    wk->wk_cookies[i]);
		next = web_form_get(&pg->wg_form, "next");
		web_redirect(&pg->wg_rq, web_local_path(next) ? next : "/");
		web_page_free(pg);
		return;
	case 401:
		web_login_form(pg, 401, "Wrong user name or password.");
		return;
	case 400:
	case 429:
		if (wk->wk_retry != NULL)
			web_add_header(&pg->wg_rq, "Retry-After", wk->wk_retry);
		web_login_form(pg, wk->wk_status, web_call_message(wk));
		return;
	default:
		web_page_failed(pg, wk);
	}
}

/*
 * POST j to path as JSON; j's reference is taken, and its text, which may
 * hold a password, wiped after.  web_call()'s -1: too many in flight.
 */
static int
web_call_json(struct web_page *pg, const char *path, const char *csrf,
    json_t *j)
{
	char	*body;
	int	 rc;

	body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (body == NULL)
		fatalx("json_dumps");
	rc = web_call(pg, "POST", path, "application/json", csrf, body,
	    strlen(body));
	freezero(body, strlen(body));
	return rc;
}

static void
web_login_post(struct web_page *pg)
{
	const char	*user, *pass, *csrf, *cookie;
	char		 have[WEB_COOKIE_VALUE_MAX];
	json_t		*j;
	int		 rc;

	csrf = web_form_get(&pg->wg_form, "csrf");
	cookie = web_input_header(&pg->wg_rq, "Cookie");
	rc = cookie != NULL ? web_cookie_get(cookie, WEB_LOGIN_COOKIE, have,
	    sizeof(have)) : 0;
	/* Double submit: the form's token must be the cookie's. */
	if (rc != 1 || csrf == NULL || !web_token_valid(have) ||
	    !web_token_eq(have, csrf)) {
		web_login_form(pg, 403, "The form expired or did not come "
		    "from this page; try again.");
		return;
	}
	user = web_form_get(&pg->wg_form, "username");
	pass = web_form_get(&pg->wg_form, "password");
	if (user == NULL || pass == NULL || *user == '\0') {
		web_login_form(pg, 400, "Give a user name and a password.");
		return;
	}
	if ((j = json_pack("{s:s,s:s}", "username", user, "password",
	    pass)) == NULL) {
		web_login_form(pg, 400, "The user name or password is not "
		    "valid text.");
		return;
	}
	if (web_call_json(pg, "/api/v1/login", NULL, j) == -1) {
		web_page_error(pg, 429, "too many requests in flight");
		return;
	}
	web_page_then(pg, web_login_done);
}

/* After an action: back to the page, which says it is done. */
static void
web_action_done(struct web_page *pg)
{
	struct web_call	*wk = &pg->wg_calls[1];
	struct growbuf	 b;
	size_t		 i;

	if (pg->wg_what == WEB_LOGOUT) {
		for (i = 0; i < wk->wk_ncookies; i++)
			web_add_header(&pg->wg_rq, "Set-Cookie",
			    wk->wk_cookies[i]);
		if (wk->wk_ncookies == 0)
			web_add_header(&pg->wg_rq, "Set-Cookie",
			    WEB_SESSION_COOKIE "=; Path=/; Max-Age=0; "
			    "HttpOnly; SameSite=Strict");
		web_redirect(&pg->wg_rq, "/login");
		web_page_free(pg);
		return;
	}
	if (wk->wk_status < 200 || wk->wk_status > 299) {
		web_page_failed(pg, wk);
		return;
	}
	/* EachHost's answer: each host's result, now. */
	if (pg->wg_what == WEB_ACT_EACH && json_is_object(wk->wk_json) &&
	    json_is_array(json_object_get(wk->wk_json, "hosts"))) {
		struct web_view	 v;

		web_view_init(&v, pg, "Operation", "hosts");
		growbuf_init(&b);
		html_each_result(&b, &v, wk->wk_json);
		web_add_header(&pg->wg_rq, "Cache-Control", "no-store");
		web_page_reply(pg, 200, &b);
		return;
	}
	/* An operation's run: its result now (a sensitive one only now). */
	if ((pg->wg_what == WEB_ACT_JOB || pg->wg_what == WEB_ACT_HOST) &&
	    json_is_object(wk->wk_json) &&
	    json_is_string(json_object_get(wk->wk_json, "state")) &&
	    json_object_get(wk->wk_json, "exit_code") != NULL) {
		struct web_view	 v;

		web_view_init(&v, pg, "Operation", pg->wg_what == WEB_ACT_HOST ?
		    "hosts" : "jobs");
		growbuf_init(&b);
		html_operation_run(&b, &v, wk->wk_json);
		web_add_header(&pg->wg_rq, "Cache-Control", "no-store");
		web_page_reply(pg, 200, &b);
		return;
	}
	growbuf_init(&b);
	growbuf_puts(&b, pg->wg_back);
	growbuf_puts(&b, "?done=");
	wbuf_urlenc(&b, pg->wg_segs[pg->wg_nsegs - 1]);
	web_page_goto(pg, &b);
}

/*
 * The input of a form drawn from an action's schema (web_html_action.c):
 * "in.<key>" strings, "in.n.<key>" numbers, "in.b.<key>" booleans, or
 * "input_json", the whole input.  Sets body's "input" when there is one.
 */
static int
web_form_input(struct web_form *f, json_t *body, const char **why)
{
	json_t		*in = NULL, *num;
	const char	*name, *val;
	size_t		 i;

	for (i = 0; i < f->wf_n; i++) {
		name = f->wf_name[i];
		val = f->wf_value[i];
		if (strcmp(name, "input_json") == 0) {
			if (json_object_size(in) > 0) {
				*why = "input_json with other input fields";
				goto bad;
			}
			json_decref(in);
			if ((in = json_loads(val, JSON_REJECT_DUPLICATES,
			    NULL)) == NULL || !json_is_object(in)) {
				*why = "the input is not a JSON object";
				goto bad;
			}
			continue;
		}
		if (strncmp(name, "in.", 3) != 0)
			continue;
		if (in == NULL)
			in = json_object();
		if (strncmp(name, "in.n.", 5) == 0) {
			if (*val == '\0')
				continue;	/* left empty: not given */
			if ((num = json_loads(val, JSON_DECODE_ANY, NULL)) ==
			    NULL || !json_is_number(num)) {
				json_decref(num);
				*why = "a number field holds no number";
				goto bad;
			}
			json_object_set_new(in, name + 5, num);
		} else if (strncmp(name, "in.b.", 5) == 0)
			json_object_set_new(in, name + 5,
			    json_boolean(strcmp(val, "true") == 0));
		else if (*val != '\0')
			json_object_set_new(in, name + 3, json_string(val));
	}
	if (in != NULL)
		json_object_set_new(body, "input", in);
	return 0;
bad:
	json_decref(in);
	return -1;
}

/* The session answered: check the form's token, then make the call. */
static void
web_action_checked(struct web_page *pg)
{
	struct web_call	*s = &pg->wg_calls[0];
	const char	*csrf, *want, *v, *errstr = NULL;
	json_t		*j;
	int		 rc;

	csrf = web_form_get(&pg->wg_form, "csrf");
	if (!web_is_local(pg)) {
		if (s->wk_status == 200 && !json_is_true(json_object_get(
		    s->wk_json, "authenticated")) &&
		    json_object_get(s->wk_json, "authenticated") != NULL) {
			web_page_login(pg);
			return;
		}
		want = json_string_value(json_object_get(s->wk_json,
		    "csrf_token"));
		if (s->wk_status == 401) {
			web_page_login(pg);
			return;
		}
		if (s->wk_status != 200 || want == NULL || csrf == NULL ||
		    !web_token_eq(csrf, want)) {
			web_page_error(pg, 403, "The form's token is not this "
			    "session's: reload the page and try again.");
			return;
		}
	}
	j = json_object();
	if ((v = web_form_get(&pg->wg_form, "spec_hash")) != NULL && *v)
		json_object_set_new(j, "spec_hash", json_string(v));
	if ((v = web_form_get(&pg->wg_form, "reason")) != NULL && *v)
		json_object_set_new(j, "reason", json_string(v));
	if (web_form_input(&pg->wg_form, j, &errstr) == -1) {
		json_decref(j);
		web_page_error(pg, 400, errstr);
		return;
	}
	if (pg->wg_what == WEB_ACT_LEFT_BEHIND && pg->wg_nsegs == 5) {
		json_decref(j);
		rc = web_call(pg, "DELETE", pg->wg_api, "", csrf, NULL, 0);
	} else
		rc = web_call_json(pg, pg->wg_api, csrf, j);
	if (rc == -1) {
		web_page_error(pg, 429, "too many requests in flight");
		return;
	}
	web_page_then(pg, web_action_done);
}

/* A form: urlencoded, bounded, with a token; then what it asks. */
static void
web_form_post(struct web_page *pg)
{
	struct evbuffer	*in;
	const char	*ctype, *errstr = NULL, *csrf;
	size_t		 len, n;
	unsigned char	*body;

	ctype = web_input_header(&pg->wg_rq, "Content-Type");
	n = ctype != NULL ? strcspn(ctype, ";") : 0;
	while (n > 0 && (ctype[n - 1] == ' ' || ctype[n - 1] == '\t'))
		n--;
	if (ctype == NULL || n != strlen(WEB_FORM_TYPE) ||
	    strncasecmp(ctype, WEB_FORM_TYPE, n) != 0) {
		web_page_error(pg, 415, "a form is sent as "
		    "application/x-www-form-urlencoded");
		return;
	}
	in = evhttp_request_get_input_buffer(pg->wg_rq.wr_req);
	len = evbuffer_get_length(in);
	if (len > WEB_FORM_MAX) {
		web_page_error(pg, 413, "the form is too large");
		return;
	}
	body = len > 0 ? evbuffer_pullup(in, -1) : NULL;
	if (web_form_parse(&pg->wg_form, (const char *)body, len,
	    &errstr) == -1) {
		web_page_error(pg, 400, errstr);
		return;
	}
	/* The body may hold a password: nothing of it stays behind. */
	if (body != NULL)
		explicit_bzero(body, len);
	evbuffer_drain(in, len);
	if (pg->wg_what == WEB_LOGIN) {
		web_login_post(pg);
		return;
	}
	csrf = web_form_get(&pg->wg_form, "csrf");
	if (!web_is_local(pg) && (csrf == NULL || *csrf == '\0')) {
		web_page_error(pg, 403, "the form has no token (csrf)");
		return;
	}
	if (web_call(pg, "GET", "/api/v1/session", "", NULL, NULL, 0) == -1) {
		web_page_error(pg, 429, "too many requests in flight");
		return;
	}
	web_page_then(pg, web_action_checked);
}

/* Is the first segment of the target one of the dashboard's? */
static int
web_dash_top(const char *target)
{
	char	 top[32];
	size_t	 n;

	n = strcspn(target + 1, "/?#");
	if (n >= sizeof(top))
		return 0;
	memcpy(top, target + 1, n);
	top[n] = '\0';
	return web_in(top, web_dash_tops);
}

/* Which page or form is this; -1 for none, 0 for a wrong method. */
static int
web_dash_route(struct web_page *pg, int get, int post)
{
	char	(*s)[WEB_SEG_MAX] = pg->wg_segs;
	int	 n = pg->wg_nsegs;

	if (n == 0)
		return get ? WEB_OVERVIEW : 0;
	if (strcmp(s[0], "jobs") == 0) {
		if (n == 1)
			return get ? WEB_JOBS : 0;
		if (n == 3)
			return get ? WEB_JOB : 0;
		if (n == 4 && web_in(s[3], web_job_actions))
			return post ? WEB_ACT_JOB : 0;
		if (n == 5 && strcmp(s[3], "actions") == 0 &&
		    web_action_id_ok(s[4]))
			return post ? WEB_ACT_JOB : 0;
		return -1;
	}
	if (strcmp(s[0], "deployments") == 0) {
		if (n == 1)
			return get ? WEB_DEPLOYMENTS : 0;
		if (strspn(s[1], "0123456789") != strlen(s[1]) ||
		    strlen(s[1]) > 18)
			return -1;
		if (n == 2)
			return get ? WEB_DEPLOYMENT : 0;
		/* .../left-behind, .../left-behind/<entry>/forget */
		if (n == 3 && strcmp(s[2], "left-behind") == 0)
			return get ? WEB_LEFT_BEHIND : post ?
			    WEB_ACT_LEFT_BEHIND : 0;
		if (n == 5 && strcmp(s[2], "left-behind") == 0 &&
		    strcmp(s[4], "forget") == 0 && s[3][0] != '\0' &&
		    strspn(s[3], "0123456789") == strlen(s[3]) &&
		    strlen(s[3]) <= 18)
			return post ? WEB_ACT_LEFT_BEHIND : 0;
		if (n == 3 && web_in(s[2], web_deploy_actions))
			return post ? WEB_ACT_DEPLOYMENT : 0;
		if (n == 4 && strcmp(s[2], "actions") == 0 &&
		    web_action_id_ok(s[3]))
			return post ? WEB_ACT_DEPLOYMENT : 0;
		return -1;
	}
	if (strcmp(s[0], "hosts") == 0 && n > 1) {
		/* /hosts/<repository>/<host>[/actions/<action>] */
		if (n == 3)
			return get ? WEB_HOST : 0;
		if (n == 4 && strcmp(s[2], "actions") == 0 &&
		    web_action_id_ok(s[3]))
			return post ? WEB_ACT_EACH : 0;
		if (n == 5 && strcmp(s[3], "actions") == 0 &&
		    web_action_id_ok(s[4]))
			return post ? WEB_ACT_HOST : 0;
		return -1;
	}
	if (n != 1)
		return -1;
	if (strcmp(s[0], "activity") == 0)
		return get ? WEB_ACTIVITY : 0;
	if (strcmp(s[0], "hosts") == 0)
		return get ? WEB_HOSTS : 0;
	if (strcmp(s[0], "login") == 0)
		return get || post ? WEB_LOGIN : 0;
	if (strcmp(s[0], "logout") == 0)
		return post ? WEB_LOGOUT : 0;
	return -1;
}

/*
 * A path from a template: "%N" is the request's segment N, "%$" its last
 * one, each URL-encoded; the rest is copied.  -1 for a segment the
 * request does not have.
 */
static int
web_seg_path(struct growbuf *b, const struct web_page *pg, const char *tmpl)
{
	const char	*p;
	size_t		 len;
	int		 n;

	for (p = tmpl; *p != '\0'; p++) {
		if ((len = strcspn(p, "%")) > 0) {
			growbuf_add(b, p, len);
			if (*(p += len) == '\0')
				break;
		}
		p++;
		if (*p == '$')
			n = pg->wg_nsegs - 1;
		else if (*p >= '0' && *p <= '9')
			n = *p - '0';
		else
			return -1;
		if (n < 0 || n >= pg->wg_nsegs)
			return -1;
		wbuf_urlenc(b, pg->wg_segs[n]);
	}
	return 0;
}

/*
 * Where an action goes in the API, and where the client goes after; the
 * first row of its kind whose segment count fits (0: any).
 */
static const struct web_action_route {
	int		 what;
	int		 nsegs;
	const char	*api;
	const char	*back;
} web_action_routes[] = {
	{ WEB_ACT_DEPLOYMENT, 0, "/api/v1/deployments/%1/actions/%$",
	    "/deployments/%1" },
	/* retry: POST the list; forget: DELETE the entry */
	{ WEB_ACT_LEFT_BEHIND, 5, "/api/v1/deployments/left-behind/%3/%1",
	    "/deployments/%1/left-behind" },
	{ WEB_ACT_LEFT_BEHIND, 0, "/api/v1/deployments/left-behind/%1",
	    "/deployments/%1/left-behind" },
	{ WEB_ACT_EACH, 0, "/api/v1/plans/%1/operations/%3", "/hosts" },
	{ WEB_ACT_HOST, 0, "/api/v1/hosts/%1/%2/actions/%4", "/hosts/%1/%2" },
	{ WEB_ACT_JOB, 0, "/api/v1/jobs/%1/%2/actions/%$", "/jobs/%1/%2" },
};

static int
web_action_paths(struct web_page *pg)
{
	const struct web_action_route	*r = NULL;
	struct growbuf			 api, back;
	size_t				 i;
	int				 rc = -1;

	for (i = 0; i < sizeof(web_action_routes) /
	    sizeof(web_action_routes[0]) && r == NULL; i++)
		if (web_action_routes[i].what == pg->wg_what &&
		    (web_action_routes[i].nsegs == 0 ||
		    web_action_routes[i].nsegs == pg->wg_nsegs))
			r = &web_action_routes[i];
	growbuf_init(&api);
	growbuf_init(&back);
	if (r == NULL) {
		growbuf_puts(&api, "/api/v1/logout");
		growbuf_puts(&back, "/");
	} else if (web_seg_path(&api, pg, r->api) == -1 ||
	    web_seg_path(&back, pg, r->back) == -1)
		goto done;
	if (!api.gb_err && !back.gb_err && api.gb_len < sizeof(pg->wg_api) &&
	    back.gb_len < sizeof(pg->wg_back)) {
		strlcpy(pg->wg_api, api.gb_buf, sizeof(pg->wg_api));
		strlcpy(pg->wg_back, back.gb_buf, sizeof(pg->wg_back));
		rc = 0;
	}
 done:
	growbuf_free(&api);
	growbuf_free(&back);
	return rc;
}

int
web_dash_request(struct web_rq *rq)
{
	struct web_page	*pg;
	const char	*m = rq->wr_method;
	int		 get, post, what;

	if (strcmp(rq->wr_target, "/favicon.ico") == 0) {
		/* The pages name their icon; this is for the others. */
		web_add_header(rq, "Cache-Control", "public, max-age=86400");
		web_reply(rq, 204, "image/svg+xml", NULL, 0);
		return 1;
	}
	if (!web_dash_top(rq->wr_target))
		return 0;
	get = strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
	post = strcmp(m, "POST") == 0;
	if (get && web_pages_answer(rq))
		return 1;
	pg = web_page_new(rq);
	if ((pg->wg_nsegs = web_path_split(rq->wr_target, pg->wg_segs,
	    WEB_SEGS_MAX)) == -1) {
		web_page_error(pg, 404, "no such page");
		return 1;
	}
	if (pg->wg_nsegs == 2 && strcmp(pg->wg_segs[0], "static") == 0) {
		if (!get) {
			web_page_error(pg, 405, "method not allowed");
			return 1;
		}
		if (web_static(&pg->wg_rq, pg->wg_segs[1]) == -1) {
			web_page_error(pg, 404, "no such file");
			return 1;
		}
		pg->wg_rq.wr_req = NULL;	/* answered */
		web_page_free(pg);
		return 1;
	}
	what = web_dash_route(pg, get, post);
	if (what == -1) {
		web_page_error(pg, 404, "no such page");
		return 1;
	}
	if (what == 0) {
		web_add_header(&pg->wg_rq, "Allow", post && !get ? "GET, HEAD" :
		    "POST");
		web_page_error(pg, 405, "method not allowed");
		return 1;
	}
#ifdef NOPS_TEST_HOOKS
	/* "dash-unknown-kind": as a route added without its case would. */
	if (post && web_testhook("dash-unknown-kind") != NULL)
		what = WEB_TEST_UNKNOWN;
#endif
	pg->wg_what = what;
	switch (what) {
	case WEB_LOGIN:
		if (get) {
			const char	*q = web_target_query(rq->wr_target);
			const char	*errstr;

			if (web_form_parse(&pg->wg_query, q, strlen(q),
			    &errstr) == -1) {
				web_page_error(pg, 400, errstr);
				return 1;
			}
			web_login_form(pg, 200, NULL);
			return 1;
		}
		web_form_post(pg);
		return 1;
	case WEB_ACT_DEPLOYMENT:
	case WEB_ACT_JOB:
	case WEB_ACT_HOST:
	case WEB_ACT_EACH:
	case WEB_ACT_LEFT_BEHIND:
	case WEB_LOGOUT:
		if (web_action_paths(pg) == -1) {
			web_page_error(pg, 404, "no such page");
			return 1;
		}
		web_form_post(pg);
		return 1;
	default:
		/*
		 * Only a GET of a page goes on to draw it; anything else is
		 * a kind this switch does not know: refused, nothing done.
		 */
		if (!get || !web_dash_page(what)) {
			log_warnx("dashboard: %s %s: no handler for a request "
			    "of kind %d; refused", m, pg->wg_nsegs > 0 ?
			    pg->wg_segs[0] : "/", what);
			web_page_error(pg, 400, "The dashboard cannot take "
			    "this request here: nothing was done.");
			return 1;
		}
		web_page_get(pg);
		return 1;
	}
}
