/*
 * wake_latency: how long a task woken by a message waits for a CPU while
 * two processes burn CPU as nopsd's password checks do (bench/README.md,
 * wake_latency).  Built and run by bench/wake_latency.
 *
 *	wake_latency MODE SECONDS [apart]
 *
 * A parent sends one byte to an echoing child over a socketpair every 10
 * ms and times the answer: two wake-ups, as a request crosses the
 * webworker and the master.  With "apart" the timing process is in a
 * session (an autogroup) of its own, as a client of nopsd is.  Meanwhile, unless MODE is "none", two
 * "checks" processes take jobs of 57 ms of CPU (bcrypt at cost 10) at 20
 * a second, alternately, like auth_hash.c's pool:
 *
 *	none		no checks: the floor
 *	fair		the checks as ordinary processes in the caller's group
 *	idle		each a session of its own under SCHED_IDLE (nopsd
 *			without a CPU cgroup)
 *	cgroup		as idle, and in a CPU cgroup marked idle (nopsd as
 *			root with cgroup v1's cpu.idle, its default here)
 *	giveway		as cgroup, and sleeping 20 us every 250 us of a job
 *			(nopsd since session 10: auth_hash_give_way())
 *	giveway1	as giveway, sleeping 1 us: session 9's try, which
 *			did not shorten the tail (the sleep was mostly over
 *			before the process left its CPU; bench/README.md)
 *	nice		as fair, at nice 19
 *	yield		as fair, and calling sched_yield(2) every 250 us of a
 *			job (not tried in nopsd yet)
 *
 * Prints one line: the mode, samples, p50, p90, p99 and the longest, in
 * microseconds.  Modes that need a cgroup print "skipped" with the reason
 * where none can be made (not root, no cgroup v1 CPU controller).
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define JOB_S		0.057	/* a check's CPU time */
#define JOBS_PER_S	20
#define GIVE_US		250
#define SAMPLE_US	10000
#define CGROUP		"/sys/fs/cgroup/cpu/nops-bench-wake"

static volatile sig_atomic_t	 gave;
static long			 give_ns = 20000;	/* giveway's sleep */

static double
now(void)
{
	struct timespec	 t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void
give_way(int sig)
{
	struct timespec	 t = { 0, give_ns };
	int		 saved = errno;

	(void)sig;
	nanosleep(&t, NULL);
	gave++;
	errno = saved;
}

static void
give_yield(int sig)
{
	int	 saved = errno;

	(void)sig;
	sched_yield();
	gave++;
	errno = saved;
}

/*
 * Alike on purpose: auth_hash_give_timer() (master/auth_hash.c), which
 * this program measures without linking nopsd.
 */
static void
give_timer(int on)
{
	struct itimerval	 it;

	memset(&it, 0, sizeof(it));
	if (on)
		it.it_interval.tv_usec = it.it_value.tv_usec = GIVE_US;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* JOB_S of CPU time, not of wall time: as a check, whatever preempts it. */
static void
burn(void)
{
	struct timespec	 t;
	volatile unsigned x = 1;
	double		 end;
	int		 i;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	end = t.tv_sec + t.tv_nsec / 1e9 + JOB_S;
	do {
		for (i = 0; i < 2000; i++)
			x = x * 1103515245u + 12345u;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while (t.tv_sec + t.tv_nsec / 1e9 < end);
}

static int
cgroup_make(char *why, size_t len)
{
	FILE	*f;

	if (mkdir(CGROUP, 0755) == -1 && errno != EEXIST) {
		snprintf(why, len, "mkdir %s: %s", CGROUP, strerror(errno));
		return -1;
	}
	if ((f = fopen(CGROUP "/cpu.idle", "w")) == NULL ||
	    fprintf(f, "1\n") < 0 || fclose(f) == EOF) {
		snprintf(why, len, "%s/cpu.idle: %s", CGROUP, strerror(errno));
		return -1;
	}
	return 0;
}

static void
checks_child(int fd, const char *mode)
{
	struct sched_param	 sp;
	struct sigaction	 sa;
	FILE			*f;
	char			 c;

	if (strcmp(mode, "nice") == 0)
		(void)nice(19);
	if (strcmp(mode, "fair") != 0 && strcmp(mode, "nice") != 0 &&
	    strcmp(mode, "yield") != 0) {
		setsid();
		memset(&sp, 0, sizeof(sp));
		sched_setscheduler(0, SCHED_IDLE, &sp);
	}
	if (strcmp(mode, "cgroup") == 0 || strcmp(mode, "giveway") == 0) {
		if ((f = fopen(CGROUP "/cgroup.procs", "w")) == NULL)
			_exit(2);
		fprintf(f, "0\n");
		fclose(f);
	}
	if (strcmp(mode, "giveway") == 0 || strcmp(mode, "yield") == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = strcmp(mode, "yield") == 0 ? give_yield :
		    give_way;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	}
	while (read(fd, &c, 1) == 1) {
		if (strcmp(mode, "giveway") == 0 || strcmp(mode, "yield") == 0)
			give_timer(1);
		burn();
		give_timer(0);
	}
	_exit(0);
}

static int
cmp(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char *argv[])
{
	const char	*modes[] = { "none", "fair", "idle", "cgroup", "giveway",
			    "giveway1", "nice", "yield" };
	const char	*mode, *label;
	pid_t		 checks[2] = { 0, 0 }, echo, feed = 0, timer = -1;
	int		 jobs[2][2], sp[2], i, n, k, known = 0, apart, st;
	double		*s, t, a;
	char		 c, why[256];

	apart = argc == 4 && strcmp(argv[3], "apart") == 0;
	if ((argc != 3 && !apart) ||
	    (n = atoi(argv[2]) * 1000000 / SAMPLE_US) <= 0) {
		fprintf(stderr, "usage: wake_latency none|fair|idle|cgroup|"
		    "giveway|giveway1|nice|yield seconds [apart]\n");
		return 1;
	}
	mode = label = argv[1];
	for (i = 0; i < (int)(sizeof(modes) / sizeof(modes[0])); i++)
		known |= strcmp(mode, modes[i]) == 0;
	if (!known) {
		fprintf(stderr, "wake_latency: unknown mode %s\n", mode);
		return 1;
	}
	if (strcmp(mode, "giveway1") == 0) {
		give_ns = 1000;
		mode = "giveway";
	}
	if ((strcmp(mode, "cgroup") == 0 || strcmp(mode, "giveway") == 0) &&
	    cgroup_make(why, sizeof(why)) == -1) {
		printf("%-8s skipped: %s\n", label, why);
		return 0;
	}
	if (strcmp(mode, "none") != 0) {
		for (i = 0; i < 2; i++) {
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, jobs[i]) == -1)
				return 1;
			if ((checks[i] = fork()) == 0) {
				close(jobs[i][0]);
				checks_child(jobs[i][1], mode);
			}
			close(jobs[i][1]);
		}
		/* 20 jobs a second, alternately: as logins to the pool */
		if ((feed = fork()) == 0) {
			c = 'j';
			t = now();
			for (i = 0;; i ^= 1) {
				t += 1.0 / JOBS_PER_S;
				if ((a = t - now()) > 0)
					usleep((useconds_t)(a * 1e6));
				if (write(jobs[i][0], &c, 1) != 1)
					_exit(0);
			}
		}
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1)
		return 1;
	if ((echo = fork()) == 0) {
		close(sp[0]);
		while (read(sp[1], &c, 1) == 1)
			if (write(sp[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(sp[1]);
	if ((s = calloc(n, sizeof(*s))) == NULL)
		return 1;
	/* apart: the timing in a child that is a session of its own */
	if (apart && (timer = fork()) != 0) {
		if (timer == -1 || waitpid(timer, &st, 0) == -1 ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			timer = -2;
		goto done;
	}
	if (apart)
		(void)setsid();
	usleep(200000);		/* the checks under way */
	for (k = 0; k < n; k++) {
		c = 'p';
		a = now();
		if (write(sp[0], &c, 1) != 1 || read(sp[0], &c, 1) != 1)
			return 1;
		s[k] = (now() - a) * 1e6;
		usleep(SAMPLE_US);
	}
	qsort(s, n, sizeof(*s), cmp);
	printf("%-8s%s n %d p50 %.0f p90 %.0f p99 %.0f max %.0f us\n", label,
	    apart ? " apart" : "", n, s[n / 2], s[n * 9 / 10], s[n * 99 / 100],
	    s[n - 1]);
	if (timer == 0) {
		fflush(stdout);
		_exit(0);
	}
done:
	if (feed != 0)
		kill(feed, SIGKILL);
	kill(echo, SIGKILL);
	for (i = 0; i < 2; i++)
		if (checks[i] != 0)
			kill(checks[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	if (strcmp(mode, "cgroup") == 0 || strcmp(mode, "giveway") == 0)
		(void)rmdir(CGROUP);	/* busy: another run uses it */
	return timer == -2;
}
