/*
 * A deploy plan's phases and preflight tests (plan.h): the include
 * rules, and the assignment of hosts as the seed has it: the first phase
 * whose rule matches, else the first phase without a rule, else the host
 * is dropped with a warning.
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

static const char *const plan_phase_keys[] = { "name", "include", NULL };
static const char *const plan_include_keys[] = {
	"tags", "names", "attrs", NULL
};
static const char *const plan_test_keys[] = {
	"name", "build", "host", "command", "timeout", NULL
};

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

void
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

void
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
			p->pp_name = xstrdup("");
			continue;
		}
		name = json_object_get(e, "name");
		if (!json_is_string(name) ||
		    !plan_name_ok(json_string_value(name))) {
			plan_error(pl, "%s: name: missing or not a name",
			    where);
			p->pp_name = xstrdup("");
		} else {
			p->pp_name = xstrdup(json_string_value(name));
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

void
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
			t->pt_name = xstrdup(json_string_value(x));
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
				t->pt_build = xstrdup(json_string_value(x));
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
				t->pt_command = xstrdup(
				    json_string_value(x));
			x = json_object_get(e, "host");
			if (!json_is_string(x))
				plan_error(pl, "%s: host: the host to run the "
				    "command on is missing", where);
			else
				t->pt_host = xstrdup(json_string_value(x));
		}
		t->pt_timeout = plan_timeout(pl, where, json_object_get(e,
		    "timeout"), PLAN_CHECK_TIMEOUT * 5);
	}
}
