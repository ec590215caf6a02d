/*
 * Typed payloads: a growing buffer for the sender, a cursor for the
 * receiver that fails closed on the first malformed field.
 * Ideas from OpenSMTPD's mproc m_add_* / m_get_*; written for nops.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"
#include "log.h"
#include "msg.h"

static int	 msg_reserve(struct msgw *, size_t);
static void	 msg_add(struct msgw *, const void *, size_t);
static int	 msg_take(struct msgr *, void *, size_t, const char *);
static int	 msg_bad(struct msgr *, const char *);
static int	 msg_peek_len(struct msgr *, size_t, size_t, uint32_t *,
		    const uint8_t **);

void
msg_init(struct msgw *w)
{
	memset(w, 0, sizeof(*w));
}

/* Make room for n more bytes; errors stick in w->err. */
static int
msg_reserve(struct msgw *w, size_t n)
{
	size_t	 need, nsize;
	uint8_t	*p;

	if (w->err)
		return -1;
	if (n > UINT32_MAX || w->len > SIZE_MAX - n) {
		w->err = ERANGE;
		return -1;
	}
	need = w->len + n;
	if (need <= w->size)
		return 0;
	nsize = w->size < 64 ? 64 : w->size;
	while (nsize < need)
		nsize = nsize > SIZE_MAX / 2 ? need : nsize * 2;
	/* recallocarray clears what it frees: payloads may hold secrets. */
	if ((p = recallocarray(w->buf, w->size, nsize, 1)) == NULL) {
		w->err = ENOMEM;
		return -1;
	}
	w->buf = p;
	w->size = nsize;
	return 0;
}

static void
msg_add(struct msgw *w, const void *data, size_t n)
{
	if (msg_reserve(w, n) == -1)
		return;
	if (n > 0)
		memcpy(w->buf + w->len, data, n);
	w->len += n;
}

void
msg_add_str(struct msgw *w, const char *s)
{
	size_t		 n;
	uint32_t	 n32;

	if (s == NULL)
		s = "";
	n = strlen(s);
	if (n >= UINT32_MAX) {
		w->err = ERANGE;
		return;
	}
	n32 = n;
	if (msg_reserve(w, sizeof(n32) + n + 1) == -1)
		return;
	msg_add(w, &n32, sizeof(n32));
	msg_add(w, s, n + 1);
}

void
msg_add_data(struct msgw *w, const void *data, size_t n)
{
	uint32_t	 n32;

	if (n > UINT32_MAX || (data == NULL && n > 0)) {
		w->err = ERANGE;
		return;
	}
	n32 = n;
	if (msg_reserve(w, sizeof(n32) + n) == -1)
		return;
	msg_add(w, &n32, sizeof(n32));
	msg_add(w, data, n);
}

int
msg_send(struct msgw *w, struct imsgbuf *ibuf, uint32_t type,
    uint32_t peerid, int fd)
{
	int	 rv, saved_errno;

	if (w->err) {
		saved_errno = w->err;
		msg_free(w);
		errno = saved_errno;
		return -1;
	}
	rv = imsg_compose(ibuf, type, peerid, fd, w->buf, w->len);
	saved_errno = errno;
	msg_free(w);
	errno = saved_errno;
	return rv;
}

void
msg_free(struct msgw *w)
{
	freezero(w->buf, w->size);
	memset(w, 0, sizeof(*w));
}

void
msg_reader(struct msgr *r, const struct imsg *imsg)
{
	msg_reader_buf(r, imsg->data, imsg->datalen);
}

void
msg_reader_buf(struct msgr *r, const void *buf, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->len = buf == NULL ? 0 : len;
}

/* Record the first failure only: later ones are its consequences. */
static int
msg_bad(struct msgr *r, const char *what)
{
	if (!r->err) {
		r->err = EBADMSG;
		r->what = what;
	}
	return -1;
}

void
msg_fail(struct msgr *r, const char *what)
{
	msg_bad(r, what);
}

/* Copy exactly n bytes out, or fail with nothing consumed. */
static int
msg_take(struct msgr *r, void *out, size_t n, const char *what)
{
	if (r->err)
		return -1;
	if (r->len - r->off < n)
		return msg_bad(r, what);
	memcpy(out, r->buf + r->off, n);
	r->off += n;
	return 0;
}

/*
 * The integers: one adder and one getter per width, msg_add_u8() and
 * msg_get_u8() and so on; a getter zeroes its output before it reads.
 */
#define MSG_INT(name, type)						\
void									\
msg_add_##name(struct msgw *w, type v)					\
{									\
	msg_add(w, &v, sizeof(v));					\
}									\
int									\
msg_get_##name(struct msgr *r, type *v)					\
{									\
	*v = 0;								\
	return msg_take(r, v, sizeof(*v), #name ": short payload");	\
}
MSG_INT(u8, uint8_t)
MSG_INT(u32, uint32_t)
MSG_INT(i32, int32_t)
MSG_INT(u64, uint64_t)
MSG_INT(i64, int64_t)

/*
 * The uint32 length in front of a string (nul 1: a NUL follows it) or a
 * blob (nul 0): at most maxlen, with all its bytes in the payload; *p
 * points at them.  Nothing is consumed: the caller moves r->off past
 * the length and the bytes once it has checked them.
 */
static int
msg_peek_len(struct msgr *r, size_t nul, size_t maxlen, uint32_t *n,
    const uint8_t **p)
{
	static const char *const what[2][3] = {
		{ "data: short length", "data: longer than allowed",
		    "data: past the end" },
		{ "str: short length", "str: longer than allowed",
		    "str: past the end" },
	};
	size_t	 off0 = r->off;

	*p = NULL;
	if (msg_take(r, n, sizeof(*n), what[nul][0]) == -1)
		return -1;
	r->off = off0;
	/* Compare in size_t: n + 1 cannot wrap there. */
	if (*n > maxlen)
		return msg_bad(r, what[nul][1]);
	if (r->len - r->off - sizeof(*n) < (size_t)*n + nul)
		return msg_bad(r, what[nul][2]);
	*p = r->buf + r->off + sizeof(*n);
	return 0;
}

int
msg_get_str(struct msgr *r, const char **out, size_t maxlen)
{
	const uint8_t	*p;
	const char	*s;
	uint32_t	 n;

	*out = NULL;
	if (msg_peek_len(r, 1, maxlen, &n, &p) == -1)
		return -1;
	s = (const char *)p;
	if (s[n] != '\0')
		return msg_bad(r, "str: missing NUL");
	if (memchr(s, '\0', n) != NULL)
		return msg_bad(r, "str: embedded NUL");
	r->off += sizeof(n) + (size_t)n + 1;
	*out = s;
	return 0;
}

int
msg_get_strdup(struct msgr *r, char **out, size_t maxlen)
{
	const char	*s;

	*out = NULL;
	if (msg_get_str(r, &s, maxlen) == -1)
		return -1;
	if ((*out = strdup(s)) == NULL)
		fatal(NULL);
	return 0;
}

int
msg_get_data(struct msgr *r, const void **out, size_t *len, size_t maxlen)
{
	const uint8_t	*p;
	uint32_t	 n;

	*out = NULL;
	*len = 0;
	if (msg_peek_len(r, 0, maxlen, &n, &p) == -1)
		return -1;
	*out = p;
	*len = n;
	r->off += sizeof(n) + (size_t)n;
	return 0;
}

int
msg_end(struct msgr *r)
{
	if (r->err)
		return -1;
	if (r->off != r->len)
		return msg_bad(r, "trailing bytes");
	return 0;
}
