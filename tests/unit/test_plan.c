/*
 * shared/plan.c: checking an evaluated plan (every error at once, each
 * naming its host or phase), defaults, and phase assignment.
 */
#include "config.h"

#include <stdio.h>
#include <syslog.h>
#include <string.h>

#include "log.h"
#include "plan.h"
#include "schema.h"
#include "test.h"

#define SYS_A	"/nix/store/6xc5ywvjx9a6q6plflkvmmp0zb7i2q4s-nixos-system-a"
#define SYS_B	"/nix/store/lng6nqjklq6x7qx0pdfd7xdddzgdkz79-nixos-system-b"
#define KEY	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk0ZWd5c2VjcmV0a2V5"

static struct plan *
parse(const char *s)
{
	return plan_parse(s, strlen(s));
}

static int
has_error(const struct plan *pl, const char *needle)
{
	size_t	 i;

	for (i = 0; i < pl->pl_nerrors; i++)
		if (strstr(pl->pl_errors[i], needle) != NULL)
			return 1;
	return 0;
}

static void
print_errors(const struct plan *pl)
{
	size_t	 i;

	for (i = 0; i < pl->pl_nerrors; i++)
		printf("# error: %s\n", pl->pl_errors[i]);
}

static void
test_good(void)
{
	struct plan		*pl;
	const struct plan_host	*h;

	TEST_BEGIN("a good plan: defaults, tags, phases by tag and default");
	pl = parse("{\"meta\": {\"sources\": {\"default\": \"nixos-small\","
	    " \"b\": \"nixos\"}, \"args\": {}},"
	    " \"defaults\": {\"user\": \"deploy\", \"port\": 2222,"
	    "  \"tags\": [\"lab\"], \"attrs\": {\"rack\": 1},"
	    "  \"checks\": [{\"name\": \"up\", \"command\": \"true\"}]},"
	    " \"hosts\": {"
	    "  \"b\": {\"address\": \"10.0.0.2\", \"system\": \"" SYS_B "\","
	    "   \"hostKey\": \"" KEY "\", \"tags\": [\"spire\"]},"
	    "  \"a\": {\"address\": \"10.0.0.1\", \"port\": 22, \"system\": \""
	    SYS_A "\", \"attrs\": {\"role\": \"db\"}}},"
	    " \"phases\": [{\"name\": \"spire\", \"include\": {\"tags\":"
	    "  [\"spire\"]}}, {\"name\": \"main\"}],"
	    " \"tests\": [{\"name\": \"vm\", \"build\": \"" SYS_A "\"}],"
	    " \"infra\": {\"vhosts\": {\"www\": true}}}");
	print_errors(pl);
	CHECK(pl->pl_nerrors_all == 0);
	CHECK(pl->pl_nhosts == 2);
	CHECK(pl->pl_nphases == 2);
	CHECK_STR(pl->pl_hosts[0].ph_name, "a");	/* sorted */
	h = plan_host_find(pl, "a");
	CHECK(h != NULL && h->ph_port == 22 && strcmp(h->ph_user,
	    "deploy") == 0);
	CHECK(h != NULL && h->ph_phase == 1);
	CHECK(h != NULL && h->ph_source != NULL &&
	    strcmp(h->ph_source, "nixos-small") == 0);
	CHECK(h != NULL && h->ph_nchecks == 1 && h->ph_hostkey == NULL);
	CHECK(h != NULL && json_integer_value(json_object_get(h->ph_attrs,
	    "rack")) == 1 && json_object_get(h->ph_attrs, "role") != NULL);
	h = plan_host_find(pl, "b");
	CHECK(h != NULL && h->ph_port == 2222 && h->ph_phase == 0);
	CHECK(h != NULL && h->ph_ntags == 2);	/* lab + spire */
	CHECK(h != NULL && strcmp(h->ph_source, "nixos") == 0);
	CHECK(pl->pl_phases[0].pp_nhosts == 1 &&
	    pl->pl_phases[1].pp_nhosts == 1);
	CHECK(pl->pl_infra != NULL && pl->pl_ntests == 1);
	CHECK(plan_host_find(pl, "c") == NULL);
	plan_free(pl);
	TEST_END();
}

static void
test_every_error(void)
{
	struct plan	*pl;

	TEST_BEGIN("every error at once, naming its host or phase");
	pl = parse("{\"hosts\": {"
	    "  \"a\": {\"port\": 70000, \"system\": \"/tmp/x\"},"
	    "  \"b\": {\"system\": \"" SYS_B "\", \"hostKey\": \"rsa xyz\","
	    "   \"colour\": \"red\"},"
	    "  \"c\": {\"address\": \"-oProxyCommand=x\"},"
	    "  \"d\": {\"system\": \"" SYS_A "\", \"checks\": [{\"name\":"
	    "   \"x\"}]}},"
	    " \"phases\": [{\"name\": \"p\", \"include\": {\"tagz\": [1]}},"
	    "  {\"name\": \"p\"}], \"bogus\": 1}");
	print_errors(pl);
	CHECK(has_error(pl, "host \"a\": port"));
	CHECK(has_error(pl, "host \"a\": system: not a store path"));
	CHECK(has_error(pl, "host \"b\": hostKey"));
	CHECK(has_error(pl, "host \"b\": unknown attribute \"colour\""));
	CHECK(has_error(pl, "host \"c\": address"));
	CHECK(has_error(pl, "host \"c\": system: missing"));
	CHECK(has_error(pl, "host \"d\": check 1: needs one of command"));
	CHECK(has_error(pl, "phase \"p\": include: unknown attribute"));
	CHECK(has_error(pl, "phase \"p\": named twice"));
	CHECK(has_error(pl, "plan: unknown attribute \"bogus\""));
	CHECK(pl->pl_nerrors_all == pl->pl_nerrors && pl->pl_nerrors >= 10);
	/* A plan with errors assigns no phase. */
	CHECK(pl->pl_phases[0].pp_nhosts == 0 && pl->pl_hosts[0].ph_phase == -1);
	plan_free(pl);
	TEST_END();
}

static void
test_operations(void)
{
	struct plan	*pl;

	TEST_BEGIN("operations: schema and sensitive checked at parse, naming "
	    "host and operation");
	plan_set_schema_check(schema_usable);
	pl = parse("{\"defaults\": {\"operations\": {\"ok\": {\"command\":"
	    "  \"cat\", \"schema\": {\"type\": \"object\"},"
	    "  \"sensitive\": true, \"description\": \"Reads\"}}},"
	    " \"hosts\": {"
	    "  \"a\": {\"system\": \"" SYS_A "\", \"operations\": {"
	    "   \"s1\": {\"command\": \"x\", \"schema\": \"any\"},"
	    "   \"s2\": {\"command\": \"x\", \"schema\": {\"$ref\":"
	    "    \"#/definitions/nope\"}},"
	    "   \"s3\": {\"command\": \"x\", \"schema\": {\"pattern\":"
	    "    \"(\"}},"
	    "   \"s4\": {\"command\": \"x\", \"sensitive\": \"yes\"},"
	    "   \"s5\": {\"command\": \"x\", \"colour\": 1},"
	    "   \"s6\": 7}},"
	    "  \"b\": {\"system\": \"" SYS_A "\"}},"
	    " \"phases\": [{\"name\": \"main\"}]}");
	print_errors(pl);
	CHECK(has_error(pl, "host \"a\": operation s1: schema: not a JSON "
	    "Schema"));
	CHECK(has_error(pl, "host \"a\": operation s2: schema:"));
	CHECK(has_error(pl, "host \"a\": operation s3: schema:"));
	CHECK(has_error(pl, "host \"a\": operation s4: sensitive: not true "
	    "or false"));
	CHECK(has_error(pl, "host \"a\": operation s5: unknown attribute "
	    "\"colour\""));
	CHECK(has_error(pl, "host \"a\": operation s6: not an object"));
	CHECK(pl->pl_nerrors_all == 6);	/* b's and a's "ok" are fine */
	plan_free(pl);
	TEST_END();
}

static void
test_assignment(void)
{
	struct plan	*pl;

	TEST_BEGIN("first matching rule, else first without a rule, else "
	    "dropped with a warning");
	pl = parse("{\"hosts\": {"
	    "  \"a\": {\"system\": \"" SYS_A "\", \"tags\": [\"x\", \"y\"]},"
	    "  \"b\": {\"system\": \"" SYS_A "\", \"attrs\": {\"r\": \"db\"}},"
	    "  \"c\": {\"system\": \"" SYS_A "\"}},"
	    " \"phases\": [{\"name\": \"one\", \"include\": {\"tags\": "
	    "  [\"y\"]}}, {\"name\": \"two\", \"include\": {\"tags\": [\"x\"]}},"
	    "  {\"name\": \"three\", \"include\": {\"attrs\": {\"r\": \"db\"},"
	    "   \"names\": [\"b\"]}}]}");
	print_errors(pl);
	CHECK(pl->pl_nerrors_all == 0);
	CHECK(plan_host_find(pl, "a")->ph_phase == 0);	/* the first */
	CHECK(plan_host_find(pl, "b")->ph_phase == 2);
	CHECK(plan_host_find(pl, "c")->ph_phase == -1);
	CHECK(pl->pl_nwarnings == 1 && strstr(pl->pl_warnings[0],
	    "host \"c\": in no phase") != NULL);
	plan_free(pl);

	pl = parse("{\"hosts\": {"
	    "  \"a\": {\"system\": \"" SYS_A "\"}, \"b\": {\"system\": \""
	    SYS_A "\"}},"
	    " \"phases\": [{\"name\": \"canary\", \"include\": {\"names\": "
	    "  [\"b\"]}}, {\"name\": \"main\"}, {\"name\": \"late\"}]}");
	CHECK(pl->pl_nerrors_all == 0);
	CHECK(plan_host_find(pl, "a")->ph_phase == 1);	/* first default */
	CHECK(plan_host_find(pl, "b")->ph_phase == 0);
	CHECK(pl->pl_phases[2].pp_nhosts == 0 && pl->pl_nwarnings == 0);
	plan_free(pl);
	TEST_END();
}

static void
test_bad_json(void)
{
	struct plan	*pl;
	json_t		*j;

	TEST_BEGIN("not JSON, not an object, empty hosts, no phases");
	pl = parse("{\"hosts\": ");
	CHECK(pl->pl_nerrors == 1 && has_error(pl, "not JSON"));
	plan_free(pl);
	pl = parse("[1]");
	CHECK(has_error(pl, "not an object"));
	plan_free(pl);
	pl = parse("{\"hosts\": {}, \"phases\": []}");
	CHECK(has_error(pl, "hosts: not an object"));
	CHECK(has_error(pl, "phases: not a list"));
	j = plan_json(pl);
	CHECK(j != NULL && json_is_false(json_object_get(j, "valid")) &&
	    json_array_size(json_object_get(j, "errors")) == 2);
	json_decref(j);
	plan_free(pl);
	pl = parse("{\"hosts\": {\"a\": {\"system\": \"" SYS_A "\"}}, "
	    "\"hosts\": {}}");
	CHECK(has_error(pl, "not JSON"));	/* duplicate key */
	plan_free(pl);
	TEST_END();
}

static void
test_spec(void)
{
	struct plan	*p1, *p2;
	json_t		*s1, *s2;

	TEST_BEGIN("the spec covers systems and the phase layout");
	p1 = parse("{\"hosts\": {\"a\": {\"system\": \"" SYS_A "\"},"
	    " \"b\": {\"system\": \"" SYS_A "\"}},"
	    " \"phases\": [{\"name\": \"main\"}]}");
	p2 = parse("{\"hosts\": {\"a\": {\"system\": \"" SYS_A "\"},"
	    " \"b\": {\"system\": \"" SYS_A "\"}},"
	    " \"phases\": [{\"name\": \"first\", \"include\": {\"names\":"
	    " [\"b\"]}}, {\"name\": \"main\"}]}");
	s1 = plan_spec_json(p1);
	s2 = plan_spec_json(p2);
	CHECK(!json_equal(s1, s2));
	json_decref(s2);
	plan_free(p2);
	p2 = parse("{\"hosts\": {\"a\": {\"system\": \"" SYS_B "\"},"
	    " \"b\": {\"system\": \"" SYS_A "\"}},"
	    " \"phases\": [{\"name\": \"main\"}]}");
	s2 = plan_spec_json(p2);
	CHECK(!json_equal(s1, s2));
	json_decref(s2);
	plan_free(p2);
	p2 = parse("{\"hosts\": {\"b\": {\"system\": \"" SYS_A "\"},"
	    " \"a\": {\"system\": \"" SYS_A "\"}},"
	    " \"phases\": [{\"name\": \"main\"}], \"infra\": {\"x\": 1}}");
	s2 = plan_spec_json(p2);
	CHECK(json_equal(s1, s2));	/* order of keys, infra: not */
	json_decref(s1);
	json_decref(s2);
	plan_free(p1);
	plan_free(p2);

	CHECK(plan_store_path_ok(SYS_A));
	CHECK(!plan_store_path_ok("/nix/store/6xc5ywvjx9a6q6plflkvmmp0zb7i2q4s-a b"));
	CHECK(!plan_store_path_ok("/nix/store/6xc5ywvjx9a6q6plflkvmmp0zb7i2q4s-a'"));
	CHECK(!plan_store_path_ok("/nix/store/../etc/passwd"));
	CHECK(plan_goal_parse("boot") == PLAN_GOAL_BOOT);
	CHECK(plan_goal_parse("reboot") == -1);
	TEST_END();
}

int
main(void)
{
	log_init(1, LOG_DAEMON);
	test_good();
	test_every_error();
	test_operations();
	test_assignment();
	test_bad_json();
	test_spec();
	return test_failed_cases != 0;
}
