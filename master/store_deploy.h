/*
 * The store's rows of deployments: the deployments table, the hooks
 * frozen into each (deployment_hooks), their runs (hook_runs) and the
 * jobs nops registered (registered_jobs).  Plain structs in and out
 * (deploy.h); the SQL is in store_deploy.c alone.  Writes run inside a
 * transaction the caller opened, unless said otherwise.
 */
#ifndef NOPS_STORE_DEPLOY_H
#define NOPS_STORE_DEPLOY_H

#include <stddef.h>
#include <stdint.h>

#include "deploy.h"

struct store;

/*
 * store_deploy_insert: d and its hooks, in state d->d_state, created
 * now; sets d->d_id, d_created_at and d_updated_at.  0 or -1.
 */
int		 store_deploy_insert(struct store *, struct deploy *)
		    __must_check;
/*
 * store_deploy_set_state: from -> to, only if the deployment is still in
 * from; reason (may be NULL) replaces the old one, and a terminal state
 * sets ended_at.  1 if it moved, 0 if it was not in from, -1 on error.
 */
int		 store_deploy_set_state(struct store *, int64_t id,
		    enum deploy_state from, enum deploy_state to,
		    const char *reason) __must_check;

/* store_deploy_set_*: record a fact of the apply. */
int		 store_deploy_set_approval(struct store *, int64_t id,
		    const char *who, const char *hash) __must_check;
int		 store_deploy_set_apply(struct store *, int64_t id,
		    int64_t started, int64_t timeout_at) __must_check;
int		 store_deploy_set_register(struct store *, int64_t id,
		    const char *eval_id, int64_t job_version) __must_check;
int		 store_deploy_set_nomad_deployment(struct store *, int64_t id,
		    const char *) __must_check;

/* Reads: fill *d (deploy_free it).  0 found, 1 not found, -1 error. */
int		 store_deploy_load(struct store *, int64_t id, struct deploy *)
		    __must_check;
int		 store_deploy_active(struct store *, const char *ns,
		    const char *job, struct deploy *) __must_check;
/* The newest terminal deployment of a job. */
int		 store_deploy_last_terminal(struct store *, const char *ns,
		    const char *job, struct deploy *) __must_check;
/* Ids of every non-terminal job deployment, oldest first; caller frees. */
int		 store_deploy_active_ids(struct store *, int64_t **ids,
		    size_t *n) __must_check;

/*
 * The newest completed deployment of a job that kept its source (what a
 * new one's git change is against).  The strings are only valid during
 * cb.  0 (cb called or no such row), or -1.
 */
struct store_deploy_source {
	const char	*ds_commit;
	const char	*ds_path;
	const char	*ds_source;
	const char	*ds_vars_source;
};
int		 store_deploy_last_source(struct store *, const char *ns,
		    const char *job,
		    void (*cb)(const struct store_deploy_source *, void *),
		    void *arg);

/*
 * The newest deployment of a job that ended completed, failed or
 * rejected (superseded ones do not count): cb gets its id, state and
 * spec hash (either may be NULL; valid only during cb).  0 found, 1
 * none, -1 error.
 */
int		 store_deploy_last_ended(struct store *, const char *ns,
		    const char *job, void (*cb)(int64_t id, const char *state,
		    const char *hash, void *), void *arg);

/*
 * store_deploy_list: deployments newest first, with only the fields a
 * list shows set in the struct deploy (never the spec, the diff or the
 * hooks).  Each filter may be NULL (state, ns, job) or 0 (before: only
 * ids below it).  readable (may be NULL) is asked with each row's
 * namespace first and a row it refuses is skipped unread; cb gets the
 * rest (the struct is freed after it returns) and a non-zero return
 * stops the walk.  0 at the end or when stopped, -1 if a read failed.
 */
struct store_deploy_filter {
	const char	*df_state;
	const char	*df_ns;
	const char	*df_job;
	int64_t		 df_before;
	int		(*df_readable)(const char *ns, void *arg);
};
int		 store_deploy_list(struct store *,
		    const struct store_deploy_filter *,
		    int (*cb)(struct deploy *, void *), void *arg);

/*
 * Deployments by state: cb per state present, with its count and the
 * oldest created_at and updated_at.  0, or -1 if a read failed.
 */
int		 store_deploy_count_states(struct store *,
		    void (*cb)(const char *state, int64_t count,
		    int64_t oldest_created, int64_t oldest_updated, void *),
		    void *arg);

/*
 * The hook revisions that only ended deployments (ended after since)
 * use, with their namespace and the newest deployment that used them:
 * cb per revision.  0, or -1.
 */
int		 store_deploy_idle_hooks(struct store *, int64_t since,
		    void (*cb)(const char *revision, const char *ns,
		    int64_t deployment, void *), void *arg);

/*
 * The jobs nops registered, with the last deployment that registered
 * each (registered_jobs), by namespace and job: cb per job.  0, or -1
 * if a read failed.
 */
int		 store_deploy_registered(struct store *,
		    void (*cb)(const char *ns, const char *job, int64_t last,
		    void *), void *arg);

/*
 * Has someone acknowledged the failed deployment id (an audit event
 * "deployment.acknowledge" on it)?  1 or 0, or -1 on a store error.
 */
int		 store_deploy_acknowledged(struct store *, int64_t id);
/*
 * The newest completed deployment of a job in *id (0: none).  0, or -1
 * on a store error.
 */
int		 store_deploy_last_completed(struct store *, const char *ns,
		    const char *job, int64_t *id);

/* Hook runs. */
int		 store_deploy_hookrun_get(struct store *, const char *token,
		    struct hook_run *) __must_check;
int		 store_deploy_hookrun_create(struct store *, int64_t deployment,
		    const char *phase, int position, const char *token)
		    __must_check;
int		 store_deploy_hookrun_update(struct store *, const char *token,
		    const char *state, const char *child, int exit_code,
		    const char *error) __must_check;
/* Keep a finished run's redacted output (outside a transaction too). */
int		 store_deploy_hookrun_set_output(struct store *,
		    const char *token, const char *output) __must_check;
/* Delete the run of token, to dispatch it afresh. */
int		 store_deploy_hookrun_clear(struct store *, const char *token)
		    __must_check;

/*
 * The last health progress of a deployment, as the JSON text the API
 * shows: store_deploy_set_health keeps it, store_deploy_health returns
 * it (the caller frees) or NULL when none is kept or the store fails.
 */
int		 store_deploy_set_health(struct store *, int64_t id,
		    const char *) __must_check;
char		*store_deploy_health(struct store *, int64_t id);

#endif /* NOPS_STORE_DEPLOY_H */
