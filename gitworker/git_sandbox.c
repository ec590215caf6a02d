/*
 * The gitworker's sandbox: libgit2 fetching over https (mbedTLS), ssh
 * (libssh2) and git://, into bare repositories under its cache directory.
 * It needs outbound TCP, DNS, the CA store, and full use of the cache; it
 * never runs programs (libgit2 has no transport that execs here).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <linux/netlink.h>

#include <sched.h>
#include <stdlib.h>

#include <seccomp.h>

#include "log.h"
#include "sandbox.h"

/* Read-only files for TLS verification and name resolution. */
static const struct sandbox_path git_read_paths[] = {
	SANDBOX_PATHS_TLS_DNS,
};

static const struct sandbox_syscall git_syscalls[] = {
	/* network, threads: a client's (sandbox.h) */
	SANDBOX_SYSCALLS_NET_CLIENT,

	/* files: Landlock decides which */
	SANDBOX_SYSCALLS_FILE_READ,
	SANDBOX_SYSCALLS_FILE_WRITE,
	SANDBOX_ALLOW(truncate),
	SANDBOX_ALLOW(msync),
	SANDBOX_ALLOW(renameat2),
	SANDBOX_ALLOW(link),
	SANDBOX_ALLOW(linkat),
	SANDBOX_ALLOW(symlink),
	SANDBOX_ALLOW(symlinkat),
	SANDBOX_ALLOW(fchmodat),
	SANDBOX_ALLOW(utimensat),
	SANDBOX_ALLOW(flock),
};

/*
 * Alike on purpose: nomad_sandbox.c and web_sandbox.c: each worker's profile
 * is its own data, and its wrappers are one call each into the shared
 * sandbox_profile_*() (shared/sandbox.c), named so tests pick a worker's.
 */
const struct sandbox_profile gitworker_profile = {
	"gitworker",
	git_read_paths, sizeof(git_read_paths) / sizeof(git_read_paths[0]),
	0,
	git_syscalls, sizeof(git_syscalls) / sizeof(git_syscalls[0]),
	0
};

/*
 * cachedir holds one bare repository per remote; everything else is
 * read-only lookups for TLS and DNS.  Returns the Landlock ABI used.
 */
int
gitworker_sandbox_fs(const char *cachedir)
{
	return gitworker_sandbox_fs_remotes(cachedir, NULL, 0);
}

/*
 * The run-time paths: the cache (read-write) and the local paths of
 * file:// remotes (read-only).  Returns how many were set in paths[],
 * which has room for 1 + nremotes.
 */
size_t
gitworker_sandbox_paths(struct sandbox_path *paths, const char *cachedir,
    const char *const *remotes, size_t nremotes)
{
	size_t	 i, n = 0;

	paths[n].path = cachedir;
	paths[n].access = SANDBOX_FS_READ | SANDBOX_FS_WRITE;
	n++;
	for (i = 0; i < nremotes; i++, n++) {
		paths[n].path = remotes[i];
		paths[n].access = SANDBOX_FS_READ;
	}
	return n;
}

/* The same, plus the local paths of file:// remotes, read-only. */
int
gitworker_sandbox_fs_remotes(const char *cachedir,
    const char *const *remotes, size_t nremotes)
{
	struct sandbox_path	*paths;
	size_t			 n;
	int			 abi;

	if ((paths = reallocarray(NULL, 1 + nremotes,
	    sizeof(*paths))) == NULL)
		fatal(NULL);
	n = gitworker_sandbox_paths(paths, cachedir, remotes, nremotes);
	abi = sandbox_profile_landlock(&gitworker_profile, paths, n);
	free(paths);
	return abi;
}

void
gitworker_sandbox_syscalls(void)
{
	sandbox_profile_seccomp(&gitworker_profile);
}

int
gitworker_sandbox_export(int fd)
{
	return sandbox_profile_export(&gitworker_profile, fd);
}
