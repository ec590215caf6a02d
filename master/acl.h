/*
 * Access control decisions, taken in the master only: what an identity
 * (the control socket's admin, a logged-in user, an API token, the
 * bootstrap token, an anonymous client) may do in a namespace, from the
 * policies, groups and binds of nops.conf.  Pure functions of the config:
 * a reload changes every later decision at once.
 */
#ifndef NOPS_ACL_H
#define NOPS_ACL_H

#include <stdint.h>

#include "conf.h"

/* Kinds of identity. */
enum acl_kind {
	ACL_NONE,		/* no credential and no anonymous policy */
	ACL_LOCAL,		/* control socket peer: root or the group */
	ACL_USER,		/* a login session of a users-file account */
	ACL_TOKEN,		/* an API token: its one policy */
	ACL_BOOTSTRAP,		/* the config's bootstrap token */
	ACL_ANONYMOUS,		/* no credential; the anonymous policy */
};

#define ACL_ACTOR_MAX	64	/* fits struct api_req's ar_actor */

struct acl_ident {
	enum acl_kind	 ai_kind;
	char		 ai_name[NOPS_NAME_MAX + 1];	/* user or token */
	char		 ai_policy[NOPS_NAME_MAX + 1];	/* token, anonymous */
	int64_t		 ai_token_id;			/* ACL_TOKEN */
	char		 ai_actor[ACL_ACTOR_MAX];	/* for the audit log */
};

/* Every capability but management. */
#define ACL_CAPS_ALL	(CAP_READ | CAP_APPROVE | CAP_PROMOTE | CAP_RETRY | \
	CAP_DEPLOY_NOW | CAP_PAUSE | CAP_FETCH | CAP_OPERATE | CAP_SUSPEND | \
	CAP_LEFT_BEHIND | CAP_HOSTS)

/*
 * The only capability an anonymous client can ever have, whatever its
 * policy says (the parser refuses more, this is the second lock).
 */
#define ACL_CAPS_ANONYMOUS	CAP_READ

/*
 * Route requirements beyond CAP_* (in struct api_route's cap): a public
 * route runs without an identity (login, the session probe); an
 * identified route needs one, whichever it is (logout).  A route's cap 0
 * means management.
 */
#define ACL_ROUTE_PUBLIC	0x40000000
#define ACL_ROUTE_IDENTIFIED	0x20000000
/* The capability is the action's, from the action table (action.c). */
#define ACL_ROUTE_ACTION	0x10000000

/*
 * acl_caps: the capabilities id has in namespace ns, or, with ns NULL, in
 * at least one namespace.  "management" in a namespace block grants
 * every capability in the namespaces it matches; CAP_MANAGEMENT itself
 * (global management: reload, tokens, the log level) is only in the
 * result for the built-in "management" policy, a block "*" that grants
 * it, the local admin and the bootstrap token, and it implies every
 * capability everywhere.
 */
uint32_t	 acl_caps(const struct nops_conf *, const struct acl_ident *,
		    const char *ns);
/* 1 if id has every capability of caps in ns (NULL: in some namespace). */
int		 acl_allowed(const struct nops_conf *, const struct acl_ident *,
		    uint32_t caps, const char *ns);
/* 1 if name is a policy of conf or the built-in one. */
int		 acl_policy_exists(const struct nops_conf *, const char *name);
/* The groups of conf that list user, in order: calls fn per group. */
void		 acl_user_groups(const struct nops_conf *, const char *user,
		    void (*fn)(const char *group, void *), void *arg);
/*
 * The policies bound to user (by name or through a group), in bind order,
 * repeats included: what acl_caps() of a user is made of.
 */
void		 acl_user_policies(const struct nops_conf *, const char *user,
		    void (*fn)(const char *policy, void *), void *arg);
/* "user", "token", ... for messages and GET /api/v1/session. */
const char	*acl_kind_str(enum acl_kind);

#endif /* NOPS_ACL_H */
