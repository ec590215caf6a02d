/*
 * HTML of the dashboard: the frame of every page and the pieces they
 * share, the login and error pages, and the Overview, Jobs and Job pages.
 * Every value goes through wbuf_html() (directly or as a %s of
 * wbuf_htmlf()); every value in a URL through wbuf_urlenc() first.
 */
#include "config.h"

#include <sys/types.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "nops.h"
#include "web.h"

const char *
jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

long long
jint(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* May the client do cap in ns?  Without a session, the state decides. */
int
html_can(const struct web_view *v, const char *cap, const char *ns)
{
	json_t	*caps, *c;
	size_t	 i;

	if (v->wv_local || v->wv_session == NULL)
		return 1;
	if (json_is_true(json_object_get(v->wv_session, "management")))
		return 1;
	caps = NULL;
	if (ns != NULL)
		caps = json_object_get(json_object_get(v->wv_session,
		    "namespaces"), ns);
	if (caps == NULL) {
		/* A namespace the session does not list: its globs decide. */
		caps = json_object_get(v->wv_session, "capabilities");
		if (ns != NULL && json_object_get(v->wv_session,
		    "namespaces") != NULL)
			return 0;
	}
	json_array_foreach(caps, i, c)
		if (json_is_string(c) && (strcmp(json_string_value(c),
		    cap) == 0 || strcmp(json_string_value(c),
		    "management") == 0))
			return 1;
	return 0;
}

static void
html_nav(struct growbuf *b, const struct web_view *v, const char *id,
    const char *href, const char *label)
{
	wbuf_htmlf(b, "<a href=\"%s\"", href);
	if (v->wv_nav != NULL && strcmp(v->wv_nav, id) == 0)
		growbuf_puts(b, " class=\"cur\"");
	wbuf_htmlf(b, ">%s</a>", label);
}

/* A session's own text: here, or where a reused page takes it. */
static void
html_splice(struct growbuf *b, const struct web_view *v, int kind,
    const char *text)
{
	struct web_splices	*sp = v->wv_splices;

	if (sp == NULL) {
		wbuf_htmlf(b, "%s", text);
		return;
	}
	if (sp->sp_n >= WEB_SPLICES_MAX) {
		sp->sp_full = 1;
		return;
	}
	sp->sp_off[sp->sp_n] = b->gb_len;
	sp->sp_kind[sp->sp_n++] = kind;
}

void
html_csrf(struct growbuf *b, const struct web_view *v)
{
	growbuf_puts(b, "<input type=\"hidden\" name=\"csrf\" value=\"");
	html_splice(b, v, WEB_SPLICE_CSRF, v->wv_session != NULL ?
	    jstr(v->wv_session, "csrf_token") : "");
	growbuf_puts(b, "\">");
}

void
html_begin(struct growbuf *b, const struct web_view *v)
{
	const char	*who = NULL;

	wbuf_htmlf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width, "
	    "initial-scale=1\">"
	    "<title>%s · nops</title>"
	    "<link rel=\"icon\" href=\"/static/nops.svg\">"
	    "<link rel=\"stylesheet\" href=\"/static/nops.css?v=%s\">"
	    "<script src=\"/static/nops.js?v=%s\" defer></script>"
	    "</head>\n", v->wv_title, NOPS_VERSION, NOPS_VERSION);
	if (v->wv_refresh > 0)
		wbuf_htmlf(b, "<body data-refresh=\"%d\">", v->wv_refresh);
	else
		growbuf_puts(b, "<body>");
	growbuf_puts(b, "<header><nav><a class=\"brand\" href=\"/\">nops</a>");
	html_nav(b, v, "overview", "/", "Overview");
	html_nav(b, v, "jobs", "/jobs", "Jobs");
	html_nav(b, v, "deployments", "/deployments", "Deployments");
	html_nav(b, v, "hosts", "/hosts", "Hosts");
	html_nav(b, v, "activity", "/activity", "Activity");
	growbuf_puts(b, "<span class=\"who\">");
	if (v->wv_session != NULL && json_is_true(json_object_get(
	    v->wv_session, "authenticated"))) {
		if ((who = jstr(v->wv_session, "user")) == NULL)
			who = jstr(v->wv_session, "actor");
		growbuf_puts(b, "<span class=\"user\">");
		html_splice(b, v, WEB_SPLICE_WHO, who);
		growbuf_puts(b, "</span>");
		if (jstr(v->wv_session, "user") != NULL) {
			growbuf_puts(b, "<form method=\"post\" "
			    "action=\"/logout\">");
			html_csrf(b, v);
			growbuf_puts(b, "<button type=\"submit\" id=\"logout\">"
			    "Log out</button></form>");
		}
	} else if (v->wv_local)
		growbuf_puts(b, "<span class=\"user\">local admin</span>");
	else
		growbuf_puts(b, "<a href=\"/login\">Log in</a>");
	growbuf_puts(b, "</span></nav></header>\n<main id=\"main\">");
	if (v->wv_notice != NULL)
		wbuf_htmlf(b, "<div class=\"msg done\" id=\"notice\">%s</div>",
		    v->wv_notice);
}

/*
 * The notice after an action, from a fixed table: the query string only
 * picks a line, its text is never shown.
 */
/* Alike on purpose: diffview_aliases (master/diffview.c), a pair table too. */
const char *
html_done_text(const char *action)
{
	static const struct {
		const char	*action;
		const char	*text;
	} done[] = {
		{ "approve",	"Approved: the deployment starts." },
		{ "reject",	"Rejected." },
		{ "retry",	"Retry queued: a new deployment follows." },
		{ "promote",	"Promotion sent to Nomad." },
		{ "acknowledge", "Acknowledged: the failure is off the "
		    "Overview." },
		{ "pause",	"Paused." },
		{ "resume",	"Resumed." },
		{ "deploy-now",	"Deploy now: done." },
		{ "left-behind", "Retried: what is still listed is still "
		    "left behind." },
		{ "forget",	"Record forgotten; the object was not "
		    "touched." },
	};
	size_t	 i;

	if (action == NULL)
		return NULL;
	for (i = 0; i < sizeof(done) / sizeof(done[0]); i++)
		if (strcmp(done[i].action, action) == 0)
			return done[i].text;
	return NULL;
}

void
html_end(struct growbuf *b)
{
	wbuf_htmlf(b, "</main>\n<footer>nops %s</footer>\n</body></html>\n",
	    NOPS_VERSION);
}

void
html_message(struct growbuf *b, const char *cls, const char *text)
{
	wbuf_htmlf(b, "<div class=\"msg %s\">%s</div>", cls, text);
}

/* "5 min ago" for an RFC 3339 UTC time; the absolute one if unsure. */
static void
html_ago(struct growbuf *b, const char *rfc, const char *shown)
{
	struct tm	 tm;
	const char	*end;
	time_t		 t, now = time(NULL);
	long long	 d;

	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(rfc, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL ||
	    (*end != 'Z' && *end != '.') || (t = timegm(&tm)) == -1) {
		wbuf_html(b, shown);
		return;
	}
	d = (long long)(now - t);
	if (d < -60)
		wbuf_htmlf(b, "in %lld min", (-d + 59) / 60);
	else if (d < 60)
		growbuf_puts(b, "just now");
	else if (d < 3600)
		wbuf_htmlf(b, "%lld min ago", d / 60);
	else if (d < 86400)
		wbuf_htmlf(b, "%lld h ago", d / 3600);
	else if (d < 30 * 86400)
		wbuf_htmlf(b, "%lld days ago", d / 86400);
	else
		wbuf_html(b, shown);
}

void
html_time(struct growbuf *b, json_t *t)
{
	const char	*s = json_string_value(t);
	char		 shown[40];
	char		*p;

	if (s == NULL) {
		growbuf_puts(b, "<span class=\"muted\">—</span>");
		return;
	}
	strlcpy(shown, s, sizeof(shown));
	if ((p = strchr(shown, 'T')) != NULL)
		*p = ' ';
	if ((p = strchr(shown, 'Z')) != NULL)
		strlcpy(p, " UTC", sizeof(shown) - (p - shown));
	/* Relative, the absolute time on hover. */
	wbuf_htmlf(b, "<time datetime=\"%s\" title=\"%s\">", s, shown);
	html_ago(b, s, shown);
	growbuf_puts(b, "</time>");
}

static const char *
html_state_class(const char *s)
{
	static const char *const ok[] = { "completed", "in_sync",
	    "succeeded", "running", "idle", NULL };
	static const char *const wait[] = { "pending_approval",
	    "awaiting_promotion", "drift", "paused", "held", "queued", NULL };
	static const char *const run[] = { "pre_hooks", "registering",
	    "waiting_health", "post_hooks", "deploying", "preflight",
	    "polling", "dispatched", "pending", "starting", "restarting",
	    NULL };
	static const char *const bad[] = { "failed", "error", "blocked",
	    NULL };
	const char *const	*l;

	for (l = ok; *l != NULL; l++)
		if (strcmp(s, *l) == 0)
			return "s-ok";
	for (l = wait; *l != NULL; l++)
		if (strcmp(s, *l) == 0)
			return "s-wait";
	for (l = run; *l != NULL; l++)
		if (strcmp(s, *l) == 0)
			return "s-run";
	for (l = bad; *l != NULL; l++)
		if (strcmp(s, *l) == 0)
			return "s-bad";
	return "s-other";
}

/* A state as a person reads it; the API's name stays in data-state. */
static const char *
html_state_label(const char *s)
{
	static const struct {
		const char	*state;
		const char	*label;
	} labels[] = {
		{ "pending_approval",	"waiting for approval" },
		{ "pre_hooks",		"running pre hooks" },
		{ "registering",	"registering" },
		{ "waiting_health",	"waiting for health" },
		{ "awaiting_promotion",	"canaries wait for promotion" },
		{ "post_hooks",		"running post hooks" },
		{ "completed",		"completed" },
		{ "failed",		"failed" },
		{ "rejected",		"rejected" },
		{ "superseded",		"superseded" },
		{ "in_sync",		"in sync" },
		{ "drift",		"drift (not deployed)" },
		{ "deploying",		"deploying" },
		{ "blocked",		"blocked" },
		{ "paused",		"paused" },
		{ "held",		"held (sync window)" },
		{ "unparsed",		"does not parse" },
		{ "error",		"error" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (strcmp(labels[i].state, s) == 0)
			return labels[i].label;
	return s;
}

void
html_state(struct growbuf *b, const char *state)
{
	if (state == NULL) {
		growbuf_puts(b, "<span class=\"muted\">—</span>");
		return;
	}
	wbuf_htmlf(b, "<span class=\"state %s\" data-state=\"%s\" "
	    "title=\"%s\">%s</span>", html_state_class(state), state, state,
	    html_state_label(state));
}

void
html_commit(struct growbuf *b, const char *c)
{
	char	 s[13];

	if (c == NULL) {
		growbuf_puts(b, "<span class=\"muted\">—</span>");
		return;
	}
	strlcpy(s, c, sizeof(s));
	wbuf_htmlf(b, "<code title=\"%s\">%s</code>", c, s);
}

/*
 * A link of class kind to /<kind>s/<a>/<c>, shown as "a/c" (whole) or
 * "c"; a dash when either part is missing.
 */
void
html_pair_link(struct growbuf *b, const char *kind, const char *a,
    const char *c, int whole)
{
	if (a == NULL || c == NULL) {
		growbuf_puts(b, "<span class=\"muted\">—</span>");
		return;
	}
	wbuf_htmlf(b, "<a class=\"%s\" href=\"/%ss/", kind, kind);
	wbuf_urlenc(b, a);
	growbuf_puts(b, "/");
	wbuf_urlenc(b, c);
	if (whole)
		wbuf_htmlf(b, "\">%s/%s</a>", a, c);
	else
		wbuf_htmlf(b, "\">%s</a>", c);
}

void
html_job_link(struct growbuf *b, const char *ns, const char *id)
{
	html_pair_link(b, "job", ns, id, 1);
}

/* The end of a list's table, and a line saying so when it had no item. */
void
html_table_end(struct growbuf *b, json_t *list, const char *none)
{
	growbuf_puts(b, "</table>");
	if (json_array_size(json_object_get(list, "items")) == 0) {
		growbuf_puts(b, "<p class=\"muted\">");
		growbuf_puts(b, none);
		growbuf_puts(b, "</p>");
	}
}

/*
 * Alike on purpose: html_diff (web_html_deploy.c) opens the same way, a
 * muted line when the JSON is not the type it shows; the rest differs.
 */
void
html_deploy_link(struct growbuf *b, json_t *id)
{
	if (!json_is_integer(id)) {
		growbuf_puts(b, "<span class=\"muted\">—</span>");
		return;
	}
	wbuf_htmlf(b, "<a class=\"deployment\" href=\"/deployments/%lld\">"
	    "#%lld</a>", (long long)json_integer_value(id),
	    (long long)json_integer_value(id));
}

/* A deployment's first two cells in a table: its link and its job's. */
void
html_deploy_cells(struct growbuf *b, json_t *it)
{
	growbuf_puts(b, "<td>");
	html_deploy_link(b, json_object_get(it, "id"));
	growbuf_puts(b, "</td><td>");
	html_job_link(b, jstr(it, "namespace"), jstr(it, "job"));
	growbuf_puts(b, "</td>");
}

void
html_error_page(struct growbuf *b, const struct web_view *v, int status,
    const char *message)
{
	html_begin(b, v);
	wbuf_htmlf(b, "<h1>%s</h1>", v->wv_title);
	html_message(b, "error", message);
	if (status == 403)
		growbuf_puts(b, "<p>Your account may not do this here. Ask an "
		    "administrator for the capability if you need it.</p>");
	wbuf_htmlf(b, "<p class=\"muted\">HTTP %d</p>", status);
	growbuf_puts(b, "<p><a href=\"/\">Back to the overview</a></p>");
	html_end(b);
}

void
html_login_page(struct growbuf *b, const char *csrf, const char *next,
    const char *message)
{
	struct web_view	 v;

	memset(&v, 0, sizeof(v));
	v.wv_title = "Log in";
	html_begin(b, &v);
	growbuf_puts(b, "<div class=\"login\"><h1>Log in to nops</h1>");
	if (message != NULL)
		html_message(b, "error", message);
	wbuf_htmlf(b, "<form method=\"post\" action=\"/login\">"
	    "<input type=\"hidden\" name=\"csrf\" value=\"%s\">", csrf);
	if (next != NULL)
		wbuf_htmlf(b, "<input type=\"hidden\" name=\"next\" "
		    "value=\"%s\">", next);
	growbuf_puts(b, "<label for=\"username\">User name</label>"
	    "<input type=\"text\" id=\"username\" name=\"username\" "
	    "autocomplete=\"username\" required autofocus>"
	    "<label for=\"password\">Password</label>"
	    "<input type=\"password\" id=\"password\" name=\"password\" "
	    "autocomplete=\"current-password\" required>"
	    "<button type=\"submit\" class=\"primary\">Log in</button>"
	    "</form></div>");
	html_end(b);
}

/*
 * "Next page" of a list answer {"items", "next"}; keep is the query of
 * the filters, already encoded and escaped.
 */
void
html_pager(struct growbuf *b, json_t *o, const char *path, const char *keep)
{
	const char	*next = jstr(o, "next");

	growbuf_puts(b, "<div class=\"pager\">");
	if (keep != NULL && *keep != '\0')
		wbuf_htmlf(b, "<a href=\"%s?", path);
	else
		wbuf_htmlf(b, "<a href=\"%s", path);
	growbuf_puts(b, keep != NULL ? keep : "");
	growbuf_puts(b, "\">First page</a>");
	if (next != NULL) {
		wbuf_htmlf(b, "<a rel=\"next\" href=\"%s?", path);
		if (keep != NULL && *keep != '\0') {
			growbuf_puts(b, keep);
			growbuf_puts(b, "&amp;");
		}
		growbuf_puts(b, "cursor=");
		wbuf_urlenc(b, next);
		growbuf_puts(b, "\">Next page →</a>");
	}
	growbuf_puts(b, "</div>");
}

/* Overview. */

static void
html_more(struct growbuf *b, json_t *list, const char *href)
{
	long long	 count = jint(list, "count");
	size_t		 shown = json_array_size(json_object_get(list,
			    "items"));

	if (count <= (long long)shown)
		return;
	if (href != NULL)
		wbuf_htmlf(b, "<p><a href=\"%s\">All %lld →</a></p>", href,
		    count);
	else
		wbuf_htmlf(b, "<p class=\"muted\">and %lld more</p>",
		    count - (long long)shown);
}

static void
html_attention_deploys(struct growbuf *b, json_t *list, const char *id,
    const char *title, const char *href)
{
	json_t	*it;
	size_t	 i;

	wbuf_htmlf(b, "<section class=\"box\" id=\"%s\"><h3>%s (%lld)</h3>"
	    "<table><tr><th>Deployment</th><th>Job</th><th>Commit</th>"
	    "<th>Waiting since</th></tr>", id, title, jint(list, "count"));
	/* Alike on purpose: html_overview_in_progress, a state for a commit. */
	json_array_foreach(json_object_get(list, "items"), i, it) {
		growbuf_puts(b, "<tr>");
		html_deploy_cells(b, it);
		growbuf_puts(b, "<td>");
		html_commit(b, jstr(it, "commit"));
		growbuf_puts(b, "</td><td>");
		html_time(b, json_object_get(it, "updated_at"));
		growbuf_puts(b, "</td></tr>");
	}
	growbuf_puts(b, "</table>");
	html_more(b, list, href);
	growbuf_puts(b, "</section>");
}

static void
html_attention_rows(struct growbuf *b, json_t *list, const char *id,
    const char *title)
{
	json_t	*it;
	size_t	 i;

	wbuf_htmlf(b, "<section class=\"box\" id=\"%s\"><h3>%s (%lld)</h3>"
	    "<table>", id, title, jint(list, "count"));
	json_array_foreach(json_object_get(list, "items"), i, it) {
		growbuf_puts(b, "<tr>");
		if (strcmp(id, "failed") == 0) {
			html_deploy_cells(b, it);
			wbuf_htmlf(b, "<td>%s</td><td>", jstr(it, "reason"));
			html_time(b, json_object_get(it, "ended_at"));
			growbuf_puts(b, "</td>");
		} else if (strcmp(id, "blocked") == 0 ||
		    strcmp(id, "duplicate_jobs") == 0) {
			growbuf_puts(b, "<td>");
			html_job_link(b, jstr(it, "namespace"),
			    jstr(it, "id"));
			wbuf_htmlf(b, "</td><td>%s</td>", jstr(it, "note") !=
			    NULL ? jstr(it, "note") : jstr(it, "error"));
		} else if (strcmp(id, "invalid_files") == 0) {
			wbuf_htmlf(b, "<td>%s</td><td><code>%s</code></td>"
			    "<td>%s</td>", jstr(it, "repository"),
			    jstr(it, "path"), jstr(it, "error"));
		} else if (strcmp(id, "repository_errors") == 0) {
			wbuf_htmlf(b, "<td>%s</td><td>%s</td><td>",
			    jstr(it, "name"), jstr(it, "message"));
			html_time(b, json_object_get(it, "at"));
			wbuf_htmlf(b, "</td><td class=\"num\">%lld failures"
			    "</td>", jint(it, "failures"));
		} else {
			wbuf_htmlf(b, "<td>%s</td><td class=\"num\">%lld "
			    "restarts</td><td>", jstr(it, "name"),
			    jint(it, "restarts"));
			html_state(b, jstr(it, "state"));
			wbuf_htmlf(b, "</td><td>%s</td>",
			    jstr(it, "last_exit"));
		}
		growbuf_puts(b, "</tr>");
	}
	growbuf_puts(b, "</table>");
	html_more(b, list, NULL);
	growbuf_puts(b, "</section>");
}

/* The overview's attention lists, each with its count. */
static void
html_overview_attention(struct growbuf *b, json_t *o)
{
	json_t		*att = json_object_get(o, "attention"), *l;
	size_t		 i;
	static const struct {
		const char	*key;
		const char	*title;
	} rows[] = {
		{ "failed", "Failed deployments" },
		{ "blocked", "Blocked jobs" },
		{ "invalid_files", "Files that do not parse" },
		{ "duplicate_jobs", "Jobs declared twice" },
		{ "repository_errors", "Repository errors" },
		{ "worker_restarts", "Worker restarts" },
	};

	wbuf_htmlf(b, "<h2 id=\"attention\">Needs attention (%lld)</h2>",
	    jint(o, "attention_total"));
	if (jint(o, "attention_total") == 0)
		growbuf_puts(b, "<p class=\"muted\">Nothing needs attention."
		    "</p>");
	l = json_object_get(att, "awaiting_approval");
	if (jint(l, "count") > 0)
		html_attention_deploys(b, l, "awaiting_approval",
		    "Awaiting approval", "/deployments?state=pending_approval");
	l = json_object_get(att, "awaiting_promotion");
	if (jint(l, "count") > 0)
		html_attention_deploys(b, l, "awaiting_promotion",
		    "Awaiting promotion",
		    "/deployments?state=awaiting_promotion");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		l = json_object_get(att, rows[i].key);
		if (jint(l, "count") > 0)
			html_attention_rows(b, l, rows[i].key, rows[i].title);
	}
}

/* The deployments being applied. */
static void
html_overview_in_progress(struct growbuf *b, json_t *l)
{
	json_t	*it;
	size_t	 i;

	wbuf_htmlf(b, "<h2>In progress (%lld)</h2>", jint(l, "count"));
	if (jint(l, "count") == 0) {
		growbuf_puts(b, "<p class=\"muted\">No deployment is being "
		    "applied.</p>");
		return;
	}
	growbuf_puts(b, "<table id=\"in-progress\"><tr><th>Deployment"
	    "</th><th>Job</th><th>State</th><th>Since</th></tr>");
	json_array_foreach(json_object_get(l, "items"), i, it) {
		growbuf_puts(b, "<tr>");
		html_deploy_cells(b, it);
		growbuf_puts(b, "<td>");
		html_state(b, jstr(it, "state"));
		growbuf_puts(b, "</td><td>");
		html_time(b, json_object_get(it, "updated_at"));
		growbuf_puts(b, "</td></tr>");
	}
	growbuf_puts(b, "</table>");
	html_more(b, l, NULL);
}

static void
html_overview_repositories(struct growbuf *b, json_t *l)
{
	json_t	*it;
	size_t	 i;

	growbuf_puts(b, "<h2>Repositories</h2><table id=\"repositories\"><tr>"
	    "<th>Name</th><th>State</th><th>Commit</th><th>Subject</th>"
	    "<th>Fetched</th><th>Error</th></tr>");
	json_array_foreach(json_object_get(l, "items"), i, it) {
		wbuf_htmlf(b, "<tr><td>%s</td><td>", jstr(it, "name"));
		html_state(b, jstr(it, "state"));
		growbuf_puts(b, "</td><td>");
		html_commit(b, jstr(it, "commit"));
		wbuf_htmlf(b, "</td><td>%s</td><td>", jstr(it, "subject"));
		html_time(b, json_object_get(it, "fetched_at"));
		wbuf_htmlf(b, "</td><td>%s</td></tr>", jstr(it, "error"));
	}
	growbuf_puts(b, "</table>");
}

static void
html_overview_orphans(struct growbuf *b, json_t *l)
{
	json_t	*it;
	size_t	 i;

	wbuf_htmlf(b, "<h2>Orphans (%lld)</h2>", jint(l, "count"));
	if (!json_is_true(json_object_get(l, "complete")))
		growbuf_puts(b, "<p class=\"muted\">Not known while a file "
		    "does not parse.</p>");
	if (jint(l, "count") <= 0)
		return;
	growbuf_puts(b, "<p class=\"muted\">Jobs nops deployed that are "
	    "gone from git but still run. nops never stops them."
	    "</p><table id=\"orphans\"><tr><th>Job</th>"
	    "<th>Last deployment</th></tr>");
	json_array_foreach(json_object_get(l, "items"), i, it) {
		wbuf_htmlf(b, "<tr><td>%s/%s</td><td>",
		    jstr(it, "namespace"), jstr(it, "id"));
		html_deploy_link(b, json_object_get(it, "last_deployment"));
		growbuf_puts(b, "</td></tr>");
	}
	growbuf_puts(b, "</table>");
	html_more(b, l, NULL);
}

void
html_overview(struct growbuf *b, const struct web_view *v, json_t *o)
{
	json_t		*bystate = json_object_get(json_object_get(o, "jobs"),
			    "by_state"), *l;
	const char	*k;

	html_begin(b, v);
	growbuf_puts(b, "<h1>Overview</h1><div class=\"counts\">");
	wbuf_htmlf(b, "<a href=\"/jobs\">%lld jobs</a>",
	    jint(json_object_get(o, "jobs"), "total"));
	json_object_foreach(bystate, k, l)
		wbuf_htmlf(b, "<span>%s: %lld</span>", k,
		    (long long)json_integer_value(l));
	growbuf_puts(b, "</div>");
	html_overview_attention(b, o);
	html_overview_in_progress(b, json_object_get(o, "in_progress"));
	html_overview_repositories(b, json_object_get(o, "repositories"));
	html_overview_orphans(b, json_object_get(o, "orphans"));
	l = json_object_get(o, "engine");
	growbuf_puts(b, "<p class=\"muted\">Last detection ");
	html_time(b, json_object_get(l, "last_detection"));
	growbuf_puts(b, ", last apply ");
	html_time(b, json_object_get(l, "last_apply"));
	growbuf_puts(b, ".</p>");
	html_end(b);
}

/* Jobs.  Alike on purpose: html_hosts' table (other columns). */

void
html_jobs(struct growbuf *b, const struct web_view *v, json_t *o)
{
	json_t	*it;
	size_t	 i;

	html_begin(b, v);
	growbuf_puts(b, "<h1>Jobs</h1><table id=\"jobs\"><tr><th>Job</th>"
	    "<th>State</th><th>Policy</th><th>Deployment</th>"
	    "<th>Repository</th><th>Commit</th><th>Note</th></tr>");
	json_array_foreach(json_object_get(o, "items"), i, it) {
		growbuf_puts(b, "<tr><td>");
		html_job_link(b, jstr(it, "namespace"), jstr(it, "id"));
		growbuf_puts(b, "</td><td>");
		html_state(b, jstr(it, "state"));
		wbuf_htmlf(b, "</td><td>%s</td><td>", jstr(it, "policy"));
		html_deploy_link(b, json_object_get(it, "deployment"));
		wbuf_htmlf(b, "</td><td>%s</td><td>", jstr(it, "repository"));
		html_commit(b, jstr(it, "commit"));
		wbuf_htmlf(b, "</td><td>%s</td></tr>", jstr(it, "note") !=
		    NULL ? jstr(it, "note") : jstr(it, "error"));
	}
	html_table_end(b, o, "No job files in git.");
	html_pager(b, o, "/jobs", NULL);
	html_end(b);
}

/* A job's facts: where it comes from, how it is deployed, who holds it. */
static void
html_job_facts(struct growbuf *b, json_t *j)
{
	json_t		*hold;
	size_t		 i;
	static const struct {
		const char	*key;
		const char	*title;
	} holds[] = {
		{ "paused", "Paused" },
		{ "suspended", "Suspended" },
	};

	growbuf_puts(b, "<section class=\"box\"><table>");
	wbuf_htmlf(b, "<tr><th>Repository</th><td>%s</td></tr>"
	    "<tr><th>File</th><td><code>%s</code></td></tr>"
	    "<tr><th>Commit</th><td>", jstr(j, "repository"),
	    jstr(j, "path"));
	html_commit(b, jstr(j, "commit"));
	wbuf_htmlf(b, "</td></tr><tr><th>Role</th><td>%s</td></tr>"
	    "<tr><th>Policy</th><td>%s</td></tr>"
	    "<tr><th>Drift</th><td>%s</td></tr>"
	    "<tr><th>Spec hash</th><td><code>%s</code></td></tr>"
	    "<tr><th>Deployment</th><td>", jstr(j, "role"),
	    jstr(j, "policy"), json_is_true(json_object_get(j, "drift")) ?
	    "yes: git differs from the live job" : "no",
	    jstr(j, "spec_hash"));
	html_deploy_link(b, json_object_get(j, "deployment"));
	growbuf_puts(b, "</td></tr>");
	for (i = 0; i < sizeof(holds) / sizeof(holds[0]); i++) {
		if (!json_is_object(hold = json_object_get(j, holds[i].key)))
			continue;
		wbuf_htmlf(b, "<tr><th>%s</th><td>by %s: %s (since ",
		    holds[i].title, jstr(hold, "by"), jstr(hold, "reason"));
		html_time(b, json_object_get(hold, "since"));
		growbuf_puts(b, ")</td></tr>");
	}
	growbuf_puts(b, "</table></section>");
}

/* A job's issues and hooks, where it has any. */
static void
html_job_lists(struct growbuf *b, json_t *j)
{
	json_t	*it;
	size_t	 i;

	if (json_array_size(json_object_get(j, "issues")) > 0) {
		growbuf_puts(b, "<h2>Issues</h2><table id=\"issues\"><tr>"
		    "<th>Severity</th><th>Key</th><th>Message</th></tr>");
		json_array_foreach(json_object_get(j, "issues"), i, it)
			wbuf_htmlf(b, "<tr><td>%s</td><td><code>%s</code></td>"
			    "<td>%s</td></tr>", jstr(it, "severity"),
			    jstr(it, "key"), jstr(it, "message"));
		growbuf_puts(b, "</table>");
	}
	if (json_array_size(json_object_get(j, "hooks")) > 0) {
		growbuf_puts(b, "<h2>Hooks</h2><table id=\"hooks\"><tr>"
		    "<th>Phase</th><th>#</th><th>Hook</th><th>Revision</th>"
		    "<th>Timeout</th></tr>");
		json_array_foreach(json_object_get(j, "hooks"), i, it)
			wbuf_htmlf(b, "<tr><td>%s</td><td>%lld</td><td>%s"
			    "</td><td><code>%s</code></td><td>%lld s</td>"
			    "</tr>", jstr(it, "phase"), jint(it, "position"),
			    jstr(it, "hook"), jstr(it, "revision"),
			    jint(it, "timeout"));
		growbuf_puts(b, "</table>");
	}
}

/* A job's last deployments, and a link to all of them. */
static void
html_job_recent(struct growbuf *b, json_t *ds, const char *ns, const char *id)
{
	json_t	*it;
	size_t	 i;

	growbuf_puts(b, "<h2>Recent deployments</h2>");
	if (ds == NULL || json_array_size(json_object_get(ds, "items")) ==
	    0) {
		growbuf_puts(b, "<p class=\"muted\">None.</p>");
		return;
	}
	growbuf_puts(b, "<table id=\"deployments\"><tr><th>Deployment"
	    "</th><th>State</th><th>Commit</th><th>Created</th>"
	    "<th>Reason</th></tr>");
	json_array_foreach(json_object_get(ds, "items"), i, it) {
		growbuf_puts(b, "<tr><td>");
		html_deploy_link(b, json_object_get(it, "id"));
		growbuf_puts(b, "</td><td>");
		html_state(b, jstr(it, "state"));
		growbuf_puts(b, "</td><td>");
		html_commit(b, jstr(it, "commit"));
		growbuf_puts(b, "</td><td>");
		html_time(b, json_object_get(it, "created_at"));
		wbuf_htmlf(b, "</td><td>%s</td></tr>", jstr(it, "reason"));
	}
	growbuf_puts(b, "</table><p><a href=\"/deployments?namespace=");
	wbuf_urlenc(b, ns);
	growbuf_puts(b, "&amp;job=");
	wbuf_urlenc(b, id);
	growbuf_puts(b, "\">All deployments of this job →</a></p>");
}

void
html_job(struct growbuf *b, const struct web_view *v, json_t *j, json_t *ds)
{
	struct growbuf	 path;
	const char	*ns = jstr(j, "namespace"), *id = jstr(j, "id");
	const char	*note;

	html_begin(b, v);
	wbuf_htmlf(b, "<h1>Job %s/%s ", ns, id);
	html_state(b, jstr(j, "state"));
	growbuf_puts(b, "</h1>");
	if ((note = jstr(j, "note")) != NULL)
		html_message(b, "info", note);
	if (jstr(j, "error") != NULL)
		html_message(b, "error", jstr(j, "error"));

	growbuf_init(&path);
	growbuf_puts(&path, "/jobs/");
	wbuf_urlenc(&path, ns);
	growbuf_puts(&path, "/");
	wbuf_urlenc(&path, id);
	if (!path.gb_err)
		html_actions(b, v, json_object_get(j, "actions"), path.gb_buf);
	growbuf_free(&path);

	html_job_facts(b, j);
	html_job_lists(b, j);
	if (json_is_object(json_object_get(j, "diff")) &&
	    json_is_true(json_object_get(j, "drift"))) {
		growbuf_puts(b, "<h2>Drift: git against the live job</h2>");
		html_diff(b, json_object_get(j, "diff"));
	}
	html_job_recent(b, ds, ns, id);
	html_end(b);
}
