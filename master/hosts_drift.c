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
#include "xmalloc.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_hosts.h"
#include "store_job.h"
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

/* The plan git has now, if it has no error: one to probe and decide. */
static const struct plan *
hosts_plan_whole(const char *repo, const char **commit)
{
	const struct plan	*pl;

	if ((pl = plans_get(repo, commit)) == NULL || pl->pl_nerrors_all > 0)
		return NULL;
	return pl;
}

/* The state of the plan's i-th host, made if new; NULL: it is in no phase. */
static struct hosts_host *
hosts_phase_host(const struct plan *pl, size_t i, const char *repo)
{
	if (pl->pl_hosts[i].ph_phase < 0)
		return NULL;
	return hosts_host_get(repo, pl->pl_hosts[i].ph_name, 1);
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

	if ((pl = hosts_plan_whole(repo, &commit)) == NULL)
		return;
	for (i = 0; i < pl->pl_nhosts; i++) {
		if ((hh = hosts_phase_host(pl, i, repo)) == NULL)
			continue;
		if (hh->hh_probing)
			continue;
		if ((hp = calloc(1, sizeof(*hp))) == NULL)
			fatal("calloc");
		hp->hp_repo = xstrdup(repo);
		hp->hp_host = xstrdup(pl->pl_hosts[i].ph_name);
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
hosts_spec_hash(const struct plan *pl, char **spec,
    char hash[ENGINE_HASHLEN + 1])
{
	json_t	*j = plan_spec_json(pl);

	*spec = engine_json_canonical(j);
	json_decref(j);
	engine_sha256_hex(*spec, strlen(*spec), hash);
}

/* What hosts_decide() needs of a plan deployment. */
struct hosts_found {
	int64_t		 hf_id;
	char		 hf_state[32];
	char		 hf_hash[ENGINE_HASHLEN + 1];
};

static int
hosts_found_row(const struct store_hosts_deploy *hd, void *arg)
{
	struct hosts_found	*hf = arg;

	hf->hf_id = hd->hd_id;
	strlcpy(hf->hf_state, hd->hd_state, sizeof(hf->hf_state));
	strlcpy(hf->hf_hash, hd->hd_spec_hash, sizeof(hf->hf_hash));
	return 0;
}

/* Is this spec blocked: its last deployment failed or was rejected? */
static int
hosts_blocked(const char *repo, const char *hash)
{
	struct hosts_found	 hf;

	switch (store_hosts_plan_find(hosts_store(), repo,
	    STORE_HOSTS_LAST_ENDED, hosts_found_row, &hf)) {
	case 0:
		return 0;
	case 1:
		return strcmp(hf.hf_state, "completed") != 0 &&
		    strcmp(hf.hf_hash, hash) == 0;
	default:
		/* Unknown counts as blocked: the next tick asks again. */
		return 1;
	}
}

/*
 * The steps, saved before anything acts: one per host in phase order,
 * and the preflight tests, which run first (phase -1, host the test's
 * name).
 */
static int
hosts_create_steps(int64_t id, const char *repo, const struct plan *pl)
{
	struct store_hosts_step	 sh;
	const struct plan_host	*h;
	struct hosts_host	*hh;
	size_t			 i, j;
	int			 insync;

	memset(&sh, 0, sizeof(sh));
	for (i = 0; i < pl->pl_nphases; i++)
		for (j = 0; j < pl->pl_phases[i].pp_nhosts; j++) {
			h = &pl->pl_hosts[pl->pl_phases[i].pp_hosts[j]];
			/* A host seen running its system has nothing to do. */
			hh = hosts_host_get(repo, h->ph_name, 0);
			insync = hh != NULL &&
			    hh->hh_error == NULL && hh->hh_current != NULL &&
			    strcmp(hh->hh_current, h->ph_system) == 0;
			sh.sh_phase_index = (int)i;
			sh.sh_phase = pl->pl_phases[i].pp_name;
			sh.sh_position = (int)j;
			sh.sh_host = h->ph_name;
			sh.sh_step = insync ? "record" : "copy";
			sh.sh_system = h->ph_system;
			sh.sh_state = insync ? "skipped" : "pending";
			sh.sh_error = insync ?
			    "already runs the wanted system" : NULL;
			if (store_hosts_step_add(hosts_store(), id, &sh) == -1)
				return -1;
		}
	sh.sh_phase_index = -1;
	sh.sh_phase = sh.sh_step = "preflight";
	sh.sh_state = sh.sh_error = NULL;
	for (i = 0; i < pl->pl_ntests; i++) {
		sh.sh_position = (int)i;
		sh.sh_host = pl->pl_tests[i].pt_name;
		sh.sh_system = pl->pl_tests[i].pt_build;
		if (store_hosts_step_add(hosts_store(), id, &sh) == -1)
			return -1;
	}
	return 0;
}

static int
hosts_create(const char *repo, const char *commit, const struct plan *pl,
    const char *spec, const char *hash, const char *why)
{
	struct store_hosts_new	 hn;
	int64_t			 id, now = time(NULL);
	char			 target[64], detail[512];
	int			 autostart = strcmp(pl->pl_policy, "auto") == 0;

	memset(&hn, 0, sizeof(hn));
	hn.hn_plan = repo;
	hn.hn_commit = commit;
	hn.hn_spec = spec;
	hn.hn_spec_hash = hash;
	hn.hn_policy = pl->pl_policy;
	hn.hn_state = autostart ? "deploying" : "pending_approval";
	hn.hn_reason = why;
	hn.hn_now = now;
	hn.hn_started = autostart;
	if (store_begin(hosts_store()) == -1)
		return -1;
	if (store_hosts_deploy_create(hosts_store(), &hn, &id) == -1 ||
	    hosts_create_steps(id, repo, pl) == -1)
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
	    store_error(hosts_store()));
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
	struct hosts_found	 hf;
	char			*spec, hash[ENGINE_HASHLEN + 1], why[256];
	size_t			 i, ndrift = 0;
	int			 rc;

	/*
	 * Alike on purpose: hosts_probe_repo walks a plan's hosts the same
	 * way; there each is probed, here each is decided.
	 */
	if ((pl = hosts_plan_whole(repo, &commit)) == NULL)
		return;
	for (i = 0; i < pl->pl_nhosts; i++) {
		if ((hh = hosts_phase_host(pl, i, repo)) == NULL)
			continue;
		if (hh->hh_error != NULL || hh->hh_current == NULL ||
		    strcmp(hh->hh_current, pl->pl_hosts[i].ph_system) != 0)
			ndrift++;
	}
	hosts_spec_hash(pl, &spec, hash);
	rc = store_hosts_plan_find(hosts_store(), repo, STORE_HOSTS_ACTIVE,
	    hosts_found_row, &hf);
	if (rc == 1) {
		/* A waiting deployment of another spec is superseded. */
		if (strcmp(hf.hf_hash, hash) != 0 &&
		    strcmp(hf.hf_state, "pending_approval") == 0 &&
		    store_begin(hosts_store()) == 0) {
			if (deploy_transition(hosts_store(), hf.hf_id,
			    DS_PENDING_APPROVAL, DS_SUPERSEDED, "system",
			    "supersede", "the plan changed") != 1 ||
			    store_commit(hosts_store()) == -1)
				store_rollback(hosts_store());
			else
				rc = 0;
		}
	}
	if (rc != 0 || ndrift == 0 || hosts_blocked(repo, hash) ||
	    store_job_get(engine_store(), STORE_JOB_PAUSE, "", repo, NULL,
	    NULL, NULL) == 1) {
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
