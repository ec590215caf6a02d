/*
 * The file system and system calls of a Nix child (nixrun.h), on top of
 * the workers' user, NO_NEW_PRIVS, the rlimits and the socket filter
 * nixrun.c gives it.  Nix runs code from git, so what it may touch is
 * named here, before it is executed:
 *
 *	Landlock	its own directory (read, write); the Nix store and
 *			the system's programs and libraries (read, execute);
 *			the few files of /etc the dynamic loader and libc
 *			read, /dev/null and the random devices, its own
 *			/proc entry.  Nothing else: not the state directory
 *			with the database, not /home, not /etc/nix.  No TCP
 *			(ABI 4 and later), no signal to a process outside
 *			its domain (ABI 6 and later).  A kernel without
 *			Landlock skips this part; the rest holds.
 *	seccomp		a list of calls that fail with EPERM: what would
 *			reach the kernel or another process beyond a build
 *			tool's needs (ptrace, mount, namespaces, modules,
 *			keyrings, bpf, io_uring, ...).  Everything else is
 *			allowed: the list of what Nix itself uses is long
 *			and changes with its version.
 *
 * Failures are fatal for the child: it never runs Nix half-confined.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

#include "log.h"
#include "sandbox.h"
#include "nixrun.h"

/* clone(2) flags that make namespaces. */
#define NIXRUN_CLONE_NS	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
	CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP)

#define NIXRUN_DENY(name)	SANDBOX_ERRNO(name, EPERM)

/* The system calls a Nix child may not make (EPERM). */
static const struct sandbox_syscall nixrun_denied[] = {
	NIXRUN_DENY(ptrace), NIXRUN_DENY(process_vm_readv),
	NIXRUN_DENY(process_vm_writev), NIXRUN_DENY(kcmp),
	NIXRUN_DENY(mount), NIXRUN_DENY(umount2), NIXRUN_DENY(pivot_root),
	NIXRUN_DENY(chroot), NIXRUN_DENY(move_mount), NIXRUN_DENY(open_tree),
	NIXRUN_DENY(fsopen), NIXRUN_DENY(fsconfig), NIXRUN_DENY(fsmount),
	NIXRUN_DENY(fspick), NIXRUN_DENY(mount_setattr),
	NIXRUN_DENY(unshare), NIXRUN_DENY(setns),
	NIXRUN_DENY(keyctl), NIXRUN_DENY(add_key), NIXRUN_DENY(request_key),
	NIXRUN_DENY(bpf), NIXRUN_DENY(perf_event_open),
	NIXRUN_DENY(userfaultfd),
	NIXRUN_DENY(io_uring_setup), NIXRUN_DENY(io_uring_enter),
	NIXRUN_DENY(io_uring_register),
	NIXRUN_DENY(init_module), NIXRUN_DENY(finit_module),
	NIXRUN_DENY(delete_module), NIXRUN_DENY(kexec_load),
	NIXRUN_DENY(kexec_file_load), NIXRUN_DENY(reboot),
	NIXRUN_DENY(swapon), NIXRUN_DENY(swapoff), NIXRUN_DENY(acct),
	NIXRUN_DENY(quotactl), NIXRUN_DENY(syslog), NIXRUN_DENY(iopl),
	NIXRUN_DENY(ioperm), NIXRUN_DENY(open_by_handle_at),
	NIXRUN_DENY(name_to_handle_at), NIXRUN_DENY(settimeofday),
	NIXRUN_DENY(clock_settime), NIXRUN_DENY(adjtimex),
	NIXRUN_DENY(clock_adjtime), NIXRUN_DENY(sethostname),
	NIXRUN_DENY(setdomainname), NIXRUN_DENY(vhangup),
	NIXRUN_DENY(lookup_dcookie), NIXRUN_DENY(nfsservctl),
	/*
	 * No new namespaces through clone(2) either; clone3(2) passes its
	 * flags in memory a filter cannot read, so it is "not there" and
	 * glibc falls back to clone(2).
	 */
	SANDBOX_ERRNO_MASK(clone, EPERM, 0, NIXRUN_CLONE_NS, NIXRUN_CLONE_NS),
	SANDBOX_ERRNO_MASK(clone, EPERM, 0, CLONE_NEWUSER, CLONE_NEWUSER),
	SANDBOX_ERRNO_MASK(clone, EPERM, 0, CLONE_NEWNS, CLONE_NEWNS),
	SANDBOX_ERRNO_MASK(clone, EPERM, 0, CLONE_NEWNET, CLONE_NEWNET),
	SANDBOX_ERRNO(clone3, ENOSYS),
};

/*
 * Confine the calling child (already the workers' user, NO_NEW_PRIVS)
 * to dir and what running the program needs; then the syscall list.
 */
void
nixrun_confine(const char *dir, const char *program)
{
	char			 self[64], bindir[PATH_MAX], *p;
	struct sandbox_path	 paths[] = {
		{ dir,			SANDBOX_FS_READ | SANDBOX_FS_WRITE },
		{ "/nix/store",		SANDBOX_FS_READ | SANDBOX_FS_EXEC },
		{ bindir,		SANDBOX_FS_READ | SANDBOX_FS_EXEC },
		{ "/usr",		SANDBOX_FS_READ | SANDBOX_FS_EXEC },
		{ "/lib",		SANDBOX_FS_READ | SANDBOX_FS_EXEC },
		{ "/lib64",		SANDBOX_FS_READ | SANDBOX_FS_EXEC },
		{ "/bin",		SANDBOX_FS_READ | SANDBOX_FS_EXEC },
		{ "/etc/ld.so.cache",	SANDBOX_FS_READ },
		{ "/etc/nsswitch.conf",	SANDBOX_FS_READ },
		{ "/etc/passwd",	SANDBOX_FS_READ },
		{ "/etc/group",		SANDBOX_FS_READ },
		{ "/etc/localtime",	SANDBOX_FS_READ },
		{ "/dev/null",		SANDBOX_FS_READ | SANDBOX_FS_WRITE },
		{ "/dev/urandom",	SANDBOX_FS_READ },
		{ "/dev/random",	SANDBOX_FS_READ },
		{ self,			SANDBOX_FS_READ },
	};

	snprintf(self, sizeof(self), "/proc/%ld", (long)getpid());
	/* The program's directory: NIXRUN_BINDIR, or a test build's Nix. */
	strlcpy(bindir, program, sizeof(bindir));
	if ((p = strrchr(bindir, '/')) != NULL && p != bindir)
		*p = '\0';
	(void)sandbox_landlock_flags("nix", paths,
	    sizeof(paths) / sizeof(paths[0]), SANDBOX_LL_NONET);
	sandbox_seccomp_deny("nix", nixrun_denied,
	    sizeof(nixrun_denied) / sizeof(nixrun_denied[0]));
}
