/*
 * nopsctl: the command line of nops.  A client of nopsd's HTTP JSON API,
 * over the local control socket (root or the control group are local
 * admins) or over TCP with a URL and a bearer token.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "nopsctl.h"
#include "ctl_auth.h"
#include "jsonwipe.h"

#define CTL_MAX_ANSWER	(64 * 1024 * 1024)
#define CTL_TIMEOUT	60

struct ctl_buf {
	char	*data;
	size_t	 len;
};

static int		 cmd_status(struct ctl *, int, char **);
static int		 cmd_reload(struct ctl *, int, char **);
static int		 cmd_log(struct ctl *, int, char **);
static int		 cmd_repos(struct ctl *, int, char **);
static int		 cmd_fetch(struct ctl *, int, char **);

static const struct option no_opts[] = {
	{ NULL, 0, NULL, 0 }
};
static const struct option deployments_opts[] = {
	{ "state",	required_argument,	NULL, 's' },
	{ "namespace",	required_argument,	NULL, 'n' },
	{ "job",	required_argument,	NULL, 'J' },
	{ "limit",	required_argument,	NULL, 'l' },
	{ NULL, 0, NULL, 0 }
};
static const struct option approve_opts[] = {
	{ "hash",	required_argument,	NULL, 'H' },
	{ NULL, 0, NULL, 0 }
};
static const struct option action_opts[] = {
	{ "input",	required_argument,	NULL, 'i' },
	{ "reason",	required_argument,	NULL, 'r' },
	{ NULL, 0, NULL, 0 }
};
static const struct option each_host_opts[] = {
	{ "host",	required_argument,	NULL, 'h' },
	{ "input",	required_argument,	NULL, 'i' },
	{ "limit",	required_argument,	NULL, 'l' },
	{ NULL, 0, NULL, 0 }
};
static const struct option reason_opts[] = {
	{ "reason",	required_argument,	NULL, 'r' },
	{ NULL, 0, NULL, 0 }
};

/* The order of the usage message and of nopsctl(8). */
/* Alike on purpose: one row per command, each row the shape of the others. */
static const struct ctl_cmd ctl_cmds[] = {
	{ "status",	0, 0, "",		no_opts, "", cmd_status,
	    "the daemon, its workers and the engine" },
	{ "reload",	0, 0, "",		no_opts, "", cmd_reload,
	    "read nops.conf again (an invalid one is refused)" },
	{ "log",	1, 1, "verbose | brief", no_opts, "", cmd_log,
	    "log verbosely or briefly" },
	{ "repos",	0, 1, "[name]",		no_opts, "", cmd_repos,
	    "the repositories, their last fetch and error" },
	{ "fetch",	1, 1, "name",		no_opts, "", cmd_fetch,
	    "fetch a repository now" },
	{ "jobs",	0, 1, "[namespace/job]", no_opts, "", cmd_jobs,
	    "the jobs in git and their state" },
	{ "deployments", 0, 0, "[-J job] [-l limit] [-n namespace] "
	    "[-s state]",			deployments_opts, "J:l:n:s:",
	    cmd_deployments,
	    "the deployments, newest first" },
	{ "show",	1, 1, "id",		no_opts, "", cmd_show,
	    "one deployment: diff, health, hooks, events" },
	{ "approve",	1, 1, "id [--hash spec_hash]", approve_opts, "",
	    cmd_approve,
	    "approve a deployment waiting for it" },
	{ "reject",	1, 1, "id [--reason text]", reason_opts, "",
	    cmd_reject,
	    "reject a deployment waiting for approval" },
	{ "retry",	1, 1, "id",		no_opts, "", cmd_retry,
	    "retry a failed or rejected deployment" },
	{ "acknowledge", 1, 1, "id [--reason text]", reason_opts, "",
	    cmd_acknowledge,
	    "take a failed deployment off the Overview's attention" },
	{ "promote",	1, 1, "id",		no_opts, "", cmd_promote,
	    "promote the canaries of a deployment" },
	{ "pause",	1, 1, "[namespace/]job --reason text", reason_opts, "",
	    cmd_pause,
	    "keep new deployments of a job from starting" },
	{ "resume",	1, 1, "[namespace/]job", no_opts, "", cmd_resume,
	    "end the pause of a job" },
	{ "deploy-now",	1, 1, "[namespace/]job", no_opts, "",
	    cmd_deploy_now,
	    "deploy a job's drift now, without approval" },
	{ "actions",	1, 1, "id | [namespace/]job", no_opts, "",
	    cmd_actions, "what can be done to a job or a deployment" },
	{ "action",	2, 2, "id | [namespace/]job action "
	    "[--input json | @file] [--reason text]", action_opts, "",
	    cmd_action, "take an action (or run an operation)" },
	{ "left-behind", 1, 3, "id [retry | forget entry]", no_opts, "",
	    cmd_left_behind, "objects a deployment's cleanups left behind" },
	{ "runs",	1, 2, "[namespace/]job [run]", no_opts, "", cmd_runs,
	    "the run log of a job's operations, or one run" },
	{ "orphans",	0, 0, "",		no_opts, "", cmd_orphans,
	    "jobs nops deployed that are gone from git" },
	{ "errors",	0, 0, "",		no_opts, "", cmd_errors,
	    "job files that do not parse" },
	{ "hosts",	0, 0, "",		no_opts, "", cmd_hosts,
	    "the hosts of every deploy plan, wanted and current system" },
	{ "plan",	1, 1, "repository",	no_opts, "", cmd_plan,
	    "a repository's deploy plan" },
	{ "each-host",	2, 2, "repository operation [-l limit] "
	    "[--host name ...] [--input json | @file]", each_host_opts, "l:",
	    cmd_each_host,
	    "run a plan's operation on each of its hosts, or those named" },
	{ "host-runs",	1, 3, "repository [host] [run]", no_opts, "",
	    cmd_host_runs,
	    "the run log of operations on a plan's hosts, or one run" },
	/* "+": token parses its own options (ctl_auth.c). */
	{ "token",	1, 6, "create name --policy policy "
	    "[--expires duration] | list | revoke name | id", no_opts, "+",
	    cmd_token,
	    "create, list or revoke API tokens" },
	{ "hash-password", 0, 0, "",		no_opts, "",
	    cmd_hash_password,
	    "hash a password from stdin for a users file" },
	{ "gen-secret",	0, 0, "",		no_opts, "", cmd_gen_secret,
	    "print a random secret" },
	{ "check",	1, 1000, "file | directory ...", no_opts, "",
	    cmd_check,
	    "check job files offline: nops_ meta keys and hooks, FILE:LINE" },
};

static void
ctl_usage_to(FILE *f, int descs)
{
	extern char	*__progname;
	size_t		 i;

	fprintf(f, "usage: %s [-jV] [-f file] [-s socket | -u url -t "
	    "tokenfile] command [argument ...]\n", __progname);
	fprintf(f, "commands (%s command --help for one):\n", __progname);
	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++) {
		fprintf(f, "\t%s%s%s\n", ctl_cmds[i].name,
		    ctl_cmds[i].args[0] != '\0' ? " " : "",
		    ctl_cmds[i].args);
		if (descs)
			fprintf(f, "\t    %s\n", ctl_cmds[i].desc);
	}
	if (descs)
		fprintf(f, "The control socket is -s, else $NOPS_SOCKET, else "
		    "the control socket of the config file (-f, by default "
		    "%s), else %s.\n", NOPS_CONF_FILE, NOPS_CONTROL_SOCKET);
}

__dead void
ctl_usage(void)
{
	ctl_usage_to(stderr, 0);
	exit(EXIT_USAGE);
}

/* command --help: its usage line and what it does, on stdout. */
static __dead void
ctl_cmd_help(const struct ctl_cmd *cmd)
{
	extern char	*__progname;

	printf("usage: %s %s%s%s\n\n%s\n", __progname, cmd->name,
	    cmd->args[0] != '\0' ? " " : "", cmd->args, cmd->desc);
	exit(0);
}

static size_t
ctl_write_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct ctl_buf	*b = arg;
	size_t		 n = size * nmemb;
	char		*p;

	if (b->len + n > CTL_MAX_ANSWER)
		return 0;
	if ((p = realloc(b->data, b->len + n + 1)) == NULL)
		return 0;
	b->data = p;
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/*
 * Why the control socket did not answer, in words: missing, not a
 * socket, refused (a stale socket left by a nopsd that is gone), or not
 * ours to use.
 */
/* Where the socket's name came from, for the diagnostics. */
static const char	*ctl_socket_origin = "the default";

static void
ctl_socket_diagnose(const char *path)
{
	struct sockaddr_un	 sun;
	struct stat		 sb;
	int			 fd, e = 0;

	if (stat(path, &sb) == -1) {
		warnx("cannot reach nopsd: no control socket at %s (%s, from "
		    "%s); is nopsd running?  Name the socket with -s or "
		    "NOPS_SOCKET", path, strerror(errno), ctl_socket_origin);
		return;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		warnx("cannot reach nopsd: %s is not a socket; name the "
		    "control socket with -s or NOPS_SOCKET", path);
		return;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path)) {
		warnx("cannot reach nopsd: the socket path %s is too long",
		    path);
		return;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
		warn("socket");
		return;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		e = errno;
	close(fd);
	if (e == ECONNREFUSED)
		warnx("cannot reach nopsd: %s refused the connection: a stale "
		    "socket, nopsd is not listening on it (stopped, or "
		    "another socket in nops.conf?); use -s or NOPS_SOCKET",
		    path);
	else if (e == EACCES || e == EPERM)
		warnx("cannot reach nopsd: %s: permission denied; be root or "
		    "in the control socket's group", path);
	else
		warnx("cannot reach nopsd at %s: %s", path, e != 0 ?
		    strerror(e) : "connection failed");
}

/*
 * One API call.  Returns the HTTP status (with *answer the decoded JSON,
 * or NULL), or -1 if there was no answer at all (an error is printed).
 */
long
ctl_call(struct ctl *ctl, const char *method, const char *path,
    json_t *body, json_t **answer)
{
	CURL			*c;
	CURLcode		 rc;
	struct curl_slist	*hdrs = NULL;
	struct ctl_buf		 buf = { NULL, 0 };
	json_error_t		 jerr;
	char			 url[2048], *auth = NULL, *payload = NULL;
	long			 status = -1;
	int			 n;

	*answer = NULL;
	if ((c = curl_easy_init()) == NULL)
		errx(1, "curl_easy_init failed");
	if (ctl->url != NULL)
		n = snprintf(url, sizeof(url), "%s%s", ctl->url, path);
	else {
		/* The host part is ignored over a UNIX socket. */
		n = snprintf(url, sizeof(url), "http://localhost%s", path);
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, ctl->socket);
	}
	/* A cut URL would ask for something else. */
	if (n < 0 || (size_t)n >= sizeof(url))
		errx(EXIT_USAGE, "request too long: %.64s...", path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, ctl->timeout > 0 ? ctl->timeout :
	    (long)CTL_TIMEOUT);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ctl_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &buf);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	if (ctl->token != NULL) {
		if (asprintf(&auth, "Authorization: Bearer %s",
		    ctl->token) == -1)
			err(1, "asprintf");
		hdrs = curl_slist_append(hdrs, auth);
	}
	if (body != NULL) {
		if ((payload = json_dumps(body, JSON_COMPACT)) == NULL)
			errx(1, "json_dumps");
		hdrs = curl_slist_append(hdrs,
		    "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);

	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		if (ctl->url == NULL && rc == CURLE_COULDNT_CONNECT)
			ctl_socket_diagnose(ctl->socket);
		else
			warnx("cannot reach nopsd at %s: %s",
			    ctl->url != NULL ? ctl->url : ctl->socket,
			    curl_easy_strerror(rc));
		goto done;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (buf.len > 0) {
		*answer = json_loadb(buf.data, buf.len, 0, &jerr);
		if (*answer == NULL)
			warnx("nopsd answered %ld with a body that is not "
			    "JSON", status);
	}
done:
	if (auth != NULL) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	free(payload);
	free(buf.data);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	return status;
}

/*
 * Print an error answer and return the exit status for it; print JSON
 * answers as they are with -j.
 */
int
ctl_check(struct ctl *ctl, long status, json_t *answer)
{
	json_t		*e;
	char		*code, *msg;

	if (status == -1)
		return EXIT_ANSWER;
	if (status >= 200 && status < 300)
		return 0;
	if (ctl->json && answer != NULL) {
		json_dumpf(answer, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		/* The message may quote git or Nomad: made safe. */
		e = json_object_get(answer, "error");
		code = safe_str(ctl_str(e, "code", "error"));
		msg = safe_str(ctl_str(e, "message", "no message"));
		fprintf(stderr, "nopsctl: %s (%ld): %s\n", code, status, msg);
		free(code);
		free(msg);
	}
	return EXIT_ANSWER;
}

void
ctl_print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2));
	putchar('\n');
}

/*
 * The answer a (HTTP status st) for a person: 1 when the caller prints
 * it; else 0, *rv the exit status, and the error said (ctl_check) or,
 * under -j, the answer printed as it is.
 */
int
ctl_answer(struct ctl *ctl, long st, json_t *a, int *rv)
{
	if ((*rv = ctl_check(ctl, st, a)) != 0)
		return 0;
	if (ctl->json) {
		ctl_print_json(a);
		return 0;
	}
	return 1;
}

/* GET path into *a, then ctl_answer() it. */
int
ctl_get(struct ctl *ctl, const char *path, json_t **a, int *rv)
{
	long	 st;

	st = ctl_call(ctl, "GET", path, NULL, a);
	return ctl_answer(ctl, st, *a, rv);
}

/*
 * POST body (consumed) to path, the answer in *answer: the error said,
 * or under -j the answer printed.  Returns the exit status.
 */
int
ctl_post(struct ctl *ctl, const char *path, json_t *body, json_t **answer)
{
	long	 st;
	int	 rv;

	st = ctl_call(ctl, "POST", path, body, answer);
	json_decref(body);
	if ((rv = ctl_check(ctl, st, *answer)) == 0 && ctl->json)
		ctl_print_json(*answer);
	return rv;
}

/* The items of list answer a; NULL, with none said, when there are none. */
json_t *
ctl_items(json_t *a, const char *none)
{
	json_t	*items = json_object_get(a, "items");

	if (json_array_size(items) == 0) {
		printf("%s\n", none);
		return NULL;
	}
	return items;
}

/* The integer o[key], or 0 when it is absent or not one. */
long long
ctl_int(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* The integer o[key] as text in buf, or "-" when it is not one. */
const char *
ctl_num(char *buf, size_t len, json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	if (!json_is_integer(v))
		return "-";
	snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	return buf;
}

/* The string o[key], or def when it is absent, null or not a string. */
const char *
ctl_str(json_t *o, const char *key, const char *def)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : def;
}

/* s percent-encoded for a path segment or a query value; free(3) it. */
char *
ctl_escape(const char *s)
{
	char	*e, *r;

	if ((e = curl_easy_escape(NULL, s, 0)) == NULL)
		errx(1, "curl_easy_escape");
	if ((r = strdup(e)) == NULL)
		err(1, "strdup");
	curl_free(e);
	return r;
}

static int
cmd_status(struct ctl *ctl, int argc, char **argv)
{
	json_t		*a, *w, *db;
	size_t		 i;
	int		 rv;

	if (!ctl_get(ctl, "/api/v1/status", &a, &rv))
		goto out;
	printf("nopsd %s, pid %lld, started %s\n", ctl_str(a, "version", "?"),
	    ctl_int(a, "pid"), ctl_str(a, "started_at", "?"));
	printf("config %s, loaded %s, %lld reloads, %lld refused\n",
	    ctl_str(a, "config", "?"), ctl_str(a, "config_loaded_at", "?"),
	    ctl_int(a, "reloads"), ctl_int(a, "reload_failures"));
	db = json_object_get(a, "database");
	printf("database %s, schema version %lld\n", ctl_str(db, "path", "?"),
	    ctl_int(db, "schema_version"));
	printf("log %s\n\n", json_integer_value(json_object_get(a,
	    "verbose")) > 0 ? "verbose" : "brief");
	printf("%-12s %-8s %-10s %-8s %s\n", "WORKER", "PID", "STATE",
	    "RESTARTS", "LAST EXIT");
	json_array_foreach(json_object_get(a, "workers"), i, w) {
		printf("%-12s %-8lld %-10s %-8lld %s\n",
		    ctl_str(w, "name", "?"), ctl_int(w, "pid"),
		    ctl_str(w, "state", "?"), ctl_int(w, "restarts"),
		    ctl_str(w, "last_exit", "-"));
	}
out:
	json_decref(a);
	return rv;
}

static int
cmd_reload(struct ctl *ctl, int argc, char **argv)
{
	json_t	*a;
	int	 rv;

	rv = ctl_post(ctl, "/api/v1/reload", json_object(), &a);
	if (rv == 0 && !ctl->json)
		printf("reloaded\n");
	json_decref(a);
	return rv;
}

static int
cmd_log(struct ctl *ctl, int argc, char **argv)
{
	json_t	*a, *body;
	int	 rv, verbose;

	if (strcmp(argv[0], "verbose") == 0)
		verbose = 1;
	else if (strcmp(argv[0], "brief") == 0)
		verbose = 0;
	else
		errx(EXIT_USAGE, "log %s: say verbose or brief", argv[0]);
	body = json_pack("{s:b}", "verbose", verbose);
	rv = ctl_post(ctl, "/api/v1/log", body, &a);
	if (rv == 0 && !ctl->json)
		printf("log %s\n", verbose ? "verbose" : "brief");
	json_decref(a);
	return rv;
}

/* /api/v1/repositories/NAME[suffix], with NAME escaped. */
static void
ctl_repo_path(char *buf, size_t len, const char *name, const char *suffix)
{
	char	*esc;

	if ((esc = curl_easy_escape(NULL, name, 0)) == NULL)
		errx(1, "curl_easy_escape");
	snprintf(buf, len, "/api/v1/repositories/%s%s", esc, suffix);
	curl_free(esc);
}

/* Repository r's last error, if any, on a line that starts with lead. */
static void
ctl_repo_error(json_t *r, const char *lead)
{
	json_t	*e = json_object_get(r, "last_error");

	if (json_is_object(e))
		safe_printf("%s %s (since %s, %lld failures)\n", lead,
		    ctl_str(e, "message", "?"), ctl_str(e, "at", "?"),
		    ctl_int(e, "failures"));
}

static void
ctl_repo_detail(json_t *r)
{
	json_t		*f;
	size_t		 i;

	safe_printf("repository %s\n", ctl_str(r, "name", "?"));
	safe_printf("url        %s\n", ctl_str(r, "url", "?"));
	safe_printf("branch     %s\n", ctl_str(r, "branch", "?"));
	safe_printf("path       %s\n", ctl_str(r, "path", "") [0] != '\0' ?
	    ctl_str(r, "path", "") : "(top)");
	safe_printf("commit     %s\n", ctl_str(r, "commit", "(none yet)"));
	if (json_is_string(json_object_get(r, "commit"))) {
		safe_printf("subject    %s\n", ctl_str(r, "subject", ""));
		safe_printf("author     %s, %s\n", ctl_str(r, "author", ""),
		    ctl_str(r, "commit_time", "?"));
		safe_printf("snapshot   %lld: %lld files (%lld jobs, "
		    "%lld bytes), fetched %s\n",
		    ctl_int(r, "generation"), ctl_int(r, "file_count"),
		    ctl_int(r, "job_count"), ctl_int(r, "bytes"),
		    ctl_str(r, "fetched_at", "?"));
	}
	safe_printf("checked    %s\n", ctl_str(r, "checked_at", "never"));
	safe_printf("next poll  %s (%s)\n", ctl_str(r, "next_poll", "-"),
	    ctl_str(r, "state", "?"));
	ctl_repo_error(r, "error     ");
	json_array_foreach(json_object_get(r, "files"), i, f) {
		if (i == 0)
			safe_printf("\n%-5s %9s  %-12s %s\n", "KIND", "SIZE",
			    "SHA256", "PATH");
		safe_printf("%-5s %9lld  %-12.12s %s", ctl_str(f, "kind", "?"),
		    ctl_int(f, "size"),
		    ctl_str(f, "sha256", "?"), ctl_str(f, "path", "?"));
		if (json_is_string(json_object_get(f, "vars")))
			safe_printf(" (vars %s)", ctl_str(f, "vars", ""));
		putchar('\n');
	}
	json_array_foreach(json_object_get(r, "notes"), i, f) {
		if (i == 0)
			safe_printf("\nnot taken:\n");
		safe_printf("  %s: %s\n", ctl_str(f, "path", "?"),
		    ctl_str(f, "text", "?"));
	}
}

static int
cmd_repos(struct ctl *ctl, int argc, char **argv)
{
	json_t		*a, *r;
	char		 path[512];
	const char	*commit;
	size_t		 i;
	int		 rv;

	if (argc == 1)
		ctl_repo_path(path, sizeof(path), argv[0], "");
	else
		strlcpy(path, "/api/v1/repositories", sizeof(path));
	if (!ctl_get(ctl, path, &a, &rv))
		goto out;
	if (argc == 1) {
		ctl_repo_detail(a);
		goto out;
	}
	safe_printf("%-16s %-12s %-12s %-20s %-20s %s\n", "NAME", "BRANCH",
	    "COMMIT", "FETCHED", "NEXT POLL", "STATE");
	json_array_foreach(json_object_get(a, "items"), i, r) {
		commit = ctl_str(r, "commit", "-");
		safe_printf("%-16s %-12s %-12.12s %-20s %-20s %s\n",
		    ctl_str(r, "name", "?"), ctl_str(r, "branch", "?"), commit,
		    ctl_str(r, "fetched_at", "-"), ctl_str(r, "next_poll", "-"),
		    ctl_str(r, "state", "?"));
		ctl_repo_error(r, "    error:");
	}
out:
	json_decref(a);
	return rv;
}

static int
cmd_fetch(struct ctl *ctl, int argc, char **argv)
{
	json_t	*a;
	char	 path[512];
	int	 rv;

	ctl_repo_path(path, sizeof(path), argv[0], "/fetch");
	rv = ctl_post(ctl, path, json_object(), &a);
	if (rv == 0 && !ctl->json)
		printf("fetch of %s queued\n", argv[0]);
	json_decref(a);
	return rv;
}

/* The token file holds a secret: refuse one others can read. */
static char *
ctl_read_token(const char *path)
{
	struct stat	 sb;
	char		 buf[512], *tok;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		err(EXIT_USAGE, "%s", path);
	if (fstat(fd, &sb) == -1)
		err(EXIT_USAGE, "%s", path);
	if (sb.st_mode & (S_IRWXG | S_IRWXO))
		errx(EXIT_USAGE, "%s: token file must not be readable by "
		    "group or others (chmod 600)", path);
	if ((n = read(fd, buf, sizeof(buf) - 1)) == -1)
		err(EXIT_USAGE, "%s", path);
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[0] == '\0')
		errx(EXIT_USAGE, "%s: empty token file", path);
	if ((tok = strdup(buf)) == NULL)
		err(1, "strdup");
	explicit_bzero(buf, sizeof(buf));
	return tok;
}

/*
 * The options after the command, parsed on the command's own argv (its
 * name first); getopt_long moves them before the arguments, so they may
 * come after an ID.  Returns how many of argv it took.
 */
static int
ctl_cmd_opts(struct ctl *ctl, const struct ctl_cmd *cmd, int argc,
    char **argv)
{
	const char	*errstr = NULL;
	int		 ch;

	/* A new argv: 0 makes glibc's getopt start over. */
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, cmd->shortopts, cmd->longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'H':
			ctl->hash = optarg;
			break;
		case 'J':
			ctl->job = optarg;
			break;
		case 'h':
			if (ctl->nhosts == CTL_HOSTS_MAX)
				errx(EXIT_USAGE, "more than %d --host",
				    CTL_HOSTS_MAX);
			ctl->hosts[ctl->nhosts++] = optarg;
			break;
		case 'i':
			ctl->input = optarg;
			break;
		case 'l':
			ctl->limit = strtonum(optarg, 1, INT_MAX, &errstr);
			if (errstr != NULL)
				errx(EXIT_USAGE, "limit %s is %s", optarg,
				    errstr);
			break;
		case 'n':
			ctl->ns = optarg;
			break;
		case 'r':
			ctl->reason = optarg;
			break;
		case 's':
			ctl->state = optarg;
			break;
		default:
			/* Inside "-xy", optind still names the word before. */
			if (strncmp(argv[optind - 1], "--", 2) != 0 &&
			    optopt != 0)
				warnx("%s: unknown option or missing value: "
				    "-%c", cmd->name, optopt);
			else
				warnx("%s: unknown option or missing value: "
				    "%s", cmd->name, argv[optind - 1]);
			ctl_usage();
		}
	}
	return optind;
}

static const struct ctl_cmd *
ctl_cmd_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		if (strcmp(name, ctl_cmds[i].name) == 0)
			return &ctl_cmds[i];
	warnx("unknown command %s", name);
	ctl_usage();
}

/*
 * The command's own words (argv[0] its name): --help, its options, then
 * as many arguments as it takes, or its usage line.  Returns how many
 * of argv its options took.
 */
static int
ctl_cmd_args(struct ctl *ctl, const struct ctl_cmd *cmd, int argc,
    char **argv)
{
	int	 i, n;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			ctl_cmd_help(cmd);
	}
	n = ctl_cmd_opts(ctl, cmd, argc, argv);
	if (argc - n < cmd->minargs || argc - n > cmd->maxargs) {
		extern char	*__progname;

		/* Only this command's usage: the list would hide it. */
		fprintf(stderr, "usage: %s %s%s%s\n", __progname, cmd->name,
		    cmd->args[0] != '\0' ? " " : "", cmd->args);
		exit(EXIT_USAGE);
	}
	return n;
}

/*
 * nops.conf's control socket, when nothing named one: the path read
 * from it (the caller frees it), or NULL.
 */
static char *
ctl_socket_pick(struct ctl *ctl, const char *conffile)
{
	char	*confsock;

	if (conffile != NULL && access(conffile, R_OK) == -1)
		err(EXIT_USAGE, "-f %s", conffile);
	if (ctl->socket != NULL)
		return NULL;
	confsock = ctl_conf_socket(conffile != NULL ? conffile :
	    NOPS_CONF_FILE);
	if (confsock != NULL) {
		ctl->socket = confsock;
		ctl_socket_origin = conffile != NULL ? conffile :
		    NOPS_CONF_FILE;
	} else
		ctl->socket = NOPS_CONTROL_SOCKET;
	return confsock;
}

int
main(int argc, char *argv[])
{
	struct ctl		 ctl;
	const struct ctl_cmd	*cmd;
	const char		*tokenfile = NULL, *conffile = NULL;
	char			*confsock, *env;
	int			 ch, rv, n;

	jsonwipe_init();
	memset(&ctl, 0, sizeof(ctl));
	if ((env = getenv("NOPS_SOCKET")) != NULL && *env != '\0') {
		ctl.socket = env;
		ctl_socket_origin = "NOPS_SOCKET";
	}
	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		ctl_usage_to(stdout, 1);
		return 0;
	}
	/* "+": stop at the command, whose options are its own. */
	while ((ch = getopt(argc, argv, "+f:hjs:t:u:V")) != -1) {
		switch (ch) {
		case 'h':
			ctl_usage_to(stdout, 1);
			return 0;
		case 'V':
			printf("nopsctl %s\n", PACKAGE_VERSION);
			return 0;
		case 'j':
			ctl.json = 1;
			break;
		case 'f':
			conffile = optarg;
			break;
		case 's':
			ctl.socket = optarg;
			ctl_socket_origin = "-s";
			break;
		case 't':
			tokenfile = optarg;
			break;
		case 'u':
			ctl.url = optarg;
			break;
		default:
			ctl_usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		ctl_usage();
	if ((ctl.url == NULL) != (tokenfile == NULL)) {
		warnx("-u and -t go together");
		ctl_usage();
	}
	if (ctl.url != NULL && strncmp(ctl.url, "http://", 7) != 0 &&
	    strncmp(ctl.url, "https://", 8) != 0)
		errx(EXIT_USAGE, "%s: the URL must start with http:// or "
		    "https://", ctl.url);

	cmd = ctl_cmd_find(argv[0]);
	n = ctl_cmd_args(&ctl, cmd, argc, argv);
	argc -= n;
	argv += n;
	confsock = ctl_socket_pick(&ctl, conffile);
	if (tokenfile != NULL)
		ctl.token = ctl_read_token(tokenfile);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		errx(1, "curl_global_init failed");
	rv = cmd->fn(&ctl, argc, argv);
	if (ctl.token != NULL) {
		explicit_bzero(ctl.token, strlen(ctl.token));
		free(ctl.token);
	}
	curl_global_cleanup();
	free(confsock);
	return rv;
}
