/*
 * Unit tests of the ACL decisions (master/acl.c): namespace globs, binds
 * of users and groups, the built-in management policy, management inside
 * a namespace block, tokens, the anonymous identity and the deny default.
 * The configs go through the real parser, as nopsd reads them.
 */
#include "config.h"

#include <sys/types.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "conf.h"
#include "acl.h"
#include "action.h"
#include "auth.h"
#include "test.h"

/* What nopsd.c gives the rest of the master; unused here. */
struct nopsd	*nopsd_env;

int
nopsd_reload(const char *who)
{
	(void)who;
	return -1;
}

void
nopsd_set_verbose(int v)
{
	(void)v;
}

static char	 tdir[] = "/tmp/test_acl.XXXXXX";

static struct nops_conf *
conf_text(const char *text)
{
	struct nops_conf	*conf;
	char			 path[PATH_MAX];
	FILE			*fp;

	snprintf(path, sizeof(path), "%s/nops.conf", tdir);
	if ((fp = fopen(path, "w")) == NULL) {
		perror(path);
		exit(1);
	}
	fputs(text, fp);
	fclose(fp);
	conf = parse_config(path, CONF_NOSECRECY);
	if (conf == NULL) {
		fprintf(stderr, "config does not parse:\n%s", text);
		exit(1);
	}
	return conf;
}

static struct acl_ident *
ident(enum acl_kind kind, const char *name, const char *policy)
{
	static struct acl_ident	 id;

	memset(&id, 0, sizeof(id));
	id.ai_kind = kind;
	if (name != NULL)
		strlcpy(id.ai_name, name, sizeof(id.ai_name));
	if (policy != NULL)
		strlcpy(id.ai_policy, policy, sizeof(id.ai_policy));
	return &id;
}

#define USER(n)		ident(ACL_USER, (n), NULL)
#define TOKEN(p)	ident(ACL_TOKEN, "t", (p))

static const char base[] =
    "group \"ops\" { \"alice\" \"bob\" }\n"
    "group \"devs\" { \"dave\" \"bob\" }\n"
    "policy \"deployer\" {\n"
    "\tnamespace \"*\" { read approve promote retry deploy-now pause }\n"
    "}\n"
    "policy \"web-approver\" {\n"
    "\tnamespace \"web-*\" { read approve }\n"
    "\tnamespace \"stage?\" { read }\n"
    "\tnamespace \"db-[0-9]\" { read retry }\n"
    "}\n"
    "policy \"viewer\" { namespace \"*\" { read } }\n"
    "policy \"prod-admin\" { namespace \"prod-*\" { management } }\n"
    "policy \"star-admin\" { namespace \"*\" { management } }\n"
    "policy \"fetcher\" { namespace \"infra\" { fetch } }\n"
    "bind group \"ops\" policy \"deployer\"\n"
    "bind group \"devs\" policy \"web-approver\"\n"
    "bind user \"carol\" policy \"management\"\n"
    "bind user \"erin\" policy \"viewer\"\n"
    "bind user \"erin\" policy \"fetcher\"\n"
    "bind user \"pat\" policy \"prod-admin\"\n"
    "bind user \"sam\" policy \"star-admin\"\n"
    "anonymous policy \"viewer\"\n";

static void
test_globs(struct nops_conf *c)
{
	TEST_BEGIN("acl: a namespace glob grants in the namespaces it matches");
	CHECK(acl_allowed(c, USER("dave"), CAP_APPROVE, "web-prod"));
	CHECK(acl_allowed(c, USER("dave"), CAP_READ, "web-"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_APPROVE, "web"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_APPROVE, "default"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_READ, "xweb-prod"));
	TEST_END();

	TEST_BEGIN("acl: ? and [...] globs match one character");
	CHECK(acl_allowed(c, USER("dave"), CAP_READ, "stage1"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_READ, "stage"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_READ, "stage12"));
	CHECK(acl_allowed(c, USER("dave"), CAP_RETRY, "db-7"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_RETRY, "db-x"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_RETRY, "stage1"));
	TEST_END();

	TEST_BEGIN("acl: every capability asked must be granted");
	CHECK(acl_allowed(c, USER("dave"), CAP_READ | CAP_APPROVE, "web-a"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_READ | CAP_PROMOTE,
	    "web-a"));
	TEST_END();

	TEST_BEGIN("acl: NULL namespace means in at least one namespace");
	CHECK(acl_allowed(c, USER("dave"), CAP_RETRY, NULL));
	CHECK(!acl_allowed(c, USER("dave"), CAP_PAUSE, NULL));
	CHECK(acl_allowed(c, USER("erin"), CAP_FETCH, NULL));
	CHECK(!acl_allowed(c, USER("erin"), CAP_FETCH, "default"));
	CHECK(acl_allowed(c, USER("erin"), CAP_FETCH, "infra"));
	TEST_END();
}

static void
test_binds(struct nops_conf *c)
{
	TEST_BEGIN("acl: a user bind grants its policy");
	CHECK(acl_allowed(c, USER("erin"), CAP_READ, "default"));
	CHECK(!acl_allowed(c, USER("erin"), CAP_APPROVE, "default"));
	TEST_END();

	TEST_BEGIN("acl: several binds of a user add up");
	CHECK(acl_caps(c, USER("erin"), "infra") == (CAP_READ | CAP_FETCH));
	CHECK(acl_caps(c, USER("erin"), "default") == CAP_READ);
	TEST_END();

	TEST_BEGIN("acl: a group bind grants to its members only");
	CHECK(acl_allowed(c, USER("alice"), CAP_DEPLOY_NOW, "default"));
	CHECK(!acl_allowed(c, USER("dave"), CAP_DEPLOY_NOW, "web-x"));
	CHECK(acl_caps(c, USER("mallory"), "default") == 0);
	CHECK(acl_caps(c, USER("mallory"), NULL) == 0);
	/* A user name that is a group's name is not its member. */
	CHECK(acl_caps(c, USER("ops"), NULL) == 0);
	TEST_END();

	TEST_BEGIN("acl: a member of two groups gets both");
	CHECK(acl_allowed(c, USER("bob"), CAP_PAUSE, "default"));
	CHECK(acl_allowed(c, USER("bob"), CAP_RETRY, "db-1"));
	CHECK(!acl_allowed(c, USER("bob"), CAP_FETCH, NULL));
	CHECK(!acl_allowed(c, USER("bob"), CAP_MANAGEMENT, NULL));
	TEST_END();
}

static void
group_cat(const char *g, void *arg)
{
	strlcat(arg, g, 128);
	strlcat(arg, ",", 128);
}

static void
test_groups(struct nops_conf *c)
{
	char	 got[128];

	TEST_BEGIN("acl: acl_user_groups lists a user's groups in order");
	got[0] = '\0';
	acl_user_groups(c, "bob", group_cat, got);
	CHECK_STR(got, "ops,devs,");
	got[0] = '\0';
	acl_user_groups(c, "carol", group_cat, got);
	CHECK_STR(got, "");
	TEST_END();
}

static void
test_management(struct nops_conf *c)
{
	TEST_BEGIN("acl: the built-in management policy grants everything");
	CHECK(acl_allowed(c, USER("carol"), CAP_MANAGEMENT, NULL));
	CHECK(acl_allowed(c, USER("carol"), CAP_APPROVE, "any-ns"));
	CHECK(acl_allowed(c, USER("carol"), ACL_CAPS_ALL, "x"));
	/* cap 0 is how a route says "management". */
	CHECK(acl_allowed(c, USER("carol"), 0, NULL));
	CHECK(!acl_allowed(c, USER("alice"), 0, NULL));
	TEST_END();

	TEST_BEGIN("acl: management in a namespace block stays in it");
	CHECK(acl_allowed(c, USER("pat"), ACL_CAPS_ALL, "prod-eu"));
	CHECK(!acl_allowed(c, USER("pat"), CAP_READ, "default"));
	CHECK(!acl_allowed(c, USER("pat"), CAP_MANAGEMENT, NULL));
	CHECK(!acl_allowed(c, USER("pat"), CAP_MANAGEMENT, "prod-eu"));
	CHECK(acl_allowed(c, USER("pat"), CAP_SUSPEND, NULL));
	TEST_END();

	TEST_BEGIN("acl: management for namespace * is global management");
	CHECK(acl_allowed(c, USER("sam"), CAP_MANAGEMENT, NULL));
	CHECK(acl_allowed(c, USER("sam"), CAP_HOSTS, ""));
	TEST_END();

	TEST_BEGIN("acl: the local admin and the bootstrap token manage");
	CHECK(acl_allowed(c, ident(ACL_LOCAL, NULL, NULL), CAP_MANAGEMENT,
	    NULL));
	CHECK(acl_allowed(c, ident(ACL_BOOTSTRAP, NULL, NULL), CAP_APPROVE,
	    "web-1"));
	TEST_END();
}

static void
test_tokens(struct nops_conf *c)
{
	TEST_BEGIN("acl: a token has exactly its policy");
	CHECK(acl_allowed(c, TOKEN("web-approver"), CAP_APPROVE, "web-1"));
	CHECK(!acl_allowed(c, TOKEN("web-approver"), CAP_APPROVE, "default"));
	CHECK(!acl_allowed(c, TOKEN("web-approver"), CAP_MANAGEMENT, NULL));
	CHECK(acl_allowed(c, TOKEN("management"), CAP_MANAGEMENT, NULL));
	TEST_END();

	TEST_BEGIN("acl: a token whose policy is gone grants nothing");
	CHECK(acl_caps(c, TOKEN("removed-policy"), NULL) == 0);
	CHECK(!acl_allowed(c, TOKEN("removed-policy"), CAP_READ, "default"));
	CHECK(!acl_policy_exists(c, "removed-policy"));
	CHECK(acl_policy_exists(c, "viewer"));
	CHECK(acl_policy_exists(c, "management"));
	TEST_END();
}

static void
test_anonymous(struct nops_conf *c, struct nops_conf *closed)
{
	TEST_BEGIN("acl: anonymous gets its policy's read");
	CHECK(acl_allowed(c, ident(ACL_ANONYMOUS, NULL, c->anonymous_policy),
	    CAP_READ, "default"));
	CHECK(!acl_allowed(c, ident(ACL_ANONYMOUS, NULL,
	    c->anonymous_policy), CAP_APPROVE, "default"));
	TEST_END();

	TEST_BEGIN("acl: anonymous never gets more than read");
	/* Even if its policy somehow granted more. */
	CHECK(acl_caps(c, ident(ACL_ANONYMOUS, NULL, "deployer"),
	    "default") == CAP_READ);
	CHECK(acl_caps(c, ident(ACL_ANONYMOUS, NULL, "management"), NULL) ==
	    CAP_READ);
	CHECK(!acl_allowed(c, ident(ACL_ANONYMOUS, NULL, "management"),
	    CAP_MANAGEMENT, NULL));
	TEST_END();

	TEST_BEGIN("acl: no identity has no capability");
	CHECK(acl_caps(c, ident(ACL_NONE, NULL, NULL), NULL) == 0);
	CHECK(!acl_allowed(c, ident(ACL_NONE, NULL, NULL), CAP_READ,
	    "default"));
	CHECK(closed->anonymous_policy == NULL);
	TEST_END();
}

static void
test_actions(void)
{
	TEST_BEGIN("acl: each action needs its capability");
	CHECK(action_find(ACTION_ON_DEPLOYMENT, "approve")->ad_cap ==
	    CAP_APPROVE);
	CHECK(action_find(ACTION_ON_DEPLOYMENT, "reject")->ad_cap ==
	    CAP_APPROVE);
	CHECK(action_find(ACTION_ON_DEPLOYMENT, "retry")->ad_cap == CAP_RETRY);
	CHECK(action_find(ACTION_ON_DEPLOYMENT, "promote")->ad_cap ==
	    CAP_PROMOTE);
	CHECK(action_find(ACTION_ON_JOB, "deploy-now")->ad_cap ==
	    CAP_DEPLOY_NOW);
	CHECK(action_find(ACTION_ON_JOB, "pause")->ad_cap == CAP_PAUSE);
	CHECK(action_find(ACTION_ON_JOB, "resume")->ad_cap == CAP_PAUSE);
	CHECK(action_find(ACTION_ON_JOB, "suspend")->ad_cap == CAP_SUSPEND);
	CHECK(action_find(ACTION_ON_JOB, "unsuspend")->ad_cap == CAP_SUSPEND);
	/* An operation declared in git. */
	CHECK(action_find(ACTION_ON_JOB, "db.migrate")->ad_cap ==
	    CAP_OPERATE);
	/* No row: no action, whatever its name. */
	CHECK(action_find(ACTION_ON_JOB, "approve") == NULL);
	CHECK(action_find(ACTION_ON_DEPLOYMENT, "nosuch") == NULL);
	CHECK(action_find(ACTION_ON_DEPLOYMENT, "db.migrate") == NULL);
	/* Every row and every route names what it needs. */
	CHECK(action_table_check() == 0);
	CHECK(api_auth_tables_check() == 0);
	CHECK_STR(acl_kind_str(ACL_TOKEN), "token");
	CHECK_STR(acl_kind_str(ACL_NONE), "none");
	TEST_END();
}

static void
test_reload(void)
{
	struct nops_conf	*a, *b;

	TEST_BEGIN("acl: decisions follow the config they are given");
	a = conf_text("group \"ops\" { \"alice\" }\n"
	    "policy \"p\" { namespace \"*\" { read approve } }\n"
	    "bind group \"ops\" policy \"p\"\n");
	b = conf_text("group \"ops\" { \"bob\" }\n"
	    "policy \"p\" { namespace \"*\" { read approve } }\n"
	    "bind group \"ops\" policy \"p\"\n");
	CHECK(acl_allowed(a, USER("alice"), CAP_APPROVE, "default"));
	CHECK(!acl_allowed(b, USER("alice"), CAP_APPROVE, "default"));
	CHECK(acl_allowed(b, USER("bob"), CAP_APPROVE, "default"));
	config_free(a);
	config_free(b);
	TEST_END();
}

int
main(void)
{
	struct nops_conf	*c, *closed;
	char			 path[PATH_MAX];

	log_init(1, LOG_DAEMON);
	if (mkdtemp(tdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	c = conf_text(base);
	closed = conf_text("policy \"viewer\" { namespace \"*\" { read } }\n");
	test_globs(c);
	test_binds(c);
	test_groups(c);
	test_management(c);
	test_tokens(c);
	test_anonymous(c, closed);
	test_actions();
	test_reload();
	config_free(c);
	config_free(closed);
	snprintf(path, sizeof(path), "%s/nops.conf", tdir);
	unlink(path);
	rmdir(tdir);
	TEST_EXIT();
}
