/*
 * The git channel's payload layouts (wire_git.h): each one's fields, in
 * payload order, for the generic coder of wire.c, and its checks.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "hex.h"
#include "wire_git.h"

/*
 * Alike on purpose (whole file): one field table and one check per
 * layout, as in wire.c and every wire_*.c: a table lists its struct's
 * fields in payload order, a check its layout's own rules, so two of
 * the same shape are still two layouts, with nothing to fold.
 */

static const struct wire_field wire_git_repo_fields[] = {
	WF_STR(git_repo, name, GITW_NAME_MAX),
	WF_STR(git_repo, url, GITW_URL_MAX),
	WF_STR(git_repo, branch, GITW_BRANCH_MAX),
	WF_STR(git_repo, path, GITW_PATH_MAX),
	WF_U32(git_repo, max_file),
	WF_U32(git_repo, max_files),
	WF_U64(git_repo, max_total),
	WF_DATA(git_repo, key, keylen, GITW_KEY_MAX),
	WF_DATA(git_repo, known, knownlen, GITW_KNOWNHOSTS_MAX),
};

static void
wire_git_repo_check(struct msgr *r, const void *p)
{
	const struct wire_git_repo	*g = p;

	/* The name becomes a file name in the gitworker's cache. */
	if (g->name[0] == '\0' || strcmp(g->name, ".") == 0 ||
	    strcmp(g->name, "..") == 0 || strchr(g->name, '/') != NULL)
		msg_fail(r, "repository name");
	else if (g->max_file > GITW_LIMIT_FILE_SIZE ||
	    g->max_files > GITW_LIMIT_FILES ||
	    g->max_total > GITW_LIMIT_SNAP_SIZE)
		msg_fail(r, "limits");
}
WIRE_DEFINE(git_repo, wire_git_repo_fields, wire_git_repo_check)

/* IMSG_GIT_UNCHANGED has IMSG_GIT_POLL's fields. */
static const struct wire_field wire_git_poll_fields[] = {
	WF_U32(git_poll, seq),
	WF_STR(git_poll, commit, GITW_COMMIT_HEXLEN),
};

static void
wire_git_poll_check(struct msgr *r, const void *p)
{
	const struct wire_git_poll	*g = p;

	if (*g->commit != '\0' && !hex_lower(g->commit,
	    GITW_COMMIT_HEXLEN))
		msg_fail(r, "commit id");
}
WIRE_DEFINE(git_poll, wire_git_poll_fields, wire_git_poll_check)

static void
wire_git_unchanged_check(struct msgr *r, const void *p)
{
	const struct wire_git_poll	*g = p;

	wire_git_poll_check(r, p);
	if (r->err == 0 && *g->commit == '\0')
		msg_fail(r, "no commit id");
}
WIRE_DEFINE(git_unchanged, wire_git_poll_fields, wire_git_unchanged_check)

static const struct wire_field wire_git_error_fields[] = {
	WF_U32(git_error, seq),
	WF_STR(git_error, error, GITW_ERROR_MAX),
};

static void
wire_git_error_check(struct msgr *r, const void *p)
{
	const struct wire_git_error	*e = p;

	if (*e->error == '\0')
		msg_fail(r, "empty error");
}
WIRE_DEFINE(git_error, wire_git_error_fields, wire_git_error_check)

static const struct wire_field wire_git_begin_fields[] = {
	WF_U32(git_begin, seq),
	WF_STR(git_begin, commit, GITW_COMMIT_HEXLEN),
	WF_STR(git_begin, author, GITW_AUTHOR_MAX),
	WF_I64(git_begin, time),
	WF_STR(git_begin, subject, GITW_SUBJECT_MAX),
	WF_U32(git_begin, nfiles),
	WF_U64(git_begin, total),
};

static void
wire_git_begin_check(struct msgr *r, const void *p)
{
	const struct wire_git_begin	*b = p;

	if (!hex_lower(b->commit, GITW_COMMIT_HEXLEN))
		msg_fail(r, "commit id");
	else if (b->nfiles > GITW_LIMIT_FILES ||
	    b->total > GITW_LIMIT_SNAP_SIZE)
		msg_fail(r, "counts past the limits");
}
WIRE_DEFINE(git_begin, wire_git_begin_fields, wire_git_begin_check)

static int
wire_git_kind_ok(uint8_t kind)
{
	return kind >= GITW_FILE_JOB && kind <= GITW_FILE_SCHEMA;
}

static const struct wire_field wire_git_file_fields[] = {
	WF_U32(git_file, seq),
	WF_U8(git_file, kind),
	WF_STR(git_file, path, GITW_PATH_MAX),
	WF_U64(git_file, size),
	WF_STR(git_file, sha256, GITW_SHA256_HEXLEN),
};

static void
wire_git_file_check(struct msgr *r, const void *p)
{
	const struct wire_git_file	*f = p;

	if (!wire_git_kind_ok(f->kind))
		msg_fail(r, "file kind");
	else if (f->size > GITW_LIMIT_FILE_SIZE)
		msg_fail(r, "file size past the limit");
	else if (!hex_lower(f->sha256, GITW_SHA256_HEXLEN))
		msg_fail(r, "sha256");
}
WIRE_DEFINE(git_file, wire_git_file_fields, wire_git_file_check)

static const struct wire_field wire_git_same_fields[] = {
	WF_U32(git_same, seq),
	WF_U8(git_same, kind),
	WF_STR(git_same, path, GITW_PATH_MAX),
};

static void
wire_git_same_check(struct msgr *r, const void *p)
{
	const struct wire_git_same	*f = p;

	if (!wire_git_kind_ok(f->kind))
		msg_fail(r, "file kind");
}
WIRE_DEFINE(git_same, wire_git_same_fields, wire_git_same_check)

static const struct wire_field wire_git_data_fields[] = {
	WF_U32(git_data, seq),
	WF_DATA(git_data, data, len, GITW_CHUNK_MAX),
};
WIRE_DEFINE(git_data, wire_git_data_fields, NULL)

static const struct wire_field wire_git_note_fields[] = {
	WF_U32(git_note, seq),
	WF_STR(git_note, path, GITW_PATH_MAX),
	WF_STR(git_note, text, GITW_NOTE_MAX),
};
WIRE_DEFINE(git_note, wire_git_note_fields, NULL)

static const struct wire_field wire_git_end_fields[] = {
	WF_U32(git_end, seq),
	WF_U32(git_end, flags),
};

static void
wire_git_end_check(struct msgr *r, const void *p)
{
	const struct wire_git_end	*e = p;

	if ((e->flags & ~(GITW_SNAP_FETCHED | GITW_SNAP_REBUILT)) != 0)
		msg_fail(r, "unknown flags");
}
WIRE_DEFINE(git_end, wire_git_end_fields, wire_git_end_check)
