/*
 * nopsctl check FILE...: job files checked offline, as nopsd would judge
 * their nops_ meta keys and hooks, before they are pushed.  Nomad is not
 * asked: a small reader of HCL's native syntax finds the job block, its
 * namespace, type, parameterized block and meta, with the line of each,
 * and reports a syntax error (an unclosed string, block or comment) with
 * its line.  What only Nomad can judge (the job's fields, expressions
 * that need variables) is left to it; a meta value set by an expression
 * is said to be unchecked.  Errors and warnings are FILE:LINE: lines.
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
#include "text.h"

#define CHECK_FILE_MAX		(16 * 1024 * 1024)
#define CHECK_META_MAX		64
#define CHECK_ISSUES_MAX	64
#define CHECK_FILES_MAX		10000
#define CHECK_DEPTH_MAX		64

enum tok_type {
	T_EOF = 0,
	T_NL,
	T_IDENT,
	T_STRING,	/* a quoted string or a heredoc */
	T_OTHER,	/* a number, or punctuation in c */
};

struct tok {
	enum tok_type	 type;
	int		 line;
	char		 c;		/* T_OTHER: the character */
	char		*text;		/* T_IDENT, T_STRING (unescaped) */
	int		 interp;	/* T_STRING: holds ${ or %{ */
};

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
	size_t		 pos;
	int		 line;
	int		 failed;	/* a syntax error: stop reading */
	struct tok	 tok;		/* the current token */

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

/* ------------------------------------------------------------- lexer */

static int
lx_peek(struct jobfile *jf, size_t off)
{
	return jf->pos + off < jf->len ? (unsigned char)jf->data[jf->pos + off] :
	    -1;
}

static void
lx_adv(struct jobfile *jf)
{
	if (jf->pos < jf->len && jf->data[jf->pos++] == '\n')
		jf->line++;
}

static void
buf_addc(char **b, size_t *len, size_t *cap, int c)
{
	if (*len + 2 > *cap) {
		*cap = *cap == 0 ? 64 : *cap * 2;
		if ((*b = realloc(*b, *cap)) == NULL)
			err(1, NULL);
	}
	(*b)[(*len)++] = (char)c;
	(*b)[*len] = '\0';
}

/* A quoted string; the opening quote is read.  -1 on an error. */
static int
lx_string(struct jobfile *jf, struct tok *t)
{
	char	*b = NULL;
	size_t	 len = 0, cap = 0;
	int	 c, start = jf->line, depth;

	buf_addc(&b, &len, &cap, '\0');
	len = 0;
	for (;;) {
		c = lx_peek(jf, 0);
		if (c == -1 || c == '\n') {
			free(b);
			jf_issue(jf, start, 1, "syntax error: a string not "
			    "closed on its line");
			return -1;
		}
		lx_adv(jf);
		if (c == '"')
			break;
		if (c == '\\') {
			c = lx_peek(jf, 0);
			lx_adv(jf);
			switch (c) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case '"':
			case '\\':
				break;
			default:
				/* \uNNNN and friends: kept as written. */
				buf_addc(&b, &len, &cap, '\\');
				break;
			}
			buf_addc(&b, &len, &cap, c);
			continue;
		}
		if (c == '$' && lx_peek(jf, 0) == '$' && lx_peek(jf, 1) == '{') {
			/* $${ is a literal ${ */
			lx_adv(jf);
			buf_addc(&b, &len, &cap, '$');
			continue;
		}
		if ((c == '$' || c == '%') && lx_peek(jf, 0) == '{') {
			t->interp = 1;
			buf_addc(&b, &len, &cap, c);
			/* The template: to its closing brace. */
			for (depth = 0;;) {
				c = lx_peek(jf, 0);
				if (c == -1 || c == '\n') {
					free(b);
					jf_issue(jf, start, 1, "syntax error: "
					    "an interpolation not closed on "
					    "its line");
					return -1;
				}
				lx_adv(jf);
				buf_addc(&b, &len, &cap, c);
				if (c == '{')
					depth++;
				else if (c == '}' && --depth == 0)
					break;
			}
			continue;
		}
		buf_addc(&b, &len, &cap, c);
	}
	t->type = T_STRING;
	t->text = b;
	return 0;
}

/* A heredoc; "<<" is read.  -1 on an error. */
static int
lx_heredoc(struct jobfile *jf, struct tok *t)
{
	char		 marker[128], *b = NULL;
	size_t		 n = 0, len = 0, cap = 0, ls, le;
	int		 c, start = jf->line;

	if (lx_peek(jf, 0) == '-')
		lx_adv(jf);
	while ((c = lx_peek(jf, 0)) != -1 && (isalnum(c) || c == '_') &&
	    n < sizeof(marker) - 1) {
		marker[n++] = (char)c;
		lx_adv(jf);
	}
	marker[n] = '\0';
	while ((c = lx_peek(jf, 0)) == ' ' || c == '\t' || c == '\r')
		lx_adv(jf);
	if (n == 0 || c != '\n') {
		jf_issue(jf, start, 1, "syntax error: a heredoc needs a "
		    "marker and a new line after <<");
		return -1;
	}
	lx_adv(jf);
	buf_addc(&b, &len, &cap, '\0');
	len = 0;
	for (;;) {
		if (jf->pos >= jf->len) {
			free(b);
			jf_issue(jf, start, 1, "syntax error: heredoc %s not "
			    "closed (no line with %s alone)", marker, marker);
			return -1;
		}
		ls = jf->pos;
		while (jf->pos < jf->len && jf->data[jf->pos] != '\n')
			jf->pos++;
		le = jf->pos;
		/* the marker alone on its line, indented or not */
		while (ls < le && (jf->data[ls] == ' ' || jf->data[ls] == '\t'))
			ls++;
		while (le > ls && jf->data[le - 1] == '\r')
			le--;
		if (le - ls == n && strncmp(jf->data + ls, marker, n) == 0)
			break;
		if (memmem(jf->data + ls, le - ls, "${", 2) != NULL ||
		    memmem(jf->data + ls, le - ls, "%{", 2) != NULL)
			t->interp = 1;
		for (; ls < jf->pos; ls++)
			buf_addc(&b, &len, &cap, jf->data[ls]);
		buf_addc(&b, &len, &cap, '\n');
		lx_adv(jf);
	}
	t->type = T_STRING;
	t->text = b;
	return 0;
}

/* The next token in jf->tok.  A syntax error sets jf->failed. */
static void
lx_next(struct jobfile *jf)
{
	struct tok	*t = &jf->tok;
	size_t		 s;
	int		 c, start;

	free(t->text);
	memset(t, 0, sizeof(*t));
	if (jf->failed) {
		t->type = T_EOF;
		return;
	}
	for (;;) {
		c = lx_peek(jf, 0);
		if (c == ' ' || c == '\t' || c == '\r')
			lx_adv(jf);
		else if (c == '#' || (c == '/' && lx_peek(jf, 1) == '/')) {
			while ((c = lx_peek(jf, 0)) != -1 && c != '\n')
				lx_adv(jf);
		} else if (c == '/' && lx_peek(jf, 1) == '*') {
			start = jf->line;
			lx_adv(jf);
			lx_adv(jf);
			while ((c = lx_peek(jf, 0)) != -1 &&
			    !(c == '*' && lx_peek(jf, 1) == '/'))
				lx_adv(jf);
			if (c == -1) {
				jf_issue(jf, start, 1, "syntax error: a /* "
				    "comment not closed");
				jf->failed = 1;
				t->type = T_EOF;
				return;
			}
			lx_adv(jf);
			lx_adv(jf);
		} else
			break;
	}
	t->line = jf->line;
	if (c == -1) {
		t->type = T_EOF;
		return;
	}
	if (c == '\n') {
		lx_adv(jf);
		t->type = T_NL;
		return;
	}
	if (c == '"') {
		lx_adv(jf);
		if (lx_string(jf, t) == -1) {
			jf->failed = 1;
			t->type = T_EOF;
		}
		return;
	}
	if (c == '<' && lx_peek(jf, 1) == '<') {
		lx_adv(jf);
		lx_adv(jf);
		if (lx_heredoc(jf, t) == -1) {
			jf->failed = 1;
			t->type = T_EOF;
		}
		return;
	}
	if (isalpha(c) || c == '_' || c >= 0x80) {
		s = jf->pos;
		while ((c = lx_peek(jf, 0)) != -1 && (isalnum(c) || c == '_' ||
		    c == '-' || c >= 0x80))
			lx_adv(jf);
		t->type = T_IDENT;
		if ((t->text = strndup(jf->data + s, jf->pos - s)) == NULL)
			err(1, NULL);
		return;
	}
	if (isdigit(c)) {
		while ((c = lx_peek(jf, 0)) != -1 && (isalnum(c) || c == '.'))
			lx_adv(jf);
		t->type = T_OTHER;
		t->c = '0';
		return;
	}
	lx_adv(jf);
	/* "==", "=>", ">=", "<=", "!=": never an assignment */
	if ((c == '=' || c == '!' || c == '<' || c == '>') &&
	    (lx_peek(jf, 0) == '=' || lx_peek(jf, 0) == '>')) {
		lx_adv(jf);
		c = 'o';
	}
	t->type = T_OTHER;
	t->c = (char)c;
}

/* ------------------------------------------------------------ parser */

static int
tok_is(struct jobfile *jf, char c)
{
	return jf->tok.type == T_OTHER && jf->tok.c == c;
}

static char *
xstrdup_or_null(const char *s)
{
	char	*d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		err(1, NULL);
	return d;
}

/*
 * An expression, to the end of its line outside brackets.  *lit gets the
 * string when it is one literal string alone; the caller frees it.
 */
static void
ps_expr(struct jobfile *jf, char **lit)
{
	int	 depth = 0, n = 0, start = jf->tok.line;
	char	 open[CHECK_DEPTH_MAX];

	*lit = NULL;
	for (;; lx_next(jf)) {
		if (jf->tok.type == T_EOF) {
			if (depth > 0 && !jf->failed) {
				jf_issue(jf, start, 1, "syntax error: \"%c\" "
				    "not closed", open[depth - 1]);
				jf->failed = 1;
			}
			break;
		}
		if (jf->tok.type == T_NL && depth == 0)
			break;
		if (depth == 0 && tok_is(jf, '}'))
			break;	/* the end of an inline block */
		if (jf->tok.type == T_NL)
			continue;
		/* One literal string alone is a value nops can read. */
		if (n++ == 0 && jf->tok.type == T_STRING && !jf->tok.interp)
			*lit = xstrdup_or_null(jf->tok.text);
		if (tok_is(jf, '(') || tok_is(jf, '[') || tok_is(jf, '{')) {
			if (depth == CHECK_DEPTH_MAX) {
				jf_issue(jf, jf->tok.line, 1, "nested deeper "
				    "than %d", CHECK_DEPTH_MAX);
				jf->failed = 1;
				break;
			}
			open[depth++] = jf->tok.c;
		} else if (tok_is(jf, ')') || tok_is(jf, ']') ||
		    tok_is(jf, '}')) {
			if (depth == 0 || (open[depth - 1] == '(' ?
			    ')' : open[depth - 1] == '[' ? ']' : '}') !=
			    jf->tok.c) {
				jf_issue(jf, jf->tok.line, 1, "syntax error: "
				    "unexpected \"%c\"", jf->tok.c);
				jf->failed = 1;
				break;
			}
			depth--;
		}
	}
	if (n != 1) {
		free(*lit);
		*lit = NULL;
	}
}

static void
ps_meta_add(struct jobfile *jf, const char *key, char *value, int line)
{
	struct meta_ent	*m;

	if (jf->nmeta == CHECK_META_MAX) {
		free(value);
		return;
	}
	m = &jf->meta[jf->nmeta++];
	m->key = xstrdup_or_null(key);
	m->value = value;
	m->line = line;
}

static void	 ps_body(struct jobfile *, int depth, const char *path[]);

/*
 * meta = { key = "value", ... }: the job's (where NULL), or a group's or
 * task's, whose nops_ keys nops does not read.
 */
static void
ps_meta_object(struct jobfile *jf, const char *where)
{
	char	*key, *val;
	int	 line;

	lx_next(jf);	/* past "{" */
	for (;;) {
		while (jf->tok.type == T_NL || tok_is(jf, ','))
			lx_next(jf);
		if (tok_is(jf, '}')) {
			lx_next(jf);
			return;
		}
		if (jf->tok.type != T_IDENT && jf->tok.type != T_STRING) {
			if (!jf->failed)
				jf_issue(jf, jf->tok.line, 1, "syntax error: "
				    "expected a key in the meta object");
			jf->failed = 1;
			return;
		}
		key = xstrdup_or_null(jf->tok.text);
		line = jf->tok.line;
		lx_next(jf);
		if (!tok_is(jf, '=') && !tok_is(jf, ':')) {
			jf_issue(jf, line, 1, "syntax error: expected = after "
			    "meta key %s", key);
			free(key);
			jf->failed = 1;
			return;
		}
		lx_next(jf);
		/* One value: a string, or an expression up to , } or NL. */
		if (jf->tok.type == T_STRING && !jf->tok.interp) {
			val = xstrdup_or_null(jf->tok.text);
			lx_next(jf);
			if (jf->tok.type != T_NL && !tok_is(jf, ',') &&
			    !tok_is(jf, '}')) {
				free(val);
				val = NULL;
			}
		} else
			val = NULL;
		while (jf->tok.type != T_NL && !tok_is(jf, ',') &&
		    !tok_is(jf, '}') && jf->tok.type != T_EOF)
			lx_next(jf);
		if (where == NULL)
			ps_meta_add(jf, key, val, line);
		else {
			if (strncmp(key, "nops_", 5) == 0)
				jf_issue(jf, line, 0, "%s in the meta of a %s: "
				    "nops reads nops_ keys from the job's own "
				    "meta only; ignored", key, where);
			free(val);
		}
		free(key);
		if (jf->tok.type == T_EOF)
			return;
	}
}

/*
 * One attribute (name = expression) or block (name labels { body }).
 * path: the block names above, "job" first.
 */
static void
ps_item(struct jobfile *jf, int depth, const char *path[])
{
	char		*name, *labels[4], *lit;
	const char	*sub[CHECK_DEPTH_MAX + 1];
	size_t		 nl = 0, i;
	int		 line = jf->tok.line, in_job_top, in_meta;

	name = xstrdup_or_null(jf->tok.text);
	lx_next(jf);
	in_job_top = depth == 1 && strcmp(path[0], "job") == 0;
	in_meta = depth >= 2 && strcmp(path[depth - 1], "meta") == 0;
	if (tok_is(jf, '=') || tok_is(jf, ':')) {
		lx_next(jf);
		if (strcmp(name, "meta") == 0 && tok_is(jf, '{') &&
		    depth > 0) {
			if (in_job_top)
				jf->meta_line = line;
			ps_meta_object(jf, in_job_top ? NULL : path[depth - 1]);
			goto out;
		}
		ps_expr(jf, &lit);
		if (in_meta && depth == 2 && strcmp(path[0], "job") == 0)
			ps_meta_add(jf, name, lit, line);
		else {
			if (in_meta && strncmp(name, "nops_", 5) == 0)
				jf_issue(jf, line, 0, "%s in the meta of a %s: "
				    "nops reads nops_ keys from the job's own "
				    "meta only; ignored", name,
				    path[depth - 2]);
			if (in_job_top && strcmp(name, "namespace") == 0) {
				free(jf->ns);
				jf->ns = lit;
				lit = NULL;
			} else if (in_job_top && strcmp(name, "type") == 0) {
				free(jf->type);
				jf->type = lit;
				lit = NULL;
			}
			free(lit);
		}
		goto out;
	}
	while (nl < 4 && (jf->tok.type == T_STRING || jf->tok.type ==
	    T_IDENT)) {
		labels[nl++] = xstrdup_or_null(jf->tok.text);
		lx_next(jf);
	}
	if (!tok_is(jf, '{')) {
		if (!jf->failed)
			jf_issue(jf, line, 1, "syntax error: expected = or a "
			    "block after %s", name);
		jf->failed = 1;
		goto labels;
	}
	lx_next(jf);
	if (depth == 0 && strcmp(name, "job") == 0) {
		if (++jf->njobs == 1) {
			jf->job = nl > 0 ? xstrdup_or_null(labels[0]) : NULL;
			jf->job_line = line;
			if (nl != 1)
				jf_issue(jf, line, 1, "a job block takes one "
				    "label, its name");
		} else
			jf_issue(jf, line, 1, "a second job block: a job file "
			    "declares one job (the first is at line %d)",
			    jf->job_line);
	}
	if (in_job_top && strcmp(name, "parameterized") == 0)
		jf->parameterized = 1;
	if (in_job_top && strcmp(name, "meta") == 0)
		jf->meta_line = line;
	if (depth + 1 >= CHECK_DEPTH_MAX) {
		jf_issue(jf, line, 1, "blocks nested deeper than %d",
		    CHECK_DEPTH_MAX);
		jf->failed = 1;
		goto labels;
	}
	for (i = 0; i < (size_t)depth; i++)
		sub[i] = path[i];
	sub[depth] = name;
	ps_body(jf, depth + 1, sub);
	if (!jf->failed) {
		if (tok_is(jf, '}'))
			lx_next(jf);
		else {
			jf_issue(jf, line, 1, "syntax error: the %s block "
			    "opened here is not closed", name);
			jf->failed = 1;
		}
	}
 labels:
	for (i = 0; i < nl; i++)
		free(labels[i]);
 out:
	free(name);
}

static void
ps_body(struct jobfile *jf, int depth, const char *path[])
{
	for (;;) {
		while (jf->tok.type == T_NL)
			lx_next(jf);
		if (jf->failed || jf->tok.type == T_EOF)
			return;
		if (tok_is(jf, '}')) {
			if (depth == 0) {
				jf_issue(jf, jf->tok.line, 1, "syntax error: "
				    "\"}\" closes no block");
				jf->failed = 1;
			}
			return;
		}
		if (jf->tok.type != T_IDENT) {
			jf_issue(jf, jf->tok.line, 1, "syntax error: "
			    "expected an attribute or a block name");
			jf->failed = 1;
			return;
		}
		ps_item(jf, depth, path);
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

static void
jf_check(struct jobfile *jf)
{
	const char	*root[1] = { NULL };
	json_t		*meta;
	size_t		 i;

	jf->line = 1;
	if (jf_read(jf) == -1)
		return;
	lx_next(jf);
	ps_body(jf, 0, root);
	free(jf->tok.text);
	jf->tok.text = NULL;
	if (jf->failed)
		return;
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
					jf_issue(jf, line, 1, "%s hook %s: %s is "
					    "not a hook (nops_role = \"hook\")",
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
	    (len > 6 && strcmp(name + len - 6, ".nomad") == 0);
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
		(*out)[(*n)++] = xstrdup_or_null(path);
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
		    "role", meta_role_str(jf->jm.jm_role),
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
		errx(EXIT_ANSWER, "no job files (*.nomad.hcl, *.nomad) to "
		    "check");
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
