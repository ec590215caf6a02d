/*
 * The store's rows of operations: the operations frozen into each
 * deployment (deployment_operations) and the run log (operation_runs)
 * of jobs' and hosts' runs.  The SQL is in store_operation.c alone.
 * Writes run inside a transaction the caller opened.
 */
#ifndef NOPS_STORE_OPERATION_H
#define NOPS_STORE_OPERATION_H

#include <stdint.h>

struct store;

/* An integer column that is NULL, in the rows below. */
#define STORE_OPERATION_NULL	INT64_MIN

/* An operation frozen into a deployment; any string may be NULL. */
/* Alike on purpose: store_hosts_new (store_hosts.h); other rows. */
struct store_operation_def {
	const char	*od_name;
	const char	*od_job_id;
	const char	*od_group;
	const char	*od_spec;
	const char	*od_spec_hash;
	const char	*od_revision;
	const char	*od_schema;
	int		 od_sensitive;
	const char	*od_description;
	const char	*od_confirm;
	const char	*od_error;
};

/* Save (or replace) operation od of deployment: 0 or -1. */
int		 store_operation_def_put(struct store *, int64_t deployment,
		    const struct store_operation_def *);
/*
 * The operations of deployment (name NULL: all, else that one), by group
 * and name: cb per row (od_spec_hash is not read; the strings are valid
 * during cb only).  0, or -1 if the read failed.
 */
int		 store_operation_defs(struct store *, int64_t deployment,
		    const char *name,
		    void (*cb)(const struct store_operation_def *, void *),
		    void *arg);

/* A row of the run log; strings valid during a callback only. */
struct store_operation_run {
	int64_t		 or_id;
	const char	*or_ns;		/* "": a host's run */
	const char	*or_job;	/* a host's: the plan's repository */
	const char	*or_instance;	/* a host's: the host */
	const char	*or_operation;
	int64_t		 or_deployment;
	const char	*or_actor;
	int		 or_sensitive;
	int64_t		 or_started_at;	/* or STORE_OPERATION_NULL */
	int64_t		 or_ended_at;	/* or STORE_OPERATION_NULL */
	const char	*or_state;
	int64_t		 or_exit_code;	/* or STORE_OPERATION_NULL */
	const char	*or_output;
	const char	*or_error;
};

/* A new run, "running" since now: its id, or -1. */
int64_t		 store_operation_run_insert(struct store *,
		    int64_t deployment, const char *ns, const char *job,
		    const char *instance, const char *operation,
		    const char *actor, int sensitive);
/* Keep only the newest keep runs of ns/job/instance: 0 or -1. */
int		 store_operation_run_trim(struct store *, const char *ns,
		    const char *job, const char *instance, int keep);
/* Run id ended now (exit_code < 0: none; output may be NULL): 0 or -1. */
int		 store_operation_run_end(struct store *, int64_t id,
		    const char *state, int exit_code, const char *output,
		    const char *error);
/* Run id, if still "running", is lost now with why: 0 or -1. */
int		 store_operation_run_lost(struct store *, int64_t id,
		    const char *why);
/* Delete the run log of ns/job: the runs deleted, or -1. */
int		 store_operation_run_forget(struct store *, const char *ns,
		    const char *job);
/*
 * Run id of ns and job (NULL: any job): cb with it.  1 found, 0 not, -1
 * on a store error.
 */
int		 store_operation_run_get(struct store *, int64_t id,
		    const char *ns, const char *job,
		    void (*cb)(const struct store_operation_run *, void *),
		    void *arg);
/*
 * The runs of ns/job (instance NULL: all), with id < before (0: from the
 * newest), newest first, at most limit: cb per row, a non-zero return
 * stops the walk.  0, or -1 if the read failed.
 */
int		 store_operation_run_page(struct store *, const char *ns,
		    const char *job, const char *instance, int64_t before,
		    int64_t limit,
		    int (*cb)(const struct store_operation_run *, void *),
		    void *arg);

/*
 * The runs still "running" (after a restart), oldest first, with the
 * revision of their operation (NULL: gone from the store): cb per run,
 * a non-zero return stops the walk.  Only or_id, or_ns, or_job,
 * or_operation, or_sensitive and or_started_at are set.  0, or -1.
 */
int		 store_operation_running(struct store *,
		    int (*cb)(const struct store_operation_run *,
		    const char *revision, void *), void *arg);
/*
 * Runs under way on revision rev in ns: 1 if any (or the store failed),
 * 0 if none.
 */
int		 store_operation_revision_busy(struct store *, const char *ns,
		    const char *rev);
/*
 * Operation revisions run since since that no deployment offers any
 * more (neither an active one nor the last completed of its job) and
 * that no run is under way on: cb with the revision, its namespace and
 * the newest deployment that froze it.  0, or -1.
 */
int		 store_operation_idle_revisions(struct store *, int64_t since,
		    void (*cb)(const char *rev, const char *ns,
		    int64_t deployment, void *), void *arg);

#endif /* NOPS_STORE_OPERATION_H */
