/*
 * SSH to the hosts of deploy plans, with libssh2.  The master names the
 * host, the known_hosts lines its key must match, the command and a time
 * limit; this process connects, checks the host key before anything else
 * (no trust on first use), authenticates with the one private key the
 * master sent (in memory; never a password, never an agent), runs the
 * command, feeds it stdin (inline bytes, then a descriptor the master
 * passed, e.g. a nix-store --export stream), and answers with the exit
 * status and the last SSH_OUTPUT_MAX bytes of output.  What the output
 * means is the master's business.
 *
 * libssh2 blocks, so runs go to a few threads (SSH_THREADS); the event
 * loop only queues runs and sends results, woken through a socketpair.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libssh2.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "knownhosts.h"
#include "nomadworker.h"
#include "wire_hosts.h"

struct ssh_run {
	TAILQ_ENTRY(ssh_run)	 sr_entry;
	uint32_t		 sr_id;
	char			*sr_address;
	uint32_t		 sr_port;
	char			*sr_user;
	char			*sr_known;
	size_t			 sr_knownlen;
	char			*sr_command;
	uint32_t		 sr_timeout;
	void			*sr_stdin;
	size_t			 sr_stdinlen;
	int			 sr_fd;		/* stdin after sr_stdin,
						   or -1 */
	int64_t			 sr_ms;		/* how long it took */
	/* the result */
	int32_t			 sr_status;
	uint32_t		 sr_stage;
	char			 sr_error[SSH_ERROR_MAX];
	char			*sr_out;	/* a ring of SSH_OUTPUT_MAX */
	size_t			 sr_outlen;	/* bytes seen */
};
TAILQ_HEAD(ssh_runs, ssh_run);

static struct imsgev	*ssh_iev;
static struct event	*ssh_wake_ev;
static int		 ssh_wake[2] = { -1, -1 };
static pthread_mutex_t	 ssh_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 ssh_cond = PTHREAD_COND_INITIALIZER;
static struct ssh_runs	 ssh_todo = TAILQ_HEAD_INITIALIZER(ssh_todo);
static struct ssh_runs	 ssh_done = TAILQ_HEAD_INITIALIZER(ssh_done);
static int		 ssh_nthreads;
static char		*ssh_key;	/* under ssh_mtx; a secret */
static size_t		 ssh_keylen;

static void
ssh_run_free(struct ssh_run *sr)
{
	free(sr->sr_address);
	free(sr->sr_user);
	free(sr->sr_known);
	free(sr->sr_command);
	free(sr->sr_stdin);
	free(sr->sr_out);
	if (sr->sr_fd != -1)
		close(sr->sr_fd);
	free(sr);
}

static void
ssh_out_add(struct ssh_run *sr, const char *buf, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		sr->sr_out[(sr->sr_outlen + i) % SSH_OUTPUT_MAX] = buf[i];
	sr->sr_outlen += n;
}

static int64_t
ssh_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The time left, at least 1 ms; 0 when it is up. */
static long
ssh_left(int64_t deadline)
{
	int64_t	 left = deadline - ssh_now_ms();

	return left > 0 ? (long)left : 0;
}

static int
ssh_connect(struct ssh_run *sr, int64_t deadline)
{
	struct addrinfo	 hints, *res, *ai;
	struct pollfd	 pfd;
	char		 port[16];
	socklen_t	 len;
	int		 s = -1, rc, err, one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", sr->sr_port);
	if ((rc = getaddrinfo(sr->sr_address, port, &hints, &res)) != 0) {
		snprintf(sr->sr_error, sizeof(sr->sr_error), "%s: %s",
		    sr->sr_address, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, ai->ai_protocol)) == -1)
			continue;
		if (connect(s, ai->ai_addr, ai->ai_addrlen) == -1 &&
		    errno != EINPROGRESS) {
			err = errno;
			goto next;
		}
		pfd.fd = s;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, ssh_left(deadline)) != 1) {
			err = ETIMEDOUT;
			goto next;
		}
		len = sizeof(err);
		if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
			err = errno;
		if (err == 0)
			break;
next:
		snprintf(sr->sr_error, sizeof(sr->sr_error), "connect to "
		    "%s port %s: %s", sr->sr_address, port, strerror(err));
		close(s);
		s = -1;
	}
	freeaddrinfo(res);
	if (s == -1)
		return -1;
	/* libssh2 waits on the socket itself, with its own timeout. */
	if (fcntl(s, F_SETFL, 0) == -1) {
		close(s);
		return -1;
	}
	(void)setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

static void
ssh_session_error(struct ssh_run *sr, LIBSSH2_SESSION *ss, const char *what)
{
	char	*msg = NULL;
	int	 rc;

	rc = libssh2_session_last_error(ss, &msg, NULL, 0);
	snprintf(sr->sr_error, sizeof(sr->sr_error), "%s: %s", what,
	    rc == LIBSSH2_ERROR_TIMEOUT ? "no answer within the time limit" :
	    msg != NULL && *msg != '\0' ? msg : "failed");
}

static int
ssh_write_all(struct ssh_run *sr, LIBSSH2_SESSION *ss, LIBSSH2_CHANNEL *ch,
    const char *p, size_t left, int64_t deadline)
{
	ssize_t	 w;

	while (left > 0) {
		libssh2_session_set_timeout(ss, ssh_left(deadline) + 1);
		if ((w = libssh2_channel_write(ch, p, left)) < 0) {
			ssh_session_error(sr, ss, "writing stdin");
			return -1;
		}
		p += w;
		left -= w;
	}
	return 0;
}

/* Write all of stdin: the inline bytes, then the descriptor's. */
static int
ssh_feed(struct ssh_run *sr, LIBSSH2_SESSION *ss, LIBSSH2_CHANNEL *ch,
    int64_t deadline)
{
	char		 buf[32768];
	ssize_t		 n;

	if (ssh_write_all(sr, ss, ch, sr->sr_stdin, sr->sr_stdinlen,
	    deadline) == -1)
		return -1;
	while (sr->sr_fd != -1) {
		if ((n = read(sr->sr_fd, buf, sizeof(buf))) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(sr->sr_error, sizeof(sr->sr_error),
			    "reading stdin: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		if (ssh_write_all(sr, ss, ch, buf, n, deadline) == -1)
			return -1;
	}
	libssh2_session_set_timeout(ss, ssh_left(deadline) + 1);
	if (libssh2_channel_send_eof(ch) < 0) {
		ssh_session_error(sr, ss, "closing stdin");
		return -1;
	}
	return 0;
}

/* The host key the host sent, checked against the known hosts. */
static int
ssh_hostkey(struct ssh_run *sr, LIBSSH2_SESSION *ss)
{
	const char	*hk;
	size_t		 hklen;
	int		 type;

	if ((hk = libssh2_session_hostkey(ss, &hklen, &type)) == NULL) {
		strlcpy(sr->sr_error, "the host sent no host key",
		    sizeof(sr->sr_error));
		return -1;
	}
	if (knownhosts_check(sr->sr_known, sr->sr_knownlen, sr->sr_address,
	    (int)sr->sr_port, (const unsigned char *)hk, hklen, sr->sr_error,
	    sizeof(sr->sr_error)) == -1)
		return -1;
	return 0;
}

/* Public key authentication with the configured key (a copy, wiped). */
static int
ssh_auth(struct ssh_run *sr, LIBSSH2_SESSION *ss)
{
	const char	*methods;
	char		*key;
	size_t		 keylen;
	int		 rc;

	methods = libssh2_userauth_list(ss, sr->sr_user, strlen(sr->sr_user));
	if (methods == NULL || strstr(methods, "publickey") == NULL) {
		snprintf(sr->sr_error, sizeof(sr->sr_error), "the host does "
		    "not offer publickey authentication to %s (it offers %s)",
		    sr->sr_user, methods != NULL ? methods : "none");
		return -1;
	}
	pthread_mutex_lock(&ssh_mtx);
	key = NULL;
	keylen = ssh_keylen;
	if (ssh_key != NULL && (key = malloc(keylen + 1)) != NULL) {
		memcpy(key, ssh_key, keylen);
		key[keylen] = '\0';
	}
	pthread_mutex_unlock(&ssh_mtx);
	if (key == NULL) {
		strlcpy(sr->sr_error, "no ssh key is configured (hosts { ssh "
		    "key file ... } in nops.conf)", sizeof(sr->sr_error));
		return -1;
	}
	rc = libssh2_userauth_publickey_frommemory(ss, sr->sr_user,
	    strlen(sr->sr_user), NULL, 0, key, keylen, NULL);
	freezero(key, keylen + 1);
	if (rc != 0) {
		ssh_session_error(sr, ss, "the host refused the key");
		return -1;
	}
	return 0;
}

static void
ssh_execute(struct ssh_run *sr)
{
	LIBSSH2_SESSION	*ss = NULL;
	LIBSSH2_CHANNEL	*ch = NULL;
	char		 buf[16384], *sig = NULL;
	ssize_t		 n;
	int64_t		 deadline;
	int		 s;

	deadline = ssh_now_ms() + (int64_t)sr->sr_timeout * 1000;
	sr->sr_status = -1;
	sr->sr_stage = SSH_STAGE_CONNECT;
	if ((s = ssh_connect(sr, deadline)) == -1)
		return;
	if ((ss = libssh2_session_init()) == NULL) {
		strlcpy(sr->sr_error, "libssh2_session_init failed",
		    sizeof(sr->sr_error));
		goto out;
	}
	libssh2_session_set_blocking(ss, 1);
	libssh2_session_set_timeout(ss, ssh_left(deadline) + 1);
	if (libssh2_session_handshake(ss, s) != 0) {
		ssh_session_error(sr, ss, "SSH handshake");
		goto out;
	}

	/* The host key first: nothing is sent to a host nops cannot name. */
	sr->sr_stage = SSH_STAGE_HOSTKEY;
	if (ssh_hostkey(sr, ss) == -1)
		goto out;
	sr->sr_stage = SSH_STAGE_AUTH;
	if (ssh_auth(sr, ss) == -1)
		goto out;
	sr->sr_stage = SSH_STAGE_EXEC;
	if ((ch = libssh2_channel_open_session(ss)) == NULL) {
		ssh_session_error(sr, ss, "opening a channel");
		goto out;
	}
	libssh2_channel_handle_extended_data2(ch,
	    LIBSSH2_CHANNEL_EXTENDED_DATA_MERGE);
	if (libssh2_channel_exec(ch, sr->sr_command) != 0) {
		ssh_session_error(sr, ss, "starting the command");
		goto out;
	}
	if (ssh_feed(sr, ss, ch, deadline) == -1)
		goto out;
	for (;;) {
		libssh2_session_set_timeout(ss, ssh_left(deadline) + 1);
		n = libssh2_channel_read(ch, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n < 0) {
			ssh_session_error(sr, ss, "reading output");
			goto out;
		}
		ssh_out_add(sr, buf, (size_t)n);
	}
	libssh2_session_set_timeout(ss, ssh_left(deadline) + 1);
	libssh2_channel_close(ch);
	libssh2_channel_wait_closed(ch);
	libssh2_channel_get_exit_signal(ch, &sig, NULL, NULL, NULL, NULL, NULL);
	if (sig != NULL) {
		snprintf(sr->sr_error, sizeof(sr->sr_error), "the command was "
		    "killed by SIG%s", sig);
		libssh2_free(ss, sig);
		goto out;
	}
	sr->sr_status = libssh2_channel_get_exit_status(ch);
	sr->sr_stage = SSH_STAGE_DONE;
out:
	if (ch != NULL)
		libssh2_channel_free(ch);
	if (ss != NULL) {
		libssh2_session_set_timeout(ss, 2000);
		libssh2_session_disconnect(ss, "done");
		libssh2_session_free(ss);
	}
	close(s);
}

static void *
ssh_thread(void *arg)
{
	struct ssh_run	*sr;
	char		 c = 0;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&ssh_mtx);
		while ((sr = TAILQ_FIRST(&ssh_todo)) == NULL)
			pthread_cond_wait(&ssh_cond, &ssh_mtx);
		TAILQ_REMOVE(&ssh_todo, sr, sr_entry);
		pthread_mutex_unlock(&ssh_mtx);

		sr->sr_ms = ssh_now_ms();
		ssh_execute(sr);
		sr->sr_ms = ssh_now_ms() - sr->sr_ms;
		if (sr->sr_fd != -1) {
			close(sr->sr_fd);
			sr->sr_fd = -1;
		}

		pthread_mutex_lock(&ssh_mtx);
		TAILQ_INSERT_TAIL(&ssh_done, sr, sr_entry);
		pthread_mutex_unlock(&ssh_mtx);
		(void)!write(ssh_wake[1], &c, 1);
	}
	return NULL;
}

/* The event loop: send the results the threads left. */
static void
ssh_wake_cb(int fd, short ev, void *arg)
{
	struct ssh_run		*sr;
	struct wire_ssh_result	 res;
	struct msgw		 m;
	char			 buf[64], *out;
	size_t			 len, start;

	(void)ev;
	(void)arg;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	for (;;) {
		pthread_mutex_lock(&ssh_mtx);
		if ((sr = TAILQ_FIRST(&ssh_done)) != NULL)
			TAILQ_REMOVE(&ssh_done, sr, sr_entry);
		pthread_mutex_unlock(&ssh_mtx);
		if (sr == NULL)
			break;
		len = sr->sr_outlen < SSH_OUTPUT_MAX ? sr->sr_outlen :
		    SSH_OUTPUT_MAX;
		start = sr->sr_outlen < SSH_OUTPUT_MAX ? 0 :
		    sr->sr_outlen % SSH_OUTPUT_MAX;
		if ((out = malloc(len + 1)) == NULL)
			fatal("malloc");
		memcpy(out, sr->sr_out + start, len - start);
		memcpy(out + (len - start), sr->sr_out, start);
		res.status = sr->sr_status;
		res.stage = sr->sr_stage;
		res.error = sr->sr_error;
		res.out = out;
		res.outlen = len;
		msg_init(&m);
		wire_put_ssh_result(&m, &res);
		nomad_send(ssh_iev, &m, IMSG_SSH_RESULT, sr->sr_id);
		log_debug("ssh run %u: %s:%u stage %u status %d in %lld ms",
		    sr->sr_id, sr->sr_address, sr->sr_port, sr->sr_stage,
		    sr->sr_status, (long long)sr->sr_ms);
		free(out);
		ssh_run_free(sr);
	}
}

void
nomad_ssh_init(struct event_base *base, struct imsgev *iev)
{
	ssh_iev = iev;
	if (libssh2_init(0) != 0)
		fatalx("libssh2_init failed");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    ssh_wake) == -1)
		fatal("socketpair");
	if ((ssh_wake_ev = event_new(base, ssh_wake[0], EV_READ | EV_PERSIST,
	    ssh_wake_cb, NULL)) == NULL || event_add(ssh_wake_ev, NULL) == -1)
		fatalx("event_new");
}

/* IMSG_SSH_KEY: see shared/wire_hosts.h. */
void
nomad_ssh_key(struct imsg *imsg, const union imsg_payload *u)
{
	const struct wire_ssh_key	*k = &u->ssh_key;
	const void			*key;
	size_t				 keylen;

	key = k->key;
	keylen = k->keylen;
	pthread_mutex_lock(&ssh_mtx);
	if (ssh_key != NULL)
		freezero(ssh_key, ssh_keylen);
	ssh_key = NULL;
	ssh_keylen = 0;
	if (keylen > 0) {
		if ((ssh_key = malloc(keylen)) == NULL)
			fatal("malloc");
		memcpy(ssh_key, key, keylen);
		ssh_keylen = keylen;
	}
	pthread_mutex_unlock(&ssh_mtx);
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->datalen);
}

/* IMSG_SSH_RUN: see shared/wire_hosts.h. */
void
nomad_ssh_run(struct imsg *imsg, const union imsg_payload *u)
{
	struct ssh_run			*sr;
	const struct wire_ssh_run	*w = &u->ssh_run;
	pthread_t			 t;
	int				 fd;

	fd = imsg->fd;
	if (((w->flags & SSH_F_STDIN_FD) != 0) != (fd != -1))
		fatalx("malformed %s (a descriptor without SSH_F_STDIN_FD or "
		    "the other way round)", imsg_to_str(imsg->hdr.type));

	if ((sr = calloc(1, sizeof(*sr))) == NULL ||
	    (sr->sr_address = strdup(w->address)) == NULL ||
	    (sr->sr_user = strdup(w->user)) == NULL ||
	    (sr->sr_command = strdup(w->command)) == NULL ||
	    (sr->sr_known = malloc(w->knownlen + 1)) == NULL ||
	    (sr->sr_stdin = malloc(w->inlen + 1)) == NULL ||
	    (sr->sr_out = malloc(SSH_OUTPUT_MAX)) == NULL)
		fatal("calloc");
	memcpy(sr->sr_known, w->known, w->knownlen);
	sr->sr_knownlen = w->knownlen;
	memcpy(sr->sr_stdin, w->in, w->inlen);
	sr->sr_stdinlen = w->inlen;
	sr->sr_id = imsg->hdr.peerid;
	sr->sr_port = w->port;
	sr->sr_timeout = w->timeout;
	sr->sr_fd = fd;
	log_debug("ssh run %u: %s@%s:%u", sr->sr_id, w->user, w->address,
	    w->port);

	pthread_mutex_lock(&ssh_mtx);
	TAILQ_INSERT_TAIL(&ssh_todo, sr, sr_entry);
	pthread_cond_signal(&ssh_cond);
	pthread_mutex_unlock(&ssh_mtx);
	/* Threads start with the first runs, under the syscall filter. */
	if (ssh_nthreads < SSH_THREADS) {
		if (pthread_create(&t, NULL, ssh_thread, NULL) != 0)
			fatalx("pthread_create");
		pthread_detach(t);
		ssh_nthreads++;
	}
}
