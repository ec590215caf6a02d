/*
 * The controls of a job or a deployment, drawn from its "actions" list
 * alone: one form per enabled action (with the fields its input schema
 * asks for), one disabled button with the reason for each other.  No
 * action is known here by name, so a new action needs no code.
 *
 * A form posts to <base>/actions/<id>; its fields are named for their
 * JSON type ("in.<key>" a string, "in.n.<key>" a number, "in.b.<key>" a
 * boolean, "input_json" the whole input as JSON text), which
 * web_dash.c turns back into the input of the generic procedure.
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "web.h"

#define HTML_FIELD_KEY_MAX	(WEB_FORM_NAME_MAX - 5)	/* "in.n." */

/* A property a form field can carry; 0: the input needs JSON text. */
static int
html_simple_prop(const char *key, json_t *p)
{
	const char	*type = jstr(p, "type");

	if (strlen(key) > HTML_FIELD_KEY_MAX)
		return 0;
	if (json_object_get(p, "const") != NULL)
		return json_is_string(json_object_get(p, "const"));
	return type != NULL && (strcmp(type, "string") == 0 ||
	    strcmp(type, "integer") == 0 || strcmp(type, "number") == 0 ||
	    strcmp(type, "boolean") == 0);
}

static int
html_required(json_t *schema, const char *key)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(schema, "required"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), key) == 0)
			return 1;
	return 0;
}

static void
html_action_fields(struct growbuf *b, json_t *schema)
{
	json_t		*props, *p, *e;
	const char	*key, *type, *title;
	size_t		 i;
	int		 simple = 1, req;

	props = json_object_get(schema, "properties");
	json_object_foreach(props, key, p)
		if (!html_simple_prop(key, p))
			simple = 0;
	if (!simple || (json_object_size(props) == 0 &&
	    json_object_get(schema, "type") != NULL &&
	    json_object_get(schema, "properties") == NULL)) {
		growbuf_puts(b, "<textarea name=\"input_json\" rows=\"3\" "
		    "cols=\"40\" placeholder=\"input (JSON)\"");
		if (json_array_size(json_object_get(schema, "required")) > 0)
			growbuf_puts(b, " required");
		growbuf_puts(b, ">{}</textarea>");
		return;
	}
	json_object_foreach(props, key, p) {
		type = jstr(p, "type");
		title = jstr(p, "title") != NULL ? jstr(p, "title") : key;
		req = html_required(schema, key);
		if (json_is_string(json_object_get(p, "const"))) {
			wbuf_htmlf(b, "<input type=\"hidden\" name=\"in.%s\" "
			    "value=\"%s\">", key, jstr(p, "const"));
		} else if (json_is_array(json_object_get(p, "enum"))) {
			wbuf_htmlf(b, "<select name=\"in.%s\" title=\"%s\">",
			    key, title);
			json_array_foreach(json_object_get(p, "enum"), i, e)
				if (json_is_string(e))
					wbuf_htmlf(b, "<option>%s</option>",
					    json_string_value(e));
			growbuf_puts(b, "</select>");
		} else if (strcmp(type, "boolean") == 0) {
			wbuf_htmlf(b, "<label><input type=\"checkbox\" "
			    "name=\"in.b.%s\" value=\"true\"> %s</label>",
			    key, title);
		} else if (strcmp(type, "string") == 0) {
			wbuf_htmlf(b, "<input type=\"text\" name=\"in.%s\" "
			    "placeholder=\"%s\"", key, title);
			if (json_is_integer(json_object_get(p, "maxLength")))
				wbuf_htmlf(b, " maxlength=\"%ld\"",
				    (long)jint(p, "maxLength"));
			growbuf_puts(b, req ? " required>" : ">");
		} else {
			wbuf_htmlf(b, "<input type=\"number\" name=\"in.n.%s\" "
			    "placeholder=\"%s\"", key, title);
			if (strcmp(type, "number") == 0)
				growbuf_puts(b, " step=\"any\"");
			growbuf_puts(b, req ? " required>" : ">");
		}
	}
}

void
html_actions(struct growbuf *b, const struct web_view *v, json_t *actions,
    const char *base)
{
	json_t		*a, *schema;
	const char	*id, *title;
	size_t		 i;

	growbuf_puts(b, "<div class=\"actions\" id=\"actions\">");
	json_array_foreach(actions, i, a) {
		if ((id = jstr(a, "id")) == NULL)
			continue;
		title = jstr(a, "title") != NULL ? jstr(a, "title") : id;
		if (!json_is_true(json_object_get(a, "enabled"))) {
			wbuf_htmlf(b, "<button type=\"button\" disabled "
			    "class=\"action-off\" id=\"off-%s\" title=\"%s\">"
			    "%s</button>", id, jstr(a, "disabled_reason") !=
			    NULL ? jstr(a, "disabled_reason") : "", title);
			continue;
		}
		wbuf_htmlf(b, "<form method=\"post\" action=\"%s/actions/",
		    base);
		wbuf_urlenc(b, id);
		growbuf_puts(b, "\"");
		if (jstr(a, "confirm") != NULL)
			wbuf_htmlf(b, " data-confirm=\"%s\"", jstr(a,
			    "confirm"));
		if (jstr(a, "group") != NULL)
			wbuf_htmlf(b, " data-group=\"%s\"", jstr(a, "group"));
		growbuf_puts(b, ">");
		html_csrf(b, v);
		if (json_is_object(schema = json_object_get(a,
		    "input_schema")))
			html_action_fields(b, schema);
		wbuf_htmlf(b, "<button type=\"submit\" id=\"%s\" "
		    "title=\"%s\">%s</button></form>", id, jstr(a,
		    "description") != NULL ? jstr(a, "description") : "",
		    title);
	}
	growbuf_puts(b, "</div>");
}

/*
 * The answer to an operation: its run, drawn once.  A sensitive run's
 * output is in this page only: nopsd keeps no copy, so it says so.
 */
void
html_operation_run(struct growbuf *b, const struct web_view *v, json_t *run)
{
	json_t		*code = json_object_get(run, "exit_code");
	const char	*out = jstr(run, "output"), *err = jstr(run, "error");

	html_begin(b, v);
	wbuf_htmlf(b, "<h1>Operation %s</h1>", jstr(run, "action") != NULL ?
	    jstr(run, "action") : "?");
	if (jstr(run, "host") != NULL) {
		growbuf_puts(b, "<p>Host ");
		html_host_link(b, jstr(run, "repository"), jstr(run, "host"));
	} else {
		growbuf_puts(b, "<p>Job ");
		html_job_link(b, jstr(run, "namespace"), jstr(run, "job"));
	}
	wbuf_htmlf(b, ", run %ld by %s: ", (long)jint(run, "id"),
	    jstr(run, "actor") != NULL ? jstr(run, "actor") : "?");
	html_state(b, jstr(run, "state") != NULL ? jstr(run, "state") : "?");
	if (json_is_integer(code))
		wbuf_htmlf(b, " <span id=\"exit-code\">exit code %ld</span>",
		    (long)json_integer_value(code));
	growbuf_puts(b, "</p>");
	if (err != NULL)
		html_message(b, "error", err);
	if (json_is_true(json_object_get(run, "sensitive")))
		html_message(b, "warn", "Sensitive output: shown this once. "
		    "nops keeps no copy of it; copy what you need now.");
	if (out != NULL)
		wbuf_htmlf(b, "<pre class=\"output\" id=\"run-output\">%s"
		    "</pre>", out);
	html_end(b);
}

/*
 * The objects a deployment's cleanups left behind: a form to retry them
 * all, and one to forget each record (the object is not touched).
 */
void
html_left_behind(struct growbuf *b, const struct web_view *v, json_t *list,
    const char *deployment)
{
	json_t		*items = json_object_get(list, "items"), *r;
	size_t		 i;

	html_begin(b, v);
	wbuf_htmlf(b, "<h1>Left behind by deployment <a href=\"/deployments/"
	    "%s\">%s</a></h1>", deployment, deployment);
	growbuf_puts(b, "<p class=\"muted\">Objects a cleanup of this "
	    "deployment failed to remove while the run went on.  A later "
	    "successful write of an object removes its record.</p>");
	if (json_array_size(items) == 0) {
		growbuf_puts(b, "<p id=\"left-behind-none\">Nothing is left "
		    "behind.</p>");
		html_end(b);
		return;
	}
	growbuf_puts(b, "<div class=\"actions\">");
	wbuf_htmlf(b, "<form method=\"post\" action=\"/deployments/%s/"
	    "left-behind\">", deployment);
	html_csrf(b, v);
	growbuf_puts(b, "<button type=\"submit\" id=\"left-behind-retry\" "
	    "title=\"Try to remove each object again\">Retry</button>"
	    "</form></div>");
	growbuf_puts(b, "<table id=\"left-behind\"><tr><th>Kind</th><th>"
	    "Environment</th><th>Object</th><th>Error</th><th>Since</th>"
	    "<th></th></tr>");
	json_array_foreach(items, i, r) {
		wbuf_htmlf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s"
		    "</td><td>", jstr(r, "kind") != NULL ? jstr(r, "kind") :
		    "", jstr(r, "environment") != NULL ? jstr(r,
		    "environment") : "", jstr(r, "object") != NULL ? jstr(r,
		    "object") : "", jstr(r, "error") != NULL ? jstr(r,
		    "error") : "");
		html_time(b, json_object_get(r, "created_at"));
		wbuf_htmlf(b, "</td><td><form method=\"post\" action=\""
		    "/deployments/%s/left-behind/%ld/forget\">", deployment,
		    (long)jint(r, "id"));
		html_csrf(b, v);
		wbuf_htmlf(b, "<button type=\"submit\" id=\"forget-%ld\" "
		    "title=\"Forget the record; the object is not touched\">"
		    "Forget</button></form></td></tr>", (long)jint(r, "id"));
	}
	growbuf_puts(b, "</table>");
	html_end(b);
}
