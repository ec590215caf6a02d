/*
 * What the webworker's files share: the sockets it serves, the
 * connections it tracks (web_conn.c), the requests it answers or passes
 * to the master (webworker.c), the state the master pushes for reads
 * (identities in web_auth.c, documents in web_docs.c), and the
 * dashboard's pages, which it renders from JSON answers to calls it
 * makes on the client's behalf (web_dash.c, web_html*.c).
 *
 * The split: GETs of read documents and of GET /api/v1/session are
 * answered here from what the master pushed; everything else (writes,
 * HEAD, other routes) goes to the master, which checks the ACL and
 * answers.  Until the master has pushed an identity table, everything
 * goes to the master.
 */
#ifndef NOPS_WEB_H
#define NOPS_WEB_H

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>
#include <openssl/ssl.h>

#include "authc.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "web_parse.h"

struct bufferevent;
struct event_base;
struct evconnlistener;
struct evhttp;
struct evhttp_request;

/* Limits (libevent's defaults are unlimited: each one is set). */
#define WEB_HEADERS_SIZE	(16 * 1024)	/* request line + headers:
						   431 */
#define WEB_HEADERS_HARD	(64 * 1024)	/* libevent's, never reached */
#define WEB_IDLE_TIMEOUT	30	/* s: no byte either way; keep-alive */
/* WEB_IDLE_TIMEOUT, or a test hook's "idle-timeout:N" (1 to 30 s). */
int	 web_idle_timeout(void);
#ifdef NOPS_TEST_HOOKS
/* The worker's test hook NAME[:ARG]: ARG ("" without), or NULL. */
const char *web_testhook(const char *name);
#endif
#define WEB_HEADER_DEADLINE	10	/* s: accept to a whole request */
#define WEB_REFUSED_DEADLINE	2	/* s: for a connection past the cap */
#define WEB_CONN_MAX		256	/* TCP connections served at once */
#define WEB_CONN_GRACE		64	/* past the cap: 503, then no accept */
#define WEB_LINGER		2	/* s: reading what follows a refusal */
#define WEB_CHUNK_LINE_MAX	64	/* a chunk-size line */
#define WEB_MAX_PENDING		1024	/* calls waiting for the master */
#define WEB_CALLS_MAX		4	/* calls to the master for one page */
#define WEB_PAGE_SIZE		50	/* rows per page of a list */

/* A socket we serve. */
struct web_listener {
	TAILQ_ENTRY(web_listener) wl_entry;
	struct evhttp		*wl_http;
	struct evconnlistener	*wl_lev;
	uint32_t		 wl_peer;	/* WEB_PEER_* */
	SSL_CTX			*wl_ssl;	/* NULL: plain HTTP */
	char			 wl_name[WEB_NAME_MAX];
	size_t			 wl_body_max;	/* max-body-size */
	uint32_t		 wl_hostflags;	/* WEB_HOSTS_* */
	char			**wl_hosts;	/* Host names allowed */
	size_t			 wl_nhosts;
	int			 wl_per_source;	/* connections per address */
};
TAILQ_HEAD(web_listeners, web_listener);

/* Who a client is, as we saw it: sent with every call to the master. */
struct web_client {
	uint32_t		 wc_peer;	/* WEB_PEER_* */
	uint32_t		 wc_uid;
	uint32_t		 wc_gid;
	uint32_t		 wc_tls;
	char			 wc_remote[WEB_REMOTE_MAX];
};

/* A client's request, answered now or once the master has. */
struct web_rq {
	struct evhttp_request	*wr_req;
	uint64_t		 wr_conn;	/* web_conn_begin() */
	struct web_client	 wr_client;
	const char		*wr_method;
	const char		*wr_target;
	size_t			 wr_body_max;
};

struct web_waiter;

/* One call made for a page: to the master, or answered here. */
struct web_call {
	int			 wk_status;	/* 0 while waiting */
	json_t			*wk_json;	/* a JSON answer, or NULL */
	char			*wk_cookies[4];	/* Set-Cookie to pass on */
	size_t			 wk_ncookies;
	char			*wk_retry;	/* Retry-After, or NULL */
	struct web_waiter	*wk_waiter;	/* waiting for a document */
	uint64_t		 wk_docver;	/* a document's version, or 0 */
	uint32_t		 wk_doccls;	/* and its class and target */
	char			*wk_doctarget;
};

/* A dashboard request in flight. */
struct web_page {
	struct web_rq		 wg_rq;
	struct web_call		 wg_calls[WEB_CALLS_MAX];
	size_t			 wg_ncalls;
	size_t			 wg_waiting;
	void			(*wg_next)(struct web_page *);
	int			 wg_nsegs;
	char			 wg_segs[WEB_SEGS_MAX][WEB_SEG_MAX];
	struct web_form		 wg_form;	/* a POST's fields */
	struct web_form		 wg_query;
	int			 wg_what;	/* which page or action */
	char			 wg_back[WEB_PATH_MAX];	/* after an action */
	char			 wg_api[WEB_PATH_MAX];	/* the action's call */
	int			 wg_classknown;	/* the session was read here */
	uint32_t		 wg_class;	/* then: the client's class */
	int			 wg_kind;	/* and its kind (web_kind) */
};

/* webworker.c */
extern struct event_base	*web_base;
/* A timer on web_base calling cb every secs seconds for good; or fatal. */
struct event *web_every(int secs, event_callback_fn cb);
/* The headers every answer carries, ours or the edge's (NULL-ended). */
extern const char *const	 web_sec_headers[][2];
const char *web_reason(int status);
void	 web_headers(struct evhttp_request *, const char *ctype);
void	 web_add_header(struct web_rq *, const char *, const char *);
void	 web_reply(struct web_rq *, int status, const char *ctype,
	    const void *, size_t);
void	 web_reply_wbuf(struct web_rq *, int status, const char *ctype,
	    struct growbuf *);
struct evbuffer;
struct web_blob;
/* The body as it is in buf (taken and freed; a HEAD sends its length). */
void	 web_reply_evbuf(struct web_rq *, int status, const char *ctype,
	    struct evbuffer *);
/*
 * A pushed document's answer: its headers, its Content-Length as made
 * once per version, its body by reference.
 */
void	 web_reply_blob(struct web_rq *, int status, const char *ctype,
	    size_t nh, const char *const *hname, const char *const *hvalue,
	    const char *clen, struct web_blob *);
void	 web_redirect(struct web_rq *, const char *location);
void	 web_json_error(struct web_rq *, int status, const char *code,
	    const char *message);
/*
 * A call for a page, answered here (a GET of a document or of the
 * session; maybe before this returns) or by the master; -1 if too many
 * are waiting.
 */
int	 web_call(struct web_page *, const char *method, const char *uri,
	    const char *ctype, const char *csrf, const void *, size_t);
/* Complete a page's call answered here (web_docs.c). */
/* json, if not NULL, is the body already parsed (it is shared). */
void	 web_call_answer(struct web_page *, size_t slot, int status,
	    const char *ctype, const char *const *hname,
	    const char *const *hvalue, size_t nh, const void *, size_t,
	    json_t *);
/* 1 if a Content-Type is application/json (parameters aside). */
int	 web_is_json(const char *ctype);
/* Send to the master; fatal if the channel refuses. */
void	 web_master_send(struct msgw *, uint32_t type);
struct msgr;
/* Run next once every call of the page is answered (at once if none). */
void	 web_page_then(struct web_page *, void (*)(struct web_page *));
struct web_page *web_page_new(struct web_rq *);
void	 web_page_free(struct web_page *);
const char *web_input_header(struct web_rq *, const char *);

/* Unit tests: serve with the master at the other end of fd; no sandbox. */
void	 webworker_test_init(int fd);

/* web_auth.c: who a client is, from the identities the master pushed. */
enum web_kind {
	WEB_ID_NONE = 0,	/* no identity (or a bad credential) */
	WEB_ID_LOCAL,		/* the control socket's peer */
	WEB_ID_BOOTSTRAP,	/* the config's bootstrap token */
	WEB_ID_TOKEN,		/* an API token */
	WEB_ID_USER,		/* a login session */
	WEB_ID_ANONYMOUS,	/* the config's anonymous access */
};
#define WEB_ACTOR_MAX		64	/* as the master's audit actor */
struct web_ident {
	enum web_kind		 wi_kind;
	uint32_t		 wi_class;
	char			 wi_actor[WEB_ACTOR_MAX];
	const char		*wi_why;	/* a bad credential: why */
	int			 wi_clear;	/* clear the session cookie */
	json_t			*wi_groups;	/* a user's, or NULL */
	char			 wi_csrf[AUTH_SECRET_B64 + 1]; /* a user's */
};
void	 web_auth_init(void);
/* 1 once the master has pushed an identity table (and is not replacing it). */
int	 web_auth_ready(void);
/* IMSG_WEB_AUTH_*; malformed is fatal. */
void	 web_auth_begin(struct imsg *, const union imsg_payload *);
void	 web_auth_class(struct imsg *, const union imsg_payload *);
void	 web_auth_principal(struct imsg *, const union imsg_payload *);
void	 web_auth_forget(struct imsg *, const union imsg_payload *);
void	 web_auth_commit(struct imsg *, const union imsg_payload *);
/* As the master's auth_identify: 0, or -1 for a bad credential (why). */
int	 web_identify(struct web_rq *, struct web_ident *);
void	 web_ident_clear(struct web_ident *);
/* GET /api/v1/session for the identity: a JSON text to free. */
json_t	*web_session_obj(const struct web_ident *);
/* The value of Set-Cookie that ends the session cookie. */
const char *web_clear_cookie(const struct web_rq *);
/* Count an answer given here (reported in IMSG_WEB_SEEN). */
void	 web_count(int status);

/* web_docs.c: the documents the master pushes, and who waits for them. */
void	 web_docs_init(void);
/* A client's GET answered here: 1 if taken (answered or queued). */
int	 web_docs_request(struct web_rq *);
/* A page's GET answered here: 1 if taken, 0 if for the master. */
int	 web_docs_call(struct web_page *, size_t slot, const char *target);
/* The page is going: forget its call's wait. */
void	 web_docs_cancel(struct web_waiter *);
/* Requests and calls waiting for a document. */
size_t	 web_docs_waiting(void);
/* Is cls's document for target at version ver?  Then it is read. */
int	 web_docs_current(uint32_t cls, const char *target, uint64_t ver);
/* IMSG_WEB_DOC; malformed is fatal. */
void	 web_docs_dispatch(struct imsg *, const union imsg_payload *);
/* IMSG_WEB_STALE: drop a document's answer until it is read again. */
void	 web_docs_stale(struct imsg *, const union imsg_payload *);
/* A new identity table: drop every document, 503 to those waiting. */
void	 web_docs_reset(void);

/*
 * web_edge.c: what a connection's bytes are checked against before
 * evhttp parses them (framing, sizes, Host), per connection.
 */
enum web_edge_state {
	WE_HEAD = 0,		/* request line and headers */
	WE_BODY,		/* Content-Length bytes to pass */
	WE_CHUNK_SIZE,		/* a chunk-size line */
	WE_CHUNK_DATA,		/* chunk bytes to pass */
	WE_CHUNK_CR,		/* the CRLF after a chunk */
	WE_CHUNK_LF,
	WE_TRAILER,		/* trailer lines up to the empty one */
	WE_DISCARD,		/* refused while busy: drop what comes */
	WE_ANSWER,		/* ours: writing a refusal */
	WE_LINGER,		/* ours: reading what follows, then close */
	WE_DONE
};
struct web_edge {
	enum web_edge_state	 we_state;
	struct evbuffer_cb_entry *we_cb;
	char			*we_line;	/* the line being read */
	size_t			 we_linelen;
	size_t			 we_headlen;	/* of the head so far */
	int			 we_cr;		/* the last byte was CR */
	int			 we_nlines;
	int			 we_method;	/* EVHTTP_REQ_*, 0: none yet */
	int			 we_http11;
	int			 we_ncl, we_nte, we_nhost, we_hostok;
	uint64_t		 we_cl;
	uint64_t		 we_left;	/* body or chunk bytes */
	uint64_t		 we_body;	/* chunked: the sum so far */
	size_t			 we_lingered;
	/* evhttp's callbacks, while the connection is ours */
	void			(*we_rcb)(struct bufferevent *, void *);
	void			(*we_wcb)(struct bufferevent *, void *);
	void			(*we_ecb)(struct bufferevent *, short, void *);
	void			*we_cbarg;
};

/* A TCP connection we track (web_conn.c). */
struct web_conn {
	struct bufferevent	*wn_bev;	/* NULL: a free slot */
	struct web_listener	*wn_wl;
	uint32_t		 wn_gen;	/* bumped when the slot is
					   freed */
	int			 wn_busy;	/* requests being answered */
	int			 wn_refused;	/* came past the cap */
	int			 wn_nodelay;	/* TCP_NODELAY set */
	int			 wn_cut;	/* shut down by us */
	time_t			 wn_deadline;	/* monotonic seconds */
	int			 wn_srcknown;
	unsigned char		 wn_src[9];	/* family, address or /64 */
	char			 wn_addr[WEB_REMOTE_MAX];	/* for logs */
	struct web_edge		 wn_edge;
};

void	 web_edge_start(struct web_conn *);
void	 web_edge_stop(struct web_conn *);
/* Refuse on the connection: answer status (with our headers) and close. */
void	 web_edge_refuse(struct web_conn *, int status, const char *why,
	    int linger);
/* Is host (a Host header's value) one the listener answers for? */
int	 web_edge_host_ok(const struct web_listener *, const char *host);
void	 web_edge_flush_logs(void);

/* web_conn.c: connections, their cap and deadlines; TLS. */
/* Drop our reference: the connection is closed once evhttp is done. */
void	 web_conn_release(struct web_conn *);
void	 web_conn_init(void);
time_t	 web_now(void);		/* monotonic seconds */
struct bufferevent *web_conn_bev(struct event_base *, void *listener);
void	 web_conn_listener(struct web_listener *);
/* The request began: 0 if untracked; *refused if past the cap. */
uint64_t web_conn_begin(struct evhttp_request *, int *refused);
void	 web_conn_end(uint64_t);
SSL_CTX	*web_tls_ctx(const void *cert, size_t certlen, const void *key,
	    size_t keylen);

/* web_dash.c: 1 if the request is the dashboard's (then it owns it). */
int	 web_dash_request(struct web_rq *);

/*
 * web_pages.c: bytes kept here and sent by reference (not copied) by
 * the answers that send them; they go when the last reference does.
 */
struct web_blob {
	unsigned int		 bl_refs;
	size_t			 bl_len;
	char			 bl_data[];
};
struct web_blob	*web_blob_new(const void *, size_t);
void		 web_blob_unref(struct web_blob *);
/* Add len bytes of bl from off to buf, by reference. */
void		 web_blob_add(struct evbuffer *, struct web_blob *, size_t off,
		    size_t len);

/*
 * web_pages.c: pages kept for reuse.  web_pages_reuse: 1 if pg was
 * answered with a kept page; 0 if it may be kept (render it with sp and
 * give it to web_pages_keep, which answers); -1 if it may not.
 */
struct web_splices;
int	 web_pages_reuse(struct web_page *, struct web_splices *);
void	 web_pages_keep(struct web_page *, struct growbuf *,
	    const struct web_splices *);
/* Drop the kept pages (a new identity table). */
void	 web_pages_forget(void);
/* 1 if rq was answered with a kept page still current for its client. */
int	 web_pages_answer(struct web_rq *);

/* web_static.c */
int	 web_static(struct web_rq *, const char *name);

/* web_html.c: the page frame and what every page uses. */
/*
 * Where a page rendered for reuse takes a session's own text (web_page
 * cache in web_dash.c): offsets in the page, in order.
 */
#define WEB_SPLICES_MAX		64
#define WEB_SPLICE_WHO		1	/* the user name, or the actor */
#define WEB_SPLICE_CSRF		2	/* the session's CSRF token */
struct web_splices {
	size_t		 sp_off[WEB_SPLICES_MAX];
	int		 sp_kind[WEB_SPLICES_MAX];
	size_t		 sp_n;
	int		 sp_full;	/* more than WEB_SPLICES_MAX */
};
struct web_view {
	const char	*wv_title;
	const char	*wv_nav;	/* which tab is current */
	json_t		*wv_session;	/* GET /api/v1/session, or NULL */
	int		 wv_refresh;	/* seconds; 0: none */
	int		 wv_local;	/* the control socket's admin */
	const char	*wv_notice;	/* after an action: fixed text,
					   or NULL */
	struct web_splices *wv_splices;	/* rendering for reuse, or NULL */
};
const char *html_done_text(const char *action);
void	 html_begin(struct growbuf *, const struct web_view *);
void	 html_end(struct growbuf *);
void	 html_time(struct growbuf *, json_t *);
void	 html_state(struct growbuf *, const char *state);
void	 html_commit(struct growbuf *, const char *);
void	 html_csrf(struct growbuf *, const struct web_view *);
void	 html_pair_link(struct growbuf *, const char *kind, const char *a,
	    const char *c, int whole);
void	 html_job_link(struct growbuf *, const char *ns, const char *id);
void	 html_table_end(struct growbuf *, json_t *list, const char *none);
void	 html_deploy_link(struct growbuf *, json_t *id);
void	 html_deploy_cells(struct growbuf *, json_t *);
void	 html_message(struct growbuf *, const char *cls, const char *text);
void	 html_pager(struct growbuf *, json_t *list, const char *path,
	    const char *keep);
/* May the client do cap in namespace ns (session's capabilities)? */
int	 html_can(const struct web_view *, const char *cap, const char *ns);
const char *jstr(json_t *, const char *key);
long long jint(json_t *, const char *key);
void	 html_error_page(struct growbuf *, const struct web_view *, int status,
	    const char *message);
void	 html_login_page(struct growbuf *, const char *csrf, const char *next,
	    const char *message);
void	 html_overview(struct growbuf *, const struct web_view *, json_t *);
void	 html_jobs(struct growbuf *, const struct web_view *, json_t *);
void	 html_job(struct growbuf *, const struct web_view *, json_t *job,
	    json_t *deployments);

/* web_html_action.c: controls drawn from an "actions" list */
void	 html_operation_run(struct growbuf *, const struct web_view *,
	    json_t *);
void	 html_left_behind(struct growbuf *, const struct web_view *, json_t *,
	    const char *deployment);
void	 html_actions(struct growbuf *, const struct web_view *,
	    json_t *actions, const char *base);

/* web_html_deploy.c */
void	 html_deployments(struct growbuf *, const struct web_view *, json_t *,
	    const struct web_form *query);
void	 html_deployment(struct growbuf *, const struct web_view *, json_t *,
	    json_t *steps);
void	 html_activity(struct growbuf *, const struct web_view *, json_t *,
	    const char *target);
void	 html_diff(struct growbuf *, json_t *diff);

/* web_html_hosts.c */
void	 html_hosts(struct growbuf *, const struct web_view *, json_t *hosts,
	    json_t *plans);
void	 html_plan_steps(struct growbuf *, json_t *steps);
void	 html_host(struct growbuf *, const struct web_view *, json_t *host);
void	 html_each_result(struct growbuf *, const struct web_view *, json_t *);
void	 html_host_link(struct growbuf *, const char *repo, const char *host);

#endif /* NOPS_WEB_H */
