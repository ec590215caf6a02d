/*
 * Privilege separation shared by the workers: dropping root, Landlock and
 * seccomp.  The per-worker lists (what each may touch) live in the worker
 * folders (git_sandbox.c, nomad_sandbox.c, web_sandbox.c); this file only
 * knows how to apply a list and what every process needs to run at all.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/landlock.h>
#include <seccomp.h>

#include "log.h"
#include "sandbox.h"

/*
 * Debian 12's <linux/landlock.h> stops at ABI 2; the kernel may know more.
 * Newer rights are only ever used after the ABI probe says they exist.
 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP		(1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)	/* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL			(1ULL << 1)
#endif

/* The ruleset attribute as ABI 6 knows it; older kernels read a prefix. */
struct sandbox_ll_ruleset {
	uint64_t	 ll_fs;
	uint64_t	 ll_net;
	uint64_t	 ll_scoped;
};

#define LL_FS_ABI1	(LANDLOCK_ACCESS_FS_EXECUTE |			\
	LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |	\
	LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR |	\
	LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |	\
	LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |	\
	LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |	\
	LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Rights that make sense on a file; a rule on a file may hold no other. */
#define LL_FS_FILE	(LANDLOCK_ACCESS_FS_EXECUTE |			\
	LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |	\
	LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

static uint64_t	 sandbox_ll_handled(int);
static uint64_t	 sandbox_ll_rights(unsigned int, int);
static void	 sandbox_single_threaded(void);
static scmp_filter_ctx sandbox_seccomp_build(const struct sandbox_syscall *,
		    size_t, pid_t, int);
static size_t	 sandbox_seccomp_self(struct sandbox_syscall *, pid_t, int);
static int	 sandbox_seccomp_rows(scmp_filter_ctx,
		    const struct sandbox_syscall *, size_t);

/*
 * What every process needs whatever it does: memory (never executable:
 * nothing may be mapped or made PROT_EXEC once the filter is on), signals
 * and abort(), time, exit, futexes and what glibc's threads and malloc
 * use, and I/O on descriptors the process already holds.  Opening files,
 * making sockets and creating processes are each worker's business.
 */
static const struct sandbox_syscall sandbox_base[] = {
	/* memory */
	SANDBOX_ALLOW(brk),
	SANDBOX_ALLOW_MASK(mmap, 2, PROT_EXEC, 0),
	SANDBOX_ALLOW_MASK(mprotect, 2, PROT_EXEC, 0),
	SANDBOX_ALLOW(munmap),
	SANDBOX_ALLOW(mremap),
	SANDBOX_ALLOW(madvise),

	/* exit, signals (kill and tgkill: see sandbox_seccomp_self()) */
	SANDBOX_ALLOW(exit),
	SANDBOX_ALLOW(exit_group),
	SANDBOX_ALLOW(rt_sigreturn),
	SANDBOX_ALLOW(rt_sigaction),
	SANDBOX_ALLOW(rt_sigprocmask),
	SANDBOX_ALLOW(sigaltstack),
	SANDBOX_ALLOW(restart_syscall),
	/* tkill names a thread of any process; glibc uses tgkill */
	SANDBOX_ERRNO(tkill, EPERM),

	/* glibc: threads, locks, malloc arenas */
	SANDBOX_ALLOW(futex),
	SANDBOX_ALLOW(rseq),
	SANDBOX_ALLOW(set_robust_list),
	SANDBOX_ALLOW(sched_yield),
	/* glibc falls back to clone(2) on ENOSYS; anything else breaks it */
	SANDBOX_ERRNO(clone3, ENOSYS),

	/*
	 * Alike on purpose: the rows of master/nopsd_sandbox.c, one per call
	 * in the same macros; each table is what its process may do.
	 */
	/* time, randomness, who am I */
	SANDBOX_ALLOW(clock_gettime),
	SANDBOX_ALLOW(clock_getres),
	SANDBOX_ALLOW(gettimeofday),
	SANDBOX_ALLOW(nanosleep),
	SANDBOX_ALLOW(clock_nanosleep),
	SANDBOX_ALLOW(getrandom),
	SANDBOX_ALLOW(getpid),
	SANDBOX_ALLOW(gettid),
	SANDBOX_ALLOW(getppid),
	SANDBOX_ALLOW(getuid),
	SANDBOX_ALLOW(geteuid),
	SANDBOX_ALLOW(getgid),
	SANDBOX_ALLOW(getegid),
	SANDBOX_ALLOW(uname),
	SANDBOX_ALLOW(sysinfo),		/* glibc qsort() via sysconf() */
	SANDBOX_ALLOW_ARG(prlimit64, 2, 0),	/* read limits only */
	SANDBOX_ALLOW(getrlimit),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_SET_NAME),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_GET_NAME),

	/* descriptors already open */
	SANDBOX_ALLOW(read),
	SANDBOX_ALLOW(readv),
	SANDBOX_ALLOW(write),
	SANDBOX_ALLOW(writev),
	SANDBOX_ALLOW(close),
	/*
	 * fcntl: every command but those that choose who gets SIGIO/SIGURG
	 * and which signal (F_SETOWN 8, F_SETSIG 10, F_SETOWN_EX 15):
	 * those only towards the process itself, see sandbox_seccomp_self().
	 */
	SANDBOX_ALLOW_CMP(fcntl, 1, SANDBOX_CMP_LT, F_SETOWN),
	SANDBOX_ALLOW_ARG(fcntl, 1, F_GETSIG),
	SANDBOX_ALLOW_ARG(fcntl, 1, 11),	/* F_GETLK64 .. */
	SANDBOX_ALLOW_ARG(fcntl, 1, 12),
	SANDBOX_ALLOW_ARG(fcntl, 1, 13),
	SANDBOX_ALLOW_ARG(fcntl, 1, 14),
	SANDBOX_ALLOW_CMP(fcntl, 1, SANDBOX_CMP_GT, F_SETOWN_EX),
	SANDBOX_ERRNO_ARG(fcntl, EPERM, 1, F_SETSIG),
	SANDBOX_ERRNO_ARG(fcntl, EPERM, 1, F_SETOWN_EX),
	SANDBOX_ALLOW(lseek),
	SANDBOX_ALLOW(dup),
	SANDBOX_ALLOW(dup2),
	SANDBOX_ALLOW(dup3),
	SANDBOX_ALLOW(fstat),
	SANDBOX_ALLOW(newfstatat),
	SANDBOX_ALLOW(statx),
	SANDBOX_ALLOW_ARG(ioctl, 1, FIONREAD),
	SANDBOX_ALLOW_ARG(ioctl, 1, FIONBIO),
	SANDBOX_ERRNO_ARG(ioctl, ENOTTY, 1, TCGETS),	/* isatty() */

	/* libevent: epoll, its notification pipe/eventfd, timerfd */
	SANDBOX_ALLOW(epoll_create),
	SANDBOX_ALLOW(epoll_create1),
	SANDBOX_ALLOW(epoll_ctl),
	SANDBOX_ALLOW(epoll_wait),
	SANDBOX_ALLOW(epoll_pwait),
	SANDBOX_ALLOW(epoll_pwait2),
	SANDBOX_ALLOW(poll),
	SANDBOX_ALLOW(ppoll),
	SANDBOX_ALLOW(select),
	SANDBOX_ALLOW(pselect6),
	SANDBOX_ALLOW(pipe2),
	SANDBOX_ALLOW(eventfd2),
	SANDBOX_ALLOW(timerfd_create),
	SANDBOX_ALLOW(timerfd_settime),
	SANDBOX_ALLOW(timerfd_gettime),

	/* sockets already open: the master's socketpair, syslog, clients */
	SANDBOX_ALLOW(recvmsg),
	SANDBOX_ALLOW(sendmsg),
	SANDBOX_ALLOW(recvfrom),
	SANDBOX_ALLOW(sendto),
	SANDBOX_ALLOW(shutdown),
	SANDBOX_ALLOW(getsockopt),
	SANDBOX_ALLOW(setsockopt),
	SANDBOX_ALLOW(getsockname),
	SANDBOX_ALLOW(getpeername),
	/*
	 * glibc's syslog() reconnects after the log daemon restarted, and
	 * its resolver asks nscd: fail those instead of dying.
	 */
	SANDBOX_ERRNO_ARG(socket, EACCES, 0, AF_UNIX),	/* stays last */
};

static const struct sandbox_syscall sandbox_unix[] = {
	SANDBOX_ALLOW_ARG(socket, 0, AF_UNIX),
};

/* ---------------------------------------------------------------- drop */

void
sandbox_drop(const char *procname, const char *chroot_dir, uid_t uid,
    gid_t gid)
{
	sandbox_drop_keep(procname, chroot_dir, uid, gid, 0);
}

static void
sandbox_capset(uint64_t eff, uint64_t prm, uint64_t inh)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[2];

	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	data[0].effective = (uint32_t)eff;
	data[1].effective = (uint32_t)(eff >> 32);
	data[0].permitted = (uint32_t)prm;
	data[1].permitted = (uint32_t)(prm >> 32);
	data[0].inheritable = (uint32_t)inh;
	data[1].inheritable = (uint32_t)(inh >> 32);
	if (syscall(SYS_capset, &hdr, data) == -1)
		fatal("sandbox_drop: capset");
}

uint64_t
sandbox_caps(void)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[2];

	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) == -1)
		fatal("capget");
	return (uint64_t)data[0].effective |
	    ((uint64_t)data[1].effective << 32);
}

/* Every capability, ambient ones included, gone for good. */
void
sandbox_caps_clear(void)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		fatal("PR_CAP_AMBIENT_CLEAR_ALL");
	sandbox_capset(0, 0, 0);
	if (sandbox_caps() != 0)
		fatalx("capabilities %#llx remain",
		    (unsigned long long)sandbox_caps());
}

void
sandbox_drop_keep(const char *procname, const char *chroot_dir, uid_t uid,
    gid_t gid, uint64_t caps)
{
	struct stat	 sb;
	uid_t		 ruid, euid, suid;
	gid_t		 rgid, egid, sgid, groups[2];
	int		 ngroups, c;

	/* From here on, fatal() names the process. */
	log_procinit(procname);
	if (uid == 0 || gid == 0)
		fatalx("refusing to run as uid %u gid %u", (unsigned int)uid,
		    (unsigned int)gid);
	sandbox_single_threaded();

	if (chroot_dir != NULL) {
		/* Whoever can write the new root could plant files in it. */
		if (stat(chroot_dir, &sb) == -1)
			fatal("stat %s", chroot_dir);
		if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0 ||
		    (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0)
			fatalx("%s must be a directory owned by root and "
			    "writable by root only", chroot_dir);
		if (chroot(chroot_dir) == -1)
			fatal("chroot %s", chroot_dir);
		if (chdir("/") == -1)
			fatal("chdir / in %s", chroot_dir);
	}

	/*
	 * No supplementary group at all: gid is the only one.  (An empty
	 * list is also the only one the master's filter lets a worker set.)
	 */
	if (setgroups(0, NULL) == -1)
		fatal("setgroups");
	if (setresgid(gid, gid, gid) == -1)
		fatal("setresgid %u", (unsigned int)gid);
	/* Keep the permitted set across the change of uid, if asked. */
	if (caps != 0 && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == -1)
		fatal("PR_SET_KEEPCAPS");
	if (setresuid(uid, uid, uid) == -1)
		fatal("setresuid %u", (unsigned int)uid);
	/*
	 * From root the kernel cleared every capability; from another
	 * uid (a worker the unprivileged master started) it did not: set
	 * exactly what is kept.  Ambient ones pass to what we execute.
	 */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		fatal("PR_CAP_AMBIENT_CLEAR_ALL");
	sandbox_capset(caps, caps, caps);
	if (caps != 0) {
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) == -1)
			fatal("PR_SET_KEEPCAPS");
		for (c = 0; c < 64; c++)
			if ((caps & SANDBOX_CAP(c)) &&
			    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0,
			    0) == -1)
				fatal("PR_CAP_AMBIENT_RAISE %d", c);
	}

	/* Check what the kernel now says rather than trust the calls. */
	if (getresuid(&ruid, &euid, &suid) == -1 ||
	    getresgid(&rgid, &egid, &sgid) == -1)
		fatal("getresuid/getresgid");
	if (ruid != uid || euid != uid || suid != uid ||
	    rgid != gid || egid != gid || sgid != gid)
		fatalx("ids are not %u/%u after the drop", (unsigned int)uid,
		    (unsigned int)gid);
	ngroups = getgroups(2, groups);
	if (ngroups != 0)
		fatalx("supplementary groups remain after the drop");
	if (sandbox_caps() != caps)
		fatalx("capabilities %#llx remain, not %#llx",
		    (unsigned long long)sandbox_caps(),
		    (unsigned long long)caps);
	if (caps == 0) {
		if (setresuid(0, 0, 0) != -1 || setuid(0) != -1 ||
		    seteuid(0) != -1)
			fatalx("could regain uid 0 after the drop");
		if (setgid(0) != -1 || setegid(0) != -1)
			fatalx("could regain gid 0 after the drop");
		groups[0] = 0;
		if (setgroups(1, groups) != -1)
			fatalx("could regain group 0 after the drop");
	}

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		fatalx("PR_SET_NO_NEW_PRIVS did not stick");
	/* No core files and no ptrace by other processes of our user. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		fatal("PR_SET_DUMPABLE");

	log_debug("sandbox: running as uid %u gid %u%s%s%s",
	    (unsigned int)uid, (unsigned int)gid,
	    chroot_dir != NULL ? " chrooted in " : "",
	    chroot_dir != NULL ? chroot_dir : "",
	    caps != 0 ? " keeping capabilities" : "");
}

void
sandbox_nocore(const char *procname, int dumpable)
{
	struct rlimit	 rl;

	if (dumpable) {
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == -1)
			fatal("PR_SET_DUMPABLE");
		log_warnx("%s: core dumps allowed (-c): a core file holds "
		    "secrets", procname);
		return;
	}
	rl.rlim_cur = rl.rlim_max = 0;
	if (setrlimit(RLIMIT_CORE, &rl) == -1)
		fatal("setrlimit RLIMIT_CORE");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		fatal("PR_SET_DUMPABLE");
}

/*
 * Landlock confines only the thread that asks (and threads it starts
 * later): a thread already running would escape it.
 */
static void
sandbox_single_threaded(void)
{
	DIR		*dir;
	struct dirent	*de;
	int		 n = 0;

	if ((dir = opendir("/proc/self/task")) == NULL) {
		log_debug("sandbox_drop: no /proc/self/task, thread check "
		    "skipped");
		return;
	}
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	if (n != 1)
		fatalx("sandbox_drop: %d threads run already; the sandbox "
		    "must be set up while single-threaded", n);
}

/* ------------------------------------------------------------ landlock */

int
sandbox_landlock_abi(void)
{
	long	 abi;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	if (abi == -1) {
		if (errno == ENOSYS || errno == EOPNOTSUPP)
			return 0;
		return -1;
	}
	return (int)abi;
}

/* Every file system right the kernel knows: all are denied unless granted. */
static uint64_t
sandbox_ll_handled(int abi)
{
	uint64_t	 r = LL_FS_ABI1;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

static uint64_t
sandbox_ll_rights(unsigned int access, int abi)
{
	uint64_t	 r = 0;

	if (access & SANDBOX_FS_READ)
		r |= LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	if (access & SANDBOX_FS_WRITE)
		r |= LANDLOCK_ACCESS_FS_WRITE_FILE |
		    LANDLOCK_ACCESS_FS_REMOVE_DIR |
		    LANDLOCK_ACCESS_FS_REMOVE_FILE |
		    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
		    LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER |
		    LANDLOCK_ACCESS_FS_TRUNCATE;
	if (access & SANDBOX_FS_EXEC)
		r |= LANDLOCK_ACCESS_FS_EXECUTE;
	if (access & SANDBOX_FS_UNLINK)
		r |= LANDLOCK_ACCESS_FS_REMOVE_FILE;
	return r & sandbox_ll_handled(abi);
}

int
sandbox_landlock(const char *procname, const struct sandbox_path *paths,
    size_t npaths)
{
	return sandbox_landlock_flags(procname, paths, npaths, 0);
}

int
sandbox_landlock_flags(const char *procname, const struct sandbox_path *paths,
    size_t npaths, int flags)
{
	struct sandbox_ll_ruleset		 attr;
	struct landlock_path_beneath_attr	 pb;
	struct stat				 sb;
	size_t					 i, attrsize;
	int					 abi, rfd;

	if ((abi = sandbox_landlock_abi()) == -1)
		fatal("landlock_create_ruleset (ABI probe)");
	if (abi == 0) {
		log_debug("sandbox: the kernel has no Landlock; %s's file "
		    "system is not restricted", procname);
		return 0;
	}
	/*
	 * ABI 1 refuses every rename or link across directories, which
	 * breaks a writer such as libgit2: rather no Landlock than a worker
	 * that cannot work.
	 */
	if (abi == 1)
		for (i = 0; i < npaths; i++)
			if (paths[i].access & SANDBOX_FS_WRITE) {
				log_info("sandbox: Landlock ABI 1 cannot allow "
				    "renames; %s's file system is not "
				    "restricted", procname);
				return 0;
			}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		fatalx("Landlock needs PR_SET_NO_NEW_PRIVS first");

	memset(&attr, 0, sizeof(attr));
	attr.ll_fs = sandbox_ll_handled(abi);
	attrsize = sizeof(attr.ll_fs);
	if (abi >= 4) {
		if (flags & SANDBOX_LL_NONET)
			attr.ll_net = LANDLOCK_ACCESS_NET_BIND_TCP |
			    LANDLOCK_ACCESS_NET_CONNECT_TCP;
		attrsize += sizeof(attr.ll_net);
	}
	if (abi >= 6) {
		attr.ll_scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
		    LANDLOCK_SCOPE_SIGNAL;
		attrsize += sizeof(attr.ll_scoped);
	}
	rfd = (int)syscall(SYS_landlock_create_ruleset, &attr, attrsize, 0);
	if (rfd == -1)
		fatal("landlock_create_ruleset");

	for (i = 0; i < npaths; i++) {
		memset(&pb, 0, sizeof(pb));
		pb.parent_fd = open(paths[i].path, O_PATH | O_CLOEXEC);
		if (pb.parent_fd == -1) {
			if (errno == ENOENT || errno == ENOTDIR) {
				log_debug("sandbox: %s does not exist, no "
				    "Landlock rule", paths[i].path);
				continue;
			}
			fatal("open %s", paths[i].path);
		}
		if (fstat(pb.parent_fd, &sb) == -1)
			fatal("fstat %s", paths[i].path);
		pb.allowed_access = sandbox_ll_rights(paths[i].access, abi);
		if (!S_ISDIR(sb.st_mode))
			pb.allowed_access &= LL_FS_FILE;
		if (pb.allowed_access != 0 &&
		    syscall(SYS_landlock_add_rule, rfd,
		    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == -1)
			fatal("landlock_add_rule %s", paths[i].path);
		close(pb.parent_fd);
	}

	if (syscall(SYS_landlock_restrict_self, rfd, 0) == -1)
		fatal("landlock_restrict_self");
	close(rfd);
	log_debug("sandbox: %s Landlock rules, ABI %d: %zu paths%s", procname,
	    abi, npaths,
	    abi >= 4 && (flags & SANDBOX_LL_NONET) ? ", no TCP" : "");
	return abi;
}

/*
 * A profile's own paths plus extra[] (paths known only at run time, e.g.
 * the gitworker's cache), in one ruleset.  Returns the ABI used.
 */
int
sandbox_profile_landlock(const struct sandbox_profile *sp,
    const struct sandbox_path *extra, size_t nextra)
{
	struct sandbox_path	*paths;
	size_t			 n;
	int			 abi;

	if ((paths = reallocarray(NULL, sp->sp_npaths + nextra + 1,
	    sizeof(*paths))) == NULL)
		fatal(NULL);
	for (n = 0; n < sp->sp_npaths; n++)
		paths[n] = sp->sp_paths[n];
	for (; n < sp->sp_npaths + nextra; n++)
		paths[n] = extra[n - sp->sp_npaths];
	abi = sandbox_landlock_flags(sp->sp_name, paths, n, sp->sp_llflags);
	free(paths);
	return abi;
}

/* ------------------------------------------------------------- seccomp */

static int
sandbox_seccomp_rows(scmp_filter_ctx ctx, const struct sandbox_syscall *rows,
    size_t nrows)
{
	struct scmp_arg_cmp	 cmp[3];
	const struct sandbox_syscall *sc;
	const struct sandbox_arg *sa;
	uint32_t		 action;
	size_t			 i;
	unsigned int		 j;
	char			*name;
	int			 rc;

	for (i = 0; i < nrows; i++) {
		sc = &rows[i];
		/* A pseudo number: the call does not exist on this arch. */
		if (sc->sc_nr < 0)
			continue;
		if (sc->sc_narg > 3) {
			log_warnx("seccomp: row %zu: too many argument tests",
			    i);
			return -1;
		}
		memset(cmp, 0, sizeof(cmp));
		for (j = 0; j < sc->sc_narg; j++) {
			sa = &sc->sc_arg[j];
			cmp[j].arg = sa->sa_index;
			cmp[j].datum_a = sa->sa_value;
			switch (sa->sa_op) {
			case SANDBOX_CMP_MASKED_EQ:
				cmp[j].op = SCMP_CMP_MASKED_EQ;
				cmp[j].datum_a = sa->sa_mask;
				cmp[j].datum_b = sa->sa_value;
				break;
			case SANDBOX_CMP_NE:
				cmp[j].op = SCMP_CMP_NE;
				break;
			case SANDBOX_CMP_LT:
				cmp[j].op = SCMP_CMP_LT;
				break;
			case SANDBOX_CMP_GT:
				cmp[j].op = SCMP_CMP_GT;
				break;
			default:
				cmp[j].op = SCMP_CMP_EQ;
				break;
			}
		}
		action = sc->sc_errno != 0 ? SCMP_ACT_ERRNO(sc->sc_errno) :
		    SCMP_ACT_ALLOW;
		rc = seccomp_rule_add_array(ctx, action, sc->sc_nr,
		    sc->sc_narg, cmp);
		if (rc < 0) {
			name = seccomp_syscall_resolve_num_arch(
			    SCMP_ARCH_NATIVE, sc->sc_nr);
			log_warnx("seccomp: rule for %s (row %zu): %s",
			    name != NULL ? name : "?", i, strerror(-rc));
			free(name);
			return -1;
		}
	}
	return 0;
}

/*
 * Row sc allows a call whose last tested argument is the process itself;
 * the row after it is the same call towards anyone else, failing with EPERM.
 */
static size_t
sandbox_seccomp_self_pair(struct sandbox_syscall *sc)
{
	sc[1] = sc[0];
	sc[1].sc_errno = EPERM;
	sc[1].sc_arg[sc[0].sc_narg - 1].sa_op = SANDBOX_CMP_NE;
	return 2;
}

/*
 * The rows that name a process: signals (kill, tgkill) and the owner of a
 * descriptor's SIGIO (fcntl F_SETOWN) only towards pid, the process
 * itself, so that a worker cannot touch a sibling of the same uid even
 * where Landlock cannot scope signals (ABI < 6).  SANDBOX_SIGNAL_ANY (the
 * master, which supervises the workers) allows any target.
 */
static size_t
sandbox_seccomp_self(struct sandbox_syscall *rows, pid_t pid, int flags)
{
	const int		 sig[] = { SCMP_SYS(kill), SCMP_SYS(tgkill) };
	struct sandbox_syscall	*sc;
	size_t			 i, n = 0;
	uint64_t		 self = (uint64_t)pid;

	memset(rows, 0, SANDBOX_SELF_ROWS * sizeof(*rows));
	if (flags & SANDBOX_SIGNAL_ANY) {
		rows[n++].sc_nr = SCMP_SYS(kill);
		rows[n++].sc_nr = SCMP_SYS(tgkill);
	} else {
		/*
		 * kill(self, sig) and tgkill(self, any thread of ours, sig),
		 * as raise() and abort() do; towards another, EPERM.
		 */
		for (i = 0; i < sizeof(sig) / sizeof(sig[0]); i++) {
			sc = &rows[n];
			sc->sc_nr = sig[i];
			sc->sc_narg = 1;
			sc->sc_arg[0] = (struct sandbox_arg){ 0, SANDBOX_CMP_EQ,
			    0, self };
			n += sandbox_seccomp_self_pair(sc);
		}
	}
	/* fcntl(fd, F_SETOWN, self); any other owner fails with EPERM */
	sc = &rows[n];
	sc->sc_nr = SCMP_SYS(fcntl);
	sc->sc_narg = 2;
	sc->sc_arg[0] = (struct sandbox_arg){ 1, SANDBOX_CMP_EQ, 0, F_SETOWN };
	sc->sc_arg[1] = (struct sandbox_arg){ 2, SANDBOX_CMP_EQ, 0, self };
	n += sandbox_seccomp_self_pair(sc);
	return n;
}

static scmp_filter_ctx
sandbox_seccomp_build(const struct sandbox_syscall *allow, size_t nallow,
    pid_t self, int flags)
{
	struct sandbox_syscall	 selfrows[SANDBOX_SELF_ROWS];
	scmp_filter_ctx		 ctx;
	uint32_t		 deflt;
	size_t			 nself, nbase;
	int			 rc;

#ifdef SANDBOX_DEBUG
	/* Never in production: let the call through and have it logged. */
	deflt = SCMP_ACT_LOG;
#else
	deflt = SCMP_ACT_KILL_PROCESS;
#endif
	if ((ctx = seccomp_init(deflt)) == NULL) {
		log_warnx("seccomp_init failed");
		return NULL;
	}
	/* A 32-bit (int 0x80) or x32 call must not sneak past the table. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1)) < 0 ||
	    /* libcurl's resolver threads may already run: filter them too. */
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) < 0) {
		log_warnx("seccomp_attr_set: %s", strerror(-rc));
		goto fail;
	}
#ifdef SANDBOX_DEBUG
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1)) < 0) {
		log_warnx("seccomp_attr_set LOG: %s", strerror(-rc));
		goto fail;
	}
#endif
	nself = sandbox_seccomp_self(selfrows, self, flags);
	/*
	 * SANDBOX_UNIX_SOCKET: the base's last row (socket(AF_UNIX) fails
	 * with EACCES) gives way to one that allows it.
	 */
	nbase = sizeof(sandbox_base) / sizeof(sandbox_base[0]);
	if (flags & SANDBOX_UNIX_SOCKET)
		nbase--;
	if (sandbox_seccomp_rows(ctx, sandbox_base, nbase) == -1 ||
	    ((flags & SANDBOX_UNIX_SOCKET) &&
	    sandbox_seccomp_rows(ctx, sandbox_unix, 1) == -1) ||
	    sandbox_seccomp_rows(ctx, selfrows, nself) == -1 ||
	    sandbox_seccomp_rows(ctx, allow, nallow) == -1)
		goto fail;
	return ctx;
 fail:
	seccomp_release(ctx);
	return NULL;
}

void
sandbox_seccomp_flags(const char *procname,
    const struct sandbox_syscall *allow, size_t nallow, int flags)
{
	scmp_filter_ctx	 ctx;
	int		 rc;

	if ((ctx = sandbox_seccomp_build(allow, nallow, getpid(),
	    flags)) == NULL)
		fatalx("cannot build the seccomp filter");
	if ((rc = seccomp_load(ctx)) < 0) {
		errno = -rc;
		fatal("seccomp_load");
	}
	seccomp_release(ctx);
#ifdef SANDBOX_DEBUG
	log_warnx("sandbox: %s seccomp filter in debug mode: denied calls "
	    "are only logged", procname);
#else
	log_debug("sandbox: %s seccomp filter loaded (%zu rows of its own)",
	    procname, nallow);
#endif
}

void
sandbox_seccomp_deny(const char *procname, const struct sandbox_syscall *deny,
    size_t ndeny)
{
	scmp_filter_ctx	 ctx;
	size_t		 i;
	int		 rc;

	/* An allowing row would mean nothing in a filter that allows. */
	for (i = 0; i < ndeny; i++)
		if (deny[i].sc_errno == 0)
			fatalx("%s: seccomp denylist row %zu allows",
			    procname, i);
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		fatalx("%s: seccomp_init failed", procname);
	if (sandbox_seccomp_rows(ctx, deny, ndeny) == -1)
		fatalx("%s: cannot build the seccomp denylist", procname);
	if ((rc = seccomp_load(ctx)) < 0) {
		errno = -rc;
		fatal("%s: seccomp_load", procname);
	}
	seccomp_release(ctx);
	log_debug("sandbox: %s seccomp denylist loaded (%zu rows)", procname,
	    ndeny);
}

void
sandbox_seccomp(const char *procname, const struct sandbox_syscall *allow,
    size_t nallow)
{
	sandbox_seccomp_flags(procname, allow, nallow, 0);
}

void
sandbox_profile_seccomp(const struct sandbox_profile *sp)
{
	sandbox_seccomp_flags(sp->sp_name, sp->sp_syscalls,
	    sp->sp_nsyscalls, sp->sp_flags);
}

static struct sandbox_syscall *
sandbox_profile_rows(const struct sandbox_profile *sp,
    const struct sandbox_syscall *extra, size_t nextra)
{
	struct sandbox_syscall	*rows;

	if ((rows = reallocarray(NULL, sp->sp_nsyscalls + nextra + 1,
	    sizeof(*rows))) == NULL)
		fatal(NULL);
	memcpy(rows, sp->sp_syscalls, sp->sp_nsyscalls * sizeof(*rows));
	if (nextra > 0)
		memcpy(rows + sp->sp_nsyscalls, extra, nextra * sizeof(*rows));
	return rows;
}

void
sandbox_profile_seccomp_extra(const struct sandbox_profile *sp,
    const struct sandbox_syscall *extra, size_t nextra)
{
	struct sandbox_syscall	*rows;

	rows = sandbox_profile_rows(sp, extra, nextra);
	sandbox_seccomp_flags(sp->sp_name, rows, sp->sp_nsyscalls + nextra,
	    sp->sp_flags);
	free(rows);
}

int
sandbox_profile_export(const struct sandbox_profile *sp, int fd)
{
	return sandbox_seccomp_export_flags(sp->sp_syscalls,
	    sp->sp_nsyscalls, sp->sp_flags, fd);
}

int
sandbox_profile_export_extra(const struct sandbox_profile *sp,
    const struct sandbox_syscall *extra, size_t nextra, int fd)
{
	struct sandbox_syscall	*rows;
	int			 rc;

	rows = sandbox_profile_rows(sp, extra, nextra);
	rc = sandbox_seccomp_export_flags(rows, sp->sp_nsyscalls + nextra,
	    sp->sp_flags, fd);
	free(rows);
	return rc;
}

int
sandbox_seccomp_export(const struct sandbox_syscall *allow, size_t nallow,
    int fd)
{
	return sandbox_seccomp_export_flags(allow, nallow, 0, fd);
}

/* The dump names the process itself SANDBOX_DUMP_PID: dumps stay stable. */
int
sandbox_seccomp_export_flags(const struct sandbox_syscall *allow,
    size_t nallow, int flags, int fd)
{
	scmp_filter_ctx	 ctx;
	int		 rc;

	if ((ctx = sandbox_seccomp_build(allow, nallow, SANDBOX_DUMP_PID,
	    flags)) == NULL)
		return -1;
	rc = seccomp_export_pfc(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}
