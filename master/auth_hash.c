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
#include <sys/socket.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "sandbox.h"
#include "conf.h"
#include "master.h"
#include "auth.h"

#define AUTH_HASH_HASH_MAX	128	/* bcrypt's is 60 characters */

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
};

struct auth_hash_job {
	auth_hash_cb	 ahj_cb;
	void		*ahj_arg;
};

static struct auth_hash_job *ah_slots[AUTH_HASH_QUEUE_MAX];
static size_t		 ah_njobs;
static pid_t		 ah_pids[AUTH_HASH_PROCS];
static uint32_t		 ah_gen;
static int		 ah_fd = -1;
static struct event	*ah_ev;
static int		 ah_sched_logged;

static void	 auth_hash_stop(const char *);

/* ------------------------------------------------ the hashing process */

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
	r->ahr_result = auth_password_verify(m->ahm_data, m->ahm_pwlen, hash);
}

static __dead void
auth_hash_child(int fd)
{
	struct auth_hash_msg	 m;
	struct auth_hash_res	 r;
	struct sched_param	 sp;
	sigset_t		 none;
	ssize_t			 n;
	int			 sig, sched_errno = 0;

	/* The master's handlers write to its event loop: not ours. */
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	(void)signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* Only the socket, as descriptor 3 (stderr stays for fatal()). */
	if (dup2(fd, 3) == -1 || close_range(4, ~0U, 0) == -1)
		_exit(1);
	fd = 3;

	/* A scheduling group of its own, at the bottom of it. */
	if (setsid() == -1)
		sched_errno = errno;
	memset(&sp, 0, sizeof(sp));
	if (sched_setscheduler(0, SCHED_IDLE, &sp) == -1)
		sched_errno = errno;

	/* Nothing of the master's: no capability, no file, no process. */
	sandbox_caps_clear();
	(void)sandbox_landlock("hasher", NULL, 0);
	sandbox_seccomp("hasher", NULL, 0);

	for (;;) {
		n = read(fd, &m, sizeof(m));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);	/* the master is gone */
		auth_hash_compute(&m, (size_t)n, &r);
		explicit_bzero(&m, sizeof(m));
		r.ahr_sched_errno = sched_errno;
		while ((n = write(fd, &r, sizeof(r))) == -1 && errno == EINTR)
			;
		if (n != (ssize_t)sizeof(r))
			_exit(1);
	}
}

/* ------------------------------------------------------- the master */

static void
auth_hash_finish(uint32_t slot, int result)
{
	struct auth_hash_job	*j = ah_slots[slot];

	ah_slots[slot] = NULL;
	ah_njobs--;
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
	ah_slots[slot] = j;
	ah_njobs++;
	return 0;
}
