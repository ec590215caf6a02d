/*
 * A reader of HCL's native syntax (the job files of Nomad), enough to see
 * their structure without Nomad: blocks with their labels, attributes
 * with their line and, for a literal string, their value, and an object
 * value's keys (meta = { ... }).  Expressions are skipped, brackets
 * balanced.  A syntax error it can see (a string, heredoc, comment,
 * bracket or block left open) stops it with the line.  Used by nopsctl
 * check and by the master to tell what a job file sets from what Nomad
 * fills in.  Input is text already (valid UTF-8); nothing is evaluated.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "hcl.h"
#include "xmalloc.h"

#define HCL_DEPTH_MAX	64

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

struct hcl_lex {
	const char	*data;
	size_t		 len;
	size_t		 pos;
	int		 line;
	int		 failed;
	struct tok	 tok;
	char		*err;
	size_t		 errlen;
	int		*errline;
};

static void	 hcl_fail(struct hcl_lex *, int, const char *, ...)
		    __attribute__((__format__(printf, 3, 4)));

static void
hcl_fail(struct hcl_lex *jf, int line, const char *fmt, ...)
{
	va_list	 ap;

	if (jf->failed)
		return;
	jf->failed = 1;
	*jf->errline = line;
	va_start(ap, fmt);
	vsnprintf(jf->err, jf->errlen, fmt, ap);
	va_end(ap);
}

static void
hcl_oom(void)
{
	fatal("hcl");
}

static int
lx_peek(struct hcl_lex *jf, size_t off)
{
	return jf->pos + off < jf->len ?
	    (unsigned char)jf->data[jf->pos + off] : -1;
}

static void
lx_adv(struct hcl_lex *jf)
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
			hcl_oom();
	}
	(*b)[(*len)++] = (char)c;
	(*b)[*len] = '\0';
}

/* A quoted string; the opening quote is read.  -1 on an error. */
static int
lx_string(struct hcl_lex *jf, struct tok *t)
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
			hcl_fail(jf, start, "syntax error: a string not "
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
		if (c == '$' && lx_peek(jf, 0) == '$' &&
		    lx_peek(jf, 1) == '{') {
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
					hcl_fail(jf, start, "syntax error: "
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
lx_heredoc(struct hcl_lex *jf, struct tok *t)
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
		hcl_fail(jf, start, "syntax error: a heredoc needs a "
		    "marker and a new line after <<");
		return -1;
	}
	lx_adv(jf);
	buf_addc(&b, &len, &cap, '\0');
	len = 0;
	for (;;) {
		if (jf->pos >= jf->len) {
			free(b);
			hcl_fail(jf, start, "syntax error: heredoc %s not "
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
lx_next(struct hcl_lex *jf)
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
				hcl_fail(jf, start, "syntax error: a /* "
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
			hcl_oom();
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
tok_is(struct hcl_lex *jf, char c)
{
	return jf->tok.type == T_OTHER && jf->tok.c == c;
}

/*
 * An expression, to the end of its line outside brackets.  *lit gets the
 * string when it is one literal string alone; the caller frees it.
 */
static void
ps_expr(struct hcl_lex *jf, char **lit)
{
	int	 depth = 0, n = 0, start = jf->tok.line;
	char	 open[HCL_DEPTH_MAX];

	*lit = NULL;
	for (;; lx_next(jf)) {
		if (jf->tok.type == T_EOF) {
			if (depth > 0 && !jf->failed) {
				hcl_fail(jf, start, "syntax error: \"%c\" "
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
			*lit = xstrdup(jf->tok.text);
		if (tok_is(jf, '(') || tok_is(jf, '[') || tok_is(jf, '{')) {
			if (depth == HCL_DEPTH_MAX) {
				hcl_fail(jf, jf->tok.line, "nested deeper "
				    "than %d", HCL_DEPTH_MAX);
				jf->failed = 1;
				break;
			}
			open[depth++] = jf->tok.c;
		} else if (tok_is(jf, ')') || tok_is(jf, ']') ||
		    tok_is(jf, '}')) {
			if (depth == 0 || (open[depth - 1] == '(' ?
			    ')' : open[depth - 1] == '[' ? ']' : '}') !=
			    jf->tok.c) {
				hcl_fail(jf, jf->tok.line, "syntax error: "
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


static struct hcl_node *
hcl_node_new(struct hcl_node *parent, const char *name, int line, int block)
{
	struct hcl_node	*n, **tail;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		hcl_oom();
	n->hn_name = xstrdup(name);
	n->hn_line = line;
	n->hn_block = block;
	n->hn_parent = parent;
	for (tail = &parent->hn_child; *tail != NULL; tail = &(*tail)->hn_next)
		;
	*tail = n;
	return n;
}

/* name = { key = value, ... }: the keys as attributes of n. */
static void
ps_object(struct hcl_lex *jf, struct hcl_node *n)
{
	struct hcl_node	*k;
	char		*val;
	int		 line;

	n->hn_object = 1;
	lx_next(jf);	/* past "{" */
	for (;;) {
		while (jf->tok.type == T_NL || tok_is(jf, ','))
			lx_next(jf);
		if (tok_is(jf, '}')) {
			lx_next(jf);
			return;
		}
		if (jf->tok.type != T_IDENT && jf->tok.type != T_STRING) {
			hcl_fail(jf, jf->tok.line, "syntax error: expected a "
			    "key in the object of %s", n->hn_name);
			return;
		}
		line = jf->tok.line;
		k = hcl_node_new(n, jf->tok.text, line, 0);
		lx_next(jf);
		if (!tok_is(jf, '=') && !tok_is(jf, ':')) {
			hcl_fail(jf, line, "syntax error: expected = after %s",
			    k->hn_name);
			return;
		}
		lx_next(jf);
		val = NULL;
		if (jf->tok.type == T_STRING && !jf->tok.interp) {
			val = xstrdup(jf->tok.text);
			lx_next(jf);
			if (jf->tok.type != T_NL && !tok_is(jf, ',') &&
			    !tok_is(jf, '}')) {
				free(val);
				val = NULL;
			}
		}
		k->hn_value = val;
		/* the rest of an expression value, bracket by bracket */
		if (jf->tok.type != T_NL && !tok_is(jf, ',') &&
		    !tok_is(jf, '}')) {
			ps_expr(jf, &val);
			free(val);
		}
		if (jf->failed || jf->tok.type == T_EOF) {
			if (!jf->failed)
				hcl_fail(jf, line, "syntax error: the object "
				    "of %s is not closed", n->hn_name);
			return;
		}
	}
}

static void	 ps_body(struct hcl_lex *, struct hcl_node *, int);

/* One attribute (name = expression) or block (name labels { body }). */
static void
ps_item(struct hcl_lex *jf, struct hcl_node *parent, int depth)
{
	struct hcl_node	*n;
	char		*name, *lit;
	int		 line = jf->tok.line;

	name = xstrdup(jf->tok.text);
	lx_next(jf);
	if (tok_is(jf, '=') || tok_is(jf, ':')) {
		lx_next(jf);
		n = hcl_node_new(parent, name, line, 0);
		free(name);
		if (tok_is(jf, '{')) {
			ps_object(jf, n);
			return;
		}
		ps_expr(jf, &lit);
		n->hn_value = lit;
		return;
	}
	n = hcl_node_new(parent, name, line, 1);
	free(name);
	while (jf->tok.type == T_STRING || jf->tok.type == T_IDENT) {
		if (n->hn_nlabels < HCL_LABELS_MAX)
			n->hn_labels[n->hn_nlabels++] =
			    xstrdup(jf->tok.text);
		lx_next(jf);
	}
	if (!tok_is(jf, '{')) {
		hcl_fail(jf, line, "syntax error: expected = or a block after "
		    "%s", n->hn_name);
		return;
	}
	lx_next(jf);
	if (depth + 1 >= HCL_DEPTH_MAX) {
		hcl_fail(jf, line, "blocks nested deeper than %d",
		    HCL_DEPTH_MAX);
		return;
	}
	ps_body(jf, n, depth + 1);
	if (jf->failed)
		return;
	if (tok_is(jf, '}'))
		lx_next(jf);
	else
		hcl_fail(jf, line, "syntax error: the %s block opened here is "
		    "not closed", n->hn_name);
}

static void
ps_body(struct hcl_lex *jf, struct hcl_node *n, int depth)
{
	for (;;) {
		while (jf->tok.type == T_NL)
			lx_next(jf);
		if (jf->failed || jf->tok.type == T_EOF)
			return;
		if (tok_is(jf, '}')) {
			if (depth == 0)
				hcl_fail(jf, jf->tok.line, "syntax error: "
				    "\"}\" closes no block");
			return;
		}
		if (jf->tok.type != T_IDENT) {
			hcl_fail(jf, jf->tok.line, "syntax error: expected an "
			    "attribute or a block name");
			return;
		}
		ps_item(jf, n, depth);
	}
}

struct hcl_node *
hcl_parse(const char *data, size_t len, char *err, size_t errlen,
    int *errline)
{
	struct hcl_lex	 lx;
	struct hcl_node	*root;

	if ((root = calloc(1, sizeof(*root))) == NULL)
		hcl_oom();
	root->hn_block = 1;
	memset(&lx, 0, sizeof(lx));
	lx.data = data;
	lx.len = len;
	lx.line = 1;
	lx.err = err;
	lx.errlen = errlen;
	lx.errline = errline;
	*errline = 0;
	if (errlen > 0)
		err[0] = '\0';
	lx_next(&lx);
	ps_body(&lx, root, 0);
	free(lx.tok.text);
	if (lx.failed) {
		hcl_free(root);
		return NULL;
	}
	return root;
}

/*
 * Alike on purpose: store_close (master/store.c) opens the same way, a
 * NULL check and a walk with a saved next; the two free unrelated things.
 */
void
hcl_free(struct hcl_node *n)
{
	struct hcl_node	*c, *next;
	int		 i;

	if (n == NULL)
		return;
	for (c = n->hn_child; c != NULL; c = next) {
		next = c->hn_next;
		hcl_free(c);
	}
	for (i = 0; i < n->hn_nlabels; i++)
		free(n->hn_labels[i]);
	free(n->hn_name);
	free(n->hn_value);
	free(n);
}

struct hcl_node *
hcl_find(const struct hcl_node *n, const char *name, const char *label)
{
	struct hcl_node	*c;

	for (c = n != NULL ? n->hn_child : NULL; c != NULL; c = c->hn_next)
		if (strcmp(c->hn_name, name) == 0 && (label == NULL ||
		    (c->hn_nlabels > 0 && strcmp(c->hn_labels[0], label) ==
		    0)))
			return c;
	return NULL;
}
