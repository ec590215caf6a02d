/*
 * The parsed configuration: defaults, freeing, printing it back in
 * nops.conf syntax (nopsd -nv), and the value checks the parser uses.
 * The checks live here, apart from parse.y, so that the unit tests can
 * call them directly.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "addr.h"
#include "nops.h"
#include "conf.h"
#include "xmalloc.h"

#define URL_MAX		1024

/* A name for each bit of a set: capabilities, notification events. */
struct config_bit {
	uint32_t	 bit;
	const char	*name;
};

static const struct config_bit config_caps[] = {
	{ CAP_READ,		"read" },
	{ CAP_APPROVE,		"approve" },
	{ CAP_PROMOTE,		"promote" },
	{ CAP_RETRY,		"retry" },
	{ CAP_DEPLOY_NOW,	"deploy-now" },
	{ CAP_PAUSE,		"pause" },
	{ CAP_FETCH,		"fetch" },
	{ CAP_OPERATE,		"operate" },
	{ CAP_SUSPEND,		"suspend" },
	{ CAP_LEFT_BEHIND,	"left-behind" },
	{ CAP_HOSTS,		"hosts" },
	{ CAP_MANAGEMENT,	"management" },
};
#define CONFIG_NCAPS	(sizeof(config_caps) / sizeof(config_caps[0]))

static const struct config_bit config_events[] = {
	{ CONF_NOTIFY_EV_PENDING_APPROVAL,	"pending-approval" },
	{ CONF_NOTIFY_EV_FAILED,		"failed" },
	{ CONF_NOTIFY_EV_AWAITING_PROMOTION,	"awaiting-promotion" },
	{ CONF_NOTIFY_EV_COMPLETED,		"completed" },
};
#define CONFIG_NEVENTS	(sizeof(config_events) / sizeof(config_events[0]))

struct nops_conf *
config_new(void)
{
	struct nops_conf	*conf;

	if ((conf = calloc(1, sizeof(*conf))) == NULL)
		fatal("calloc");
	/* Alike on purpose: defaults set field by field (as suspend.c's). */
	conf->user = xstrdup(NOPS_USER);
	conf->master_user = xstrdup(NOPS_MASTER_USER);
	conf->database = xstrdup(NOPS_DB_FILE);
	conf->control_socket = xstrdup(NOPS_CONTROL_SOCKET);
	conf->control_group = xstrdup(NOPS_CONTROL_GROUP);
	conf->drift_interval = NOPS_DRIFT_INTERVAL;
	conf->replan_interval = NOPS_REPLAN_INTERVAL;
	conf->engine_interval = NOPS_ENGINE_INTERVAL;
	conf->apply_timeout = NOPS_APPLY_TIMEOUT;
	conf->max_body_size = WEB_BODY_DEFAULT;
	conf->max_conns_per_address = WEB_CONN_SOURCE_DEFAULT;
	conf->session_idle = NOPS_SESSION_IDLE;
	conf->session_lifetime = NOPS_SESSION_LIFETIME;
	TAILQ_INIT(&conf->listens);
	TAILQ_INIT(&conf->nomad.namespaces);
	conf->hosts.confirm_timeout = NOPS_CONFIRM_TIMEOUT;
	conf->hosts.command_timeout = NOPS_COMMAND_TIMEOUT;
	conf->hosts.eval_timeout = NOPS_EVAL_TIMEOUT;
	conf->hosts.eval_memory = NOPS_EVAL_MEMORY;
	conf->hosts.build_timeout = NOPS_BUILD_TIMEOUT;
	TAILQ_INIT(&conf->repos);
	TAILQ_INIT(&conf->groups);
	TAILQ_INIT(&conf->policies);
	TAILQ_INIT(&conf->binds);
	TAILQ_INIT(&conf->notifies);
	return conf;
}

static void
config_free_strs(struct conf_strs *list)
{
	struct conf_str	*s;

	while ((s = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, s, entry);
		free(s->str);
		free(s);
	}
}

void
config_free(struct nops_conf *conf)
{
	struct conf_listen	*l;
	struct conf_repo	*r;
	struct conf_group	*g;
	struct conf_policy	*p;
	struct conf_policy_ns	*pn;
	struct conf_bind	*b;
	struct conf_notify	*n;

	if (conf == NULL)
		return;
	while ((n = TAILQ_FIRST(&conf->notifies)) != NULL) {
		TAILQ_REMOVE(&conf->notifies, n, entry);
		free(n->name);
		free(n->url);
		free(n->topic);
		free(n->token_file);
		free(n);
	}
	free(conf->metrics_token_file);
	free(conf->dashboard_url);
	while ((l = TAILQ_FIRST(&conf->listens)) != NULL) {
		TAILQ_REMOVE(&conf->listens, l, entry);
		free(l->host);
		free(l->tls_cert);
		free(l->tls_key);
		config_free_strs(&l->hostnames);
		free(l);
	}
	free(conf->hosts.ssh_key_file);
	free(conf->hosts.known_hosts_file);
	free(conf->hosts.nix_store);
	free(conf->nomad.address);
	free(conf->nomad.token_file);
	free(conf->nomad.ca_file);
	config_free_strs(&conf->nomad.namespaces);
	/*
	 * Alike on purpose: repo_free, oprun_free and the like: other members.
	 */
	while ((r = TAILQ_FIRST(&conf->repos)) != NULL) {
		TAILQ_REMOVE(&conf->repos, r, entry);
		free(r->name);
		free(r->url);
		free(r->branch);
		free(r->path);
		free(r->webhook_secret_file);
		free(r->ssh_key_file);
		free(r->known_hosts_file);
		free(r->commit_url);
		free(r);
	}
	while ((g = TAILQ_FIRST(&conf->groups)) != NULL) {
		TAILQ_REMOVE(&conf->groups, g, entry);
		free(g->name);
		config_free_strs(&g->members);
		free(g);
	}
	while ((p = TAILQ_FIRST(&conf->policies)) != NULL) {
		TAILQ_REMOVE(&conf->policies, p, entry);
		while ((pn = TAILQ_FIRST(&p->namespaces)) != NULL) {
			TAILQ_REMOVE(&p->namespaces, pn, entry);
			free(pn->glob);
			free(pn);
		}
		free(p->name);
		free(p);
	}
	while ((b = TAILQ_FIRST(&conf->binds)) != NULL) {
		TAILQ_REMOVE(&conf->binds, b, entry);
		free(b->who);
		free(b->policy);
		free(b);
	}
	free(conf->path);
	free(conf->user);
	free(conf->master_user);
	free(conf->database);
	free(conf->control_socket);
	free(conf->control_group);
	free(conf->users_file);
	free(conf->bootstrap_token_file);
	free(conf->anonymous_policy);
	free(conf);
}

static const char *
config_bit_name(const struct config_bit *t, size_t n, uint32_t bit)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (t[i].bit == bit)
			return t[i].name;
	return NULL;
}

static int
config_bit_parse(const struct config_bit *t, size_t n, const char *name,
    uint32_t *bit)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0) {
			*bit = t[i].bit;
			return 0;
		}
	return -1;
}

const char *
config_cap_name(uint32_t cap)
{
	return config_bit_name(config_caps, CONFIG_NCAPS, cap);
}

int
config_cap_parse(const char *name, uint32_t *cap)
{
	return config_bit_parse(config_caps, CONFIG_NCAPS, name, cap);
}

/* One unit only, the largest that divides the value: 5400 is "90m". */
const char *
config_fmt_duration(int secs, char *buf, size_t len)
{
	if (secs != 0 && secs % 86400 == 0)
		snprintf(buf, len, "%dd", secs / 86400);
	else if (secs != 0 && secs % 3600 == 0)
		snprintf(buf, len, "%dh", secs / 3600);
	else if (secs != 0 && secs % 60 == 0)
		snprintf(buf, len, "%dm", secs / 60);
	else
		snprintf(buf, len, "%ds", secs);
	return buf;
}

const char *
config_fmt_size(uint64_t n, char *buf, size_t len)
{
	if (n != 0 && n % (1024ULL * 1024 * 1024) == 0)
		snprintf(buf, len, "%lluG", (unsigned long long)(n >> 30));
	else if (n != 0 && n % (1024 * 1024) == 0)
		snprintf(buf, len, "%lluM", (unsigned long long)(n >> 20));
	else if (n != 0 && n % 1024 == 0)
		snprintf(buf, len, "%lluK", (unsigned long long)(n >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)n);
	return buf;
}

const char *
config_parse_size(const char *s, uint64_t *bytes)
{
	const char	*errstr = NULL;
	char		 num[24];
	size_t		 n = strspn(s, "0123456789");
	long long	 v;
	int		 shift = 0;

	if (n == 0 || n >= sizeof(num))
		return "not a size (e.g. 512K, 4M, or bytes)";
	switch (s[n]) {
	case '\0':
		break;
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	default:
		return "not a size (e.g. 512K, 4M, or bytes)";
	}
	if (shift != 0 && s[n + 1] != '\0')
		return "not a size (e.g. 512K, 4M, or bytes)";
	memcpy(num, s, n);
	num[n] = '\0';
	v = strtonum(num, 0, (1LL << 40) >> shift, &errstr);
	if (errstr != NULL)
		return "too large";
	*bytes = (uint64_t)v << shift;
	return NULL;
}

/*
 * Parts with decreasing units, each at most once: "1h30m", "90s", "2d".
 * A plain number is seconds.
 */
const char *
config_parse_duration(const char *s, int *secs)
{
	static const struct {
		char	 unit;
		long long mult;
	} units[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	long long	 total = 0, n;
	size_t		 next = 0, i, digits;

	if (*s == '\0')
		return "empty duration";
	if (strspn(s, "0123456789") == strlen(s)) {
		if (strlen(s) > 9)
			return "duration too long";
		*secs = (int)strtoll(s, NULL, 10);
		return NULL;
	}
	while (*s != '\0') {
		digits = strspn(s, "0123456789");
		if (digits == 0)
			return "bad duration: a number must come before each "
			    "unit (e.g. 30s, 5m, 1h30m, 1d)";
		if (digits > 9)
			return "duration too long";
		n = strtoll(s, NULL, 10);
		s += digits;
		if (*s == '\0')
			return "bad duration: missing unit after the last "
			    "number (s, m, h or d)";
		for (i = next; i < sizeof(units) / sizeof(units[0]); i++)
			if (units[i].unit == *s)
				break;
		if (i == sizeof(units) / sizeof(units[0])) {
			if (strchr("dhms", *s) != NULL)
				return "bad duration: units must decrease, "
				    "each at most once (e.g. 1h30m)";
			return "bad duration: unknown unit (use s, m, h "
			    "or d)";
		}
		total += n * units[i].mult;
		if (total > INT_MAX)
			return "duration too long";
		next = i + 1;
		s++;
	}
	*secs = (int)total;
	return NULL;
}

static int
config_allowed(const char *s, const char *extra, size_t max)
{
	size_t	 len = strlen(s);

	if (len == 0 || len > max)
		return 0;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr(extra, *s) == NULL)
			return 0;
	return 1;
}

const char *
config_check_name(const char *s)
{
	if (!config_allowed(s, "._-", NOPS_NAME_MAX))
		return "a name must be 1 to 64 of A-Z a-z 0-9 . _ -";
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return "\".\" and \"..\" are not names";
	return NULL;
}

const char *
config_check_username(const char *s)
{
	if (!config_allowed(s, "._@+-", NOPS_NAME_MAX))
		return "a user name must be 1 to 64 of A-Z a-z 0-9 . _ @ + -";
	return NULL;
}

const char *
config_check_unixname(const char *s)
{
	if (!config_allowed(s, "._-", 32) || *s == '-')
		return "a system user or group name must be 1 to 32 of "
		    "A-Z a-z 0-9 . _ - and not start with -";
	return NULL;
}

const char *
config_check_namespace(const char *s)
{
	/* Nomad's own rule for namespace names. */
	if (!config_allowed(s, "-", 128))
		return "a Nomad namespace name must be 1 to 128 of "
		    "A-Z a-z 0-9 -";
	return NULL;
}

const char *
config_check_glob(const char *s)
{
	if (!config_allowed(s, "-*?[]!", 128))
		return "a namespace glob must be 1 to 128 of "
		    "A-Z a-z 0-9 - * ? [ ] !";
	return NULL;
}

static int
config_is_text(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

/*
 * Split "host[:port]" or "[v6][:port]" at the start of s (s points after
 * "scheme://"); *end is where the path starts.  Only the syntax is checked:
 * names are resolved by the workers.
 */
static const char *
config_check_authority(const char *s, char *host, size_t hostlen,
    const char **end)
{
	const char	*p, *errstr;
	char		 port[8];
	size_t		 len;

	if (*s == '[') {
		struct in6_addr	 in6;

		if ((p = strchr(s, ']')) == NULL)
			return "unterminated [IPv6 address]";
		len = p - s - 1;
		if (len == 0 || len >= hostlen)
			return "bad [IPv6 address]";
		memcpy(host, s + 1, len);
		host[len] = '\0';
		if (inet_pton(AF_INET6, host, &in6) != 1)
			return "bad [IPv6 address]";
		p++;
	} else {
		len = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789.-_");
		if (len == 0)
			return "missing host";
		if (len >= hostlen)
			return "host name too long";
		memcpy(host, s, len);
		host[len] = '\0';
		p = s + len;
	}
	if (*p == ':') {
		p++;
		len = strspn(p, "0123456789");
		if (len == 0 || len >= sizeof(port))
			return "bad port";
		memcpy(port, p, len);
		port[len] = '\0';
		(void)strtonum(port, 1, 65535, &errstr);
		if (errstr != NULL)
			return "bad port";
		p += len;
	}
	if (*p != '\0' && *p != '/')
		return "bad character after the host";
	*end = p;
	return NULL;
}

/* *s past its scheme: 0 for https://, 1 for http://, -1 for neither. */
static int
config_url_scheme(const char **s)
{
	if (strncmp(*s, "https://", 8) == 0) {
		*s += 8;
		return 0;
	}
	if (strncmp(*s, "http://", 7) == 0) {
		*s += 7;
		return 1;
	}
	return -1;
}

const char *
config_check_nomad_address(const char *s)
{
	char		 host[256];
	const char	*p, *errstr;
	int		 plain;

	if (strlen(s) > URL_MAX || !config_is_text(s))
		return "bad address: too long or contains spaces or "
		    "control characters";
	if ((plain = config_url_scheme(&s)) == -1)
		return "the address must start with https:// (or http:// "
		    "for a loopback host)";
	if (strchr(s, '@') != NULL)
		return "no credentials in the address: use token file";
	if (strchr(s, '?') != NULL || strchr(s, '#') != NULL)
		return "no query or fragment in the address";
	if ((errstr = config_check_authority(s, host, sizeof(host), &p)) !=
	    NULL)
		return errstr;
	if (plain && !addr_is_loopback(host))
		return "http:// sends the token in clear: it is only allowed "
		    "for a loopback host (127.0.0.1, ::1, localhost); "
		    "use https://";
	return NULL;
}

/*
 * A repository's commit-url template (gitctx.c fills it in): NULL if it
 * may be one ("" too: no link), else what is wrong.  It goes into pages
 * as a link: http(s) only, nothing that could leave an attribute.
 */
const char *
config_check_commit_url(const char *t)
{
	const char	*p;
	int		 n = 0;

	if (*t == '\0')
		return NULL;	/* no link */
	if (strncmp(t, "https://", 8) != 0 && strncmp(t, "http://", 7) != 0)
		return "must start with https:// or http://";
	for (p = t; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '"' ||
		    *p == '<' || *p == '>' || *p == '\\')
			return "holds a space, a quote, <, > or a control "
			    "character";
	for (p = t; (p = strstr(p, "{commit}")) != NULL; p += 8)
		n++;
	if (n == 0)
		return "has no {commit} for the commit id";
	return NULL;
}

const char *
config_check_repo_url(const char *s, int *is_ssh)
{
	static const char *schemes[] = { "https://", "http://", "git://",
	    "ssh://" };
	char		 host[256];
	const char	*p, *at, *colon, *slash, *errstr;
	size_t		 i, len;

	*is_ssh = 0;
	if (strlen(s) > URL_MAX || !config_is_text(s))
		return "bad URL: too long or contains spaces or control "
		    "characters";
	if (strncmp(s, "file://", 7) == 0) {
		if (s[7] != '/' || s[8] == '\0')
			return "a file:// URL needs an absolute path "
			    "(file:///srv/git/repo.git)";
		return NULL;
	}
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		len = strlen(schemes[i]);
		if (strncmp(s, schemes[i], len) != 0)
			continue;
		s += len;
		slash = strchr(s, '/');
		at = strchr(s, '@');
		if (at != NULL && (slash == NULL || at < slash)) {
			if (i != 3)
				return "no credentials in the URL: they would "
				    "be logged and shown; use an ssh key or a "
				    "credential-free URL";
			/* ssh://user@host/path: the user is no secret. */
			len = at - s;
			if (len == 0 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "abcdefghijklmnopqrstuvwxyz0123456789._-") != len)
				return "bad user in ssh:// URL";
			s = at + 1;
		}
		*is_ssh = (i == 3);
		if ((errstr = config_check_authority(s, host, sizeof(host),
		    &p)) != NULL)
			return errstr;
		if (*p != '/' || p[1] == '\0')
			return "the URL needs a path after the host";
		return NULL;
	}
	if (strstr(s, "://") != NULL)
		return "unsupported URL scheme: use https://, http://, "
		    "git://, ssh://, file:// or user@host:path";
	/* scp-like: user@host:path */
	if ((at = strchr(s, '@')) == NULL || (colon = strchr(at, ':')) ==
	    NULL)
		return "unsupported URL: use https://, http://, git://, "
		    "ssh://, file:// or user@host:path";
	len = at - s;
	if (len == 0 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789._-") != len)
		return "bad user in user@host:path";
	len = colon - at - 1;
	if (len == 0 || len >= sizeof(host) ||
	    strspn(at + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789.-") != len)
		return "bad host in user@host:path";
	if (colon[1] == '\0')
		return "missing path in user@host:path";
	*is_ssh = 1;
	return NULL;
}

/* The rules of git-check-ref-format(1), for a branch name. */
const char *
config_check_branch(const char *s)
{
	size_t	 len = strlen(s);

	if (len == 0 || len > 255)
		return "a branch name must be 1 to 255 characters";
	if (!config_is_text(s) || strpbrk(s, "~^:?*[\\") != NULL)
		return "a branch name cannot contain spaces, control "
		    "characters or any of ~ ^ : ? * [ \\";
	if (*s == '-' || *s == '/' || *s == '.' || s[len - 1] == '/' ||
	    s[len - 1] == '.' || strstr(s, "..") != NULL ||
	    strstr(s, "//") != NULL || strstr(s, "/.") != NULL ||
	    strstr(s, "@{") != NULL || strcmp(s, "@") == 0 ||
	    (len >= 5 && strcmp(s + len - 5, ".lock") == 0))
		return "not a valid git branch name";
	return NULL;
}

/* A relative path inside the repository; "" is the top. */
const char *
config_check_repo_path(const char *s)
{
	const char	*p;
	size_t		 len;

	if (*s == '\0')
		return NULL;
	if (strlen(s) > 1024 || !config_is_text(s))
		return "a path cannot contain spaces or control characters";
	if (*s == '/')
		return "the path is relative to the top of the repository";
	for (p = s; *p != '\0'; p += len + (p[len] == '/')) {
		len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return "the path cannot have empty, \".\" or \"..\" "
			    "parts, or end with /";
		if (p[len] == '/' && p[len + 1] == '\0')
			return "the path cannot have empty, \".\" or \"..\" "
			    "parts, or end with /";
	}
	return NULL;
}

const char *
config_check_url(const char *s, int secure)
{
	char		 host[256], auth[URL_MAX + 1];
	const char	*p, *errstr;
	size_t		 n;
	int		 plain;

	if (strlen(s) > URL_MAX || !config_is_text(s))
		return "too long, or contains spaces or control characters";
	if ((plain = config_url_scheme(&s)) == -1)
		return "the URL must start with https:// or http://";
	if (strchr(s, '#') != NULL)
		return "no fragment in the URL";
	/* The authority ends at the path or the query. */
	n = strcspn(s, "/?");
	memcpy(auth, s, n);
	auth[n] = '\0';
	if (strchr(auth, '@') != NULL)
		return "no credentials in the URL (use a token file)";
	if ((errstr = config_check_authority(auth, host, sizeof(host), &p)) !=
	    NULL)
		return errstr;
	if (secure && plain && !addr_is_loopback(host))
		return "http:// is only allowed for a loopback host "
		    "(127.0.0.1, ::1, localhost); use https://";
	return NULL;
}

/* ntfy's rule for topic names. */
const char *
config_check_ntfy_topic(const char *s)
{
	size_t	 len = strlen(s);

	if (len == 0 || len > 64 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_") != len)
		return "a topic is 1 to 64 of A-Z a-z 0-9 - _";
	return NULL;
}

/* Alike on purpose: config_cap_name/_parse, one-line calls, other table. */
const char *
config_notify_event_name(uint32_t ev)
{
	return config_bit_name(config_events, CONFIG_NEVENTS, ev);
}

int
config_notify_event_parse(const char *name, uint32_t *ev)
{
	return config_bit_parse(config_events, CONFIG_NEVENTS, name, ev);
}

const char *
config_notify_kind_name(int kind)
{
	switch (kind) {
	case CONF_NOTIFY_WEBHOOK:
		return "webhook";
	case CONF_NOTIFY_SLACK:
		return "slack";
	case CONF_NOTIFY_NTFY:
		return "ntfy";
	default:
		return "unknown";
	}
}

/* Quoted so that the lexer reads back exactly s. */
static void
config_print_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

static void
config_print_strs(FILE *fp, const struct conf_strs *list)
{
	const struct conf_str	*s;

	fputs("{", fp);
	TAILQ_FOREACH(s, list, entry) {
		fputc(' ', fp);
		config_print_str(fp, s->str);
	}
	fputs(" }", fp);
}

/* The names of the bits set in bits, as a list: { a b }. */
static void
config_print_bits(FILE *fp, const struct config_bit *t, size_t n,
    uint32_t bits)
{
	size_t	 i;

	fputs("{", fp);
	for (i = 0; i < n; i++)
		if (bits & t[i].bit)
			fprintf(fp, " %s", t[i].name);
	fputs(" }", fp);
}

static void
config_print_caps(FILE *fp, uint32_t caps)
{
	config_print_bits(fp, config_caps, CONFIG_NCAPS, caps);
}

static void
config_print_file(FILE *fp, const char *indent, const char *what,
    const char *path)
{
	if (path == NULL)
		return;
	fprintf(fp, "%s%s file ", indent, what);
	config_print_str(fp, path);
	fputc('\n', fp);
}

/* A keyword (with its leading white space) and its quoted value, if any. */
static void
config_print_opt(FILE *fp, const char *kw, const char *s)
{
	if (s == NULL)
		return;
	fprintf(fp, "%s ", kw);
	config_print_str(fp, s);
	fputc('\n', fp);
}

/* A keyword (with its leading white space) and a duration or a size. */
static void
config_print_dur(FILE *fp, const char *kw, int secs)
{
	char	 d[32];

	fprintf(fp, "%s %s\n", kw, config_fmt_duration(secs, d, sizeof(d)));
}

static void
config_print_size(FILE *fp, const char *kw, uint64_t n)
{
	char	 d[32];

	fprintf(fp, "%s %s\n", kw, config_fmt_size(n, d, sizeof(d)));
}

/* The global keywords. */
static void
config_print_global(FILE *fp, const struct nops_conf *conf)
{
	config_print_opt(fp, "user", conf->user);
	config_print_opt(fp, "master user", conf->master_user);
	config_print_opt(fp, "database", conf->database);
	fputs("control socket ", fp);
	config_print_str(fp, conf->control_socket);
	fputs(" group ", fp);
	config_print_str(fp, conf->control_group);
	fputc('\n', fp);
	config_print_dur(fp, "drift-interval", conf->drift_interval);
	config_print_dur(fp, "engine-interval", conf->engine_interval);
	config_print_dur(fp, "replan-interval", conf->replan_interval);
	config_print_dur(fp, "apply-timeout", conf->apply_timeout);
	config_print_file(fp, "", "users", conf->users_file);
	config_print_file(fp, "", "bootstrap token",
	    conf->bootstrap_token_file);
	/* Every value in force, defaults included (nopsd -nv). */
	config_print_dur(fp, "session idle-timeout", conf->session_idle);
	config_print_dur(fp, "session lifetime", conf->session_lifetime);
}

static void
config_print_listen(FILE *fp, const struct conf_listen *l)
{
	/* Hosts are IP literals, "*" or "localhost": no quotes. */
	fprintf(fp, "listen on %s port %u", l->host, l->port);
	if (l->tls) {
		fputs(" tls certificate ", fp);
		config_print_str(fp, l->tls_cert);
		fputs(" key ", fp);
		config_print_str(fp, l->tls_key);
	}
	if (!TAILQ_EMPTY(&l->hostnames)) {
		fputs(" hostnames ", fp);
		config_print_strs(fp, &l->hostnames);
	}
	fputc('\n', fp);
}

/* The listeners and what the webworker is told with them. */
static void
config_print_web(FILE *fp, const struct nops_conf *conf)
{
	const struct conf_listen	*l;

	TAILQ_FOREACH(l, &conf->listens, entry)
		config_print_listen(fp, l);
	config_print_size(fp, "max-body-size", conf->max_body_size);
	fprintf(fp, "max-connections-per-address %d\n",
	    conf->max_conns_per_address);
	config_print_file(fp, "", "metrics token", conf->metrics_token_file);
	config_print_opt(fp, "dashboard url", conf->dashboard_url);
}

static void
config_print_nomad(FILE *fp, const struct conf_nomad *nc)
{
	if (nc->address == NULL)
		return;
	fputs("\nnomad {\n\taddress ", fp);
	config_print_str(fp, nc->address);
	fputc('\n', fp);
	config_print_file(fp, "\t", "token", nc->token_file);
	config_print_file(fp, "\t", "ca", nc->ca_file);
	fputs("\tnamespaces ", fp);
	config_print_strs(fp, &nc->namespaces);
	fputs("\n}\n", fp);
}

static void
config_print_hosts(FILE *fp, const struct conf_hosts *h)
{
	if (!h->set)
		return;
	fputs("\nhosts {\n", fp);
	config_print_file(fp, "\t", "ssh key", h->ssh_key_file);
	config_print_file(fp, "\t", "known-hosts", h->known_hosts_file);
	config_print_opt(fp, "\tnix store", h->nix_store);
	config_print_dur(fp, "\tconfirm-timeout", h->confirm_timeout);
	config_print_dur(fp, "\tcommand-timeout", h->command_timeout);
	config_print_dur(fp, "\teval-timeout", h->eval_timeout);
	config_print_size(fp, "\teval-memory", h->eval_memory);
	config_print_dur(fp, "\tbuild-timeout", h->build_timeout);
	fputs("}\n", fp);
}

/* Alike on purpose: one line a keyword, as config_print_hosts/_global. */
static void
config_print_repo(FILE *fp, const struct conf_repo *r)
{
	fputs("\nrepository ", fp);
	config_print_str(fp, r->name);
	fputs(" {\n", fp);
	config_print_opt(fp, "\turl", r->url);
	config_print_opt(fp, "\tbranch", r->branch);
	config_print_opt(fp, "\tpath", r->path);
	config_print_dur(fp, "\tpoll-interval", r->poll_interval);
	config_print_dur(fp, "\tfetch-timeout", r->fetch_timeout);
	config_print_size(fp, "\tmax-file-size", r->max_file_size);
	fprintf(fp, "\tmax-files %u\n", r->max_files);
	config_print_size(fp, "\tmax-snapshot-size", r->max_snapshot_size);
	config_print_file(fp, "\t", "webhook secret", r->webhook_secret_file);
	config_print_file(fp, "\t", "ssh key", r->ssh_key_file);
	config_print_file(fp, "\t", "known-hosts", r->known_hosts_file);
	config_print_opt(fp, "\tcommit-url", r->commit_url);
	fputs("}\n", fp);
}

static void
config_print_notify(FILE *fp, const struct conf_notify *n)
{
	fputs("\nnotify ", fp);
	config_print_str(fp, n->name);
	fprintf(fp, " {\n\t%s url ", config_notify_kind_name(n->kind));
	config_print_str(fp, n->url);
	fputc('\n', fp);
	config_print_opt(fp, "\ttopic", n->topic);
	config_print_file(fp, "\t", "token", n->token_file);
	fputs("\tevents ", fp);
	config_print_bits(fp, config_events, CONFIG_NEVENTS, n->events);
	fputs("\n}\n", fp);
}

/* Who may do what: groups, policies, binds, the anonymous policy. */
static void
config_print_access(FILE *fp, const struct nops_conf *conf)
{
	const struct conf_group		*g;
	const struct conf_policy	*p;
	const struct conf_policy_ns	*pn;
	const struct conf_bind		*b;

	if (!TAILQ_EMPTY(&conf->groups))
		fputc('\n', fp);
	TAILQ_FOREACH(g, &conf->groups, entry) {
		fputs("group ", fp);
		config_print_str(fp, g->name);
		fputc(' ', fp);
		config_print_strs(fp, &g->members);
		fputc('\n', fp);
	}

	TAILQ_FOREACH(p, &conf->policies, entry) {
		fputs("\npolicy ", fp);
		config_print_str(fp, p->name);
		fputs(" {\n", fp);
		TAILQ_FOREACH(pn, &p->namespaces, entry) {
			fputs("\tnamespace ", fp);
			config_print_str(fp, pn->glob);
			fputc(' ', fp);
			config_print_caps(fp, pn->caps);
			fputc('\n', fp);
		}
		fputs("}\n", fp);
	}

	if (!TAILQ_EMPTY(&conf->binds) || conf->anonymous_policy != NULL)
		fputc('\n', fp);
	TAILQ_FOREACH(b, &conf->binds, entry) {
		fprintf(fp, "bind %s ", b->kind == BIND_GROUP ? "group" :
		    "user");
		config_print_str(fp, b->who);
		fputs(" policy ", fp);
		config_print_str(fp, b->policy);
		fputc('\n', fp);
	}
	config_print_opt(fp, "anonymous policy", conf->anonymous_policy);
}

void
config_print(FILE *fp, const struct nops_conf *conf)
{
	const struct conf_repo		*r;
	const struct conf_notify	*n;

	config_print_global(fp, conf);
	config_print_web(fp, conf);
	config_print_nomad(fp, &conf->nomad);
	config_print_hosts(fp, &conf->hosts);
	TAILQ_FOREACH(r, &conf->repos, entry)
		config_print_repo(fp, r);
	TAILQ_FOREACH(n, &conf->notifies, entry)
		config_print_notify(fp, n);
	config_print_access(fp, conf);
}
