/*
 * The harness of the sandbox tests: one case is a forked child that
 * enters a worker's sandbox and does something, while the parent plays
 * the peer (a client, a server, the master) and then judges how the child
 * ended.
 */
#ifndef NOPS_SANDBOX_HARNESS_H
#define NOPS_SANDBOX_HARNESS_H

#include <sys/types.h>
#include <limits.h>

#include <openssl/ssl.h>

#define GIT	0
#define NOMAD	1
#define WEB	2
#define NPROF	3

#define STAGE_DROP	0	/* sandbox_drop() only */
#define STAGE_FS	1	/* + the worker's Landlock rules */
#define STAGE_ALL	2	/* + the worker's seccomp filter */

#define WAIT_MS		20000	/* the parent gives up on a child after */

/* One forked case: what the child does, what the parent does meanwhile. */
struct run {
	int	(*r_child)(struct run *);
	int	(*r_parent)(struct run *, pid_t);
	int	 r_prof;
	int	 r_tls;
	void	(*r_call)(struct run *);	/* a forbidden call */
	int	 r_ready[2];	/* child -> parent; EOF when the child died */
	int	 r_go[2];	/* parent -> child */
	int	 r_lfd;		/* a listening TCP socket, or -1 */
	int	 r_port;
	int	 r_sv[2];	/* a socketpair, or -1 */
};

extern const char *prof_name[NPROF];
extern uid_t	 nops_uid;
extern gid_t	 nops_gid;
extern int	 ll_abi;		/* Landlock ABI of this kernel */
extern int	 child_abi;		/* what the child's profile used */
extern char	 tmpdir[PATH_MAX];
extern char	 cachedir[PATH_MAX + 16];	/* gitworker's, _nops-owned */
extern char	 outsidedir[PATH_MAX + 16];	/* _nops-owned, not allowed */
extern char	 emptydir[PATH_MAX + 16];	/* webworker's chroot */
extern char	 baddir[PATH_MAX + 16];		/* a chroot others can write */
extern ino_t	 empty_ino;
extern EVP_PKEY	*tls_key;
extern X509	*tls_cert;
extern char	*tls_cert_pem;

/* harness.c */
void	 run_init(struct run *, int);
int	 run_case(struct run *);
int	 cfail(const char *, ...) __attribute__((__format__(printf, 1, 2)));
void	 enter(int, int);
void	 child_ready(struct run *);
void	 child_wait_go(struct run *);
int	 parent_wait_ready(struct run *);
void	 describe(int);
int	 exited(int, int);
int	 killed_by_filter(int);
int	 tcp_listener(int *);
int	 tcp_connect(int);
char	*read_file(const char *, size_t *);
int	 setup_dirs(void);
void	 cleanup_dirs(void);
int	 tls_setup(void);
SSL_CTX	*tls_server_ctx(void);

/* workload.c: what the workers really do, child and peer */
int	 child_git(struct run *);
int	 child_connect(struct run *);
int	 parent_accept(struct run *, pid_t);
int	 child_nomad_https(struct run *);
int	 parent_nomad_server(struct run *, pid_t);
int	 child_web_http(struct run *);
int	 parent_web_client(struct run *, pid_t);
int	 child_web_passfd(struct run *);
int	 parent_web_passfd(struct run *, pid_t);

#endif /* NOPS_SANDBOX_HARNESS_H */
