/*
 * Sandboxed, short-lived Nix children (nixrun.h).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <fts.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <sys/socket.h>

#include <event2/event.h>
#include <seccomp.h>

#include "log.h"
#include "xmalloc.h"
#include "sandbox.h"
#include "master.h"
#include "nixrun.h"

struct nixrun {
	TAILQ_ENTRY(nixrun)	 nr_entry;
	int			 nr_id;
	pid_t			 nr_pid;
	int			 nr_exited;
	int			 nr_status;
	char			*nr_what;
	char			 nr_dir[PATH_MAX];
	int			 nr_outfd;	/* -1: closed */
	int			 nr_errfd;
	struct event		*nr_outev;
	struct event		*nr_errev;
	struct event		*nr_timer;
	char			*nr_out;
	size_t			 nr_outlen;
	int			 nr_outfull;
	char			 nr_err[NIXRUN_ERR_MAX + 1];
	size_t			 nr_errlen;
	int			 nr_timedout;
	nixrun_cb		 nr_cb;
	void			*nr_arg;
};

static TAILQ_HEAD(, nixrun) nixrun_list = TAILQ_HEAD_INITIALIZER(nixrun_list);
static int	 nixrun_nextid = 1;

static void	 nixrun_check_done(struct nixrun *);

const char *
nixrun_bin(const char *name)
{
	static char	 path[PATH_MAX];
	const char	*dir = NIXRUN_BINDIR;

#ifdef NOPS_TEST_HOOKS
	if (getenv("NOPS_NIX_BINDIR") != NULL)
		dir = getenv("NOPS_NIX_BINDIR");
#endif
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/*
 * Alike on purpose: hoststep_find (hoststep.c) and hosts_run_find
 * (hosts.c) search their own TAILQ by id the same way; the element types
 * differ, and one search for all would need a macro.
 */
static struct nixrun *
nixrun_find(int id)
{
	struct nixrun	*nr;

	TAILQ_FOREACH(nr, &nixrun_list, nr_entry)
		if (nr->nr_id == id)
			return nr;
	return NULL;
}

/* Remove the private directory (the child wrote it as the workers' user). */
static void
nixrun_rmtree(const char *dir)
{
	char		 path[PATH_MAX], *paths[2] = { path, NULL };
	FTS		*fts;
	FTSENT		*e;

	if (strlcpy(path, dir, sizeof(path)) >= sizeof(path))
		return;
	if ((fts = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL)) == NULL)
		return;
	while ((e = fts_read(fts)) != NULL) {
		switch (e->fts_info) {
		case FTS_DP:
			if (rmdir(e->fts_accpath) == -1)
				log_warn("nixrun: rmdir %s", e->fts_path);
			break;
		case FTS_D:
			/* Nix makes some store copies read-only. */
			chmod(e->fts_accpath, 0700);
			break;
		case FTS_NS:
			if (e->fts_errno == ENOENT)
				break;
			/* FALLTHROUGH */
		default:
			if (unlink(e->fts_accpath) == -1)
				log_warn("nixrun: unlink %s", e->fts_path);
			break;
		}
	}
	fts_close(fts);
}

/*
 * The directory belongs to the workers' user, which the master is not:
 * a child of it becomes that user (nothing else: no capability, no
 * NO_NEW_PRIVS escape) and removes the tree.  Short; waited for here.
 */
static void
nixrun_rmdir(const char *dir)
{
	pid_t	 pid;
	int	 status;

	if (dir[0] == '\0')
		return;
	switch (pid = fork()) {
	case -1:
		log_warn("nixrun: fork to remove %s", dir);
		return;
	case 0:
		log_init(1, LOG_DAEMON);
		log_setverbose(0);
		sandbox_drop("nix", NULL, nopsd_env->n_uid, nopsd_env->n_gid);
		nixrun_rmtree(dir);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR) {
			log_warn("nixrun: waitpid");
			return;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		log_warnx("nixrun: removing %s failed", dir);
}

/*
 * Alike on purpose: nomad_call_free (nomad.c) and repo_free (repo.c) free
 * their own structs' members the same way; the members differ.
 */
static void
nixrun_free(struct nixrun *nr)
{
	TAILQ_REMOVE(&nixrun_list, nr, nr_entry);
	if (nr->nr_outev != NULL)
		event_free(nr->nr_outev);
	if (nr->nr_errev != NULL)
		event_free(nr->nr_errev);
	if (nr->nr_timer != NULL)
		event_free(nr->nr_timer);
	if (nr->nr_outfd != -1)
		close(nr->nr_outfd);
	if (nr->nr_errfd != -1)
		close(nr->nr_errfd);
	nixrun_rmdir(nr->nr_dir);
	free(nr->nr_out);
	free(nr->nr_what);
	free(nr);
}

static void
nixrun_read(int fd, short ev, void *arg)
{
	struct nixrun	*nr = arg;
	char		 buf[16384];	/* < NIXRUN_ERR_MAX */
	ssize_t		 n;
	size_t		 keep;

	(void)ev;
	if ((n = read(fd, buf, sizeof(buf))) == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		n = 0;
	}
	if (n == 0) {
		if (fd == nr->nr_outfd) {
			event_del(nr->nr_outev);
			close(nr->nr_outfd);
			nr->nr_outfd = -1;
		} else {
			event_del(nr->nr_errev);
			close(nr->nr_errfd);
			nr->nr_errfd = -1;
		}
		nixrun_check_done(nr);
		return;
	}
	if (fd == nr->nr_outfd) {
		if (nr->nr_outlen + (size_t)n > NIXRUN_OUT_MAX) {
			nr->nr_outfull = 1;
			return;
		}
		if ((nr->nr_out = realloc(nr->nr_out, nr->nr_outlen + n + 1)) ==
		    NULL)
			fatal("realloc");
		memcpy(nr->nr_out + nr->nr_outlen, buf, n);
		nr->nr_outlen += n;
		nr->nr_out[nr->nr_outlen] = '\0';
		return;
	}
	/* stderr: keep the last NIXRUN_ERR_MAX bytes (buf is smaller). */
	if (nr->nr_errlen + n > NIXRUN_ERR_MAX) {
		keep = NIXRUN_ERR_MAX - n;
		memmove(nr->nr_err, nr->nr_err + nr->nr_errlen - keep, keep);
		nr->nr_errlen = keep;
	}
	memcpy(nr->nr_err + nr->nr_errlen, buf, n);
	nr->nr_errlen += n;
	nr->nr_err[nr->nr_errlen] = '\0';
}

/* Read fd (the child's stdout or stderr) into nr without blocking. */
static struct event *
nixrun_watch(struct nixrun *nr, int fd)
{
	struct event	*ev;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	if ((ev = event_new(nopsd_env->n_base, fd, EV_READ | EV_PERSIST,
	    nixrun_read, nr)) == NULL)
		fatal("event_new");
	event_add(ev, NULL);
	return ev;
}

static void
nixrun_timeout(int fd, short ev, void *arg)
{
	struct nixrun	*nr = arg;

	(void)fd;
	(void)ev;
	if (nr->nr_exited)
		return;
	log_warnx("%s: no result within its time: killed", nr->nr_what);
	nr->nr_timedout = 1;
	/* Its own process group: nix's helpers go too. */
	kill(-nr->nr_pid, SIGKILL);
	kill(nr->nr_pid, SIGKILL);
}

/* Messages name files as in the repository, not in the directory. */
static void
nixrun_strip_dir(char *s, const char *dir)
{
	char	 pfx[PATH_MAX + 8];
	char	*p;
	size_t	 len;

	snprintf(pfx, sizeof(pfx), "%s/src/", dir);
	len = strlen(pfx);
	while ((p = strstr(s, pfx)) != NULL)
		memmove(p, p + len, strlen(p + len) + 1);
	snprintf(pfx, sizeof(pfx), "%s/", dir);
	len = strlen(pfx);
	while ((p = strstr(s, pfx)) != NULL)
		memmove(p, p + len, strlen(p + len) + 1);
}

static void
nixrun_check_done(struct nixrun *nr)
{
	char	 err[NIXRUN_ERR_MAX + 256];
	int	 status;

	if (!nr->nr_exited || nr->nr_outfd != -1 || nr->nr_errfd != -1)
		return;
	if (nr->nr_timedout) {
		snprintf(err, sizeof(err), "killed: no result within its "
		    "time limit\n%s", nr->nr_err);
		status = -1;
	} else if (nr->nr_outfull) {
		snprintf(err, sizeof(err), "its output was larger than %d "
		    "bytes", NIXRUN_OUT_MAX);
		status = -1;
	} else if (WIFEXITED(nr->nr_status)) {
		status = WEXITSTATUS(nr->nr_status);
		strlcpy(err, nr->nr_err, sizeof(err));
	} else {
		snprintf(err, sizeof(err), "killed by signal %d (a memory or "
		    "CPU limit?)\n%s", WTERMSIG(nr->nr_status), nr->nr_err);
		status = -1;
	}
	nixrun_strip_dir(err, nr->nr_dir);
	log_debug("%s: done, status %d", nr->nr_what, status);
	if (nr->nr_cb != NULL)
		nr->nr_cb(status, nr->nr_out != NULL ? nr->nr_out : "",
		    nr->nr_outlen, err, nr->nr_arg);
	nixrun_free(nr);
}

int
nixrun_reap(pid_t pid, int status)
{
	struct nixrun	*nr;

	TAILQ_FOREACH(nr, &nixrun_list, nr_entry)
		if (nr->nr_pid == pid && !nr->nr_exited) {
			nr->nr_exited = 1;
			nr->nr_status = status;
			evtimer_del(nr->nr_timer);
			nixrun_check_done(nr);
			return 1;
		}
	return 0;
}

void
nixrun_cancel(int id)
{
	struct nixrun	*nr;

	if ((nr = nixrun_find(id)) == NULL)
		return;
	nr->nr_cb = NULL;
	if (!nr->nr_exited) {
		kill(-nr->nr_pid, SIGKILL);
		kill(nr->nr_pid, SIGKILL);
	}
}

static __dead void
nixrun_child_fail(int errfd, const char *what)
{
	char	 buf[512];
	int	 n;

	n = snprintf(buf, sizeof(buf), "nops: cannot start Nix: %s: %s\n",
	    what, strerror(errno));
	if (n > 0)
		(void)!write(errfd, buf, (size_t)n < sizeof(buf) ? (size_t)n :
		    sizeof(buf) - 1);
	_exit(127);
}

/* Write one file below the working directory, making its directories. */
static int
nixrun_child_write(const struct nixrun_file *f)
{
	char		 path[PATH_MAX], *p;
	const char	*d;
	size_t		 off;
	ssize_t		 n;
	int		 fd;

	if (strlcpy(path, f->nf_path, sizeof(path)) >= sizeof(path))
		return -1;
	for (p = strchr(path, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0700) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600)) ==
	    -1)
		return -1;
	for (d = f->nf_data, off = 0; off < f->nf_size; off += n)
		if ((n = write(fd, d + off, f->nf_size - off)) <= 0) {
			close(fd);
			return -1;
		}
	return close(fd);
}

/*
 * No network: a socket of any family but AF_UNIX (a Nix daemon's socket)
 * fails with EACCES.  A network namespace would take root or a user
 * namespace, and the master has neither.
 */
static const struct sandbox_syscall nixrun_nonet[] = {
	SANDBOX_ERRNO_NE(socket, EACCES, 0, AF_UNIX),
	SANDBOX_ERRNO_NE(socketpair, EACCES, 0, AF_UNIX),
};

static __dead void
nixrun_child(const struct nixrun_spec *ns, const char *dir, int outfd,
    int errfd)
{
	struct rlimit	 rl;
	char		*envp[8], env[6][PATH_MAX + 32], **argv;
	size_t		 i, n;
	int		 nullfd, ne = 0;

	/* Its own process group, so a timeout kills all of it. */
	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	if ((nullfd = open("/dev/null", O_RDWR)) == -1)
		nixrun_child_fail(errfd, "/dev/null");
	if (dup2(nullfd, 0) == -1 || dup2(outfd, 1) == -1 ||
	    dup2(errfd, 2) == -1)
		nixrun_child_fail(errfd, "dup2");
	closefrom(3);
	errfd = 2;
	/* What goes wrong below is said on its standard error. */
	log_init(1, LOG_DAEMON);
	log_setverbose(0);

	rl.rlim_cur = rl.rlim_max = ns->ns_memory;
	if (setrlimit(RLIMIT_AS, &rl) == -1)
		nixrun_child_fail(errfd, "RLIMIT_AS");
	rl.rlim_cur = rl.rlim_max = ns->ns_timeout + 1;
	if (setrlimit(RLIMIT_CPU, &rl) == -1)
		nixrun_child_fail(errfd, "RLIMIT_CPU");
	rl.rlim_cur = rl.rlim_max = 0;
	if (setrlimit(RLIMIT_CORE, &rl) == -1)
		nixrun_child_fail(errfd, "RLIMIT_CORE");
	rl.rlim_cur = rl.rlim_max = 1024ULL * 1024 * 1024;
	if (setrlimit(RLIMIT_FSIZE, &rl) == -1)
		nixrun_child_fail(errfd, "RLIMIT_FSIZE");

	/*
	 * The workers' user, never the master's (whose files are the
	 * database): the drop every worker makes, from the unprivileged
	 * master as from root (no capability left, NO_NEW_PRIVS, root
	 * cannot be regained); fatal() says why on stderr.
	 */
	sandbox_drop("nix", NULL, nopsd_env->n_uid, nopsd_env->n_gid);
	sandbox_seccomp_deny("nix", nixrun_nonet,
	    sizeof(nixrun_nonet) / sizeof(nixrun_nonet[0]));
	/* Its directory, below the workers' own (nopsd made it, 0700). */
	if (mkdir(dir, 0700) == -1)
		nixrun_child_fail(errfd, "its directory");
	if (chdir(dir) == -1)
		nixrun_child_fail(errfd, "chdir");
	for (i = 0; i < ns->ns_nfiles; i++)
		if (nixrun_child_write(&ns->ns_files[i]) == -1)
			nixrun_child_fail(errfd, ns->ns_files[i].nf_path);
	if (mkdir("home", 0700) == -1 || mkdir("state", 0700) == -1 ||
	    mkdir("tmp", 0700) == -1 || mkdir("etc", 0700) == -1)
		nixrun_child_fail(errfd, "mkdir");

	snprintf(env[0], sizeof(env[0]), "HOME=%s/home", dir);
	snprintf(env[1], sizeof(env[1]), "NIX_STATE_DIR=%s/state", dir);
	snprintf(env[2], sizeof(env[2]), "NIX_CONF_DIR=%s/etc", dir);
	snprintf(env[3], sizeof(env[3]), "TMPDIR=%s/tmp", dir);
	snprintf(env[4], sizeof(env[4]), "PATH=%s:/usr/bin:/bin",
	    NIXRUN_BINDIR);
	for (ne = 0; ne < 5; ne++)
		envp[ne] = env[ne];
	if (ns->ns_store != NULL) {
		snprintf(env[5], sizeof(env[5]), "NIX_REMOTE=%s",
		    ns->ns_store);
		envp[ne++] = env[5];
	}
	envp[ne] = NULL;
	/* Its file system and system calls (nixrun_sandbox.c). */
	nixrun_confine(dir, ns->ns_argv[0]);
	/* execve() wants writable strings: copies of the spec's. */
	for (n = 0; ns->ns_argv[n] != NULL; n++)
		;
	if ((argv = calloc(n + 1, sizeof(*argv))) == NULL)
		nixrun_child_fail(errfd, "argv");
	for (i = 0; i < n; i++)
		if ((argv[i] = strdup(ns->ns_argv[i])) == NULL)
			nixrun_child_fail(errfd, "argv");
	execve(argv[0], argv, envp);
	nixrun_child_fail(errfd, ns->ns_argv[0]);
}

/*
 * A fresh name below the directory of Nix runs (nopsd makes it at start,
 * the workers' user's, mode 0700); the child makes the directory itself.
 */
static int
nixrun_dirname(char *buf, size_t len)
{
	static const char	 chars[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char			 rnd[11];
	size_t			 i;

	for (i = 0; i < sizeof(rnd) - 1; i++)
		rnd[i] = chars[arc4random_uniform(sizeof(chars) - 1)];
	rnd[i] = '\0';
	if ((size_t)snprintf(buf, len, "%s/" NIXRUN_DIR "/run.%s",
	    nopsd_env->n_statedir, rnd) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
nixrun_start(const struct nixrun_spec *ns, nixrun_cb cb, void *arg,
    char *errbuf, size_t errlen)
{
	struct nixrun	*nr;
	struct timeval	 tv;
	int		 out[2] = { -1, -1 }, err[2];
	pid_t		 pid;

	if ((nr = calloc(1, sizeof(*nr))) == NULL)
		fatal("calloc");
	nr->nr_outfd = nr->nr_errfd = -1;
	if (nixrun_dirname(nr->nr_dir, sizeof(nr->nr_dir)) == -1) {
		snprintf(errbuf, errlen, "its directory: %s", strerror(errno));
		free(nr);
		return -1;
	}
	if ((ns->ns_stdout_fd == -1 && pipe2(out, O_CLOEXEC) == -1) ||
	    pipe2(err, O_CLOEXEC) == -1) {
		snprintf(errbuf, errlen, "pipe: %s", strerror(errno));
		free(nr);
		return -1;
	}
	switch (pid = fork()) {
	case -1:
		snprintf(errbuf, errlen, "fork: %s", strerror(errno));
		if (out[0] != -1) {
			close(out[0]);
			close(out[1]);
		}
		close(err[0]);
		close(err[1]);
		free(nr);
		return -1;
	case 0:
		nixrun_child(ns, nr->nr_dir, ns->ns_stdout_fd != -1 ?
		    ns->ns_stdout_fd : out[1], err[1]);
		/* NOTREACHED */
	}
	setpgid(pid, pid);
	nr->nr_id = nixrun_nextid++;
	nr->nr_pid = pid;
	nr->nr_what = xstrdup(ns->ns_what);
	nr->nr_cb = cb;
	nr->nr_arg = arg;
	if (out[0] != -1) {
		close(out[1]);
		nr->nr_outfd = out[0];
		nr->nr_outev = nixrun_watch(nr, nr->nr_outfd);
	}
	close(err[1]);
	nr->nr_errfd = err[0];
	nr->nr_errev = nixrun_watch(nr, nr->nr_errfd);
	if ((nr->nr_timer = evtimer_new(nopsd_env->n_base, nixrun_timeout,
	    nr)) == NULL)
		fatal("evtimer_new");
	tv.tv_sec = ns->ns_timeout;
	tv.tv_usec = 0;
	evtimer_add(nr->nr_timer, &tv);
	TAILQ_INSERT_TAIL(&nixrun_list, nr, nr_entry);
	log_debug("%s: pid %d in %s", nr->nr_what, pid, nr->nr_dir);
	return nr->nr_id;
}
