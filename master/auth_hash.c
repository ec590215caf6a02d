/*
 * Password hashing off the event loop (nopsd(8), AUTHENTICATION): bcrypt
 * takes ~57 ms at cost 10 and ~230 ms at 12, so a burst of logins in the
 * master's event loop would hold every other answer, detection and apply
 * behind it.  AUTH_HASH_PROCS hashing processes run auth_password_verify()
 * for it.
 *
 * They are processes, not threads, for the scheduler: each calls
 * setsid(2) and runs with SCHED_IDLE.  The kernel shares the CPUs
 * between scheduling groups first (a session's autogroup, or a cgroup),
 * then between the tasks of a group.  Threads of the master, even under
 * SCHED_IDLE, used up the master's group's share, and on a busy machine
 * its answers then waited behind other groups (bench/README.md,
 * login_burst).  A process in a session of its own is a group of its
 * own where autogroups are on; where they are off (one group for all),
 * SCHED_IDLE keeps it behind every other task.
 *
 * Autogroups make a session a group at the weight of any other, though:
 * a hashing process then takes a fair share of a busy machine, and a
 * master waking on a CPU where one runs waits for the end of its slice.
 * So where the master starts as root with a CPU controller it may use,
 * the hashing processes join a cgroup of their own marked idle
 * (auth_hash_cgroup(): cpu.idle, the group's SCHED_IDLE): anything else
 * that wakes preempts them at once, and they get only the CPU nothing
 * else wants.  On a machine with none to spare that would be none at
 * all, and logins would never be answered: once a check has waited
 * AUTH_HASH_IDLE_WAIT the master clears cpu.idle, so that the group gets
 * a fair share, until no check waits (auth_hash_idle()).  Without a
 * cgroup they stay as above.
 *
 * Neither is enough on every kernel, though.  Measured on this project's
 * test machines (Linux 6.18 under KVM, HZ=250; bench/README.md,
 * wake_latency, with the kernel's own sched_switch trace): a task woken
 * on a CPU where a hashing process runs often waited for the next
 * scheduler tick, up to 4 ms, idle cgroup and SCHED_IDLE notwithstanding:
 * the kernel marks the check for preemption, and then its pick of the
 * next entity (EEVDF's, by eligibility and deadline between the groups)
 * takes the idle group's again.  No policy, weight or time slice of ours
 * changed that; a process that leaves its CPU now and then bounds it.  So
 * while a check runs, an interval timer (AUTH_HASH_GIVE_US of wall time,
 * SIGALRM) makes the hashing process sleep AUTH_HASH_GIVE_NS
 * (auth_hash_give_way()): its group leaves the run queue, a task waiting
 * for that CPU runs, and an idle task waking never preempts it.  The
 * sleep must really block: one of a microsecond (session 9) had mostly
 * expired before the process could leave the CPU, and changed nothing.
 * Where no task waits, the CPU idles for the moment: a check takes about
 * a tenth longer.  The timer is off between checks, so an idle pool never
 * wakes.  Each result says how often its check gave way
 * (nops_auth_hash_gave_way_total).
 *
 * A hashing process is a fork of the master that keeps one descriptor,
 * a SOCK_SEQPACKET socket shared by all of them: one message per job
 * (slot, pool generation, password, hash), one per result.  It opens no
 * file (Landlock with no path), and its seccomp filter is the base every
 * process of nopsd has (memory, read and write on what it holds, exit):
 * no open, no socket, no process, no signal to another.  It exits when
 * the master's end closes.  If one dies, the jobs waiting fail, the
 * others are killed, and the next login starts a new pool.  Each
 * result's callback runs in the event loop.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <seccomp.h>

#include "log.h"
#include "logflood.h"
#include "sandbox.h"
#include "conf.h"
#include "master.h"
#include "auth.h"
#include "metrics.h"

#define AUTH_HASH_HASH_MAX	128	/* bcrypt's is 60 characters */
#define AUTH_HASH_GIVE_US	250	/* a check gives way this often */
#define AUTH_HASH_GIVE_NS	20000	/* for this long */

struct auth_hash_msg {			/* master -> hashing process */
	uint32_t	 ahm_slot;
	uint32_t	 ahm_gen;
	uint32_t	 ahm_pwlen;
	uint32_t	 ahm_hashlen;
	char		 ahm_data[AUTH_PASSWORD_MAX + AUTH_HASH_HASH_MAX];
};

struct auth_hash_res {			/* hashing process -> master */
	uint32_t	 ahr_slot;
	uint32_t	 ahr_gen;
	int32_t		 ahr_result;
	int32_t		 ahr_sched_errno;	/* SCHED_IDLE refused */
	int32_t		 ahr_cg_errno;		/* the cgroup refused */
	uint32_t	 ahr_gave_way;		/* times the check gave way */
};

struct auth_hash_job {
	auth_hash_cb	 ahj_cb;
	void		*ahj_arg;
	struct timespec	 ahj_t0;		/* queued at (monotonic) */
};

static struct auth_hash_job *ah_slots[AUTH_HASH_QUEUE_MAX];
static size_t		 ah_njobs;
static pid_t		 ah_pids[AUTH_HASH_PROCS];
static uint32_t		 ah_gen;
static int		 ah_fd = -1;
static struct event	*ah_ev;
static int		 ah_sched_logged;
static uint64_t		 ah_gave_way_total;	/* summed over results */
static int		 ah_cgfd = -1;	/* the idle cgroup's cgroup.procs */
static int		 ah_idlefd = -1;	/* its cpu.idle, when there
						   is one */
static int		 ah_weightfd = -1;	/* its cpu.shares or
						   cpu.weight */
static const char	*ah_idle_on;	/* what makes it idle */
static char		 ah_fair[16];	/* the weight of its sessions */
static int		 ah_idle;	/* 1: idle, 0: a fair share */
static struct event	*ah_idle_ev;	/* a check waits: see how long */
static char		 ah_cgdir[PATH_MAX];
static struct log_flood	 ah_fair_flood = LOG_FLOOD_INITIALIZER(
			    "password hashing given a fair share", LOG_INFO);

static void	 auth_hash_stop(const char *);

/* ------------------------------------------------ the hashing process */

#ifdef NOPS_TEST_HOOKS
/*
 * bench/login_burst's floor (test hooks only): with NOPS_TEST_HASH_WAIT
 * set, a check takes no CPU: it waits as long as bcrypt at cost 10 and
 * accepts that variable's value as every user's password, nothing else.
 */
static int
auth_hash_test_wait(const struct auth_hash_msg *m, struct auth_hash_res *r)
{
	struct timespec	 ts = { 0, 57 * 1000 * 1000 };
	const char	*pw = getenv("NOPS_TEST_HASH_WAIT");

	if (pw == NULL)
		return 0;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	r->ahr_result = strlen(pw) == m->ahm_pwlen &&
	    memcmp(pw, m->ahm_data, m->ahm_pwlen) == 0;
	return 1;
}
#endif

/* The hashing process: off its CPU for a moment, AUTH_HASH_GIVE_US apart. */
static volatile sig_atomic_t	 ah_gave_way;

static void
auth_hash_give_way(int sig)
{
	struct timespec	 ts = { 0, AUTH_HASH_GIVE_NS };
	int		 saved_errno = errno;

	(void)sig;
	if (nanosleep(&ts, NULL) == 0)
		ah_gave_way++;
	errno = saved_errno;
}

/* The timer that calls auth_hash_give_way(): on (1) or off (0). */
static void
auth_hash_give_timer(int on)
{
	struct itimerval	 it;

	memset(&it, 0, sizeof(it));
	if (on) {
		it.it_interval.tv_usec = AUTH_HASH_GIVE_US;
		it.it_value.tv_usec = AUTH_HASH_GIVE_US;
	}
	(void)setitimer(ITIMER_REAL, &it, NULL);
}

static void
auth_hash_compute(const struct auth_hash_msg *m, size_t len,
    struct auth_hash_res *r)
{
	char	 hash[AUTH_HASH_HASH_MAX + 1];

	r->ahr_slot = m->ahm_slot;
	r->ahr_gen = m->ahm_gen;
	r->ahr_result = -1;
	if (len < offsetof(struct auth_hash_msg, ahm_data) ||
	    m->ahm_pwlen > AUTH_PASSWORD_MAX ||
	    m->ahm_hashlen > AUTH_HASH_HASH_MAX ||
	    len != offsetof(struct auth_hash_msg, ahm_data) + m->ahm_pwlen +
	    m->ahm_hashlen)
		return;
	memcpy(hash, m->ahm_data + m->ahm_pwlen, m->ahm_hashlen);
	hash[m->ahm_hashlen] = '\0';
#ifdef NOPS_TEST_HOOKS
	if (auth_hash_test_wait(m, r))
		return;
#endif
	ah_gave_way = 0;
	auth_hash_give_timer(1);
	r->ahr_result = auth_password_verify(m->ahm_data, m->ahm_pwlen, hash);
	auth_hash_give_timer(0);
	r->ahr_gave_way = (uint32_t)ah_gave_way;
}

/* Beyond every process's base: the give-way timer, its own. */
static const struct sandbox_syscall ah_hasher_rows[] = {
	SANDBOX_ALLOW(setitimer),
};

static __dead void
auth_hash_child(int fd)
{
	struct auth_hash_msg	 m;
	struct auth_hash_res	 r;
	struct sched_param	 sp;
	struct sigaction	 sa;
	sigset_t		 none;
	ssize_t			 n;
	int			 sig, sched_errno = 0, cg_errno = 0;

	/* The master's handlers write to its event loop: not ours. */
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	(void)signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = auth_hash_give_way;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* the moment given way: AUTH_HASH_GIVE_NS, not 50 us more */
	(void)prctl(PR_SET_TIMERSLACK, 2000UL, 0, 0, 0);

	/*
	 * Only the socket, as descriptor 3 (stderr stays for fatal()), and
	 * until it is confined the idle cgroup's cgroup.procs as 4.
	 */
	if (dup2(fd, 3) == -1 || (ah_cgfd != -1 && dup2(ah_cgfd, 4) == -1) ||
	    close_range(ah_cgfd != -1 ? 5 : 4, ~0U, 0) == -1)
		_exit(1);
	fd = 3;

	/* A session (an autogroup) of its own, at the bottom of it. */
	if (setsid() == -1)
		sched_errno = errno;
	memset(&sp, 0, sizeof(sp));
	if (sched_setscheduler(0, SCHED_IDLE, &sp) == -1)
		sched_errno = errno;

	/* Nothing of the master's: no capability, no file, no process. */
	sandbox_caps_clear();
	(void)sandbox_landlock("hasher", NULL, 0);
	sandbox_seccomp("hasher", ah_hasher_rows, sizeof(ah_hasher_rows) /
	    sizeof(ah_hasher_rows[0]));

	/*
	 * Confined, into the idle cgroup by the descriptor the master opened
	 * ("0": the writer itself): the steps above ran at a fair share.
	 */
	if (ah_cgfd != -1) {
		if (write(4, "0\n", 2) != 2)
			cg_errno = errno != 0 ? errno : EIO;
		close(4);
	}

	for (;;) {
		n = read(fd, &m, sizeof(m));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);	/* the master is gone */
		auth_hash_compute(&m, (size_t)n, &r);
		explicit_bzero(&m, sizeof(m));
		r.ahr_sched_errno = sched_errno;
		r.ahr_cg_errno = cg_errno;
		while ((n = write(fd, &r, sizeof(r))) == -1 && errno == EINTR)
			;
		if (n != (ssize_t)sizeof(r))
			_exit(1);
	}
}

/* -------------------------------------------------- the idle cgroup */

#define AUTH_HASH_CGROUP	"nopsd-hashing"

/* Open dir/file to write; the descriptor, or -1 with errno. */
static int
auth_hash_cg_open(const char *dir, const char *file)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, O_WRONLY | O_CLOEXEC);
}

/* Is word one of the words of list, separated by sep? */
static int
auth_hash_cg_word(const char *list, const char *word, int sep)
{
	size_t	 n = strlen(word);

	for (;;) {
		if (strncmp(list, word, n) == 0 &&
		    (list[n] == sep || list[n] == '\0' || list[n] == '\n'))
			return 1;
		if ((list = strchr(list, sep)) == NULL)
			return 0;
		list++;
	}
}

/*
 * The directory of the master's own cgroup in the hierarchy of the CPU
 * controller, into dir: from /proc/self/cgroup, its mount point from
 * /proc/self/mountinfo.  *v2: cgroup2.  NULL with why set when there is
 * none to use.
 */
static char *
auth_hash_cg_find(char *dir, size_t len, int *v2, const char **why)
{
	FILE		*f;
	char		 line[4096], v1path[PATH_MAX] = "",
			 v2path[PATH_MAX] = "";
	char		 root[PATH_MAX], mnt[PATH_MAX], type[32], opts[1024];
	char		*ctl, *path, *sep;
	const char	*want;
	size_t		 rlen;

	*why = "no CPU controller";
	if ((f = fopen("/proc/self/cgroup", "re")) == NULL) {
		*why = "no /proc/self/cgroup";
		return NULL;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((ctl = strchr(line, ':')) == NULL ||
		    (path = strchr(++ctl, ':')) == NULL)
			continue;
		*path++ = '\0';
		if (*ctl == '\0' && strcmp(line, "0") == 0)
			strlcpy(v2path, path, sizeof(v2path));
		else if (auth_hash_cg_word(ctl, "cpu", ','))
			strlcpy(v1path, path, sizeof(v1path));
	}
	fclose(f);
	/* A controller bound to a v1 hierarchy is not in the v2 one. */
	*v2 = v1path[0] == '\0';
	want = *v2 ? v2path : v1path;
	if (want[0] != '/')
		return NULL;
	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL) {
		*why = "no /proc/self/mountinfo";
		return NULL;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		/* id parent dev root mount opts [tags] - type source super */
		if ((sep = strstr(line, " - ")) == NULL ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(sep + 3, "%31s %*s %1023s", type, opts) != 2)
			continue;
		if (*v2 ? strcmp(type, "cgroup2") != 0 :
		    strcmp(type, "cgroup") != 0 ||
		    !auth_hash_cg_word(opts, "cpu", ','))
			continue;
		/* Mounted from inside the hierarchy (a container): below it. */
		rlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
		if (strncmp(want, root, rlen) != 0 ||
		    (want[rlen] != '/' && want[rlen] != '\0'))
			continue;
		fclose(f);
		if ((size_t)snprintf(dir, len, "%s%s", mnt,
		    strcmp(want + rlen, "/") == 0 ? "" : want + rlen) >= len) {
			*why = "a path too long";
			return NULL;
		}
		return dir;
	}
	fclose(f);
	*why = "the CPU controller's hierarchy is not mounted";
	return NULL;
}

/*
 * As root, before the master confines itself (nopsd_init()): a cgroup
 * for the hashing processes below the master's own in the CPU
 * controller's hierarchy, marked idle (cpu.idle 1; without it, the
 * least weight), and its cgroup.procs opened for them to join
 * (auth_hash_child()).  With cgroup v2 the master's cgroup must already
 * hand the CPU controller to its children (cgroup.subtree_control): a
 * cgroup holding processes cannot start to (a systemd unit would need
 * Delegate=), and it is not changed.  Nothing to use, or a refusal: the
 * hashing processes stay in sessions of their own, and the log says why.
 * The cgroup is left when nopsd ends (the master cannot remove it once
 * confined); the next start uses it again.
 */
void
auth_hash_cgroup(uid_t uid, gid_t gid)
{
	char		 dir[PATH_MAX], ctl[256], path[PATH_MAX];
	const char	*why, *wfile;
	int		 v2, fd;
	ssize_t		 n;

	if (auth_hash_cg_find(dir, sizeof(dir), &v2, &why) == NULL)
		goto none;
	if (v2) {
		strlcat(dir, "/cgroup.subtree_control", sizeof(dir));
		fd = open(dir, O_RDONLY | O_CLOEXEC);
		n = fd == -1 ? -1 : read(fd, ctl, sizeof(ctl) - 1);
		if (fd != -1)
			close(fd);
		*strrchr(dir, '/') = '\0';
		if (n > 0)
			ctl[n] = '\0';
		if (n <= 0 || !auth_hash_cg_word(ctl, "cpu", ' ')) {
			why = "cgroup v2 without the CPU controller for the "
			    "master's children";
			goto none;
		}
	}
	if (strlcat(dir, "/" AUTH_HASH_CGROUP, sizeof(dir)) >= sizeof(dir)) {
		why = "a path too long";
		goto none;
	}
	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		why = strerror(errno);
		goto none;
	}
	/*
	 * cpu.idle (Linux 5.15); before it, the least weight.  Not idle, the
	 * cgroup weighs as much as the sessions of its processes would
	 * (clearing cpu.idle sets the default weight: written after it).
	 */
	wfile = v2 ? "cpu.weight" : "cpu.shares";
	snprintf(ah_fair, sizeof(ah_fair), "%d", AUTH_HASH_PROCS *
	    (v2 ? 100 : 1024));
	ah_idle_on = "1";
	if ((ah_idlefd = auth_hash_cg_open(dir, "cpu.idle")) == -1)
		ah_idle_on = v2 ? "1" : "2";
	if ((ah_weightfd = auth_hash_cg_open(dir, wfile)) == -1 ||
	    pwrite(ah_idlefd != -1 ? ah_idlefd : ah_weightfd, ah_idle_on,
	    strlen(ah_idle_on), 0) == -1) {
		why = strerror(errno);
		goto none;
	}
	/*
	 * cgroup.procs is opened as the master's user, its owner now: the
	 * kernel checks a move against the opener's ids, so the descriptor
	 * moves only the master's user's processes (the hashing ones), never
	 * another process of the machine.
	 */
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >=
	    sizeof(path) || chown(path, uid, gid) == -1 || setegid(gid) == -1 ||
	    seteuid(uid) == -1) {
		why = strerror(errno);
		goto back;
	}
	ah_cgfd = open(path, O_WRONLY | O_CLOEXEC);
	why = strerror(errno);
back:
	if (seteuid(0) == -1 || setegid(0) == -1)
		fatal("password hashing: back to root");
	if (ah_cgfd == -1)
		goto none;
	ah_idle = 1;
	strlcpy(ah_cgdir, dir, sizeof(ah_cgdir));
	log_info("password hashing: in the idle CPU cgroup %s (%s %s)",
	    ah_cgdir, ah_idlefd != -1 ? "cpu.idle" : wfile, ah_idle_on);
	return;
none:
	if (ah_idlefd != -1)
		close(ah_idlefd);
	if (ah_weightfd != -1)
		close(ah_weightfd);
	ah_idlefd = ah_weightfd = -1;
	log_info("password hashing: no idle CPU cgroup (%s), each hashing "
	    "process in a session of its own", why);
}

/* ------------------------------------------------------- the master */

/*
 * The cgroup idle (on 1) or at a fair share (0).  Written each time, not
 * only on a change: instances of nopsd on one machine share the cgroup,
 * and another may have written the other way.  Logged on the way to a
 * fair share, which means logins waited for a busy machine.
 */
static void
auth_hash_idle(int on)
{
	int		 fd = ah_idlefd != -1 ? ah_idlefd : ah_weightfd;
	const char	*v = on ? ah_idle_on : ah_idlefd != -1 ? "0" : ah_fair;

	if (ah_weightfd == -1)
		return;
	if (pwrite(fd, v, strlen(v), 0) == -1 || (!on && ah_idlefd != -1 &&
	    pwrite(ah_weightfd, ah_fair, strlen(ah_fair), 0) == -1)) {
		log_warn("password hashing: %s: %s", ah_cgdir, on ? "idle" :
		    "a fair share");
		return;
	}
	if (ah_idle != on && !on)
		log_flood(&ah_fair_flood, "password hashing: a check waited "
		    "%d s for an idle CPU; hashing gets a fair share until "
		    "none waits", AUTH_HASH_IDLE_WAIT);
	else if (ah_idle != on)
		log_debug("password hashing: idle again");
	ah_idle = on;
}

static long long
auth_hash_ms(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000LL +
	    (b->tv_nsec - a->tv_nsec) / 1000000;
}

/*
 * While checks wait: has one waited too long for an idle CPU?  Asked
 * again each AUTH_HASH_IDLE_WAIT while one has (see auth_hash_idle()).
 */
static void
auth_hash_waited(int fd, short event, void *arg)
{
	struct timespec	 now;
	struct timeval	 tv;
	long long	 oldest = 0, ms;
	size_t		 i;

	if (ah_njobs == 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (i = 0; i < AUTH_HASH_QUEUE_MAX; i++)
		if (ah_slots[i] != NULL &&
		    (ms = auth_hash_ms(&ah_slots[i]->ahj_t0, &now)) > oldest)
			oldest = ms;
	ms = AUTH_HASH_IDLE_WAIT * 1000LL - oldest;
	if (ms <= 0) {
		auth_hash_idle(0);
		ms = AUTH_HASH_IDLE_WAIT * 1000LL;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(ah_idle_ev, &tv);
}

static void
auth_hash_finish(uint32_t slot, int result)
{
	struct auth_hash_job	*j = ah_slots[slot];

	ah_slots[slot] = NULL;
	ah_njobs--;
	if (ah_njobs == 0)
		auth_hash_idle(1);
	j->ahj_cb(result, j->ahj_arg);
	free(j);
}

/* In the event loop: hand each result to its callback. */
static void
auth_hash_ready(int fd, short event, void *arg)
{
	struct auth_hash_res	 r;
	ssize_t			 n;

	for (;;) {
		n = read(fd, &r, sizeof(r));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n != (ssize_t)sizeof(r)) {
			auth_hash_stop(n == 0 ? "every hashing process "
			    "closed its socket" : "a result of a bad size");
			return;
		}
		if (r.ahr_sched_errno != 0 && !ah_sched_logged) {
			ah_sched_logged = 1;
			log_warnx("password hashing: a scheduling group of its "
			    "own or SCHED_IDLE refused (%s); hashing competes "
			    "with the master", strerror(r.ahr_sched_errno));
		}
		if (r.ahr_cg_errno != 0 && !ah_sched_logged) {
			ah_sched_logged = 1;
			log_warnx("password hashing: joining the idle cgroup "
			    "%s refused (%s); hashing takes a session's share "
			    "of the CPUs", ah_cgdir, strerror(r.ahr_cg_errno));
		}
		ah_gave_way_total += r.ahr_gave_way;
		if (r.ahr_gen != ah_gen || r.ahr_slot >= AUTH_HASH_QUEUE_MAX ||
		    ah_slots[r.ahr_slot] == NULL) {
			log_warnx("password hashing: a result for no waiting "
			    "login (slot %u)", r.ahr_slot);
			continue;
		}
		auth_hash_finish(r.ahr_slot, r.ahr_result < 0 ? -1 :
		    r.ahr_result > 0);
	}
}

/*
 * The pool starts with the master, before the database is open and while
 * its memory is small (a fork copies its page tables, and the master
 * then copies each page it writes once); after a failure, with the next
 * login.
 */
static int
auth_hash_start(void)
{
	int	 sv[2];
	size_t	 i;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("password hashing: socketpair");
		return -1;
	}
	ah_gen++;
	for (i = 0; i < AUTH_HASH_PROCS; i++) {
		switch (ah_pids[i] = fork()) {
		case -1:
			log_warn("password hashing: fork");
			close(sv[0]);
			close(sv[1]);
			auth_hash_stop(NULL);
			return -1;
		case 0:
			close(sv[0]);
			auth_hash_child(sv[1]);
			/* NOTREACHED */
		}
	}
	close(sv[1]);
	ah_fd = sv[0];
	if (fcntl(ah_fd, F_SETFL, O_NONBLOCK) == -1)
		fatal("password hashing: O_NONBLOCK");
	if ((ah_ev = event_new(nopsd_env->n_base, ah_fd, EV_READ | EV_PERSIST,
	    auth_hash_ready, NULL)) == NULL || event_add(ah_ev, NULL) == -1)
		fatalx("event");
	if (ah_weightfd != -1 && ah_idle_ev == NULL &&
	    (ah_idle_ev = evtimer_new(nopsd_env->n_base, auth_hash_waited,
	    NULL)) == NULL)
		fatalx("evtimer_new");
	log_debug("password hashing: %d processes, SCHED_IDLE",
	    AUTH_HASH_PROCS);
	return 0;
}

/*
 * The pool is lost (a process died, the socket failed): the logins that
 * wait fail, the processes left are killed, the next login starts anew.
 * why NULL: nothing to log.
 */
static void
auth_hash_stop(const char *why)
{
	size_t	 i;

	if (why != NULL)
		log_warnx("password hashing: %s; %zu waiting logins fail, the "
		    "next login starts new hashing processes", why, ah_njobs);
	for (i = 0; i < AUTH_HASH_PROCS; i++)
		if (ah_pids[i] > 0) {
			(void)kill(ah_pids[i], SIGKILL);
			ah_pids[i] = 0;
		}
	if (ah_ev != NULL) {
		event_free(ah_ev);
		ah_ev = NULL;
	}
	if (ah_fd != -1) {
		close(ah_fd);
		ah_fd = -1;
	}
	for (i = 0; i < AUTH_HASH_QUEUE_MAX; i++)
		if (ah_slots[i] != NULL)
			auth_hash_finish(i, -1);
}

void
auth_hash_init(void)
{
	if (ah_ev == NULL)
		(void)auth_hash_start();
}

void
auth_hash_metrics(struct metrics_out *mo)
{
	const struct metrics_one	 one[] = {
		{ "nops_auth_hash_gave_way_total", "counter",
		    "Times a password check's process left its CPU for a "
		    "moment, so that a task woken there ran at once.",
		    (int64_t)ah_gave_way_total },
	};

	metrics_ones(mo, one, sizeof(one) / sizeof(one[0]));
}

int
auth_hash_reap(pid_t pid, int status)
{
	char	 why[128];
	size_t	 i;

	for (i = 0; i < AUTH_HASH_PROCS; i++)
		if (ah_pids[i] == pid && pid > 0)
			break;
	if (i == AUTH_HASH_PROCS)
		return 0;
	ah_pids[i] = 0;
	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "hashing process %ld killed by "
		    "signal %d", (long)pid, WTERMSIG(status));
	else
		snprintf(why, sizeof(why), "hashing process %ld exited with "
		    "%d", (long)pid, WEXITSTATUS(status));
	auth_hash_stop(why);
	return 1;
}

int
auth_hash_verify(const char *pw, size_t pwlen, const char *hash,
    auth_hash_cb cb, void *arg)
{
	struct auth_hash_msg	 m;
	struct auth_hash_job	*j;
	size_t			 hlen, len;
	uint32_t		 slot;

	if (ah_njobs >= AUTH_HASH_QUEUE_MAX)
		return -1;
	if (ah_ev == NULL && auth_hash_start() == -1)
		return -1;
	for (slot = 0; ah_slots[slot] != NULL; slot++)
		;
	memset(&m, 0, sizeof(m));
	m.ahm_slot = slot;
	m.ahm_gen = ah_gen;
	/*
	 * bcrypt reads 72 bytes; a NUL anywhere makes the password wrong
	 * (auth_password_verify()), so one NUL stands for such a password.
	 */
	if (memchr(pw, '\0', pwlen) != NULL) {
		pw = "";
		pwlen = 1;
	} else if (pwlen > AUTH_PASSWORD_MAX)
		pwlen = AUTH_PASSWORD_MAX;
	/* A hash longer than any bcrypt hash: the check fails. */
	if ((hlen = strlen(hash)) > AUTH_HASH_HASH_MAX)
		hlen = 0;
	m.ahm_pwlen = pwlen;
	m.ahm_hashlen = hlen;
	memcpy(m.ahm_data, pw, pwlen);
	memcpy(m.ahm_data + pwlen, hash, hlen);
	len = offsetof(struct auth_hash_msg, ahm_data) + pwlen + hlen;
	if (write(ah_fd, &m, len) != (ssize_t)len) {
		explicit_bzero(&m, sizeof(m));
		log_warn("password hashing: job");
		return -1;
	}
	explicit_bzero(&m, sizeof(m));
	if ((j = calloc(1, sizeof(*j))) == NULL)
		fatal(NULL);
	j->ahj_cb = cb;
	j->ahj_arg = arg;
	clock_gettime(CLOCK_MONOTONIC, &j->ahj_t0);
	ah_slots[slot] = j;
	ah_njobs++;
	if (ah_idle_ev != NULL && !evtimer_pending(ah_idle_ev, NULL))
		auth_hash_waited(-1, 0, NULL);
	return 0;
}

/* The master stops: the hashing processes go with it, at once. */
void
auth_hash_shutdown(void)
{
	size_t	 i;

	for (i = 0; i < AUTH_HASH_PROCS; i++)
		if (ah_pids[i] > 0)
			(void)kill(ah_pids[i], SIGKILL);
}
