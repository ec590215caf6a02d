/*
 * Deployments as stored: the only engine state that survives a restart.
 * Every change of state is a compare-and-set on the state it leaves and
 * writes its audit event in the same transaction (save before acting).
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
	char		*hr_state;	/* pending dispatched running succeeded failed */
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
int		 deploy_create(struct store *, struct deploy *, const char *actor)
		    __must_check;

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

/* deploy_set_*: record a fact of the apply (inside a transaction). */
int		 deploy_set_approval(struct store *, int64_t id,
		    const char *who, const char *hash) __must_check;
int		 deploy_set_apply(struct store *, int64_t id, int64_t started,
		    int64_t timeout_at) __must_check;
int		 deploy_set_register(struct store *, int64_t id,
		    const char *eval_id, int64_t job_version) __must_check;
int		 deploy_set_nomad_deployment(struct store *, int64_t id,
		    const char *) __must_check;

/*
 * deploy_git_change: set d_base_commit and d_git_change of a deployment
 * about to be created from d_path, d_source and d_vars_source, against
 * the last completed deployment of the job that kept its source.  -1 on
 * a store error (the deployment is made without them).
 */
int		 deploy_git_change(struct store *, struct deploy *);

/* Reads: fill *d (deploy_free it).  0 found, 1 not found, -1 error. */
int		 deploy_load(struct store *, int64_t id, struct deploy *)
		    __must_check;
int		 deploy_active(struct store *, const char *ns, const char *job,
		    struct deploy *) __must_check;
/* The newest terminal deployment of a job. */
int		 deploy_last_terminal(struct store *, const char *ns,
		    const char *job, struct deploy *) __must_check;
/* Ids of every non-terminal job deployment, oldest first; caller frees. */
int		 deploy_active_ids(struct store *, int64_t **ids, size_t *n)
		    __must_check;
void		 deploy_free(struct deploy *);

/* Hook runs. */
int		 deploy_hookrun_get(struct store *, const char *token,
		    struct hook_run *) __must_check;
int		 deploy_hookrun_create(struct store *, int64_t deployment,
		    const char *phase, int position, const char *token)
		    __must_check;
int		 deploy_hookrun_update(struct store *, const char *token,
		    const char *state, const char *child, int exit_code,
		    const char *error) __must_check;
/* Keep a finished run's redacted output (outside a transaction too). */
int		 deploy_hookrun_set_output(struct store *, const char *token,
		    const char *output) __must_check;
/* Delete the run of token, to dispatch it afresh (inside a transaction). */
int		 deploy_hookrun_clear(struct store *, const char *token)
		    __must_check;
void		 deploy_hookrun_free(struct hook_run *);

/*
 * The last health progress of a deployment, as the JSON text the API
 * shows: deploy_set_health keeps it, deploy_health returns it (the
 * caller frees) or NULL when none is kept or the store fails.
 */
int		 deploy_set_health(struct store *, int64_t id, const char *)
		    __must_check;
char		*deploy_health(struct store *, int64_t id);

#endif /* NOPS_DEPLOY_H */
