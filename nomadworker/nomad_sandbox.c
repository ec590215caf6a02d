/*
 * The nomadworker's sandbox: libcurl (OpenSSL) to Nomad's HTTP API, with
 * its threaded resolver, and libssh2 to hosts.  It needs outbound TCP,
 * DNS, threads and the CA store, and writes no file: tokens, CA files,
 * keys and known hosts arrive from the master as bytes.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <linux/netlink.h>

#include <sched.h>

#include <seccomp.h>

#include "log.h"
#include "sandbox.h"

/*
 * libcurl reads the CA bundle on each new TLS context, and the resolver
 * re-reads the DNS files when they change, so both stay readable.
 */
static const struct sandbox_path nomad_paths[] = {
	SANDBOX_PATHS_TLS_DNS,
};

static const struct sandbox_syscall nomad_syscalls[] = {
	/*
	 * network to Nomad and hosts, libcurl's wakeups, the resolver's
	 * threads: a client's (sandbox.h)
	 */
	SANDBOX_SYSCALLS_NET_CLIENT,

	/* reading the files above: Landlock decides which */
	SANDBOX_SYSCALLS_FILE_READ,
	SANDBOX_ALLOW(pread64),
};

/*
 * Alike on purpose: git_sandbox.c and web_sandbox.c: each worker's profile
 * is its own data, and its wrappers are one call each into the shared
 * sandbox_profile_*() (shared/sandbox.c), named so tests pick a worker's.
 */
const struct sandbox_profile nomadworker_profile = {
	"nomadworker",
	nomad_paths, sizeof(nomad_paths) / sizeof(nomad_paths[0]),
	0,
	nomad_syscalls, sizeof(nomad_syscalls) / sizeof(nomad_syscalls[0]),
	0
};

/* Returns the Landlock ABI used. */
int
nomadworker_sandbox_fs(void)
{
	return sandbox_profile_landlock(&nomadworker_profile, NULL, 0);
}

void
nomadworker_sandbox_syscalls(void)
{
	sandbox_profile_seccomp(&nomadworker_profile);
}

int
nomadworker_sandbox_export(int fd)
{
	return sandbox_profile_export(&nomadworker_profile, fd);
}
