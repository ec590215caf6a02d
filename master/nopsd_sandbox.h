/* The master's sandbox (nopsd_sandbox.c). */
#ifndef NOPS_NOPSD_SANDBOX_H
#define NOPS_NOPSD_SANDBOX_H

#include <sys/types.h>
#include <stddef.h>
#include <linux/capability.h>

/*
 * What the master keeps once it dropped root (master user): setuid and
 * setgid to the workers' ids, chroot for the webworker, signals to its
 * children.  Ambient, so a worker it starts can drop its own privileges.
 */
#define NOPSD_CAPS	(SANDBOX_CAP(CAP_SETUID) | SANDBOX_CAP(CAP_SETGID) | \
	SANDBOX_CAP(CAP_SYS_CHROOT) | SANDBOX_CAP(CAP_KILL))


/* The dynamic loader the kernel runs for nopsd (execute, Landlock). */
#define NOPSD_LOADER	"/lib64/ld-linux-x86-64.so.2"

/* The workers' ids the golden dump of the filter is written with. */
#define NOPSD_DUMP_UID	4242
#define NOPSD_DUMP_GID	4243

struct sandbox_syscall;
struct sandbox_profile;
struct proc_ctx;

extern const struct sandbox_profile nopsd_profile;
struct sandbox_syscall *nopsd_sandbox_extra(uid_t, gid_t, size_t *);
void	 nopsd_sandbox_prepare(struct proc_ctx *, uid_t muid, gid_t mgid,
	    uid_t wuid, gid_t wgid);
int	 nopsd_sandbox_export(uid_t, gid_t, int fd);

#endif
