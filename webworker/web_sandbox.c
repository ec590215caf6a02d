/*
 * The webworker's sandbox.  It faces the network, so it gets the least:
 * chrooted in an empty directory, no file system at all, no outbound
 * network.  It only accepts on the listening sockets the master handed it
 * (already bound and listening) and talks over descriptors it holds.
 */
#include "config.h"

#include <sys/types.h>

#include <errno.h>

#include <seccomp.h>

#include "log.h"
#include "sandbox.h"

static const struct sandbox_syscall web_syscalls[] = {
	/* clients arrive on listening sockets given by the master */
	SANDBOX_ALLOW(accept4),
	SANDBOX_ALLOW(accept),
	/*
	 * Nothing exists in the chroot and Landlock denies all anyway: a
	 * late open (a lazily loaded OpenSSL or glibc file) fails rather
	 * than killing the process.
	 */
	SANDBOX_ERRNO(open, EACCES),
	SANDBOX_ERRNO(openat, EACCES),
};

/*
 * No path at all; with Landlock ABI >= 4 also no TCP bind or connect
 * (socket(2) is already denied by the filter).
 */
const struct sandbox_profile webworker_profile = {
	"webworker",
	NULL, 0,
	SANDBOX_LL_NONET,
	web_syscalls, sizeof(web_syscalls) / sizeof(web_syscalls[0]),
	0
};

/* Returns the Landlock ABI used. */
int
webworker_sandbox_fs(void)
{
	return sandbox_profile_landlock(&webworker_profile, NULL, 0);
}

void
webworker_sandbox_syscalls(void)
{
	sandbox_profile_seccomp(&webworker_profile);
}

int
webworker_sandbox_export(int fd)
{
	return sandbox_profile_export(&webworker_profile, fd);
}
