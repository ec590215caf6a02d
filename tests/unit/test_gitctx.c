/*
 * master/gitctx.c: the commit link of a remote, the redaction of a job
 * file's text, and the unified diff of two versions of it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "gitctx.h"
#include "conf.h"

static void
t_default_template(void)
{
	static const struct {
		const char	*url;
		const char	*want;
	} cases[] = {
		{ "https://github.com/ops/infra.git",
		    "https://github.com/ops/infra/commit/{commit}" },
		{ "https://bob:tok3n@github.com/ops/infra",
		    "https://github.com/ops/infra/commit/{commit}" },
		{ "git@github.com:ops/infra.git",
		    "https://github.com/ops/infra/commit/{commit}" },
		{ "ssh://git@gitlab.com:2222/group/sub/infra.git",
		    "https://gitlab.com/group/sub/infra/-/commit/{commit}" },
		{ "https://gitlab.example.org/g/infra.git/",
		    "https://gitlab.example.org/g/infra/-/commit/{commit}" },
		{ "https://codeberg.org/o/r.git",
		    "https://codeberg.org/o/r/commit/{commit}" },
		{ "https://gitea.corp.example/o/r",
		    "https://gitea.corp.example/o/r/commit/{commit}" },
		{ "https://git.example/o/r.git", NULL },
		{ "file:///srv/git/infra.git", NULL },
		{ "git://127.0.0.1:9418/infra.git", NULL },
		{ "https://github.com/", NULL },
	};
	size_t	 i;
	char	*t;

	TEST_BEGIN("commit-url defaults: GitHub, GitLab, Gitea, never a "
	    "password");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = gitctx_default_template(cases[i].url);
		if (cases[i].want == NULL) {
			if (t != NULL)
				printf("# %s gave %s\n", cases[i].url, t);
			CHECK(t == NULL);
		} else
			CHECK_STR(t, cases[i].want);
		free(t);
	}
	TEST_END();
}

static void
t_template(void)
{
	char	*u;

	TEST_BEGIN("commit-url: checked, and {commit} filled in");
	CHECK(config_check_commit_url("https://x.example/c/{commit}") ==
	    NULL);
	CHECK(config_check_commit_url("") == NULL);
	CHECK(config_check_commit_url("javascript:alert(1)//{commit}") !=
	    NULL);
	CHECK(config_check_commit_url("https://x.example/c/") != NULL);
	CHECK(config_check_commit_url("https://x.example/\"><b>{commit}") !=
	    NULL);
	u = gitctx_commit_url("https://x.example/{commit}?c={commit}",
	    "0123abcd");
	CHECK_STR(u, "https://x.example/0123abcd?c=0123abcd");
	free(u);
	CHECK(gitctx_commit_url("https://x.example/{commit}", "12<b>") ==
	    NULL);
	CHECK(gitctx_commit_url(NULL, "0123") == NULL);
	TEST_END();
}

static void
t_redact(void)
{
	char	*r;

	TEST_BEGIN("job file text: env values and template bodies redacted");
	r = gitctx_redact_source(
	    "job \"web\" {\n"
	    "  env {\n"
	    "    PLAIN = \"hello\"\n"
	    "    \"QUOTED\" = \"world\"\n"
	    "  }\n"
	    "  env { ONE = \"inline\" }\n"
	    "  template {\n"
	    "    data = <<-EOT\n"
	    "      pw={{ key \"x\" }}-tmplsecret\n"
	    "    EOT\n"
	    "    destination = \"local/a\"\n"
	    "  }\n"
	    "  template {\n"
	    "    data = \"oneline-secret\"\n"
	    "  }\n"
	    "  meta {\n"
	    "    api_token = \"abc\"\n"
	    "  }\n"
	    "  image = \"nginx\x1b[2J:1\"\n"
	    "}\n");
	CHECK(r != NULL);
	if (r != NULL) {
		CHECK(strstr(r, "hello") == NULL);
		CHECK(strstr(r, "world") == NULL);
		CHECK(strstr(r, "inline") == NULL);
		CHECK(strstr(r, "tmplsecret") == NULL);
		CHECK(strstr(r, "oneline-secret") == NULL);
		CHECK(strstr(r, "\"abc\"") == NULL);
		CHECK(strstr(r, "\x1b") == NULL);
		CHECK(strstr(r, "    PLAIN = \"<redacted>\"\n") != NULL);
		CHECK(strstr(r, "    EOT\n    destination = \"local/a\"\n") !=
		    NULL);
		CHECK(strstr(r, "job \"web\" {\n  env {\n") == r);
		CHECK(strstr(r, "nginx") != NULL);
	}
	free(r);
	TEST_END();
}

static void
t_diff(void)
{
	char	*d, big_a[20000], big_b[20000];
	size_t	 i, n;

	TEST_BEGIN("diff: unified, with context, hunks split and numbered");
	CHECK(gitctx_diff("f", "a\nb\n", "a\nb\n") == NULL);
	d = gitctx_diff("f", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
	    "1\n2\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\n");
	CHECK_STR(d, "--- a/f\n+++ b/f\n"
	    "@@ -1,5 +1,6 @@\n 1\n 2\n+TWO\n 3\n 4\n 5\n"
	    "@@ -9,4 +10,3 @@\n 9\n 10\n 11\n-12\n");
	free(d);
	d = gitctx_diff("f", "", "new\n");
	CHECK_STR(d, "--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+new\n");
	free(d);
	d = gitctx_diff("f", "x\ny\n", "x\nz\n");
	CHECK_STR(d, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n");
	free(d);
	/* Too many lines to compare in the table: replaced whole. */
	for (i = n = 0; i < 1500; i++)
		n += snprintf(big_a + n, sizeof(big_a) - n, "a%zu\n", i);
	for (i = n = 0; i < 1500; i++)
		n += snprintf(big_b + n, sizeof(big_b) - n, "b%zu\n", i);
	d = gitctx_diff("f", big_a, big_b);
	CHECK(d != NULL && strstr(d, "@@ -1,1500 +1,1500 @@\n-a0\n") != NULL);
	free(d);
	TEST_END();
}

int
main(void)
{
	t_default_template();
	t_template();
	t_redact();
	t_diff();
	TEST_EXIT();
}
