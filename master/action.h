/*
 * Actions as data (master/action.c): what a client can do to a job (a
 * target) or to a deployment, in one table.  Each row names its
 * capability, where it acts, the states it leaves from (deployments) or
 * the conditions it needs (jobs) with the error each broken rule answers,
 * and its procedure.  The detail of a job and of a deployment lists them;
 * one generic procedure, POST .../actions/{action}, runs them.
 */
#ifndef NOPS_ACTION_H
#define NOPS_ACTION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct api_req;
struct api_resp;
struct deploy;
struct ejob;

enum action_on {
	ACTION_ON_JOB = 1,	/* /api/v1/jobs/{ns}/{job}/actions/ */
	ACTION_ON_DEPLOYMENT,	/* /api/v1/deployments/{id}/actions/ */
	ACTION_ON_HOST,		/* /api/v1/hosts/{repo}/{host}/actions/ */
};

enum action_kind {
	ACTION_BUILTIN = 0,		/* a procedure of its own: no kind */
	ACTION_TOGGLE,			/* stays in the desired state */
	ACTION_OPERATION,		/* runs one time */
};

/* Conditions of a job an action may need (action_rule). */
#define ACOND_MANAGED		0x0001	/* managed in git, in a managed ns */
#define ACOND_PAUSED		0x0002
#define ACOND_NOT_PAUSED	0x0004
#define ACOND_SUSPENDED		0x0008
#define ACOND_NOT_SUSPENDED	0x0010
#define ACOND_DEPLOYED		0x0020	/* a deployment of it completed */
#define ACOND_IDLE		0x0040	/* no deployment of it is under way */
#define ACOND_STATE		0x0080	/* deployment: in one of ad_from */
#define ACOND_CAN_SUSPEND	0x0100	/* its job type means something */
#define ACOND_HAS_OPERATION	0x0200	/* the deployed revision has it */
#define ACOND_OPERATIONS	0x0400	/* the revision can do operations */
/*
 * The toggle: suspend when not suspended, unsuspend when suspended, and
 * both after a failed deployment (the job may be in neither state).
 */
#define ACOND_MAY_SUSPEND	0x0800
#define ACOND_MAY_UNSUSPEND	0x1000
#define ACOND_RETRYABLE		0x2000	/* the last ended, none active */
#define ACOND_NOT_ACKED		0x4000	/* a failure nobody acknowledged */

/* A rule: the condition needed, and what its absence answers. */
struct action_rule {
	uint32_t	 ar_need;	/* ACOND_* */
	int		 ar_status;	/* HTTP status */
	const char	*ar_code;	/* error code of seed 003 */
	const char	*ar_why;	/* disabled_reason, and the error */
};

#define ACTION_RULES_MAX	8

/* The context an action is looked at in. */
struct action_ctx {
	struct api_req	*ac_req;
	const char	*ac_ns;
	const char	*ac_job;
	struct ejob	*ac_ej;		/* the job in git, or NULL */
	struct deploy	*ac_d;		/* deployment actions: the one */
	uint32_t	 ac_cond;	/* ACOND_* that hold */
	int64_t		 ac_active;	/* a deployment under way, or 0 */
	int64_t		 ac_last_ok;	/* the last completed one, or 0 */
	const char	*ac_operation;	/* operations: its name */
	const char	*ac_host;	/* host actions: the host (ac_job: its
					   plan's repository, ac_ns: "") */
	int		 ac_store_err;	/* a condition could not be read */
	char		 ac_op_error[320]; /* why the operation is invalid */
};

struct action_def {
	const char	*ad_id;		/* "*" for an operation <job>.<op> */
	enum action_on	 ad_on;
	uint32_t	 ad_cap;	/* CAP_* */
	enum action_kind ad_kind;
	const char	*ad_title;
	const char	*ad_description;
	const char	*ad_confirm;	/* a question, or NULL */
	uint32_t	 ad_from;	/* deployments: 1 << DS_* it leaves */
	int		 ad_to;		/* the DS_* it moves to, or -1 */
	struct action_rule ad_rules[ACTION_RULES_MAX];
	/* the input it takes, as JSON Schema text, or NULL */
	const char	*ad_input;
	/* runs it once every rule holds; answers resp */
	void		(*ad_run)(struct action_ctx *, json_t *input,
			    struct api_resp *);
};

/* The row of an action on a job or a deployment, or NULL. */
const struct action_def *action_find(enum action_on, const char *id);
/* Every row is well formed; -1 (each fault logged) if one is not. */
int	 action_table_check(void);

/* The "actions" of a detail, in display order, for this request. */
json_t	*action_list_job(struct api_req *, const char *ns, const char *job);
json_t	*action_list_deployment(struct api_req *, struct deploy *);

/* One row as an action object of a detail (operations use it). */
json_t	*action_json_row(const struct action_def *, struct action_ctx *);

/* Check the rules of ad in ac, then run it (host actions, hosts_ops.c). */
void	 action_take(const struct action_def *, struct action_ctx *,
	    json_t *body, struct api_resp *);

/* Answer 404 for an action no row names, saying which there are. */
void	 action_not_found(struct api_resp *, enum action_on, const char *);

/* The generic procedure: the handlers of the two routes. */
void	 action_api_job(struct api_req *, struct api_resp *);
void	 action_api_deployment(struct api_req *, struct api_resp *);

/* A reason people read later: printable, bounded. */
int	 action_reason_ok(const char *);

#endif /* NOPS_ACTION_H */
