/*
 * The JSON views of a checked plan (plan.h): the API's, and the spec a
 * plan deployment freezes (itself a plan, read back by plan_parse()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "plan.h"

static json_t *
plan_strings(char **v, size_t n)
{
	json_t	*a;
	size_t	 i;

	if ((a = json_array()) == NULL)
		fatal("json_array");
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *
plan_op_names(json_t *ops)
{
	const char	*k;
	json_t		*a, *v;

	if ((a = json_array()) == NULL)
		fatal("json_array");
	if (ops != NULL)
		json_object_foreach(ops, k, v)
			json_array_append_new(a, json_string(k));
	return a;
}

static json_t *
plan_host_json(const struct plan *pl, const struct plan_host *h)
{
	json_t	*o, *checks, *c;
	size_t	 i;

	o = json_pack("{s:s, s:s?, s:i, s:s?, s:s?, s:o, s:b}",
	    "name", h->ph_name, "address", h->ph_address, "port", h->ph_port,
	    "user", h->ph_user, "system", h->ph_system,
	    "tags", plan_strings(h->ph_tags, h->ph_ntags),
	    "build_on_target", h->ph_build_on_target);
	if (o == NULL)
		fatal("json_pack");
	json_object_set_new(o, "drv", h->ph_drv != NULL ?
	    json_string(h->ph_drv) : json_null());
	json_object_set_new(o, "host_key", h->ph_hostkey != NULL ?
	    json_string(h->ph_hostkey) : json_null());
	json_object_set_new(o, "phase", h->ph_phase >= 0 ?
	    json_string(pl->pl_phases[h->ph_phase].pp_name) : json_null());
	if ((checks = json_array()) == NULL)
		fatal("json_array");
	for (i = 0; i < h->ph_nchecks; i++) {
		c = json_pack("{s:s?, s:i}", "name", h->ph_checks[i].pc_name,
		    "timeout", h->ph_checks[i].pc_timeout);
		if (c == NULL)
			fatal("json_pack");
		if (h->ph_checks[i].pc_command != NULL)
			json_object_set_new(c, "command",
			    json_string(h->ph_checks[i].pc_command));
		if (h->ph_checks[i].pc_http != NULL)
			json_object_set_new(c, "http",
			    json_string(h->ph_checks[i].pc_http));
		json_array_append_new(checks, c);
	}
	json_object_set_new(o, "checks", checks);
	json_object_set_new(o, "source", h->ph_source != NULL ?
	    json_string(h->ph_source) : json_null());
	json_object_set_new(o, "attrs", h->ph_attrs != NULL ?
	    json_incref(h->ph_attrs) : json_object());
	json_object_set_new(o, "operations", plan_op_names(h->ph_operations));
	return o;
}

static json_t *
plan_phases_json(const struct plan *pl)
{
	json_t		*a, *p, *hosts;
	size_t		 i, j;

	if ((a = json_array()) == NULL)
		fatal("json_array");
	for (i = 0; i < pl->pl_nphases; i++) {
		if ((hosts = json_array()) == NULL)
			fatal("json_array");
		for (j = 0; j < pl->pl_phases[i].pp_nhosts; j++)
			json_array_append_new(hosts, json_string(pl->pl_hosts[
			    pl->pl_phases[i].pp_hosts[j]].ph_name));
		p = json_pack("{s:s, s:O?, s:o}", "name",
		    pl->pl_phases[i].pp_name, "include",
		    pl->pl_phases[i].pp_include, "hosts", hosts);
		if (p == NULL)
			fatal("json_pack");
		json_array_append_new(a, p);
	}
	return a;
}

static json_t *
plan_tests_json(const struct plan *pl)
{
	json_t		*a, *t;
	size_t		 i;

	if ((a = json_array()) == NULL)
		fatal("json_array");
	for (i = 0; i < pl->pl_ntests; i++) {
		t = json_pack("{s:s?, s:s?, s:s?, s:s?, s:i}",
		    "name", pl->pl_tests[i].pt_name,
		    "build", pl->pl_tests[i].pt_build,
		    "host", pl->pl_tests[i].pt_host,
		    "command", pl->pl_tests[i].pt_command,
		    "timeout", pl->pl_tests[i].pt_timeout);
		if (t == NULL)
			fatal("json_pack");
		json_array_append_new(a, t);
	}
	return a;
}

/*
 * The spec is itself a plan (the input format), so that a deployment
 * reads its frozen plan back with plan_parse(): hosts in a phase with
 * what connects to, builds, activates and checks them, the phases and
 * their rules, the tests, the policy and goal.  Not meta, not infra.
 */
json_t *
plan_spec_json(const struct plan *pl)
{
	const struct plan_host	*h;
	json_t			*o, *hosts, *ho, *checks, *c, *phases, *p;
	size_t			 i, j;

	if ((hosts = json_object()) == NULL || (phases = json_array()) == NULL)
		fatal("json_object");
	for (i = 0; i < pl->pl_nhosts; i++) {
		h = &pl->pl_hosts[i];
		if (h->ph_phase < 0)
			continue;
		if ((checks = json_array()) == NULL)
			fatal("json_array");
		for (j = 0; j < h->ph_nchecks; j++) {
			c = json_pack("{s:s, s:i}", "name",
			    h->ph_checks[j].pc_name, "timeout",
			    h->ph_checks[j].pc_timeout);
			if (c == NULL)
				fatal("json_pack");
			if (h->ph_checks[j].pc_command != NULL)
				json_object_set_new(c, "command", json_string(
				    h->ph_checks[j].pc_command));
			else
				json_object_set_new(c, "http", json_string(
				    h->ph_checks[j].pc_http));
			json_array_append_new(checks, c);
		}
		ho = json_pack("{s:s, s:i, s:s, s:o, s:s, s:o, s:b}",
		    "address", h->ph_address, "port", h->ph_port,
		    "user", h->ph_user, "tags", plan_strings(h->ph_tags,
		    h->ph_ntags), "system", h->ph_system, "checks", checks,
		    "buildOnTarget", h->ph_build_on_target);
		if (ho == NULL)
			fatal("json_pack");
		if (h->ph_hostkey != NULL)
			json_object_set_new(ho, "hostKey",
			    json_string(h->ph_hostkey));
		if (h->ph_drv != NULL)
			json_object_set_new(ho, "drv", json_string(h->ph_drv));
		if (h->ph_attrs != NULL)
			json_object_set(ho, "attrs", h->ph_attrs);
		if (h->ph_operations != NULL)
			json_object_set(ho, "operations", h->ph_operations);
		json_object_set_new(hosts, h->ph_name, ho);
	}
	for (i = 0; i < pl->pl_nphases; i++) {
		p = json_pack("{s:s}", "name", pl->pl_phases[i].pp_name);
		if (p == NULL)
			fatal("json_pack");
		if (pl->pl_phases[i].pp_include != NULL)
			json_object_set(p, "include",
			    pl->pl_phases[i].pp_include);
		json_array_append_new(phases, p);
	}
	o = json_pack("{s:s, s:s, s:o, s:o}",
	    "policy", pl->pl_policy != NULL ? pl->pl_policy : "approval",
	    "goal", plan_goal_name(pl->pl_goal), "hosts", hosts,
	    "phases", phases);
	if (o == NULL)
		fatal("json_pack");
	/*
	 * Alike on purpose: the hosts' checks above; a test and a check
	 * each pack their own fields, and what they share is jansson's
	 * pack-then-fatal and the optional keys set after it.
	 */
	if (pl->pl_ntests > 0) {
		json_t	*tests = json_array();

		for (i = 0; i < pl->pl_ntests; i++) {
			const struct plan_test *t = &pl->pl_tests[i];

			c = json_pack("{s:s, s:i}", "name", t->pt_name,
			    "timeout", t->pt_timeout);
			if (c == NULL)
				fatal("json_pack");
			if (t->pt_build != NULL)
				json_object_set_new(c, "build",
				    json_string(t->pt_build));
			else {
				json_object_set_new(c, "host",
				    json_string(t->pt_host));
				json_object_set_new(c, "command",
				    json_string(t->pt_command));
			}
			json_array_append_new(tests, c);
		}
		json_object_set_new(o, "tests", tests);
	}
	return o;
}

json_t *
plan_json(const struct plan *pl)
{
	json_t	*o, *hosts;
	size_t	 i;

	if ((hosts = json_array()) == NULL)
		fatal("json_array");
	for (i = 0; i < pl->pl_nhosts; i++)
		json_array_append_new(hosts,
		    plan_host_json(pl, &pl->pl_hosts[i]));
	o = json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:b}",
	    "valid", pl->pl_nerrors_all == 0,
	    "errors", plan_strings(pl->pl_errors, pl->pl_nerrors),
	    "warnings", plan_strings(pl->pl_warnings, pl->pl_nwarnings),
	    "phases", plan_phases_json(pl), "hosts", hosts,
	    "tests", plan_tests_json(pl), "has_infra", pl->pl_infra != NULL);
	if (o == NULL)
		fatal("json_pack");
	json_object_set_new(o, "policy", pl->pl_policy != NULL ?
	    json_string(pl->pl_policy) : json_null());
	json_object_set_new(o, "goal", json_string(plan_goal_name(
	    pl->pl_goal)));
	if (pl->pl_nerrors_all > pl->pl_nerrors)
		json_object_set_new(o, "errors_not_shown",
		    json_integer((json_int_t)(pl->pl_nerrors_all -
		    pl->pl_nerrors)));
	return o;
}

