/*
 * Inside the gitworker: the repositories the master sent, and the parts
 * that poll them (git_poll.c), read a commit into a snapshot
 * (git_snap.c) and authenticate to ssh remotes (git_ssh.c).  Runs
 * unprivileged and sandboxed; it writes only below its cache directory.
 */
#ifndef NOPS_GIT_H
#define NOPS_GIT_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "nops.h"

#define GITW_DEPTH_MAX		32	/* directory levels below the path */
#define GITW_CACHE_HASHLEN	16	/* URL hash digits in a cache name */

/* A file of the last snapshot sent (the next one sends it as same). */
struct git_last {
	char			*gl_path;
	int			 gl_kind;
	git_oid			 gl_oid;
	uint64_t		 gl_size;
};

/* One repository, as the master sent it (IMSG_GIT_REPO). */
struct git_repo {
	TAILQ_ENTRY(git_repo)	 gr_entry;
	uint32_t		 gr_id;		/* the master's id */
	char			*gr_name;
	char			*gr_url;
	char			*gr_branch;
	char			*gr_path;	/* "" is the top */
	uint32_t		 gr_max_file;	/* bytes per file */
	uint32_t		 gr_max_files;
	uint64_t		 gr_max_total;	/* bytes per snapshot */
	char			*gr_key;	/* ssh private key, NUL ended */
	size_t			 gr_keylen;	/* secret: freezero() */
	char			*gr_known;	/* known_hosts, NUL ended */
	size_t			 gr_knownlen;
	char			 gr_cache[512];	/* its bare repository */
	int			 gr_cleaned;	/* stale lock files removed */
	git_repository		*gr_git;	/* the cache, open between
						   polls */
	/* The last snapshot sent, and its commit ("": none). */
	struct git_last		*gr_last;
	size_t			 gr_nlast;
	char			 gr_last_commit[GIT_OID_HEXSZ + 1];

	/* state of one connection */
	unsigned int		 gr_auth_tries;
	char			 gr_why[512];	/* a callback's refusal */
};
TAILQ_HEAD(git_repos, git_repo);

/* gitworker.c */
extern struct imsgev	*git_master;
extern char		 git_cachedir[1024];
/* The test hook's argument when "name" is armed, else NULL. */
const char	*git_testhook(const char *name);

/* git_poll.c */
void	 git_poll(struct git_repo *, uint32_t seq, const char *known);
void	 git_send_error(struct git_repo *, uint32_t seq, const char *, ...)
	    __attribute__((__format__(printf, 3, 4)));
void	 git_cache_path(struct git_repo *);
int	 git_cache_wipe(const char *path);
void	 git_cache_close(struct git_repo *);
void	 git_cache_tidy(struct git_repo *);
void	 git_cache_prune(const struct git_repos *);
const char *git_errmsg(void);

/* git_snap.c */
/*
 * Read the repository's files at commit and send them as one snapshot;
 * a file as it was in the last snapshot sent goes as "the same" when the
 * master's known commit is that snapshot's.  Returns 0 once sent; -1
 * with err set, and *corrupt set when the cache could not be read (the
 * caller rebuilds it).
 */
int	 git_snapshot(struct git_repo *, uint32_t seq, git_repository *,
	    const git_oid *, const char *known, uint32_t flags, char *err,
	    size_t errlen, int *corrupt);
/* Forget the last snapshot sent (the next one sends every file). */
void	 git_snap_forget(struct git_repo *);
/* A tree entry name we accept; *why says what is wrong with others. */
int	 git_name_ok(const char *name, const char **why);

/* git_ssh.c */
int	 git_cb_credentials(git_credential **, const char *url,
	    const char *user_from_url, unsigned int allowed, void *payload);
int	 git_cb_certificate(git_cert *, int valid, const char *host,
	    void *payload);
int	 git_known_hosts_check(const char *known, size_t knownlen,
	    const char *host, int port, const unsigned char *key,
	    size_t keylen, char *why, size_t whylen);
int	 git_url_port(const char *url);

#endif /* NOPS_GIT_H */
