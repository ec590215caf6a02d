/*
 * The evaluated deploy plan (plan.h, man/nops-plan.5): the document
 * and its top level, errors, goals, freeing; plan_parse.h names the
 * other parts.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "plan.h"
#include "plan_parse.h"
#include "xmalloc.h"

static const char *const plan_top_keys[] = {
	"policy", "goal", "meta", "defaults", "hosts", "phases", "tests",
	"infra", "notifyCompleted", NULL
};
static const char *const plan_meta_keys[] = { "sources", "args", NULL };

static void	 plan_vadd(struct plan *, int, const char *,
		    va_list) __attribute__((__format__(printf, 3, 0)));


/* An error (counted, and kept up to PLAN_ERRORS_MAX) or a warning. */
static void
plan_vadd(struct plan *pl, int error, const char *fmt, va_list ap)
{
	char	***list = error ? &pl->pl_errors : &pl->pl_warnings;
	size_t	  *n = error ? &pl->pl_nerrors : &pl->pl_nwarnings;
	char	  *s;

	if (error && pl->pl_nerrors_all++ >= PLAN_ERRORS_MAX)
		return;
	s = xvasprintf(fmt, ap);
	/* cppcheck-suppress memleakOnRealloc ; fatal() exits */
	if ((*list = reallocarray(*list, *n + 1, sizeof(**list))) == NULL)
		fatal("reallocarray");
	(*list)[(*n)++] = s;
}

void
plan_error(struct plan *pl, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	plan_vadd(pl, 1, fmt, ap);
	va_end(ap);
}

void
plan_warn(struct plan *pl, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	plan_vadd(pl, 0, fmt, ap);
	va_end(ap);
}

struct plan *
plan_failed(const char *fmt, ...)
{
	struct plan	*pl;
	va_list		 ap;

	if ((pl = calloc(1, sizeof(*pl))) == NULL)
		return NULL;
	va_start(ap, fmt);
	plan_vadd(pl, 1, fmt, ap);
	va_end(ap);
	return pl;
}

/* Names: [A-Za-z0-9][A-Za-z0-9._-]*, at most PLAN_NAME_MAX. */
int
plan_name_ok(const char *s)
{
	size_t	 len = strlen(s);

	return len > 0 && len <= PLAN_NAME_MAX &&
	    isalnum((unsigned char)s[0]) &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == len;
}

/* /nix/store/<32 of nix base32>-<name>, a name Nix allows. */
int
plan_store_path_ok(const char *s)
{
	const char	*pfx = "/nix/store/", *name;
	size_t		 len;

	if (strncmp(s, pfx, strlen(pfx)) != 0)
		return 0;
	s += strlen(pfx);
	if (strspn(s, "0123456789abcdfghijklmnpqrsvwxyz") != 32 || s[32] != '-')
		return 0;
	name = s + 33;
	len = strlen(name);
	return len > 0 && len <= PLAN_STORE_PATH_MAX && name[0] != '.' &&
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789+-._?=") == len;
}

int
plan_address_ok(const char *s)
{
	size_t	 len = strlen(s);

	return len > 0 && len <= PLAN_ADDRESS_MAX && s[0] != '-' &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.:-") == len;
}

int
plan_user_ok(const char *s)
{
	size_t	 len = strlen(s);

	return len > 0 && len <= PLAN_USER_MAX &&
	    (islower((unsigned char)s[0]) || s[0] == '_') &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

/* "type base64", the way known_hosts and ssh-keyscan write a key. */
int
plan_hostkey_ok(const char *s)
{
	static const char *const types[] = { "ssh-ed25519 ",
	    "ecdsa-sha2-nistp256 ", "ecdsa-sha2-nistp384 ",
	    "ecdsa-sha2-nistp521 ", "ssh-rsa ", NULL };
	size_t	 i, len;

	if (strlen(s) > PLAN_HOSTKEY_MAX)
		return 0;
	for (i = 0; types[i] != NULL; i++)
		if (strncmp(s, types[i], strlen(types[i])) == 0)
			break;
	if (types[i] == NULL)
		return 0;
	s += strlen(types[i]);
	len = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789+/=");
	return len >= 16 && s[len] == '\0';
}

/* Text a command may hold: printable or whitespace, no NUL. */
int
plan_command_ok(const char *s)
{
	size_t	 len = strlen(s);

	if (len == 0 || len > PLAN_COMMAND_MAX)
		return 0;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
			return 0;
	return 1;
}

void
plan_unknown_keys(struct plan *pl, const char *where, json_t *obj,
    const char *const *keys)
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	json_object_foreach(obj, k, v) {
		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(k, keys[i]) == 0)
				break;
		if (keys[i] == NULL)
			plan_error(pl, "%s: unknown attribute \"%.64s\"", where,
			    k);
	}
}

int
plan_timeout(struct plan *pl, const char *where, json_t *v, int def)
{
	if (v == NULL)
		return def;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > PLAN_TIMEOUT_MAX) {
		plan_error(pl, "%s: timeout: not a number of seconds from 1 "
		    "to %d", where, PLAN_TIMEOUT_MAX);
		return def;
	}
	return (int)json_integer_value(v);
}


static json_t *
plan_parse_meta(struct plan *pl, json_t *meta)
{
	json_t		*src, *v;
	const char	*k;

	if (!json_is_object(meta)) {
		plan_error(pl, "meta: not an object");
		return NULL;
	}
	plan_unknown_keys(pl, "meta", meta, plan_meta_keys);
	if ((src = json_object_get(meta, "sources")) != NULL) {
		if (!json_is_object(src))
			plan_error(pl, "meta: sources: not an object");
		else {
			if (json_object_get(src, "default") == NULL)
				plan_error(pl, "meta: sources: no \"default\" "
				    "key");
			json_object_foreach(src, k, v)
				if (!json_is_string(v) ||
				    json_string_length(v) == 0 ||
				    json_string_length(v) > 255)
					plan_error(pl, "meta: sources: %.64s: "
					    "not a source name", k);
		}
	}
	if ((v = json_object_get(meta, "args")) != NULL && !json_is_object(v))
		plan_error(pl, "meta: args: not an object");
	return json_is_object(src) ? src : NULL;
}

struct plan *
plan_parse(const char *text, size_t len)
{
	struct plan	*pl;
	json_t		*root, *v, *def, *hosts, *sources = NULL;
	json_error_t	 jerr;
	const char	*k;
	size_t		 i;

	if (len > PLAN_JSON_MAX)
		return plan_failed("the plan is larger than %d bytes",
		    PLAN_JSON_MAX);
	if ((root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL)
		return plan_failed("not JSON: line %d: %s", jerr.line,
		    jerr.text);
	if ((pl = calloc(1, sizeof(*pl))) == NULL)
		fatal("calloc");
	if (!json_is_object(root)) {
		plan_error(pl, "the plan is not an object");
		json_decref(root);
		return pl;
	}
	plan_unknown_keys(pl, "plan", root, plan_top_keys);
	pl->pl_policy = xstrdup("approval");
	if ((v = json_object_get(root, "policy")) != NULL) {
		if (!json_is_string(v) ||
		    (strcmp(json_string_value(v), "auto") != 0 &&
		    strcmp(json_string_value(v), "approval") != 0))
			plan_error(pl, "policy: not \"auto\" or \"approval\"");
		else {
			free(pl->pl_policy);
			pl->pl_policy = xstrdup(json_string_value(v));
		}
	}
	if ((v = json_object_get(root, "notifyCompleted")) != NULL) {
		if (!json_is_boolean(v))
			plan_error(pl, "notifyCompleted: not true or false");
		else
			pl->pl_notify_completed = json_is_true(v);
	}
	if ((v = json_object_get(root, "goal")) != NULL) {
		if (!json_is_string(v) ||
		    (pl->pl_goal = plan_goal_parse(json_string_value(v))) ==
		    -1) {
			plan_error(pl, "goal: not one of auto, switch, boot, "
			    "test, dry-activate");
			pl->pl_goal = PLAN_GOAL_AUTO;
		}
	}
	if ((v = json_object_get(root, "meta")) != NULL) {
		sources = plan_parse_meta(pl, v);
		pl->pl_meta = json_incref(v);
	}
	if ((def = json_object_get(root, "defaults")) != NULL) {
		if (!json_is_object(def)) {
			plan_error(pl, "defaults: not an object");
			def = NULL;
		} else {
			plan_unknown_keys(pl, "defaults", def,
			    plan_host_keys);
			if (json_object_get(def, "system") != NULL)
				plan_error(pl, "defaults: system: each host "
				    "has its own");
			if (json_object_get(def, "hostKey") != NULL)
				plan_error(pl, "defaults: hostKey: each host "
				    "has its own");
		}
	}
	hosts = json_object_get(root, "hosts");
	if (!json_is_object(hosts) || json_object_size(hosts) == 0 ||
	    json_object_size(hosts) > PLAN_HOSTS_MAX)
		plan_error(pl, "hosts: not an object of 1 to %d hosts",
		    PLAN_HOSTS_MAX);
	else {
		if ((pl->pl_hosts = calloc(json_object_size(hosts),
		    sizeof(*pl->pl_hosts))) == NULL)
			fatal("calloc");
		json_object_foreach(hosts, k, v)
			plan_parse_host(pl, &pl->pl_hosts[pl->pl_nhosts++], k,
			    def, v, sources);
		qsort(pl->pl_hosts, pl->pl_nhosts, sizeof(*pl->pl_hosts),
		    plan_host_cmp);
	}
	plan_parse_phases(pl, json_object_get(root, "phases"));
	if ((v = json_object_get(root, "tests")) != NULL)
		plan_parse_tests(pl, v);
	for (i = 0; i < pl->pl_ntests; i++)
		if (pl->pl_tests[i].pt_host != NULL &&
		    plan_host_find(pl, pl->pl_tests[i].pt_host) == NULL)
			plan_error(pl, "test \"%s\": host: no host \"%.64s\" "
			    "in the plan", pl->pl_tests[i].pt_name != NULL ?
			    pl->pl_tests[i].pt_name : "",
			    pl->pl_tests[i].pt_host);
	if ((v = json_object_get(root, "infra")) != NULL)
		pl->pl_infra = json_incref(v);
	if (pl->pl_nerrors_all == 0)
		plan_assign(pl);
	json_decref(root);
	return pl;
}

const struct plan_host *
plan_host_find(const struct plan *pl, const char *name)
{
	size_t	 lo = 0, hi = pl->pl_nhosts, mid;
	int	 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(name, pl->pl_hosts[mid].ph_name)) == 0)
			return &pl->pl_hosts[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

void
plan_free(struct plan *pl)
{
	struct plan_host	*h;
	size_t			 i, j;

	if (pl == NULL)
		return;
	/*
	 * Alike on purpose: one loop per array of rows (hosts, phases,
	 * tests), each freeing its own row type's members: the free()
	 * calls look alike, the members are all different.
	 */
	for (i = 0; i < pl->pl_nhosts; i++) {
		h = &pl->pl_hosts[i];
		free(h->ph_name);
		free(h->ph_address);
		free(h->ph_user);
		free(h->ph_hostkey);
		for (j = 0; j < h->ph_ntags; j++)
			free(h->ph_tags[j]);
		free(h->ph_tags);
		free(h->ph_system);
		free(h->ph_drv);
		free(h->ph_source);
		for (j = 0; j < h->ph_nchecks; j++) {
			free(h->ph_checks[j].pc_name);
			free(h->ph_checks[j].pc_command);
			free(h->ph_checks[j].pc_http);
		}
		free(h->ph_checks);
		json_decref(h->ph_attrs);
		json_decref(h->ph_operations);
	}
	free(pl->pl_hosts);
	for (i = 0; i < pl->pl_nphases; i++) {
		free(pl->pl_phases[i].pp_name);
		json_decref(pl->pl_phases[i].pp_include);
		free(pl->pl_phases[i].pp_hosts);
	}
	free(pl->pl_phases);
	for (i = 0; i < pl->pl_ntests; i++) {
		free(pl->pl_tests[i].pt_name);
		free(pl->pl_tests[i].pt_build);
		free(pl->pl_tests[i].pt_host);
		free(pl->pl_tests[i].pt_command);
	}
	free(pl->pl_tests);
	for (i = 0; i < pl->pl_nerrors; i++)
		free(pl->pl_errors[i]);
	free(pl->pl_errors);
	for (i = 0; i < pl->pl_nwarnings; i++)
		free(pl->pl_warnings[i]);
	free(pl->pl_warnings);
	json_decref(pl->pl_meta);
	json_decref(pl->pl_infra);
	free(pl->pl_policy);
	free(pl);
}

static const char *const plan_goals[] = {
	"auto", "switch", "boot", "test", "dry-activate", NULL
};

const char *
plan_goal_name(int g)
{
	if (g < 0 || g > PLAN_GOAL_DRY)
		return "auto";
	return plan_goals[g];
}

int
plan_goal_parse(const char *s)
{
	int	 i;

	for (i = 0; plan_goals[i] != NULL; i++)
		if (strcmp(s, plan_goals[i]) == 0)
			return i;
	return -1;
}
