/*
 * A deploy plan's hosts (plan.h): each host over the defaults, its
 * connection, tags, system, checks and operations, every error named
 * with the host.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "plan.h"
#include "plan_parse.h"
#include "xmalloc.h"

const char *const plan_host_keys[] = {
	"address", "port", "user", "hostKey", "tags", "system", "checks",
	"operations", "attrs", "buildOnTarget", "drv", NULL
};
static const char *const plan_check_keys[] = {
	"name", "command", "http", "timeout", NULL
};

static void
plan_parse_checks(struct plan *pl, struct plan_host *h, const char *where,
    json_t *v)
{
	struct plan_check	*c;
	json_t			*e, *cmd, *http, *name;
	char			 cw[256];
	size_t			 i, j;

	if (!json_is_array(v) || json_array_size(v) > PLAN_CHECKS_MAX) {
		plan_error(pl, "%s: checks: not a list of at most %d checks",
		    where, PLAN_CHECKS_MAX);
		return;
	}
	if ((h->ph_checks = calloc(json_array_size(v) + 1,
	    sizeof(*h->ph_checks))) == NULL)
		fatal("calloc");
	json_array_foreach(v, i, e) {
		snprintf(cw, sizeof(cw), "%s: check %zu", where, i + 1);
		if (!json_is_object(e)) {
			plan_error(pl, "%s: not an object", cw);
			continue;
		}
		plan_unknown_keys(pl, cw, e, plan_check_keys);
		c = &h->ph_checks[h->ph_nchecks++];
		name = json_object_get(e, "name");
		if (!json_is_string(name) || !plan_name_ok(json_string_value(
		    name)))
			plan_error(pl, "%s: name: missing or not a name", cw);
		else {
			c->pc_name = xstrdup(json_string_value(name));
			for (j = 0; j + 1 < h->ph_nchecks; j++)
				if (h->ph_checks[j].pc_name != NULL &&
				    strcmp(h->ph_checks[j].pc_name,
				    c->pc_name) == 0)
					plan_error(pl, "%s: name \"%s\" "
					    "twice", cw, c->pc_name);
		}
		cmd = json_object_get(e, "command");
		http = json_object_get(e, "http");
		if ((cmd == NULL) == (http == NULL))
			plan_error(pl, "%s: needs one of command and http", cw);
		else if (cmd != NULL) {
			if (!json_is_string(cmd) ||
			    !plan_command_ok(json_string_value(cmd)))
				plan_error(pl, "%s: command: not a command "
				    "(text of 1 to %d bytes)", cw,
				    PLAN_COMMAND_MAX);
			else
				c->pc_command = xstrdup(
				    json_string_value(cmd));
		} else {
			if (!json_is_string(http) ||
			    (strncmp(json_string_value(http),
			    "http://", 7) != 0 &&
			    strncmp(json_string_value(http),
			    "https://", 8) != 0) ||
			    !plan_command_ok(json_string_value(http)) ||
			    strpbrk(json_string_value(http), " \t\n") != NULL)
				plan_error(pl, "%s: http: not an http:// or "
				    "https:// URL", cw);
			else
				c->pc_http = xstrdup(
				    json_string_value(http));
		}
		c->pc_timeout = plan_timeout(pl, cw, json_object_get(e,
		    "timeout"), PLAN_CHECK_TIMEOUT);
	}
}

static void
plan_parse_tags(struct plan *pl, struct plan_host *h, const char *where,
    json_t *dtags, json_t *tags)
{
	json_t		*lists[2] = { dtags, tags }, *e;
	size_t		 i, j, l;

	for (l = 0; l < 2; l++) {
		if (lists[l] == NULL)
			continue;
		if (!json_is_array(lists[l])) {
			plan_error(pl, "%s: tags: not a list", where);
			continue;
		}
		json_array_foreach(lists[l], i, e) {
			if (!json_is_string(e) ||
			    !plan_name_ok(json_string_value(e))) {
				plan_error(pl, "%s: tags: item %zu is not a "
				    "name", where, i + 1);
				continue;
			}
			for (j = 0; j < h->ph_ntags; j++)
				if (strcmp(h->ph_tags[j],
				    json_string_value(e)) == 0)
					break;
			if (j < h->ph_ntags)
				continue;
			if (h->ph_ntags >= PLAN_TAGS_MAX) {
				plan_error(pl, "%s: tags: more than %d", where,
				    PLAN_TAGS_MAX);
				break;
			}
			if ((h->ph_tags = reallocarray(h->ph_tags,
			    h->ph_ntags + 1, sizeof(char *))) == NULL)
				fatal("reallocarray");
			h->ph_tags[h->ph_ntags++] = xstrdup(
			    json_string_value(e));
		}
	}
}

/* The object of key in a host over the default's: the host's wins. */
static json_t *
plan_merged(json_t *def, json_t *host, const char *key)
{
	json_t	*v;

	if ((v = json_object_get(host, key)) != NULL)
		return v;
	return def != NULL ? json_object_get(def, key) : NULL;
}

/* An object merged key by key (attrs, operations): the host's wins. */
static json_t *
plan_merged_object(struct plan *pl, const char *where, json_t *def,
    json_t *host, const char *key)
{
	json_t	*d, *h, *out;

	d = def != NULL ? json_object_get(def, key) : NULL;
	h = json_object_get(host, key);
	if ((d != NULL && !json_is_object(d)) ||
	    (h != NULL && !json_is_object(h))) {
		plan_error(pl, "%s: %s: not an object", where, key);
		return NULL;
	}
	if (d == NULL && h == NULL)
		return NULL;
	if ((out = json_object()) == NULL)
		fatal("json_object");
	if (d != NULL)
		json_object_update(out, d);
	if (h != NULL)
		json_object_update(out, h);
	return out;
}

/* The attributes an operation may have (man/nops-plan.5). */
static const char *const plan_op_keys[] = {
	"command", "schema", "sensitive", "description", "confirm", NULL
};

static int	(*plan_schema_usable)(json_t *, char *, size_t);

void
plan_set_schema_check(int (*usable)(json_t *, char *, size_t))
{
	plan_schema_usable = usable;
}

/*
 * Each operation: a command; a JSON Schema its input must agree with,
 * usable as it is (each $ref resolved, each pattern compiled) when the
 * program can tell; sensitive a boolean; description and confirm text.
 * Checked here, so that a bad one fails the plan, not its first run.
 */
static void
plan_parse_operations(struct plan *pl, const char *where, json_t *ops)
{
	const char	*k, *t;
	json_t		*v, *cmd, *e;
	char		 w[192], err[256];
	size_t		 i;

	json_object_foreach(ops, k, v) {
		if (!plan_name_ok(k)) {
			plan_error(pl, "%s: operations: \"%.64s\" is not a "
			    "name", where, k);
			continue;
		}
		snprintf(w, sizeof(w), "%s: operation %s", where, k);
		if (!json_is_object(v)) {
			plan_error(pl, "%s: not an object", w);
			continue;
		}
		plan_unknown_keys(pl, w, v, plan_op_keys);
		cmd = json_object_get(v, "command");
		if (!json_is_string(cmd) ||
		    !plan_command_ok(json_string_value(cmd)))
			plan_error(pl, "%s: needs a command", w);
		e = json_object_get(v, "sensitive");
		if (e != NULL && !json_is_boolean(e))
			plan_error(pl, "%s: sensitive: not true or false", w);
		for (i = 0; i < 2; i++) {
			t = i == 0 ? "description" : "confirm";
			e = json_object_get(v, t);
			if (e != NULL && (!json_is_string(e) ||
			    !plan_command_ok(json_string_value(e))))
				plan_error(pl, "%s: %s: not a line of text",
				    w, t);
		}
		if ((e = json_object_get(v, "schema")) == NULL)
			continue;
		if (!json_is_object(e) && !json_is_boolean(e))
			plan_error(pl, "%s: schema: not a JSON Schema (an "
			    "object or a boolean)", w);
		else if (plan_schema_usable != NULL &&
		    plan_schema_usable(e, err, sizeof(err)) == -1)
			plan_error(pl, "%s: schema: %s", w, err);
	}
}

void
plan_parse_host(struct plan *pl, struct plan_host *h, const char *name,
    json_t *def, json_t *v, json_t *sources)
{
	json_t	*e;
	char	 where[128];

	snprintf(where, sizeof(where), "host \"%s\"", name);
	h->ph_name = xstrdup(name);
	h->ph_phase = -1;
	h->ph_port = 22;
	if (!plan_name_ok(name))
		plan_error(pl, "%s: not a host name (letters, digits, "
		    "\".\", \"_\", \"-\"; at most %d)", where, PLAN_NAME_MAX);
	if (!json_is_object(v)) {
		plan_error(pl, "%s: not an object", where);
		return;
	}
	plan_unknown_keys(pl, where, v, plan_host_keys);

	if ((e = plan_merged(def, v, "address")) == NULL)
		h->ph_address = xstrdup(name);
	else if (!json_is_string(e) || !plan_address_ok(json_string_value(e)))
		plan_error(pl, "%s: address: not a host name or IP address",
		    where);
	else
		h->ph_address = xstrdup(json_string_value(e));

	if ((e = plan_merged(def, v, "port")) != NULL) {
		if (!json_is_integer(e) || json_integer_value(e) < 1 ||
		    json_integer_value(e) > 65535)
			plan_error(pl, "%s: port: not a port from 1 to 65535",
			    where);
		else
			h->ph_port = (int)json_integer_value(e);
	}
	if ((e = plan_merged(def, v, "user")) == NULL)
		h->ph_user = xstrdup("root");
	else if (!json_is_string(e) || !plan_user_ok(json_string_value(e)))
		plan_error(pl, "%s: user: not a user name", where);
	else
		h->ph_user = xstrdup(json_string_value(e));

	if ((e = json_object_get(v, "hostKey")) != NULL) {
		if (!json_is_string(e) ||
		    !plan_hostkey_ok(json_string_value(e)))
			plan_error(pl, "%s: hostKey: not \"TYPE BASE64\" "
			    "(ssh-ed25519, ecdsa-sha2-*, ssh-rsa)", where);
		else
			h->ph_hostkey = xstrdup(json_string_value(e));
	}
	plan_parse_tags(pl, h, where, def != NULL ?
	    json_object_get(def, "tags") : NULL, json_object_get(v, "tags"));

	if ((e = json_object_get(v, "system")) == NULL)
		plan_error(pl, "%s: system: missing (the store path of the "
		    "toplevel to activate)", where);
	else if (!json_is_string(e) ||
	    !plan_store_path_ok(json_string_value(e)))
		plan_error(pl, "%s: system: not a store path "
		    "(/nix/store/HASH-NAME)", where);
	else
		h->ph_system = xstrdup(json_string_value(e));

	if ((e = json_object_get(v, "drv")) != NULL && !json_is_null(e)) {
		if (!json_is_string(e) ||
		    !plan_store_path_ok(json_string_value(e)) ||
		    strlen(json_string_value(e)) < 5 ||
		    strcmp(json_string_value(e) + strlen(json_string_value(e)) -
		    4, ".drv") != 0)
			plan_error(pl, "%s: drv: not the store path of a .drv",
			    where);
		else
			h->ph_drv = xstrdup(json_string_value(e));
	}
	if ((e = plan_merged(def, v, "buildOnTarget")) != NULL) {
		if (!json_is_boolean(e))
			plan_error(pl, "%s: buildOnTarget: not true or false",
			    where);
		else
			h->ph_build_on_target = json_is_true(e);
	}
	if ((e = plan_merged(def, v, "checks")) != NULL)
		plan_parse_checks(pl, h, where, e);
	h->ph_attrs = plan_merged_object(pl, where, def, v, "attrs");
	h->ph_operations = plan_merged_object(pl, where, def, v, "operations");
	if (h->ph_operations != NULL)
		plan_parse_operations(pl, where, h->ph_operations);

	if (sources != NULL) {
		if ((e = json_object_get(sources, name)) == NULL)
			e = json_object_get(sources, "default");
		if (json_is_string(e))
			h->ph_source = xstrdup(json_string_value(e));
	}
}

int
plan_host_cmp(const void *a, const void *b)
{
	const struct plan_host	*ha = a, *hb = b;

	return strcmp(ha->ph_name, hb->ph_name);
}
