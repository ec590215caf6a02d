/*
 * The harness of the sandbox tests (see harness.h): fork and wait, enter
 * a worker's sandbox, loopback sockets, the scratch directories, a TLS
 * certificate.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "sandbox.h"
#include "harness.h"

const char	*prof_name[NPROF] = { "gitworker", "nomadworker", "webworker" };
uid_t		 nops_uid;
gid_t		 nops_gid;
int		 ll_abi;
char		 tmpdir[PATH_MAX];
char		 cachedir[PATH_MAX + 16];
char		 outsidedir[PATH_MAX + 16];
char		 emptydir[PATH_MAX + 16];
char		 baddir[PATH_MAX + 16];
ino_t		 empty_ino;
EVP_PKEY	*tls_key;
X509		*tls_cert;
char		*tls_cert_pem;
int		 child_abi = -1;

void
run_init(struct run *r, int prof)
{
	memset(r, 0, sizeof(*r));
	r->r_prof = prof;
	r->r_lfd = r->r_sv[0] = r->r_sv[1] = -1;
}

/* Child side: report why it fails (stderr is unbuffered) and the code. */
int
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

void
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

void
child_ready(struct run *r)
{
	(void)write(r->r_ready[1], "r", 1);
}

void
child_wait_go(struct run *r)
{
	char	 c;

	(void)read(r->r_go[0], &c, 1);
}

/* Parent side: wait for the child's signal; -1 if it died first. */
int
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
int
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

void
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

int
exited(int status, int code)
{
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == code)
		return 1;
	describe(status);
	return 0;
}

/* A forbidden call kills the process (a debug build only logs it). */
int
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

int
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

int
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

char *
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

int
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

void
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

/* --------------------------------------------------------------- TLS */

/* A self-signed certificate for localhost, made in memory. */
int
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

SSL_CTX *
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
