/*
 * What the API's handlers share (master/api.c routes requests; other
 * master modules, such as api_engine.c, add routes).
 */
#ifndef NOPS_API_H
#define NOPS_API_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "conf.h"
#include "nops.h"

#define API_ARGS_MAX	3

struct api_req {
	uint32_t	 ar_id;
	uint32_t	 ar_peer;	/* WEB_PEER_* */
	uint32_t	 ar_uid;
	uint32_t	 ar_gid;
	const char	*ar_method;
	const char	*ar_path;	/* without the query */
	const char	*ar_query;	/* after '?', or "" */
	const char	*ar_ctype;
	const void	*ar_body;
	size_t		 ar_bodylen;
	char		 ar_actor[64];	/* for the audit log */
	int		 ar_admin;	/* local admin over the control
					   socket */
	const char	*ar_remote;	/* "address:port", or "local" */
	int		 ar_tls;	/* came over TLS */
	/* headers the webworker forwards (a fixed list), by name */
	const char	*ar_hname[WEB_HEADERS_MAX];
	const char	*ar_hvalue[WEB_HEADERS_MAX];
	size_t		 ar_nheaders;
	/* a route's "*" segments, in order */
	char		 ar_args[API_ARGS_MAX][NOPS_NAME_MAX * 4 + 1];
	size_t		 ar_nargs;
};

struct api_resp {
	int		 status;
	json_t		*body;		/* a JSON answer, or NULL with raw */
	char		*raw;		/* another body (malloc'd), e.g. text */
	size_t		 rawlen;
	const char	*ctype;		/* NULL: application/json */
	json_t		*headers;	/* [[name, value], ...] or NULL */
};

/*
 * resp->status of a handler that answers later, by itself: it keeps
 * api_later(req) and gives it to api_later_answer() once done.
 */
#define API_DEFERRED	(-1)
struct api_later;
struct api_later *api_later(const struct api_req *);
void		 api_later_answer(struct api_later *, struct api_resp *);

/* A deferred answer the handler gave itself after all: forget it. */
void		 api_later_cancel(struct api_later *);
/* The error body of api_error(), for an answer given later. */
json_t	*api_error_json(const char *code, const char *fmt, ...)
	    __attribute__((__format__(printf, 2, 3)));

/*
 * How the ACL finds the namespace a request acts in.  Every route names
 * one (with its capability): a row that names none is refused when nopsd
 * starts (api_auth_tables_check()), never silently allowed.
 */
enum api_ns {
	API_NS_UNSET = 0,	/* forgotten: refused at start-up */
	API_NS_NONE,		/* none: the capability in any namespace */
	API_NS_JOB,		/* ar_args[0] is the namespace */
	API_NS_DEPLOYMENT,	/* ar_args[0] is a deployment id */
	API_NS_DEPLOYMENT_ARG1,	/* ar_args[1] is a deployment id */
	API_NS_PLAN,		/* the namespace "" of deploy plans' hosts */
};

/*
 * One row per route: method, path, handler, what it needs (a capability,
 * ACL_ROUTE_*; 0: management) and where its namespace is.  A route whose
 * cap is ACL_ROUTE_ACTION takes the capability of the action its last
 * "*" names, from the action table (master/action.c).
 */
struct api_route {
	const char	*method;
	const char	*path;		/* "*" stands for one segment */
	int		 admin;		/* needs management */
	void		(*fn)(struct api_req *, struct api_resp *);
	uint32_t	 cap;		/* CAP_* for the ACL; 0: management */
	enum api_ns	 ns;
};

void	 api_error(struct api_resp *, int status, const char *code,
	    const char *fmt, ...) __attribute__((__format__(printf, 4, 5)));
/* A JSON object body (writes need Content-Type: application/json). */
json_t	*api_json_body(struct api_req *, struct api_resp *);
/* The same for a write that uses no input: 0, or -1 with the error set. */
int	 api_json_body_check(struct api_req *, struct api_resp *);
/* A forwarded request header (case-insensitive name), or NULL. */
const char *api_header(const struct api_req *, const char *name);
/* Add a response header (Set-Cookie, Location, Retry-After, ...). */
void	 api_add_header(struct api_resp *, const char *name,
	    const char *value);

/* The value of a query parameter (decoded), or NULL; caller frees. */
char	*api_query(const struct api_req *, const char *name);
json_t	*api_time_json(time_t);

struct acl_ident;
/*
 * api_render: the answer to "GET target" for identity as, the way a
 * pushed read is made (master/webpub.c): routed, checked by the ACL as
 * that identity, answered.  resp is always set; api_resp_free() it.
 */
void	 api_render(const char *target, const struct acl_ident *as,
	    struct api_resp *);
/* The body of an answer as bytes (NUL-terminated, malloc'd). */
char	*api_resp_text(const struct api_resp *, size_t *len);
void	 api_resp_free(struct api_resp *);
/* The error body of an answer too large for the webworker's channel. */
extern const char api_too_large[];
struct wire_web_answer;
/* The wire form of an answer with its body as text; points into both. */
void	 api_answer(const struct api_resp *, const char *text, size_t len,
	    struct wire_web_answer *);
/* The answer sent instead of one too large for the channel. */
void	 api_answer_too_large(struct wire_web_answer *);

/* Every route of every module's table, in the order they are tried. */
void	 api_route_foreach(void (*)(const struct api_route *, void *),
	    void *);

/* leftbehind.c */
extern const struct api_route	 leftbehind_routes[];
extern const size_t		 leftbehind_nroutes;

/* operation.c: the run log (GET .../operations/runs[/{id}]) */
extern const struct api_route	 operation_routes[];
extern const size_t		 operation_nroutes;

/* api_engine.c: jobs and deployments. */
extern const struct api_route	 api_engine_routes[];
extern const size_t		 api_engine_nroutes;
struct deploy;
struct ejob;
/* A deployment's summary, as the lists and the actions answer it. */
json_t	*api_engine_deploy_json(const struct deploy *);
/* A deployment's id from the path (404 if none), and a failed load's answer. */
int	 api_engine_deploy_id(struct api_req *, struct api_resp *, int64_t *);
void	 api_engine_deploy_error(struct api_resp *, int rc, int64_t id);
/* The procedure of deploy-now (the action table's row). */
void	 api_engine_deploy_now(struct api_req *, struct api_resp *,
	    struct ejob *);
struct eorphan;
struct efile_error;
/* An orphan job and a job file in error, as the API and dashboard list them. */
json_t	*api_engine_orphan_json(const struct eorphan *);
json_t	*api_engine_file_error_json(const struct efile_error *);

#endif /* NOPS_API_H */
