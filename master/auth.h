/*
 * Authentication in the master: the users file and bcrypt (auth.c, pure
 * functions the unit tests call), the identity of each API request and
 * its ACL check (api_auth.c), and the routes of login, logout, the
 * session probe and API tokens (auth_login.c).
 */
#ifndef NOPS_AUTH_H
#define NOPS_AUTH_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "acl.h"
#include "authc.h"


#define AUTH_BCRYPT_COST	12	/* nopsctl hash-password */
#define AUTH_BCRYPT_COST_MIN	10
#define AUTH_BCRYPT_COST_MAX	14	/* ~1 s: the master waits for it */
#define AUTH_BCRYPT_LEN		60
#define AUTH_PASSWORD_MAX	72	/* bcrypt reads no more */
#define AUTH_USER_NAME_MAX	63	/* an audit actor holds 63 */
#define AUTH_PASSWORD_BODY_MAX	1024	/* longer is a bad request */

/* Bootstrap token file: one line of 32 to 256 printable characters. */
#define AUTH_BOOTSTRAP_MIN	32
#define AUTH_BOOTSTRAP_MAX	256

/*
 * Login throttling (auth_throttle.c, nopsd.8): failures counted per
 * source address (an IPv6 /64) and per user name in a window; the brake
 * is on while all sources together failed this often in a minute.
 */
#define AUTH_RL_FAILS		5
#define AUTH_RL_WINDOW		300
#define AUTH_RL_GLOBAL_FAILS	60
#define AUTH_RL_GLOBAL_WINDOW	60
#define AUTH_RL_BRAKE_SPACING	30	/* s between tries of a failed source */
#define AUTH_RL_SLOTS		4096


/* auth.c: the users file (htpasswd format, bcrypt hashes). */
struct auth_user {
	char		*au_name;
	char		*au_hash;
};

struct auth_users {
	struct auth_user *au_users;	/* sorted by name */
	size_t		 au_n;
};

/*
 * auth_users_parse: read "name:hash" lines ('#' comments and blank lines
 * skipped) from fp.  Each error is logged as "name:line: message" and the
 * first is copied to err; returns NULL if there was any.
 */
struct auth_users *auth_users_parse(FILE *fp, const char *name, char *err,
		    size_t errlen);
struct auth_users *auth_users_load(const char *path, char *err,
		    size_t errlen);
void		 auth_users_free(struct auth_users *);
/* The hash of user, or NULL if there is no such user. */
const char	*auth_users_hash(const struct auth_users *, const char *user);
/* NULL if hash is a bcrypt hash this daemon accepts, else why not. */
const char	*auth_check_hash(const char *hash);
/*
 * auth_password_verify: 1 if password (len bytes, only the first 72
 * count, as in bcrypt) matches hash, 0 if not, -1 on an error (a NUL in
 * the password, a hash crypt refuses).  Takes as long as the hash's cost
 * says (~57 ms at 10, ~230 ms at 12), in the caller's thread; safe in
 * any thread.
 */
int		 auth_password_verify(const char *password, size_t len,
		    const char *hash);

/*
 * auth_hash.c: auth_password_verify() in a pool of hashing processes, the
 * result handed to cb in the event loop (1, 0 or -1 as above).  The
 * password is sent to them (and wiped).  -1 when AUTH_HASH_QUEUE_MAX
 * checks wait already (or the pool cannot start): the caller refuses the
 * login for now.  auth_hash_reap(): 1 when pid was a hashing process
 * (the master's SIGCHLD path asks).
 */
#define AUTH_HASH_PROCS		2
#define AUTH_HASH_QUEUE_MAX	32
typedef void	(*auth_hash_cb)(int, void *);
int		 auth_hash_verify(const char *, size_t, const char *,
		    auth_hash_cb, void *);
int		 auth_hash_reap(pid_t, int);
void		 auth_hash_init(void);	/* at start: the pool, before
					   the store */
void		 auth_hash_cgroup(uid_t, gid_t);	/* as root, before
							   confinement */
void		 auth_hash_shutdown(void);
struct metrics_out;
void		 auth_hash_metrics(struct metrics_out *);
/* A check waiting this long (s) gives the idle hashing cgroup a fair share. */
#define AUTH_HASH_IDLE_WAIT	1

/* auth.c: secrets. */
void		 auth_random(void *, size_t);	/* getrandom(2); fatal */
/* "nops_" + 43 base64url characters of 32 random bytes. */
void		 auth_token_new(char out[AUTH_TOKEN_LEN + 1]);
/* A session id: 43 base64url characters of 32 random bytes. */
void		 auth_session_new(char out[AUTH_SECRET_B64 + 1]);
/*
 * auth_secret_file: the bootstrap token from its secret file (cfile.h's
 * rule: one line; a final newline is not part of it), checked; 0, or -1
 * with why in err.
 */
int		 auth_secret_file(const char *path, char *out, size_t outlen,
		    char *err, size_t errlen);

/* auth.c: login rate limiting, a fixed window per key. */
struct auth_rl;
struct auth_rl	*auth_rl_new(size_t slots, int max, int window);
void		 auth_rl_free(struct auth_rl *);
/* 0 if key may try now, else the seconds until it may. */
int		 auth_rl_check(struct auth_rl *, const char *key, time_t now);
void		 auth_rl_fail(struct auth_rl *, const char *key, time_t now);
/* Failures of key in its window now (0: none); its end, the last one. */
int		 auth_rl_count(struct auth_rl *, const char *key, time_t now,
		    time_t *end, time_t *last);

/* auth_throttle.c: the login policy on top of it. */
struct log_flood;
void		 auth_throttle_shutdown(void);
/*
 * Before bcrypt: 0 if the attempt may go on, else the seconds to wait
 * (429).  remote is "address:port"; user NULL for an unknown name.
 */
int		 auth_throttle_check(const char *remote, const char *user,
		    time_t now);
void		 auth_throttle_failed(const char *remote, const char *user,
		    time_t now);
/* Everyone's failed logins over the last minute (sliding). */
unsigned int	 auth_throttle_global(time_t now);
/* "a:<address>" or "a:<prefix>/64", the source the limits count. */
void		 auth_throttle_source(const char *remote, char *key,
		    size_t keylen);

/* api_auth.c: the master's side. */
struct store;
#include "api.h"

/*
 * api_auth_configure: load the users file and the bootstrap token of conf.
 * On an error (logged, file:line) the running ones stay and -1 is
 * returned: the caller refuses the config.  With check set nothing is
 * kept (nopsd -n).
 */
int		 api_auth_configure(const struct nops_conf *, int check);
/* Every route and action names its capability and namespace: 0, or -1. */
int		 api_auth_tables_check(void);
void		 api_auth_shutdown(void);

/*
 * api_auth_request: identify the client of req and decide whether route r
 * may run for it: 401 without an identity (or a bad credential), 403
 * without the capability or without the session's CSRF token on a
 * write, 415 on a write that is not JSON.  Returns 0 if the handler may
 * run, else -1 with resp answered.  Sets req->ar_actor.
 */
int		 api_auth_request(struct api_req *, const struct api_route *,
		    struct api_resp *);
/*
 * api_auth_request_done: after the handler: drops the items of a list that
 * name a namespace the client may not read; forgets the identity.
 */
void		 api_auth_request_done(struct api_req *, struct api_resp *);
/*
 * api_auth_request_as: the same decision for a read rendered for an access
 * class (master/webpub.c): identity as given, nothing logged, and a
 * refusal that names the kind, not the actor.
 */
int		 api_auth_request_as(struct api_req *, const struct api_route *,
		    struct api_resp *, const struct acl_ident *);
/* The SHA-256 (hex) of the bootstrap token, or NULL if none. */
const char	*api_auth_bootstrap_hash(void);
/*
 * What id may do, as GET /api/v1/session shows it: {"management",
 * "capabilities", "namespaces"}.
 */
json_t		*auth_class_view(const struct acl_ident *);
/* The groups of user, a JSON array. */
json_t		*auth_groups_json(const char *user);
/* The identity of the request being answered (NULL for another req). */
const struct acl_ident *api_auth_ident(const struct api_req *);
/* 1 if the client of req has caps in ns (NULL: in some namespace). */
int		 api_auth_allows(const struct api_req *, uint32_t caps,
		    const char *ns);

/* Set-Cookie for the session cookie: sid, or "" and 0 to clear it. */
void		 api_auth_cookie_header(struct api_resp *,
		    const struct api_req *, const char *sid, int maxage);
/* The session id of req's client, or NULL if it is not a session. */
const char	*api_auth_session_id(const struct api_req *);
/* End the session of req's client (logout). */
int		 api_auth_session_end(const struct api_req *);
const struct auth_users *api_auth_users(void);	/* the users file loaded */
const struct nops_conf *api_auth_conf(void);	/* the running config */
struct store	*api_auth_store(void);

/* auth_login.c: login, logout, the session probe, API tokens. */
void		 auth_login_shutdown(void);
extern const struct api_route	 auth_routes[];
extern const size_t		 auth_nroutes;

#endif /* NOPS_AUTH_H */
