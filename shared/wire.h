/*
 * Payload layouts of the messages in the table (NOPS_IMSGS, nops.h):
 * for each, a struct and a table of its fields in payload order, from
 * which one generic encoder and one generic decoder work, so that a
 * layout exists in code once.  The web channel's layouts are below; the
 * other channels' in wire_*.h.
 *
 * wire_put_L() appends layout L's payload to a msgw (send it with
 * msg_send()).  wire_get_L() decodes a whole payload: it ends with
 * msg_end(), then runs the layout's check, which enforces the bounds of
 * nops.h and what the layout itself says (a status is an HTTP status, a
 * flag is 0 or 1); 0, or -1 with r->what naming the first failure.
 * Strings and blobs point into the payload: valid while the imsg lives.
 * A receiver does not call it itself: its dispatch decodes each message
 * once, through the table (imsg_decode(), shared/msgtab.h), and hands the
 * struct to the handler.  What a value means to the receiver (is this
 * request outstanding) is the handler's to check.  A new layout goes on
 * WIRE_LAYOUTS (msgtab.h) too.
 */
#ifndef NOPS_WIRE_H
#define NOPS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "nops.h"

/*
 * What a field is on the wire (msg.h says how each is encoded) and in
 * the struct: U8 to I64 an integer of that width; STR a const char *
 * of at most wf_max bytes; DATA a const void * and its size_t length
 * (at wf_aux) of at most wf_max bytes; LIST a uint32_t count of at most
 * wf_max items (more fail with wf_what), then each item's wf_items in
 * turn, item i's at wf_aux + i * wf_stride from the struct (parallel
 * arrays and arrays of structs alike); PART the fields of another
 * layout (wf_part), whose struct is the member, checked before this one.
 */
enum wire_kind {
	WIRE_U8,
	WIRE_U32,
	WIRE_I32,
	WIRE_U64,
	WIRE_I64,
	WIRE_STR,
	WIRE_DATA,
	WIRE_LIST,
	WIRE_PART,
};

struct wire_layout;

struct wire_field {
	enum wire_kind		 wf_kind;
	size_t			 wf_off;	/* the member */
	size_t			 wf_max;	/* STR, DATA bytes;
						   LIST items */
	size_t			 wf_aux;	/* DATA length;
						   LIST first item */
	size_t			 wf_stride;	/* LIST */
	const struct wire_field	*wf_items;	/* LIST */
	size_t			 wf_nitems;
	const char		*wf_what;	/* LIST: past wf_max */
	const struct wire_layout *wf_part;	/* PART */
};

/*
 * One row per field of struct wire_L, in payload order: WF_U32(L, member)
 * and so on; WF_DATA names the length member too.  Each row checks when
 * it is compiled that the member has its kind's type (WF_TYPE): a
 * uint32_t for WF_U32, a const char * for WF_STR, and so on, so that a
 * table cannot read a member as what it is not.
 */
#define WF_MEMBER(l, m)	(((struct wire_##l *)NULL)->m)
#define WF_TYPE(l, m, t)						\
	(offsetof(struct wire_##l, m) + 0 * sizeof(struct {		\
		_Static_assert(_Generic(WF_MEMBER(l, m), t: 1,		\
		    default: 0), "wire_" #l "." #m " is not " #t);	\
		int wf_unused;						\
	}))
#define WF_INT(k, l, m, t)	{ .wf_kind = (k),			\
	.wf_off = WF_TYPE(l, m, t) }
#define WF_U8(l, m)	WF_INT(WIRE_U8, l, m, uint8_t)
#define WF_U32(l, m)	WF_INT(WIRE_U32, l, m, uint32_t)
#define WF_I32(l, m)	WF_INT(WIRE_I32, l, m, int32_t)
#define WF_U64(l, m)	WF_INT(WIRE_U64, l, m, uint64_t)
#define WF_I64(l, m)	WF_INT(WIRE_I64, l, m, int64_t)
#define WF_STR(l, m, max)	{ .wf_kind = WIRE_STR,			\
	.wf_off = WF_TYPE(l, m, const char *), .wf_max = (max) }
#define WF_DATA(l, m, len, max)	{ .wf_kind = WIRE_DATA,			\
	.wf_off = WF_TYPE(l, m, const void *), .wf_max = (max),	\
	.wf_aux = WF_TYPE(l, len, size_t) }
/*
 * n, the count member, then n items of the table items: WF_STRS when
 * each item field is a WF_STR(L, array[0], max) of parallel arrays of
 * strings in the struct (headers' names and values), WF_RECS when an
 * item is a struct of the array member (items' rows are of its type).
 */
#define WF_STRS(l, n, max, what, items)					\
	{ .wf_kind = WIRE_LIST, .wf_off = WF_TYPE(l, n, uint32_t),	\
	.wf_max = (max), .wf_what = (what), .wf_aux = 0,		\
	.wf_stride = sizeof(const char *), .wf_items = (items),		\
	.wf_nitems = sizeof(items) / sizeof((items)[0]) }
#define WF_RECS(l, n, max, what, array, items)				\
	{ .wf_kind = WIRE_LIST, .wf_off = WF_TYPE(l, n, uint32_t),	\
	.wf_max = (max), .wf_what = (what),				\
	.wf_aux = offsetof(struct wire_##l, array),			\
	.wf_stride = sizeof(((struct wire_##l *)NULL)->array[0]),	\
	.wf_items = (items),						\
	.wf_nitems = sizeof(items) / sizeof((items)[0]) }
#define WF_PART(l, m, part)	{ .wf_kind = WIRE_PART,			\
	.wf_off = offsetof(struct wire_##l, m), .wf_part = (part) }

/* A layout: its fields, and the checks that follow msg_end() (or NULL). */
struct wire_layout {
	const char		*wl_name;
	const struct wire_field	*wl_fields;
	size_t			 wl_nfields;
	size_t			 wl_size;	/* of its struct */
	void			(*wl_check)(struct msgr *, const void *);
};

/*
 * The generic coder.  wire_put() refuses (ERANGE, on the msgw) a list
 * longer than its layout allows rather than read past the array.
 */
void	 wire_put(struct msgw *, const struct wire_layout *, const void *);
int	 wire_get(struct msgr *, const struct wire_layout *, void *);

/* Declares wire_layout_L, wire_put_L() and wire_get_L() of layout L. */
#define WIRE_DECLARE(l)							\
extern const struct wire_layout wire_layout_##l;			\
void	 wire_put_##l(struct msgw *, const struct wire_##l *);		\
int	 wire_get_##l(struct msgr *, struct wire_##l *)

/*
 * Defines them, from the field table f (an array) and the check c; the
 * struct is struct wire_L.  WIRE_DEFINE_N takes the table's length, for
 * a layout of no fields (f NULL, n 0).
 */
#define WIRE_DEFINE(l, f, c)						\
	WIRE_DEFINE_N(l, f, sizeof(f) / sizeof((f)[0]), c)
#define WIRE_DEFINE_N(l, f, n, c)					\
const struct wire_layout wire_layout_##l = {				\
	#l, (f), (n), sizeof(struct wire_##l), (c)			\
};									\
void									\
wire_put_##l(struct msgw *m, const struct wire_##l *p)			\
{									\
	wire_put(m, &wire_layout_##l, p);				\
}									\
int									\
wire_get_##l(struct msgr *r, struct wire_##l *p)			\
{									\
	return wire_get(r, &wire_layout_##l, p);			\
}

/*
 * Alike on purpose (whole file): one struct per layout, its members in
 * payload order, as in every wire_*.h; layouts whose fields have the
 * same types look alike and are still different messages.  A request's
 * tail and an answer hold the same members (content type, headers,
 * body) under the same names, which the webworker and the API use on
 * both; each has its own field table (wire.c).
 */

/*
 * IMSG_WEB_REQUEST (peerid: the request's id): u32 peer kind
 * (WEB_PEER_*), u32 uid, u32 gid (SO_PEERCRED of a control socket
 * client; 0 for TCP), str remote ("address:port"), u32 tls (0 or 1), str
 * method, str target (path?query), str content type, u32 n, n x (str
 * header name, str value), data body.
 */
struct wire_web_request {
	uint32_t	 peer;
	uint32_t	 uid;
	uint32_t	 gid;
	const char	*remote;
	uint32_t	 tls;
	const char	*method;
	const char	*target;
	const char	*ctype;
	uint32_t	 nheaders;
	const char	*hname[WEB_HEADERS_MAX];
	const char	*hvalue[WEB_HEADERS_MAX];
	const void	*body;
	size_t		 bodylen;
};
WIRE_DECLARE(web_request);

/*
 * An answer to an HTTP request: u32 status (100-599), str content type
 * (not empty), u32 n, n x (str header name (not empty), str value), data
 * body.  IMSG_WEB_RESPONSE (peerid: the request's id) is an answer;
 * IMSG_WEB_DOC is u32 class, str target (starts with '/'), an answer.
 */
struct wire_web_answer {
	uint32_t	 status;
	const char	*ctype;
	uint32_t	 nheaders;
	const char	*hname[WEB_HEADERS_MAX];
	const char	*hvalue[WEB_HEADERS_MAX];
	const void	*body;
	size_t		 bodylen;
};
WIRE_DECLARE(web_answer);

struct wire_web_doc {
	uint32_t	 cls;
	const char	*target;
	struct wire_web_answer answer;
};
WIRE_DECLARE(web_doc);

/* IMSG_WEB_WANT, IMSG_WEB_UNWANT, IMSG_WEB_STALE: u32 class, str target. */
struct wire_web_want {
	uint32_t	 cls;
	const char	*target;
};
WIRE_DECLARE(web_want);

/*
 * IMSG_WEB_LISTEN (fd: the listening socket, which the receiver checks is
 * there): u32 kind (WEB_LISTEN_*), str name, u32 tls (0 or 1; only for
 * TCP, and then with a certificate and a key), data certificate chain
 * (PEM), data key (PEM), u32 max-body-size, u32 host flags
 * (WEB_HOSTS_*), u32 n, n x str hostname, u32 connections per source.
 */
struct wire_web_listen {
	uint32_t	 kind;
	const char	*name;
	uint32_t	 tls;
	const void	*cert;
	size_t		 certlen;
	const void	*key;
	size_t		 keylen;
	uint32_t	 bodymax;
	uint32_t	 hflags;
	uint32_t	 nhosts;
	const char	*hosts[WEB_HOSTS_MAX];
	uint32_t	 persrc;
};
WIRE_DECLARE(web_listen);

/*
 * IMSG_WEB_SEEN: u32 n, n x (u32 kind (WEB_PRIN_*), str hash (64
 * characters), i64 at (0: a session found expired)), u32 m, m x (u32
 * HTTP status, u32 count).  See nops.h.
 */
#define WEB_SEEN_COUNT_MAX	10000000	/* answers of one status */
struct wire_web_seen_entry {
	uint32_t	 kind;
	const char	*hash;
	int64_t		 at;
};
struct wire_web_seen_code {
	uint32_t	 status;
	uint32_t	 count;
};
struct wire_web_seen {
	uint32_t	 nseen;
	struct wire_web_seen_entry seen[WEB_SEEN_MAX];
	uint32_t	 ncodes;
	struct wire_web_seen_code codes[WEB_CODES_MAX];
};
WIRE_DECLARE(web_seen);

#endif /* NOPS_WIRE_H */
