/*
 * The engine's commands: jobs, deployments and what people do with them
 * (approve, reject, retry, promote; pause, resume, deploy-now), orphans
 * and files that fail to parse.  Each is one or two calls of the JSON API;
 * nopsd decides, nopsctl only asks and prints.
 */
#include "config.h"

#include <sys/types.h>
#include <err.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nopsctl.h"

#define CTL_PAGE_MAX	500	/* the largest page the API gives */

/* A deployment ID of the command line; a usage error if it is not one. */
static long long
ctl_id(const char *s)
{
	const char	*errstr = NULL;
	long long	 id;

	id = strtonum(s, 1, LLONG_MAX, &errstr);
	if (errstr != NULL)
		errx(EXIT_USAGE, "deployment id %s is %s", s, errstr);
	return id;
}

/*
 * "namespace/job", or "job" in namespace "default", as two escaped path
 * segments.  Namespaces hold no '/'; a job ID may (dispatched children),
 * so only the first one splits.
 */
static void
ctl_job_arg(const char *arg, char **ns, char **job)
{
	const char	*slash;
	char		*n;

	if ((slash = strchr(arg, '/')) == NULL) {
		*ns = ctl_escape("default");
		*job = ctl_escape(arg);
	} else {
		if ((n = strndup(arg, slash - arg)) == NULL)
			err(1, "strndup");
		*ns = ctl_escape(n);
		*job = ctl_escape(slash + 1);
		free(n);
	}
	if (**ns == '\0' || **job == '\0')
		errx(EXIT_USAGE, "%s: want namespace/job or job", arg);
}

static char *
xasprintf(const char *fmt, ...)
	__attribute__((__format__(printf, 1, 2)));

static char *
xasprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		err(1, "vasprintf");
	va_end(ap);
	return s;
}

static long long
num(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/*
 * GET a list, page after page through its "next" cursor, until it ends
 * or holds limit items (0: all of it).  *list is the first page with the
 * items of the others appended and "next" where the walk stopped.
 * Returns the HTTP status of the last call (with *list the error answer
 * when it is not 2xx), or -1.
 */
static long
ctl_list(struct ctl *ctl, const char *path, long long limit, json_t **list)
{
	json_t		*page, *items, *next;
	char		*url, *cursor = NULL;
	long long	 want, have = 0, pagemax = CTL_PAGE_MAX;
	long		 st;
#ifdef NOPS_TEST_HOOKS
	const char	*p;

	/* Small pages, so that tests walk the cursors. */
	if ((p = getenv("NOPSCTL_TEST_PAGE")) != NULL)
		pagemax = strtonum(p, 1, CTL_PAGE_MAX, NULL);
	if (pagemax == 0)
		pagemax = CTL_PAGE_MAX;
#endif

	*list = NULL;
	for (;;) {
		want = limit > 0 ? limit - have : pagemax;
		if (want > pagemax)
			want = pagemax;
		url = xasprintf("%s%slimit=%lld%s%s", path,
		    strchr(path, '?') != NULL ? "&" : "?", want,
		    cursor != NULL ? "&cursor=" : "", cursor != NULL ?
		    cursor : "");
		free(cursor);
		cursor = NULL;
		st = ctl_call(ctl, "GET", url, NULL, &page);
		free(url);
		if (st < 200 || st >= 300 || !json_is_object(page) ||
		    !json_is_array(json_object_get(page, "items"))) {
			if (st >= 200 && st < 300) {
				warnx("nopsd answered %s with no item list",
				    path);
				st = -1;
			}
			json_decref(*list);
			*list = page;
			return st;
		}
		items = json_object_get(page, "items");
		have += json_array_size(items);
		if (*list == NULL)
			*list = json_incref(page);
		else {
			json_array_extend(json_object_get(*list, "items"),
			    items);
			json_object_set(*list, "next", json_object_get(page,
			    "next"));
		}
		next = json_object_get(page, "next");
		/* An empty page that names a next one would never end. */
		if (!json_is_string(next) || json_array_size(items) == 0 ||
		    (limit > 0 && have >= limit)) {
			json_decref(page);
			return st;
		}
		cursor = ctl_escape(json_string_value(next));
		json_decref(page);
	}
}

static void
job_notes(struct ctl_table *t, json_t *j)
{
	json_t	*v;
	size_t	 i;

	if (json_is_string(json_object_get(j, "error")))
		table_note(t, "error: %s", ctl_str(j, "error", ""));
	json_array_foreach(json_object_get(j, "issues"), i, v)
		table_note(t, "%s: %s: %s", ctl_str(v, "severity", "?"),
		    ctl_str(v, "key", "?"), ctl_str(v, "message", "?"));
}

static void
hooks_print(json_t *hooks)
{
	struct ctl_table	*t;
	json_t			*h, *run;
	char			 pos[32], timeout[32], code[32];
	size_t			 i;

	if (json_array_size(hooks) == 0) {
		printf("  (none)\n");
		return;
	}
	t = table_new(9, "PHASE", "#", "HOOK", "REVISION", "TIMEOUT", "RUN",
	    "EXIT", "STARTED", "ENDED");
	json_array_foreach(hooks, i, h) {
		run = json_object_get(h, "run");
		snprintf(timeout, sizeof(timeout), "%llds", num(h, "timeout"));
		table_row(t, ctl_str(h, "phase", "?"),
		    ctl_num(pos, sizeof(pos), h, "position"),
		    ctl_str(h, "hook", "?"), ctl_str(h, "revision", "?"),
		    timeout, json_is_object(run) ? ctl_str(run, "state", "?") :
		    "not run", ctl_num(code, sizeof(code), run, "exit_code"),
		    ctl_str(run, "started_at", NULL),
		    ctl_str(run, "ended_at", NULL));
		if (json_is_string(json_object_get(run, "child")))
			table_note(t, "child: %s", ctl_str(run, "child", ""));
		if (json_is_string(json_object_get(run, "error")))
			table_note(t, "error: %s", ctl_str(run, "error", ""));
	}
	table_out(t, 2);
	/* Each finished run's output (the last 64 KiB, redacted). */
	json_array_foreach(hooks, i, h) {
		const char	*out;
		char		*safe, *line, *next;

		run = json_object_get(h, "run");
		if ((out = ctl_str(run, "output", NULL)) == NULL ||
		    *out == '\0')
			continue;
		printf("\n  output of %s hook %s (last 64 KiB, redacted):\n",
		    ctl_str(h, "phase", "?"), ctl_str(h, "hook", "?"));
		if ((line = strdup(out)) == NULL)
			err(1, "strdup");
		for (next = line; next != NULL;) {
			char	*l = strsep(&next, "\n");

			if (next == NULL && *l == '\0')
				break;
			safe = safe_str(l);
			printf("    | %s\n", safe);
			free(safe);
		}
		free(line);
	}
}

static void
issues_print(json_t *issues)
{
	struct ctl_table	*t;
	json_t			*v;
	size_t			 i;

	if (json_array_size(issues) == 0)
		return;
	printf("\nissues:\n");
	t = table_new(3, "SEVERITY", "KEY", "MESSAGE");
	json_array_foreach(issues, i, v)
		table_row(t, ctl_str(v, "severity", "?"),
		    ctl_str(v, "key", "?"), ctl_str(v, "message", "?"));
	table_out(t, 2);
}

static void
job_detail(json_t *j)
{
	json_t		*p;
	char		 buf[32], *s;

	print_field("job", ctl_str(j, "id", "?"));
	print_field("namespace", ctl_str(j, "namespace", "?"));
	print_field("repository", ctl_str(j, "repository", "?"));
	print_field("path", ctl_str(j, "path", "?"));
	print_field("commit", ctl_str(j, "commit", "?"));
	print_field("role", ctl_str(j, "role", "?"));
	print_field("policy", ctl_str(j, "policy", "?"));
	print_field("state", ctl_str(j, "state", NULL));
	print_field("note", ctl_str(j, "note", NULL));
	print_field("drift", json_is_true(json_object_get(j, "drift")) ?
	    "yes" : "no");
	print_field("deployment", ctl_num(buf, sizeof(buf), j, "deployment"));
	print_field("spec hash", ctl_str(j, "spec_hash", NULL));
	if (json_is_object(p = json_object_get(j, "paused"))) {
		print_field("paused by", ctl_str(p, "by", "?"));
		print_field("paused since", ctl_str(p, "since", "?"));
		print_field("pause reason", ctl_str(p, "reason", "?"));
	} else
		print_field("paused", "no");
	if (json_is_object(p = json_object_get(j, "suspended"))) {
		print_field("suspended by", ctl_str(p, "by", "?"));
		print_field("suspended since", ctl_str(p, "since", "?"));
	} else
		print_field("suspended", "no");
	s = ctl_actions_enabled(json_object_get(j, "actions"));
	print_field("actions", s != NULL ? s : "none");
	free(s);
	if (json_is_string(json_object_get(j, "error")))
		print_field("error", ctl_str(j, "error", ""));
	issues_print(json_object_get(j, "issues"));
	printf("\nhooks:\n");
	hooks_print(json_object_get(j, "hooks"));
	printf("\ndiff:\n");
	print_diff(json_object_get(j, "diff"), 2);
}

int
cmd_jobs(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*a, *j, *items;
	char			*ns, *job, *path, buf[32];
	size_t			 i;
	long			 st;
	int			 rv;

	if (argc == 1) {
		ctl_job_arg(argv[0], &ns, &job);
		path = xasprintf("/api/v1/jobs/%s/%s", ns, job);
		free(ns);
		free(job);
		st = ctl_call(ctl, "GET", path, NULL, &a);
		free(path);
	} else
		st = ctl_list(ctl, "/api/v1/jobs", 0, &a);
	if (!ctl_answer(ctl, st, a, &rv))
		goto out;
	if (argc == 1) {
		job_detail(a);
		goto out;
	}
	if ((items = ctl_items(a, "no jobs in git")) == NULL)
		goto out;
	t = table_new(8, "NAMESPACE", "JOB", "ROLE", "POLICY", "DRIFT",
	    "STATE", "DEPLOYMENT", "NOTE");
	json_array_foreach(items, i, j) {
		table_row(t, ctl_str(j, "namespace", "?"),
		    ctl_str(j, "id", "?"),
		    ctl_str(j, "role", "?"), ctl_str(j, "policy", "?"),
		    json_is_true(json_object_get(j, "drift")) ? "yes" : "no",
		    ctl_str(j, "state", NULL),
		    ctl_num(buf, sizeof(buf), j, "deployment"),
		    ctl_str(j, "note", NULL));
		job_notes(t, j);
	}
	table_out(t, 0);
out:
	json_decref(a);
	return rv;
}

/* deployments [-J job] [-l limit] [-n namespace] [-s state] */
int
cmd_deployments(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*a, *d, *items;
	char			*path, *q, *e, *tmp, commit[16], job[512];
	const char		*keys[] = { "state", "namespace", "job" };
	const char		*vals[] = { ctl->state, ctl->ns, ctl->job };
	size_t			 i;
	long			 st;
	int			 rv;

	path = xasprintf("/api/v1/deployments");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (vals[i] == NULL)
			continue;
		e = ctl_escape(vals[i]);
		q = strchr(path, '?');
		tmp = xasprintf("%s%s%s=%s", path, q != NULL ? "&" : "?",
		    keys[i], e);
		free(e);
		free(path);
		path = tmp;
	}
	st = ctl_list(ctl, path, ctl->limit, &a);
	free(path);
	if (!ctl_answer(ctl, st, a, &rv))
		goto out;
	if ((items = ctl_items(a, "no deployments")) == NULL)
		goto out;
	t = table_new(8, "ID", "JOB", "STATE", "POLICY", "COMMIT", "CREATED",
	    "UPDATED", "REASON");
	json_array_foreach(items, i, d) {
		snprintf(job, sizeof(job), "%s/%s",
		    ctl_str(d, "namespace", "?"),
		    ctl_str(d, "job", ctl_str(d, "plan", "?")));
		/* Twelve hex digits name a commit, as git log --oneline. */
		snprintf(commit, sizeof(commit), "%.12s", ctl_str(d, "commit",
		    "-"));
		tmp = xasprintf("%lld", num(d, "id"));
		table_row(t, tmp, job, ctl_str(d, "state", "?"),
		    ctl_str(d, "policy", "?"), commit,
		    ctl_str(d, "created_at", NULL),
		    ctl_str(d, "updated_at", NULL), ctl_str(d, "reason", NULL));
		free(tmp);
	}
	table_out(t, 0);
	if (json_is_string(json_object_get(a, "next")))
		printf("(more: raise -l to see them)\n");
out:
	json_decref(a);
	return rv;
}

/* The health progress of the Nomad deployment and its allocations. */
static void
health_print(json_t *h)
{
	struct ctl_table	*t;
	json_t			*nd, *g, *a, *ev;
	char			 n[6][32], *s;
	size_t			 i, j;

	if (!json_is_object(h))
		return;
	printf("\nhealth (as of %s):\n", ctl_str(h, "updated_at", "?"));
	nd = json_object_get(h, "nomad_deployment");
	if (json_is_object(nd)) {
		s = xasprintf("nomad deployment %.8s of version %lld: %s: %s",
		    ctl_str(nd, "id", "?"), num(nd, "job_version"),
		    ctl_str(nd, "status", "?"), ctl_str(nd, "description", ""));
		print_field(" ", s);
		free(s);
	} else
		printf("  version %lld, no Nomad deployment: judged by its "
		    "allocations\n", num(h, "job_version"));
	t = table_new(6, "GROUP", "DESIRED", "PLACED", "HEALTHY", "UNHEALTHY",
	    "CANARIES");
	json_array_foreach(json_object_get(h, "groups"), i, g) {
		snprintf(n[5], sizeof(n[5]), "%lld/%lld%s",
		    num(g, "placed_canaries"), num(g, "desired_canaries"),
		    json_is_true(json_object_get(g, "promoted")) ?
		    " promoted" : "");
		table_row(t, ctl_str(g, "name", "?"),
		    ctl_num(n[0], sizeof(n[0]), g, "desired"),
		    ctl_num(n[1], sizeof(n[1]), g, "placed"),
		    ctl_num(n[2], sizeof(n[2]), g, "healthy"),
		    ctl_num(n[3], sizeof(n[3]), g, "unhealthy"),
		    num(g, "desired_canaries") > 0 ? n[5] : "-");
	}
	table_out(t, 2);
	if (json_array_size(json_object_get(h, "allocations")) == 0)
		return;
	t = table_new(4, "ALLOCATION", "GROUP", "STATUS", "HEALTHY");
	json_array_foreach(json_object_get(h, "allocations"), i, a) {
		s = xasprintf("%.8s%s", ctl_str(a, "id", "?"),
		    json_is_true(json_object_get(a, "canary")) ? " canary" :
		    "");
		table_row(t, s, ctl_str(a, "group", "?"),
		    ctl_str(a, "client_status", "?"),
		    json_is_true(json_object_get(a, "healthy")) ? "yes" :
		    json_is_false(json_object_get(a, "healthy")) ? "no" :
		    "not yet");
		free(s);
		json_array_foreach(json_object_get(a, "events"), j, ev)
			table_note(t, "%s: %s: %s", ctl_str(ev, "task", "?"),
			    ctl_str(ev, "type", "?"), ctl_str(ev, "message",
			    ""));
	}
	table_out(t, 2);
}

static void
deployment_detail(json_t *d)
{
	struct ctl_table	*t;
	json_t			*v;
	char			 buf[32], *s;
	size_t			 i;

	printf("deployment %lld\n", num(d, "id"));
	s = xasprintf("%s/%s", ctl_str(d, "namespace", "?"),
	    ctl_str(d, "job", ctl_str(d, "plan", "?")));
	print_field("job", s);
	free(s);
	print_field("repository", ctl_str(d, "repository", NULL));
	print_field("commit", ctl_str(d, "commit", NULL));
	print_field("state", ctl_str(d, "state", NULL));
	print_field("policy", ctl_str(d, "policy", NULL));
	print_field("spec hash", ctl_str(d, "spec_hash", NULL));
	print_field("reason", ctl_str(d, "reason", NULL));
	print_field("created", ctl_str(d, "created_at", NULL));
	print_field("updated", ctl_str(d, "updated_at", NULL));
	if (json_is_string(json_object_get(d, "approved_by"))) {
		s = xasprintf("%s at %s", ctl_str(d, "approved_by", "?"),
		    ctl_str(d, "approved_at", "?"));
		print_field("approved by", s);
		free(s);
	} else
		print_field("approved by", NULL);
	print_field("retry of", ctl_num(buf, sizeof(buf), d, "retry_of"));
	print_field("nomad deployment", ctl_str(d, "nomad_deployment", NULL));
	print_field("job version", ctl_num(buf, sizeof(buf), d, "job_version"));
	print_field("timeout at", ctl_str(d, "timeout_at", NULL));
	print_field("ended", ctl_str(d, "ended_at", NULL));
	s = ctl_actions_enabled(json_object_get(d, "actions"));
	print_field("actions", s != NULL ? s : "none");
	free(s);
	print_git(json_object_get(d, "git"));

	health_print(json_object_get(d, "health"));
	printf("\ndiff:\n");
	print_diff(json_object_get(d, "diff"), 2);
	printf("\nhooks:\n");
	hooks_print(json_object_get(d, "hooks"));
	printf("\nevents:\n");
	if (json_array_size(json_object_get(d, "events")) == 0) {
		printf("  (none)\n");
		return;
	}
	t = table_new(4, "AT", "ACTOR", "ACTION", "DETAIL");
	json_array_foreach(json_object_get(d, "events"), i, v)
		table_row(t, ctl_str(v, "at", "?"), ctl_str(v, "actor", "?"),
		    ctl_str(v, "action", "?"), ctl_str(v, "detail", NULL));
	table_out(t, 2);
}

static char *
deployment_path(long long id, const char *action)
{
	if (action == NULL)
		return xasprintf("/api/v1/deployments/%lld", id);
	return xasprintf("/api/v1/deployments/%lld/actions/%s", id,
	    action);
}

int
cmd_show(struct ctl *ctl, int argc, char **argv)
{
	json_t	*a;
	char	*path;
	long	 st;
	int	 rv;

	path = deployment_path(ctl_id(argv[0]), NULL);
	st = ctl_call(ctl, "GET", path, NULL, &a);
	free(path);
	if ((rv = ctl_check(ctl, st, a)) == 0) {
		if (ctl->json)
			ctl_print_json(a);
		else
			deployment_detail(a);
	}
	json_decref(a);
	return rv;
}

/*
 * approve ID [--hash spec_hash]: the hash says which spec the person
 * approves; nopsd refuses (409) when the deployment's is another.  Without
 * --hash, it is the one the deployment has right now.
 */
int
cmd_approve(struct ctl *ctl, int argc, char **argv)
{
	json_t		*a = NULL, *body;
	char		*path;
	long long	 id = ctl_id(argv[0]);
	long		 st;
	int		 rv;

	if (ctl->hash != NULL)
		body = json_pack("{s:s}", "spec_hash", ctl->hash);
	else {
		path = deployment_path(id, NULL);
		st = ctl_call(ctl, "GET", path, NULL, &a);
		free(path);
		if ((rv = ctl_check(ctl, st, a)) != 0)
			goto out;
		if (!json_is_string(json_object_get(a, "spec_hash"))) {
			warnx("deployment %lld has no spec hash", id);
			rv = EXIT_ANSWER;
			goto out;
		}
		body = json_pack("{s:O}", "spec_hash",
		    json_object_get(a, "spec_hash"));
		json_decref(a);
	}
	path = deployment_path(id, "approve");
	rv = ctl_post(ctl, path, body, &a);
	free(path);
	if (rv == 0 && !ctl->json)
		printf("deployment %lld approved, now %s\n", id,
		    ctl_str(a, "state", "?"));
out:
	json_decref(a);
	return rv;
}

/* reject and acknowledge: an action on a deployment with a reason. */
static int
ctl_reasoned(struct ctl *ctl, const char *id_arg, const char *action,
    const char *done)
{
	json_t		*a, *body = json_object();
	char		*path;
	long long	 id = ctl_id(id_arg);
	int		 rv;

	if (ctl->reason != NULL)
		json_object_set_new(body, "reason", json_string(ctl->reason));
	path = deployment_path(id, action);
	rv = ctl_post(ctl, path, body, &a);
	free(path);
	if (rv == 0 && !ctl->json)
		printf("deployment %lld %s\n", id, done);
	json_decref(a);
	return rv;
}

int
cmd_reject(struct ctl *ctl, int argc, char **argv)
{
	return ctl_reasoned(ctl, argv[0], "reject", "rejected");
}

/* acknowledge id [--reason text]: a failure seen, off the Overview. */
int
cmd_acknowledge(struct ctl *ctl, int argc, char **argv)
{
	return ctl_reasoned(ctl, argv[0], "acknowledge", "acknowledged");
}

/* Alike on purpose: ctl_reasoned; no reason, other words printed. */
/* retry and promote: nopsd queues them and answers 202. */
static int
ctl_queued(struct ctl *ctl, const char *id_arg, const char *action,
    const char *what)
{
	json_t		*a;
	char		*path;
	long long	 id = ctl_id(id_arg);
	int		 rv;

	path = deployment_path(id, action);
	rv = ctl_post(ctl, path, json_object(), &a);
	free(path);
	if (rv == 0 && !ctl->json)
		printf("%s of deployment %lld queued\n", what, id);
	json_decref(a);
	return rv;
}

int
cmd_retry(struct ctl *ctl, int argc, char **argv)
{
	return ctl_queued(ctl, argv[0], "retry", "retry");
}

int
cmd_promote(struct ctl *ctl, int argc, char **argv)
{
	return ctl_queued(ctl, argv[0], "promote", "promotion");
}

static int
ctl_job_action(struct ctl *ctl, const char *arg, const char *action,
    json_t *body)
{
	json_t	*a;
	char	*ns, *job, *path;
	int	 rv;

	ctl_job_arg(arg, &ns, &job);
	path = xasprintf("/api/v1/jobs/%s/%s/actions/%s", ns, job,
	    action);
	free(ns);
	free(job);
	rv = ctl_post(ctl, path, body, &a);
	free(path);
	if (rv == 0 && !ctl->json) {
		char	*s = xasprintf("%s/%s", ctl_str(a, "namespace", "?"),
		    ctl_str(a, "id", "?"));
		char	*safe = safe_str(s);

		if (strcmp(action, "deploy-now") == 0 &&
		    json_is_integer(json_object_get(a, "deployment")))
			printf("deployment %lld of %s started without "
			    "approval\n", ctl_int(a, "deployment"), safe);
		else if (strcmp(action, "deploy-now") == 0)
			printf("deploy-now of %s queued\n", safe);
		else
			printf("%s %sd\n", safe, action);
		free(safe);
		free(s);
	}
	json_decref(a);
	return rv;
}

/* pause [namespace/]job --reason text: a pause says why, always. */
int
cmd_pause(struct ctl *ctl, int argc, char **argv)
{
	if (ctl->reason == NULL || ctl->reason[0] == '\0') {
		warnx("pause needs --reason: say why, for the others");
		ctl_usage();
	}
	return ctl_job_action(ctl, argv[0], "pause", json_pack("{s:s}",
	    "reason", ctl->reason));
}

int
cmd_resume(struct ctl *ctl, int argc, char **argv)
{
	return ctl_job_action(ctl, argv[0], "resume", json_object());
}

int
cmd_deploy_now(struct ctl *ctl, int argc, char **argv)
{
	return ctl_job_action(ctl, argv[0], "deploy-now", json_object());
}

int
cmd_orphans(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*a, *o;
	char			 buf[32];
	size_t			 i;
	long			 st;
	int			 rv;

	st = ctl_list(ctl, "/api/v1/orphans", 0, &a);
	if (!ctl_answer(ctl, st, a, &rv))
		goto out;
	if (json_array_size(json_object_get(a, "items")) == 0)
		printf("no orphans\n");
	else {
		t = table_new(3, "NAMESPACE", "JOB", "LAST DEPLOYMENT");
		json_array_foreach(json_object_get(a, "items"), i, o)
			table_row(t, ctl_str(o, "namespace", "?"),
			    ctl_str(o, "id", "?"), ctl_num(buf, sizeof(buf), o,
			    "last_deployment"));
		table_out(t, 0);
	}
	/* While a file fails to parse, a job may only look gone. */
	if (json_is_false(json_object_get(a, "complete")))
		printf("(may be stale: some files fail to parse, see "
		    "nopsctl errors)\n");
out:
	json_decref(a);
	return rv;
}

int
cmd_errors(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_table	*t;
	json_t			*a, *e, *items;
	char			*msg, *line, *p;
	size_t			 i;
	long			 st;
	int			 rv;

	st = ctl_list(ctl, "/api/v1/files/errors", 0, &a);
	if (!ctl_answer(ctl, st, a, &rv))
		goto out;
	if ((items = ctl_items(a, "no file errors")) == NULL)
		goto out;
	t = table_new(2, "REPOSITORY", "PATH");
	json_array_foreach(items, i, e) {
		table_row(t, ctl_str(e, "repository", "?"),
		    ctl_str(e, "path", "?"));
		/* Parse errors run over several lines: one note each. */
		if ((msg = strdup(ctl_str(e, "error", "?"))) == NULL)
			err(1, "strdup");
		for (p = msg; (line = strsep(&p, "\n")) != NULL;)
			if (*line != '\0')
				table_note(t, "%s", line);
		free(msg);
	}
	table_out(t, 0);
out:
	json_decref(a);
	return rv;
}
