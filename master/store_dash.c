/*
 * The store's reads for the dashboard's overview (store_dash.h).
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "log.h"
#include "store_priv.h"
#include "store_dash.h"

#define SD_ACTIVE_SQL(where)						\
	"SELECT id, namespace, job, state, commit_id, created_at,"	\
	" updated_at, reason, NULL FROM deployments WHERE " where	\
	" ORDER BY id DESC"

/*
 * A failed deployment stays listed until a later one of its job
 * completes or it is acknowledged, whatever came after it.
 */
#define SD_FAILED_SQL							\
	"SELECT d.id, d.namespace, d.job, NULL, NULL, NULL, NULL,"	\
	" d.reason, d.ended_at FROM deployments d LEFT JOIN (SELECT"	\
	" namespace, job, max(id) AS cid FROM deployments WHERE"	\
	" state = 'completed' GROUP BY namespace, job) c ON"		\
	" c.namespace = d.namespace AND c.job = d.job WHERE"		\
	" d.state = 'failed' AND d.id > coalesce(c.cid, 0) AND NOT"	\
	" EXISTS (SELECT 1 FROM events e WHERE e.target ="		\
	" 'deployment/' || d.id AND e.action ="				\
	" 'deployment.acknowledge') ORDER BY d.id DESC"

int
store_dash_walk(struct store *s, enum store_dash_list which,
    int (*cb)(const struct store_dash_row *, void *), void *arg)
{
	struct store_dash_row	 dr;
	sqlite3_stmt		*st;
	const char		*sql;
	int			 n = 0, rc = SQLITE_DONE, stop = 0;

	switch (which) {
	case STORE_DASH_APPROVAL:
		sql = SD_ACTIVE_SQL("state = 'pending_approval'");
		break;
	case STORE_DASH_PROMOTION:
		sql = SD_ACTIVE_SQL("state = 'awaiting_promotion'");
		break;
	case STORE_DASH_IN_PROGRESS:
		sql = SD_ACTIVE_SQL("state IN ('pre_hooks', 'registering',"
		    " 'waiting_health', 'post_hooks', 'preflight',"
		    " 'deploying')");
		break;
	case STORE_DASH_FAILED:
		sql = SD_FAILED_SQL;
		break;
	default:
		return -1;
	}
	if ((st = store_prepare(s, sql)) == NULL)
		return -1;
	/*
	 * Alike on purpose: the step loops of store_leftbehind_list,
	 * store_operation_running, store_auth_walk and
	 * store_hosts_step_walk: each copies its own columns into its own
	 * row type for a callback of that type; one loop for all would need
	 * a void * adapter per type, longer than the loop it saves.
	 */
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		dr.dr_id = sqlite3_column_int64(st, 0);
		dr.dr_ns = store_col_text(st, 1);
		dr.dr_job = store_col_text(st, 2);
		dr.dr_state = store_col_text(st, 3);
		dr.dr_commit = store_col_text(st, 4);
		dr.dr_created_at = sqlite3_column_int64(st, 5);
		dr.dr_updated_at = sqlite3_column_int64(st, 6);
		dr.dr_reason = store_col_text(st, 7);
		dr.dr_ended_at = sqlite3_column_int64(st, 8);
		n++;
		stop = cb(&dr, arg);
	}
	(void)sqlite3_reset(st);
	return stop || rc == SQLITE_DONE ? n : -1;
}
