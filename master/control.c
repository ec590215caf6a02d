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
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "nopsd.h"
#include "master.h"
#include "web_api.h"

/*
 * The certificate and key of each listener, by the index of
 * nopsd_env->n_listeners (empty for plain ones): read once as root and
 * kept, so that a restarted webworker gets them again.
 */
static struct web_tls	*control_tls;

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
	control_tls = reallocarray(control_tls, env->n_nlisteners + 1,
	    sizeof(*control_tls));
	if (control_tls == NULL)
		fatal("reallocarray");
	memset(&control_tls[env->n_nlisteners], 0, sizeof(*control_tls));
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
		if (l->tls && web_tls_read(l->tls_cert, l->tls_key,
		    &control_tls[nopsd_env->n_nlisteners - 1]) == -1) {
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
	size_t		 i;

	for (i = 0; i < env->n_nlisteners; i++) {
		if (env->n_listeners[i].l_kind == WEB_LISTEN_CONTROL)
			unlink(env->n_listeners[i].l_name);
		close(env->n_listeners[i].l_fd);
		web_tls_free(&control_tls[i]);
	}
	free(control_tls);
	control_tls = NULL;
	free(env->n_listeners);
	env->n_listeners = NULL;
	env->n_nlisteners = 0;
}

static void
control_send_one(struct worker *w, const struct listener *l,
    const struct web_tls *t)
{
	struct msgw	 m;
	int		 dupfd;

	/* The channel closes what it sends; the master keeps its own. */
	if ((dupfd = fcntl(l->l_fd, F_DUPFD_CLOEXEC, 0)) == -1)
		fatal("dup listener");
	msg_init(&m);
	msg_add_u32(&m, l->l_kind);
	msg_add_str(&m, l->l_name);
	msg_add_u32(&m, t->wt_key != NULL);
	msg_add_data(&m, t->wt_cert, t->wt_certlen);
	msg_add_data(&m, t->wt_key, t->wt_keylen);
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
		control_send_one(w, &env->n_listeners[i], &control_tls[i]);
}
