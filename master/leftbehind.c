/*
 * Objects left behind: the records, and the API that lists, retries and
 * forgets them (GET/POST /api/v1/deployments/left-behind/{deployment},
 * DELETE /api/v1/deployments/left-behind/{entry}/{deployment}).
 *
 * A record holds what its retry needs and nothing secret: the kind of
 * object, its environment (a namespace), its name, the last line of the
 * error and the deployment it belongs to.  There is no foreign key: the
 * records stay when the deployment is gone.
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sqlite3.h>

#include "log.h"
#include "nopsd.h"
#include "master.h"
#include "store.h"
#include "engine.h"
#include "leftbehind.h"

/* The last non-empty line of an error, bounded: what a record keeps. */
static void
leftbehind_last_line(const char *error, char *buf, size_t len)
{
	const char	*end, *start;

	end = error + strlen(error);
	while (end > error && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' '))
		end--;
	start = end;
	while (start > error && start[-1] != '\n')
		start--;
	if ((size_t)(end - start) >= len)
		start = end - (len - 1);
	memcpy(buf, start, end - start);
	buf[end - start] = '\0';
}

int
leftbehind_add(const char *kind, const char *env, const char *object,
    int64_t deployment, const char *error)
{
	struct store	*s = engine_store();
	sqlite3_stmt	*st;
	char		 line[512], target[64];

	leftbehind_last_line(error != NULL ? error : "failed", line,
	    sizeof(line));
	if (store_begin(s) == -1)
		return -1;
	/* Already recorded: keep the record, refresh its error. */
	st = store_prepare(s, "UPDATE left_behind SET error = ?1 WHERE"
	    " kind = ?2 AND environment = ?3 AND object = ?4");
	if (st == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, line, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, env, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, object, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
	if (sqlite3_changes(store_db(s)) > 0)
		goto commit;
	st = store_prepare(s, "INSERT INTO left_behind (deployment_id, kind,"
	    " object, environment, error, created_at) VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?6)");
	if (st == NULL)
		goto fail;
	sqlite3_bind_int64(st, 1, deployment);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, object, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, env, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, line, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, time(NULL));
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
	snprintf(target, sizeof(target), "deployment/%lld",
	    (long long)deployment);
	if (store_event(s, "system", "left_behind.add", target, object) == -1)
		goto fail;
commit:
	if (store_commit(s) == 0)
		return 0;
fail:
	store_rollback(s);
	log_warnx("cannot record %s %s/%s left behind", kind, env, object);
	return -1;
}

int
leftbehind_clear(const char *kind, const char *env, const char *object)
{
	struct store	*s = engine_store();
	sqlite3_stmt	*st;
	int		 rc;

	if (store_begin(s) == -1)
		return -1;
	st = store_prepare(s, "DELETE FROM left_behind WHERE kind = ?1 AND"
	    " environment = ?2 AND object = ?3");
	if (st == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, env, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, object, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE && store_commit(s) == 0)
		return 0;
fail:
	store_rollback(s);
	return -1;
}
