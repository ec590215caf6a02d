/*
 * Hosts of deploy plans (man/nops-plan.5): SSH runs through the
 * nomadworker, what each host runs (drift), plan deployments and their
 * host steps.  hosts.c: SSH, probes, drift, deployments, the API;
 * hoststep.c: one deployment's phases and host steps.
 */
#ifndef NOPS_HOSTS_H
#define NOPS_HOSTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api.h"

struct nops_conf;
struct worker;
struct imsg;
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

/* hosts.c */
void	 hosts_init(struct store *, const struct nops_conf *);
void	 hosts_configure(const struct nops_conf *);
void	 hosts_worker_started(struct worker *);
void	 hosts_worker_exited(struct worker *);
void	 hosts_ssh_result(struct worker *, struct imsg *);
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
struct store *hosts_store(void);
/* What a host was seen running (for a step's goal and resume). */
void	 hosts_seen(const char *repo, const char *host, const char *current,
	    const char *booted, const char *error);
void	 hosts_last_step(const char *repo, const char *host,
	    const char *text);

/* hoststep.c */
/* Drive deployment id (state deploying) of repo; 0, or -1 if it cannot. */
int	 hoststep_start(int64_t id);
int	 hoststep_running(int64_t id);
void	 hoststep_stop_all(void);

/* hosts_api.c */
json_t	*hosts_steps_json(int64_t id, int *bad);


extern const struct api_route	 hosts_routes[];
extern const size_t		 hosts_nroutes;

#endif /* NOPS_HOSTS_H */
