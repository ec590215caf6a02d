/*
 * gitworker: the only process that talks to git remotes.  It starts as
 * root just long enough to initialise libgit2 (TLS randomness, CA file),
 * then drops to the unprivileged user, confines its filesystem to its
 * cache and installs its syscall filter before it serves the master.
 *
 * The master sends the repositories to watch (IMSG_GIT_REPO ... END),
 * then one IMSG_GIT_POLL at a time; each poll is answered by UNCHANGED,
 * ERROR, or a snapshot (SNAP_BEGIN, FILE + DATA..., NOTE..., END).
 */
#include "config.h"

#include <sys/types.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <git2.h>

#include "log.h"
#include "authc.h"
#include "hex.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "sandbox.h"
#include "wire_git.h"
#include "gitworker.h"
#include "git.h"

#define GIT_REMOTES_MAX		64	/* file:// remotes given to Landlock */

struct imsgev		 git_iev;
struct imsgev		*git_master = &git_iev;
char			 git_cachedir[1024];

static struct git_repos	 git_repos = TAILQ_HEAD_INITIALIZER(git_repos);
static struct git_repos	 git_next = TAILQ_HEAD_INITIALIZER(git_next);
static int		 git_sandboxed;
static struct worker_init git_wi;

static void	 git_repo_free(struct git_repo *);
static void	 git_recv_repo(struct imsg *, const union imsg_payload *);
static void	 git_recv_end(struct imsg *, const union imsg_payload *);
static void	 git_recv_poll(struct imsg *, const union imsg_payload *);
static void	 git_wait_repos(void);
static size_t	 git_local_paths(char **, size_t);

const char *
git_testhook(const char *name)
{
#ifdef NOPS_TEST_HOOKS
	size_t	 len = strlen(name);

	if (proc_testhook(&git_wi, name))
		return git_wi.wi_testhook[len] == ':' ?
		    git_wi.wi_testhook + len + 1 : "";
#endif
	return NULL;
}

static void
git_repo_free(struct git_repo *r)
{
	git_cache_close(r);
	git_snap_forget(r);
	free(r->gr_name);
	free(r->gr_url);
	free(r->gr_branch);
	free(r->gr_path);
	if (r->gr_key != NULL)
		freezero(r->gr_key, r->gr_keylen + 1);
	free(r->gr_known);
	free(r);
}

/* A copy of a blob with a NUL after it (libgit2 wants C strings). */
static char *
git_blobdup(const void *p, size_t len)
{
	char	*s;

	if ((s = malloc(len + 1)) == NULL)
		fatal("malloc");
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

/* IMSG_GIT_REPO: name, url, branch, path, limits, ssh key, known_hosts. */
static void
git_recv_repo(struct imsg *imsg, const union imsg_payload *u)
{
	struct git_repo			*r;
	const struct wire_git_repo	*g = &u->git_repo;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->gr_id = imsg->hdr.peerid;
	r->gr_name = git_blobdup(g->name, strlen(g->name));
	r->gr_url = git_blobdup(g->url, strlen(g->url));
	r->gr_branch = git_blobdup(g->branch, strlen(g->branch));
	r->gr_path = git_blobdup(g->path, strlen(g->path));
	r->gr_max_file = g->max_file;
	r->gr_max_files = g->max_files;
	r->gr_max_total = g->max_total;
	if (g->keylen > 0) {
		r->gr_key = git_blobdup(g->key, g->keylen);
		r->gr_keylen = g->keylen;
	}
	if (g->knownlen > 0) {
		r->gr_known = git_blobdup(g->known, g->knownlen);
		r->gr_knownlen = g->knownlen;
	}
	git_cache_path(r);
	TAILQ_INSERT_TAIL(&git_next, r, gr_entry);
	/* It held a private key: clear it before it is freed. */
	explicit_bzero(imsg->data, imsg->datalen);
}

/* IMSG_GIT_REPO_END: the list is complete: it replaces the one in use. */
static void
git_recv_end(struct imsg *imsg, const union imsg_payload *u)
{
	struct git_repo	*r;
	size_t		 n = 0;

	while ((r = TAILQ_FIRST(&git_repos)) != NULL) {
		TAILQ_REMOVE(&git_repos, r, gr_entry);
		git_repo_free(r);
	}
	while ((r = TAILQ_FIRST(&git_next)) != NULL) {
		TAILQ_REMOVE(&git_next, r, gr_entry);
		TAILQ_INSERT_TAIL(&git_repos, r, gr_entry);
	}
	if (git_sandboxed)
		git_cache_prune(&git_repos);
	TAILQ_FOREACH(r, &git_repos, gr_entry)
		n++;
	log_debug("watching %zu repositories", n);
}

static void
git_recv_poll(struct imsg *imsg, const union imsg_payload *u)
{
	struct git_repo			*r;
	const struct wire_git_poll	*p = &u->git_poll;

	TAILQ_FOREACH(r, &git_repos, gr_entry)
		if (r->gr_id == imsg->hdr.peerid)
			break;
	if (r == NULL)
		fatalx("gitworker: poll of unknown repository %u",
		    imsg->hdr.peerid);
	git_poll(r, p->seq, p->commit);
}

/*
 * The gitworker's dispatch table: the rows of NOPS_IMSGS to GIT and
 * WORKER (IMSG_HANDLER_ROW, nops.h).  Alike on purpose: supervise.c,
 * nomadworker.c and webworker.c choose their rows with the same five
 * lines.  The choice is made here, by the preprocessor, because a table
 * may name only its own process's handlers (a worker links no master
 * code); a matrix of the choices in nops.h would repeat these lines
 * there, one block per receiver.
 */
#define IMSG_TO_MASTER(h)	NULL
#define IMSG_TO_WORKER(h)	h
#define IMSG_TO_GIT(h)		h
#define IMSG_TO_NOMAD(h)	NULL
#define IMSG_TO_WEB(h)		NULL
static const worker_handler git_handlers[IMSG_MAX] = {
	NOPS_IMSGS(IMSG_HANDLER_ROW)
};

static void
git_dispatch_master(int fd, short event, void *arg)
{
	proc_worker_read(&git_iev, event, git_handlers);
}

/*
 * Before the sandbox: wait for the first list of repositories, because
 * a file:// remote is a path Landlock must be told about now.  The master
 * sends the list right after IMSG_INIT.
 */
static void
git_wait_repos(void)
{
	struct imsg	 imsg;
	uint32_t	 type;

	do {
		proc_worker_wait("gitworker", &git_iev.ibuf, &imsg);
		type = imsg.hdr.type;
		if (type != IMSG_CTL_VERBOSE && type != IMSG_GIT_REPO &&
		    type != IMSG_GIT_REPO_END)
			fatalx("gitworker: expected the repository list, "
			    "got %s", imsg_to_str(type));
		proc_worker_handle("gitworker", git_handlers, &imsg);
		imsg_free(&imsg);
	} while (type != IMSG_GIT_REPO_END);
}

/*
 * The local paths of file:// remotes, for Landlock (read only).  A path
 * this user cannot reach is left out: its polls fail with a clear error
 * instead of the worker failing to start.
 */
static size_t
git_local_paths(char **paths, size_t max)
{
	struct git_repo	*r;
	size_t		 n = 0, i, j;
	char		*p;
	int		 fd, hi, lo;

	TAILQ_FOREACH(r, &git_repos, gr_entry) {
		if (strncmp(r->gr_url, "file://", 7) != 0 || n == max)
			continue;
		if ((p = strdup(r->gr_url + 7)) == NULL)
			fatal("strdup");
		/* Undo %XX escapes the way libgit2 reads the URL. */
		for (i = j = 0; p[i] != '\0'; i++, j++) {
			if (p[i] == '%' &&
			    (hi = hex_value((unsigned char)p[i + 1])) != -1 &&
			    (lo = hex_value((unsigned char)p[i + 2])) != -1 &&
			    (hi | lo) != 0) {
				p[j] = (char)(hi << 4 | lo);
				i += 2;
				continue;
			}
			p[j] = p[i];
		}
		p[j] = '\0';
		if ((fd = open(p, O_PATH | O_CLOEXEC)) == -1) {
			log_warn("%s: local remote %s", r->gr_name, p);
			free(p);
			continue;
		}
		close(fd);
		paths[n++] = p;
	}
	return n;
}

#ifdef NOPS_TEST_HOOKS
/*
 * "git-escape:PATH": once sandboxed, read files Unix permissions allow
 * but Landlock must not (/etc/passwd, PATH) and one it must (the cache).
 */
static void
git_escape_hook(void)
{
	const char	*paths[3];
	size_t		 i;
	int		 fd;

	if ((paths[1] = git_testhook("git-escape")) == NULL)
		return;
	paths[0] = "/etc/passwd";
	paths[2] = git_cachedir;
	for (i = 0; i < 3; i++) {
		if ((fd = open(paths[i], O_RDONLY | O_CLOEXEC)) == -1)
			log_info("test hook: escape: open %s: %s", paths[i],
			    strerror(errno));
		else {
			log_info("test hook: escape: open %s: allowed",
			    paths[i]);
			close(fd);
		}
	}
}
#endif

/*
 * As root, after IMSG_INIT: libgit2 (TLS randomness, CA file), the first
 * list of repositories, and the paths Landlock must allow.
 */
void
gitworker_init(struct proc_ctx *pc)
{
	char			*remotes[GIT_REMOTES_MAX];
	struct sandbox_path	 paths[GIT_REMOTES_MAX + 1];
	size_t			 nremotes, n, i;
	char			 hex[GITW_SHA256_HEXLEN + 1];
	int			 level;
	static const int	 levels[] = { GIT_CONFIG_LEVEL_SYSTEM,
				    GIT_CONFIG_LEVEL_XDG,
				    GIT_CONFIG_LEVEL_GLOBAL,
				    GIT_CONFIG_LEVEL_PROGRAMDATA };

	git_wi = pc->pc_wi;
	if (git_libgit2_init() < 0)
		fatalx("git_libgit2_init failed");
	/*
	 * No user or system git config, and no ~/.ssh/known_hosts: what
	 * the master sends is all the worker goes by.  The cache is checked
	 * for our ownership by git_poll.c, so libgit2's own owner check
	 * would only refuse file:// remotes owned by someone else.
	 */
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		level = levels[i];
		if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level,
		    "/nonexistent") < 0)
			fatalx("libgit2 search path: %s", git_errmsg());
	}
	if (git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0) < 0 ||
	    git_libgit2_opts(GIT_OPT_SET_USER_AGENT, "nops/" NOPS_VERSION) < 0)
		fatalx("libgit2 options: %s", git_errmsg());
	/* OpenSSL reads its configuration on first use: do it now. */
	auth_sha256_hex("", 0, hex);
	if ((size_t)snprintf(git_cachedir, sizeof(git_cachedir), "%s/git",
	    git_wi.wi_statedir) >= sizeof(git_cachedir))
		fatalx("state directory path too long");

	git_wait_repos();

	nremotes = git_local_paths(remotes, GIT_REMOTES_MAX);
	n = gitworker_sandbox_paths(paths, git_cachedir,
	    (const char *const *)remotes, nremotes);
	for (i = 0; i < n; i++)
		proc_add_path(pc, paths[i].path, paths[i].access);
	for (i = 0; i < nremotes; i++)
		free(remotes[i]);
}

void
gitworker_loop(struct proc_ctx *pc)
{
	if ((pc->pc_base = event_base_new()) == NULL)
		fatalx("event_base_new");
	imsgev_attach(&git_iev, pc->pc_base, "gitworker", git_dispatch_master,
	    NULL);
}

void
gitworker_run(struct proc_ctx *pc)
{
	git_sandboxed = 1;
	git_cache_prune(&git_repos);

	imsgev_compose(&git_iev, IMSG_WORKER_READY, 0, -1, NULL, 0);
#ifdef NOPS_TEST_HOOKS
	proc_worker_testhooks(&git_wi, &git_iev);
	git_escape_hook();
#endif
	log_debug("ready, cache %s", git_cachedir);
	/* Messages that arrived with IMSG_INIT are handled first. */
	git_dispatch_master(PROC_CHILD_FD, 0, NULL);
	event_base_dispatch(pc->pc_base);
}
