/*
 * The engine: detection (what drifts from git, which deployments to make)
 * and apply (carry each deployment through its steps).  Runs in the master;
 * talks to Nomad through master/nomad.c and reads git through master/repo.c.
 * Drift, hooks and job states live here, in memory, rebuilt every cycle;
 * only deployments go to the store (master/deploy.c).
 */
#ifndef NOPS_ENGINE_H
#define NOPS_ENGINE_H

#include <sys/types.h>
#include <sys/tree.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "meta.h"
#include "deploy.h"

struct nops_conf;
struct store;

#define ENGINE_HASHLEN		64	/* hex SHA-256 */
#define ENGINE_INDEX_UNSURE	UINT64_MAX	/* never equal to Nomad's */
#define ENGINE_PLAN_INFLIGHT	32	/* Nomad requests a cycle keeps going */

struct repo_snap;
struct repo_file;
struct dmemo;

/* A job file's job, as the last detection cycle saw it. */
struct ejob {
	RB_ENTRY(ejob)	 ej_node;
	char		*ej_ns;
	char		*ej_id;
	char		*ej_repo;
	char		*ej_path;
	char		*ej_commit;
	/*
	 * The parsed job (the spec), during a cycle only: a tree while in
	 * use (detect_job_json()), compact text between uses
	 * (detect_job_park()); a tree costs ten times its text.  Dropped
	 * once the plan shows no drift.
	 */
	json_t		*ej_job;
	char		*ej_spec;
	/* Its snapshot (a reference) and file, for the git context. */
	const struct repo_snap *ej_snap;
	const struct repo_file *ej_file;
	/* What its file's content gave (engine_memo.c), this cycle only. */
	struct dmemo	*ej_memo;
	int		 ej_notify_completed;	/* meta nops_notify_completed */
	struct job_meta	 ej_meta;
	int		 ej_in_ns;	/* in a managed namespace */
	int		 ej_suspendable;	/* service or system: suspend */
	char		 ej_hash[ENGINE_HASHLEN + 1];	/* spec (+ hooks) */
	char		*ej_error;	/* why nothing is deployed, or NULL */
	/*
	 * Its file does not parse now (1), or Nomad could not parse it
	 * (2, an outage): the job as an earlier cycle knew it, kept listed.
	 */
	int		 ej_unparsed;
	int		 ej_prev_role;	/* its role when it last parsed */

	/* managed jobs: hooks resolved and frozen */
	struct deploy_hook *ej_hooks;	/* at most DEPLOY_HOOKS_MAX */
	size_t		 ej_nhooks;
	char		*ej_hook_error;	/* a hook missing or invalid */

	/* managed jobs: operations resolved and frozen (operation.c) */
	struct op_frozen *ej_ops;
	size_t		 ej_nops;

	/* managed jobs: this cycle's answers from Nomad */
	json_t		*ej_live;	/* the live job, kept while it drifts */
	int		 ej_planned;	/* the plan answered */
	char		*ej_plan_error;
	int		 ej_drift;
	char		*ej_diff;	/* redacted, compact JSON text */
	uint64_t	 ej_modify_index;	/* JobModifyIndex of the plan */
	/*
	 * What the plan was made against, kept for the next cycle: whether
	 * the job was live, and its JobModifyIndex (ENGINE_INDEX_UNSURE when
	 * it moved between the read and the plan).  A cycle that finds the
	 * same index, spec and hooks needs no new plan (engine_survey.c).
	 */
	int		 ej_live_exists;
	uint64_t	 ej_live_index;
	uint64_t	 ej_read_index;	/* the read's JobModifyIndex (cycle) */
	int		 ej_noread;	/* this cycle: live job known,
					   no read */
	json_t		*ej_live_groups;	/* [{Name, Count}] of the
						   live job */
	int		 ej_skipped;	/* this cycle: planned from memory */
	int		 ej_focus;	/* this cycle: planned and decided */
	int		 ej_wrote;	/* its decision wrote to the store */

	/* the outcome, for the API */
	const char	*ej_state;	/* in_sync drift pending deploying
					   ... */
	int64_t		 ej_deployment;	/* the active one, or 0 */
	char		*ej_note;	/* why it is in that state */
};
RB_HEAD(ejobs, ejob);

/* A file that did not parse. */
struct efile_error {
	char		*fe_repo;
	char		*fe_path;
	char		*fe_error;
};

/* A job nops deployed that is gone from git but still runs. */
struct eorphan {
	char		*eo_ns;
	char		*eo_id;
	int64_t		 eo_last_deployment;
};

struct engine {
	struct ejobs	 e_jobs;	/* the last complete cycle's */
	struct efile_error *e_file_errors;
	size_t		 e_nfile_errors;
	struct eorphan	*e_orphans;
	size_t		 e_norphans;
	int		 e_orphans_known;	/* 0 while files fail to
						   parse */
	char		*e_parse_outage;	/* Nomad could not parse,
						   or NULL */

	int		 e_detecting;
	int		 e_rerun;	/* another cycle asked meanwhile */
	uint64_t	 e_cycles;
	time_t		 e_last_detect;	/* end of the last complete cycle */
	time_t		 e_last_apply;
	double		 e_last_detect_ms;
	uint64_t	 e_last_requests;
	uint64_t	 e_last_planned;	/* jobs read and planned */
	uint64_t	 e_last_skipped;	/* jobs planned from memory */
	int		 e_last_full;	/* the last cycle planned every job */
	const char	*e_last_full_why;	/* why (static text) */
	size_t		 e_last_queued;	/* managed jobs it had to decide */
	size_t		 e_last_files_reused;	/* files not parsed again */
	/* The same, summed over every cycle (/metrics). */
	uint64_t	 e_total_requests;
	uint64_t	 e_total_planned;
	uint64_t	 e_total_skipped;
	uint64_t	 e_total_full;	/* cycles that planned every job */

	/* engine_survey.c: what the plans in memory were made against */
	char		*e_nomad_version;	/* NULL: plan every job */
	char		*e_nomad_leader;
	struct ens_index *e_ns_index;	/* each namespace's job list index */
	size_t		 e_nns_index;
	time_t		 e_full_at;	/* end of the last full re-plan */
	const char	*e_doubt;	/* the next cycle plans every job */
	int		 e_recovered;	/* the first apply cycle has run */

	/* engine_focus.c: a cycle of the changed files' jobs only */
	int		 e_asked_other;	/* a trigger besides a new snapshot */
	const struct repo_snap **e_snaps;	/* the last cycle read these */
	size_t		 e_nsnaps;
	int		 e_last_clean;	/* it decided every job, no error */
	int		 e_decide_failed;	/* a decision failed
						   this cycle */
	uint64_t	 e_decide_gen;	/* store_decide_gen() after it */
	int		 e_last_focused;	/* the last cycle was one */
	uint64_t	 e_last_decided;	/* managed jobs it decided */
	uint64_t	 e_total_focused;
};

extern struct engine	*engine_env;

/* engine.c: lifecycle and triggers */
void	 engine_init(struct store *, const struct nops_conf *);
void	 engine_reconfigure(const struct nops_conf *);
void	 engine_shutdown(void);
void	 engine_detect(const char *why);	/* start a cycle
						   (or queue one) */
/* The same for a new snapshot: the cycle may be a focused one. */
void	 engine_detect_snapshot(const char *why);
/* After a store error: a cycle in ENGINE_STORE_RETRY seconds. */
#define ENGINE_STORE_RETRY	5
void	 engine_detect_retry(const char *why);
void	 engine_apply_kick(void);		/* advance deployments soon */
struct ejob *engine_job(const char *ns, const char *id);
int	 engine_ns_managed(const char *ns);
const struct nops_conf *engine_conf(void);
struct store *engine_store(void);

/* engine_detect.c */
void	 detect_start(void);
void	 detect_job_free(struct ejob *);
int	 detect_job_cmp(struct ejob *, struct ejob *);
RB_PROTOTYPE(ejobs, ejob, ej_node, detect_job_cmp);
struct ejob	*detect_job_find(struct ejobs *, const char *ns,
		    const char *id);

/* engine_survey.c: plan only what may have changed */
struct ens_index {
	char		*ni_ns;
	uint64_t	 ni_index;	/* X-Nomad-Index of its job list */
};
struct dcycle;
void	 survey_start(struct dcycle *);	/* ask Nomad */
void	 survey_classified(struct dcycle *);	/* then detect_plan() */
void	 survey_finish(struct dcycle *);	/* the cycle ended */
void	 survey_free(struct dcycle *);
/* The live job as this cycle's list has it (borrowed), or NULL. */
json_t	*survey_stub(struct dcycle *, const char *ns, const char *id,
	    int *listed);
/* The next cycle plans every job (an index went backwards, ...). */
void	 survey_doubt(const char *why);
/* The job list index the last cycle saw in a namespace (0: none). */
uint64_t survey_ns_index(const char *ns);

/* engine_watch.c: blocking queries on each managed namespace's lists */
void	 watch_configure(void);
void	 watch_shutdown(void);
/* Every managed namespace's job list is watched and answering. */
int	 watch_current(void);

/* The spec to register: git's, with live counts where a group scales. */
json_t	*detect_register_spec(const json_t *spec, const json_t *live);

/* Does a plan's Diff change anything (not just a marked-up object)? */
int	 detect_diff_changed(const json_t *);

/* Requests from people, applied by the next detection cycle. */
void	 decide_request_retry(const char *ns, const char *id, int64_t of);
void	 decide_request_deploy_now(const char *ns, const char *id,
	    const char *who);

/* engine_hooks.c: stop hook revisions only ended deployments used */
void	 hooks_cleanup(void);

/* engine_apply.c */
void	 apply_cycle(void);
int	 apply_busy(int64_t id);
/* Promote the canaries of a deployment waiting for it (API action). */
int	 apply_promote(int64_t id, const char *who, char *err, size_t errlen);
/*
 * diffview.c: a plan diff as the API shows it (a new reference), with
 * what the job file (source, or NULL) does not set marked Default.
 */
json_t	*diffview(const json_t *, const char *source);
/* The same of a diff kept as text (NULL, or bad JSON: null). */
json_t	*engine_diffview(const char *, const char *source);
/* The health progress last seen of a deployment (borrowed), or NULL. */
json_t	*health_progress(int64_t id);

/* engine.c: holds (a person's pause) */
int	 engine_hold_pause(const char *ns, const char *id, const char *who,
	    const char *reason);
int	 engine_hold_resume(const char *ns, const char *id, const char *who);

#ifdef NOPS_TEST_HOOKS
/* Test builds: SIGKILL the master at a named point (NOPS_CRASH_AT). */
void	 engine_crashpoint(const char *point);
#else
#define engine_crashpoint(p)	do { } while (0)
#endif

/* Helpers shared by the engine's files. */
int	 engine_no_skip(void);		/* the test hook NOPS_TEST_NO_SKIP */
void	 engine_sha256_hex(const void *, size_t, char out[ENGINE_HASHLEN + 1]);
char	*engine_json_canonical(const json_t *);	/* sorted, compact */

#endif /* NOPS_ENGINE_H */
