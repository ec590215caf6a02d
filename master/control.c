/*
 * The sockets the master opens for the webworker: the local control socket
 * (AF_UNIX, mode 0660, owned by root and the control group) and the TCP
 * listeners of the config.  The master keeps them open so a restarted
 * webworker gets the same sockets again.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "log.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "wire.h"
#include "conf.h"
#include "master.h"
#include "cfile.h"

/*
 * The certificate and key of each listener, by the index of
 * nopsd_env->n_listeners (empty for plain ones): read once as root and
 * kept, so that a restarted webworker gets them again.
 */
struct control_tls {
	char		*ct_cert;
	size_t		 ct_certlen;
	char		*ct_key;	/* a secret: zeroed when freed */
	size_t		 ct_keylen;
};
static struct control_tls	*control_certs;

/*
 * The Host names each listener answers for (same index): the
 * operator's hostnames, or by default the listen address itself and
 * "localhost" on loopback; a wildcard address takes any IP literal.
 */
struct control_hosts {
	uint32_t	 ch_flags;	/* WEB_HOSTS_* */
	size_t		 ch_n;
	char		*ch_names[WEB_HOSTS_MAX];
};
static struct control_hosts	*control_hosts;

/* Read a PEM file the config names, as root; NUL-terminated. */
static int
control_tls_file(const char *path, char **buf, size_t *len)
{
	char	 err[512];

	if (cfile_read(path, WEB_TLS_PEM_MAX, CFILE_NONEMPTY, buf, len, err,
	    sizeof(err)) == -1) {
		log_warnx("tls: %s", err);
		return -1;
	}
	return 0;
}

/* A PEM callback that never asks: an encrypted key is refused. */
static int
control_no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

static void
control_tls_free(struct control_tls *t)
{
	cfile_free(t->ct_key, t->ct_keylen);
	free(t->ct_cert);
	memset(t, 0, sizeof(*t));
}

/*
 * A listener's certificate chain and key, read as root before the
 * webworker needs them and checked to belong together: 0, or -1 with the
 * reason logged (the file and what is wrong).
 */
static int
control_tls_read(const char *certfile, const char *keyfile,
    struct control_tls *t)
{
	BIO		*bio = NULL;
	X509		*x = NULL;
	EVP_PKEY	*pk = NULL;
	unsigned long	 e;
	int		 rc = -1;

	memset(t, 0, sizeof(*t));
	if (control_tls_file(certfile, &t->ct_cert, &t->ct_certlen) == -1 ||
	    control_tls_file(keyfile, &t->ct_key, &t->ct_keylen) == -1)
		goto out;
	/* Check here, so a bad pair stops the start with a clear word. */
	if ((bio = BIO_new_mem_buf(t->ct_cert, (int)t->ct_certlen)) == NULL ||
	    (x = PEM_read_bio_X509(bio, NULL, control_no_passphrase,
	    NULL)) == NULL) {
		log_warnx("tls certificate %s: no PEM certificate in it",
		    certfile);
		goto out;
	}
	BIO_free(bio);
	/* Alike on purpose: the certificate's read above; a key here. */
	if ((bio = BIO_new_mem_buf(t->ct_key, (int)t->ct_keylen)) == NULL ||
	    (pk = PEM_read_bio_PrivateKey(bio, NULL, control_no_passphrase,
	    NULL)) == NULL) {
		log_warnx("tls key %s: no unencrypted PEM private key in it",
		    keyfile);
		goto out;
	}
	if (X509_check_private_key(x, pk) != 1) {
		log_warnx("tls key %s does not belong to certificate %s",
		    keyfile, certfile);
		goto out;
	}
	rc = 0;
out:
	while ((e = ERR_get_error()) != 0)
		log_debug("tls: %s", ERR_error_string(e, NULL));
	BIO_free(bio);
	X509_free(x);
	EVP_PKEY_free(pk);
	if (rc == -1)
		control_tls_free(t);
	return rc;
}

static void
control_host_add(struct control_hosts *ch, const char *name)
{
	size_t	 i;

	for (i = 0; i < ch->ch_n; i++)
		if (strcasecmp(ch->ch_names[i], name) == 0)
			return;
	if (ch->ch_n < WEB_HOSTS_MAX &&
	    (ch->ch_names[ch->ch_n++] = strdup(name)) == NULL)
		fatal("strdup");
}

static void
control_hosts_set(struct control_hosts *ch, const struct conf_listen *l)
{
	const struct sockaddr_in	*sin = (const void *)&l->ss;
	const struct sockaddr_in6	*sin6 = (const void *)&l->ss;
	const struct conf_str		*s;
	char				 a[INET6_ADDRSTRLEN];
	int				 any, loop;

	memset(ch, 0, sizeof(*ch));
	if (!TAILQ_EMPTY(&l->hostnames)) {
		TAILQ_FOREACH(s, &l->hostnames, entry)
			control_host_add(ch, s->str);
		return;
	}
	if (l->ss.ss_family == AF_INET) {
		any = sin->sin_addr.s_addr == htonl(INADDR_ANY);
		loop = (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	} else {
		any = IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr);
		loop = IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
	}
	if (any)
		ch->ch_flags |= WEB_HOSTS_IPLITERAL;
	else {
		control_host_add(ch, l->host);
		/* "localhost", or an IPv6 address as written: also numeric. */
		if (inet_ntop(l->ss.ss_family, l->ss.ss_family == AF_INET ?
		    (const void *)&sin->sin_addr :
		    (const void *)&sin6->sin6_addr, a, sizeof(a)) != NULL)
			control_host_add(ch, a);
	}
	if (any || loop)
		control_host_add(ch, "localhost");
}

int
control_open(const char *path, gid_t gid)
{
	struct sockaddr_un	 sun;
	struct stat		 sb;
	mode_t			 old;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path)) {
		log_warnx("control socket %s: path too long", path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		log_warn("control socket");
		return -1;
	}
	/* Replace a stale socket, never anything else. */
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			log_warnx("control socket %s: exists and is not a "
			    "socket", path);
			close(fd);
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
			log_warnx("control socket %s: in use by a running "
			    "nopsd", path);
			close(fd);
			return -1;
		}
		if (unlink(path) == -1) {
			log_warn("control socket %s: unlink", path);
			close(fd);
			return -1;
		}
	}
	old = umask(S_IXUSR | S_IXGRP | S_IRWXO);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_warn("control socket %s: bind", path);
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	if (chown(path, 0, gid) == -1 ||
	    chmod(path, S_IRUSR | S_IWUSR | S_IRGRP | S_IWGRP) == -1) {
		log_warn("control socket %s: chown/chmod", path);
		unlink(path);
		close(fd);
		return -1;
	}
	if (listen(fd, 16) == -1) {
		log_warn("control socket %s: listen", path);
		unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

static void
control_add(int fd, uint32_t kind, const char *name)
{
	struct nopsd	*env = nopsd_env;
	struct listener	*l;

	env->n_listeners = reallocarray(env->n_listeners,
	    env->n_nlisteners + 1, sizeof(*env->n_listeners));
	if (env->n_listeners == NULL)
		fatal("reallocarray");
	control_certs = reallocarray(control_certs, env->n_nlisteners + 1,
	    sizeof(*control_certs));
	if (control_certs == NULL)
		fatal("reallocarray");
	memset(&control_certs[env->n_nlisteners], 0, sizeof(*control_certs));
	control_hosts = reallocarray(control_hosts, env->n_nlisteners + 1,
	    sizeof(*control_hosts));
	if (control_hosts == NULL)
		fatal("reallocarray");
	memset(&control_hosts[env->n_nlisteners], 0, sizeof(*control_hosts));
	l = &env->n_listeners[env->n_nlisteners++];
	l->l_fd = fd;
	l->l_kind = kind;
	strlcpy(l->l_name, name, sizeof(l->l_name));
}

/*
 * Open the control socket and every TCP listener of the config.  Binding
 * happens here, as root, so privileged ports work; the webworker only
 * accepts.  Changes to these statements take effect at the next start.
 */
int
control_listen_all(struct nops_conf *conf, gid_t ctlgid)
{
	struct conf_listen	*l;
	int			 fd, on = 1;
	char			 name[WEB_NAME_MAX];

	if ((fd = control_open(conf->control_socket, ctlgid)) == -1)
		return -1;
	control_add(fd, WEB_LISTEN_CONTROL, conf->control_socket);

	TAILQ_FOREACH(l, &conf->listens, entry) {
		snprintf(name, sizeof(name), "%s port %u", l->host, l->port);
		fd = socket(l->ss.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd == -1) {
			log_warn("listen on %s", name);
			return -1;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
		if (l->ss.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
			    sizeof(on));
		if (bind(fd, (struct sockaddr *)&l->ss, l->sslen) == -1 ||
		    listen(fd, 128) == -1) {
			log_warn("listen on %s", name);
			close(fd);
			return -1;
		}
		control_add(fd, WEB_LISTEN_TCP, name);
		control_hosts_set(&control_hosts[nopsd_env->n_nlisteners - 1],
		    l);
		if (l->tls && control_tls_read(l->tls_cert, l->tls_key,
		    &control_certs[nopsd_env->n_nlisteners - 1]) == -1) {
			log_warnx("listen on %s: no usable tls certificate "
			    "and key", name);
			return -1;
		}
		log_info("listening on %s%s", name, l->tls ? " (tls)" : "");
	}
	return 0;
}

void
control_close_all(void)
{
	struct nopsd	*env = nopsd_env;
	size_t		 i, j;

	for (i = 0; i < env->n_nlisteners; i++) {
		if (env->n_listeners[i].l_kind == WEB_LISTEN_CONTROL)
			unlink(env->n_listeners[i].l_name);
		close(env->n_listeners[i].l_fd);
		control_tls_free(&control_certs[i]);
		for (j = 0; j < control_hosts[i].ch_n; j++)
			free(control_hosts[i].ch_names[j]);
	}
	free(control_certs);
	control_certs = NULL;
	free(control_hosts);
	control_hosts = NULL;
	free(env->n_listeners);
	env->n_listeners = NULL;
	env->n_nlisteners = 0;
}

static void
control_send_one(struct worker *w, const struct listener *l,
    const struct control_tls *t, const struct control_hosts *ch)
{
	struct wire_web_listen	 wl;
	struct msgw		 m;
	size_t			 i;
	int			 dupfd;

	memset(&wl, 0, sizeof(wl));
	wl.kind = l->l_kind;
	wl.name = l->l_name;
	wl.tls = t->ct_key != NULL;
	wl.cert = t->ct_cert;
	wl.certlen = t->ct_certlen;
	wl.key = t->ct_key;
	wl.keylen = t->ct_keylen;
	wl.bodymax = (uint32_t)nopsd_env->n_conf->max_body_size;
	wl.hflags = ch->ch_flags;
	wl.nhosts = (uint32_t)ch->ch_n;
	for (i = 0; i < ch->ch_n; i++)
		wl.hosts[i] = ch->ch_names[i];
	wl.persrc = (uint32_t)nopsd_env->n_conf->max_conns_per_address;
	/* The channel closes what it sends; the master keeps its own. */
	if ((dupfd = fcntl(l->l_fd, F_DUPFD_CLOEXEC, 0)) == -1)
		fatal("dup listener");
	msg_init(&m);
	wire_put_web_listen(&m, &wl);
	/* The payload may hold a key: msg_send() frees it zeroed. */
	if (msg_send(&m, &w->w_iev.ibuf, IMSG_WEB_LISTEN, 0, dupfd) == -1)
		fatal("IMSG_WEB_LISTEN");
}

void
control_send_listeners(struct worker *w)
{
	struct nopsd	*env = nopsd_env;
	size_t		 i;

	for (i = 0; i < env->n_nlisteners; i++)
		control_send_one(w, &env->n_listeners[i], &control_certs[i],
		    &control_hosts[i]);
}

/*
 * Who asks over the control socket, as the master itself sees it
 * (nopsd(8), CONTROL SOCKET).  The webworker sends each control-socket
 * request with its connection; the authority is that socket, which the
 * webworker cannot make: it must be the accepted end of a connection to
 * the master's own control socket (the webworker, chrooted, cannot bind
 * that path), from a process that is not a worker, still connected.  0
 * with *uid and *gid of the peer; -1 when the socket is not such a
 * connection (a forgery: why says how); 1 when the client has gone.
 */
int
control_peer(int fd, uid_t *uid, gid_t *gid, const char **why)
{
	struct nopsd		*env = nopsd_env;
	struct sockaddr_un	 sun;
	struct ucred		 uc;
	struct pollfd		 pfd;
	struct worker		*w;
	socklen_t		 len;
	size_t			 i;
	enum nops_proc		 id;
	int			 v;

	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    v != AF_UNIX) {
		*why = "not a local socket";
		return -1;
	}
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_STREAM) {
		*why = "not a stream socket";
		return -1;
	}
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 ||
	    v != 0) {
		*why = "a listening socket";
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	len = sizeof(sun);
	if (getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
	    len <= offsetof(struct sockaddr_un, sun_path) ||
	    sun.sun_path[0] == '\0') {
		*why = "not a connection to the control socket";
		return -1;
	}
	for (i = 0; i < env->n_nlisteners; i++)
		if (env->n_listeners[i].l_kind == WEB_LISTEN_CONTROL &&
		    strncmp(env->n_listeners[i].l_name, sun.sun_path,
		    sizeof(sun.sun_path)) == 0)
			break;
	if (i == env->n_nlisteners) {
		*why = "not a connection to the control socket";
		return -1;
	}
	len = sizeof(uc);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == -1 ||
	    len != sizeof(uc)) {
		*why = "no peer credentials";
		return -1;
	}
	for (id = PROC_GITWORKER; id < PROC_MAX; id++) {
		w = supervise_worker(id);
		if (w != NULL && w->w_pid > 0 && uc.pid == w->w_pid) {
			*why = "a connection a worker made";
			return -1;
		}
	}
	/* A client that hung up has no authority left to lend. */
	pfd.fd = fd;
	pfd.events = POLLRDHUP;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) == -1 ||
	    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
		*why = "the client has gone";
		return 1;
	}
	*uid = uc.uid;
	*gid = uc.gid;
	return 0;
}
