/*
 * Between the files of one plan deployment's host steps (master/
 * hoststep*.c): the runner's state and what the files share.
 *
 * hoststep.c		the order of steps (preflight tests, phases, hosts),
 *			saving each before it acts, the end of a deployment
 * hoststep_copy.c	the system onto the host: build it (here, or on the
 *			target), its closure, what the host lacks, the copy
 * hoststep_activate.c	the activation with its goal, the confirmation on
 *			a new connection and the on-host rollback watchdog
 * hoststep_check.c	the host's checks: commands over SSH, HTTP probes
 */
#ifndef NOPS_HOSTSTEP_H
#define NOPS_HOSTSTEP_H

#include <sys/queue.h>

#include <stdint.h>
#include <time.h>

#include "hosts.h"
#include "nixrun.h"


#define HS_BUILD	1	/* realise the system here */
#define HS_CLOSURE	2	/* its closure */
#define HS_PROBE	3	/* what the host runs, what it lacks */
#define HS_COPY		4	/* export | ssh import */
#define HS_ACTIVATE	5	/* the goal (chosen there), activation */
#define HS_CONFIRM	6	/* a new connection within confirm-timeout */
#define HS_CHECKS	7
#define HS_REMOTE_BUILD	8	/* buildOnTarget: realise it there */

#define HS_HTTP_RETRY		2	/* seconds between HTTP attempts */
#define HS_HTTP_ATTEMPT		10	/* seconds one attempt may take */
#define HS_PROBE_TIMEOUT	30
#define HS_NIX_MEMORY		(4ULL * 1024 * 1024 * 1024)

struct event;

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
	int			 hs_failed;	/* the step read had failed */
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
	time_t			 hs_check_until; /* an HTTP check's end */
	char			 hs_check_error[256]; /* its last failure */
	uint32_t		 hs_http;	/* an HTTP check in flight */
	time_t			 hs_confirm_until;
	uint32_t		 hs_ssh;
	int			 hs_nix;
	struct event		*hs_retry;
};

/* hoststep.c */
int	 hoststep_save(struct hoststep *, const char *step, const char *state,
	    const char *error);
void	 hoststep_fail(struct hoststep *, const char *fmt, ...)
	    __attribute__((__format__(printf, 2, 3)));
void	 hoststep_next(struct hoststep *);
void	 hoststep_sub(struct hoststep *);
const char *hoststep_tail(const char *, size_t);
int	 hoststep_ssh(struct hoststep *, const char *cmd, int timeout,
	    const char *in, int fd, hosts_ssh_cb);
const char *hoststep_stage(const struct hosts_ssh_res *);

/* hoststep_copy.c */
int	 hoststep_nix(struct hoststep *, const char **argv, int outfd,
	    nixrun_cb, const char *what);
void	 hoststep_build(struct hoststep *);
void	 hoststep_closure(struct hoststep *);
void	 hoststep_probe(struct hoststep *);
void	 hoststep_copy(struct hoststep *);
void	 hoststep_remote_build(struct hoststep *);

/* hoststep_activate.c */
void	 hoststep_activate(struct hoststep *);
void	 hoststep_confirm(struct hoststep *);
void	 hoststep_retry_cb(int, short, void *);

/* hoststep_check.c */
void	 hoststep_checks(struct hoststep *);

#endif /* NOPS_HOSTSTEP_H */
