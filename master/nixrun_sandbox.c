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

/* The system calls a Nix child may not make (EPERM). */
static const int nixrun_denied[] = {
	SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv),
	SCMP_SYS(process_vm_writev), SCMP_SYS(kcmp),
	SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root),
	SCMP_SYS(chroot), SCMP_SYS(move_mount), SCMP_SYS(open_tree),
	SCMP_SYS(fsopen), SCMP_SYS(fsconfig), SCMP_SYS(fsmount),
	SCMP_SYS(fspick), SCMP_SYS(mount_setattr),
	SCMP_SYS(unshare), SCMP_SYS(setns),
	SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
	SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd),
	SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter),
	SCMP_SYS(io_uring_register),
	SCMP_SYS(init_module), SCMP_SYS(finit_module),
	SCMP_SYS(delete_module), SCMP_SYS(kexec_load),
	SCMP_SYS(kexec_file_load), SCMP_SYS(reboot),
	SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(acct),
	SCMP_SYS(quotactl), SCMP_SYS(syslog), SCMP_SYS(iopl),
	SCMP_SYS(ioperm), SCMP_SYS(open_by_handle_at),
	SCMP_SYS(name_to_handle_at), SCMP_SYS(settimeofday),
	SCMP_SYS(clock_settime), SCMP_SYS(adjtimex),
	SCMP_SYS(clock_adjtime), SCMP_SYS(sethostname),
	SCMP_SYS(setdomainname), SCMP_SYS(vhangup),
	SCMP_SYS(lookup_dcookie), SCMP_SYS(nfsservctl),
};

/* clone(2) flags that make namespaces. */
#define NIXRUN_CLONE_NS	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
	CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP)

static void
nixrun_seccomp(void)
{
	scmp_filter_ctx	 ctx;
	size_t		 i;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		fatalx("nix: seccomp_init failed");
	for (i = 0; i < sizeof(nixrun_denied) / sizeof(nixrun_denied[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    nixrun_denied[i], 0) < 0)
			fatalx("nix: seccomp rule for syscall %d",
			    nixrun_denied[i]);
	/*
	 * No new namespaces through clone(2) either; clone3(2) passes its
	 * flags in memory a filter cannot read, so it is "not there" and
	 * glibc falls back to clone(2).
	 */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, NIXRUN_CLONE_NS, NIXRUN_CLONE_NS)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWNS, CLONE_NEWNS)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWNET, CLONE_NEWNET)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
	    0) < 0)
		fatalx("nix: seccomp rule for clone");
	if (seccomp_load(ctx) < 0)
		fatalx("nix: seccomp_load failed");
	seccomp_release(ctx);
}

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
	nixrun_seccomp();
}
