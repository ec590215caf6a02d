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

/* A thread shares memory, signal handlers and thread group; nothing new. */
#define NOMAD_CLONE_MASK	(CLONE_THREAD | CLONE_VM | CLONE_SIGHAND |	\
	CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID |	\
	CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)
#define NOMAD_CLONE_THREAD	(CLONE_THREAD | CLONE_VM | CLONE_SIGHAND)

/*
 * libcurl reads the CA bundle on each new TLS context, and the resolver
 * re-reads the DNS files when they change, so both stay readable.
 */
static const struct sandbox_path nomad_paths[] = {
	{ "/etc/ssl/certs", SANDBOX_FS_READ },
	{ "/etc/ssl/openssl.cnf", SANDBOX_FS_READ },
	{ "/etc/ca-certificates", SANDBOX_FS_READ },
	{ "/usr/share/ca-certificates", SANDBOX_FS_READ },
	{ "/etc/resolv.conf", SANDBOX_FS_READ },
	{ "/etc/hosts", SANDBOX_FS_READ },
	{ "/etc/host.conf", SANDBOX_FS_READ },
	{ "/etc/nsswitch.conf", SANDBOX_FS_READ },
	{ "/etc/gai.conf", SANDBOX_FS_READ },
	{ "/etc/services", SANDBOX_FS_READ },
	{ "/dev/urandom", SANDBOX_FS_READ },
};

static const struct sandbox_syscall nomad_syscalls[] = {
	/* network: TCP to Nomad and hosts, DNS, netlink for AI_ADDRCONFIG */
	SANDBOX_ALLOW_ARG(socket, 0, AF_INET),
	SANDBOX_ALLOW_ARG(socket, 0, AF_INET6),
	SANDBOX_ALLOW_ARG2(socket, 0, AF_NETLINK, 2, NETLINK_ROUTE),
	SANDBOX_ALLOW(connect),
	SANDBOX_ALLOW(bind),
	SANDBOX_ALLOW(sendmmsg),
	SANDBOX_ALLOW(recvmmsg),
	/* libcurl's wakeup and resolver-thread notification */
	SANDBOX_ALLOW_ARG(socketpair, 0, AF_UNIX),

	/* threads only: the resolver's (clone3 fails with ENOSYS) */
	SANDBOX_ALLOW_MASK(clone, 0, NOMAD_CLONE_MASK, NOMAD_CLONE_THREAD),
	SANDBOX_ALLOW(sched_getaffinity),

	/* reading the files above: Landlock decides which */
	SANDBOX_ALLOW(open),
	SANDBOX_ALLOW(openat),
	SANDBOX_ALLOW(stat),
	SANDBOX_ALLOW(lstat),
	SANDBOX_ALLOW(access),
	SANDBOX_ALLOW(faccessat),
	SANDBOX_ALLOW(faccessat2),
	SANDBOX_ALLOW(readlink),
	SANDBOX_ALLOW(readlinkat),
	SANDBOX_ALLOW(getdents64),
	SANDBOX_ALLOW(pread64),
};

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
