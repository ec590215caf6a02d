/*
 * The store's reads for the dashboard's overview (api_dashboard.c):
 * deployments that need attention or are under way, newest first, each
 * list bounded by the jobs (one active deployment per job) or by an
 * index, never by the history.
 *
 * The row callback gets strings valid only during the call (a column
 * that is NULL is NULL), must not use the store, and stops the walk by
 * returning non-zero.  Times are unix seconds, 0 where NULL.
 */
#ifndef NOPS_STORE_DASH_H
#define NOPS_STORE_DASH_H

#include <stdint.h>

struct store;

enum store_dash_list {
	STORE_DASH_APPROVAL,	/* pending approval */
	STORE_DASH_PROMOTION,	/* awaiting promotion */
	STORE_DASH_IN_PROGRESS,	/* hooks, registering, health, a plan's */
	/*
	 * Failed and needing attention: until a later deployment of the
	 * job completes or someone acknowledges it (an audit event
	 * deployment.acknowledge); only id, namespace, job, reason and
	 * ended_at are set.
	 */
	STORE_DASH_FAILED,
};

/*
 * Alike on purpose: the other row structs (store_leftbehind_row,
 * store_hosts_new, store_operation_def, operation.h's, the wire_*
 * structs of shared/): members of the same types in a row, each its
 * own table's or message's.
 */
struct store_dash_row {
	int64_t		 dr_id;
	const char	*dr_ns;
	const char	*dr_job;
	const char	*dr_state;
	const char	*dr_commit;
	const char	*dr_reason;
	int64_t		 dr_created_at;
	int64_t		 dr_updated_at;
	int64_t		 dr_ended_at;
};

/* The rows of the list to cb: their number, or -1. */
int	store_dash_walk(struct store *, enum store_dash_list,
	    int (*cb)(const struct store_dash_row *, void *), void *);

#endif /* NOPS_STORE_DASH_H */
