/*
 * Access control decisions: capabilities per namespace from the policies
 * an identity is bound to.  Deny is the default: an identity no bind or
 * policy names has no capability, a policy that no longer exists (a token
 * made before a reload removed it) grants nothing.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "acl.h"

const char *
acl_kind_str(enum acl_kind kind)
{
	switch (kind) {
	case ACL_LOCAL:
		return "local";
	case ACL_USER:
		return "user";
	case ACL_TOKEN:
		return "token";
	case ACL_BOOTSTRAP:
		return "bootstrap";
	case ACL_ANONYMOUS:
		return "anonymous";
	case ACL_NONE:
		break;
	}
	return "none";
}

/* A configured policy by name (not the built-in management one). */
static const struct conf_policy *
acl_policy_find(const struct nops_conf *conf, const char *name)
{
	const struct conf_policy	*p;

	TAILQ_FOREACH(p, &conf->policies, entry)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

int
acl_policy_exists(const struct nops_conf *conf, const char *name)
{
	return strcmp(name, CONF_POLICY_MANAGEMENT) == 0 ||
	    acl_policy_find(conf, name) != NULL;
}

/* The capabilities one policy grants in ns (NULL: in some namespace). */
static uint32_t
acl_policy_caps(const struct nops_conf *conf, const char *name,
    const char *ns)
{
	const struct conf_policy	*p;
	const struct conf_policy_ns	*pn;
	uint32_t			 caps = 0, c;

	if (strcmp(name, CONF_POLICY_MANAGEMENT) == 0)
		return ACL_CAPS_ALL | CAP_MANAGEMENT;
	if ((p = acl_policy_find(conf, name)) == NULL)
		return 0;
	TAILQ_FOREACH(pn, &p->namespaces, entry) {
		if (ns != NULL && fnmatch(pn->glob, ns, 0) != 0)
			continue;
		c = pn->caps;
		if (c & CAP_MANAGEMENT) {
			/* Global management only from a block for "*". */
			if (strcmp(pn->glob, "*") != 0)
				c &= ~CAP_MANAGEMENT;
			c |= ACL_CAPS_ALL;
		}
		caps |= c;
	}
	return caps;
}

static int
acl_is_member(const struct conf_group *g, const char *user)
{
	const struct conf_str	*s;

	TAILQ_FOREACH(s, &g->members, entry)
		if (strcmp(s->str, user) == 0)
			return 1;
	return 0;
}

static int
acl_in_group(const struct nops_conf *conf, const char *group,
    const char *user)
{
	const struct conf_group	*g;

	TAILQ_FOREACH(g, &conf->groups, entry)
		if (strcmp(g->name, group) == 0)
			return acl_is_member(g, user);
	return 0;
}

void
acl_user_groups(const struct nops_conf *conf, const char *user,
    void (*fn)(const char *, void *), void *arg)
{
	const struct conf_group	*g;

	TAILQ_FOREACH(g, &conf->groups, entry)
		if (acl_is_member(g, user))
			fn(g->name, arg);
}

void
acl_user_policies(const struct nops_conf *conf, const char *user,
    void (*fn)(const char *, void *), void *arg)
{
	const struct conf_bind	*b;

	TAILQ_FOREACH(b, &conf->binds, entry) {
		if (b->kind == BIND_USER && strcmp(b->who, user) != 0)
			continue;
		if (b->kind == BIND_GROUP && !acl_in_group(conf, b->who, user))
			continue;
		fn(b->policy, arg);
	}
}

uint32_t
acl_caps(const struct nops_conf *conf, const struct acl_ident *id,
    const char *ns)
{
	const struct conf_bind	*b;
	uint32_t		 caps = 0;

	switch (id->ai_kind) {
	case ACL_LOCAL:
	case ACL_BOOTSTRAP:
		return ACL_CAPS_ALL | CAP_MANAGEMENT;
	case ACL_TOKEN:
		caps = acl_policy_caps(conf, id->ai_policy, ns);
		break;
	case ACL_ANONYMOUS:
		caps = acl_policy_caps(conf, id->ai_policy, ns) &
		    ACL_CAPS_ANONYMOUS;
		break;
	case ACL_USER:
		TAILQ_FOREACH(b, &conf->binds, entry) {
			if (b->kind == BIND_USER &&
			    strcmp(b->who, id->ai_name) != 0)
				continue;
			if (b->kind == BIND_GROUP &&
			    !acl_in_group(conf, b->who, id->ai_name))
				continue;
			caps |= acl_policy_caps(conf, b->policy, ns);
		}
		break;
	case ACL_NONE:
		return 0;
	}
	if (caps & CAP_MANAGEMENT)
		caps |= ACL_CAPS_ALL;
	return caps;
}

int
acl_allowed(const struct nops_conf *conf, const struct acl_ident *id,
    uint32_t caps, const char *ns)
{
	uint32_t	 have;

	if (caps == 0)
		caps = CAP_MANAGEMENT;
	have = acl_caps(conf, id, ns);
	/* Global management may do anything, in any namespace. */
	if (have & CAP_MANAGEMENT)
		return 1;
	return (have & caps) == caps;
}
