/*
 * nopsctl check FILE...: job files checked offline, as nopsd would judge
 * their nops_ meta keys and hooks, before they are pushed.  Nomad is not
 * asked: a small reader of HCL's native syntax (shared/hcl.c) finds the
 * job block, its namespace, type, parameterized block and meta, with the
 * line of each, and reports a syntax error (an unclosed string, block or
 * comment) with its line.  What only Nomad can judge (the job's fields,
 * expressions that need variables) is left to it; a meta value set by an
 * expression is said to be unchecked.  Errors and warnings are FILE:LINE:
 * lines.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <ctype.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "nopsctl.h"
#include "meta.h"
#include "hcl.h"
#include "nops.h"
#include "plan.h"
#include "../master/schema.h"
#include "text.h"
#include "xmalloc.h"

#define CHECK_FILE_MAX		(16 * 1024 * 1024)
#define CHECK_META_MAX		64
#define CHECK_ISSUES_MAX	64
#define CHECK_FILES_MAX		10000

struct meta_ent {
	char		*key;
	char		*value;		/* NULL: set by an expression */
	int		 line;
};

struct issue {
	int		 line;
	int		 error;
	char		 msg[300];
};

struct jobfile {
	char		*path;
	char		*data;
	size_t		 len;

	/* what was found */
	char		*job;
	int		 job_line;
	int		 njobs;
	char		*ns;
	char		*type;
	int		 parameterized;
	struct meta_ent	 meta[CHECK_META_MAX];
	size_t		 nmeta;
	int		 meta_line;
	struct job_meta	 jm;

	int		 plan;		/* a nops.plan.json */
	size_t		 plan_hosts;
	size_t		 plan_phases;

	struct issue	 issues[CHECK_ISSUES_MAX];
	size_t		 nissues;
	int		 errors;
};

static void	 jf_issue(struct jobfile *, int, int, const char *, ...)
		    __attribute__((__format__(printf, 4, 5)));

static void
jf_issue(struct jobfile *jf, int line, int error, const char *fmt, ...)
{
	struct issue	*is;
	va_list		 ap;

	if (error)
		jf->errors++;
	if (jf->nissues == CHECK_ISSUES_MAX)
		return;
	is = &jf->issues[jf->nissues++];
	is->line = line;
	is->error = error;
	va_start(ap, fmt);
	text_vprintf(is->msg, sizeof(is->msg), 0, fmt, ap);
	va_end(ap);
}

static void
jf_meta_add(struct jobfile *jf, const struct hcl_node *k)
{
	struct meta_ent	*m;

	if (jf->nmeta == CHECK_META_MAX)
		return;
	m = &jf->meta[jf->nmeta++];
	m->key = xstrdup(k->hn_name);
	m->value = xstrdup(k->hn_value);
	m->line = k->hn_line;
}

/* nops_ keys in a group's or a task's meta: nops does not read them. */
static void
jf_inner_meta(struct jobfile *jf, const struct hcl_node *n)
{
	const struct hcl_node	*c, *k;

	for (c = n->hn_child; c != NULL; c = c->hn_next) {
		if (strcmp(c->hn_name, "meta") == 0 && (c->hn_block ||
		    c->hn_object)) {
			for (k = c->hn_child; k != NULL; k = k->hn_next)
				if (strncmp(k->hn_name, "nops_", 5) == 0)
					jf_issue(jf, k->hn_line, 0, "%s in the "
					    "meta of a %s: nops reads nops_ "
					    "keys from the job's own meta "
					    "only; ignored", k->hn_name,
					    n->hn_name);
		} else if (c->hn_block)
			jf_inner_meta(jf, c);
	}
}

/* What the job block says: its name, namespace, type, meta. */
static void
jf_job(struct jobfile *jf, const struct hcl_node *root)
{
	const struct hcl_node	*j = NULL, *c, *k;

	for (c = root->hn_child; c != NULL; c = c->hn_next) {
		if (!c->hn_block || strcmp(c->hn_name, "job") != 0)
			continue;
		if (++jf->njobs > 1) {
			jf_issue(jf, c->hn_line, 1, "a second job block: a job "
			    "file declares one job (the first is at line %d)",
			    jf->job_line);
			continue;
		}
		j = c;
		jf->job_line = c->hn_line;
		if (c->hn_nlabels != 1)
			jf_issue(jf, c->hn_line, 1, "a job block takes one "
			    "label, its name");
		jf->job = c->hn_nlabels > 0 ?
		    xstrdup(c->hn_labels[0]) : NULL;
	}
	if (j == NULL)
		return;
	for (c = j->hn_child; c != NULL; c = c->hn_next) {
		if (!c->hn_block && strcmp(c->hn_name, "namespace") == 0) {
			free(jf->ns);
			jf->ns = xstrdup(c->hn_value);
		} else if (!c->hn_block && strcmp(c->hn_name, "type") == 0) {
			free(jf->type);
			jf->type = xstrdup(c->hn_value);
		} else if (c->hn_block && strcmp(c->hn_name,
		    "parameterized") == 0)
			jf->parameterized = 1;
		else if (strcmp(c->hn_name, "meta") == 0 && (c->hn_block ||
		    c->hn_object)) {
			jf->meta_line = c->hn_line;
			for (k = c->hn_child; k != NULL; k = k->hn_next)
				jf_meta_add(jf, k);
		} else if (c->hn_block)
			jf_inner_meta(jf, c);
	}
}

/* --------------------------------------------------------- the checks */

static int
jf_read(struct jobfile *jf)
{
	struct stat	 sb;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	if ((fd = open(jf->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fstat(fd, &sb) == -1) {
		jf_issue(jf, 0, 1, "cannot read it: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size > CHECK_FILE_MAX) {
		jf_issue(jf, 0, 1, "not a regular file of at most 16M");
		close(fd);
		return -1;
	}
	if ((jf->data = malloc(sb.st_size + 1)) == NULL)
		err(1, NULL);
	while (off < (size_t)sb.st_size && (n = read(fd, jf->data + off,
	    sb.st_size - off)) > 0)
		off += n;
	close(fd);
	jf->data[off] = '\0';
	jf->len = off;
	if (!text_valid(jf->data, jf->len)) {
		jf_issue(jf, 1, 1, "not UTF-8 text");
		return -1;
	}
	return 0;
}

/* The line of the first meta key named key, or of the meta block. */
static int
jf_meta_line(struct jobfile *jf, const char *key)
{
	size_t	 i;

	for (i = 0; i < jf->nmeta; i++)
		if (strcmp(jf->meta[i].key, key) == 0)
			return jf->meta[i].line;
	return jf->meta_line > 0 ? jf->meta_line : jf->job_line;
}

/* A file's name is nops.plan.json: a deploy plan (nops-plan(5)). */
static int
jf_is_plan(const char *path)
{
	const char	*base = strrchr(path, '/');

	return strcmp(base != NULL ? base + 1 : path, GITW_PLAN_FILE) == 0;
}

/* A deploy plan, checked as nopsd checks one (shared/plan.c). */
static void
jf_check_plan(struct jobfile *jf)
{
	struct plan	*pl;
	size_t		 i;

	plan_set_schema_check(schema_usable);
	if ((pl = plan_parse(jf->data, jf->len)) == NULL)
		err(1, NULL);
	for (i = 0; i < pl->pl_nerrors; i++)
		jf_issue(jf, 0, 1, "%s", pl->pl_errors[i]);
	if (pl->pl_nerrors_all > pl->pl_nerrors)
		jf_issue(jf, 0, 1, "and %zu more errors",
		    pl->pl_nerrors_all - pl->pl_nerrors);
	for (i = 0; i < pl->pl_nwarnings; i++)
		jf_issue(jf, 0, 0, "%s", pl->pl_warnings[i]);
	jf->plan = 1;
	jf->plan_hosts = pl->pl_nhosts;
	jf->plan_phases = pl->pl_nphases;
	plan_free(pl);
}

static void
jf_check(struct jobfile *jf)
{
	struct hcl_node	*root;
	json_t		*meta;
	char		 why[256];
	size_t		 i;
	int		 line;

	if (jf_read(jf) == -1)
		return;
	if (jf_is_plan(jf->path)) {
		jf_check_plan(jf);
		return;
	}
	if ((root = hcl_parse(jf->data, jf->len, why, sizeof(why),
	    &line)) == NULL) {
		jf_issue(jf, line, 1, "%s", why);
		return;
	}
	jf_job(jf, root);
	hcl_free(root);
	if (jf->njobs == 0) {
		jf_issue(jf, 1, 1, "no job block");
		return;
	}
	meta = json_object();
	for (i = 0; i < jf->nmeta; i++) {
		if (jf->meta[i].value != NULL)
			json_object_set_new(meta, jf->meta[i].key,
			    json_string(jf->meta[i].value));
		else if (strncmp(jf->meta[i].key, "nops_", 5) == 0)
			jf_issue(jf, jf->meta[i].line, 0, "%s is set by an "
			    "expression: Nomad computes it, not checked "
			    "offline", jf->meta[i].key);
	}
	meta_read(meta, &jf->jm);
	json_decref(meta);
	for (i = 0; i < jf->jm.jm_nissues; i++)
		jf_issue(jf, jf_meta_line(jf, jf->jm.jm_issues[i].mi_key),
		    jf->jm.jm_issues[i].mi_severity == META_ERROR,
		    "%s: %s", jf->jm.jm_issues[i].mi_key,
		    jf->jm.jm_issues[i].mi_msg);
	if (jf->jm.jm_role == META_HOOK && (jf->type == NULL ||
	    strcmp(jf->type, "batch") != 0 || !jf->parameterized))
		jf_issue(jf, jf->job_line, 1, "a hook must be a batch, "
		    "parameterized job (type = \"batch\" and a parameterized "
		    "block)");
}

static const char *
jf_ns(const struct jobfile *jf)
{
	return jf->ns != NULL ? jf->ns : "default";
}

/* Across the files: one job per name, and the hooks a job names. */
static void
check_across(struct jobfile *jfs, size_t n)
{
	struct jobfile	*jf, *h;
	char		**names;
	size_t		 i, j, k, m, nnames;
	int		 line;

	for (i = 0; i < n; i++) {
		jf = &jfs[i];
		if (jf->job == NULL)
			continue;
		for (j = 0; j < n; j++)
			if (j != i && jfs[j].job != NULL &&
			    strcmp(jfs[j].job, jf->job) == 0 &&
			    strcmp(jf_ns(&jfs[j]), jf_ns(jf)) == 0)
				jf_issue(jf, jf->job_line, 1, "job %s/%s is "
				    "also declared in %s: nopsd ignores both",
				    jf_ns(jf), jf->job, jfs[j].path);
		if (jf->jm.jm_role != META_MANAGED)
			continue;
		for (k = 0; k < 2; k++) {
			names = k == 0 ? jf->jm.jm_pre : jf->jm.jm_post;
			nnames = k == 0 ? jf->jm.jm_npre : jf->jm.jm_npost;
			line = jf_meta_line(jf, k == 0 ? "nops_pre_hook" :
			    "nops_post_hook");
			for (j = 0; j < nnames; j++) {
				for (h = NULL, m = 0; h == NULL && m < n; m++)
					if (jfs[m].job != NULL &&
					    strcmp(jfs[m].job, names[j]) == 0 &&
					    strcmp(jf_ns(&jfs[m]), jf_ns(jf)) ==
					    0)
						h = &jfs[m];
				if (h == NULL)
					jf_issue(jf, line, 0, "%s hook %s: not "
					    "among the files checked",
					    k == 0 ? "pre" : "post", names[j]);
				else if (h->jm.jm_role != META_HOOK)
					jf_issue(jf, line, 1,
					    "%s hook %s: %s is not a hook "
					    "(nops_role = \"hook\")",
					    k == 0 ? "pre" : "post", names[j],
					    h->path);
				else if (h->errors > 0)
					jf_issue(jf, line, 1, "%s hook %s is "
					    "invalid (see %s)", k == 0 ? "pre" :
					    "post", names[j], h->path);
			}
		}
	}
}

static int
check_is_job_name(const char *name)
{
	size_t	 len = strlen(name);

	return (len > 10 && strcmp(name + len - 10, ".nomad.hcl") == 0) ||
	    (len > 6 && strcmp(name + len - 6, ".nomad") == 0) ||
	    strcmp(name, GITW_PLAN_FILE) == 0;
}

/* FILE, or every *.nomad.hcl and *.nomad below a directory. */
static void
check_collect(const char *path, char ***out, size_t *n, int top)
{
	struct stat	 sb;
	struct dirent	**ents;
	char		*p;
	int		 i, k;

	if (*n >= CHECK_FILES_MAX)
		errx(EXIT_ANSWER, "more than %d files to check",
		    CHECK_FILES_MAX);
	if (top && (stat(path, &sb) == -1 || !S_ISDIR(sb.st_mode))) {
		/* A file, or a name whose error the check reports. */
		if ((*out = reallocarray(*out, *n + 1, sizeof(**out))) == NULL)
			err(1, NULL);
		(*out)[(*n)++] = xstrdup(path);
		return;
	}
	if ((k = scandir(path, &ents, NULL, alphasort)) == -1) {
		warn("%s", path);
		return;
	}
	for (i = 0; i < k; i++) {
		if (ents[i]->d_name[0] == '.') {
			free(ents[i]);
			continue;
		}
		if (asprintf(&p, "%s/%s", path, ents[i]->d_name) == -1)
			err(1, NULL);
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
			check_collect(p, out, n, 0);
		else if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    check_is_job_name(ents[i]->d_name)) {
			if ((*out = reallocarray(*out, *n + 1,
			    sizeof(**out))) == NULL)
				err(1, NULL);
			(*out)[(*n)++] = p;
			p = NULL;
		}
		free(p);
		free(ents[i]);
	}
	free(ents);
}

static void
check_print(struct jobfile *jfs, size_t n, int json)
{
	struct jobfile	*jf;
	json_t		*all, *o, *iss;
	size_t		 i, j;

	all = json_array();
	for (i = 0; i < n; i++) {
		jf = &jfs[i];
		/* By line, stable: the order an editor shows. */
		for (j = 1; j < jf->nissues; j++) {
			struct issue	 is = jf->issues[j];
			size_t		 k;

			for (k = j; k > 0 && jf->issues[k - 1].line > is.line;
			    k--)
				jf->issues[k] = jf->issues[k - 1];
			jf->issues[k] = is;
		}
		for (j = 0; !json && j < jf->nissues; j++) {
			if (jf->issues[j].line > 0)
				safe_printf("%s:%d: %s: %s\n", jf->path,
				    jf->issues[j].line, jf->issues[j].error ?
				    "error" : "warning", jf->issues[j].msg);
			else
				safe_printf("%s: %s: %s\n", jf->path,
				    jf->issues[j].error ? "error" : "warning",
				    jf->issues[j].msg);
		}
		if (!json && jf->errors == 0 && jf->plan)
			safe_printf("%s: deploy plan: %zu host%s in %zu "
			    "phase%s\n", jf->path, jf->plan_hosts,
			    jf->plan_hosts == 1 ? "" : "s", jf->plan_phases,
			    jf->plan_phases == 1 ? "" : "s");
		if (!json && jf->errors == 0 && jf->job != NULL)
			safe_printf("%s: job %s/%s: %s%s%s\n", jf->path,
			    jf_ns(jf), jf->job, meta_role_str(jf->jm.jm_role),
			    jf->jm.jm_role == META_MANAGED ? ", policy " : "",
			    jf->jm.jm_role == META_MANAGED ?
			    meta_policy_str(jf->jm.jm_policy) : "");
		if (!json)
			continue;
		iss = json_array();
		for (j = 0; j < jf->nissues; j++)
			json_array_append_new(iss, json_pack("{s:o,s:s,s:s}",
			    "line", jf->issues[j].line > 0 ?
			    json_integer(jf->issues[j].line) : json_null(),
			    "severity", jf->issues[j].error ? "error" :
			    "warning", "message", jf->issues[j].msg));
		o = json_pack("{s:s,s:o,s:s,s:s,s:s,s:o}", "file", jf->path,
		    "job", jf->job != NULL ? json_string(jf->job) :
		    json_null(), "namespace", jf_ns(jf),
		    "role", jf->plan ? "plan" : meta_role_str(jf->jm.jm_role),
		    "policy", meta_policy_str(jf->jm.jm_policy),
		    "issues", iss);
		json_array_append_new(all, o);
	}
	if (json)
		ctl_print_json(all);
	json_decref(all);
}

int
cmd_check(struct ctl *ctl, int argc, char **argv)
{
	struct jobfile	*jfs;
	char		**paths = NULL;
	size_t		 n = 0, i, j;
	int		 errors = 0;

	for (i = 0; i < (size_t)argc; i++)
		check_collect(argv[i], &paths, &n, 1);
	if (n == 0)
		errx(EXIT_ANSWER, "no job files (*.nomad.hcl, *.nomad) or "
		    "nops.plan.json to check");
	if ((jfs = calloc(n, sizeof(*jfs))) == NULL)
		err(1, NULL);
	for (i = 0; i < n; i++) {
		jfs[i].path = paths[i];
		jf_check(&jfs[i]);
	}
	check_across(jfs, n);
	check_print(jfs, n, ctl->json);
	for (i = 0; i < n; i++) {
		errors += jfs[i].errors;
		free(jfs[i].path);
		free(jfs[i].data);
		free(jfs[i].job);
		free(jfs[i].ns);
		free(jfs[i].type);
		for (j = 0; j < jfs[i].nmeta; j++) {
			free(jfs[i].meta[j].key);
			free(jfs[i].meta[j].value);
		}
		meta_free(&jfs[i].jm);
	}
	free(jfs);
	free(paths);
	return errors > 0 ? EXIT_ANSWER : 0;
}
