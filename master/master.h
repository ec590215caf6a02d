/*
 * The master process: supervision of the workers, the control socket and
 * listeners it hands to the webworker, and the API it answers.
 */
#ifndef NOPS_MASTER_H
#define NOPS_MASTER_H

#include <sys/types.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"

struct nops_conf;
struct store;

/* One row of the process table. */
struct worker {
	enum nops_proc	 w_id;
	const char	*w_title;
	int		 w_flags;	/* IMSGF_PASSFD for the webworker */
	size_t		 w_maxmsg;

	/* run-time state */
	pid_t		 w_pid;		/* 0 while not running */
	struct imsgev	 w_iev;
	int		 w_running;
	int		 w_ready;	/* sent IMSG_WORKER_READY */
	time_t		 w_started;
	unsigned int	 w_restarts;	/* since the master started */
	unsigned int	 w_fails;	/* consecutive short lives: backoff */
	char		 w_lastexit[256];
	int		 w_killed;	/* the master killed it:
					   w_lastexit says why */
	struct event	*w_restart_ev;
	char		*w_testhook;	/* test builds: one-shot hook */
};

/*
 * The master's handler of a worker's message (NOPS_IMSGS in nops.h): the
 * sender, the imsg and its payload, decoded by supervise_dispatch()
 * (shared/msgtab.h).
 */
typedef void (*master_handler)(struct worker *, struct imsg *,
	    const union imsg_payload *);
void	 supervise_ready(struct worker *, struct imsg *,
	    const union imsg_payload *);

/* A socket the webworker serves; the master keeps it across restarts. */
struct listener {
	int		 l_fd;
	uint32_t	 l_kind;	/* WEB_LISTEN_* */
	char		 l_name[WEB_NAME_MAX];
};

struct nopsd {
	struct event_base *n_base;
	struct nops_conf *n_conf;
	const char	*n_conffile;
	int		 n_debug;
	int		 n_dumpable;	/* -c: core dumps allowed */
	int		 n_verbose;
	time_t		 n_started;
	time_t		 n_conf_loaded;
	unsigned int	 n_reloads;
	unsigned int	 n_reload_failures;
	struct store	*n_store;
	uid_t		 n_uid;		/* workers' user */
	gid_t		 n_gid;
	uid_t		 n_muid;	/* master user: root is dropped to it */
	gid_t		 n_mgid;
	gid_t		 n_ctlgid;
	struct listener	*n_listeners;	/* kept open for worker restarts */
	size_t		 n_nlisteners;
	int		 n_shutdown;
	char		*n_argv0;
	char		*n_statedir;	/* database dir;
					   gitworker cache below */
};

extern struct nopsd	*nopsd_env;
extern struct worker	 workers[PROC_MAX];

/* supervise.c */
void	 supervise_init(void);
void	 supervise_start_all(void);
void	 supervise_start(struct worker *);
void	 supervise_attach(struct worker *, int, pid_t);
void	 supervise_sigchld(void);
void	 supervise_stop_all(void);
void	 supervise_violation(struct worker *, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));
void	 supervise_kill(struct worker *, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));
void	 supervise_broadcast(uint32_t type, const void *, size_t);
struct worker *supervise_worker(enum nops_proc);
void	 supervise_exec(const char *title, int debug, int verbose);

/* control.c */
int	 control_open(const char *path, gid_t gid);
int	 control_listen_all(struct nops_conf *, gid_t);
void	 control_close_all(void);
void	 control_send_listeners(struct worker *);
int	 control_peer(int, uid_t *, gid_t *, const char **);

/* api.c */
void	 api_dispatch_web(struct worker *, struct imsg *,
	    const union imsg_payload *);
json_t	*api_status(void);

/* nopsd.c, nopsd_init.c */
struct proc_ctx;
void	 nopsd_init(struct proc_ctx *);
__dead void nopsd_run(struct proc_ctx *);
/* Every file the config names: fn(path, is a directory (file://), arg). */
typedef void	(*nopsd_file_fn)(const char *, int, void *);
void	 nopsd_conf_files(struct nops_conf *, nopsd_file_fn, void *);
int	 nopsd_reload(const char *who);
void	 nopsd_set_verbose(int);

#endif /* NOPS_MASTER_H */
