/*
 * Payload layouts of the messages in the table (NOPS_IMSGS, nops.h):
 * for each, a struct and the one encoder and decoder both ends and the
 * fuzzers use, so that a layout exists in code once.
 *
 * wire_put_*() appends the payload to a msgw (send it with msg_send()).
 * wire_get_*() decodes a whole payload: it ends with msg_end(), and
 * enforces the bounds of nops.h and what the layout itself says (a
 * status is an HTTP status, a flag is 0 or 1); 0, or -1 with r->what
 * naming the first failure.  Strings and blobs point into the payload:
 * valid while the imsg lives.  A receiver does not call it itself: its
 * dispatch decodes each message once, through the table (imsg_decode(),
 * shared/msgtab.h), and hands the struct to the handler.  What a value
 * means to the receiver (is this request outstanding) is the handler's
 * to check.  A new layout goes on WIRE_LAYOUTS (msgtab.h) too.
 */
#ifndef NOPS_WIRE_H
#define NOPS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "nops.h"

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
void	 wire_put_web_request(struct msgw *, const struct wire_web_request *);
int	 wire_get_web_request(struct msgr *, struct wire_web_request *);

/*
 * An answer to an HTTP request: u32 status (100-599), str content type
 * (not empty), u32 n, n x (str header name (not empty), str value), data
 * body.  IMSG_WEB_RESPONSE (peerid: the request's id) is an answer;
 * IMSG_WEB_DOC is u32 class, str target (starts with '/'), an answer.
 */
/* Alike on purpose: wire_web_request's tail; one header coder serves both. */
struct wire_web_answer {
	uint32_t	 status;
	const char	*ctype;
	uint32_t	 nheaders;
	const char	*hname[WEB_HEADERS_MAX];
	const char	*hvalue[WEB_HEADERS_MAX];
	const void	*body;
	size_t		 bodylen;
};
void	 wire_put_web_answer(struct msgw *, const struct wire_web_answer *);
int	 wire_get_web_answer(struct msgr *, struct wire_web_answer *);

struct wire_web_doc {
	uint32_t	 cls;
	const char	*target;
	struct wire_web_answer answer;
};
void	 wire_put_web_doc(struct msgw *, const struct wire_web_doc *);
int	 wire_get_web_doc(struct msgr *, struct wire_web_doc *);

/* IMSG_WEB_WANT, IMSG_WEB_UNWANT, IMSG_WEB_STALE: u32 class, str target. */
struct wire_web_want {
	uint32_t	 cls;
	const char	*target;
};
void	 wire_put_web_want(struct msgw *, const struct wire_web_want *);
int	 wire_get_web_want(struct msgr *, struct wire_web_want *);

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
void	 wire_put_web_listen(struct msgw *, const struct wire_web_listen *);
int	 wire_get_web_listen(struct msgr *, struct wire_web_listen *);

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
void	 wire_put_web_seen(struct msgw *, const struct wire_web_seen *);
int	 wire_get_web_seen(struct msgr *, struct wire_web_seen *);

#endif /* NOPS_WIRE_H */
