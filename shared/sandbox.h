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
#define SANDBOX_FS_WRITE	0x02	/* write, create, remove, rename below */
#define SANDBOX_FS_EXEC		0x04	/* execute files */

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

struct sandbox_arg {
	unsigned int	 sa_index;	/* 0..5 */
	unsigned int	 sa_op;		/* SANDBOX_CMP_* */
	uint64_t	 sa_mask;
	uint64_t	 sa_value;
};

struct sandbox_syscall {
	int		 sc_nr;		/* SCMP_SYS(name) */
	int		 sc_errno;	/* 0: allow; else fail with this errno */
	unsigned int	 sc_narg;	/* tests in sc_arg, all must hold */
	struct sandbox_arg sc_arg[2];
};

#define SANDBOX_ALLOW(name)						\
	{ SCMP_SYS(name), 0, 0, { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } } }
#define SANDBOX_ERRNO(name, err)					\
	{ SCMP_SYS(name), (err), 0, { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } } }
#define SANDBOX_ALLOW_ARG(name, idx, val)				\
	{ SCMP_SYS(name), 0, 1,						\
	    { { (idx), SANDBOX_CMP_EQ, 0, (val) }, { 0, 0, 0, 0 } } }
#define SANDBOX_ERRNO_ARG(name, err, idx, val)				\
	{ SCMP_SYS(name), (err), 1,					\
	    { { (idx), SANDBOX_CMP_EQ, 0, (val) }, { 0, 0, 0, 0 } } }
#define SANDBOX_ALLOW_MASK(name, idx, mask, val)			\
	{ SCMP_SYS(name), 0, 1,						\
	    { { (idx), SANDBOX_CMP_MASKED_EQ, (mask), (val) },		\
	    { 0, 0, 0, 0 } } }
#define SANDBOX_ALLOW_ARG2(name, i0, v0, i1, v1)			\
	{ SCMP_SYS(name), 0, 2,						\
	    { { (i0), SANDBOX_CMP_EQ, 0, (v0) },			\
	    { (i1), SANDBOX_CMP_EQ, 0, (v1) } } }

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
int	 sandbox_landlock(const char *procname, const struct sandbox_path *paths,
	    size_t npaths);
int	 sandbox_landlock_flags(const char *procname,
	    const struct sandbox_path *paths, size_t npaths, int flags);

/*
 * Load a seccomp filter: the rows every worker needs (memory, signals,
 * time, exit, I/O on open descriptors; see sandbox.c) plus allow[].
 * Anything else kills the process (SANDBOX_DEBUG builds: logs it and
 * lets it through).  Applies to every thread of the process.
 */
void	 sandbox_seccomp(const char *procname,
	    const struct sandbox_syscall *allow, size_t nallow);

/* Write the filter sandbox_seccomp() would load, as text (PFC), to fd. */
int	 sandbox_seccomp_export(const struct sandbox_syscall *allow,
	    size_t nallow, int fd);

/*
 * gitworker (gitworker/git_sandbox.c): remotes[] are the local paths of
 * file:// remotes, readable; missing ones are skipped.
 */
int	 gitworker_sandbox_fs(const char *cachedir);
int	 gitworker_sandbox_fs_remotes(const char *cachedir,
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
