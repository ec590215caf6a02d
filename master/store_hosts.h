/*
 * The store's rows of deploy plans' hosts: a plan's deployments (kind
 * "plan", namespace "", job the repository), their host steps
 * (deployment_steps) and the hosts' operation runs left running.  The
 * caller opens the transaction where a group of writes must be one
 * (store_begin(), store.h).
 *
 * Row callbacks get strings valid only during the call and must not use
 * the store.  Lookups return 1 (cb was called), 0 (no such row) or -1;
 * walks the number of rows passed to cb, or -1; the others 0 or -1.
 * Times are unix seconds; a time the row does not have (NULL) is 0.
 */
#ifndef NOPS_STORE_HOSTS_H
#define NOPS_STORE_HOSTS_H

#include <stddef.h>
#include <stdint.h>

struct store;

/* A plan's deployment. */
struct store_hosts_deploy {
	int64_t		 hd_id;
	const char	*hd_plan;	/* the repository */
	const char	*hd_state;
	const char	*hd_spec_hash;
	const char	*hd_commit;
	const char	*hd_spec;	/* the plan as JSON */
	size_t		 hd_speclen;
};

/* Which deployment of a plan store_hosts_plan_find() looks for. */
enum store_hosts_which {
	STORE_HOSTS_ACTIVE,	/* not ended (one at most) */
	STORE_HOSTS_LAST_ENDED,	/* the last completed, failed or rejected */
	STORE_HOSTS_LAST_COMPLETED,
};

/* A new plan deployment. */
/* Alike on purpose: store_operation_def (store_operation.h); other rows. */
struct store_hosts_new {
	const char	*hn_plan;	/* the repository */
	const char	*hn_commit;
	const char	*hn_spec;
	const char	*hn_spec_hash;
	const char	*hn_policy;
	const char	*hn_state;
	const char	*hn_reason;
	int64_t		 hn_now;
	int		 hn_started;	/* it applies from now */
};

/*
 * A host step: a host of a phase (phase_index >= 0), or a preflight
 * test (phase_index -1, host the test's name).
 */
struct store_hosts_step {
	int64_t		 sh_id;
	int		 sh_phase_index;
	const char	*sh_phase;
	int		 sh_position;
	const char	*sh_host;
	const char	*sh_step;	/* preflight, copy, activate, ... */
	const char	*sh_goal;	/* NULL: chosen on the host */
	const char	*sh_system;
	const char	*sh_state;
	const char	*sh_error;
	int64_t		 sh_started_at;
	int64_t		 sh_ended_at;
};

int	store_hosts_plan_find(struct store *, const char *plan,
	    enum store_hosts_which,
	    int (*cb)(const struct store_hosts_deploy *, void *), void *);
/* A plan deployment by id, whatever its state. */
int	store_hosts_deploy_get(struct store *, int64_t id,
	    int (*cb)(const struct store_hosts_deploy *, void *), void *);
/* The ids of plan deployments that should run, oldest first; n or -1. */
int	store_hosts_deploy_running(struct store *, int64_t *ids, size_t max);
/* 0 (*id set), or -1. */
int	store_hosts_deploy_create(struct store *,
	    const struct store_hosts_new *, int64_t *id);
/* It applies from now on, unless it did already. */
int	store_hosts_deploy_started(struct store *, int64_t id, int64_t now);

/* Add a step (sh_id, the times are not read; sh_state NULL: pending). */
int	store_hosts_step_add(struct store *, int64_t deployment,
	    const struct store_hosts_step *);
/* Every step of a deployment, by phase and position. */
int	store_hosts_steps_walk(struct store *, int64_t deployment,
	    int (*cb)(const struct store_hosts_step *, void *), void *);
/* The first step not succeeded or skipped. */
int	store_hosts_step_next(struct store *, int64_t deployment,
	    int (*cb)(const struct store_hosts_step *, void *), void *);
/*
 * Save a step's step, state, goal (NULL: none) and error (NULL: none);
 * started_at is set once, ended_at if terminal, else cleared.
 */
int	store_hosts_step_save(struct store *, int64_t id, const char *step,
	    const char *state, const char *goal, const char *error,
	    int64_t now, int terminal);

/* Hosts' operation runs still "running" become "lost" at now. */
int	store_hosts_runs_lost(struct store *, int64_t now);

#endif /* NOPS_STORE_HOSTS_H */
