/*
 * Unit tests of the nops.conf parser (master/parse.y) and master/config.c.
 * Each case writes a config into a temporary directory, parses it with
 * stderr captured, and checks the result and the exact error lines.
 * Secret files are made there too, with the modes each case needs.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "conf.h"
#include "test.h"

static char	 tdir[] = "/tmp/test_config.XXXXXX";
static char	 errbuf[65536];	/* what the last parse logged */

static void
mkfile(const char *name, const char *text, mode_t mode)
{
	char	 path[PATH_MAX];
	FILE	*fp;

	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	if ((fp = fopen(path, "w")) == NULL) {
		perror(path);
		exit(1);
	}
	fputs(text, fp);
	fclose(fp);
	if (chmod(path, mode) == -1) {
		perror(path);
		exit(1);
	}
}

/* Write text as NAME in tdir and parse it; errbuf gets the log output. */
static struct nops_conf *
parse_text(const char *name, const char *text, int flags)
{
	struct nops_conf	*conf;
	char			 path[PATH_MAX];
	FILE			*cap;
	size_t			 n;
	int			 saved;

	mkfile(name, text, 0644);
	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	fflush(stderr);
	if ((cap = tmpfile()) == NULL || (saved = dup(STDERR_FILENO)) == -1 ||
	    dup2(fileno(cap), STDERR_FILENO) == -1) {
		perror("capture stderr");
		exit(1);
	}
	conf = parse_config(path, flags);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(cap);
	n = fread(errbuf, 1, sizeof(errbuf) - 1, cap);
	errbuf[n] = '\0';
	fclose(cap);
	return conf;
}

/* Lines of errbuf that are "file:line: message" errors of our files. */
static int
count_errors(void)
{
	const char	*p;
	int		 n = 0;

	for (p = errbuf; *p != '\0'; p = strchr(p, '\n') + 1) {
		if (strncmp(p, tdir, strlen(tdir)) == 0)
			n++;
		if (strchr(p, '\n') == NULL)
			break;
	}
	return n;
}

/* Does errbuf hold "NAME:LINE: " followed by text containing msg? */
static int
has_error(const char *name, int line, const char *msg)
{
	char		 prefix[PATH_MAX + 32];
	const char	*p, *eol;

	snprintf(prefix, sizeof(prefix), "%s/%s:%d: ", tdir, name, line);
	for (p = errbuf; (p = strstr(p, prefix)) != NULL; p++) {
		eol = strchr(p, '\n');
		if (eol == NULL)
			eol = p + strlen(p);
		if (msg == NULL)
			return 1;
		for (const char *q = p; q + strlen(msg) <= eol; q++)
			if (strncmp(q, msg, strlen(msg)) == 0)
				return 1;
	}
	printf("# expected %s%s in:\n%s", prefix, msg ? msg : "", errbuf);
	return 0;
}

static void
make_secrets(void)
{
	mkfile("token", "s3cret\n", 0600);
	mkfile("tls.key", "key\n", 0600);
	mkfile("tls.crt", "cert\n", 0644);
	mkfile("ca.pem", "ca\n", 0644);
	mkfile("hook", "hook\n", 0600);
	mkfile("id", "key\n", 0600);
	mkfile("known_hosts", "h\n", 0644);
	mkfile("users", "alice:$2b$10$x\n", 0600);
	mkfile("open-token", "s3cret\n", 0644);
}

static void
test_defaults(void)
{
	struct nops_conf	*conf;

	TEST_BEGIN("defaults of an empty config");
	conf = parse_text("empty.conf", "# nothing\n\n", 0);
	CHECK(conf != NULL);
	if (conf != NULL) {
		CHECK_STR(conf->user, NOPS_USER);
		CHECK_STR(conf->database, NOPS_DB_FILE);
		CHECK_STR(conf->control_socket, NOPS_CONTROL_SOCKET);
		CHECK_STR(conf->control_group, NOPS_CONTROL_GROUP);
		CHECK(conf->drift_interval == NOPS_DRIFT_INTERVAL);
		CHECK(conf->engine_interval == NOPS_ENGINE_INTERVAL);
		CHECK(conf->apply_timeout == NOPS_APPLY_TIMEOUT);
		CHECK(conf->users_file == NULL);
		CHECK(conf->nomad.address == NULL);
		CHECK(TAILQ_EMPTY(&conf->listens));
		CHECK(TAILQ_EMPTY(&conf->repos));
		CHECK(strstr(conf->path, "empty.conf") != NULL);
	}
	CHECK(errbuf[0] == '\0');
	config_free(conf);
	TEST_END();
}

static const char full_conf[] =
    "# the shape of DESIGN.md section 8\n"
    "user \"_nopsw\"\n"
    "database \"/var/db/x/nops.db\"\n"
    "control socket \"/run/x/nopsd.sock\" group \"wheel\"\n"
    "listen on 127.0.0.1 port 8080\n"
    "listen on ::1 port 8443 tls certificate $dir/tls.crt key $dir/tls.key\n"
    "users file $dir/users\n"
    "drift-interval 5m\n"
    "engine-interval 5s\n"
    "apply-timeout 1h30m\n"
    "nomad {\n"
    "\taddress \"https://nomad.example:4646\"\n"
    "\ttoken file $dir/token\n"
    "\tca file $dir/ca.pem\n"
    "\tnamespaces { \"default\", \"web\" }\n"
    "}\n"
    "hosts {\n"
    "\tssh key file $dir/id\n"
    "\tknown-hosts file $dir/known_hosts\n"
    "\tnix store \"unix:///run/nix/daemon.sock\"\n"
    "\tconfirm-timeout 45s\n"
    "}\n"
    "group \"ops\" { \"alice\" \"bob\" }\n"
    "policy \"deployer\" {\n"
    "\tnamespace \"*\" { read approve promote retry deploy-now pause }\n"
    "\tnamespace \"web\" { fetch operate suspend left-behind hosts }\n"
    "}\n"
    "bind group \"ops\" policy \"deployer\"\n"
    "bind user \"carol\" policy \"management\"\n"
    "repository \"infra\" {\n"
    "\turl \"git@git.example:ops/infra.git\"\n"
    "\tbranch \"release/1\"\n"
    "\tpath \"nomad/jobs\"\n"
    "\tpoll-interval 90\n"
    "\twebhook secret file $dir/hook\n"
    "\tssh key file $dir/id\n"
    "\tknown-hosts file $dir/known_hosts\n"
    "}\n"
    "repository \"plain\" { url \"https://git.example/x.git\" }\n";

static void
test_full(void)
{
	struct nops_conf	*conf;
	struct conf_listen	*l;
	struct conf_repo	*r;
	struct conf_group	*g;
	struct conf_policy	*p;
	struct conf_policy_ns	*pn;
	struct conf_bind	*b;
	struct conf_str		*s;
	char			 path[PATH_MAX];

	TEST_BEGIN("every statement parsed into its field");
	conf = parse_text("full.conf", full_conf, 0);
	CHECK(conf != NULL);
	if (conf == NULL) {
		printf("# %s", errbuf);
		TEST_END();
		return;
	}
	CHECK_STR(conf->user, "_nopsw");
	CHECK_STR(conf->database, "/var/db/x/nops.db");
	CHECK_STR(conf->control_socket, "/run/x/nopsd.sock");
	CHECK_STR(conf->control_group, "wheel");
	snprintf(path, sizeof(path), "%s/users", tdir);
	CHECK_STR(conf->users_file, path);
	CHECK(conf->drift_interval == 300);
	CHECK(conf->engine_interval == 5);
	CHECK(conf->apply_timeout == 5400);

	l = TAILQ_FIRST(&conf->listens);
	CHECK(l != NULL);
	if (l != NULL) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&l->ss;

		CHECK_STR(l->host, "127.0.0.1");
		CHECK(l->port == 8080 && !l->tls);
		CHECK(sin->sin_family == AF_INET &&
		    sin->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
		    sin->sin_port == htons(8080) &&
		    l->sslen == sizeof(*sin));
		l = TAILQ_NEXT(l, entry);
	}
	CHECK(l != NULL);
	if (l != NULL) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&l->ss;

		CHECK_STR(l->host, "::1");
		CHECK(l->port == 8443 && l->tls);
		CHECK(sin6->sin6_family == AF_INET6 &&
		    IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr) &&
		    sin6->sin6_port == htons(8443));
		snprintf(path, sizeof(path), "%s/tls.key", tdir);
		CHECK_STR(l->tls_key, path);
		CHECK(TAILQ_NEXT(l, entry) == NULL);
	}

	CHECK_STR(conf->nomad.address, "https://nomad.example:4646");
	snprintf(path, sizeof(path), "%s/token", tdir);
	CHECK_STR(conf->nomad.token_file, path);
	s = TAILQ_FIRST(&conf->nomad.namespaces);
	CHECK(s != NULL && strcmp(s->str, "default") == 0);
	s = s != NULL ? TAILQ_NEXT(s, entry) : NULL;
	CHECK(s != NULL && strcmp(s->str, "web") == 0 &&
	    TAILQ_NEXT(s, entry) == NULL);

	g = TAILQ_FIRST(&conf->groups);
	CHECK(g != NULL && strcmp(g->name, "ops") == 0);
	if (g != NULL) {
		s = TAILQ_FIRST(&g->members);
		CHECK(s != NULL && strcmp(s->str, "alice") == 0);
		CHECK(s != NULL && TAILQ_NEXT(s, entry) != NULL &&
		    strcmp(TAILQ_NEXT(s, entry)->str, "bob") == 0);
	}

	p = TAILQ_FIRST(&conf->policies);
	CHECK(p != NULL && strcmp(p->name, "deployer") == 0);
	if (p != NULL) {
		pn = TAILQ_FIRST(&p->namespaces);
		CHECK(pn != NULL && strcmp(pn->glob, "*") == 0 &&
		    pn->caps == (CAP_READ | CAP_APPROVE | CAP_PROMOTE |
		    CAP_RETRY | CAP_DEPLOY_NOW | CAP_PAUSE));
		pn = pn != NULL ? TAILQ_NEXT(pn, entry) : NULL;
		CHECK(pn != NULL && strcmp(pn->glob, "web") == 0 &&
		    pn->caps == (CAP_FETCH | CAP_OPERATE | CAP_SUSPEND |
		    CAP_LEFT_BEHIND | CAP_HOSTS));
	}

	b = TAILQ_FIRST(&conf->binds);
	CHECK(b != NULL && b->kind == BIND_GROUP &&
	    strcmp(b->who, "ops") == 0 && strcmp(b->policy, "deployer") == 0);
	b = b != NULL ? TAILQ_NEXT(b, entry) : NULL;
	CHECK(b != NULL && b->kind == BIND_USER &&
	    strcmp(b->who, "carol") == 0 &&
	    strcmp(b->policy, "management") == 0);

	/* The hosts block; command-timeout is its default. */
	CHECK(conf->hosts.set);
	snprintf(path, sizeof(path), "%s/id", tdir);
	CHECK(conf->hosts.ssh_key_file != NULL &&
	    strcmp(conf->hosts.ssh_key_file, path) == 0);
	CHECK(conf->hosts.nix_store != NULL &&
	    strcmp(conf->hosts.nix_store, "unix:///run/nix/daemon.sock") == 0);
	CHECK(conf->hosts.confirm_timeout == 45);
	CHECK(conf->hosts.command_timeout == NOPS_COMMAND_TIMEOUT);

	r = TAILQ_FIRST(&conf->repos);
	CHECK(r != NULL);
	if (r != NULL) {
		CHECK_STR(r->name, "infra");
		CHECK_STR(r->url, "git@git.example:ops/infra.git");
		CHECK_STR(r->branch, "release/1");
		CHECK_STR(r->path, "nomad/jobs");
		CHECK(r->poll_interval == 90);
		snprintf(path, sizeof(path), "%s/known_hosts", tdir);
		CHECK_STR(r->known_hosts_file, path);
		r = TAILQ_NEXT(r, entry);
	}
	CHECK(r != NULL);
	if (r != NULL) {
		/* Defaults of a repository. */
		CHECK_STR(r->branch, "main");
		CHECK_STR(r->path, "");
		CHECK(r->poll_interval == NOPS_POLL_INTERVAL);
		CHECK(r->ssh_key_file == NULL && r->webhook_secret_file ==
		    NULL);
	}
	CHECK(errbuf[0] == '\0');
	config_free(conf);
	TEST_END();
}

static void
test_roundtrip(void)
{
	struct nops_conf	*conf, *again;
	char			*first = NULL, *second = NULL;
	size_t			 n1, n2;
	FILE			*fp;

	TEST_BEGIN("config_print output parses to the same config");
	conf = parse_text("rt.conf", full_conf, 0);
	CHECK(conf != NULL);
	if (conf != NULL) {
		fp = open_memstream(&first, &n1);
		config_print(fp, conf);
		fclose(fp);
		again = parse_text("rt2.conf", first, 0);
		CHECK(again != NULL);
		if (again != NULL) {
			fp = open_memstream(&second, &n2);
			config_print(fp, again);
			fclose(fp);
			CHECK_STR(first, second);
			/* Macros are expanded, durations shortest. */
			CHECK(strstr(first, "$dir") == NULL);
			CHECK(strstr(first, "apply-timeout 90m\n") != NULL);
			CHECK(strstr(first, "poll-interval 90s\n") != NULL);
		}
		config_free(again);
	}
	free(first);
	free(second);
	config_free(conf);
	TEST_END();
}

static void
test_error_lines(void)
{
	struct nops_conf	*conf;

	TEST_BEGIN("an error names its file and line");
	conf = parse_text("line.conf",
	    "user \"_nops\"\n"
	    "\n"
	    "# a comment\n"
	    "database relative.db\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("line.conf", 4, "the path must be absolute"));
	CHECK(count_errors() == 1);
	config_free(conf);
	TEST_END();
}

static void
test_all_errors(void)
{
	struct nops_conf	*conf;

	TEST_BEGIN("three errors give three messages");
	conf = parse_text("three.conf",
	    "listen on 127.0.0.1 port 99999\n"
	    "nomad {\n"
	    "\taddress \"https://n.example\"\n"
	    "\tnonsense here\n"
	    "}\n"
	    "engine-interval 3x\n"
	    "user \"_nops\"\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("three.conf", 1, "port must be a number"));
	CHECK(has_error("three.conf", 4, "syntax error"));
	CHECK(has_error("three.conf", 6, "unknown unit"));
	CHECK(count_errors() == 3);
	config_free(conf);
	TEST_END();

	TEST_BEGIN("errors on consecutive lines are each reported");
	conf = parse_text("consec.conf",
	    "user\n"
	    "database\n"
	    "bogus\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("consec.conf", 1, "syntax error"));
	CHECK(has_error("consec.conf", 2, "syntax error"));
	CHECK(has_error("consec.conf", 3, "syntax error"));
	CHECK(count_errors() == 3);
	config_free(conf);
	TEST_END();
}

static void
test_duplicates(void)
{
	struct nops_conf	*conf;

	TEST_BEGIN("duplicate singletons and repository names");
	conf = parse_text("dup.conf",
	    "database \"/a.db\"\n"
	    "database \"/b.db\"\n"
	    "repository \"r\" { url \"https://h/x\" }\n"
	    "repository \"r\" { url \"https://h/y\" }\n"
	    "repository \"s\" {\n"
	    "\turl \"https://h/x\"\n"
	    "\turl \"https://h/z\"\n"
	    "}\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("dup.conf", 2, "duplicate database"));
	CHECK(has_error("dup.conf", 4, "repository \"r\" defined twice"));
	CHECK(has_error("dup.conf", 7, "duplicate url"));
	CHECK(count_errors() == 3);
	config_free(conf);
	TEST_END();
}

static void
test_macros(void)
{
	struct nops_conf	*conf;
	char			 def[] = "dbname=cmdline.db";

	TEST_BEGIN("macros: defined, expanded in words, not in quotes");
	CHECK(cmdline_symset(def) == 0);
	conf = parse_text("macro.conf",
	    "who = \"_svc\"\n"
	    "dbname = \"file.db\"\n"
	    "user $who\n"
	    "database /var/$dbname\n"
	    "control socket \"/run/$who.sock\"\n", 0);
	CHECK(conf != NULL);
	if (conf != NULL) {
		CHECK_STR(conf->user, "_svc");
		/* -D wins over the file's definition. */
		CHECK_STR(conf->database, "/var/cmdline.db");
		CHECK_STR(conf->control_socket, "/run/$who.sock");
	}
	config_free(conf);
	TEST_END();

	TEST_BEGIN("macros: undefined, malformed, per parse");
	conf = parse_text("macro2.conf",
	    "user $nosuch\n"
	    "database $\n"
	    "bad-name = \"x\"\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("macro2.conf", 1, "macro \"nosuch\" is not defined"));
	CHECK(has_error("macro2.conf", 2, "$ must be followed"));
	CHECK(has_error("macro2.conf", 3, "bad macro name"));
	CHECK(count_errors() == 3);
	config_free(conf);
	/* "who" came from the earlier file: it must not leak into this one. */
	conf = parse_text("macro3.conf", "user $who\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("macro3.conf", 1, "macro \"who\" is not defined"));
	config_free(conf);
	TEST_END();

	TEST_BEGIN("macros: a macro never becomes a keyword");
	conf = parse_text("macro4.conf", "kw = \"user\"\n$kw \"x\"\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("macro4.conf", 2, "syntax error"));
	config_free(conf);
	{
		char	 bad1[] = "noequals", bad2[] = "a-b=c";

		CHECK(cmdline_symset(bad1) == -1);
		CHECK(cmdline_symset(bad2) == -1);
	}
	TEST_END();
}

static void
test_include(void)
{
	struct nops_conf	*conf;

	TEST_BEGIN("include: relative to the including file");
	mkfile("part.inc", "user \"_inc\"\ndatabase \"/inc.db\"", 0644);
	conf = parse_text("inc.conf",
	    "include \"part.inc\"\n"
	    "engine-interval 7s\n", 0);
	CHECK(conf != NULL);
	if (conf != NULL) {
		CHECK_STR(conf->user, "_inc");
		CHECK_STR(conf->database, "/inc.db");
		CHECK(conf->engine_interval == 7);
	}
	config_free(conf);
	TEST_END();

	TEST_BEGIN("include: errors name the included file");
	mkfile("badpart.conf", "\n\nuser \"-x\"\n", 0644);
	conf = parse_text("inc2.conf",
	    "\n"
	    "include \"badpart.conf\"\n"
	    "database \"rel\"\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("badpart.conf", 3, "user \"-x\""));
	CHECK(has_error("inc2.conf", 3, "must be absolute"));
	CHECK(count_errors() == 2);
	config_free(conf);
	TEST_END();

	TEST_BEGIN("include: missing file and loop are errors");
	mkfile("loop-a.conf", "include \"loop-b.conf\"\n", 0644);
	mkfile("loop-b.conf", "\ninclude \"loop-a.conf\"\n", 0644);
	conf = parse_text("inc3.conf",
	    "include \"nosuch.inc\"\n"
	    "include \"loop-a.conf\"\n"
	    "include \"inc3.conf\"\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("inc3.conf", 1, "No such file"));
	CHECK(has_error("loop-b.conf", 2, "include loop"));
	CHECK(has_error("inc3.conf", 3, "include loop"));
	CHECK(count_errors() == 3);
	config_free(conf);
	TEST_END();
}

static void
test_secrecy(void)
{
	struct nops_conf	*conf;
	char			 path[PATH_MAX];
	const char		*text = "nomad {\n"
	    "\taddress \"https://n.example\"\n"
	    "\ttoken file $dir/open-token\n"
	    "}\n";

	TEST_BEGIN("secrecy: a 0644 secret file is refused");
	mkfile("open-token", "s3cret\n", 0644);
	conf = parse_text("sec1.conf", text, 0);
	CHECK(conf == NULL);
	CHECK(has_error("sec1.conf", 3, "has mode 0644"));
	config_free(conf);
	mkfile("open-token", "s3cret\n", 0640);
	conf = parse_text("sec1.conf", text, 0);
	CHECK(conf == NULL);
	CHECK(has_error("sec1.conf", 3, "has mode 0640"));
	config_free(conf);
	TEST_END();

	TEST_BEGIN("secrecy: 0600 accepted; CONF_NOSECRECY skips the check");
	mkfile("open-token", "s3cret\n", 0600);
	conf = parse_text("sec2.conf", text, 0);
	CHECK(conf != NULL);
	config_free(conf);
	mkfile("open-token", "s3cret\n", 0666);
	conf = parse_text("sec3.conf", text, CONF_NOSECRECY);
	CHECK(conf != NULL);
	config_free(conf);
	TEST_END();

	if (geteuid() != 0)
		/* Only root can give a file away: say so, never pass quietly. */
		printf("ok - secrecy: a secret owned by another user is "
		    "refused # SKIP not root\n");
	else {
		TEST_BEGIN("secrecy: a secret owned by another user is "
		    "refused");
		mkfile("open-token", "s3cret\n", 0600);
		snprintf(path, sizeof(path), "%s/open-token", tdir);
		CHECK(chown(path, 65534, 65534) == 0);
		conf = parse_text("sec4.conf", text, 0);
		CHECK(conf == NULL);
		CHECK(has_error("sec4.conf", 3, "owned by uid 65534"));
		config_free(conf);
		CHECK(chown(path, 0, 0) == 0);
		TEST_END();
	}

	TEST_BEGIN("secret and other named files must exist");
	conf = parse_text("missing.conf",
	    "users file $dir/no-users\n"
	    "listen on * port 443 tls certificate $dir/no.crt key "
	    "$dir/tls.key\n"
	    "repository \"r\" {\n"
	    "\turl \"ssh://git@h.example/x\"\n"
	    "\tssh key file $dir/no-key\n"
	    "\tknown-hosts file $dir\n"
	    "}\n", CONF_NOSECRECY);
	CHECK(conf == NULL);
	CHECK(has_error("missing.conf", 1, "No such file"));
	CHECK(has_error("missing.conf", 2, "No such file"));
	CHECK(has_error("missing.conf", 5, "No such file"));
	CHECK(has_error("missing.conf", 6, "not a regular file"));
	CHECK(count_errors() == 4);
	config_free(conf);
	TEST_END();
}

static void
test_durations(void)
{
	static const struct {
		const char	*in;
		int		 secs;	/* -1: an error */
	} cases[] = {
		{ "30s", 30 }, { "5m", 300 }, { "1h", 3600 },
		{ "1h30m", 5400 }, { "300", 300 }, { "1d", 86400 },
		{ "2d3h4m5s", 2 * 86400 + 3 * 3600 + 4 * 60 + 5 },
		{ "0", 0 }, { "", -1 }, { "5x", -1 }, { "m", -1 },
		{ "1h1h", -1 }, { "30m1h", -1 }, { "1.5h", -1 },
		{ "1h30", -1 }, { "-5s", -1 }, { "9999999999", -1 },
		{ "99999999d", -1 },
	};
	char		 buf[32];
	size_t		 i;
	int		 v;
	const char	*errstr;
	struct nops_conf *conf;

	TEST_BEGIN("durations: parse");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = -2;
		errstr = config_parse_duration(cases[i].in, &v);
		if (cases[i].secs == -1) {
			CHECK(errstr != NULL);
			if (errstr == NULL)
				printf("# accepted \"%s\"\n", cases[i].in);
		} else {
			CHECK(errstr == NULL && v == cases[i].secs);
			if (errstr != NULL || v != cases[i].secs)
				printf("# \"%s\" -> %d\n", cases[i].in, v);
		}
	}
	TEST_END();

	TEST_BEGIN("durations: shortest unit form");
	CHECK_STR(config_fmt_duration(300, buf, sizeof(buf)), "5m");
	CHECK_STR(config_fmt_duration(90, buf, sizeof(buf)), "90s");
	CHECK_STR(config_fmt_duration(3600, buf, sizeof(buf)), "1h");
	CHECK_STR(config_fmt_duration(5400, buf, sizeof(buf)), "90m");
	CHECK_STR(config_fmt_duration(86400, buf, sizeof(buf)), "1d");
	CHECK_STR(config_fmt_duration(0, buf, sizeof(buf)), "0s");
	TEST_END();

	TEST_BEGIN("durations: bounds per statement");
	conf = parse_text("dur.conf",
	    "drift-interval 0\n"
	    "engine-interval 2h\n"
	    "apply-timeout 2d\n"
	    "repository \"r\" { url \"https://h/x\" poll-interval 0s }\n",
	    0);
	CHECK(conf == NULL);
	CHECK(has_error("dur.conf", 1, "drift-interval 0: must be from 1s "
	    "to 1d"));
	CHECK(has_error("dur.conf", 2, "must be from 1s to 1h"));
	CHECK(has_error("dur.conf", 3, "must be from 1s to 1d"));
	CHECK(has_error("dur.conf", 4, "poll-interval 0s"));
	CHECK(count_errors() == 4);
	config_free(conf);
	TEST_END();
}

static void
test_sizes(void)
{
	static const struct {
		const char	*in;
		long long	 bytes;	/* -1: an error */
	} cases[] = {
		{ "1024", 1024 }, { "512K", 512 * 1024 }, { "4M", 4 << 20 },
		{ "4m", 4 << 20 }, { "1G", 1LL << 30 }, { "0", 0 },
		{ "", -1 }, { "K", -1 }, { "4MB", -1 }, { "1.5M", -1 },
		{ "-1", -1 }, { "4X", -1 }, { "99999999999999999999", -1 },
		{ "2000G", -1 },
	};
	char		 buf[32];
	size_t		 i;
	uint64_t	 v;
	const char	*errstr;
	struct nops_conf *conf;
	struct conf_repo *r;

	TEST_BEGIN("sizes: parse");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 12345;
		errstr = config_parse_size(cases[i].in, &v);
		if (cases[i].bytes == -1) {
			CHECK(errstr != NULL);
			if (errstr == NULL)
				printf("# accepted \"%s\"\n", cases[i].in);
		} else {
			CHECK(errstr == NULL && v == (uint64_t)cases[i].bytes);
			if (errstr != NULL || v != (uint64_t)cases[i].bytes)
				printf("# \"%s\" -> %llu\n", cases[i].in,
				    (unsigned long long)v);
		}
	}
	TEST_END();

	TEST_BEGIN("sizes: largest unit form");
	CHECK_STR(config_fmt_size(1 << 20, buf, sizeof(buf)), "1M");
	CHECK_STR(config_fmt_size(1536 * 1024, buf, sizeof(buf)), "1536K");
	CHECK_STR(config_fmt_size(1000, buf, sizeof(buf)), "1000");
	CHECK_STR(config_fmt_size(1ULL << 30, buf, sizeof(buf)), "1G");
	TEST_END();

	TEST_BEGIN("repository limits: defaults and values");
	conf = parse_text("lim.conf",
	    "repository \"d\" { url \"https://h/d\" }\n"
	    "repository \"r\" { url \"https://h/x\" fetch-timeout 5m\n"
	    "\tmax-file-size 2M max-files 300 max-snapshot-size 64M }\n", 0);
	CHECK(conf != NULL);
	if (conf != NULL) {
		r = TAILQ_FIRST(&conf->repos);
		CHECK(r->fetch_timeout == NOPS_FETCH_TIMEOUT &&
		    r->max_file_size == NOPS_MAX_FILE_SIZE &&
		    r->max_files == NOPS_MAX_FILES &&
		    r->max_snapshot_size == NOPS_MAX_SNAPSHOT_SIZE);
		r = TAILQ_NEXT(r, entry);
		CHECK(r->fetch_timeout == 300 &&
		    r->max_file_size == 2 * 1024 * 1024 &&
		    r->max_files == 300 &&
		    r->max_snapshot_size == 64ULL * 1024 * 1024);
	}
	config_free(conf);
	TEST_END();
}

static void
test_caps(void)
{
	struct nops_conf	*conf;
	uint32_t		 cap, bit;

	TEST_BEGIN("capabilities: names round trip");
	for (bit = 1; bit != 0; bit <<= 1) {
		const char *name = config_cap_name(bit);

		if (name == NULL)
			continue;
		CHECK(config_cap_parse(name, &cap) == 0 && cap == bit);
	}
	CHECK(config_cap_parse("deploy-now", &cap) == 0 &&
	    cap == CAP_DEPLOY_NOW);
	CHECK(config_cap_parse("left-behind", &cap) == 0 &&
	    cap == CAP_LEFT_BEHIND);
	CHECK(config_cap_parse("management", &cap) == 0 &&
	    cap == CAP_MANAGEMENT);
	CHECK(config_cap_parse("Read", &cap) == -1);
	CHECK(config_cap_name(0) == NULL);
	TEST_END();

	TEST_BEGIN("capabilities: unknown one is an error");
	conf = parse_text("cap.conf",
	    "policy \"p\" {\n"
	    "\tnamespace \"*\" {\n"
	    "\t\tread\n"
	    "\t\tdestroy\n"
	    "\t}\n"
	    "}\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("cap.conf", 4, "unknown capability \"destroy\""));
	CHECK(count_errors() == 1);
	config_free(conf);
	TEST_END();
}

static void
test_binds(void)
{
	struct nops_conf	*conf;

	TEST_BEGIN("bind: unknown group or policy, reported at the bind");
	conf = parse_text("bind.conf",
	    "bind group \"ops\" policy \"later\"\n"
	    "bind group \"nobody\" policy \"later\"\n"
	    "bind user \"eve\" policy \"nosuch\"\n"
	    "group \"ops\" { \"alice\" }\n"
	    "policy \"later\" { namespace \"*\" { read } }\n"
	    "policy \"management\" { namespace \"*\" { read } }\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("bind.conf", 2, "no group \"nobody\""));
	CHECK(has_error("bind.conf", 3, "no policy \"nosuch\""));
	CHECK(has_error("bind.conf", 6, "built in"));
	CHECK(count_errors() == 3);
	config_free(conf);
	TEST_END();
}

static void
test_listen(void)
{
	struct nops_conf	*conf;

	TEST_BEGIN("listen: bad ports and addresses");
	conf = parse_text("port.conf",
	    "listen on 127.0.0.1 port 0\n"
	    "listen on 127.0.0.1 port 65536\n"
	    "listen on 127.0.0.1 port http\n"
	    "listen on www.example port 80\n"
	    "listen on * port 80\n"
	    "listen on 10.0.0.1 port 80\n"
	    "listen on localhost port 81\n"
	    "listen on 127.0.0.1 port 81\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("port.conf", 1, "port 0: the port must be"));
	CHECK(has_error("port.conf", 2, "port 65536: the port must be"));
	CHECK(has_error("port.conf", 3, "port http: the port must be"));
	CHECK(has_error("port.conf", 4, "not an IP address"));
	CHECK(has_error("port.conf", 6, "overlaps listen on * port 80"));
	CHECK(has_error("port.conf", 8, "overlaps"));
	CHECK(count_errors() == 6);
	config_free(conf);
	TEST_END();
}

static void
test_nomad_address(void)
{
	static const struct {
		const char	*addr;
		int		 ok;
	} cases[] = {
		{ "https://nomad.example:4646", 1 },
		{ "https://10.1.2.3", 1 },
		{ "https://[2001:db8::1]:4646/", 1 },
		{ "http://127.0.0.1:4646", 1 },
		{ "http://127.3.4.5:4646", 1 },
		{ "http://localhost:4646", 1 },
		{ "http://[::1]:4646", 1 },
		{ "http://nomad.example:4646", 0 },
		{ "http://10.0.0.1:4646", 0 },
		{ "http://[::2]:4646", 0 },
		{ "http://127.0.0.1.evil.example", 0 },
		{ "ftp://nomad.example", 0 },
		{ "nomad.example:4646", 0 },
		{ "https://user:pw@nomad.example", 0 },
		{ "https://nomad.example:0", 0 },
		{ "https://nomad.example:99999", 0 },
		{ "https://", 0 },
		{ "https://nomad example", 0 },
	};
	struct nops_conf	*conf;
	size_t			 i;
	int			 ok;

	TEST_BEGIN("nomad address: https, or http on loopback only");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ok = config_check_nomad_address(cases[i].addr) == NULL;
		CHECK(ok == cases[i].ok);
		if (ok != cases[i].ok)
			printf("# %s: %s\n", cases[i].addr,
			    ok ? "accepted" : "refused");
	}
	conf = parse_text("nomad.conf",
	    "nomad {\n"
	    "\taddress \"http://nomad.example:4646\"\n"
	    "}\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("nomad.conf", 2, "only allowed for a loopback host"));
	config_free(conf);
	TEST_END();

	TEST_BEGIN("nomad block: address required, namespaces default");
	conf = parse_text("nomad2.conf", "nomad {\n}\n", 0);
	CHECK(conf == NULL);
	CHECK(has_error("nomad2.conf", 1, "without an address"));
	config_free(conf);
	conf = parse_text("nomad3.conf",
	    "nomad { address \"http://[::1]:4646\" }\n", 0);
	CHECK(conf != NULL);
	if (conf != NULL) {
		CHECK(!TAILQ_EMPTY(&conf->nomad.namespaces) &&
		    strcmp(TAILQ_FIRST(&conf->nomad.namespaces)->str,
		    "default") == 0);
		CHECK(conf->nomad.token_file == NULL);
	}
	config_free(conf);
	TEST_END();
}

static void
test_repo_values(void)
{
	static const struct {
		const char	*url;
		int		 ok, ssh;
	} urls[] = {
		{ "https://git.example/ops/infra.git", 1, 0 },
		{ "http://127.0.0.1:8080/x.git", 1, 0 },
		{ "git://git.example/x.git", 1, 0 },
		{ "ssh://git@git.example:2222/x.git", 1, 1 },
		{ "ssh://git.example/x.git", 1, 1 },
		{ "file:///srv/git/x.git", 1, 0 },
		{ "git@git.example:ops/x.git", 1, 1 },
		{ "https://user:token@git.example/x.git", 0, 0 },
		{ "ssh://u:pw@git.example/x.git", 0, 0 },
		{ "file://relative/x", 0, 0 },
		{ "ftp://git.example/x", 0, 0 },
		{ "/srv/git/x.git", 0, 0 },
		{ "git.example:x.git", 0, 0 },
		{ "git@git.example:", 0, 0 },
		{ "https://git.example", 0, 0 },
		{ "https://git.example/a b", 0, 0 },
	};
	static const char *goodnames[] = { "infra", "a.b_c-9", "x" };
	static const char *badnames[] = { "", ".", "..", "a b", "a/b",
	    "x\"y", "0123456789012345678901234567890123456789"
	    "0123456789012345678901234" };
	static const char *goodbranches[] = { "main", "release/1.2",
	    "feature-x" };
	static const char *badbranches[] = { "", "-x", "a..b", "a b",
	    "x.lock", "a/", "/a", "a//b", "a@{1}", "a:b", "@" };
	static const char *goodpaths[] = { "", "nomad", "a/b/c", "a.b/.c" };
	static const char *badpaths[] = { "/abs", "../x", "a/../b", "a/",
	    "./a", "a//b", "a b" };
	size_t	 i;
	int	 ssh, ok;

	TEST_BEGIN("repository values: urls, names, branches, paths");
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		ssh = -1;
		ok = config_check_repo_url(urls[i].url, &ssh) == NULL;
		CHECK(ok == urls[i].ok);
		if (ok != urls[i].ok)
			printf("# %s: %s\n", urls[i].url,
			    ok ? "accepted" : "refused");
		if (ok)
			CHECK(ssh == urls[i].ssh);
	}
	for (i = 0; i < sizeof(goodnames) / sizeof(goodnames[0]); i++)
		CHECK(config_check_name(goodnames[i]) == NULL);
	for (i = 0; i < sizeof(badnames) / sizeof(badnames[0]); i++)
		CHECK(config_check_name(badnames[i]) != NULL);
	for (i = 0; i < sizeof(goodbranches) / sizeof(goodbranches[0]); i++)
		CHECK(config_check_branch(goodbranches[i]) == NULL);
	for (i = 0; i < sizeof(badbranches) / sizeof(badbranches[0]); i++) {
		CHECK(config_check_branch(badbranches[i]) != NULL);
		if (config_check_branch(badbranches[i]) == NULL)
			printf("# branch %s accepted\n", badbranches[i]);
	}
	for (i = 0; i < sizeof(goodpaths) / sizeof(goodpaths[0]); i++)
		CHECK(config_check_repo_path(goodpaths[i]) == NULL);
	for (i = 0; i < sizeof(badpaths) / sizeof(badpaths[0]); i++)
		CHECK(config_check_repo_path(badpaths[i]) != NULL);
	CHECK(config_check_namespace("web-1") == NULL);
	CHECK(config_check_namespace("web_1") != NULL);
	CHECK(config_check_glob("web-*") == NULL);
	CHECK(config_check_glob("a b") != NULL);
	CHECK(config_check_unixname("_nops") == NULL);
	CHECK(config_check_unixname("-x") != NULL);
	TEST_END();

	TEST_BEGIN("repository: ssh needs a key and pinned host keys");
	{
		struct nops_conf *conf;

		conf = parse_text("ssh.conf",
		    "repository \"a\" { url \"git@h.example:x.git\" }\n"
		    "repository \"b\" {\n"
		    "\turl \"https://h.example/x.git\"\n"
		    "\tssh key file $dir/id\n"
		    "}\n"
		    "repository \"c\" { branch \"dev\" }\n", 0);
		CHECK(conf == NULL);
		CHECK(has_error("ssh.conf", 1, "needs an ssh key file"));
		CHECK(has_error("ssh.conf", 1, "needs a known-hosts file"));
		CHECK(has_error("ssh.conf", 2, "only for ssh URLs"));
		CHECK(has_error("ssh.conf", 6, "without a url"));
		CHECK(count_errors() == 4);
		config_free(conf);
	}
	TEST_END();
}

static void
test_lexer(void)
{
	struct nops_conf	*conf;
	char			*big;
	size_t			 i;
	char			 path[PATH_MAX];
	FILE			*fp;

	TEST_BEGIN("lexer: quoting, comments, continuation, commas");
	conf = parse_text("lex.conf",
	    "user '_q' # a comment \"with quotes\"\n"
	    "database \"/a \\\"b\\\" \\\\c\"\n"
	    "control socket \\\n"
	    "   \"/run/s.sock\"\n"
	    "group \"g\" { \"a\",\"b\" , \n \"c\"\n}\n"
	    "drift-interval 1m", 0);
	CHECK(conf != NULL);
	if (conf != NULL) {
		CHECK_STR(conf->user, "_q");
		CHECK_STR(conf->database, "/a \"b\" \\c");
		CHECK_STR(conf->control_socket, "/run/s.sock");
		CHECK(conf->drift_interval == 60);
	}
	config_free(conf);
	TEST_END();

	TEST_BEGIN("lexer: bad input is an error, never a crash");
	if ((big = malloc(10000)) == NULL)
		exit(1);
	memcpy(big, "user \"", 6);
	for (i = 6; i < 9000; i++)
		big[i] = 'a';
	memcpy(big + i, "\"\nuser \"unterminated\n\001\nx = $\n", 29);
	conf = parse_text("lex2.conf", big, 0);
	free(big);
	CHECK(conf == NULL);
	CHECK(has_error("lex2.conf", 1, "longer than 4096"));
	CHECK(has_error("lex2.conf", 2, "unterminated quoted string"));
	CHECK(has_error("lex2.conf", 3, "unexpected byte 0x01"));
	CHECK(has_error("lex2.conf", 4, "$ must be followed"));
	CHECK(count_errors() == 4);
	config_free(conf);

	snprintf(path, sizeof(path), "%s/nul.conf", tdir);
	if ((fp = fopen(path, "w")) == NULL)
		exit(1);
	fwrite("user \"a\"\n\ndat\0abase\n", 1, 20, fp);
	fclose(fp);
	fflush(stderr);
	{
		int	 saved = dup(STDERR_FILENO), fd;
		FILE	*cap = tmpfile();
		size_t	 n;

		fd = fileno(cap);
		dup2(fd, STDERR_FILENO);
		conf = parse_config(path, 0);
		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		close(saved);
		rewind(cap);
		n = fread(errbuf, 1, sizeof(errbuf) - 1, cap);
		errbuf[n] = '\0';
		fclose(cap);
	}
	CHECK(conf == NULL);
	CHECK(has_error("nul.conf", 3, "NUL byte"));
	CHECK(count_errors() == 1);
	config_free(conf);
	TEST_END();

	TEST_BEGIN("a missing config file");
	snprintf(path, sizeof(path), "%s/does-not-exist.conf", tdir);
	fflush(stderr);
	{
		int	 saved = dup(STDERR_FILENO), fd;

		fd = open("/dev/null", O_WRONLY);
		dup2(fd, STDERR_FILENO);
		close(fd);
		conf = parse_config(path, 0);
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	CHECK(conf == NULL);
	TEST_END();
}

int
main(void)
{
	char	 def[PATH_MAX + 8];

	log_init(1, LOG_DAEMON);
	if (mkdtemp(tdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(def, sizeof(def), "dir=%s", tdir);
	if (cmdline_symset(def) == -1) {
		printf("not ok - cmdline_symset\n");
		return 1;
	}
	make_secrets();

	test_defaults();
	test_full();
	test_roundtrip();
	test_error_lines();
	test_all_errors();
	test_duplicates();
	test_macros();
	test_include();
	test_secrecy();
	test_durations();
	test_sizes();
	test_caps();
	test_binds();
	test_listen();
	test_nomad_address();
	test_repo_values();
	test_lexer();

	/* Leave the directory for a look only when something failed. */
	if (test_failed_cases == 0) {
		char	 cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tdir);
	} else
		printf("# files left in %s\n", tdir);
	TEST_EXIT();
}
