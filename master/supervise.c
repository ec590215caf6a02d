/*
 * The process table and supervision of the workers: start (fork + re-exec
 * with -P title, the child's end of the socketpair on fd 3), the permit
 * check of what each worker sends (the message table, NOPS_IMSGS in
 * nops.h, says who may send what), and restarts with capped
 * exponential backoff when a worker exits, is killed, or breaks protocol.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "text.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "conf.h"
#include "master.h"
#include "webpub.h"
#include "nomad.h"
#include "repo.h"
#include "store.h"
#include "notify.h"
#include "nixrun.h"
#include "auth.h"
#include "hosts.h"

#define RESTART_MIN_MS		500
#define RESTART_MAX_MS		30000
#define RESTART_STABLE_SECS	30	/* a life this long resets
					   the backoff */
#define STOP_WAIT_SECS		5

struct worker workers[PROC_MAX] = {
	[PROC_GITWORKER] = {
		.w_id = PROC_GITWORKER,
		.w_title = "gitworker",
		.w_maxmsg = GITWORKER_MSG_MAX,
	},
	[PROC_NOMADWORKER] = {
		.w_id = PROC_NOMADWORKER,
		.w_title = "nomadworker",
		.w_flags = IMSGF_PASSFD,	/* SSH stdin streams */
		.w_maxmsg = NOMAD_MSG_MAX,
	},
	[PROC_WEBWORKER] = {
		.w_id = PROC_WEBWORKER,
		.w_title = "webworker",
		.w_flags = IMSGF_PASSFD,
		.w_maxmsg = WEBWORKER_MSG_MAX,
	},
};

static void	 supervise_dispatch(int, short, void *);
static void	 supervise_restart_cb(int, short, void *);
static void	 supervise_log_start(struct worker *, int);
static void	 supervise_log_read(int, short, void *);
static void	 supervise_exited(struct worker *, int status);
static void	 supervise_vstop(struct worker *, int, const char *, va_list)
		    __attribute__((__format__(printf, 3, 0)));

#define FOREACH_WORKER(w) \
	for ((w) = &workers[PROC_GITWORKER]; (w) < &workers[PROC_MAX]; (w)++)

struct worker *
supervise_worker(enum nops_proc id)
{
	if (id <= PROC_MASTER || id >= PROC_MAX)
		return NULL;
	return &workers[id];
}

void
supervise_init(void)
{
	struct worker	*w;
#ifdef NOPS_TEST_HOOKS
	const char	*hook = getenv("NOPS_TEST_HOOK");
	size_t		 len;
#endif

	FOREACH_WORKER(w) {
		w->w_restart_ev = evtimer_new(nopsd_env->n_base,
		    supervise_restart_cb, w);
		if (w->w_restart_ev == NULL)
			fatal("evtimer_new");
		strlcpy(w->w_lastexit, "", sizeof(w->w_lastexit));
#ifdef NOPS_TEST_HOOKS
		/* NOPS_TEST_HOOK=title:hook[:arg] arms a one-shot hook. */
		len = strlen(w->w_title);
		if (hook != NULL && strncmp(hook, w->w_title, len) == 0 &&
		    hook[len] == ':') {
			if ((w->w_testhook = strdup(hook + len + 1)) == NULL)
				fatal("strdup");
			log_info("test hook for %s: %s", w->w_title,
			    w->w_testhook);
		}
#endif
	}
}

/* The re-exec'd worker: argv is "nopsd -P title [-d] [-v...]". */
void
supervise_exec(const char *title, int debug, int verbose)
{
	static char	 tbuf[32];
	char		*argv[8];
	int		 argc = 0;

	strlcpy(tbuf, title, sizeof(tbuf));
	argv[argc++] = nopsd_env->n_argv0;
	argv[argc++] = "-P";
	argv[argc++] = tbuf;
	if (debug)
		argv[argc++] = "-d";
	if (nopsd_env->n_dumpable)
		argv[argc++] = "-c";
	if (verbose > 0)
		argv[argc++] = verbose > 1 ? "-vv" : "-v";
	argv[argc] = NULL;
	execv("/proc/self/exe", argv);
	fatal("execv /proc/self/exe for %s", title);
}

/*
 * A worker's log: its standard output and error are a pipe only the
 * master reads.  Each line is logged labelled with the worker's name and
 * escaped (log_relay()), so a worker cannot write a line that passes for
 * the master's own.  The reader outlives the worker until end of file.
 */
#define WORKER_LOG_LINE	1024

struct worker_log {
	const char	*wl_title;
	int		 wl_fd;
	struct event	*wl_ev;
	size_t		 wl_len;
	char		 wl_buf[WORKER_LOG_LINE];
};

static void
supervise_log_line(struct worker_log *wl, const char *line, size_t len)
{
	int	 pri = LOG_INFO;

	/* "<N>" from log.c; a worker may lie about it, never about who. */
	if (len >= 3 && line[0] == '<' && line[1] >= '0' && line[1] <= '7' &&
	    line[2] == '>') {
		pri = line[1] - '0';
		line += 3;
		len -= 3;
	}
	log_relay(pri, wl->wl_title, line, len);
}

static void
supervise_log_read(int fd, short event, void *arg)
{
	struct worker_log	*wl = arg;
	char			*nl;
	ssize_t			 n;
	size_t			 used;

	n = read(wl->wl_fd, wl->wl_buf + wl->wl_len,
	    sizeof(wl->wl_buf) - wl->wl_len);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		wl->wl_len += (size_t)n;
		for (;;) {
			nl = memchr(wl->wl_buf, '\n', wl->wl_len);
			if (nl == NULL && wl->wl_len < sizeof(wl->wl_buf))
				break;
			/* A line too long for the buffer is cut in pieces. */
			used = nl != NULL ? (size_t)(nl - wl->wl_buf) :
			    wl->wl_len;
			supervise_log_line(wl, wl->wl_buf, used);
			if (nl != NULL)
				used++;
			memmove(wl->wl_buf, wl->wl_buf + used,
			    wl->wl_len - used);
			wl->wl_len -= used;
		}
		return;
	}
	/* End of file (every copy closed) or an error: the rest, then done. */
	if (wl->wl_len > 0)
		supervise_log_line(wl, wl->wl_buf, wl->wl_len);
	event_free(wl->wl_ev);
	close(wl->wl_fd);
	free(wl);
}

static void
supervise_log_start(struct worker *w, int fd)
{
	struct worker_log	*wl;

	if ((wl = calloc(1, sizeof(*wl))) == NULL)
		fatal("calloc");
	wl->wl_title = w->w_title;
	wl->wl_fd = fd;
	wl->wl_ev = event_new(nopsd_env->n_base, fd, EV_READ | EV_PERSIST,
	    supervise_log_read, wl);
	if (wl->wl_ev == NULL || event_add(wl->wl_ev, NULL) == -1)
		fatal("event for the log of %s", w->w_title);
}

void
supervise_start(struct worker *w)
{
	int		 sp[2], lp[2], nullfd;
	pid_t		 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    PF_UNSPEC, sp) == -1)
		fatal("socketpair for %s", w->w_title);
	if (pipe2(lp, O_CLOEXEC) == -1)
		fatal("pipe for the log of %s", w->w_title);

	switch (pid = fork()) {
	case -1:
		fatal("fork %s", w->w_title);
	case 0:
		/*
		 * Child: no input, output and errors to the log pipe, its end
		 * of the channel on fd 3, nothing else inherited.
		 */
		if ((nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
		    dup2(nullfd, STDIN_FILENO) == -1 ||
		    dup2(lp[1], STDOUT_FILENO) == -1 ||
		    dup2(lp[1], STDERR_FILENO) == -1)
			fatal("standard descriptors of %s", w->w_title);
		if (sp[1] == PROC_CHILD_FD) {
			if (fcntl(sp[1], F_SETFD, 0) == -1)
				fatal("fcntl");
		} else if (dup2(sp[1], PROC_CHILD_FD) == -1)
			fatal("dup2");
		closefrom(PROC_CHILD_FD + 1);
		supervise_exec(w->w_title, nopsd_env->n_debug,
		    nopsd_env->n_verbose);
		/* NOTREACHED */
	}

	close(sp[1]);
	close(lp[1]);
	if (fcntl(lp[0], F_SETFL, O_NONBLOCK) == -1)
		fatal("fcntl");
	supervise_log_start(w, lp[0]);
	supervise_attach(w, sp[0], pid);
}

/*
 * The master's side of a started worker: its channel on fd, IMSG_INIT,
 * and what each kind of worker is told first.  The fuzz target of the
 * master's channels (tests/fuzz/fuzz_master.c) attaches its own ends.
 */
void
supervise_attach(struct worker *w, int fd, pid_t pid)
{
	struct worker_init wi;

	w->w_pid = pid;
	w->w_running = 1;
	w->w_ready = 0;
	w->w_started = time(NULL);
	imsgev_init(&w->w_iev, nopsd_env->n_base, fd, w->w_flags,
	    w->w_maxmsg, w->w_title, supervise_dispatch, w);

	memset(&wi, 0, sizeof(wi));
	wi.wi_uid = nopsd_env->n_uid;
	wi.wi_gid = nopsd_env->n_gid;
	wi.wi_verbose = log_getverbose();
	wi.wi_user = nopsd_env->n_conf->user;
	wi.wi_statedir = nopsd_env->n_statedir;
	wi.wi_chroot = NOPS_RUNDIR "/empty";
	wi.wi_testhook = w->w_testhook != NULL ? w->w_testhook : "";
	if (proc_send_init(&w->w_iev.ibuf, &wi) == -1)
		fatal("IMSG_INIT to %s", w->w_title);
	if (w->w_testhook != NULL) {
		free(w->w_testhook);
		w->w_testhook = NULL;
	}
	if (w->w_id == PROC_WEBWORKER) {
		control_send_listeners(w);
		/* It knows nobody yet, and holds no document. */
		webpub_reset();
	}
	if (w->w_id == PROC_NOMADWORKER) {
		nomad_worker_started(w);
		hosts_worker_started(w);
	}
	if (w->w_id == PROC_GITWORKER)
		repo_worker_started(w);
	imsgev_add(&w->w_iev);
	log_debug("started %s, pid %d", w->w_title, (int)pid);
}

void
supervise_start_all(void)
{
	struct worker	*w;

	FOREACH_WORKER(w)
		supervise_start(w);
}

/*
 * Kill a worker, say why (a protocol violation or the master's own
 * decision) and mark it stopped; the SIGCHLD path restarts it.
 */
static void
supervise_vstop(struct worker *w, int violation, const char *fmt,
    va_list ap)
{
	char	 why[200];

	text_vprintf(why, sizeof(why), 0, fmt, ap);
	if (violation)
		log_warnx("protocol violation by %s (pid %d): %s; killing it",
		    w->w_title, (int)w->w_pid, why);
	else
		log_warnx("killing %s (pid %d): %s", w->w_title,
		    (int)w->w_pid, why);
	snprintf(w->w_lastexit, sizeof(w->w_lastexit), "killed %s: %s",
	    violation ? "for protocol violation" : "by nopsd", why);
	w->w_killed = 1;
	/* Signal first: once the channel closes it would exit by itself. */
	if (w->w_pid > 0)
		kill(w->w_pid, SIGKILL);
	imsgev_clear(&w->w_iev);
	w->w_running = 0;
}

/*
 * A worker broke protocol.  Everything it sends is untrusted: log what it
 * did, kill it and let the SIGCHLD path restart it.  The master goes on.
 */
void
supervise_violation(struct worker *w, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	supervise_vstop(w, 1, fmt, ap);
	va_end(ap);
}

/*
 * The master stops a worker that is stuck (e.g. a git fetch past its
 * deadline): like a violation, without blaming the protocol.
 */
/* Alike on purpose: supervise_violation, the same wrapper without blame. */
void
supervise_kill(struct worker *w, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	supervise_vstop(w, 0, fmt, ap);
	va_end(ap);
}

/* IMSG_WORKER_READY: empty (its row's decoder has checked). */
void
supervise_ready(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	w->w_ready = 1;
	log_debug("%s ready", w->w_title);
}

/*
 * The master's dispatch table: the rows of NOPS_IMSGS to MASTER
 * (IMSG_HANDLER_ROW, nops.h).
 */
/* Alike on purpose: gitworker.c, nomadworker.c, webworker.c pick theirs. */
#define IMSG_TO_MASTER(h)	h
#define IMSG_TO_WORKER(h)	NULL
#define IMSG_TO_GIT(h)		NULL
#define IMSG_TO_NOMAD(h)	NULL
#define IMSG_TO_WEB(h)		NULL
static const master_handler master_handlers[IMSG_MAX] = {
	NOPS_IMSGS(IMSG_HANDLER_ROW)
};

static void
supervise_dispatch(int fd, short event, void *arg)
{
	static union imsg_payload	 u;	/* IMSG_WEB_SEEN's is large */
	struct worker			*w = arg;
	struct imsgbuf			*ibuf = &w->w_iev.ibuf;
	struct imsg			 imsg;
	const char			*what;
	ssize_t				 n;

	if (event & EV_READ) {
		n = imsgbuf_read(ibuf);
		if (n == -1 && (errno == EBADMSG || errno == ENOBUFS)) {
			/* A stray descriptor, or more than a message holds. */
			supervise_violation(w, "read: %s", strerror(errno));
			return;
		}
		if (n == -1 && errno != EAGAIN && errno != EINTR) {
			/* It died (ECONNRESET): SIGCHLD says how. */
			imsgev_clear(&w->w_iev);
			w->w_running = 0;
			return;
		}
		if (n == 0) {
			/* EOF: it is exiting; SIGCHLD does the rest. */
			imsgev_clear(&w->w_iev);
			w->w_running = 0;
			return;
		}
	}
	if (event & EV_WRITE) {
		if (imsgbuf_write(ibuf) == -1 && errno != EAGAIN) {
			imsgev_clear(&w->w_iev);
			w->w_running = 0;
			return;
		}
	}

	for (;;) {
		if ((n = imsg_get(ibuf, &imsg)) == -1) {
			supervise_violation(w, "bad framing: %s",
			    strerror(errno));
			return;
		}
		if (n == 0)
			break;
		if (imsg.hdr.pid != (uint32_t)w->w_pid ||
		    !imsg_permitted(imsg.hdr.type, w->w_id, PROC_MASTER) ||
		    master_handlers[imsg.hdr.type] == NULL) {
			supervise_violation(w, "%s not permitted%s",
			    imsg_to_str(imsg.hdr.type),
			    imsg.hdr.pid != (uint32_t)w->w_pid ?
			    " (wrong pid)" : "");
			if (imsg.fd != -1)
				close(imsg.fd);
			imsg_free(&imsg);
			return;
		}
		if (imsg.fd != -1 && imsg.hdr.type != IMSG_WEB_REQUEST) {
			/*
			 * Only a control-socket request carries one: its
			 * connection (api_dispatch_web checks and closes it).
			 */
			supervise_violation(w, "%s with a descriptor",
			    imsg_to_str(imsg.hdr.type));
			close(imsg.fd);
			imsg_free(&imsg);
			return;
		}
		/*
		 * Decoded once, by its row's decoder: a handler sees only
		 * what decodes, and never decodes it again.
		 */
		if (imsg_decode(imsg.hdr.type, imsg.data, imsg.datalen, &u,
		    &what) == -1) {
			supervise_violation(w, "%s malformed: %s",
			    imsg_to_str(imsg.hdr.type), what);
			if (imsg.fd != -1)
				close(imsg.fd);
			imsg_free(&imsg);
			return;
		}
		master_handlers[imsg.hdr.type](w, &imsg, &u);
		imsg_free(&imsg);
		if (!w->w_running)
			return;
	}
	imsgev_add(&w->w_iev);
}

static void
supervise_restart_cb(int fd, short event, void *arg)
{
	struct worker	*w = arg;

	if (nopsd_env->n_shutdown)
		return;
	w->w_restarts++;
	supervise_start(w);
	webpub_changed();	/* the Overview lists restarts */
	log_info("restarted %s (restart %u), pid %d", w->w_title,
	    w->w_restarts, (int)w->w_pid);
}

static void
supervise_exited(struct worker *w, int status)
{
	struct timeval	 tv;
	time_t		 lived;
	long		 ms;
	unsigned int	 i;
	char		 why[128];

	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "killed by signal %d (%s)",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(why, sizeof(why), "exited with status %d",
		    WEXITSTATUS(status));
	/* A violation or a kill already said why it ended; keep that. */
	if (!w->w_killed)
		strlcpy(w->w_lastexit, why, sizeof(w->w_lastexit));
	w->w_killed = 0;
	imsgev_clear(&w->w_iev);
	w->w_running = 0;
	w->w_ready = 0;
	w->w_pid = 0;
	/* Its requests will never be answered: fail them now. */
	if (w->w_id == PROC_NOMADWORKER) {
		nomad_worker_exited(w, w->w_lastexit);
		hosts_worker_exited(w);
	}
	if (w->w_id == PROC_GITWORKER)
		repo_worker_exited(w);
	if (nopsd_env->n_shutdown)
		return;

	lived = time(NULL) - w->w_started;
	if (lived >= RESTART_STABLE_SECS)
		w->w_fails = 0;
	ms = RESTART_MIN_MS;
	for (i = 0; i < w->w_fails && ms < RESTART_MAX_MS; i++)
		ms *= 2;
	if (ms > RESTART_MAX_MS)
		ms = RESTART_MAX_MS;
	w->w_fails++;
	log_warnx("%s %s; restarting in %ld ms", w->w_title, w->w_lastexit,
	    ms);

	if (nopsd_env->n_store != NULL &&
	    store_begin(nopsd_env->n_store) == 0) {
		if (store_event(nopsd_env->n_store, "system", "worker.exit",
		    w->w_title, w->w_lastexit) == -1 ||
		    store_commit(nopsd_env->n_store) == -1)
			store_rollback(nopsd_env->n_store);
	}

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(w->w_restart_ev, &tv);
}

void
supervise_sigchld(void)
{
	struct worker	*w;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		FOREACH_WORKER(w) {
			if (w->w_pid == pid) {
				supervise_exited(w, status);
				break;
			}
		}
		if (w == &workers[PROC_MAX] && !nixrun_reap(pid, status))
			(void)auth_hash_reap(pid, status);	/* or hashing */
	}
}

void
supervise_broadcast(uint32_t type, const void *data, size_t len)
{
	struct worker	*w;

	FOREACH_WORKER(w)
		if (w->w_running)
			imsgev_compose(&w->w_iev, type, 0, -1, data, len);
}

/* SIGTERM every worker, wait a little, then SIGKILL what is left. */
void
supervise_stop_all(void)
{
	struct worker	*w;
	pid_t		 pid;
	int		 status, left, i;

	FOREACH_WORKER(w) {
		evtimer_del(w->w_restart_ev);
		if (w->w_pid > 0)
			kill(w->w_pid, SIGTERM);
	}
	for (i = 0; i < STOP_WAIT_SECS * 10; i++) {
		left = 0;
		FOREACH_WORKER(w) {
			if (w->w_pid <= 0)
				continue;
			pid = waitpid(w->w_pid, &status, WNOHANG);
			if (pid == w->w_pid || (pid == -1 && errno == ECHILD))
				w->w_pid = 0;
			else
				left++;
		}
		if (left == 0)
			return;
		usleep(100 * 1000);
	}
	FOREACH_WORKER(w) {
		if (w->w_pid > 0) {
			log_warnx("%s did not stop; killing it", w->w_title);
			kill(w->w_pid, SIGKILL);
			waitpid(w->w_pid, &status, 0);
			w->w_pid = 0;
		}
	}
}
