/*
 * Framed messages between the master and its workers.
 *
 * Every message is a 16-byte header followed by its payload:
 *
 *	uint32_t type;		what the payload means (IMSG_*)
 *	uint32_t len;		header + payload, in bytes
 *	uint32_t peerid;	request id or object id, chosen by the sender
 *	uint32_t pid;		pid of the sending process
 *
 * All fields are in host byte order: both ends are on one machine.
 * A channel may carry one file descriptor per message (SCM_RIGHTS) only if
 * it was set up with IMSGF_PASSFD; a descriptor arriving on any other
 * channel is closed and the read fails.  Each channel has a maximum message
 * size (header included); a header that announces more (or less than the
 * header itself) is a framing error and the channel must be dropped.
 *
 * The header has no "carries a descriptor" flag.  Instead the sender sends
 * a message with a descriptor in a sendmsg() of its own, starting at the
 * message's first byte, and the receiver gives the descriptor to the last
 * message that starts in the read that brought it.  This relies on what
 * Linux AF_UNIX stream sockets guarantee: descriptors come with the first
 * read that touches their segment, and that read ends inside it.
 */
#ifndef NOPS_IMSG_H
#define NOPS_IMSG_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#define IMSG_HEADER_SIZE	16
#define IMSG_DEFAULT_MAX	(256 * 1024)
#define IMSG_READ_SIZE		(64 * 1024)
#define IMSG_MAXPENDFD		16	/* received, not yet claimed */

#define IMSGF_PASSFD		0x01	/* this channel may carry descriptors */

struct imsg_hdr {
	uint32_t	 type;
	uint32_t	 len;
	uint32_t	 peerid;
	uint32_t	 pid;
};

struct imsg {
	struct imsg_hdr	 hdr;
	int		 fd;		/* -1 unless one came with it */
	void		*data;		/* payload, NULL if empty */
	size_t		 datalen;
};

/* One queued outgoing message. */
struct ibuf {
	TAILQ_ENTRY(ibuf) entry;
	uint8_t		*buf;
	size_t		 size;
	size_t		 wpos;		/* bytes already written */
	int		 fd;		/* to pass with the first byte, or -1 */
};

/* A received descriptor and the stream offset of its message. */
struct imsg_rfd {
	uint64_t	 off;
	int		 fd;
};

/* Internals are private to imsg.c: use the functions below. */
struct imsgbuf {
	int		 fd;
	int		 flags;		/* IMSGF_* */
	pid_t		 pid;		/* our pid, put in every header */
	size_t		 maxsize;	/* largest message accepted or sent */

	/* input: rbuf[rpos .. rlen) is not yet taken by imsg_get */
	uint8_t		*rbuf;
	size_t		 rsize;		/* allocated */
	size_t		 rlen;		/* bytes held */
	size_t		 rpos;		/* start of the next message */
	uint64_t	 rbase;		/* stream offset of rbuf[0] */
	struct imsg_rfd	 rfds[IMSG_MAXPENDFD];
	size_t		 nrfds;

	/* output */
	TAILQ_HEAD(, ibuf) wq;
	size_t		 wqueued;	/* number of messages queued */
};

/*
 * imsgbuf_init: set up a channel on a connected, non-blocking AF_UNIX
 * stream socket.  maxsize is the largest message, header included; 0 means
 * IMSG_DEFAULT_MAX; less than IMSG_HEADER_SIZE or more than UINT32_MAX is
 * EINVAL.  The input buffer never grows past maxsize + IMSG_HEADER_SIZE.
 * Returns 0, or -1 with errno.
 */
int	 imsgbuf_init(struct imsgbuf *, int fd, int flags, size_t maxsize);

/*
 * imsgbuf_clear: drop every queued and buffered byte, close held fds
 * (queued and received-unclaimed).  The socket itself is left open.
 */
void	 imsgbuf_clear(struct imsgbuf *);

/*
 * imsgbuf_read: read what the socket has.  Returns the number of bytes read,
 * 0 on end of file, -1 on error (errno EAGAIN/EINTR: try later; EBADMSG: a
 * descriptor arrived on a channel without IMSGF_PASSFD, or arrived where no
 * message starts, or more than one at once; ENOBUFS: buffer full because
 * the caller did not drain it with imsg_get).  Received descriptors that
 * cannot be used are closed, never leaked.
 */
ssize_t	 imsgbuf_read(struct imsgbuf *);

/*
 * imsg_get: take the next complete message out of the input buffer.
 * Returns its total length (> 0), 0 if no complete message is buffered,
 * or -1 on a framing error (errno EBADMSG: bad length in header; ENOMEM).
 * The caller owns imsg->data and imsg->fd and calls imsg_free(), which
 * frees data but does not close fd: close it, or keep it.
 */
ssize_t	 imsg_get(struct imsgbuf *, struct imsg *);
void	 imsg_free(struct imsg *);

/*
 * imsg_compose: queue one message.  fd -1 for none; a descriptor on a
 * channel without IMSGF_PASSFD is refused (EINVAL).  Ownership of fd passes
 * to the channel, which closes it once sent (or in imsgbuf_clear); if the
 * call fails the caller still owns fd.  Returns 0 or -1 with errno (ERANGE
 * if the message would exceed maxsize).
 */
int	 imsg_compose(struct imsgbuf *, uint32_t type, uint32_t peerid,
	    int fd, const void *data, size_t datalen);

/* imsg_compose2: the same, with the payload gathered from two pieces. */
int	 imsg_compose2(struct imsgbuf *, uint32_t type, uint32_t peerid,
	    int fd, const void *d1, size_t l1, const void *d2, size_t l2);

/*
 * imsgbuf_write: write as much of the queue as the socket takes.
 * Returns 0 (queue may still hold data: check imsgbuf_queued), or -1 with
 * errno (EAGAIN/EINTR are handled internally and return 0; EPIPE etc. mean
 * the peer is gone).  Never raises SIGPIPE.
 */
int	 imsgbuf_write(struct imsgbuf *);

/* imsgbuf_flush: block until the queue is empty (start-up only). */
int	 imsgbuf_flush(struct imsgbuf *);

/* imsgbuf_queued: number of messages not yet completely written. */
size_t	 imsgbuf_queued(const struct imsgbuf *);

#endif /* NOPS_IMSG_H */
