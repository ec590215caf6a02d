/*
 * A snapshot: the files nops reads from a repository at one commit, below
 * the repository's path.  Every *.nomad.hcl and *.nomad (at any depth),
 * the <name>.vars.hcl next to each, every *.schema.json (an operation's
 * input schema, nops-jobs(7)), and nops.plan.json at the top of the
 * path.  Symlinks and submodules are never followed (they are reported as
 * notes); a name with "..", a slash, a control character or bad UTF-8
 * refuses the whole snapshot, and so does a file, a count or a total over
 * the repository's limits.  Every object is read before the first message
 * goes out, so a read error (a damaged cache) never leaves half a
 * snapshot.
 */
#include "config.h"

#include <sys/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>
#include <openssl/evp.h>

#include "log.h"
#include "xmalloc.h"
#include "authc.h"
#include "text.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "wire_git.h"
#include "git.h"

struct snap_file {
	int		 sf_kind;	/* GIT_FILE_* */
	char		*sf_path;
	git_blob	*sf_blob;	/* NULL: the same as in the base */
	git_oid		 sf_oid;
	uint64_t	 sf_size;
};

struct snap_note {
	char		*sn_path;
	const char	*sn_text;
};

struct snap {
	struct git_repo	*s_repo;
	git_repository	*s_git;
	struct snap_file *s_files;
	size_t		 s_nfiles;
	size_t		 s_cap;
	uint64_t	 s_total;
	struct snap_note *s_notes;	/* GITW_NOTES_MAX of them */
	size_t		 s_nnotes;
	char		*s_err;
	size_t		 s_errlen;
	int		 s_corrupt;
	int		 s_base;	/* the master has gr_last's commit */
	size_t		 s_bnext;	/* where to look in gr_last next */
	size_t		 s_nsame;
};

int
git_name_ok(const char *name, const char **why)
{
	const unsigned char	*p = (const unsigned char *)name;
	size_t			 len = strlen(name), i, n;

	if (len == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		*why = "an empty, \".\" or \"..\" name";
		return 0;
	}
	if (len > 255) {
		*why = "a name longer than 255 bytes";
		return 0;
	}
	for (i = 0; i < len; i += n) {
		if (p[i] == '/') {
			*why = "a name with a slash";
			return 0;
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			*why = "a name with a control character";
			return 0;
		}
		if ((n = text_utf8_len(p + i, len - i)) == 0) {
			*why = "a name that is not UTF-8";
			return 0;
		}
	}
	return 1;
}

/* A name of a job file: <name>.nomad.hcl or <name>.nomad. */
static size_t
snap_job_base(const char *name)
{
	size_t	 len = strlen(name);

	if (len > 10 && strcmp(name + len - 10, ".nomad.hcl") == 0)
		return len - 10;
	if (len > 6 && strcmp(name + len - 6, ".nomad") == 0)
		return len - 6;
	return 0;
}

/* A name with a suffix and something before it. */
static int
snap_endswith(const char *name, const char *suffix)
{
	size_t	 len = strlen(name), slen = strlen(suffix);

	return len > slen && strcmp(name + len - slen, suffix) == 0;
}

static char *
snap_join(const char *prefix, const char *name)
{
	if (prefix[0] == '\0')
		return xstrdup(name);
	return xasprintf("%s/%s", prefix, name);
}

static int
snap_fail(struct snap *s, int corrupt, const char *fmt, ...)
    __attribute__((__format__(printf, 3, 4)));

static int
snap_fail(struct snap *s, int corrupt, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(s->s_err, s->s_errlen, fmt, ap);
	va_end(ap);
	s->s_corrupt = corrupt;
	return -1;
}

/*
 * The size of the file at path in the last snapshot sent, if it is the
 * same object of the same kind and the master has that snapshot: the
 * file then goes as "the same" and is not read (0).  Else -1.  Files come
 * in the order of the last walk: looked for from the last one found on.
 */
static int
snap_base_size(struct snap *s, int kind, const char *path,
    const git_oid *oid, git_object_size_t *size)
{
	struct git_repo		*r = s->s_repo;
	const struct git_last	*l;
	size_t			 i, n;

	if (!s->s_base)
		return -1;
	for (n = 0; n < r->gr_nlast; n++) {
		i = (s->s_bnext + n) % r->gr_nlast;
		l = &r->gr_last[i];
		if (strcmp(l->gl_path, path) != 0)
			continue;
		s->s_bnext = i + 1;
		if (l->gl_kind != kind || !git_oid_equal(&l->gl_oid, oid))
			return -1;
		s->s_nsame++;
		*size = (git_object_size_t)l->gl_size;
		return 0;
	}
	return -1;
}

void
git_snap_forget(struct git_repo *r)
{
	size_t	 i;

	for (i = 0; i < r->gr_nlast; i++)
		free(r->gr_last[i].gl_path);
	free(r->gr_last);
	r->gr_last = NULL;
	r->gr_nlast = 0;
	r->gr_last_commit[0] = '\0';
}

/* The snapshot was sent: the next poll's base (its paths taken). */
static void
snap_keep(struct snap *s, const char *hex)
{
	struct git_repo	*r = s->s_repo;
	struct git_last	*l;
	size_t		 i;

	git_snap_forget(r);
	if (s->s_nfiles == 0)
		return;
	if ((r->gr_last = calloc(s->s_nfiles, sizeof(*r->gr_last))) == NULL)
		fatal("calloc");
	for (i = 0; i < s->s_nfiles; i++) {
		l = &r->gr_last[i];
		l->gl_path = s->s_files[i].sf_path;
		s->s_files[i].sf_path = NULL;
		l->gl_kind = s->s_files[i].sf_kind;
		git_oid_cpy(&l->gl_oid, &s->s_files[i].sf_oid);
		l->gl_size = s->s_files[i].sf_size;
	}
	r->gr_nlast = s->s_nfiles;
	strlcpy(r->gr_last_commit, hex, sizeof(r->gr_last_commit));
}

static int
snap_add(struct snap *s, int kind, const char *prefix, const char *name,
    const git_oid *oid)
{
	struct git_repo		*r = s->s_repo;
	struct snap_file	*f;
	git_blob		*blob;
	git_object_size_t	 size;
	char			*path;
	size_t			 i;

	path = snap_join(prefix, name);
	/* web.nomad and web.nomad.hcl share web.vars.hcl: take it once. */
	for (i = 0; kind == GITW_FILE_VARS && i < s->s_nfiles; i++)
		if (strcmp(s->s_files[i].sf_path, path) == 0) {
			free(path);
			return 0;
		}
	if (strlen(path) > GITW_PATH_MAX) {
		free(path);
		return snap_fail(s, 0, "a path below %s is longer than %d "
		    "bytes", r->gr_path[0] ? r->gr_path : "the top",
		    GITW_PATH_MAX);
	}
	if (s->s_nfiles >= r->gr_max_files) {
		free(path);
		return snap_fail(s, 0, "more than %u files to read below %s "
		    "(the limit)", r->gr_max_files,
		    r->gr_path[0] ? r->gr_path : "the top");
	}
	blob = NULL;
	if (snap_base_size(s, kind, path, oid, &size) == -1) {
		if (git_blob_lookup(&blob, s->s_git, oid) < 0) {
			snap_fail(s, 1, "cannot read %s: %s", path,
			    git_errmsg());
			free(path);
			return -1;
		}
		size = git_blob_rawsize(blob);
	}
	if (size > r->gr_max_file) {
		snap_fail(s, 0, "%s is %llu bytes, over the limit of %u bytes "
		    "per file", path, (unsigned long long)size, r->gr_max_file);
		git_blob_free(blob);
		free(path);
		return -1;
	}
	if (s->s_total + size > r->gr_max_total) {
		snap_fail(s, 0, "the files below %s are over the limit of %llu "
		    "bytes in all (at %s)", r->gr_path[0] ? r->gr_path :
		    "the top", (unsigned long long)r->gr_max_total, path);
		git_blob_free(blob);
		free(path);
		return -1;
	}
	/*
	 * Alike on purpose: focus_add (master/engine_focus.c) grows its array
	 * with reallocarray too, one at a time; this one doubles.
	 */
	if (s->s_nfiles == s->s_cap) {
		s->s_cap = s->s_cap == 0 ? 64 : s->s_cap * 2;
		s->s_files = reallocarray(s->s_files, s->s_cap,
		    sizeof(*s->s_files));
		if (s->s_files == NULL)
			fatal("reallocarray");
	}
	f = &s->s_files[s->s_nfiles++];
	f->sf_kind = kind;
	f->sf_path = path;
	f->sf_blob = blob;
	git_oid_cpy(&f->sf_oid, oid);
	f->sf_size = (uint64_t)size;
	s->s_total += size;
	return 0;
}

static void
snap_note(struct snap *s, const char *prefix, const char *name,
    const char *text)
{
	struct snap_note	*n;

	if (s->s_nnotes == GITW_NOTES_MAX)
		return;
	if (s->s_notes == NULL && (s->s_notes = calloc(GITW_NOTES_MAX,
	    sizeof(*s->s_notes))) == NULL)
		fatal("%s", __func__);
	n = &s->s_notes[s->s_nnotes++];
	n->sn_text = text;
	n->sn_path = snap_join(prefix, name);
}

static int
snap_walk(struct snap *s, git_tree *tree, const char *prefix, int depth)
{
	const git_tree_entry	*e, *ve;
	git_tree		*sub;
	const char		*name, *why;
	char			*path, vars[300];
	size_t			 i, n, base;
	int			 rv, mode;

	n = git_tree_entrycount(tree);
	for (i = 0; i < n; i++) {
		e = git_tree_entry_byindex(tree, i);
		name = git_tree_entry_name(e);
		if (!git_name_ok(name, &why)) {
			char	 shown[GITW_PATH_MAX + 1];

			text_printf(shown, 201, 0, "%s%s%s", prefix,
			    prefix[0] ? "/" : "", name);
			return snap_fail(s, 0, "refusing \"%s\" at %s: %s",
			    shown, prefix[0] ? prefix : "the top", why);
		}
		mode = git_tree_entry_filemode(e);
		switch (mode) {
		case GIT_FILEMODE_TREE:
			if (depth + 1 >= GITW_DEPTH_MAX)
				return snap_fail(s, 0, "directories nested "
				    "deeper than %d levels at %s/%s",
				    GITW_DEPTH_MAX, prefix, name);
			if (git_tree_lookup(&sub, s->s_git,
			    git_tree_entry_id(e)) < 0)
				return snap_fail(s, 1, "cannot read "
				    "directory %s/%s: %s", prefix, name,
				    git_errmsg());
			path = snap_join(prefix, name);
			rv = snap_walk(s, sub, path, depth + 1);
			free(path);
			git_tree_free(sub);
			if (rv == -1)
				return -1;
			break;
		case GIT_FILEMODE_BLOB:
		case GIT_FILEMODE_BLOB_EXECUTABLE:
			if ((base = snap_job_base(name)) > 0) {
				if (snap_add(s, GITW_FILE_JOB, prefix, name,
				    git_tree_entry_id(e)) == -1)
					return -1;
				snprintf(vars, sizeof(vars), "%.*s.vars.hcl",
				    (int)base, name);
				ve = git_tree_entry_byname(tree, vars);
				if (ve != NULL &&
				    (git_tree_entry_filemode(ve) ==
				    GIT_FILEMODE_BLOB ||
				    git_tree_entry_filemode(ve) ==
				    GIT_FILEMODE_BLOB_EXECUTABLE) &&
				    snap_add(s, GITW_FILE_VARS, prefix, vars,
				    git_tree_entry_id(ve)) == -1)
					return -1;
			} else if (depth == 0 &&
			    strcmp(name, GITW_PLAN_FILE) == 0) {
				if (snap_add(s, GITW_FILE_PLAN, prefix, name,
				    git_tree_entry_id(e)) == -1)
					return -1;
			} else if (depth == 0 &&
			    strcmp(name, GITW_PLAN_NIX_FILE) == 0) {
				if (snap_add(s, GITW_FILE_PLAN_NIX, prefix,
				    name, git_tree_entry_id(e)) == -1)
					return -1;
			} else if (snap_endswith(name, ".schema.json")) {
				if (snap_add(s, GITW_FILE_SCHEMA, prefix,
				    name, git_tree_entry_id(e)) == -1)
					return -1;
			} else if (snap_endswith(name, ".nix")) {
				/* What a Nix plan may import. */
				if (snap_add(s, GITW_FILE_NIX, prefix, name,
				    git_tree_entry_id(e)) == -1)
					return -1;
			}
			break;
		case GIT_FILEMODE_LINK:
			snap_note(s, prefix, name, "a symlink: not followed");
			break;
		case GIT_FILEMODE_COMMIT:
			snap_note(s, prefix, name, "a submodule: not followed");
			break;
		default:
			break;
		}
	}
	return 0;
}

/* The tree at the repository's path in commit. */
static int
snap_root(struct snap *s, git_commit *commit, git_tree **out)
{
	struct git_repo	*r = s->s_repo;
	git_tree	*top;
	git_tree_entry	*e;
	int		 rv;

	if (git_commit_tree(&top, commit) < 0)
		return snap_fail(s, 1, "cannot read the tree of the commit: "
		    "%s", git_errmsg());
	if (r->gr_path[0] == '\0') {
		*out = top;
		return 0;
	}
	rv = git_tree_entry_bypath(&e, top, r->gr_path);
	git_tree_free(top);
	if (rv == GIT_ENOTFOUND)
		return snap_fail(s, 0, "path %s not found in the commit",
		    r->gr_path);
	if (rv < 0)
		return snap_fail(s, 1, "cannot read path %s: %s", r->gr_path,
		    git_errmsg());
	if (git_tree_entry_filemode(e) != GIT_FILEMODE_TREE) {
		rv = git_tree_entry_filemode(e);
		git_tree_entry_free(e);
		return snap_fail(s, 0, "path %s is %s, not a directory",
		    r->gr_path, rv == GIT_FILEMODE_LINK ? "a symlink (not "
		    "followed)" : rv == GIT_FILEMODE_COMMIT ? "a submodule "
		    "(not followed)" : "a file");
	}
	rv = git_tree_lookup(out, s->s_git, git_tree_entry_id(e));
	git_tree_entry_free(e);
	if (rv < 0)
		return snap_fail(s, 1, "cannot read path %s: %s", r->gr_path,
		    git_errmsg());
	return 0;
}

/* Message m of type to the master, about the snapshot's repository. */
static void
snap_send_msg(struct snap *s, struct msgw *m, uint32_t type, const char *name)
{
	if (imsgev_send(git_master, m, type, s->s_repo->gr_id, -1) == -1)
		fatal("%s", name);
}

/* IMSG_GIT_SNAP_BEGIN: the commit, its author and subject, the counts. */
static void
snap_send_begin(struct snap *s, uint32_t seq, git_commit *commit,
    char hex[GIT_OID_HEXSZ + 1])
{
	const git_signature	*a;
	struct wire_git_begin	 b;
	struct msgw		 m;
	const char		*summary;
	char			 author[GITW_AUTHOR_MAX + 1];
	char			 subject[GITW_SUBJECT_MAX + 1];

	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, git_commit_id(commit));
	a = git_commit_author(commit);
	/* Text from git: as the master will check it (shared/text.c). */
	text_printf(author, sizeof(author), 0, "%s <%s>",
	    a != NULL && a->name != NULL ? a->name : "",
	    a != NULL && a->email != NULL ? a->email : "");
	summary = git_commit_summary(commit);
	text_printf(subject, sizeof(subject), 0, "%s",
	    summary != NULL ? summary : "");

	/* Alike on purpose: snap_send_same, another layout filled and sent. */
	b.seq = seq;
	b.commit = hex;
	b.author = author;
	b.time = (int64_t)git_commit_time(commit);
	b.subject = subject;
	b.nfiles = (uint32_t)s->s_nfiles;
	b.total = s->s_total;
	msg_init(&m);
	wire_put_git_begin(&m, &b);
	snap_send_msg(s, &m, IMSG_GIT_SNAP_BEGIN, "IMSG_GIT_SNAP_BEGIN");
}

/* IMSG_GIT_SNAP_SAME: the master takes the file from its known commit. */
static void
snap_send_same(struct snap *s, uint32_t seq, const struct snap_file *f)
{
	struct msgw		 m;
	struct wire_git_same	 ws;

	ws.seq = seq;
	ws.kind = (uint8_t)f->sf_kind;
	ws.path = f->sf_path;
	msg_init(&m);
	wire_put_git_same(&m, &ws);
	snap_send_msg(s, &m, IMSG_GIT_SNAP_SAME, "IMSG_GIT_SNAP_SAME");
}

/* A file's IMSG_GIT_SNAP_FILE, then its content in IMSG_GIT_SNAP_DATA. */
static void
snap_send_blob(struct snap *s, const struct wire_git_file *wf,
    const char *data, size_t size)
{
	struct msgw		 m;
	struct wire_git_data	 d;
	size_t			 off, n;

	msg_init(&m);
	wire_put_git_file(&m, wf);
	snap_send_msg(s, &m, IMSG_GIT_SNAP_FILE, "IMSG_GIT_SNAP_FILE");
	for (off = 0; off < size; off += n) {
		n = size - off > GITW_CHUNK_MAX ? GITW_CHUNK_MAX : size - off;
		d.seq = wf->seq;
		d.data = data + off;
		d.len = n;
		msg_init(&m);
		wire_put_git_data(&m, &d);
		snap_send_msg(s, &m, IMSG_GIT_SNAP_DATA, "IMSG_GIT_SNAP_DATA");
	}
}

static void
snap_send_file(struct snap *s, uint32_t seq, size_t i)
{
	struct snap_file	*f = &s->s_files[i];
	struct wire_git_file	 wf;
	const char		*data, *path;
#ifdef NOPS_TEST_HOOKS
	const char		*lie = NULL;
#endif
	char			 sha[GITW_SHA256_HEXLEN + 1];
	size_t			 size;

	if (f->sf_blob == NULL) {
		snap_send_same(s, seq, f);
		return;
	}
	data = git_blob_rawcontent(f->sf_blob);
	size = (size_t)git_blob_rawsize(f->sf_blob);
	auth_sha256_hex(data, size, sha);
	path = f->sf_path;
#ifdef NOPS_TEST_HOOKS
	/* "git-lie:path|hash|size|same|twice": a subverted worker's lies. */
	if (i == 0 && (lie = git_testhook("git-lie")) != NULL) {
		log_info("test hook: lying about %s", lie);
		if (strcmp(lie, "same") == 0) {
			/* "as before", with no snapshot before */
			snap_send_same(s, seq, f);
			return;
		}
		if (strcmp(lie, "path") == 0)
			path = "../escape.nomad.hcl";
		else if (strcmp(lie, "hash") == 0)
			sha[0] = sha[0] == '0' ? '1' : '0';
		else if (strcmp(lie, "size") == 0 && size > 0)
			size--;
	}
#endif
	wf.seq = seq;
	wf.kind = (uint8_t)f->sf_kind;
	wf.path = path;
	wf.size = size;
	wf.sha256 = sha;
#ifdef NOPS_TEST_HOOKS
	size = (size_t)git_blob_rawsize(f->sf_blob);
#endif
	snap_send_blob(s, &wf, data, size);
#ifdef NOPS_TEST_HOOKS
	/* "git-lie:twice": the first file sent again as the second. */
	if (i == 0 && s->s_nfiles > 1 && lie != NULL &&
	    strcmp(lie, "twice") == 0)
		snap_send_blob(s, &wf, data, size);
	/* "git-stall:send": the master holds half a snapshot. */
	if (i == 0 && git_testhook("git-stall") != NULL &&
	    strcmp(git_testhook("git-stall"), "send") == 0) {
		imsgbuf_flush(&git_master->ibuf);
		log_info("test hook: stalling in the snapshot");
		sleep(60);
	}
#endif
}

/* The notes, then IMSG_GIT_SNAP_END. */
static void
snap_send_end(struct snap *s, uint32_t seq, uint32_t flags)
{
	struct msgw		 m;
	struct wire_git_note	 note;
	struct wire_git_end	 end;
	size_t			 i;

	for (i = 0; i < s->s_nnotes; i++) {
		note.seq = seq;
		note.path = s->s_notes[i].sn_path;
		note.text = s->s_notes[i].sn_text;
		msg_init(&m);
		wire_put_git_note(&m, &note);
		snap_send_msg(s, &m, IMSG_GIT_SNAP_NOTE, "IMSG_GIT_SNAP_NOTE");
	}
	end.seq = seq;
	end.flags = flags;
	msg_init(&m);
	wire_put_git_end(&m, &end);
	snap_send_msg(s, &m, IMSG_GIT_SNAP_END, "IMSG_GIT_SNAP_END");
}

static void
snap_send(struct snap *s, uint32_t seq, git_commit *commit, uint32_t flags)
{
	char	 hex[GIT_OID_HEXSZ + 1];
	size_t	 i;

	snap_send_begin(s, seq, commit, hex);
	for (i = 0; i < s->s_nfiles; i++)
		snap_send_file(s, seq, i);
	snap_send_end(s, seq, flags);
	log_info("%s: snapshot of %.12s: %zu files (%zu as before), %llu "
	    "bytes%s%s", s->s_repo->gr_name, hex, s->s_nfiles, s->s_nsame,
	    (unsigned long long)s->s_total,
	    flags & GITW_SNAP_FETCHED ? ", fetched" : "",
	    flags & GITW_SNAP_REBUILT ? ", cache rebuilt" : "");
	snap_keep(s, hex);
}

int
git_snapshot(struct git_repo *r, uint32_t seq, git_repository *repo,
    const git_oid *oid, const char *known, uint32_t flags, char *err,
    size_t errlen, int *corrupt)
{
	struct snap	 s;
	git_commit	*commit = NULL;
	git_tree	*root = NULL;
	size_t		 i;
	int		 rv = -1;

	memset(&s, 0, sizeof(s));
	s.s_repo = r;
	s.s_git = repo;
	s.s_err = err;
	s.s_errlen = errlen;
	/* A rebuilt cache sends every file: nothing of before is trusted. */
	s.s_base = r->gr_last_commit[0] != '\0' &&
	    strcmp(r->gr_last_commit, known) == 0 &&
	    !(flags & GITW_SNAP_REBUILT);
	if (git_commit_lookup(&commit, repo, oid) < 0)
		snap_fail(&s, 1, "cannot read the commit: %s", git_errmsg());
	else if (snap_root(&s, commit, &root) == 0 &&
	    snap_walk(&s, root, r->gr_path, 0) == 0) {
		snap_send(&s, seq, commit, flags);
		rv = 0;
	}
	*corrupt = s.s_corrupt;
	for (i = 0; i < s.s_nfiles; i++) {
		free(s.s_files[i].sf_path);
		git_blob_free(s.s_files[i].sf_blob);
	}
	free(s.s_files);
	for (i = 0; i < s.s_nnotes; i++)
		free(s.s_notes[i].sn_path);
	free(s.s_notes);
	git_tree_free(root);
	git_commit_free(commit);
	return rv;
}
