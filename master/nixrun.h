/*
 * Short-lived, sandboxed children that run Nix (nix-instantiate,
 * nix-build, nix-store) for the master.  Nix evaluates code from git:
 * it never runs in the master.  The master forks a child that limits its
 * memory, CPU time, file size and core dumps, drops to the workers' user
 * (no capability, NO_NEW_PRIVS), loses the network (any socket but a
 * Unix one fails), writes the plan's files into a private directory
 * below NIXRUN_DIR and executes the Nix command with a clean
 * environment; the master reads its output (bounded), kills it at its
 * deadline, reaps it, and has the directory removed as the workers'
 * user.  No worker gains execve.
 */
#ifndef NOPS_NIXRUN_H
#define NOPS_NIXRUN_H

#include <sys/types.h>
#include <stddef.h>

#define NIXRUN_OUT_MAX		(8 * 1024 * 1024)	/* stdout kept */
#define NIXRUN_ERR_MAX		(64 * 1024)	/* the last of stderr */
#define NIXRUN_ARGS_MAX		64	/* of an evaluation's argv */
#define NIXRUN_PATHS_MAX	20000	/* store paths one export takes */
#define NIXRUN_FILES_MAX	100000
/* Below the state directory: the workers' user's, mode 0700. */
#define NIXRUN_DIR		"nix"

struct nixrun_file {
	const char	*nf_path;	/* relative; checked by repo.c */
	const void	*nf_data;
	size_t		 nf_size;
};

struct nixrun_spec {
	const char	*ns_what;	/* for logs: "evaluate plan of infra" */
	const char *const *ns_argv;	/* [0] the program; NULL ends it */
	const struct nixrun_file *ns_files;	/* written to the workdir */
	size_t		 ns_nfiles;
	const char	*ns_store;	/* NIX_REMOTE, NULL: private,
					   read-only */
	int		 ns_timeout;	/* seconds */
	unsigned long long ns_memory;	/* bytes of address space */
	int		 ns_stdout_fd;	/* -1: captured; else given as stdout */
};

/*
 * Done: status is the child's exit code (0 success), or -1 when it was
 * killed (timeout, a signal) or could not start, with err saying why.
 * out is NUL-terminated; both are freed after the callback returns.
 */
typedef void	(*nixrun_cb)(int status, const char *out, size_t outlen,
		    const char *err, void *arg);

/* Start; -1 (with errbuf) if it could not.  Returns an id. */
int		 nixrun_start(const struct nixrun_spec *, nixrun_cb, void *arg,
		    char *errbuf, size_t errlen);
/* Forget a run: its callback will not be called; the child is killed. */
void		 nixrun_cancel(int id);
/* Called by supervise_sigchld() for a pid that is not a worker. */
int		 nixrun_reap(pid_t, int status);
/* nixrun_sandbox.c: Landlock and a syscall list, in the child. */
void		 nixrun_confine(const char *dir, const char *program);
/* The program's path: NIXRUN_BINDIR "/" name. */
const char	*nixrun_bin(const char *name);
/* Test builds can point at another Nix (environment NOPS_NIX_BINDIR). */
#define NIXRUN_BINDIR		"/usr/bin"

#endif /* NOPS_NIXRUN_H */
