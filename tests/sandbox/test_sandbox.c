/*
 * The workers' sandboxes, tested by running real code paths with the real
 * profiles on (shared/sandbox.c + gitworker/git_sandbox.c,
 * nomadworker/nomad_sandbox.c, webworker/web_sandbox.c).  Every case runs
 * in a forked child that drops to the unprivileged user, applies the
 * worker's Landlock rules and seccomp filter, then either does what the
 * worker does (libgit2 fetch, libcurl HTTPS, evhttp over TLS, descriptor
 * passing) or makes a forbidden call; the parent judges the exit status
 * and reads /proc/<pid> from outside.  Runs as root.
 *
 *	test_sandbox [-v]		run the cases
 *	test_sandbox -g DIR		write the filter dumps DIR/<worker>.pfc
 *
 * The dumps tests/sandbox/<worker>.pfc are the reviewed filters: a change to
 * a profile shows up as a diff there (regenerate with -g and commit).
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <git2.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "sandbox.h"
#include "test.h"

#define GIT	0
#define NOMAD	1
#define WEB	2
#define NPROF	3
#define P_GIT	(1 << GIT)
#define P_NOMAD	(1 << NOMAD)
#define P_WEB	(1 << WEB)
#define P_ALL	(P_GIT | P_NOMAD | P_WEB)

#define STAGE_DROP	0	/* sandbox_drop() only */
#define STAGE_FS	1	/* + the worker's Landlock rules */
#define STAGE_ALL	2	/* + the worker's seccomp filter */

#define WAIT_MS		20000	/* the parent gives up on a child after */

extern char **environ;

static const char *prof_name[NPROF] = { "gitworker", "nomadworker",
    "webworker" };

static uid_t	 nops_uid;
static gid_t	 nops_gid;
static int	 ll_abi;		/* Landlock ABI of this kernel */
static char	 tmpdir[PATH_MAX];
static char	 cachedir[PATH_MAX + 16];	/* gitworker's, _nops-owned */
static char	 outsidedir[PATH_MAX + 16];	/* _nops-owned, not allowed */
static char	 emptydir[PATH_MAX + 16];	/* webworker's chroot */
static char	 baddir[PATH_MAX + 16];		/* a chroot others can write */
static ino_t	 empty_ino;

static EVP_PKEY	*tls_key;
static X509	*tls_cert;
static char	*tls_cert_pem;

/* One forked case: what the child does, what the parent does meanwhile. */
struct run {
	int	(*r_child)(struct run *);
	int	(*r_parent)(struct run *, pid_t);
	int	 r_prof;
	int	 r_stage;
	int	 r_tls;
	void	(*r_call)(struct run *);	/* a forbidden call */
	int	 r_ready[2];	/* child -> parent; EOF when the child died */
	int	 r_go[2];	/* parent -> child */
	int	 r_lfd;		/* a listening TCP socket, or -1 */
	int	 r_port;
	int	 r_sv[2];	/* a socketpair, or -1 */
};

/* ------------------------------------------------------------- helpers */

static void
run_init(struct run *r, int prof, int stage)
{
	memset(r, 0, sizeof(*r));
	r->r_prof = prof;
	r->r_stage = stage;
	r->r_lfd = r->r_sv[0] = r->r_sv[1] = -1;
}

/* Child side: report why it fails (stderr is unbuffered) and the code. */
static int
cfail(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	fprintf(stderr, "# child: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (errno %d: %s)\n", saved, strerror(saved));
	return 1;
}

static int	 child_abi = -1;

static void
enter(int prof, int stage)
{
	sandbox_drop(prof_name[prof], prof == WEB ? emptydir : NULL,
	    nops_uid, nops_gid);
	if (stage >= STAGE_FS) {
		switch (prof) {
		case GIT:
			child_abi = gitworker_sandbox_fs(cachedir);
			break;
		case NOMAD:
			child_abi = nomadworker_sandbox_fs();
			break;
		default:
			child_abi = webworker_sandbox_fs();
			break;
		}
	}
	if (stage >= STAGE_ALL) {
		switch (prof) {
		case GIT:
			gitworker_sandbox_syscalls();
			break;
		case NOMAD:
			nomadworker_sandbox_syscalls();
			break;
		default:
			webworker_sandbox_syscalls();
			break;
		}
	}
}

static void
child_ready(struct run *r)
{
	(void)write(r->r_ready[1], "r", 1);
}

static void
child_wait_go(struct run *r)
{
	char	 c;

	(void)read(r->r_go[0], &c, 1);
}

/* Parent side: wait for the child's signal; -1 if it died first. */
static int
parent_wait_ready(struct run *r)
{
	struct pollfd	 pfd = { r->r_ready[0], POLLIN, 0 };
	char		 c;

	if (poll(&pfd, 1, WAIT_MS) != 1 || read(r->r_ready[0], &c, 1) != 1) {
		printf("# parent: the child never got ready\n");
		return -1;
	}
	return 0;
}

/* Fork, run the case, wait; returns the wait status (-1: parent failed). */
static int
run_case(struct run *r)
{
	pid_t	 pid;
	int	 status, pfail = 0;

	if (pipe(r->r_ready) == -1 || pipe(r->r_go) == -1) {
		printf("# pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1) {
		printf("# fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(r->r_ready[0]);
		close(r->r_go[1]);
		alarm(WAIT_MS / 1000 * 2);	/* never hang make check */
		_exit(r->r_child(r));
	}
	close(r->r_ready[1]);
	close(r->r_go[0]);
	if (r->r_parent != NULL)
		pfail = r->r_parent(r, pid);
	close(r->r_go[1]);
	close(r->r_ready[0]);
	if (r->r_lfd != -1)
		close(r->r_lfd);
	if (r->r_sv[0] != -1)
		close(r->r_sv[0]);
	if (r->r_sv[1] != -1)
		close(r->r_sv[1]);
	if (pfail)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) == -1) {
		printf("# waitpid: %s\n", strerror(errno));
		return -1;
	}
	return pfail ? -1 : status;
}

static void
describe(int status)
{
	if (status == -1)
		printf("# the parent side failed\n");
	else if (WIFEXITED(status))
		printf("# the child exited with %d\n", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("# the child was killed by signal %d (%s)\n",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
}

static int
exited(int status, int code)
{
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == code)
		return 1;
	describe(status);
	return 0;
}

/* A forbidden call kills the process (a debug build only logs it). */
static int
killed_by_filter(int status)
{
#ifdef SANDBOX_DEBUG
	if (status != -1 && WIFEXITED(status))
		return 1;
#else
	if (status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		return 1;
#endif
	describe(status);
	return 0;
}

static int
tcp_listener(int *port)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 16) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

static int
tcp_connect(int port)
{
	struct sockaddr_in	 sin;
	struct timeval		 tv = { WAIT_MS / 1000, 0 };
	int			 fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* --------------------------------------------------------------- TLS */

/* A self-signed certificate for localhost, made in memory. */
static int
tls_setup(void)
{
	X509V3_CTX	 v3;
	X509_EXTENSION	*ext;
	X509_NAME	*name;
	BIO		*bio;
	char		*pem;
	long		 len;

	if ((tls_key = EVP_EC_gen("P-256")) == NULL ||
	    (tls_cert = X509_new()) == NULL)
		return -1;
	X509_set_version(tls_cert, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(tls_cert), 1);
	X509_gmtime_adj(X509_getm_notBefore(tls_cert), -3600);
	X509_gmtime_adj(X509_getm_notAfter(tls_cert), 3600);
	X509_set_pubkey(tls_cert, tls_key);
	name = X509_get_subject_name(tls_cert);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)"localhost", -1, -1, 0);
	X509_set_issuer_name(tls_cert, name);
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, tls_cert, tls_cert, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name,
	    "DNS:localhost,IP:127.0.0.1")) == NULL)
		return -1;
	X509_add_ext(tls_cert, ext, -1);
	X509_EXTENSION_free(ext);
	if ((ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints,
	    "critical,CA:TRUE")) == NULL)
		return -1;
	X509_add_ext(tls_cert, ext, -1);
	X509_EXTENSION_free(ext);
	if (X509_sign(tls_cert, tls_key, EVP_sha256()) == 0)
		return -1;

	if ((bio = BIO_new(BIO_s_mem())) == NULL ||
	    !PEM_write_bio_X509(bio, tls_cert))
		return -1;
	len = BIO_get_mem_data(bio, &pem);
	if (len <= 0 || (tls_cert_pem = strndup(pem, len)) == NULL)
		return -1;
	BIO_free(bio);
	return 0;
}

static SSL_CTX *
tls_server_ctx(void)
{
	SSL_CTX	*ctx;

	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL)
		return NULL;
	if (SSL_CTX_use_certificate(ctx, tls_cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, tls_key) != 1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/* ------------------------------------------------------- pfc dumps */

static int
write_dump(int prof, const char *path)
{
	int	 fd, rc;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		return -1;
	switch (prof) {
	case GIT:
		rc = gitworker_sandbox_export(fd);
		break;
	case NOMAD:
		rc = nomadworker_sandbox_export(fd);
		break;
	default:
		rc = webworker_sandbox_export(fd);
		break;
	}
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

static char *
read_file(const char *path, size_t *lenp)
{
	FILE	*fp;
	char	*buf = NULL;
	size_t	 len = 0, n;
	char	 chunk[4096];

	if ((fp = fopen(path, "r")) == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
		char	*nbuf;

		if ((nbuf = realloc(buf, len + n + 1)) == NULL) {
			free(buf);
			fclose(fp);
			return NULL;
		}
		buf = nbuf;
		memcpy(buf + len, chunk, n);
		len += n;
	}
	fclose(fp);
	if (buf == NULL && (buf = calloc(1, 1)) == NULL)
		return NULL;
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

static void
test_dump(int prof)
{
	char		 name[128], path[PATH_MAX + 64], golden[PATH_MAX];
	const char	*top;
	char		*dump, *want;
	size_t		 len, wlen;

	snprintf(name, sizeof(name), "%s: seccomp filter dump", prof_name[prof]);
	TEST_BEGIN(name);
	snprintf(path, sizeof(path), "%s/%s.pfc", tmpdir, prof_name[prof]);
	CHECK(write_dump(prof, path) == 0);
	dump = read_file(path, &len);
	CHECK(dump != NULL && len > 0);
	if (dump != NULL) {
#ifdef SANDBOX_DEBUG
		CHECK(strstr(dump, "# default action\n  action LOG;") != NULL);
#else
		CHECK(strstr(dump,
		    "# default action\n  action KILL_PROCESS;") != NULL);
#endif
		CHECK(strstr(dump, "# invalid architecture action\n"
		    "action KILL_PROCESS;") != NULL);
		CHECK(strstr(dump, "\"clone3\"") != NULL &&
		    strstr(dump, "action ERRNO(38);") != NULL);
		CHECK(strstr(dump, "\"execve\"") == NULL);
		CHECK(strstr(dump, "\"ptrace\"") == NULL);
		CHECK(strstr(dump, "\"io_uring_setup\"") == NULL);
		if (prof == WEB) {
			CHECK(strstr(dump, "\"connect\"") == NULL);
			CHECK(strstr(dump, "\"clone\"") == NULL);
		}
	}

	/* The committed dump: the filter a reviewer approved. */
	if ((top = getenv("top_srcdir")) == NULL)
		top = "..";
	snprintf(golden, sizeof(golden), "%s/tests/sandbox/%s.pfc", top,
	    prof_name[prof]);
	want = read_file(golden, &wlen);
#ifdef SANDBOX_DEBUG
	printf("# debug build: %s not compared\n", golden);
#else
	if (want == NULL)
		printf("# %s: %s (set top_srcdir, or write it with "
		    "test_sandbox -g DIR)\n", golden, strerror(errno));
	CHECK(want != NULL);
	if (want != NULL && dump != NULL && (wlen != len ||
	    memcmp(want, dump, len) != 0)) {
		printf("# %s differs from the filter built now (%s); if the "
		    "change is meant, review it and regenerate with -g\n",
		    golden, path);
		CHECK(0);
	}
#endif
	free(want);
	free(dump);
	TEST_END();
}

/* ------------------------------------------------------ drop, /proc */

static int
child_dropped(struct run *r)
{
	struct stat	 sb;
	gid_t		 groups[4];
	char		 cwd[PATH_MAX];

	enter(r->r_prof, STAGE_DROP);
	if (getuid() != nops_uid || geteuid() != nops_uid ||
	    getgid() != nops_gid || getegid() != nops_gid)
		return cfail("ids are not those of %s", NOPS_USER);
	if (getgroups(4, groups) != 1 || groups[0] != nops_gid)
		return cfail("supplementary groups left");
	if (setuid(0) != -1 || errno != EPERM)
		return cfail("setuid(0) did not fail with EPERM");
	if (setresuid(0, 0, 0) != -1 || setgid(0) != -1 || setegid(0) != -1)
		return cfail("regained root");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return cfail("no_new_privs is not set");
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
		return cfail("still dumpable");
	if (r->r_prof == WEB) {
		if (getcwd(cwd, sizeof(cwd)) == NULL || strcmp(cwd, "/") != 0)
			return cfail("cwd is not / in the chroot");
		if (stat("/", &sb) == -1 || sb.st_ino != empty_ino)
			return cfail("/ is not the empty directory");
		if (stat("/etc", &sb) != -1 || errno != ENOENT)
			return cfail("/etc is visible after chroot");
	}
	return 0;
}

static void
test_dropped(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: runs as %s and cannot regain root",
	    prof_name[prof], NOPS_USER);
	TEST_BEGIN(name);
	run_init(&r, prof, STAGE_DROP);
	r.r_child = child_dropped;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

static int
child_wait_inspect(struct run *r)
{
	enter(r->r_prof, STAGE_ALL);
	child_ready(r);
	child_wait_go(r);
	return 0;
}

/* Look for a whole line in /proc/<pid>/status. */
static int
status_has(const char *status, const char *line)
{
	const char	*p = status;
	size_t		 len = strlen(line);

	while ((p = strstr(p, line)) != NULL) {
		if ((p == status || p[-1] == '\n') && p[len] == '\n')
			return 1;
		p += len;
	}
	printf("# /proc status lacks \"%s\"\n", line);
	return 0;
}

static int
parent_inspect(struct run *r, pid_t pid)
{
	char		 path[64], line[128], root[PATH_MAX];
	const char	*want_root;
	char		*status;
	size_t		 len;
	ssize_t		 n;
	int		 bad = 0;

	if (parent_wait_ready(r) == -1)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((status = read_file(path, &len)) == NULL) {
		printf("# %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(line, sizeof(line), "Uid:\t%u\t%u\t%u\t%u", nops_uid,
	    nops_uid, nops_uid, nops_uid);
	bad |= !status_has(status, line);
	snprintf(line, sizeof(line), "Gid:\t%u\t%u\t%u\t%u", nops_gid,
	    nops_gid, nops_gid, nops_gid);
	bad |= !status_has(status, line);
	snprintf(line, sizeof(line), "Groups:\t%u ", nops_gid);
	bad |= !status_has(status, line);
	bad |= !status_has(status, "NoNewPrivs:\t1");
	bad |= !status_has(status, "Seccomp:\t2");
	bad |= !status_has(status, "Seccomp_filters:\t1");
	bad |= !status_has(status, "CapPrm:\t0000000000000000");
	bad |= !status_has(status, "CapEff:\t0000000000000000");
	bad |= !status_has(status, "CapAmb:\t0000000000000000");
	free(status);

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	if ((n = readlink(path, root, sizeof(root) - 1)) == -1) {
		printf("# readlink %s: %s\n", path, strerror(errno));
		bad = 1;
	} else {
		root[n] = '\0';
		want_root = r->r_prof == WEB ? emptydir : "/";
		if (strcmp(root, want_root) != 0) {
			printf("# root is %s, not %s\n", root, want_root);
			bad = 1;
		}
	}
	(void)write(r->r_go[1], "g", 1);
	return bad;
}

static void
test_proc(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: /proc shows uid, NoNewPrivs, "
	    "Seccomp and root", prof_name[prof]);
	TEST_BEGIN(name);
	run_init(&r, prof, STAGE_ALL);
	r.r_child = child_wait_inspect;
	r.r_parent = parent_inspect;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ------------------------------------------------- forbidden calls */

static void
call_execve(struct run *r)
{
	char	*argv[] = { "/bin/true", NULL };

	execve(argv[0], argv, environ);
}

static void
call_ptrace(struct run *r)
{
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
}

static void
call_fork(struct run *r)
{
	if (fork() == 0)
		_exit(0);
}

static void
call_mmap_exec(struct run *r)
{
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
}

static void
call_mprotect_exec(struct run *r)
{
	void	*p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		cfail("mmap without PROT_EXEC");
		_exit(3);
	}
	mprotect(p, 4096, PROT_READ | PROT_EXEC);
}

static void
call_setuid(struct run *r)
{
	setuid(0);
}

static void
call_kill(struct run *r)
{
	kill(getppid(), 0);
}

static void
call_unshare(struct run *r)
{
	unshare(CLONE_NEWUSER);
}

static void
call_io_uring(struct run *r)
{
	char	 params[120];

	memset(params, 0, sizeof(params));
	syscall(SYS_io_uring_setup, 1, params);
}

static void
call_memfd(struct run *r)
{
	syscall(SYS_memfd_create, "x", 0);
}

static void
call_socket_inet(struct run *r)
{
	socket(AF_INET, SOCK_STREAM, 0);
}

static void
call_socket_packet(struct run *r)
{
	socket(AF_PACKET, SOCK_RAW, 0);
}

static void
call_socket_audit(struct run *r)
{
	socket(AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */);
}

static void
call_connect(struct run *r)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	connect(0, (struct sockaddr *)&sin, sizeof(sin));
}

static void
call_listen(struct run *r)
{
	listen(0, 1);
}

static void
call_socketpair(struct run *r)
{
	int	 sv[2];

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
}

static const struct forbidden {
	const char	*f_name;
	unsigned int	 f_profs;
	void		(*f_call)(struct run *);
} forbidden[] = {
	{ "execve", P_ALL, call_execve },
	{ "ptrace", P_ALL, call_ptrace },
	{ "fork", P_ALL, call_fork },
	{ "mmap with PROT_EXEC", P_ALL, call_mmap_exec },
	{ "mprotect to PROT_EXEC", P_ALL, call_mprotect_exec },
	{ "setuid", P_ALL, call_setuid },
	{ "kill", P_ALL, call_kill },
	{ "unshare", P_ALL, call_unshare },
	{ "io_uring_setup", P_ALL, call_io_uring },
	{ "memfd_create", P_ALL, call_memfd },
	{ "socket(AF_INET)", P_WEB, call_socket_inet },
	{ "connect", P_WEB, call_connect },
	{ "listen", P_WEB, call_listen },
	{ "socketpair", P_WEB, call_socketpair },
	{ "socket(AF_PACKET)", P_GIT | P_NOMAD, call_socket_packet },
	{ "socket(AF_NETLINK, NETLINK_AUDIT)", P_GIT | P_NOMAD,
	    call_socket_audit },
};

static int
child_forbidden(struct run *r)
{
	enter(r->r_prof, STAGE_ALL);
	r->r_call(r);
	/* Still alive: the filter let it through. */
	return 0;
}

static void
test_forbidden(int prof)
{
	struct run	 r;
	char		 name[128];
	size_t		 i;

	for (i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
		if ((forbidden[i].f_profs & (1 << prof)) == 0)
			continue;
		snprintf(name, sizeof(name), "%s: %s is killed with SIGSYS",
		    prof_name[prof], forbidden[i].f_name);
		TEST_BEGIN(name);
		run_init(&r, prof, STAGE_ALL);
		r.r_child = child_forbidden;
		r.r_call = forbidden[i].f_call;
		CHECK(killed_by_filter(run_case(&r)));
		TEST_END();
	}
}

/* ------------------------------------------- threads, clone3, abi */

static void *
thread_lookup(void *arg)
{
	struct addrinfo	 hints, *res;
	int		*ok = arg;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	if (getaddrinfo("localhost", "4646", &hints, &res) == 0) {
		*ok = res->ai_family == AF_INET &&
		    ((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr ==
		    htonl(INADDR_LOOPBACK);
		freeaddrinfo(res);
	}
	return NULL;
}

static int
child_threads(struct run *r)
{
	pthread_t	 t;
	int		 ok = 0;

	enter(r->r_prof, STAGE_ALL);
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return cfail("clone3 did not fail with ENOSYS");
	if (r->r_prof == WEB)
		return 0;	/* no threads there: clone kills */
	/* The resolver thread of libcurl: a thread, and the DNS files. */
	if ((errno = pthread_create(&t, NULL, thread_lookup, &ok)) != 0)
		return cfail("pthread_create");
	if ((errno = pthread_join(t, NULL)) != 0)
		return cfail("pthread_join");
	if (!ok)
		return cfail("getaddrinfo(localhost) in a thread");
	return 0;
}

static void
test_threads(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: clone3 fails with ENOSYS%s",
	    prof_name[prof], prof == WEB ? "" :
	    ", a thread starts and resolves localhost");
	TEST_BEGIN(name);
	run_init(&r, prof, STAGE_ALL);
	r.r_child = child_threads;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ------------------------------------------------------- Landlock */

/* open() must fail with EACCES where only Landlock stands in the way. */
static int
refused(const char *path, int flags)
{
	int	 fd;

	if ((fd = open(path, flags, 0644)) != -1) {
		close(fd);
		cfail("%s: opened, not refused", path);
		return 0;
	}
	if (errno != EACCES) {
		cfail("%s: refused, but not with EACCES", path);
		return 0;
	}
	return 1;
}

static int
readable(const char *path)
{
	char	 buf[64];
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		cfail("%s: cannot open", path);
		return 0;
	}
	if (read(fd, buf, sizeof(buf)) < 0) {
		cfail("%s: cannot read", path);
		close(fd);
		return 0;
	}
	close(fd);
	return 1;
}

static int
child_landlock(struct run *r)
{
	char	 p1[PATH_MAX + 64], p2[PATH_MAX + 64], sub[PATH_MAX + 64];
	int	 fd, ok = 1, want;

	enter(r->r_prof, STAGE_ALL);
	/* ABI 1 cannot allow renames: gitworker then goes without. */
	want = (r->r_prof == GIT && ll_abi == 1) ? 0 : ll_abi;
	if (child_abi != want)
		return cfail("Landlock ABI %d used, %d expected", child_abi,
		    want);

	ok &= readable("/etc/resolv.conf");
	ok &= readable("/etc/hosts");
	ok &= readable("/etc/ssl/certs/ca-certificates.crt");
	if (r->r_prof == GIT) {
		/* create, write, move across directories, remove */
		snprintf(p1, sizeof(p1), "%s/probe", cachedir);
		snprintf(sub, sizeof(sub), "%s/sub", cachedir);
		snprintf(p2, sizeof(p2), "%s/sub/probe", cachedir);
		if ((fd = open(p1, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1 ||
		    write(fd, "x", 1) != 1 || close(fd) == -1)
			ok = !cfail("write %s", p1);
		else if (mkdir(sub, 0700) == -1 || rename(p1, p2) == -1 ||
		    truncate(p2, 0) == -1 || unlink(p2) == -1 ||
		    rmdir(sub) == -1)
			ok = !cfail("mkdir/rename/truncate/unlink in %s",
			    cachedir);
	}
	if (child_abi == 0) {
		fprintf(stderr, "# no Landlock: nothing refused\n");
		return ok ? 0 : 1;
	}
	/* Readable or writable for the user, refused by Landlock alone. */
	ok &= refused("/etc/passwd", O_RDONLY);
	ok &= refused("/etc/shadow", O_RDONLY);
	ok &= refused("/", O_RDONLY | O_DIRECTORY);
	snprintf(p1, sizeof(p1), "%s/x", outsidedir);
	ok &= refused(p1, O_WRONLY | O_CREAT);
	if (r->r_prof == NOMAD) {
		snprintf(p1, sizeof(p1), "%s/x", cachedir);
		ok &= refused(p1, O_WRONLY | O_CREAT);
	}
	return ok ? 0 : 1;
}

static void
test_landlock(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: Landlock allows %s, refuses the "
	    "rest", prof_name[prof], prof == GIT ?
	    "the cache and the CA/DNS files" : "the CA/DNS files");
	TEST_BEGIN(name);
	run_init(&r, prof, STAGE_ALL);
	r.r_child = child_landlock;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* Landlock's own TCP rule, seen before the filter would kill socket(). */
static int
child_web_nonet(struct run *r)
{
	struct sockaddr_in	 sin;
	int			 fd;

	enter(WEB, STAGE_FS);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return cfail("socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(r->r_port);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != -1 ||
	    errno != EACCES)
		return cfail("connect to 127.0.0.1:%d was not refused",
		    r->r_port);
	return 0;
}

static void
test_web_nonet(void)
{
	struct run	 r;

	TEST_BEGIN("webworker: Landlock refuses outbound TCP");
	if (ll_abi < 4) {
		printf("ok - webworker: Landlock refuses outbound TCP "
		    "# SKIP Landlock ABI %d < 4\n", ll_abi);
		return;
	}
	run_init(&r, WEB, STAGE_FS);
	r.r_child = child_web_nonet;
	r.r_lfd = tcp_listener(&r.r_port);
	CHECK(r.r_lfd != -1);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ---------------------------------------------------- webworker */

static int
child_web_open(struct run *r)
{
	struct stat	 sb;

	enter(WEB, STAGE_ALL);
	/* O_PATH passes Landlock: only the filter refuses this one. */
	if (open("/", O_PATH) != -1 || errno != EACCES)
		return cfail("open / O_PATH was not refused with EACCES");
	if (openat(AT_FDCWD, "/", O_RDONLY) != -1 || errno != EACCES)
		return cfail("openat / was not refused with EACCES");
	if (stat("/", &sb) == -1 || sb.st_ino != empty_ino)
		return cfail("/ is not the empty directory");
	if (stat("/etc", &sb) != -1 || errno != ENOENT)
		return cfail("/etc exists in the chroot");
	return 0;
}

static int	 web_served;

static void
web_done(struct evhttp_request *req, void *arg)
{
	web_served = 1;
	event_base_loopexit(arg, NULL);
}

static void
web_reply(struct evhttp_request *req, void *arg)
{
	struct evbuffer	*body;

	if ((body = evbuffer_new()) == NULL)
		return;
	evbuffer_add_printf(body, "pong");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; charset=utf-8");
	evhttp_request_set_on_complete_cb(req, web_done, arg);
	evhttp_send_reply(req, HTTP_OK, "OK", body);
	evbuffer_free(body);
}

static struct bufferevent *
web_bevcb(struct event_base *base, void *arg)
{
	SSL	*ssl;

	if ((ssl = SSL_new(arg)) == NULL)
		return NULL;
	return bufferevent_openssl_socket_new(base, -1, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
}

/* What the webworker does: evhttp on a listener it was handed. */
static int
child_web_http(struct run *r)
{
	struct event_base	*base;
	struct evhttp		*http;
	SSL_CTX			*ctx;

	if ((base = event_base_new()) == NULL ||
	    (http = evhttp_new(base)) == NULL)
		return cfail("libevent setup");
	if (r->r_tls) {
		if ((ctx = tls_server_ctx()) == NULL)
			return cfail("SSL_CTX");
		evhttp_set_bevcb(http, web_bevcb, ctx);
	}
	evhttp_set_gencb(http, web_reply, base);
	evhttp_set_timeout(http, WAIT_MS / 1000);
	if (evhttp_accept_socket_with_handle(http, r->r_lfd) == NULL)
		return cfail("evhttp_accept_socket_with_handle");
	enter(WEB, STAGE_ALL);
	child_ready(r);
	if (event_base_dispatch(base) == -1)
		return cfail("event_base_dispatch");
	if (!web_served)
		return cfail("no request served");
	return 0;
}

static int
parent_web_client(struct run *r, pid_t pid)
{
	static const char req[] = "GET /ping HTTP/1.0\r\nHost: localhost\r\n\r\n";
	char		 buf[2048];
	SSL_CTX		*ctx = NULL;
	SSL		*ssl = NULL;
	size_t		 len = 0;
	int		 fd, n, bad = 0;

	if (parent_wait_ready(r) == -1)
		return 1;
	if ((fd = tcp_connect(r->r_port)) == -1) {
		printf("# connect: %s\n", strerror(errno));
		return 1;
	}
	if (r->r_tls) {
		/* Verify the server as a client would. */
		if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
		    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx),
		    tls_cert) != 1 || (ssl = SSL_new(ctx)) == NULL ||
		    SSL_set1_host(ssl, "localhost") != 1 ||
		    SSL_set_fd(ssl, fd) != 1) {
			printf("# client TLS setup failed\n");
			bad = 1;
			goto done;
		}
		SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL);
		if (SSL_connect(ssl) != 1) {
			printf("# SSL_connect failed: %s\n",
			    ERR_error_string(ERR_get_error(), NULL));
			bad = 1;
			goto done;
		}
		n = SSL_write(ssl, req, sizeof(req) - 1);
	} else
		n = write(fd, req, sizeof(req) - 1);
	if (n != (int)sizeof(req) - 1) {
		printf("# cannot send the request\n");
		bad = 1;
		goto done;
	}
	for (;;) {
		n = r->r_tls ? SSL_read(ssl, buf + len, sizeof(buf) - 1 - len) :
		    read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += n;
		if (len == sizeof(buf) - 1)
			break;
	}
	buf[len] = '\0';
	if (strncmp(buf, "HTTP/1.", 7) != 0 || strstr(buf, " 200 ") == NULL ||
	    len < 4 || strcmp(buf + len - 4, "pong") != 0) {
		printf("# unexpected answer: %.80s\n", buf);
		bad = 1;
	}
 done:
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
	return bad;
}

static void
test_web_http(int tls)
{
	struct run	 r;

	TEST_BEGIN(tls ? "webworker: serves HTTPS with evhttp and OpenSSL" :
	    "webworker: serves HTTP with evhttp");
	run_init(&r, WEB, STAGE_ALL);
	r.r_child = child_web_http;
	r.r_parent = parent_web_client;
	r.r_tls = tls;
	r.r_lfd = tcp_listener(&r.r_port);
	CHECK(r.r_lfd != -1);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* The master's channel: peer credentials and a descriptor passed in. */
static int
child_web_passfd(struct run *r)
{
	struct ucred	 cred;
	struct msghdr	 msg;
	struct cmsghdr	*cmsg;
	struct iovec	 iov;
	socklen_t	 len = sizeof(cred);
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;
	char		 c;
	int		 fd;

	enter(WEB, STAGE_ALL);
	if (getsockopt(r->r_sv[1], SOL_SOCKET, SO_PEERCRED, &cred,
	    &len) == -1)
		return cfail("SO_PEERCRED");
	if (cred.uid != 0 || cred.pid != getppid())
		return cfail("peer is uid %u pid %d", (unsigned int)cred.uid,
		    (int)cred.pid);
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	if (recvmsg(r->r_sv[1], &msg, MSG_CMSG_CLOEXEC) != 1)
		return cfail("recvmsg");
	if ((cmsg = CMSG_FIRSTHDR(&msg)) == NULL ||
	    cmsg->cmsg_type != SCM_RIGHTS)
		return cfail("no descriptor arrived");
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(fd));
	if (write(fd, "ok", 2) != 2)
		return cfail("write to the passed descriptor");
	close(fd);
	return 0;
}

static int
parent_web_passfd(struct run *r, pid_t pid)
{
	struct msghdr	 msg;
	struct cmsghdr	*cmsg;
	struct iovec	 iov;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;
	struct pollfd	 pfd;
	char		 buf[8];
	int		 p[2];

	if (pipe(p) == -1)
		return 1;
	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = "f";
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &p[1], sizeof(int));
	if (sendmsg(r->r_sv[0], &msg, 0) != 1) {
		printf("# sendmsg: %s\n", strerror(errno));
		return 1;
	}
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, WAIT_MS) != 1 || read(p[0], buf, 2) != 2 ||
	    memcmp(buf, "ok", 2) != 0) {
		printf("# nothing came back through the passed pipe\n");
		close(p[0]);
		return 1;
	}
	close(p[0]);
	return 0;
}

static void
test_web_passfd(void)
{
	struct run	 r;

	TEST_BEGIN("webworker: peer credentials and a descriptor over its "
	    "socketpair");
	run_init(&r, WEB, STAGE_ALL);
	r.r_child = child_web_passfd;
	r.r_parent = parent_web_passfd;
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r.r_sv) == 0);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

static void
test_web_open(void)
{
	struct run	 r;

	TEST_BEGIN("webworker: chrooted in the empty directory, open refused");
	run_init(&r, WEB, STAGE_ALL);
	r.r_child = child_web_open;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* --------------------------------------------------- nomadworker */

static size_t
curl_collect(char *data, size_t size, size_t nmemb, void *arg)
{
	char	*buf = arg;
	size_t	 have = strlen(buf), n = size * nmemb;

	if (have + n >= 256)
		return 0;
	memcpy(buf + have, data, n);
	buf[have + n] = '\0';
	return n;
}

/* What the nomadworker does: an HTTPS request with libcurl. */
static int
child_nomad_https(struct run *r)
{
	struct curl_blob	 ca;
	CURL			*c;
	CURLcode		 rc;
	char			 url[64], body[256] = "";
	long			 code = 0;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return cfail("curl_global_init");
	enter(NOMAD, STAGE_ALL);
	if ((c = curl_easy_init()) == NULL)
		return cfail("curl_easy_init");
	snprintf(url, sizeof(url), "https://localhost:%d/v1/jobs", r->r_port);
	ca.data = tls_cert_pem;
	ca.len = strlen(tls_cert_pem);
	ca.flags = CURL_BLOB_COPY;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)(WAIT_MS / 1000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	if ((rc = curl_easy_perform(c)) != CURLE_OK) {
		errno = 0;
		return cfail("curl: %s", curl_easy_strerror(rc));
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	if (code != 200 || strcmp(body, "[]") != 0)
		return cfail("answer %ld \"%s\"", code, body);
	return 0;
}

/* A one-request HTTPS server standing in for Nomad. */
static int
parent_nomad_server(struct run *r, pid_t pid)
{
	static const char ans[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\nContent-Length: 2\r\n"
	    "Connection: close\r\n\r\n[]";
	struct pollfd	 pfd[2];
	struct timeval	 tv = { WAIT_MS / 1000, 0 };
	SSL_CTX		*ctx = NULL;
	SSL		*ssl = NULL;
	char		 buf[2048] = "";
	size_t		 len = 0;
	int		 fd = -1, n, bad = 1;

	pfd[0].fd = r->r_lfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = r->r_ready[0];	/* EOF: the child died */
	pfd[1].events = POLLIN;
	if (poll(pfd, 2, WAIT_MS) <= 0 || !(pfd[0].revents & POLLIN)) {
		printf("# no connection from the child\n");
		return 1;
	}
	if ((fd = accept(r->r_lfd, NULL, NULL)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1)
		return 1;
	if ((ctx = tls_server_ctx()) == NULL || (ssl = SSL_new(ctx)) == NULL ||
	    SSL_set_fd(ssl, fd) != 1 || SSL_accept(ssl) != 1) {
		printf("# server TLS handshake failed: %s\n",
		    ERR_error_string(ERR_get_error(), NULL));
		goto done;
	}
	while (strstr(buf, "\r\n\r\n") == NULL && len < sizeof(buf) - 1) {
		if ((n = SSL_read(ssl, buf + len, sizeof(buf) - 1 - len)) <= 0)
			goto done;
		len += n;
		buf[len] = '\0';
	}
	if (strncmp(buf, "GET /v1/jobs HTTP/1.1\r\n", 23) != 0) {
		printf("# unexpected request: %.60s\n", buf);
		goto done;
	}
	if (SSL_write(ssl, ans, sizeof(ans) - 1) == (int)sizeof(ans) - 1)
		bad = 0;
	SSL_shutdown(ssl);
 done:
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
	return bad;
}

static void
test_nomad_https(void)
{
	struct run	 r;

	TEST_BEGIN("nomadworker: HTTPS request with libcurl, CA verified");
	run_init(&r, NOMAD, STAGE_ALL);
	r.r_child = child_nomad_https;
	r.r_parent = parent_nomad_server;
	r.r_lfd = tcp_listener(&r.r_port);
	CHECK(r.r_lfd != -1);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ----------------------------------------------------- gitworker */

static int
git_fail(const char *what)
{
	const git_error	*e = git_error_last();

	errno = 0;
	return cfail("%s: %s", what, e != NULL ? e->message : "?");
}

/*
 * What the gitworker does, in its cache: a commit in one bare repository,
 * then the head check (detached remote + ls) and a fetch into another.
 */
static int
child_git(struct run *r)
{
	git_repository		*src, *dst;
	git_signature		*sig;
	git_treebuilder		*tb;
	git_tree		*tree;
	git_remote		*remote;
	const git_remote_head	**heads;
	git_oid			 blob, treeid, commit, got;
	git_fetch_options	 fo;
	char			 path[PATH_MAX + 64], url[PATH_MAX + 128];
	char			*refspec = "+refs/heads/main:refs/remotes/origin/main";
	git_strarray		 refspecs = { &refspec, 1 };
	size_t			 nheads, i;
	int			 found = 0;

	if (git_libgit2_init() < 0 ||
	    git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION) < 0)
		return cfail("git_libgit2_init");
	enter(GIT, STAGE_ALL);

	snprintf(path, sizeof(path), "%s/src.git", cachedir);
	if (git_repository_init(&src, path, 1) < 0)
		return git_fail("init src");
	if (git_signature_new(&sig, "nops", "nops@localhost", 1700000000,
	    0) < 0 ||
	    git_blob_create_from_buffer(&blob, src, "job \"x\" {}\n", 12) < 0 ||
	    git_treebuilder_new(&tb, src, NULL) < 0 ||
	    git_treebuilder_insert(NULL, tb, "x.nomad.hcl", &blob,
	    GIT_FILEMODE_BLOB) < 0 ||
	    git_treebuilder_write(&treeid, tb) < 0 ||
	    git_tree_lookup(&tree, src, &treeid) < 0 ||
	    git_commit_create(&commit, src, "refs/heads/main", sig, sig, NULL,
	    "a job\n", tree, 0, NULL) < 0)
		return git_fail("commit");

	snprintf(url, sizeof(url), "file://%s", path);
	if (git_remote_create_detached(&remote, url) < 0 ||
	    git_remote_connect(remote, GIT_DIRECTION_FETCH, NULL, NULL,
	    NULL) < 0 || git_remote_ls(&heads, &nheads, remote) < 0)
		return git_fail("ls-remote");
	for (i = 0; i < nheads; i++)
		if (strcmp(heads[i]->name, "refs/heads/main") == 0 &&
		    git_oid_equal(&heads[i]->oid, &commit))
			found = 1;
	git_remote_free(remote);
	if (!found)
		return cfail("ls-remote does not show the commit");

	snprintf(path, sizeof(path), "%s/dst.git", cachedir);
	if (git_repository_init(&dst, path, 1) < 0)
		return git_fail("init dst");
	if (git_remote_create_anonymous(&remote, dst, url) < 0 ||
	    git_remote_fetch(remote, &refspecs, &fo, NULL) < 0)
		return git_fail("fetch");
	if (git_reference_name_to_id(&got, dst,
	    "refs/remotes/origin/main") < 0)
		return git_fail("fetched ref");
	if (!git_oid_equal(&got, &commit))
		return cfail("fetched the wrong commit");
	git_remote_free(remote);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	git_signature_free(sig);
	git_repository_free(dst);
	git_repository_free(src);
	return 0;
}

static void
test_git(void)
{
	struct run	 r;

	TEST_BEGIN("gitworker: libgit2 commits, lists and fetches in its "
	    "cache");
	run_init(&r, GIT, STAGE_ALL);
	r.r_child = child_git;
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* Outbound TCP, as to a git:// or https:// remote. */
static int
child_connect(struct run *r)
{
	int	 fd;

	enter(r->r_prof, STAGE_ALL);
	if ((fd = tcp_connect(r->r_port)) == -1)
		return cfail("connect to 127.0.0.1:%d", r->r_port);
	if (write(fd, "hi", 2) != 2)
		return cfail("write");
	close(fd);
	return 0;
}

static int
parent_accept(struct run *r, pid_t pid)
{
	struct pollfd	 pfd[2];
	char		 buf[2];
	int		 fd, bad = 1;

	pfd[0].fd = r->r_lfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = r->r_ready[0];
	pfd[1].events = POLLIN;
	if (poll(pfd, 2, WAIT_MS) <= 0 || !(pfd[0].revents & POLLIN) ||
	    (fd = accept(r->r_lfd, NULL, NULL)) == -1) {
		printf("# no connection from the child\n");
		return 1;
	}
	pfd[0].fd = fd;
	if (poll(pfd, 1, WAIT_MS) == 1 && read(fd, buf, 2) == 2 &&
	    memcmp(buf, "hi", 2) == 0)
		bad = 0;
	close(fd);
	return bad;
}

static void
test_connect(int prof)
{
	struct run	 r;
	char		 name[128];

	snprintf(name, sizeof(name), "%s: connects to a loopback listener",
	    prof_name[prof]);
	TEST_BEGIN(name);
	run_init(&r, prof, STAGE_ALL);
	r.r_child = child_connect;
	r.r_parent = parent_accept;
	r.r_lfd = tcp_listener(&r.r_port);
	CHECK(r.r_lfd != -1);
	CHECK(exited(run_case(&r), 0));
	TEST_END();
}

/* ------------------------------------------------ refusals of drop */

static int
child_drop_root(struct run *r)
{
	sandbox_drop("test", NULL, 0, 0);
	return 0;
}

static int
child_drop_baddir(struct run *r)
{
	sandbox_drop("test", baddir, nops_uid, nops_gid);
	return 0;
}

static void *
thread_sleep(void *arg)
{
	pause();
	return NULL;
}

static int
child_drop_threaded(struct run *r)
{
	pthread_t	 t;

	if (pthread_create(&t, NULL, thread_sleep, NULL) != 0)
		return 2;
	sandbox_drop("test", NULL, nops_uid, nops_gid);
	return 0;
}

static int
child_landlock_nonnp(struct run *r)
{
	sandbox_landlock("test", NULL, 0);
	return 0;
}

static void
test_refusals(void)
{
	static const struct {
		const char	*name;
		int		(*child)(struct run *);
	} cases[] = {
		{ "sandbox_drop refuses uid 0", child_drop_root },
		{ "sandbox_drop refuses a chroot others can write",
		    child_drop_baddir },
		{ "sandbox_drop refuses a process that runs threads",
		    child_drop_threaded },
		{ "sandbox_landlock refuses to run without no_new_privs",
		    child_landlock_nonnp },
	};
	struct run	 r;
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].child == child_landlock_nonnp && ll_abi == 0) {
			printf("ok - %s # SKIP no Landlock\n", cases[i].name);
			continue;
		}
		TEST_BEGIN(cases[i].name);
		run_init(&r, GIT, STAGE_DROP);
		r.r_child = cases[i].child;
		/* fatal() exits 1 */
		CHECK(exited(run_case(&r), 1));
		TEST_END();
	}
}

/* ------------------------------------------------------------- main */

static int
setup_dirs(void)
{
	struct stat	 sb;
	char		 tmpl[] = "/tmp/nops-sandbox.XXXXXX";

	if (mkdtemp(tmpl) == NULL || chmod(tmpl, 0755) == -1)
		return -1;
	strlcpy(tmpdir, tmpl, sizeof(tmpdir));
	snprintf(cachedir, sizeof(cachedir), "%s/cache", tmpdir);
	snprintf(outsidedir, sizeof(outsidedir), "%s/outside", tmpdir);
	snprintf(emptydir, sizeof(emptydir), "%s/empty", tmpdir);
	snprintf(baddir, sizeof(baddir), "%s/bad", tmpdir);
	if (mkdir(cachedir, 0700) == -1 ||
	    chown(cachedir, nops_uid, nops_gid) == -1 ||
	    mkdir(outsidedir, 0755) == -1 ||
	    chown(outsidedir, nops_uid, nops_gid) == -1 ||
	    mkdir(emptydir, 0755) == -1 || stat(emptydir, &sb) == -1 ||
	    mkdir(baddir, 0777) == -1 || chmod(baddir, 0777) == -1)
		return -1;
	empty_ino = sb.st_ino;
	return 0;
}

static void
cleanup_dirs(void)
{
	char	 cmd[PATH_MAX + 16];

	/* Only our own mkdtemp() directory. */
	if (strncmp(tmpdir, "/tmp/nops-sandbox.", 18) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
}

static int
generate(const char *dir)
{
	char	 path[PATH_MAX];
	int	 prof;

	for (prof = 0; prof < NPROF; prof++) {
		snprintf(path, sizeof(path), "%s/%s.pfc", dir, prof_name[prof]);
		if (write_dump(prof, path) == -1) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			return 1;
		}
		printf("wrote %s\n", path);
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct passwd	*pw;
	int		 ch, prof, verbose = 0;

	log_init(1, LOG_DAEMON);
	while ((ch = getopt(argc, argv, "g:v")) != -1) {
		switch (ch) {
		case 'g':
			return generate(optarg);
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: test_sandbox [-v] [-g dir]\n");
			return 2;
		}
	}
	log_setverbose(verbose);

	TEST_BEGIN("sandbox tests run as root");
	CHECK(geteuid() == 0);
	TEST_END();
	TEST_BEGIN("user " NOPS_USER " exists (scripts/deps creates it)");
	pw = getpwnam(NOPS_USER);
	CHECK(pw != NULL && pw->pw_uid != 0 && pw->pw_gid != 0);
	TEST_END();
	if (geteuid() != 0 || pw == NULL || pw->pw_uid == 0 || pw->pw_gid == 0)
		TEST_EXIT();
	nops_uid = pw->pw_uid;
	nops_gid = pw->pw_gid;

	TEST_BEGIN("setup: directories and a TLS certificate");
	CHECK(setup_dirs() == 0);
	CHECK(tls_setup() == 0);
	TEST_END();
	if (test_failed_cases) {
		cleanup_dirs();
		TEST_EXIT();
	}

	TEST_BEGIN("landlock: ABI probe");
	ll_abi = sandbox_landlock_abi();
	printf("# Landlock ABI %d%s\n", ll_abi,
	    ll_abi == 0 ? " (none: path refusals are not tested)" : "");
	CHECK(ll_abi >= 0);
	TEST_END();
	if (ll_abi < 0)
		ll_abi = 0;

	for (prof = 0; prof < NPROF; prof++) {
		test_dump(prof);
		test_dropped(prof);
		test_proc(prof);
		test_threads(prof);
		test_forbidden(prof);
	}
	test_landlock(GIT);
	test_git();
	test_connect(GIT);
	test_landlock(NOMAD);
	test_nomad_https();
	test_connect(NOMAD);
	test_web_open();
	test_web_nonet();
	test_web_http(0);
	test_web_http(1);
	test_web_passfd();
	test_refusals();

	cleanup_dirs();
	TEST_EXIT();
}
