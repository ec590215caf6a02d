/*
 * The workers' sandboxes, tested by running real code paths with the real
 * profiles on (shared/sandbox.c + gitworker/git_sandbox.c,
 * nomadworker/nomad_sandbox.c, webworker/web_sandbox.c).  Every case runs
 * in a forked child that drops to the unprivileged user, applies the
 * worker's Landlock rules and seccomp filter, then either does what the
 * worker does (libgit2 fetch, libcurl HTTPS, evhttp over TLS, descriptor
 * passing) or makes a forbidden call; the parent judges the exit status
 * and reads /proc/<pid> from outside.  Runs as root.  harness.c forks
 * and waits, workload.c holds the workers' code paths; this file has the
 * cases.
 *
 *	test_sandbox [-v]		run the cases
 *	test_sandbox -g DIR		write the filter dumps DIR/<worker>.pfc
 *
 * The dumps tests/sandbox/<worker>.pfc are the reviewed filters: a change to
 * a profile shows up as a diff there (regenerate with -g and commit).
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "sandbox.h"
#include "test.h"
#include "harness.h"
#include "imsg.h"
#include "proc.h"
#include "nopsd_sandbox.h"

#define P_GIT	(1 << GIT)
#define P_NOMAD	(1 << NOMAD)
#define P_WEB	(1 << WEB)
#define P_ALL	(P_GIT | P_NOMAD | P_WEB)

extern char **environ;

/* ------------------------------------------------------- pfc dumps */

static int
write_dump(int prof, const char *path)
{
	int	 fd, rc;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		return -1;
	switch (prof) {
	case GIT:
		rc = gitworker_sandbox_export(fd);
		break;
	case NOMAD:
		rc = nomadworker_sandbox_export(fd);
		break;
	default:
		rc = webworker_sandbox_export(fd);
		break;
	}
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

/*
 * The master's filter, written with the workers' ids NOPSD_DUMP_UID and
 * NOPSD_DUMP_GID so that the dump does not depend on this machine.
 */
static int
write_master_dump(const char *path)
{
	int	 fd, rc;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		return -1;
	rc = nopsd_sandbox_export(NOPSD_DUMP_UID, NOPSD_DUMP_GID, fd);
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

static int	 compare_golden(const char *, const char *, size_t);

static void
test_master_dump(void)
{
	char		 path[PATH_MAX + 64], uidrow[64];
	char		*dump;
	size_t		 len;

	TEST_BEGIN("nopsd: seccomp filter dump");
	snprintf(path, sizeof(path), "%s/nopsd.pfc", tmpdir);
	CHECK(write_master_dump(path) == 0);
	dump = read_file(path, &len);
	CHECK(dump != NULL && len > 0);
	if (dump != NULL) {
#ifndef SANDBOX_DEBUG
		CHECK(strstr(dump,
		    "# default action\n  action KILL_PROCESS;") != NULL);
#endif
		CHECK(strstr(dump, "\"ptrace\"") == NULL);
		CHECK(strstr(dump, "\"process_vm_readv\"") == NULL);
		CHECK(strstr(dump, "\"bpf\"") == NULL);
		CHECK(strstr(dump, "\"keyctl\"") == NULL);
		CHECK(strstr(dump, "\"mount\"") == NULL);
		CHECK(strstr(dump, "\"init_module\"") == NULL);
		CHECK(strstr(dump, "\"memfd_create\"") == NULL);
		/* setresuid only to the workers' uid (4242 = 0x1092) */
		snprintf(uidrow, sizeof(uidrow), "if ($a0.lo32 == %u)",
		    NOPSD_DUMP_UID);
		CHECK(strstr(dump, "\"setresuid\"") != NULL &&
		    strstr(dump, uidrow) != NULL);
	}
	CHECK(compare_golden("nopsd", dump, len) == 0);
	free(dump);
	TEST_END();
}

/* The committed dump of name: the filter a reviewer approved. */
static int
compare_golden(const char *name, const char *dump, size_t len)
{
	char		 golden[PATH_MAX];
	const char	*top;
	char		*want;
	size_t		 wlen;
	int		 rc = 0;

	if ((top = getenv("top_srcdir")) == NULL)
		top = "..";
	snprintf(golden, sizeof(golden), "%s/tests/sandbox/%s.pfc", top,
	    name);
	want = read_file(golden, &wlen);
#ifdef SANDBOX_DEBUG
	printf("# debug build: %s not compared\n", golden);
#else
	if (want == NULL) {
		printf("# %s: %s (set top_srcdir, or write it with "
		    "test_sandbox -g DIR)\n", golden, strerror(errno));
		rc = -1;
	} else if (dump == NULL || wlen != len ||
	    memcmp(want, dump, len) != 0) {
		printf("# %s differs from the filter built now; if the "
		    "change is meant, review it and regenerate with -g\n",
		    golden);
		rc = -1;
	}
#endif
	free(want);
	return rc;
}

static void
test_dump(int prof)
{
	char		 name[128], path[PATH_MAX + 64];
	char		*dump;
	size_t		 len;

	snprintf(name, sizeof(name), "%s: seccomp filter dump", prof_name[prof]);
	TEST_BEGIN(name);
	snprintf(path, sizeof(path), "%s/%s.pfc", tmpdir, prof_name[prof]);
	CHECK(write_dump(prof, path) == 0);
	dump = read_file(path, &len);
	CHECK(dump != NULL && len > 0);
	if (dump != NULL) {
#ifdef SANDBOX_DEBUG
		CHECK(strstr(dump, "# default action\n  action LOG;") != NULL);
#else
		CHECK(strstr(dump,
		    "# default action\n  action KILL_PROCESS;") != NULL);
#endif
		CHECK(strstr(dump, "# invalid architecture action\n"
		    "action KILL_PROCESS;") != NULL);
		CHECK(strstr(dump, "\"clone3\"") != NULL &&
		    strstr(dump, "action ERRNO(38);") != NULL);
		CHECK(strstr(dump, "\"execve\"") == NULL);
		CHECK(strstr(dump, "\"ptrace\"") == NULL);
		CHECK(strstr(dump, "\"io_uring_setup\"") == NULL);
		if (prof == WEB) {
			CHECK(strstr(dump, "\"connect\"") == NULL);
			CHECK(strstr(dump, "\"clone\"") == NULL);
		}
	}

	/* The committed dump: the filter a reviewer approved. */
	CHECK(compare_golden(prof_name[prof], dump, len) == 0);
	free(dump);
	TEST_END();
}

/* ------------------------------------------------------ drop, /proc */

static int
child_dropped(struct run *r)
{
	struct stat	 sb;
	gid_t		 groups[4];
	char		 cwd[PATH_MAX];

	enter(r->r_prof, STAGE_DROP);
	if (getuid() != nops_uid || geteuid() != nops_uid ||
	    getgid() != nops_gid || getegid() != nops_gid)
		return cfail("ids are not those of %s", NOPS_USER);
	if (getgroups(4, groups) != 0)
		return cfail("supplementary groups left");
	if (setuid(0) != -1 || errno != EPERM)
		return cfail("setuid(0) did not fail with EPERM");
	if (setresuid(0, 0, 0) != -1 || setgid(0) != -1 || setegid(0) != -1)
		return cfail("regained root");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return cfail("no_new_privs is not set");
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
		return cfail("still dumpable");
	if (r->r_prof == WEB) {
		if (getcwd(cwd, sizeof(cwd)) == NULL || strcmp(cwd, "/") != 0)
			return cfail("cwd is not / in the chroot");
		if (stat("/", &sb) == -1 || sb.st_ino != empty_ino)
			return cfail("/ is not the empty directory");
		if (stat("/etc", &sb) != -1 || errno != ENOENT)
			return cfail("/etc is visible after chroot");
	}
	return 0;
}

static void
test_dropped(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: runs as %s and cannot regain root",
	    prof_name[prof], NOPS_USER);
	TEST_BEGIN(name);
	run_init(&r, prof);
	r.r_child = child_dropped;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

static int
child_wait_inspect(struct run *r)
{
	enter(r->r_prof, STAGE_ALL);
	child_ready(r);
	child_wait_go(r);
	return 0;
}

/* Look for a whole line in /proc/<pid>/status. */
static int
status_has(const char *status, const char *line)
{
	const char	*p = status;
	size_t		 len = strlen(line);

	while ((p = strstr(p, line)) != NULL) {
		if ((p == status || p[-1] == '\n') && p[len] == '\n')
			return 1;
		p += len;
	}
	printf("# /proc status lacks \"%s\"\n", line);
	return 0;
}

static int
parent_inspect(struct run *r, pid_t pid)
{
	char		 path[64], line[128], root[PATH_MAX];
	const char	*want_root;
	char		*status;
	size_t		 len;
	ssize_t		 n;
	int		 bad = 0;

	if (parent_wait_ready(r) == -1)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((status = read_file(path, &len)) == NULL) {
		printf("# %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(line, sizeof(line), "Uid:\t%u\t%u\t%u\t%u", nops_uid,
	    nops_uid, nops_uid, nops_uid);
	bad |= !status_has(status, line);
	snprintf(line, sizeof(line), "Gid:\t%u\t%u\t%u\t%u", nops_gid,
	    nops_gid, nops_gid, nops_gid);
	bad |= !status_has(status, line);
	/* No supplementary group: the kernel prints an empty list. */
	bad |= !status_has(status, "Groups:\t ");
	bad |= !status_has(status, "NoNewPrivs:\t1");
	bad |= !status_has(status, "Seccomp:\t2");
	bad |= !status_has(status, "Seccomp_filters:\t1");
	bad |= !status_has(status, "CapPrm:\t0000000000000000");
	bad |= !status_has(status, "CapEff:\t0000000000000000");
	bad |= !status_has(status, "CapAmb:\t0000000000000000");
	free(status);

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	if ((n = readlink(path, root, sizeof(root) - 1)) == -1) {
		printf("# readlink %s: %s\n", path, strerror(errno));
		bad = 1;
	} else {
		root[n] = '\0';
		want_root = r->r_prof == WEB ? emptydir : "/";
		if (strcmp(root, want_root) != 0) {
			printf("# root is %s, not %s\n", root, want_root);
			bad = 1;
		}
	}
	(void)write(r->r_go[1], "g", 1);
	return bad;
}

static void
test_proc(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: /proc shows uid, NoNewPrivs, "
	    "Seccomp and root", prof_name[prof]);
	TEST_BEGIN(name);
	run_init(&r, prof);
	r.r_child = child_wait_inspect;
	r.r_parent = parent_inspect;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ------------------------------------------------- forbidden calls */

static void
call_execve(struct run *r)
{
	char	*argv[] = { "/bin/true", NULL };

	execve(argv[0], argv, environ);
}

static void
call_ptrace(struct run *r)
{
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
}

static void
call_fork(struct run *r)
{
	if (fork() == 0)
		_exit(0);
}

static void
call_mmap_exec(struct run *r)
{
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
}

static void
call_mprotect_exec(struct run *r)
{
	void	*p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		cfail("mmap without PROT_EXEC");
		_exit(3);
	}
	mprotect(p, 4096, PROT_READ | PROT_EXEC);
}

static void
call_setuid(struct run *r)
{
	setuid(0);
}

static void
call_unshare(struct run *r)
{
	unshare(CLONE_NEWUSER);
}

static void
call_io_uring(struct run *r)
{
	char	 params[120];

	memset(params, 0, sizeof(params));
	syscall(SYS_io_uring_setup, 1, params);
}

static void
call_memfd(struct run *r)
{
	syscall(SYS_memfd_create, "x", 0);
}

static void
call_socket_inet(struct run *r)
{
	socket(AF_INET, SOCK_STREAM, 0);
}

static void
call_socket_packet(struct run *r)
{
	socket(AF_PACKET, SOCK_RAW, 0);
}

static void
call_socket_audit(struct run *r)
{
	socket(AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */);
}

static void
call_connect(struct run *r)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	connect(0, (struct sockaddr *)&sin, sizeof(sin));
}

static void
call_listen(struct run *r)
{
	listen(0, 1);
}

static void
call_socketpair(struct run *r)
{
	int	 sv[2];

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
}

static const struct forbidden {
	const char	*f_name;
	unsigned int	 f_profs;
	void		(*f_call)(struct run *);
} forbidden[] = {
	{ "execve", P_ALL, call_execve },
	{ "ptrace", P_ALL, call_ptrace },
	{ "fork", P_ALL, call_fork },
	{ "mmap with PROT_EXEC", P_ALL, call_mmap_exec },
	{ "mprotect to PROT_EXEC", P_ALL, call_mprotect_exec },
	{ "setuid", P_ALL, call_setuid },
	{ "unshare", P_ALL, call_unshare },
	{ "io_uring_setup", P_ALL, call_io_uring },
	{ "memfd_create", P_ALL, call_memfd },
	{ "socket(AF_INET)", P_WEB, call_socket_inet },
	{ "connect", P_WEB, call_connect },
	{ "listen", P_WEB, call_listen },
	{ "socketpair", P_WEB, call_socketpair },
	{ "socket(AF_PACKET)", P_GIT | P_NOMAD, call_socket_packet },
	{ "socket(AF_NETLINK, NETLINK_AUDIT)", P_GIT | P_NOMAD,
	    call_socket_audit },
};

static int
child_forbidden(struct run *r)
{
	enter(r->r_prof, STAGE_ALL);
	r->r_call(r);
	/* Still alive: the filter let it through. */
	return 0;
}

static void
test_forbidden(int prof)
{
	struct run	 r;
	char		 name[128];
	size_t		 i;

	for (i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
		if ((forbidden[i].f_profs & (1 << prof)) == 0)
			continue;
		snprintf(name, sizeof(name), "%s: %s is killed with SIGSYS",
		    prof_name[prof], forbidden[i].f_name);
		TEST_BEGIN(name);
		run_init(&r, prof);
		r.r_child = child_forbidden;
		r.r_call = forbidden[i].f_call;
		CHECK(killed_by_filter(run_case(&r)));
		TEST_END();
	}
}

/* --------------------------------------------------- the master */

/*
 * The master's drop and filter, through the runtime every process of
 * nopsd goes through: its row's profile (nopsd_profile), what its pd_init
 * adds (nopsd_sandbox_prepare(): its own user, _nopsd made by
 * scripts/deps, with only NOPSD_CAPS, and the rows for the workers'
 * ids), then proc_confine() as proc_run() calls it; then what the filter
 * refuses and how.
 */
static uid_t	 master_uid;
static gid_t	 master_gid;

/* What nopsd adds at run time, with /bin/sh standing in for nopsd. */
static void
master_enter(void)
{
	static const struct proc_def	 pd = {
		.pd_title = "nopsd",
		.pd_id = PROC_MASTER,
		.pd_profile = &nopsd_profile,
	};
	struct proc_ctx			 pc;

	memset(&pc, 0, sizeof(pc));
	pc.pc_def = &pd;
	nopsd_sandbox_prepare(&pc, master_uid, master_gid, nops_uid,
	    nops_gid);
	proc_add_path(&pc, "/bin/sh", SANDBOX_FS_READ | SANDBOX_FS_EXEC);
	proc_add_path(&pc, NOPSD_LOADER, SANDBOX_FS_READ | SANDBOX_FS_EXEC);
	proc_confine(&pc);
}

static int
child_master_ids(struct run *r)
{
	gid_t	 groups[4];
	uid_t	 ru, eu, su;

	master_enter();
	if (getresuid(&ru, &eu, &su) == -1 || ru != master_uid ||
	    eu != master_uid || su != master_uid)
		return cfail("ids are not the master user's");
	if (getgroups(4, groups) != 0)
		return cfail("supplementary groups left");
	if (sandbox_caps() != NOPSD_CAPS)
		return cfail("capabilities %#llx, not NOPSD_CAPS",
		    (unsigned long long)sandbox_caps());
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return cfail("no_new_privs is not set");
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
		return cfail("still dumpable");
	/* Identity: only the workers' ids; anything else is EPERM. */
	if (setresuid(0, 0, 0) != -1 || errno != EPERM)
		return cfail("setresuid(0) was not refused with EPERM");
	if (setresuid(-1, 0, -1) != -1 || errno != EPERM)
		return cfail("seteuid(0) was not refused with EPERM");
	if (setresuid(nops_uid, nops_uid, 0) != -1 || errno != EPERM)
		return cfail("setresuid keeping saved uid 0 was not refused");
	if (setuid(0) != -1 || errno != EPERM)
		return cfail("setuid(0) was not refused with EPERM");
	if (setresgid(0, 0, 0) != -1 || errno != EPERM)
		return cfail("setresgid(0) was not refused with EPERM");
	groups[0] = 0;
	if (setgroups(1, groups) != -1 || errno != EPERM)
		return cfail("setgroups({0}) was not refused with EPERM");
	if (unshare(CLONE_NEWUSER) != -1 || errno != EPERM)
		return cfail("unshare was not refused with EPERM");
	/* What it keeps the capabilities for: becoming the workers' user. */
	if (setgroups(0, NULL) == -1 ||
	    setresgid(nops_gid, nops_gid, nops_gid) == -1 ||
	    setresuid(nops_uid, nops_uid, nops_uid) == -1)
		return cfail("becoming the workers' user failed");
	return 0;
}

/* It starts a worker: fork, execute (a program standing in for nopsd). */
static int
child_master_spawn(struct run *r)
{
	char	*argv[] = { "/bin/sh", "-c", "exit 7", NULL };
	pid_t	 pid;
	int	 status;

	master_enter();
	if ((pid = fork()) == -1)
		return cfail("fork");
	if (pid == 0) {
		execve(argv[0], argv, environ);
		_exit(99);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 7)
		return cfail("the executed child did not run (status %d)",
		    status);
	return 0;
}

/* Landlock: it executes only what it was given (nopsd), nothing else. */
static int
child_master_noexec(struct run *r)
{
	char	*argv[] = { "/usr/bin/env", "true", NULL };

	master_enter();
	if (ll_abi == 0)
		return 0;
	execve(argv[0], argv, environ);
	if (errno != EACCES)
		return cfail("execve of a program not named was not refused "
		    "with EACCES");
	if (open("/etc/shadow", O_RDONLY) != -1 || errno != EACCES)
		return cfail("/etc/shadow was not refused with EACCES");
	return 0;
}

/*
 * It confines itself before its first worker: every child it starts is
 * in its Landlock domain and may be signalled; a process outside (the
 * parent here) may not (signal scoping, ABI >= 6; seccomp allows the
 * master any target).
 */
static int
child_master_signals(struct run *r)
{
	pid_t	 pid;
	int	 status, sp[2];
	char	 c;

	master_enter();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1)
		return cfail("socketpair");
	if ((pid = fork()) == -1)
		return cfail("fork");
	if (pid == 0) {
		/* Waits for a byte that never comes. */
		close(sp[0]);
		(void)read(sp[1], &c, 1);
		_exit(0);
	}
	close(sp[1]);
	if (kill(pid, SIGTERM) == -1)
		return cfail("signalling its own child: %s", strerror(errno));
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) ||
	    WTERMSIG(status) != SIGTERM)
		return cfail("its child did not die of SIGTERM");
	if (ll_abi < 6)
		return 0;
	if (kill(getppid(), 0) != -1 || errno != EPERM)
		return cfail("a signal to a process outside its domain was "
		    "not refused with EPERM");
	return 0;
}

/*
 * A hashing process (master/auth_hash.c): a fork of the master puts
 * itself in a session of its own and under SCHED_IDLE.
 */
static int
child_master_idle(struct run *r)
{
	struct sched_param	 sp;
	pid_t			 pid;
	int			 status;

	master_enter();
	if ((pid = fork()) == -1)
		return cfail("fork");
	if (pid == 0) {
		memset(&sp, 0, sizeof(sp));
		if (setsid() == -1)
			_exit(10);
		if (sched_setscheduler(0, SCHED_IDLE, &sp) == -1)
			_exit(11);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return cfail("waitpid");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 10)
		return cfail("setsid failed");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 11)
		return cfail("sched_setscheduler(0, SCHED_IDLE) failed");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return cfail("the hashing stand-in ended with status %#x",
		    status);
	return 0;
}

static void
call_sched_other(struct run *r)
{
	struct sched_param	 sp;

	memset(&sp, 0, sizeof(sp));
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

static void
call_sched_idle_parent(struct run *r)
{
	struct sched_param	 sp;

	memset(&sp, 0, sizeof(sp));
	sched_setscheduler(getppid(), SCHED_IDLE, &sp);
}

static void
call_process_vm(struct run *r)
{
	char		 buf[8];
	struct iovec	 l = { buf, sizeof(buf) }, rv = { buf, sizeof(buf) };

	syscall(SYS_process_vm_readv, getppid(), &l, 1, &rv, 1, 0);
}

static void
call_init_module(struct run *r)
{
	syscall(SYS_init_module, NULL, 0, "");
}

static void
call_bpf(struct run *r)
{
	syscall(SYS_bpf, 0, NULL, 0);
}

static void
call_keyctl(struct run *r)
{
	syscall(SYS_keyctl, 0, 0, 0, 0, 0);
}

static void
call_mount(struct run *r)
{
	syscall(SYS_mount, "none", "/", "tmpfs", 0, NULL);
}

static void
call_ptrace_attach(struct run *r)
{
	ptrace(PTRACE_ATTACH, getppid(), NULL, NULL);
}

static void
call_mmap_wx(struct run *r)
{
	mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static int
child_master_forbidden(struct run *r)
{
	master_enter();
	r->r_call(r);
	return 0;
}

static void
test_master(void)
{
	static const struct {
		const char	*name;
		void		(*call)(struct run *);
	} forbidden[] = {
		{ "ptrace", call_ptrace_attach },
		{ "process_vm_readv", call_process_vm },
		{ "init_module", call_init_module },
		{ "bpf", call_bpf },
		{ "keyctl", call_keyctl },
		{ "mount", call_mount },
		{ "mmap writable and executable", call_mmap_wx },
		{ "io_uring_setup", call_io_uring },
		{ "memfd_create", call_memfd },
		{ "sched_setscheduler to SCHED_OTHER", call_sched_other },
		{ "sched_setscheduler of another process", call_sched_idle_parent },
	};
	struct run	 r;
	struct passwd	*pw;
	char		 name[128];
	size_t		 i;

	TEST_BEGIN("master: user _nopsd exists (scripts/deps creates it)");
	pw = getpwnam("_nopsd");
	CHECK(pw != NULL && pw->pw_uid != 0 && pw->pw_uid != nops_uid);
	TEST_END();
	if (pw == NULL || pw->pw_uid == 0)
		return;
	master_uid = pw->pw_uid;
	master_gid = pw->pw_gid;

	TEST_BEGIN("master: runs as _nopsd with only NOPSD_CAPS; identity "
	    "changes only to the workers' ids, others refused with EPERM");
	run_init(&r, GIT);
	r.r_child = child_master_ids;
	CHECK(exited(run_case(&r), 0));
	TEST_END();

	TEST_BEGIN("master: under its filter it forks and executes a child");
	run_init(&r, GIT);
	r.r_child = child_master_spawn;
	CHECK(exited(run_case(&r), 0));
	TEST_END();

	TEST_BEGIN("master: Landlock refuses to execute or read what it was "
	    "not given (EACCES)");
	run_init(&r, GIT);
	r.r_child = child_master_noexec;
	CHECK(exited(run_case(&r), 0));
	TEST_END();

	if (ll_abi < 6)
		printf("ok - master: signals scoped to its domain # SKIP "
		    "Landlock ABI %d < 6\n", ll_abi);
	TEST_BEGIN("master: signals the children it starts, and (Landlock "
	    "ABI >= 6) nothing outside its domain (EPERM)");
	run_init(&r, GIT);
	r.r_child = child_master_signals;
	CHECK(exited(run_case(&r), 0));
	TEST_END();

	TEST_BEGIN("master: a fork of it (a hashing process) takes a session "
	    "of its own and SCHED_IDLE for itself");
	run_init(&r, GIT);
	r.r_child = child_master_idle;
	CHECK(exited(run_case(&r), 0));
	TEST_END();

	for (i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
		snprintf(name, sizeof(name), "master: %s is killed with SIGSYS",
		    forbidden[i].name);
		TEST_BEGIN(name);
		run_init(&r, GIT);
		r.r_child = child_master_forbidden;
		r.r_call = forbidden[i].call;
		CHECK(killed_by_filter(run_case(&r)));
		TEST_END();
	}
}

/* ------------------------------------------- signals, F_SETOWN */

/*
 * Towards another process (the parent stands for a sibling worker of the
 * same uid) kill, tgkill, tkill and fcntl F_SETOWN/F_SETSIG/F_SETOWN_EX
 * fail with EPERM by the filter's argument tests, whatever Landlock
 * can do; towards the process itself they work.
 */
static volatile sig_atomic_t	 got_usr1;

static void
on_usr1(int sig)
{
	got_usr1 = 1;
}

static int
child_signals(struct run *r)
{
	struct f_owner_ex	 owner;
	pid_t			 other = getppid();
	int			 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return cfail("socketpair");
	signal(SIGUSR1, on_usr1);
	enter(r->r_prof, STAGE_ALL);
	if (kill(other, 0) != -1 || errno != EPERM)
		return cfail("kill(other) was not refused with EPERM");
	if (kill(0, 0) != -1 || errno != EPERM)
		return cfail("kill(0, process group) was not refused");
	if (syscall(SYS_tgkill, other, other, 0) != -1 || errno != EPERM)
		return cfail("tgkill(other) was not refused with EPERM");
	if (syscall(SYS_tkill, other, 0) != -1 || errno != EPERM)
		return cfail("tkill(other) was not refused with EPERM");
	if (fcntl(sv[0], F_SETOWN, other) != -1 || errno != EPERM)
		return cfail("F_SETOWN to another process was not refused");
	if (fcntl(sv[0], F_SETSIG, SIGKILL) != -1 || errno != EPERM)
		return cfail("F_SETSIG was not refused");
	owner.type = F_OWNER_PID;
	owner.pid = other;
	if (fcntl(sv[0], F_SETOWN_EX, &owner) != -1 || errno != EPERM)
		return cfail("F_SETOWN_EX was not refused");
	/* Ourselves: allowed. */
	if (fcntl(sv[0], F_SETOWN, getpid()) == -1)
		return cfail("F_SETOWN to ourselves");
	if (fcntl(sv[0], F_GETOWN) != getpid())
		return cfail("F_GETOWN is not ourselves");
	if (kill(getpid(), SIGUSR1) == -1 || raise(SIGUSR1) != 0)
		return cfail("kill/raise of ourselves");
	if (!got_usr1)
		return cfail("SIGUSR1 to ourselves never arrived");
	return 0;
}

static void
test_signals(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: signals and F_SETOWN towards "
	    "another process are refused (EPERM), towards itself allowed",
	    prof_name[prof]);
	TEST_BEGIN(name);
	run_init(&r, prof);
	r.r_child = child_signals;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ------------------------------------------- threads, clone3, abi */

static void *
thread_lookup(void *arg)
{
	struct addrinfo	 hints, *res;
	int		*ok = arg;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	if (getaddrinfo("localhost", "4646", &hints, &res) == 0) {
		*ok = res->ai_family == AF_INET &&
		    ((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr ==
		    htonl(INADDR_LOOPBACK);
		freeaddrinfo(res);
	}
	return NULL;
}

static int
child_threads(struct run *r)
{
	pthread_t	 t;
	int		 ok = 0;

	enter(r->r_prof, STAGE_ALL);
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return cfail("clone3 did not fail with ENOSYS");
	if (r->r_prof == WEB)
		return 0;	/* no threads there: clone kills */
	/* The resolver thread of libcurl: a thread, and the DNS files. */
	if ((errno = pthread_create(&t, NULL, thread_lookup, &ok)) != 0)
		return cfail("pthread_create");
	if ((errno = pthread_join(t, NULL)) != 0)
		return cfail("pthread_join");
	if (!ok)
		return cfail("getaddrinfo(localhost) in a thread");
	return 0;
}

/* A thread that exists before the filter must get it too (TSYNC). */
static int	 tsync_go[2];

static void *
thread_forbidden(void *arg)
{
	char	 c;

	/* The raw call: glibc's setuid() would involve the other thread. */
	if (read(tsync_go[0], &c, 1) == 1)
		syscall(SYS_setuid, 0);
	return NULL;
}

static int
child_tsync(struct run *r)
{
	pthread_t	 t;

	enter(NOMAD, STAGE_FS);
	if (pipe(tsync_go) == -1)
		return cfail("pipe");
	if ((errno = pthread_create(&t, NULL, thread_forbidden, NULL)) != 0)
		return cfail("pthread_create");
	nomadworker_sandbox_syscalls();
	if (write(tsync_go[1], "g", 1) != 1)
		return cfail("write");
	pthread_join(t, NULL);
	return 0;
}

static void
test_tsync(void)
{
	struct run	 r;

	TEST_BEGIN("nomadworker: a thread started before the filter is "
	    "killed with SIGSYS too");
	run_init(&r, NOMAD);
	r.r_child = child_tsync;
	CHECK(killed_by_filter(run_case(&r)));
	TEST_END();
}

static void
test_threads(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: clone3 fails with ENOSYS%s",
	    prof_name[prof], prof == WEB ? "" :
	    ", a thread starts and resolves localhost");
	TEST_BEGIN(name);
	run_init(&r, prof);
	r.r_child = child_threads;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ------------------------------------------------------- Landlock */

/* open() must fail with EACCES where only Landlock stands in the way. */
static int
refused(const char *path, int flags)
{
	int	 fd;

	if ((fd = open(path, flags, 0644)) != -1) {
		close(fd);
		cfail("%s: opened, not refused", path);
		return 0;
	}
	if (errno != EACCES) {
		cfail("%s: refused, but not with EACCES", path);
		return 0;
	}
	return 1;
}

static int
readable(const char *path)
{
	char	 buf[64];
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		cfail("%s: cannot open", path);
		return 0;
	}
	if (read(fd, buf, sizeof(buf)) < 0) {
		cfail("%s: cannot read", path);
		close(fd);
		return 0;
	}
	close(fd);
	return 1;
}

static int
child_landlock(struct run *r)
{
	char	 p1[PATH_MAX + 64], p2[PATH_MAX + 64], sub[PATH_MAX + 64];
	int	 fd, ok = 1, want;

	enter(r->r_prof, STAGE_ALL);
	/* ABI 1 cannot allow renames: gitworker then goes without. */
	want = (r->r_prof == GIT && ll_abi == 1) ? 0 : ll_abi;
	if (child_abi != want)
		return cfail("Landlock ABI %d used, %d expected", child_abi,
		    want);

	ok &= readable("/etc/resolv.conf");
	ok &= readable("/etc/hosts");
	ok &= readable("/etc/ssl/certs/ca-certificates.crt");
	if (r->r_prof == GIT) {
		/* create, write, move across directories, remove */
		snprintf(p1, sizeof(p1), "%s/probe", cachedir);
		snprintf(sub, sizeof(sub), "%s/sub", cachedir);
		snprintf(p2, sizeof(p2), "%s/sub/probe", cachedir);
		if ((fd = open(p1, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1 ||
		    write(fd, "x", 1) != 1 || close(fd) == -1)
			ok = !cfail("write %s", p1);
		else if (mkdir(sub, 0700) == -1 || rename(p1, p2) == -1 ||
		    truncate(p2, 0) == -1 || unlink(p2) == -1 ||
		    rmdir(sub) == -1)
			ok = !cfail("mkdir/rename/truncate/unlink in %s",
			    cachedir);
	}
	if (child_abi == 0) {
		fprintf(stderr, "# no Landlock: nothing refused\n");
		return ok ? 0 : 1;
	}
	/*
	 * Readable or writable for the user, refused by Landlock alone
	 * (/etc/shadow excepted: that one is root's anyway).
	 */
	ok &= refused("/etc/passwd", O_RDONLY);
	ok &= refused("/etc/shadow", O_RDONLY);
	ok &= refused("/", O_RDONLY | O_DIRECTORY);
	snprintf(p1, sizeof(p1), "%s/x", outsidedir);
	ok &= refused(p1, O_WRONLY | O_CREAT);
	if (r->r_prof == NOMAD) {
		snprintf(p1, sizeof(p1), "%s/x", cachedir);
		ok &= refused(p1, O_WRONLY | O_CREAT);
	}
	return ok ? 0 : 1;
}

static void
test_landlock(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: Landlock allows %s, refuses the "
	    "rest", prof_name[prof], prof == GIT ?
	    "the cache and the CA/DNS files" : "the CA/DNS files");
	TEST_BEGIN(name);
	run_init(&r, prof);
	r.r_child = child_landlock;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* Landlock's own TCP rule, seen before the filter would kill socket(). */
static int
child_web_nonet(struct run *r)
{
	struct sockaddr_in	 sin;
	int			 fd;

	enter(WEB, STAGE_FS);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return cfail("socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(r->r_port);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != -1 ||
	    errno != EACCES)
		return cfail("connect to 127.0.0.1:%d was not refused",
		    r->r_port);
	return 0;
}

static void
test_web_nonet(void)
{
	struct run	 r;

	TEST_BEGIN("webworker: Landlock refuses outbound TCP");
	if (ll_abi < 4) {
		printf("ok - webworker: Landlock refuses outbound TCP "
		    "# SKIP Landlock ABI %d < 4\n", ll_abi);
		return;
	}
	run_init(&r, WEB);
	r.r_child = child_web_nonet;
	r.r_lfd = tcp_listener(&r.r_port);
	CHECK(r.r_lfd != -1);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ---------------------------------------------------- webworker */

static int
child_web_open(struct run *r)
{
	struct stat	 sb;

	enter(WEB, STAGE_ALL);
	/* O_PATH passes Landlock: only the filter refuses this one. */
	if (open("/", O_PATH) != -1 || errno != EACCES)
		return cfail("open / O_PATH was not refused with EACCES");
	if (openat(AT_FDCWD, "/", O_RDONLY) != -1 || errno != EACCES)
		return cfail("openat / was not refused with EACCES");
	if (stat("/", &sb) == -1 || sb.st_ino != empty_ino)
		return cfail("/ is not the empty directory");
	if (stat("/etc", &sb) != -1 || errno != ENOENT)
		return cfail("/etc exists in the chroot");
	return 0;
}

static void
test_web_http(int tls)
{
	struct run	 r;

	TEST_BEGIN(tls ? "webworker: serves HTTPS with evhttp and OpenSSL" :
	    "webworker: serves HTTP with evhttp");
	run_init(&r, WEB);
	r.r_child = child_web_http;
	r.r_parent = parent_web_client;
	r.r_tls = tls;
	r.r_lfd = tcp_listener(&r.r_port);
	CHECK(r.r_lfd != -1);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

static void
test_web_passfd(void)
{
	struct run	 r;

	TEST_BEGIN("webworker: peer credentials and a descriptor over its "
	    "socketpair");
	run_init(&r, WEB);
	r.r_child = child_web_passfd;
	r.r_parent = parent_web_passfd;
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r.r_sv) == 0);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

static void
test_web_open(void)
{
	struct run	 r;

	TEST_BEGIN("webworker: chrooted in the empty directory, open refused");
	run_init(&r, WEB);
	r.r_child = child_web_open;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* --------------------------------------------------- nomadworker */

static void
test_nomad_https(void)
{
	struct run	 r;

	TEST_BEGIN("nomadworker: HTTPS request with libcurl, CA verified");
	run_init(&r, NOMAD);
	r.r_child = child_nomad_https;
	r.r_parent = parent_nomad_server;
	r.r_lfd = tcp_listener(&r.r_port);
	CHECK(r.r_lfd != -1);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ----------------------------------------------------- gitworker */

static void
test_git(void)
{
	struct run	 r;

	TEST_BEGIN("gitworker: libgit2 lists and fetches a file:// remote "
	    "into its cache");
	run_init(&r, GIT);
	r.r_child = child_git;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

static void
test_connect(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: connects to a loopback listener",
	    prof_name[prof]);
	TEST_BEGIN(name);
	run_init(&r, prof);
	r.r_child = child_connect;
	r.r_parent = parent_accept;
	r.r_lfd = tcp_listener(&r.r_port);
	CHECK(r.r_lfd != -1);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ------------------------------------------------ refusals of drop */

static int
child_drop_root(struct run *r)
{
	sandbox_drop("test", NULL, 0, 0);
	return 0;
}

static int
child_drop_baddir(struct run *r)
{
	sandbox_drop("test", baddir, nops_uid, nops_gid);
	return 0;
}

static void *
thread_sleep(void *arg)
{
	pause();
	return NULL;
}

static int
child_drop_threaded(struct run *r)
{
	pthread_t	 t;

	if (pthread_create(&t, NULL, thread_sleep, NULL) != 0)
		return 2;
	sandbox_drop("test", NULL, nops_uid, nops_gid);
	return 0;
}

static int
child_landlock_nonnp(struct run *r)
{
	sandbox_landlock("test", NULL, 0);
	return 0;
}

/*
 * A refusal is fatal() with a reason: the child's log (stderr) goes to
 * a file the parent reads, and the reason must be in it.
 */
static int		(*refusal_child)(struct run *);
static char		 refusal_log[PATH_MAX + 32];

static int
child_refusal(struct run *r)
{
	int	 fd;

	if ((fd = open(refusal_log, O_WRONLY | O_CREAT | O_TRUNC, 0600)) ==
	    -1 || dup2(fd, STDERR_FILENO) == -1)
		return cfail("%s", refusal_log);
	close(fd);
	return refusal_child(r);
}

static void
test_refusals(void)
{
	static const struct {
		const char	*name;
		int		(*child)(struct run *);
		const char	*reason;
	} cases[] = {
		{ "sandbox_drop refuses uid 0", child_drop_root,
		    "refusing to run as uid 0" },
		{ "sandbox_drop refuses a chroot others can write",
		    child_drop_baddir,
		    "must be a directory owned by root and writable by root "
		    "only" },
		{ "sandbox_drop refuses a process that runs threads",
		    child_drop_threaded,
		    "threads run already; the sandbox must be set up while "
		    "single-threaded" },
		{ "sandbox_landlock refuses to run without no_new_privs",
		    child_landlock_nonnp,
		    "Landlock needs PR_SET_NO_NEW_PRIVS first" },
	};
	struct run	 r;
	size_t		 i, len;
	char		*log;

	snprintf(refusal_log, sizeof(refusal_log), "%s/refusal.log", tmpdir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].child == child_landlock_nonnp && ll_abi == 0) {
			printf("ok - %s # SKIP no Landlock\n", cases[i].name);
			continue;
		}
		TEST_BEGIN(cases[i].name);
		run_init(&r, GIT);
		refusal_child = cases[i].child;
		r.r_child = child_refusal;
		/* fatal() exits 1, and says why */
		CHECK(exited(run_case(&r), 1));
		log = read_file(refusal_log, &len);
		if (log == NULL || strstr(log, cases[i].reason) == NULL)
			printf("# expected \"%s\" in the log, got: %s\n",
			    cases[i].reason, log != NULL ? log : "(none)");
		CHECK(log != NULL && strstr(log, cases[i].reason) != NULL);
		CHECK(log != NULL && strstr(log, "fatal in ") != NULL);
		free(log);
		TEST_END();
	}
}

/* ------------------------------------------------------------- main */

static int
generate(const char *dir)
{
	char	 path[PATH_MAX];
	int	 prof;

	for (prof = 0; prof < NPROF; prof++) {
		snprintf(path, sizeof(path), "%s/%s.pfc", dir, prof_name[prof]);
		if (write_dump(prof, path) == -1) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			return 1;
		}
		printf("wrote %s\n", path);
	}
	snprintf(path, sizeof(path), "%s/nopsd.pfc", dir);
	if (write_master_dump(path) == -1) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("wrote %s\n", path);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct passwd	*pw;
	int		 ch, prof, verbose = 0;

	log_init(1, LOG_DAEMON);
	log_procinit("test_sandbox");
	while ((ch = getopt(argc, argv, "g:v")) != -1) {
		switch (ch) {
		case 'g':
			return generate(optarg);
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: test_sandbox [-v] [-g dir]\n");
			return 2;
		}
	}
	log_setverbose(verbose);

	TEST_BEGIN("sandbox tests run as root");
	CHECK(geteuid() == 0);
	TEST_END();
	TEST_BEGIN("user " NOPS_USER " exists (scripts/deps creates it)");
	pw = getpwnam(NOPS_USER);
	CHECK(pw != NULL && pw->pw_uid != 0 && pw->pw_gid != 0);
	TEST_END();
	if (geteuid() != 0 || pw == NULL || pw->pw_uid == 0 || pw->pw_gid == 0)
		TEST_EXIT();
	nops_uid = pw->pw_uid;
	nops_gid = pw->pw_gid;

	TEST_BEGIN("setup: directories and a TLS certificate");
	CHECK(setup_dirs() == 0);
	CHECK(tls_setup() == 0);
	TEST_END();
	if (test_failed_cases) {
		cleanup_dirs();
		TEST_EXIT();
	}

	TEST_BEGIN("landlock: ABI probe");
	ll_abi = sandbox_landlock_abi();
	printf("# Landlock ABI %d%s\n", ll_abi,
	    ll_abi == 0 ? " (none: path refusals are not tested)" : "");
	CHECK(ll_abi >= 0);
	TEST_END();
	if (ll_abi < 0)
		ll_abi = 0;

	for (prof = 0; prof < NPROF; prof++) {
		test_dump(prof);
		test_dropped(prof);
		test_proc(prof);
		test_threads(prof);
		test_forbidden(prof);
	}
	for (prof = 0; prof < NPROF; prof++)
		test_signals(prof);
	test_landlock(GIT);
	test_git();
	test_connect(GIT);
	test_landlock(NOMAD);
	test_nomad_https();
	test_tsync();
	test_connect(NOMAD);
	test_web_open();
	test_web_nonet();
	test_web_http(0);
	test_web_http(1);
	test_web_passfd();
	test_refusals();
	test_master_dump();
	test_master();

	cleanup_dirs();
	TEST_EXIT();
}
