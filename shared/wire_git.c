/*
 * Encoders and decoders of the git channel's payloads (wire_git.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire_git.h"

/* Lower-case hex of exactly len digits. */
static int
wire_git_hex(const char *s, size_t len)
{
	return strlen(s) == len && strspn(s, "0123456789abcdef") == len;
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_repo(struct msgw *m, const struct wire_git_repo *g)
{
	msg_add_str(m, g->name);
	msg_add_str(m, g->url);
	msg_add_str(m, g->branch);
	msg_add_str(m, g->path);
	msg_add_u32(m, g->max_file);
	msg_add_u32(m, g->max_files);
	msg_add_u64(m, g->max_total);
	msg_add_data(m, g->key, g->keylen);
	msg_add_data(m, g->known, g->knownlen);
}

/* Alike on purpose: each wire_*.c decoder checks wire_git.h's fields. */
int
wire_get_git_repo(struct msgr *r, struct wire_git_repo *g)
{
	msg_get_str(r, &g->name, GITW_NAME_MAX);
	msg_get_str(r, &g->url, GITW_URL_MAX);
	msg_get_str(r, &g->branch, GITW_BRANCH_MAX);
	msg_get_str(r, &g->path, GITW_PATH_MAX);
	msg_get_u32(r, &g->max_file);
	msg_get_u32(r, &g->max_files);
	msg_get_u64(r, &g->max_total);
	msg_get_data(r, &g->key, &g->keylen, GITW_KEY_MAX);
	msg_get_data(r, &g->known, &g->knownlen, GITW_KNOWNHOSTS_MAX);
	if (msg_end(r) == -1)
		return -1;
	/* The name becomes a file name in the gitworker's cache. */
	if (g->name[0] == '\0' || strcmp(g->name, ".") == 0 ||
	    strcmp(g->name, "..") == 0 || strchr(g->name, '/') != NULL)
		msg_fail(r, "repository name");
	else if (g->max_file > GITW_LIMIT_FILE_SIZE ||
	    g->max_files > GITW_LIMIT_FILES ||
	    g->max_total > GITW_LIMIT_SNAP_SIZE)
		msg_fail(r, "limits");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_poll(struct msgw *m, const struct wire_git_poll *p)
{
	msg_add_u32(m, p->seq);
	msg_add_str(m, p->commit);
}

int
wire_get_git_poll(struct msgr *r, struct wire_git_poll *p)
{
	msg_get_u32(r, &p->seq);
	msg_get_str(r, &p->commit, GITW_COMMIT_HEXLEN);
	if (msg_end(r) == -1)
		return -1;
	if (*p->commit != '\0' && !wire_git_hex(p->commit,
	    GITW_COMMIT_HEXLEN))
		msg_fail(r, "commit id");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_unchanged(struct msgw *m, const struct wire_git_poll *p)
{
	wire_put_git_poll(m, p);
}

int
wire_get_git_unchanged(struct msgr *r, struct wire_git_poll *p)
{
	if (wire_get_git_poll(r, p) == -1)
		return -1;
	if (*p->commit == '\0')
		msg_fail(r, "no commit id");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_error(struct msgw *m, const struct wire_git_error *e)
{
	msg_add_u32(m, e->seq);
	msg_add_str(m, e->error);
}

int
wire_get_git_error(struct msgr *r, struct wire_git_error *e)
{
	msg_get_u32(r, &e->seq);
	msg_get_str(r, &e->error, GITW_ERROR_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (*e->error == '\0')
		msg_fail(r, "empty error");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_begin(struct msgw *m, const struct wire_git_begin *b)
{
	msg_add_u32(m, b->seq);
	msg_add_str(m, b->commit);
	msg_add_str(m, b->author);
	msg_add_i64(m, b->time);
	msg_add_str(m, b->subject);
	msg_add_u32(m, b->nfiles);
	msg_add_u64(m, b->total);
}

/* Alike on purpose: each wire_*.c decoder checks wire_git.h's fields. */
int
wire_get_git_begin(struct msgr *r, struct wire_git_begin *b)
{
	msg_get_u32(r, &b->seq);
	msg_get_str(r, &b->commit, GITW_COMMIT_HEXLEN);
	msg_get_str(r, &b->author, GITW_AUTHOR_MAX);
	msg_get_i64(r, &b->time);
	msg_get_str(r, &b->subject, GITW_SUBJECT_MAX);
	msg_get_u32(r, &b->nfiles);
	msg_get_u64(r, &b->total);
	if (msg_end(r) == -1)
		return -1;
	if (!wire_git_hex(b->commit, GITW_COMMIT_HEXLEN))
		msg_fail(r, "commit id");
	else if (b->nfiles > GITW_LIMIT_FILES ||
	    b->total > GITW_LIMIT_SNAP_SIZE)
		msg_fail(r, "counts past the limits");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_file(struct msgw *m, const struct wire_git_file *f)
{
	msg_add_u32(m, f->seq);
	msg_add_u8(m, f->kind);
	msg_add_str(m, f->path);
	msg_add_u64(m, f->size);
	msg_add_str(m, f->sha256);
}

int
wire_get_git_file(struct msgr *r, struct wire_git_file *f)
{
	msg_get_u32(r, &f->seq);
	msg_get_u8(r, &f->kind);
	msg_get_str(r, &f->path, GITW_PATH_MAX);
	msg_get_u64(r, &f->size);
	msg_get_str(r, &f->sha256, GITW_SHA256_HEXLEN);
	if (msg_end(r) == -1)
		return -1;
	if (f->kind < GITW_FILE_JOB || f->kind > GITW_FILE_SCHEMA)
		msg_fail(r, "file kind");
	else if (f->size > GITW_LIMIT_FILE_SIZE)
		msg_fail(r, "file size past the limit");
	else if (!wire_git_hex(f->sha256, GITW_SHA256_HEXLEN))
		msg_fail(r, "sha256");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_same(struct msgw *m, const struct wire_git_same *f)
{
	msg_add_u32(m, f->seq);
	msg_add_u8(m, f->kind);
	msg_add_str(m, f->path);
}

int
wire_get_git_same(struct msgr *r, struct wire_git_same *f)
{
	msg_get_u32(r, &f->seq);
	msg_get_u8(r, &f->kind);
	msg_get_str(r, &f->path, GITW_PATH_MAX);
	if (msg_end(r) == -1)
		return -1;
	if (f->kind < GITW_FILE_JOB || f->kind > GITW_FILE_SCHEMA)
		msg_fail(r, "file kind");
	return r->err ? -1 : 0;
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_data(struct msgw *m, const struct wire_git_data *d)
{
	msg_add_u32(m, d->seq);
	msg_add_data(m, d->data, d->len);
}

int
wire_get_git_data(struct msgr *r, struct wire_git_data *d)
{
	msg_get_u32(r, &d->seq);
	msg_get_data(r, &d->data, &d->len, GITW_CHUNK_MAX);
	return msg_end(r);
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_note(struct msgw *m, const struct wire_git_note *n)
{
	msg_add_u32(m, n->seq);
	msg_add_str(m, n->path);
	msg_add_str(m, n->text);
}

int
wire_get_git_note(struct msgr *r, struct wire_git_note *n)
{
	msg_get_u32(r, &n->seq);
	msg_get_str(r, &n->path, GITW_PATH_MAX);
	msg_get_str(r, &n->text, GITW_NOTE_MAX);
	return msg_end(r);
}

/* Alike on purpose: each wire_*.c coder walks wire_git.h in order. */
void
wire_put_git_end(struct msgw *m, const struct wire_git_end *e)
{
	msg_add_u32(m, e->seq);
	msg_add_u32(m, e->flags);
}

int
wire_get_git_end(struct msgr *r, struct wire_git_end *e)
{
	msg_get_u32(r, &e->seq);
	msg_get_u32(r, &e->flags);
	if (msg_end(r) == -1)
		return -1;
	if ((e->flags & ~(GITW_SNAP_FETCHED | GITW_SNAP_REBUILT)) != 0)
		msg_fail(r, "unknown flags");
	return r->err ? -1 : 0;
}
