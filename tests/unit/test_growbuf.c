/*
 * The growing buffer every process shares (shared/growbuf.c): doubling
 * from the first size, the NUL after the text, the sticky error, the cap,
 * and reset keeping the memory.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "growbuf.h"
#include "test.h"

int
main(void)
{
	struct growbuf	 b;
	char		 big[5000];
	char		*kept;

	memset(big, 'x', sizeof(big));

	TEST_BEGIN("growbuf: an empty add gives \"\", adds are NUL-terminated");
	growbuf_init(&b);
	CHECK(growbuf_add(&b, "", 0) == 0);
	CHECK_STR(b.gb_buf, "");
	CHECK(b.gb_len == 0 && b.gb_size == GROWBUF_FIRST);
	CHECK(growbuf_add(&b, "abcdef", 3) == 0);
	CHECK(growbuf_puts(&b, "de") == 0);
	CHECK_STR(b.gb_buf, "abcde");
	CHECK(b.gb_len == 5 && b.gb_err == 0);
	growbuf_free(&b);
	CHECK(b.gb_buf == NULL && b.gb_len == 0 && b.gb_size == 0);
	TEST_END();

	TEST_BEGIN("growbuf: grows by doubling from gb_first, text kept");
	growbuf_init(&b);
	b.gb_first = 16;
	CHECK(growbuf_add(&b, big, 15) == 0);
	CHECK(b.gb_size == 16);			/* 15 and the NUL */
	CHECK(growbuf_add(&b, "y", 1) == 0);
	CHECK(b.gb_size == 32);
	CHECK(growbuf_add(&b, big, 100) == 0);
	CHECK(b.gb_size == 128 && b.gb_len == 116);
	CHECK(b.gb_buf[15] == 'y' && b.gb_buf[116] == '\0');
	CHECK(strspn(b.gb_buf + 16, "x") == 100);
	growbuf_free(&b);
	growbuf_init(&b);
	CHECK(growbuf_add(&b, big, sizeof(big)) == 0);
	CHECK(b.gb_size == 8192 && b.gb_len == sizeof(big));
	CHECK(strlen(b.gb_buf) == sizeof(big));
	growbuf_free(&b);
	TEST_END();

	TEST_BEGIN("growbuf: an impossible size is a sticky error");
	growbuf_init(&b);
	CHECK(growbuf_puts(&b, "ok") == 0);
	CHECK(growbuf_add(&b, big, SIZE_MAX / 2) == -1);
	CHECK(b.gb_err == GROWBUF_NOMEM);
	CHECK(growbuf_puts(&b, "more") == -1);	/* every later add too */
	CHECK(growbuf_add(&b, "", 0) == -1);
	CHECK_STR(b.gb_buf, "ok");		/* what was there stays */
	CHECK(b.gb_len == 2);
	growbuf_reset(&b);
	CHECK(b.gb_err == 0 && b.gb_len == 0);
	CHECK_STR(b.gb_buf, "");
	CHECK(growbuf_puts(&b, "again") == 0);
	CHECK_STR(b.gb_buf, "again");
	growbuf_free(&b);
	TEST_END();

	TEST_BEGIN("growbuf: the cap holds gb_max bytes, not one more");
	growbuf_init(&b);
	b.gb_first = 4;
	b.gb_max = 10;
	CHECK(growbuf_add(&b, big, 6) == 0);
	CHECK(b.gb_size == 8);
	CHECK(growbuf_xadd(&b, big, 4) == 0);	/* exactly the cap */
	CHECK(b.gb_len == 10 && b.gb_size == 11);	/* clamped: 10 + NUL */
	CHECK(b.gb_buf[10] == '\0');
	CHECK(growbuf_xadd(&b, "z", 1) == -1);	/* not fatal: the cap */
	CHECK(b.gb_err == GROWBUF_TOOBIG && b.gb_len == 10);
	CHECK(growbuf_add(&b, "", 0) == -1);	/* sticky */
	kept = b.gb_buf;
	growbuf_reset(&b);	/* a retry: memory and cap kept */
	CHECK(b.gb_buf == kept && b.gb_size == 11 && b.gb_max == 10);
	CHECK(b.gb_err == 0 && b.gb_len == 0);
	CHECK(growbuf_add(&b, big, 11) == -1 && b.gb_err == GROWBUF_TOOBIG);
	growbuf_free(&b);
	TEST_END();

	TEST_EXIT();
}
