/*
 * Glue between a framed channel and libevent, and the start-up handshake
 * of a worker.
 */
#ifndef NOPS_PROC_H
#define NOPS_PROC_H

#include <sys/types.h>
#include <event2/event.h>

#include "imsg.h"
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

/* A worker's handler of a message from the master (NOPS_IMSGS in nops.h). */
typedef void (*worker_handler)(struct imsg *);

/* Worker side: wait (blocking) for the next message from the master. */
void	 proc_worker_wait(const char *title, struct imsgbuf *, struct imsg *);
/* Worker side: wait (blocking) for IMSG_INIT on fd 3 and decode it. */
void	 proc_worker_init(const char *title, struct imsgbuf *,
	    struct worker_init *);
/* Master side: encode an IMSG_INIT. */
int	 proc_send_init(struct imsgbuf *, const struct worker_init *);

/* The rows every worker handles (receiver WORKER). */
void	 proc_worker_reinit(struct imsg *);
void	 proc_worker_verbose(struct imsg *);
void	 proc_worker_handle(const char *title, const worker_handler *,
	    struct imsg *);
void	 proc_worker_read(struct imsgev *, short, const worker_handler *);

#ifdef NOPS_TEST_HOOKS
void	 proc_worker_testhooks(const struct worker_init *, struct imsgev *);
/* A test hook named in the init message: "name" or "name:arg". */
int	 proc_testhook(const struct worker_init *, const char *name);
#endif

#endif /* NOPS_PROC_H */
