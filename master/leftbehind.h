/*
 * Objects left behind (master/leftbehind.c): a cleanup step that failed
 * while the run went on leaves a record of its object, with what a retry
 * needs (never a secret), the last line of the error and the deployment
 * it belongs to.  No foreign key: records outlive their deployment.  A
 * later successful write of the same object removes its record.
 */
#ifndef NOPS_LEFTBEHIND_H
#define NOPS_LEFTBEHIND_H

#include <stdint.h>

/* Kinds of object. */
#define LB_HOOK_REVISION	"hook_revision"	/* a hook revision to stop */
#define LB_SUSPEND		"suspend"	/* a job to register stopped */
#define LB_OPERATION_REVISION	"operation_revision" /* one to stop */

/* Record (or refresh) an object left behind; 0, or -1 on a store error. */
int	 leftbehind_add(const char *kind, const char *env, const char *object,
	    int64_t deployment, const char *error);
/* The object was written: its record, if any, goes. */
int	 leftbehind_clear(const char *kind, const char *env,
	    const char *object);

/*
 * Revisions no one needs (hook revisions, engine_hooks.c; operation
 * revisions, operation.c), stopped after each detection cycle: the
 * store's walk of a kind's idle revisions calls leftbehind_clean_one
 * with the kind as arg.  A revision gone, stopped already, unknown now
 * (asked again after a cycle) or busy is left alone; a stop that fails
 * is left behind.
 */
struct store;
struct leftbehind_clean {
	const char	*lk_kind;	/* LB_HOOK_REVISION, ... */
	const char	*lk_what;	/* "hook", ...: for the log */
	const char	*lk_why;	/* why no one needs it: for the log */
	/* 1: a run is under way on it, leave it (NULL: never). */
	int		(*lk_busy)(struct store *, const char *ns,
			    const char *rev);
	int		 lk_inflight;	/* reads and stops under way */
};
void	 leftbehind_clean_one(const char *rev, const char *ns,
	    int64_t deployment, void *kind);

#endif /* NOPS_LEFTBEHIND_H */
