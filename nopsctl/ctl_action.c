/*
 * actions TARGET and action TARGET ACTION [--input JSON|@file]: what can
 * be done to a job or a deployment, and doing it, through the generic
 * action procedure.  Nothing here knows one action from another: the
 * list comes from nopsd, so a new action needs no new code.
 *
 * TARGET is a deployment id (digits), [namespace/]job, or
 * host:repository/host for a host of a deploy plan.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <err.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "nopsctl.h"

#define CTL_INPUT_MAX	(256 * 1024)

static void	 ctl_run_result(json_t *);

/* The API path of TARGET, with "/actions/<action>" when action is set. */
static char *
ctl_target_path(const char *target, const char *action)
{
	const char	*slash, *errstr = NULL;
	char		*ns, *job, *n, *act = NULL, *path;
	long long	 id;
	int		 r;

	if (action != NULL)
		act = ctl_escape(action);
	/* host:repository/host, a host of a deploy plan */
	if (strncmp(target, "host:", 5) == 0) {
		if ((slash = strchr(target + 5, '/')) == NULL ||
		    slash == target + 5 || slash[1] == '\0')
			errx(EXIT_USAGE, "%s: want host:repository/host",
			    target);
		if ((n = strndup(target + 5, slash - target - 5)) == NULL)
			err(1, "strndup");
		ns = ctl_escape(n);
		job = ctl_escape(slash + 1);
		free(n);
		r = act != NULL ? asprintf(&path, "/api/v1/hosts/%s/%s/actions/"
		    "%s", ns, job, act) : asprintf(&path, "/api/v1/hosts/%s/%s",
		    ns, job);
		free(ns);
		free(job);
	} else if (target[0] != '\0' && strspn(target, "0123456789") ==
	    strlen(target)) {
		id = strtonum(target, 1, LLONG_MAX, &errstr);
		if (errstr != NULL)
			errx(EXIT_USAGE, "deployment id %s is %s", target,
			    errstr);
		r = act != NULL ? asprintf(&path, "/api/v1/deployments/%lld/"
		    "actions/%s", id, act) : asprintf(&path,
		    "/api/v1/deployments/%lld", id);
	} else {
		if ((slash = strchr(target, '/')) == NULL) {
			ns = ctl_escape("default");
			job = ctl_escape(target);
		} else {
			if ((n = strndup(target, slash - target)) == NULL)
				err(1, "strndup");
			ns = ctl_escape(n);
			job = ctl_escape(slash + 1);
			free(n);
		}
		if (*ns == '\0' || *job == '\0')
			errx(EXIT_USAGE, "%s: want a deployment id, "
			    "namespace/job or job", target);
		r = act != NULL ? asprintf(&path, "/api/v1/jobs/%s/%s/actions/"
		    "%s", ns, job, act) : asprintf(&path, "/api/v1/jobs/%s/%s",
		    ns, job);
		free(ns);
		free(job);
	}
	if (r == -1)
		err(1, "asprintf");
	free(act);
	return path;
}

/* --input: JSON text, or @file (- for standard input). */
json_t *
ctl_input(const char *arg)
{
	json_error_t	 jerr;
	json_t		*j;
	char		*buf;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	if (arg == NULL)
		return NULL;
	if (arg[0] != '@') {
		if ((j = json_loads(arg, JSON_REJECT_DUPLICATES, &jerr)) ==
		    NULL)
			errx(EXIT_USAGE, "--input: column %d: %s",
			    jerr.column, jerr.text);
		goto check;
	}
	if (strcmp(arg + 1, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(arg + 1, O_RDONLY)) == -1)
		err(EXIT_USAGE, "%s", arg + 1);
	if ((buf = malloc(CTL_INPUT_MAX + 1)) == NULL)
		err(1, "malloc");
	while ((n = read(fd, buf + len, CTL_INPUT_MAX + 1 - len)) > 0)
		len += n;
	if (n == -1)
		err(EXIT_USAGE, "%s", arg + 1);
	if (fd != STDIN_FILENO)
		close(fd);
	if (len > CTL_INPUT_MAX)
		errx(EXIT_USAGE, "%s: more than %d bytes", arg + 1,
		    CTL_INPUT_MAX);
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	explicit_bzero(buf, len);
	free(buf);
	if (j == NULL)
		errx(EXIT_USAGE, "%s: line %d column %d: %s", arg + 1,
		    jerr.line, jerr.column, jerr.text);
check:
	if (!json_is_object(j))
		errx(EXIT_USAGE, "--input must be a JSON object");
	return j;
}

/* "approve, reject": the ids of the enabled actions, for a detail. */
char *
ctl_actions_enabled(json_t *actions)
{
	json_t	*a;
	char	*s = NULL, *n;
	size_t	 i;

	json_array_foreach(actions, i, a) {
		if (!json_is_true(json_object_get(a, "enabled")))
			continue;
		if (asprintf(&n, "%s%s%s", s != NULL ? s : "", s != NULL ?
		    ", " : "", ctl_str(a, "id", "?")) == -1)
			err(1, "asprintf");
		free(s);
		s = n;
	}
	return s;
}

int
cmd_actions(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*d, *a, *acts;
	char			*path;
	const char		*kind;
	size_t			 i;
	long			 st;
	int			 rv;

	path = ctl_target_path(argv[0], NULL);
	st = ctl_call(ctl, "GET", path, NULL, &d);
	free(path);
	if ((rv = ctl_check(ctl, st, d)) != 0)
		goto out;
	acts = json_object_get(d, "actions");
	if (ctl->json) {
		ctl_print_json(acts != NULL ? acts : json_array());
		goto out;
	}
	if (json_array_size(acts) == 0) {
		printf("no actions\n");
		goto out;
	}
	t = table_new(4, "ACTION", "KIND", "ENABLED", "TITLE / WHY NOT");
	json_array_foreach(acts, i, a) {
		kind = ctl_str(a, "kind", "-");
		if (json_is_true(json_object_get(a, "enabled")))
			table_row(t, ctl_str(a, "id", "?"), kind, "yes",
			    ctl_str(a, "title", ""));
		else
			table_row(t, ctl_str(a, "id", "?"), kind, "no",
			    ctl_str(a, "disabled_reason", ""));
	}
	table_out(t, 0);
out:
	json_decref(d);
	return rv;
}

int
cmd_action(struct ctl *ctl, int argc, char **argv)
{
	json_t	*body, *input, *a = NULL;
	char	*path;
	long	 st;
	int	 rv;

	input = ctl_input(ctl->input);
	body = json_object();
	if (input != NULL)
		json_object_set_new(body, "input", input);
	if (ctl->reason != NULL)
		json_object_set_new(body, "reason", json_string(ctl->reason));
	path = ctl_target_path(argv[0], argv[1]);
	/* An operation <job>.<op> may run for 5 minutes: wait for it. */
	if (strchr(argv[1], '.') != NULL)
		ctl->timeout = 330;
	st = ctl_call(ctl, "POST", path, body, &a);
	free(path);
	json_decref(body);
	if (!ctl_answer(ctl, st, a, &rv))
		goto out;
	/* An operation's result: its output, then its exit code. */
	if (json_is_string(json_object_get(a, "state")) &&
	    json_object_get(a, "exit_code") != NULL) {
		ctl_run_result(a);
		/* A non-zero exit is a result, and nopsctl says so too. */
		if (strcmp(ctl_str(a, "state", ""), "succeeded") != 0)
			rv = EXIT_ANSWER;
		goto out;
	}
	safe_printf("%s %s: %s\n", argv[0], argv[1],
	    json_is_true(json_object_get(a, "queued")) ? "queued" : "done");
out:
	json_decref(a);
	return rv;
}

/* An operation run: its output (as it is, for a terminal), its end. */
static void
ctl_run_result(json_t *a)
{
	json_t	*out = json_object_get(a, "output");

	if (json_is_string(out)) {
		fwrite(json_string_value(out), 1, json_string_length(out),
		    stdout);
		if (json_string_length(out) > 0 && json_string_value(out)[
		    json_string_length(out) - 1] != '\n')
			putchar('\n');
	} else if (json_is_true(json_object_get(a, "sensitive")))
		printf("(sensitive: the output was shown once, to whoever ran "
		    "it, and is not stored)\n");
	if (json_is_integer(json_object_get(a, "exit_code")))
		printf("exit code %lld\n", ctl_int(a, "exit_code"));
	else
		safe_printf("%s: %s\n", ctl_str(a, "state", "?"),
		    ctl_str(a, "error", "no exit code"));
}

/* Alike on purpose: cmd_actions, cmd_deployments: a list, own columns. */
/*
 * runs [namespace/]job [run]: the run log of a job's operations, newest
 * first, or one run with its output.
 */
int
cmd_runs(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*a = NULL, *v, *items;
	const char		*errstr = NULL;
	char			*path, *base, code[32], id[32];
	long long		 run = 0;
	size_t			 i;
	long			 st;
	int			 rv;

	if (argc == 2) {
		run = strtonum(argv[1], 1, LLONG_MAX, &errstr);
		if (errstr != NULL)
			errx(EXIT_USAGE, "run %s is %s", argv[1], errstr);
	}
	base = ctl_target_path(argv[0], NULL);
	if (strncmp(base, "/api/v1/jobs/", 13) != 0)
		errx(EXIT_USAGE, "%s: want [namespace/]job", argv[0]);
	if ((run > 0 ? asprintf(&path, "%s/operations/runs/%lld", base, run) :
	    asprintf(&path, "%s/operations/runs?limit=100", base)) == -1)
		err(1, "asprintf");
	free(base);
	st = ctl_call(ctl, "GET", path, NULL, &a);
	free(path);
	if (!ctl_answer(ctl, st, a, &rv))
		goto out;
	if (run > 0) {
		safe_printf("run %lld of %s by %s, started %s, %s\n", run,
		    ctl_str(a, "action", "?"), ctl_str(a, "actor", "?"),
		    ctl_str(a, "started_at", "?"), ctl_str(a, "state", "?"));
		ctl_run_result(a);
		goto out;
	}
	if ((items = ctl_items(a, "no operation runs")) == NULL)
		goto out;
	t = table_new(6, "RUN", "ACTION", "BY", "STARTED", "STATE", "EXIT");
	json_array_foreach(items, i, v)
		table_row(t, ctl_num(id, sizeof(id), v, "id"),
		    ctl_str(v, "action", "?"), ctl_str(v, "actor", "?"),
		    ctl_str(v, "started_at", "?"), ctl_str(v, "state", "?"),
		    ctl_num(code, sizeof(code), v, "exit_code"));
	table_out(t, 0);
out:
	json_decref(a);
	return rv;
}

/* Alike on purpose: each listing ends as cmd_jobs' does (ctl_engine.c). */

/*
 * left-behind id [retry | forget entry]: the objects a deployment's
 * cleanups left behind; retry them, or forget one record.
 */
int
cmd_left_behind(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*a = NULL, *v, *items;
	const char		*errstr = NULL;
	char			*path, num[32];
	long long		 id, entry = 0;
	size_t			 i;
	long			 st;
	int			 rv;

	id = strtonum(argv[0], 1, LLONG_MAX, &errstr);
	if (errstr != NULL)
		errx(EXIT_USAGE, "deployment id %s is %s", argv[0], errstr);
	if (argc == 1) {
		if (asprintf(&path, "/api/v1/deployments/left-behind/%lld",
		    id) == -1)
			err(1, "asprintf");
		st = ctl_call(ctl, "GET", path, NULL, &a);
	} else if (argc == 2 && strcmp(argv[1], "retry") == 0) {
		if (asprintf(&path, "/api/v1/deployments/left-behind/%lld",
		    id) == -1)
			err(1, "asprintf");
		v = json_object();
		st = ctl_call(ctl, "POST", path, v, &a);
		json_decref(v);
	} else if (argc == 3 && strcmp(argv[1], "forget") == 0) {
		entry = strtonum(argv[2], 1, LLONG_MAX, &errstr);
		if (errstr != NULL)
			errx(EXIT_USAGE, "record %s is %s", argv[2], errstr);
		if (asprintf(&path, "/api/v1/deployments/left-behind/%lld/"
		    "%lld", entry, id) == -1)
			err(1, "asprintf");
		st = ctl_call(ctl, "DELETE", path, NULL, &a);
	} else
		ctl_usage();
	free(path);
	if (!ctl_answer(ctl, st, a, &rv))
		goto out;
	if (argc == 2) {
		printf("removed %lld, still failing %lld, refused %lld\n",
		    ctl_int(a, "removed"), ctl_int(a, "still_failing"),
		    ctl_int(a, "refused"));
		goto out;
	}
	if (argc == 3) {
		printf("record %lld of deployment %lld forgotten\n", entry,
		    id);
		goto out;
	}
	if ((items = ctl_items(a, "nothing left behind")) == NULL)
		goto out;
	t = table_new(5, "ID", "KIND", "ENVIRONMENT", "OBJECT", "ERROR");
	json_array_foreach(items, i, v)
		table_row(t, ctl_num(num, sizeof(num), v, "id"),
		    ctl_str(v, "kind", "?"), ctl_str(v, "environment", ""),
		    ctl_str(v, "object", "?"), ctl_str(v, "error", ""));
	table_out(t, 0);
out:
	json_decref(a);
	return rv;
}
