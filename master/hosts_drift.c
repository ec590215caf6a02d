/*
 * Drift of the hosts of deploy plans, and the deployments it makes
 * (hosts.h).  A host drifts when the system its plan names differs from
 * the one it runs (/run/current-system, read over SSH), or when it
 * cannot be read.  A valid plan with a drifting host makes one
 * deployment of kind "plan" (job = the repository), with the plan's
 * policy: "auto" starts it, "approval" waits for a person, who approves
 * the spec hash (every host's system and connection, checks and the
 * phase layout).  Like a job's, a failed or rejected deployment blocks
 * its spec until git changes it; a hold on the repository keeps new ones
 * from starting.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "deploy.h"
#include "engine.h"
#include "plan.h"
#include "plans.h"
#include "hosts.h"
#include "webpub.h"
#include "notify.h"

#define HOSTS_PROBE_TIMEOUT	30

struct hosts_probe {
	char			*hp_repo;
	char			*hp_host;
	char			 hp_commit[GITW_COMMIT_HEXLEN + 1];
};

static void	 hosts_decide(const char *repo);

/* The first line of s (at most n bytes) into buf, for a store path. */
static void
hosts_line(const char **s, char *buf, size_t n)
{
	size_t	 len = strcspn(*s, "\n");

	if (len >= n)
		len = 0;
	memcpy(buf, *s, len);
	buf[len] = '\0';
	*s += len + ((*s)[len] == '\n');
}

static void
hosts_probe_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hosts_probe	*hp = arg;
	struct hosts_host	*hh;
	const char		*p = res->hr_out;
	char			 cur[512], boot[512], err[SSH_ERROR_MAX + 64];
	const char		*commit;
	int			 pending = 0;

	if (res->hr_stage != SSH_STAGE_DONE || res->hr_status != 0) {
		snprintf(err, sizeof(err), "%s", res->hr_error[0] != '\0' ?
		    res->hr_error : "reading the current system failed");
		hosts_seen(hp->hp_repo, hp->hp_host, NULL, NULL, err);
	} else {
		hosts_line(&p, cur, sizeof(cur));
		hosts_line(&p, boot, sizeof(boot));
		hosts_seen(hp->hp_repo, hp->hp_host,
		    plan_store_path_ok(cur) ? cur : NULL,
		    plan_store_path_ok(boot) ? boot : NULL, NULL);
	}
	if ((hh = hosts_host_get(hp->hp_repo, hp->hp_host, 0)) != NULL)
		hh->hh_probing = 0;
	for (hh = hosts_host_first(); hh != NULL; hh = hosts_host_next(hh))
		if (strcmp(hh->hh_repo, hp->hp_repo) == 0 && hh->hh_probing)
			pending = 1;
	/* Every host of the plan read: decide, if the plan is the same. */
	if (!pending && plans_get(hp->hp_repo, &commit) != NULL &&
	    strcmp(commit, hp->hp_commit) == 0)
		hosts_decide(hp->hp_repo);
	free(hp->hp_repo);
	free(hp->hp_host);
	free(hp);
}

/* What a host runs: /run/current-system and /run/booted-system. */
#define HOSTS_PROBE_CMD							\
	"readlink -f /run/current-system || echo; "			\
	"readlink -f /run/booted-system || echo"

void
hosts_probe_repo(const char *repo)
{
	const struct plan	*pl;
	const char		*commit;
	struct hosts_host	*hh;
	struct hosts_probe	*hp;
	size_t			 i;

	if ((pl = plans_get(repo, &commit)) == NULL || pl->pl_nerrors_all > 0)
		return;
	for (i = 0; i < pl->pl_nhosts; i++) {
		if (pl->pl_hosts[i].ph_phase < 0)
			continue;
		hh = hosts_host_get(repo, pl->pl_hosts[i].ph_name, 1);
		if (hh->hh_probing)
			continue;
		if ((hp = calloc(1, sizeof(*hp))) == NULL ||
		    (hp->hp_repo = strdup(repo)) == NULL ||
		    (hp->hp_host = strdup(pl->pl_hosts[i].ph_name)) == NULL)
			fatal("calloc");
		strlcpy(hp->hp_commit, commit, sizeof(hp->hp_commit));
		hh->hh_probing = 1;
		if (hosts_ssh(&pl->pl_hosts[i], HOSTS_PROBE_CMD,
		    HOSTS_PROBE_TIMEOUT, NULL, 0, -1, hosts_probe_done,
		    hp) == 0) {
			hh->hh_probing = 0;
			free(hp->hp_repo);
			free(hp->hp_host);
			free(hp);
		}
	}
}

static void
hosts_spec_hash(const struct plan *pl, char **spec, char hash[ENGINE_HASHLEN + 1])
{
	json_t	*j = plan_spec_json(pl);

	*spec = engine_json_canonical(j);
	json_decref(j);
	engine_sha256_hex(*spec, strlen(*spec), hash);
}

/* The active plan deployment of repo: its id, state and spec hash. */
static int
hosts_active(const char *repo, int64_t *id, char *state, size_t statelen,
    char hash[ENGINE_HASHLEN + 1])
{
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare(hosts_store(), "SELECT id, state, spec_hash FROM"
	    " deployments WHERE kind = 'plan' AND namespace = '' AND job = ?"
	    " AND state NOT IN ('completed', 'failed', 'rejected',"
	    " 'superseded')");
	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, repo, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		strlcpy(state, (const char *)sqlite3_column_text(st, 1),
		    statelen);
		strlcpy(hash, (const char *)sqlite3_column_text(st, 2),
		    ENGINE_HASHLEN + 1);
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 1 : 0;
}

/* Is this spec blocked: its last deployment failed or was rejected? */
static int
hosts_blocked(const char *repo, const char *hash)
{
	sqlite3_stmt	*st;
	int		 blocked = 0, rc;

	st = store_prepare(hosts_store(), "SELECT state, spec_hash FROM deployments"
	    " WHERE kind = 'plan' AND namespace = '' AND job = ? AND state IN"
	    " ('completed', 'failed', 'rejected') ORDER BY id DESC LIMIT 1");
	if (st == NULL)
		return 1;
	sqlite3_bind_text(st, 1, repo, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(st, 0), "completed") != 0 &&
	    strcmp((const char *)sqlite3_column_text(st, 1), hash) == 0)
		blocked = 1;
	/* Unknown counts as blocked: the next tick asks again. */
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		blocked = 1;
	sqlite3_reset(st);
	return blocked;
}

/* One step per host, in phase order, saved before anything acts. */
static int
hosts_create_steps(int64_t id, const char *repo, const struct plan *pl)
{
	sqlite3_stmt	*st;
	struct hosts_host *hh;
	size_t		 i, j;
	int		 insync;

	for (i = 0; i < pl->pl_nphases; i++)
		for (j = 0; j < pl->pl_phases[i].pp_nhosts; j++) {
			const struct plan_host *h =
			    &pl->pl_hosts[pl->pl_phases[i].pp_hosts[j]];

			/* A host seen running its system has nothing to do. */
			hh = hosts_host_get(repo, h->ph_name, 0);
			insync = hh != NULL &&
			    hh->hh_error == NULL && hh->hh_current != NULL &&
			    strcmp(hh->hh_current, h->ph_system) == 0;
			st = store_prepare(hosts_store(), "INSERT INTO"
			    " deployment_steps (deployment_id, phase_index,"
			    " phase, position, host, step, system, state,"
			    " error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
			if (st == NULL)
				return -1;
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int(st, 2, (int)i);
			sqlite3_bind_text(st, 3, pl->pl_phases[i].pp_name, -1,
			    SQLITE_TRANSIENT);
			sqlite3_bind_int(st, 4, (int)j);
			sqlite3_bind_text(st, 5, h->ph_name, -1,
			    SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 6, insync ? "record" : "copy", -1,
			    SQLITE_STATIC);
			sqlite3_bind_text(st, 7, h->ph_system, -1,
			    SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 8, insync ? "skipped" : "pending",
			    -1, SQLITE_STATIC);
			if (insync)
				sqlite3_bind_text(st, 9, "already runs the "
				    "wanted system", -1, SQLITE_STATIC);
			else
				sqlite3_bind_null(st, 9);
			if (sqlite3_step(st) != SQLITE_DONE) {
				sqlite3_reset(st);
				return -1;
			}
			sqlite3_reset(st);
		}
	return 0;
}

/* Preflight tests first (phase_index -1; host: the test's name). */
static int
hosts_create_preflight(int64_t id, const struct plan *pl)
{
	sqlite3_stmt	*st;
	size_t		 i;

	for (i = 0; i < pl->pl_ntests; i++) {
		st = store_prepare(hosts_store(), "INSERT INTO deployment_steps"
		    " (deployment_id, phase_index, phase, position, host, step,"
		    " system) VALUES (?, -1, 'preflight', ?, ?, 'preflight', ?)");
		if (st == NULL)
			return -1;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, (int)i);
		sqlite3_bind_text(st, 3, pl->pl_tests[i].pt_name, -1,
		    SQLITE_TRANSIENT);
		if (pl->pl_tests[i].pt_build != NULL)
			sqlite3_bind_text(st, 4, pl->pl_tests[i].pt_build, -1,
			    SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 4);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_reset(st);
			return -1;
		}
		sqlite3_reset(st);
	}
	return 0;
}

static int
hosts_create(const char *repo, const char *commit, const struct plan *pl,
    const char *spec, const char *hash, const char *why)
{
	sqlite3_stmt	*st;
	int64_t		 id, now = time(NULL);
	char		 target[64], detail[512];
	int		 autostart = strcmp(pl->pl_policy, "auto") == 0;

	if (store_begin(hosts_store()) == -1)
		return -1;
	st = store_prepare(hosts_store(), "INSERT INTO deployments (kind,"
	    " namespace, job, repository, commit_id, spec, diff, spec_hash,"
	    " policy, state, reason, created_at, updated_at, apply_started_at)"
	    " VALUES ('plan', '', ?1, ?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?8, ?8,"
	    " ?9)");
	if (st == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, repo, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, commit, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, spec, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, pl->pl_policy, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, autostart ? "deploying" : "pending_approval",
	    -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, why, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 8, now);
	if (autostart)
		sqlite3_bind_int64(st, 9, now);
	else
		sqlite3_bind_null(st, 9);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
	id = sqlite3_last_insert_rowid(store_db(hosts_store()));

	if (hosts_create_steps(id, repo, pl) == -1 ||
	    hosts_create_preflight(id, pl) == -1)
		goto fail;
	snprintf(target, sizeof(target), "deployment/%lld", (long long)id);
	snprintf(detail, sizeof(detail), "plan %s at %.12s, state %s: %s",
	    repo, commit, autostart ? "deploying" : "pending_approval", why);
	if (store_event(hosts_store(), "system", "deployment.create", target,
	    detail) == -1)
		goto fail;
	if (store_commit(hosts_store()) == -1)
		return -1;
	log_info("deployment %lld: plan %s at %.12s (%s)", (long long)id, repo,
	    commit, autostart ? "deploying" : "waits for approval");
	notify_deployment(id, autostart ? DS_DEPLOYING : DS_PENDING_APPROVAL);
	webpub_changed();
	if (autostart)
		hosts_kick();
	return 0;
fail:
	log_warnx("hosts: cannot create the deployment of plan %s: %s", repo,
	    sqlite3_errmsg(store_db(hosts_store())));
	store_rollback(hosts_store());
	return -1;
}

/* A plan's hosts were read: is there drift, and may it be deployed? */
static void
hosts_decide(const char *repo)
{
	const struct plan	*pl;
	struct hosts_host	*hh;
	const char		*commit;
	char			*spec, hash[ENGINE_HASHLEN + 1];
	char			 ahash[ENGINE_HASHLEN + 1], state[32], why[256];
	int64_t			 id;
	size_t			 i, ndrift = 0;
	int			 rc;

	if ((pl = plans_get(repo, &commit)) == NULL || pl->pl_nerrors_all > 0)
		return;
	for (i = 0; i < pl->pl_nhosts; i++) {
		if (pl->pl_hosts[i].ph_phase < 0)
			continue;
		hh = hosts_host_get(repo, pl->pl_hosts[i].ph_name, 1);
		if (hh->hh_error != NULL || hh->hh_current == NULL ||
		    strcmp(hh->hh_current, pl->pl_hosts[i].ph_system) != 0)
			ndrift++;
	}
	hosts_spec_hash(pl, &spec, hash);
	rc = hosts_active(repo, &id, state, sizeof(state), ahash);
	if (rc == 1) {
		/* A waiting deployment of another spec is superseded. */
		if (strcmp(ahash, hash) != 0 &&
		    strcmp(state, "pending_approval") == 0 &&
		    store_begin(hosts_store()) == 0) {
			if (deploy_transition(hosts_store(), id, DS_PENDING_APPROVAL,
			    DS_SUPERSEDED, "system", "supersede",
			    "the plan changed") != 1 ||
			    store_commit(hosts_store()) == -1)
				store_rollback(hosts_store());
			else
				rc = 0;
		}
	}
	if (rc != 0 || ndrift == 0 || hosts_blocked(repo, hash) ||
	    engine_hold_get("", repo, NULL, NULL, NULL) == 1) {
		free(spec);
		return;
	}
	snprintf(why, sizeof(why), "%zu of the plan's hosts drift%s", ndrift,
	    ndrift == 1 ? "s" : "");
	hosts_create(repo, commit, pl, spec, hash, why);
	free(spec);
}

/* A plan changed (master/plans.c): read its hosts, then decide. */
void
hosts_plan_changed(const char *repo)
{
	hosts_probe_repo(repo);
	hosts_kick();
}
