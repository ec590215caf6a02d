/*
 * The evaluated deploy plan: parsing, checking, phase assignment
 * (plan.h, man/nops-plan.5).
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

static const char *const plan_top_keys[] = {
	"policy", "goal", "meta", "defaults", "hosts", "phases", "tests",
	"infra", NULL
};
static const char *const plan_host_keys[] = {
	"address", "port", "user", "hostKey", "tags", "system", "checks",
	"operations", "attrs", "buildOnTarget", "drv", NULL
};
static const char *const plan_check_keys[] = {
	"name", "command", "http", "timeout", NULL
};
static const char *const plan_phase_keys[] = { "name", "include", NULL };
static const char *const plan_include_keys[] = {
	"tags", "names", "attrs", NULL
};
static const char *const plan_test_keys[] = {
	"name", "build", "host", "command", "timeout", NULL
};
static const char *const plan_meta_keys[] = { "sources", "args", NULL };

static void	 plan_vadd(char ***, size_t *, size_t *, const char *,
		    va_list) __attribute__((__format__(printf, 4, 0)));

static char *
plan_strdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("strdup");
	return p;
}

static void
plan_vadd(char ***list, size_t *n, size_t *all, const char *fmt, va_list ap)
{
	char	*s;

	if (all != NULL && (*all)++ >= PLAN_ERRORS_MAX)
		return;
	if (vasprintf(&s, fmt, ap) == -1)
		fatal("vasprintf");
	if ((*list = reallocarray(*list, *n + 1, sizeof(**list))) == NULL)
		fatal("reallocarray");
	(*list)[(*n)++] = s;
}

void
plan_error(struct plan *pl, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	plan_vadd(&pl->pl_errors, &pl->pl_nerrors, &pl->pl_nerrors_all,
	    fmt, ap);
	va_end(ap);
}

void
plan_warn(struct plan *pl, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	plan_vadd(&pl->pl_warnings, &pl->pl_nwarnings, NULL, fmt, ap);
	va_end(ap);
}

struct plan *
plan_failed(const char *fmt, ...)
{
	struct plan	*pl;
	va_list		 ap;

	if ((pl = calloc(1, sizeof(*pl))) == NULL)
		return NULL;
	va_start(ap, fmt);
	plan_vadd(&pl->pl_errors, &pl->pl_nerrors, &pl->pl_nerrors_all,
	    fmt, ap);
	va_end(ap);
	return pl;
}

/* Names: [A-Za-z0-9][A-Za-z0-9._-]*, at most PLAN_NAME_MAX. */
static int
plan_name_ok(const char *s)
{
	size_t	 len = strlen(s);

	return len > 0 && len <= PLAN_NAME_MAX && isalnum((unsigned char)s[0]) &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == len;
}

/* /nix/store/<32 of nix base32>-<name>, a name Nix allows. */
int
plan_store_path_ok(const char *s)
{
	const char	*pfx = "/nix/store/", *name;
	size_t		 len;

	if (strncmp(s, pfx, strlen(pfx)) != 0)
		return 0;
	s += strlen(pfx);
	if (strspn(s, "0123456789abcdfghijklmnpqrsvwxyz") != 32 || s[32] != '-')
		return 0;
	name = s + 33;
	len = strlen(name);
	return len > 0 && len <= PLAN_STORE_PATH_MAX && name[0] != '.' &&
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789+-._?=") == len;
}

static int
plan_address_ok(const char *s)
{
	size_t	 len = strlen(s);

	return len > 0 && len <= PLAN_ADDRESS_MAX && s[0] != '-' &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.:-") == len;
}

static int
plan_user_ok(const char *s)
{
	size_t	 len = strlen(s);

	return len > 0 && len <= PLAN_USER_MAX &&
	    (islower((unsigned char)s[0]) || s[0] == '_') &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

/* "type base64", the way known_hosts and ssh-keyscan write a key. */
static int
plan_hostkey_ok(const char *s)
{
	static const char *const types[] = { "ssh-ed25519 ",
	    "ecdsa-sha2-nistp256 ", "ecdsa-sha2-nistp384 ",
	    "ecdsa-sha2-nistp521 ", "ssh-rsa ", NULL };
	size_t	 i, len;

	if (strlen(s) > PLAN_HOSTKEY_MAX)
		return 0;
	for (i = 0; types[i] != NULL; i++)
		if (strncmp(s, types[i], strlen(types[i])) == 0)
			break;
	if (types[i] == NULL)
		return 0;
	s += strlen(types[i]);
	len = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789+/=");
	return len >= 16 && s[len] == '\0';
}

/* Text a command may hold: printable or whitespace, no NUL. */
static int
plan_command_ok(const char *s)
{
	size_t	 len = strlen(s);

	if (len == 0 || len > PLAN_COMMAND_MAX)
		return 0;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
			return 0;
	return 1;
}

static void
plan_unknown_keys(struct plan *pl, const char *where, json_t *obj,
    const char *const *keys)
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	json_object_foreach(obj, k, v) {
		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(k, keys[i]) == 0)
				break;
		if (keys[i] == NULL)
			plan_error(pl, "%s: unknown attribute \"%.64s\"", where,
			    k);
	}
}

static int
plan_timeout(struct plan *pl, const char *where, json_t *v, int def)
{
	if (v == NULL)
		return def;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > PLAN_TIMEOUT_MAX) {
		plan_error(pl, "%s: timeout: not a number of seconds from 1 "
		    "to %d", where, PLAN_TIMEOUT_MAX);
		return def;
	}
	return (int)json_integer_value(v);
}

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
			c->pc_name = plan_strdup(json_string_value(name));
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
				c->pc_command = plan_strdup(
				    json_string_value(cmd));
		} else {
			if (!json_is_string(http) ||
			    (strncmp(json_string_value(http), "http://", 7) != 0 &&
			    strncmp(json_string_value(http), "https://", 8) != 0) ||
			    !plan_command_ok(json_string_value(http)) ||
			    strpbrk(json_string_value(http), " \t\n") != NULL)
				plan_error(pl, "%s: http: not an http:// or "
				    "https:// URL", cw);
			else
				c->pc_http = plan_strdup(
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
			h->ph_tags[h->ph_ntags++] = plan_strdup(
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

static void
plan_parse_operations(struct plan *pl, const char *where, json_t *ops)
{
	const char	*k;
	json_t		*v, *cmd;

	json_object_foreach(ops, k, v) {
		if (!plan_name_ok(k)) {
			plan_error(pl, "%s: operations: \"%.64s\" is not a "
			    "name", where, k);
			continue;
		}
		cmd = json_is_object(v) ? json_object_get(v, "command") : NULL;
		if (!json_is_string(cmd) ||
		    !plan_command_ok(json_string_value(cmd)))
			plan_error(pl, "%s: operation %s: needs a command",
			    where, k);
	}
}

static void
plan_parse_host(struct plan *pl, struct plan_host *h, const char *name,
    json_t *def, json_t *v, json_t *sources)
{
	json_t	*e;
	char	 where[128];

	snprintf(where, sizeof(where), "host \"%s\"", name);
	h->ph_name = plan_strdup(name);
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
		h->ph_address = plan_strdup(name);
	else if (!json_is_string(e) || !plan_address_ok(json_string_value(e)))
		plan_error(pl, "%s: address: not a host name or IP address",
		    where);
	else
		h->ph_address = plan_strdup(json_string_value(e));

	if ((e = plan_merged(def, v, "port")) != NULL) {
		if (!json_is_integer(e) || json_integer_value(e) < 1 ||
		    json_integer_value(e) > 65535)
			plan_error(pl, "%s: port: not a port from 1 to 65535",
			    where);
		else
			h->ph_port = (int)json_integer_value(e);
	}
	if ((e = plan_merged(def, v, "user")) == NULL)
		h->ph_user = plan_strdup("root");
	else if (!json_is_string(e) || !plan_user_ok(json_string_value(e)))
		plan_error(pl, "%s: user: not a user name", where);
	else
		h->ph_user = plan_strdup(json_string_value(e));

	if ((e = json_object_get(v, "hostKey")) != NULL) {
		if (!json_is_string(e) ||
		    !plan_hostkey_ok(json_string_value(e)))
			plan_error(pl, "%s: hostKey: not \"TYPE BASE64\" "
			    "(ssh-ed25519, ecdsa-sha2-*, ssh-rsa)", where);
		else
			h->ph_hostkey = plan_strdup(json_string_value(e));
	}
	plan_parse_tags(pl, h, where, def != NULL ?
	    json_object_get(def, "tags") : NULL, json_object_get(v, "tags"));

	if ((e = json_object_get(v, "system")) == NULL)
		plan_error(pl, "%s: system: missing (the store path of the "
		    "toplevel to activate)", where);
	else if (!json_is_string(e) || !plan_store_path_ok(json_string_value(e)))
		plan_error(pl, "%s: system: not a store path "
		    "(/nix/store/HASH-NAME)", where);
	else
		h->ph_system = plan_strdup(json_string_value(e));

	if ((e = json_object_get(v, "drv")) != NULL && !json_is_null(e)) {
		if (!json_is_string(e) ||
		    !plan_store_path_ok(json_string_value(e)) ||
		    strlen(json_string_value(e)) < 5 ||
		    strcmp(json_string_value(e) + strlen(json_string_value(e)) -
		    4, ".drv") != 0)
			plan_error(pl, "%s: drv: not the store path of a .drv",
			    where);
		else
			h->ph_drv = plan_strdup(json_string_value(e));
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
			h->ph_source = plan_strdup(json_string_value(e));
	}
}

static int
plan_host_cmp(const void *a, const void *b)
{
	const struct plan_host	*ha = a, *hb = b;

	return strcmp(ha->ph_name, hb->ph_name);
}

static void
plan_parse_include(struct plan *pl, const char *where, json_t *inc)
{
	const char	*lists[] = { "tags", "names" };
	json_t		*l, *e, *attrs;
	size_t		 i, j;
	char		 iw[160];

	if (!json_is_object(inc) || json_object_size(inc) == 0) {
		plan_error(pl, "%s: include: not an object with tags, names "
		    "or attrs", where);
		return;
	}
	snprintf(iw, sizeof(iw), "%s: include", where);
	plan_unknown_keys(pl, iw, inc, plan_include_keys);
	for (i = 0; i < 2; i++) {
		if ((l = json_object_get(inc, lists[i])) == NULL)
			continue;
		if (!json_is_array(l) || json_array_size(l) == 0) {
			plan_error(pl, "%s: include: %s: not a list of names",
			    where, lists[i]);
			continue;
		}
		json_array_foreach(l, j, e)
			if (!json_is_string(e) ||
			    !plan_name_ok(json_string_value(e)))
				plan_error(pl, "%s: include: %s: item %zu is "
				    "not a name", where, lists[i], j + 1);
	}
	if ((attrs = json_object_get(inc, "attrs")) != NULL &&
	    (!json_is_object(attrs) || json_object_size(attrs) == 0))
		plan_error(pl, "%s: include: attrs: not an object of "
		    "attribute values", where);
}

static int
plan_in_list(const json_t *list, const char *s)
{
	const json_t	*e;
	size_t		 i;

	json_array_foreach(list, i, e)
		if (json_is_string(e) && strcmp(json_string_value(e), s) == 0)
			return 1;
	return 0;
}

/*
 * A rule matches when every criterion it has matches: names (the host
 * is one of them), tags (the host has one of them), attrs (each
 * attribute equals the host's).
 */
int
plan_include_matches(json_t *rule, const struct plan_host *h)
{
	json_t		*l;
	const char	*k;
	json_t		*v;
	size_t		 i;

	if ((l = json_object_get(rule, "names")) != NULL &&
	    !plan_in_list(l, h->ph_name))
		return 0;
	if ((l = json_object_get(rule, "tags")) != NULL) {
		for (i = 0; i < h->ph_ntags; i++)
			if (plan_in_list(l, h->ph_tags[i]))
				break;
		if (i == h->ph_ntags)
			return 0;
	}
	if ((l = json_object_get(rule, "attrs")) != NULL)
		json_object_foreach(l, k, v)
			if (h->ph_attrs == NULL || !json_equal(v,
			    json_object_get(h->ph_attrs, k)))
				return 0;
	return 1;
}

static void
plan_assign(struct plan *pl)
{
	struct plan_host	*h;
	struct plan_phase	*p;
	size_t			 i, j, def;

	for (def = 0; def < pl->pl_nphases; def++)
		if (pl->pl_phases[def].pp_include == NULL)
			break;
	for (i = 0; i < pl->pl_nhosts; i++) {
		h = &pl->pl_hosts[i];
		for (j = 0; j < pl->pl_nphases; j++)
			if (pl->pl_phases[j].pp_include != NULL &&
			    plan_include_matches(pl->pl_phases[j].pp_include,
			    h))
				break;
		if (j == pl->pl_nphases)
			j = def;
		if (j == pl->pl_nphases) {
			plan_warn(pl, "host \"%s\": in no phase (no rule "
			    "matches and no phase without a rule): dropped",
			    h->ph_name);
			continue;
		}
		h->ph_phase = (int)j;
		p = &pl->pl_phases[j];
		if ((p->pp_hosts = reallocarray(p->pp_hosts, p->pp_nhosts + 1,
		    sizeof(*p->pp_hosts))) == NULL)
			fatal("reallocarray");
		p->pp_hosts[p->pp_nhosts++] = i;
	}
}

static void
plan_parse_phases(struct plan *pl, json_t *v)
{
	struct plan_phase	*p;
	json_t			*e, *name, *inc;
	char			 where[128];
	size_t			 i, j;

	if (!json_is_array(v) || json_array_size(v) == 0 ||
	    json_array_size(v) > PLAN_PHASES_MAX) {
		plan_error(pl, "phases: not a list of 1 to %d phases",
		    PLAN_PHASES_MAX);
		return;
	}
	if ((pl->pl_phases = calloc(json_array_size(v),
	    sizeof(*pl->pl_phases))) == NULL)
		fatal("calloc");
	json_array_foreach(v, i, e) {
		snprintf(where, sizeof(where), "phase %zu", i + 1);
		p = &pl->pl_phases[pl->pl_nphases++];
		if (!json_is_object(e)) {
			plan_error(pl, "%s: not an object", where);
			p->pp_name = plan_strdup("");
			continue;
		}
		name = json_object_get(e, "name");
		if (!json_is_string(name) ||
		    !plan_name_ok(json_string_value(name))) {
			plan_error(pl, "%s: name: missing or not a name",
			    where);
			p->pp_name = plan_strdup("");
		} else {
			p->pp_name = plan_strdup(json_string_value(name));
			snprintf(where, sizeof(where), "phase \"%s\"",
			    p->pp_name);
			for (j = 0; j < i; j++)
				if (strcmp(pl->pl_phases[j].pp_name,
				    p->pp_name) == 0)
					plan_error(pl, "%s: named twice",
					    where);
		}
		plan_unknown_keys(pl, where, e, plan_phase_keys);
		if ((inc = json_object_get(e, "include")) != NULL &&
		    !json_is_null(inc)) {
			plan_parse_include(pl, where, inc);
			p->pp_include = json_incref(inc);
		}
	}
}

static void
plan_parse_tests(struct plan *pl, json_t *v)
{
	struct plan_test	*t;
	json_t			*e, *x;
	char			 where[128];
	size_t			 i, j;

	if (!json_is_array(v) || json_array_size(v) > PLAN_TESTS_MAX) {
		plan_error(pl, "tests: not a list of at most %d tests",
		    PLAN_TESTS_MAX);
		return;
	}
	if ((pl->pl_tests = calloc(json_array_size(v) + 1,
	    sizeof(*pl->pl_tests))) == NULL)
		fatal("calloc");
	json_array_foreach(v, i, e) {
		snprintf(where, sizeof(where), "test %zu", i + 1);
		if (!json_is_object(e)) {
			plan_error(pl, "%s: not an object", where);
			continue;
		}
		t = &pl->pl_tests[pl->pl_ntests++];
		x = json_object_get(e, "name");
		if (!json_is_string(x) || !plan_name_ok(json_string_value(x)))
			plan_error(pl, "%s: name: missing or not a name",
			    where);
		else {
			t->pt_name = plan_strdup(json_string_value(x));
			snprintf(where, sizeof(where), "test \"%s\"",
			    t->pt_name);
			for (j = 0; j + 1 < pl->pl_ntests; j++)
				if (pl->pl_tests[j].pt_name != NULL &&
				    strcmp(pl->pl_tests[j].pt_name,
				    t->pt_name) == 0)
					plan_error(pl, "%s: named twice",
					    where);
		}
		plan_unknown_keys(pl, where, e, plan_test_keys);
		if ((x = json_object_get(e, "build")) != NULL) {
			if (!json_is_string(x) ||
			    !plan_store_path_ok(json_string_value(x)))
				plan_error(pl, "%s: build: not a store path",
				    where);
			else
				t->pt_build = plan_strdup(json_string_value(x));
			if (json_object_get(e, "command") != NULL)
				plan_error(pl, "%s: build and command are "
				    "exclusive", where);
		} else {
			x = json_object_get(e, "command");
			if (!json_is_string(x) ||
			    !plan_command_ok(json_string_value(x)))
				plan_error(pl, "%s: needs build, or command "
				    "and host", where);
			else
				t->pt_command = plan_strdup(
				    json_string_value(x));
			x = json_object_get(e, "host");
			if (!json_is_string(x))
				plan_error(pl, "%s: host: the host to run the "
				    "command on is missing", where);
			else
				t->pt_host = plan_strdup(json_string_value(x));
		}
		t->pt_timeout = plan_timeout(pl, where, json_object_get(e,
		    "timeout"), PLAN_CHECK_TIMEOUT * 5);
	}
}

static json_t *
plan_parse_meta(struct plan *pl, json_t *meta)
{
	json_t		*src, *v;
	const char	*k;

	if (!json_is_object(meta)) {
		plan_error(pl, "meta: not an object");
		return NULL;
	}
	plan_unknown_keys(pl, "meta", meta, plan_meta_keys);
	if ((src = json_object_get(meta, "sources")) != NULL) {
		if (!json_is_object(src))
			plan_error(pl, "meta: sources: not an object");
		else {
			if (json_object_get(src, "default") == NULL)
				plan_error(pl, "meta: sources: no \"default\" "
				    "key");
			json_object_foreach(src, k, v)
				if (!json_is_string(v) ||
				    json_string_length(v) == 0 ||
				    json_string_length(v) > 255)
					plan_error(pl, "meta: sources: %.64s: "
					    "not a source name", k);
		}
	}
	if ((v = json_object_get(meta, "args")) != NULL && !json_is_object(v))
		plan_error(pl, "meta: args: not an object");
	return json_is_object(src) ? src : NULL;
}

struct plan *
plan_parse(const char *text, size_t len)
{
	struct plan	*pl;
	json_t		*root, *v, *def, *hosts, *sources = NULL;
	json_error_t	 jerr;
	const char	*k;
	size_t		 i;

	if (len > PLAN_JSON_MAX)
		return plan_failed("the plan is larger than %d bytes",
		    PLAN_JSON_MAX);
	if ((root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL)
		return plan_failed("not JSON: line %d: %s", jerr.line,
		    jerr.text);
	if ((pl = calloc(1, sizeof(*pl))) == NULL)
		fatal("calloc");
	if (!json_is_object(root)) {
		plan_error(pl, "the plan is not an object");
		json_decref(root);
		return pl;
	}
	plan_unknown_keys(pl, "plan", root, plan_top_keys);
	pl->pl_policy = plan_strdup("approval");
	if ((v = json_object_get(root, "policy")) != NULL) {
		if (!json_is_string(v) ||
		    (strcmp(json_string_value(v), "auto") != 0 &&
		    strcmp(json_string_value(v), "approval") != 0))
			plan_error(pl, "policy: not \"auto\" or \"approval\"");
		else {
			free(pl->pl_policy);
			pl->pl_policy = plan_strdup(json_string_value(v));
		}
	}
	if ((v = json_object_get(root, "goal")) != NULL) {
		if (!json_is_string(v) ||
		    (pl->pl_goal = plan_goal_parse(json_string_value(v))) ==
		    -1) {
			plan_error(pl, "goal: not one of auto, switch, boot, "
			    "test, dry-activate");
			pl->pl_goal = PLAN_GOAL_AUTO;
		}
	}
	if ((v = json_object_get(root, "meta")) != NULL) {
		sources = plan_parse_meta(pl, v);
		pl->pl_meta = json_incref(v);
	}
	if ((def = json_object_get(root, "defaults")) != NULL) {
		if (!json_is_object(def)) {
			plan_error(pl, "defaults: not an object");
			def = NULL;
		} else {
			plan_unknown_keys(pl, "defaults", def, plan_host_keys);
			if (json_object_get(def, "system") != NULL)
				plan_error(pl, "defaults: system: each host "
				    "has its own");
			if (json_object_get(def, "hostKey") != NULL)
				plan_error(pl, "defaults: hostKey: each host "
				    "has its own");
		}
	}
	hosts = json_object_get(root, "hosts");
	if (!json_is_object(hosts) || json_object_size(hosts) == 0 ||
	    json_object_size(hosts) > PLAN_HOSTS_MAX)
		plan_error(pl, "hosts: not an object of 1 to %d hosts",
		    PLAN_HOSTS_MAX);
	else {
		if ((pl->pl_hosts = calloc(json_object_size(hosts),
		    sizeof(*pl->pl_hosts))) == NULL)
			fatal("calloc");
		json_object_foreach(hosts, k, v)
			plan_parse_host(pl, &pl->pl_hosts[pl->pl_nhosts++], k,
			    def, v, sources);
		qsort(pl->pl_hosts, pl->pl_nhosts, sizeof(*pl->pl_hosts),
		    plan_host_cmp);
	}
	plan_parse_phases(pl, json_object_get(root, "phases"));
	if ((v = json_object_get(root, "tests")) != NULL)
		plan_parse_tests(pl, v);
	for (i = 0; i < pl->pl_ntests; i++)
		if (pl->pl_tests[i].pt_host != NULL &&
		    plan_host_find(pl, pl->pl_tests[i].pt_host) == NULL)
			plan_error(pl, "test \"%s\": host: no host \"%.64s\" "
			    "in the plan", pl->pl_tests[i].pt_name != NULL ?
			    pl->pl_tests[i].pt_name : "",
			    pl->pl_tests[i].pt_host);
	if ((v = json_object_get(root, "infra")) != NULL)
		pl->pl_infra = json_incref(v);
	if (pl->pl_nerrors_all == 0)
		plan_assign(pl);
	json_decref(root);
	return pl;
}

const struct plan_host *
plan_host_find(const struct plan *pl, const char *name)
{
	size_t	 lo = 0, hi = pl->pl_nhosts, mid;
	int	 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(name, pl->pl_hosts[mid].ph_name)) == 0)
			return &pl->pl_hosts[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

void
plan_free(struct plan *pl)
{
	struct plan_host	*h;
	size_t			 i, j;

	if (pl == NULL)
		return;
	for (i = 0; i < pl->pl_nhosts; i++) {
		h = &pl->pl_hosts[i];
		free(h->ph_name);
		free(h->ph_address);
		free(h->ph_user);
		free(h->ph_hostkey);
		for (j = 0; j < h->ph_ntags; j++)
			free(h->ph_tags[j]);
		free(h->ph_tags);
		free(h->ph_system);
		free(h->ph_drv);
		free(h->ph_source);
		for (j = 0; j < h->ph_nchecks; j++) {
			free(h->ph_checks[j].pc_name);
			free(h->ph_checks[j].pc_command);
			free(h->ph_checks[j].pc_http);
		}
		free(h->ph_checks);
		json_decref(h->ph_attrs);
		json_decref(h->ph_operations);
	}
	free(pl->pl_hosts);
	for (i = 0; i < pl->pl_nphases; i++) {
		free(pl->pl_phases[i].pp_name);
		json_decref(pl->pl_phases[i].pp_include);
		free(pl->pl_phases[i].pp_hosts);
	}
	free(pl->pl_phases);
	for (i = 0; i < pl->pl_ntests; i++) {
		free(pl->pl_tests[i].pt_name);
		free(pl->pl_tests[i].pt_build);
		free(pl->pl_tests[i].pt_host);
		free(pl->pl_tests[i].pt_command);
	}
	free(pl->pl_tests);
	for (i = 0; i < pl->pl_nerrors; i++)
		free(pl->pl_errors[i]);
	free(pl->pl_errors);
	for (i = 0; i < pl->pl_nwarnings; i++)
		free(pl->pl_warnings[i]);
	free(pl->pl_warnings);
	json_decref(pl->pl_meta);
	json_decref(pl->pl_infra);
	free(pl->pl_policy);
	free(pl);
}

static const char *const plan_goals[] = {
	"auto", "switch", "boot", "test", "dry-activate", NULL
};

const char *
plan_goal_name(int g)
{
	if (g < 0 || g > PLAN_GOAL_DRY)
		return "auto";
	return plan_goals[g];
}

int
plan_goal_parse(const char *s)
{
	int	 i;

	for (i = 0; plan_goals[i] != NULL; i++)
		if (strcmp(s, plan_goals[i]) == 0)
			return i;
	return -1;
}
