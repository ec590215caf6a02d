/*
 * What detection's files share (master/engine_detect.c: the cycle; master/
 * engine_decide.c: the decisions).  Private to them.
 */
#ifndef NOPS_ENGINE_DETECT_H
#define NOPS_ENGINE_DETECT_H

#include <sys/types.h>
#include <sys/tree.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "engine.h"

struct repo_snap;

/* A request a person made, applied by the next cycle. */
struct drequest {
	char		*dr_ns;
	char		*dr_id;
	int		 dr_kind;	/* DREQ_* */
	int64_t		 dr_of;		/* retry: the deployment retried */
	char		*dr_who;
};
/* A job ID or namespace from a parse answer, at most (bytes of text). */
#define DETECT_NAME_MAX	200
/* Seconds after a cycle before the heap is trimmed. */
#define DETECT_TRIM_DELAY	1

#define DREQ_RETRY	1
#define DREQ_DEPLOY_NOW	2

/* A job file a focused cycle found changed (engine_focus.c). */
struct dfchanged {
	const struct repo_snap	*fc_snap;
	const struct repo_file	*fc_file;
};

struct dcycle {
	struct ejobs		 dc_jobs;
	struct efile_error	*dc_errs;
	size_t			 dc_nerrs;
	int			 dc_incomplete;	/* a file failed,
						   or no snapshot */
	char			*dc_outage;	/* a parse Nomad could not
						   answer */
	int			 dc_parse_pending;	/* not answered yet */
	struct dparse		**dc_parses;	/* the files, in order */
	size_t			 dc_nparses;
	size_t			 dc_memo_hits;	/* files read before */
	size_t			 dc_pnext;	/* the next to send */
	int			 dc_parse_inflight;
	struct ejob		**dc_queue;
	size_t			 dc_nqueue;
	size_t			 dc_qnext;
	int			 dc_inflight;
	struct eorphan		*dc_orphans;
	size_t			 dc_norphans;
	int			 dc_orphan_pending;
	int			 dc_orphans_bad;	/* store read failed */
	struct timespec		 dc_start;
	uint64_t		 dc_requests;
	const struct repo_snap	**dc_snaps;	/* referenced for the cycle */
	size_t			 dc_nsnaps;

	/* engine_survey.c */
	struct dsurvey		*dc_survey;
	int			 dc_classified;	/* the queue is complete */
	int			 dc_full;	/* every job planned */
	const char		*dc_full_why;
	uint64_t		 dc_planned;
	uint64_t		 dc_skipped;

	/* engine_focus.c: only the changed files' jobs (dc_focus) */
	int			 dc_focus;
	struct dfchanged	*dc_fchanged;	/* job files that changed */
	size_t			 dc_nfchanged;
	size_t			 dc_prev_queued;	/* the last cycle's
							   queue */
	uint64_t		 dc_decided;	/* managed jobs decided */
};


/*
 * What a job file's content gave, kept between cycles (engine_memo.c).
 * Valid until memo_sweep() at the end of the cycle that found it.
 */
#define DMEMO_KEYLEN	(2 * 64 + 1)	/* two SHA-256 in hex, a colon */
struct dmemo {
	RB_ENTRY(dmemo)	 dm_node;
	char		 dm_key[DMEMO_KEYLEN + 1];
	uint64_t	 dm_cycle;	/* the last cycle that read it */
	int		 dm_ok;		/* 1: a job; 0: Nomad's 400 */
	char		*dm_error;	/* the 400's error, as Nomad said it */
	char		*dm_ns;		/* "default" when the job says none */
	char		*dm_id;		/* NULL when the job has none */
	char		*dm_spec;	/* the job, compact JSON text */
	json_t		*dm_meta;	/* its Meta, or NULL */
	int		 dm_suspendable;
	struct evp_md_ctx_st *dm_canon;	/* after canonical text + "\n" */
};

void		 memo_begin(void);
void		 memo_sweep(void);
void		 memo_flush(void);
size_t		 memo_size(void);
struct dmemo	*memo_find(const struct repo_file *);
struct dmemo	*memo_put(const struct repo_file *, const json_t *,
		    const char *);
struct evp_md_ctx_st *memo_spec_hash(struct dmemo *);

/* The job's spec as a tree (loaded from its text if parked), or NULL. */
json_t	*detect_job_json(struct ejob *);
/* Keep the job's spec as text only, until detect_job_json() wants it again. */
void	 detect_job_park(struct ejob *);
void	 detect_asprintf(char **, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));
void	 decide_cycle(struct dcycle *);	/* engine_decide.c */
int	 decide_requests_pending(void);	/* engine_decide.c */
/*
 * engine_focus.c: is this cycle a focused one (at its start: 1 and
 * dc_focus set), and once classified, plan it so (1) or go on with the
 * survey (0).  focus_end() at the end of every cycle.
 */
int	 focus_begin(struct dcycle *);
int	 focus_classified(struct dcycle *);
void	 focus_end(struct dcycle *);
/* The last plan of old stands for this cycle's (engine_survey.c). */
void	 survey_reuse(struct dcycle *, struct ejob *, struct ejob *old);
void	 detect_orphans(struct dcycle *);	/* engine_detect.c */
void	 detect_plan(struct dcycle *);		/* engine_detect.c:
						   after the survey */

#endif /* NOPS_ENGINE_DETECT_H */
