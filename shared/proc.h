/*
 * Glue between a framed channel and libevent, and the start-up handshake
 * of a worker.
 */
#ifndef NOPS_PROC_H
#define NOPS_PROC_H

#include <sys/types.h>
#include <event2/event.h>

#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "nops.h"

struct imsgev {
	struct imsgbuf	 ibuf;
	struct event	*ev;
	struct event_base *base;
	void		(*handler)(int, short, void *);
	void		*data;
	short		 events;
	const char	*name;		/* peer, for the log */
};

/* The parameters a worker gets in IMSG_INIT, before it drops privileges. */
struct worker_init {
	uint32_t	 wi_uid;
	uint32_t	 wi_gid;
	uint32_t	 wi_verbose;
	char		*wi_user;
	char		*wi_statedir;	/* gitworker cache lives below */
	char		*wi_chroot;	/* webworker's empty root */
	char		*wi_testhook;	/* test builds only, else "" */
};

#define PROC_CHILD_FD		3	/* the worker's end of its socketpair */

struct sandbox_profile;
struct sandbox_path;
struct proc_ctx;

/*
 * A process of nopsd, one row of the process table (master/proc.c).  The
 * runtime, proc_run(), takes every process through the same steps:
 *
 *	pd_init		privileged set-up (workers: after IMSG_INIT;
 *			the master: config, secrets, sockets,
 *			directories): may add Landlock paths and
 *			system calls known only at run time
 *	drop		chroot (pd_chroot), become the process's user,
 *			keep only pc_caps, NO_NEW_PRIVS, no core files
 *	Landlock	the profile's paths plus those pd_init added
 *	pd_loop		the event base and what libevent opens
 *	seccomp		the profile's system calls plus pd_init's
 *	pd_run		serve (the master: start the workers, which
 *			nest in its sandbox); never returns
 */
struct proc_def {
	const char	*pd_title;
	enum nops_proc	 pd_id;
	int		 pd_chroot;	/* chroot in the empty directory */
	struct imsgev	*pd_iev;	/* workers: the channel to the master */
	int		 pd_imsgflags;	/* IMSGF_* of that channel */
	size_t		 pd_maxmsg;
	const struct sandbox_profile *pd_profile;
	void		(*pd_init)(struct proc_ctx *);
	void		(*pd_loop)(struct proc_ctx *);
	void		(*pd_run)(struct proc_ctx *);
};

struct proc_ctx {
	const struct proc_def *pc_def;
	int		 pc_debug;
	int		 pc_verbose;
	int		 pc_dumpable;	/* -c: keep core dumps possible */
	uid_t		 pc_uid;	/* the user the process becomes */
	gid_t		 pc_gid;
	uint64_t	 pc_caps;	/* capabilities it keeps (master) */
	const char	*pc_chroot;
	struct worker_init pc_wi;	/* workers: what IMSG_INIT said */
	struct sandbox_path *pc_paths;	/* Landlock paths known at run time */
	char		**pc_pathcopies; /* the strings they point at (owned) */
	size_t		 pc_npaths;
	struct sandbox_syscall *pc_syscalls;	/* seccomp rows, likewise */
	size_t		 pc_nsyscalls;
	struct event_base *pc_base;
};

/* The process table (master/proc.c): a row per process, by enum nops_proc. */
extern const struct proc_def procs[PROC_MAX];
const struct proc_def *proc_find(const char *title);
__dead void proc_run(const struct proc_def *, int debug, int verbose,
	    int dumpable);
/* pd_init: add a Landlock path (copied). */
void	 proc_add_path(struct proc_ctx *, const char *, unsigned int access);
/* pd_init: add seccomp rows (copied). */
void	 proc_add_syscalls(struct proc_ctx *, const struct sandbox_syscall *,
	    size_t);
/*
 * The confinement proc_run() applies once pd_init is done: drop, no
 * core files, Landlock, pd_loop, seccomp.  The sandbox tests call it
 * for the master's row as proc_run() does.
 */
void	 proc_confine(struct proc_ctx *);

void	 imsgev_init(struct imsgev *, struct event_base *, int fd, int flags,
	    size_t maxsize, const char *name,
	    void (*)(int, short, void *), void *);
void	 imsgev_attach(struct imsgev *, struct event_base *, const char *,
	    void (*)(int, short, void *), void *);
void	 imsgev_add(struct imsgev *);
void	 imsgev_clear(struct imsgev *);
int	 imsgev_compose(struct imsgev *, uint32_t type, uint32_t peerid,
	    int fd, const void *, size_t);
int	 imsgev_send(struct imsgev *, struct msgw *, uint32_t type,
	    uint32_t peerid, int fd);

/*
 * A worker's handler of a message from the master (NOPS_IMSGS in nops.h):
 * the imsg and its payload, decoded by the dispatch (shared/msgtab.h).
 */
typedef void (*worker_handler)(struct imsg *, const union imsg_payload *);

/* Worker side: wait (blocking) for the next message from the master. */
void	 proc_worker_wait(const char *title, struct imsgbuf *, struct imsg *);
/* Worker side: wait (blocking) for IMSG_INIT on fd 3 and decode it. */
void	 proc_worker_init(const char *title, struct imsgbuf *,
	    struct worker_init *);
/* Master side: encode an IMSG_INIT. */
int	 proc_send_init(struct imsgbuf *, const struct worker_init *);

/* The rows every worker handles (receiver WORKER). */
void	 proc_worker_reinit(struct imsg *, const union imsg_payload *);
void	 proc_worker_verbose(struct imsg *, const union imsg_payload *);
void	 proc_worker_handle(const char *title, const worker_handler *,
	    struct imsg *);
void	 proc_worker_read(struct imsgev *, short, const worker_handler *);

#ifdef NOPS_TEST_HOOKS
void	 proc_worker_testhooks(const struct worker_init *, struct imsgev *);
/* A test hook named in the init message: "name" or "name:arg". */
int	 proc_testhook(const struct worker_init *, const char *name);
#endif

#endif /* NOPS_PROC_H */
