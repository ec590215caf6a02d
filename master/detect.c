/*
 * Detection: read every job file of every repository's last good
 * snapshot, have Nomad parse it, classify jobs by their meta, plan each
 * managed job against the cluster, and decide per job: supersede or
 * complete its waiting deployment, create a new one, or nothing.
 *
 * A cycle is asynchronous (Nomad answers later) and builds a new job
 * table while the API keeps serving the last complete one; the two are
 * swapped when the cycle ends.  Cycles never overlap: a trigger during a
 * cycle queues exactly one more.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sqlite3.h>

#include "log.h"
#include "nopsd.h"
#include "master.h"
#include "store.h"
#include "repo.h"
#include "nomad.h"
#include "meta.h"
#include "redact.h"
#include "deploy.h"
#include "engine.h"

RB_GENERATE(ejobs, ejob, ej_node, ejob_cmp);

/* A request a person made, applied by the next cycle. */
struct drequest {
	char		*dr_ns;
	char		*dr_id;
	int		 dr_kind;	/* DREQ_* */
	int64_t		 dr_of;		/* retry: the deployment retried */
	char		*dr_who;
};
#define DREQ_RETRY	1
#define DREQ_DEPLOY_NOW	2

struct dcycle {
	struct ejobs		 dc_jobs;
	struct efile_error	*dc_errs;
	size_t			 dc_nerrs;
	int			 dc_incomplete;	/* a file failed, or no snapshot */
	int			 dc_parse_pending;
	struct ejob		**dc_queue;
	size_t			 dc_nqueue;
	size_t			 dc_qnext;
	int			 dc_inflight;
	struct eorphan		*dc_orphans;
	size_t			 dc_norphans;
	int			 dc_orphan_pending;
	struct timespec		 dc_start;
	uint64_t		 dc_requests;
	const struct repo_snap	**dc_snaps;	/* referenced for the cycle */
	size_t			 dc_nsnaps;
};

struct dparse {
	struct dcycle		*dp_cycle;
	const struct repo_snap	*dp_snap;
	const struct repo_file	*dp_file;
};

static struct dcycle	*cycle;
static struct drequest	*drequests;
static size_t		 ndrequests;

static void	 detect_classify(struct dcycle *);
static void	 detect_pump(struct dcycle *);
static void	 detect_decide(struct dcycle *);
static void	 detect_orphans(struct dcycle *);
static void	 detect_finish(struct dcycle *);

int
ejob_cmp(struct ejob *a, struct ejob *b)
{
	int	 c;

	if ((c = strcmp(a->ej_ns, b->ej_ns)) != 0)
		return c;
	return strcmp(a->ej_id, b->ej_id);
}

static char *
xstrdup(const char *s)
{
	char	*d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		fatal("strdup");
	return d;
}

static void
xasprintf(char **out, const char *fmt, ...)
	__attribute__((__format__(printf, 2, 3)));

static void
xasprintf(char **out, const char *fmt, ...)
{
	va_list	 ap;

	free(*out);
	va_start(ap, fmt);
	if (vasprintf(out, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
}

void
ejob_free(struct ejob *ej)
{
	size_t	 i;

	free(ej->ej_ns);
	free(ej->ej_id);
	free(ej->ej_repo);
	free(ej->ej_path);
	free(ej->ej_commit);
	json_decref(ej->ej_job);
	meta_free(&ej->ej_meta);
	free(ej->ej_error);
	for (i = 0; i < ej->ej_nhooks; i++) {
		free(ej->ej_hooks[i].dh_phase);
		free(ej->ej_hooks[i].dh_hook_id);
		free(ej->ej_hooks[i].dh_spec);
		free(ej->ej_hooks[i].dh_spec_hash);
		free(ej->ej_hooks[i].dh_revision);
	}
	free(ej->ej_hook_error);
	json_decref(ej->ej_live);
	free(ej->ej_plan_error);
	json_decref(ej->ej_diff);
	free(ej->ej_note);
	free(ej);
}

static void
ejobs_free(struct ejobs *jobs)
{
	struct ejob	*ej, *next;

	RB_FOREACH_SAFE(ej, ejobs, jobs, next) {
		RB_REMOVE(ejobs, jobs, ej);
		ejob_free(ej);
	}
}

static void
file_errors_free(struct efile_error *e, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(e[i].fe_repo);
		free(e[i].fe_path);
		free(e[i].fe_error);
	}
	free(e);
}

static void
orphans_free(struct eorphan *o, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(o[i].eo_ns);
		free(o[i].eo_id);
	}
	free(o);
}

static void
drequest_add(const char *ns, const char *id, int kind, int64_t of,
    const char *who)
{
	struct drequest	*r;

	drequests = reallocarray(drequests, ndrequests + 1,
	    sizeof(*drequests));
	if (drequests == NULL)
		fatal("reallocarray");
	r = &drequests[ndrequests++];
	r->dr_ns = xstrdup(ns);
	r->dr_id = xstrdup(id);
	r->dr_kind = kind;
	r->dr_of = of;
	r->dr_who = xstrdup(who);
}

void
detect_request_retry(const char *ns, const char *id, int64_t of)
{
	drequest_add(ns, id, DREQ_RETRY, of, "system");
	engine_detect("retry");
}

void
detect_request_deploy_now(const char *ns, const char *id, const char *who)
{
	drequest_add(ns, id, DREQ_DEPLOY_NOW, 0, who);
	engine_detect("deploy-now");
}

/* Take (and remove) a pending request of kind for the job. */
static int
drequest_take(const char *ns, const char *id, int kind, int64_t *of,
    char **who)
{
	size_t	 i;

	for (i = 0; i < ndrequests; i++) {
		struct drequest *r = &drequests[i];

		if (r->dr_kind != kind || strcmp(r->dr_ns, ns) != 0 ||
		    strcmp(r->dr_id, id) != 0)
			continue;
		if (of != NULL)
			*of = r->dr_of;
		if (who != NULL)
			*who = r->dr_who;
		else
			free(r->dr_who);
		free(r->dr_ns);
		free(r->dr_id);
		drequests[i] = drequests[--ndrequests];
		return 1;
	}
	return 0;
}

static void
cycle_error(struct dcycle *dc, const char *repo, const char *path,
    const char *err)
{
	struct efile_error	*fe;

	dc->dc_errs = reallocarray(dc->dc_errs, dc->dc_nerrs + 1,
	    sizeof(*dc->dc_errs));
	if (dc->dc_errs == NULL)
		fatal("reallocarray");
	fe = &dc->dc_errs[dc->dc_nerrs++];
	fe->fe_repo = xstrdup(repo);
	fe->fe_path = xstrdup(path);
	fe->fe_error = xstrdup(err);
	dc->dc_incomplete = 1;
}

/* One parse answer: a job, or an error for the file. */
static void
detect_parsed(struct nomad_result *res, void *arg)
{
	struct dparse	*dp = arg;
	struct dcycle	*dc = dp->dp_cycle;
	struct ejob	*ej, *old;
	const char	*ns, *id;
	json_t		*job = res->nr_json;

	if (!nomad_ok(res) || !json_is_object(job)) {
		cycle_error(dc, dp->dp_snap->rs_repo, dp->dp_file->rf_path,
		    res->nr_error != NULL ? res->nr_error :
		    "Nomad's answer to parse is not a job");
		goto done;
	}
	ns = json_string_value(json_object_get(job, "Namespace"));
	if (ns == NULL || *ns == '\0')
		ns = "default";
	id = json_string_value(json_object_get(job, "ID"));
	if (id == NULL || *id == '\0') {
		cycle_error(dc, dp->dp_snap->rs_repo, dp->dp_file->rf_path,
		    "the job has no ID");
		goto done;
	}
	if ((ej = calloc(1, sizeof(*ej))) == NULL)
		fatal("calloc");
	ej->ej_ns = xstrdup(ns);
	ej->ej_id = xstrdup(id);
	ej->ej_repo = xstrdup(dp->dp_snap->rs_repo);
	ej->ej_path = xstrdup(dp->dp_file->rf_path);
	ej->ej_commit = xstrdup(dp->dp_snap->rs_commit);
	ej->ej_job = json_incref(job);
	if ((old = RB_INSERT(ejobs, &dc->dc_jobs, ej)) != NULL) {
		/* Two files, one job: neither is deployed. */
		xasprintf(&old->ej_error, "declared twice: in %s:%s and in "
		    "%s:%s; both are ignored", old->ej_repo, old->ej_path,
		    ej->ej_repo, ej->ej_path);
		log_warnx("job %s/%s is %s", ns, id, old->ej_error);
		ejob_free(ej);
	}
done:
	free(dp);
	if (--dc->dc_parse_pending == 0)
		detect_classify(dc);
}

void
detect_start(void)
{
	struct dcycle		*dc;
	struct repo		*r;
	const struct repo_snap	*snap;
	const struct repo_file	*rf;
	struct dparse		*dp;
	size_t			 i;

	if (engine_env->e_detecting) {
		engine_env->e_rerun = 1;
		return;
	}
	engine_env->e_detecting = 1;
	engine_env->e_rerun = 0;
	if ((dc = calloc(1, sizeof(*dc))) == NULL)
		fatal("calloc");
	RB_INIT(&dc->dc_jobs);
	clock_gettime(CLOCK_MONOTONIC, &dc->dc_start);
	cycle = dc;

	/* Count first, so that no early answer ends the phase too soon. */
	dc->dc_parse_pending = 1;
	for (r = repo_first(); r != NULL; r = repo_next(r)) {
		if ((snap = repo_snapshot(r)) == NULL) {
			/* Not fetched yet: its jobs are unknown, not removed. */
			dc->dc_incomplete = 1;
			continue;
		}
		repo_snap_ref(snap);
		dc->dc_snaps = reallocarray(dc->dc_snaps, dc->dc_nsnaps + 1,
		    sizeof(*dc->dc_snaps));
		if (dc->dc_snaps == NULL)
			fatal("reallocarray");
		dc->dc_snaps[dc->dc_nsnaps++] = snap;
		for (i = 0; i < snap->rs_nfiles; i++) {
			rf = &snap->rs_files[i];
			if (rf->rf_kind != GITW_FILE_JOB)
				continue;
			if ((dp = calloc(1, sizeof(*dp))) == NULL)
				fatal("calloc");
			dp->dp_cycle = dc;
			dp->dp_snap = snap;
			dp->dp_file = rf;
			dc->dc_parse_pending++;
			dc->dc_requests++;
			nomad_parse(NULL, (const char *)rf->rf_data,
			    rf->rf_size,
			    rf->rf_vars != NULL ?
			    (const char *)rf->rf_vars->rf_data : NULL,
			    rf->rf_vars != NULL ? rf->rf_vars->rf_size : 0,
			    detect_parsed, dp);
		}
	}
	if (--dc->dc_parse_pending == 0)
		detect_classify(dc);
}

/* A hook's spec hash, its revision name, and whether it can serve. */
static int
detect_hook(struct dcycle *dc, struct ejob *ej, const char *phase, int pos,
    const char *name, int timeout)
{
	struct ejob		 key, *h;
	struct deploy_hook	*dh;
	const char		*type;
	char			*spec, hash[ENGINE_HASHLEN + 1];
	char			 rev[256];

	memset(&key, 0, sizeof(key));
	key.ej_ns = ej->ej_ns;
	key.ej_id = (char *)(uintptr_t)name;
	h = RB_FIND(ejobs, &dc->dc_jobs, &key);
	if (h == NULL) {
		xasprintf(&ej->ej_hook_error, "%s hook %s: no such job in "
		    "namespace %s in git", phase, name, ej->ej_ns);
		return -1;
	}
	type = json_string_value(json_object_get(h->ej_job, "Type"));
	if (h->ej_meta.jm_role != META_HOOK) {
		xasprintf(&ej->ej_hook_error, "%s hook %s: the job is not a "
		    "hook (nops_role = \"hook\")", phase, name);
		return -1;
	}
	if (h->ej_error != NULL || h->ej_meta.jm_errors > 0) {
		xasprintf(&ej->ej_hook_error, "%s hook %s is invalid: %s",
		    phase, name, h->ej_error != NULL ? h->ej_error :
		    h->ej_meta.jm_issues[0].mi_msg);
		return -1;
	}
	if (type == NULL || strcmp(type, "batch") != 0 ||
	    !json_is_object(json_object_get(h->ej_job, "ParameterizedJob"))) {
		xasprintf(&ej->ej_hook_error, "%s hook %s must be a batch, "
		    "parameterized job", phase, name);
		return -1;
	}
	if (ej->ej_nhooks >= DEPLOY_HOOKS_MAX) {
		xasprintf(&ej->ej_hook_error, "more than %d hooks",
		    DEPLOY_HOOKS_MAX);
		return -1;
	}
	spec = engine_json_canonical(h->ej_job);
	engine_sha256_hex(spec, strlen(spec), hash);
	snprintf(rev, sizeof(rev), "%s-%.8s", name, hash);
	dh = &ej->ej_hooks[ej->ej_nhooks++];
	dh->dh_phase = xstrdup(phase);
	dh->dh_position = pos;
	dh->dh_hook_id = xstrdup(name);
	dh->dh_spec = spec;
	dh->dh_spec_hash = xstrdup(hash);
	dh->dh_revision = xstrdup(rev);
	dh->dh_timeout = timeout;
	return 0;
}

/*
 * The spec hash covers the job as git has it and every hook it runs, so
 * that an approval covers the hooks too and a hook change supersedes.
 */
static void
detect_hash(struct ejob *ej)
{
	char	*spec, *buf = NULL, *line = NULL;
	size_t	 i;

	spec = engine_json_canonical(ej->ej_job);
	if (asprintf(&buf, "%s\n", spec) == -1)
		fatal("asprintf");
	free(spec);
	for (i = 0; i < ej->ej_nhooks; i++) {
		struct deploy_hook *h = &ej->ej_hooks[i];

		if (asprintf(&line, "%s%s %d %s %s %d\n", buf, h->dh_phase,
		    h->dh_position, h->dh_hook_id, h->dh_spec_hash,
		    h->dh_timeout) == -1)
			fatal("asprintf");
		free(buf);
		buf = line;
	}
	if (ej->ej_hook_error != NULL) {
		if (asprintf(&line, "%shook error: %s\n", buf,
		    ej->ej_hook_error) == -1)
			fatal("asprintf");
		free(buf);
		buf = line;
	}
	engine_sha256_hex(buf, strlen(buf), ej->ej_hash);
	free(buf);
}

static void
detect_classify(struct dcycle *dc)
{
	struct ejob	*ej;
	size_t		 i;

	RB_FOREACH(ej, ejobs, &dc->dc_jobs) {
		meta_read(json_object_get(ej->ej_job, "Meta"), &ej->ej_meta);
		ej->ej_in_ns = engine_ns_managed(ej->ej_ns);
		for (i = 0; i < ej->ej_meta.jm_nissues; i++)
			if (ej->ej_meta.jm_issues[i].mi_severity == META_ERROR)
				log_warnx("%s:%s: job %s/%s: %s: %s",
				    ej->ej_repo, ej->ej_path, ej->ej_ns,
				    ej->ej_id, ej->ej_meta.jm_issues[i].mi_key,
				    ej->ej_meta.jm_issues[i].mi_msg);
	}
	RB_FOREACH(ej, ejobs, &dc->dc_jobs) {
		if (ej->ej_meta.jm_role != META_MANAGED || !ej->ej_in_ns ||
		    ej->ej_error != NULL)
			continue;
		for (i = 0; i < ej->ej_meta.jm_npre && ej->ej_hook_error == NULL;
		    i++)
			detect_hook(dc, ej, "pre", (int)i, ej->ej_meta.jm_pre[i],
			    ej->ej_meta.jm_pre_timeout);
		for (i = 0; i < ej->ej_meta.jm_npost &&
		    ej->ej_hook_error == NULL; i++)
			detect_hook(dc, ej, "post", (int)i,
			    ej->ej_meta.jm_post[i], ej->ej_meta.jm_post_timeout);
		detect_hash(ej);
		dc->dc_queue = reallocarray(dc->dc_queue, dc->dc_nqueue + 1,
		    sizeof(*dc->dc_queue));
		if (dc->dc_queue == NULL)
			fatal("reallocarray");
		dc->dc_queue[dc->dc_nqueue++] = ej;
	}
	if (dc->dc_nqueue == 0) {
		detect_decide(dc);
		return;
	}
	detect_pump(dc);
}

/*
 * The spec to register: git's job, but a group with a scaling block keeps
 * the count it has live, so nops never fights an autoscaler.
 */
json_t *
detect_register_spec(const json_t *spec, const json_t *live)
{
	json_t		*copy, *tg, *ltg, *count;
	const char	*name, *lname;
	size_t		 i, j;

	copy = json_deep_copy(spec);
	if (copy == NULL)
		fatalx("json_deep_copy");
	if (!json_is_object(live))
		return copy;
	json_array_foreach(json_object_get(copy, "TaskGroups"), i, tg) {
		if (!json_is_object(json_object_get(tg, "Scaling")))
			continue;
		name = json_string_value(json_object_get(tg, "Name"));
		json_array_foreach(json_object_get(live, "TaskGroups"), j,
		    ltg) {
			lname = json_string_value(json_object_get(ltg, "Name"));
			count = json_object_get(ltg, "Count");
			if (name != NULL && lname != NULL &&
			    strcmp(name, lname) == 0 && json_is_integer(count))
				json_object_set(tg, "Count", count);
		}
	}
	return copy;
}

/*
 * Does a plan diff change anything?  Not just Diff.Type: Nomad marks a
 * group with a scaling block "Edited" with an object that has no changed
 * field in it, which is no drift.  A change is a field added, deleted or
 * edited, or a whole object, group or task added or deleted.
 */
int
detect_diff_changed(const json_t *d)
{
	static const char *const lists[] = { "Fields", "Objects",
	    "TaskGroups", "Tasks" };
	const char	*type;
	json_t		*v;
	size_t		 i, l;

	if (!json_is_object(d))
		return 0;
	type = json_string_value(json_object_get(d, "Type"));
	if (type != NULL && (strcmp(type, "Added") == 0 ||
	    strcmp(type, "Deleted") == 0))
		return 1;
	/* A field: it has Old/New and no lists. */
	if (json_object_get(d, "Old") != NULL ||
	    json_object_get(d, "New") != NULL)
		return type != NULL && strcmp(type, "None") != 0;
	for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		json_array_foreach(json_object_get(d, lists[l]), i, v)
			if (detect_diff_changed(v))
				return 1;
	return 0;
}

static void
detect_planned(struct nomad_result *res, void *arg)
{
	struct ejob	*ej = arg;
	struct dcycle	*dc = cycle;
	json_t		*diff;
	const char	*type;

	if (!nomad_ok(res) || !json_is_object(res->nr_json)) {
		xasprintf(&ej->ej_plan_error, "plan: %s", res->nr_error != NULL ?
		    res->nr_error : "no answer");
	} else {
		diff = json_object_get(res->nr_json, "Diff");
		type = json_string_value(json_object_get(diff, "Type"));
		ej->ej_planned = 1;
		ej->ej_drift = type != NULL && strcmp(type, "None") != 0 &&
		    detect_diff_changed(diff);
		ej->ej_modify_index = (uint64_t)json_integer_value(
		    json_object_get(res->nr_json, "JobModifyIndex"));
		ej->ej_diff = json_deep_copy(diff);
		redact_diff(ej->ej_diff);
	}
	dc->dc_inflight--;
	detect_pump(dc);
}

static void
detect_live(struct nomad_result *res, void *arg)
{
	struct ejob	*ej = arg;
	struct dcycle	*dc = cycle;
	json_t		*spec;

	if (res->nr_status == 404)
		ej->ej_live = NULL;
	else if (nomad_ok(res) && json_is_object(res->nr_json))
		ej->ej_live = json_incref(res->nr_json);
	else {
		xasprintf(&ej->ej_plan_error, "reading the live job: %s",
		    res->nr_error != NULL ? res->nr_error : "no answer");
		dc->dc_inflight--;
		detect_pump(dc);
		return;
	}
	spec = detect_register_spec(ej->ej_job, ej->ej_live);
	dc->dc_requests++;
	nomad_plan(ej->ej_ns, ej->ej_id, spec, detect_planned, ej);
	json_decref(spec);
}

static void
detect_pump(struct dcycle *dc)
{
	struct ejob	*ej;

	while (dc->dc_inflight < ENGINE_PLAN_INFLIGHT &&
	    dc->dc_qnext < dc->dc_nqueue) {
		ej = dc->dc_queue[dc->dc_qnext++];
		dc->dc_inflight++;
		dc->dc_requests++;
		nomad_job_read(ej->ej_ns, ej->ej_id, detect_live, ej);
	}
	if (dc->dc_inflight == 0 && dc->dc_qnext == dc->dc_nqueue)
		detect_decide(dc);
}

/* Transition in its own transaction; logs and returns -1 on error. */
static int
detect_move(int64_t id, enum deploy_state from, enum deploy_state to,
    const char *action, const char *reason)
{
	struct store	*s = engine_store();
	int		 rc;

	if (store_begin(s) == -1)
		return -1;
	rc = deploy_transition(s, id, from, to, "system", action, reason);
	if (rc == -1 || store_commit(s) == -1) {
		store_rollback(s);
		return -1;
	}
	if (rc == 1)
		log_info("deployment %lld: %s -> %s: %s", (long long)id,
		    deploy_state_str(from), deploy_state_str(to), reason);
	return rc;
}

static int
detect_create(struct ejob *ej, enum deploy_state state, const char *reason,
    int64_t retry_of, const char *actor)
{
	struct store	*s = engine_store();
	struct deploy	 d;
	json_t		*spec;
	char		*specs, *diffs;
	size_t		 i;
	int		 rc;

	spec = detect_register_spec(ej->ej_job, ej->ej_live);
	specs = engine_json_canonical(spec);
	json_decref(spec);
	diffs = ej->ej_diff != NULL ? engine_json_canonical(ej->ej_diff) : NULL;

	memset(&d, 0, sizeof(d));
	d.d_ns = ej->ej_ns;
	d.d_job = ej->ej_id;
	d.d_repo = ej->ej_repo;
	d.d_commit = ej->ej_commit;
	d.d_spec = specs;
	d.d_diff = diffs;
	d.d_spec_hash = ej->ej_hash;
	d.d_cas_index = ej->ej_live != NULL ? (int64_t)ej->ej_modify_index : -1;
	d.d_policy = (char *)(uintptr_t)meta_policy_str(ej->ej_meta.jm_policy);
	d.d_state = state;
	d.d_reason = (char *)(uintptr_t)reason;
	d.d_retry_of = retry_of;
	for (i = 0; i < ej->ej_nhooks; i++)
		d.d_hooks[i] = ej->ej_hooks[i];
	d.d_nhooks = ej->ej_nhooks;

	rc = -1;
	if (store_begin(s) == 0) {
		if (deploy_create(s, &d, actor) == 0 && store_commit(s) == 0)
			rc = 0;
		else
			store_rollback(s);
	}
	explicit_bzero(specs, strlen(specs));
	free(specs);
	free(diffs);
	if (rc == 0) {
		ej->ej_deployment = d.d_id;
		log_info("deployment %lld created for %s/%s at %.12s (%s)",
		    (long long)d.d_id, ej->ej_ns, ej->ej_id, ej->ej_commit,
		    deploy_state_str(state));
	} else
		log_warnx("cannot create a deployment for %s/%s",
		    ej->ej_ns, ej->ej_id);
	return rc;
}

/* Is the job blocked by a failed or rejected deployment of this spec? */
static int
detect_blocked(struct ejob *ej, int64_t *last)
{
	sqlite3_stmt	*st;
	const char	*state, *hash;
	int		 blocked = 0;

	st = store_prepare(engine_store(), "SELECT id, state, spec_hash FROM"
	    " deployments WHERE namespace = ? AND job = ? AND state IN"
	    " ('completed', 'failed', 'rejected') ORDER BY id DESC LIMIT 1");
	if (st == NULL)
		return 0;
	sqlite3_bind_text(st, 1, ej->ej_ns, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, ej->ej_id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*last = sqlite3_column_int64(st, 0);
		state = (const char *)sqlite3_column_text(st, 1);
		hash = (const char *)sqlite3_column_text(st, 2);
		blocked = state != NULL && hash != NULL &&
		    strcmp(state, "completed") != 0 &&
		    strcmp(hash, ej->ej_hash) == 0;
	}
	sqlite3_reset(st);
	return blocked;
}

static void
detect_note(struct ejob *ej, const char *state, const char *fmt, ...)
	__attribute__((__format__(printf, 3, 4)));

static void
detect_note(struct ejob *ej, const char *state, const char *fmt, ...)
{
	va_list	 ap;

	ej->ej_state = state;
	free(ej->ej_note);
	ej->ej_note = NULL;
	if (fmt == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&ej->ej_note, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
}

/* Decide for one managed, planned job.  See nopsd.8, DETECTION. */
static void
detect_decide_job(struct ejob *ej)
{
	struct store	*s = engine_store();
	struct deploy	 act;
	char		*who = NULL, *reason = NULL, *nowho = NULL;
	const char	*why;
	int64_t		 last = 0, retry_of = 0;
	int		 paused, held, have, blocked, retry, now_req;
	enum deploy_state first;

	if (ej->ej_plan_error != NULL) {
		detect_note(ej, "error", "%s", ej->ej_plan_error);
		return;
	}
	paused = hold_get(ej->ej_ns, ej->ej_id, &who, &reason, NULL) == 1;
	held = !meta_window_open(&ej->ej_meta, time(NULL));
	retry = drequest_take(ej->ej_ns, ej->ej_id, DREQ_RETRY, &retry_of,
	    NULL);
	now_req = drequest_take(ej->ej_ns, ej->ej_id, DREQ_DEPLOY_NOW, NULL,
	    &nowho);

	have = deploy_active(s, ej->ej_ns, ej->ej_id, &act);
	if (have == -1)
		goto out;
	if (have == 0) {
		ej->ej_deployment = act.d_id;
		if (act.d_state != DS_PENDING_APPROVAL) {
			/* Started: apply carries it to its end. */
			detect_note(ej, "deploying", "deployment %lld is %s",
			    (long long)act.d_id, deploy_state_str(act.d_state));
			deploy_free(&act);
			goto out;
		}
		why = NULL;
		if (!ej->ej_drift)
			detect_move(act.d_id, DS_PENDING_APPROVAL, DS_COMPLETED,
			    "complete", "already in sync: nothing to deploy");
		else if (strcmp(act.d_spec_hash, ej->ej_hash) != 0)
			why = "superseded: the job or its hooks changed in git";
		else if (act.d_cas_index != (ej->ej_live != NULL ?
		    (int64_t)ej->ej_modify_index : -1))
			why = "superseded: the live job changed in Nomad";
		else if (paused)
			why = "superseded: the job is paused";
		else if (held)
			why = "superseded: the sync window is closed";
		else if (ej->ej_meta.jm_policy != POLICY_APPROVAL && !now_req)
			why = "superseded: the job's policy changed";
		if (why == NULL && ej->ej_drift) {
			detect_note(ej, "pending_approval", "deployment %lld "
			    "waits for approval", (long long)act.d_id);
			deploy_free(&act);
			goto out;
		}
		if (why != NULL)
			detect_move(act.d_id, DS_PENDING_APPROVAL,
			    DS_SUPERSEDED, "supersede", why);
		ej->ej_deployment = 0;
		deploy_free(&act);
	}

	if (!ej->ej_drift) {
		detect_note(ej, "in_sync", NULL);
		goto out;
	}
	if (paused) {
		detect_note(ej, "paused", "paused by %s: %s", who, reason);
		goto out;
	}
	if (ej->ej_meta.jm_policy == POLICY_NONE && !now_req) {
		detect_note(ej, "drift", ej->ej_meta.jm_errors > 0 ?
		    "invalid nops_ meta: policy none until it is fixed" :
		    "policy none: nops shows the drift and deploys nothing");
		goto out;
	}
	if (held && !now_req) {
		detect_note(ej, "held", "outside its sync window");
		goto out;
	}
	blocked = detect_blocked(ej, &last);
	if (blocked && !(retry && retry_of == last)) {
		detect_note(ej, "blocked", "deployment %lld failed or was "
		    "rejected for this spec; retry it or push a new commit",
		    (long long)last);
		goto out;
	}
	if (ej->ej_hook_error != NULL) {
		/* A missing or invalid hook fails the deployment now. */
		detect_create(ej, DS_FAILED, ej->ej_hook_error,
		    retry ? retry_of : 0, "system");
		detect_note(ej, "blocked", "%s", ej->ej_hook_error);
		goto out;
	}
	if (now_req || ej->ej_meta.jm_policy == POLICY_AUTO)
		first = ej->ej_meta.jm_npre > 0 ? DS_PRE_HOOKS : DS_REGISTERING;
	else
		first = DS_PENDING_APPROVAL;
	if (detect_create(ej, first, now_req ? "deploy now" : NULL,
	    retry ? retry_of : 0, now_req ? nowho : "system") == 0) {
		detect_note(ej, first == DS_PENDING_APPROVAL ?
		    "pending_approval" : "deploying", "deployment %lld",
		    (long long)ej->ej_deployment);
		engine_apply_kick();
	} else
		detect_note(ej, "error", "could not create a deployment");
out:
	free(who);
	free(reason);
	free(nowho);
}

static void
detect_decide(struct dcycle *dc)
{
	struct ejob	*ej;
	size_t		 i;
	int64_t		*ids;
	size_t		 n;
	struct deploy	 d;

	RB_FOREACH(ej, ejobs, &dc->dc_jobs) {
		if (ej->ej_meta.jm_role == META_HOOK)
			detect_note(ej, "hook", NULL);
		else if (ej->ej_meta.jm_role != META_MANAGED)
			detect_note(ej, "unmanaged", NULL);
		else if (!ej->ej_in_ns)
			detect_note(ej, "unmanaged", "namespace %s is not "
			    "managed (see namespaces in nops.conf)", ej->ej_ns);
		else if (ej->ej_error != NULL)
			detect_note(ej, "error", "%s", ej->ej_error);
		else
			detect_decide_job(ej);
	}

	/*
	 * A waiting deployment whose job left git is superseded, but only
	 * when every file parsed: a file that fails to parse looks just like
	 * a deleted one.
	 */
	if (!dc->dc_incomplete && deploy_active_ids(engine_store(), &ids,
	    &n) == 0) {
		for (i = 0; i < n; i++) {
			if (deploy_load(engine_store(), ids[i], &d) != 0)
				continue;
			if (d.d_state == DS_PENDING_APPROVAL) {
				struct ejob key;

				memset(&key, 0, sizeof(key));
				key.ej_ns = d.d_ns;
				key.ej_id = d.d_job;
				ej = RB_FIND(ejobs, &dc->dc_jobs, &key);
				if (ej == NULL ||
				    ej->ej_meta.jm_role != META_MANAGED)
					detect_move(d.d_id, DS_PENDING_APPROVAL,
					    DS_SUPERSEDED, "supersede",
					    "superseded: the job is no longer "
					    "managed in git");
			}
			deploy_free(&d);
		}
		free(ids);
	}
	/* Requests for jobs that had nothing to do are dropped. */
	while (ndrequests > 0) {
		ndrequests--;
		free(drequests[ndrequests].dr_ns);
		free(drequests[ndrequests].dr_id);
		free(drequests[ndrequests].dr_who);
	}
	detect_orphans(dc);
}

struct dorphan {
	struct dcycle	*do_cycle;
	char		*do_ns;
	char		*do_id;
	int64_t		 do_last;
};

static void
detect_orphan_read(struct nomad_result *res, void *arg)
{
	struct dorphan	*o = arg;
	struct dcycle	*dc = o->do_cycle;
	struct eorphan	*eo;
	json_t		*stop;

	stop = nomad_ok(res) ? json_object_get(res->nr_json, "Stop") : NULL;
	if (nomad_ok(res) && json_is_object(res->nr_json) &&
	    !json_is_true(stop)) {
		dc->dc_orphans = reallocarray(dc->dc_orphans,
		    dc->dc_norphans + 1, sizeof(*dc->dc_orphans));
		if (dc->dc_orphans == NULL)
			fatal("reallocarray");
		eo = &dc->dc_orphans[dc->dc_norphans++];
		eo->eo_ns = o->do_ns;
		eo->eo_id = o->do_id;
		eo->eo_last_deployment = o->do_last;
	} else {
		free(o->do_ns);
		free(o->do_id);
	}
	free(o);
	if (--dc->dc_orphan_pending == 0)
		detect_finish(dc);
}

/*
 * Orphans: jobs nops registered that git no longer declares but that
 * still run.  Listed, never stopped.  Unknown while a file fails to parse.
 */
static void
detect_orphans(struct dcycle *dc)
{
	sqlite3_stmt	*st;
	struct ejob	 key;
	struct dorphan	*o;
	const char	*ns, *id;

	dc->dc_orphan_pending = 1;
	if (dc->dc_incomplete)
		goto done;
	st = store_prepare(engine_store(), "SELECT namespace, job, max(id)"
	    " FROM deployments WHERE eval_id IS NOT NULL AND kind = 'job'"
	    " GROUP BY namespace, job");
	if (st == NULL)
		goto done;
	while (sqlite3_step(st) == SQLITE_ROW) {
		ns = (const char *)sqlite3_column_text(st, 0);
		id = (const char *)sqlite3_column_text(st, 1);
		memset(&key, 0, sizeof(key));
		key.ej_ns = (char *)(uintptr_t)ns;
		key.ej_id = (char *)(uintptr_t)id;
		if (RB_FIND(ejobs, &dc->dc_jobs, &key) != NULL)
			continue;
		if ((o = calloc(1, sizeof(*o))) == NULL)
			fatal("calloc");
		o->do_cycle = dc;
		o->do_ns = xstrdup(ns);
		o->do_id = xstrdup(id);
		o->do_last = sqlite3_column_int64(st, 2);
		dc->dc_orphan_pending++;
		dc->dc_requests++;
		nomad_job_read(o->do_ns, o->do_id, detect_orphan_read, o);
	}
	sqlite3_reset(st);
done:
	if (--dc->dc_orphan_pending == 0)
		detect_finish(dc);
}

static void
detect_finish(struct dcycle *dc)
{
	struct engine	*e = engine_env;
	struct timespec	 end;
	size_t		 i;

	ejobs_free(&e->e_jobs);
	e->e_jobs = dc->dc_jobs;
	file_errors_free(e->e_file_errors, e->e_nfile_errors);
	e->e_file_errors = dc->dc_errs;
	e->e_nfile_errors = dc->dc_nerrs;
	if (!dc->dc_incomplete) {
		orphans_free(e->e_orphans, e->e_norphans);
		e->e_orphans = dc->dc_orphans;
		e->e_norphans = dc->dc_norphans;
		e->e_orphans_known = 1;
	} else {
		/* Keep the last known list; say it may be stale. */
		orphans_free(dc->dc_orphans, dc->dc_norphans);
		e->e_orphans_known = 0;
	}
	for (i = 0; i < dc->dc_nsnaps; i++)
		repo_snap_unref(dc->dc_snaps[i]);
	free(dc->dc_snaps);
	free(dc->dc_queue);

	clock_gettime(CLOCK_MONOTONIC, &end);
	e->e_last_detect_ms = (end.tv_sec - dc->dc_start.tv_sec) * 1e3 +
	    (end.tv_nsec - dc->dc_start.tv_nsec) / 1e6;
	e->e_last_requests = dc->dc_requests;
	e->e_last_detect = time(NULL);
	e->e_cycles++;
	log_debug("detection cycle %llu: %.1f ms, %llu requests, %zu file "
	    "errors", (unsigned long long)e->e_cycles, e->e_last_detect_ms,
	    (unsigned long long)dc->dc_requests, dc->dc_nerrs);
	free(dc);
	cycle = NULL;
	e->e_detecting = 0;
	if (e->e_rerun)
		engine_detect("queued while a cycle ran");
}
