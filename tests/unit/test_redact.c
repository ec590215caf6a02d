/* Secrets never survive into a stored or shown plan diff. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "test.h"
#include "redact.h"

/* A plan Diff with secrets in every place the rules cover. */
static const char *diff_json =
"{\"Type\":\"Edited\",\"ID\":\"web\",\"Fields\":["
"  {\"Type\":\"Edited\",\"Name\":\"Meta[api_key]\",\"Old\":\"k-old-1\",\"New\":\"k-new-1\"},"
"  {\"Type\":\"Edited\",\"Name\":\"Meta[git_sha]\",\"Old\":\"abc123\",\"New\":\"def456\"}],"
"\"Objects\":null,"
"\"TaskGroups\":[{\"Type\":\"Edited\",\"Name\":\"web\",\"Fields\":null,\"Objects\":null,"
" \"Tasks\":[{\"Type\":\"Edited\",\"Name\":\"app\",\"Fields\":["
"   {\"Type\":\"Edited\",\"Name\":\"Env[DB_URL]\",\"Old\":\"plain-old\",\"New\":\"plain-new\"},"
"   {\"Type\":\"Added\",\"Name\":\"Env[PORT]\",\"Old\":\"\",\"New\":\"8080\"}],"
"  \"Objects\":[{\"Type\":\"Edited\",\"Name\":\"Config\",\"Fields\":["
"     {\"Type\":\"Edited\",\"Name\":\"image\",\"Old\":\"nginx:1.25\",\"New\":\"nginx:1.26\"},"
"     {\"Type\":\"Added\",\"Name\":\"args[0]\",\"Old\":\"\",\"New\":\"--db-password=hunter2\"},"
"     {\"Type\":\"Added\",\"Name\":\"args[1]\",\"Old\":\"\",\"New\":\"--token\"},"
"     {\"Type\":\"Added\",\"Name\":\"args[2]\",\"Old\":\"\",\"New\":\"s3cr3tvalue\"},"
"     {\"Type\":\"Added\",\"Name\":\"args[3]\",\"Old\":\"\",\"New\":\"--verbose\"},"
"     {\"Type\":\"Added\",\"Name\":\"args[4]\",\"Old\":\"\",\"New\":\"ghp_4f9a8B7c6D5e4F3a2B1c0D9e8F7a6B5c4D3e\"},"
"     {\"Type\":\"Edited\",\"Name\":\"auth[password]\",\"Old\":\"pw1\",\"New\":\"pw2\"},"
"     {\"Type\":\"Edited\",\"Name\":\"repo\",\"Old\":\"https://bob:pa55@git.example/x.git\",\"New\":\"https://git.example/x.git\"}],"
"    \"Objects\":null},"
"   {\"Type\":\"Edited\",\"Name\":\"Template\",\"Fields\":["
"     {\"Type\":\"Edited\",\"Name\":\"EmbeddedTmpl\",\"Old\":\"pw={{ key }}\",\"New\":\"pw=literal\"},"
"     {\"Type\":\"None\",\"Name\":\"DestPath\",\"Old\":\"local/app.env\",\"New\":\"local/app.env\"}],"
"    \"Objects\":null}],"
"  \"Annotations\":[\"forces create/destroy update\"]}],"
" \"Updates\":{\"create/destroy update\":2}}]}";

static const char *secrets[] = { "k-old-1", "k-new-1", "plain-old",
    "plain-new", "hunter2", "s3cr3tvalue", "ghp_4f9a8B7c6D5e4F3a2B1c0D9e8F7a6B5c4D3e",
    "pw1", "pw2", "pa55", "literal", "{{ key }}" };
static const char *kept[] = { "abc123", "def456", "nginx:1.26",
    "--db-password=", "--token", "--verbose", "local/app.env",
    "https://<redacted>@git.example/x.git", "forces create/destroy update" };

int
main(void)
{
	json_t	*d;
	char	*out, *u;
	size_t	 i;
	int	 n;

	TEST_BEGIN("redact: no secret survives in a diff");
	d = json_loads(diff_json, 0, NULL);
	CHECK(d != NULL);
	n = redact_diff(d);
	out = json_dumps(d, JSON_COMPACT);
	for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		if (strstr(out, secrets[i]) != NULL) {
			printf("# secret %s survived\n", secrets[i]);
			CHECK(0);
		}
	CHECK(n >= 12);
	TEST_END();

	TEST_BEGIN("redact: what is not secret stays readable");
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (strstr(out, kept[i]) == NULL) {
			printf("# %s was lost\n", kept[i]);
			CHECK(0);
		}
	/* an Added field keeps its empty Old: absence is not a secret */
	CHECK(strstr(out, "\"Name\":\"Env[PORT]\",\"Old\":\"\"") != NULL);
	free(out);
	json_decref(d);
	TEST_END();

	TEST_BEGIN("redact: secret names");
	CHECK(redact_name_is_secret("Meta[DB_PASSWORD]"));
	CHECK(redact_name_is_secret("auth[username]"));
	CHECK(redact_name_is_secret("Config.ssh_private_key"));
	CHECK(redact_name_is_secret("ApiToken"));
	CHECK(!redact_name_is_secret("image"));
	CHECK(!redact_name_is_secret("Count"));
	CHECK(!redact_name_is_secret("Meta[owner]"));
	CHECK(!redact_name_is_secret("SecretsMB"));
	CHECK(redact_name_is_secret("Meta[SecretsMB]"));
	TEST_END();

	TEST_BEGIN("redact: values that look like secrets");
	CHECK(redact_value_looks_secret("AKIAIOSFODNN7EXAMPLE1234"));
	CHECK(redact_value_looks_secret("eyJhbGciOiJIUzI1NiJ9.e30.abc"));
	CHECK(redact_value_looks_secret("-----BEGIN PRIVATE KEY-----\nx"));
	CHECK(!redact_value_looks_secret("nginx:1.26"));
	CHECK(!redact_value_looks_secret("registry.example/team/app:2024"));
	CHECK(!redact_value_looks_secret("short1"));
	CHECK(!redact_value_looks_secret("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	TEST_END();

	TEST_BEGIN("redact: credentials in URLs");
	u = redact_url_credentials("clone https://u:p@h/x and git://h/y "
	    "and ssh://git@host:22/z");
	CHECK_STR(u, "clone https://<redacted>@h/x and git://h/y and "
	    "ssh://<redacted>@host:22/z");
	free(u);
	u = redact_url_credentials("no url here");
	CHECK_STR(u, "no url here");
	free(u);
	TEST_END();

	TEST_BEGIN("redact: a null or odd diff is left alone");
	CHECK(redact_diff(NULL) == 0);
	d = json_loads("{\"Type\":\"None\",\"TaskGroups\":[{\"Tasks\":"
	    "[{\"Fields\":[{\"Name\":1}]}]}]}", 0, NULL);
	CHECK(redact_diff(d) == 0);
	json_decref(d);
	TEST_END();

	TEST_EXIT();
}
