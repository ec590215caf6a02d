/*
 * nomadworker: the only process that talks to Nomad.  nomadworker.c
 * speaks to the master, nomad_wire.c turns a typed request into Nomad's
 * wire format, nomad_http.c moves it with libcurl driven by libevent.
 */
#ifndef NOPS_NOMADWORKER_H
#define NOPS_NOMADWORKER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "log.h"

struct proc_ctx;
struct imsgev;
struct msgw;

/* The process table's row (master/proc.c). */
extern struct imsgev	 nomad_iev;
void	 nomadworker_init(struct proc_ctx *);
void	 nomadworker_loop(struct proc_ctx *);
void	 nomadworker_run(struct proc_ctx *);
/* A message to the master (iev); one that cannot be queued is fatal. */
void	 nomad_send(struct imsgev *, struct msgw *, uint32_t type,
	    uint32_t id);

/* One request as the master sent it (IMSG_NOMAD_REQUEST, decoded). */
struct nomad_ask {
	uint32_t	 na_op;		/* NOMAD_OP_* */
	uint32_t	 na_flags;	/* NOMAD_F_* */
	uint32_t	 na_timeout_ms;	/* per attempt */
	const char	*na_ns;
	const char	*na_id;		/* job, deployment or alloc */
	const char	*na_task;
	const char	*na_prefix;
	const char	*na_idem;	/* idempotency token */
	uint64_t	 na_index;	/* JobModifyIndex for check-and-set */
	uint64_t	 na_tail;	/* logs: last bytes, 0: all */
	const void	*na_data1;
	size_t		 na_data1len;
	const void	*na_data2;
	size_t		 na_data2len;
};

/* The HTTP request that carries it. */
struct nomad_wire {
	const char	*nw_method;	/* "GET", "POST" or "DELETE" */
	char		*nw_path;	/* "/v1/...?namespace=..." */
	char		*nw_body;	/* NULL: none */
	size_t		 nw_bodylen;
	int		 nw_read;	/* changes nothing: retry it */
	int		 nw_block;	/* a blocking query: may wait long */
};

/* nomad_wire.c */
int	 nomad_wire_build(const struct nomad_ask *, struct nomad_wire *,
	    char *err, size_t errlen);
void	 nomad_wire_free(struct nomad_wire *);
char	*nomad_escape(const char *);
int	 nomad_address_parse(const char *, char *base, size_t baselen,
	    char *err, size_t errlen);

/* nomad_http.c: the answer to one request. */
struct nomad_answer {
	uint32_t	 an_id;
	uint32_t	 an_status;	/* HTTP status, 0: see an_error */
	uint64_t	 an_index;	/* X-Nomad-Index, 0 when absent */
	uint32_t	 an_attempts;
	const char	*an_error;	/* transport error, or "" */
	const void	*an_body;
	size_t		 an_bodylen;
};

struct nomad_http_conf {
	char		*hc_base;	/* scheme://host[:port][/prefix] */
	char		*hc_token;	/* secret, or NULL */
	void		*hc_ca;		/* PEM; NULL: system CAs */
	size_t		 hc_calen;
};

void	 nomad_http_init(struct event_base *,
	    void (*)(const struct nomad_answer *));
/* Takes the conf's strings (the previous ones are wiped and freed). */
void	 nomad_http_configure(struct nomad_http_conf *);
int	 nomad_http_configured(void);
/* Answer id with an error and no body, through the callback. */
void	 nomad_http_refuse(uint32_t id, const char *error);
/* Queue a request; its answer comes through the callback, exactly once. */
void	 nomad_http_start(uint32_t id, struct nomad_wire *,
	    uint32_t timeout_ms);

/* nomad_probe.c: HTTP checks of plan hosts. */
struct imsg;
union imsg_payload;
void	 nomad_probe_init(struct event_base *, struct imsgev *);
void	 nomad_probe(struct imsg *, const union imsg_payload *);

/* nomad_ssh.c: SSH to plan hosts. */
struct imsgev;
struct imsg;
void	 nomad_ssh_init(struct event_base *, struct imsgev *);
void	 nomad_ssh_key(struct imsg *, const union imsg_payload *);
void	 nomad_ssh_run(struct imsg *, const union imsg_payload *);

#endif /* NOPS_NOMADWORKER_H */
