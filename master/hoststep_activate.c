/*
 * A host step's activation (hoststep.h), as nixos-rebuild does it: the
 * goal forced by the plan or chosen on the host, the system profile, then
 * switch-to-configuration GOAL.  After switch or test nops must reach the
 * host again on a new connection within confirm-timeout; a watchdog the
 * activation started on the host rolls it back otherwise.
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
		hosts_line(&g, goal, sizeof(goal));
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

void
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
	hosts_line(&p, cur, sizeof(cur));
	hosts_seen(hs->hs_repo, hs->hs_host->ph_name, cur, NULL, NULL);
	if (strcmp(cur, hs->hs_host->ph_system) != 0) {
		hoststep_fail(hs, "after the activation the host runs %s, not "
		    "%s (rolled back?)", cur, hs->hs_host->ph_system);
		return;
	}
	hs->hs_sub = HS_CHECKS;
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
	cmd = xasprintf(
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
	    wait);
	return cmd;
}

/* HS_ACTIVATE: saved before acting, so a restart will not do it twice. */
void
hoststep_activate(struct hoststep *hs)
{
	const struct plan_host	*h = hs->hs_host;
	char			*cmd;

	/* Forced by the plan, or chosen by the host (auto). */
	hs->hs_goal = hs->hs_plan->pl_goal;
	if (hoststep_save(hs, "activate", "running", NULL) == -1) {
		hoststep_fail(hs, "the store refused the step");
		return;
	}
	log_info("deployment %lld: activating %s on %s (%s)",
	    (long long)hs->hs_id, h->ph_system, h->ph_name,
	    plan_goal_name(hs->hs_goal));
	cmd = hoststep_activation(hs);
	hoststep_ssh(hs, cmd, hosts_conf()->hosts.command_timeout, NULL, -1,
	    hoststep_activate_done);
	free(cmd);
}

/* HS_CONFIRM: a new connection leaves the token the watchdog waits for. */
void
hoststep_confirm(struct hoststep *hs)
{
	char	*cmd, token[256];

	hoststep_token(hs, token, sizeof(token));
	cmd = xasprintf("touch '%s' && readlink -f /run/current-system", token);
	hoststep_ssh(hs, cmd, hosts_conf()->hosts.confirm_timeout, NULL, -1,
	    hoststep_confirm_done);
	free(cmd);
}
