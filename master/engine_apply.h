/*
 * What the apply's files share (master/engine_apply.c: register, health,
 * promotion, the cycle; master/engine_hooks.c: hook runs).  Private to them.
 */
#ifndef NOPS_ENGINE_APPLY_H
#define NOPS_ENGINE_APPLY_H

#include <stdarg.h>
#include <stdint.h>

#include <jansson.h>

#include "deploy.h"

struct nomad_result;
struct event;

/* The context of one asynchronous step. */
struct astep {
	int64_t		 as_id;
	char		*as_ns;
	char		*as_job;
	char		*as_spec;	/* register: what to register */
	char		*as_diff;	/* register: the diff approved */
	int64_t		 as_cas;
	char		*as_token;	/* hooks: the run's token */
	char		*as_phase;
	char		*as_revision;
	char		*as_child;
	char		*as_hook;
	char		*as_commit;
	int		 as_timeout;
	int64_t		 as_started;
	int64_t		 as_version;
	uint64_t	 as_index;
	int		 as_rechecked;	/* register: planned again with
					   live counts */
	int		 as_nothing;	/* health: the job places nothing */
	char		*as_nomad_deployment;
	json_t		*as_meta;	/* dispatch meta */
	json_t		*as_dep;	/* health: the Nomad deployment */
	json_t		*as_allocs;	/* health: the job's allocations */
	int		 as_attempts;	/* hooks: dispatches sent */
	struct event	*as_timer;	/* hooks: the next dispatch */
};

int		 apply_claim(int64_t);
void		 apply_release(int64_t);
struct astep	*apply_step_new(const struct deploy *);
void		 apply_step_done(struct astep *);
int		 apply_move(int64_t, enum deploy_state, enum deploy_state,
		    const char *action, const char *reason);
void		 apply_fail(int64_t, enum deploy_state, const char *, ...)
		    __attribute__((__format__(printf, 3, 4)));
void		 apply_vfail(int64_t, enum deploy_state, const char *, va_list)
		    __attribute__((__format__(printf, 3, 0)));
int		 apply_transient(const struct nomad_result *);
const char	*apply_err(const struct nomad_result *);
void		 apply_unsaved(int64_t, const char *);

/* engine_health.c: wait for the registered version to be healthy. */
void		 health_apply(struct deploy *);
void		 health_promotion(struct deploy *);
int		 health_awaiting_promotion(const json_t *);

/* engine_hooks.c: run the hooks of a phase, one step per call. */
void		 hooks_apply(struct deploy *, const char *phase);
void		 hooks_left_behind_clear(const char *ns, const char *rev);
/* An allocation's exit code (-1: none), hooks' and operations'. */
int		 hooks_exit_code(const json_t *alloc);

#endif /* NOPS_ENGINE_APPLY_H */
