/*
 * nopsctl plan REPOSITORY, nopsctl hosts: deploy plans and their hosts;
 * nopsctl each-host REPOSITORY OPERATION: a plan's operation on each of
 * its hosts.
 */
#include "config.h"

#include <err.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nopsctl.h"

/* A repository name as one path segment (names are [A-Za-z0-9._-]). */
static int
ctl_plan_name_ok(const char *s)
{
	return s[0] != '\0' && s[0] != '.' && strspn(s,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == strlen(s);
}

int
cmd_plan(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*p = NULL, *ph, *h, *e, *hosts;
	char			 path[256], *joined;
	size_t			 i, j, len;
	int			 rv;

	(void)argc;
	if (!ctl_plan_name_ok(argv[0])) {
		fprintf(stderr, "nopsctl: %s: not a repository name\n",
		    argv[0]);
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/api/v1/plans/%s", argv[0]);
	if (!ctl_get(ctl, path, &p, &rv))
		goto out;
	print_field("repository", ctl_str(p, "repository", "?"));
	print_field("commit", ctl_str(p, "commit", "?"));
	print_field("file", ctl_str(p, "file", "?"));
	print_field("state", ctl_str(p, "state", "?"));
	json_array_foreach(json_object_get(p, "errors"), i, e)
		safe_printf("error: %s\n", json_string_value(e));
	json_array_foreach(json_object_get(p, "warnings"), i, e)
		safe_printf("warning: %s\n", json_string_value(e));
	if (json_array_size(json_object_get(p, "phases")) == 0)
		goto out;
	printf("\n");
	t = table_new(3, "PHASE", "RULE", "HOSTS");
	json_array_foreach(json_object_get(p, "phases"), i, ph) {
		hosts = json_object_get(ph, "hosts");
		len = 1;
		json_array_foreach(hosts, j, h)
			len += strlen(json_string_value(h)) + 1;
		if ((joined = calloc(1, len + 1)) == NULL)
			err(1, NULL);
		json_array_foreach(hosts, j, h) {
			if (j > 0)
				strlcat(joined, " ", len + 1);
			strlcat(joined, json_string_value(h), len + 1);
		}
		table_row(t, ctl_str(ph, "name", "?"),
		    json_is_null(json_object_get(ph, "include")) ||
		    json_object_get(ph, "include") == NULL ? "(default)" :
		    "include", joined[0] != '\0' ? joined : "-");
		free(joined);
	}
	table_out(t, 0);
	printf("\n");
	t = table_new(4, "HOST", "ADDRESS", "PHASE", "SYSTEM");
	json_array_foreach(json_object_get(p, "hosts"), i, h) {
		char	 addr[300];

		snprintf(addr, sizeof(addr), "%s@%s:%lld",
		    ctl_str(h, "user", "?"), ctl_str(h, "address", "?"),
		    ctl_int(h, "port"));
		table_row(t, ctl_str(h, "name", "?"), addr,
		    ctl_str(h, "phase", "-"), ctl_str(h, "system", "-"));
	}
	table_out(t, 0);
out:
	json_decref(p);
	return rv;
}

/* Alike on purpose: cmd_plan, each_host, runs, jobs: lists, own columns. */
int
cmd_hosts(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*a = NULL, *h, *items;
	size_t			 i;
	int			 rv;

	(void)argc;
	(void)argv;
	if (!ctl_get(ctl, "/api/v1/hosts", &a, &rv))
		goto out;
	if ((items = ctl_items(a, "no hosts")) == NULL)
		goto out;
	t = table_new(6, "HOST", "REPOSITORY", "PHASE", "STATE", "CURRENT",
	    "LAST STEP");
	json_array_foreach(items, i, h)
		table_row(t, ctl_str(h, "name", "?"),
		    ctl_str(h, "repository", "?"), ctl_str(h, "phase", "-"),
		    ctl_str(h, "state", "?"), ctl_str(h, "current", "-"),
		    ctl_str(h, "last_step", "-"));
	table_out(t, 0);
out:
	json_decref(a);
	return rv;
}

/* each-host repository operation [-l limit] [--input json | @file] */
int
cmd_each_host(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*body, *input, *a = NULL, *h, *names;
	char			 path[512], code[32];
	size_t			 i;
	long			 st;
	int			 rv;

	(void)argc;
	if (!ctl_plan_name_ok(argv[0]) || !ctl_plan_name_ok(argv[1]))
		errx(EXIT_USAGE, "%s %s: not a repository and an operation "
		    "name", argv[0], argv[1]);
	snprintf(path, sizeof(path), "/api/v1/plans/%s/operations/%s",
	    argv[0], argv[1]);
	if ((body = json_object()) == NULL)
		err(1, "json_object");
	if ((input = ctl_input(ctl->input)) != NULL)
		json_object_set_new(body, "input", input);
	if (ctl->limit > 0)
		json_object_set_new(body, "limit", json_integer(ctl->limit));
	if (ctl->nhosts > 0) {
		if ((names = json_array()) == NULL)
			err(1, "json_array");
		for (i = 0; i < ctl->nhosts; i++) {
			if (!ctl_plan_name_ok(ctl->hosts[i]))
				errx(EXIT_USAGE, "--host %s: not a host name",
				    ctl->hosts[i]);
			json_array_append_new(names,
			    json_string(ctl->hosts[i]));
		}
		json_object_set_new(body, "hosts", names);
	}
	st = ctl_call(ctl, "POST", path, body, &a);
	json_decref(body);
	if ((rv = ctl_check(ctl, st, a)) != 0)
		goto out;
	if (json_integer_value(json_object_get(a, "failed")) > 0 ||
	    json_integer_value(json_object_get(a, "not_started")) > 0)
		rv = EXIT_ANSWER;
	if (ctl->json) {
		ctl_print_json(a);
		goto out;
	}
	t = table_new(4, "HOST", "STATE", "EXIT", "ERROR");
	json_array_foreach(json_object_get(a, "hosts"), i, h)
		table_row(t, ctl_str(h, "name", "?"), ctl_str(h, "state", "?"),
		    ctl_num(code, sizeof(code), h, "exit_code"),
		    ctl_str(h, "error", ""));
	table_out(t, 0);
	json_array_foreach(json_object_get(a, "hosts"), i, h)
		if (json_is_string(json_object_get(h, "output")) &&
		    json_string_length(json_object_get(h, "output")) > 0)
			safe_printf("--- %s ---\n%s%s", ctl_str(h, "name", "?"),
			    ctl_str(h, "output", ""), ctl_str(h, "output",
			    "")[strlen(ctl_str(h, "output", "")) - 1] == '\n' ?
			    "" : "\n");
out:
	json_decref(a);
	return rv;
}

/*
 * host-runs repository [host] [run]: the run log of operations on a
 * plan's hosts (host actions and EachHost), newest first, or one run.
 */
int
cmd_host_runs(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*a = NULL, *v, *items;
	const char		*errstr = NULL;
	char			 path[512], id[32], code[32];
	long long		 run = 0;
	size_t			 i;
	int			 rv;

	if (!ctl_plan_name_ok(argv[0]) || (argc >= 2 &&
	    strspn(argv[1], "0123456789") != strlen(argv[1]) &&
	    !ctl_plan_name_ok(argv[1])))
		errx(EXIT_USAGE, "%s: not a repository and a host name",
		    argv[0]);
	/* The last word in digits is a run. */
	if (argc >= 2 && strspn(argv[argc - 1], "0123456789") ==
	    strlen(argv[argc - 1])) {
		run = strtonum(argv[argc - 1], 1, LLONG_MAX, &errstr);
		if (errstr != NULL)
			errx(EXIT_USAGE, "run %s is %s", argv[argc - 1],
			    errstr);
		argc--;
	}
	if (run > 0)
		snprintf(path, sizeof(path), "/api/v1/plans/%s/operations/"
		    "runs/%lld", argv[0], run);
	else
		snprintf(path, sizeof(path), "/api/v1/plans/%s/operations/"
		    "runs?limit=100%s%s", argv[0], argc >= 2 ? "&host=" : "",
		    argc >= 2 ? argv[1] : "");
	if (!ctl_get(ctl, path, &a, &rv))
		goto out;
	if (run > 0) {
		printf("run %lld: %s on %s by %s: %s\n", run,
		    ctl_str(a, "operation", "?"), ctl_str(a, "host", "?"),
		    ctl_str(a, "actor", "?"), ctl_str(a, "state", "?"));
		if (json_is_string(json_object_get(a, "error")))
			printf("error: %s\n", ctl_str(a, "error", ""));
		if (json_is_string(json_object_get(a, "output")))
			safe_printf("%s", ctl_str(a, "output", ""));
		goto out;
	}
	if ((items = ctl_items(a, "no operation runs")) == NULL)
		goto out;
	t = table_new(7, "RUN", "HOST", "OPERATION", "BY", "STARTED", "STATE",
	    "EXIT");
	json_array_foreach(items, i, v) {
		table_row(t, ctl_num(id, sizeof(id), v, "id"),
		    ctl_str(v, "host", "?"), ctl_str(v, "operation", "?"),
		    ctl_str(v, "actor", "?"), ctl_str(v, "started_at", "-"),
		    ctl_str(v, "state", "?"),
		    ctl_num(code, sizeof(code), v, "exit_code"));
	}
	table_out(t, 0);
out:
	json_decref(a);
	return rv;
}
