/*
 * libFuzzer target: what the webworker parses of a request and what it
 * writes into a page (webworker/web_parse.c).  The input is split at its
 * first two NUL bytes into a form body (or query), a Cookie header and a
 * request target.  Invariants (abort on violation): a parsed form has
 * bounded, NUL-free, control-free fields and no name twice; a cookie
 * value holds only cookie-octets; path segments are never "", "." or ".."
 * and hold no '/'; escaped HTML holds no markup character; a redirect
 * target the check accepts starts with one '/'; percent-encoding round-
 * trips.
 */
/* FUZZ-SOURCES: webworker/web_parse.c shared/authc.c shared/hex.c shared/log.c */
/* FUZZ-SOURCES: shared/growbuf.c */
/* FUZZ-LIBS: libcrypto */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web_parse.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_text(const char *s, size_t max)
{
	size_t	 i, n = strlen(s);

	if (n > max)
		abort();
	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') ||
		    s[i] == 0x7f)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct web_form	 f;
	struct growbuf	 b;
	char		*buf, *cookie, *target, *dec;
	char		 v[WEB_COOKIE_VALUE_MAX];
	char		 segs[WEB_SEGS_MAX][WEB_SEG_MAX];
	const char	*why, *p;
	size_t		 i, j, formlen, enclen;
	int		 n;

	if ((buf = malloc(size + 3)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = buf[size + 2] = '\0';
	formlen = strnlen(buf, size);
	cookie = buf + formlen + 1;
	target = cookie + strlen(cookie) + 1;
	if (target > buf + size + 2)
		target = buf + size + 2;

	/* The form parser gets the raw bytes, NULs included. */
	if (web_form_parse(&f, buf, size, &why) == 0) {
		if (f.wf_n > WEB_FORM_FIELDS_MAX)
			abort();
		for (i = 0; i < f.wf_n; i++) {
			check_text(f.wf_name[i], WEB_FORM_NAME_MAX);
			check_text(f.wf_value[i], WEB_FORM_VALUE_MAX);
			if (*f.wf_name[i] == '\0')
				abort();
			for (j = 0; j < i; j++)
				if (strcmp(f.wf_name[i], f.wf_name[j]) == 0)
					abort();
			if (web_form_get(&f, f.wf_name[i]) != f.wf_value[i])
				abort();
		}
		web_form_free(&f);
	} else if (why == NULL || f.wf_n != 0)
		abort();

	if (web_cookie_get(cookie, "nops_csrf", v, sizeof(v)) == 1) {
		for (p = v; *p != '\0'; p++)
			if (*p <= 0x20 || *p == '"' || *p == ',' ||
			    *p == ';' || *p == '\\' || *p == 0x7f)
				abort();
	}

	if ((n = web_path_split(target, segs, WEB_SEGS_MAX)) >= 0) {
		if (target[0] != '/' || n > WEB_SEGS_MAX)
			abort();
		for (i = 0; i < (size_t)n; i++) {
			check_text(segs[i], WEB_SEG_MAX - 1);
			if (segs[i][0] == '\0' || strchr(segs[i], '/') ||
			    strcmp(segs[i], ".") == 0 ||
			    strcmp(segs[i], "..") == 0)
				abort();
		}
	}
	if (web_local_path(target) && (target[0] != '/' ||
	    target[1] == '/' || target[1] == '\\' || strchr(target, '\n')))
		abort();

	growbuf_init(&b);
	wbuf_html(&b, target);
	wbuf_htmlf(&b, "<p title=\"%s\">%s %d</p>", cookie, buf, n);
	if (b.gb_err)
		abort();
	/* Markup only where the format put it. */
	if (b.gb_len < 15 || strstr(b.gb_buf, "<p title=\"") == NULL)
		abort();
	for (p = b.gb_buf; *p != '\0'; p++)
		if (*p == '\'')
			abort();
	growbuf_free(&b);

	/* Percent-encoding round-trips. */
	growbuf_init(&b);
	wbuf_urlenc(&b, target);
	enclen = b.gb_len;
	if (b.gb_err)
		abort();
	if ((dec = malloc(enclen + 1)) == NULL) {
		growbuf_free(&b);
		free(buf);
		return 0;
	}
	if (enclen > 0) {
		n = web_urldecode(b.gb_buf, enclen, dec, enclen + 1, 0);
		/* Control bytes are refused on the way back; else equal. */
		if (n >= 0 && strcmp(dec, target) != 0)
			abort();
	}
	free(dec);
	growbuf_free(&b);
	free(buf);
	return 0;
}
