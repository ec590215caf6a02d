/*
 * The master's client of Nomad: asynchronous calls carried out by the
 * nomadworker.  Every call returns a request id and later calls its
 * callback exactly once (unless cancelled), never from inside the call
 * itself: with Nomad's answer, or with status 0 and an error when there
 * was none (transport error, timeout, the nomadworker died, Nomad not
 * configured, bad arguments).
 */
#ifndef NOPS_NOMAD_H
#define NOPS_NOMAD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct nops_conf;
struct worker;
struct imsg;
union imsg_payload;

#define NOMAD_TIMEOUT_MS	30000	/* per attempt, unless asked */
#define NOMAD_MAX_OUTSTANDING	1024
/* Nomad's error text as nops keeps it: cleaned, cut between characters. */
#define NOMAD_REASON_MAX	1000
/*
 * Parse results kept.  Detection parses every file each cycle in the same
 * order, so the cache must hold them all or an LRU never hits; the byte
 * bound of the cache still applies.
 */
#define NOMAD_PARSE_CACHE_MAX	8192
#define NOMAD_PARSE_CACHE_BYTES	(64 * 1024 * 1024)

struct nomad_result {
	uint32_t	 nr_id;
	int		 nr_op;		/* NOMAD_OP_* */
	/* HTTP status; 0 when there was no answer (nr_error says why). */
	int		 nr_status;
	uint64_t	 nr_index;	/* X-Nomad-Index; 0 when absent */
	/*
	 * A 2xx JSON answer, parsed (JSON null included, e.g. a job without
	 * a deployment); NULL otherwise and for logs.  Owned by the result:
	 * json_incref it to keep it past the callback.
	 */
	json_t		*nr_json;
	/*
	 * NULL on success.  Otherwise Nomad's plain-text error body as it
	 * sent it (e.g. "Enforcing job modify index 42: job exists with
	 * conflicting job modify index: 55"), a transport error, or why a
	 * 2xx answer could not be used.
	 */
	const char	*nr_error;
	const char	*nr_body;	/* the raw body, NUL-terminated */
	size_t		 nr_bodylen;
	unsigned int	 nr_attempts;	/* HTTP requests sent */
	int		 nr_cached;	/* parse: from the cache */
};

typedef void	(*nomad_cb)(struct nomad_result *, void *);

/* Every parameter an operation may take; unused ones NULL / 0. */
struct nomad_args {
	const char	*na_ns;		/* NULL: the first one */
	const char	*na_id;		/* job, deployment or alloc */
	const char	*na_task;	/* logs */
	const char	*na_prefix;	/* jobs list */
	const char	*na_idem;	/* dispatch idempotency token */
	json_t		*na_job;	/* plan, register: borrowed */
	json_t		*na_meta;	/* dispatch: object of strings */
	json_t		*na_groups;	/* promote: array; NULL: all */
	const void	*na_data;	/* parse: HCL; dispatch: payload */
	size_t		 na_datalen;
	const void	*na_vars;	/* parse: the variables file */
	size_t		 na_varslen;
	uint64_t	 na_index;	/* register: JobModifyIndex (CAS) */
	uint64_t	 na_tail;	/* logs: the last bytes; 0: all */
	uint32_t	 na_flags;	/* NOMAD_F_* */
	uint32_t	 na_timeout_ms;	/* per attempt; 0: default */
};

/* Lifecycle, wired by nopsd.c and supervise.c. */
void	 nomad_init(void);
int	 nomad_configure(const struct nops_conf *);
void	 nomad_worker_started(struct worker *);
void	 nomad_worker_exited(struct worker *, const char *why);
/* The nomadworker's answers (NOPS_IMSGS in nops.h). */
void	 nomad_response(struct worker *, struct imsg *,
	    const union imsg_payload *);
void	 nomad_body(struct worker *, struct imsg *,
	    const union imsg_payload *);
void	 nomad_shutdown(void);

/* The generic call and one wrapper per operation. */
uint32_t nomad_call(int op, const struct nomad_args *, nomad_cb, void *);
uint32_t nomad_parse(const char *ns, const char *hcl, size_t hcllen,
	    const char *vars, size_t varslen, nomad_cb, void *);
uint32_t nomad_plan(const char *ns, const char *id, json_t *job, nomad_cb,
	    void *);
uint32_t nomad_register(const char *ns, const char *id, json_t *job,
	    int enforce, uint64_t modify_index, nomad_cb, void *);
/* The reads that name only a namespace and an id share one call. */
uint32_t nomad_read(int op, const char *ns, const char *id, nomad_cb, void *);
#define nomad_job_read(ns, id, cb, arg)					\
	nomad_read(NOMAD_OP_JOB_READ, (ns), (id), (cb), (arg))
#define nomad_job_allocations(ns, id, cb, arg)				\
	nomad_read(NOMAD_OP_JOB_ALLOCATIONS, (ns), (id), (cb), (arg))
#define nomad_job_deployment(ns, id, cb, arg)				\
	nomad_read(NOMAD_OP_JOB_DEPLOYMENT, (ns), (id), (cb), (arg))
#define nomad_deployment_read(ns, id, cb, arg)				\
	nomad_read(NOMAD_OP_DEPLOYMENT_READ, (ns), (id), (cb), (arg))
uint32_t nomad_deployment_promote(const char *ns, const char *id,
	    json_t *groups, nomad_cb, void *);
uint32_t nomad_job_dispatch(const char *ns, const char *id,
	    const void *payload, size_t payloadlen, json_t *meta,
	    const char *idempotency_token, nomad_cb, void *);
uint32_t nomad_job_stop(const char *ns, const char *id, int purge, nomad_cb,
	    void *);
uint32_t nomad_jobs_list(const char *ns, const char *prefix, nomad_cb,
	    void *);
/*
 * Blocking queries (NOMAD_F_BLOCK): answered once Nomad's index passes
 * index, or after NOMAD_BLOCK_WAIT_S with the same index; index 0
 * answers at once.
 */
uint32_t nomad_jobs_watch(const char *ns, uint64_t index, nomad_cb, void *);
uint32_t nomad_deployments_watch(const char *ns, uint64_t index, nomad_cb,
	    void *);
uint32_t nomad_status_leader(nomad_cb, void *);
uint32_t nomad_agent_self(nomad_cb, void *);

/* The callback of a request still outstanding will not be called. */
void	 nomad_cancel(uint32_t id);
size_t	 nomad_outstanding(void);

/* Reading results. */
int	 nomad_ok(const struct nomad_result *);	/* 2xx and usable */
const char *nomad_child_of(const struct nomad_result *, const char *);

/* Check-and-set refusals of a register (NOMAD-API.md section 4). */
#define NOMAD_CAS_NONE		0	/* not a CAS refusal */
#define NOMAD_CAS_CONFLICT	1	/* changed: *stored is its index */
#define NOMAD_CAS_EXISTS	2	/* sent 0, but the job exists */
#define NOMAD_CAS_MISSING	3	/* sent an index, the job is gone */
int	 nomad_cas_error(const struct nomad_result *, uint64_t *sent,
	    uint64_t *stored);

/* The parse cache: SHA-256 of (HCL, variables) -> Nomad's answer. */
void	 nomad_parse_cache_flush(void);
size_t	 nomad_parse_cache_size(void);
uint64_t nomad_parse_cache_generation(void);
/* The parse cache's answer for a key (nomad_cache_key) goes. */
void	 nomad_cache_forget(const uint8_t *);

/* Between master/nomad*.c only. */
#define NOMAD_KEY_LEN		32	/* SHA-256 */
const char *nomad_conf_error(void);		/* NULL: calls can go */
const char *nomad_conf_namespace(void);		/* the first one */
void	 nomad_conf_clear(void);
void	 nomad_cache_key(const void *hcl, size_t, const void *vars, size_t,
	    uint8_t *key);
int	 nomad_cache_get(const uint8_t *key, uint32_t *status,
	    uint64_t *index, json_t **json, char **error);
void	 nomad_cache_put(const uint8_t *key, uint32_t status,
	    uint64_t index, json_t *json, const char *error, size_t size);

/*
 * The Meta of a dispatch of the parameterized job spec: each key it
 * declares that kv (key, value, ..., NULL) names, with its value.
 */
json_t	*nomad_dispatch_meta(const json_t *, const char *const *);

#ifdef NOPS_TEST_HOOKS
/*
 * POST /api/v1/debug/nomad: run one call from a JSON description and
 * answer with its result through answer(ctx, status, body) later.
 * Returns 0, or -1 with a reason in err (answer is then not called).
 */
int	 nomad_debug(json_t *req, void (*answer)(void *, int, json_t *),
	    void *ctx, char *err, size_t errlen);
#endif

#endif /* NOPS_NOMAD_H */
