/*
 * Framed messages over a socketpair: a bounded input buffer cut into
 * messages by imsg_get(), and an output queue written with sendmsg().
 * Ideas from OpenBSD's imsg; written for nops.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"

#define IMSG_IOV_MAX	64	/* messages gathered per sendmsg() */
#define IMSG_RECV_FDS	8	/* room for descriptors in one recvmsg() */

static void	 imsg_close_fds(int *, size_t);
static int	 imsg_fd_start(struct imsgbuf *, size_t, size_t, size_t *);
static int	 imsg_accept_fds(struct imsgbuf *, struct msghdr *, size_t,
		    size_t);
static void	 ibuf_free(struct ibuf *);
static void	 imsgbuf_consume(struct imsgbuf *, size_t);

int
imsgbuf_init(struct imsgbuf *ibuf, int fd, int flags, size_t maxsize)
{
	if (maxsize == 0)
		maxsize = IMSG_DEFAULT_MAX;
	if (maxsize < IMSG_HEADER_SIZE || maxsize > UINT32_MAX ||
	    (flags & ~IMSGF_PASSFD) != 0) {
		errno = EINVAL;
		return -1;
	}
	memset(ibuf, 0, sizeof(*ibuf));
	ibuf->fd = fd;
	ibuf->flags = flags;
	ibuf->pid = getpid();
	ibuf->maxsize = maxsize;
	TAILQ_INIT(&ibuf->wq);
	return 0;
}

void
imsgbuf_clear(struct imsgbuf *ibuf)
{
	struct ibuf	*b;
	size_t		 i;

	while ((b = TAILQ_FIRST(&ibuf->wq)) != NULL) {
		TAILQ_REMOVE(&ibuf->wq, b, entry);
		ibuf_free(b);
	}
	ibuf->wqueued = 0;
	for (i = 0; i < ibuf->nrfds; i++)
		close(ibuf->rfds[i].fd);
	ibuf->nrfds = 0;
	freezero(ibuf->rbuf, ibuf->rsize);
	ibuf->rbuf = NULL;
	ibuf->rsize = ibuf->rlen = ibuf->rpos = 0;
	ibuf->rbase = 0;
}

static void
imsg_close_fds(int *fds, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/*
 * Find the last message that starts in rbuf[from .. to), walking the
 * headers from rpos (every byte before 'to' is buffered, so every header
 * of a message that starts before the one we look for is complete).
 * Returns 1 and its buffer offset, 0 if none starts there, -1 on a bad
 * header.
 */
static int
imsg_fd_start(struct imsgbuf *ibuf, size_t from, size_t to, size_t *start)
{
	struct imsg_hdr	 hdr;
	size_t		 p = ibuf->rpos;
	int		 found = 0;

	while (p < to) {
		if (p >= from) {
			*start = p;
			found = 1;
		}
		if (to - p < IMSG_HEADER_SIZE)
			break;
		memcpy(&hdr, ibuf->rbuf + p, sizeof(hdr));
		if (hdr.len < IMSG_HEADER_SIZE || hdr.len > ibuf->maxsize)
			return -1;
		p += hdr.len;
	}
	return found;
}

/*
 * Take the descriptors that came with n bytes read at rbuf[rlen]: at most
 * one, only on a IMSGF_PASSFD channel, and only where a message starts.
 * Anything else closes every one of them and fails with EBADMSG.
 */
static int
imsg_accept_fds(struct imsgbuf *ibuf, struct msghdr *msg, size_t n,
    size_t cap)
{
	struct cmsghdr	*cm;
	int		 fds[IMSG_RECV_FDS];
	size_t		 nfds = 0, k, i, start;
	int		 bad = 0;

	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			if (nfds == cap) {
				/* Cannot happen: the buffer holds cap. */
				bad = 1;
				break;
			}
			memcpy(&fds[nfds++], CMSG_DATA(cm) + i * sizeof(int),
			    sizeof(int));
		}
	}
	if (nfds == 0 && (msg->msg_flags & MSG_CTRUNC) == 0 && !bad)
		return 0;

	/* Truncated: the kernel dropped some, so which is whose is lost. */
	if (!(ibuf->flags & IMSGF_PASSFD) || (msg->msg_flags & MSG_CTRUNC) ||
	    nfds != 1 || n == 0 || ibuf->nrfds == IMSG_MAXPENDFD)
		bad = 1;
	else if (imsg_fd_start(ibuf, ibuf->rlen, ibuf->rlen + n, &start) != 1)
		bad = 1;
	else if (ibuf->nrfds > 0 &&
	    ibuf->rfds[ibuf->nrfds - 1].off >= ibuf->rbase + start)
		bad = 1;	/* that message already has one */
	if (bad) {
		imsg_close_fds(fds, nfds);
		errno = EBADMSG;
		return -1;
	}
	ibuf->rfds[ibuf->nrfds].off = ibuf->rbase + start;
	ibuf->rfds[ibuf->nrfds].fd = fds[0];
	ibuf->nrfds++;
	return 0;
}

ssize_t
imsgbuf_read(struct imsgbuf *ibuf)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int) * IMSG_RECV_FDS)];
	} cmsgbuf;
	size_t		 cap, want;
	ssize_t		 n;
	uint8_t		*p;

	/* What is left is at most one message: move it to the front. */
	if (ibuf->rpos > 0) {
		memmove(ibuf->rbuf, ibuf->rbuf + ibuf->rpos,
		    ibuf->rlen - ibuf->rpos);
		ibuf->rbase += ibuf->rpos;
		ibuf->rlen -= ibuf->rpos;
		ibuf->rpos = 0;
	}

	/* Grow by what one read may need, never past the channel's bound. */
	cap = ibuf->maxsize + IMSG_HEADER_SIZE;
	want = ibuf->rlen + IMSG_READ_SIZE;
	if (want > cap)
		want = cap;
	if (want > ibuf->rsize) {
		if ((p = recallocarray(ibuf->rbuf, ibuf->rsize, want, 1)) ==
		    NULL)
			return -1;
		ibuf->rbuf = p;
		ibuf->rsize = want;
	}
	if (ibuf->rlen == ibuf->rsize) {
		errno = ENOBUFS;
		return -1;
	}

	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = ibuf->rbuf + ibuf->rlen;
	iov.iov_len = ibuf->rsize - ibuf->rlen;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);

	/* recvmsg even without IMSGF_PASSFD, to see (and close) strays. */
	if ((n = recvmsg(ibuf->fd, &msg, MSG_CMSG_CLOEXEC)) == -1)
		return -1;
	if (imsg_accept_fds(ibuf, &msg, n, IMSG_RECV_FDS) == -1)
		return -1;
	ibuf->rlen += n;
	return n;
}

ssize_t
imsg_get(struct imsgbuf *ibuf, struct imsg *imsg)
{
	struct imsg_hdr	 hdr;
	size_t		 avail = ibuf->rlen - ibuf->rpos;
	uint64_t	 start;

	memset(imsg, 0, sizeof(*imsg));
	imsg->fd = -1;
	if (avail < IMSG_HEADER_SIZE)
		return 0;
	memcpy(&hdr, ibuf->rbuf + ibuf->rpos, sizeof(hdr));
	if (hdr.len < IMSG_HEADER_SIZE || hdr.len > ibuf->maxsize) {
		errno = EBADMSG;
		return -1;
	}
	if (avail < hdr.len)
		return 0;

	imsg->datalen = hdr.len - IMSG_HEADER_SIZE;
	if (imsg->datalen > 0) {
		if ((imsg->data = malloc(imsg->datalen)) == NULL)
			return -1;
		memcpy(imsg->data, ibuf->rbuf + ibuf->rpos + IMSG_HEADER_SIZE,
		    imsg->datalen);
	}
	/* Payloads may carry secrets (tokens, keys): leave no copy behind. */
	explicit_bzero(ibuf->rbuf + ibuf->rpos, hdr.len);
	imsg->hdr = hdr;

	start = ibuf->rbase + ibuf->rpos;
	if (ibuf->nrfds > 0 && ibuf->rfds[0].off == start) {
		imsg->fd = ibuf->rfds[0].fd;
		ibuf->nrfds--;
		memmove(&ibuf->rfds[0], &ibuf->rfds[1],
		    ibuf->nrfds * sizeof(ibuf->rfds[0]));
	}

	ibuf->rpos += hdr.len;
	if (ibuf->rpos == ibuf->rlen) {
		ibuf->rbase += ibuf->rpos;
		ibuf->rpos = ibuf->rlen = 0;
	}
	return hdr.len;
}

void
imsg_free(struct imsg *imsg)
{
	if (imsg->data != NULL)
		freezero(imsg->data, imsg->datalen);
	imsg->data = NULL;
	imsg->datalen = 0;
}

int
imsg_compose(struct imsgbuf *ibuf, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t datalen)
{
	return imsg_compose2(ibuf, type, peerid, fd, data, datalen, NULL, 0);
}

int
imsg_compose2(struct imsgbuf *ibuf, uint32_t type, uint32_t peerid, int fd,
    const void *d1, size_t l1, const void *d2, size_t l2)
{
	struct imsg_hdr	 hdr;
	struct ibuf	*b;
	size_t		 len;

	if ((fd != -1 && !(ibuf->flags & IMSGF_PASSFD)) ||
	    (d1 == NULL && l1 > 0) || (d2 == NULL && l2 > 0)) {
		errno = EINVAL;
		return -1;
	}
	if (l1 > ibuf->maxsize || l2 > ibuf->maxsize ||
	    IMSG_HEADER_SIZE + l1 + l2 > ibuf->maxsize) {
		errno = ERANGE;
		return -1;
	}
	len = IMSG_HEADER_SIZE + l1 + l2;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -1;
	if ((b->buf = malloc(len)) == NULL) {
		free(b);
		return -1;
	}
	hdr.type = type;
	hdr.len = len;
	hdr.peerid = peerid;
	hdr.pid = ibuf->pid;
	memcpy(b->buf, &hdr, sizeof(hdr));
	if (l1 > 0)
		memcpy(b->buf + IMSG_HEADER_SIZE, d1, l1);
	if (l2 > 0)
		memcpy(b->buf + IMSG_HEADER_SIZE + l1, d2, l2);
	b->size = len;
	b->wpos = 0;
	b->fd = fd;
	TAILQ_INSERT_TAIL(&ibuf->wq, b, entry);
	ibuf->wqueued++;
	return 0;
}

static void
ibuf_free(struct ibuf *b)
{
	if (b->fd != -1)
		close(b->fd);
	freezero(b->buf, b->size);
	free(b);
}

/* Account for n bytes written from the head of the queue. */
static void
imsgbuf_consume(struct imsgbuf *ibuf, size_t n)
{
	struct ibuf	*b;
	size_t		 left;

	while (n > 0 && (b = TAILQ_FIRST(&ibuf->wq)) != NULL) {
		left = b->size - b->wpos;
		if (n < left) {
			b->wpos += n;
			return;
		}
		n -= left;
		TAILQ_REMOVE(&ibuf->wq, b, entry);
		/* For scan-build, which misses that tqe_prev is the head's. */
		assert(TAILQ_FIRST(&ibuf->wq) != b);
		ibuf_free(b);
		ibuf->wqueued--;
	}
}

int
imsgbuf_write(struct imsgbuf *ibuf)
{
	struct iovec	 iov[IMSG_IOV_MAX];
	struct msghdr	 msg;
	struct cmsghdr	*cm;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	struct ibuf	*b, *first;
	ssize_t		 n;
	int		 niov;

	while ((first = TAILQ_FIRST(&ibuf->wq)) != NULL) {
		memset(&msg, 0, sizeof(msg));
		niov = 0;
		/*
		 * A message with a descriptor goes alone, from its first
		 * byte: the receiver pins the descriptor to the last
		 * message that starts in the read that brings it.
		 */
		TAILQ_FOREACH(b, &ibuf->wq, entry) {
			if (niov == IMSG_IOV_MAX || (niov > 0 && b->fd != -1))
				break;
			iov[niov].iov_base = b->buf + b->wpos;
			iov[niov].iov_len = b->size - b->wpos;
			niov++;
			if (b->fd != -1)
				break;
		}
		msg.msg_iov = iov;
		msg.msg_iovlen = niov;
		if (first->fd != -1) {
			memset(&cmsgbuf, 0, sizeof(cmsgbuf));
			msg.msg_control = cmsgbuf.buf;
			msg.msg_controllen = sizeof(cmsgbuf.buf);
			cm = CMSG_FIRSTHDR(&msg);
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			memcpy(CMSG_DATA(cm), &first->fd, sizeof(int));
		}

		n = sendmsg(ibuf->fd, &msg, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		if (n == 0)
			return 0;
		/* Once any byte is out, the descriptor went with it. */
		if (first->fd != -1) {
			close(first->fd);
			first->fd = -1;
		}
		imsgbuf_consume(ibuf, n);
	}
	return 0;
}

int
imsgbuf_flush(struct imsgbuf *ibuf)
{
	struct pollfd	 pfd;

	for (;;) {
		if (imsgbuf_write(ibuf) == -1)
			return -1;
		if (imsgbuf_queued(ibuf) == 0)
			return 0;
		pfd.fd = ibuf->fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
			return -1;
	}
}

size_t
imsgbuf_queued(const struct imsgbuf *ibuf)
{
	return ibuf->wqueued;
}
