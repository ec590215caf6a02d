/*
 * Plan only what may have changed.  Before a detection cycle plans its
 * managed jobs, it asks Nomad for its leader, its version and one job
 * list per managed namespace.  A job whose spec hash (git's spec, its
 * hooks, a suspend) and live JobModifyIndex are what they were when it
 * was last planned gets no read and no plan: the plan would be the same,
 * because a plan's diff depends only on the spec sent and the live job,
 * and every change of the live job's spec (a register, a scale, a stop,
 * a revert) moves its JobModifyIndex.  The decision is then made from
 * the last plan: its drift, its diff, its JobModifyIndex and the live
 * group counts (what the spec to register keeps of the live job).
 *
 * Every job is planned (a full re-plan) on any doubt: the first cycle
 * after a start, the survey failed, Nomad's version or leader changed, a
 * job list's index or a job's JobModifyIndex went backwards (a restore),
 * something asked for it (survey_doubt), and every replan-interval.  A
 * job that failed to plan, or has no plan in memory, is always planned.
 * See nopsd.8, DETECTION.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "conf.h"
#include "nomad.h"
#include "engine.h"
#include "engine_detect.h"
#include "xmalloc.h"

struct dsurvey_ns {
	char		*sn_ns;
	int		 sn_ok;
	uint64_t	 sn_index;	/* X-Nomad-Index of the list */
	json_t		*sn_jobs;	/* ID -> stub */
};

struct dsurvey {
	struct dcycle		*sv_cycle;
	int			 sv_pending;
	int			 sv_failed;	/* an answer missing */
	int			 sv_unused;	/* asked early,
						   nothing to plan */
	char			*sv_version;
	char			*sv_leader;
	struct dsurvey_ns	*sv_ns;
	size_t			 sv_nns;
};

struct dsurvey_ask {
	struct dsurvey		*sa_sv;
	struct dsurvey_ns	*sa_ns;	/* a list; NULL: leader or version */
};

static void	 survey_decide(struct dsurvey *);

void
survey_doubt(const char *why)
{
	if (engine_env != NULL && engine_env->e_doubt == NULL)
		engine_env->e_doubt = why;
}

uint64_t
survey_ns_index(const char *ns)
{
	size_t	 i;

	if (engine_env == NULL)
		return 0;
	for (i = 0; i < engine_env->e_nns_index; i++)
		if (strcmp(engine_env->e_ns_index[i].ni_ns, ns) == 0)
			return engine_env->e_ns_index[i].ni_index;
	return 0;
}

/*
 * Both the answers and the jobs to plan are in: decide.  A survey asked
 * at the start of a cycle that then has no job to plan is not used, so
 * that the cycle is what it would have been without it.
 */
static void
survey_go(struct dsurvey *sv)
{
	struct dcycle	*dc = sv->sv_cycle;

	if (sv->sv_pending > 0 || !dc->dc_classified)
		return;
	if (dc->dc_nqueue == 0) {
		sv->sv_unused = 1;
		decide_cycle(dc);
	} else
		survey_decide(sv);
}

static void
survey_answered(struct dsurvey *sv)
{
	if (--sv->sv_pending == 0)
		survey_go(sv);
}

static void
survey_leader(struct nomad_result *res, void *arg)
{
	struct dsurvey_ask	*sa = arg;
	struct dsurvey		*sv = sa->sa_sv;

	sv->sv_cycle->dc_requests++;
	if (nomad_ok(res) && json_is_string(res->nr_json))
		sv->sv_leader = xstrdup(json_string_value(res->nr_json));
	else
		sv->sv_failed = 1;
	free(sa);
	survey_answered(sv);
}

/*
 * The version the agent reports: its member's build tag (a server), or
 * its configuration's (a client forwarding to the servers).  A token
 * without agent:read gets 403: the version is then unknown and taken as
 * unchanged; the leader and the safety interval still apply (nopsd.8).
 * Alike on purpose: survey_leader above opens the same way (count the
 * request, read, free the ask, answered); it reads another field.
 */
static void
survey_version(struct nomad_result *res, void *arg)
{
	struct dsurvey_ask	*sa = arg;
	struct dsurvey		*sv = sa->sa_sv;
	const char		*v;
	static int		 warned;

	sv->sv_cycle->dc_requests++;
	if (nomad_ok(res) && json_is_object(res->nr_json)) {
		v = json_string_value(json_object_get(json_object_get(
		    json_object_get(res->nr_json, "member"), "Tags"),
		    "build"));
		if (v == NULL)
			v = json_string_value(json_object_get(json_object_get(
			    json_object_get(res->nr_json, "config"),
			    "Version"), "Version"));
		sv->sv_version = xstrdup(v != NULL ? v : "unknown");
	} else if (res->nr_status == 403) {
		if (!warned++)
			log_warnx("detection: the Nomad token may not read "
			    "/v1/agent/self (agent:read): a Nomad upgrade is "
			    "seen only through a new leader or the "
			    "replan-interval");
		sv->sv_version = xstrdup("unknown (403)");
	} else
		sv->sv_failed = 1;
	free(sa);
	survey_answered(sv);
}

static void
survey_list(struct nomad_result *res, void *arg)
{
	struct dsurvey_ask	*sa = arg;
	struct dsurvey		*sv = sa->sa_sv;
	struct dsurvey_ns	*sn = sa->sa_ns;
	json_t			*stub;
	const char		*id;
	size_t			 i;

	sv->sv_cycle->dc_requests++;
	if (nomad_ok(res) && json_is_array(res->nr_json) &&
	    res->nr_index > 0) {
		sn->sn_ok = 1;
		sn->sn_index = res->nr_index;
		if ((sn->sn_jobs = json_object()) == NULL)
			fatalx("json_object");
		json_array_foreach(res->nr_json, i, stub) {
			id = json_string_value(json_object_get(stub, "ID"));
			if (id == NULL || !json_is_integer(json_object_get(stub,
			    "JobModifyIndex"))) {
				/* Not a list of jobs: trust none of it. */
				sn->sn_ok = 0;
				break;
			}
			json_object_set(sn->sn_jobs, id, stub);
		}
	}
	if (!sn->sn_ok)
		sv->sv_failed = 1;
	free(sa);
	survey_answered(sv);
}

static void
survey_ask(struct dsurvey *sv, struct dsurvey_ns *sn, int what)
{
	struct dsurvey_ask	*sa;

	if ((sa = calloc(1, sizeof(*sa))) == NULL)
		fatal("calloc");
	sa->sa_sv = sv;
	sa->sa_ns = sn;
	sv->sv_pending++;
	if (sn != NULL)
		nomad_jobs_list(sn->sn_ns, NULL, survey_list, sa);
	else if (what == 0)
		nomad_status_leader(survey_leader, sa);
	else
		nomad_agent_self(survey_version, sa);
}

void
survey_start(struct dcycle *dc)
{
	const struct nops_conf	*cf = engine_conf();
	struct dsurvey		*sv;
	struct conf_str		*cs;
	size_t			 i;

	if ((sv = calloc(1, sizeof(*sv))) == NULL)
		fatal("calloc");
	sv->sv_cycle = dc;
	dc->dc_survey = sv;
	TAILQ_FOREACH(cs, &cf->nomad.namespaces, entry)
		sv->sv_nns++;
	if ((sv->sv_ns = calloc(sv->sv_nns + 1, sizeof(*sv->sv_ns))) == NULL)
		fatal("calloc");
	i = 0;
	TAILQ_FOREACH(cs, &cf->nomad.namespaces, entry)
		sv->sv_ns[i++].sn_ns = xstrdup(cs->str);
	/* Counted before any is sent; answers come later, never inside. */
	sv->sv_pending = 1;
	survey_ask(sv, NULL, 0);
	survey_ask(sv, NULL, 1);
	for (i = 0; i < sv->sv_nns; i++)
		survey_ask(sv, &sv->sv_ns[i], 0);
	survey_answered(sv);
}

/*
 * The cycle's jobs are classified and queued.  The survey was asked at
 * the start of the cycle when the last cycle had jobs to plan (its
 * answers come while the files are read), else it is asked now, when
 * there is a job to plan.
 */
void
survey_classified(struct dcycle *dc)
{
	dc->dc_classified = 1;
	/* A focused cycle plans its files' jobs without the survey. */
	if (dc->dc_focus && focus_classified(dc))
		return;
	if (dc->dc_survey != NULL)
		survey_go(dc->dc_survey);
	else if (dc->dc_nqueue == 0)
		decide_cycle(dc);
	else
		survey_start(dc);
}

static struct dsurvey_ns *
survey_ns(struct dsurvey *sv, const char *ns)
{
	size_t	 i;

	if (sv == NULL)
		return NULL;
	for (i = 0; i < sv->sv_nns; i++)
		if (strcmp(sv->sv_ns[i].sn_ns, ns) == 0)
			return &sv->sv_ns[i];
	return NULL;
}

json_t *
survey_stub(struct dcycle *dc, const char *ns, const char *id, int *listed)
{
	struct dsurvey_ns	*sn = NULL;

	if (dc->dc_survey != NULL && !dc->dc_survey->sv_unused)
		sn = survey_ns(dc->dc_survey, ns);
	*listed = sn != NULL && sn->sn_ok;
	return *listed ? json_object_get(sn->sn_jobs, id) : NULL;
}

/* Why every job must be planned this cycle, or NULL. */
static const char *
survey_full(struct dsurvey *sv)
{
	struct engine		*e = engine_env;
	struct dcycle		*dc = sv->sv_cycle;
	struct dsurvey_ns	*sn;
	struct ejob		*old;
	json_t			*stub;
	const char		*why;
	uint64_t		 jmi;
	size_t			 i;

	if (engine_no_skip())
		return "test hook NOPS_TEST_NO_SKIP";
	if (sv->sv_failed)
		return "Nomad's leader, version or job lists did not answer";
	if (e->e_nomad_version == NULL)
		return "no plans in memory (start or an incomplete cycle)";
	if ((why = e->e_doubt) != NULL) {
		e->e_doubt = NULL;
		return why;
	}
	if (strcmp(e->e_nomad_version, sv->sv_version) != 0)
		return "Nomad's version changed";
	if (strcmp(e->e_nomad_leader, sv->sv_leader) != 0)
		return "Nomad's leader changed";
	if (time(NULL) - e->e_full_at >= engine_conf()->replan_interval)
		return "replan-interval";
	for (i = 0; i < sv->sv_nns; i++)
		if (sv->sv_ns[i].sn_index < survey_ns_index(
		    sv->sv_ns[i].sn_ns))
			return "a job list's index went backwards";
	for (i = 0; i < dc->dc_nqueue; i++) {
		old = engine_job(dc->dc_queue[i]->ej_ns,
		    dc->dc_queue[i]->ej_id);
		if (old == NULL || !old->ej_live_exists ||
		    old->ej_live_index == ENGINE_INDEX_UNSURE ||
		    (sn = survey_ns(sv, old->ej_ns)) == NULL ||
		    (stub = json_object_get(sn->sn_jobs, old->ej_id)) == NULL)
			continue;
		jmi = (uint64_t)json_integer_value(json_object_get(stub,
		    "JobModifyIndex"));
		if (jmi < old->ej_live_index)
			return "a job's JobModifyIndex went backwards";
	}
	return NULL;
}

/*
 * Is the live job what this job's last plan was made against?  *stubp
 * is its entry in the job list, or NULL.
 */
static int
survey_live_same(struct dsurvey *sv, struct ejob *ej, struct ejob *old,
    json_t **stubp)
{
	struct dsurvey_ns	*sn;
	json_t			*stub;

	*stubp = NULL;
	if (old == NULL || !old->ej_planned ||
	    old->ej_plan_error != NULL || old->ej_unparsed ||
	    old->ej_live_index == ENGINE_INDEX_UNSURE ||
	    (sn = survey_ns(sv, ej->ej_ns)) == NULL || !sn->sn_ok)
		return 0;
	*stubp = stub = json_object_get(sn->sn_jobs, ej->ej_id);
	if (stub == NULL)
		return !old->ej_live_exists;
	return old->ej_live_exists && (uint64_t)json_integer_value(
	    json_object_get(stub, "JobModifyIndex")) == old->ej_live_index;
}

/* Can this job's last plan stand for a new one? */
static int
survey_same(struct dsurvey *sv, struct ejob *ej, struct ejob *old)
{
	json_t	*stub;

	return old != NULL && strcmp(old->ej_hash, ej->ej_hash) == 0 &&
	    survey_live_same(sv, ej, old, &stub);
}

/*
 * A job whose spec changed in git but whose live job did not move since
 * its last plan is planned without reading the live job again: what a
 * plan and a decision take of it, the count of each group and whether it
 * is stopped, are the last plan's groups and the job list's Stop (a stop,
 * like a scale, moves JobModifyIndex).
 */
static void
survey_live_known(struct dsurvey *sv, struct ejob *ej, struct ejob *old)
{
	json_t	*stub, *stop;

	if (!survey_live_same(sv, ej, old, &stub))
		return;
	if (stub == NULL) {
		ej->ej_noread = 1;		/* not live: a read says 404 */
		ej->ej_live = NULL;
		ej->ej_read_index = 0;
		return;
	}
	stop = json_object_get(stub, "Stop");
	if (!json_is_array(old->ej_live_groups) || !json_is_boolean(stop))
		return;
	if ((ej->ej_live = json_pack("{s:O,s:O}", "TaskGroups",
	    old->ej_live_groups, "Stop", stop)) == NULL)
		fatalx("json_pack");
	ej->ej_noread = 1;
	ej->ej_read_index = old->ej_live_index;
}

/* The last plan, as it was (a skipped job, or one a focused cycle keeps). */
void
survey_reuse(struct dcycle *dc, struct ejob *ej, struct ejob *old)
{
	ej->ej_planned = 1;
	ej->ej_skipped = 1;
	ej->ej_drift = old->ej_drift;
	ej->ej_modify_index = old->ej_modify_index;
	ej->ej_live_exists = old->ej_live_exists;
	ej->ej_live_index = old->ej_live_index;
	ej->ej_diff = xstrdup(old->ej_diff);
	ej->ej_live_groups = json_incref(old->ej_live_groups);
	if (!ej->ej_drift) {
		/* No deployment can come of it: no spec. */
		json_decref(ej->ej_job);
		ej->ej_job = NULL;
		free(ej->ej_spec);
		ej->ej_spec = NULL;
	} else if (old->ej_live_exists && (ej->ej_live = json_pack("{s:O}",
	    "TaskGroups", old->ej_live_groups)) == NULL)
		/* The live job as decisions read it. */
		fatalx("json_pack");
	dc->dc_skipped++;
}

static void
survey_decide(struct dsurvey *sv)
{
	struct dcycle	*dc = sv->sv_cycle;
	struct ejob	*ej, *old;
	size_t		 i, n;

	dc->dc_full_why = survey_full(sv);
	dc->dc_full = dc->dc_full_why != NULL;
	if (!dc->dc_full) {
		for (i = n = 0; i < dc->dc_nqueue; i++) {
			ej = dc->dc_queue[i];
			old = engine_job(ej->ej_ns, ej->ej_id);
			if (!survey_same(sv, ej, old)) {
				survey_live_known(sv, ej, old);
				dc->dc_queue[n++] = ej;
				continue;
			}
			survey_reuse(dc, ej, old);
		}
		dc->dc_nqueue = n;
	}
	detect_plan(dc);
}

/* The cycle ended: what its plans were made against is remembered. */
void
survey_finish(struct dcycle *dc)
{
	struct engine	*e = engine_env;
	struct dsurvey	*sv = dc->dc_survey;
	size_t		 i;

	if (sv == NULL || sv->sv_unused)
		return;
	free(e->e_nomad_version);
	free(e->e_nomad_leader);
	e->e_nomad_version = e->e_nomad_leader = NULL;
	for (i = 0; i < e->e_nns_index; i++)
		free(e->e_ns_index[i].ni_ns);
	free(e->e_ns_index);
	e->e_ns_index = NULL;
	e->e_nns_index = 0;
	/*
	 * A survey with a missing answer, or a cycle that could not decide
	 * (a parse outage, a file that does not parse): the next cycle
	 * plans every job.
	 */
	if (sv->sv_failed || dc->dc_outage != NULL)
		return;
	e->e_nomad_version = sv->sv_version;
	e->e_nomad_leader = sv->sv_leader;
	sv->sv_version = sv->sv_leader = NULL;
	if ((e->e_ns_index = calloc(sv->sv_nns + 1,
	    sizeof(*e->e_ns_index))) == NULL)
		fatal("calloc");
	for (i = 0; i < sv->sv_nns; i++) {
		e->e_ns_index[i].ni_ns = xstrdup(sv->sv_ns[i].sn_ns);
		e->e_ns_index[i].ni_index = sv->sv_ns[i].sn_index;
	}
	e->e_nns_index = sv->sv_nns;
	if (dc->dc_full)
		e->e_full_at = time(NULL);
}

/*
 * Alike on purpose: repo_snap_free (repo.c) and auth_users_free (auth.c)
 * free an array and its elements' members the same way; other members.
 */
void
survey_free(struct dcycle *dc)
{
	struct dsurvey	*sv = dc->dc_survey;
	size_t		 i;

	if (sv == NULL)
		return;
	for (i = 0; i < sv->sv_nns; i++) {
		free(sv->sv_ns[i].sn_ns);
		json_decref(sv->sv_ns[i].sn_jobs);
	}
	free(sv->sv_ns);
	free(sv->sv_version);
	free(sv->sv_leader);
	free(sv);
	dc->dc_survey = NULL;
}
