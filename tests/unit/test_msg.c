/*
 * Typed payloads: round trips of every type through a real channel, and
 * decoders that must fail closed on truncated, overlong or malformed
 * fields, keep the first failure, and refuse trailing bytes.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "msg.h"
#include "test.h"

/* A hand-built payload, as a hostile sender would write it. */
struct raw {
	uint8_t	 b[512];
	size_t	 n;
};

static void
raw_put(struct raw *r, const void *p, size_t n)
{
	if (r->n + n > sizeof(r->b))
		abort();
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void
raw_u32(struct raw *r, uint32_t v)
{
	raw_put(r, &v, sizeof(v));
}

static void
test_roundtrip(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	struct msgw	 w;
	struct msgr	 r;
	const char	*s1, *s2, *s3;
	const void	*d1, *d2;
	size_t		 l1, l2;
	uint8_t		 u8;
	uint32_t	 u32a, u32b;
	int32_t		 i32;
	uint64_t	 u64;
	int64_t		 i64a, i64b;
	char		*dup;
	const uint8_t	 blob[] = { 0, 1, 0, 0xff, 'x', 0 };
	int		 sv[2];

	TEST_BEGIN("msg round trip of every type through a channel");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == -1)
		exit(2);
	CHECK(imsgbuf_init(&a, sv[0], 0, 0) == 0);
	CHECK(imsgbuf_init(&b, sv[1], 0, 0) == 0);
	msg_init(&w);
	msg_add_u8(&w, 0xfe);
	msg_add_u32(&w, 0);
	msg_add_u32(&w, UINT32_MAX);
	msg_add_i32(&w, INT32_MIN);
	msg_add_u64(&w, UINT64_MAX - 1);
	msg_add_i64(&w, INT64_MIN);
	msg_add_i64(&w, -1);
	msg_add_str(&w, "hello, world");
	msg_add_str(&w, "");
	msg_add_str(&w, NULL);
	msg_add_data(&w, blob, sizeof(blob));
	msg_add_data(&w, NULL, 0);
	msg_add_str(&w, "copy me");
	CHECK(w.err == 0);
	CHECK(msg_send(&w, &a, 42, 7, -1) == 0);
	CHECK(w.buf == NULL && w.len == 0);
	CHECK(imsgbuf_flush(&a) == 0);
	CHECK(imsgbuf_read(&b) > 0);
	CHECK(imsg_get(&b, &m) > 0);
	CHECK(m.hdr.type == 42 && m.hdr.peerid == 7);

	msg_reader(&r, &m);
	CHECK(msg_get_u8(&r, &u8) == 0 && u8 == 0xfe);
	CHECK(msg_get_u32(&r, &u32a) == 0 && u32a == 0);
	CHECK(msg_get_u32(&r, &u32b) == 0 && u32b == UINT32_MAX);
	CHECK(msg_get_i32(&r, &i32) == 0 && i32 == INT32_MIN);
	CHECK(msg_get_u64(&r, &u64) == 0 && u64 == UINT64_MAX - 1);
	CHECK(msg_get_i64(&r, &i64a) == 0 && i64a == INT64_MIN);
	CHECK(msg_get_i64(&r, &i64b) == 0 && i64b == -1);
	CHECK(msg_get_str(&r, &s1, 12) == 0);
	CHECK_STR(s1, "hello, world");
	CHECK(msg_get_str(&r, &s2, 0) == 0);
	CHECK_STR(s2, "");
	CHECK(msg_get_str(&r, &s3, 0) == 0);
	CHECK_STR(s3, "");
	CHECK(msg_get_data(&r, &d1, &l1, sizeof(blob)) == 0);
	CHECK(l1 == sizeof(blob) && memcmp(d1, blob, sizeof(blob)) == 0);
	CHECK(msg_get_data(&r, &d2, &l2, 0) == 0 && l2 == 0);
	CHECK(msg_get_strdup(&r, &dup, 64) == 0);
	CHECK_STR(dup, "copy me");
	/* A copy, not a pointer into the payload. */
	CHECK(dup < (char *)m.data || dup >= (char *)m.data + m.datalen);
	free(dup);
	CHECK(msg_end(&r) == 0);
	CHECK(r.err == 0 && r.what == NULL);
	imsg_free(&m);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

static void
test_layout(void)
{
	struct msgw	 w;
	struct raw	 want;

	TEST_BEGIN("msg wire layout: u32 length, bytes, NUL for strings");
	memset(&want, 0, sizeof(want));
	raw_u32(&want, 3);
	raw_put(&want, "abc", 4);
	raw_u32(&want, 2);
	raw_put(&want, "\0z", 2);
	raw_put(&want, "\x01", 1);
	msg_init(&w);
	msg_add_str(&w, "abc");
	msg_add_data(&w, "\0z", 2);
	msg_add_u8(&w, 1);
	CHECK(w.len == want.n && memcmp(w.buf, want.b, want.n) == 0);
	msg_free(&w);
	CHECK(w.buf == NULL);
	TEST_END();
}

/* Each integer decoder needs exactly its size: short fails, long trails. */
static void
test_int_sizes(void)
{
	struct msgr	 r;
	uint8_t		 buf[16], u8;
	uint32_t	 u32;
	int32_t		 i32;
	uint64_t	 u64;
	int64_t		 i64;

	memset(buf, 0xab, sizeof(buf));
	TEST_BEGIN("msg integers decode only at their exact size");
	msg_reader_buf(&r, buf, 0);
	CHECK(msg_get_u8(&r, &u8) == -1 && u8 == 0);
	CHECK_STR(r.what, "u8: short payload");

	msg_reader_buf(&r, buf, 3);
	CHECK(msg_get_u32(&r, &u32) == -1 && u32 == 0);
	CHECK_STR(r.what, "u32: short payload");
	CHECK(msg_end(&r) == -1);
	msg_reader_buf(&r, buf, 4);
	CHECK(msg_get_u32(&r, &u32) == 0 && u32 == 0xabababab);
	CHECK(msg_end(&r) == 0);
	msg_reader_buf(&r, buf, 5);
	CHECK(msg_get_u32(&r, &u32) == 0);
	CHECK(msg_end(&r) == -1);
	CHECK_STR(r.what, "trailing bytes");

	msg_reader_buf(&r, buf, 3);
	CHECK(msg_get_i32(&r, &i32) == -1 && i32 == 0);
	CHECK_STR(r.what, "i32: short payload");

	msg_reader_buf(&r, buf, 7);
	CHECK(msg_get_u64(&r, &u64) == -1 && u64 == 0);
	CHECK_STR(r.what, "u64: short payload");
	CHECK(msg_end(&r) == -1);
	msg_reader_buf(&r, buf, 8);
	CHECK(msg_get_u64(&r, &u64) == 0 && u64 == 0xababababababababULL);
	CHECK(msg_end(&r) == 0);
	msg_reader_buf(&r, buf, 9);
	CHECK(msg_get_u64(&r, &u64) == 0);
	CHECK(msg_end(&r) == -1);

	msg_reader_buf(&r, buf, 7);
	CHECK(msg_get_i64(&r, &i64) == -1 && i64 == 0);
	CHECK_STR(r.what, "i64: short payload");
	msg_reader_buf(&r, buf, 8);
	CHECK(msg_get_i64(&r, &i64) == 0 && msg_end(&r) == 0);
	TEST_END();
}

static void
test_str_truncated(void)
{
	struct raw	 p;
	struct msgr	 r;
	const char	*s = "sentinel";

	TEST_BEGIN("msg truncated strings fail");
	memset(&p, 0, sizeof(p));
	raw_u32(&p, 10);
	raw_put(&p, "hello", 5);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, 64) == -1);
	CHECK(s == NULL);
	CHECK_STR(r.what, "str: past the end");

	/* The NUL is part of the encoding: exactly the bytes, no NUL. */
	memset(&p, 0, sizeof(p));
	raw_u32(&p, 5);
	raw_put(&p, "hello", 5);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, 64) == -1);
	CHECK_STR(r.what, "str: past the end");

	/* Not even the length. */
	msg_reader_buf(&r, p.b, 3);
	CHECK(msg_get_str(&r, &s, 64) == -1);
	CHECK_STR(r.what, "str: short length");

	/* A length near 2^32 must not wrap the bound check. */
	memset(&p, 0, sizeof(p));
	raw_u32(&p, UINT32_MAX);
	raw_put(&p, "abc", 4);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, SIZE_MAX) == -1);
	CHECK_STR(r.what, "str: past the end");
	TEST_END();
}

static void
test_str_maxlen(void)
{
	struct raw	 p;
	struct msgr	 r;
	const char	*s;
	char		*d;

	TEST_BEGIN("msg strings are bounded by maxlen, NUL not counted");
	memset(&p, 0, sizeof(p));
	raw_u32(&p, 10);
	raw_put(&p, "0123456789", 11);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, 10) == 0);
	CHECK_STR(s, "0123456789");
	CHECK(msg_end(&r) == 0);

	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, 9) == -1 && s == NULL);
	CHECK_STR(r.what, "str: longer than allowed");
	CHECK(msg_end(&r) == -1);

	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_strdup(&r, &d, 9) == -1 && d == NULL);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_strdup(&r, &d, 10) == 0);
	CHECK_STR(d, "0123456789");
	free(d);
	TEST_END();
}

static void
test_str_nul(void)
{
	struct raw	 p;
	struct msgr	 r;
	const char	*s;

	TEST_BEGIN("msg strings: missing NUL and embedded NUL fail");
	memset(&p, 0, sizeof(p));
	raw_u32(&p, 3);
	raw_put(&p, "abcX", 4);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, 64) == -1 && s == NULL);
	CHECK_STR(r.what, "str: missing NUL");

	memset(&p, 0, sizeof(p));
	raw_u32(&p, 3);
	raw_put(&p, "a\0c\0", 4);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, 64) == -1 && s == NULL);
	CHECK_STR(r.what, "str: embedded NUL");

	/* An embedded NUL in the last byte before the terminator. */
	memset(&p, 0, sizeof(p));
	raw_u32(&p, 3);
	raw_put(&p, "ab\0\0", 4);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, 64) == -1);
	CHECK_STR(r.what, "str: embedded NUL");
	TEST_END();
}

static void
test_data(void)
{
	struct raw	 p;
	struct msgr	 r;
	const void	*d;
	size_t		 len;

	TEST_BEGIN("msg blobs: past the end, over maxlen, exact");
	memset(&p, 0, sizeof(p));
	raw_u32(&p, 100);
	raw_put(&p, "0123456789", 10);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_data(&r, &d, &len, 1000) == -1);
	CHECK(d == NULL && len == 0);
	CHECK_STR(r.what, "data: past the end");

	memset(&p, 0, sizeof(p));
	raw_u32(&p, UINT32_MAX);
	raw_put(&p, "0123456789", 10);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_data(&r, &d, &len, SIZE_MAX) == -1);
	CHECK_STR(r.what, "data: past the end");

	memset(&p, 0, sizeof(p));
	raw_u32(&p, 10);
	raw_put(&p, "0123456789", 10);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_data(&r, &d, &len, 9) == -1);
	CHECK_STR(r.what, "data: longer than allowed");
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_data(&r, &d, &len, 10) == 0);
	CHECK(len == 10 && memcmp(d, "0123456789", 10) == 0);
	CHECK(msg_end(&r) == 0);

	/* One byte short of the announced length. */
	msg_reader_buf(&r, p.b, p.n - 1);
	CHECK(msg_get_data(&r, &d, &len, 10) == -1);
	CHECK_STR(r.what, "data: past the end");

	msg_reader_buf(&r, p.b, 2);
	CHECK(msg_get_data(&r, &d, &len, 10) == -1);
	CHECK_STR(r.what, "data: short length");
	TEST_END();
}

static void
test_trailing(void)
{
	struct raw	 p;
	struct msgr	 r;
	const char	*s;

	TEST_BEGIN("msg_end refuses trailing bytes");
	memset(&p, 0, sizeof(p));
	raw_u32(&p, 2);
	raw_put(&p, "ok", 3);
	raw_put(&p, "!", 1);
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_get_str(&r, &s, 8) == 0);
	CHECK(msg_end(&r) == -1);
	CHECK_STR(r.what, "trailing bytes");
	/* Nothing read at all from a non-empty payload is trailing too. */
	msg_reader_buf(&r, p.b, p.n);
	CHECK(msg_end(&r) == -1);
	/* An empty payload ends cleanly. */
	msg_reader_buf(&r, NULL, 0);
	CHECK(msg_end(&r) == 0);
	TEST_END();
}

static void
test_sticky(void)
{
	struct raw	 p;
	struct msgr	 r;
	uint64_t	 u64 = 5;
	uint8_t		 u8 = 5;
	uint32_t	 u32 = 5;
	const char	*s = "x";
	const void	*d = "x";
	size_t		 len = 5;

	TEST_BEGIN("msg errors are sticky; the first what is kept");
	memset(&p, 0, sizeof(p));
	raw_u32(&p, 1);
	raw_put(&p, "a", 2);
	raw_put(&p, "\x07", 1);
	msg_reader_buf(&r, p.b, p.n);
	/* Misread as a u64 (7 bytes: too short), then the fields that fit. */
	CHECK(msg_get_u64(&r, &u64) == -1 && u64 == 0);
	CHECK(msg_get_u32(&r, &u32) == -1 && u32 == 0);
	CHECK(msg_get_str(&r, &s, 8) == -1 && s == NULL);
	CHECK(msg_get_u8(&r, &u8) == -1 && u8 == 0);
	CHECK(msg_get_data(&r, &d, &len, 8) == -1 && d == NULL && len == 0);
	CHECK(msg_end(&r) == -1);
	CHECK_STR(r.what, "u64: short payload");
	CHECK(r.err != 0);

	msg_reader_buf(&r, p.b, p.n);
	msg_fail(&r, "peer kind out of range");
	CHECK(msg_get_u32(&r, &u32) == -1);
	CHECK(msg_end(&r) == -1);
	CHECK_STR(r.what, "peer kind out of range");
	msg_fail(&r, "second reason");
	CHECK_STR(r.what, "peer kind out of range");
	TEST_END();
}

static void
test_send_limits(void)
{
	struct imsgbuf	 a;
	struct msgw	 w;
	static uint8_t	 big[100];
	int		 sv[2];

	TEST_BEGIN("msg_send: over maxsize is ERANGE and frees the payload");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == -1)
		exit(2);
	CHECK(imsgbuf_init(&a, sv[0], 0, 64) == 0);
	msg_init(&w);
	msg_add_data(&w, big, 44);		/* 16 + 4 + 44 = 64 */
	CHECK(msg_send(&w, &a, 1, 0, -1) == 0);
	msg_init(&w);
	msg_add_data(&w, big, 45);
	errno = 0;
	CHECK(msg_send(&w, &a, 1, 0, -1) == -1);
	CHECK(errno == ERANGE);
	CHECK(w.buf == NULL && w.len == 0);
	CHECK(imsgbuf_queued(&a) == 1);

	/* A writer whose add failed refuses to send anything. */
	msg_init(&w);
	msg_add_u32(&w, 1);
	msg_add_data(&w, NULL, 5);
	msg_add_u32(&w, 2);
	CHECK(w.err != 0);
	errno = 0;
	CHECK(msg_send(&w, &a, 1, 0, -1) == -1);
	CHECK(errno != 0);
	CHECK(imsgbuf_queued(&a) == 1);
	imsgbuf_clear(&a);
	close(sv[0]);
	close(sv[1]);
	TEST_END();
}

int
main(void)
{
	test_roundtrip();
	test_layout();
	test_int_sizes();
	test_str_truncated();
	test_str_maxlen();
	test_str_nul();
	test_data();
	test_trailing();
	test_sticky();
	test_send_limits();
	TEST_EXIT();
}
