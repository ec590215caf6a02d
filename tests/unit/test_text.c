/*
 * The boundary policy for text (shared/text.c) and the JSON builders
 * that cannot return NULL (master/jsonb.c): UTF-8 checked to the letter
 * (overlong forms, surrogates, past U+10FFFF, cut sequences), controls
 * (C0, DEL, C1) dropped, lengths bounded and cut between characters.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "text.h"
#include "jsonb.h"
#include "test.h"

/* Valid UTF-8 (strict), like Python's decode("utf-8"). */
static int
valid(const char *s, size_t len)
{
	return text_valid(s, len);
}

int
main(void)
{
	char	 buf[64], big[4096], *d;
	json_t	*j;
	size_t	 n, i;

	TEST_BEGIN("text_utf8_len: every length, and what is not UTF-8");
	CHECK(text_utf8_len("a", 1) == 1);
	CHECK(text_utf8_len("\xc3\xa9", 2) == 2);
	CHECK(text_utf8_len("\xe2\x80\xa6", 3) == 3);
	CHECK(text_utf8_len("\xf0\x9d\x84\x9e", 4) == 4);
	CHECK(text_utf8_len("\xff", 1) == 0);
	CHECK(text_utf8_len("\xc3", 1) == 0);		/* cut */
	CHECK(text_utf8_len("\xe2\x80", 3) == 0);	/* NUL inside */
	CHECK(text_utf8_len("\xc0\xaf", 2) == 0);	/* overlong '/' */
	CHECK(text_utf8_len("\xe0\x80\xaf", 3) == 0);	/* overlong */
	CHECK(text_utf8_len("\xed\xa0\x80", 3) == 0);	/* surrogate */
	CHECK(text_utf8_len("\xf4\x90\x80\x80", 4) == 0); /* > U+10FFFF */
	CHECK(text_utf8_len("\x80", 1) == 0);		/* continuation */
	CHECK(text_utf8_len("", 0) == 0);
	TEST_END();

	TEST_BEGIN("text_path_parts_ok: no empty, \".\" or \"..\" part");
	CHECK(text_path_parts_ok("a"));
	CHECK(text_path_parts_ok("a/b.c/..d"));
	CHECK(!text_path_parts_ok("a//b"));
	CHECK(!text_path_parts_ok("./a"));
	CHECK(!text_path_parts_ok("a/../b"));
	CHECK(!text_path_parts_ok(".."));
	CHECK(!text_path_parts_ok("a/"));
	CHECK(!text_path_parts_ok("/a"));
	TEST_END();

	TEST_BEGIN("text_check: names text, refuses controls and bad bytes");
	CHECK(text_check("Tess Ter <tess@example.org>", 27) == NULL);
	CHECK(text_check("h\xc3\xa9llo \xe2\x80\x93 \xe2\x9c\x93", 14) ==
	    NULL);
	CHECK(text_check("a\rb", 3) != NULL);
	CHECK(text_check("a\x7f", 2) != NULL);
	CHECK(text_check("a\xc2\x9b" "31m", 6) != NULL);	/* C1 CSI */
	CHECK(strstr(text_check("\xe2\x82", 2), "UTF-8") != NULL);
	CHECK(strstr(text_check("x\x1b", 2), "control") != NULL);
	CHECK(text_check("a\0b", 3) != NULL);
	TEST_END();

	TEST_BEGIN("text_clean: bad bytes become U+FFFD, controls go");
	text_clean(buf, sizeof(buf), "a\tb\xff\xc3\xa9\x01z\x1b[31m", 13, 0);
	CHECK_STR(buf, "a b\xef\xbf\xbd\xc3\xa9z[31m");
	text_clean(buf, sizeof(buf), "l1\r\nl2\tx\x07", 9, TEXT_LINES);
	CHECK_STR(buf, "l1\nl2\tx");
	text_clean(buf, sizeof(buf), "\xc2\x85\xc2\xa0", 4, 0);
	CHECK_STR(buf, "\xc2\xa0");			/* NEL goes, NBSP stays */
	CHECK(text_check(buf, strlen(buf)) == NULL);
	TEST_END();

	TEST_BEGIN("text_clean: cut between characters, marked with U+2026");
	n = text_clean(buf, 8, "ab\xc3\xa9\xc3\xa9\xc3\xa9", 8, 0);
	CHECK(n <= 7 && valid(buf, n));
	CHECK_STR(buf, "ab\xc3\xa9\xe2\x80\xa6");
	n = text_clean(buf, 3, "\xc3\xa9\xc3\xa9", 4, 0);
	CHECK(n == 2 && strcmp(buf, "\xc3\xa9") == 0);
	n = text_clean(buf, 2, "\xc3\xa9", 2, 0);
	CHECK(n == 0 && buf[0] == '\0');		/* no half a letter */
	n = text_clean(buf, sizeof(buf), "fits", 4, 0);
	CHECK(n == 4 && strcmp(buf, "fits") == 0);
	TEST_END();

	TEST_BEGIN("text_clean: every cut of 1,200 bytes of \"é\" is valid");
	for (i = 0; i < 1200; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	for (i = 1; i < 80; i++) {
		n = text_clean(buf, i, big, 1200, 0);
		CHECK(n < i && valid(buf, n) && strlen(buf) == n);
	}
	TEST_END();

	TEST_BEGIN("text_printf / text_dup / text_clean_inplace");
	n = text_printf(buf, 10, 0, "%s%s", "1234567", "\xc3\xa9\xc3\xa9");
	CHECK(valid(buf, n) && n <= 9);
	d = text_dup("\xff\xfe", 2, 100, 0);
	CHECK_STR(d, "\xef\xbf\xbd\xef\xbf\xbd");
	free(d);
	d = text_dup("\xc3\xa9\xc3\xa9\xc3\xa9", 6, 4, 0);
	CHECK(strlen(d) <= 4 && valid(d, strlen(d)));
	free(d);
	strlcpy(buf, "a\x1b[2Jb\xff", sizeof(buf));
	text_clean_inplace(buf, sizeof(buf), 0);
	CHECK_STR(buf, "a[2Jb\xef\xbf\xbd");
	strlcpy(buf, "ok", sizeof(buf));
	text_clean_inplace(buf, 3, 0);
	CHECK_STR(buf, "ok");
	TEST_END();

	TEST_BEGIN("jsonb: never NULL, whatever the text");
	j = jsonb_str("\xff\xfe");
	CHECK(j != NULL && json_is_string(j) &&
	    strcmp(json_string_value(j), "\xef\xbf\xbd\xef\xbf\xbd") == 0);
	json_decref(j);
	j = jsonb_str(NULL);
	CHECK(j != NULL && json_is_null(j));
	json_decref(j);
	j = jsonb_strn("a\0b", 3);
	CHECK(j != NULL && strcmp(json_string_value(j), "ab") == 0);
	json_decref(j);
	/* A pack jansson refuses gives the shape asked for, logged. */
	j = jsonb_pack("{s:s}", "k", "\xc3");
	CHECK(j != NULL && json_is_object(j) && json_object_size(j) == 0);
	json_decref(j);
	j = jsonb_pack("[s]", "\xff");
	CHECK(j != NULL && json_is_array(j));
	json_decref(j);
	j = jsonb_pack("{s:o}", "k", jsonb_str("\xe9t\xe9"));
	CHECK(j != NULL && json_object_size(j) == 1);
	d = jsonb_dump(j, JSON_COMPACT);
	CHECK(d != NULL && valid(d, strlen(d)));
	free(d);
	json_decref(j);
	j = jsonb_printf("%s/%s", "ns", "\xff");
	CHECK(j != NULL && json_is_string(j));
	json_decref(j);
	TEST_END();

	TEST_EXIT();
}
