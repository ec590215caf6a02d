/*
 * Git context of a deployment: the link to its commit on the
 * repository's web UI, and the git-side change of its job file since the
 * commit nops last deployed (a unified diff of the file's text, redacted).
 * Pure functions, unit-tested in tests/unit/test_gitctx.c.
 *
 * The source is redacted before it is compared, so the change can show
 * no more than the redacted text: values inside env blocks, template
 * bodies (data = "..." or a heredoc), and what redact_text() finds
 * (secret-named assignments, generated-looking words, URL credentials).
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "xmalloc.h"
#include "text.h"
#include "redact.h"
#include "growbuf.h"
#include "gitctx.h"

#define GITCTX_LINES_MAX	20000	/* per side */
#define GITCTX_CONTEXT		3
#define GITCTX_SOURCE_MAX	(1024 * 1024)	/* kept of a job file */
#define GITCTX_CELLS_MAX	(512 * 1024)	/* of the table, 1 MiB */
#define GITCTX_REDACTED		"<redacted>"

/* The host and path of a remote URL, without user, password or .git. */
static int
gitctx_remote(const char *url, char *host, size_t hostlen, char *path,
    size_t pathlen, int *https)
{
	const char	*p, *at, *slash, *colon;
	size_t		 n;

	*https = 0;
	if (strncmp(url, "https://", 8) == 0 ||
	    strncmp(url, "http://", 7) == 0) {
		*https = 1;
		p = strstr(url, "://") + 3;
	} else if (strncmp(url, "ssh://", 6) == 0)
		p = url + 6;
	else if (strstr(url, "://") == NULL && (colon = strchr(url, ':')) !=
	    NULL && (slash = strchr(url, '/')) != NULL && colon < slash)
		p = url;	/* scp-like: [user@]host:path */
	else
		return -1;
	slash = strchr(p, '/');
	at = strchr(p, '@');
	if (at != NULL && (slash == NULL || at < slash))
		p = at + 1;	/* never the user or a password */
	if (p == url || strncmp(url, "ssh://", 6) == 0 || *https) {
		if ((slash = strchr(p, '/')) == NULL)
			return -1;
		n = slash - p;
		/* ssh://host:port: the web UI is not on the ssh port. */
		if (!*https && (colon = memchr(p, ':', n)) != NULL)
			n = colon - p;
		if (p == url && !*https && (colon = strchr(p, ':')) != NULL &&
		    colon < slash) {
			n = colon - p;
			slash = colon;
		}
	} else {
		colon = strchr(p, ':');
		n = colon - p;
		slash = colon;
	}
	if (n == 0 || n >= hostlen)
		return -1;
	memcpy(host, p, n);
	host[n] = '\0';
	p = slash + 1;
	while (*p == '/')
		p++;
	n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n > 4 && strncmp(p + n - 4, ".git", 4) == 0)
		n -= 4;
	if (n == 0 || n >= pathlen || memchr(p, '?', n) != NULL ||
	    memchr(p, '#', n) != NULL)
		return -1;
	memcpy(path, p, n);
	path[n] = '\0';
	return 0;
}

static int
gitctx_host_is(const char *host, const char *name)
{
	size_t	 n = strlen(name);
	char	*colon;

	if (strcasecmp(host, name) == 0)
		return 1;
	/* github.example.com, gitlab.example.org:8443 */
	if (strncasecmp(host, name, n) == 0 && host[n] == '.')
		return 1;
	colon = strchr(host, ':');
	return colon != NULL && (size_t)(colon - host) == strlen(name) &&
	    strncasecmp(host, name, colon - host) == 0;
}

char *
gitctx_default_template(const char *url)
{
	char	 host[256], path[1024], *t;
	int	 https;

	if (url == NULL || gitctx_remote(url, host, sizeof(host), path,
	    sizeof(path), &https) == -1)
		return NULL;
	if (gitctx_host_is(host, "gitlab")) {
		t = xasprintf("https://%s/%s/-/commit/{commit}", host, path);
		return t;
	}
	if (gitctx_host_is(host, "github") || gitctx_host_is(host, "gitea") ||
	    gitctx_host_is(host, "codeberg") || strcasecmp(host,
	    "codeberg.org") == 0) {
		t = xasprintf("https://%s/%s/commit/{commit}", host, path);
		return t;
	}
	return NULL;
}

char *
gitctx_commit_url(const char *tmpl, const char *commit)
{
	struct growbuf	 b;
	const char	*p, *q;
	size_t		 i;

	if (tmpl == NULL || *tmpl == '\0' || commit == NULL)
		return NULL;
	/* A commit id is hex: nothing to escape. */
	for (i = 0; commit[i] != '\0'; i++)
		if (!isxdigit((unsigned char)commit[i]))
			return NULL;
	memset(&b, 0, sizeof(b));
	for (p = tmpl; (q = strstr(p, "{commit}")) != NULL; p = q + 8) {
		growbuf_xadd(&b, p, q - p);
		growbuf_xputs(&b, commit);
	}
	growbuf_xputs(&b, p);
	return b.gb_buf;
}

/* The name an assignment line sets ("  KEY = ..."), and where = is. */
static const char *
gitctx_assign(const char *line, size_t len, char *name, size_t namelen)
{
	const char	*p = line, *end = line + len, *s;
	size_t		 n;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	s = p;
	if (p < end && *p == '"') {
		s = ++p;
		while (p < end && *p != '"')
			p++;
		n = p - s;
		if (p < end)
			p++;
	} else {
		while (p < end && (isalnum((unsigned char)*p) || *p == '_' ||
		    *p == '-' || *p == '.'))
			p++;
		n = p - s;
	}
	if (n == 0)
		return NULL;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || (*p != '=' && *p != ':') ||
	    (p + 1 < end && p[1] == '='))
		return NULL;
	if (name != NULL) {
		if (n >= namelen)
			n = namelen - 1;
		memcpy(name, s, n);
		name[n] = '\0';
	}
	return p;
}

/* Does the line open a block named word ("env {" or "env = {")? */
static int
gitctx_opens(const char *line, size_t len, const char *word)
{
	const char	*p = line, *end = line + len;
	size_t		 n = strlen(word);

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) < n || strncmp(p, word, n) != 0)
		return 0;
	p += n;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '='))
		p++;
	return p < end && *p == '{';
}

static int
gitctx_depth(const char *line, size_t len)
{
	int	 d = 0, instr = 0;
	size_t	 i;

	for (i = 0; i < len; i++) {
		if (instr) {
			if (line[i] == '\\')
				i++;
			else if (line[i] == '"')
				instr = 0;
		} else if (line[i] == '"')
			instr = 1;
		else if (line[i] == '#')
			break;
		else if (line[i] == '{')
			d++;
		else if (line[i] == '}')
			d--;
	}
	return d;
}

char *
gitctx_redact_source(const char *raw)
{
	struct growbuf	 b;
	const char	*line, *nl, *eq, *h;
	char		 name[64], marker[64], *out, *text;
	size_t		 len, n;
	int		 env = 0, depth = 0;

	/* A file from git: text, bounded, before anything reads it. */
	text = text_dup(raw, strlen(raw), GITCTX_SOURCE_MAX, TEXT_LINES);
	memset(&b, 0, sizeof(b));
	growbuf_xputs(&b, "");
	marker[0] = '\0';
	for (line = text; *line != '\0'; line = nl + (*nl != '\0')) {
		if ((nl = strchr(line, '\n')) == NULL)
			nl = line + strlen(line);
		len = nl - line;
		if (marker[0] != '\0') {
			/* Inside a heredoc template body: only its end. */
			h = line;
			while (h < nl && (*h == ' ' || *h == '\t'))
				h++;
			if ((size_t)(nl - h) == strlen(marker) &&
			    strncmp(h, marker, nl - h) == 0) {
				marker[0] = '\0';
				growbuf_xadd(&b, line, len);
				growbuf_xputs(&b, "\n");
			}
			continue;
		}
		if (env) {
			depth += gitctx_depth(line, len);
			if (depth <= 0)
				env = 0;
			else if ((eq = gitctx_assign(line, len, NULL, 0)) !=
			    NULL) {
				growbuf_xadd(&b, line, eq - line + 1);
				growbuf_xputs(&b, " \"" GITCTX_REDACTED "\"\n");
				continue;
			}
			growbuf_xadd(&b, line, len);
			growbuf_xputs(&b, "\n");
			continue;
		}
		if (gitctx_opens(line, len, "env")) {
			env = 1;
			depth = gitctx_depth(line, len);
			if (depth <= 0)
				env = 0;
			/* env { A = "x" } on one line */
			if ((eq = memchr(line, '{', len)) != NULL &&
			    depth <= 0 && memchr(eq, '=', nl - eq) != NULL) {
				growbuf_xadd(&b, line, eq - line + 1);
				growbuf_xputs(&b, " " GITCTX_REDACTED " }\n");
				continue;
			}
		} else if ((eq = gitctx_assign(line, len, name,
		    sizeof(name))) != NULL && strcmp(name, "data") == 0) {
			h = eq + 1;
			while (h < nl && (*h == ' ' || *h == '\t'))
				h++;
			growbuf_xadd(&b, line, eq - line + 1);
			if (nl - h > 2 && strncmp(h, "<<", 2) == 0) {
				h += 2;
				if (h < nl && *h == '-')
					h++;
				n = nl - h;
				while (n > 0 && (h[n - 1] == ' ' ||
				    h[n - 1] == '\r'))
					n--;
				if (n >= sizeof(marker))
					n = 0;
				memcpy(marker, h, n);
				marker[n] = '\0';
				growbuf_xadd(&b, eq + 1, nl - eq - 1);
				growbuf_xputs(&b, "\n  " GITCTX_REDACTED "\n");
				continue;
			}
			growbuf_xputs(&b, " \"" GITCTX_REDACTED "\"\n");
			continue;
		} else if (eq != NULL && redact_name_is_secret(name)) {
			/* password = "...", api_token = "..." */
			growbuf_xadd(&b, line, eq - line + 1);
			growbuf_xputs(&b, " \"" GITCTX_REDACTED "\"\n");
			continue;
		}
		growbuf_xadd(&b, line, len);
		growbuf_xputs(&b, "\n");
	}
	out = redact_text(b.gb_buf, b.gb_len);
	free(b.gb_buf);
	free(text);
	return out;
}

/* Lines of a text, pointing into it. */
struct glines {
	const char	**l_line;
	size_t		 *l_len;
	size_t		  l_n;
};

static int
glines_split(const char *text, struct glines *g)
{
	const char	*p, *nl;
	size_t		 n = 0;

	memset(g, 0, sizeof(*g));
	for (p = text; *p != '\0'; p = nl + (*nl != '\0')) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		n++;
	}
	if (n > GITCTX_LINES_MAX)
		return -1;
	if ((g->l_line = calloc(n + 1, sizeof(*g->l_line))) == NULL ||
	    (g->l_len = calloc(n + 1, sizeof(*g->l_len))) == NULL)
		fatal("calloc");
	for (p = text; *p != '\0'; p = nl + (*nl != '\0')) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		g->l_line[g->l_n] = p;
		g->l_len[g->l_n++] = nl - p;
	}
	return 0;
}

static void
glines_free(struct glines *g)
{
	free(g->l_line);
	free(g->l_len);
}

static int
glines_eq(const struct glines *a, size_t i, const struct glines *b, size_t j)
{
	return a->l_len[i] == b->l_len[j] &&
	    memcmp(a->l_line[i], b->l_line[j], a->l_len[i]) == 0;
}

/* One diff line: ' ', '-' or '+', then the text. */
static void
gitctx_line(struct growbuf *b, char op, const char *s, size_t n)
{
	growbuf_xadd(b, &op, 1);
	growbuf_xadd(b, s, n);
	growbuf_xputs(b, "\n");
}

/*
 * The edit script from a to b, one op per line: ' ' kept, '-' removed,
 * '+' added (*nopsp of them; free it).  The longest common subsequence
 * of what lies between the common head and tail, or when that is too
 * big to compare, the middle replaced whole.
 */
static char *
gitctx_ops(const struct glines *a, const struct glines *b, size_t *nopsp)
{
	unsigned short	*lcs = NULL;
	char		*ops;
	size_t		 i, j, k, n, m, p, q, nops;

	/* Common head and tail first: most edits are small. */
	for (p = 0; p < a->l_n && p < b->l_n && glines_eq(a, p, b, p); p++)
		;
	for (q = 0; q < a->l_n - p && q < b->l_n - p &&
	    glines_eq(a, a->l_n - 1 - q, b, b->l_n - 1 - q); q++)
		;
	n = a->l_n - p - q;
	m = b->l_n - p - q;
	if ((ops = malloc(a->l_n + b->l_n + 1)) == NULL)
		fatal("malloc");
	nops = 0;
	for (k = 0; k < p; k++)
		ops[nops++] = ' ';
	if ((n + 1) * (m + 1) > GITCTX_CELLS_MAX) {
		/* Too much to compare: the middle is replaced whole. */
		for (k = 0; k < n; k++)
			ops[nops++] = '-';
		for (k = 0; k < m; k++)
			ops[nops++] = '+';
	} else {
		/* lcs[i][j]: the longest common run of a[i..] and b[j..]. */
		if ((lcs = calloc((n + 1) * (m + 1), sizeof(*lcs))) == NULL)
			fatal("calloc");
#define LCS(i, j)	lcs[(i) * (m + 1) + (j)]
		for (i = n; i-- > 0;)
			for (j = m; j-- > 0;)
				LCS(i, j) = glines_eq(a, p + i, b, p + j) ?
				    LCS(i + 1, j + 1) + 1 : (LCS(i + 1, j) >=
				    LCS(i, j + 1) ? LCS(i + 1, j) :
				    LCS(i, j + 1));
		for (i = 0, j = 0; i < n || j < m;) {
			if (i < n && j < m &&
			    glines_eq(a, p + i, b, p + j)) {
				ops[nops++] = ' ';
				i++;
				j++;
			} else if (i < n && (j == m ||
			    LCS(i + 1, j) >= LCS(i, j + 1))) {
				ops[nops++] = '-';
				i++;
			} else {
				ops[nops++] = '+';
				j++;
			}
		}
#undef LCS
	}
	for (k = 0; k < q; k++)
		ops[nops++] = ' ';
	free(lcs);
	*nopsp = nops;
	return ops;
}

/* The hunks of ops, GITCTX_CONTEXT lines around each change, into out. */
static void
gitctx_hunks(struct growbuf *out, const struct glines *a,
    const struct glines *b, const char *ops, size_t nops)
{
	char		 hdr[128];
	size_t		 i, j, k, start, end, h;
	size_t		 ai, bj, acount, bcount, astart, bstart;

	ai = bj = 0;
	for (k = 0; k < nops;) {
		if (ops[k] == ' ') {
			ai++;
			bj++;
			k++;
			continue;
		}
		start = k > GITCTX_CONTEXT ? k - GITCTX_CONTEXT : 0;
		/* Walk back to where the hunk starts in each file. */
		astart = ai - (k - start);
		bstart = bj - (k - start);
		for (end = k; end < nops; end++) {
			if (ops[end] != ' ')
				continue;
			for (h = end; h < nops && ops[h] == ' '; h++)
				;
			if (h == nops || h - end > 2 * GITCTX_CONTEXT)
				break;
			end = h - 1;
		}
		end = end + GITCTX_CONTEXT < nops ? end + GITCTX_CONTEXT : nops;
		acount = bcount = 0;
		for (h = start; h < end; h++) {
			if (ops[h] != '+')
				acount++;
			if (ops[h] != '-')
				bcount++;
		}
		snprintf(hdr, sizeof(hdr), "@@ -%zu,%zu +%zu,%zu @@\n",
		    acount > 0 ? astart + 1 : astart, acount,
		    bcount > 0 ? bstart + 1 : bstart, bcount);
		growbuf_xputs(out, hdr);
		i = astart;
		j = bstart;
		for (h = start; h < end; h++) {
			if (ops[h] == ' ') {
				gitctx_line(out, ' ', a->l_line[i],
				    a->l_len[i]);
				i++;
				j++;
			} else if (ops[h] == '-') {
				gitctx_line(out, '-', a->l_line[i],
				    a->l_len[i]);
				i++;
			} else {
				gitctx_line(out, '+', b->l_line[j],
				    b->l_len[j]);
				j++;
			}
		}
		ai = i;
		bj = j;
		k = end;
	}
}

char *
gitctx_diff(const char *path, const char *old, const char *new)
{
	struct glines	 a, b;
	struct growbuf	 out;
	char		*ops;
	size_t		 nops;

	if (strcmp(old, new) == 0)
		return NULL;
	memset(&out, 0, sizeof(out));
	growbuf_xputs(&out, "--- a/");
	growbuf_xputs(&out, path);
	growbuf_xputs(&out, "\n+++ b/");
	growbuf_xputs(&out, path);
	growbuf_xputs(&out, "\n");
	memset(&b, 0, sizeof(b));
	if (glines_split(old, &a) == -1 || glines_split(new, &b) == -1) {
		glines_free(&a);
		glines_free(&b);
		growbuf_xputs(&out, "@@ the file is too long to compare "
		    "line by line @@\n");
		return out.gb_buf;
	}
	ops = gitctx_ops(&a, &b, &nops);
	gitctx_hunks(&out, &a, &b, ops, nops);
	free(ops);
	glines_free(&a);
	glines_free(&b);
	return out.gb_buf;
}
