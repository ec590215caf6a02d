/*
 * The OpenAPI document (master/openapi.c) against the route tables the
 * master really dispatches on (api_route_foreach): every route appears
 * with its method and a real description, nothing else does, and the
 * document has the shape of OpenAPI 3.0.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "test.h"
#include "conf.h"
#include "master.h"
#include "api.h"
#include "openapi.h"

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

struct check {
	json_t	*doc;
	int	 nroutes;
	int	 missing;
	int	 undescribed;
	json_t	*seen;		/* "method path" of every route */
};

/* "/api/v1/jobs/{namespace}/{job}" matches "/api/v1/jobs/ * / *". */
static int
same(const char *route, const char *path)
{
	while (*route != '\0' && *path != '\0') {
		if (*route == '*' && *path == '{') {
			route++;
			if ((path = strchr(path, '}')) == NULL)
				return 0;
			path++;
			continue;
		}
		if (*route++ != *path++)
			return 0;
	}
	return *route == '\0' && *path == '\0';
}

static void
lower(const char *s, char *out, size_t len)
{
	size_t	 i;

	for (i = 0; s[i] != '\0' && i + 1 < len; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	out[i] = '\0';
}

static void
check_route(const struct api_route *r, void *arg)
{
	struct check	*c = arg;
	const char	*path;
	json_t		*item, *op;
	char		 m[16], key[600];
	int		 found = 0;

	if (strncmp(r->path, "/api/v1/debug/", 14) == 0)
		return;
	c->nroutes++;
	lower(r->method, m, sizeof(m));
	json_object_foreach(json_object_get(c->doc, "paths"), path, item) {
		if (!same(r->path, path) || (op = json_object_get(item, m)) ==
		    NULL)
			continue;
		found = 1;
		if (json_is_true(json_object_get(op, "x-nops-undescribed"))) {
			printf("# undescribed: %s %s\n", r->method, r->path);
			c->undescribed++;
		}
		snprintf(key, sizeof(key), "%s %s", m, path);
		json_object_set_new(c->seen, key, json_true());
	}
	if (!found) {
		printf("# missing: %s %s\n", r->method, r->path);
		c->missing++;
	}
}

static const char *const http_methods[] = {
	"get", "put", "post", "delete", "options", "head", "patch", "trace"
};

static int
is_method(const char *k)
{
	size_t	 i;

	for (i = 0; i < sizeof(http_methods) / sizeof(http_methods[0]); i++)
		if (strcmp(http_methods[i], k) == 0)
			return 1;
	return 0;
}

/* op has a required path parameter named name (n bytes). */
static int
has_path_param(json_t *op, const char *name, size_t n)
{
	json_t		*e;
	const char	*pn, *in;
	size_t		 i;

	json_array_foreach(json_object_get(op, "parameters"), i, e) {
		pn = json_string_value(json_object_get(e, "name"));
		in = json_string_value(json_object_get(e, "in"));
		if (pn != NULL && in != NULL && strlen(pn) == n &&
		    strncmp(pn, name, n) == 0 && strcmp(in, "path") == 0 &&
		    json_is_true(json_object_get(e, "required")))
			return 1;
	}
	return 0;
}

/* Every "$ref" of v points to something in doc. */
static int
refs_resolve(json_t *doc, json_t *v)
{
	const char	*k, *ref, *p, *end;
	json_t		*x, *node;
	size_t		 i;
	char		 part[128];
	int		 ok = 1;

	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			ok &= refs_resolve(doc, x);
		return ok;
	}
	if (!json_is_object(v))
		return 1;
	json_object_foreach(v, k, x) {
		if (strcmp(k, "$ref") != 0) {
			ok &= refs_resolve(doc, x);
			continue;
		}
		ref = json_string_value(x);
		if (ref == NULL || strncmp(ref, "#/", 2) != 0) {
			printf("# bad $ref %s\n", ref != NULL ? ref : "?");
			ok = 0;
			continue;
		}
		node = doc;
		for (p = ref + 2; node != NULL && *p != '\0'; p = end) {
			end = p + strcspn(p, "/");
			snprintf(part, sizeof(part), "%.*s", (int)(end - p), p);
			node = json_object_get(node, part);
			if (*end == '/')
				end++;
		}
		if (node == NULL) {
			printf("# unresolved $ref %s\n", ref);
			ok = 0;
		}
	}
	return ok;
}

int
main(void)
{
	struct check	 c;
	const char	*path, *m, *code;
	json_t		*doc, *item, *op, *resp, *v, *e;
	char		*text;
	int		 extra = 0, shape = 1;

	doc = openapi_document();

	TEST_BEGIN("openapi: the document is built, and is JSON");
	CHECK(doc != NULL);
	text = doc != NULL ? json_dumps(doc, 0) : NULL;
	CHECK(text != NULL && json_loads(text, 0, NULL) != NULL);
	free(text);
	TEST_END();
	if (doc == NULL)
		TEST_EXIT();

	TEST_BEGIN("openapi: version 3.0.x, info, paths, components");
	v = json_object_get(doc, "openapi");
	CHECK(json_is_string(v) && strncmp(json_string_value(v), "3.0.", 4) ==
	    0);
	CHECK(json_is_string(json_object_get(json_object_get(doc, "info"),
	    "title")));
	CHECK(json_is_string(json_object_get(json_object_get(doc, "info"),
	    "version")));
	CHECK(json_is_object(json_object_get(doc, "paths")));
	CHECK(json_is_object(json_object_get(json_object_get(doc,
	    "components"), "schemas")));
	TEST_END();

	memset(&c, 0, sizeof(c));
	c.doc = doc;
	c.seen = json_object();
	api_route_foreach(check_route, &c);

	TEST_BEGIN("openapi: every route of every table, with its method");
	CHECK(c.nroutes > 20);
	CHECK(c.missing == 0);
	TEST_END();

	TEST_BEGIN("openapi: every route has a real description");
	CHECK(c.undescribed == 0);
	TEST_END();

	TEST_BEGIN("openapi: no operation without a route");
	json_object_foreach(json_object_get(doc, "paths"), path, item)
		json_object_foreach(item, m, op) {
			char key[600];

			snprintf(key, sizeof(key), "%s %s", m, path);
			if (json_object_get(c.seen, key) == NULL) {
				printf("# no route for %s\n", key);
				extra++;
			}
		}
	CHECK(extra == 0);
	TEST_END();

	TEST_BEGIN("openapi: operations have the shape OpenAPI 3.0 wants");
	json_object_foreach(json_object_get(doc, "paths"), path, item) {
		if (path[0] != '/')
			shape = 0;
		json_object_foreach(item, m, op) {
			if (!is_method(m) || !json_is_object(op)) {
				printf("# %s: %s is not an operation\n", path,
				    m);
				shape = 0;
				continue;
			}
			resp = json_object_get(op, "responses");
			if (!json_is_object(resp) || json_object_size(resp) ==
			    0) {
				printf("# %s %s: no responses\n", m, path);
				shape = 0;
			}
			json_object_foreach(resp, code, v)
				if (strcmp(code, "default") != 0 &&
				    (strlen(code) != 3 || code[0] < '1' ||
				    code[0] > '5')) {
					printf("# %s %s: response %s\n", m,
					    path, code);
					shape = 0;
				}
			/* Each {name} of the path is a path parameter. */
			for (const char *p = path; (p = strchr(p, '{')) !=
			    NULL; p++) {
				size_t	 n = strcspn(p + 1, "}");

				if (!has_path_param(op, p + 1, n)) {
					printf("# %s %s: no path parameter "
					    "%.*s\n", m, path, (int)n, p + 1);
					shape = 0;
				}
			}
		}
	}
	CHECK(shape);
	TEST_END();

	TEST_BEGIN("openapi: every $ref resolves");
	CHECK(refs_resolve(doc, doc));
	TEST_END();

	TEST_BEGIN("openapi: errors are {error: {code, message}} of DESIGN 5");
	v = json_object_get(json_object_get(json_object_get(doc,
	    "components"), "schemas"), "Error");
	e = json_object_get(json_object_get(json_object_get(json_object_get(
	    json_object_get(v, "properties"), "error"), "properties"), "code"),
	    "enum");
	CHECK(json_array_size(e) == 8);
	text = json_dumps(e, JSON_COMPACT);
	CHECK(text != NULL && strstr(text, "\"not_found\"") != NULL &&
	    strstr(text, "\"conflict\"") != NULL &&
	    strstr(text, "\"queue_full\"") != NULL &&
	    strstr(text, "\"invalid_configuration\"") != NULL &&
	    strstr(text, "\"runtime_error\"") != NULL &&
	    strstr(text, "\"unauthorized\"") != NULL &&
	    strstr(text, "\"forbidden\"") != NULL &&
	    strstr(text, "\"bad_request\"") != NULL);
	free(text);
	TEST_END();

	TEST_BEGIN("openapi: lists are {items, next} with limit and cursor");
	op = json_object_get(json_object_get(json_object_get(doc, "paths"),
	    "/api/v1/deployments"), "get");
	text = json_dumps(json_object_get(op, "parameters"), JSON_COMPACT);
	CHECK(text != NULL && strstr(text, "\"limit\"") != NULL &&
	    strstr(text, "\"cursor\"") != NULL);
	free(text);
	v = json_object_get(json_object_get(json_object_get(doc,
	    "components"), "schemas"), "DeploymentList");
	CHECK(json_object_get(json_object_get(v, "properties"), "items") !=
	    NULL);
	CHECK(json_object_get(json_object_get(v, "properties"), "next") !=
	    NULL);
	TEST_END();

	json_decref(c.seen);
	json_decref(doc);
	TEST_EXIT();
}
