/*
 * Operations (master/operation.c): one-time commands declared in git as
 * parameterized batch jobs with nops_role = "operation", run through the
 * generic action procedure as <job>.<operation>.  See nops-jobs(7).
 */
#ifndef NOPS_OPERATION_H
#define NOPS_OPERATION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct action_ctx;
struct action_def;
struct api_req;
struct api_resp;
struct api_route;
struct ejob;
struct store;

#define OPERATION_OUTPUT_MAX	(64 * 1024)	/* the last bytes kept */
#define OPERATION_RUNS_MAX	100		/* runs kept per job */
#define OPERATION_TIMEOUT	300		/* seconds a run may take */
#define OPERATION_PAYLOAD_MAX	16384		/* Nomad's dispatch limit */
#define OPERATION_SCHEMA_MAX	(64 * 1024)	/* an input schema's bytes */

/* An operation of a managed job as detection resolved it. */
struct op_frozen {
	char		*of_name;	/* <operation> of <job>.<operation> */
	char		*of_job_id;	/* the operation's job in git */
	char		*of_group;	/* the first word of the name */
	char		*of_spec;	/* canonical JSON; NULL when invalid */
	char		*of_spec_hash;
	char		*of_revision;	/* <job_id>-<8 hex>, as hooks */
	char		*of_schema;	/* JSON Schema text */
	char		*of_schema_path; /* repo:path of its file, or NULL */
	char		 of_schema_hash[64 + 1]; /* hex SHA-256 of the file */
	int		 of_sensitive;
	char		*of_description;
	char		*of_confirm;
	char		*of_error;	/* why it cannot run, or NULL */
};

/*
 * Detection: resolve operation name (a job ID of nops_operations) of the
 * managed job ej, whose job in git is op (NULL: none).  An invalid one
 * is kept with its error (it is refused as invalid_configuration).
 */
void	 operation_freeze(struct ejob *ej, const char *name, struct ejob *op);
void	 operation_frozen_free(struct ejob *);
/* The lines the spec hash of ej covers for its operations (malloc'd). */
char	*operation_hash_text(const struct ejob *);
/* Store ej's operations with deployment id (inside a transaction). */
int	 operation_store(struct store *, int64_t id, const struct ejob *);

/* At start: find again in Nomad the runs under way at the last stop. */
void	 operation_recover(void);

/* After each cycle: stop the revisions no deployment offers. */
void	 operation_cleanup(void);

/* A job gone from git and from Nomad: delete its run log. */
void	 operation_forget(const char *ns, const char *job);

/* Set the ACOND_OPERATIONS / ACOND_HAS_OPERATION conditions of ac. */
void	 operation_conditions(struct action_ctx *);
/* Append the operations of the job's deployed revision to list. */
void	 operation_list(struct action_ctx *, const struct action_def *,
	    json_t *list);
/* The procedure of the action table's operation row. */
void	 operation_action(struct action_ctx *, json_t *, struct api_resp *);

/*
 * The run log (operation_runs) of jobs' runs (namespace and job, instance
 * "") and of hosts' (namespace "", job the plan's repository, instance
 * the host: hosts_ops.c).
 */
/*
 * Alike on purpose: store_leftbehind_row (store_leftbehind.h),
 * store_dash_row (store_dash.h) and the store_hosts.h and
 * store_operation.h rows are structs of other fields.
 */
struct oprun_new {
	int64_t		 on_deployment;
	const char	*on_ns;
	const char	*on_job;
	const char	*on_instance;
	const char	*on_operation;
	const char	*on_actor;
	int		 on_sensitive;
	int		 on_keep;	/* runs of (ns, job, instance) kept */
	const char	*on_event;	/* its audit action, or NULL: none */
	const char	*on_target;	/* the audit target */
};
int64_t	 operation_run_create(struct store *, const struct oprun_new *);
int	 operation_run_end(struct store *, int64_t id, const char *state,
	    int exit_code, const char *output, const char *error,
	    int sensitive);
/* Run id of ns and job (NULL: any job) as the API gives it, or NULL. */
json_t	*operation_run_read(struct store *, int64_t id, const char *ns,
	    const char *job);
/* A limit (1 to max) a test-hooks build may lower with variable env. */
int	 operation_limit(const char *env, int max);
/* Answer GET ...operations/runs?limit=&cursor= (instance NULL: any). */
void	 operation_runs_answer(struct store *, struct api_req *,
	    struct api_resp *, const char *ns, const char *job,
	    const char *instance);

#endif /* NOPS_OPERATION_H */
