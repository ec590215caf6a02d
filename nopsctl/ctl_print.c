/*
 * How nopsctl prints what the API answers for people: aligned tables,
 * strings made safe for a terminal, and Nomad plan diffs as an indented
 * tree, the way `nomad job plan` shows them.
 */
#include "config.h"

#include <sys/types.h>
#include <err.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nopsctl.h"
#include "text.h"
#include "xmalloc.h"

struct ctl_row {
	char		**r_cells;
	char		**r_notes;	/* lines printed under the row */
	size_t		  r_nnotes;
};

struct ctl_table {
	size_t		  t_ncols;
	char		**t_head;
	struct ctl_row	 *t_rows;
	size_t		  t_nrows;
};

/*
 * Length of the UTF-8 sequence at s that a terminal shows as text, or 0
 * when the byte at s must be escaped: invalid, overlong, or a control
 * (C1 too, U+0080..U+009F, which some terminals obey like ESC [).  The
 * check is the daemon's own (shared/text.c); it stops at the NUL.
 */
static size_t
utf8_printable(const unsigned char *s)
{
	size_t	 n;

	if ((n = text_utf8_len(s, 4)) == 0 || text_is_control(s, n))
		return 0;
	return n;
}

static char *
safe_conv(const char *s, int keepnl)
{
	const unsigned char	*p;
	char			*out, *o;
	size_t			 n;

	if (s == NULL)
		return xstrdup("-");
	/* Every byte becomes at most 4 ("\xNN"). */
	if ((out = reallocarray(NULL, strlen(s) + 1, 4)) == NULL)
		err(1, "reallocarray");
	for (p = (const unsigned char *)s, o = out; *p != '\0';) {
		if (*p == '\n' && keepnl)
			*o++ = (char)*p++;
		else if (*p == '\n' || *p == '\t' || *p == '\r') {
			*o++ = '\\';
			*o++ = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
			p++;
		} else if (*p == '\\' && !keepnl) {
			*o++ = '\\';
			*o++ = '\\';
			p++;
		} else if (*p >= 0x20 && *p < 0x7f)
			*o++ = (char)*p++;
		else if (*p >= 0x80 && (n = utf8_printable(p)) > 0) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			o += sprintf(o, "\\x%02x", *p);
			p++;
		}
	}
	*o = '\0';
	return out;
}

/*
 * A copy of s that cannot move a terminal's cursor or change its state:
 * control characters and bytes that are not valid UTF-8 become C-style
 * escapes.  The daemon relays text from git and Nomad (commit subjects,
 * file errors), so none of it is trusted.  NULL gives "-".  free(3) it.
 */
char *
safe_str(const char *s)
{
	return safe_conv(s, 0);
}

/* The text of fmt made safe (safe_conv); free(3) it. */
static char *
safe_vformat(int, const char *, va_list)
	__attribute__((__format__(printf, 2, 0)));

static char *
safe_vformat(int keepnl, const char *fmt, va_list ap)
{
	char	*s, *safe;

	if (vasprintf(&s, fmt, ap) == -1)
		err(1, "vasprintf");
	safe = safe_conv(s, keepnl);
	free(s);
	return safe;
}

/* printf(3) whose output is made safe as safe_str does, newlines kept. */
void
safe_printf(const char *fmt, ...)
{
	va_list	 ap;
	char	*safe;

	va_start(ap, fmt);
	safe = safe_vformat(1, fmt, ap);
	va_end(ap);
	fputs(safe, stdout);
	free(safe);
}

/* A "label value" line of a detail view. */
void
print_field(const char *label, const char *value)
{
	char	*v = safe_str(value);

	printf("%-18s %s\n", label, v);
	free(v);
}

/* table_new(ncols, heading, ...) */
struct ctl_table *
table_new(size_t ncols, ...)
{
	struct ctl_table	*t;
	va_list			 ap;
	size_t			 i;

	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->t_head = calloc(ncols, sizeof(*t->t_head))) == NULL)
		err(1, "calloc");
	t->t_ncols = ncols;
	va_start(ap, ncols);
	for (i = 0; i < ncols; i++)
		t->t_head[i] = xstrdup(va_arg(ap, const char *));
	va_end(ap);
	return t;
}

/* table_row(t, cell, ...): as many cells as columns; NULL prints "-". */
void
table_row(struct ctl_table *t, ...)
{
	struct ctl_row	*r;
	va_list		 ap;
	size_t		 i;

	t->t_rows = reallocarray(t->t_rows, t->t_nrows + 1,
	    sizeof(*t->t_rows));
	if (t->t_rows == NULL)
		err(1, "reallocarray");
	r = &t->t_rows[t->t_nrows++];
	memset(r, 0, sizeof(*r));
	if ((r->r_cells = calloc(t->t_ncols, sizeof(*r->r_cells))) == NULL)
		err(1, "calloc");
	va_start(ap, t);
	for (i = 0; i < t->t_ncols; i++)
		r->r_cells[i] = safe_str(va_arg(ap, const char *));
	va_end(ap);
}

/* A line of text under the last row, indented. */
void
table_note(struct ctl_table *t, const char *fmt, ...)
{
	struct ctl_row	*r;
	va_list		 ap;
	char		*s;

	if (t->t_nrows == 0)
		return;
	r = &t->t_rows[t->t_nrows - 1];
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		err(1, "vasprintf");
	va_end(ap);
	r->r_notes = reallocarray(r->r_notes, r->r_nnotes + 1,
	    sizeof(*r->r_notes));
	if (r->r_notes == NULL)
		err(1, "reallocarray");
	r->r_notes[r->r_nnotes++] = safe_str(s);
	free(s);
}

static void
table_line(FILE *fp, int indent, char **cells, const size_t *w, size_t n)
{
	size_t	 i;

	fprintf(fp, "%*s", indent, "");
	for (i = 0; i < n; i++) {
		/* The last column is not padded: no trailing blanks. */
		if (i + 1 < n)
			fprintf(fp, "%-*s  ", (int)w[i], cells[i]);
		else
			fprintf(fp, "%s\n", cells[i]);
	}
}

static void
table_free(struct ctl_table *t)
{
	size_t	 i, j;

	if (t == NULL)
		return;
	for (i = 0; i < t->t_nrows; i++) {
		for (j = 0; j < t->t_ncols; j++)
			free(t->t_rows[i].r_cells[j]);
		for (j = 0; j < t->t_rows[i].r_nnotes; j++)
			free(t->t_rows[i].r_notes[j]);
		free(t->t_rows[i].r_cells);
		free(t->t_rows[i].r_notes);
	}
	for (j = 0; j < t->t_ncols; j++)
		free(t->t_head[j]);
	free(t->t_head);
	free(t->t_rows);
	free(t);
}

/*
 * The table on standard output, columns as wide as their widest cell,
 * two blanks apart; then it is freed.
 */
void
table_out(struct ctl_table *t, int indent)
{
	FILE	*fp = stdout;
	size_t	*w, i, j, len;

	if ((w = calloc(t->t_ncols, sizeof(*w))) == NULL)
		err(1, "calloc");
	for (j = 0; j < t->t_ncols; j++) {
		w[j] = strlen(t->t_head[j]);
		for (i = 0; i < t->t_nrows; i++)
			if ((len = strlen(t->t_rows[i].r_cells[j])) > w[j])
				w[j] = len;
	}
	table_line(fp, indent, t->t_head, w, t->t_ncols);
	for (i = 0; i < t->t_nrows; i++) {
		table_line(fp, indent, t->t_rows[i].r_cells, w, t->t_ncols);
		for (j = 0; j < t->t_rows[i].r_nnotes; j++)
			fprintf(fp, "%*s%s\n", indent + 4, "",
			    t->t_rows[i].r_notes[j]);
	}
	free(w);
	table_free(t);
}

/*
 * Plan diffs.  Nomad's JobDiff is a tree: the job's Fields and Objects,
 * its TaskGroups (with Updates, the scheduler's counts), their Tasks;
 * every node and field has a Type (Added, Deleted, Edited, None) and
 * fields have Old, New and Annotations.  Each line starts with the mark of
 * its type in a column of its own, so names line up at every depth.
 */

static const char *
diff_mark(json_t *node)
{
	const char	*type = json_string_value(json_object_get(node,
	    "Type"));

	if (type == NULL)
		return "?";
	if (strcmp(type, "Added") == 0)
		return "+";
	if (strcmp(type, "Deleted") == 0)
		return "-";
	if (strcmp(type, "Edited") == 0)
		return "+/-";
	return "";
}

static void
diff_line(int indent, json_t *node, const char *fmt, ...)
	__attribute__((__format__(printf, 3, 4)));

static void
diff_line(int indent, json_t *node, const char *fmt, ...)
{
	va_list	 ap;
	char	*safe;

	va_start(ap, fmt);
	safe = safe_vformat(0, fmt, ap);
	va_end(ap);
	printf("%*s%-3s %s\n", indent, "", diff_mark(node), safe);
	free(safe);
}

/* " (a, b)" of an Annotations array, or "". free(3) it. */
static char *
diff_annotations(json_t *a)
{
	json_t		*v;
	char		*s, *t;
	size_t		 i;

	if ((s = strdup("")) == NULL)
		err(1, "strdup");
	json_array_foreach(a, i, v) {
		if (!json_is_string(v))
			continue;
		if (asprintf(&t, "%s%s%s", s, s[0] == '\0' ? " (" : ", ",
		    json_string_value(v)) == -1)
			err(1, "asprintf");
		free(s);
		s = t;
	}
	if (s[0] != '\0') {
		if (asprintf(&t, "%s)", s) == -1)
			err(1, "asprintf");
		free(s);
		s = t;
	}
	return s;
}

/* Fields and objects that only repeat Nomad's defaults, not printed. */
static size_t	 diff_folded;

static void
diff_fields(json_t *fields, int indent)
{
	json_t		*f;
	const char	*name, *type, *old, *new;
	char		*ann;
	size_t		 i, w = 0;

	json_array_foreach(fields, i, f) {
		name = json_string_value(json_object_get(f, "Name"));
		if (name != NULL && strlen(name) > w)
			w = strlen(name);
	}
	json_array_foreach(fields, i, f) {
		if (json_is_true(json_object_get(f, "Default"))) {
			diff_folded++;
			continue;
		}
		name = ctl_str(f, "Name", "?");
		type = ctl_str(f, "Type", "None");
		old = ctl_str(f, "Old", "");
		new = ctl_str(f, "New", "");
		ann = diff_annotations(json_object_get(f, "Annotations"));
		if (strcmp(type, "Added") == 0)
			diff_line(indent, f, "%s:%*s \"%s\"%s", name,
			    (int)(w - strlen(name)), "", new, ann);
		else if (strcmp(type, "Deleted") == 0)
			diff_line(indent, f, "%s:%*s \"%s\"%s", name,
			    (int)(w - strlen(name)), "", old, ann);
		else if (strcmp(type, "Edited") == 0)
			diff_line(indent, f, "%s:%*s \"%s\" => \"%s\"%s", name,
			    (int)(w - strlen(name)), "", old, new, ann);
		else
			diff_line(indent, f, "%s:%*s \"%s\"%s", name,
			    (int)(w - strlen(name)), "", new, ann);
		free(ann);
	}
}

static void
diff_objects(json_t *objects, int indent)
{
	json_t		*o;
	size_t		 i;

	json_array_foreach(objects, i, o) {
		if (json_is_true(json_object_get(o, "Default"))) {
			diff_folded++;
			continue;
		}
		diff_line(indent, o, "%s {", ctl_str(o, "Name",
		    "?"));
		diff_fields(json_object_get(o, "Fields"), indent + 2);
		diff_objects(json_object_get(o, "Objects"), indent + 2);
		printf("%*s}\n", indent + 4, "");
	}
}

/* "1 create, 2 ignore" of a group's Updates, or "". free(3) it. */
static char *
diff_updates(json_t *updates)
{
	const char	*k;
	json_t		*v;
	char		*s, *t;

	if ((s = strdup("")) == NULL)
		err(1, "strdup");
	json_object_foreach(updates, k, v) {
		if (asprintf(&t, "%s%s%lld %s", s, s[0] == '\0' ? "" : ", ",
		    (long long)json_integer_value(v), k) == -1)
			err(1, "asprintf");
		free(s);
		s = t;
	}
	return s;
}

/* The redacted diff of a deployment or a job, indent blanks in. */
void
print_diff(json_t *diff, int indent)
{
	json_t		*g, *t;
	char		*upd, *ann;
	size_t		 i, j;

	if (!json_is_object(diff)) {
		printf("%*s(no diff)\n", indent, "");
		return;
	}
	diff_folded = 0;
	diff_line(indent, diff, "Job: \"%s\"", ctl_str(diff, "ID",
	    "?"));
	diff_fields(json_object_get(diff, "Fields"), indent);
	diff_objects(json_object_get(diff, "Objects"), indent);
	json_array_foreach(json_object_get(diff, "TaskGroups"), i, g) {
		upd = diff_updates(json_object_get(g, "Updates"));
		diff_line(indent, g, "Task Group: \"%s\"%s%s%s",
		    ctl_str(g, "Name", "?"), upd[0] != '\0' ?
		    " (" : "", upd, upd[0] != '\0' ? ")" : "");
		free(upd);
		diff_fields(json_object_get(g, "Fields"), indent + 2);
		diff_objects(json_object_get(g, "Objects"), indent + 2);
		json_array_foreach(json_object_get(g, "Tasks"), j, t) {
			ann = diff_annotations(json_object_get(t,
			    "Annotations"));
			diff_line(indent + 2, t, "Task: \"%s\"%s",
			    ctl_str(t, "Name", "?"), ann);
			free(ann);
			diff_fields(json_object_get(t, "Fields"), indent + 4);
			diff_objects(json_object_get(t, "Objects"),
			    indent + 4);
		}
	}
	if (diff_folded > 0)
		printf("%*s(%zu of Nomad's defaults not shown; -j shows "
		    "them)\n", indent, "", diff_folded);
}

/*
 * A deployment's git context: the commit's subject, author, time and web
 * link, then whether the job file changed in git since the commit last
 * deployed, with the change as a unified diff.
 */
void
print_git(json_t *g)
{
	const char	*change;
	char		*line, *p, *nl;

	if (!json_is_object(g))
		return;
	print_field("subject", ctl_str(g, "subject", NULL));
	print_field("author", ctl_str(g, "author", NULL));
	print_field("commit time", ctl_str(g, "time", NULL));
	print_field("commit link", ctl_str(g, "url", NULL));
	print_field("job file", ctl_str(g, "path", NULL));
	printf("\ngit:\n");
	safe_printf("  %s\n", ctl_str(g, "summary", "-"));
	if ((change = ctl_str(g, "change", NULL)) == NULL)
		return;
	line = xstrdup(change);
	for (p = line; *p != '\0'; p = nl) {
		if ((nl = strchr(p, '\n')) != NULL)
			*nl++ = '\0';
		else
			nl = p + strlen(p);
		safe_printf("  %s\n", p);
	}
	free(line);
}
