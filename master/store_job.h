/*
 * The store's rows of a job's standing: a person's pause (holds) and a
 * suspend (suspends), each with who set it, why and since when.  The SQL
 * is in store_job.c alone.  Writes run inside a transaction the caller
 * opened, with the audit event the caller writes.
 */
#ifndef NOPS_STORE_JOB_H
#define NOPS_STORE_JOB_H

#include <stdint.h>

struct store;

/*
 * store_job_*_get: 1 if the job is held (paused) or suspended, with who,
 * reason (copies the caller frees) and since set where not NULL; 0 if
 * not; -1 on a store error.
 */
int		 store_job_pause_get(struct store *, const char *ns,
		    const char *job, char **who, char **reason,
		    int64_t *since);
int		 store_job_suspend_get(struct store *, const char *ns,
		    const char *job, char **who, char **reason,
		    int64_t *since);

/* Set (or replace who and reason of) a pause or a suspend: 0 or -1. */
int		 store_job_pause_set(struct store *, const char *ns,
		    const char *job, const char *who, const char *reason);
int		 store_job_suspend_set(struct store *, const char *ns,
		    const char *job, const char *who, const char *reason);

/* Remove a pause or a suspend: the rows removed (0 or 1), or -1. */
int		 store_job_pause_clear(struct store *, const char *ns,
		    const char *job);
int		 store_job_suspend_clear(struct store *, const char *ns,
		    const char *job);

#endif /* NOPS_STORE_JOB_H */
