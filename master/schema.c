/*
 * JSON Schema, draft 7: the validation keywords (type, enum, const, the
 * numeric, string, array and object keywords, dependencies,
 * propertyNames, if/then/else, allOf/anyOf/oneOf/not, boolean schemas)
 * and $ref within the schema document, by JSON Pointer or by an $id of
 * one of its subschemas.  Not done, on purpose:
 *
 *  - a $ref to another document (remote): nopsd fetches nothing while it
 *    validates, so such a schema is unusable (SCHEMA_UNUSABLE) and the
 *    operation that declares it is refused as an invalid configuration;
 *  - "format", "contentEncoding", "contentMediaType": annotations only,
 *    as draft 7 allows;
 *  - patterns are POSIX extended regular expressions, with \d \w \s
 *    (and \D \W \S outside brackets) read as ECMA 262 reads them.
 *
 * The first fault found is reported, with the JSON Pointer of the value.
 */
#include "config.h"

#include <sys/types.h>
#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hex.h"
#include "schema.h"

#define SCHEMA_DEPTH_MAX	128	/* nested subschemas, $refs included */
#define SCHEMA_PATH_MAX		512
#define SCHEMA_URI_MAX		1024

struct sctx {
	json_t	*sc_root;
	json_t		*sc_ids;	/* resolved $id -> subschema */
	char		 sc_rootbase[SCHEMA_URI_MAX];
	int		 sc_depth;
	int		 sc_quiet;	/* inside anyOf/oneOf/not/if:
					   no error */
	char		*sc_err;
	size_t		 sc_errlen;
	int		 sc_unusable;
};

static int	 sv(struct sctx *, json_t *, json_t *,
		    const char *base, char *path);

static void
sc_fail(struct sctx *sc, const char *path, const char *fmt, ...)
    __attribute__((__format__(printf, 3, 4)));

static void
sc_fail(struct sctx *sc, const char *path, const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];

	if (sc->sc_quiet || sc->sc_err == NULL || sc->sc_err[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(sc->sc_err, sc->sc_errlen, "%s: %s", path[0] == '\0' ? "/" :
	    path, msg);
}

/*
 * Alike on purpose: nomad_fail_later (nomad.c) and repo_violation
 * (repo.c) open as printf-like functions do (prototype with the format
 * attribute, va_start); each keeps its text elsewhere.
 */
static int
sc_unusable(struct sctx *sc, const char *fmt, ...)
    __attribute__((__format__(printf, 2, 3)));

static int
sc_unusable(struct sctx *sc, const char *fmt, ...)
{
	va_list	 ap;

	if (!sc->sc_unusable && sc->sc_err != NULL) {
		va_start(ap, fmt);
		vsnprintf(sc->sc_err, sc->sc_errlen, fmt, ap);
		va_end(ap);
	}
	sc->sc_unusable = 1;
	return SCHEMA_UNUSABLE;
}

/* ---- values ---- */

static int
is_number(json_t *v)
{
	return json_is_integer(v) || json_is_real(v);
}

static double
num(json_t *v)
{
	return json_number_value(v);
}

/* Without libm: the integer nearest to d (|d| past 2^53 is one). */
static double
nearest_int(double d)
{
	if (d >= 9007199254740992.0 || d <= -9007199254740992.0)
		return d;
	return (double)(long long)(d < 0 ? d - 0.5 : d + 0.5);
}

static int
is_integer(json_t *v)
{
	double	 d;

	if (json_is_integer(v))
		return 1;
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	return isfinite(d) && d == nearest_int(d);
}

int
schema_equal(json_t *a, json_t *b)
{
	const char	*k;
	json_t		*va;
	size_t		 i;

	if (is_number(a) && is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return num(a) == num(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		json_array_foreach(a, i, va)
			if (!schema_equal(va, json_array_get(b, i)))
				return 0;
		return 1;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach(a, k, va)
			if (json_object_get(b, k) == NULL ||
			    !schema_equal(va, json_object_get(b, k)))
				return 0;
		return 1;
	default:
		return json_equal(a, b);
	}
}

static const char *
type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return is_integer(v) ? "integer" : "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
		return "null";
	}
	return "?";
}

static int
type_is(json_t *v, const char *t)
{
	if (strcmp(t, "number") == 0)
		return is_number(v);
	if (strcmp(t, "integer") == 0)
		return is_integer(v);
	if (strcmp(t, "boolean") == 0)
		return json_is_boolean(v);
	return strcmp(type_name(v), t) == 0;
}

/* Unicode code points of a UTF-8 string (jansson's are valid UTF-8). */
static size_t
utf8_len(const char *s, size_t n)
{
	size_t	 i, len = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			len++;
	return len;
}

/* ---- paths and URIs ---- */

/* Append a JSON Pointer token to path (in place); returns the old end. */
static size_t
path_push(char *path, const char *tok)
{
	size_t	 n = strlen(path), o = n;
	const char *p;

	if (n + 2 >= SCHEMA_PATH_MAX)
		return o;
	path[n++] = '/';
	for (p = tok; *p != '\0' && n + 3 < SCHEMA_PATH_MAX; p++) {
		if (*p == '~' || *p == '/') {
			path[n++] = '~';
			path[n++] = *p == '~' ? '0' : '1';
		} else
			path[n++] = *p;
	}
	path[n] = '\0';
	return o;
}

static size_t
path_push_index(char *path, size_t i)
{
	char	 tok[32];

	snprintf(tok, sizeof(tok), "%zu", i);
	return path_push(path, tok);
}

static void
path_pop(char *path, size_t o)
{
	path[o] = '\0';
}

static int
uri_has_scheme(const char *u)
{
	const char	*p;

	if (!isalpha((unsigned char)*u))
		return 0;
	for (p = u; *p != '\0'; p++) {
		if (*p == ':')
			return 1;
		if (!isalnum((unsigned char)*p) && *p != '+' && *p != '-' &&
		    *p != '.')
			return 0;
	}
	return 0;
}

/* ref resolved against base (RFC 3986, the cases schemas use). */
static void
uri_resolve(const char *base, const char *ref, char *out, size_t outlen)
{
	const char	*hash, *slash, *auth;
	size_t		 n;

	if (uri_has_scheme(ref)) {
		snprintf(out, outlen, "%s", ref);
		return;
	}
	hash = strchr(base, '#');
	n = hash != NULL ? (size_t)(hash - base) : strlen(base);
	if (ref[0] == '#' || ref[0] == '\0') {
		snprintf(out, outlen, "%.*s%s", (int)n, base, ref);
		return;
	}
	if (ref[0] == '/') {
		auth = strstr(base, "://");
		slash = auth != NULL ? strchr(auth + 3, '/') : NULL;
		n = slash != NULL ? (size_t)(slash - base) : (auth != NULL ?
		    n : 0);
		snprintf(out, outlen, "%.*s%s", (int)n, base, ref);
		return;
	}
	/* relative: the base up to its last '/' */
	for (slash = NULL; n > 0; n--)
		if (base[n - 1] == '/') {
			slash = base + n - 1;
			break;
		}
	snprintf(out, outlen, "%.*s%s", slash != NULL ? (int)n : 0, base, ref);
}

/* The subschemas of a schema object: where $ids and $refs may be. */
static int
is_schema_map(const char *k)
{
	return strcmp(k, "properties") == 0 ||
	    strcmp(k, "patternProperties") == 0 ||
	    strcmp(k, "definitions") == 0 ||
	    strcmp(k, "dependencies") == 0;
}

static int
is_schema_value(const char *k)
{
	static const char *const keys[] = { "additionalItems", "items",
	    "additionalProperties", "contains", "propertyNames", "if", "then",
	    "else", "not", "allOf", "anyOf", "oneOf" };
	size_t	 i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(k, keys[i]) == 0)
			return 1;
	return 0;
}

/* Index every $id under s, resolved against base. */
static void
ids_index(struct sctx *sc, json_t *s, const char *base, int depth)
{
	char		 nb[SCHEMA_URI_MAX];
	const char	*k, *id;
	json_t		*v, *e;
	size_t		 i;

	if (!json_is_object(s) || depth > SCHEMA_DEPTH_MAX)
		return;
	snprintf(nb, sizeof(nb), "%s", base);
	/* Beside $ref, draft 7 ignores every keyword, $id too. */
	if ((id = json_string_value(json_object_get(s, "$id"))) != NULL &&
	    json_object_get(s, "$ref") == NULL) {
		uri_resolve(base, id, nb, sizeof(nb));
		if (nb[strlen(nb) - 1] == '#')
			nb[strlen(nb) - 1] = '\0';
		json_object_set(sc->sc_ids, nb, s);
	}
	json_object_foreach(s, k, v) {
		if (is_schema_map(k) && json_is_object(v)) {
			const char *k2;
			json_object_foreach(v, k2, e)
				ids_index(sc, e, nb, depth + 1);
		} else if (is_schema_value(k)) {
			if (json_is_array(v))
				json_array_foreach(v, i, e)
					ids_index(sc, e, nb, depth + 1);
			else
				ids_index(sc, v, nb, depth + 1);
		}
	}
}

static json_t *
ids_get(struct sctx *sc, const char *uri)
{
	return json_object_get(sc->sc_ids, uri);
}

/* A JSON Pointer fragment (percent-decoded first) from doc, or NULL. */
static json_t *
pointer_get(json_t *doc, const char *frag)
{
	char		 tok[256], dec[SCHEMA_URI_MAX];
	const char	*p;
	json_t	*cur = doc;
	size_t		 n;
	ssize_t		 d;
	char		*end;
	unsigned long	 idx;

	/* A '%' without two hex digits stays as it is (RFC 3986 leniency). */
	if ((d = hex_pct_decode(frag, strlen(frag), dec, sizeof(dec),
	    HEX_PCT_LENIENT)) == -1 || memchr(dec, '\0', d) != NULL)
		return NULL;
	p = dec;
	while (*p == '/') {
		p++;
		for (n = 0; *p != '\0' && *p != '/' && n + 1 < sizeof(tok);
		    p++) {
			if (p[0] == '~' && p[1] == '0') {
				tok[n++] = '~';
				p++;
			} else if (p[0] == '~' && p[1] == '1') {
				tok[n++] = '/';
				p++;
			} else
				tok[n++] = *p;
		}
		tok[n] = '\0';
		if (json_is_object(cur))
			cur = json_object_get(cur, tok);
		else if (json_is_array(cur)) {
			idx = strtoul(tok, &end, 10);
			if (tok[0] == '\0' || *end != '\0')
				return NULL;
			cur = json_array_get(cur, idx);
		} else
			return NULL;
		if (cur == NULL)
			return NULL;
	}
	return *p == '\0' ? cur : NULL;
}

/*
 * Resolve a $ref from base: the schema it names and the base it is read
 * with (out, the document's URI), or NULL with sc unusable.
 */
static json_t *
ref_resolve(struct sctx *sc, const char *ref, const char *base, char *nb,
    size_t nblen)
{
	char		 uri[SCHEMA_URI_MAX], doc[SCHEMA_URI_MAX];
	const char	*hash;
	json_t	*d, *t;

	uri_resolve(base, ref, uri, sizeof(uri));
	hash = strchr(uri, '#');
	snprintf(doc, sizeof(doc), "%.*s", hash != NULL ?
	    (int)(hash - uri) : (int)strlen(uri), uri);
	if (strcmp(doc, sc->sc_rootbase) == 0)
		d = sc->sc_root;
	else if ((d = ids_get(sc, doc)) == NULL) {
		sc_unusable(sc, "$ref \"%s\" names another document (%s): "
		    "remote references are not supported", ref, doc);
		return NULL;
	}
	snprintf(nb, nblen, "%s", doc);
	if (hash == NULL || hash[1] == '\0')
		return d;
	if (hash[1] == '/') {
		if ((t = pointer_get(d, hash + 1)) == NULL)
			sc_unusable(sc, "$ref \"%s\": no such place in the "
			    "schema", ref);
		return t;
	}
	/* A plain-name fragment: an $id "#name". */
	if ((t = ids_get(sc, uri)) == NULL)
		sc_unusable(sc, "$ref \"%s\": no subschema has that $id", ref);
	return t;
}

/* ---- patterns ---- */

/* ECMA 262's \d \w \s as POSIX classes; -1 if it does not compile. */
static int
sre_compile(regex_t *re, const char *pat)
{
	char	*ere, *o;
	const char *p;
	int	 inbr = 0, rc;

	if ((ere = malloc(strlen(pat) * 16 + 1)) == NULL)
		return -1;
	for (p = pat, o = ere; *p != '\0'; p++) {
		if (*p == '\\' && p[1] != '\0') {
			const char *cls = NULL;

			switch (p[1]) {
			case 'd': cls = "[:digit:]"; break;
			case 'w': cls = "[:alnum:]_"; break;
			case 's': cls = "[:space:]"; break;
			case 'D': cls = inbr ? NULL : "^[:digit:]"; break;
			case 'W': cls = inbr ? NULL : "^[:alnum:]_"; break;
			case 'S': cls = inbr ? NULL : "^[:space:]"; break;
			}
			if (cls != NULL) {
				o += sprintf(o, inbr ? "%s" : "[%s]", cls);
				p++;
				continue;
			}
			*o++ = *p++;
			*o++ = *p;
			continue;
		}
		if (*p == '[' && !inbr)
			inbr = 1;
		else if (*p == ']' && inbr)
			inbr = 0;
		*o++ = *p;
	}
	*o = '\0';
	rc = regcomp(re, ere, REG_EXTENDED | REG_NOSUB);
	free(ere);
	return rc == 0 ? 0 : -1;
}

/* 1 match, 0 none, -1 the pattern does not compile (sc unusable). */
static int
sre_match(struct sctx *sc, const char *pat, const char *s)
{
	regex_t	 re;
	int	 m;

	if (sre_compile(&re, pat) == -1) {
		sc_unusable(sc, "pattern \"%s\" is not a regular expression "
		    "nopsd can use", pat);
		return -1;
	}
	m = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return m;
}

/* ---- the keywords ---- */

/* Validate quietly: no error message (anyOf's branches, not, if). */
static int
sv_quiet(struct sctx *sc, json_t *s, json_t *v, const char *base,
    char *path)
{
	int	 rc, q = sc->sc_quiet;

	sc->sc_quiet = 1;
	rc = sv(sc, s, v, base, path);
	sc->sc_quiet = q;
	return rc;
}

static int
kw_numeric(struct sctx *sc, json_t *s, json_t *v,
    const char *path)
{
	json_t	*k;
	double		 x = num(v), q;

	if ((k = json_object_get(s, "multipleOf")) != NULL && is_number(k) &&
	    num(k) > 0) {
		if (json_is_integer(v) && json_is_integer(k))
			q = json_integer_value(v) % json_integer_value(k) == 0 ?
			    0 : 0.5;
		else {
			q = x / num(k);
			q = isfinite(q) ? q - nearest_int(q) : 0.5;
			q = q < 0 ? -q : q;
		}
		if (q > 1e-9) {
			sc_fail(sc, path, "is not a multiple of %g", num(k));
			return SCHEMA_INVALID;
		}
	}
	if ((k = json_object_get(s, "maximum")) != NULL && is_number(k) &&
	    x > num(k)) {
		sc_fail(sc, path, "is more than the maximum %g", num(k));
		return SCHEMA_INVALID;
	}
	if ((k = json_object_get(s, "exclusiveMaximum")) != NULL &&
	    is_number(k) && x >= num(k)) {
		sc_fail(sc, path, "is not less than %g", num(k));
		return SCHEMA_INVALID;
	}
	if ((k = json_object_get(s, "minimum")) != NULL && is_number(k) &&
	    x < num(k)) {
		sc_fail(sc, path, "is less than the minimum %g", num(k));
		return SCHEMA_INVALID;
	}
	if ((k = json_object_get(s, "exclusiveMinimum")) != NULL &&
	    is_number(k) && x <= num(k)) {
		sc_fail(sc, path, "is not more than %g", num(k));
		return SCHEMA_INVALID;
	}
	return SCHEMA_VALID;
}

/* maxItems/minItems, maxProperties/minProperties: n counts what. */
static int
kw_count(struct sctx *sc, json_t *s, const char *path, size_t n,
    const char *maxkw, const char *minkw, const char *what)
{
	json_t	*k;

	if ((k = json_object_get(s, maxkw)) != NULL && is_number(k) &&
	    (double)n > num(k)) {
		sc_fail(sc, path, "has more than %g %s", num(k), what);
		return SCHEMA_INVALID;
	}
	if ((k = json_object_get(s, minkw)) != NULL && is_number(k) &&
	    (double)n < num(k)) {
		sc_fail(sc, path, "has fewer than %g %s", num(k), what);
		return SCHEMA_INVALID;
	}
	return SCHEMA_VALID;
}

static int
kw_string(struct sctx *sc, json_t *s, json_t *v,
    const char *path)
{
	json_t	*k;
	size_t		 len;
	int		 m;

	len = utf8_len(json_string_value(v), json_string_length(v));
	/* Alike on purpose: kw_count, with the words of a string's length. */
	if ((k = json_object_get(s, "maxLength")) != NULL && is_number(k) &&
	    (double)len > num(k)) {
		sc_fail(sc, path, "is longer than %g characters", num(k));
		return SCHEMA_INVALID;
	}
	if ((k = json_object_get(s, "minLength")) != NULL && is_number(k) &&
	    (double)len < num(k)) {
		sc_fail(sc, path, "is shorter than %g characters", num(k));
		return SCHEMA_INVALID;
	}
	if ((k = json_object_get(s, "pattern")) != NULL && json_is_string(k)) {
		if ((m = sre_match(sc, json_string_value(k),
		    json_string_value(v))) == -1)
			return SCHEMA_UNUSABLE;
		if (m == 0) {
			sc_fail(sc, path, "does not match the pattern %s",
			    json_string_value(k));
			return SCHEMA_INVALID;
		}
	}
	return SCHEMA_VALID;
}

static int
kw_array(struct sctx *sc, json_t *s, json_t *v, const char *base,
    char *path)
{
	json_t	*k, *items, *e, *f;
	size_t		 i, j, n = json_array_size(v), o, found;
	int		 rc;

	if (kw_count(sc, s, path, n, "maxItems", "minItems", "items") !=
	    SCHEMA_VALID)
		return SCHEMA_INVALID;
	if (json_is_true(json_object_get(s, "uniqueItems")))
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (schema_equal(json_array_get(v, i),
				    json_array_get(v, j))) {
					sc_fail(sc, path, "items %zu and %zu "
					    "are equal; they must be unique",
					    i, j);
					return SCHEMA_INVALID;
				}
	items = json_object_get(s, "items");
	for (i = 0; items != NULL && i < n; i++) {
		e = json_array_get(v, i);
		if (json_is_array(items)) {
			if (i < json_array_size(items))
				f = json_array_get(items, i);
			else if ((f = json_object_get(s,
			    "additionalItems")) == NULL)
				break;
		} else
			f = items;
		o = path_push_index(path, i);
		rc = sv(sc, f, e, base, path);
		path_pop(path, o);
		if (rc != SCHEMA_VALID)
			return rc;
	}
	if ((k = json_object_get(s, "contains")) != NULL) {
		found = 0;
		json_array_foreach(v, i, e) {
			o = path_push_index(path, i);
			rc = sv_quiet(sc, k, e, base, path);
			path_pop(path, o);
			if (rc == SCHEMA_UNUSABLE)
				return rc;
			if (rc == SCHEMA_VALID) {
				found = 1;
				break;
			}
		}
		if (!found) {
			sc_fail(sc, path, "has no item that agrees with "
			    "\"contains\"");
			return SCHEMA_INVALID;
		}
	}
	return SCHEMA_VALID;
}

static int
kw_object(struct sctx *sc, json_t *s, json_t *v,
    const char *base, char *path)
{
	json_t	*k, *props, *pats, *addl, *e, *f, *dep;
	const char	*key, *pk;
	json_t		*name;
	size_t		 n = json_object_size(v), o, i;
	int		 rc, m, matched;

	if (kw_count(sc, s, path, n, "maxProperties", "minProperties",
	    "properties") != SCHEMA_VALID)
		return SCHEMA_INVALID;
	json_array_foreach(json_object_get(s, "required"), i, e)
		if (json_is_string(e) && json_object_get(v,
		    json_string_value(e)) == NULL) {
			sc_fail(sc, path, "lacks the required property \"%s\"",
			    json_string_value(e));
			return SCHEMA_INVALID;
		}
	props = json_object_get(s, "properties");
	pats = json_object_get(s, "patternProperties");
	addl = json_object_get(s, "additionalProperties");
	json_object_foreach(v, key, e) {
		o = path_push(path, key);
		matched = 0;
		if ((f = json_object_get(props, key)) != NULL) {
			matched = 1;
			if ((rc = sv(sc, f, e, base, path)) != SCHEMA_VALID)
				goto out;
		}
		json_object_foreach(pats, pk, f) {
			if ((m = sre_match(sc, pk, key)) == -1) {
				rc = SCHEMA_UNUSABLE;
				goto out;
			}
			if (m == 0)
				continue;
			matched = 1;
			if ((rc = sv(sc, f, e, base, path)) != SCHEMA_VALID)
				goto out;
		}
		if (!matched && addl != NULL) {
			if (json_is_false(addl)) {
				path_pop(path, o);
				sc_fail(sc, path, "has the property \"%s\", "
				    "which the schema does not allow", key);
				return SCHEMA_INVALID;
			}
			if ((rc = sv(sc, addl, e, base, path)) != SCHEMA_VALID)
				goto out;
		}
		path_pop(path, o);
		continue;
out:
		path_pop(path, o);
		return rc;
	}
	json_object_foreach(json_object_get(s, "dependencies"), key,
	    dep) {
		if (json_object_get(v, key) == NULL)
			continue;
		if (json_is_array(dep)) {
			json_array_foreach(dep, i, name)
				if (json_is_string(name) && json_object_get(v,
				    json_string_value(name)) == NULL) {
					sc_fail(sc, path, "has \"%s\" but not "
					    "\"%s\", which it needs", key,
					    json_string_value(name));
					return SCHEMA_INVALID;
				}
		} else if ((rc = sv(sc, dep, v, base, path)) != SCHEMA_VALID)
			return rc;
	}
	if ((k = json_object_get(s, "propertyNames")) != NULL) {
		json_object_foreach(v, key, e) {
			json_t	*kn = json_string(key);

			o = path_push(path, key);
			rc = sv(sc, k, kn, base, path);
			path_pop(path, o);
			json_decref(kn);
			if (rc != SCHEMA_VALID)
				return rc;
		}
	}
	return SCHEMA_VALID;
}

/*
 * How many of the schemas in the array k v agrees with (*good), counting
 * no further than most: anyOf needs one, oneOf all of them.  A schema
 * nops cannot use ends it with SCHEMA_UNUSABLE.
 */
static int
kw_agrees(struct sctx *sc, json_t *k, json_t *v, const char *base,
    char *path, size_t most, size_t *good)
{
	json_t	*e;
	size_t	 i;
	int	 rc;

	*good = 0;
	json_array_foreach(k, i, e) {
		if ((rc = sv_quiet(sc, e, v, base, path)) == SCHEMA_UNUSABLE)
			return rc;
		if (rc == SCHEMA_VALID && ++*good == most)
			break;
	}
	return SCHEMA_VALID;
}

static int
kw_logic(struct sctx *sc, json_t *s, json_t *v, const char *base,
    char *path)
{
	json_t	*k, *e;
	size_t		 i, good;
	int		 rc;

	json_array_foreach(json_object_get(s, "allOf"), i, e)
		if ((rc = sv(sc, e, v, base, path)) != SCHEMA_VALID)
			return rc;
	if ((k = json_object_get(s, "anyOf")) != NULL) {
		if ((rc = kw_agrees(sc, k, v, base, path, 1, &good)) !=
		    SCHEMA_VALID)
			return rc;
		if (good == 0) {
			sc_fail(sc, path, "agrees with none of \"anyOf\"");
			return SCHEMA_INVALID;
		}
	}
	if ((k = json_object_get(s, "oneOf")) != NULL) {
		if ((rc = kw_agrees(sc, k, v, base, path, SIZE_MAX, &good)) !=
		    SCHEMA_VALID)
			return rc;
		if (good != 1) {
			sc_fail(sc, path, "agrees with %zu of \"oneOf\", not "
			    "exactly one", good);
			return SCHEMA_INVALID;
		}
	}
	if ((k = json_object_get(s, "not")) != NULL) {
		if ((rc = sv_quiet(sc, k, v, base, path)) == SCHEMA_UNUSABLE)
			return rc;
		if (rc == SCHEMA_VALID) {
			sc_fail(sc, path, "agrees with \"not\"");
			return SCHEMA_INVALID;
		}
	}
	if ((k = json_object_get(s, "if")) != NULL) {
		if ((rc = sv_quiet(sc, k, v, base, path)) == SCHEMA_UNUSABLE)
			return rc;
		e = json_object_get(s, rc == SCHEMA_VALID ? "then" : "else");
		if (e != NULL && (rc = sv(sc, e, v, base, path)) !=
		    SCHEMA_VALID)
			return rc;
	}
	return SCHEMA_VALID;
}

static int
sv(struct sctx *sc, json_t *s, json_t *v, const char *base,
    char *path)
{
	json_t	*k, *t, *e;
	const char	*id;
	char		 nb[SCHEMA_URI_MAX], buf[256];
	size_t		 i;
	int		 rc, ok;

	if (json_is_true(s))
		return SCHEMA_VALID;
	if (json_is_false(s)) {
		sc_fail(sc, path, "is not allowed here (the schema is false)");
		return SCHEMA_INVALID;
	}
	if (!json_is_object(s))
		return sc_unusable(sc, "a subschema at instance %s is neither "
		    "an object nor a boolean", path[0] ? path : "/");
	if (++sc->sc_depth > SCHEMA_DEPTH_MAX) {
		sc->sc_depth--;
		return sc_unusable(sc, "subschemas nest more than %d deep "
		    "(a $ref loop?)", SCHEMA_DEPTH_MAX);
	}
	/* draft 7: beside $ref every other keyword is ignored */
	if ((k = json_object_get(s, "$ref")) != NULL && json_is_string(k)) {
		t = ref_resolve(sc, json_string_value(k), base, nb,
		    sizeof(nb));
		rc = t == NULL ? SCHEMA_UNUSABLE : sv(sc, t, v, nb, path);
		sc->sc_depth--;
		return rc;
	}
	snprintf(nb, sizeof(nb), "%s", base);
	if ((id = json_string_value(json_object_get(s, "$id"))) != NULL)
		uri_resolve(base, id, nb, sizeof(nb));
	rc = SCHEMA_VALID;

	if ((k = json_object_get(s, "type")) != NULL) {
		ok = 0;
		if (json_is_string(k))
			ok = type_is(v, json_string_value(k));
		else
			json_array_foreach(k, i, e)
				if (json_is_string(e) &&
				    type_is(v, json_string_value(e)))
					ok = 1;
		if (!ok) {
			if (json_is_string(k))
				snprintf(buf, sizeof(buf), "%s",
				    json_string_value(k));
			else {
				buf[0] = '\0';
				json_array_foreach(k, i, e) {
					if (i > 0)
						strlcat(buf, " or ",
						    sizeof(buf));
					if (json_is_string(e))
						strlcat(buf,
						    json_string_value(e),
						    sizeof(buf));
				}
			}
			sc_fail(sc, path, "is %s %s, not %s",
			    strchr("aeiou", type_name(v)[0]) ? "an" : "a",
			    type_name(v), buf);
			rc = SCHEMA_INVALID;
			goto done;
		}
	}
	if ((k = json_object_get(s, "enum")) != NULL && json_is_array(k)) {
		ok = 0;
		json_array_foreach(k, i, e)
			if (schema_equal(e, v))
				ok = 1;
		if (!ok) {
			sc_fail(sc, path, "is not one of the values the "
			    "schema lists (enum)");
			rc = SCHEMA_INVALID;
			goto done;
		}
	}
	if ((k = json_object_get(s, "const")) != NULL && !schema_equal(k, v)) {
		sc_fail(sc, path, "is not the value the schema requires "
		    "(const)");
		rc = SCHEMA_INVALID;
		goto done;
	}
	if (is_number(v))
		rc = kw_numeric(sc, s, v, path);
	else if (json_is_string(v))
		rc = kw_string(sc, s, v, path);
	else if (json_is_array(v))
		rc = kw_array(sc, s, v, nb, path);
	else if (json_is_object(v))
		rc = kw_object(sc, s, v, nb, path);
	if (rc == SCHEMA_VALID)
		rc = kw_logic(sc, s, v, nb, path);
done:
	sc->sc_depth--;
	return rc;
}

static void
sctx_init(struct sctx *sc, json_t *schema, char *err, size_t errlen)
{
	const char	*id;

	memset(sc, 0, sizeof(*sc));
	sc->sc_root = schema;
	sc->sc_err = err;
	sc->sc_errlen = errlen;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((sc->sc_ids = json_object()) == NULL)
		abort();
	if ((id = json_string_value(json_object_get(schema, "$id"))) != NULL)
		snprintf(sc->sc_rootbase, sizeof(sc->sc_rootbase), "%s", id);
	if (sc->sc_rootbase[0] != '\0' &&
	    sc->sc_rootbase[strlen(sc->sc_rootbase) - 1] == '#')
		sc->sc_rootbase[strlen(sc->sc_rootbase) - 1] = '\0';
	ids_index(sc, schema, "", 0);
}

int
schema_validate(json_t *schema, json_t *instance, char *err,
    size_t errlen)
{
	struct sctx	 sc;
	char		 path[SCHEMA_PATH_MAX] = "";
	int		 rc;

	sctx_init(&sc, schema, err, errlen);
	rc = sv(&sc, schema, instance, sc.sc_rootbase, path);
	if (sc.sc_unusable)
		rc = SCHEMA_UNUSABLE;
	json_decref(sc.sc_ids);
	return rc;
}

/* ---- can a schema be used at all ---- */

static int
usable_walk(struct sctx *sc, json_t *s, const char *base, int depth)
{
	char		 nb[SCHEMA_URI_MAX], rb[SCHEMA_URI_MAX];
	const char	*k, *k2, *id;
	json_t		*v, *e;
	size_t		 i;
	regex_t		 re;

	if (json_is_boolean(s))
		return 0;
	if (!json_is_object(s))
		return sc_unusable(sc, "a subschema is neither an object nor "
		    "a boolean");
	if (depth > SCHEMA_DEPTH_MAX)
		return sc_unusable(sc, "subschemas nest more than %d deep",
		    SCHEMA_DEPTH_MAX);
	if ((v = json_object_get(s, "$ref")) != NULL) {
		if (!json_is_string(v))
			return sc_unusable(sc, "a $ref is not a string");
		return ref_resolve(sc, json_string_value(v), base, rb,
		    sizeof(rb)) == NULL ? -1 : 0;
	}
	snprintf(nb, sizeof(nb), "%s", base);
	if ((id = json_string_value(json_object_get(s, "$id"))) != NULL)
		uri_resolve(base, id, nb, sizeof(nb));
	if ((v = json_object_get(s, "pattern")) != NULL) {
		if (!json_is_string(v) || sre_compile(&re,
		    json_string_value(v)) == -1)
			return sc_unusable(sc, "pattern %s is not a regular "
			    "expression nopsd can use", json_is_string(v) ?
			    json_string_value(v) : "(not a string)");
		regfree(&re);
	}
	json_object_foreach(json_object_get(s, "patternProperties"), k2, e) {
		if (sre_compile(&re, k2) == -1)
			return sc_unusable(sc, "patternProperties: %s is not "
			    "a regular expression nopsd can use", k2);
		regfree(&re);
	}
	json_object_foreach(s, k, v) {
		if (is_schema_map(k) && json_is_object(v)) {
			json_object_foreach(v, k2, e)
				if (!json_is_array(e) &&
				    usable_walk(sc, e, nb, depth + 1) == -1)
					return -1;
		} else if (is_schema_value(k)) {
			if (json_is_array(v)) {
				json_array_foreach(v, i, e)
					if (usable_walk(sc, e, nb,
					    depth + 1) == -1)
						return -1;
			} else if (usable_walk(sc, v, nb, depth + 1) == -1)
				return -1;
		}
	}
	return 0;
}

int
schema_usable(json_t *schema, char *err, size_t errlen)
{
	struct sctx	 sc;
	int		 rc;

	sctx_init(&sc, schema, err, errlen);
	rc = usable_walk(&sc, schema, sc.sc_rootbase, 0);
	json_decref(sc.sc_ids);
	return rc;
}
