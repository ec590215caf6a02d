/*
 * Reading and validating the nops_* meta keys of a job, Go durations, and
 * the cron expressions of sync windows.  Pure functions: no I/O, so the
 * rules are unit-tested one by one (tests/unit/test_meta.c).  Shared:
 * the master reads a job Nomad parsed, nopsctl check one it parsed
 * itself.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "text.h"
#include "meta.h"
#include "xmalloc.h"

#define META_ID_MAX	128

static void	 meta_issue(struct job_meta *, int, const char *,
		    const char *, ...)
		    __attribute__((__format__(printf, 4, 5)));

static void
meta_issue(struct job_meta *jm, int sev, const char *key, const char *fmt, ...)
{
	struct meta_issue	*mi;
	va_list			 ap;

	if (sev == META_ERROR)
		jm->jm_errors++;
	if (jm->jm_nissues >= META_MAX_ISSUES)
		return;
	/* Most jobs have none: a job table of thousands stays small. */
	if (jm->jm_issues == NULL && (jm->jm_issues = calloc(META_MAX_ISSUES,
	    sizeof(*jm->jm_issues))) == NULL)
		fatal("calloc");
	mi = &jm->jm_issues[jm->jm_nissues++];
	mi->mi_severity = sev;
	text_printf(mi->mi_key, sizeof(mi->mi_key), 0, "%s", key);
	va_start(ap, fmt);
	text_vprintf(mi->mi_msg, sizeof(mi->mi_msg), 0, fmt, ap);
	va_end(ap);
}

const char *
meta_policy_str(enum meta_policy p)
{
	switch (p) {
	case POLICY_AUTO:
		return "auto";
	case POLICY_APPROVAL:
		return "approval";
	default:
		return "none";
	}
}

const char *
meta_role_str(enum meta_role r)
{
	switch (r) {
	case META_MANAGED:
		return "managed";
	case META_HOOK:
		return "hook";
	case META_OPERATION:
		return "operation";
	default:
		return "ignored";
	}
}

/*
 * Go's time.ParseDuration: a sequence of decimal numbers, each with an
 * optional fraction and a unit (ns us µs ms s m h), an optional sign.
 * Negative durations are refused here: no nops duration may be negative.
 */
int64_t
go_duration_ns(const char *s)
{
	static const struct {
		const char	*u;
		double		 ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 },
		{ "\xce\xbcs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 },
	};
	double	 total = 0, v, frac;
	size_t	 i, n, best;
	int	 digits;

	if (s == NULL)
		return -1;
	if (*s == '+')
		s++;
	if (strcmp(s, "0") == 0)
		return 0;
	if (*s == '\0')
		return -1;
	while (*s != '\0') {
		v = 0;
		digits = 0;
		while (isdigit((unsigned char)*s)) {
			v = v * 10 + (*s++ - '0');
			digits++;
		}
		if (*s == '.') {
			s++;
			frac = 0.1;
			while (isdigit((unsigned char)*s)) {
				v += (*s++ - '0') * frac;
				frac /= 10;
				digits++;
			}
		}
		if (digits == 0)
			return -1;
		/* The longest unit that matches ("ms" before "m"). */
		best = sizeof(units) / sizeof(units[0]);
		n = 0;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].u);
			if (strncmp(s, units[i].u, l) == 0 && l > n) {
				best = i;
				n = l;
			}
		}
		if (best == sizeof(units) / sizeof(units[0]))
			return -1;
		s += n;
		total += v * units[best].ns;
		if (total > 9.2e18)
			return -1;
	}
	return (int64_t)total;
}

static int
meta_duration(struct job_meta *jm, const char *key, const char *val,
    int max, int *out)
{
	int64_t	 ns = go_duration_ns(val);

	if (ns <= 0) {
		meta_issue(jm, META_ERROR, key, "\"%s\" is not a positive "
		    "duration (like \"90s\", \"10m\", \"1h30m\")", val);
		return -1;
	}
	if (ns / 1000000000 > max || ns < 1000000000) {
		meta_issue(jm, META_ERROR, key, "\"%s\" is out of range "
		    "(1s to %dh)", val, max / 3600);
		return -1;
	}
	*out = (int)(ns / 1000000000);
	return 0;
}

/* Nomad job IDs: printable, no spaces; nops also bounds the length. */
static int
meta_valid_id(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++, n++)
		if (!isgraph((unsigned char)*s))
			return 0;
	return n > 0 && n <= META_ID_MAX;
}

static void
meta_list(struct job_meta *jm, const char *key, const char *val,
    char **list, size_t *nlist, const char *what, size_t max)
{
	char	*copy, *p, *tok, *end;
	size_t	 i;

	if ((copy = strdup(val)) == NULL)
		abort();
	for (p = copy; (tok = strsep(&p, ",")) != NULL;) {
		while (isspace((unsigned char)*tok))
			tok++;
		end = tok + strlen(tok);
		while (end > tok && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (*tok == '\0') {
			meta_issue(jm, META_ERROR, key, "empty %s name in "
			    "\"%s\"", what, val);
			continue;
		}
		if (!meta_valid_id(tok)) {
			meta_issue(jm, META_ERROR, key, "\"%s\" is not a "
			    "valid job ID", tok);
			continue;
		}
		for (i = 0; i < *nlist; i++)
			if (strcmp(list[i], tok) == 0)
				break;
		if (i < *nlist) {
			meta_issue(jm, META_ERROR, key, "%s \"%s\" is "
			    "listed twice", what, tok);
			continue;
		}
		if (*nlist >= max) {
			meta_issue(jm, META_ERROR, key, "more than %zu %ss",
			    max, what);
			break;
		}
		if ((list[(*nlist)++] = strdup(tok)) == NULL)
			abort();
	}
	free(copy);
}

static const char *const meta_known[] = {
	"nops_managed", "nops_role", "nops_policy",
	"nops_pre_hook", "nops_post_hook",
	"nops_pre_hook_timeout", "nops_post_hook_timeout",
	"nops_sync_window", "nops_sync_window_duration",
	"nops_notify_completed",
	"nops_operations", "nops_operation_of", "nops_input_schema",
	"nops_input_schema_file", "nops_sensitive", "nops_description",
	"nops_confirm",
};

static const char *
meta_get(const json_t *meta, const char *key)
{
	return json_string_value(json_object_get(meta, key));
}

/*
 * The path of an operation's schema file: relative to the job file's
 * directory, below it, named *.schema.json (what a snapshot carries,
 * gitworker/git_snap.c).  NULL when fine, else why not.
 */
static const char *
meta_schema_path(const char *v)
{
	const char	*p;
	size_t		 len;

	len = strlen(v);
	if (len > META_SCHEMA_PATH_MAX)
		return "is longer than 255 bytes";
	if (v[0] == '/')
		return "is absolute: it is relative to the job file's "
		    "directory";
	for (p = v; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
			return "holds a control character or a backslash";
	if (!text_path_parts_ok(v))
		return "has an empty, \".\" or \"..\" part: it names a file "
		    "below the job file's directory";
	p = strrchr(v, '/') != NULL ? strrchr(v, '/') + 1 : v;
	if (strlen(p) <= 12 || strcmp(p + strlen(p) - 12, ".schema.json") != 0)
		return "is not named <name>.schema.json";
	return NULL;
}

/*
 * Operations: a managed job lists them (nops_operations); an operation
 * job names the job it serves and may give its input's JSON Schema
 * (checked where it is used: master/operation.c), whether its output is
 * sensitive, a description and a confirmation question.
 */
static void
meta_read_operation(struct job_meta *jm, const json_t *meta)
{
	static const char *const op_keys[] = { "nops_operation_of",
	    "nops_input_schema", "nops_input_schema_file", "nops_sensitive",
	    "nops_description", "nops_confirm" };
	const char	*v;
	json_t		*schema;
	json_error_t	 je;
	size_t		 i;

	if ((v = meta_get(meta, "nops_operations")) != NULL) {
		if (jm->jm_role != META_MANAGED)
			meta_issue(jm, META_WARN, "nops_operations", "ignored: "
			    "the job is not managed");
		else {
			/* Most jobs have none: the list is made when needed. */
			if ((jm->jm_ops = calloc(META_MAX_OPERATIONS,
			    sizeof(*jm->jm_ops))) == NULL)
				abort();
			jm->jm_nops = 0;	/* a fresh list */
			meta_list(jm, "nops_operations", v, jm->jm_ops,
			    &jm->jm_nops, "operation", META_MAX_OPERATIONS);
		}
	}
	if (jm->jm_role != META_OPERATION) {
		for (i = 0; i < sizeof(op_keys) / sizeof(op_keys[0]); i++)
			if (meta_get(meta, op_keys[i]) != NULL)
				meta_issue(jm, META_WARN, op_keys[i],
				    "ignored: the job is not an operation "
				    "(nops_role = \"operation\")");
		return;
	}
	if ((v = meta_get(meta, "nops_operation_of")) == NULL)
		meta_issue(jm, META_ERROR, "nops_operation_of", "missing: an "
		    "operation names the managed job it serves");
	else if (!meta_valid_id(v))
		meta_issue(jm, META_ERROR, "nops_operation_of", "\"%s\" is "
		    "not a valid job ID", v);
	else
		jm->jm_op_of = xstrdup(v);
	if ((v = meta_get(meta, "nops_input_schema")) != NULL) {
		schema = json_loads(v, 0, &je);
		if (!json_is_object(schema) && !json_is_boolean(schema))
			meta_issue(jm, META_ERROR, "nops_input_schema", "not a "
			    "JSON Schema (an object): %s", schema == NULL ?
			    je.text : "another JSON value");
		else
			jm->jm_input_schema = xstrdup(v);
		json_decref(schema);
	}
	if ((v = meta_get(meta, "nops_input_schema_file")) != NULL) {
		const char	*why;

		if (meta_get(meta, "nops_input_schema") != NULL)
			meta_issue(jm, META_ERROR, "nops_input_schema_file",
			    "given with nops_input_schema: an operation's "
			    "schema is inline or in a file, not both");
		else if ((why = meta_schema_path(v)) != NULL)
			meta_issue(jm, META_ERROR, "nops_input_schema_file",
			    "\"%.200s\" %s", v, why);
		else
			jm->jm_input_schema_file = xstrdup(v);
	}
	if ((v = meta_get(meta, "nops_sensitive")) != NULL) {
		if (strcmp(v, "true") == 0)
			jm->jm_sensitive = 1;
		else if (strcmp(v, "false") != 0)
			meta_issue(jm, META_ERROR, "nops_sensitive",
			    "\"%s\" is not \"true\" or \"false\"", v);
	}
	jm->jm_description = xstrdup(meta_get(meta, "nops_description"));
	jm->jm_confirm = xstrdup(meta_get(meta, "nops_confirm"));
}

/* Unknown nops_* keys are likely typos: say so, change nothing. */
static void
meta_read_keys(struct job_meta *jm, json_t *meta)
{
	const char	*key;
	json_t		*val;
	size_t		 i;

	json_object_foreach(meta, key, val) {
		if (strncmp(key, "nops_", 5) != 0)
			continue;
		for (i = 0; i < sizeof(meta_known) / sizeof(meta_known[0]); i++)
			if (strcmp(key, meta_known[i]) == 0)
				break;
		if (i == sizeof(meta_known) / sizeof(meta_known[0]))
			meta_issue(jm, META_WARN, key, "unknown nops_ key; "
			    "ignored");
		else if (!json_is_string(val))
			meta_issue(jm, META_ERROR, key, "must be a string");
		else if (text_check(json_string_value(val),
		    json_string_length(val)) != NULL)
			meta_issue(jm, META_ERROR, key, "holds %s",
			    text_check(json_string_value(val),
			    json_string_length(val)));
	}
}

/* nops_managed and nops_role: what the job is to nops. */
static void
meta_read_role(struct job_meta *jm, json_t *meta)
{
	const char	*v;

	if ((v = meta_get(meta, "nops_managed")) != NULL) {
		if (strcmp(v, "true") == 0)
			jm->jm_role = META_MANAGED;
		else if (strcmp(v, "false") != 0) {
			/*
			 * Meant to be managed, surely: managed, deploys
			 * nothing.
			 */
			jm->jm_role = META_MANAGED;
			meta_issue(jm, META_ERROR, "nops_managed", "\"%s\" is "
			    "not \"true\" or \"false\" (values are "
			    "case-sensitive)", v);
		}
	}
	if ((v = meta_get(meta, "nops_role")) != NULL) {
		if (strcmp(v, "hook") != 0 && strcmp(v, "operation") != 0)
			meta_issue(jm, META_ERROR, "nops_role", "\"%s\" is not "
			    "a role (they are \"hook\" and \"operation\")", v);
		else if (jm->jm_role == META_MANAGED)
			meta_issue(jm, META_ERROR, "nops_role",
			    "a job cannot be both managed and a %s", v);
		else
			jm->jm_role = strcmp(v, "hook") == 0 ? META_HOOK :
			    META_OPERATION;
	}
}

/*
 * A managed job's hooks and their timeouts: both lists first, then both
 * timeouts, each timeout ignored where its list is empty.
 */
static void
meta_read_hooks(struct job_meta *jm, json_t *meta)
{
	const struct {
		const char	*key, *tkey;
		char		**list;
		size_t		*nlist;
		int		*timeout;
	} hook[] = {
		{ "nops_pre_hook", "nops_pre_hook_timeout", jm->jm_pre,
		    &jm->jm_npre, &jm->jm_pre_timeout },
		{ "nops_post_hook", "nops_post_hook_timeout", jm->jm_post,
		    &jm->jm_npost, &jm->jm_post_timeout },
	};
	const char	*v;
	size_t		 i;

	for (i = 0; i < sizeof(hook) / sizeof(hook[0]); i++) {
		if ((v = meta_get(meta, hook[i].key)) == NULL)
			continue;
		if (jm->jm_role != META_MANAGED)
			meta_issue(jm, META_WARN, hook[i].key, "ignored: the "
			    "job is not managed");
		else
			meta_list(jm, hook[i].key, v, hook[i].list,
			    hook[i].nlist, "hook", META_MAX_HOOKS);
	}
	for (i = 0; i < sizeof(hook) / sizeof(hook[0]); i++) {
		if ((v = meta_get(meta, hook[i].tkey)) == NULL)
			continue;
		if (*hook[i].nlist == 0)
			meta_issue(jm, META_WARN, hook[i].tkey,
			    "ignored: no %s", hook[i].key);
		else
			meta_duration(jm, hook[i].tkey, v, META_MAX_TIMEOUT,
			    hook[i].timeout);
	}
}

/* nops_sync_window and its duration: both or neither, policy auto only. */
static void
meta_read_window(struct job_meta *jm, json_t *meta)
{
	const char	*win, *dur;
	char		 err[128];

	win = meta_get(meta, "nops_sync_window");
	dur = meta_get(meta, "nops_sync_window_duration");
	if (win != NULL && dur == NULL)
		meta_issue(jm, META_ERROR, "nops_sync_window", "needs "
		    "nops_sync_window_duration: how long the window "
		    "stays open");
	else if (win == NULL && dur != NULL)
		meta_issue(jm, META_ERROR, "nops_sync_window_duration", "set "
		    "without nops_sync_window: when the window opens");
	else if (win != NULL) {
		if (cron_parse(win, &jm->jm_window, err, sizeof(err)) == -1)
			meta_issue(jm, META_ERROR, "nops_sync_window",
			    "invalid cron expression \"%s\": %s", win, err);
		else if (meta_duration(jm, "nops_sync_window_duration", dur,
		    META_MAX_WINDOW, &jm->jm_window_duration) == 0) {
			if (jm->jm_policy == POLICY_AUTO)
				jm->jm_has_window = 1;
			else
				meta_issue(jm, META_WARN, "nops_sync_window",
				    "ignored: sync windows apply to policy "
				    "auto only");
		}
	}
}

void
meta_read(json_t *meta, struct job_meta *jm)
{
	const char	*v;

	memset(jm, 0, sizeof(*jm));
	jm->jm_pre_timeout = META_HOOK_TIMEOUT;
	jm->jm_post_timeout = META_HOOK_TIMEOUT;
	if (!json_is_object(meta))
		return;

	meta_read_keys(jm, meta);
	meta_read_role(jm, meta);
	meta_read_operation(jm, meta);
	if ((v = meta_get(meta, "nops_policy")) != NULL) {
		if (jm->jm_role != META_MANAGED)
			meta_issue(jm, META_WARN, "nops_policy", "ignored: the "
			    "job is not managed (nops_managed = \"true\")");
		else if (strcmp(v, "auto") == 0)
			jm->jm_policy = POLICY_AUTO;
		else if (strcmp(v, "approval") == 0)
			jm->jm_policy = POLICY_APPROVAL;
		else if (strcmp(v, "none") != 0)
			meta_issue(jm, META_ERROR, "nops_policy",
			    "\"%s\" is not auto, approval or none", v);
	}
	meta_read_hooks(jm, meta);
	if ((v = meta_get(meta, "nops_notify_completed")) != NULL &&
	    strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
		meta_issue(jm, META_ERROR, "nops_notify_completed", "\"%s\" is "
		    "not \"true\" or \"false\"", v);
	meta_read_window(jm, meta);

	/* Any error: the job deploys nothing until its file is fixed. */
	if (jm->jm_errors > 0) {
		jm->jm_policy = POLICY_NONE;
		jm->jm_has_window = 0;
	}
}

void
meta_free(struct job_meta *jm)
{
	size_t	 i;

	for (i = 0; i < jm->jm_npre; i++)
		free(jm->jm_pre[i]);
	for (i = 0; i < jm->jm_npost; i++)
		free(jm->jm_post[i]);
	for (i = 0; i < jm->jm_nops; i++)
		free(jm->jm_ops[i]);
	free(jm->jm_ops);
	jm->jm_ops = NULL;
	free(jm->jm_op_of);
	free(jm->jm_input_schema);
	free(jm->jm_input_schema_file);
	jm->jm_input_schema_file = NULL;
	free(jm->jm_description);
	free(jm->jm_confirm);
	jm->jm_op_of = jm->jm_input_schema = NULL;
	jm->jm_description = jm->jm_confirm = NULL;
	jm->jm_npre = jm->jm_npost = jm->jm_nops = 0;
	free(jm->jm_issues);
	jm->jm_issues = NULL;
	jm->jm_nissues = 0;
}

/* cron */

static const char *const cron_months[] = { "JAN", "FEB", "MAR", "APR",
    "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
static const char *const cron_days[] = { "SUN", "MON", "TUE", "WED", "THU",
    "FRI", "SAT" };

static int
cron_value(const char **sp, int lo, int hi, const char *const *names,
    int nnames, int namebase, int *out)
{
	const char	*s = *sp;
	int		 i, v = 0, digits = 0;

	if (names != NULL && isalpha((unsigned char)*s)) {
		for (i = 0; i < nnames; i++)
			if (strncasecmp(s, names[i], 3) == 0 &&
			    !isalpha((unsigned char)s[3])) {
				*out = namebase + i;
				*sp = s + 3;
				return 0;
			}
		return -1;
	}
	while (isdigit((unsigned char)*s) && digits < 4) {
		v = v * 10 + (*s++ - '0');
		digits++;
	}
	if (digits == 0 || isdigit((unsigned char)*s) || v < lo || v > hi)
		return -1;
	*out = v;
	*sp = s;
	return 0;
}

/* One field: a comma list of *, N, N-M, each with an optional /step. */
static int
cron_field(const char *f, int lo, int hi, const char *const *names,
    int nnames, int namebase, uint64_t *bits, int *star)
{
	const char	*s = f;
	int		 a, b, step, v, single;

	*bits = 0;
	*star = strcmp(f, "*") == 0 || strcmp(f, "?") == 0;
	for (;;) {
		single = 0;
		if (*s == '*' || *s == '?') {
			a = lo;
			b = hi;
			s++;
		} else {
			single = 1;
			if (cron_value(&s, lo, hi, names, nnames, namebase,
			    &a) == -1)
				return -1;
			b = a;
			if (*s == '-') {
				single = 0;
				s++;
				if (cron_value(&s, lo, hi, names, nnames,
				    namebase, &b) == -1 || b < a)
					return -1;
			}
		}
		step = 1;
		if (*s == '/') {
			s++;
			if (cron_value(&s, 1, hi, NULL, 0, 0, &step) == -1)
				return -1;
			if (single)
				b = hi;	/* "5/15" means 5-hi/15 */
		}
		for (v = a; v <= b; v += step)
			*bits |= 1ULL << v;
		if (*s == ',') {
			s++;
			continue;
		}
		return *s == '\0' ? 0 : -1;
	}
}

int
cron_parse(const char *expr, struct cron *cr, char *err, size_t errlen)
{
	static const struct {
		const char	*name;
		const char	*expr;
	} shorthands[] = {
		{ "@yearly", "0 0 1 1 *" }, { "@annually", "0 0 1 1 *" },
		{ "@monthly", "0 0 1 * *" }, { "@weekly", "0 0 * * 0" },
		{ "@daily", "0 0 * * *" }, { "@midnight", "0 0 * * *" },
		{ "@hourly", "0 * * * *" },
	};
	/* The five fields in order: their range and names. */
	static const struct {
		const char		*what;
		int			 lo, hi;
		const char *const	*names;
		int			 nnames, namebase;
	} cf[5] = {
		{ "minute", 0, 59, NULL, 0, 0 },
		{ "hour", 0, 23, NULL, 0, 0 },
		{ "day of month", 1, 31, NULL, 0, 0 },
		{ "month", 1, 12, cron_months, 12, 1 },
		{ "day of week", 0, 7, cron_days, 7, 0 },
	};
	char		 buf[256], *fields[6], *p, *tok;
	uint64_t	 bits[5];
	size_t		 i;
	int		 n = 0, star[5];

	memset(cr, 0, sizeof(*cr));
	for (i = 0; i < sizeof(shorthands) / sizeof(shorthands[0]); i++)
		if (strcasecmp(expr, shorthands[i].name) == 0)
			expr = shorthands[i].expr;
	if (strlen(expr) >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -1;
	}
	strlcpy(buf, expr, sizeof(buf));
	for (p = buf; (tok = strsep(&p, " \t")) != NULL;) {
		if (*tok == '\0')
			continue;
		if (n == 5) {
			n++;
			break;
		}
		fields[n++] = tok;
	}
	if (n != 5) {
		snprintf(err, errlen, "expected 5 fields (minute hour "
		    "day-of-month month day-of-week) or a shorthand like "
		    "@daily");
		return -1;
	}
	for (i = 0; i < 5; i++)
		if (cron_field(fields[i], cf[i].lo, cf[i].hi, cf[i].names,
		    cf[i].nnames, cf[i].namebase, &bits[i], &star[i]) == -1) {
			snprintf(err, errlen, "bad %s field \"%s\"", cf[i].what,
			    fields[i]);
			return -1;
		}
	if (bits[4] & (1ULL << 7))	/* 7 is Sunday too */
		bits[4] |= 1;
	cr->cr_min = bits[0];
	cr->cr_hour = (uint32_t)bits[1];
	cr->cr_dom = (uint32_t)bits[2];
	cr->cr_dom_star = star[2];
	cr->cr_mon = (uint16_t)bits[3];
	cr->cr_dow = (uint8_t)(bits[4] & 0x7f);
	cr->cr_dow_star = star[4];
	return 0;
}

static int
cron_day_match(const struct cron *cr, const struct tm *tm)
{
	int	 dom = (cr->cr_dom >> tm->tm_mday) & 1;
	int	 dow = (cr->cr_dow >> tm->tm_wday) & 1;

	if (!((cr->cr_mon >> (tm->tm_mon + 1)) & 1))
		return 0;
	/* As in cron: when both days are restricted, either one matches. */
	if (!cr->cr_dom_star && !cr->cr_dow_star)
		return dom || dow;
	return dom && dow;
}

int
cron_match(const struct cron *cr, time_t t)
{
	struct tm	 tm;

	if (gmtime_r(&t, &tm) == NULL)
		return 0;
	return cron_day_match(cr, &tm) && ((cr->cr_hour >> tm.tm_hour) & 1) &&
	    ((cr->cr_min >> tm.tm_min) & 1);
}

/*
 * Open if the window opened at a minute in (now - duration, now].  Walk
 * back a day or an hour at a time when the day or hour cannot match, so
 * a month-long window costs at most a few thousand steps.
 */
int
meta_window_open(const struct job_meta *jm, time_t now)
{
	const struct cron	*cr = &jm->jm_window;
	struct tm		 tm;
	time_t			 t, oldest;

	if (!jm->jm_has_window)
		return 1;
	t = now - now % 60;
	oldest = now - jm->jm_window_duration;
	while (t > oldest) {
		if (gmtime_r(&t, &tm) == NULL)
			return 0;
		if (!cron_day_match(cr, &tm)) {
			t -= (time_t)tm.tm_hour * 3600 + tm.tm_min * 60 + 60;
			continue;
		}
		if (!((cr->cr_hour >> tm.tm_hour) & 1)) {
			t -= (time_t)tm.tm_min * 60 + 60;
			continue;
		}
		if ((cr->cr_min >> tm.tm_min) & 1)
			return 1;
		t -= 60;
	}
	return 0;
}
