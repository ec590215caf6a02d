/*
 * nops.conf parser: a hand-written lexer (macros, include, quoting) and a
 * line-oriented grammar in the OpenBSD parse.y manner.  Every error is
 * logged as "file:line: message" and parsing goes on, so that one run
 * shows all of them; parse_config() then returns NULL.
 *
 * Strings the lexer hands to the grammar live in an arena freed after the
 * parse, so error recovery, which drops tokens, cannot leak them; the
 * config keeps its own copies.
 */

%{
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "nops.h"
#include "conf.h"
#include "xmalloc.h"

/* Keep the parser's globals out of the way of any later parser. */
#define yyparse		conf_yyparse
#define yylval		conf_yylval
#define yylloc		conf_yylloc
#define yychar		conf_yychar
#define yynerrs		conf_yynerrs
#define yydebug		conf_yydebug

#define CONF_MAXTOKEN	4096		/* longest string or word */
#define CONF_MAXMACRO	64		/* longest macro name */
#define CONF_MAXINCLUDE	16		/* include depth */
#define CONF_MAXSIZE	(1024 * 1024)	/* bytes read from one file */

struct conf_file {
	TAILQ_ENTRY(conf_file)	 entry;
	FILE			*stream;
	char			*name;
	int			 lineno;
	int			 unget[4];
	int			 nunget;
	int			 dead;		/* NUL byte or too big: stop */
	size_t			 size;
	dev_t			 dev;
	ino_t			 ino;
	int			 pending_nl;	/* ends the include statement */
};
static TAILQ_HEAD(conf_file_list, conf_file) conf_files = TAILQ_HEAD_INITIALIZER(conf_files);
static struct conf_file		*curfile;

struct conf_sym {
	TAILQ_ENTRY(conf_sym)	 entry;
	int			 persist;	/* -D: survives, wins */
	char			*name;
	char			*value;
};
static TAILQ_HEAD(, conf_sym)	 conf_syms = TAILQ_HEAD_INITIALIZER(conf_syms);

/* Names resolved once the whole file is read, so order does not matter. */
struct conf_ref {
	TAILQ_ENTRY(conf_ref)	 entry;
	const char		*file;	/* arena */
	int			 line;
	struct conf_bind	*bind;
};
static TAILQ_HEAD(, conf_ref)	 conf_refs = TAILQ_HEAD_INITIALIZER(conf_refs);

struct conf_tok {
	struct conf_tok		*next;
	char			 str[];
};
static struct conf_tok		*conf_toks;

/* Statements that may appear once. */
enum conf_single {
	S_USER, S_DATABASE, S_CONTROL, S_USERS, S_DRIFT, S_ENGINE, S_APPLY,
	S_NOMAD, S_BOOTSTRAP, S_SESSIDLE, S_SESSLIFE, S_ANONYMOUS,
	S_METRICS, S_DASHBOARD, S_BODYMAX, S_MASTERUSER, S_CONNSRC, S_HOSTS,
	S_REPLAN,
	S_MAX
};
struct conf_seen {
	const char		*file;	/* arena; NULL: not seen */
	int			 line;
};

/* Lists in braces: what each string is. */
enum conf_list {
	L_NAMESPACES, L_MEMBERS, L_CAPS, L_EVENTS, L_HOSTNAMES
};

static struct nops_conf		*conf;
static int			 conf_flags;
static int			 conf_errors;
static int			 lex_err_pending;
static int			 last_token;
static char			 last_text[48];
static char			 prev_text[48];	/* the token before */
static int			 prev_token;
static struct conf_seen		 seen[S_MAX];

static struct conf_listen	*cur_listen;
static int			 nomad_line;
static unsigned int		 nomad_opts;
static struct conf_repo		*cur_repo;
static int			 cur_repo_line, cur_repo_ssh, cur_repo_urlok;
static unsigned int		 repo_opts;
static struct conf_group	*cur_group;
static struct conf_policy	*cur_policy;
static int			 cur_policy_line;
static struct conf_policy_ns	*cur_pns;
static const char		*anon_file;	/* arena */
static int			 anon_line;
static enum conf_list		 list_kind;
static int			 list_line, list_count;

static int	 yylex(void);
static void	 yyerror(const char *);
static void	 conf_err(int, const char *, ...)
		    __attribute__((__format__(printf, 2, 3)));
static void	 conf_err_at(const char *, int, const char *, ...)
		    __attribute__((__format__(printf, 3, 4)));
static const char *tokstr(const char *);
static int	 symset(const char *, const char *, int);
static const char *symget(const char *);
static void	 conf_include(const char *, int);
static void	 conf_varset(const char *, const char *, int);
static int	 conf_single(enum conf_single, const char *, int);
static int	 conf_duration(const char *, const char *, int, int, int,
		    int *);
static int	 conf_size(const char *, const char *, uint64_t, uint64_t, int,
		    uint64_t *);
static int	 conf_path(const char *, const char *, int);
static int	 conf_file_check(const char *, const char *, int, int);
static void	 conf_setfile(char **, const char *, const char *, int, int);
static void	 conf_user(const char *, int);
static void	 conf_master_user(const char *, int);
static void	 conf_control(const char *, const char *, int);
static void	 listen_begin(const char *, const char *, int);
static void	 listen_tls(const char *, const char *, int);
static int	 listen_hostname(const char *, int);
static int	 strs_add(struct conf_strs *, const char *);
static void	 nomad_begin(int);
static void	 nomad_opt(unsigned int, const char *, int);
static void	 nomad_end(void);
static void	 hosts_begin(int);
static void	 hosts_opt(unsigned int, const char *, int);
static void	 repo_begin(const char *, int);
static void	 repo_opt(unsigned int, const char *, int);
static void	 repo_end(void);
static void	 group_begin(const char *, int);
static void	 policy_begin(const char *, int);
static void	 policy_end(void);
static void	 pns_begin(const char *, int);
static void	 list_begin(enum conf_list, int);
static void	 list_add(const char *, int);
static void	 list_end(void);
static void	 bind_add(int, const char *, const char *, int);
static void	 anonymous_set(const char *, int);
static void	 notify_begin(const char *, int);
static void	 notify_opt(unsigned int, int, const char *, int);
static void	 notify_end(void);
static void	 dashboard_set(const char *, int);

/* Options of a nomad block and of a repository block, seen once each. */
#define N_ADDRESS	0x01
#define N_TOKEN		0x02
#define N_CA		0x04
#define N_NAMESPACES	0x08
#define H_SSHKEY	0x01
#define H_KNOWNHOSTS	0x02
#define H_STORE		0x04
#define H_CONFIRM	0x08
#define H_COMMAND	0x10
#define H_EVALTIMEOUT	0x20
#define H_EVALMEMORY	0x40
#define H_BUILDTIMEOUT	0x80
static unsigned int		 hosts_opts;
#define R_URL		0x01
#define R_BRANCH	0x02
#define R_PATH		0x04
#define R_POLL		0x08
#define R_WEBHOOK	0x10
#define R_SSHKEY	0x20
#define R_KNOWNHOSTS	0x40
#define R_FETCHTIMEOUT	0x80
#define R_MAXFILESIZE	0x100
#define R_MAXFILES	0x200
#define R_MAXSNAPSHOT	0x400
#define R_COMMITURL	0x800
/* Options of a notify block. */
#define O_KIND		0x01
#define O_TOPIC		0x02
#define O_TOKEN		0x04
#define O_EVENTS	0x08

static struct conf_notify	*cur_notify;
static int			 cur_notify_line;
static unsigned int		 notify_opts;
%}

%locations

%union {
	const char	*string;
}

%token	INCLUDE LISTEN ON PORT TLS CERTIFICATE KEY CONTROL SOCKET GROUP
%token	DATABASE USER USERS DRIFTINTERVAL ENGINEINTERVAL APPLYTIMEOUT
%token	REPLANINTERVAL
%token	NOMAD ADDRESS TOKEN FILEKW CA NAMESPACES NAMESPACE
%token	REPOSITORY URL BRANCH PATH POLLINTERVAL WEBHOOK SECRET SSH KNOWNHOSTS
%token	FETCHTIMEOUT MAXFILESIZE MAXFILES MAXSNAPSHOTSIZE
%token	COMMITURL
%token	MAXBODYSIZE HOSTNAMES MAXCONNSADDR
%token	POLICY BIND ERROR
%token	ANONYMOUS BOOTSTRAP SESSION IDLETIMEOUT LIFETIME
%token	METRICS DASHBOARD NOTIFY SLACK NTFY TOPIC EVENTS
%token	MASTER
%token	HOSTS NIX STORE CONFIRMTIMEOUT COMMANDTIMEOUT
%token	EVALTIMEOUT EVALMEMORY BUILDTIMEOUT
%token	<string> STRING

%%

grammar		: /* empty */
		| grammar '\n'
		| grammar include '\n'
		| grammar varset '\n'
		| grammar main '\n'
		| grammar error '\n'		{ yyerrok; }
		;

/* The reduction happens before the next token is read: see conf_include. */
include		: INCLUDE STRING		{
			conf_include($2, @1.first_line);
		}
		;

varset		: STRING '=' STRING		{
			conf_varset($1, $3, @1.first_line);
		}
		;

main		: USER STRING			{ conf_user($2, @1.first_line); }
		| MASTER USER STRING		{
			conf_master_user($3, @1.first_line);
		}
		| DATABASE STRING		{
			if (conf_single(S_DATABASE, "database",
			    @1.first_line) == 0 &&
			    conf_path("database", $2, @1.first_line) == 0) {
				free(conf->database);
				conf->database = xstrdup($2);
			}
		}
		| CONTROL SOCKET STRING		{
			conf_control($3, NULL, @1.first_line);
		}
		| CONTROL SOCKET STRING GROUP STRING	{
			conf_control($3, $5, @1.first_line);
		}
		| USERS FILEKW STRING		{
			if (conf_single(S_USERS, "users file",
			    @1.first_line) == 0)
				conf_setfile(&conf->users_file, "users file",
				    $3, 1, @1.first_line);
		}
		| DRIFTINTERVAL STRING		{
			if (conf_single(S_DRIFT, "drift-interval",
			    @1.first_line) == 0)
				(void)conf_duration("drift-interval", $2,
				    1, 86400, @1.first_line,
				    &conf->drift_interval);
		}
		| REPLANINTERVAL STRING		{
			if (conf_single(S_REPLAN, "replan-interval",
			    @1.first_line) == 0)
				(void)conf_duration("replan-interval", $2,
				    1, 7 * 86400, @1.first_line,
				    &conf->replan_interval);
		}
		| ENGINEINTERVAL STRING		{
			if (conf_single(S_ENGINE, "engine-interval",
			    @1.first_line) == 0)
				(void)conf_duration("engine-interval", $2,
				    1, 3600, @1.first_line,
				    &conf->engine_interval);
		}
		| APPLYTIMEOUT STRING		{
			if (conf_single(S_APPLY, "apply-timeout",
			    @1.first_line) == 0)
				(void)conf_duration("apply-timeout", $2,
				    1, 86400, @1.first_line,
				    &conf->apply_timeout);
		}
		| LISTEN ON STRING PORT STRING	{
			listen_begin($3, $5, @1.first_line);
		} listentls listenhosts
		| MAXCONNSADDR STRING		{
			const char	*errstr;
			long long	 n;

			if (conf_single(S_CONNSRC,
			    "max-connections-per-address",
			    @1.first_line) == 0) {
				n = strtonum($2, 1, WEB_CONN_SOURCE_MAX,
				    &errstr);
				if (errstr != NULL)
					conf_err(@1.first_line,
					    "max-connections-per-address %s: "
					    "must be a number from 1 to %d", $2,
					    WEB_CONN_SOURCE_MAX);
				else
					conf->max_conns_per_address = (int)n;
			}
		}
		| MAXBODYSIZE STRING		{
			if (conf_single(S_BODYMAX, "max-body-size",
			    @1.first_line) == 0)
				(void)conf_size("max-body-size", $2,
				    WEB_BODY_MIN, WEB_BODY_MAX, @1.first_line,
				    &conf->max_body_size);
		}
		| BOOTSTRAP TOKEN FILEKW STRING	{
			if (conf_single(S_BOOTSTRAP, "bootstrap token file",
			    @1.first_line) == 0)
				conf_setfile(&conf->bootstrap_token_file,
				    "bootstrap token file", $4, 1,
				    @1.first_line);
		}
		| SESSION IDLETIMEOUT STRING	{
			if (conf_single(S_SESSIDLE, "session idle-timeout",
			    @1.first_line) == 0)
				(void)conf_duration("session idle-timeout", $3,
				    60, 30 * 86400, @1.first_line,
				    &conf->session_idle);
		}
		| SESSION LIFETIME STRING	{
			if (conf_single(S_SESSLIFE, "session lifetime",
			    @1.first_line) == 0)
				(void)conf_duration("session lifetime", $3,
				    60, 365 * 86400, @1.first_line,
				    &conf->session_lifetime);
		}
		| ANONYMOUS POLICY STRING	{
			anonymous_set($3, @1.first_line);
		}
		| METRICS TOKEN FILEKW STRING	{
			if (conf_single(S_METRICS, "metrics token file",
			    @1.first_line) == 0)
				conf_setfile(&conf->metrics_token_file,
				    "metrics token file", $4, 1,
				    @1.first_line);
		}
		| DASHBOARD URL STRING		{
			dashboard_set($3, @1.first_line);
		}
		| notify
		| nomad
		| hosts
		| repository
		| group
		| policy
		| bind
		;

listentls	: /* empty */
		| TLS CERTIFICATE STRING KEY STRING {
			listen_tls($3, $5, @1.first_line);
		}
		;

listenhosts	: /* empty */
		| HOSTNAMES			{
			list_begin(L_HOSTNAMES, @1.first_line);
		} strlist
		;

/* A block may close after an error on its last line. */
blockend	: '}'
		| error '}'			{ yyerrok; }
		;

/* { "a" "b" }: strings separated by spaces, newlines or commas. */
strlist		: '{' strings blockend		{ list_end(); }
		;

strings		: /* empty */
		| strings STRING		{ list_add($2, @2.first_line); }
		| strings HOSTS			{
			/* the capability, not the block */
			list_add("hosts", @2.first_line);
		}
		| strings ','
		| strings '\n'
		;

nomad		: nomadbegin '{' nomadopts blockend	{ nomad_end(); }
		;

nomadbegin	: NOMAD				{ nomad_begin(@1.first_line); }
		;

nomadopts	: /* empty */
		| nomadopts '\n'
		| nomadopts nomadopt
		| nomadopts error '\n'		{ yyerrok; }
		;

nomadopt	: ADDRESS STRING	{ nomad_opt(N_ADDRESS, $2, @1.first_line); }
		| TOKEN FILEKW STRING	{ nomad_opt(N_TOKEN, $3, @1.first_line); }
		| CA FILEKW STRING	{ nomad_opt(N_CA, $3, @1.first_line); }
		| NAMESPACES		{
			nomad_opt(N_NAMESPACES, NULL, @1.first_line);
			list_begin(L_NAMESPACES, @1.first_line);
		} strlist
		;

hosts		: hostsbegin '{' hostsopts blockend
		;

hostsbegin	: HOSTS				{ hosts_begin(@1.first_line); }
		;

hostsopts	: /* empty */
		| hostsopts '\n'
		| hostsopts hostsopt
		| hostsopts error '\n'		{ yyerrok; }
		;

hostsopt	: SSH KEY FILEKW STRING	{ hosts_opt(H_SSHKEY, $4, @1.first_line); }
		| KNOWNHOSTS FILEKW STRING {
			hosts_opt(H_KNOWNHOSTS, $3, @1.first_line);
		}
		| NIX STORE STRING	{ hosts_opt(H_STORE, $3, @1.first_line); }
		| CONFIRMTIMEOUT STRING	{
			hosts_opt(H_CONFIRM, $2, @1.first_line);
		}
		| COMMANDTIMEOUT STRING	{
			hosts_opt(H_COMMAND, $2, @1.first_line);
		}
		| EVALTIMEOUT STRING	{
			hosts_opt(H_EVALTIMEOUT, $2, @1.first_line);
		}
		| EVALMEMORY STRING	{
			hosts_opt(H_EVALMEMORY, $2, @1.first_line);
		}
		| BUILDTIMEOUT STRING	{
			hosts_opt(H_BUILDTIMEOUT, $2, @1.first_line);
		}
		;

repository	: repobegin '{' repoopts blockend	{ repo_end(); }
		;

repobegin	: REPOSITORY STRING		{
			repo_begin($2, @1.first_line);
		}
		;

repoopts	: /* empty */
		| repoopts '\n'
		| repoopts repoopt
		| repoopts error '\n'		{ yyerrok; }
		;

repoopt		: URL STRING		{ repo_opt(R_URL, $2, @1.first_line); }
		| BRANCH STRING		{ repo_opt(R_BRANCH, $2, @1.first_line); }
		| PATH STRING		{ repo_opt(R_PATH, $2, @1.first_line); }
		| POLLINTERVAL STRING	{ repo_opt(R_POLL, $2, @1.first_line); }
		| FETCHTIMEOUT STRING	{
			repo_opt(R_FETCHTIMEOUT, $2, @1.first_line);
		}
		| MAXFILESIZE STRING	{
			repo_opt(R_MAXFILESIZE, $2, @1.first_line);
		}
		| MAXFILES STRING	{ repo_opt(R_MAXFILES, $2, @1.first_line); }
		| MAXSNAPSHOTSIZE STRING {
			repo_opt(R_MAXSNAPSHOT, $2, @1.first_line);
		}
		| WEBHOOK SECRET FILEKW STRING	{
			repo_opt(R_WEBHOOK, $4, @1.first_line);
		}
		| SSH KEY FILEKW STRING	{ repo_opt(R_SSHKEY, $4, @1.first_line); }
		| KNOWNHOSTS FILEKW STRING {
			repo_opt(R_KNOWNHOSTS, $3, @1.first_line);
		}
		| COMMITURL STRING	{
			repo_opt(R_COMMITURL, $2, @1.first_line);
		}
		;

group		: GROUP STRING			{
			group_begin($2, @1.first_line);
			list_begin(L_MEMBERS, @1.first_line);
		} strlist
		;

policy		: policybegin '{' policyopts blockend	{ policy_end(); }
		;

policybegin	: POLICY STRING			{
			policy_begin($2, @1.first_line);
		}
		;

policyopts	: /* empty */
		| policyopts '\n'
		| policyopts policyopt
		| policyopts error '\n'		{ yyerrok; }
		;

policyopt	: NAMESPACE STRING		{
			pns_begin($2, @1.first_line);
			list_begin(L_CAPS, @1.first_line);
		} strlist
		;

/* notify "NAME" { slack url "URL" events { failed } } */
notify		: notifybegin '{' notifyopts blockend	{ notify_end(); }
		;

notifybegin	: NOTIFY STRING			{
			notify_begin($2, @1.first_line);
		}
		;

notifyopts	: /* empty */
		| notifyopts '\n'
		| notifyopts notifyopt
		| notifyopts error '\n'		{ yyerrok; }
		;

notifyopt	: WEBHOOK URL STRING	{
			notify_opt(O_KIND, CONF_NOTIFY_WEBHOOK, $3,
			    @1.first_line);
		}
		| SLACK URL STRING	{
			notify_opt(O_KIND, CONF_NOTIFY_SLACK, $3,
			    @1.first_line);
		}
		| NTFY URL STRING	{
			notify_opt(O_KIND, CONF_NOTIFY_NTFY, $3,
			    @1.first_line);
		}
		| TOPIC STRING		{
			notify_opt(O_TOPIC, 0, $2, @1.first_line);
		}
		| TOKEN FILEKW STRING	{
			notify_opt(O_TOKEN, 0, $3, @1.first_line);
		}
		| EVENTS		{
			notify_opt(O_EVENTS, 0, NULL, @1.first_line);
			list_begin(L_EVENTS, @1.first_line);
		} strlist
		;

bind		: BIND GROUP STRING POLICY STRING	{
			bind_add(BIND_GROUP, $3, $5, @1.first_line);
		}
		| BIND USER STRING POLICY STRING	{
			bind_add(BIND_USER, $3, $5, @1.first_line);
		}
		;

%%

static const struct {
	const char	*name;
	int		 token;
} keywords[] = {
	{ "address",		ADDRESS },
	{ "anonymous",		ANONYMOUS },
	{ "apply-timeout",	APPLYTIMEOUT },
	{ "bind",		BIND },
	{ "bootstrap",		BOOTSTRAP },
	{ "branch",		BRANCH },
	{ "build-timeout",	BUILDTIMEOUT },
	{ "ca",			CA },
	{ "certificate",	CERTIFICATE },
	{ "control",		CONTROL },
	{ "dashboard",		DASHBOARD },
	{ "database",		DATABASE },
	{ "drift-interval",	DRIFTINTERVAL },
	{ "engine-interval",	ENGINEINTERVAL },
	{ "eval-memory",	EVALMEMORY },
	{ "eval-timeout",	EVALTIMEOUT },
	{ "events",		EVENTS },
	{ "fetch-timeout",	FETCHTIMEOUT },
	{ "command-timeout",	COMMANDTIMEOUT },
	{ "commit-url",		COMMITURL },
	{ "confirm-timeout",	CONFIRMTIMEOUT },
	{ "file",		FILEKW },
	{ "group",		GROUP },
	{ "hostnames",		HOSTNAMES },
	{ "idle-timeout",	IDLETIMEOUT },
	{ "include",		INCLUDE },
	{ "hosts",		HOSTS },
	{ "key",		KEY },
	{ "known-hosts",	KNOWNHOSTS },
	{ "lifetime",		LIFETIME },
	{ "listen",		LISTEN },
	{ "master",		MASTER },
	{ "max-body-size",	MAXBODYSIZE },
	{ "max-connections-per-address", MAXCONNSADDR },
	{ "max-file-size",	MAXFILESIZE },
	{ "max-files",		MAXFILES },
	{ "max-snapshot-size",	MAXSNAPSHOTSIZE },
	{ "metrics",		METRICS },
	{ "namespace",		NAMESPACE },
	{ "nix",		NIX },
	{ "namespaces",		NAMESPACES },
	{ "nomad",		NOMAD },
	{ "notify",		NOTIFY },
	{ "ntfy",		NTFY },
	{ "on",			ON },
	{ "path",		PATH },
	{ "policy",		POLICY },
	{ "poll-interval",	POLLINTERVAL },
	{ "port",		PORT },
	{ "replan-interval",	REPLANINTERVAL },
	{ "repository",		REPOSITORY },
	{ "secret",		SECRET },
	{ "session",		SESSION },
	{ "slack",		SLACK },
	{ "socket",		SOCKET },
	{ "ssh",		SSH },
	{ "store",		STORE },
	{ "tls",		TLS },
	{ "token",		TOKEN },
	{ "topic",		TOPIC },
	{ "url",		URL },
	{ "user",		USER },
	{ "users",		USERS },
	{ "webhook",		WEBHOOK },
};

static void
conf_verr(const char *file, int line, const char *fmt, va_list ap)
{
	char	*msg;

	conf_errors++;
	if (vasprintf(&msg, fmt, ap) == -1)
		fatal("vasprintf");
	log_warnx("%s:%d: %s", file, line, msg);
	free(msg);
}

static void
conf_err(int line, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	conf_verr(curfile->name, line, fmt, ap);
	va_end(ap);
}

static void
conf_err_at(const char *file, int line, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	conf_verr(file, line, fmt, ap);
	va_end(ap);
}

/* What a keyword takes after it, for a syntax error that says so. */
static const struct {
	const char	*keyword;
	const char	*takes;
} conf_takes[] = {
	{ "drift-interval",	"a duration (e.g. 5m)" },
	{ "engine-interval",	"a duration (e.g. 5s)" },
	{ "replan-interval",	"a duration (e.g. 1h)" },
	{ "apply-timeout",	"a duration (e.g. 10m)" },
	{ "poll-interval",	"a duration (e.g. 1m)" },
	{ "fetch-timeout",	"a duration (e.g. 2m)" },
	{ "idle-timeout",	"a duration (e.g. 8h)" },
	{ "lifetime",		"a duration (e.g. 7d)" },
	{ "max-body-size",	"a size (e.g. 1M)" },
	{ "eval-timeout",	"a duration (e.g. 2m)" },
	{ "eval-memory",	"a size (e.g. 2G)" },
	{ "build-timeout",	"a duration (e.g. 1h)" },
	{ "max-file-size",	"a size (e.g. 1M)" },
	{ "max-snapshot-size",	"a size (e.g. 64M)" },
	{ "max-files",		"a number" },
	{ "port",		"a port number" },
	{ "database",		"a path in quotes" },
	{ "include",		"a path in quotes" },
	{ "file",		"a path in quotes" },
	{ "address",		"a URL in quotes" },
	{ "url",		"a URL in quotes" },
	{ "commit-url",		"a URL template with {commit}, in quotes" },
	{ "user",		"a user name in quotes" },
	{ "group",		"a group name in quotes" },
	{ "branch",		"a branch name in quotes" },
	{ "path",		"a path in quotes" },
	{ "repository",		"a repository name in quotes" },
	{ "policy",		"a policy name in quotes" },
	{ "namespace",		"a namespace in quotes" },
	{ "topic",		"a topic in quotes" },
};

static void
yyerror(const char *msg)
{
	size_t	 i, k;
	char	 word[48];

	/* The lexer already said what was wrong with this line. */
	if (lex_err_pending)
		return;
	/* A keyword where a value goes: it must be quoted. */
	if (last_token != STRING && last_text[0] == '"' &&
	    strlen(last_text) >= 3) {
		strlcpy(word, last_text + 1, sizeof(word));
		word[strlen(word) - 1] = '\0';
		for (k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
			if (strcmp(keywords[k].name, word) == 0 &&
			    prev_token != '\n' && prev_token != 0) {
				conf_err(yylloc.first_line, "%s: %s is a "
				    "keyword; quote it (\"%s\") to use it as a "
				    "value after %s", msg, word, word,
				    prev_text);
				return;
			}
	}
	for (i = 0; prev_token != STRING &&
	    i < sizeof(conf_takes) / sizeof(conf_takes[0]); i++)
		if (strlen(prev_text) == strlen(conf_takes[i].keyword) + 2 &&
		    strncmp(prev_text + 1, conf_takes[i].keyword,
		    strlen(conf_takes[i].keyword)) == 0) {
			conf_err(yylloc.first_line, "%s: expected %s after "
			    "%s, not %s", msg, conf_takes[i].takes,
			    conf_takes[i].keyword, last_text);
			return;
		}
	conf_err(yylloc.first_line, "%s at %s", msg, last_text);
}

static const char *
tokstr(const char *s)
{
	struct conf_tok	*t;
	size_t		 len = strlen(s);

	if ((t = malloc(sizeof(*t) + len + 1)) == NULL)
		fatal("malloc");
	memcpy(t->str, s, len + 1);
	t->next = conf_toks;
	conf_toks = t;
	return t->str;
}

/* Lexer. */

static int
lgetc(void)
{
	int	 c;

	if (curfile->nunget > 0)
		return curfile->unget[--curfile->nunget];
	if (curfile->dead)
		return EOF;
	if ((c = getc(curfile->stream)) == EOF)
		return EOF;
	if (c == '\0') {
		conf_err(curfile->lineno, "NUL byte: not a text file; "
		    "the rest of it is ignored");
		lex_err_pending = 1;
		curfile->dead = 1;
		return EOF;
	}
	if (++curfile->size > CONF_MAXSIZE) {
		conf_err(curfile->lineno, "file larger than %d bytes; the "
		    "rest of it is ignored", CONF_MAXSIZE);
		lex_err_pending = 1;
		curfile->dead = 1;
		return EOF;
	}
	return c;
}

static void
lungetc(int c)
{
	if (c == EOF)
		return;
	if (curfile->nunget == (int)(sizeof(curfile->unget) /
	    sizeof(curfile->unget[0])))
		fatalx("pushback overflow");
	curfile->unget[curfile->nunget++] = c;
}

/*
 * After a lexical error, drop the rest of the line but keep its newline,
 * which ends the statement for the grammar's error recovery.
 */
static int
lex_error(const char *fmt, ...)
{
	va_list	 ap;
	int	 c;

	/* A file cut short by a NUL byte has had its error. */
	if (!curfile->dead) {
		va_start(ap, fmt);
		conf_verr(curfile->name, curfile->lineno, fmt, ap);
		va_end(ap);
	}
	lex_err_pending = 1;
	while ((c = lgetc()) != '\n' && c != EOF)
		;
	lungetc(c);
	strlcpy(last_text, "error", sizeof(last_text));
	return ERROR;
}

static int
is_word(int c)
{
	/* '$' starts a macro inside a word; the rest is syntax. */
	return c > ' ' && c < 0x7f && strchr("{}=,#\"'\\", c) == NULL;
}

static int
is_macro_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

static void
set_last_text(const char *s)
{
	size_t	 len = strlen(s);

	if (len < sizeof(last_text) - 2)
		snprintf(last_text, sizeof(last_text), "\"%s\"", s);
	else
		snprintf(last_text, sizeof(last_text), "\"%.*s...\"",
		    (int)sizeof(last_text) - 6, s);
}

static int
lex_quoted(int quotec)
{
	char	 buf[CONF_MAXTOKEN + 1];
	size_t	 len = 0;
	int	 c, next;

	for (;;) {
		c = lgetc();
		if (c == EOF || c == '\n') {
			lungetc(c);
			return lex_error("unterminated quoted string");
		}
		if (c == quotec)
			break;
		if (c == '\\') {
			next = lgetc();
			if (next == '\n') {
				curfile->lineno++;
				continue;
			}
			if (next == quotec || next == '\\')
				c = next;
			else
				lungetc(next);
		} else if ((c < ' ' && c != '\t') || c == 0x7f)
			return lex_error("control character in a quoted "
			    "string");
		if (len >= CONF_MAXTOKEN)
			return lex_error("string longer than %d bytes",
			    CONF_MAXTOKEN);
		buf[len++] = c;
	}
	buf[len] = '\0';
	yylval.string = tokstr(buf);
	set_last_text(buf);
	return STRING;
}

/* A word: a keyword, or a string in which $name macros are expanded. */
static int
lex_word(int c)
{
	char		 buf[CONF_MAXTOKEN + 1], name[CONF_MAXMACRO + 1];
	const char	*val;
	size_t		 len = 0, nlen, vlen, i;
	int		 expanded = 0;

	while (is_word(c)) {
		if (c != '$') {
			if (len >= CONF_MAXTOKEN)
				return lex_error("word longer than %d bytes",
				    CONF_MAXTOKEN);
			buf[len++] = c;
			c = lgetc();
			continue;
		}
		nlen = 0;
		while (is_macro_char(c = lgetc())) {
			if (nlen >= CONF_MAXMACRO)
				return lex_error("macro name longer than %d "
				    "bytes", CONF_MAXMACRO);
			name[nlen++] = c;
		}
		name[nlen] = '\0';
		if (nlen == 0) {
			lungetc(c);
			return lex_error("$ must be followed by a macro name "
			    "(quote a literal $)");
		}
		if ((val = symget(name)) == NULL) {
			lungetc(c);
			return lex_error("macro \"%s\" is not defined", name);
		}
		vlen = strlen(val);
		if (vlen > CONF_MAXTOKEN - len)
			return lex_error("word longer than %d bytes",
			    CONF_MAXTOKEN);
		memcpy(buf + len, val, vlen);
		len += vlen;
		expanded = 1;
	}
	lungetc(c);
	buf[len] = '\0';
	set_last_text(buf);
	/* What a macro produced is never a keyword. */
	if (!expanded)
		for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
			if (strcmp(buf, keywords[i].name) == 0)
				return keywords[i].token;
	yylval.string = tokstr(buf);
	return STRING;
}

static int
popfile(void)
{
	struct conf_file	*prev;

	if ((prev = TAILQ_PREV(curfile, conf_file_list, entry)) == NULL)
		return EOF;
	TAILQ_REMOVE(&conf_files, curfile, entry);
	fclose(curfile->stream);
	free(curfile->name);
	free(curfile);
	curfile = prev;
	return 0;
}

static int
yylex_token(void)
{
	int	 c, next;

	if (curfile->pending_nl) {
		curfile->pending_nl = 0;
		yylloc.first_line = yylloc.last_line = curfile->lineno;
		return '\n';
	}
top:
	/* A CR is blank here, so files saved with CRLF still read. */
	while ((c = lgetc()) == ' ' || c == '\t' || c == '\r')
		;
	yylloc.first_line = yylloc.last_line = curfile->lineno;
	if (c == '#')
		while ((c = lgetc()) != '\n' && c != EOF)
			;
	if (c == '\\') {
		if ((next = lgetc()) == '\n') {
			curfile->lineno++;
			goto top;
		}
		lungetc(next);
		return lex_error("stray \\ (a line continuation must end "
		    "the line)");
	}
	if (c == EOF) {
		/* A missing newline at the end still ends the statement. */
		if (last_token != '\n' && last_token != 0)
			return '\n';
		if (popfile() == EOF)
			return 0;
		goto top;
	}
	switch (c) {
	case '\n':
		curfile->lineno++;
		return '\n';
	case '{':
	case '}':
	case '=':
	case ',':
		snprintf(last_text, sizeof(last_text), "\"%c\"", c);
		return c;
	case '"':
	case '\'':
		return lex_quoted(c);
	}
	if (is_word(c))
		return lex_word(c);
	if (c >= ' ' && c < 0x7f)
		return lex_error("unexpected character '%c'", c);
	return lex_error("unexpected byte 0x%02x (quote non-ASCII text)", c);
}

static int
yylex(void)
{
	/* A lexical error hides the syntax error it causes on its line. */
	if (last_token == '\n')
		lex_err_pending = 0;
	prev_token = last_token;
	strlcpy(prev_text, last_text, sizeof(prev_text));
	last_token = yylex_token();
	if (last_token == '\n')
		strlcpy(last_text, "end of line", sizeof(last_text));
	else if (last_token == 0)
		strlcpy(last_text, "end of file", sizeof(last_text));
	return last_token;
}

static struct conf_file *
pushfile(const char *name, FILE *stream)
{
	struct conf_file	*nfile;
	struct stat		 st;

	if (fstat(fileno(stream), &st) == -1)
		return NULL;
	if ((nfile = calloc(1, sizeof(*nfile))) == NULL)
		fatal("calloc");
	nfile->name = xstrdup(name);
	nfile->stream = stream;
	nfile->lineno = 1;
	nfile->dev = st.st_dev;
	nfile->ino = st.st_ino;
	TAILQ_INSERT_TAIL(&conf_files, nfile, entry);
	return nfile;
}

/* Macros. */

static struct conf_sym *
symfind(const char *name)
{
	struct conf_sym	*sym;

	TAILQ_FOREACH(sym, &conf_syms, entry)
		if (strcmp(sym->name, name) == 0)
			return sym;
	return NULL;
}

static int
symset(const char *name, const char *value, int persist)
{
	struct conf_sym	*sym;
	char		*v;

	if ((sym = symfind(name)) != NULL) {
		/* -D on the command line wins over the file. */
		if (sym->persist && !persist)
			return 0;
		if ((v = strdup(value)) == NULL)
			return -1;
		free(sym->value);
		sym->value = v;
		sym->persist = persist;
		return 0;
	}
	if ((sym = calloc(1, sizeof(*sym))) == NULL)
		return -1;
	if ((sym->name = strdup(name)) == NULL ||
	    (sym->value = strdup(value)) == NULL) {
		free(sym->name);
		free(sym);
		return -1;
	}
	sym->persist = persist;
	TAILQ_INSERT_TAIL(&conf_syms, sym, entry);
	return 0;
}

static const char *
symget(const char *name)
{
	struct conf_sym	*sym;

	return (sym = symfind(name)) == NULL ? NULL : sym->value;
}

static int
macro_name_ok(const char *s)
{
	size_t	 len = strlen(s);

	if (len == 0 || len > CONF_MAXMACRO)
		return 0;
	for (; *s != '\0'; s++)
		if (!is_macro_char((unsigned char)*s))
			return 0;
	return 1;
}

int
cmdline_symset(char *s)
{
	char	*eq;
	int	 ret;

	if ((eq = strchr(s, '=')) == NULL)
		return -1;
	*eq = '\0';
	if (!macro_name_ok(s) || strlen(eq + 1) > CONF_MAXTOKEN)
		ret = -1;
	else
		ret = symset(s, eq + 1, 1);
	*eq = '=';
	return ret;
}

static void
conf_varset(const char *name, const char *value, int line)
{
	if (!macro_name_ok(name)) {
		conf_err(line, "bad macro name \"%s\": use 1 to %d of "
		    "A-Z a-z 0-9 _", name, CONF_MAXMACRO);
		return;
	}
	if (symset(name, value, 0) == -1)
		fatal("symset");
}

/* Statements. */

/*
 * Called when "include FILE" is reduced, before the parser reads on:
 * the next token comes from the new file, starting with the newline that
 * ends the include statement.  A relative name is taken from the
 * directory of the including file.
 */
static void
conf_include(const char *name, int line)
{
	struct conf_file	*f, *nfile;
	struct stat		 st;
	FILE			*stream;
	char			*dir, *path;
	int			 depth = 0;

	if (*name == '\0') {
		conf_err(line, "include: empty file name");
		return;
	}
	if (*name == '/' || strchr(curfile->name, '/') == NULL)
		path = xstrdup(name);
	else {
		dir = xstrdup(curfile->name);
		if (asprintf(&path, "%s/%s", dirname(dir), name) == -1)
			fatal("asprintf");
		free(dir);
	}
	TAILQ_FOREACH(f, &conf_files, entry)
		depth++;
	if (depth >= CONF_MAXINCLUDE) {
		conf_err(line, "include \"%s\": nested more than %d deep",
		    path, CONF_MAXINCLUDE);
		free(path);
		return;
	}
	if ((stream = fopen(path, "r")) == NULL) {
		conf_err(line, "include \"%s\": %s", path, strerror(errno));
		free(path);
		return;
	}
	if (fstat(fileno(stream), &st) == -1 || !S_ISREG(st.st_mode)) {
		conf_err(line, "include \"%s\": not a regular file", path);
		goto fail;
	}
	TAILQ_FOREACH(f, &conf_files, entry)
		if (f->dev == st.st_dev && f->ino == st.st_ino) {
			conf_err(line, "include \"%s\": include loop (%s is "
			    "being read already)", path, f->name);
			goto fail;
		}
	if ((nfile = pushfile(path, stream)) == NULL) {
		conf_err(line, "include \"%s\": %s", path, strerror(errno));
		goto fail;
	}
	nfile->pending_nl = 1;
	curfile = nfile;
	free(path);
	return;
 fail:
	fclose(stream);
	free(path);
}

static int
conf_single(enum conf_single which, const char *what, int line)
{
	if (seen[which].file != NULL) {
		conf_err(line, "duplicate %s (first at %s:%d)", what,
		    seen[which].file, seen[which].line);
		return -1;
	}
	seen[which].file = tokstr(curfile->name);
	seen[which].line = line;
	return 0;
}

static int
conf_duration(const char *what, const char *s, int min, int max, int line,
    int *out)
{
	const char	*errstr;
	char		 a[32], b[32];
	int		 v;

	if ((errstr = config_parse_duration(s, &v)) != NULL) {
		conf_err(line, "%s %s: %s", what, s, errstr);
		return -1;
	}
	if (v < min || v > max) {
		conf_err(line, "%s %s: must be from %s to %s", what, s,
		    config_fmt_duration(min, a, sizeof(a)),
		    config_fmt_duration(max, b, sizeof(b)));
		return -1;
	}
	*out = v;
	return 0;
}

static int
conf_size(const char *what, const char *s, uint64_t min, uint64_t max,
    int line, uint64_t *out)
{
	const char	*errstr;
	char		 a[32], b[32];
	uint64_t	 v;

	if ((errstr = config_parse_size(s, &v)) != NULL) {
		conf_err(line, "%s %s: %s", what, s, errstr);
		return -1;
	}
	if (v < min || v > max) {
		conf_err(line, "%s %s: must be from %s to %s", what, s,
		    config_fmt_size(min, a, sizeof(a)),
		    config_fmt_size(max, b, sizeof(b)));
		return -1;
	}
	*out = v;
	return 0;
}

static int
conf_path(const char *what, const char *path, int line)
{
	if (*path != '/') {
		conf_err(line, "%s \"%s\": the path must be absolute", what,
		    path);
		return -1;
	}
	return 0;
}

/*
 * Files named in the config must exist when it is read.  A file that
 * holds a secret must also be owned by root (or the user running nopsd)
 * and closed to group and others, like ssh(1) wants of a private key.
 */
static int
conf_file_check(const char *what, const char *path, int secret, int line)
{
	struct stat	 st;
	struct passwd	*pw;
	uid_t		 uid = getuid();

	if (conf_path(what, path, line) == -1)
		return -1;
	if (stat(path, &st) == -1) {
		conf_err(line, "%s \"%s\": %s", what, path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		conf_err(line, "%s \"%s\": not a regular file", what, path);
		return -1;
	}
	if (!secret || (conf_flags & CONF_NOSECRECY))
		return 0;
	/* A master that drops root reads it as its own user at a reload. */
	if (st.st_uid != 0 && st.st_uid != uid && conf->master_user != NULL &&
	    (pw = getpwnam(conf->master_user)) != NULL && pw->pw_uid != 0 &&
	    st.st_uid == pw->pw_uid)
		uid = pw->pw_uid;
	if (st.st_uid != 0 && st.st_uid != uid) {
		if (uid == 0)
			conf_err(line, "%s \"%s\": holds a secret but is "
			    "owned by uid %u, not root", what, path,
			    (unsigned int)st.st_uid);
		else
			conf_err(line, "%s \"%s\": holds a secret but is "
			    "owned by uid %u, not root or uid %u", what,
			    path, (unsigned int)st.st_uid, (unsigned int)uid);
		return -1;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		conf_err(line, "%s \"%s\": holds a secret but has mode %04o; "
		    "it must not be open to group or others (chmod 600)",
		    what, path, (unsigned int)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

static void
conf_setfile(char **field, const char *what, const char *path, int secret,
    int line)
{
	if (conf_file_check(what, path, secret, line) == -1)
		return;
	free(*field);
	*field = xstrdup(path);
}

/*
 * master user "NAME": the master drops root to it after start-up
 * (default NOPS_MASTER_USER).  Root cannot be kept.
 */
static void
conf_master_user(const char *name, int line)
{
	const char	*errstr;

	if (conf_single(S_MASTERUSER, "master user", line) == -1)
		return;
	if ((errstr = config_check_unixname(name)) != NULL) {
		conf_err(line, "master user \"%s\": %s", name, errstr);
		return;
	}
	if (strcmp(name, "root") == 0) {
		conf_err(line, "master user \"root\": the master always "
		    "drops root; name an unprivileged user, or leave the "
		    "statement out for " NOPS_MASTER_USER);
		return;
	}
	free(conf->master_user);
	conf->master_user = xstrdup(name);
}

static void
conf_user(const char *name, int line)
{
	const char	*errstr;

	if (conf_single(S_USER, "user", line) == -1)
		return;
	if ((errstr = config_check_unixname(name)) != NULL) {
		conf_err(line, "user \"%s\": %s", name, errstr);
		return;
	}
	free(conf->user);
	conf->user = xstrdup(name);
}

static void
conf_control(const char *path, const char *group, int line)
{
	struct sockaddr_un	 sun;
	const char		*errstr;

	if (conf_single(S_CONTROL, "control socket", line) == -1)
		return;
	if (conf_path("control socket", path, line) == 0) {
		if (strlen(path) >= sizeof(sun.sun_path))
			conf_err(line, "control socket \"%s\": longer than "
			    "%zu bytes", path, sizeof(sun.sun_path) - 1);
		else {
			free(conf->control_socket);
			conf->control_socket = xstrdup(path);
		}
	}
	if (group == NULL)
		return;
	if ((errstr = config_check_unixname(group)) != NULL) {
		conf_err(line, "control socket group \"%s\": %s", group,
		    errstr);
		return;
	}
	free(conf->control_group);
	conf->control_group = xstrdup(group);
}

static int
listen_wildcard(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in	*sin = (const void *)ss;
	const struct sockaddr_in6	*sin6 = (const void *)ss;

	if (ss->ss_family == AF_INET)
		return sin->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr);
}

static int
listen_same_addr(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
	const struct sockaddr_in	*a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6	*a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return 0;
	if (listen_wildcard(a) || listen_wildcard(b))
		return 1;
	if (a->ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return IN6_ARE_ADDR_EQUAL(&a6->sin6_addr, &b6->sin6_addr);
}

/*
 * ADDR is an IP literal, "*" (every IPv4 address) or "localhost"
 * (127.0.0.1): names are not resolved, so the config means the same on
 * every start.
 */
static void
listen_begin(const char *host, const char *portstr, int line)
{
	struct conf_listen	*l, *o;
	struct sockaddr_in	*sin;
	struct sockaddr_in6	*sin6;
	const char		*errstr;
	int			 port;

	cur_listen = NULL;
	port = strtonum(portstr, 1, 65535, &errstr);
	if (errstr != NULL)
		conf_err(line, "listen on %s port %s: the port must be a "
		    "number from 1 to 65535", host, portstr);
	if ((l = calloc(1, sizeof(*l))) == NULL)
		fatal("calloc");
	sin = (struct sockaddr_in *)&l->ss;
	sin6 = (struct sockaddr_in6 *)&l->ss;
	if (strcmp(host, "*") == 0 || strcmp(host, "localhost") == 0 ||
	    inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		l->sslen = sizeof(*sin);
		if (strcmp(host, "*") == 0)
			sin->sin_addr.s_addr = htonl(INADDR_ANY);
		else if (strcmp(host, "localhost") == 0)
			sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		l->sslen = sizeof(*sin6);
		sin6->sin6_port = htons(port);
	} else {
		conf_err(line, "listen on %s: not an IP address, * or "
		    "localhost (names are not resolved)", host);
		free(l);
		return;
	}
	if (errstr != NULL) {
		free(l);
		return;
	}
	TAILQ_FOREACH(o, &conf->listens, entry)
		if (o->port == port && listen_same_addr(&o->ss, &l->ss)) {
			conf_err(line, "listen on %s port %d: overlaps "
			    "listen on %s port %d", host, port, o->host,
			    port);
			free(l);
			return;
		}
	l->host = xstrdup(host);
	l->port = port;
	TAILQ_INIT(&l->hostnames);
	TAILQ_INSERT_TAIL(&conf->listens, l, entry);
	cur_listen = l;
}

/*
 * A name a client may give in Host for this listen: a DNS name or an IP
 * address (an IPv6 one with or without brackets); kept in lower case.
 */
static int
listen_hostname(const char *str, int line)
{
	unsigned char	 a[16];
	char		 buf[256], *p;
	size_t		 n = strlen(str);

	if (n > 2 && str[0] == '[' && str[n - 1] == ']') {
		snprintf(buf, sizeof(buf), "%.*s", (int)(n - 2), str + 1);
		if (inet_pton(AF_INET6, buf, a) != 1) {
			conf_err(line, "hostname \"%s\": not an IPv6 address",
			    str);
			return -1;
		}
	} else if (n == 0 || n > 253 || strspn(str, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.:") != n ||
	    (strchr(str, ':') != NULL && inet_pton(AF_INET6, str, a) != 1) ||
	    str[0] == '.' || str[0] == '-' || strstr(str, "..") != NULL) {
		conf_err(line, "hostname \"%s\": not a DNS name or an IP "
		    "address", str);
		return -1;
	} else
		strlcpy(buf, str, sizeof(buf));
	for (p = buf; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p += 'a' - 'A';
	if (strs_add(&cur_listen->hostnames, buf) == -1) {
		conf_err(line, "hostname \"%s\" listed twice", str);
		return -1;
	}
	return 0;
}

static void
listen_tls(const char *cert, const char *key, int line)
{
	int	 ok;

	ok = conf_file_check("tls certificate", cert, 0, line) == 0;
	ok = conf_file_check("tls key", key, 1, line) == 0 && ok;
	if (!ok || cur_listen == NULL)
		return;
	cur_listen->tls = 1;
	cur_listen->tls_cert = xstrdup(cert);
	cur_listen->tls_key = xstrdup(key);
}

static void
nomad_begin(int line)
{
	nomad_opts = 0;
	nomad_line = line;
	(void)conf_single(S_NOMAD, "nomad block", line);
}

static int
block_opt(unsigned int *opts, unsigned int opt, const char *what, int line)
{
	if (*opts & opt) {
		conf_err(line, "duplicate %s in this block", what);
		return -1;
	}
	*opts |= opt;
	return 0;
}

static void
nomad_opt(unsigned int opt, const char *s, int line)
{
	const char	*errstr;

	switch (opt) {
	case N_ADDRESS:
		if (block_opt(&nomad_opts, opt, "address", line) == -1)
			return;
		if ((errstr = config_check_nomad_address(s)) != NULL) {
			conf_err(line, "nomad address \"%s\": %s", s, errstr);
			return;
		}
		free(conf->nomad.address);
		conf->nomad.address = xstrdup(s);
		break;
	case N_TOKEN:
		if (block_opt(&nomad_opts, opt, "token file", line) == 0)
			conf_setfile(&conf->nomad.token_file, "token file",
			    s, 1, line);
		break;
	case N_CA:
		if (block_opt(&nomad_opts, opt, "ca file", line) == 0)
			conf_setfile(&conf->nomad.ca_file, "ca file", s, 0,
			    line);
		break;
	case N_NAMESPACES:
		(void)block_opt(&nomad_opts, opt, "namespaces", line);
		break;
	}
}

static void
nomad_end(void)
{
	struct conf_str	*s;

	if (!(nomad_opts & N_ADDRESS))
		conf_err(nomad_line, "nomad block without an address");
	else if (conf->nomad.address != NULL && conf->nomad.ca_file != NULL &&
	    strncmp(conf->nomad.address, "https://", 8) != 0)
		conf_err(nomad_line, "nomad: ca file needs an https:// "
		    "address");
	if (TAILQ_EMPTY(&conf->nomad.namespaces) &&
	    !(nomad_opts & N_NAMESPACES)) {
		if ((s = calloc(1, sizeof(*s))) == NULL)
			fatal("calloc");
		s->str = xstrdup("default");
		TAILQ_INSERT_TAIL(&conf->nomad.namespaces, s, entry);
	}
}

static void
hosts_begin(int line)
{
	hosts_opts = 0;
	if (conf_single(S_HOSTS, "hosts block", line) == 0)
		conf->hosts.set = 1;
}

static void
hosts_opt(unsigned int opt, const char *s, int line)
{
	switch (opt) {
	case H_SSHKEY:
		if (block_opt(&hosts_opts, opt, "ssh key file", line) == 0)
			conf_setfile(&conf->hosts.ssh_key_file, "ssh key file",
			    s, 1, line);
		break;
	case H_KNOWNHOSTS:
		if (block_opt(&hosts_opts, opt, "known-hosts file", line) == 0)
			conf_setfile(&conf->hosts.known_hosts_file,
			    "known-hosts file", s, 0, line);
		break;
	case H_STORE:
		if (block_opt(&hosts_opts, opt, "nix store", line) == -1)
			return;
		if (s[0] == '\0' || strlen(s) > 1024 ||
		    strcspn(s, " \t\n\"'") != strlen(s)) {
			conf_err(line, "nix store \"%s\": not a Nix store URI",
			    s);
			return;
		}
		free(conf->hosts.nix_store);
		conf->hosts.nix_store = xstrdup(s);
		break;
	case H_CONFIRM:
		if (block_opt(&hosts_opts, opt, "confirm-timeout", line) == 0)
			(void)conf_duration("confirm-timeout", s, 2, 3600,
			    line, &conf->hosts.confirm_timeout);
		break;
	case H_COMMAND:
		if (block_opt(&hosts_opts, opt, "command-timeout", line) == 0)
			(void)conf_duration("command-timeout", s, 5, 86400,
			    line, &conf->hosts.command_timeout);
		break;
	case H_EVALTIMEOUT:
		if (block_opt(&hosts_opts, opt, "eval-timeout", line) == 0)
			(void)conf_duration("eval-timeout", s,
			    NOPS_EVAL_TIMEOUT_MIN, NOPS_EVAL_TIMEOUT_MAX, line,
			    &conf->hosts.eval_timeout);
		break;
	case H_EVALMEMORY:
		if (block_opt(&hosts_opts, opt, "eval-memory", line) == 0)
			(void)conf_size("eval-memory", s, NOPS_EVAL_MEMORY_MIN,
			    NOPS_EVAL_MEMORY_MAX, line,
			    &conf->hosts.eval_memory);
		break;
	case H_BUILDTIMEOUT:
		if (block_opt(&hosts_opts, opt, "build-timeout", line) == 0)
			(void)conf_duration("build-timeout", s,
			    NOPS_BUILD_TIMEOUT_MIN, NOPS_BUILD_TIMEOUT_MAX,
			    line, &conf->hosts.build_timeout);
		break;
	}
}

static void
repo_begin(const char *name, int line)
{
	struct conf_repo	*r;
	const char		*errstr;

	if ((errstr = config_check_name(name)) != NULL)
		conf_err(line, "repository \"%s\": %s", name, errstr);
	TAILQ_FOREACH(r, &conf->repos, entry)
		if (strcmp(r->name, name) == 0) {
			conf_err(line, "repository \"%s\" defined twice",
			    name);
			break;
		}
	/* Kept even when bad, so that its block is still checked. */
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->name = xstrdup(name);
	r->branch = xstrdup("main");
	r->path = xstrdup("");
	r->poll_interval = NOPS_POLL_INTERVAL;
	r->fetch_timeout = NOPS_FETCH_TIMEOUT;
	r->max_file_size = NOPS_MAX_FILE_SIZE;
	r->max_files = NOPS_MAX_FILES;
	r->max_snapshot_size = NOPS_MAX_SNAPSHOT_SIZE;
	TAILQ_INSERT_TAIL(&conf->repos, r, entry);
	cur_repo = r;
	cur_repo_line = line;
	cur_repo_ssh = cur_repo_urlok = 0;
	repo_opts = 0;
}

static void
repo_opt(unsigned int opt, const char *s, int line)
{
	const char	*errstr;
	uint64_t	 size;
	struct conf_repo *r = cur_repo;

	switch (opt) {
	case R_URL:
		if (block_opt(&repo_opts, opt, "url", line) == -1)
			return;
		if ((errstr = config_check_repo_url(s, &cur_repo_ssh)) !=
		    NULL) {
			conf_err(line, "url \"%s\": %s", s, errstr);
			return;
		}
		cur_repo_urlok = 1;
		r->url = xstrdup(s);
		break;
	case R_BRANCH:
		if (block_opt(&repo_opts, opt, "branch", line) == -1)
			return;
		if ((errstr = config_check_branch(s)) != NULL) {
			conf_err(line, "branch \"%s\": %s", s, errstr);
			return;
		}
		free(r->branch);
		r->branch = xstrdup(s);
		break;
	case R_PATH:
		if (block_opt(&repo_opts, opt, "path", line) == -1)
			return;
		if ((errstr = config_check_repo_path(s)) != NULL) {
			conf_err(line, "path \"%s\": %s", s, errstr);
			return;
		}
		free(r->path);
		r->path = xstrdup(s);
		break;
	case R_POLL:
		if (block_opt(&repo_opts, opt, "poll-interval", line) == 0)
			(void)conf_duration("poll-interval", s, 1, 86400,
			    line, &r->poll_interval);
		break;
	case R_FETCHTIMEOUT:
		if (block_opt(&repo_opts, opt, "fetch-timeout", line) == 0)
			(void)conf_duration("fetch-timeout", s, 5, 3600,
			    line, &r->fetch_timeout);
		break;
	case R_MAXFILESIZE:
		if (block_opt(&repo_opts, opt, "max-file-size", line) == 0 &&
		    conf_size("max-file-size", s, 1024, GITW_LIMIT_FILE_SIZE,
		    line, &size) == 0)
			r->max_file_size = (uint32_t)size;
		break;
	case R_MAXFILES:
		if (block_opt(&repo_opts, opt, "max-files", line) == -1)
			break;
		r->max_files = (uint32_t)strtonum(s, 1, GITW_LIMIT_FILES,
		    &errstr);
		if (errstr != NULL)
			conf_err(line, "max-files %s: must be a number from 1 "
			    "to %d", s, GITW_LIMIT_FILES);
		break;
	case R_MAXSNAPSHOT:
		if (block_opt(&repo_opts, opt, "max-snapshot-size",
		    line) == 0 && conf_size("max-snapshot-size", s,
		    1024 * 1024, GITW_LIMIT_SNAP_SIZE, line, &size) == 0)
			r->max_snapshot_size = size;
		break;
	case R_WEBHOOK:
		if (block_opt(&repo_opts, opt, "webhook secret file",
		    line) == 0)
			conf_setfile(&r->webhook_secret_file,
			    "webhook secret file", s, 1, line);
		break;
	case R_SSHKEY:
		if (block_opt(&repo_opts, opt, "ssh key file", line) == 0)
			conf_setfile(&r->ssh_key_file, "ssh key file", s, 1,
			    line);
		break;
	case R_COMMITURL:
		if (block_opt(&repo_opts, opt, "commit-url", line) == -1)
			return;
		if ((errstr = config_check_commit_url(s)) != NULL) {
			conf_err(line, "commit-url \"%s\": %s", s, errstr);
			return;
		}
		r->commit_url = xstrdup(s);
		break;
	case R_KNOWNHOSTS:
		if (block_opt(&repo_opts, opt, "known-hosts file", line) == 0)
			conf_setfile(&r->known_hosts_file, "known-hosts file",
			    s, 0, line);
		break;
	}
}

static void
repo_end(void)
{
	const char	*name = cur_repo->name;

	if (!(repo_opts & R_URL)) {
		conf_err(cur_repo_line, "repository \"%s\" without a url",
		    name);
		return;
	}
	if (!cur_repo_urlok)
		return;
	if (cur_repo_ssh) {
		/* Host keys are pinned: never trust on first use. */
		if (!(repo_opts & R_SSHKEY))
			conf_err(cur_repo_line, "repository \"%s\": an ssh "
			    "URL needs an ssh key file", name);
		if (!(repo_opts & R_KNOWNHOSTS))
			conf_err(cur_repo_line, "repository \"%s\": an ssh "
			    "URL needs a known-hosts file", name);
	} else if (repo_opts & (R_SSHKEY | R_KNOWNHOSTS))
		conf_err(cur_repo_line, "repository \"%s\": ssh key file "
		    "and known-hosts file are only for ssh URLs", name);
}

static void
group_begin(const char *name, int line)
{
	struct conf_group	*g;
	const char		*errstr;

	if ((errstr = config_check_name(name)) != NULL)
		conf_err(line, "group \"%s\": %s", name, errstr);
	TAILQ_FOREACH(g, &conf->groups, entry)
		if (strcmp(g->name, name) == 0) {
			conf_err(line, "group \"%s\" defined twice", name);
			break;
		}
	if ((g = calloc(1, sizeof(*g))) == NULL)
		fatal("calloc");
	g->name = xstrdup(name);
	TAILQ_INIT(&g->members);
	TAILQ_INSERT_TAIL(&conf->groups, g, entry);
	cur_group = g;
}

static void
policy_begin(const char *name, int line)
{
	struct conf_policy	*p;
	const char		*errstr;

	if ((errstr = config_check_name(name)) != NULL)
		conf_err(line, "policy \"%s\": %s", name, errstr);
	else if (strcmp(name, CONF_POLICY_MANAGEMENT) == 0)
		conf_err(line, "policy \"%s\" is built in and cannot be "
		    "redefined", name);
	TAILQ_FOREACH(p, &conf->policies, entry)
		if (strcmp(p->name, name) == 0) {
			conf_err(line, "policy \"%s\" defined twice", name);
			break;
		}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("calloc");
	p->name = xstrdup(name);
	TAILQ_INIT(&p->namespaces);
	TAILQ_INSERT_TAIL(&conf->policies, p, entry);
	cur_policy = p;
	cur_policy_line = line;
}

static void
policy_end(void)
{
	if (TAILQ_EMPTY(&cur_policy->namespaces))
		conf_err(cur_policy_line, "policy \"%s\" grants nothing: "
		    "give it a namespace block", cur_policy->name);
}

static void
pns_begin(const char *glob, int line)
{
	struct conf_policy_ns	*pn;
	const char		*errstr;

	if ((errstr = config_check_glob(glob)) != NULL)
		conf_err(line, "namespace \"%s\": %s", glob, errstr);
	TAILQ_FOREACH(pn, &cur_policy->namespaces, entry)
		if (strcmp(pn->glob, glob) == 0) {
			conf_err(line, "namespace \"%s\" twice in policy "
			    "\"%s\"", glob, cur_policy->name);
			break;
		}
	if ((pn = calloc(1, sizeof(*pn))) == NULL)
		fatal("calloc");
	pn->glob = xstrdup(glob);
	TAILQ_INSERT_TAIL(&cur_policy->namespaces, pn, entry);
	cur_pns = pn;
}

static void
list_begin(enum conf_list kind, int line)
{
	list_kind = kind;
	list_line = line;
	list_count = 0;
}

static int
strs_add(struct conf_strs *list, const char *str)
{
	struct conf_str	*s;

	TAILQ_FOREACH(s, list, entry)
		if (strcmp(s->str, str) == 0)
			return -1;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		fatal("calloc");
	s->str = xstrdup(str);
	TAILQ_INSERT_TAIL(list, s, entry);
	return 0;
}

static void
list_add(const char *str, int line)
{
	const char	*errstr;
	uint32_t	 cap;

	list_count++;
	switch (list_kind) {
	case L_NAMESPACES:
		if ((errstr = config_check_namespace(str)) != NULL)
			conf_err(line, "namespace \"%s\": %s", str, errstr);
		else if (strs_add(&conf->nomad.namespaces, str) == -1)
			conf_err(line, "namespace \"%s\" listed twice", str);
		break;
	case L_MEMBERS:
		if ((errstr = config_check_username(str)) != NULL)
			conf_err(line, "group member \"%s\": %s", str, errstr);
		else if (strs_add(&cur_group->members, str) == -1)
			conf_err(line, "\"%s\" listed twice in group \"%s\"",
			    str, cur_group->name);
		break;
	case L_EVENTS:
		if (config_notify_event_parse(str, &cap) == -1)
			conf_err(line, "unknown event \"%s\" (known: "
			    "pending-approval failed awaiting-promotion "
			    "completed)", str);
		else if (cur_notify->events & cap)
			conf_err(line, "event \"%s\" listed twice", str);
		else
			cur_notify->events |= cap;
		break;
	case L_HOSTNAMES:
		if (cur_listen == NULL)
			break;
		if (listen_hostname(str, line) == -1)
			break;
		if (list_count > WEB_HOSTS_MAX)
			conf_err(line, "hostnames: more than %d",
			    WEB_HOSTS_MAX);
		break;
	case L_CAPS:
		if (config_cap_parse(str, &cap) == -1)
			conf_err(line, "unknown capability \"%s\" (known: "
			    "read approve promote retry deploy-now pause "
			    "fetch operate suspend left-behind hosts "
			    "management)", str);
		else if (cur_pns->caps & cap)
			conf_err(line, "capability \"%s\" listed twice", str);
		else
			cur_pns->caps |= cap;
		break;
	}
}

static void
list_end(void)
{
	if (list_count > 0)
		return;
	if (list_kind == L_NAMESPACES)
		conf_err(list_line, "namespaces: empty list");
	else if (list_kind == L_EVENTS)
		conf_err(list_line, "events: empty list");
	else if (list_kind == L_HOSTNAMES)
		conf_err(list_line, "hostnames: empty list");
	else if (list_kind == L_CAPS)
		conf_err(list_line, "namespace \"%s\": no capabilities",
		    cur_pns->glob);
}

static void
bind_add(int kind, const char *who, const char *policy, int line)
{
	struct conf_bind	*b;
	struct conf_ref		*ref;
	const char		*errstr;

	errstr = kind == BIND_GROUP ? config_check_name(who) :
	    config_check_username(who);
	if (errstr != NULL) {
		conf_err(line, "bind %s \"%s\": %s", kind == BIND_GROUP ?
		    "group" : "user", who, errstr);
		return;
	}
	if ((errstr = config_check_name(policy)) != NULL) {
		conf_err(line, "bind: policy \"%s\": %s", policy, errstr);
		return;
	}
	TAILQ_FOREACH(b, &conf->binds, entry)
		if (b->kind == kind && strcmp(b->who, who) == 0 &&
		    strcmp(b->policy, policy) == 0) {
			conf_err(line, "duplicate bind");
			return;
		}
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (ref = calloc(1, sizeof(*ref))) == NULL)
		fatal("calloc");
	b->kind = kind;
	b->who = xstrdup(who);
	b->policy = xstrdup(policy);
	TAILQ_INSERT_TAIL(&conf->binds, b, entry);
	ref->file = tokstr(curfile->name);
	ref->line = line;
	ref->bind = b;
	TAILQ_INSERT_TAIL(&conf_refs, ref, entry);
}

/*
 * anonymous policy "NAME": what a client without credentials may do.
 * Checked once the whole file is read (conf_check_anonymous).
 */
static void
anonymous_set(const char *policy, int line)
{
	const char	*errstr;

	if (conf_single(S_ANONYMOUS, "anonymous policy", line) == -1)
		return;
	if ((errstr = config_check_name(policy)) != NULL) {
		conf_err(line, "anonymous policy \"%s\": %s", policy, errstr);
		return;
	}
	free(conf->anonymous_policy);
	conf->anonymous_policy = xstrdup(policy);
	anon_file = tokstr(curfile->name);
	anon_line = line;
}

/* Anonymous access is read-only: a write needs someone to audit. */
static void
conf_check_anonymous(void)
{
	struct conf_policy	*p;
	struct conf_policy_ns	*pn;
	const char		*name = conf->anonymous_policy;

	if (name == NULL)
		return;
	if (strcmp(name, CONF_POLICY_MANAGEMENT) == 0) {
		conf_err_at(anon_file, anon_line, "anonymous policy \"%s\": "
		    "anonymous access can only be read", name);
		return;
	}
	TAILQ_FOREACH(p, &conf->policies, entry)
		if (strcmp(p->name, name) == 0)
			break;
	if (p == NULL) {
		conf_err_at(anon_file, anon_line, "anonymous policy: no "
		    "policy \"%s\"", name);
		return;
	}
	TAILQ_FOREACH(pn, &p->namespaces, entry)
		if (pn->caps & ~CAP_READ) {
			conf_err_at(anon_file, anon_line, "anonymous policy "
			    "\"%s\": it grants more than read (namespace "
			    "\"%s\"); anonymous access can only be read",
			    name, pn->glob);
			return;
		}
}

/* dashboard url "URL": where notifications link to. */
static void
dashboard_set(const char *url, int line)
{
	const char	*errstr;

	if (conf_single(S_DASHBOARD, "dashboard url", line) == -1)
		return;
	if ((errstr = config_check_url(url, 0)) != NULL) {
		conf_err(line, "dashboard url \"%s\": %s", url, errstr);
		return;
	}
	free(conf->dashboard_url);
	conf->dashboard_url = xstrdup(url);
}

static void
notify_begin(const char *name, int line)
{
	struct conf_notify	*n;
	const char		*errstr;

	if ((errstr = config_check_name(name)) != NULL)
		conf_err(line, "notify \"%s\": %s", name, errstr);
	TAILQ_FOREACH(n, &conf->notifies, entry)
		if (strcmp(n->name, name) == 0) {
			conf_err(line, "notify \"%s\" defined twice", name);
			break;
		}
	/* Kept even when bad, so that its block is still checked. */
	if ((n = calloc(1, sizeof(*n))) == NULL)
		fatal("calloc");
	n->name = xstrdup(name);
	n->events = CONF_NOTIFY_EV_ALL;
	TAILQ_INSERT_TAIL(&conf->notifies, n, entry);
	cur_notify = n;
	cur_notify_line = line;
	notify_opts = 0;
}

static void
notify_opt(unsigned int opt, int kind, const char *s, int line)
{
	struct conf_notify	*n = cur_notify;
	const char		*errstr;

	switch (opt) {
	case O_KIND:
		if (block_opt(&notify_opts, opt, "url (webhook, slack or "
		    "ntfy)", line) == -1)
			return;
		n->kind = kind;
		/* The URL may hold a secret (Slack's do): not repeated. */
		if ((errstr = config_check_url(s, 1)) != NULL) {
			conf_err(line, "notify \"%s\": url: %s", n->name,
			    errstr);
			return;
		}
		n->url = xstrdup(s);
		break;
	case O_TOPIC:
		if (block_opt(&notify_opts, opt, "topic", line) == -1)
			return;
		if ((errstr = config_check_ntfy_topic(s)) != NULL) {
			conf_err(line, "topic \"%s\": %s", s, errstr);
			return;
		}
		n->topic = xstrdup(s);
		break;
	case O_TOKEN:
		if (block_opt(&notify_opts, opt, "token file", line) == 0)
			conf_setfile(&n->token_file, "token file", s, 1, line);
		break;
	case O_EVENTS:
		if (block_opt(&notify_opts, opt, "events", line) == 0)
			n->events = 0;
		break;
	}
}

static void
notify_end(void)
{
	struct conf_notify	*n = cur_notify;

	if (!(notify_opts & O_KIND)) {
		conf_err(cur_notify_line, "notify \"%s\" needs a webhook "
		    "url, slack url or ntfy url", n->name);
		return;
	}
	if ((notify_opts & O_TOPIC) && n->kind != CONF_NOTIFY_NTFY)
		conf_err(cur_notify_line, "notify \"%s\": topic is only for "
		    "ntfy", n->name);
	if ((notify_opts & O_TOKEN) && n->kind == CONF_NOTIFY_SLACK)
		conf_err(cur_notify_line, "notify \"%s\": a slack url is "
		    "its own credential; no token file", n->name);
}

/* Checks that need the whole file: binds name groups and policies. */
static void
conf_check_refs(void)
{
	struct conf_ref		*ref;
	struct conf_group	*g;
	struct conf_policy	*p;
	struct conf_bind	*b;

	TAILQ_FOREACH(ref, &conf_refs, entry) {
		b = ref->bind;
		if (b->kind == BIND_GROUP) {
			TAILQ_FOREACH(g, &conf->groups, entry)
				if (strcmp(g->name, b->who) == 0)
					break;
			if (g == NULL)
				conf_err_at(ref->file, ref->line,
				    "bind: no group \"%s\"", b->who);
		}
		if (strcmp(b->policy, CONF_POLICY_MANAGEMENT) == 0)
			continue;
		TAILQ_FOREACH(p, &conf->policies, entry)
			if (strcmp(p->name, b->policy) == 0)
				break;
		if (p == NULL)
			conf_err_at(ref->file, ref->line,
			    "bind: no policy \"%s\"", b->policy);
	}
}

static void
conf_cleanup(void)
{
	struct conf_ref	*ref;
	struct conf_sym	*sym, *next;
	struct conf_tok	*t;

	while (curfile != NULL && popfile() != EOF)
		;
	if (curfile != NULL) {
		TAILQ_REMOVE(&conf_files, curfile, entry);
		fclose(curfile->stream);
		free(curfile->name);
		free(curfile);
		curfile = NULL;
	}
	while ((ref = TAILQ_FIRST(&conf_refs)) != NULL) {
		TAILQ_REMOVE(&conf_refs, ref, entry);
		free(ref);
	}
	/* File macros are per parse; -D ones stay for a reload. */
	for (sym = TAILQ_FIRST(&conf_syms); sym != NULL; sym = next) {
		next = TAILQ_NEXT(sym, entry);
		if (sym->persist)
			continue;
		TAILQ_REMOVE(&conf_syms, sym, entry);
		free(sym->name);
		free(sym->value);
		free(sym);
	}
	while ((t = conf_toks) != NULL) {
		conf_toks = t->next;
		free(t);
	}
}

struct nops_conf *
parse_config(const char *filename, int flags)
{
	FILE		*stream;
	struct nops_conf *c;

	if ((stream = fopen(filename, "r")) == NULL) {
		log_warn("%s", filename);
		return NULL;
	}
	if ((curfile = pushfile(filename, stream)) == NULL) {
		log_warn("%s", filename);
		fclose(stream);
		return NULL;
	}
	conf = config_new();
	conf->path = xstrdup(filename);
	conf_flags = flags;
	conf_errors = 0;
	lex_err_pending = 0;
	last_token = 0;
	memset(seen, 0, sizeof(seen));
	cur_listen = NULL;
	cur_repo = NULL;
	cur_group = NULL;
	cur_policy = NULL;
	cur_pns = NULL;
	cur_notify = NULL;
	anon_file = NULL;
	anon_line = 0;

	if (yyparse() != 0 && conf_errors == 0)
		conf_err(curfile->lineno, "cannot parse");
	conf_check_refs();
	conf_check_anonymous();
	conf_cleanup();

	c = conf;
	conf = NULL;
	if (conf_errors > 0) {
		config_free(c);
		return NULL;
	}
	return c;
}
