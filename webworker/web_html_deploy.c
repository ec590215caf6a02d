/*
 * HTML of the Deployments list, a Deployment (what approve will do, the
 * redacted diff, hooks and their runs, events, the actions the state and
 * the client's capabilities allow) and the Activity page (the audit log).
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "nops.h"
#include "web.h"

#define HTML_DIFF_DEPTH		12	/* nested objects shown */

static const char *const html_states[] = {
	"pending_approval", "pre_hooks", "registering", "waiting_health",
	"awaiting_promotion", "post_hooks", "completed", "failed", "rejected",
	"superseded", NULL
};

/* The filters of the list, for the pager's links: encoded and escaped. */
static void
html_keep(struct growbuf *k, const struct web_form *q, const char *const *names)
{
	const char	*v;

	for (; *names != NULL; names++) {
		if ((v = web_form_get(q, *names)) == NULL || *v == '\0')
			continue;
		if (k->gb_len > 0)
			growbuf_puts(k, "&amp;");
		growbuf_puts(k, *names);
		growbuf_puts(k, "=");
		wbuf_urlenc(k, v);
	}
}

void
html_deployments(struct growbuf *b, const struct web_view *v, json_t *o,
    const struct web_form *q)
{
	static const char *const keepnames[] = { "state", "namespace", "job",
	    NULL };
	struct growbuf	 keep;
	json_t		*it;
	const char	*state = web_form_get(q, "state");
	size_t		 i;

	html_begin(b, v);
	growbuf_puts(b, "<h1>Deployments</h1>"
	    "<form class=\"filter\" method=\"get\" action=\"/deployments\">"
	    "<select name=\"state\"><option value=\"\">any state</option>");
	for (i = 0; html_states[i] != NULL; i++)
		wbuf_htmlf(b, "<option%s>%s</option>", state != NULL &&
		    strcmp(state, html_states[i]) == 0 ? " selected" : "",
		    html_states[i]);
	wbuf_htmlf(b, "</select><input type=\"text\" name=\"namespace\" "
	    "placeholder=\"namespace\" value=\"%s\"><input type=\"text\" "
	    "name=\"job\" placeholder=\"job\" value=\"%s\">"
	    "<button type=\"submit\">Filter</button></form>",
	    web_form_get(q, "namespace"), web_form_get(q, "job"));
	growbuf_puts(b, "<table id=\"deployments\"><tr><th>Deployment</th>"
	    "<th>Job</th><th>State</th><th>Commit</th><th>Policy</th>"
	    "<th>Created</th><th>Updated</th><th>Reason</th></tr>");
	json_array_foreach(json_object_get(o, "items"), i, it) {
		growbuf_puts(b, "<tr>");
		html_deploy_cells(b, it);
		growbuf_puts(b, "<td>");
		html_state(b, jstr(it, "state"));
		growbuf_puts(b, "</td><td>");
		html_commit(b, jstr(it, "commit"));
		wbuf_htmlf(b, "</td><td>%s</td><td>", jstr(it, "policy"));
		html_time(b, json_object_get(it, "created_at"));
		growbuf_puts(b, "</td><td>");
		html_time(b, json_object_get(it, "updated_at"));
		wbuf_htmlf(b, "</td><td>%s</td></tr>", jstr(it, "reason"));
	}
	html_table_end(b, o, "No deployment.");
	growbuf_init(&keep);
	html_keep(&keep, q, keepnames);
	html_pager(b, o, "/deployments", keep.gb_buf);
	growbuf_free(&keep);
	html_end(b);
}

/* The diff: Nomad's plan diff, redacted by the master. */

static int
html_diff_changes(json_t *o, int depth)
{
	json_t		*f, *sub;
	const char	*list[] = { "Fields", "Objects", "TaskGroups",
	    "Tasks" };
	size_t		 i, k;
	int		 n = 0;

	if (depth > HTML_DIFF_DEPTH)
		return 0;
	json_array_foreach(json_object_get(o, "Fields"), i, f)
		if (jstr(f, "Type") != NULL && strcmp(jstr(f, "Type"),
		    "None") != 0)
			n++;
	for (k = 1; k < sizeof(list) / sizeof(list[0]); k++)
		json_array_foreach(json_object_get(o, list[k]), i, sub)
			n += html_diff_changes(sub, depth + 1);
	return n;
}

/* The fields of one object; defaults (a new job's) only when asked. */
static void
html_diff_fields(struct growbuf *b, json_t *fields, int defaults)
{
	json_t		*f, *a;
	const char	*t;
	size_t		 i, k;
	int		 any = 0;

	json_array_foreach(fields, i, f) {
		if ((t = jstr(f, "Type")) == NULL || strcmp(t, "None") == 0)
			continue;
		if (json_is_true(json_object_get(f, "Default")) != defaults)
			continue;
		if (!any++)
			growbuf_puts(b, "<table>");
		wbuf_htmlf(b, "<tr class=\"t-%s\"><td>%s</td>"
		    "<td><code>%s</code></td><td class=\"old\">%s</td>"
		    "<td>→</td><td class=\"new\">%s</td><td class=\"muted\">",
		    t, t, jstr(f, "Name"), jstr(f, "Old"), jstr(f, "New"));
		json_array_foreach(json_object_get(f, "Annotations"), k, a)
			wbuf_htmlf(b, "%s%s", k > 0 ? ", " : "",
			    json_string_value(a));
		growbuf_puts(b, "</td></tr>");
	}
	if (any)
		growbuf_puts(b, "</table>");
}

static void	 html_diff_obj(struct growbuf *, json_t *, const char *, int,
		    int);

/* Fields and objects that only repeat Nomad's defaults: folded. */
static void
html_diff_defaults(struct growbuf *b, json_t *o, int depth)
{
	json_t	*f, *sub;
	size_t	 i;
	int	 n = 0;

	json_array_foreach(json_object_get(o, "Fields"), i, f)
		n += json_is_true(json_object_get(f, "Default"));
	json_array_foreach(json_object_get(o, "Objects"), i, sub)
		n += json_is_true(json_object_get(sub, "Default"));
	if (n == 0)
		return;
	wbuf_htmlf(b, "<details class=\"defaults\"><summary class=\"muted\">"
	    "%d of Nomad's defaults</summary>", n);
	html_diff_fields(b, json_object_get(o, "Fields"), 1);
	json_array_foreach(json_object_get(o, "Objects"), i, sub)
		if (json_is_true(json_object_get(sub, "Default")))
			html_diff_obj(b, sub, "", depth + 1, 1);
	growbuf_puts(b, "</details>");
}

static void
html_diff_obj(struct growbuf *b, json_t *o, const char *kind, int depth,
    int folded)
{
	json_t		*sub, *n;
	const char	*t = jstr(o, "Type"), *k;
	size_t		 i;

	if (depth > HTML_DIFF_DEPTH || !json_is_object(o) ||
	    (t != NULL && strcmp(t, "None") == 0 &&
	    html_diff_changes(o, depth) == 0))
		return;
	wbuf_htmlf(b, "<div class=\"obj\"><div class=\"head\"><span "
	    "class=\"t-%s\">%s</span> %s <b>%s</b>", t != NULL ? t : "",
	    t != NULL ? t : "", kind, jstr(o, "Name") != NULL ?
	    jstr(o, "Name") : jstr(o, "ID"));
	json_object_foreach(json_object_get(o, "Updates"), k, n)
		wbuf_htmlf(b, " <span class=\"muted\">%s: %lld</span>", k,
		    (long long)json_integer_value(n));
	growbuf_puts(b, "</div>");
	html_diff_fields(b, json_object_get(o, "Fields"), folded);
	json_array_foreach(json_object_get(o, "Objects"), i, sub)
		if (folded || !json_is_true(json_object_get(sub, "Default")))
			html_diff_obj(b, sub, "", depth + 1, folded);
	json_array_foreach(json_object_get(o, "TaskGroups"), i, sub)
		html_diff_obj(b, sub, "task group", depth + 1, 0);
	json_array_foreach(json_object_get(o, "Tasks"), i, sub)
		html_diff_obj(b, sub, "task", depth + 1, 0);
	if (!folded)
		html_diff_defaults(b, o, depth);
	growbuf_puts(b, "</div>");
}

/*
 * The git context, next to Nomad's plan diff: the commit (subject,
 * author, time, a link to the web UI when the repository has one) and
 * the job file's change in git since the commit last deployed.
 */
static void
html_git(struct growbuf *b, json_t *g)
{
	const char	*url, *change, *p, *nl;

	if (!json_is_object(g))
		return;
	growbuf_puts(b, "<h2>Git</h2><section class=\"box\" id=\"git\"><p>");
	wbuf_htmlf(b, "<strong class=\"subject\">%s</strong>",
	    jstr(g, "subject") != NULL ? jstr(g, "subject") : "");
	if (jstr(g, "author") != NULL)
		wbuf_htmlf(b, " by <span class=\"author\">%s</span>",
		    jstr(g, "author"));
	if (json_is_string(json_object_get(g, "time"))) {
		growbuf_puts(b, ", ");
		html_time(b, json_object_get(g, "time"));
	}
	growbuf_puts(b, " &middot; commit ");
	html_commit(b, jstr(g, "commit"));
	/* Built by nopsd from its config and a hex id; checked anyway. */
	url = jstr(g, "url");
	if (url != NULL && (strncmp(url, "https://", 8) == 0 ||
	    strncmp(url, "http://", 7) == 0))
		wbuf_htmlf(b, " &middot; <a class=\"commit-link\" href=\"%s\" "
		    "rel=\"noopener noreferrer\">view the commit</a>", url);
	growbuf_puts(b, "</p>");
	if (jstr(g, "path") != NULL)
		wbuf_htmlf(b, "<p>Job file <code>%s</code></p>",
		    jstr(g, "path"));
	wbuf_htmlf(b, "<p class=\"%s\" id=\"git-summary\">%s</p>",
	    json_is_true(json_object_get(g, "changed")) ? "git-side" :
	    json_is_false(json_object_get(g, "changed")) ? "outside" : "muted",
	    jstr(g, "summary") != NULL ? jstr(g, "summary") : "");
	if ((change = jstr(g, "change")) != NULL) {
		growbuf_puts(b, "<pre class=\"gitdiff\">");
		for (p = change; *p != '\0'; p = nl) {
			if ((nl = strchr(p, '\n')) != NULL)
				nl++;
			else
				nl = p + strlen(p);
			wbuf_htmlf(b, "<span class=\"%s\">",
			    p[0] == '+' && p[1] != '+' ? "gd-add" :
			    p[0] == '-' && p[1] != '-' ? "gd-del" :
			    p[0] == '@' ? "gd-hunk" : "gd-ctx");
			wbuf_htmln(b, p, nl - p);
			growbuf_puts(b, "</span>");
		}
		growbuf_puts(b, "</pre>");
	}
	growbuf_puts(b, "</section>");
}

void
html_diff(struct growbuf *b, json_t *diff)
{
	if (!json_is_object(diff)) {
		growbuf_puts(b, "<p class=\"muted\">No diff.</p>");
		return;
	}
	growbuf_puts(b, "<div class=\"diff\" id=\"diff\">");
	html_diff_obj(b, diff, "job", 0, 0);
	growbuf_puts(b, "</div>");
}

/* The hooks of one phase, in words. */
static void
html_plan_hooks(struct growbuf *b, json_t *hooks, const char *phase,
    const char *what)
{
	json_t	*h;
	size_t	 i;
	int	 n = 0;

	json_array_foreach(hooks, i, h) {
		if (jstr(h, "phase") == NULL || strcmp(jstr(h, "phase"),
		    phase) != 0)
			continue;
		if (n++ == 0)
			wbuf_htmlf(b, "<li>Run the %s hooks, in order, each to "
			    "its end: ", what);
		else
			growbuf_puts(b, ", then ");
		wbuf_htmlf(b, "<b>%s</b> (as <code>%s</code>, at most %lld "
		    "s)", jstr(h, "hook"), jstr(h, "revision"),
		    jint(h, "timeout"));
	}
	if (n > 0)
		growbuf_puts(b, ". A hook that fails fails the "
		    "deployment.</li>");
}

/* What approving does, in words, from the deployment as frozen. */
static void
html_plan(struct growbuf *b, json_t *d)
{
	json_t		*diff = json_object_get(d, "diff");
	const char	*t = jstr(diff, "Type");
	char		 hash[13];
	int		 changes = html_diff_changes(diff, 0);

	strlcpy(hash, jstr(d, "spec_hash") != NULL ? jstr(d, "spec_hash") :
	    "", sizeof(hash));
	growbuf_puts(b, "<ol class=\"plan\" id=\"plan\">");
	html_plan_hooks(b, json_object_get(d, "hooks"), "pre", "pre-deploy");
	wbuf_htmlf(b, "<li>Plan job <b>%s</b> in namespace <b>%s</b> again "
	    "and register it as it is in git at commit ", jstr(d, "job"),
	    jstr(d, "namespace"));
	html_commit(b, jstr(d, "commit"));
	wbuf_htmlf(b, " (spec <code>%s</code>), only if the plan still shows "
	    "the change below; if the job changed in Nomad meanwhile, nothing "
	    "is registered and the deployment fails.</li>", hash);
	if (t != NULL && strcmp(t, "Added") == 0)
		growbuf_puts(b, "<li>This <b>creates</b> the job: it does not "
		    "run in Nomad yet.</li>");
	else if (t != NULL && strcmp(t, "Deleted") == 0)
		growbuf_puts(b, "<li>The plan shows the job "
		    "<b>deleted</b>.</li>");
	else
		wbuf_htmlf(b, "<li>This <b>changes %d field%s</b> of the "
		    "running job (the diff below); group counts an autoscaler "
		    "manages stay as they are.</li>", changes,
		    changes == 1 ? "" : "s");
	growbuf_puts(b, "<li>Wait until the new version is healthy; "
	    "canaries, if the job has any, wait for a promotion.</li>");
	html_plan_hooks(b, json_object_get(d, "hooks"), "post", "post-deploy");
	growbuf_puts(b, "<li>If a step fails, the deployment fails and the job "
	    "stays blocked until a new commit or a retry. nops never stops "
	    "or rolls back the job.</li></ol>");
}

static void
html_deploy_actions(struct growbuf *b, const struct web_view *v, json_t *d)
{
	char	 base[64];

	snprintf(base, sizeof(base), "/deployments/%lld", jint(d, "id"));
	html_actions(b, v, json_object_get(d, "actions"), base);
}

/*
 * Health progress: the Nomad deployment of the registered version, per
 * group and per allocation, with the last task events.  Live through the
 * page's refresh.
 */
static void
html_health(struct growbuf *b, json_t *h)
{
	json_t		*nd, *g, *a, *ev;
	size_t		 i, j;
	char		 id8[9];

	if (!json_is_object(h))
		return;
	growbuf_puts(b, "<h2>Health</h2><section class=\"box\" id=\"health\">");
	nd = json_object_get(h, "nomad_deployment");
	if (json_is_object(nd)) {
		strlcpy(id8, jstr(nd, "id") != NULL ? jstr(nd, "id") : "",
		    sizeof(id8));
		wbuf_htmlf(b, "<p>Nomad deployment "
		    "<code title=\"%s\">%s</code> of version %lld: ",
		    jstr(nd, "id"), id8, jint(nd, "job_version"));
		html_state(b, jstr(nd, "status"));
		wbuf_htmlf(b, " <span class=\"muted\">%s</span></p>",
		    jstr(nd, "description"));
	} else
		wbuf_htmlf(b, "<p>Version %lld, without a Nomad deployment: "
		    "judged by its allocations.</p>", jint(h, "job_version"));
	growbuf_puts(b, "<table id=\"health-groups\"><tr><th>Group</th>"
	    "<th>Desired</th><th>Placed</th><th>Healthy</th>"
	    "<th>Unhealthy</th><th>Canaries</th></tr>");
	json_array_foreach(json_object_get(h, "groups"), i, g) {
		wbuf_htmlf(b, "<tr data-group=\"%s\"><td>%s</td>"
		    "<td class=\"num\">%lld</td><td class=\"num\">%lld</td>"
		    "<td class=\"num healthy\">%lld</td>"
		    "<td class=\"num unhealthy\">%lld</td><td>",
		    jstr(g, "name"), jstr(g, "name"), jint(g, "desired"),
		    jint(g, "placed"), jint(g, "healthy"),
		    jint(g, "unhealthy"));
		if (jint(g, "desired_canaries") > 0)
			wbuf_htmlf(b, "%lld of %lld placed%s",
			    jint(g, "placed_canaries"),
			    jint(g, "desired_canaries"),
			    json_is_true(json_object_get(g, "promoted")) ?
			    ", promoted" : "");
		else
			growbuf_puts(b, "<span class=\"muted\">—</span>");
		growbuf_puts(b, "</td></tr>");
	}
	growbuf_puts(b, "</table>");
	if (json_array_size(json_object_get(h, "allocations")) > 0) {
		growbuf_puts(b, "<table id=\"health-allocs\"><tr>"
		    "<th>Allocation</th><th>Group</th><th>Status</th>"
		    "<th>Healthy</th><th>Last events</th></tr>");
		json_array_foreach(json_object_get(h, "allocations"), i, a) {
			strlcpy(id8, jstr(a, "id") != NULL ? jstr(a, "id") :
			    "", sizeof(id8));
			wbuf_htmlf(b, "<tr><td><code title=\"%s\">%s</code>"
			    "%s</td><td>%s</td><td>", jstr(a, "id"),
			    id8, json_is_true(json_object_get(a,
			    "canary")) ? " (canary)" : "", jstr(a, "group"));
			html_state(b, jstr(a, "client_status"));
			wbuf_htmlf(b, "</td><td>%s</td><td>",
			    json_is_true(json_object_get(a, "healthy")) ?
			    "yes" : json_is_false(json_object_get(a,
			    "healthy")) ? "no" : "not yet");
			json_array_foreach(json_object_get(a, "events"), j,
			    ev)
				wbuf_htmlf(b, "<div>%s: %s "
				    "<span class=\"muted\">%s</span></div>",
				    jstr(ev, "type"), jstr(ev, "message"),
				    jstr(ev, "task"));
			growbuf_puts(b, "</td></tr>");
		}
		growbuf_puts(b, "</table>");
	}
	growbuf_puts(b, "<p class=\"muted\">As Nomad said ");
	html_time(b, json_object_get(h, "updated_at"));
	growbuf_puts(b, ".</p></section>");
}

/* A deployment's heading: what it deploys, from where, and its reason. */
static void
html_deployment_head(struct growbuf *b, json_t *d)
{
	const char	*state = jstr(d, "state");

	wbuf_htmlf(b, "<h1>Deployment #%lld ", jint(d, "id"));
	html_state(b, state);
	if (jstr(d, "namespace") != NULL && jstr(d, "namespace")[0] == '\0' &&
	    jstr(d, "job") != NULL)
		/* A deploy plan's (kind plan): its job is the repository. */
		wbuf_htmlf(b, "</h1><p>Deploy plan <a href=\"/hosts\">%s</a>",
		    jstr(d, "job"));
	else {
		growbuf_puts(b, "</h1><p>Job ");
		html_job_link(b, jstr(d, "namespace"), jstr(d, "job"));
	}
	wbuf_htmlf(b, " from repository %s at commit ", jstr(d,
	    "repository"));
	html_commit(b, jstr(d, "commit"));
	wbuf_htmlf(b, "; policy %s.</p>", jstr(d, "policy"));
	if (jstr(d, "reason") != NULL)
		html_message(b, state != NULL && (strcmp(state, "failed") ==
		    0) ? "error" : "info", jstr(d, "reason"));
}

/* A row of the details whose value is a time, where the key is one. */
static void
html_deployment_time(struct growbuf *b, json_t *d, const char *key,
    const char *title)
{
	if (!json_is_string(json_object_get(d, key)))
		return;
	wbuf_htmlf(b, "<tr><th>%s</th><td>", title);
	html_time(b, json_object_get(d, key));
	growbuf_puts(b, "</td></tr>");
}

/* A deployment's details: hash, times, approval, Nomad's names. */
static void
html_deployment_details(struct growbuf *b, json_t *d)
{
	growbuf_puts(b, "<section class=\"box\"><table id=\"details\">");
	wbuf_htmlf(b, "<tr><th>Spec hash</th><td><code>%s</code></td></tr>"
	    "<tr><th>Created</th><td>", jstr(d, "spec_hash"));
	html_time(b, json_object_get(d, "created_at"));
	growbuf_puts(b, "</td></tr><tr><th>Updated</th><td>");
	html_time(b, json_object_get(d, "updated_at"));
	growbuf_puts(b, "</td></tr>");
	if (jstr(d, "approved_by") != NULL) {
		wbuf_htmlf(b, "<tr><th>Approved by</th><td>%s, ",
		    jstr(d, "approved_by"));
		html_time(b, json_object_get(d, "approved_at"));
		growbuf_puts(b, "</td></tr>");
	}
	if (json_is_integer(json_object_get(d, "retry_of"))) {
		growbuf_puts(b, "<tr><th>Retry of</th><td>");
		html_deploy_link(b, json_object_get(d, "retry_of"));
		growbuf_puts(b, "</td></tr>");
	}
	if (jstr(d, "nomad_deployment") != NULL)
		wbuf_htmlf(b, "<tr><th>Nomad deployment</th><td><code>%s"
		    "</code></td></tr>", jstr(d, "nomad_deployment"));
	if (json_is_integer(json_object_get(d, "job_version")))
		wbuf_htmlf(b, "<tr><th>Job version</th><td>%lld</td></tr>",
		    jint(d, "job_version"));
	html_deployment_time(b, d, "timeout_at", "Times out");
	html_deployment_time(b, d, "ended_at", "Ended");
	growbuf_puts(b, "</table></section>");
}

/* One hook's run: state, exit, times, error and its output. */
static void
html_hook_run(struct growbuf *b, json_t *run)
{
	if (!json_is_object(run)) {
		growbuf_puts(b, "<span class=\"muted\">not run</span></td>"
		    "<td></td><td></td><td></td><td></td>");
		return;
	}
	html_state(b, jstr(run, "state"));
	if (json_is_integer(json_object_get(run, "exit_code")))
		wbuf_htmlf(b, "</td><td>%lld", jint(run, "exit_code"));
	else
		growbuf_puts(b, "</td><td>");
	growbuf_puts(b, "</td><td>");
	html_time(b, json_object_get(run, "started_at"));
	growbuf_puts(b, "</td><td>");
	html_time(b, json_object_get(run, "ended_at"));
	wbuf_htmlf(b, "</td><td>%s", jstr(run, "error"));
	if (jstr(run, "output") != NULL && *jstr(run, "output") != '\0')
		wbuf_htmlf(b, "<details class=\"output\"><summary>output "
		    "(last 64 KiB, redacted)</summary><pre>%s</pre>"
		    "</details>", jstr(run, "output"));
	growbuf_puts(b, "</td>");
}

/* A deployment's hooks and their runs, where it has any. */
static void
html_deployment_hooks(struct growbuf *b, json_t *d)
{
	json_t	*it;
	size_t	 i;

	if (json_array_size(json_object_get(d, "hooks")) == 0)
		return;
	growbuf_puts(b, "<h2>Hooks</h2><table id=\"hooks\"><tr>"
	    "<th>Phase</th><th>#</th><th>Hook</th><th>Revision</th>"
	    "<th>Run</th><th>Exit</th><th>Started</th><th>Ended</th>"
	    "<th>Error</th></tr>");
	json_array_foreach(json_object_get(d, "hooks"), i, it) {
		wbuf_htmlf(b, "<tr><td>%s</td><td>%lld</td><td>%s</td>"
		    "<td><code>%s</code></td><td>", jstr(it, "phase"),
		    jint(it, "position"), jstr(it, "hook"),
		    jstr(it, "revision"));
		html_hook_run(b, json_object_get(it, "run"));
		growbuf_puts(b, "</tr>");
	}
	growbuf_puts(b, "</table>");
}

void
html_deployment(struct growbuf *b, const struct web_view *v, json_t *d,
    json_t *steps)
{
	json_t		*it;
	const char	*state = jstr(d, "state");
	size_t		 i;

	html_begin(b, v);
	html_deployment_head(b, d);
	html_deploy_actions(b, v, d);
	if (json_is_integer(json_object_get(d, "id")))
		wbuf_htmlf(b, "<p><a id=\"left-behind-link\" href=\""
		    "/deployments/%ld/left-behind\">Objects its cleanups left "
		    "behind</a></p>", (long)jint(d, "id"));

	/* A deploy plan's: its phases and host steps. */
	if (steps != NULL)
		html_plan_steps(b, steps);
	else {
		wbuf_htmlf(b, "<h2>%s</h2>", state != NULL && strcmp(state,
		    "pending_approval") == 0 ? "What approve will do" :
		    "What this deployment does");
		html_plan(b, d);
	}
	html_deployment_details(b, d);
	html_health(b, json_object_get(d, "health"));
	html_git(b, json_object_get(d, "git"));
	growbuf_puts(b, "<h2>Diff (secrets redacted)</h2>");
	html_diff(b, json_object_get(d, "diff"));
	html_deployment_hooks(b, d);

	growbuf_puts(b, "<h2>Events</h2><table id=\"events\"><tr><th>When</th>"
	    "<th>Who</th><th>What</th><th>Detail</th></tr>");
	json_array_foreach(json_object_get(d, "events"), i, it) {
		growbuf_puts(b, "<tr><td>");
		html_time(b, json_object_get(it, "at"));
		wbuf_htmlf(b, "</td><td>%s</td><td>%s</td><td>%s</td></tr>",
		    jstr(it, "actor"), jstr(it, "action"),
		    jstr(it, "detail"));
	}
	growbuf_puts(b, "</table>");
	html_end(b);
}

/* An event's target as a link, when it names a page of ours. */
static void
html_target(struct growbuf *b, const char *t)
{
	char		 ns[WEB_SEG_MAX];
	const char	*p, *slash;
	size_t		 n;

	if (t == NULL) {
		growbuf_puts(b, "<span class=\"muted\">—</span>");
		return;
	}
	if (strncmp(t, "deployment/", 11) == 0 && t[11] != '\0' &&
	    strspn(t + 11, "0123456789") == strlen(t + 11) &&
	    strlen(t + 11) <= 18) {
		wbuf_htmlf(b, "<a href=\"/deployments/%s\">%s</a>", t + 11, t);
		return;
	}
	if (strncmp(t, "job/", 4) == 0 && (slash = strchr(t + 4, '/')) !=
	    NULL && (n = slash - (t + 4)) > 0 && n < sizeof(ns) &&
	    slash[1] != '\0') {
		p = t + 4;
		memcpy(ns, p, n);
		ns[n] = '\0';
		growbuf_puts(b, "<a href=\"/jobs/");
		wbuf_urlenc(b, ns);
		growbuf_puts(b, "/");
		wbuf_urlenc(b, slash + 1);
		wbuf_htmlf(b, "\">%s</a>", t);
		return;
	}
	wbuf_html(b, t);
}

void
html_activity(struct growbuf *b, const struct web_view *v, json_t *o,
    const char *target)
{
	struct growbuf	 keep;
	json_t		*it;
	size_t		 i;

	html_begin(b, v);
	wbuf_htmlf(b, "<h1>Activity</h1><form class=\"filter\" method=\"get\" "
	    "action=\"/activity\"><input type=\"text\" name=\"target\" "
	    "placeholder=\"target, e.g. deployment/12\" value=\"%s\">"
	    "<button type=\"submit\">Filter</button></form>", target);
	growbuf_puts(b, "<table id=\"events\"><tr><th>#</th><th>When</th>"
	    "<th>Who</th><th>What</th><th>Target</th><th>Detail</th></tr>");
	json_array_foreach(json_object_get(o, "items"), i, it) {
		wbuf_htmlf(b, "<tr><td class=\"num\">%lld</td><td>",
		    jint(it, "id"));
		html_time(b, json_object_get(it, "at"));
		wbuf_htmlf(b, "</td><td>%s</td><td>%s</td><td>",
		    jstr(it, "actor"), jstr(it, "action"));
		html_target(b, jstr(it, "target"));
		wbuf_htmlf(b, "</td><td>%s</td></tr>", jstr(it, "detail"));
	}
	html_table_end(b, o, "No event.");
	growbuf_init(&keep);
	if (target != NULL && *target != '\0') {
		growbuf_puts(&keep, "target=");
		wbuf_urlenc(&keep, target);
	}
	html_pager(b, o, "/activity", keep.gb_buf);
	growbuf_free(&keep);
	html_end(b);
}
