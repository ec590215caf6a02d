/*
 * Parsing and escaping for the webworker, in pure functions (see
 * web_parse.h).  Everything that comes from a client passes through here
 * before it is used, and everything that goes into a page passes through
 * wbuf_html().
 */
#include "config.h"

#include <sys/types.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authc.h"
#include "growbuf.h"
#include "hex.h"
#include "web_parse.h"

void
wbuf_htmln(struct growbuf *b, const char *s, size_t len)
{
	const char	*rep;
	size_t		 i, start = 0;

	if (s == NULL)
		return;
	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		default:
			continue;
		}
		growbuf_add(b, s + start, i - start);
		growbuf_puts(b, rep);
		start = i + 1;
	}
	growbuf_add(b, s + start, len - start);
}

void
wbuf_html(struct growbuf *b, const char *s)
{
	if (s != NULL)
		wbuf_htmln(b, s, strlen(s));
}

void
wbuf_vhtmlf(struct growbuf *b, const char *fmt, va_list ap)
{
	const char	*p, *start;
	char		 num[32];
	int		 lng;

	for (p = start = fmt; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		growbuf_add(b, start, p - start);
		p++;
		lng = 0;
		while (*p == 'l' && lng < 2) {
			lng++;
			p++;
		}
		if (*p == 'z' && lng == 0) {
			p++;
			if (*p != 'u') {
				b->gb_err = GROWBUF_BAD;
				return;
			}
			snprintf(num, sizeof(num), "%zu", va_arg(ap, size_t));
			growbuf_puts(b, num);
			start = p + 1;
			continue;
		}
		switch (*p) {
		case '%':
			if (lng != 0)
				goto bad;
			growbuf_puts(b, "%");
			break;
		case 's':
			if (lng != 0)
				goto bad;
			wbuf_html(b, va_arg(ap, const char *));
			break;
		case 'd':
			if (lng == 0)
				snprintf(num, sizeof(num), "%d",
				    va_arg(ap, int));
			else if (lng == 1)
				snprintf(num, sizeof(num), "%ld",
				    va_arg(ap, long));
			else
				snprintf(num, sizeof(num), "%lld",
				    va_arg(ap, long long));
			growbuf_puts(b, num);
			break;
		case 'u':
		case 'x':
			if (lng == 0)
				snprintf(num, sizeof(num), *p == 'u' ? "%u" :
				    "%x", va_arg(ap, unsigned int));
			else if (lng == 1)
				snprintf(num, sizeof(num), *p == 'u' ? "%lu" :
				    "%lx", va_arg(ap, unsigned long));
			else
				snprintf(num, sizeof(num), *p == 'u' ? "%llu" :
				    "%llx", va_arg(ap, unsigned long long));
			growbuf_puts(b, num);
			break;
		default:
			goto bad;
		}
		start = p + 1;
	}
	growbuf_add(b, start, p - start);
	return;
bad:
	/* A format of ours that this does not know: a bug, refuse it. */
	b->gb_err = GROWBUF_BAD;
}

void
wbuf_htmlf(struct growbuf *b, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	wbuf_vhtmlf(b, fmt, ap);
	va_end(ap);
}

static int
web_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~';
}

void
wbuf_urlenc(struct growbuf *b, const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			 e[3];

	if (s == NULL)
		return;
	for (; *s != '\0'; s++) {
		if (web_unreserved((unsigned char)*s)) {
			growbuf_add(b, s, 1);
			continue;
		}
		e[0] = '%';
		e[1] = hex[(unsigned char)*s >> 4];
		e[2] = hex[(unsigned char)*s & 0xf];
		growbuf_add(b, e, 3);
	}
}

int
web_urlenc(const char *s, char *dst, size_t dstlen)
{
	struct growbuf	 b;
	int		 rc = -1;

	growbuf_init(&b);
	wbuf_urlenc(&b, s);
	if (!b.gb_err && b.gb_len < dstlen) {
		memcpy(dst, b.gb_buf != NULL ? b.gb_buf : "", b.gb_len);
		dst[b.gb_len] = '\0';
		rc = (int)b.gb_len;
	}
	growbuf_free(&b);
	return rc;
}

int
web_urldecode(const char *src, size_t len, char *dst, size_t dstlen,
    int plus)
{
	ssize_t		 o;
	size_t		 i;
	unsigned char	 c;

	if ((o = hex_pct_decode(src, len, dst, dstlen,
	    plus ? HEX_PCT_PLUS : 0)) == -1)
		return -1;
	/* Nothing we take needs a control byte; tab is text. */
	for (i = 0; i < (size_t)o; i++) {
		c = (unsigned char)dst[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -1;
	}
	return (int)o;
}

void
web_form_free(struct web_form *f)
{
	size_t	 i;

	for (i = 0; i < f->wf_n; i++) {
		free(f->wf_name[i]);
		if (f->wf_value[i] != NULL) {
			explicit_bzero(f->wf_value[i], strlen(f->wf_value[i]));
			free(f->wf_value[i]);
		}
	}
	memset(f, 0, sizeof(*f));
}

int
web_form_parse(struct web_form *f, const char *src, size_t len,
    const char **why)
{
	const char	*p = src, *end = src + len, *amp, *eq;
	char		 name[WEB_FORM_NAME_MAX + 1];
	char		*value;
	size_t		 i, flen;

	memset(f, 0, sizeof(*f));
	*why = NULL;
	if (len > WEB_FORM_MAX) {
		*why = "form too large";
		return -1;
	}
	if ((value = malloc(WEB_FORM_VALUE_MAX + 1)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	while (p < end) {
		if ((amp = memchr(p, '&', end - p)) == NULL)
			amp = end;
		flen = amp - p;
		if (flen == 0) {
			/* "a=1&&b=2" or a trailing '&': nothing there. */
			p = amp + 1;
			continue;
		}
		if ((eq = memchr(p, '=', flen)) == NULL) {
			*why = "a form field without '='";
			goto bad;
		}
		if (f->wf_n >= WEB_FORM_FIELDS_MAX) {
			*why = "too many form fields";
			goto bad;
		}
		if (eq == p || web_urldecode(p, eq - p, name, sizeof(name),
		    1) <= 0) {
			*why = "a bad form field name";
			goto bad;
		}
		if (web_urldecode(eq + 1, amp - eq - 1, value,
		    WEB_FORM_VALUE_MAX + 1, 1) == -1) {
			*why = "a bad or too long form value";
			goto bad;
		}
		for (i = 0; i < f->wf_n; i++)
			if (strcmp(f->wf_name[i], name) == 0)
				break;
		if (i < f->wf_n) {
			/* Which one would count?  Refuse to guess. */
			*why = "a form field given twice";
			goto bad;
		}
		if ((f->wf_name[f->wf_n] = strdup(name)) == NULL ||
		    (f->wf_value[f->wf_n] = strdup(value)) == NULL) {
			free(f->wf_name[f->wf_n]);
			*why = "out of memory";
			goto bad;
		}
		f->wf_n++;
		p = amp + 1;
	}
	explicit_bzero(value, WEB_FORM_VALUE_MAX + 1);
	free(value);
	return 0;
bad:
	explicit_bzero(value, WEB_FORM_VALUE_MAX + 1);
	free(value);
	web_form_free(f);
	return -1;
}

/*
 * Alike on purpose: api_header (master/api.c) looks a request's header up
 * the same way, in another struct and without case (HTTP's names); a form's
 * names are exact.  A shared lookup would take both arrays and the compare.
 */
const char *
web_form_get(const struct web_form *f, const char *name)
{
	size_t	 i;

	for (i = 0; i < f->wf_n; i++)
		if (strcmp(f->wf_name[i], name) == 0)
			return f->wf_value[i];
	return NULL;
}

/* RFC 6265 cookie-octet. */
static int
web_cookie_octet(unsigned char c)
{
	return c == 0x21 || (c >= 0x23 && c <= 0x2b) ||
	    (c >= 0x2d && c <= 0x3a) || (c >= 0x3c && c <= 0x5b) ||
	    (c >= 0x5d && c <= 0x7e);
}

int
web_cookie_get(const char *header, const char *name, char *out,
    size_t outlen)
{
	const char	*p = header, *semi, *eq, *v, *vend;
	size_t		 nlen = strlen(name), vlen, i;
	int		 found = 0;

	if (outlen == 0)
		return -1;
	out[0] = '\0';
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t')
			p++;
		semi = p + strcspn(p, ";");
		eq = memchr(p, '=', semi - p);
		if (eq != NULL && (size_t)(eq - p) == nlen &&
		    strncmp(p, name, nlen) == 0) {
			/* Two cookies of one name: which is ours?  Neither. */
			if (found)
				return -1;
			found = 1;
			v = eq + 1;
			vend = semi;
			while (vend > v && (vend[-1] == ' ' ||
			    vend[-1] == '\t'))
				vend--;
			if (vend - v >= 2 && v[0] == '"' && vend[-1] == '"') {
				v++;
				vend--;
			}
			vlen = vend - v;
			if (vlen >= outlen)
				return -1;
			for (i = 0; i < vlen; i++)
				if (!web_cookie_octet((unsigned char)v[i]))
					return -1;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
		}
		p = *semi == ';' ? semi + 1 : semi;
	}
	return found;
}

const char *
web_target_query(const char *target)
{
	const char	*q = strchr(target, '?');

	return q != NULL ? q + 1 : "";
}

int
web_path_split(const char *target, char segs[][WEB_SEG_MAX], size_t maxsegs)
{
	const char	*p = target, *end, *slash;
	size_t		 n = 0;

	if (*p != '/')
		return -1;
	end = p + strcspn(p, "?#");
	p++;
	while (p < end) {
		if ((slash = memchr(p, '/', end - p)) == NULL)
			slash = end;
		if (slash == p)		/* "//": an empty segment */
			return -1;
		if (n >= maxsegs)
			return -1;
		if (web_urldecode(p, slash - p, segs[n], WEB_SEG_MAX,
		    0) <= 0 || strchr(segs[n], '/') != NULL ||
		    strcmp(segs[n], ".") == 0 || strcmp(segs[n], "..") == 0)
			return -1;
		n++;
		p = slash + 1;
	}
	return (int)n;
}

int
web_local_path(const char *s)
{
	size_t	 i;

	if (s == NULL || s[0] != '/' || s[1] == '/' || s[1] == '\\' ||
	    strlen(s) > 1024)
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f ||
		    s[i] == '\\')
			return 0;
	return 1;
}

int
web_token_eq(const char *a, const char *b)
{
	/* An empty token proves nothing. */
	return *a != '\0' && auth_equal(a, b);
}

int
web_token_valid(const char *s)
{
	return hex_lower(s, WEB_TOKEN_HEXLEN);
}
