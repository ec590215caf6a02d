/*
 * Deployments as stored: the only engine state that survives a restart.
 * Every change of state is a compare-and-set on the state it leaves and
 * writes its audit event in the same transaction (save before acting).
 * The rows are read and written by store_deploy.h's functions.
 */
#ifndef NOPS_DEPLOY_H
#define NOPS_DEPLOY_H

#include <stddef.h>
#include <stdint.h>

#ifndef __must_check
#define __must_check	__attribute__((__warn_unused_result__))
#endif

struct store;

enum deploy_state {
	DS_PENDING_APPROVAL = 0,
	DS_PRE_HOOKS,
	DS_REGISTERING,
	DS_WAITING_HEALTH,
	DS_AWAITING_PROMOTION,
	DS_POST_HOOKS,
	DS_COMPLETED,
	DS_FAILED,
	DS_REJECTED,
	DS_SUPERSEDED,
	DS_PREFLIGHT,		/* a plan: preflight tests (master/hosts.c) */
	DS_DEPLOYING,		/* a plan: host steps, phase by phase */
	DS_MAX
};

#define DEPLOY_HOOKS_MAX	32	/* pre + post */

/* A hook frozen into a deployment at detection. */
struct deploy_hook {
	char		*dh_phase;		/* "pre" | "post" */
	int		 dh_position;
	char		*dh_hook_id;
	char		*dh_spec;		/* JSON of the hook job */
	char		*dh_spec_hash;		/* hex SHA-256 */
	char		*dh_revision;		/* <hook>-<8 hex> */
	int		 dh_timeout;		/* seconds */
};

struct deploy {
	int64_t		 d_id;
	char		*d_ns;
	char		*d_job;
	char		*d_repo;
	char		*d_commit;
	char		*d_spec;		/* to register; never shown */
	char		*d_diff;		/* redacted JSON */
	char		*d_spec_hash;
	int64_t		 d_cas_index;		/* -1: a new job */
	char		*d_policy;
	enum deploy_state d_state;
	char		*d_reason;
	int64_t		 d_retry_of;		/* 0: none */
	int64_t		 d_created_at;
	int64_t		 d_updated_at;
	char		*d_approved_by;
	int64_t		 d_approved_at;
	char		*d_approved_hash;
	int64_t		 d_apply_started_at;
	int64_t		 d_timeout_at;		/* 0: none */
	char		*d_nomad_deployment;
	char		*d_eval_id;
	int64_t		 d_job_version;		/* -1: unknown */
	int64_t		 d_ended_at;
	/* Git context (NULL or 0 when unknown, e.g. before version 3). */
	char		*d_subject;
	char		*d_author;
	int64_t		 d_commit_time;
	char		*d_path;		/* the job file in the repo */
	char		*d_source;		/* its text, redacted */
	char		*d_vars_source;		/* <name>.vars.hcl, redacted */
	char		*d_base_commit;		/* compared with; NULL: none */
	char		*d_git_change;		/* NULL: the same as base */
	struct deploy_hook d_hooks[DEPLOY_HOOKS_MAX];
	size_t		 d_nhooks;
};

/* A dispatch of a hook revision (hook_runs). */
struct hook_run {
	int64_t		 hr_id;
	char		*hr_token;	/* <deployment>:<phase>:<position> */
	char		*hr_child;	/* dispatched job id, or NULL */
	char		*hr_state;	/* pending dispatched running
					   succeeded failed */
	int		 hr_exit_code;	/* -1: none */
	char		*hr_error;
	int64_t		 hr_started_at;
	int64_t		 hr_ended_at;
	char		*hr_output;	/* last 64 KiB, redacted, or NULL */
};

const char	*deploy_state_str(enum deploy_state);
int		 deploy_state_parse(const char *, enum deploy_state *);
int		 deploy_state_terminal(enum deploy_state);

/*
 * deploy_create: insert d (and its hooks) in state d->d_state with an
 * event "deployment.create"; sets d->d_id.  Inside a transaction the
 * caller opened.  -1 on error (e.g. another active one for the job).
 */
int		 deploy_create(struct store *, struct deploy *,
		    const char *actor) __must_check;

/*
 * deploy_transition: from -> to, only if the deployment is still in
 * from; sets reason (may be NULL) and, for a terminal state, ended_at.
 * Writes event "deployment.<action>" with the reason.  Returns 1 if it
 * moved, 0 if it was not in from (someone else moved it), -1 on error.
 * Inside a transaction the caller opened.
 */
int		 deploy_transition(struct store *, int64_t id,
		    enum deploy_state from, enum deploy_state to,
		    const char *actor, const char *action, const char *reason)
		    __must_check;

/*
 * deploy_move: deploy_transition by "system" in a transaction of its
 * own, logged when it moved.  Returns as deploy_transition.
 */
int		 deploy_move(struct store *, int64_t id, enum deploy_state from,
		    enum deploy_state to, const char *action,
		    const char *reason);

/*
 * deploy_git_change: set d_base_commit and d_git_change of a deployment
 * about to be created from d_path, d_source and d_vars_source, against
 * the last completed deployment of the job that kept its source.  -1 on
 * a store error (the deployment is made without them).
 */
int		 deploy_git_change(struct store *, struct deploy *);

void		 deploy_free(struct deploy *);
void		 deploy_hook_free(struct deploy_hook *);

void		 deploy_hookrun_free(struct hook_run *);

#endif /* NOPS_DEPLOY_H */
