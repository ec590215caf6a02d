/*
 * The nops_* meta keys of a job file: what role the job plays for nops and
 * how it is deployed.  Read from the job Nomad parsed out of git, never
 * from a live job.  See nops-jobs(7).
 */
#ifndef NOPS_META_H
#define NOPS_META_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

enum meta_role {
	META_IGNORED = 0,	/* neither managed nor a hook */
	META_MANAGED,		/* nops_managed = "true" */
	META_HOOK,		/* nops_role = "hook" */
	META_OPERATION,		/* nops_role = "operation" */
};

enum meta_policy {
	POLICY_NONE = 0,	/* show drift, deploy nothing (default) */
	POLICY_APPROVAL,	/* a person approves each deployment */
	POLICY_AUTO,		/* deploy on its own */
};

#define META_MAX_HOOKS		16
#define META_MAX_OPERATIONS	32
#define META_SCHEMA_PATH_MAX	255	/* nops_input_schema_file */
#define META_MAX_ISSUES		16
#define META_HOOK_TIMEOUT	300		/* seconds, by default */
#define META_MAX_TIMEOUT	(24 * 3600)
#define META_MAX_WINDOW		(31 * 24 * 3600)

#define META_WARN		1
#define META_ERROR		2

struct meta_issue {
	int		 mi_severity;	/* META_WARN | META_ERROR */
	char		 mi_key[64];
	char		 mi_msg[192];
};

/* A cron expression as bit sets; see cron_parse(). */
struct cron {
	uint64_t	 cr_min;	/* bits 0..59 */
	uint32_t	 cr_hour;	/* bits 0..23 */
	uint32_t	 cr_dom;	/* bits 1..31 */
	uint16_t	 cr_mon;	/* bits 1..12 */
	uint8_t		 cr_dow;	/* bits 0..6, Sunday 0 */
	int		 cr_dom_star;	/* day of month was "*" */
	int		 cr_dow_star;
};

struct job_meta {
	enum meta_role	 jm_role;
	enum meta_policy jm_policy;	/* POLICY_NONE when an error was
					   found */
	char		*jm_pre[META_MAX_HOOKS];
	size_t		 jm_npre;
	char		*jm_post[META_MAX_HOOKS];
	size_t		 jm_npost;
	int		 jm_pre_timeout;	/* seconds */
	int		 jm_post_timeout;
	int		 jm_has_window;
	struct cron	 jm_window;
	int		 jm_window_duration;	/* seconds */
	/* a managed job: its operations (nops_operations), job IDs */
	char		**jm_ops;
	size_t		 jm_nops;
	/* an operation: the job it serves, its input, whether sensitive */
	char		*jm_op_of;
	char		*jm_input_schema;	/* JSON text, or NULL */
	/* or a file: a path relative to the job file's directory */
	char		*jm_input_schema_file;
	int		 jm_sensitive;
	char		*jm_description;	/* or NULL */
	char		*jm_confirm;		/* or NULL */
	struct meta_issue *jm_issues;	/* META_MAX_ISSUES; NULL: none */
	size_t		 jm_nissues;
	int		 jm_errors;		/* number of META_ERROR
						   issues */
};

/*
 * meta_read: read the Meta object of a parsed job (may be NULL or JSON
 * null; not const: jansson iterates an object through a plain pointer).
 * Never fails: problems become issues, and any error leaves the
 * job with policy none, as nops-jobs(7) says.
 */
void		 meta_read(json_t *meta, struct job_meta *);
void		 meta_free(struct job_meta *);
const char	*meta_policy_str(enum meta_policy);
const char	*meta_role_str(enum meta_role);

/* meta_window_open: is the sync window open at now (UTC)?  1 if no window. */
int		 meta_window_open(const struct job_meta *, time_t now);

/* A Go duration ("90s", "1h30m", "1.5h", "250ms"); -1 if malformed. */
int64_t		 go_duration_ns(const char *);

/*
 * cron_parse: 5 fields (minute hour day-of-month month day-of-week, with
 * *, lists, ranges, steps and names JAN..DEC / SUN..SAT) or a shorthand
 * (@yearly @annually @monthly @weekly @daily @midnight @hourly).  Returns 0,
 * or -1 with a message in err.
 */
int		 cron_parse(const char *, struct cron *, char *err, size_t);
int		 cron_match(const struct cron *, time_t);

#endif /* NOPS_META_H */
