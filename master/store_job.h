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

/* Which standing: the table (and kind) its row is kept in. */
enum store_job_kind {
	STORE_JOB_PAUSE,	/* holds, kind 'pause' */
	STORE_JOB_SUSPEND	/* suspends */
};

/*
 * store_job_get: 1 if the job is paused or suspended, with who, reason
 * (copies the caller frees) and since set where not NULL; 0 if not; -1
 * on a store error.
 */
int		 store_job_get(struct store *, enum store_job_kind,
		    const char *ns, const char *job, char **who, char **reason,
		    int64_t *since);
/*
 * Set (or replace who and reason of) a pause or a suspend, since now; a
 * NULL reason is kept as "": 0 or -1.
 */
int		 store_job_set(struct store *, enum store_job_kind,
		    const char *ns, const char *job, const char *who,
		    const char *reason);
/* Remove a pause or a suspend: the rows removed (0 or 1), or -1. */
int		 store_job_clear(struct store *, enum store_job_kind,
		    const char *ns, const char *job);

#endif /* NOPS_STORE_JOB_H */
