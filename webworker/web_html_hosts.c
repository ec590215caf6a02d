/*
 * The dashboard's hosts of deploy plans: the Hosts page (every plan, its
 * phases and hosts, every host's wanted and current system) and a plan
 * deployment's phase progress on its page.
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "web.h"

#define HS(s)	((s) != NULL ? (s) : "")

/* A store path, shortened to its name with the hash in a title. */
static void
html_store_path(struct growbuf *b, const char *p)
{
	const char	*name;

	if (p == NULL) {
		growbuf_puts(b, "<span class=\"muted\">—</span>");
		return;
	}
	name = strncmp(p, "/nix/store/", 11) == 0 && strlen(p) > 44 ?
	    p + 44 : p;
	wbuf_htmlf(b, "<code title=\"%s\">%s</code>", p, name);
}

void
html_hosts(struct growbuf *b, const struct web_view *v, json_t *hosts,
    json_t *plans)
{
	json_t		*it, *ph, *h, *e;
	size_t		 i, j, k;

	html_begin(b, v);
	growbuf_puts(b, "<h1>Hosts</h1>");
	json_array_foreach(json_object_get(plans, "items"), i, it) {
		wbuf_htmlf(b, "<section class=\"box plan\"><h2>Plan of %s ",
		    HS(jstr(it, "repository")));
		html_state(b, jstr(it, "state"));
		growbuf_puts(b, "</h2><p>");
		wbuf_htmlf(b, "%s at commit ", HS(jstr(it, "file")));
		html_commit(b, jstr(it, "commit"));
		wbuf_htmlf(b, "; policy %s, goal %s.</p>",
		    jstr(it, "policy") != NULL ? jstr(it, "policy") : "—",
		    jstr(it, "goal") != NULL ? jstr(it, "goal") : "—");
		json_array_foreach(json_object_get(it, "errors"), j, e)
			html_message(b, "error", json_string_value(e));
		json_array_foreach(json_object_get(it, "warnings"), j, e)
			html_message(b, "info", json_string_value(e));
		/* EachHost, drawn from the plan's actions like any other. */
		if (json_array_size(json_object_get(it, "actions")) > 0) {
			struct growbuf	 base;

			growbuf_init(&base);
			growbuf_puts(&base, "/hosts/");
			wbuf_urlenc(&base, HS(jstr(it, "repository")));
			if (!base.gb_err)
				html_actions(b, v, json_object_get(it,
				    "actions"), base.gb_buf);
			growbuf_free(&base);
		}
		if (json_array_size(json_object_get(it, "phases")) > 0) {
			growbuf_puts(b, "<ol class=\"phases\">");
			json_array_foreach(json_object_get(it, "phases"), j,
			    ph) {
				wbuf_htmlf(b, "<li><strong>%s</strong>%s: ",
				    HS(jstr(ph, "name")), json_object_get(ph,
				    "include") != NULL && !json_is_null(
				    json_object_get(ph, "include")) ?
				    " (rule)" : " (default)");
				json_array_foreach(json_object_get(ph,
				    "hosts"), k, h)
					wbuf_htmlf(b, "%s%s", k > 0 ? ", " : "",
					    json_string_value(h));
				if (json_array_size(json_object_get(ph,
				    "hosts")) == 0)
					growbuf_puts(b, "<span class=\"muted\">"
					    "no host</span>");
				growbuf_puts(b, "</li>");
			}
			growbuf_puts(b, "</ol>");
		}
		growbuf_puts(b, "</section>");
	}
	growbuf_puts(b, "<table id=\"hosts\"><tr><th>Host</th><th>Plan</th>"
	    "<th>Phase</th><th>State</th><th>Wanted</th><th>Current</th>"
	    "<th>Last step</th></tr>");
	json_array_foreach(json_object_get(hosts, "items"), i, it) {
		growbuf_puts(b, "<tr><td>");
		html_host_link(b, jstr(it, "repository"), jstr(it, "name"));
		wbuf_htmlf(b, "</td><td>%s</td><td>%s</td><td>",
		    HS(jstr(it, "repository")),
		    jstr(it, "phase") != NULL ? jstr(it, "phase") : "—");
		html_state(b, jstr(it, "state"));
		growbuf_puts(b, "</td><td>");
		html_store_path(b, jstr(it, "wanted"));
		growbuf_puts(b, "</td><td>");
		html_store_path(b, jstr(it, "current"));
		wbuf_htmlf(b, "</td><td>%s</td></tr>",
		    jstr(it, "error") != NULL ? jstr(it, "error") :
		    HS(jstr(it, "last_step")));
	}
	html_table_end(b, hosts, "No deploy plan in git.");
	html_end(b);
}

void
html_host_link(struct growbuf *b, const char *repo, const char *host)
{
	html_pair_link(b, "host", repo, host, 0);
}

/*
 * One host: what nops saw of it, and its actions (the operations of its
 * plan as deployed), drawn from the list like a job's.
 */
void
html_host(struct growbuf *b, const struct web_view *v, json_t *h)
{
	struct growbuf	 base;

	html_begin(b, v);
	wbuf_htmlf(b, "<h1>Host %s <span class=\"muted\">of plan %s</span> ",
	    HS(jstr(h, "name")), HS(jstr(h, "repository")));
	html_state(b, jstr(h, "state"));
	growbuf_puts(b, "</h1><table id=\"host\"><tr><th>Phase</th><td>");
	wbuf_htmlf(b, "%s</td></tr><tr><th>Address</th><td>%s:%ld</td></tr>"
	    "<tr><th>Wanted</th><td>", jstr(h, "phase") != NULL ?
	    jstr(h, "phase") : "—", HS(jstr(h, "address")),
	    (long)jint(h, "port"));
	html_store_path(b, jstr(h, "wanted"));
	growbuf_puts(b, "</td></tr><tr><th>Current</th><td>");
	html_store_path(b, jstr(h, "current"));
	wbuf_htmlf(b, "</td></tr><tr><th>Last step</th><td>%s</td></tr>"
	    "</table>", jstr(h, "error") != NULL ? jstr(h, "error") :
	    HS(jstr(h, "last_step")));
	growbuf_init(&base);
	growbuf_puts(&base, "/hosts/");
	wbuf_urlenc(&base, HS(jstr(h, "repository")));
	growbuf_puts(&base, "/");
	wbuf_urlenc(&base, HS(jstr(h, "name")));
	growbuf_puts(b, "<h2>Operations</h2>");
	if (json_array_size(json_object_get(h, "actions")) == 0)
		growbuf_puts(b, "<p class=\"muted\">None: the plan as deployed "
		    "declares no operation for this host, or nothing of it "
		    "is deployed.</p>");
	else if (!base.gb_err)
		html_actions(b, v, json_object_get(h, "actions"),
		    base.gb_buf);
	growbuf_free(&base);
	html_end(b);
}

/* EachHost's answer: each host's state, exit code and output. */
void
html_each_result(struct growbuf *b, const struct web_view *v, json_t *r)
{
	json_t		*it, *code;
	size_t		 i;

	html_begin(b, v);
	wbuf_htmlf(b, "<h1>Operation %s on the hosts of plan %s</h1>",
	    HS(jstr(r, "operation")), HS(jstr(r, "repository")));
	wbuf_htmlf(b, "<p id=\"each-counts\">%ld succeeded, %ld failed, %ld "
	    "not started.</p>", (long)jint(r, "succeeded"),
	    (long)jint(r, "failed"), (long)jint(r, "not_started"));
	if (jstr(r, "error") != NULL)
		html_message(b, "error", jstr(r, "error"));
	if (json_is_true(json_object_get(r, "sensitive")))
		html_message(b, "warn", "Sensitive: no output is shown or "
		    "kept.");
	growbuf_puts(b, "<table id=\"each\"><tr><th>Host</th><th>State</th>"
	    "<th>Exit code</th><th>Output</th></tr>");
	json_array_foreach(json_object_get(r, "hosts"), i, it) {
		growbuf_puts(b, "<tr><td>");
		html_host_link(b, jstr(r, "repository"), jstr(it, "name"));
		growbuf_puts(b, "</td><td>");
		html_state(b, jstr(it, "state"));
		code = json_object_get(it, "exit_code");
		if (json_is_integer(code))
			wbuf_htmlf(b, "</td><td>%ld</td>",
			    (long)json_integer_value(code));
		else
			wbuf_htmlf(b, "</td><td>%s</td>",
			    HS(jstr(it, "error")));
		wbuf_htmlf(b, "<td><pre class=\"output\">%s</pre></td></tr>",
		    HS(jstr(it, "output")));
	}
	growbuf_puts(b, "</table>");
	html_end(b);
}

/* A plan deployment's steps, phase by phase. */
void
html_plan_steps(struct growbuf *b, json_t *s)
{
	json_t		*it;
	const char	*phase = NULL;
	size_t		 i;

	growbuf_puts(b, "<h2>Phases</h2><table id=\"steps\"><tr><th>Phase</th>"
	    "<th>Host</th><th>Step</th><th>Goal</th><th>State</th>"
	    "<th>System</th><th>Error</th></tr>");
	json_array_foreach(json_object_get(s, "steps"), i, it) {
		wbuf_htmlf(b, "<tr><td>%s</td><td>%s</td><td>%s</td>"
		    "<td>%s</td><td>", phase != NULL &&
		    strcmp(phase, HS(jstr(it, "phase"))) == 0 ? "" :
		    HS(jstr(it, "phase")), HS(jstr(it, "host")),
		    HS(jstr(it, "step")), HS(jstr(it, "goal")));
		phase = HS(jstr(it, "phase"));
		html_state(b, jstr(it, "state"));
		growbuf_puts(b, "</td><td>");
		html_store_path(b, jstr(it, "system"));
		wbuf_htmlf(b, "</td><td>%s</td></tr>",
		    HS(jstr(it, "error")));
	}
	growbuf_puts(b, "</table>");
}
