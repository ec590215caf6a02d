/*
 * One plan deployment's host steps (hosts.h): the phases in order, the
 * hosts of a phase in sequence, stopping at the first failure; the
 * hosts after it stay pending (untouched).
 *
 * A host step: read what the host runs; realise its system here (the
 * Nix daemon of "nix store" builds it); copy the paths of its closure
 * the host lacks (nix-store --export here, piped over SSH into
 * nix-store --import there); read the booted kernel, initrd and modules
 * to choose the goal (boot when they differ, else switch, unless the
 * plan forces one); activate as NixOS does (the system profile, then
 * switch-to-configuration GOAL); after switch or test, reach the host
 * again on a new connection within confirm-timeout, else an on-host
 * watchdog the activation started rolls it back to the previous system
 * and the step fails; then the host's checks; then the step is recorded.
 *
 * Every step is saved before it acts (deployment_steps: copy, activate,
 * check, record).  A restart resumes the step it was in: an activation
 * that took effect (the host runs the system, or its profile names it
 * for boot) is not done again.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_hosts.h"
#include "deploy.h"
#include "engine.h"
#include "nixrun.h"
#include "plan.h"
#include "hosts.h"
#include "webpub.h"
#include "notify.h"
#include "hoststep.h"

static TAILQ_HEAD(, hoststep) hoststep_list =
    TAILQ_HEAD_INITIALIZER(hoststep_list);

static void	 hoststep_preflight(struct hoststep *);

static struct store *
hs_db(void)
{
	return hosts_store();
}

static struct hoststep *
hoststep_find(int64_t id)
{
	struct hoststep	*hs;

	TAILQ_FOREACH(hs, &hoststep_list, hs_entry)
		if (hs->hs_id == id)
			return hs;
	return NULL;
}

int
hoststep_running(int64_t id)
{
	return hoststep_find(id) != NULL;
}

/*
 * Alike on purpose: repo_snap_free (repo.c) and nomad_cached_free
 * (nomad_cache.c) free their own structs the same way; other members.
 */
static void
hoststep_free(struct hoststep *hs)
{
	TAILQ_REMOVE(&hoststep_list, hs, hs_entry);
	if (hs->hs_ssh != 0)
		hosts_ssh_cancel(hs->hs_ssh);
	if (hs->hs_http != 0)
		hosts_http_cancel(hs->hs_http);
	if (hs->hs_nix > 0)
		nixrun_cancel(hs->hs_nix);
	if (hs->hs_retry != NULL)
		event_free(hs->hs_retry);
	plan_free(hs->hs_plan);
	free(hs->hs_repo);
	free(hs->hs_phase);
	free(hs->hs_saved_step);
	free(hs->hs_closure);
	free(hs->hs_missing);
	free(hs);
}

void
hoststep_stop_all(void)
{
	struct hoststep	*hs;

	while ((hs = TAILQ_FIRST(&hoststep_list)) != NULL)
		hoststep_free(hs);
}

/* Save a step's state before acting (synchronous=FULL transitions). */
int
hoststep_save(struct hoststep *hs, const char *step, const char *state,
    const char *error)
{
	struct store	*s = hs_db();
	char		 target[64], detail[1024];
	int64_t		 now = time(NULL);
	int		 terminal;

	terminal = strcmp(state, "succeeded") == 0 ||
	    strcmp(state, "failed") == 0 || strcmp(state, "skipped") == 0;
	if (store_begin(s) == -1)
		return -1;
	if (store_hosts_step_save(s, hs->hs_step, step, state,
	    hs->hs_goal != PLAN_GOAL_AUTO ? plan_goal_name(hs->hs_goal) : NULL,
	    error, now, terminal) == -1)
		goto fail;
	snprintf(target, sizeof(target), "deployment/%lld",
	    (long long)hs->hs_id);
	snprintf(detail, sizeof(detail), "host %s (phase %s): %s %s%s%s%s",
	    hs->hs_name, hs->hs_phase, step, state,
	    hs->hs_goal != PLAN_GOAL_AUTO ? " goal " : "",
	    hs->hs_goal != PLAN_GOAL_AUTO ? plan_goal_name(hs->hs_goal) : "",
	    error != NULL ? ": " : "");
	if (error != NULL)
		strlcat(detail, error, sizeof(detail));
	if (store_event(s, "system", "deployment.host_step", target,
	    detail) == -1)
		goto fail;
	if (store_commit(s) == -1)
		return -1;
	free(hs->hs_saved_step);
	hs->hs_saved_step = xstrdup(step);
	snprintf(detail, sizeof(detail), "deployment %lld: %s %s%s%s",
	    (long long)hs->hs_id, step, state,
	    hs->hs_goal != PLAN_GOAL_AUTO ? " " : "",
	    hs->hs_goal != PLAN_GOAL_AUTO ? plan_goal_name(hs->hs_goal) : "");
	if (hs->hs_test == NULL)
		hosts_last_step(hs->hs_repo, hs->hs_host->ph_name, detail);
	return 0;
fail:
	log_warnx("deployment %lld: cannot save the step of %s: %s",
	    (long long)hs->hs_id, hs->hs_name, store_error(s));
	store_rollback(s);
	return -1;
}

/* The deployment ends; the runner goes. */
static void
hoststep_end(struct hoststep *hs, enum deploy_state to, const char *reason)
{
	struct store	*s = hs_db();
	int		 moved = 0;

	if (store_begin(s) == 0) {
		if (deploy_transition(s, hs->hs_id, DS_DEPLOYING, to, "system",
		    to == DS_COMPLETED ? "complete" : "fail", reason) != 1 ||
		    store_commit(s) == -1)
			store_rollback(s);
		else
			moved = 1;
	}
	log_info("deployment %lld (plan %s): %s%s%s", (long long)hs->hs_id,
	    hs->hs_repo, deploy_state_str(to), reason != NULL ? ": " : "",
	    reason != NULL ? reason : "");
	if (moved)
		notify_deployment(hs->hs_id, to);
	webpub_changed();
	hoststep_free(hs);
	hosts_kick();
}

void
hoststep_fail(struct hoststep *hs, const char *fmt, ...)
{
	char	 err[2048], reason[2300];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(err, sizeof(err), fmt, ap);
	va_end(ap);
	log_warnx("deployment %lld: %s: %s", (long long)hs->hs_id,
	    hs->hs_name, err);
	(void)hoststep_save(hs, hs->hs_saved_step != NULL ?
	    hs->hs_saved_step : "copy", "failed", err);
	snprintf(reason, sizeof(reason), "%s%s (%s): %s",
	    hs->hs_test != NULL ? "" : "host ", hs->hs_name,
	    hs->hs_test != NULL ? "preflight" : hs->hs_phase, err);
	hoststep_end(hs, DS_FAILED, reason);
}

/* The last lines of output, for an error message. */
const char *
hoststep_tail(const char *out, size_t max)
{
	size_t	 len = strlen(out);

	while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' '))
		len--;
	if (len > max)
		return out + len - max;
	return out;
}

int
hoststep_ssh(struct hoststep *hs, const char *cmd, int timeout,
    const char *in, int fd, hosts_ssh_cb cb)
{
	hs->hs_ssh = hosts_ssh(hs->hs_host, cmd, timeout, in,
	    in != NULL ? strlen(in) : 0, fd, cb, hs);
	if (hs->hs_ssh == 0) {
		hoststep_fail(hs, "the nomadworker is not running");
		return -1;
	}
	return 0;
}

const char *
hoststep_stage(const struct hosts_ssh_res *res)
{
	switch (res->hr_stage) {
	case SSH_STAGE_CONNECT:
		return "cannot connect";
	case SSH_STAGE_HOSTKEY:
		return "host key refused (nothing ran)";
	case SSH_STAGE_AUTH:
		return "authentication refused (nothing ran)";
	default:
		return "the command did not finish";
	}
}

void
hoststep_sub(struct hoststep *hs)
{
	switch (hs->hs_sub) {
	case HS_BUILD:
		hoststep_build(hs);
		return;
	case HS_CLOSURE:
		hoststep_closure(hs);
		return;
	case HS_PROBE:
		hoststep_probe(hs);
		return;
	case HS_COPY:
		hoststep_copy(hs);
		return;
	case HS_ACTIVATE:
		hoststep_activate(hs);
		return;
	case HS_CONFIRM:
		hoststep_confirm(hs);
		return;
	case HS_CHECKS:
		hoststep_checks(hs);
		return;
	case HS_REMOTE_BUILD:
		hoststep_remote_build(hs);
		return;
	}
}

/* A preflight test: a build here, or a command on a host. */
static void
hoststep_test_done(int status, const char *err, const char *out,
    struct hoststep *hs)
{
	if (status != 0) {
		hoststep_fail(hs, "failed%s: %s", status > 0 ? "" :
		    " to run", hoststep_tail(err[0] != '\0' ? err : out, 1024));
		return;
	}
	if (hoststep_save(hs, "preflight", "succeeded", NULL) == -1) {
		hoststep_fail(hs, "the store refused the step");
		return;
	}
	hoststep_next(hs);
}

static void
hoststep_test_built(int status, const char *out, size_t outlen,
    const char *err, void *arg)
{
	struct hoststep	*hs = arg;

	(void)outlen;
	hs->hs_nix = 0;
	hoststep_test_done(status, err, out, hs);
}

static void
hoststep_test_ran(const struct hosts_ssh_res *res, void *arg)
{
	struct hoststep	*hs = arg;

	hs->hs_ssh = 0;
	hoststep_test_done(res->hr_stage == SSH_STAGE_DONE ? res->hr_status :
	    -1, res->hr_error, res->hr_shown, hs);
}

static void
hoststep_preflight(struct hoststep *hs)
{
	const struct plan_test	*t = hs->hs_test;
	const char		*argv[4];
	char			 bin[PATH_MAX];

	if (hoststep_save(hs, "preflight", "running", NULL) == -1) {
		hoststep_end(hs, DS_FAILED, "the store refused a step");
		return;
	}
	log_info("deployment %lld: preflight %s", (long long)hs->hs_id,
	    hs->hs_name);
	webpub_changed();
	if (t->pt_build != NULL) {
		strlcpy(bin, nixrun_bin("nix-store"), sizeof(bin));
		argv[0] = bin;
		argv[1] = "--realise";
		argv[2] = t->pt_build;
		argv[3] = NULL;
		hoststep_nix(hs, argv, -1, hoststep_test_built, "build");
	} else
		hoststep_ssh(hs, t->pt_command, t->pt_timeout, NULL, -1,
		    hoststep_test_ran);
}

/* The row of the step hoststep_next() goes on with: hs takes it. */
static int
hoststep_row(const struct store_hosts_step *sh, void *arg)
{
	struct hoststep	*hs = arg;
	const char	*host = sh->sh_host, *goal = sh->sh_goal;

	hs->hs_step = sh->sh_id;
	free(hs->hs_phase);
	hs->hs_phase = strdup(sh->sh_phase);
	hs->hs_test = NULL;
	hs->hs_host = NULL;
	if (sh->sh_phase_index < 0) {
		/* A preflight row's host column holds the test's name. */
		for (size_t i = 0; i < hs->hs_plan->pl_ntests; i++)
			if (strcmp(hs->hs_plan->pl_tests[i].pt_name, host) == 0)
				hs->hs_test = &hs->hs_plan->pl_tests[i];
		if (hs->hs_test != NULL && hs->hs_test->pt_host != NULL)
			hs->hs_host = plan_host_find(hs->hs_plan,
			    hs->hs_test->pt_host);
		snprintf(hs->hs_name, sizeof(hs->hs_name), "test %s", host);
	} else {
		hs->hs_host = plan_host_find(hs->hs_plan, host);
		strlcpy(hs->hs_name, host, sizeof(hs->hs_name));
	}
	free(hs->hs_saved_step);
	hs->hs_saved_step = strdup(sh->sh_step);
	hs->hs_resume = strcmp(sh->sh_state, "running") == 0;
	hs->hs_goal = goal != NULL && plan_goal_parse(goal) > 0 ?
	    plan_goal_parse(goal) : PLAN_GOAL_AUTO;
	hs->hs_failed = strcmp(sh->sh_state, "failed") == 0;
	return 1;
}

/* The next step that is not done, in phase order; or the end. */
void
hoststep_next(struct hoststep *hs)
{
	switch (store_hosts_step_next(hs_db(), hs->hs_id, hoststep_row, hs)) {
	case 0:
		hoststep_end(hs, DS_COMPLETED, NULL);
		return;
	case 1:
		break;
	default:
		hoststep_end(hs, DS_FAILED, "the store cannot be read");
		return;
	}
	if (hs->hs_phase == NULL || hs->hs_saved_step == NULL)
		fatal("strdup");
	if (hs->hs_test == NULL ? hs->hs_host == NULL :
	    (hs->hs_test->pt_host != NULL && hs->hs_host == NULL)) {
		hoststep_end(hs, DS_FAILED, "a step names a host or test the "
		    "deployment's plan does not have");
		return;
	}
	if (hs->hs_failed) {
		hoststep_end(hs, DS_FAILED, "a host step failed");
		return;
	}
	if (hs->hs_test != NULL) {
		hoststep_preflight(hs);
		return;
	}
	hs->hs_check = 0;
	hs->hs_check_until = 0;
	hs->hs_copy_left = 0;
	if (!hs->hs_resume) {
		if (hoststep_save(hs, "copy", "running", NULL) == -1) {
			hoststep_end(hs, DS_FAILED, "the store refused a step");
			return;
		}
		log_info("deployment %lld: phase %s, host %s",
		    (long long)hs->hs_id, hs->hs_phase, hs->hs_host->ph_name);
		hs->hs_sub = HS_BUILD;
	} else if (strcmp(hs->hs_saved_step, "check") == 0)
		hs->hs_sub = HS_CHECKS;
	else if (strcmp(hs->hs_saved_step, "record") == 0) {
		if (hoststep_save(hs, "record", "succeeded", NULL) == -1) {
			hoststep_end(hs, DS_FAILED, "the store refused a step");
			return;
		}
		hoststep_next(hs);
		return;
	} else {
		log_info("deployment %lld: resuming host %s at %s",
		    (long long)hs->hs_id, hs->hs_host->ph_name,
		    hs->hs_saved_step);
		hs->hs_sub = HS_BUILD;
	}
	webpub_changed();
	hoststep_sub(hs);
}

/* A plan deployment to run: its repository and its plan. */
struct hoststep_load {
	int		 ld_found;	/* and deploying */
	char		*ld_repo;
	struct plan	*ld_plan;
};

static int
hoststep_load_row(const struct store_hosts_deploy *hd, void *arg)
{
	struct hoststep_load	*ld = arg;

	if (strcmp(hd->hd_state, "deploying") != 0)
		return 0;
	ld->ld_found = 1;
	if ((ld->ld_repo = strdup(hd->hd_plan)) == NULL ||
	    (ld->ld_plan = plan_parse(hd->hd_spec, hd->hd_speclen)) == NULL)
		fatal("strdup");
	return 0;
}

int
hoststep_start(int64_t id)
{
	struct hoststep		*hs;
	struct hoststep_load	 ld = { 0, NULL, NULL };
	struct plan		*pl;

	if (hoststep_find(id) != NULL)
		return 0;
	if (store_hosts_deploy_get(hs_db(), id, hoststep_load_row, &ld) != 1 ||
	    !ld.ld_found)
		return -1;
	pl = ld.ld_plan;
	if ((hs = calloc(1, sizeof(*hs))) == NULL)
		fatal("calloc");
	hs->hs_id = id;
	hs->hs_repo = ld.ld_repo;
	hs->hs_plan = ld.ld_plan;
	if ((hs->hs_retry = evtimer_new(nopsd_env->n_base, hoststep_retry_cb,
	    hs)) == NULL)
		fatal("evtimer_new");
	TAILQ_INSERT_TAIL(&hoststep_list, hs, hs_entry);
	if (pl->pl_nerrors_all > 0) {
		log_warnx("deployment %lld: its stored plan does not check: %s",
		    (long long)id, pl->pl_errors[0]);
		hoststep_end(hs, DS_FAILED, "the stored plan does not check");
		return -1;
	}
	/* It applies from now on (approved, or started at once). */
	if (store_hosts_deploy_started(hs_db(), id, time(NULL)) == -1)
		log_warnx("deployment %lld: cannot note its start: %s",
		    (long long)id, store_error(hs_db()));
	log_info("deployment %lld: plan %s, %zu phases", (long long)id,
	    hs->hs_repo, pl->pl_nphases);
	hoststep_next(hs);
	return 0;
}
