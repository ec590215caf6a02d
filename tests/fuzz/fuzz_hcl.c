/*
 * libFuzzer target: a job file from git, as the master reads it to show
 * a deployment (shared/hcl.c, master/gitctx.c, master/diffview.c) and
 * nopsctl check reads it.  Input: the file's bytes, made text as the
 * master makes it.  Invariants (abort on violation): the reader either
 * gives a tree whose nodes all have a name and a line within the file,
 * or an error with a line within it; the redacted source and its diff
 * against the original are text; folding a diff against the file never
 * fails.
 */
/* FUZZ-SOURCES: shared/hcl.c shared/text.c shared/log.c */
/* FUZZ-SOURCES: master/gitctx.c master/redact.c master/diffview.c */
/* FUZZ-SOURCES: master/jsonb.c shared/growbuf.c */
/* FUZZ-SOURCES: shared/xmalloc.c */
/* FUZZ-LIBS: jansson */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "text.h"
#include "hcl.h"
#include "gitctx.h"
#include "engine.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int	 lines;

static void
check_tree(const struct hcl_node *n, int depth)
{
	const struct hcl_node	*c;

	if (depth > 200)
		abort();
	for (c = n->hn_child; c != NULL; c = c->hn_next) {
		if (c->hn_name == NULL || c->hn_line < 1 || c->hn_line > lines ||
		    c->hn_parent != n || c->hn_nlabels > HCL_LABELS_MAX)
			abort();
		check_tree(c, depth + 1);
	}
}

/* A new job's diff, with a group and a task, to fold against the file. */
static const char diff_json[] =
	"{\"Type\":\"Added\",\"ID\":\"web\",\"Fields\":["
	"{\"Type\":\"Added\",\"Name\":\"Priority\",\"Old\":\"\",\"New\":\"50\"}],"
	"\"Objects\":[{\"Type\":\"Added\",\"Name\":\"Update\",\"Fields\":["
	"{\"Type\":\"Added\",\"Name\":\"Stagger\",\"Old\":\"\","
	"\"New\":\"30000000000\"}]}],"
	"\"TaskGroups\":[{\"Type\":\"Added\",\"Name\":\"app\",\"Fields\":["
	"{\"Type\":\"Added\",\"Name\":\"Count\",\"Old\":\"\",\"New\":\"2\"}],"
	"\"Tasks\":[{\"Type\":\"Added\",\"Name\":\"server\",\"Objects\":["
	"{\"Type\":\"Added\",\"Name\":\"Config\",\"Fields\":["
	"{\"Type\":\"Added\",\"Name\":\"image\",\"Old\":\"\","
	"\"New\":\"nginx\"}]}]}]}]}";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hcl_node	*root;
	json_t		*diff, *v;
	char		*text, *red, *d, err[256];
	size_t		 i;
	int		 line;

	if (size > 256 * 1024)
		return 0;
	text = text_dup(data, size, size * 3 + 1, TEXT_LINES);
	for (lines = 1, i = 0; text[i] != '\0'; i++)
		if (text[i] == '\n')
			lines++;
	root = hcl_parse(text, strlen(text), err, sizeof(err), &line);
	if (root == NULL) {
		if (line < 0 || line > lines || err[0] == '\0')
			abort();
	} else {
		check_tree(root, 0);
		(void)hcl_find(root, "job", NULL);
		hcl_free(root);
	}
	red = gitctx_redact_source(text);
	if (red == NULL || text_valid(red, strlen(red)) == 0)
		abort();
	d = gitctx_diff("f.nomad.hcl", text, red);
	if (d != NULL && text_valid(d, strlen(d)) == 0)
		abort();
	free(d);
	diff = json_loads(diff_json, 0, NULL);
	if (diff == NULL)
		abort();
	v = diffview(diff, text);
	if (!json_is_object(v))
		abort();
	json_decref(v);
	json_decref(diff);
	free(red);
	free(text);
	return 0;
}
