/*
 * Deployments: their states, the audit line of each change, and the git
 * change a new one brings.  The rows are store_deploy.c's; the engine
 * saves every step there before it acts, so that recovery after a crash
 * is the same step run again.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "xmalloc.h"
#include "store.h"
#include "deploy.h"
#include "store_deploy.h"
#include "gitctx.h"

/* Alike on purpose: one name a state, each row the shape of the next. */
static const char *const deploy_states[DS_MAX] = {
	[DS_PENDING_APPROVAL] = "pending_approval",
	[DS_PRE_HOOKS] = "pre_hooks",
	[DS_REGISTERING] = "registering",
	[DS_WAITING_HEALTH] = "waiting_health",
	[DS_AWAITING_PROMOTION] = "awaiting_promotion",
	[DS_POST_HOOKS] = "post_hooks",
	[DS_COMPLETED] = "completed",
	[DS_FAILED] = "failed",
	[DS_REJECTED] = "rejected",
	[DS_SUPERSEDED] = "superseded",
	[DS_PREFLIGHT] = "preflight",
	[DS_DEPLOYING] = "deploying",
};

const char *
deploy_state_str(enum deploy_state s)
{
	if (s >= DS_MAX)
		return "unknown";
	return deploy_states[s];
}

int
deploy_state_parse(const char *s, enum deploy_state *out)
{
	int	 i;

	for (i = 0; i < DS_MAX; i++)
		if (strcmp(s, deploy_states[i]) == 0) {
			*out = (enum deploy_state)i;
			return 0;
		}
	return -1;
}

int
deploy_state_terminal(enum deploy_state s)
{
	return s == DS_COMPLETED || s == DS_FAILED || s == DS_REJECTED ||
	    s == DS_SUPERSEDED;
}

int
deploy_create(struct store *s, struct deploy *d, const char *actor)
{
	char		 target[64], detail[256];

	if (!store_in_transaction(s)) {
		log_warnx("deploy_create outside a transaction");
		return -1;
	}
	if (store_deploy_insert(s, d) == -1)
		return -1;
	snprintf(target, sizeof(target), "deployment/%lld",
	    (long long)d->d_id);
	snprintf(detail, sizeof(detail), "%s/%s at %.12s, state %s%s%s",
	    d->d_ns, d->d_job, d->d_commit, deploy_state_str(d->d_state),
	    d->d_reason != NULL ? ": " : "",
	    d->d_reason != NULL ? d->d_reason : "");
	if (store_event(s, actor, "deployment.create", target, detail) == -1)
		return -1;
	return 0;
}

int
deploy_transition(struct store *s, int64_t id, enum deploy_state from,
    enum deploy_state to, const char *actor, const char *action,
    const char *reason)
{
	char		 target[64], act[64], detail[1024];
	int		 rc;

	if (!store_in_transaction(s)) {
		log_warnx("deploy_transition outside a transaction");
		return -1;
	}
	if ((rc = store_deploy_set_state(s, id, from, to, reason)) != 1)
		return rc;

	snprintf(target, sizeof(target), "deployment/%lld", (long long)id);
	snprintf(act, sizeof(act), "deployment.%s", action);
	snprintf(detail, sizeof(detail), "%s -> %s%s%s", deploy_state_str(from),
	    deploy_state_str(to), reason != NULL ? ": " : "",
	    reason != NULL ? reason : "");
	if (store_event(s, actor, act, target, detail) == -1)
		return -1;
	return 1;
}

int
deploy_move(struct store *s, int64_t id, enum deploy_state from,
    enum deploy_state to, const char *action, const char *reason)
{
	int	 rc;

	if (store_begin(s) == -1)
		return -1;
	rc = deploy_transition(s, id, from, to, "system", action, reason);
	if (rc == -1 || store_commit(s) == -1) {
		store_rollback(s);
		return -1;
	}
	if (rc == 1)
		log_info("deployment %lld: %s -> %s%s%s", (long long)id,
		    deploy_state_str(from), deploy_state_str(to),
		    reason != NULL ? ": " : "", reason != NULL ? reason : "");
	return rc;
}

/* One file's change, appended to *out; the vars file's path by name. */
static void
deploy_change_add(char **out, const char *path, const char *old,
    const char *new)
{
	char	*diff, *all;

	if ((diff = gitctx_diff(path, old != NULL ? old : "",
	    new != NULL ? new : "")) == NULL)
		return;
	if (*out == NULL) {
		*out = diff;
		return;
	}
	all = xasprintf("%s%s", *out, diff);
	free(*out);
	free(diff);
	*out = all;
}

/* <dir>/<name>.vars.hcl of a job file <dir>/<name>.nomad[.hcl]. */
static void
deploy_vars_path(const char *path, char *out, size_t outlen)
{
	size_t	 n = strlen(path);

	if (n > 10 && strcmp(path + n - 10, ".nomad.hcl") == 0)
		n -= 10;
	else if (n > 6 && strcmp(path + n - 6, ".nomad") == 0)
		n -= 6;
	snprintf(out, outlen, "%.*s.vars.hcl", (int)n, path);
}

/* d's change against the last completed deployment that kept its source. */
static void
deploy_git_change_cb(const struct store_deploy_source *ds, void *arg)
{
	struct deploy	*d = arg;
	const char	*old, *vars;
	char		 vpath[1200];
	int		 same;

	d->d_base_commit = xstrdup(ds->ds_commit);
	/* A move to another file reads as the new file's change. */
	same = ds->ds_path != NULL && strcmp(ds->ds_path, d->d_path) == 0;
	old = same ? ds->ds_source : "";
	vars = same ? ds->ds_vars_source : NULL;
	deploy_change_add(&d->d_git_change, d->d_path, old, d->d_source);
	deploy_vars_path(d->d_path, vpath, sizeof(vpath));
	deploy_change_add(&d->d_git_change, vpath, vars, d->d_vars_source);
}

int
deploy_git_change(struct store *s, struct deploy *d)
{
	d->d_base_commit = NULL;
	d->d_git_change = NULL;
	if (d->d_path == NULL || d->d_source == NULL)
		return 0;
	return store_deploy_last_source(s, d->d_ns, d->d_job,
	    deploy_git_change_cb, d);
}

/*
 * Alike on purpose: detect_job_free (engine_detect.c) frees a struct ejob
 * the same way, a free(3) per member; the members differ, nothing else
 * is shared.
 */
void
deploy_free(struct deploy *d)
{
	size_t	 i;

	free(d->d_ns);
	free(d->d_job);
	free(d->d_repo);
	free(d->d_commit);
	if (d->d_spec != NULL)	/* it may hold secrets (env values) */
		freezero(d->d_spec, strlen(d->d_spec));
	free(d->d_diff);
	free(d->d_spec_hash);
	free(d->d_policy);
	free(d->d_reason);
	free(d->d_approved_by);
	free(d->d_approved_hash);
	free(d->d_nomad_deployment);
	free(d->d_eval_id);
	free(d->d_subject);
	free(d->d_author);
	free(d->d_path);
	free(d->d_source);
	free(d->d_vars_source);
	free(d->d_base_commit);
	free(d->d_git_change);
	for (i = 0; i < d->d_nhooks; i++)
		deploy_hook_free(&d->d_hooks[i]);
	memset(d, 0, sizeof(*d));
}

/* One hook of a deployment or of a job as planned (engine_detect.c). */
void
deploy_hook_free(struct deploy_hook *dh)
{
	free(dh->dh_phase);
	free(dh->dh_hook_id);
	if (dh->dh_spec != NULL)	/* it may hold secrets too */
		freezero(dh->dh_spec, strlen(dh->dh_spec));
	free(dh->dh_spec_hash);
	free(dh->dh_revision);
}

/*
 * Alike on purpose: op_row_free (operation.c), dmemo_free (engine_memo.c)
 * and hook_logs_free (engine_hooks.c) free other structs' members the
 * same way; only the free(3) calls are alike.
 */
void
deploy_hookrun_free(struct hook_run *hr)
{
	free(hr->hr_output);
	free(hr->hr_token);
	free(hr->hr_child);
	free(hr->hr_state);
	free(hr->hr_error);
	memset(hr, 0, sizeof(*hr));
}
