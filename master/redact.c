/*
 * Secrets out of plan diffs.  A diff is the only view of a job's spec that
 * people see (dashboard, API, notifications), so it is redacted once,
 * before it is stored; the rules err on the side of hiding.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "redact.h"
#include "jsonb.h"

#define SECRET_MIN_LEN	24	/* a token-like value is at least this long */

static const char *const secret_words[] = {
	"password", "passwd", "pwd", "token", "secret", "key", "credential",
	"auth", "private", "cookie", "session", "signature", "cert",
};

/* Nomad's own field names that contain a secret word but hold none. */
static const char *const not_secret[] = {
	"SecretsMB",		/* the size of a task's secrets directory */
};

int
redact_name_is_secret(const char *name)
{
	char	 leaf[256], *p;
	size_t	 i;

	for (i = 0; i < sizeof(not_secret) / sizeof(not_secret[0]); i++)
		if (strcmp(name, not_secret[i]) == 0)
			return 0;

	/* Any part of a flattened name counts: "auth[username]" too. */
	strlcpy(leaf, name, sizeof(leaf));
	for (p = leaf; *p != '\0'; p++)
		*p = tolower((unsigned char)*p);
	for (i = 0; i < sizeof(secret_words) / sizeof(secret_words[0]); i++)
		if (strstr(leaf, secret_words[i]) != NULL)
			return 1;
	return 0;
}

/*
 * A value that looks like a generated secret: long, one "word" of
 * token characters, with both letters and digits (image names, paths and
 * sentences have dots, slashes or spaces), or a PEM block, or a JWT.
 */
int
redact_value_looks_secret(const char *v)
{
	size_t	 n = 0;
	int	 alpha = 0, digit = 0;

	if (strstr(v, "-----BEGIN ") != NULL)
		return 1;
	if (strncmp(v, "eyJ", 3) == 0 && strchr(v, '.') != NULL)
		return 1;	/* a JWT */
	for (; *v != '\0'; v++, n++) {
		if (isalpha((unsigned char)*v))
			alpha = 1;
		else if (isdigit((unsigned char)*v))
			digit = 1;
		else if (strchr("+/=_-", *v) == NULL)
			return 0;
	}
	return n >= SECRET_MIN_LEN && alpha && digit;
}

char *
redact_url_credentials(const char *s)
{
	const char	*p, *start, *at;
	char		*out, *o;
	size_t		 len = strlen(s);

	if ((out = malloc(len + sizeof(REDACTED) * (len / 4 + 1) + 1)) == NULL)
		return NULL;
	o = out;
	p = s;
	while ((start = strstr(p, "://")) != NULL) {
		start += 3;
		/*
		 * userinfo ends at '@' before the next '/', '?', '#' or space
		 */
		at = start + strcspn(start, "@/?# \t\n");
		memcpy(o, p, start - p);
		o += start - p;
		if (*at == '@' && at > start) {
			memcpy(o, REDACTED, strlen(REDACTED));
			o += strlen(REDACTED);
			p = at;
		} else
			p = start;
	}
	strcpy(o, p);
	return out;
}

/* "--password=x", "TOKEN=x": the name decides, the value goes. */
static int
redact_assignment(json_t *field, const char *key)
{
	const char	*v = json_string_value(json_object_get(field, key));
	const char	*eq;
	char		 name[256], *nv;
	size_t		 n;

	if (v == NULL || (eq = strchr(v, '=')) == NULL || eq == v)
		return 0;
	n = eq - v;
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, v, n);
	name[n] = '\0';
	while (name[0] == '-')
		memmove(name, name + 1, strlen(name));
	if (!redact_name_is_secret(name))
		return 0;
	if ((nv = malloc(n + 1 + sizeof(REDACTED))) == NULL)
		return 0;
	memcpy(nv, v, eq - v + 1);
	strcpy(nv + (eq - v) + 1, REDACTED);
	json_object_set_new(field, key, jsonb_str(nv));
	free(nv);
	return 1;
}

static int
redact_value(json_t *field, const char *key)
{
	const char	*v = json_string_value(json_object_get(field, key));

	if (v == NULL || *v == '\0')
		return 0;	/* "" means absent on that side of the diff */
	json_object_set_new(field, key, jsonb_str(REDACTED));
	return 1;
}

static int
redact_url_value(json_t *field, const char *key)
{
	const char	*v = json_string_value(json_object_get(field, key));
	char		*nv;
	int		 changed;

	if (v == NULL || strstr(v, "://") == NULL)
		return 0;
	if ((nv = redact_url_credentials(v)) == NULL)
		return 0;
	changed = strcmp(nv, v) != 0;
	if (changed)
		json_object_set_new(field, key, jsonb_str(nv));
	free(nv);
	return changed;
}

static int
redact_fields(json_t *fields, const char *object)
{
	json_t		*f;
	const char	*name, *prev = NULL;
	size_t		 i;
	int		 n = 0, all, flag;

	/* Every value of an environment, a secret or a vault block goes. */
	all = object != NULL && (strcmp(object, "Env") == 0 ||
	    strcmp(object, "Secret") == 0 || strcmp(object, "Vault") == 0);
	json_array_foreach(fields, i, f) {
		name = json_string_value(json_object_get(f, "Name"));
		if (name == NULL)
			continue;
		flag = prev != NULL && strncmp(name, "args[", 5) == 0 &&
		    redact_name_is_secret(prev);
		prev = NULL;
		if (strncmp(name, "args[", 5) == 0) {
			const char *v = json_string_value(json_object_get(f,
			    "New"));
			if (v == NULL || *v == '\0')
				v = json_string_value(json_object_get(f,
				    "Old"));
			if (v != NULL && v[0] == '-' && strchr(v, '=') == NULL)
				prev = v;
		}
		if (all || flag || strncmp(name, "Env[", 4) == 0 ||
		    strcmp(name, "EmbeddedTmpl") == 0 ||
		    redact_name_is_secret(name)) {
			n += redact_value(f, "Old");
			n += redact_value(f, "New");
			continue;
		}
		n += redact_url_value(f, "Old");
		n += redact_url_value(f, "New");
		n += redact_assignment(f, "Old");
		n += redact_assignment(f, "New");
		if (json_string_value(json_object_get(f, "Old")) != NULL &&
		    redact_value_looks_secret(json_string_value(
		    json_object_get(f, "Old"))))
			n += redact_value(f, "Old");
		if (json_string_value(json_object_get(f, "New")) != NULL &&
		    redact_value_looks_secret(json_string_value(
		    json_object_get(f, "New"))))
			n += redact_value(f, "New");
	}
	return n;
}

static int
redact_objects(json_t *objects, int inherit_all)
{
	json_t		*o;
	const char	*name;
	size_t		 i;
	int		 n = 0, all;

	json_array_foreach(objects, i, o) {
		name = json_string_value(json_object_get(o, "Name"));
		all = inherit_all || (name != NULL &&
		    (strcmp(name, "Env") == 0 || strcmp(name, "Secret") == 0 ||
		    strcmp(name, "Vault") == 0 ||
		    redact_name_is_secret(name)));
		n += redact_fields(json_object_get(o, "Fields"),
		    all ? "Env" : name);
		n += redact_objects(json_object_get(o, "Objects"), all);
	}
	return n;
}

static int
redact_level(json_t *d)
{
	int	 n = 0;

	n += redact_fields(json_object_get(d, "Fields"), NULL);
	n += redact_objects(json_object_get(d, "Objects"), 0);
	return n;
}

int
redact_diff(json_t *diff)
{
	json_t	*tg, *task;
	size_t	 i, j;
	int	 n;

	if (!json_is_object(diff))
		return 0;
	n = redact_level(diff);
	json_array_foreach(json_object_get(diff, "TaskGroups"), i, tg) {
		n += redact_level(tg);
		json_array_foreach(json_object_get(tg, "Tasks"), j, task)
			n += redact_level(task);
	}
	return n;
}

/*
 * Free text (a hook's output), redacted like a diff: in each
 * blank-separated word, the value of "name=value" or "name: value" when
 * the name says secret, a word that looks like a generated secret, and
 * credentials in URLs.  Returns a new string (NULL on memory failure).
 */
char *
redact_text(const char *s, size_t len)
{
	char	*in, *out, *o, *w, *sep, *u;
	size_t	 i, j, cap;
	int	 next_secret = 0;

	if ((in = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(in, s, len);
	in[len] = '\0';
	cap = len + 1 + (len / 2 + 1) * sizeof(REDACTED);
	if ((out = malloc(cap)) == NULL) {
		free(in);
		return NULL;
	}
	o = out;
	for (i = 0; i < len;) {
		if (in[i] == ' ' || in[i] == '\t' || in[i] == '\n' ||
		    in[i] == '\r' || in[i] == '\0') {
			/* s: the end of the word before was cut in in. */
			if (s[i] == '\n')
				next_secret = 0;
			*o++ = s[i] == '\0' ? ' ' : s[i];
			i++;
			continue;
		}
		for (j = i; j < len && in[j] != ' ' && in[j] != '\t' &&
		    in[j] != '\n' && in[j] != '\r' && in[j] != '\0'; j++)
			;
		w = in + i;
		in[j < len ? j : len] = '\0';
		if (next_secret) {
			/* "password: hunter2": the word after the name. */
			o = stpcpy(o, REDACTED);
			next_secret = 0;
		} else if ((sep = strpbrk(w, "=:")) != NULL && sep > w &&
		    sep[1] != '/' && (*sep = '\0', redact_name_is_secret(w))) {
			o = stpcpy(o, w);
			*o++ = sep == w ? '=' : (s[(sep - in)] == ':' ? ':' :
			    '=');
			if (sep[1] != '\0')
				o = stpcpy(o, REDACTED);
			else
				next_secret = 1;
		} else {
			if (sep != NULL)
				*sep = s[sep - in];
			if (redact_value_looks_secret(w))
				o = stpcpy(o, REDACTED);
			else if ((u = redact_url_credentials(w)) != NULL) {
				o = stpcpy(o, u);
				free(u);
			} else
				o = stpcpy(o, w);
		}
		i = j;
	}
	*o = '\0';
	free(in);
	return out;
}
