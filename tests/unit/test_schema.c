/*
 * master/schema.c against the official JSON Schema Test Suite (Debian's
 * json-schema-test-suite, its draft7 files; SCHEMA_SUITE names another
 * directory), one case per test of the suite.  A test whose schema uses
 * what nopsd does not support on purpose (a remote $ref) is reported as
 * skipped with that reason; any other unusable schema is a failure.  The
 * optional/ directory (format assertions, bignums, ECMA 262 regexes) is
 * not run: draft 7 makes those optional and nopsd does not claim them.
 * Then nopsd's own cases: the error names the path of the bad value.
 */
#include "config.h"

#include <sys/types.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "test.h"
#include "schema.h"

#define SUITE_DEFAULT	"/usr/share/json-schema-test-suite/tests/draft7"

static int	 npass, nfail, nskip;

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
run_file(const char *dir, const char *file)
{
	char		 path[1024], name[1024], err[512];
	json_t		*groups, *g, *t;
	json_error_t	 je;
	size_t		 i, j;
	int		 rc, want;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((groups = json_load_file(path, 0, &je)) == NULL) {
		printf("not ok - %s # does not load: %s\n", file, je.text);
		nfail++;
		return;
	}
	json_array_foreach(groups, i, g) {
		json_array_foreach(json_object_get(g, "tests"), j, t) {
			snprintf(name, sizeof(name), "draft7/%s: %s: %s", file,
			    json_string_value(json_object_get(g,
			    "description")), json_string_value(
			    json_object_get(t, "description")));
			want = json_is_true(json_object_get(t, "valid"));
			rc = schema_validate(json_object_get(g, "schema"),
			    json_object_get(t, "data"), err, sizeof(err));
			if (rc == SCHEMA_UNUSABLE && strstr(err, "remote "
			    "references are not supported") != NULL) {
				printf("ok - %s # SKIP %s\n", name, err);
				nskip++;
			} else if (rc == SCHEMA_UNUSABLE) {
				printf("not ok - %s # schema unusable: %s\n",
				    name, err);
				nfail++;
			} else if ((rc == SCHEMA_VALID) == want) {
				printf("ok - %s\n", name);
				npass++;
			} else {
				printf("not ok - %s # expected %s, got %s%s%s\n",
				    name, want ? "valid" : "invalid",
				    rc == SCHEMA_VALID ? "valid" : "invalid",
				    rc == SCHEMA_VALID ? "" : ": ",
				    rc == SCHEMA_VALID ? "" : err);
				nfail++;
			}
		}
	}
	json_decref(groups);
}

static void
run_suite(void)
{
	const char	*dir = getenv("SCHEMA_SUITE");
	DIR		*d;
	struct dirent	*de;
	char		**names = NULL;
	size_t		 n = 0, i, len;

	if (dir == NULL)
		dir = SUITE_DEFAULT;
	if ((d = opendir(dir)) == NULL) {
		printf("ok - JSON Schema Test Suite # SKIP %s is missing "
		    "(scripts/deps installs json-schema-test-suite)\n", dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		names = reallocarray(names, n + 1, sizeof(*names));
		if (names == NULL || (names[n++] = strdup(de->d_name)) == NULL)
			abort();
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		run_file(dir, names[i]);
		free(names[i]);
	}
	free(names);
	printf("# JSON Schema Test Suite draft7: %d passed, %d failed, %d "
	    "skipped\n", npass, nfail, nskip);
	if (nfail > 0)
		test_failed_cases++;
}

static int
check(const char *schema, const char *instance, char *err, size_t errlen)
{
	json_t	*s, *i;
	int	 rc;

	s = json_loads(schema, 0, NULL);
	i = json_loads(instance, JSON_DECODE_ANY, NULL);
	if (s == NULL || i == NULL)
		abort();
	rc = schema_validate(s, i, err, errlen);
	json_decref(s);
	json_decref(i);
	return rc;
}

static void
own_cases(void)
{
	char	 err[512];
	json_t	*s;

	TEST_BEGIN("schema: the error names the JSON Pointer of the value");
	CHECK(check("{\"type\":\"object\",\"properties\":{\"targets\":"
	    "{\"type\":\"array\",\"items\":{\"type\":\"object\","
	    "\"properties\":{\"port\":{\"type\":\"integer\","
	    "\"maximum\":65535}}}}}}",
	    "{\"targets\":[{\"port\":80},{\"port\":70000}]}", err,
	    sizeof(err)) == SCHEMA_INVALID);
	CHECK_STR(err, "/targets/1/port: is more than the maximum 65535");
	TEST_END();

	TEST_BEGIN("schema: item and property counts name what they count");
	CHECK(check("{\"type\":\"array\",\"maxItems\":2}", "[1,2,3]",
	    err, sizeof(err)) == SCHEMA_INVALID);
	CHECK_STR(err, "/: has more than 2 items");
	CHECK(check("{\"type\":\"object\",\"minProperties\":2}",
	    "{\"a\":1}", err, sizeof(err)) == SCHEMA_INVALID);
	CHECK_STR(err, "/: has fewer than 2 properties");
	CHECK(check("{\"minItems\":1,\"maxProperties\":1}", "[1]", err,
	    sizeof(err)) == SCHEMA_VALID);
	TEST_END();

	TEST_BEGIN("schema: a missing required property names its object");
	CHECK(check("{\"properties\":{\"a\":{\"required\":[\"b\"]}}}",
	    "{\"a\":{}}", err, sizeof(err)) == SCHEMA_INVALID);
	CHECK_STR(err, "/a: lacks the required property \"b\"");
	TEST_END();

	TEST_BEGIN("schema: a property the schema forbids is named");
	CHECK(check("{\"additionalProperties\":false,\"properties\":"
	    "{\"a\":{}}}", "{\"a\":1,\"x~/y\":2}", err, sizeof(err)) ==
	    SCHEMA_INVALID);
	CHECK_STR(err, "/: has the property \"x~/y\", which the schema does "
	    "not allow");
	TEST_END();

	TEST_BEGIN("schema: a wrong type says what it is and what it needs");
	CHECK(check("{\"properties\":{\"n\":{\"type\":[\"integer\","
	    "\"null\"]}}}", "{\"n\":\"x\"}", err, sizeof(err)) ==
	    SCHEMA_INVALID);
	CHECK_STR(err, "/n: is a string, not integer or null");
	TEST_END();

	TEST_BEGIN("schema: a remote $ref makes the schema unusable");
	s = json_loads("{\"$ref\":\"http://example.com/s.json\"}", 0, NULL);
	CHECK(schema_usable(s, err, sizeof(err)) == -1);
	CHECK(strstr(err, "remote references are not supported") != NULL);
	json_decref(s);
	TEST_END();

	TEST_BEGIN("schema: a pattern that does not compile is refused early");
	s = json_loads("{\"properties\":{\"a\":{\"pattern\":\"(\"}}}", 0,
	    NULL);
	CHECK(schema_usable(s, err, sizeof(err)) == -1);
	CHECK(strstr(err, "pattern (") != NULL);
	json_decref(s);
	TEST_END();

	TEST_BEGIN("schema: a $ref loop is unusable, not a crash");
	CHECK(check("{\"definitions\":{\"a\":{\"$ref\":\"#/definitions/b\"},"
	    "\"b\":{\"$ref\":\"#/definitions/a\"}},\"$ref\":"
	    "\"#/definitions/a\"}", "1", err, sizeof(err)) ==
	    SCHEMA_UNUSABLE);
	TEST_END();

	TEST_BEGIN("schema: \\d and \\w read as ECMA 262 reads them");
	CHECK(check("{\"pattern\":\"^\\\\d{4}-\\\\w+$\"}", "\"2024-ab_c\"",
	    err, sizeof(err)) == SCHEMA_VALID);
	CHECK(check("{\"pattern\":\"^\\\\d{4}$\"}", "\"20x4\"", err,
	    sizeof(err)) == SCHEMA_INVALID);
	TEST_END();

	TEST_BEGIN("schema: a usable schema is usable");
	s = json_loads("{\"type\":\"object\",\"required\":[\"snapshot\"],"
	    "\"properties\":{\"snapshot\":{\"type\":\"string\",\"pattern\":"
	    "\"^[0-9]+$\"}},\"definitions\":{\"x\":{\"$ref\":\"#\"}}}", 0,
	    NULL);
	CHECK(schema_usable(s, err, sizeof(err)) == 0);
	json_decref(s);
	TEST_END();
}

int
main(void)
{
	run_suite();
	own_cases();
	TEST_EXIT();
}
