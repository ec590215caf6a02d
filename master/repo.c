/*
 * Repositories in the master: scheduling of polls, their deadline, and
 * the assembly of snapshots from the gitworker's messages.
 *
 * One poll is in flight at a time; the others wait in a queue.  A poll
 * ends with IMSG_GIT_UNCHANGED, IMSG_GIT_ERROR or a complete snapshot
 * (SNAP_BEGIN, FILE + DATA per file, NOTE..., END); anything else from
 * the gitworker, or a field that does not check out (a path outside the
 * repository's path, a size or hash that does not match, a count over the
 * limits), is a protocol violation and the gitworker is killed.  A poll
 * that takes longer than its fetch-timeout kills it as well (libgit2 has
 * no network timeouts).  Whatever ends a poll badly, the last good
 * snapshot stays and the error is kept with the repository.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/tree.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "text.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "conf.h"
#include "master.h"
#include "repo.h"
#include "gitctx.h"
#include "wire_git.h"
#include "authc.h"
#include "cfile.h"
#include "webpub.h"
#include "jsonb.h"
#include "api.h"
#include "xmalloc.h"

#define REPO_IDLE		0
#define REPO_QUEUED		1
#define REPO_POLLING		2

struct repo {
	TAILQ_ENTRY(repo)	 r_entry;	/* repo_list */
	TAILQ_ENTRY(repo)	 r_qentry;	/* repo_queue, while queued */
	uint32_t		 r_id;		/* never reused */
	char			*r_name;
	char			*r_url;
	char			*r_branch;
	char			*r_path;
	int			 r_interval;	/* seconds */
	char			*r_key_file;	/* NULL: none */
	char			*r_known_file;
	int			 r_timeout;	/* seconds a poll may take */
	uint32_t		 r_max_file;
	uint32_t		 r_max_files;
	uint64_t		 r_max_total;
	char			*r_file_error;	/* key or known-hosts unread */
	char			*r_commit_tmpl;	/* commit link; NULL: none */

	int			 r_state;	/* REPO_IDLE, ... */
	int			 r_again;	/* asked for while polling */
	int			 r_removed;	/* gone from the config */
	struct event		*r_timer;
	time_t			 r_next_poll;	/* 0 while queued or polling */

	struct repo_snap	*r_snap;	/* last good, or NULL */
	uint64_t		 r_generation;
	time_t			 r_checked_at;	/* last poll that succeeded */
	char			*r_error;	/* last poll's error, or NULL */
	time_t			 r_error_at;
	unsigned int		 r_fails;	/* consecutive */
	uint64_t		 r_polls;
	uint64_t		 r_snapshots;
	uint64_t		 r_errors;
	uint64_t		 r_rebuilds;
	double			 r_poll_ms;	/* the last poll's duration */
};
TAILQ_HEAD(repo_list, repo);

/*
 * A path of the snapshot being received, in a tree: a path sent twice is
 * found in O(log n), not by a scan of the files so far (quadratic at the
 * 100,000 files a snapshot may hold).
 */
struct repo_path {
	RB_ENTRY(repo_path)	 rp_node;
	const char		*rp_path;	/* its repo_file's */
};
RB_HEAD(repo_paths, repo_path);

static int	 repo_path_cmp(const struct repo_path *,
		    const struct repo_path *);
RB_PROTOTYPE(repo_paths, repo_path, rp_node, repo_path_cmp);

static int
repo_path_cmp(const struct repo_path *a, const struct repo_path *b)
{
	return strcmp(a->rp_path, b->rp_path);
}
RB_GENERATE(repo_paths, repo_path, rp_node, repo_path_cmp);

/* The poll in flight, and the snapshot it is assembling. */
struct repo_poll {
	struct repo		*p_repo;	/* NULL: none */
	uint32_t		 p_seq;
	struct timespec		 p_start;
	struct repo_snap	*p_snap;	/* after SNAP_BEGIN */
	size_t			 p_nfiles;	/* announced */
	uint64_t		 p_total;	/* announced */
	uint64_t		 p_got;		/* bytes received */
	size_t			 p_off;		/* of the current file */
	int			 p_infile;	/* a file's content is due */
	char			 p_known[GITW_COMMIT_HEXLEN + 1];
	size_t			 p_bnext;	/* SNAP_SAME: where to look */
	size_t			 p_same;	/* files taken from there */
	struct repo_paths	 p_paths;	/* the files' paths so far */
	struct repo_path	*p_pathv;	/* their nodes, one a file */
};

static struct repo_list	 repo_list = TAILQ_HEAD_INITIALIZER(repo_list);
static TAILQ_HEAD(, repo) repo_queue = TAILQ_HEAD_INITIALIZER(repo_queue);
static struct repo_poll	 repo_poll;
static struct event	*repo_deadline;
static int		 repo_inited;
static int		 repo_listsent;	/* the gitworker has the list */
static int		 repo_restart;	/* restart it once no poll runs */
static char		*repo_localsig;	/* its file:// remotes at start */
static uint32_t		 repo_nextid = 1;
static uint32_t		 repo_nextseq = 1;
static int		 repo_test_timeout;	/* test builds: overrides */
static char		 repo_test_timeout_of[64];	/* ... of this repo
							   only */
static void		(*repo_listener)(struct repo *,
			    const struct repo_snap *, void *);
static void		*repo_listener_arg;

static void	 repo_timer_cb(int, short, void *);
static void	 repo_deadline_cb(int, short, void *);
static void	 repo_run(void);
static void	 repo_enqueue(struct repo *);

/* ------------------------------------------------------------ helpers */

static struct worker *
repo_gitworker(void)
{
	struct worker	*w = supervise_worker(PROC_GITWORKER);

	return w != NULL && w->w_running ? w : NULL;
}

/*
 * Alike on purpose: auth_users_free (auth.c) and oprun_free
 * (operation.c) free their own structs' members the same way; nothing
 * but free() is shared.
 */
static void
repo_snap_free(struct repo_snap *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->rs_nfiles; i++) {
		free(s->rs_files[i].rf_path);
		free(s->rs_files[i].rf_data);
	}
	free(s->rs_files);
	for (i = 0; i < s->rs_nnotes; i++) {
		free(s->rs_notes[i].rn_path);
		free(s->rs_notes[i].rn_text);
	}
	free(s->rs_notes);
	free(s->rs_repo);
	free(s->rs_author);
	free(s->rs_subject);
	free(s);
}

void
repo_snap_ref(const struct repo_snap *cs)
{
	cs->rs_self->rs_refs++;
}

void
repo_snap_unref(const struct repo_snap *cs)
{
	struct repo_snap	*s;

	if (cs == NULL)
		return;
	s = cs->rs_self;
	if (--s->rs_refs == 0)
		repo_snap_free(s);
}

static int
repo_endswith(const char *s, const char *suffix)
{
	size_t	 a = strlen(s), b = strlen(suffix);

	/* A bare suffix (".nomad") is not a name with that suffix. */
	return a > b && strcmp(s + a - b, suffix) == 0 && s[a - b - 1] != '/';
}

/* Whether path is name at the top of the repository's path top. */
static int
repo_at_top(const char *path, const char *top, const char *name)
{
	char	 want[GITW_PATH_MAX + 32];

	snprintf(want, sizeof(want), "%s%s%s", top, top[0] != '\0' ? "/" : "",
	    name);
	return strcmp(path, want) == 0;
}

/*
 * A path the gitworker sent: relative, no empty, "." or ".." parts, below
 * top, and named as its kind says (0: any name, for notes).
 */
const char *
repo_check_path(const char *path, const char *top, int kind)
{
	const char	*errstr, *base;
	size_t		 toplen = strlen(top);

	if (path[0] == '\0' || strlen(path) > GITW_PATH_MAX)
		return "an empty or too long path";
	if ((errstr = text_check(path, strlen(path))) != NULL)
		return errstr;
	if (path[0] == '/')
		return "an absolute path";
	if (!text_path_parts_ok(path))
		return "an empty, \".\" or \"..\" part";
	if (toplen > 0 && (strncmp(path, top, toplen) != 0 ||
	    path[toplen] != '/'))
		return "a path outside the repository's path";
	base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	switch (kind) {
	case 0:
		return NULL;
	case GITW_FILE_JOB:
		if (!repo_endswith(base, ".nomad.hcl") &&
		    !repo_endswith(base, ".nomad"))
			return "a job file not named *.nomad.hcl or *.nomad";
		return NULL;
	case GITW_FILE_VARS:
		if (!repo_endswith(base, ".vars.hcl"))
			return "a variables file not named *.vars.hcl";
		return NULL;
	case GITW_FILE_PLAN:
		if (!repo_at_top(path, top, GITW_PLAN_FILE))
			return "a plan file that is not nops.plan.json at the "
			    "top of the repository's path";
		return NULL;
	case GITW_FILE_PLAN_NIX:
		if (!repo_at_top(path, top, GITW_PLAN_NIX_FILE))
			return "a plan file that is not nops.plan.nix at the "
			    "top of the repository's path";
		return NULL;
	case GITW_FILE_NIX:
		if (!repo_endswith(base, ".nix") ||
		    strcmp(base, ".nix") == 0)
			return "a Nix file not named *.nix";
		return NULL;
	case GITW_FILE_SCHEMA:
		if (!repo_endswith(base, ".schema.json"))
			return "a schema file not named *.schema.json";
		return NULL;
	default:
		return "an unknown kind of file";
	}
}

/* --------------------------------------------------------- repositories */

/* What a snapshot may hold and how long a poll may take: from the config. */
static void
repo_limits(struct repo *r, const struct conf_repo *cr)
{
	r->r_max_file = cr->max_file_size;
	r->r_max_files = cr->max_files;
	r->r_max_total = cr->max_snapshot_size;
	r->r_timeout = repo_test_timeout != 0 &&
	    (repo_test_timeout_of[0] == '\0' ||
	    strcmp(repo_test_timeout_of, cr->name) == 0) ? repo_test_timeout :
	    cr->fetch_timeout;
	free(r->r_commit_tmpl);
	if (cr->commit_url != NULL)
		r->r_commit_tmpl = cr->commit_url[0] != '\0' ?
		    xstrdup(cr->commit_url) : NULL;
	else
		r->r_commit_tmpl = gitctx_default_template(cr->url);
}

static struct repo *
repo_new(const struct conf_repo *cr)
{
	struct repo	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->r_id = repo_nextid++;
	r->r_name = xstrdup(cr->name);
	r->r_url = xstrdup(cr->url);
	r->r_branch = xstrdup(cr->branch != NULL ? cr->branch : "main");
	r->r_path = xstrdup(cr->path != NULL ? cr->path : "");
	r->r_interval = cr->poll_interval > 0 ? cr->poll_interval :
	    NOPS_POLL_INTERVAL;
	r->r_key_file = cr->ssh_key_file != NULL ?
	    xstrdup(cr->ssh_key_file) : NULL;
	r->r_known_file = cr->known_hosts_file != NULL ?
	    xstrdup(cr->known_hosts_file) : NULL;
	repo_limits(r, cr);
	if ((r->r_timer = evtimer_new(nopsd_env->n_base, repo_timer_cb,
	    r)) == NULL)
		fatal("evtimer_new");
	return r;
}

static void
repo_free(struct repo *r)
{
	if (r->r_state == REPO_QUEUED)
		TAILQ_REMOVE(&repo_queue, r, r_qentry);
	evtimer_del(r->r_timer);
	event_free(r->r_timer);
	repo_snap_unref(r->r_snap);
	free(r->r_name);
	free(r->r_url);
	free(r->r_branch);
	free(r->r_path);
	free(r->r_key_file);
	free(r->r_known_file);
	free(r->r_file_error);
	free(r->r_commit_tmpl);
	free(r->r_error);
	free(r);
}

static void
repo_schedule(struct repo *r, int secs)
{
	struct timeval	 tv = { secs, 0 };

	if (secs <= 0) {
		repo_enqueue(r);
		return;
	}
	r->r_next_poll = time(NULL) + secs;
	evtimer_add(r->r_timer, &tv);
}

/* After n consecutive failures: 2, 4, 8 s ... up to the poll interval. */
static int
repo_backoff(const struct repo *r)
{
	int	 cap, secs = REPO_BACKOFF_MIN;
	unsigned int i;

	cap = r->r_interval < REPO_BACKOFF_MAX ? r->r_interval :
	    REPO_BACKOFF_MAX;
	if (cap < REPO_BACKOFF_MIN)
		cap = REPO_BACKOFF_MIN;
	for (i = 1; i < r->r_fails && secs < cap; i++)
		secs *= 2;
	return secs < cap ? secs : cap;
}

/* The repository's last error, shown now; counted by repo_set_error. */
static void
repo_show_error(struct repo *r, const char *err)
{
	if (r->r_error == NULL || strcmp(r->r_error, err) != 0)
		log_warnx("repository %s: %s", r->r_name, err);
	free(r->r_error);
	r->r_error = xstrdup(err);
	r->r_error_at = time(NULL);
}

static void
repo_set_error(struct repo *r, const char *err)
{
	repo_show_error(r, err);
	r->r_fails++;
	r->r_errors++;
}

static void
repo_enqueue(struct repo *r)
{
	if (r->r_state == REPO_POLLING) {
		r->r_again = 1;
		return;
	}
	if (r->r_state == REPO_QUEUED)
		return;
	evtimer_del(r->r_timer);
	r->r_state = REPO_QUEUED;
	r->r_next_poll = 0;
	TAILQ_INSERT_TAIL(&repo_queue, r, r_qentry);
	repo_run();
}

static void
repo_timer_cb(int fd, short event, void *arg)
{
	repo_enqueue(arg);
}

/* --------------------------------------------------- the gitworker side */

/* The file:// remotes, as the gitworker's Landlock rules know them. */
static char *
repo_local_remotes(void)
{
	struct repo	*r;
	char		*s = xstrdup(""), *t;

	TAILQ_FOREACH(r, &repo_list, r_entry) {
		if (strncmp(r->r_url, "file://", 7) != 0)
			continue;
		t = xasprintf("%s%s\n", s, r->r_url);
		free(s);
		s = t;
	}
	return s;
}

/* IMSG_GIT_REPO: the repository and its secrets, read now as root. */
static void
repo_send_one(struct worker *w, struct repo *r)
{
	struct wire_git_repo	 g;
	struct msgw		 m;
	char			*key = NULL, *known = NULL, err[512], why[600];
	size_t			 keylen = 0, knownlen = 0;

	free(r->r_file_error);
	r->r_file_error = NULL;
	if (r->r_key_file != NULL && cfile_read(r->r_key_file,
	    GITW_KEY_MAX, 0, &key, &keylen, err, sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "ssh key file %s; fix it and "
		    "reload", err);
		r->r_file_error = xstrdup(why);
	}
	if (r->r_known_file != NULL && cfile_read(r->r_known_file,
	    GITW_KNOWNHOSTS_MAX, 0, &known, &knownlen, err,
	    sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "known-hosts file %s; fix it and "
		    "reload", err);
		free(r->r_file_error);
		r->r_file_error = xstrdup(why);
	}
	/*
	 * Shown at once, not at the next poll the backoff allows: the
	 * operator who just broke or fixed a file wants to know now.
	 */
	if (r->r_file_error != NULL)
		repo_show_error(r, r->r_file_error);
	/* Alike on purpose: a wire struct filled field by field. */
	g.name = r->r_name;
	g.url = r->r_url;
	g.branch = r->r_branch;
	g.path = r->r_path;
	g.max_file = r->r_max_file;
	g.max_files = r->r_max_files;
	g.max_total = r->r_max_total;
	g.key = key;
	g.keylen = keylen;
	g.known = known;
	g.knownlen = knownlen;
	msg_init(&m);
	wire_put_git_repo(&m, &g);
	cfile_free(key, keylen);
	cfile_free(known, knownlen);
	/* The payload holds the key: clear it once it is queued. */
	if (m.buf != NULL && imsg_compose(&w->w_iev.ibuf, IMSG_GIT_REPO,
	    r->r_id, -1, m.buf, m.len) == -1)
		fatal("IMSG_GIT_REPO to %s", w->w_title);
	if (m.buf == NULL)
		fatalx("IMSG_GIT_REPO: out of memory");
	explicit_bzero(m.buf, m.len);
	msg_free(&m);
}

static void
repo_send_list(struct worker *w)
{
	struct repo	*r;

	TAILQ_FOREACH(r, &repo_list, r_entry)
		repo_send_one(w, r);
	if (imsgev_compose(&w->w_iev, IMSG_GIT_REPO_END, 0, -1, NULL,
	    0) == -1)
		fatal("IMSG_GIT_REPO_END to %s", w->w_title);
	repo_listsent = 1;
}

/* Start the next queued poll, if the gitworker is free. */
static void
repo_run(void)
{
	struct wire_git_poll	 p;
	struct worker		*w;
	struct repo		*r;
	struct msgw		 m;
	struct timeval		 tv;

	if (repo_poll.p_repo == NULL && repo_restart &&
	    (w = repo_gitworker()) != NULL) {
		repo_restart = 0;
		supervise_kill(w, "file:// remotes changed; its sandbox must "
		    "name them");
		return;
	}
again:
	if (repo_poll.p_repo != NULL || !repo_listsent || repo_restart ||
	    (w = repo_gitworker()) == NULL ||
	    (r = TAILQ_FIRST(&repo_queue)) == NULL)
		return;
	TAILQ_REMOVE(&repo_queue, r, r_qentry);
	/* Without its key or known hosts a poll could only fail. */
	if (r->r_file_error != NULL) {
		r->r_state = REPO_IDLE;
		r->r_again = 0;
		repo_set_error(r, r->r_file_error);
		repo_schedule(r, repo_backoff(r));
		goto again;
	}
	r->r_state = REPO_POLLING;
	memset(&repo_poll, 0, sizeof(repo_poll));
	repo_poll.p_repo = r;
	repo_poll.p_seq = repo_nextseq++;
	clock_gettime(CLOCK_MONOTONIC, &repo_poll.p_start);
	p.seq = repo_poll.p_seq;
	p.commit = r->r_snap != NULL ? r->r_snap->rs_commit : "";
	strlcpy(repo_poll.p_known, p.commit, sizeof(repo_poll.p_known));
	msg_init(&m);
	wire_put_git_poll(&m, &p);
	if (imsgev_send(&w->w_iev, &m, IMSG_GIT_POLL, r->r_id, -1) == -1)
		fatal("IMSG_GIT_POLL to %s", w->w_title);
	/*
	 * Written now, not at the next turn of the loop: a webhook's caller
	 * still has its answer and an audit record to come.  What cannot be
	 * written now stays queued, and the loop reports a broken channel.
	 */
	(void)imsgbuf_write(&w->w_iev.ibuf);
	tv.tv_sec = r->r_timeout;
	tv.tv_usec = 0;
	evtimer_add(repo_deadline, &tv);
	log_debug("repository %s: poll %u", r->r_name, repo_poll.p_seq);
}

/* The poll in flight is over: publish nothing else, schedule the next. */
static void
repo_poll_end(const char *err)
{
	struct repo	*r = repo_poll.p_repo;
	struct timespec	 now;
	double		 ms;
	int		 next;

	webpub_changed();	/* fetched_at, the error, maybe the commit */
	if (r == NULL)
		return;
	evtimer_del(repo_deadline);
	repo_snap_free(repo_poll.p_snap);
	free(repo_poll.p_pathv);
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - repo_poll.p_start.tv_sec) * 1e3 +
	    (now.tv_nsec - repo_poll.p_start.tv_nsec) / 1e6;
	memset(&repo_poll, 0, sizeof(repo_poll));
	if (r->r_removed) {
		repo_free(r);
		repo_run();
		return;
	}
	r->r_state = REPO_IDLE;
	r->r_polls++;
	r->r_poll_ms = ms;
	if (err != NULL) {
		repo_set_error(r, err);
		next = repo_backoff(r);
	} else {
		if (r->r_error != NULL)
			log_info("repository %s: recovered", r->r_name);
		free(r->r_error);
		r->r_error = NULL;
		r->r_fails = 0;
		r->r_checked_at = time(NULL);
		next = r->r_interval;
	}
	if (r->r_again) {
		r->r_again = 0;
		next = 0;
	}
	repo_schedule(r, next);
	repo_run();
}

static void
repo_deadline_cb(int fd, short event, void *arg)
{
	struct repo	*r = repo_poll.p_repo;
	struct worker	*w;
	char		 why[256];

	if (r == NULL)
		return;
	snprintf(why, sizeof(why), "no answer within %d s (fetch-timeout; "
	    "libgit2 has no network timeouts); the gitworker was restarted",
	    r->r_timeout);
	if ((w = repo_gitworker()) != NULL)
		supervise_kill(w, "poll of repository %s took longer than "
		    "%d s", r->r_name, r->r_timeout);
	repo_poll_end(why);
}

/* ------------------------------------------------------ snapshot assembly */

static void
repo_violation(struct worker *w, const char *fmt, ...)
    __attribute__((__format__(printf, 2, 3)));

/* The gitworker sent something wrong: kill it, drop the partial snapshot. */
static void
repo_violation(struct worker *w, const char *fmt, ...)
{
	va_list	 ap;
	char	 why[256];

	va_start(ap, fmt);
	text_vprintf(why, sizeof(why), 0, fmt, ap);
	va_end(ap);
	supervise_violation(w, "%s", why);
	repo_poll_end("the gitworker broke protocol and was restarted");
}

static void
repo_recv_begin(struct worker *w, struct repo *r,
    const struct wire_git_begin *b)
{
	struct repo_snap	*s;
	uint32_t		 nfiles = b->nfiles;
	uint64_t		 total = b->total;

	if (repo_poll.p_snap != NULL || nfiles > r->r_max_files ||
	    total > r->r_max_total || (uint64_t)nfiles * r->r_max_file <
	    total || text_check(b->author, strlen(b->author)) != NULL ||
	    text_check(b->subject, strlen(b->subject)) != NULL) {
		repo_violation(w, "IMSG_GIT_SNAP_BEGIN out of place or out "
		    "of bounds");
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->rs_files = calloc(nfiles + 1, sizeof(*s->rs_files))) == NULL ||
	    (repo_poll.p_pathv = calloc(nfiles + 1,
	    sizeof(*repo_poll.p_pathv))) == NULL)
		fatal("calloc");
	RB_INIT(&repo_poll.p_paths);
	s->rs_refs = 1;
	s->rs_self = s;
	s->rs_repo = xstrdup(r->r_name);
	strlcpy(s->rs_commit, b->commit, sizeof(s->rs_commit));
	s->rs_author = xstrdup(b->author);
	s->rs_time = b->time;
	s->rs_subject = xstrdup(b->subject);
	repo_poll.p_snap = s;
	repo_poll.p_nfiles = nfiles;
	repo_poll.p_total = total;
}

/* The current file is complete: its hash must be what was announced. */
static int
repo_file_done(struct repo_file *f)
{
	char	 hex[AUTH_SHA256_HEX + 1];

	auth_sha256_hex(f->rf_data, f->rf_size, hex);
	repo_poll.p_infile = 0;
	return strcmp(hex, f->rf_sha256) == 0 ? 0 : -1;
}

/*
 * The next file of the snapshot, checked (its place, path, kind, size, a
 * path not taken twice, one plan): a new entry, or NULL after a
 * violation.
 */
static struct repo_file *
repo_file_add(struct worker *w, struct repo *r, const char *what,
    int kind, const char *path, uint64_t size)
{
	struct repo_snap	*s = repo_poll.p_snap;
	struct repo_file	*f;
	struct repo_path	 key, *node;
	const char		*errstr;

	if (s == NULL || repo_poll.p_infile ||
	    s->rs_nfiles >= repo_poll.p_nfiles) {
		repo_violation(w, "%s out of place", what);
		return NULL;
	}
	if ((errstr = repo_check_path(path, r->r_path, kind)) != NULL ||
	    size > r->r_max_file ||
	    repo_poll.p_got + size > repo_poll.p_total) {
		repo_violation(w, "%s: %s", what, errstr != NULL ?
		    errstr : "size or hash out of bounds");
		return NULL;
	}
	key.rp_path = path;
	if (RB_FIND(repo_paths, &repo_poll.p_paths, &key) != NULL) {
		repo_violation(w, "%s: %s twice", what, path);
		return NULL;
	}
	if ((kind == GITW_FILE_PLAN && s->rs_plan != NULL) ||
	    (kind == GITW_FILE_PLAN_NIX && s->rs_plan_nix != NULL)) {
		repo_violation(w, "%s: two plans", what);
		return NULL;
	}
	node = &repo_poll.p_pathv[s->rs_nfiles];
	f = &s->rs_files[s->rs_nfiles++];
	f->rf_kind = kind;
	f->rf_path = xstrdup(path);
	node->rp_path = f->rf_path;
	RB_INSERT(repo_paths, &repo_poll.p_paths, node);
	f->rf_size = (size_t)size;
	if ((f->rf_data = malloc(f->rf_size + 1)) == NULL)
		fatal("malloc");
	f->rf_data[f->rf_size] = '\0';
	if (kind == GITW_FILE_PLAN)
		s->rs_plan = f;
	if (kind == GITW_FILE_PLAN_NIX)
		s->rs_plan_nix = f;
	if (kind == GITW_FILE_JOB)
		s->rs_njobs++;
	repo_poll.p_got += size;
	return f;
}

static void
repo_recv_file(struct worker *w, struct repo *r,
    const struct wire_git_file *wf)
{
	struct repo_file	*f;

	if ((f = repo_file_add(w, r, "IMSG_GIT_SNAP_FILE", wf->kind,
	    wf->path, wf->size)) == NULL)
		return;
	strlcpy(f->rf_sha256, wf->sha256, sizeof(f->rf_sha256));
	repo_poll.p_off = 0;
	repo_poll.p_infile = 1;
	if (f->rf_size == 0 && repo_file_done(f) == -1)
		repo_violation(w, "IMSG_GIT_SNAP_FILE: %s: wrong hash",
		    f->rf_path);
}

/*
 * The file at path in the snapshot the poll named as known (files come
 * in the same order: looked for from the last one found on).
 */
static const struct repo_file *
repo_base_file(const struct repo_snap *base, const char *path)
{
	size_t	 i, n;

	for (n = 0; n < base->rs_nfiles; n++) {
		i = (repo_poll.p_bnext + n) % base->rs_nfiles;
		if (strcmp(base->rs_files[i].rf_path, path) == 0) {
			repo_poll.p_bnext = i + 1;
			return &base->rs_files[i];
		}
	}
	return NULL;
}

/* A file as the known commit's snapshot has it: the master's own copy. */
static void
repo_recv_same(struct worker *w, struct repo *r,
    const struct wire_git_same *ws)
{
	const struct repo_snap	*base = r->r_snap;
	const struct repo_file	*bf;
	struct repo_file	*f;

	if (base == NULL || strcmp(base->rs_commit, repo_poll.p_known) != 0 ||
	    (bf = repo_base_file(base, ws->path)) == NULL ||
	    bf->rf_kind != ws->kind) {
		repo_violation(w, "IMSG_GIT_SNAP_SAME: %s is not a file of "
		    "the known commit's snapshot", ws->path);
		return;
	}
	if ((f = repo_file_add(w, r, "IMSG_GIT_SNAP_SAME", ws->kind,
	    ws->path, bf->rf_size)) == NULL)
		return;
	memcpy(f->rf_data, bf->rf_data, bf->rf_size);
	strlcpy(f->rf_sha256, bf->rf_sha256, sizeof(f->rf_sha256));
	repo_poll.p_same++;
}

static void
repo_recv_data(struct worker *w, const struct wire_git_data *d)
{
	struct repo_snap	*s = repo_poll.p_snap;
	struct repo_file	*f;
	size_t			 len = d->len;

	if (s == NULL || !repo_poll.p_infile) {
		repo_violation(w, "IMSG_GIT_SNAP_DATA out of place");
		return;
	}
	f = &s->rs_files[s->rs_nfiles - 1];
	if (len == 0 || len > f->rf_size - repo_poll.p_off) {
		repo_violation(w, "IMSG_GIT_SNAP_DATA: more than %s holds",
		    f->rf_path);
		return;
	}
	memcpy(f->rf_data + repo_poll.p_off, d->data, len);
	repo_poll.p_off += len;
	if (repo_poll.p_off == f->rf_size && repo_file_done(f) == -1)
		repo_violation(w, "IMSG_GIT_SNAP_DATA: %s: content does not "
		    "match its hash", f->rf_path);
}

static void
repo_recv_note(struct worker *w, struct repo *r,
    const struct wire_git_note *wn)
{
	struct repo_snap	*s = repo_poll.p_snap;
	struct repo_note	*n;
	const char		*path = wn->path, *text = wn->text;
	const char		*errstr = NULL;

	if (s == NULL || repo_poll.p_infile ||
	    s->rs_nfiles != repo_poll.p_nfiles ||
	    s->rs_nnotes >= GITW_NOTES_MAX ||
	    (errstr = repo_check_path(path, r->r_path, 0)) != NULL ||
	    (errstr = text_check(text, strlen(text))) != NULL) {
		repo_violation(w, "IMSG_GIT_SNAP_NOTE: %s", errstr != NULL ?
		    errstr : "out of place");
		return;
	}
	if (s->rs_notes == NULL && (s->rs_notes = calloc(GITW_NOTES_MAX,
	    sizeof(*s->rs_notes))) == NULL)
		fatal("calloc");
	n = &s->rs_notes[s->rs_nnotes++];
	n->rn_path = xstrdup(path);
	n->rn_text = xstrdup(text);
}

/* Each job gets its vars file; every vars file must belong to a job. */
static const char *
repo_snap_link(struct repo_snap *s)
{
	struct repo_file	*f, *v;
	const char		*base;
	char			*want;
	size_t			 i, j, cut, used;

	for (i = 0; i < s->rs_nfiles; i++) {
		f = &s->rs_files[i];
		if (f->rf_kind != GITW_FILE_JOB)
			continue;
		base = strrchr(f->rf_path, '/');
		base = base != NULL ? base + 1 : f->rf_path;
		cut = strlen(f->rf_path) - (repo_endswith(base, ".nomad.hcl") ?
		    10 : 6);
		want = xasprintf("%.*s.vars.hcl", (int)cut, f->rf_path);
		for (j = 0; j < s->rs_nfiles; j++) {
			v = &s->rs_files[j];
			if (v->rf_kind == GITW_FILE_VARS &&
			    strcmp(v->rf_path, want) == 0)
				f->rf_vars = v;
		}
		free(want);
	}
	for (j = 0; j < s->rs_nfiles; j++) {
		v = &s->rs_files[j];
		if (v->rf_kind != GITW_FILE_VARS)
			continue;
		for (i = used = 0; i < s->rs_nfiles; i++)
			if (s->rs_files[i].rf_vars == v)
				used = 1;
		if (!used)
			return v->rf_path;
	}
	return NULL;
}

static void
repo_recv_end(struct worker *w, struct repo *r, uint32_t flags)
{
	struct repo_snap	*s = repo_poll.p_snap;
	const char		*orphan;

	if (s == NULL || repo_poll.p_infile ||
	    s->rs_nfiles != repo_poll.p_nfiles ||
	    repo_poll.p_got != repo_poll.p_total) {
		repo_violation(w, "IMSG_GIT_SNAP_END out of place or with "
		    "counts that do not match");
		return;
	}
	if ((orphan = repo_snap_link(s)) != NULL) {
		repo_violation(w, "IMSG_GIT_SNAP_END: %s belongs to no job",
		    orphan);
		return;
	}
	s->rs_size = repo_poll.p_got;
	s->rs_fetched_at = time(NULL);
	s->rs_generation = ++r->r_generation;
	repo_poll.p_snap = NULL;
	repo_snap_unref(r->r_snap);
	r->r_snap = s;
	r->r_snapshots++;
	if (flags & GITW_SNAP_REBUILT)
		r->r_rebuilds++;
	log_info("repository %s: commit %.12s, %zu files (%zu jobs, %zu as "
	    "in %.12s)%s", r->r_name, s->rs_commit, s->rs_nfiles, s->rs_njobs,
	    repo_poll.p_same, repo_poll.p_same > 0 ? repo_poll.p_known : "-",
	    flags & GITW_SNAP_REBUILT ? "; its cache was rebuilt" : "");
	repo_poll_end(NULL);
	if (repo_listener != NULL && !r->r_removed)
		repo_listener(r, s, repo_listener_arg);
}

static void
repo_recv_unchanged(struct worker *w, struct repo *r,
    const struct wire_git_poll *p)
{
	if (repo_poll.p_snap != NULL || r->r_snap == NULL ||
	    strcmp(p->commit, r->r_snap->rs_commit) != 0) {
		repo_violation(w, "IMSG_GIT_UNCHANGED not about the known "
		    "commit");
		return;
	}
	repo_poll_end(NULL);
}

static void
repo_recv_error(struct worker *w, const struct wire_git_error *e)
{
	if (repo_poll.p_snap != NULL ||
	    text_check(e->error, strlen(e->error)) != NULL) {
		repo_violation(w, "IMSG_GIT_ERROR out of place or not text");
		return;
	}
	repo_poll_end(e->error);
}

/*
 * Every gitworker message is about the poll in flight: its repository's
 * id in peerid, the poll's sequence number first.  Each comes decoded by
 * its row's decoder (wire_git.h), is checked against the poll, then
 * handed to its receiver; anything out of place is a violation.
 */
void
repo_git_msg(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	struct repo	*r = repo_poll.p_repo;
	uint32_t	 type = imsg->hdr.type, seq;

	/*
	 * Alike on purpose: the switch below has a case a message too;
	 * this one reads each message's seq from its own struct, that one
	 * hands the message to its receiver, and the poll check between
	 * them is what both cases rely on.
	 */
	switch (type) {
	case IMSG_GIT_UNCHANGED:
		seq = u->git_unchanged.seq;
		break;
	case IMSG_GIT_ERROR:
		seq = u->git_error.seq;
		break;
	case IMSG_GIT_SNAP_BEGIN:
		seq = u->git_begin.seq;
		break;
	case IMSG_GIT_SNAP_FILE:
		seq = u->git_file.seq;
		break;
	case IMSG_GIT_SNAP_DATA:
		seq = u->git_data.seq;
		break;
	case IMSG_GIT_SNAP_NOTE:
		seq = u->git_note.seq;
		break;
	case IMSG_GIT_SNAP_END:
		seq = u->git_end.seq;
		break;
	case IMSG_GIT_SNAP_SAME:
		seq = u->git_same.seq;
		break;
	default:
		repo_violation(w, "%s is not a git message",
		    imsg_to_str(type));
		return;
	}
	if (r == NULL || imsg->hdr.peerid != r->r_id ||
	    seq != repo_poll.p_seq) {
		repo_violation(w, "%s for a poll not in flight",
		    imsg_to_str(type));
		return;
	}
	switch (type) {
	case IMSG_GIT_UNCHANGED:
		repo_recv_unchanged(w, r, &u->git_unchanged);
		break;
	case IMSG_GIT_ERROR:
		repo_recv_error(w, &u->git_error);
		break;
	case IMSG_GIT_SNAP_BEGIN:
		repo_recv_begin(w, r, &u->git_begin);
		break;
	case IMSG_GIT_SNAP_FILE:
		repo_recv_file(w, r, &u->git_file);
		break;
	case IMSG_GIT_SNAP_DATA:
		repo_recv_data(w, &u->git_data);
		break;
	case IMSG_GIT_SNAP_NOTE:
		repo_recv_note(w, r, &u->git_note);
		break;
	case IMSG_GIT_SNAP_END:
		repo_recv_end(w, r, u->git_end.flags);
		break;
	case IMSG_GIT_SNAP_SAME:
		repo_recv_same(w, r, &u->git_same);
		break;
	}
}

/* ---------------------------------------------------------- lifecycle */

void
repo_worker_started(struct worker *w)
{
	repo_listsent = 0;
	repo_restart = 0;
	if (!repo_inited)
		return;
	free(repo_localsig);
	repo_localsig = repo_local_remotes();
	repo_send_list(w);
	repo_run();
}

void
repo_worker_exited(struct worker *w)
{
	char	 why[sizeof(w->w_lastexit) + 64];

	repo_listsent = 0;
	if (repo_poll.p_repo != NULL) {
		snprintf(why, sizeof(why), "the gitworker stopped during the "
		    "poll (%s)", w->w_lastexit);
		repo_poll_end(why);
	}
}

void
repo_init(const struct nops_conf *conf)
{
	const struct conf_repo	*cr;
	struct repo		*r;
	struct worker		*w;
#ifdef NOPS_TEST_HOOKS
	const char		*t, *errstr;
	char			 secs[16];
	size_t			 n;
#endif

	if ((repo_deadline = evtimer_new(nopsd_env->n_base, repo_deadline_cb,
	    NULL)) == NULL)
		fatal("evtimer_new");
#ifdef NOPS_TEST_HOOKS
	/*
	 * Tests of the deadline cannot wait two minutes: SECONDS, or
	 * SECONDS:REPOSITORY for one repository only (the others keep
	 * theirs, so a loaded machine does not kill their polls).
	 */
	if ((t = getenv("NOPS_TEST_GIT_TIMEOUT")) != NULL) {
		n = strcspn(t, ":");
		if (n >= sizeof(secs) || (t[n] == ':' &&
		    strlcpy(repo_test_timeout_of, t + n + 1,
		    sizeof(repo_test_timeout_of)) >=
		    sizeof(repo_test_timeout_of)))
			fatalx("%s: NOPS_TEST_GIT_TIMEOUT too long", __func__);
		memcpy(secs, t, n);
		secs[n] = '\0';
		repo_test_timeout = (int)strtonum(secs, 1, 3600, &errstr);
		if (errstr != NULL)
			fatalx("%s: NOPS_TEST_GIT_TIMEOUT %s",
			    __func__, errstr);
	}
#endif
	TAILQ_FOREACH(cr, &conf->repos, entry) {
		r = repo_new(cr);
		TAILQ_INSERT_TAIL(&repo_list, r, r_entry);
	}
	repo_inited = 1;
	if ((w = repo_gitworker()) != NULL)
		repo_worker_started(w);
	TAILQ_FOREACH(r, &repo_list, r_entry)
		repo_enqueue(r);
}

static int
repo_same_source(const struct repo *r, const struct conf_repo *cr)
{
	return strcmp(r->r_url, cr->url) == 0 &&
	    strcmp(r->r_branch, cr->branch != NULL ? cr->branch : "main") ==
	    0 && strcmp(r->r_path, cr->path != NULL ? cr->path : "") == 0;
}

/*
 * SIGHUP: repositories added are polled at once, removed ones forgotten.
 * One whose url, branch or path changed starts again without a snapshot
 * (its old one described something else); other changes (interval, key,
 * known hosts) keep it.  The gitworker gets the new list; if the file://
 * remotes changed it is restarted, since its Landlock rules name them.
 */
void
repo_reconfigure(const struct nops_conf *conf)
{
	struct repo_list	 old = TAILQ_HEAD_INITIALIZER(old);
	const struct conf_repo	*cr;
	struct repo		*r, *n;
	struct worker		*w;
	char			*sig;

	if (!repo_inited)
		return;
	TAILQ_CONCAT(&old, &repo_list, r_entry);
	TAILQ_FOREACH(cr, &conf->repos, entry) {
		TAILQ_FOREACH(r, &old, r_entry)
			if (strcmp(r->r_name, cr->name) == 0)
				break;
		if (r != NULL && repo_same_source(r, cr)) {
			TAILQ_REMOVE(&old, r, r_entry);
			free(r->r_key_file);
			free(r->r_known_file);
			r->r_key_file = cr->ssh_key_file != NULL ?
			    xstrdup(cr->ssh_key_file) : NULL;
			r->r_known_file = cr->known_hosts_file != NULL ?
			    xstrdup(cr->known_hosts_file) : NULL;
			/* From the next poll on. */
			repo_limits(r, cr);
			if (r->r_interval != cr->poll_interval &&
			    cr->poll_interval > 0) {
				r->r_interval = cr->poll_interval;
				if (r->r_state == REPO_IDLE &&
				    r->r_error == NULL) {
					evtimer_del(r->r_timer);
					repo_schedule(r, r->r_interval);
				}
			}
		} else {
			n = repo_new(cr);
			if (r != NULL) {
				log_info("repository %s: url, branch or path "
				    "changed; fetching it again", r->r_name);
				n->r_generation = r->r_generation;
			} else
				log_info("repository %s added", cr->name);
			r = n;
		}
		TAILQ_INSERT_TAIL(&repo_list, r, r_entry);
	}
	while ((r = TAILQ_FIRST(&old)) != NULL) {
		TAILQ_REMOVE(&old, r, r_entry);
		if (repo_poll.p_repo == r)
			r->r_removed = 1;	/* freed when its poll ends */
		else
			repo_free(r);
	}

	if ((w = repo_gitworker()) != NULL) {
		sig = repo_local_remotes();
		/* Not in the middle of a poll: that one would fail. */
		if (repo_localsig != NULL && strcmp(sig, repo_localsig) != 0)
			repo_restart = 1;
		else
			repo_send_list(w);
		free(sig);
	}
	TAILQ_FOREACH(r, &repo_list, r_entry)
		if (r->r_polls == 0 && r->r_state == REPO_IDLE)
			repo_enqueue(r);
	repo_run();
}

/* ------------------------------------------------------------ queries */

struct repo *
repo_first(void)
{
	return TAILQ_FIRST(&repo_list);
}

struct repo *
repo_next(struct repo *r)
{
	return TAILQ_NEXT(r, r_entry);
}

struct repo *
repo_find(const char *name)
{
	struct repo	*r;

	TAILQ_FOREACH(r, &repo_list, r_entry)
		if (strcmp(r->r_name, name) == 0)
			return r;
	return NULL;
}

const char *
repo_name(const struct repo *r)
{
	return r->r_name;
}

const struct repo_snap *
repo_snapshot(const struct repo *r)
{
	return r->r_snap;
}

void
repo_set_listener(void (*fn)(struct repo *, const struct repo_snap *,
    void *), void *arg)
{
	repo_listener = fn;
	repo_listener_arg = arg;
}

int
repo_fetch_now(const char *name, const char *who)
{
	struct repo	*r;

	if ((r = repo_find(name)) == NULL)
		return -1;
	log_info("repository %s: fetch asked by %s", r->r_name, who);
	repo_enqueue(r);
	return 0;
}

static const char *
repo_kind_name(int kind)
{
	switch (kind) {
	case GITW_FILE_JOB:
		return "job";
	case GITW_FILE_VARS:
		return "vars";
	case GITW_FILE_PLAN:
		return "plan";
	case GITW_FILE_PLAN_NIX:
		return "plan-nix";
	case GITW_FILE_NIX:
		return "nix";
	case GITW_FILE_SCHEMA:
		return "schema";
	default:
		return "unknown";
	}
}

static json_t *
repo_json(const struct repo *r)
{
	const struct repo_snap	*s = r->r_snap;
	json_t			*o, *notes;
	char			*url;
	size_t			 i;

	o = jsonb_pack("{s:s,s:s,s:s,s:s,s:i,s:s}",
	    "name", r->r_name,
	    "url", r->r_url,
	    "branch", r->r_branch,
	    "path", r->r_path,
	    "poll_interval", r->r_interval,
	    "state", r->r_state == REPO_POLLING ? "polling" :
	    r->r_state == REPO_QUEUED ? "queued" : "idle");
	if (o == NULL)
		fatalx("json_pack");
	json_object_set_new(o, "commit", s != NULL ?
	    jsonb_str(s->rs_commit) : json_null());
	json_object_set_new(o, "author", s != NULL ?
	    jsonb_str(s->rs_author) : json_null());
	json_object_set_new(o, "subject", s != NULL ?
	    jsonb_str(s->rs_subject) : json_null());
	json_object_set_new(o, "commit_time", s != NULL ?
	    api_time_json((time_t)s->rs_time) : json_null());
	url = s != NULL ? gitctx_commit_url(r->r_commit_tmpl, s->rs_commit) :
	    NULL;
	json_object_set_new(o, "commit_url", jsonb_str(url));
	free(url);
	json_object_set_new(o, "fetched_at", s != NULL ?
	    api_time_json(s->rs_fetched_at) : json_null());
	json_object_set_new(o, "checked_at", api_time_json(r->r_checked_at));
	json_object_set_new(o, "generation",
	    json_integer((json_int_t)r->r_generation));
	json_object_set_new(o, "file_count",
	    json_integer(s != NULL ? (json_int_t)s->rs_nfiles : 0));
	json_object_set_new(o, "job_count",
	    json_integer(s != NULL ? (json_int_t)s->rs_njobs : 0));
	json_object_set_new(o, "bytes",
	    json_integer(s != NULL ? (json_int_t)s->rs_size : 0));
	json_object_set_new(o, "last_error", r->r_error == NULL ? json_null() :
	    jsonb_pack("{s:s,s:o,s:i}", "message", r->r_error,
	    "at", api_time_json(r->r_error_at), "failures", (int)r->r_fails));
	json_object_set_new(o, "next_poll", r->r_state != REPO_IDLE ?
	    json_null() : api_time_json(r->r_next_poll));
	json_object_set_new(o, "polls", json_integer((json_int_t)r->r_polls));
	json_object_set_new(o, "snapshots",
	    json_integer((json_int_t)r->r_snapshots));
	json_object_set_new(o, "errors", json_integer((json_int_t)r->r_errors));
	json_object_set_new(o, "cache_rebuilds",
	    json_integer((json_int_t)r->r_rebuilds));
	json_object_set_new(o, "last_poll_ms", json_real(r->r_poll_ms));
	notes = json_array();
	for (i = 0; s != NULL && i < s->rs_nnotes; i++)
		json_array_append_new(notes, jsonb_pack("{s:s,s:s}",
		    "path", s->rs_notes[i].rn_path,
		    "text", s->rs_notes[i].rn_text));
	json_object_set_new(o, "notes", notes);
	return o;
}

char *
repo_commit_url(const char *name, const char *commit)
{
	struct repo	*r;

	if ((r = repo_find(name)) == NULL)
		return NULL;
	return gitctx_commit_url(r->r_commit_tmpl, commit);
}

json_t *
repo_json_list(void)
{
	struct repo	*r;
	json_t		*items = json_array();

	TAILQ_FOREACH(r, &repo_list, r_entry)
		json_array_append_new(items, repo_json(r));
	return jsonb_pack("{s:o,s:n}", "items", items, "next");
}

json_t *
repo_json_one(const char *name)
{
	const struct repo_file	*f;
	struct repo		*r;
	json_t			*o, *files;
	size_t			 i;

	if ((r = repo_find(name)) == NULL)
		return NULL;
	o = repo_json(r);
	files = json_array();
	for (i = 0; r->r_snap != NULL && i < r->r_snap->rs_nfiles; i++) {
		f = &r->r_snap->rs_files[i];
		json_array_append_new(files, jsonb_pack("{s:s,s:s,s:I,s:s,s:o}",
		    "path", f->rf_path,
		    "kind", repo_kind_name(f->rf_kind),
		    "size", (json_int_t)f->rf_size,
		    "sha256", f->rf_sha256,
		    "vars", f->rf_vars != NULL ?
		    jsonb_str(f->rf_vars->rf_path) : json_null()));
	}
	json_object_set_new(o, "files", files);
	return o;
}
