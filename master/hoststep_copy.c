/*
 * A host step's system onto the host (hoststep.h): realise it here
 * through the configured Nix store, list its closure, ask the host what
 * it runs and which paths it lacks, and copy those (nix-store --export
 * here, sandboxed, piped over SSH into nix-store --import there).
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
#include "deploy.h"
#include "engine.h"
#include "nixrun.h"
#include "plan.h"
#include "hosts.h"
#include "webpub.h"
#include "hoststep.h"

/* What follows the copy: the build there (buildOnTarget), or activation. */
static int
hoststep_after_copy(struct hoststep *hs)
{
	return hs->hs_host->ph_build_on_target ? HS_REMOTE_BUILD :
	    HS_ACTIVATE;
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
	hosts_line(&p, hs->hs_current, sizeof(hs->hs_current));
	hosts_line(&p, hs->hs_booted, sizeof(hs->hs_booted));
	hosts_line(&p, hs->hs_profile, sizeof(hs->hs_profile));
	hosts_seen(hs->hs_repo, hs->hs_host->ph_name, hs->hs_current,
	    hs->hs_booted, NULL);

	/* The paths the host lacks, in the closure's order. */
	if ((missing = calloc(1, strlen(hs->hs_closure) + 1)) == NULL)
		fatal("calloc");
	for (q = hs->hs_closure; *q != '\0'; ) {
		hosts_line(&q, path, sizeof(path));
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
	hs->hs_sub = len > 0 ? HS_COPY : hoststep_after_copy(hs);
	hoststep_sub(hs);
}

/* HS_BUILD, HS_CLOSURE, the export of HS_COPY: Nix here, sandboxed. */
int
hoststep_nix(struct hoststep *hs, const char **argv, int outfd, nixrun_cb cb,
    const char *what)
{
	struct nixrun_spec	 ns;
	char			 err[256], w[256];

	memset(&ns, 0, sizeof(ns));
	snprintf(w, sizeof(w), "deployment %lld: %s for %s",
	    (long long)hs->hs_id, what, hs->hs_name);
	ns.ns_what = w;
	ns.ns_argv = argv;
	ns.ns_store = hosts_conf()->hosts.nix_store != NULL ?
	    hosts_conf()->hosts.nix_store : NOPS_NIX_STORE;
	ns.ns_timeout = hosts_conf()->hosts.build_timeout;
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

/*
 * Alike on purpose: hoststep_build_done above and hoststep_test_built
 * (hoststep.c) open as every nixrun callback does (the run is over, a
 * failure ends the step); each says another thing and goes on elsewhere.
 */
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
	hs->hs_closure = xstrdup(out);
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
	hs->hs_sub = hoststep_after_copy(hs);
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

void
hoststep_copy(struct hoststep *hs)
{
	const char	**argv;
	char		*paths, *p, bin[PATH_MAX];
	size_t		 a = 0, n = 0;
	int		 pfd[2];

	if (pipe2(pfd, O_CLOEXEC) == -1) {
		hoststep_fail(hs, "pipe: %s", strerror(errno));
		return;
	}
	/*
	 * Export the missing paths, in the closure's order (what a path
	 * refers to comes first), all in one stream: a NixOS system has
	 * hundreds.
	 */
	for (p = hs->hs_missing; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	if (n > NIXRUN_PATHS_MAX) {
		close(pfd[0]);
		close(pfd[1]);
		hoststep_fail(hs, "more than %d paths to copy at once",
		    NIXRUN_PATHS_MAX);
		return;
	}
	paths = xstrdup(hs->hs_missing);
	if ((argv = calloc(n + 4, sizeof(*argv))) == NULL)
		fatal("calloc");
	strlcpy(bin, nixrun_bin("nix-store"), sizeof(bin));
	argv[a++] = bin;
	argv[a++] = "--export";
	for (p = strtok(paths, "\n"); p != NULL && a < n + 2;
	    p = strtok(NULL, "\n"))
		argv[a++] = p;
	argv[a] = NULL;
	hs->hs_copy_left = 2;
	hs->hs_copy_error[0] = '\0';
	if (hoststep_nix(hs, argv, pfd[1], hoststep_export_done,
	    "export") == -1) {
		free(argv);
		free(paths);
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	free(argv);
	free(paths);
	close(pfd[1]);
	hoststep_ssh(hs, "nix-store --import >/dev/null",
	    hosts_conf()->hosts.command_timeout, NULL, pfd[0],
	    hoststep_import_done);
}

/* HS_BUILD: realise the system (or its .drv) in the configured store. */
void
hoststep_build(struct hoststep *hs)
{
	const struct plan_host	*h = hs->hs_host;
	const char		*argv[4];
	char			 bin[PATH_MAX];

	/*
	 * Built there: what goes to the host is the derivation's closure
	 * (the .drv files and sources), and the host realises it.
	 */
	if (h->ph_build_on_target) {
		if (h->ph_drv == NULL) {
			hoststep_fail(hs, "buildOnTarget needs the system's "
			    ".drv: set \"nix store\" in nops.conf so that "
			    "evaluation writes it, or give drv in the plan");
			return;
		}
		hs->hs_sub = HS_CLOSURE;
		hoststep_sub(hs);
		return;
	}
	strlcpy(bin, nixrun_bin("nix-store"), sizeof(bin));
	argv[0] = bin;
	argv[1] = "--realise";
	argv[2] = h->ph_drv != NULL ? h->ph_drv : h->ph_system;
	argv[3] = NULL;
	hoststep_nix(hs, argv, -1, hoststep_build_done, "build");
}

/* HS_CLOSURE: the paths the system needs, here. */
void
hoststep_closure(struct hoststep *hs)
{
	const char	*argv[5];
	char		 bin[PATH_MAX];

	strlcpy(bin, nixrun_bin("nix-store"), sizeof(bin));
	argv[0] = bin;
	argv[1] = "--query";
	argv[2] = "--requisites";
	argv[3] = hs->hs_host->ph_build_on_target ? hs->hs_host->ph_drv :
	    hs->hs_host->ph_system;
	argv[4] = NULL;
	hoststep_nix(hs, argv, -1, hoststep_closure_done, "closure");
}

static void
hoststep_remote_build_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hoststep	*hs = arg;

	hs->hs_ssh = 0;
	if (res->hr_stage != SSH_STAGE_DONE || res->hr_status != 0) {
		if (res->hr_stage == SSH_STAGE_DONE)
			hoststep_fail(hs, "building %s on the host failed "
			    "(exit %d): %s", hs->hs_host->ph_drv,
			    res->hr_status, hoststep_tail(res->hr_shown, 1024));
		else
			hoststep_fail(hs, "building on the host: %s: %s",
			    hoststep_stage(res), res->hr_error);
		return;
	}
	if (strstr(res->hr_out, hs->hs_host->ph_system) == NULL) {
		hoststep_fail(hs, "building on the host gave %s, not the "
		    "plan's system %s", hoststep_tail(res->hr_shown, 300),
		    hs->hs_host->ph_system);
		return;
	}
	log_info("deployment %lld: %s built %s", (long long)hs->hs_id,
	    hs->hs_host->ph_name, hs->hs_host->ph_system);
	hs->hs_sub = HS_ACTIVATE;
	hoststep_sub(hs);
}

/*
 * HS_REMOTE_BUILD (buildOnTarget): the host realises the derivation it
 * now has, with its own Nix; realising what is already built is quick,
 * so a resumed step just asks again.
 */
void
hoststep_remote_build(struct hoststep *hs)
{
	char	*cmd;

	log_info("deployment %lld: building %s on %s", (long long)hs->hs_id,
	    hs->hs_host->ph_drv, hs->hs_host->ph_name);
	cmd = xasprintf("nix-store --realise '%s'", hs->hs_host->ph_drv);
	hoststep_ssh(hs, cmd, hosts_conf()->hosts.build_timeout, NULL, -1,
	    hoststep_remote_build_done);
	free(cmd);
}

/* HS_PROBE: one connection: what the host runs, then what it lacks. */
void
hoststep_probe(struct hoststep *hs)
{
	hoststep_ssh(hs, "readlink -f /run/current-system || echo; "
	    "readlink -f /run/booted-system || echo; "
	    "readlink -f /nix/var/nix/profiles/system || echo; "
	    "xargs -r nix-store --check-validity --print-invalid",
	    HS_PROBE_TIMEOUT, hs->hs_closure, -1, hoststep_probe_done);
}
