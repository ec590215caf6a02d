/*
 * Unit tests of webworker/web_parse.c: the HTML escape every page uses,
 * the HTML formatter, URL encoding and decoding, the form and cookie
 * parsers, request paths, redirect targets and token comparison.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web_parse.h"
#include "test.h"

static const char *
esc(const char *s)
{
	static char	 out[1024];
	struct growbuf	 b;

	growbuf_init(&b);
	wbuf_html(&b, s);
	snprintf(out, sizeof(out), "%s", b.gb_buf != NULL ? b.gb_buf : "");
	growbuf_free(&b);
	return out;
}

static void
test_escape(void)
{
	struct growbuf	 b;
	const char	*all = "<script>alert('x')</script>&\"";

	TEST_BEGIN("html escape: the five characters become entities");
	CHECK_STR(esc(all), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
	    "&amp;&quot;");
	CHECK_STR(esc("plain text, ünïcode"), "plain text, ünïcode");
	CHECK_STR(esc(""), "");
	CHECK_STR(esc("&amp;"), "&amp;amp;");
	TEST_END();

	TEST_BEGIN("html escape: no markup character survives");
	CHECK(strpbrk(esc(all), "<>\"'") == NULL);
	growbuf_init(&b);
	wbuf_html(&b, NULL);
	CHECK(b.gb_len == 0 && !b.gb_err);
	wbuf_htmln(&b, "a<b", 2);
	CHECK_STR(b.gb_buf, "a&lt;");
	growbuf_free(&b);
	TEST_END();

	TEST_BEGIN("htmlf: the format is markup, every %s is escaped");
	growbuf_init(&b);
	wbuf_htmlf(&b, "<a href=\"/x/%s\">%s</a> %d %u %lld %zu %x %%",
	    "\"><img src=x>", "<b>", -3, 7u, -9000000000LL, (size_t)42, 255u);
	CHECK_STR(b.gb_buf, "<a href=\"/x/&quot;&gt;&lt;img src=x&gt;\">"
	    "&lt;b&gt;</a> -3 7 -9000000000 42 ff %");
	CHECK(!b.gb_err);
	growbuf_free(&b);
	TEST_END();

	TEST_BEGIN("htmlf: an unknown conversion marks the buffer bad");
	growbuf_init(&b);
	wbuf_htmlf(&b, "%s", "ok");
	CHECK(!b.gb_err);
	wbuf_htmlf(&b, "%p", (void *)&b);
	CHECK(b.gb_err);
	growbuf_puts(&b, "more");	/* ignored once bad */
	CHECK_STR(b.gb_buf, "ok");
	growbuf_free(&b);
	TEST_END();

	TEST_BEGIN("wbuf: grows past its first allocation");
	growbuf_init(&b);
	for (int i = 0; i < 10000; i++)
		growbuf_puts(&b, "<");
	CHECK(b.gb_len == 10000 && !b.gb_err);
	growbuf_free(&b);
	growbuf_init(&b);
	for (int i = 0; i < 3000; i++)
		wbuf_html(&b, "<");
	CHECK(b.gb_len == 12000 && strncmp(b.gb_buf, "&lt;&lt;", 8) == 0);
	growbuf_free(&b);
	TEST_END();
}

static void
test_url(void)
{
	char	 out[64];

	TEST_BEGIN("urlenc: only unreserved characters stay");
	CHECK(web_urlenc("a b/c?d&e=f%g~h.i_j-k", out, sizeof(out)) > 0);
	CHECK_STR(out, "a%20b%2Fc%3Fd%26e%3Df%25g~h.i_j-k");
	CHECK(web_urlenc("\xc3\xbc", out, sizeof(out)) == 6);
	CHECK_STR(out, "%C3%BC");
	CHECK(web_urlenc("abcdef", out, 4) == -1);
	TEST_END();

	TEST_BEGIN("urldecode: escapes, plus, and what is refused");
	CHECK(web_urldecode("a%20b+c", 7, out, sizeof(out), 1) == 5);
	CHECK_STR(out, "a b c");
	CHECK(web_urldecode("a+b", 3, out, sizeof(out), 0) == 3);
	CHECK_STR(out, "a+b");
	CHECK(web_urldecode("%zz", 3, out, sizeof(out), 1) == -1);
	CHECK(web_urldecode("%4", 2, out, sizeof(out), 1) == -1);
	CHECK(web_urldecode("%", 1, out, sizeof(out), 1) == -1);
	CHECK(web_urldecode("a%00b", 5, out, sizeof(out), 1) == -1);
	CHECK(web_urldecode("a%0d%0ab", 8, out, sizeof(out), 1) == -1);
	CHECK(web_urldecode("a%09b", 5, out, sizeof(out), 1) == 3);
	CHECK(web_urldecode("abcd", 4, out, 4, 1) == -1);
	CHECK(web_urldecode("abc", 3, out, 4, 1) == 3);
	TEST_END();
}

static void
test_form(void)
{
	struct web_form	 f;
	const char	*why;
	char		*big;

	TEST_BEGIN("form: fields, decoding, empty values");
	CHECK(web_form_parse(&f, "csrf=ab%2Bc&reason=a+b&empty=&&", 30,
	    &why) == 0);
	CHECK(f.wf_n == 3);
	CHECK_STR(web_form_get(&f, "csrf"), "ab+c");
	CHECK_STR(web_form_get(&f, "reason"), "a b");
	CHECK_STR(web_form_get(&f, "empty"), "");
	CHECK(web_form_get(&f, "missing") == NULL);
	web_form_free(&f);
	CHECK(web_form_parse(&f, "", 0, &why) == 0 && f.wf_n == 0);
	web_form_free(&f);
	TEST_END();

	TEST_BEGIN("form: malformed bodies are refused whole");
	CHECK(web_form_parse(&f, "a=1&a=2", 7, &why) == -1);
	CHECK(why != NULL && strstr(why, "twice") != NULL);
	CHECK(f.wf_n == 0);
	CHECK(web_form_parse(&f, "novalue", 7, &why) == -1);
	CHECK(web_form_parse(&f, "=x", 2, &why) == -1);
	CHECK(web_form_parse(&f, "a=%zz", 5, &why) == -1);
	CHECK(web_form_parse(&f, "a=%00", 5, &why) == -1);
	CHECK(web_form_parse(&f, "a\0b=1", 5, &why) == -1);
	CHECK(web_form_parse(&f, "a=1\nb=2", 7, &why) == -1);
	CHECK(web_form_parse(&f, "a=b=c", 5, &why) == 0 &&
	    strcmp(web_form_get(&f, "a"), "b=c") == 0);
	web_form_free(&f);
	TEST_END();

	TEST_BEGIN("form: bounds on size, fields, names and values");
	big = malloc(WEB_FORM_MAX + 2);
	memset(big, 'a', WEB_FORM_MAX + 1);
	big[0] = 'x';
	big[1] = '=';
	CHECK(web_form_parse(&f, big, WEB_FORM_MAX + 1, &why) == -1);
	CHECK(web_form_parse(&f, big, WEB_FORM_VALUE_MAX + 2, &why) == 0);
	web_form_free(&f);
	CHECK(web_form_parse(&f, big, WEB_FORM_VALUE_MAX + 3, &why) == -1);
	free(big);
	CHECK(web_form_parse(&f, "a=1&b=1&c=1&d=1&e=1&f=1&g=1&h=1&i=1&j=1&"
	    "k=1&l=1&m=1&n=1&o=1&p=1&q=1", 67, &why) == -1);
	CHECK(web_form_parse(&f, "abcdefghijklmnopqrstuvwxyzabcdefg=1",
	    35, &why) == -1);
	TEST_END();
}

static void
test_cookie(void)
{
	char	 v[WEB_COOKIE_VALUE_MAX];
	char	 longc[WEB_COOKIE_VALUE_MAX + 32];

	TEST_BEGIN("cookie: found among others, quoted, absent");
	CHECK(web_cookie_get("a=1; nops_csrf=abc; b=2", "nops_csrf", v,
	    sizeof(v)) == 1);
	CHECK_STR(v, "abc");
	CHECK(web_cookie_get("nops_csrf=\"q\"", "nops_csrf", v,
	    sizeof(v)) == 1);
	CHECK_STR(v, "q");
	CHECK(web_cookie_get("x_nops_csrf=1;nops_csrfx=2", "nops_csrf", v,
	    sizeof(v)) == 0);
	CHECK(web_cookie_get("", "nops_csrf", v, sizeof(v)) == 0);
	CHECK(web_cookie_get("garbage;;;=;", "nops_csrf", v, sizeof(v)) == 0);
	TEST_END();

	TEST_BEGIN("cookie: twice, too long or bad bytes is malformed");
	CHECK(web_cookie_get("nops_csrf=a; nops_csrf=b", "nops_csrf", v,
	    sizeof(v)) == -1);
	CHECK(web_cookie_get("nops_csrf=a b", "nops_csrf", v,
	    sizeof(v)) == -1);
	CHECK(web_cookie_get("nops_csrf=a\\b", "nops_csrf", v,
	    sizeof(v)) == -1);
	CHECK(web_cookie_get("nops_csrf=a,b", "nops_csrf", v,
	    sizeof(v)) == -1);
	CHECK(web_cookie_get("nops_csrf=\x01", "nops_csrf", v,
	    sizeof(v)) == -1);
	memset(longc, 'a', sizeof(longc));
	memcpy(longc, "nops_csrf=", 10);
	longc[sizeof(longc) - 1] = '\0';
	CHECK(web_cookie_get(longc, "nops_csrf", v, sizeof(v)) == -1);
	TEST_END();
}

static void
test_path(void)
{
	char	 s[WEB_SEGS_MAX][WEB_SEG_MAX];
	char	 longp[WEB_SEG_MAX + 8];

	TEST_BEGIN("path: segments, decoded, up to the query");
	CHECK(web_path_split("/", s, WEB_SEGS_MAX) == 0);
	CHECK(web_path_split("/?x=1", s, WEB_SEGS_MAX) == 0);
	CHECK(web_path_split("/jobs/default/my%20job?cursor=a/b", s,
	    WEB_SEGS_MAX) == 3);
	CHECK_STR(s[0], "jobs");
	CHECK_STR(s[2], "my job");
	CHECK(web_path_split("/deployments/12/", s, WEB_SEGS_MAX) == 2);
	CHECK(web_path_split("/a+b", s, WEB_SEGS_MAX) == 1);
	CHECK_STR(s[0], "a+b");
	TEST_END();

	TEST_BEGIN("path: traversal, empty segments, bad escapes refused");
	CHECK(web_path_split("", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("jobs", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("//evil", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/a//b", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/a/../b", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/a/%2e%2e/b", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/a/./b", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/a%2fb", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/a%00", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/a%0a", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/%g0", s, WEB_SEGS_MAX) == -1);
	CHECK(web_path_split("/1/2/3/4/5/6/7/8/9", s, WEB_SEGS_MAX) == -1);
	memset(longp, 'a', sizeof(longp));
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	CHECK(web_path_split(longp, s, WEB_SEGS_MAX) == -1);
	TEST_END();

	TEST_BEGIN("path: query of a target");
	CHECK_STR(web_target_query("/a?b=1&c"), "b=1&c");
	CHECK_STR(web_target_query("/a"), "");
	TEST_END();

	TEST_BEGIN("redirect targets stay on this site");
	CHECK(web_local_path("/"));
	CHECK(web_local_path("/deployments/12?x=1"));
	CHECK(!web_local_path(NULL));
	CHECK(!web_local_path(""));
	CHECK(!web_local_path("//evil.example/"));
	CHECK(!web_local_path("/\\evil.example/"));
	CHECK(!web_local_path("https://evil.example/"));
	CHECK(!web_local_path("/a\r\nSet-Cookie: x=1"));
	CHECK(!web_local_path("/a b"));
	CHECK(!web_local_path("javascript:alert(1)"));
	TEST_END();
}

static void
test_tokens(void)
{
	TEST_BEGIN("tokens: equal only when equal, never when empty");
	CHECK(web_token_eq("abc", "abc"));
	CHECK(!web_token_eq("abc", "abd"));
	CHECK(!web_token_eq("abc", "abcd"));
	CHECK(!web_token_eq("", ""));
	CHECK(web_token_valid("0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef"));
	CHECK(!web_token_valid("0123456789ABCDEF0123456789abcdef"
	    "0123456789abcdef0123456789abcdef"));
	CHECK(!web_token_valid("abc"));
	TEST_END();
}

int
main(void)
{
	test_escape();
	test_url();
	test_form();
	test_cookie();
	test_path();
	test_tokens();
	TEST_EXIT();
}
