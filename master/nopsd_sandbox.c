/*
 * The master's sandbox: the profile of its row of the process table
 * (master/proc.c), which proc_run() applies once the start-up as root is
 * done and before the first worker starts.  A seccomp filter is inherited
 * by every child and across execve, so this one is also the ceiling of
 * every worker: it holds the rows the workers' own filters allow (they
 * narrow it further), what a re-executed worker needs until its own
 * filter is on (the dynamic loader, its privilege drop), and what the
 * master itself does (SQLite, supervision).  What no process of nopsd
 * needs stays out: ptrace, process_vm_*, modules, bpf, keyctl, mount,
 * namespaces, reboot, and every identity change but to the workers' ids.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <seccomp.h>

#include "log.h"
#include "imsg.h"
#include "proc.h"
#include "sandbox.h"
#include "nopsd_sandbox.h"

#define NOPSD_NS_FLAGS	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWNET |	\
	CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)
#define NOPSD_THREAD	(CLONE_THREAD | CLONE_VM | CLONE_SIGHAND)

/* Alike on purpose: rows shaped as shared/sandbox.c's base, one per call. */
static const struct sandbox_syscall nopsd_rows[] = {
	/* start a worker: fork, execute nopsd again, reap it */
	SANDBOX_ALLOW_MASK(clone, 0, NOPSD_NS_FLAGS | NOPSD_THREAD, 0),
	/* threads (a pool in the master, the workers' resolvers) */
	SANDBOX_ALLOW_MASK(clone, 0, NOPSD_NS_FLAGS | NOPSD_THREAD,
	    NOPSD_THREAD),
	SANDBOX_ALLOW(sched_getaffinity),
	/* the store's integrity check thread lowers its priority (store.c) */
	SANDBOX_ALLOW_ARG(setpriority, 0, PRIO_PROCESS),
	/*
	 * the hashing processes (auth_hash.c): a session of their own, and
	 * SCHED_IDLE for themselves (pid 0) only, no other policy
	 */
	SANDBOX_ALLOW(setsid),
	SANDBOX_ALLOW_ARG2(sched_setscheduler, 0, 0, 1, SCHED_IDLE),
	/* ... and their give-way timer (its own thread's slack, its timer) */
	SANDBOX_ALLOW_ARG(prctl, 0, PR_SET_TIMERSLACK),
	SANDBOX_ALLOW(setitimer),
	SANDBOX_ALLOW(execve),
	SANDBOX_ALLOW(wait4),
	SANDBOX_ALLOW(waitid),
	SANDBOX_ALLOW(setpgid),
	SANDBOX_ALLOW(close_range),
	/* the dynamic loader of an executed worker: code, never W+X */
	SANDBOX_ALLOW_MASK(mmap, 2, PROT_EXEC | PROT_WRITE, PROT_EXEC),
	SANDBOX_ALLOW(arch_prctl),
	SANDBOX_ALLOW(set_tid_address),
	SANDBOX_ALLOW_ARG(prlimit64, 0, 0),	/* its own limits */

	/* a worker's privilege drop (sandbox_drop_keep()) */
	SANDBOX_ALLOW(chroot),
	SANDBOX_ALLOW(chdir),
	SANDBOX_ALLOW(capget),
	SANDBOX_ALLOW(capset),		/* can only lower them */
	SANDBOX_ALLOW(getresuid),
	SANDBOX_ALLOW(getresgid),
	SANDBOX_ALLOW(getgroups),
	SANDBOX_ALLOW_ARG(setgroups, 0, 0),	/* an empty list only */
	SANDBOX_ERRNO_NE(setgroups, EPERM, 0, 0),
	SANDBOX_ERRNO(setuid, EPERM),
	SANDBOX_ERRNO(setgid, EPERM),
	SANDBOX_ERRNO(setreuid, EPERM),
	SANDBOX_ERRNO(setregid, EPERM),
	SANDBOX_ERRNO(setfsuid, EPERM),
	SANDBOX_ERRNO(setfsgid, EPERM),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_SET_NO_NEW_PRIVS),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_GET_NO_NEW_PRIVS),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_SET_DUMPABLE),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_GET_DUMPABLE),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_SET_KEEPCAPS),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_CAP_AMBIENT),
	SANDBOX_ALLOW_ARG(prctl, 0, PR_CAPBSET_READ),
	SANDBOX_ALLOW(seccomp),
	SANDBOX_ALLOW(landlock_create_ruleset),
	SANDBOX_ALLOW(landlock_add_rule),
	SANDBOX_ALLOW(landlock_restrict_self),
	/* no process of nopsd makes namespaces: refused, clearly */
	SANDBOX_ERRNO(unshare, EPERM),

	/*
	 * the database: SQLite in the state directory; the loader's access()
	 * checks
	 */
	SANDBOX_SYSCALLS_FILE_READ,
	SANDBOX_SYSCALLS_FILE_WRITE,
	SANDBOX_ALLOW(fstatfs),
	SANDBOX_ALLOW(statfs),

	/*
	 * What the Nix children (nixrun.c) need beyond the rest: they run
	 * under this filter too.  Nix asks its stderr's window size, chowns
	 * its own state to itself (no CAP_CHOWN: nothing else), waits for
	 * signals in a thread and reads its resource usage.  socket(AF_UNIX)
	 * for the Nix daemon is allowed by the profile's flags.
	 */
	SANDBOX_ERRNO_ARG(ioctl, ENOTTY, 1, TIOCGWINSZ),
	SANDBOX_ALLOW(chown),
	SANDBOX_ALLOW(rt_sigtimedwait),
	SANDBOX_ALLOW_ARG(getrusage, 0, RUSAGE_SELF),

	/* its sockets: workers' socketpairs, the listeners it keeps */
	SANDBOX_ALLOW_ARG(socketpair, 0, AF_UNIX),
	SANDBOX_ALLOW(accept4),
	SANDBOX_ALLOW(accept),
	SANDBOX_ALLOW(listen),
};

/*
 * Landlock: what the master reads itself (the dynamic loader and the
 * libraries of the workers it executes, user and group names) and what
 * the workers it starts read (CA store, DNS files: their domains nest in
 * the master's).  The configuration, the files it names, the state
 * directory and the nopsd binary are added at run time.
 */
static const struct sandbox_path nopsd_paths[] = {
	{ "/lib", SANDBOX_FS_READ },
	{ "/lib64", SANDBOX_FS_READ },
	{ "/usr/lib", SANDBOX_FS_READ },
	{ "/etc/ld.so.cache", SANDBOX_FS_READ },
	{ "/etc/passwd", SANDBOX_FS_READ },
	{ "/etc/group", SANDBOX_FS_READ },
	{ "/etc/nsswitch.conf", SANDBOX_FS_READ },
	{ "/etc/localtime", SANDBOX_FS_READ },
	{ "/usr/share/zoneinfo", SANDBOX_FS_READ },
	{ "/etc/ssl/certs", SANDBOX_FS_READ },
	{ "/etc/ssl/openssl.cnf", SANDBOX_FS_READ },
	{ "/etc/ca-certificates", SANDBOX_FS_READ },
	{ "/usr/share/ca-certificates", SANDBOX_FS_READ },
	{ "/etc/resolv.conf", SANDBOX_FS_READ },
	{ "/etc/hosts", SANDBOX_FS_READ },
	{ "/etc/host.conf", SANDBOX_FS_READ },
	{ "/etc/gai.conf", SANDBOX_FS_READ },
	{ "/etc/services", SANDBOX_FS_READ },
	{ "/dev/urandom", SANDBOX_FS_READ },
	{ "/dev/null", SANDBOX_FS_READ | SANDBOX_FS_WRITE },
};

const struct sandbox_profile nopsd_profile = {
	"nopsd",
	nopsd_paths, sizeof(nopsd_paths) / sizeof(nopsd_paths[0]),
	0,		/* signals scoped: every worker nests in its domain */
	nopsd_rows, sizeof(nopsd_rows) / sizeof(nopsd_rows[0]),
	SANDBOX_SIGNAL_ANY | SANDBOX_UNIX_SOCKET	/* a Nix daemon's
							   socket */
};

/* The rows of a worker's profile that allow: its refusals are its own. */
static size_t
nopsd_add_allows(struct sandbox_syscall *rows, size_t n,
    const struct sandbox_profile *sp)
{
	size_t	 i;

	for (i = 0; i < sp->sp_nsyscalls; i++)
		if (sp->sp_syscalls[i].sc_errno == 0)
			rows[n++] = sp->sp_syscalls[i];
	return n;
}

/*
 * The rows known at run time: setresuid/setresgid to the workers' ids
 * only (any other id fails with EPERM), and every worker's allowed rows.
 * The caller frees them.
 */
struct sandbox_syscall *
nopsd_sandbox_extra(uid_t uid, gid_t gid, size_t *nrows)
{
	static const struct sandbox_profile *const workers[] = {
		&gitworker_profile, &nomadworker_profile, &webworker_profile
	};
	struct sandbox_syscall	*rows, *sc;
	size_t			 max = 8, n = 0, i;
	unsigned int		 j;

	for (i = 0; i < sizeof(workers) / sizeof(workers[0]); i++)
		max += workers[i]->sp_nsyscalls;
	if ((rows = calloc(max, sizeof(*rows))) == NULL)
		fatal(NULL);

	/* setresuid(uid, uid, uid) and setresgid(gid, gid, gid) only */
	for (i = 0; i < 2; i++) {
		sc = &rows[n++];
		sc->sc_nr = i == 0 ? SCMP_SYS(setresuid) : SCMP_SYS(setresgid);
		sc->sc_narg = 3;
		for (j = 0; j < 3; j++)
			sc->sc_arg[j] = (struct sandbox_arg){ j,
			    SANDBOX_CMP_EQ, 0, i == 0 ? uid : gid };
		for (j = 0; j < 3; j++) {
			sc = &rows[n++];
			sc->sc_nr = i == 0 ? SCMP_SYS(setresuid) :
			    SCMP_SYS(setresgid);
			sc->sc_errno = EPERM;
			sc->sc_narg = 1;
			sc->sc_arg[0] = (struct sandbox_arg){ j,
			    SANDBOX_CMP_NE, 0, i == 0 ? uid : gid };
		}
	}
	for (i = 0; i < sizeof(workers) / sizeof(workers[0]); i++)
		n = nopsd_add_allows(rows, n, workers[i]);
	*nrows = n;
	return rows;
}

/*
 * The master's part of its row's pd_init: it becomes muid/mgid keeping
 * NOPSD_CAPS only, and its filter lets it (and what it starts) change
 * identity only to the workers' ids (wuid/wgid).  Its Landlock paths are
 * the caller's (the configuration's files, the state directory).
 */
void
nopsd_sandbox_prepare(struct proc_ctx *pc, uid_t muid, gid_t mgid,
    uid_t wuid, gid_t wgid)
{
	struct sandbox_syscall	*rows;
	size_t			 n;

	pc->pc_uid = muid;
	pc->pc_gid = mgid;
	pc->pc_caps = NOPSD_CAPS;
	pc->pc_chroot = NULL;
	rows = nopsd_sandbox_extra(wuid, wgid, &n);
	proc_add_syscalls(pc, rows, n);
	free(rows);
}

/* The filter, as text; the golden dump uses NOPSD_DUMP_UID/GID. */
int
nopsd_sandbox_export(uid_t uid, gid_t gid, int fd)
{
	struct sandbox_syscall	*rows;
	size_t			 n;
	int			 rc;

	rows = nopsd_sandbox_extra(uid, gid, &n);
	rc = sandbox_profile_export_extra(&nopsd_profile, rows, n, fd);
	free(rows);
	return rc;
}
