/*
 * A stand-in for nix-instantiate that reports, on its standard error,
 * what a Nix child of nopsd may and may not do (tests/integration/
 * test_plan.py runs it through NOPS_NIX_BINDIR, a test-hooks build).  It
 * runs where Nix would: a child of the unprivileged master, inside the
 * master's Landlock domain and under its seccomp allowlist, plus the
 * child's own (master/nixrun.c, master/nixrun_sandbox.c).  A shell
 * cannot run there (the master's filter kills its vfork and getpgrp);
 * this program is linked statically and makes only the calls it probes.
 *
 * One line per probe:
 *
 *	probe NAME: allowed
 *	probe NAME: refused ERRNO		(EACCES, EPERM, ...)
 *	probe NAME: killed SIGNAL		(tried in a child of its own)
 *
 * then "error: the probe is done" and exit 1, so that the plan is
 * invalid and its errors carry the lines.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
report(const char *name, int rc)
{
	if (rc == 0)
		fprintf(stderr, "probe %s: allowed\n", name);
	else
		fprintf(stderr, "probe %s: refused %s\n", name,
		    strerrorname_np(errno) != NULL ? strerrorname_np(errno) :
		    "?");
}

static int
try_read(const char *path)
{
	char	 buf[64];
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (read(fd, buf, sizeof(buf)) == -1) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int
try_list(const char *path)
{
	DIR	*d;

	if ((d = opendir(path)) == NULL)
		return -1;
	(void)readdir(d);
	return closedir(d);
}

static int
try_write(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	if (write(fd, "x\n", 2) != 2) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int
try_socket(int family)
{
	int	 s;

	if ((s = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	return close(s);
}

/* A call that may kill the caller: made in a child, its end reported. */
static void
deadly(const char *name, long nr, long a0, long a1)
{
	pid_t	 pid;
	int	 status;

	fflush(stderr);
	if ((pid = fork()) == -1) {
		report(name, -1);
		return;
	}
	if (pid == 0) {
		if (syscall(nr, a0, a1, 0, 0, 0) == -1)
			_exit(100 + (errno & 0x3f));
		_exit(0);
	}
	if (waitpid(pid, &status, 0) == -1) {
		report(name, -1);
		return;
	}
	if (WIFSIGNALED(status))
		fprintf(stderr, "probe %s: killed %s\n", name,
		    sigabbrev_np(WTERMSIG(status)) != NULL ?
		    sigabbrev_np(WTERMSIG(status)) : "?");
	else if (WEXITSTATUS(status) == 0)
		report(name, 0);
	else {
		errno = WEXITSTATUS(status) - 100;
		report(name, -1);
	}
}

int
main(void)
{
	char	 path[64];

	fprintf(stderr, "probe uid: %ld\n", (long)getuid());

	/* Its own directory (the working directory nopsd made for it). */
	report("write own dir", try_write("nix-probe.tmp"));
	report("read own dir", try_read("nix-probe.tmp"));
	(void)unlink("nix-probe.tmp");
	report("read the plan nopsd wrote", try_read("eval.nix"));

	/* What it may read: the store and the system's files. */
	report("list /nix/store", try_list("/nix/store"));
	report("read /etc/passwd", try_read("/etc/passwd"));
	report("list /usr/lib", try_list("/usr/lib"));

	/* What the master may read, the child not: its own Landlock. */
	report("list the state directory", try_list("../.."));
	report("read /etc/resolv.conf", try_read("/etc/resolv.conf"));
	report("list /etc/ssl/certs", try_list("/etc/ssl/certs"));
	/* Neither may. */
	report("read /etc/hostname", try_read("/etc/hostname"));
	report("read /proc/1/status", try_read("/proc/1/status"));
	snprintf(path, sizeof(path), "/tmp/nix-probe.%ld", (long)getpid());
	report("write /tmp", try_write(path));
	(void)unlink(path);

	/* No network: only a Unix socket (a Nix daemon's). */
	report("socket AF_INET", try_socket(AF_INET));
	report("socket AF_INET6", try_socket(AF_INET6));
	report("socket AF_NETLINK", try_socket(AF_NETLINK));
	report("socket AF_UNIX", try_socket(AF_UNIX));

	/* No namespaces, no identity, nothing of the kernel's. */
	report("unshare user", unshare(CLONE_NEWUSER));
	report("unshare mount", unshare(CLONE_NEWNS));
	report("setuid 0", setuid(0));
	deadly("ptrace", SYS_ptrace, 0 /* PTRACE_TRACEME */, 0);
	deadly("mount", SYS_mount, 0, 0);
	deadly("bpf", SYS_bpf, 0, 0);
	deadly("keyctl", SYS_keyctl, 0, 0);

	fprintf(stderr, "error: the probe is done\n");
	return 1;
}
