/*
 * libFuzzer target: bytes as a peer would write them to a channel, in
 * chunks, each read followed by an imsg_get() loop.  The first input byte
 * picks the channel's maxsize, the second the chunk size.  Invariants
 * (abort on violation): a message never exceeds maxsize, its length adds
 * up, no descriptor appears, the input buffer stays within its bound and
 * never fills while drained, and composing a received message again
 * gives back the same bytes.
 */
/* FUZZ-SOURCES: shared/imsg.c shared/log.c */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const size_t fuzz_maxsizes[] = { 16, 17, 64, 1000, 4096,
    IMSG_DEFAULT_MAX, 100, 33 };

/* Compose the message again and compare with what came in. */
static void
fuzz_recompose(struct imsgbuf *w, const struct imsg *m, const uint8_t *raw)
{
	struct imsg_hdr	 hdr;
	struct ibuf	*b;

	if (imsg_compose(w, m->hdr.type, m->hdr.peerid, -1, m->data,
	    m->datalen) == -1)
		abort();
	b = TAILQ_FIRST(&w->wq);
	if (b == NULL || b->size != m->hdr.len)
		abort();
	memcpy(&hdr, b->buf, sizeof(hdr));
	hdr.pid = m->hdr.pid;		/* ours differs, on purpose */
	if (memcmp(&hdr, raw, sizeof(hdr)) != 0 ||
	    memcmp(b->buf + IMSG_HEADER_SIZE, raw + IMSG_HEADER_SIZE,
	    m->datalen) != 0)
		abort();
	imsgbuf_clear(w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imsgbuf	 ib, w;
	struct imsg	 m;
	size_t		 maxsize, chunk, off = 0, taken = 0, k;
	ssize_t		 n;
	int		 sv[2], broken = 0;

	if (size < 2)
		return 0;
	maxsize = fuzz_maxsizes[data[0] % (sizeof(fuzz_maxsizes) /
	    sizeof(fuzz_maxsizes[0]))];
	chunk = (size_t)data[1] * 4 + 1;
	data += 2;
	size -= 2;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == -1)
		abort();
	if (imsgbuf_init(&ib, sv[1], 0, maxsize) == -1 ||
	    imsgbuf_init(&w, -1, 0, maxsize) == -1)
		abort();

	while (off < size && !broken) {
		k = size - off < chunk ? size - off : chunk;
		if (write(sv[0], data + off, k) != (ssize_t)k)
			abort();
		off += k;
		/* Drain the socket: a small maxsize takes several reads. */
		for (;;) {
			n = imsgbuf_read(&ib);
			if (n == -1 && errno == EAGAIN)
				break;
			if (n <= 0)
				abort();	/* no EOF, no ENOBUFS: drained */
			if (ib.rsize > maxsize + IMSG_HEADER_SIZE)
				abort();
			while ((n = imsg_get(&ib, &m)) > 0) {
				if ((size_t)n != m.hdr.len ||
				    m.hdr.len > maxsize ||
				    m.datalen != m.hdr.len - IMSG_HEADER_SIZE ||
				    m.fd != -1 ||
				    (m.datalen == 0) != (m.data == NULL))
					abort();
				fuzz_recompose(&w, &m, data + taken);
				taken += n;
				imsg_free(&m);
			}
			if (n == -1) {
				if (errno != EBADMSG)
					abort();
				broken = 1;
				break;
			}
		}
	}
	/* Whatever was not taken is one incomplete message. */
	if (!broken && taken + (ib.rlen - ib.rpos) != size)
		abort();
	imsgbuf_clear(&ib);
	imsgbuf_clear(&w);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
