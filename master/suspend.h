/*
 * Suspend (master/suspend.c): a value in the desired state of a job, not
 * a command.  While a job is suspended, nops registers it stopped
 * (Nomad's Stop: its allocations stop, its services leave discovery,
 * volumes and data stay), and every later deployment of it carries the
 * Stop, so no new commit starts it again.  Unsuspend registers the spec
 * of the job's last successful deployment.
 */
#ifndef NOPS_SUSPEND_H
#define NOPS_SUSPEND_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct action_ctx;
struct api_resp;
struct ejob;

/* A register of a suspend or unsuspend is in flight for the job. */
int	 suspend_busy(const char *ns, const char *job);
/* Does suspend mean something for the job's type (service, system)? */
int	 suspend_job_type_ok(const struct action_ctx *);
/* Suspend as a value of the desired state: Stop in a spec to register. */
int	 suspend_carry(const char *ns, const char *job, json_t *spec);
/* The job detail's "suspended": {by, reason, since}, or JSON null. */
json_t	*suspend_json(const char *ns, const char *job);
/* Is this job type one a suspend means something for? */
int	 suspend_type_suspendable(const json_t *job);

/* Register a suspend left behind again; see master/suspend.c. */
int	 suspend_retry(const char *ns, const char *job, int64_t dep,
	    void (*done)(void *, int, const char *), void *arg, char *err,
	    size_t errlen);

/* The procedures of the actions (master/action.c's table). */
void	 suspend_action(struct action_ctx *, json_t *, struct api_resp *);
void	 suspend_undo_action(struct action_ctx *, json_t *, struct api_resp *);

#endif /* NOPS_SUSPEND_H */
