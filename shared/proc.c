/*
 * Channel glue shared by the master and the workers: an imsgbuf driven by
 * a libevent event whose write interest follows the output queue, and the
 * worker start-up handshake (IMSG_INIT).
 */
#include "config.h"

#include <sys/types.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "wire_proc.h"
#include "sandbox.h"

void
imsgev_init(struct imsgev *iev, struct event_base *base, int fd, int flags,
    size_t maxsize, const char *name, void (*handler)(int, short, void *),
    void *data)
{
	if (imsgbuf_init(&iev->ibuf, fd, flags, maxsize) == -1)
		fatal("imsgbuf_init %s", name);
	imsgev_attach(iev, base, name, handler, data);
}

/*
 * Drive an imsgbuf that is already set up (a worker's channel, which may
 * hold messages that arrived with IMSG_INIT) from an event base.
 */
void
imsgev_attach(struct imsgev *iev, struct event_base *base, const char *name,
    void (*handler)(int, short, void *), void *data)
{
	iev->base = base;
	iev->ev = NULL;
	iev->handler = handler;
	iev->data = data;
	iev->events = 0;
	iev->name = name;
}

/* Re-arm the event: always readable, writable only while output waits. */
void
imsgev_add(struct imsgev *iev)
{
	short	 events = EV_READ;

	if (imsgbuf_queued(&iev->ibuf) > 0)
		events |= EV_WRITE;
	if (iev->ev != NULL && events == iev->events)
		return;
	if (iev->ev != NULL) {
		event_del(iev->ev);
		event_free(iev->ev);
	}
	iev->events = events;
	iev->ev = event_new(iev->base, iev->ibuf.fd, events | EV_PERSIST,
	    iev->handler, iev->data);
	if (iev->ev == NULL || event_add(iev->ev, NULL) == -1)
		fatal("event for %s", iev->name);
}

void
imsgev_clear(struct imsgev *iev)
{
	if (iev->ev != NULL) {
		event_del(iev->ev);
		event_free(iev->ev);
		iev->ev = NULL;
	}
	if (iev->ibuf.fd != -1) {
		imsgbuf_clear(&iev->ibuf);
		close(iev->ibuf.fd);
		iev->ibuf.fd = -1;
	}
}

int
imsgev_compose(struct imsgev *iev, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t len)
{
	if (imsg_compose(&iev->ibuf, type, peerid, fd, data, len) == -1)
		return -1;
	imsgev_add(iev);
	return 0;
}

int
imsgev_send(struct imsgev *iev, struct msgw *m, uint32_t type,
    uint32_t peerid, int fd)
{
	if (msg_send(m, &iev->ibuf, type, peerid, fd) == -1)
		return -1;
	imsgev_add(iev);
	return 0;
}

/*
 * The payload of the message a worker is handling, as its row's decoder
 * left it: one at a time, and not on the stack (the union holds
 * IMSG_WEB_SEEN's large layout).
 */
static union imsg_payload	 proc_payload;

int
proc_send_init(struct imsgbuf *ibuf, const struct worker_init *wi)
{
	struct msgw	 m;
	struct wire_init w;

	w.uid = wi->wi_uid;
	w.gid = wi->wi_gid;
	w.verbose = wi->wi_verbose;
	w.user = wi->wi_user;
	w.statedir = wi->wi_statedir;
	w.chroot = wi->wi_chroot;
	w.testhook = wi->wi_testhook;
	msg_init(&m);
	wire_put_init(&m, &w);
	return msg_send(&m, ibuf, IMSG_INIT, 0, -1);
}

/*
 * Block until the next message from the master is in imsg.  For the
 * start-up, before the worker runs an event loop; the master closing the
 * channel is fatal.
 */
void
proc_worker_wait(const char *title, struct imsgbuf *ibuf, struct imsg *imsg)
{
	struct pollfd	 pfd;
	ssize_t		 n;

	for (;;) {
		n = imsg_get(ibuf, imsg);
		if (n == -1)
			fatal("%s: imsg_get", title);
		if (n > 0)
			return;
		pfd.fd = ibuf->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			fatal("%s: poll", title);
		}
		n = imsgbuf_read(ibuf);
		if (n == 0)
			fatalx("%s: master closed the channel", title);
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			fatal("%s: read from master", title);
	}
}

/*
 * Block until the master's IMSG_INIT arrives.  Anything else first, or a
 * malformed payload, is fatal: the master is the only peer and it sends
 * INIT before anything else.
 */
void
proc_worker_init(const char *title, struct imsgbuf *ibuf,
    struct worker_init *wi)
{
	struct imsg		 imsg;
	const struct wire_init	*w = &proc_payload.init;
	const char		*what;

	memset(wi, 0, sizeof(*wi));
	proc_worker_wait(title, ibuf, &imsg);
	if (imsg.hdr.type != IMSG_INIT)
		fatalx("%s: expected IMSG_INIT, got %s", title,
		    imsg_to_str(imsg.hdr.type));
	if (imsg_decode(imsg.hdr.type, imsg.data, imsg.datalen,
	    &proc_payload, &what) == -1)
		fatalx("%s: malformed IMSG_INIT (%s)", title, what);
	wi->wi_uid = w->uid;
	wi->wi_gid = w->gid;
	wi->wi_verbose = w->verbose;
	if ((wi->wi_user = strdup(w->user)) == NULL ||
	    (wi->wi_statedir = strdup(w->statedir)) == NULL ||
	    (wi->wi_chroot = strdup(w->chroot)) == NULL ||
	    (wi->wi_testhook = strdup(w->testhook)) == NULL)
		fatal("%s: %s", title, __func__);
	imsg_free(&imsg);
	log_setverbose(wi->wi_verbose);
}

void
proc_add_path(struct proc_ctx *pc, const char *path, unsigned int access)
{
	struct sandbox_path	*p;
	char			**c;

	p = reallocarray(pc->pc_paths, pc->pc_npaths + 1, sizeof(*p));
	if (p == NULL)
		fatal("%s", __func__);
	pc->pc_paths = p;
	c = reallocarray(pc->pc_pathcopies, pc->pc_npaths + 1, sizeof(*c));
	if (c == NULL)
		fatal("%s", __func__);
	pc->pc_pathcopies = c;
	if ((c[pc->pc_npaths] = strdup(path)) == NULL)
		fatal("%s", __func__);
	p = &pc->pc_paths[pc->pc_npaths];
	p->path = c[pc->pc_npaths++];
	p->access = access;
}

void
proc_add_syscalls(struct proc_ctx *pc, const struct sandbox_syscall *rows,
    size_t n)
{
	struct sandbox_syscall	*p;

	if (n == 0)
		return;
	p = reallocarray(pc->pc_syscalls, pc->pc_nsyscalls + n, sizeof(*p));
	if (p == NULL)
		fatal(NULL);
	memcpy(p + pc->pc_nsyscalls, rows, n * sizeof(*p));
	pc->pc_syscalls = p;
	pc->pc_nsyscalls += n;
}

void
proc_confine(struct proc_ctx *pc)
{
	const struct proc_def	*pd = pc->pc_def;
	size_t			 i;

	sandbox_drop_keep(pd->pd_title, pc->pc_chroot, pc->pc_uid, pc->pc_gid,
	    pc->pc_caps);
	sandbox_nocore(pd->pd_title, pc->pc_dumpable);
	sandbox_profile_landlock(pd->pd_profile, pc->pc_paths, pc->pc_npaths);
	for (i = 0; i < pc->pc_npaths; i++)
		free(pc->pc_pathcopies[i]);
	free(pc->pc_pathcopies);
	free(pc->pc_paths);
	pc->pc_pathcopies = NULL;
	pc->pc_paths = NULL;
	pc->pc_npaths = 0;
	if (pd->pd_loop != NULL)
		pd->pd_loop(pc);
	sandbox_profile_seccomp_extra(pd->pd_profile, pc->pc_syscalls,
	    pc->pc_nsyscalls);
	free(pc->pc_syscalls);
	pc->pc_syscalls = NULL;
	pc->pc_nsyscalls = 0;
}

/*
 * The one sequence that confines a process (see proc.h): every failure
 * is fatal, nothing runs half-sandboxed.
 */
void
proc_run(const struct proc_def *pd, int debug, int verbose, int dumpable)
{
	struct proc_ctx	 pc;

	memset(&pc, 0, sizeof(pc));
	pc.pc_def = pd;
	pc.pc_debug = debug;
	pc.pc_verbose = verbose;
	pc.pc_dumpable = dumpable;

	if (pd->pd_iev != NULL) {
		/* Standard error is a pipe the master reads and labels. */
		log_init_parent();
		log_setverbose(verbose);
		log_procinit(pd->pd_title);
		if (imsgbuf_init(&pd->pd_iev->ibuf, PROC_CHILD_FD,
		    pd->pd_imsgflags, pd->pd_maxmsg) == -1)
			fatal("imsgbuf_init");
		proc_worker_init(pd->pd_title, &pd->pd_iev->ibuf, &pc.pc_wi);
		pc.pc_uid = pc.pc_wi.wi_uid;
		pc.pc_gid = pc.pc_wi.wi_gid;
		pc.pc_chroot = pd->pd_chroot ? pc.pc_wi.wi_chroot : NULL;
	}
	pd->pd_init(&pc);
	proc_confine(&pc);
	pd->pd_run(&pc);
	exit(0);
}

#ifdef NOPS_TEST_HOOKS
int
proc_testhook(const struct worker_init *wi, const char *name)
{
	size_t	 len = strlen(name);

	if (wi->wi_testhook == NULL)
		return 0;
	return strncmp(wi->wi_testhook, name, len) == 0 &&
	    (wi->wi_testhook[len] == '\0' || wi->wi_testhook[len] == ':');
}
#endif

/* IMSG_INIT comes once, before anything else (proc_worker_init()). */
void
proc_worker_reinit(struct imsg *imsg, const union imsg_payload *u)
{
	fatalx("a second IMSG_INIT");
}

/* IMSG_CTL_VERBOSE: see shared/wire_proc.h. */
void
proc_worker_verbose(struct imsg *imsg, const union imsg_payload *u)
{
	log_setverbose((int)u->verbose.level);
}

/*
 * Hand one message from the master to the worker's handler for its type
 * (handlers: the worker's dispatch table, see IMSG_HANDLER_ROW in
 * nops.h) with its payload, decoded here once by its row's decoder.  A
 * type without a handler or a payload that does not decode is fatal: a
 * worker trusts nothing it did not expect, even from the master.
 */
void
proc_worker_handle(const char *title, const worker_handler *handlers,
    struct imsg *imsg)
{
	uint32_t	 type = imsg->hdr.type;
	const char	*what;

	if (type >= IMSG_MAX || handlers[type] == NULL)
		fatalx("%s: unexpected %s from the master", title,
		    imsg_to_str(type));
	if (imsg_decode(type, imsg->data, imsg->datalen, &proc_payload,
	    &what) == -1)
		fatalx("%s: malformed %s from the master: %s", title,
		    imsg_to_str(type), what);
	handlers[type](imsg, &proc_payload);
}

/*
 * Read and dispatch what the master sent.  End of file means the master
 * is gone: the worker exits.
 */
void
proc_worker_read(struct imsgev *iev, short event,
    const worker_handler *handlers)
{
	struct imsg	 imsg;
	ssize_t		 n;

	if (event & EV_READ) {
		n = imsgbuf_read(&iev->ibuf);
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			fatal("%s: read from master", iev->name);
		if (n == 0) {
			log_debug("%s: master went away", iev->name);
			exit(0);
		}
	}
	if (event & EV_WRITE) {
		if (imsgbuf_write(&iev->ibuf) == -1)
			fatal("%s: write to master", iev->name);
	}
	for (;;) {
		if ((n = imsg_get(&iev->ibuf, &imsg)) == -1)
			fatal("%s: imsg_get", iev->name);
		if (n == 0)
			break;
		proc_worker_handle(iev->name, handlers, &imsg);
		imsg_free(&imsg);
	}
	imsgev_add(iev);
}

#ifdef NOPS_TEST_HOOKS
static void	 proc_testhook_signal(int);

/*
 * Faults the integration tests inject into a sandboxed, running worker:
 * "forbidden-msg" sends a type the permit table refuses, "bad-payload"
 * sends a permitted type that does not decode, "syscall" makes a call the
 * seccomp filter forbids.
 */
void
proc_worker_testhooks(const struct worker_init *wi, struct imsgev *iev)
{
	if (proc_testhook(wi, "forbidden-msg")) {
		log_info("test hook: sending a forbidden message");
		imsgev_compose(iev, IMSG_INIT, 0, -1, NULL, 0);
	}
	if (proc_testhook(wi, "bad-payload")) {
		log_info("test hook: sending a malformed message");
		imsgev_compose(iev, IMSG_WORKER_READY, 0, -1, "x", 1);
	}
	if (proc_testhook(wi, "syscall")) {
		char	*argv[] = { "/bin/true", NULL };

		log_info("test hook: calling execve under seccomp");
		execv(argv[0], argv);
		log_warn("test hook: execve returned");
	}
	if (proc_testhook(wi, "forge-log")) {
		/* Raw lines that try to pass for the master's own. */
		static const char forged[] =
		    "nopsd: deployment 2 approved by root\n"
		    "<2>nopsd: forged with a priority\n"
		    "innocent\rnopsd: after a carriage return\n";

		(void)write(STDERR_FILENO, forged, sizeof(forged) - 1);
		(void)write(STDOUT_FILENO, "nopsd: forged on stdout\n", 24);
	}
	if (proc_testhook(wi, "signal-siblings"))
		proc_testhook_signal(iev->ibuf.fd);
}

/*
 * "signal-siblings": signal 0 (a probe: it harms no one if it passes)
 * and F_SETOWN of the channel towards the master, for every pid within
 * PROC_PROBE_SPAN of our own, where the sibling workers are even on a
 * busy machine that forks a lot meanwhile.  Refusals are summed up in
 * one line per kind with the range they cover; anything else (allowed,
 * or another error) is logged pid by pid.
 */
#define PROC_PROBE_SPAN	2048

static void
proc_testhook_probe(const char *what, pid_t lo, pid_t hi, int n, int other)
{
	if (other == 0)
		log_info("test hook: %s %d..%d: every one refused: %s", what,
		    (int)lo, (int)hi, strerror(EPERM));
	else
		log_info("test hook: %s %d..%d: %d refused, %d not", what,
		    (int)lo, (int)hi, n - other, other);
}

/* One probe of pid p that rc answers: 1 where it was not refused. */
static int
proc_testhook_other(const char *what, pid_t p, int rc)
{
	if (rc == 0)
		log_info("test hook: %s %d: allowed", what, (int)p);
	else if (errno != EPERM)
		log_info("test hook: %s %d: %s", what, (int)p,
		    strerror(errno));
	else
		return 0;
	return 1;
}

static void
proc_testhook_signal(int fd)
{
	pid_t	 self = getpid(), p, lo, hi;
	int	 n = 0, kother = 0, fother = 0;

	lo = self - PROC_PROBE_SPAN > 1 ? self - PROC_PROBE_SPAN : 2;
	hi = self + PROC_PROBE_SPAN;
	for (p = lo; p <= hi; p++) {
		if (p == self)
			continue;
		n++;
		kother += proc_testhook_other("kill", p, kill(p, 0));
		fother += proc_testhook_other("F_SETOWN", p,
		    fcntl(fd, F_SETOWN, p));
	}
	proc_testhook_probe("kill", lo, hi, n, kother);
	proc_testhook_probe("F_SETOWN", lo, hi, n, fother);
	if (kill(getppid(), 0) == 0)
		log_info("test hook: kill master %d: allowed", (int)getppid());
	else
		log_info("test hook: kill master %d: %s", (int)getppid(),
		    strerror(errno));
	(void)fcntl(fd, F_SETOWN, self);
}
#endif
