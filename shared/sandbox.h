/*
 * Privilege separation for the workers: drop root, confine the file
 * system with Landlock, then allow only a list of system calls with
 * seccomp.  A worker calls, in this order and while still single-threaded:
 *
 *	(load libraries, CA bundles, keys while root)
 *	sandbox_drop(procname, chroot_dir_or_NULL, uid, gid);
 *	<worker>_sandbox_fs(...);
 *	(event_base_new(), evhttp, ... : descriptors libevent needs)
 *	<worker>_sandbox_syscalls();
 *	(event loop)
 *
 * Every failure is fatal: a worker never runs half-sandboxed.
 */
#ifndef NOPS_SANDBOX_H
#define NOPS_SANDBOX_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

/* Landlock: what a path (and everything below it) may be used for. */
#define SANDBOX_FS_READ		0x01	/* read files, list directories */
#define SANDBOX_FS_WRITE	0x02	/* write, create, remove, rename
					   below */
#define SANDBOX_FS_EXEC		0x04	/* execute files */
#define SANDBOX_FS_UNLINK	0x08	/* remove files directly below */

struct sandbox_path {
	const char	*path;
	unsigned int	 access;	/* SANDBOX_FS_* */
};

/* sandbox_landlock_flags() flags. */
#define SANDBOX_LL_NONET	0x01	/* no TCP bind/connect (ABI >= 4) */

/*
 * seccomp: one row of an allowlist.  Rows name the system call with
 * libseccomp's SCMP_SYS(name) (include <seccomp.h> where a table is
 * written; a misspelt name then fails to compile).  A row whose argument
 * tests do not match falls through to the other rows for the same call
 * and finally to the default action, which kills the process.
 */
#define SANDBOX_CMP_EQ		1	/* arg == value */
#define SANDBOX_CMP_MASKED_EQ	2	/* (arg & mask) == value */
#define SANDBOX_CMP_NE		3	/* arg != value */
#define SANDBOX_CMP_LT		4	/* arg < value (unsigned) */
#define SANDBOX_CMP_GT		5	/* arg > value (unsigned) */

struct sandbox_arg {
	unsigned int	 sa_index;	/* 0..5 */
	unsigned int	 sa_op;		/* SANDBOX_CMP_* */
	uint64_t	 sa_mask;
	uint64_t	 sa_value;
};

struct sandbox_syscall {
	int		 sc_nr;		/* SCMP_SYS(name) */
	int		 sc_errno;	/* 0: allow; else fail with
					   this errno */
	unsigned int	 sc_narg;	/* tests in sc_arg, all must hold */
	struct sandbox_arg sc_arg[3];
};

#define SANDBOX_NOARG	{ 0, 0, 0, 0 }
#define SANDBOX_ALLOW(name)						\
	{ SCMP_SYS(name), 0, 0,						\
	    { SANDBOX_NOARG, SANDBOX_NOARG, SANDBOX_NOARG } }
#define SANDBOX_ERRNO(name, err)					\
	{ SCMP_SYS(name), (err), 0,					\
	    { SANDBOX_NOARG, SANDBOX_NOARG, SANDBOX_NOARG } }
#define SANDBOX_ALLOW_ARG(name, idx, val)				\
	{ SCMP_SYS(name), 0, 1,						\
	    { { (idx), SANDBOX_CMP_EQ, 0, (val) }, SANDBOX_NOARG,	\
	    SANDBOX_NOARG } }
#define SANDBOX_ERRNO_ARG(name, err, idx, val)				\
	{ SCMP_SYS(name), (err), 1,					\
	    { { (idx), SANDBOX_CMP_EQ, 0, (val) }, SANDBOX_NOARG,	\
	    SANDBOX_NOARG } }
/* Fail with err when argument idx is not val (pairs with an ALLOW row). */
#define SANDBOX_ERRNO_NE(name, err, idx, val)				\
	{ SCMP_SYS(name), (err), 1,					\
	    { { (idx), SANDBOX_CMP_NE, 0, (val) }, SANDBOX_NOARG,	\
	    SANDBOX_NOARG } }
#define SANDBOX_ALLOW_CMP(name, idx, op, val)				\
	{ SCMP_SYS(name), 0, 1,						\
	    { { (idx), (op), 0, (val) }, SANDBOX_NOARG, SANDBOX_NOARG } }
#define SANDBOX_ALLOW_ARG3(name, i0, v0, i1, v1, i2, v2)		\
	{ SCMP_SYS(name), 0, 3,						\
	    { { (i0), SANDBOX_CMP_EQ, 0, (v0) },			\
	    { (i1), SANDBOX_CMP_EQ, 0, (v1) },				\
	    { (i2), SANDBOX_CMP_EQ, 0, (v2) } } }
#define SANDBOX_ALLOW_MASK(name, idx, mask, val)			\
	{ SCMP_SYS(name), 0, 1,						\
	    { { (idx), SANDBOX_CMP_MASKED_EQ, (mask), (val) },		\
	    SANDBOX_NOARG, SANDBOX_NOARG } }
/* Fail with err when (argument idx & mask) == val (a denylist's row). */
#define SANDBOX_ERRNO_MASK(name, err, idx, mask, val)			\
	{ SCMP_SYS(name), (err), 1,					\
	    { { (idx), SANDBOX_CMP_MASKED_EQ, (mask), (val) },		\
	    SANDBOX_NOARG, SANDBOX_NOARG } }
#define SANDBOX_ALLOW_ARG2(name, i0, v0, i1, v1)			\
	{ SCMP_SYS(name), 0, 2,						\
	    { { (i0), SANDBOX_CMP_EQ, 0, (v0) },			\
	    { (i1), SANDBOX_CMP_EQ, 0, (v1) }, SANDBOX_NOARG } }

/*
 * The rows both network workers (gitworker, nomadworker) share; each adds
 * its own after them.
 * - The files a TLS and DNS client reads: the CA store, the resolver's.
 * - A client's network: TCP out, DNS over UDP, netlink for AI_ADDRCONFIG,
 *   socketpairs (libcurl's wakeups), threads only (clone3 fails with
 *   ENOSYS in the base rules).
 * - Looking files up and reading them: Landlock decides which.
 */
#define SANDBOX_PATHS_TLS_DNS						\
	{ "/etc/ssl/certs", SANDBOX_FS_READ },				\
	{ "/etc/ssl/openssl.cnf", SANDBOX_FS_READ },			\
	{ "/etc/ca-certificates", SANDBOX_FS_READ },			\
	{ "/usr/share/ca-certificates", SANDBOX_FS_READ },		\
	{ "/etc/resolv.conf", SANDBOX_FS_READ },			\
	{ "/etc/hosts", SANDBOX_FS_READ },				\
	{ "/etc/host.conf", SANDBOX_FS_READ },				\
	{ "/etc/nsswitch.conf", SANDBOX_FS_READ },			\
	{ "/etc/gai.conf", SANDBOX_FS_READ },				\
	{ "/etc/services", SANDBOX_FS_READ },				\
	{ "/dev/urandom", SANDBOX_FS_READ }
/* A thread shares memory, signal handlers and thread group; nothing new. */
#define SANDBOX_CLONE_MASK (CLONE_THREAD | CLONE_VM | CLONE_SIGHAND |	\
	CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID |	\
	CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)
#define SANDBOX_CLONE_THREAD	(CLONE_THREAD | CLONE_VM | CLONE_SIGHAND)
#define SANDBOX_SYSCALLS_NET_CLIENT					\
	SANDBOX_ALLOW_ARG(socket, 0, AF_INET),				\
	SANDBOX_ALLOW_ARG(socket, 0, AF_INET6),				\
	SANDBOX_ALLOW_ARG2(socket, 0, AF_NETLINK, 2, NETLINK_ROUTE),	\
	SANDBOX_ALLOW(connect),						\
	SANDBOX_ALLOW(bind),						\
	SANDBOX_ALLOW(sendmmsg),					\
	SANDBOX_ALLOW(recvmmsg),					\
	SANDBOX_ALLOW_ARG(socketpair, 0, AF_UNIX),			\
	SANDBOX_ALLOW_MASK(clone, 0, SANDBOX_CLONE_MASK,		\
	    SANDBOX_CLONE_THREAD),					\
	SANDBOX_ALLOW(sched_getaffinity)
#define SANDBOX_SYSCALLS_FILE_READ					\
	SANDBOX_ALLOW(open),						\
	SANDBOX_ALLOW(openat),						\
	SANDBOX_ALLOW(stat),						\
	SANDBOX_ALLOW(lstat),						\
	SANDBOX_ALLOW(access),						\
	SANDBOX_ALLOW(faccessat),					\
	SANDBOX_ALLOW(faccessat2),					\
	SANDBOX_ALLOW(readlink),					\
	SANDBOX_ALLOW(readlinkat),					\
	SANDBOX_ALLOW(getdents64)
/* Writing files (a cache, a database): Landlock decides which. */
#define SANDBOX_SYSCALLS_FILE_WRITE					\
	SANDBOX_ALLOW(getcwd),						\
	SANDBOX_ALLOW(pread64),						\
	SANDBOX_ALLOW(pwrite64),					\
	SANDBOX_ALLOW(fsync),						\
	SANDBOX_ALLOW(fdatasync),					\
	SANDBOX_ALLOW(ftruncate),					\
	SANDBOX_ALLOW(fallocate),					\
	SANDBOX_ALLOW(mkdir),						\
	SANDBOX_ALLOW(mkdirat),						\
	SANDBOX_ALLOW(rmdir),						\
	SANDBOX_ALLOW(unlink),						\
	SANDBOX_ALLOW(unlinkat),					\
	SANDBOX_ALLOW(rename),						\
	SANDBOX_ALLOW(renameat),					\
	SANDBOX_ALLOW(chmod),						\
	SANDBOX_ALLOW(fchmod),						\
	SANDBOX_ALLOW(umask)

/* sandbox_seccomp_flags() flags. */
#define SANDBOX_SIGNAL_ANY	0x01	/* kill/tgkill any pid (the master) */
#define SANDBOX_UNIX_SOCKET	0x02	/* socket(AF_UNIX) allowed, not
					   EACCES */
#define SANDBOX_SELF_ROWS	6	/* rows naming the process itself */
#define SANDBOX_DUMP_PID	4194304	/* "itself" in dumps: above pid_max */

/*
 * What a process may do once confined: its Landlock paths (more may be
 * added at run time, see shared/proc.h) and its seccomp rows on top of
 * the base every process gets.
 */
struct sandbox_profile {
	const char			*sp_name;
	const struct sandbox_path	*sp_paths;
	size_t				 sp_npaths;
	int				 sp_llflags;	/* SANDBOX_LL_* */
	const struct sandbox_syscall	*sp_syscalls;
	size_t				 sp_nsyscalls;
	int				 sp_flags; /* SANDBOX_SIGNAL_ANY... */
};

/* The capabilities the master keeps (sandbox_drop_keep()). */
#define SANDBOX_CAP(c)		(1ULL << (c))

/*
 * chroot(2) to chroot_dir (when not NULL; it must be a root-owned
 * directory nobody else can write) and chdir("/"), then become uid/gid
 * with gid as the only group, check that root cannot be regained, and
 * set PR_SET_NO_NEW_PRIVS.  Refuses uid 0 and a process that already
 * runs threads (Landlock would not cover them).  procname becomes the
 * process name of the log (log_procinit()).
 */
void	 sandbox_drop(const char *procname, const char *chroot_dir, uid_t uid,
	    gid_t gid);
/*
 * The same, keeping the capabilities in caps (SANDBOX_CAP()) effective,
 * permitted, inheritable and ambient, so that a worker the process
 * starts can drop its own privileges.  caps 0 is sandbox_drop(): every
 * capability is cleared, whatever uid the process started as.
 */
void	 sandbox_drop_keep(const char *procname, const char *chroot_dir,
	    uid_t uid, gid_t gid, uint64_t caps);
/* The effective capabilities of the process, as SANDBOX_CAP() bits. */
uint64_t sandbox_caps(void);
/* Clear every capability (effective, permitted, inheritable, ambient). */
void	 sandbox_caps_clear(void);
/*
 * No core files: RLIMIT_CORE 0 and not dumpable (which also keeps
 * processes of the same uid from ptrace(2)).  With dumpable set (a debug
 * flag) both are left as they are.
 */
void	 sandbox_nocore(const char *procname, int dumpable);

/*
 * Landlock ABI version of the running kernel, 0 when it has none (or
 * when it is disabled).
 */
int	 sandbox_landlock_abi(void);

/*
 * Restrict the file system to paths[] (an empty list: no access at all).
 * A path that does not exist is skipped.  On ABI >= 6 signals and
 * abstract unix sockets are also scoped to the worker itself.  Returns
 * the ABI used, 0 when the kernel lacks Landlock.  Needs
 * PR_SET_NO_NEW_PRIVS (sandbox_drop() sets it).
 */
int	 sandbox_landlock(const char *procname,
	    const struct sandbox_path *paths, size_t npaths);
int	 sandbox_landlock_flags(const char *procname,
	    const struct sandbox_path *paths, size_t npaths, int flags);

int	 sandbox_profile_landlock(const struct sandbox_profile *,
	    const struct sandbox_path *extra, size_t nextra);

/*
 * Load a seccomp filter: the rows every worker needs (memory, signals,
 * time, exit, I/O on open descriptors; see sandbox.c) plus allow[].
 * Anything else kills the process (SANDBOX_DEBUG builds: logs it and
 * lets it through).  Applies to every thread of the process.
 */
void	 sandbox_seccomp(const char *procname,
	    const struct sandbox_syscall *allow, size_t nallow);

void	 sandbox_seccomp_flags(const char *procname,
	    const struct sandbox_syscall *allow, size_t nallow, int flags);
void	 sandbox_profile_seccomp(const struct sandbox_profile *);
/*
 * A filter on top of those loaded that allows every call but deny[], each
 * row of which fails with its errno: for a program (Nix) whose own list
 * of calls is not ours to know.  Fatal on failure.
 */
void	 sandbox_seccomp_deny(const char *procname,
	    const struct sandbox_syscall *deny, size_t ndeny);
/* The profile's rows and extra[] (rows known at run time), one filter. */
void	 sandbox_profile_seccomp_extra(const struct sandbox_profile *,
	    const struct sandbox_syscall *extra, size_t nextra);
int	 sandbox_profile_export_extra(const struct sandbox_profile *,
	    const struct sandbox_syscall *extra, size_t nextra, int fd);

/* Write the filter sandbox_seccomp() would load, as text (PFC), to fd. */
int	 sandbox_seccomp_export(const struct sandbox_syscall *allow,
	    size_t nallow, int fd);
int	 sandbox_seccomp_export_flags(const struct sandbox_syscall *allow,
	    size_t nallow, int flags, int fd);
int	 sandbox_profile_export(const struct sandbox_profile *, int fd);

/* The profiles, one per process (in each process's *_sandbox.c). */
extern const struct sandbox_profile gitworker_profile;
extern const struct sandbox_profile nomadworker_profile;
extern const struct sandbox_profile webworker_profile;

/*
 * gitworker (gitworker/git_sandbox.c): remotes[] are the local paths of
 * file:// remotes, readable; missing ones are skipped.
 */
int	 gitworker_sandbox_fs(const char *cachedir);
int	 gitworker_sandbox_fs_remotes(const char *cachedir,
	    const char *const *remotes, size_t nremotes);
size_t	 gitworker_sandbox_paths(struct sandbox_path *, const char *cachedir,
	    const char *const *remotes, size_t nremotes);
void	 gitworker_sandbox_syscalls(void);
int	 gitworker_sandbox_export(int fd);

/* nomadworker (nomadworker/nomad_sandbox.c) */
int	 nomadworker_sandbox_fs(void);
void	 nomadworker_sandbox_syscalls(void);
int	 nomadworker_sandbox_export(int fd);

/* webworker (webworker/web_sandbox.c) */
int	 webworker_sandbox_fs(void);
void	 webworker_sandbox_syscalls(void);
int	 webworker_sandbox_export(int fd);

#endif /* NOPS_SANDBOX_H */
