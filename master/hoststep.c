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
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "deploy.h"
#include "engine.h"
#include "nixrun.h"
#include "plan.h"
#include "hosts.h"
#include "webpub.h"

#define HS_BUILD	1	/* realise the system here */
#define HS_CLOSURE	2	/* its closure */
#define HS_PROBE	3	/* what the host runs, what it lacks */
#define HS_COPY		4	/* export | ssh import */
#define HS_ACTIVATE	5	/* the goal (chosen there), activation */
#define HS_CONFIRM	6	/* a new connection within confirm-timeout */
#define HS_CHECKS	7

#define HS_BUILD_TIMEOUT	3600
#define HS_PROBE_TIMEOUT	30
#define HS_NIX_MEMORY		(4ULL * 1024 * 1024 * 1024)

struct hoststep {
	TAILQ_ENTRY(hoststep)	 hs_entry;
	int64_t			 hs_id;		/* the deployment */
	char			*hs_repo;
	struct plan		*hs_plan;	/* its frozen spec */
	/* the current host */
	int64_t			 hs_step;	/* deployment_steps.id */
	const struct plan_host	*hs_host;	/* the host it runs on */
	const struct plan_test	*hs_test;	/* a preflight test, or NULL */
	char			 hs_name[128];	/* "host" or "test NAME" */
	char			*hs_phase;
	int			 hs_sub;	/* HS_* */
	int			 hs_resume;	/* it was in this step before */
	char			*hs_saved_step;	/* copy activate check record */
	int			 hs_goal;
	char			 hs_current[512];
	char			 hs_booted[512];
	char			 hs_profile[512];
	char			 hs_prev[512];
	char			*hs_closure;	/* nix-store -qR, a line each */
	char			*hs_missing;
	int			 hs_copy_left;	/* export and import to end */
	int			 hs_export_status;
	char			 hs_copy_error[1024];
	size_t			 hs_check;
	time_t			 hs_confirm_until;
	uint32_t		 hs_ssh;
	int			 hs_nix;
	struct event		*hs_retry;
};

static TAILQ_HEAD(, hoststep) hoststep_list =
    TAILQ_HEAD_INITIALIZER(hoststep_list);

static void	 hoststep_next(struct hoststep *);
static void	 hoststep_sub(struct hoststep *);
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

static void
hoststep_free(struct hoststep *hs)
{
	TAILQ_REMOVE(&hoststep_list, hs, hs_entry);
	if (hs->hs_ssh != 0)
		hosts_ssh_cancel(hs->hs_ssh);
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
static int
hoststep_save(struct hoststep *hs, const char *step, const char *state,
    const char *error)
{
	struct store	*s = hs_db();
	sqlite3_stmt	*st;
	char		 target[64], detail[1024];
	int64_t		 now = time(NULL);
	int		 terminal;

	terminal = strcmp(state, "succeeded") == 0 ||
	    strcmp(state, "failed") == 0 || strcmp(state, "skipped") == 0;
	if (store_begin(s) == -1)
		return -1;
	st = store_prepare(s, "UPDATE deployment_steps SET step = ?, state = ?,"
	    " goal = ?, error = ?, started_at = coalesce(started_at, ?),"
	    " ended_at = CASE WHEN ? THEN ? ELSE NULL END WHERE id = ?");
	if (st == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, step, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, state, -1, SQLITE_TRANSIENT);
	if (hs->hs_goal != PLAN_GOAL_AUTO)
		sqlite3_bind_text(st, 3, plan_goal_name(hs->hs_goal), -1,
		    SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	if (error != NULL)
		sqlite3_bind_text(st, 4, error, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_int64(st, 5, now);
	sqlite3_bind_int(st, 6, terminal);
	sqlite3_bind_int64(st, 7, now);
	sqlite3_bind_int64(st, 8, hs->hs_step);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
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
	if ((hs->hs_saved_step = strdup(step)) == NULL)
		fatal("strdup");
	snprintf(detail, sizeof(detail), "deployment %lld: %s %s%s%s",
	    (long long)hs->hs_id, step, state,
	    hs->hs_goal != PLAN_GOAL_AUTO ? " " : "",
	    hs->hs_goal != PLAN_GOAL_AUTO ? plan_goal_name(hs->hs_goal) : "");
	if (hs->hs_test == NULL)
		hosts_last_step(hs->hs_repo, hs->hs_host->ph_name, detail);
	return 0;
fail:
	log_warnx("deployment %lld: cannot save the step of %s: %s",
	    (long long)hs->hs_id, hs->hs_name, sqlite3_errmsg(store_db(s)));
	store_rollback(s);
	return -1;
}

/* The deployment ends; the runner goes. */
static void
hoststep_end(struct hoststep *hs, enum deploy_state to, const char *reason)
{
	struct store	*s = hs_db();

	if (store_begin(s) == 0) {
		if (deploy_transition(s, hs->hs_id, DS_DEPLOYING, to, "system",
		    to == DS_COMPLETED ? "complete" : "fail", reason) != 1 ||
		    store_commit(s) == -1)
			store_rollback(s);
	}
	log_info("deployment %lld (plan %s): %s%s%s", (long long)hs->hs_id,
	    hs->hs_repo, deploy_state_str(to), reason != NULL ? ": " : "",
	    reason != NULL ? reason : "");
	webpub_changed();
	hoststep_free(hs);
	hosts_kick();
}

static void
hoststep_fail(struct hoststep *hs, const char *fmt, ...)
    __attribute__((__format__(printf, 2, 3)));

static void
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
static const char *
hoststep_tail(const char *out, size_t max)
{
	size_t	 len = strlen(out);

	while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' '))
		len--;
	if (len > max)
		return out + len - max;
	return out;
}

static void
hoststep_line(const char **s, char *buf, size_t n)
{
	size_t	 len = strcspn(*s, "\n");

	if (len >= n)
		len = 0;
	memcpy(buf, *s, len);
	buf[len] = '\0';
	*s += len + ((*s)[len] == '\n');
}

static int
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

static const char *
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

/* HS_PROBE: current, booted, profile; then what of the closure lacks. */
static void
hoststep_probe_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hoststep	*hs = arg;
	const char	*p = res->hr_out, *sys = hs->hs_host->ph_system, *q;
	char		 path[512], *missing;
	size_t		 len = 0;
	int		 done;

	hs->hs_ssh = 0;
	if (res->hr_stage != SSH_STAGE_DONE || res->hr_status != 0) {
		if (res->hr_stage < SSH_STAGE_EXEC)
			hosts_seen(hs->hs_repo, hs->hs_host->ph_name, NULL,
			    NULL, res->hr_error);
		hoststep_fail(hs, "%s: %s", hoststep_stage(res),
		    res->hr_error[0] != '\0' ? res->hr_error :
		    hoststep_tail(res->hr_shown, 512));
		return;
	}
	hoststep_line(&p, hs->hs_current, sizeof(hs->hs_current));
	hoststep_line(&p, hs->hs_booted, sizeof(hs->hs_booted));
	hoststep_line(&p, hs->hs_profile, sizeof(hs->hs_profile));
	hosts_seen(hs->hs_repo, hs->hs_host->ph_name, hs->hs_current,
	    hs->hs_booted, NULL);

	/* The paths the host lacks, in the closure's order. */
	if ((missing = calloc(1, strlen(hs->hs_closure) + 1)) == NULL)
		fatal("calloc");
	for (q = hs->hs_closure; *q != '\0'; ) {
		hoststep_line(&q, path, sizeof(path));
		if (plan_store_path_ok(path) && strstr(p, path) != NULL) {
			memcpy(missing + len, path, strlen(path));
			len += strlen(path);
			missing[len++] = '\n';
		}
	}
	free(hs->hs_missing);
	hs->hs_missing = missing;

	if (hs->hs_resume && strcmp(hs->hs_saved_step, "activate") == 0) {
		/*
		 * Was it activated before the restart?  It runs the system
		 * (switch, test), or its profile names it (boot).
		 */
		done = 1;
		if (strcmp(hs->hs_current, sys) == 0) {
			if (hs->hs_goal != PLAN_GOAL_TEST)
				hs->hs_goal = PLAN_GOAL_SWITCH;
			hs->hs_sub = HS_CONFIRM;
			hs->hs_confirm_until = time(NULL) +
			    hosts_conf()->hosts.confirm_timeout;
		} else if (strcmp(hs->hs_profile, sys) == 0 &&
		    hs->hs_goal != PLAN_GOAL_SWITCH) {
			hs->hs_goal = PLAN_GOAL_BOOT;
			hs->hs_sub = HS_CHECKS;
		} else
			done = 0;
		if (done) {
			log_info("deployment %lld: host %s was activated "
			    "(%s) before the restart: not again",
			    (long long)hs->hs_id, hs->hs_host->ph_name,
			    plan_goal_name(hs->hs_goal));
			hoststep_sub(hs);
			return;
		}
	}
	/* Nothing to do, whatever the goal: it runs the system. */
	if (!hs->hs_resume && strcmp(hs->hs_current, sys) == 0) {
		hs->hs_goal = PLAN_GOAL_AUTO;
		if (hoststep_save(hs, "record", "skipped",
		    "already runs the wanted system") == -1) {
			hoststep_fail(hs, "the store refused the step");
			return;
		}
		hoststep_next(hs);
		return;
	}
	hs->hs_sub = len > 0 ? HS_COPY : HS_ACTIVATE;
	hoststep_sub(hs);
}

/* HS_BUILD, HS_CLOSURE, the export of HS_COPY: Nix here, sandboxed. */
static int
hoststep_nix(struct hoststep *hs, const char **argv, int outfd, nixrun_cb cb,
    const char *what)
{
	struct nixrun_spec	 ns;
	char			 err[256], w[256];
	int			 i;

	memset(&ns, 0, sizeof(ns));
	snprintf(w, sizeof(w), "deployment %lld: %s for %s",
	    (long long)hs->hs_id, what, hs->hs_name);
	ns.ns_what = w;
	for (i = 0; argv[i] != NULL && i < NIXRUN_ARGS_MAX - 1; i++)
		ns.ns_argv[i] = argv[i];
	ns.ns_argv[i] = NULL;
	ns.ns_store = hosts_conf()->hosts.nix_store != NULL ?
	    hosts_conf()->hosts.nix_store : NOPS_NIX_STORE;
	ns.ns_timeout = HS_BUILD_TIMEOUT;
	ns.ns_memory = HS_NIX_MEMORY;
	ns.ns_stdout_fd = outfd;
	if ((hs->hs_nix = nixrun_start(&ns, cb, hs, err, sizeof(err))) == -1) {
		hs->hs_nix = 0;
		hoststep_fail(hs, "%s: %s", what, err);
		return -1;
	}
	return 0;
}

static void
hoststep_build_done(int status, const char *out, size_t outlen,
    const char *err, void *arg)
{
	struct hoststep	*hs = arg;

	(void)outlen;
	hs->hs_nix = 0;
	if (status != 0) {
		hoststep_fail(hs, "building %s failed: %s",
		    hs->hs_host->ph_system, hoststep_tail(err, 1024));
		return;
	}
	if (strstr(out, hs->hs_host->ph_system) == NULL) {
		hoststep_fail(hs, "building gave %s, not the plan's system %s",
		    hoststep_tail(out, 300), hs->hs_host->ph_system);
		return;
	}
	hs->hs_sub = HS_CLOSURE;
	hoststep_sub(hs);
}

static void
hoststep_closure_done(int status, const char *out, size_t outlen,
    const char *err, void *arg)
{
	struct hoststep	*hs = arg;

	(void)outlen;
	hs->hs_nix = 0;
	if (status != 0) {
		hoststep_fail(hs, "the closure of %s: %s",
		    hs->hs_host->ph_system, hoststep_tail(err, 1024));
		return;
	}
	free(hs->hs_closure);
	if ((hs->hs_closure = strdup(out)) == NULL)
		fatal("strdup");
	hs->hs_sub = HS_PROBE;
	hoststep_sub(hs);
}

static void
hoststep_copy_end(struct hoststep *hs)
{
	if (--hs->hs_copy_left > 0)
		return;
	if (hs->hs_copy_error[0] != '\0') {
		hoststep_fail(hs, "copying the closure: %s",
		    hs->hs_copy_error);
		return;
	}
	hs->hs_sub = HS_ACTIVATE;
	hoststep_sub(hs);
}

static void
hoststep_export_done(int status, const char *out, size_t outlen,
    const char *err, void *arg)
{
	struct hoststep	*hs = arg;

	(void)out;
	(void)outlen;
	hs->hs_nix = 0;
	if (status != 0 && hs->hs_copy_error[0] == '\0')
		snprintf(hs->hs_copy_error, sizeof(hs->hs_copy_error),
		    "nix-store --export: %s", hoststep_tail(err, 512));
	hoststep_copy_end(hs);
}

static void
hoststep_import_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hoststep	*hs = arg;

	hs->hs_ssh = 0;
	if ((res->hr_stage != SSH_STAGE_DONE || res->hr_status != 0) &&
	    hs->hs_copy_error[0] == '\0')
		snprintf(hs->hs_copy_error, sizeof(hs->hs_copy_error),
		    "nix-store --import on the host: %s%s%s",
		    res->hr_error, res->hr_error[0] != '\0' ? ": " : "",
		    hoststep_tail(res->hr_shown, 512));
	hoststep_copy_end(hs);
}

static void
hoststep_copy(struct hoststep *hs)
{
	const char	*argv[NIXRUN_ARGS_MAX];
	char		*paths, *p, bin[PATH_MAX];
	int		 pfd[2], a = 0;

	if (pipe2(pfd, O_CLOEXEC) == -1) {
		hoststep_fail(hs, "pipe: %s", strerror(errno));
		return;
	}
	/* Export the missing paths: a -- list would pass ARGS_MAX. */
	if ((paths = strdup(hs->hs_missing)) == NULL)
		fatal("strdup");
	strlcpy(bin, nixrun_bin("nix-store"), sizeof(bin));
	argv[a++] = bin;
	argv[a++] = "--export";
	for (p = strtok(paths, "\n"); p != NULL && a < NIXRUN_ARGS_MAX - 1;
	    p = strtok(NULL, "\n"))
		argv[a++] = p;
	argv[a] = NULL;
	if (p != NULL) {
		free(paths);
		close(pfd[0]);
		close(pfd[1]);
		hoststep_fail(hs, "more than %d paths to copy at once",
		    NIXRUN_ARGS_MAX - 3);
		return;
	}
	hs->hs_copy_left = 2;
	hs->hs_copy_error[0] = '\0';
	if (hoststep_nix(hs, argv, pfd[1], hoststep_export_done,
	    "export") == -1) {
		free(paths);
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	free(paths);
	close(pfd[1]);
	hoststep_ssh(hs, "nix-store --import >/dev/null",
	    hosts_conf()->hosts.command_timeout, NULL, pfd[0],
	    hoststep_import_done);
}

static void
hoststep_activate_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hoststep	*hs = arg;
	const char	*g;
	char		 goal[64];
	int		 gi;

	hs->hs_ssh = 0;
	/* The goal the host chose (auto), before anything else it says. */
	if ((g = strstr(res->hr_out, "nops-goal ")) != NULL) {
		hoststep_line(&g, goal, sizeof(goal));
		if ((gi = plan_goal_parse(goal + 10)) > 0 &&
		    gi != hs->hs_goal) {
			hs->hs_goal = gi;
			(void)hoststep_save(hs, "activate", "running", NULL);
		}
	}
	if (res->hr_stage == SSH_STAGE_DONE && res->hr_status != 0) {
		/* After switch/test the watchdog rolls the host back. */
		hoststep_fail(hs, "switch-to-configuration %s exited %d%s: "
		    "%s", plan_goal_name(hs->hs_goal), res->hr_status,
		    hs->hs_goal == PLAN_GOAL_SWITCH ||
		    hs->hs_goal == PLAN_GOAL_TEST ? " (the host rolls "
		    "itself back)" : "", hoststep_tail(res->hr_shown, 1024));
		return;
	}
	if (res->hr_stage < SSH_STAGE_EXEC) {
		hoststep_fail(hs, "activation: %s: %s", hoststep_stage(res),
		    res->hr_error);
		return;
	}
	/*
	 * The connection may have died with the activation (a new sshd, a
	 * new network): reaching the host again says whether it is fine.
	 */
	if (hs->hs_goal == PLAN_GOAL_SWITCH || hs->hs_goal == PLAN_GOAL_TEST) {
		hs->hs_confirm_until = time(NULL) +
		    hosts_conf()->hosts.confirm_timeout;
		hs->hs_sub = HS_CONFIRM;
	} else if (res->hr_stage != SSH_STAGE_DONE) {
		hoststep_fail(hs, "activation: %s", res->hr_error);
		return;
	} else
		hs->hs_sub = HS_CHECKS;
	hoststep_sub(hs);
}

static void
hoststep_retry_cb(int fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	hoststep_sub(arg);
}

static void
hoststep_confirm_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hoststep	*hs = arg;
	struct timeval	 tv = { 1, 0 };
	const char	*p = res->hr_out;
	char		 cur[512];

	hs->hs_ssh = 0;
	if (res->hr_stage != SSH_STAGE_DONE || res->hr_status != 0) {
		if (time(NULL) < hs->hs_confirm_until) {
			evtimer_add(hs->hs_retry, &tv);
			return;
		}
		hoststep_fail(hs, "not reachable again within %ds after the "
		    "activation (%s): it rolls itself back to the previous "
		    "system", hosts_conf()->hosts.confirm_timeout,
		    res->hr_error[0] != '\0' ? res->hr_error :
		    hoststep_tail(res->hr_shown, 256));
		return;
	}
	hoststep_line(&p, cur, sizeof(cur));
	hosts_seen(hs->hs_repo, hs->hs_host->ph_name, cur, NULL, NULL);
	if (strcmp(cur, hs->hs_host->ph_system) != 0) {
		hoststep_fail(hs, "after the activation the host runs %s, not "
		    "%s (rolled back?)", cur, hs->hs_host->ph_system);
		return;
	}
	hs->hs_sub = HS_CHECKS;
	hoststep_sub(hs);
}

static void
hoststep_check_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hoststep		*hs = arg;
	const struct plan_check	*c = &hs->hs_host->ph_checks[hs->hs_check];

	hs->hs_ssh = 0;
	if (res->hr_stage != SSH_STAGE_DONE || res->hr_status != 0) {
		if (res->hr_stage == SSH_STAGE_DONE)
			hoststep_fail(hs, "check %s failed (exit %d): %s",
			    c->pc_name, res->hr_status,
			    hoststep_tail(res->hr_shown, 1024));
		else
			hoststep_fail(hs, "check %s: %s: %s", c->pc_name,
			    hoststep_stage(res), res->hr_error);
		return;
	}
	hs->hs_check++;
	hoststep_sub(hs);
}

/* The watchdog's token: one per deployment and host. */
static void
hoststep_token(struct hoststep *hs, char *buf, size_t len)
{
	snprintf(buf, len, "/run/nops-confirm-%lld-%s",
	    (long long)hs->hs_id, hs->hs_host->ph_name);
}

/*
 * The activation, as nixos-rebuild does it, with the goal chosen on the
 * host when it is auto: boot when the new kernel, initrd or modules
 * differ from the booted ones, else switch.  For switch and test a
 * watchdog (its own session, so it outlives the connection) waits twice
 * the confirm timeout and rolls back to the previous system unless nops
 * came back and left the token.
 */
static char *
hoststep_activation(struct hoststep *hs)
{
	char	 token[256], *cmd;
	int	 wait;

	hoststep_token(hs, token, sizeof(token));
	wait = 2 * hosts_conf()->hosts.confirm_timeout;
	if (asprintf(&cmd,
	    "set -e; sys='%s'; goal='%s'; token='%s'; "
	    "if [ \"$goal\" = auto ]; then goal=switch; "
	    "if [ -e /run/booted-system ]; then "
	    "for f in kernel initrd kernel-modules; do "
	    "[ \"$(readlink -f \"$sys/$f\" || true)\" = "
	    "\"$(readlink -f /run/booted-system/$f || true)\" ] || goal=boot; "
	    "done; fi; fi; "
	    "echo \"nops-goal $goal\"; "
	    "prev=$(readlink -f /run/current-system || true); "
	    "case $goal in switch|boot) "
	    "nix-env -p /nix/var/nix/profiles/system --set \"$sys\" ;; esac; "
	    "case $goal in switch|test) rm -f \"$token\"; "
	    "if [ -n \"$prev\" ] && [ \"$prev\" != \"$sys\" ]; then "
	    "setsid sh -c 'sleep %d; [ -e \"$1\" ] && exit 0; "
	    "echo \"$2\" > \"$1.rolled-back\"; "
	    "if [ \"$3\" = switch ]; then "
	    "nix-env -p /nix/var/nix/profiles/system --rollback; fi; "
	    "\"$2\"/bin/switch-to-configuration \"$3\"' nops-watchdog "
	    "\"$token\" \"$prev\" \"$goal\" </dev/null >/dev/null 2>&1 & "
	    "fi ;; esac; "
	    "\"$sys\"/bin/switch-to-configuration \"$goal\"",
	    hs->hs_host->ph_system, plan_goal_name(hs->hs_goal), token,
	    wait) == -1)
		fatal("asprintf");
	return cmd;
}

static void
hoststep_sub(struct hoststep *hs)
{
	const struct plan_host	*h = hs->hs_host;
	const char		*argv[8];
	char			*cmd, bin[PATH_MAX], token[256];
	const char		*target;

	switch (hs->hs_sub) {
	case HS_BUILD:
		if (h->ph_build_on_target) {
			hoststep_fail(hs, "buildOnTarget is not supported yet: "
			    "build here (remove it from the plan)");
			return;
		}
		strlcpy(bin, nixrun_bin("nix-store"), sizeof(bin));
		target = h->ph_drv != NULL ? h->ph_drv : h->ph_system;
		argv[0] = bin;
		argv[1] = "--realise";
		argv[2] = target;
		argv[3] = NULL;
		hoststep_nix(hs, argv, -1, hoststep_build_done, "build");
		return;
	case HS_CLOSURE:
		strlcpy(bin, nixrun_bin("nix-store"), sizeof(bin));
		argv[0] = bin;
		argv[1] = "--query";
		argv[2] = "--requisites";
		argv[3] = h->ph_system;
		argv[4] = NULL;
		hoststep_nix(hs, argv, -1, hoststep_closure_done, "closure");
		return;
	case HS_PROBE:
		/* One connection: what it runs, then what it lacks. */
		hoststep_ssh(hs, "readlink -f /run/current-system || echo; "
		    "readlink -f /run/booted-system || echo; "
		    "readlink -f /nix/var/nix/profiles/system || echo; "
		    "xargs -r nix-store --check-validity --print-invalid",
		    HS_PROBE_TIMEOUT, hs->hs_closure, -1, hoststep_probe_done);
		return;
	case HS_COPY:
		hoststep_copy(hs);
		return;
	case HS_ACTIVATE:
		/* Forced by the plan, or chosen by the host (auto). */
		hs->hs_goal = hs->hs_plan->pl_goal;
		/* Saved before acting: a restart will not do it twice. */
		if (hoststep_save(hs, "activate", "running", NULL) == -1) {
			hoststep_fail(hs, "the store refused the step");
			return;
		}
		log_info("deployment %lld: activating %s on %s (%s)",
		    (long long)hs->hs_id, h->ph_system, h->ph_name,
		    plan_goal_name(hs->hs_goal));
		cmd = hoststep_activation(hs);
		hoststep_ssh(hs, cmd, hosts_conf()->hosts.command_timeout,
		    NULL, -1, hoststep_activate_done);
		free(cmd);
		return;
	case HS_CONFIRM:
		hoststep_token(hs, token, sizeof(token));
		if (asprintf(&cmd, "touch '%s' && readlink -f "
		    "/run/current-system", token) == -1)
			fatal("asprintf");
		hoststep_ssh(hs, cmd, hosts_conf()->hosts.confirm_timeout,
		    NULL, -1, hoststep_confirm_done);
		free(cmd);
		return;
	case HS_CHECKS:
		if (hs->hs_check == 0 && (hs->hs_saved_step == NULL ||
		    strcmp(hs->hs_saved_step, "check") != 0) &&
		    hoststep_save(hs, "check", "running", NULL) == -1) {
			hoststep_fail(hs, "the store refused the step");
			return;
		}
		if (hs->hs_check < h->ph_nchecks) {
			const struct plan_check *c = &h->ph_checks[hs->hs_check];

			if (c->pc_command == NULL) {
				hoststep_fail(hs, "check %s: http checks are "
				    "not supported yet", c->pc_name);
				return;
			}
			hoststep_ssh(hs, c->pc_command, c->pc_timeout, NULL,
			    -1, hoststep_check_done);
			return;
		}
		if (hoststep_save(hs, "record", "succeeded", NULL) == -1) {
			hoststep_fail(hs, "the store refused the step");
			return;
		}
		hoststep_next(hs);
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

/* The next step that is not done, in phase order; or the end. */
static void
hoststep_next(struct hoststep *hs)
{
	struct store	*s = hs_db();
	sqlite3_stmt	*st;
	const char	*host, *step, *state, *goal;
	int		 rc;

	/* Preflight tests (phase_index -1) come first. */
	st = store_prepare(s, "SELECT id, phase, host, step, state, goal,"
	    " phase_index FROM deployment_steps WHERE deployment_id = ? AND"
	    " state NOT IN ('succeeded', 'skipped') ORDER BY phase_index,"
	    " position LIMIT 1");
	if (st == NULL) {
		hoststep_end(hs, DS_FAILED, "the store cannot be read");
		return;
	}
	sqlite3_bind_int64(st, 1, hs->hs_id);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_reset(st);
		if (rc == SQLITE_DONE)
			hoststep_end(hs, DS_COMPLETED, NULL);
		else
			hoststep_end(hs, DS_FAILED, "the store cannot be read");
		return;
	}
	hs->hs_step = sqlite3_column_int64(st, 0);
	free(hs->hs_phase);
	hs->hs_phase = strdup((const char *)sqlite3_column_text(st, 1));
	host = (const char *)sqlite3_column_text(st, 2);
	step = (const char *)sqlite3_column_text(st, 3);
	state = (const char *)sqlite3_column_text(st, 4);
	goal = (const char *)sqlite3_column_text(st, 5);
	hs->hs_test = NULL;
	hs->hs_host = NULL;
	if (sqlite3_column_int(st, 6) < 0) {
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
	hs->hs_saved_step = strdup(step);
	hs->hs_resume = strcmp(state, "running") == 0;
	hs->hs_goal = goal != NULL && plan_goal_parse(goal) > 0 ?
	    plan_goal_parse(goal) : PLAN_GOAL_AUTO;
	rc = strcmp(state, "failed") == 0;
	sqlite3_reset(st);
	if (hs->hs_phase == NULL || hs->hs_saved_step == NULL)
		fatal("strdup");
	if (hs->hs_test == NULL ? hs->hs_host == NULL :
	    (hs->hs_test->pt_host != NULL && hs->hs_host == NULL)) {
		hoststep_end(hs, DS_FAILED, "a step names a host or test the "
		    "deployment's plan does not have");
		return;
	}
	if (rc) {
		hoststep_end(hs, DS_FAILED, "a host step failed");
		return;
	}
	if (hs->hs_test != NULL) {
		hoststep_preflight(hs);
		return;
	}
	hs->hs_check = 0;
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

int
hoststep_start(int64_t id)
{
	struct hoststep	*hs;
	sqlite3_stmt	*st;
	struct plan	*pl = NULL;
	char		*repo = NULL;
	int		 rc;

	if (hoststep_find(id) != NULL)
		return 0;
	st = store_prepare(hs_db(), "SELECT job, spec FROM deployments WHERE"
	    " id = ? AND kind = 'plan' AND state = 'deploying'");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		repo = strdup((const char *)sqlite3_column_text(st, 0));
		pl = plan_parse((const char *)sqlite3_column_text(st, 1),
		    sqlite3_column_bytes(st, 1));
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return -1;
	if (repo == NULL || pl == NULL)
		fatal("strdup");
	if ((hs = calloc(1, sizeof(*hs))) == NULL)
		fatal("calloc");
	hs->hs_id = id;
	hs->hs_repo = repo;
	hs->hs_plan = pl;
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
	log_info("deployment %lld: plan %s, %zu phases", (long long)id,
	    repo, pl->pl_nphases);
	hoststep_next(hs);
	return 0;
}
