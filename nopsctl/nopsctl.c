/*
 * nopsctl: the command line of nops.  A client of nopsd's HTTP JSON API,
 * over the local control socket (root or the control group are local
 * admins) or over TCP with a URL and a bearer token.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "nopsctl.h"

#define CTL_MAX_ANSWER	(64 * 1024 * 1024)
#define CTL_TIMEOUT	60

struct ctl_buf {
	char	*data;
	size_t	 len;
};

static __dead void	 usage(void);
static int		 cmd_status(struct ctl *, int, char **);
static int		 cmd_reload(struct ctl *, int, char **);
static int		 cmd_log(struct ctl *, int, char **);

static const struct ctl_cmd ctl_cmds[] = {
	{ "status",	0, 0, "",			cmd_status },
	{ "reload",	0, 0, "",			cmd_reload },
	{ "log",	1, 1, "verbose | brief",	cmd_log },
};

static __dead void
usage(void)
{
	extern char	*__progname;
	size_t		 i;

	fprintf(stderr, "usage: %s [-j] [-s socket | -u url -t tokenfile] "
	    "command [argument ...]\n", __progname);
	fprintf(stderr, "commands:\n");
	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		fprintf(stderr, "\t%s %s\n", ctl_cmds[i].name,
		    ctl_cmds[i].args);
	exit(EXIT_USAGE);
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
 * One API call.  Returns the HTTP status (with *answer the decoded JSON,
 * or NULL), or -1 if there was no answer at all (an error is printed).
 */
static long
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

	*answer = NULL;
	if ((c = curl_easy_init()) == NULL)
		errx(1, "curl_easy_init failed");
	if (ctl->url != NULL)
		snprintf(url, sizeof(url), "%s%s", ctl->url, path);
	else {
		/* The host part is ignored over a UNIX socket. */
		snprintf(url, sizeof(url), "http://localhost%s", path);
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, ctl->socket);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)CTL_TIMEOUT);
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
static int
ctl_check(struct ctl *ctl, long status, json_t *answer)
{
	json_t		*e;
	const char	*code = NULL, *msg = NULL;

	if (status == -1)
		return EXIT_ANSWER;
	if (status >= 200 && status < 300)
		return 0;
	if (ctl->json && answer != NULL) {
		json_dumpf(answer, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		e = json_object_get(answer, "error");
		code = json_string_value(json_object_get(e, "code"));
		msg = json_string_value(json_object_get(e, "message"));
		fprintf(stderr, "nopsctl: %s (%ld): %s\n",
		    code != NULL ? code : "error", status,
		    msg != NULL ? msg : "no message");
	}
	return EXIT_ANSWER;
}

static void
ctl_print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2));
	putchar('\n');
}

static const char *
str_or(json_t *o, const char *key, const char *def)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : def;
}

static int
cmd_status(struct ctl *ctl, int argc, char **argv)
{
	json_t		*a, *w, *db;
	size_t		 i;
	long		 st;
	int		 rv;

	st = ctl_call(ctl, "GET", "/api/v1/status", NULL, &a);
	if ((rv = ctl_check(ctl, st, a)) != 0)
		goto out;
	if (ctl->json) {
		ctl_print_json(a);
		goto out;
	}
	printf("nopsd %s, pid %lld, started %s\n", str_or(a, "version", "?"),
	    (long long)json_integer_value(json_object_get(a, "pid")),
	    str_or(a, "started_at", "?"));
	printf("config %s, loaded %s, %lld reloads, %lld refused\n",
	    str_or(a, "config", "?"), str_or(a, "config_loaded_at", "?"),
	    (long long)json_integer_value(json_object_get(a, "reloads")),
	    (long long)json_integer_value(json_object_get(a,
	    "reload_failures")));
	db = json_object_get(a, "database");
	printf("database %s, schema version %lld\n", str_or(db, "path", "?"),
	    (long long)json_integer_value(json_object_get(db,
	    "schema_version")));
	printf("log %s\n\n", json_integer_value(json_object_get(a,
	    "verbose")) > 0 ? "verbose" : "brief");
	printf("%-12s %-8s %-10s %-8s %s\n", "WORKER", "PID", "STATE",
	    "RESTARTS", "LAST EXIT");
	json_array_foreach(json_object_get(a, "workers"), i, w) {
		printf("%-12s %-8lld %-10s %-8lld %s\n",
		    str_or(w, "name", "?"),
		    (long long)json_integer_value(json_object_get(w, "pid")),
		    str_or(w, "state", "?"),
		    (long long)json_integer_value(json_object_get(w,
		    "restarts")),
		    str_or(w, "last_exit", "-"));
	}
out:
	json_decref(a);
	return rv;
}

static int
cmd_reload(struct ctl *ctl, int argc, char **argv)
{
	json_t	*a, *body = json_object();
	long	 st;
	int	 rv;

	st = ctl_call(ctl, "POST", "/api/v1/reload", body, &a);
	json_decref(body);
	if ((rv = ctl_check(ctl, st, a)) == 0) {
		if (ctl->json)
			ctl_print_json(a);
		else
			printf("reloaded\n");
	}
	json_decref(a);
	return rv;
}

static int
cmd_log(struct ctl *ctl, int argc, char **argv)
{
	json_t	*a, *body;
	long	 st;
	int	 rv, verbose;

	if (strcmp(argv[0], "verbose") == 0)
		verbose = 1;
	else if (strcmp(argv[0], "brief") == 0)
		verbose = 0;
	else
		usage();
	body = json_pack("{s:b}", "verbose", verbose);
	st = ctl_call(ctl, "POST", "/api/v1/log", body, &a);
	json_decref(body);
	if ((rv = ctl_check(ctl, st, a)) == 0) {
		if (ctl->json)
			ctl_print_json(a);
		else
			printf("log %s\n", verbose ? "verbose" : "brief");
	}
	json_decref(a);
	return rv;
}

/* The token file holds a secret: refuse one others can read. */
static char *
ctl_read_token(const char *path)
{
	struct stat	 sb;
	char		 buf[512];
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
	return strdup(buf);
}

int
main(int argc, char *argv[])
{
	struct ctl	 ctl;
	const char	*tokenfile = NULL;
	size_t		 i;
	int		 ch, rv;

	memset(&ctl, 0, sizeof(ctl));
	ctl.socket = NOPS_CONTROL_SOCKET;
	while ((ch = getopt(argc, argv, "js:t:u:")) != -1) {
		switch (ch) {
		case 'j':
			ctl.json = 1;
			break;
		case 's':
			ctl.socket = optarg;
			break;
		case 't':
			tokenfile = optarg;
			break;
		case 'u':
			ctl.url = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage();
	if ((ctl.url == NULL) != (tokenfile == NULL)) {
		warnx("-u and -t go together");
		usage();
	}
	if (ctl.url != NULL && strncmp(ctl.url, "http://", 7) != 0 &&
	    strncmp(ctl.url, "https://", 8) != 0)
		errx(EXIT_USAGE, "%s: the URL must start with http:// or "
		    "https://", ctl.url);
	if (tokenfile != NULL)
		ctl.token = ctl_read_token(tokenfile);

	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++) {
		if (strcmp(argv[0], ctl_cmds[i].name) != 0)
			continue;
		if (argc - 1 < ctl_cmds[i].minargs ||
		    argc - 1 > ctl_cmds[i].maxargs)
			usage();
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			errx(1, "curl_global_init failed");
		rv = ctl_cmds[i].fn(&ctl, argc - 1, argv + 1);
		if (ctl.token != NULL) {
			explicit_bzero(ctl.token, strlen(ctl.token));
			free(ctl.token);
		}
		curl_global_cleanup();
		return rv;
	}
	warnx("unknown command %s", argv[0]);
	usage();
}
