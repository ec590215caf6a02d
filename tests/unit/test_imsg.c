/*
 * imsg framing over real socketpairs: partial and coalesced reads, size
 * limits on both sides, descriptor passing on and off, end of file, and
 * the write queue under back-pressure.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "test.h"

static void
mkpair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) == -1) {
		perror("socketpair");
		exit(2);
	}
}

static void
mkpipe(int p[2])
{
	/* Non-blocking: a descriptor that went astray fails, not hangs. */
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1) {
		perror("pipe2");
		exit(2);
	}
}

/* Open descriptors of this process (opendir's own one included). */
static int
count_fds(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL) {
		perror("/proc/self/fd");
		exit(2);
	}
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static int
fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/* A raw message: header + payload of 'fill' bytes, as a peer would. */
static size_t
raw_msg(uint8_t *buf, uint32_t type, uint32_t len, uint32_t peerid,
    uint8_t fill)
{
	struct imsg_hdr	 hdr;

	hdr.type = type;
	hdr.len = len;
	hdr.peerid = peerid;
	hdr.pid = 4242;
	memcpy(buf, &hdr, sizeof(hdr));
	if (len > IMSG_HEADER_SIZE)
		memset(buf + IMSG_HEADER_SIZE, fill, len - IMSG_HEADER_SIZE);
	return len;
}

static void
raw_write(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len) {
		perror("raw write");
		exit(2);
	}
}

/* sendmsg with SCM_RIGHTS, as a hostile or buggy peer might. */
static ssize_t
raw_send_fds(int sock, const void *buf, size_t len, const int *fds,
    size_t nfds)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int) * 8)];
	} cbuf;

	memset(&msg, 0, sizeof(msg));
	memset(&cbuf, 0, sizeof(cbuf));
	iov.iov_base = (void *)(uintptr_t)buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	return sendmsg(sock, &msg, MSG_NOSIGNAL);
}

static void
test_init(void)
{
	struct imsgbuf	 ib;
	int		 sv[2];

	TEST_BEGIN("imsg init checks maxsize and flags");
	mkpair(sv);
	errno = 0;
	CHECK(imsgbuf_init(&ib, sv[0], 0, IMSG_HEADER_SIZE - 1) == -1);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(imsgbuf_init(&ib, sv[0], 0x80, 0) == -1);
	CHECK(errno == EINVAL);
	CHECK(imsgbuf_init(&ib, sv[0], 0, IMSG_HEADER_SIZE) == 0);
	imsgbuf_clear(&ib);
	CHECK(imsgbuf_init(&ib, sv[0], 0, 0) == 0);
	CHECK(ib.maxsize == IMSG_DEFAULT_MAX);
	CHECK(ib.pid == getpid());
	imsgbuf_clear(&ib);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_roundtrip(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	int		 sv[2];

	TEST_BEGIN("imsg round trip of header fields and payloads");
	mkpair(sv);
	CHECK(imsgbuf_init(&a, sv[0], 0, 0) == 0);
	CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
	CHECK(imsg_compose(&a, 7, 99, -1, "hello", 5) == 0);
	CHECK(imsg_compose(&a, 8, 0xffffffffU, -1, NULL, 0) == 0);
	CHECK(imsg_compose2(&a, 9, 1, -1, "ab", 2, "cde", 3) == 0);
	CHECK(imsg_compose2(&a, 10, 2, -1, NULL, 0, "x", 1) == 0);
	CHECK(imsgbuf_queued(&a) == 4);
	CHECK(imsgbuf_flush(&a) == 0);
	CHECK(imsgbuf_queued(&a) == 0);
	CHECK(imsgbuf_read(&b) == 16 * 4 + 5 + 0 + 5 + 1);

	CHECK(imsg_get(&b, &m) == 21);
	CHECK(m.hdr.type == 7 && m.hdr.len == 21 && m.hdr.peerid == 99);
	CHECK(m.hdr.pid == (uint32_t)getpid());
	CHECK(m.datalen == 5 && m.data != NULL &&
	    memcmp(m.data, "hello", 5) == 0);
	CHECK(m.fd == -1);
	imsg_free(&m);
	CHECK(m.data == NULL);

	CHECK(imsg_get(&b, &m) == 16);
	CHECK(m.hdr.type == 8 && m.hdr.peerid == 0xffffffffU);
	CHECK(m.datalen == 0 && m.data == NULL && m.fd == -1);
	imsg_free(&m);

	CHECK(imsg_get(&b, &m) == 21);
	CHECK(m.hdr.type == 9 && m.datalen == 5 &&
	    memcmp(m.data, "abcde", 5) == 0);
	imsg_free(&m);

	CHECK(imsg_get(&b, &m) == 17);
	CHECK(m.hdr.type == 10 && m.datalen == 1 &&
	    memcmp(m.data, "x", 1) == 0);
	imsg_free(&m);

	CHECK(imsg_get(&b, &m) == 0);
	errno = 0;
	CHECK(imsgbuf_read(&b) == -1 && errno == EAGAIN);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_partial_bytes(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 buf[64];
	size_t		 len, i;
	int		 sv[2], early = 0, bad = 0;

	TEST_BEGIN("imsg partial read: byte by byte until complete");
	mkpair(sv);
	CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
	len = raw_msg(buf, 3, 16 + 10, 5, 'z');
	for (i = 0; i < len; i++) {
		raw_write(sv[0], buf + i, 1);
		if (imsgbuf_read(&b) != 1)
			bad = 1;
		if (i + 1 < len && imsg_get(&b, &m) != 0)
			early = 1;
	}
	CHECK(!bad);
	CHECK(!early);
	CHECK(imsg_get(&b, &m) == 26);
	CHECK(m.hdr.type == 3 && m.hdr.peerid == 5 && m.hdr.pid == 4242);
	CHECK(m.datalen == 10 && memcmp(m.data, "zzzzzzzzzz", 10) == 0);
	imsg_free(&m);
	CHECK(imsg_get(&b, &m) == 0);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_split(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 buf[256];
	size_t		 la, len, k;
	int		 sv[2], got, ok = 1;
	ssize_t		 n;

	TEST_BEGIN("imsg messages split across reads at every offset");
	la = raw_msg(buf, 1, 100, 11, 'a');
	len = la + raw_msg(buf + la, 2, 50, 22, 'b');
	for (k = 1; k < len && ok; k++) {
		mkpair(sv);
		CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
		got = 0;
		raw_write(sv[0], buf, k);
		if (imsgbuf_read(&b) != (ssize_t)k)
			ok = 0;
		while ((n = imsg_get(&b, &m)) > 0) {
			got++;
			imsg_free(&m);
		}
		if (n != 0 || got != (k >= la ? 1 : 0))
			ok = 0;
		raw_write(sv[0], buf + k, len - k);
		if (imsgbuf_read(&b) != (ssize_t)(len - k))
			ok = 0;
		while ((n = imsg_get(&b, &m)) > 0) {
			got++;
			if (got == 1 && (m.hdr.type != 1 || m.hdr.peerid != 11 ||
			    m.datalen != 84 || ((uint8_t *)m.data)[83] != 'a'))
				ok = 0;
			if (got == 2 && (m.hdr.type != 2 || m.hdr.peerid != 22 ||
			    m.datalen != 34 || ((uint8_t *)m.data)[0] != 'b'))
				ok = 0;
			imsg_free(&m);
		}
		if (n != 0 || got != 2)
			ok = 0;
		if (!ok)
			printf("# failed at split offset %zu\n", k);
		imsgbuf_clear(&b);
		close(sv[0]);
		close(sv[1]);
	}
	CHECK(ok);
	TEST_END();
}

static void
test_many(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	uint32_t	 i, v, order_ok = 1;
	uint8_t		 pay[20];
	int		 sv[2];

	TEST_BEGIN("imsg many messages in one read");
	mkpair(sv);
	CHECK(imsgbuf_init(&a, sv[0], 0, 0) == 0);
	CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
	memset(pay, 0, sizeof(pay));
	for (i = 0; i < 1000; i++) {
		memcpy(pay, &i, sizeof(i));
		CHECK(imsg_compose(&a, 1, i, -1, pay, sizeof(pay)) == 0);
	}
	CHECK(imsgbuf_flush(&a) == 0);
	CHECK(imsgbuf_read(&b) == 1000 * 36);
	for (i = 0; i < 1000; i++) {
		if (imsg_get(&b, &m) != 36) {
			order_ok = 0;
			break;
		}
		memcpy(&v, m.data, sizeof(v));
		if (m.hdr.peerid != i || v != i)
			order_ok = 0;
		imsg_free(&m);
	}
	CHECK(order_ok);
	CHECK(imsg_get(&b, &m) == 0);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_maxsize_send(void)
{
	struct imsgbuf	 a;
	static uint8_t	 big[2048];
	int		 sv[2];

	TEST_BEGIN("imsg maxsize on send: exact ok, one over ERANGE");
	mkpair(sv);
	CHECK(imsgbuf_init(&a, sv[0], 0, 1024) == 0);
	CHECK(imsg_compose(&a, 1, 0, -1, big, 1024 - 16) == 0);
	errno = 0;
	CHECK(imsg_compose(&a, 1, 0, -1, big, 1024 - 15) == -1);
	CHECK(errno == ERANGE);
	CHECK(imsg_compose2(&a, 1, 0, -1, big, 1000, big, 8) == 0);
	errno = 0;
	CHECK(imsg_compose2(&a, 1, 0, -1, big, 1000, big, 9) == -1);
	CHECK(errno == ERANGE);
	/* Lengths that would wrap a size_t sum must not slip through. */
	errno = 0;
	CHECK(imsg_compose2(&a, 1, 0, -1, big, SIZE_MAX, big, 32) == -1);
	CHECK(errno == ERANGE);
	CHECK(imsgbuf_queued(&a) == 2);
	imsgbuf_clear(&a);
	CHECK(imsgbuf_queued(&a) == 0);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_maxsize_recv(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	static uint8_t	 buf[2048];
	int		 sv[2];

	TEST_BEGIN("imsg maxsize on receive: exact ok, one over EBADMSG");
	mkpair(sv);
	CHECK(imsgbuf_init(&b, sv[1], 0, 1024) == 0);
	raw_write(sv[0], buf, raw_msg(buf, 1, 1024, 1, 'm'));
	CHECK(imsgbuf_read(&b) == 1024);
	CHECK(imsg_get(&b, &m) == 1024);
	CHECK(m.datalen == 1008);
	imsg_free(&m);
	/* The header alone is enough to refuse it. */
	raw_write(sv[0], buf, raw_msg(buf, 1, 1025, 2, 'm') - 1009);
	CHECK(imsgbuf_read(&b) == 16);
	errno = 0;
	CHECK(imsg_get(&b, &m) == -1);
	CHECK(errno == EBADMSG);
	CHECK(m.data == NULL && m.fd == -1);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

/* Move a queue from a to b until b yields one message. */
static ssize_t
pump_one(struct imsgbuf *a, struct imsgbuf *b, struct imsg *m)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 spins;

	for (spins = 0; spins < 100000; spins++) {
		if ((n = imsg_get(b, m)) != 0)
			return n;
		if (imsgbuf_write(a) == -1)
			return -1;
		pfd.fd = b->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 1000) != 1)
			return -1;
		n = imsgbuf_read(b);
		if (n == -1 && errno != EAGAIN)
			return -1;
		if (n == 0)
			return -1;
	}
	return -1;
}

static void
test_maxsize_default(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	uint8_t		*pay;
	size_t		 plen = IMSG_DEFAULT_MAX - IMSG_HEADER_SIZE, i;
	int		 sv[2], same = 1;

	TEST_BEGIN("imsg default maxsize message through a bounded buffer");
	mkpair(sv);
	CHECK(imsgbuf_init(&a, sv[0], 0, 0) == 0);
	CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
	if ((pay = malloc(plen)) == NULL)
		exit(2);
	for (i = 0; i < plen; i++)
		pay[i] = i * 7 + 3;
	CHECK(imsg_compose(&a, 5, 6, -1, pay, plen) == 0);
	CHECK(imsg_compose(&a, 5, 7, -1, "tail", 4) == 0);
	CHECK(pump_one(&a, &b, &m) == IMSG_DEFAULT_MAX);
	CHECK(m.datalen == plen);
	if (m.datalen == plen)
		same = memcmp(m.data, pay, plen) == 0;
	CHECK(same);
	imsg_free(&m);
	CHECK(pump_one(&a, &b, &m) == 20);
	CHECK(m.hdr.peerid == 7);
	imsg_free(&m);
	CHECK(b.rsize <= b.maxsize + IMSG_HEADER_SIZE);
	free(pay);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_short_len(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 buf[64];
	uint32_t	 lens[] = { 0, 1, 15 };
	size_t		 i;
	int		 sv[2];

	TEST_BEGIN("imsg header len < 16 is a framing error");
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		mkpair(sv);
		CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
		raw_msg(buf, 1, lens[i], 0, 0);
		memset(buf + 16, 0, 32);
		raw_write(sv[0], buf, 48);
		CHECK(imsgbuf_read(&b) == 48);
		errno = 0;
		CHECK(imsg_get(&b, &m) == -1);
		CHECK(errno == EBADMSG);
		/* It stays broken: the channel is to be dropped. */
		CHECK(imsg_get(&b, &m) == -1);
		imsgbuf_clear(&b);
		close(sv[0]);
		close(sv[1]);
	}
	TEST_END();
}

static void
test_eof(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 buf[64];
	int		 sv[2];

	TEST_BEGIN("imsg end of file, with and without a partial message");
	mkpair(sv);
	CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
	close(sv[0]);
	CHECK(imsgbuf_read(&b) == 0);
	imsgbuf_clear(&b);
	close(sv[1]);

	mkpair(sv);
	CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
	raw_msg(buf, 1, 40, 0, 'e');
	raw_write(sv[0], buf, 10);
	close(sv[0]);
	CHECK(imsgbuf_read(&b) == 10);
	CHECK(imsg_get(&b, &m) == 0);
	CHECK(imsgbuf_read(&b) == 0);
	CHECK(imsg_get(&b, &m) == 0);
	imsgbuf_clear(&b);
	close(sv[1]);
	TEST_END();
}

static void
test_nobufs(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 buf[256];
	size_t		 i, len = 0;
	int		 sv[2], got = 0;
	ssize_t		 n;

	TEST_BEGIN("imsg input buffer is bounded: ENOBUFS until drained");
	mkpair(sv);
	CHECK(imsgbuf_init(&b, sv[1], 0, 64) == 0);
	for (i = 0; i < 6; i++)
		len += raw_msg(buf + len, 1, 32, i, 'n');
	raw_write(sv[0], buf, len);
	CHECK(imsgbuf_read(&b) == 64 + 16);
	errno = 0;
	CHECK(imsgbuf_read(&b) == -1);
	CHECK(errno == ENOBUFS);
	CHECK(b.rsize == 64 + 16);
	while ((n = imsg_get(&b, &m)) > 0) {
		got++;
		imsg_free(&m);
	}
	CHECK(n == 0 && got == 2);
	CHECK(imsgbuf_read(&b) == 64);
	while ((n = imsg_get(&b, &m)) > 0) {
		CHECK(m.hdr.peerid == (uint32_t)got);
		got++;
		imsg_free(&m);
	}
	CHECK(imsgbuf_read(&b) == 48);
	while ((n = imsg_get(&b, &m)) > 0) {
		got++;
		imsg_free(&m);
	}
	CHECK(got == 6);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

/* Read b until it yields want messages; store them in ms. */
static int
collect(struct imsgbuf *a, struct imsgbuf *b, struct imsg *ms, int want)
{
	int	 i;

	/* Zeroed, so the caller may imsg_free all of them on failure. */
	memset(ms, 0, want * sizeof(*ms));
	for (i = 0; i < want; i++)
		if (pump_one(a, b, &ms[i]) <= 0)
			return i;
	return want;
}

static void
test_fd_on(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 ms[3];
	char		 c[4];
	int		 sv[2], p[2], before, i;

	TEST_BEGIN("imsg fd passing on: fd arrives with its message, usable");
	mkpair(sv);
	CHECK(imsgbuf_init(&a, sv[0], IMSGF_PASSFD, 0) == 0);
	CHECK(imsgbuf_init(&b, sv[1], IMSGF_PASSFD, 0) == 0);
	mkpipe(p);
	before = count_fds();
	CHECK(imsg_compose(&a, 1, 1, -1, "A", 1) == 0);
	CHECK(imsg_compose(&a, 2, 2, p[1], "B", 1) == 0);
	CHECK(imsg_compose(&a, 3, 3, -1, "C", 1) == 0);
	CHECK(imsgbuf_flush(&a) == 0);
	/* The channel closed its copy once sent. */
	CHECK(!fd_is_open(p[1]));
	CHECK(collect(&a, &b, ms, 3) == 3);
	CHECK(ms[0].hdr.type == 1 && ms[0].fd == -1);
	CHECK(ms[1].hdr.type == 2 && ms[1].fd != -1);
	CHECK(ms[2].hdr.type == 3 && ms[2].fd == -1);
	CHECK(write(ms[1].fd, "hi", 2) == 2);
	CHECK(read(p[0], c, sizeof(c)) == 2 && memcmp(c, "hi", 2) == 0);
	/* Closing the received copy leaves no writer: EOF on the pipe. */
	close(ms[1].fd);
	CHECK(read(p[0], c, sizeof(c)) == 0);
	CHECK(count_fds() == before - 1);
	for (i = 0; i < 3; i++)
		imsg_free(&ms[i]);
	close(p[0]);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_fd_interleaved(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 ms[12];
	int		 pipes[12][2];
	char		 c;
	int		 sv[2], i, ok = 1, before;

	TEST_BEGIN("imsg fd passing: each fd goes with its own message");
	mkpair(sv);
	CHECK(imsgbuf_init(&a, sv[0], IMSGF_PASSFD, 0) == 0);
	CHECK(imsgbuf_init(&b, sv[1], IMSGF_PASSFD, 0) == 0);
	before = count_fds();
	for (i = 0; i < 12; i++) {
		/* fds on 0, 2, 3, 4, 8, 11: adjacent ones and lone ones */
		if (i == 0 || i == 2 || i == 3 || i == 4 || i == 8 ||
		    i == 11) {
			mkpipe(pipes[i]);
			CHECK(imsg_compose(&a, 1, i, pipes[i][1], &i,
			    sizeof(i)) == 0);
		} else {
			pipes[i][0] = pipes[i][1] = -1;
			CHECK(imsg_compose(&a, 1, i, -1, &i, sizeof(i)) == 0);
		}
	}
	/* Everything is in the socket before the first read. */
	CHECK(imsgbuf_flush(&a) == 0);
	CHECK(collect(&a, &b, ms, 12) == 12);
	for (i = 0; i < 12; i++) {
		if (ms[i].hdr.peerid != (uint32_t)i) {
			ok = 0;
			continue;
		}
		if (pipes[i][0] == -1) {
			if (ms[i].fd != -1)
				ok = 0;
			continue;
		}
		c = 'a' + i;
		if (ms[i].fd == -1 || write(ms[i].fd, &c, 1) != 1) {
			ok = 0;
			continue;
		}
		c = 0;
		if (read(pipes[i][0], &c, 1) != 1 || c != 'a' + i)
			ok = 0;
		close(ms[i].fd);
		close(pipes[i][0]);
	}
	for (i = 0; i < 12; i++)
		imsg_free(&ms[i]);
	CHECK(ok);
	CHECK(count_fds() == before);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_fd_big(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 ms[3];
	static uint8_t	 pay[150000];
	int		 sv[2], p[2], sz = 8192, i, same;
	char		 c = 'q';

	TEST_BEGIN("imsg fd with a message larger than the socket buffer");
	mkpair(sv);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	CHECK(imsgbuf_init(&a, sv[0], IMSGF_PASSFD, 0) == 0);
	CHECK(imsgbuf_init(&b, sv[1], IMSGF_PASSFD, 0) == 0);
	mkpipe(p);
	for (i = 0; i < (int)sizeof(pay); i++)
		pay[i] = i % 251;
	CHECK(imsg_compose(&a, 1, 0, -1, pay, 30000) == 0);
	CHECK(imsg_compose(&a, 2, 0, p[1], pay, sizeof(pay)) == 0);
	CHECK(imsg_compose(&a, 3, 0, -1, pay, 30000) == 0);
	CHECK(imsgbuf_write(&a) == 0);
	CHECK(imsgbuf_queued(&a) > 0);
	CHECK(collect(&a, &b, ms, 3) == 3);
	CHECK(ms[0].hdr.type == 1 && ms[0].fd == -1);
	CHECK(ms[1].hdr.type == 2 && ms[1].fd != -1);
	CHECK(ms[2].hdr.type == 3 && ms[2].fd == -1);
	same = ms[1].datalen == sizeof(pay) &&
	    memcmp(ms[1].data, pay, sizeof(pay)) == 0;
	CHECK(same);
	CHECK(ms[1].fd == -1 || write(ms[1].fd, &c, 1) == 1);
	c = 0;
	CHECK(read(p[0], &c, 1) == 1 && c == 'q');
	if (ms[1].fd != -1)
		close(ms[1].fd);
	for (i = 0; i < 3; i++)
		imsg_free(&ms[i]);
	close(p[0]);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_fd_off_compose(void)
{
	struct imsgbuf	 a;
	int		 sv[2], p[2];

	TEST_BEGIN("imsg fd passing off: compose refuses, caller keeps fd");
	mkpair(sv);
	mkpipe(p);
	CHECK(imsgbuf_init(&a, sv[0], 0, 0) == 0);
	errno = 0;
	CHECK(imsg_compose(&a, 1, 0, p[1], "x", 1) == -1);
	CHECK(errno == EINVAL);
	CHECK(imsgbuf_queued(&a) == 0);
	CHECK(fd_is_open(p[1]));
	imsgbuf_clear(&a);
	CHECK(fd_is_open(p[1]));
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

/* A valid message carrying nfds descriptors, sent raw to a channel. */
static void
stray_fds(int flags, size_t nfds, const char *name)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 buf[64];
	int		 sv[2], fds[3], before;
	size_t		 i;

	TEST_BEGIN(name);
	mkpair(sv);
	CHECK(imsgbuf_init(&b, sv[1], flags, 0) == 0);
	for (i = 0; i < nfds; i++)
		if ((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
			exit(2);
	before = count_fds();
	CHECK(raw_send_fds(sv[0], buf, raw_msg(buf, 1, 20, 0, 's'), fds,
	    nfds) == 20);
	errno = 0;
	CHECK(imsgbuf_read(&b) == -1);
	CHECK(errno == EBADMSG);
	CHECK(count_fds() == before);
	CHECK(imsg_get(&b, &m) == 0);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_fd_mid_message(void)
{
	struct imsgbuf	 b;
	uint8_t		 buf[64];
	int		 sv[2], fd, before;

	TEST_BEGIN("imsg fd arriving where no message starts is refused");
	mkpair(sv);
	CHECK(imsgbuf_init(&b, sv[1], IMSGF_PASSFD, 0) == 0);
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		exit(2);
	raw_msg(buf, 1, 40, 0, 'm');
	raw_write(sv[0], buf, 10);
	CHECK(imsgbuf_read(&b) == 10);
	before = count_fds();
	CHECK(raw_send_fds(sv[0], buf + 10, 30, &fd, 1) == 30);
	errno = 0;
	CHECK(imsgbuf_read(&b) == -1);
	CHECK(errno == EBADMSG);
	CHECK(count_fds() == before);
	close(fd);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_clear_fds(void)
{
	struct imsgbuf	 a, b;
	uint8_t		 buf[64];
	char		 c;
	int		 sv[2], p[2], fd, before;

	TEST_BEGIN("imsg clear closes queued and received-unclaimed fds");
	mkpair(sv);
	CHECK(imsgbuf_init(&a, sv[0], IMSGF_PASSFD, 0) == 0);
	mkpipe(p);
	CHECK(imsg_compose(&a, 1, 0, p[1], NULL, 0) == 0);
	imsgbuf_clear(&a);
	CHECK(read(p[0], &c, 1) == 0);
	close(p[0]);

	/* A message whose first part (and fd) came, the rest did not. */
	CHECK(imsgbuf_init(&b, sv[1], IMSGF_PASSFD, 0) == 0);
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		exit(2);
	before = count_fds();
	raw_msg(buf, 1, 40, 0, 'c');
	CHECK(raw_send_fds(sv[0], buf, 10, &fd, 1) == 10);
	CHECK(imsgbuf_read(&b) == 10);
	CHECK(count_fds() == before + 1);
	imsgbuf_clear(&b);
	CHECK(count_fds() == before);
	close(fd);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_backpressure(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	struct pollfd	 pfd[2];
	static uint8_t	 pay[2000];
	uint32_t	 i, next = 0;
	int		 sv[2], sz = 4096, ok = 1, spins;
	ssize_t		 n;

	TEST_BEGIN("imsg write queue under back-pressure, then drained");
	mkpair(sv);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	CHECK(imsgbuf_init(&a, sv[0], 0, 0) == 0);
	CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
	for (i = 0; i < 500; i++) {
		memset(pay, i & 0xff, sizeof(pay));
		memcpy(pay, &i, sizeof(i));
		CHECK(imsg_compose(&a, 1, i, -1, pay, sizeof(pay)) == 0);
	}
	CHECK(imsgbuf_write(&a) == 0);
	CHECK(imsgbuf_queued(&a) > 0 && imsgbuf_queued(&a) < 500);
	/* The socket is full: another write is a no-op, not an error. */
	n = imsgbuf_queued(&a);
	CHECK(imsgbuf_write(&a) == 0);
	CHECK(imsgbuf_queued(&a) == (size_t)n);

	for (spins = 0; next < 500 && spins < 100000 && ok; spins++) {
		pfd[0].fd = sv[1];
		pfd[0].events = POLLIN;
		pfd[1].fd = sv[0];
		pfd[1].events = imsgbuf_queued(&a) ? POLLOUT : 0;
		if (poll(pfd, 2, 1000) <= 0) {
			ok = 0;
			break;
		}
		if (pfd[1].revents & POLLOUT)
			if (imsgbuf_write(&a) == -1)
				ok = 0;
		if (pfd[0].revents & POLLIN) {
			n = imsgbuf_read(&b);
			if (n == 0 || (n == -1 && errno != EAGAIN))
				ok = 0;
		}
		while ((n = imsg_get(&b, &m)) > 0) {
			memcpy(&i, m.data, sizeof(i));
			if (m.hdr.peerid != next || i != next ||
			    m.datalen != sizeof(pay) ||
			    ((uint8_t *)m.data)[1999] != (next & 0xff))
				ok = 0;
			next++;
			imsg_free(&m);
		}
		if (n == -1)
			ok = 0;
	}
	CHECK(ok);
	CHECK(next == 500);
	CHECK(imsgbuf_queued(&a) == 0);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_epipe(void)
{
	struct imsgbuf	 a;
	int		 sv[2];

	TEST_BEGIN("imsg write to a closed peer: EPIPE, no SIGPIPE");
	signal(SIGPIPE, SIG_DFL);	/* a SIGPIPE would kill this test */
	mkpair(sv);
	CHECK(imsgbuf_init(&a, sv[0], 0, 0) == 0);
	close(sv[1]);
	CHECK(imsg_compose(&a, 1, 0, -1, "x", 1) == 0);
	errno = 0;
	CHECK(imsgbuf_write(&a) == -1);
	CHECK(errno == EPIPE);
	CHECK(imsgbuf_queued(&a) == 1);
	imsgbuf_clear(&a);
	close(sv[0]);
	TEST_END();
}

int
main(void)
{
	alarm(60);	/* a hang is a failure too */
	test_init();
	test_roundtrip();
	test_partial_bytes();
	test_split();
	test_many();
	test_maxsize_send();
	test_maxsize_recv();
	test_maxsize_default();
	test_short_len();
	test_eof();
	test_nobufs();
	test_fd_on();
	test_fd_interleaved();
	test_fd_big();
	test_fd_off_compose();
	stray_fds(0, 1, "imsg fd on a channel without PASSFD: EBADMSG, closed");
	stray_fds(0, 3, "imsg several fds without PASSFD: all closed");
	stray_fds(IMSGF_PASSFD, 3,
	    "imsg several fds in one read with PASSFD: refused, all closed");
	test_fd_mid_message();
	test_clear_fds();
	test_backpressure();
	test_epipe();
	TEST_EXIT();
}
