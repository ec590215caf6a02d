/*
 * One poll of one repository: ask the remote where the branch is (a
 * detached remote and an ls: nothing is written), and only when it moved
 * fetch into the repository's bare cache and send a snapshot of the new
 * commit.  A cache that cannot be read or fetched into is wiped and
 * cloned again, once per poll.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "log.h"
#include "authc.h"
#include "text.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "wire_git.h"
#include "git.h"

#define GIT_HEAD_REF		"refs/nops/head"
#define GIT_WIPE_DEPTH		64
#define GIT_PACKS_MAX		16	/* then they become one */

const char *
git_errmsg(void)
{
	const git_error	*e = git_error_last();

	return e != NULL && e->message != NULL ? e->message : "unknown error";
}

void
git_send_error(struct git_repo *r, uint32_t seq, const char *fmt, ...)
{
	struct msgw		 m;
	struct wire_git_error	 e;
	va_list			 ap;
	char			 buf[GITW_ERROR_MAX + 1];

	va_start(ap, fmt);
	text_vprintf(buf, sizeof(buf), 0, fmt, ap);
	va_end(ap);
	log_info("%s: %s", r->gr_name, buf);
	e.seq = seq;
	e.error = buf;
	msg_init(&m);
	wire_put_git_error(&m, &e);
	if (imsgev_send(git_master, &m, IMSG_GIT_ERROR, r->gr_id, -1) == -1)
		fatal("IMSG_GIT_ERROR");
}

static void
git_send_unchanged(struct git_repo *r, uint32_t seq, const char *hex)
{
	struct msgw		 m;
	struct wire_git_poll	 p = { seq, hex };

	msg_init(&m);
	wire_put_git_unchanged(&m, &p);
	if (imsgev_send(git_master, &m, IMSG_GIT_UNCHANGED, r->gr_id,
	    -1) == -1)
		fatal("IMSG_GIT_UNCHANGED");
}

/* <cache>/<name>-<hash of the URL>.git: a new URL gets a new cache. */
void
git_cache_path(struct git_repo *r)
{
	char	 hex[GITW_SHA256_HEXLEN + 1];

	auth_sha256_hex(r->gr_url, strlen(r->gr_url), hex);
	if ((size_t)snprintf(r->gr_cache, sizeof(r->gr_cache), "%s/%s-%.*s.git",
	    git_cachedir, r->gr_name, GITW_CACHE_HASHLEN, hex) >=
	    sizeof(r->gr_cache))
		fatalx("cache path of %s too long", r->gr_name);
}

/* Remove everything below dirfd/name, then name itself. */
static int
git_rm_at(int dfd, const char *name, int depth)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, rv = 0;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	if (depth > GIT_WIPE_DEPTH)
		return -1;
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (git_rm_at(dirfd(d), de->d_name, depth + 1) == -1)
			rv = -1;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
		rv = -1;
	return rv;
}

int
git_cache_wipe(const char *path)
{
	if (git_rm_at(AT_FDCWD, path, 0) == -1) {
		log_warn("cannot remove %s", path);
		return -1;
	}
	return 0;
}

/*
 * Files a killed worker may have left: lock files (libgit2 would refuse
 * to update a ref or the config while one exists) and half-written packs.
 * Only one gitworker runs at a time, so none of them is in use.
 */
static void
git_cache_clean(int dfd, const char *name, int depth)
{
	struct stat	 sb;
	struct dirent	*de;
	DIR		*d;
	size_t		 len;
	int		 fd;

	if (depth > GIT_WIPE_DEPTH)
		return;
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		len = strlen(de->d_name);
		if (de->d_type == DT_UNKNOWN && fstatat(dirfd(d), de->d_name,
		    &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode))
			de->d_type = DT_DIR;
		if (de->d_type == DT_DIR) {
			git_cache_clean(dirfd(d), de->d_name, depth + 1);
			continue;
		}
		if ((len > 5 && strcmp(de->d_name + len - 5, ".lock") == 0) ||
		    strncmp(de->d_name, "pack_git2_", 10) == 0 ||
		    strncmp(de->d_name, "tmp_", 4) == 0) {
			log_info("removing stale %s/%s", name, de->d_name);
			unlinkat(dirfd(d), de->d_name, 0);
		}
	}
	closedir(d);
}

/* How many packs the cache has (each fetch adds one). */
static int
git_cache_packs(const char *packdir)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 len;
	int		 n = 0;

	if ((d = opendir(packdir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".pack") == 0)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Every fetch leaves a pack, and every object lookup and every fetch
 * looks through all of them: past GIT_PACKS_MAX, what the refs reach is
 * written as one pack and the others are removed.  Done after a
 * snapshot went out; a failure leaves the packs as they were, and a
 * worker killed half way leaves a duplicate or a temporary file, which
 * the next tidy or git_cache_clean removes.
 */
void
git_cache_tidy(struct git_repo *r)
{
	git_repository	*repo = r->gr_git;
	git_packbuilder	*pb = NULL;
	git_revwalk	*walk = NULL;
	struct dirent	*de;
	DIR		*d;
	char		 packdir[sizeof(r->gr_cache) + 16], keep[128];
	size_t		 len;
	int		 n;

	if (repo == NULL)
		return;
	snprintf(packdir, sizeof(packdir), "%s/objects/pack", r->gr_cache);
	if ((n = git_cache_packs(packdir)) <= GIT_PACKS_MAX)
		return;
	if (git_packbuilder_new(&pb, repo) < 0 ||
	    git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_push_glob(walk, "refs/*") < 0 ||
	    git_packbuilder_insert_walk(pb, walk) < 0) {
		log_warnx("%s: cannot repack the cache: %s", r->gr_name,
		    git_errmsg());
		goto done;
	}
	git_packbuilder_set_threads(pb, 1);
	if (git_packbuilder_write(pb, NULL, 0, NULL, NULL) < 0) {
		log_warnx("%s: cannot write the repacked cache: %s",
		    r->gr_name, git_errmsg());
		goto done;
	}
	snprintf(keep, sizeof(keep), "pack-%s.", git_packbuilder_name(pb));
	/* The old packs are unmapped before they go. */
	git_cache_close(r);
	if ((d = opendir(packdir)) == NULL) {
		log_warn("%s", packdir);
		goto done;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (strncmp(de->d_name, "pack-", 5) != 0 ||
		    strncmp(de->d_name, keep, strlen(keep)) == 0 ||
		    !((len > 5 && strcmp(de->d_name + len - 5, ".pack") == 0) ||
		    (len > 4 && (strcmp(de->d_name + len - 4, ".idx") == 0 ||
		    strcmp(de->d_name + len - 4, ".rev") == 0))))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == -1)
			log_warn("%s/%s", packdir, de->d_name);
	}
	closedir(d);
	log_info("%s: %d packs in the cache made one", r->gr_name, n);
done:
	git_revwalk_free(walk);
	git_packbuilder_free(pb);
}

/* Remove caches no configured repository uses. */
void
git_cache_prune(const struct git_repos *repos)
{
	const struct git_repo	*r;
	struct dirent		*de;
	DIR			*d;
	const char		*base;
	int			 used;

	if ((d = opendir(git_cachedir)) == NULL) {
		log_warn("%s", git_cachedir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		used = 0;
		TAILQ_FOREACH(r, repos, gr_entry) {
			base = strrchr(r->gr_cache, '/') + 1;
			if (strcmp(base, de->d_name) == 0)
				used = 1;
		}
		if (used)
			continue;
		log_info("removing cache %s: no repository uses it",
		    de->d_name);
		if (git_rm_at(dirfd(d), de->d_name, 0) == -1)
			log_warn("cannot remove %s/%s", git_cachedir,
			    de->d_name);
	}
	closedir(d);
}

#ifdef NOPS_TEST_HOOKS
/* "git-stall:fetch": stop in the middle of receiving a pack. */
static int
git_cb_progress(const git_indexer_progress *p, void *payload)
{
	static int	 stalled;

	if (!stalled && p->received_objects > 0 &&
	    git_testhook("git-stall") != NULL &&
	    strcmp(git_testhook("git-stall"), "fetch") == 0) {
		stalled = 1;
		log_info("test hook: stalling in the fetch");
		sleep(60);
	}
	return 0;
}
#endif

static void
git_callbacks(struct git_repo *r, git_remote_callbacks *cb)
{
	if (git_remote_init_callbacks(cb, GIT_REMOTE_CALLBACKS_VERSION) < 0)
		fatalx("git_remote_init_callbacks");
	cb->credentials = git_cb_credentials;
	cb->certificate_check = git_cb_certificate;
#ifdef NOPS_TEST_HOOKS
	cb->transfer_progress = git_cb_progress;
#endif
	cb->payload = r;
	r->gr_auth_tries = 0;
	r->gr_why[0] = '\0';
}

/* The reason a callback gave, else libgit2's message. */
static const char *
git_why(struct git_repo *r)
{
	return r->gr_why[0] != '\0' ? r->gr_why : git_errmsg();
}

/*
 * Connect to the remote and say where the branch is.  The remote is
 * anonymous: nothing is written, to the cache's config or anywhere, and
 * the same connection fetches when the branch moved (git_head_fetch).
 * Every failure here is the remote's or the network's.
 */
static int
git_head_ls(struct git_repo *r, git_repository *repo, git_remote **remotep,
    git_remote_callbacks *cb, git_oid *oid, char *err, size_t errlen)
{
	git_remote		*remote = NULL;
	const git_remote_head	**heads;
	size_t			 n, i;
	char			 ref[GITW_BRANCH_MAX + 16];

	snprintf(ref, sizeof(ref), "refs/heads/%s", r->gr_branch);
	git_callbacks(r, cb);
	if (git_remote_create_anonymous(&remote, repo, r->gr_url) < 0) {
		snprintf(err, errlen, "bad URL %s: %s", r->gr_url,
		    git_errmsg());
		return -1;
	}
	if (git_remote_connect(remote, GIT_DIRECTION_FETCH, cb, NULL,
	    NULL) < 0) {
		snprintf(err, errlen, "cannot reach %s: %s", r->gr_url,
		    git_why(r));
		goto fail;
	}
	if (git_remote_ls(&heads, &n, remote) < 0) {
		snprintf(err, errlen, "cannot list the branches of %s: %s",
		    r->gr_url, git_errmsg());
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (strcmp(heads[i]->name, ref) == 0)
			break;
	if (i == n) {
		snprintf(err, errlen, "branch %s not found on %s",
		    r->gr_branch, r->gr_url);
		goto fail;
	}
	git_oid_cpy(oid, &heads[i]->oid);
	*remotep = remote;
	return 0;
fail:
	git_remote_disconnect(remote);
	git_remote_free(remote);
	return -1;
}

/* The cache stays open between polls; closed after a failure. */
void
git_cache_close(struct git_repo *r)
{
	git_repository_free(r->gr_git);
	r->gr_git = NULL;
}

/*
 * Open the cache, making it if missing (and *made set).  A cache that is
 * not a directory of ours, or that libgit2 cannot open, is wiped and made
 * again (and *rebuilt set).
 */
static int
git_cache_open(struct git_repo *r, git_repository **repo, int *rebuilt,
    int *made, char *err, size_t errlen)
{
	struct stat	 sb;

	if (r->gr_git != NULL) {
		*repo = r->gr_git;
		return 0;
	}
	if (!r->gr_cleaned) {
		git_cache_clean(AT_FDCWD, r->gr_cache, 0);
		r->gr_cleaned = 1;
	}
	if (lstat(r->gr_cache, &sb) == 0) {
		if (S_ISDIR(sb.st_mode) && sb.st_uid == getuid() &&
		    git_repository_open_ext(repo, r->gr_cache,
		    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
		    NULL) == 0) {
			r->gr_git = *repo;
			return 0;
		}
		log_warnx("%s: cache %s unusable (%s); making it again",
		    r->gr_name, r->gr_cache, S_ISDIR(sb.st_mode) &&
		    sb.st_uid == getuid() ? git_errmsg() : "not our directory");
		if (git_cache_wipe(r->gr_cache) == -1) {
			snprintf(err, errlen, "cannot remove the unusable "
			    "cache %s", r->gr_cache);
			return -1;
		}
		*rebuilt = 1;
	} else if (errno != ENOENT) {
		snprintf(err, errlen, "cache %s: %s", r->gr_cache,
		    strerror(errno));
		return -1;
	}
	if (git_repository_init(repo, r->gr_cache, 1) < 0) {
		snprintf(err, errlen, "cannot make the cache %s: %s",
		    r->gr_cache, git_errmsg());
		return -1;
	}
	*made = 1;
	r->gr_git = *repo;
	return 0;
}

/* Does the cache hold this commit (and can read it)? */
static int
git_cache_has(git_repository *repo, const git_oid *oid)
{
	git_commit	*c;

	if (git_commit_lookup(&c, repo, oid) < 0)
		return 0;
	git_commit_free(c);
	return 1;
}

/* Errors of the network or the remote, which a new cache would not fix. */
static int
git_error_remote(void)
{
	const git_error	*e = git_error_last();

	if (e == NULL)
		return 0;
	switch (e->klass) {
	case GIT_ERROR_NET:
	case GIT_ERROR_SSH:
	case GIT_ERROR_SSL:
	case GIT_ERROR_HTTP:
	case GIT_ERROR_CALLBACK:
		return 1;
	default:
		return 0;
	}
}

/*
 * refs/nops/head names the commit of the snapshot being sent: what the
 * next fetch offers as known, so the remote sends the new commits'
 * objects, not the branch's whole history.
 */
static int
git_head_set(struct git_repo *r, git_repository *repo, const git_oid *head,
    char *err, size_t errlen)
{
	git_reference	*ref;

	if (git_reference_create(&ref, repo, GIT_HEAD_REF, head, 1,
	    NULL) < 0) {
		snprintf(err, errlen, "cache %s: %s", r->gr_cache,
		    git_errmsg());
		return -1;
	}
	git_reference_free(ref);
	return 0;
}

/*
 * Fetch the branch's objects on the connection that listed it (a force
 * push is followed).  *remote_fault tells a network or remote failure
 * from a local one.
 */
static int
git_head_fetch(struct git_repo *r, git_remote *remote,
    const git_remote_callbacks *cb, char *err, size_t errlen,
    int *remote_fault)
{
	git_fetch_options	 fo;
	char			 spec[GITW_BRANCH_MAX + 64], *specs[1];
	git_strarray		 refspecs = { specs, 1 };

	*remote_fault = 0;
	snprintf(spec, sizeof(spec), "+refs/heads/%s:" GIT_HEAD_REF,
	    r->gr_branch);
	specs[0] = spec;
	if (git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION) < 0)
		fatalx("git_fetch_options_init");
	fo.callbacks = *cb;
	fo.prune = GIT_FETCH_NO_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (git_remote_download(remote, &refspecs, &fo) < 0) {
		*remote_fault = git_error_remote() || r->gr_why[0] != '\0';
		snprintf(err, errlen, "fetch from %s: %s", r->gr_url,
		    git_why(r));
		return -1;
	}
	return 0;
}

void
git_poll(struct git_repo *r, uint32_t seq, const char *known)
{
	git_repository		*repo;
	git_remote		*remote;
	git_remote_callbacks	 cb;
	git_oid			 head;
	char			 err[GITW_ERROR_MAX], hex[GIT_OID_HEXSZ + 1];
	uint32_t		 flags;
	int			 attempt, remote_fault, corrupt, rebuilt, rv;
	int			 made;

	log_debug("%s: polling %s branch %s", r->gr_name, r->gr_url,
	    r->gr_branch);
	for (attempt = 0; attempt < 2; attempt++) {
		flags = 0;
		if (attempt > 0) {
			log_warnx("%s: %s; wiping the cache and fetching "
			    "again", r->gr_name, err);
			if (git_cache_wipe(r->gr_cache) == -1)
				break;
			flags |= GITW_SNAP_REBUILT;
		}
		rebuilt = made = 0;
		if (git_cache_open(r, &repo, &rebuilt, &made, err,
		    sizeof(err)) == -1)
			continue;
		if (rebuilt)
			flags |= GITW_SNAP_REBUILT;
		if (git_head_ls(r, repo, &remote, &cb, &head, err,
		    sizeof(err)) == -1) {
			git_cache_close(r);
			/* A remote never reached leaves no cache behind. */
			if (made)
				git_cache_wipe(r->gr_cache);
			git_send_error(r, seq, "%s", err);
			return;
		}
		git_oid_tostr(hex, sizeof(hex), &head);
		if (strcmp(hex, known) == 0) {
			git_remote_disconnect(remote);
			git_remote_free(remote);
			git_send_unchanged(r, seq, hex);
			return;
		}
		remote_fault = rv = 0;
		if (!git_cache_has(repo, &head) && (rv = git_head_fetch(r,
		    remote, &cb, err, sizeof(err), &remote_fault)) == 0)
			flags |= GITW_SNAP_FETCHED;
		git_remote_disconnect(remote);
		git_remote_free(remote);
		if (rv == 0)
			rv = git_head_set(r, repo, &head, err, sizeof(err));
		if (rv == -1) {
			git_cache_close(r);
			if (remote_fault) {
				if (made)
					git_cache_wipe(r->gr_cache);
				git_send_error(r, seq, "%s", err);
				return;
			}
			continue;
		}
		corrupt = 0;
		if (git_snapshot(r, seq, repo, &head, known, flags, err,
		    sizeof(err), &corrupt) == 0) {
			/* The snapshot goes out before the tidy starts. */
			if (flags & GITW_SNAP_FETCHED) {
				if (imsgbuf_flush(&git_master->ibuf) == -1)
					fatal("write to master");
				git_cache_tidy(r);
			}
			return;
		}
		git_cache_close(r);
		if (!corrupt) {
			git_send_error(r, seq, "%s", err);
			return;
		}
	}
	git_send_error(r, seq, "%s (the cache was rebuilt and it still "
	    "failed)", err);
}
