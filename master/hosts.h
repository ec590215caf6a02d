/*
 * Hosts of deploy plans (man/nops-plan.5): SSH runs through the
 * nomadworker, what each host runs (drift), plan deployments and their
 * host steps.
 *
 * hosts.c		SSH runs through the nomadworker, what nops saw of each
 *			host, the timer that starts deployments and probes
 * hosts_drift.c	drift, and the deployments a plan change makes
 * hosts_api.c		GET /api/v1/hosts and a deployment's steps
 * hoststep*.c		one deployment's phases and host steps (hoststep.h)
 */
#ifndef NOPS_HOSTS_H
#define NOPS_HOSTS_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "api.h"

struct nops_conf;
struct worker;
struct imsg;
union imsg_payload;
struct plan;
struct plan_host;

/* The answer to one SSH run. */
struct hosts_ssh_res {
	int		 hr_status;	/* exit status, -1: none */
	uint32_t	 hr_stage;	/* SSH_STAGE_* reached */
	const char	*hr_error;	/* "" when it ran */
	const char	*hr_out;	/* text, NUL-terminated: to parse */
	size_t		 hr_outlen;
	const char	*hr_shown;	/* the same, redacted: to show */
};
typedef void	(*hosts_ssh_cb)(const struct hosts_ssh_res *, void *);

/* What nops last saw of a host (memory only: read again after a start). */
struct hosts_host {
	TAILQ_ENTRY(hosts_host)	 hh_entry;
	char			*hh_repo;
	char			*hh_name;
	char			*hh_current;
	char			*hh_booted;
	char			*hh_error;
	char			*hh_last_step;
	time_t			 hh_seen_at;
	int			 hh_probing;
};


/* hosts.c */
void	 hosts_init(struct store *, const struct nops_conf *);
void	 hosts_configure(const struct nops_conf *);
void	 hosts_worker_started(struct worker *);
void	 hosts_worker_exited(struct worker *);
void	 hosts_ssh_result(struct worker *, struct imsg *,
	    const union imsg_payload *);
/*
 * Run command on h over a new SSH connection; stdin is in (inline) and
 * then the contents of fd (-1: none; passed to the nomadworker and
 * closed here).  cb gets the answer exactly once, also when the
 * nomadworker dies.  Returns a run id, or 0 (cb was not called).
 */
uint32_t hosts_ssh(const struct plan_host *, const char *command, int timeout,
	    const void *in, size_t inlen, int fd, hosts_ssh_cb, void *arg);
/* Forget a run's callback (its answer is dropped). */
void	 hosts_ssh_cancel(uint32_t);
/* A deployment changed: look at plans and deployments again soon. */
void	 hosts_kick(void);
const struct nops_conf *hosts_conf(void);
json_t	*hosts_json(void);	/* GET /api/v1/hosts */
/* Redact secrets from host output, in place. */
void	 hosts_redact(char *);
/* The next line of command output (hosts.c). */
void	 hosts_line(const char **, char *, size_t);
struct store *hosts_store(void);
/* What a host was seen running (for a step's goal and resume). */
void	 hosts_seen(const char *repo, const char *host, const char *current,
	    const char *booted, const char *error);
void	 hosts_last_step(const char *repo, const char *host,
	    const char *text);
struct hosts_host *hosts_host_get(const char *repo, const char *name,
	    int create);
/* The host table, for hosts_drift.c and hosts_api.c. */
struct hosts_host *hosts_host_first(void);
struct hosts_host *hosts_host_next(struct hosts_host *);

/* hosts_http.c: HTTP checks, made by the nomadworker */
/* status: the HTTP status, 0 with error when there was no answer. */
typedef void	(*hosts_http_cb)(int status, const char *error,
		    const char *body, void *);
/* One GET of url within timeout_ms; cb exactly once.  0: not started. */
uint32_t hosts_http(const char *url, int timeout_ms, hosts_http_cb, void *);
void	 hosts_http_cancel(uint32_t);
void	 hosts_http_worker_exited(void);
void	 hosts_probe_result(struct worker *, struct imsg *,
	    const union imsg_payload *);

/* hosts_drift.c */
/* Read what every host of repo's plan runs, then decide. */
void	 hosts_probe_repo(const char *repo);
/* A repository's plan changed (master/plans.c): probe, then decide. */
void	 hosts_plan_changed(const char *repo);

/* hoststep.c */
/* Drive deployment id (state deploying) of repo; 0, or -1 if it cannot. */
int	 hoststep_start(int64_t id);
int	 hoststep_running(int64_t id);
void	 hoststep_stop_all(void);

/* hosts_each.c: POST /api/v1/plans/{repository}/operations/{op} */
void	 hosts_each_api(struct api_req *, struct api_resp *);

/* hosts_api.c */
json_t	*hosts_steps_json(int64_t id, int *bad);
json_t	*hosts_host_json(const char *repo, const char *host);

/*
 * hosts_ops.c: a host's operations as actions (scope instance), and the
 * run log of operations run on hosts (by a host action or EachHost).
 */
struct action_ctx;
/* The plan of repo's last completed deployment (its id), or NULL. */
struct plan *hosts_deployed(const char *repo, int64_t *id, char *commit,
	    size_t commitlen, int *bad);
int	 hosts_plan_busy(const char *repo);
int64_t	 hosts_run_create(const char *repo, const char *host, const char *op,
	    const char *actor, int sensitive, int64_t deployment, int audit);
void	 hosts_run_end(int64_t id, const char *state, int exit_code,
	    const char *output, const char *error, int sensitive);
void	 hosts_runs_lost(void);
json_t	*hosts_each_actions_json(struct api_req *, const char *repo);
json_t	*hosts_actions_json(struct api_req *, const char *repo,
	    const char *host);
void	 hosts_action_run(struct action_ctx *, json_t *input,
	    struct api_resp *);
extern const struct api_route	 hosts_ops_routes[];
extern const size_t		 hosts_ops_nroutes;


extern const struct api_route	 hosts_routes[];
extern const size_t		 hosts_nroutes;

#endif /* NOPS_HOSTS_H */
