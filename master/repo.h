/*
 * The master's view of the git repositories: when each is polled (its
 * poll interval, a capped backoff after errors, at once when asked), the
 * deadline of each poll, and the last good snapshot of each, assembled
 * from the gitworker's messages and checked field by field (the
 * gitworker is untrusted).  A snapshot replaces the previous one only
 * once it is complete; every failure keeps the last good one and is shown
 * with the repository until a poll succeeds.
 *
 * Snapshots live in memory only: after a restart every repository is
 * fetched again (the gitworker's cache makes that cheap).
 */
#ifndef NOPS_REPO_H
#define NOPS_REPO_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "nops.h"

struct nops_conf;
struct worker;
struct imsg;
union imsg_payload;

/*
 * The limits of a snapshot and the fetch timeout are per repository
 * (nops.conf.5; defaults NOPS_MAX_* and NOPS_FETCH_TIMEOUT in conf.h).
 */
#define REPO_BACKOFF_MIN	2	/* seconds before the first retry */
#define REPO_BACKOFF_MAX	300	/* retries at least this often */

/* One file of a snapshot (kind: GITW_FILE_*). */
struct repo_file {
	int			 rf_kind;
	char			*rf_path;	/* from the repository's top */
	uint8_t			*rf_data;	/* rf_size bytes, then a NUL */
	size_t			 rf_size;
	char			 rf_sha256[GITW_SHA256_HEXLEN + 1];
	/* A job's <name>.vars.hcl in the same directory, or NULL. */
	const struct repo_file	*rf_vars;
};

/* An entry a snapshot did not take, e.g. a symlink. */
struct repo_note {
	char			*rn_path;
	char			*rn_text;
};

/*
 * A complete snapshot of one repository at one commit.  Immutable once
 * published; reference-counted so a reader may hold it across a new one.
 * Files are in the order of the tree (sorted by path within a directory).
 */
struct repo_snap {
	int			 rs_refs;
	/* Itself, writable: holders keep const pointers, and count. */
	struct repo_snap	*rs_self;
	char			*rs_repo;	/* repository name */
	char			 rs_commit[GITW_COMMIT_HEXLEN + 1];
	char			*rs_author;	/* "Name <email>" */
	int64_t			 rs_time;	/* commit time, unix seconds */
	char			*rs_subject;
	time_t			 rs_fetched_at;	/* when the master got it */
	uint64_t		 rs_generation;	/* 1, 2, ... per repository */
	struct repo_file	*rs_files;
	size_t			 rs_nfiles;
	size_t			 rs_njobs;
	uint64_t		 rs_size;	/* all contents */
	const struct repo_file	*rs_plan;	/* nops.plan.json, or NULL */
	const struct repo_file	*rs_plan_nix;	/* nops.plan.nix, or NULL */
	struct repo_note	*rs_notes;
	size_t			 rs_nnotes;
};

struct repo;

/* Lifecycle, wired by nopsd.c and supervise.c. */
void	 repo_init(const struct nops_conf *);
void	 repo_reconfigure(const struct nops_conf *);
void	 repo_worker_started(struct worker *);
void	 repo_worker_exited(struct worker *);
/* Every message of the gitworker's (NOPS_IMSGS in nops.h). */
void	 repo_git_msg(struct worker *, struct imsg *,
	    const union imsg_payload *);

/*
 * For the engine.  Repositories in config order; a struct repo is valid
 * until the next reload.  repo_snapshot() is NULL until the first
 * snapshot; it stays valid until control returns to the event loop, or
 * for as long as the caller holds a reference (repo_snap_ref/unref).
 */
struct repo		*repo_first(void);
struct repo		*repo_next(struct repo *);
struct repo		*repo_find(const char *name);
const char		*repo_name(const struct repo *);
const struct repo_snap	*repo_snapshot(const struct repo *);
void			 repo_snap_ref(const struct repo_snap *);
void			 repo_snap_unref(const struct repo_snap *);
/*
 * Called with each new snapshot once it is published (a new commit, or
 * a changed url/branch/path), e.g. to run detection.  One listener.
 */
void	 repo_set_listener(void (*)(struct repo *, const struct repo_snap *,
	    void *), void *);

/* Poll now (nopsctl fetch, the API, a webhook); -1 if no such repo. */
int	 repo_fetch_now(const char *name, const char *who);

/*
 * The link to a commit on the repository's web UI (commit-url, or the
 * default for its url; gitctx.h), or NULL; the caller frees it.
 */
char	*repo_commit_url(const char *name, const char *commit);

/* The API's view: {"items": [...], "next": null}, and one repository. */
json_t	*repo_json_list(void);
json_t	*repo_json_one(const char *name);	/* NULL: no such repo */

/*
 * Checks the master applies to what the gitworker sends (shared with the
 * unit tests).  Each returns NULL when fine, else what is wrong.
 */
const char	*repo_check_path(const char *path, const char *top, int kind);

#endif /* NOPS_REPO_H */
