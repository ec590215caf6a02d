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

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <event2/event.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "log.h"
#include "xmalloc.h"
#include "text.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_deploy.h"
#include "store_job.h"
#include "repo.h"
#include "nomad.h"
#include "meta.h"
#include "redact.h"
#include "deploy.h"
#include "engine.h"
#include "engine_detect.h"
#include "webpub.h"
#include "suspend.h"
#include "operation.h"

RB_GENERATE(ejobs, ejob, ej_node, detect_job_cmp);

struct dparse {
	struct dcycle		*dp_cycle;
	const struct repo_snap	*dp_snap;
	const struct repo_file	*dp_file;
};

static struct dcycle	*cycle;

static void	 detect_classify(struct dcycle *);
static void	 detect_parse_pump(struct dcycle *);
static void	 detect_pump(struct dcycle *);
static void	 detect_finish(struct dcycle *);

int
detect_job_cmp(struct ejob *a, struct ejob *b)
{
	int	 c;

	if ((c = strcmp(a->ej_ns, b->ej_ns)) != 0)
		return c;
	return strcmp(a->ej_id, b->ej_id);
}

/* RB_FIND by name: a key struct would need its const dropped. */
struct ejob *
detect_job_find(struct ejobs *head, const char *ns, const char *id)
{
	struct ejob	*ej = RB_ROOT(head);
	int		 c;

	while (ej != NULL) {
		if ((c = strcmp(ns, ej->ej_ns)) == 0)
			c = strcmp(id, ej->ej_id);
		if (c == 0)
			return ej;
		ej = c < 0 ? RB_LEFT(ej, ej_node) : RB_RIGHT(ej, ej_node);
	}
	return NULL;
}

void
detect_asprintf(char **out, const char *fmt, ...)
{
	va_list	 ap;

	free(*out);
	va_start(ap, fmt);
	*out = xvasprintf(fmt, ap);
	va_end(ap);
}

json_t *
detect_job_json(struct ejob *ej)
{
	json_error_t	 err;

	if (ej->ej_job == NULL && ej->ej_spec != NULL &&
	    (ej->ej_job = json_loads(ej->ej_spec, 0, &err)) == NULL)
		fatalx("job %s/%s: its own text: %s", ej->ej_ns, ej->ej_id,
		    err.text);
	return ej->ej_job;
}

void
detect_job_park(struct ejob *ej)
{
	if (ej->ej_job == NULL)
		return;
	free(ej->ej_spec);
	if ((ej->ej_spec = json_dumps(ej->ej_job, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	json_decref(ej->ej_job);
	ej->ej_job = NULL;
}

/*
 * Alike on purpose: deploy_free (deploy.c) frees a struct deploy the same
 * way, a free(3) per member; the members differ.
 */
void
detect_job_free(struct ejob *ej)
{
	size_t	 i;

	free(ej->ej_ns);
	free(ej->ej_id);
	free(ej->ej_repo);
	free(ej->ej_path);
	free(ej->ej_commit);
	json_decref(ej->ej_job);
	repo_snap_unref(ej->ej_snap);
	free(ej->ej_spec);
	meta_free(&ej->ej_meta);
	free(ej->ej_error);
	for (i = 0; i < ej->ej_nhooks; i++)
		deploy_hook_free(&ej->ej_hooks[i]);
	free(ej->ej_hooks);
	free(ej->ej_hook_error);
	operation_frozen_free(ej);
	json_decref(ej->ej_live);
	free(ej->ej_plan_error);
	free(ej->ej_diff);
	json_decref(ej->ej_live_groups);
	free(ej->ej_note);
	free(ej);
}

static void
ejobs_free(struct ejobs *jobs)
{
	struct ejob	*ej, *next;

	RB_FOREACH_SAFE(ej, ejobs, jobs, next) {
		RB_REMOVE(ejobs, jobs, ej);
		detect_job_free(ej);
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

/*
 * Alike on purpose: file_errors_free above frees an array of another
 * type the same way; the members differ.
 */
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

/*
 * Alike on purpose: op_rows_add (operation.c) appends to an array of
 * another type the same way (reallocarray, then fill the new element).
 */
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

/*
 * Nomad names the file it parsed "input.hcl": say the file's path in git
 * instead.
 */
static char *
detect_parse_error(const char *err, const char *path)
{
	const char	*p, *from = "input.hcl";
	char		*out = NULL, *n;

	while ((p = strstr(err, from)) != NULL) {
		n = xasprintf("%s%.*s%s", out != NULL ? out : "",
		    (int)(p - err), err, path);
		free(out);
		out = n;
		err = p + strlen(from);
	}
	n = xasprintf("%s%s", out != NULL ? out : "", err);
	free(out);
	return n;
}

/*
 * A file that does not parse keeps the job it declared when it last
 * parsed listed, with the error: found in the last cycle by repository
 * and path.
 */
static void
detect_unparsed(struct dcycle *dc, const struct dparse *dp, const char *err,
    int outage)
{
	struct ejob	*old, *ej;

	RB_FOREACH(old, ejobs, &engine_env->e_jobs) {
		if (strcmp(old->ej_repo, dp->dp_snap->rs_repo) != 0 ||
		    strcmp(old->ej_path, dp->dp_file->rf_path) != 0)
			continue;
		if ((ej = calloc(1, sizeof(*ej))) == NULL)
			fatal("calloc");
		ej->ej_ns = xstrdup(old->ej_ns);
		ej->ej_id = xstrdup(old->ej_id);
		ej->ej_repo = xstrdup(old->ej_repo);
		ej->ej_path = xstrdup(old->ej_path);
		ej->ej_commit = xstrdup(dp->dp_snap->rs_commit);
		ej->ej_unparsed = outage ? 2 : 1;
		ej->ej_prev_role = old->ej_unparsed ? old->ej_prev_role :
		    (int)old->ej_meta.jm_role;
		ej->ej_error = xstrdup(err);
		if (RB_INSERT(ejobs, &dc->dc_jobs, ej) != NULL)
			detect_job_free(ej);	/* a file that parsed has it */
		return;
	}
}

/* A file that did not parse: Nomad's 4xx error, or an outage. */
static void
detect_parse_failed(struct dcycle *dc, const struct dparse *dp,
    int status, const char *error)
{
	char	*err;

	err = detect_parse_error(error != NULL ? error :
	    "Nomad's answer to parse is not a job", dp->dp_file->rf_path);
	if (status == 0 || status >= 500) {
		/*
		 * No answer, or no leader: Nomad is out, the file may be
		 * fine.  Nothing is decided this cycle.
		 */
		if (dc->dc_outage == NULL)
			detect_asprintf(&dc->dc_outage, "parsing %s:%s: %s",
			    dp->dp_snap->rs_repo, dp->dp_file->rf_path, err);
		dc->dc_incomplete = 1;
		detect_unparsed(dc, dp, err, 1);
	} else {
		cycle_error(dc, dp->dp_snap->rs_repo, dp->dp_file->rf_path,
		    err);
		detect_unparsed(dc, dp, err, 0);
	}
	free(err);
}

/*
 * A file's job: from Nomad's answer (job), or from what its content gave
 * before (dm; its namespace, ID and spec text).
 */
static void
detect_job_add(struct dcycle *dc, const struct dparse *dp, json_t *job,
    struct dmemo *dm)
{
	struct ejob	*ej, *old;
	const char	*ns, *id;

	if (dm != NULL) {
		ns = dm->dm_ns;
		id = dm->dm_id;
	} else {
		ns = json_string_value(json_object_get(job, "Namespace"));
		if (ns == NULL || *ns == '\0')
			ns = "default";
		id = json_string_value(json_object_get(job, "ID"));
	}
	if (id == NULL || *id == '\0') {
		cycle_error(dc, dp->dp_snap->rs_repo, dp->dp_file->rf_path,
		    "the job has no ID");
		return;
	}
	/* Names are shown and stored everywhere: text only (BOUNDARY). */
	if (text_check(id, strlen(id)) != NULL ||
	    text_check(ns, strlen(ns)) != NULL ||
	    strlen(id) > DETECT_NAME_MAX || strlen(ns) > DETECT_NAME_MAX) {
		cycle_error(dc, dp->dp_snap->rs_repo, dp->dp_file->rf_path,
		    "the job's ID or namespace is not text of at most 200 "
		    "bytes");
		return;
	}
	if ((ej = calloc(1, sizeof(*ej))) == NULL)
		fatal("calloc");
	ej->ej_ns = xstrdup(ns);
	ej->ej_id = xstrdup(id);
	ej->ej_repo = xstrdup(dp->dp_snap->rs_repo);
	ej->ej_path = xstrdup(dp->dp_file->rf_path);
	ej->ej_commit = xstrdup(dp->dp_snap->rs_commit);
	if (dm != NULL) {
		/* The text detect_job_park() would have made of the answer. */
		ej->ej_spec = xstrdup(dm->dm_spec);
		ej->ej_memo = dm;
	} else {
		ej->ej_job = json_incref(job);
		detect_job_park(ej);
	}
	repo_snap_ref(dp->dp_snap);
	ej->ej_snap = dp->dp_snap;
	ej->ej_file = dp->dp_file;
	if ((old = RB_INSERT(ejobs, &dc->dc_jobs, ej)) != NULL &&
	    old->ej_unparsed) {
		/* The job moved to a file that parses: it wins. */
		RB_REMOVE(ejobs, &dc->dc_jobs, old);
		detect_job_free(old);
		old = RB_INSERT(ejobs, &dc->dc_jobs, ej);
	}
	if (old != NULL) {
		/* Two files, one job: neither is deployed. */
		detect_asprintf(&old->ej_error, "declared twice: in %s:%s and "
		    "in %s:%s; both are ignored", old->ej_repo, old->ej_path,
		    ej->ej_repo, ej->ej_path);
		log_warnx("job %s/%s is %s", ns, id, old->ej_error);
		detect_job_free(ej);
	}
}

/* A file answered: the next, or the classification after the last. */
static void
detect_parse_next(struct dcycle *dc)
{
	if (--dc->dc_parse_pending == 0) {
		free(dc->dc_parses);
		dc->dc_parses = NULL;
		detect_classify(dc);
	} else
		detect_parse_pump(dc);
}

/* One parse answer: a job, or an error for the file. */
static void
detect_parsed(struct nomad_result *res, void *arg)
{
	struct dparse	*dp = arg;
	struct dcycle	*dc = dp->dp_cycle;
	json_t		*job = res->nr_json;

	if (!nomad_ok(res) || !json_is_object(job)) {
		/* What the parse cache keeps, and no more: a 400. */
		if (res->nr_status == 400 && res->nr_error != NULL)
			memo_put(dp->dp_file, NULL, res->nr_error);
		detect_parse_failed(dc, dp, res->nr_status, res->nr_error);
	} else
		detect_job_add(dc, dp, job, memo_put(dp->dp_file, job, NULL));
	/* A parse answered from the cache cost Nomad nothing. */
	if (!res->nr_cached)
		dc->dc_requests++;
	free(dp);
	dc->dc_parse_inflight--;
	detect_parse_next(dc);
}

/*
 * Parses go out ENGINE_PLAN_INFLIGHT at a time, like the plans: a
 * repository of thousands of files sent at once would run into the Nomad
 * client's bound on outstanding requests, and those files would fail.
 */
static void
detect_parse_pump(struct dcycle *dc)
{
	struct dparse		*dp;
	const struct repo_file	*rf;
	struct dmemo		*dm;

	while (dc->dc_parse_inflight < ENGINE_PLAN_INFLIGHT &&
	    dc->dc_pnext < dc->dc_nparses) {
		dp = dc->dc_parses[dc->dc_pnext++];
		rf = dp->dp_file;
		if ((dm = memo_find(rf)) != NULL) {
			/* Its content was read before: no parse. */
			if (dm->dm_ok)
				detect_job_add(dc, dp, NULL, dm);
			else
				detect_parse_failed(dc, dp, 400, dm->dm_error);
			dc->dc_memo_hits++;
			free(dp);
			if (--dc->dc_parse_pending == 0) {
				free(dc->dc_parses);
				dc->dc_parses = NULL;
				detect_classify(dc);
				return;
			}
			continue;
		}
		dc->dc_parse_inflight++;
		nomad_parse(NULL, (const char *)rf->rf_data, rf->rf_size,
		    rf->rf_vars != NULL ? (const char *)rf->rf_vars->rf_data :
		    NULL, rf->rf_vars != NULL ? rf->rf_vars->rf_size : 0,
		    detect_parsed, dp);
	}
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
	webpub_changed();
	engine_env->e_rerun = 0;
	memo_begin();
	if ((dc = calloc(1, sizeof(*dc))) == NULL)
		fatal("calloc");
	RB_INIT(&dc->dc_jobs);
	clock_gettime(CLOCK_MONOTONIC, &dc->dc_start);
	cycle = dc;

	for (r = repo_first(); r != NULL; r = repo_next(r)) {
		if ((snap = repo_snapshot(r)) == NULL) {
			/*
			 * Not fetched yet: its jobs are unknown, not removed.
			 */
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
			dc->dc_parses = reallocarray(dc->dc_parses,
			    dc->dc_nparses + 1, sizeof(*dc->dc_parses));
			if (dc->dc_parses == NULL)
				fatal("reallocarray");
			dc->dc_parses[dc->dc_nparses++] = dp;
		}
	}
	/*
	 * Nomad's leader, version and job lists are asked while the files
	 * are read, when the last cycle had managed jobs to decide: one
	 * round trip less between a push and its plan.
	 */
	if (!focus_begin(dc) && engine_env->e_last_queued > 0)
		survey_start(dc);
	/* Counted before any is sent; answers come later, never inside. */
	dc->dc_parse_pending = (int)dc->dc_nparses;
	if (dc->dc_parse_pending == 0) {
		free(dc->dc_parses);
		dc->dc_parses = NULL;
		detect_classify(dc);
	} else
		detect_parse_pump(dc);
}

/* A hook's spec hash, its revision name, and whether it can serve. */
static int
detect_hook(struct dcycle *dc, struct ejob *ej, const char *phase, int pos,
    const char *name, int timeout)
{
	struct ejob		*h;
	struct deploy_hook	*dh;
	const char		*type;
	char			*spec, hash[ENGINE_HASHLEN + 1];
	char			 rev[256];

	h = detect_job_find(&dc->dc_jobs, ej->ej_ns, name);
	if (h == NULL) {
		detect_asprintf(&ej->ej_hook_error, "%s hook %s: no such job "
		    "in namespace %s in git", phase, name, ej->ej_ns);
		return -1;
	}
	type = json_string_value(json_object_get(detect_job_json(h), "Type"));
	if (h->ej_meta.jm_role != META_HOOK) {
		detect_asprintf(&ej->ej_hook_error, "%s hook %s: the job is "
		    "not a hook (nops_role = \"hook\")", phase, name);
		return -1;
	}
	if (h->ej_error != NULL || h->ej_meta.jm_errors > 0) {
		detect_asprintf(&ej->ej_hook_error, "%s hook %s is invalid: %s",
		    phase, name, h->ej_error != NULL ? h->ej_error :
		    h->ej_meta.jm_issues[0].mi_msg);
		return -1;
	}
	if (type == NULL || strcmp(type, "batch") != 0 ||
	    !json_is_object(json_object_get(h->ej_job, "ParameterizedJob"))) {
		detect_asprintf(&ej->ej_hook_error, "%s hook %s must be a "
		    "batch, parameterized job", phase, name);
		return -1;
	}
	if (ej->ej_nhooks >= DEPLOY_HOOKS_MAX) {
		detect_asprintf(&ej->ej_hook_error, "more than %d hooks",
		    DEPLOY_HOOKS_MAX);
		return -1;
	}
	spec = engine_json_canonical(h->ej_job);
	detect_job_park(h);
	engine_sha256_hex(spec, strlen(spec), hash);
	snprintf(rev, sizeof(rev), "%s-%.8s", name, hash);
	if ((dh = reallocarray(ej->ej_hooks, ej->ej_nhooks + 1,
	    sizeof(*dh))) == NULL)
		fatal("reallocarray");
	ej->ej_hooks = dh;
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
 * that an approval covers the hooks too and a hook change supersedes:
 * SHA-256 of its canonical text and a newline, a line per hook, the hook
 * error, the operations.  The start comes from what the file's content
 * gave before, unless a suspend changed the spec this cycle.
 */
static void
detect_hash(struct ejob *ej, int carried)
{
	static const char	 hex[] = "0123456789abcdef";
	EVP_MD_CTX		*ctx;
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen = 0, i;
	char			*spec, *line;

	if (ej->ej_memo != NULL && !carried)
		ctx = memo_spec_hash(ej->ej_memo);
	else {
		spec = engine_json_canonical(detect_job_json(ej));
		if ((ctx = EVP_MD_CTX_new()) == NULL ||
		    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
		    EVP_DigestUpdate(ctx, spec, strlen(spec)) != 1 ||
		    EVP_DigestUpdate(ctx, "\n", 1) != 1)
			fatalx("EVP_Digest sha256");
		free(spec);
	}
	for (i = 0; i < ej->ej_nhooks; i++) {
		struct deploy_hook *h = &ej->ej_hooks[i];

		line = xasprintf("%s %d %s %s %d\n", h->dh_phase,
		    h->dh_position, h->dh_hook_id, h->dh_spec_hash,
		    h->dh_timeout);
		if (EVP_DigestUpdate(ctx, line, strlen(line)) != 1)
			fatalx("EVP_DigestUpdate");
		free(line);
	}
	if (ej->ej_hook_error != NULL) {
		line = xasprintf("hook error: %s\n", ej->ej_hook_error);
		if (EVP_DigestUpdate(ctx, line, strlen(line)) != 1)
			fatalx("EVP_DigestUpdate");
		free(line);
	}
	/* Operations too, once a job declares any (operation.c). */
	if (ej->ej_nops > 0) {
		line = operation_hash_text(ej);
		if (EVP_DigestUpdate(ctx, line, strlen(line)) != 1)
			fatalx("EVP_DigestUpdate");
		free(line);
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)
		fatalx("EVP_DigestFinal_ex");
	EVP_MD_CTX_free(ctx);
	for (i = 0; i < mdlen; i++) {
		ej->ej_hash[i * 2] = hex[md[i] >> 4];
		ej->ej_hash[i * 2 + 1] = hex[md[i] & 0xf];
	}
	ej->ej_hash[ENGINE_HASHLEN] = '\0';
}

static void
detect_classify(struct dcycle *dc)
{
	struct ejob	*ej;
	size_t		 i;
	int		 carried;

	RB_FOREACH(ej, ejobs, &dc->dc_jobs) {
		json_t	*meta, *v;

		/* Its content's meta and type, kept or from the tree. */
		if (ej->ej_memo != NULL) {
			meta = ej->ej_memo->dm_meta;
			ej->ej_suspendable = ej->ej_memo->dm_suspendable;
		} else {
			meta = json_object_get(detect_job_json(ej), "Meta");
			ej->ej_suspendable = suspend_type_suspendable(
			    ej->ej_job);
		}
		meta_read(meta, &ej->ej_meta);
		if (ej->ej_unparsed)
			ej->ej_meta.jm_role = ej->ej_prev_role;
		v = json_object_get(meta, "nops_notify_completed");
		ej->ej_notify_completed = json_is_string(v) &&
		    strcmp(json_string_value(v), "true") == 0;
		ej->ej_in_ns = engine_ns_managed(ej->ej_ns);
		detect_job_park(ej);
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
		for (i = 0; i < ej->ej_meta.jm_npre &&
		    ej->ej_hook_error == NULL; i++)
			detect_hook(dc, ej, "pre", (int)i,
			    ej->ej_meta.jm_pre[i], ej->ej_meta.jm_pre_timeout);
		for (i = 0; i < ej->ej_meta.jm_npost &&
		    ej->ej_hook_error == NULL; i++)
			detect_hook(dc, ej, "post", (int)i,
			    ej->ej_meta.jm_post[i],
			    ej->ej_meta.jm_post_timeout);
		for (i = 0; i < ej->ej_meta.jm_nops; i++)
			operation_freeze(ej, ej->ej_meta.jm_ops[i],
			    detect_job_find(&dc->dc_jobs, ej->ej_ns,
			    ej->ej_meta.jm_ops[i]));
		/*
		 * A suspend is part of the desired state (suspend.c).  The
		 * spec is made a tree only for a job that has one.
		 */
		carried = 0;
		if (ej->ej_memo == NULL || store_job_get(engine_store(),
		    STORE_JOB_SUSPEND, ej->ej_ns, ej->ej_id, NULL, NULL,
		    NULL) == 1)
			carried = suspend_carry(ej->ej_ns, ej->ej_id,
			    detect_job_json(ej));
		detect_hash(ej, carried);
		detect_job_park(ej);
		dc->dc_queue = reallocarray(dc->dc_queue, dc->dc_nqueue + 1,
		    sizeof(*dc->dc_queue));
		if (dc->dc_queue == NULL)
			fatal("reallocarray");
		dc->dc_queue[dc->dc_nqueue++] = ej;
	}
	/* Hooks looked at above: text again. */
	RB_FOREACH(ej, ejobs, &dc->dc_jobs)
		detect_job_park(ej);
	/* Which jobs may have changed: engine_survey.c, then detect_plan(). */
	engine_env->e_last_queued = dc->dc_nqueue;
	survey_classified(dc);
}

/* Plan the queued jobs (those the survey could not answer from memory). */
void
detect_plan(struct dcycle *dc)
{
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

/*
 * What a decision needs of the live job besides its index: the count of
 * each group (the spec to register keeps the live count of a group that
 * scales).  Kept between cycles instead of the whole job.
 */
static json_t *
detect_live_groups(const json_t *live)
{
	json_t		*groups, *tg;
	size_t		 i;

	if (!json_is_object(live))
		return NULL;
	if ((groups = json_array()) == NULL)
		fatalx("json_array");
	json_array_foreach(json_object_get(live, "TaskGroups"), i, tg)
		if (json_is_string(json_object_get(tg, "Name")) &&
		    json_is_integer(json_object_get(tg, "Count")))
			json_array_append_new(groups, json_pack("{s:O,s:O}",
			    "Name", json_object_get(tg, "Name"),
			    "Count", json_object_get(tg, "Count")));
	return groups;
}

static void
detect_planned(struct nomad_result *res, void *arg)
{
	struct ejob	*ej = arg;
	struct dcycle	*dc = cycle;
	json_t		*diff;
	const char	*type;

	if (!nomad_ok(res) || !json_is_object(res->nr_json)) {
		detect_asprintf(&ej->ej_plan_error, "plan: %s",
		    res->nr_error != NULL ? res->nr_error : "no answer");
	} else {
		diff = json_object_get(res->nr_json, "Diff");
		type = json_string_value(json_object_get(diff, "Type"));
		ej->ej_planned = 1;
		ej->ej_drift = type != NULL && strcmp(type, "None") != 0 &&
		    detect_diff_changed(diff);
		ej->ej_modify_index = (uint64_t)json_integer_value(
		    json_object_get(res->nr_json, "JobModifyIndex"));
		/*
		 * Kept for the next cycle: the index this plan was made
		 * against.  If the job moved between the read and the plan,
		 * the plan's spec was built from an older job: unsure.
		 */
		ej->ej_live_exists = ej->ej_live != NULL;
		ej->ej_live_index = ej->ej_read_index == ej->ej_modify_index ?
		    ej->ej_modify_index : ENGINE_INDEX_UNSURE;
		ej->ej_live_groups = detect_live_groups(ej->ej_live);
		diff = json_deep_copy(diff);
		redact_diff(diff);
		ej->ej_diff = engine_json_canonical(diff);
		json_decref(diff);
	}
	/*
	 * What only a deployment needs, the spec and the live job, goes
	 * once the plan shows none is due: memory stays a few hundred bytes
	 * a job, not the trees of every job at once.
	 */
	if (!ej->ej_drift) {
		json_decref(ej->ej_live);
		ej->ej_live = NULL;
		free(ej->ej_spec);
		ej->ej_spec = NULL;
	}
	dc->dc_inflight--;
	detect_pump(dc);
}

static void	 detect_plan_one(struct dcycle *, struct ejob *);

static void
detect_live(struct nomad_result *res, void *arg)
{
	struct ejob	*ej = arg;
	struct dcycle	*dc = cycle;

	if (res->nr_status == 404) {
		ej->ej_live = NULL;
		ej->ej_read_index = 0;
	} else if (nomad_ok(res) && json_is_object(res->nr_json)) {
		ej->ej_live = json_incref(res->nr_json);
		ej->ej_read_index = (uint64_t)json_integer_value(
		    json_object_get(res->nr_json, "JobModifyIndex"));
	} else {
		detect_asprintf(&ej->ej_plan_error, "reading the live job: %s",
		    res->nr_error != NULL ? res->nr_error : "no answer");
		dc->dc_inflight--;
		detect_pump(dc);
		return;
	}
	detect_plan_one(dc, ej);
}

/* Plan git's spec against the live job (read, or known: the survey). */
static void
detect_plan_one(struct dcycle *dc, struct ejob *ej)
{
	json_t	*spec;

	spec = detect_register_spec(detect_job_json(ej), ej->ej_live);
	detect_job_park(ej);
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
		dc->dc_planned++;
		if (ej->ej_noread) {
			detect_plan_one(dc, ej);
			continue;
		}
		dc->dc_requests++;
		nomad_job_read(ej->ej_ns, ej->ej_id, detect_live, ej);
	}
	if (dc->dc_inflight == 0 && dc->dc_qnext == dc->dc_nqueue)
		decide_cycle(dc);
}

struct dorphan {
	struct dcycle	*do_cycle;
	char		*do_ns;
	char		*do_id;
	int64_t		 do_last;
};

static void
detect_orphan_add(struct dcycle *dc, const char *ns, const char *id,
    int64_t last)
{
	struct eorphan	*eo;

	dc->dc_orphans = reallocarray(dc->dc_orphans, dc->dc_norphans + 1,
	    sizeof(*dc->dc_orphans));
	if (dc->dc_orphans == NULL)
		fatal("reallocarray");
	eo = &dc->dc_orphans[dc->dc_norphans++];
	eo->eo_ns = xstrdup(ns);
	eo->eo_id = xstrdup(id);
	eo->eo_last_deployment = last;
}

static void
detect_orphan_read(struct nomad_result *res, void *arg)
{
	struct dorphan	*o = arg;
	struct dcycle	*dc = o->do_cycle;
	json_t		*stop;

	stop = nomad_ok(res) ? json_object_get(res->nr_json, "Stop") : NULL;
	if (nomad_ok(res) && json_is_object(res->nr_json) &&
	    !json_is_true(stop))
		detect_orphan_add(dc, o->do_ns, o->do_id, o->do_last);
	/* Gone from git and from Nomad: its operations' run log goes. */
	if (res->nr_status == 404)
		operation_forget(o->do_ns, o->do_id);
	free(o->do_ns);
	free(o->do_id);
	free(o);
	if (--dc->dc_orphan_pending == 0)
		detect_finish(dc);
}

/* The registered jobs git no longer declares, walked by detect_orphans(). */
struct dorphan_walk {
	struct dcycle	 *ow_cycle;
	char		**ow_gone;	/* ns, job pairs */
	size_t		  ow_ngone;
};

static void
detect_orphan_one(const char *ns, const char *id, int64_t last, void *arg)
{
	struct dorphan_walk *ow = arg;
	struct dcycle	*dc = ow->ow_cycle;
	struct dorphan	*o;
	json_t		*stub;
	int		 listed;

	if (detect_job_find(&dc->dc_jobs, ns, id) != NULL)
		return;
	/* This cycle's job list answers without a read. */
	stub = survey_stub(dc, ns, id, &listed);
	if (listed) {
		if (stub != NULL &&
		    !json_is_true(json_object_get(stub, "Stop")))
			detect_orphan_add(dc, ns, id, last);
		if (stub == NULL) {
			/* gone from git and Nomad; after the scan */
			ow->ow_gone = reallocarray(ow->ow_gone,
			    ow->ow_ngone + 2, sizeof(*ow->ow_gone));
			if (ow->ow_gone == NULL)
				fatal("reallocarray");
			ow->ow_gone[ow->ow_ngone++] = xstrdup(ns);
			ow->ow_gone[ow->ow_ngone++] = xstrdup(id);
		}
		return;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL)
		fatal("calloc");
	o->do_cycle = dc;
	o->do_ns = xstrdup(ns);
	o->do_id = xstrdup(id);
	o->do_last = last;
	dc->dc_orphan_pending++;
	dc->dc_requests++;
	nomad_job_read(o->do_ns, o->do_id, detect_orphan_read, o);
}

/*
 * Orphans: jobs nops registered that git no longer declares but that
 * still run.  Listed, never stopped.  Unknown while a file fails to parse.
 */
void
detect_orphans(struct dcycle *dc)
{
	struct dorphan_walk ow = { dc, NULL, 0 };
	size_t		 i;
	int		 rc;

	dc->dc_orphan_pending = 1;
	if (dc->dc_incomplete)
		goto done;
	rc = store_deploy_registered(engine_store(), detect_orphan_one, &ow);
	for (i = 0; i + 1 < ow.ow_ngone; i += 2) {
		operation_forget(ow.ow_gone[i], ow.ow_gone[i + 1]);
		free(ow.ow_gone[i]);
		free(ow.ow_gone[i + 1]);
	}
	free(ow.ow_gone);
	if (rc == -1) {
		/* Unknown, not empty: the last known list stays. */
		log_warnx("orphans: %s", store_error(engine_store()));
		dc->dc_orphans_bad = 1;
	}
done:
	if (--dc->dc_orphan_pending == 0)
		detect_finish(dc);
}

#ifdef __GLIBC__
static void
detect_trim_cb(int fd, short ev, void *arg)
{
	malloc_trim(0);
}
#endif

/*
 * A cycle's trees are gone: hand their pages back, a second later.  The
 * trim walks the whole heap (4-40 ms measured under load), which at the
 * end of the cycle held back the answers that show its outcome.
 */
static void
detect_trim_later(void)
{
#ifdef __GLIBC__
	static struct event	*ev;
	struct timeval		 tv = { DETECT_TRIM_DELAY, 0 };

	if (ev == NULL && (ev = evtimer_new(nopsd_env->n_base, detect_trim_cb,
	    NULL)) == NULL)
		fatal("evtimer_new");
	if (!evtimer_pending(ev, NULL))
		evtimer_add(ev, &tv);
#endif
}

static void
detect_finish(struct dcycle *dc)
{
	struct engine	*e = engine_env;
	struct ejob	*ej;
	struct timespec	 end;

	ejobs_free(&e->e_jobs);
	e->e_jobs = dc->dc_jobs;
	/*
	 * The parsed and live jobs served this cycle's decisions; what the
	 * API and notifications need was taken from them.  Memory stays
	 * proportional to the files, not to jansson trees of them.
	 */
	/*
	 * Alike on purpose: web_doc_content_free (web_docs.c) lets go of
	 * another struct's fields the same way; nothing else is shared.
	 */
	RB_FOREACH(ej, ejobs, &e->e_jobs) {
		json_decref(ej->ej_live);
		ej->ej_live = NULL;
		json_decref(ej->ej_job);
		ej->ej_job = NULL;
		free(ej->ej_spec);
		ej->ej_spec = NULL;
		ej->ej_memo = NULL;
	}
	/* What the files' contents gave stays for the next cycle. */
	memo_sweep();
	file_errors_free(e->e_file_errors, e->e_nfile_errors);
	e->e_file_errors = dc->dc_errs;
	e->e_nfile_errors = dc->dc_nerrs;
	free(e->e_parse_outage);
	e->e_parse_outage = dc->dc_outage;
	if (!dc->dc_incomplete && !dc->dc_orphans_bad) {
		orphans_free(e->e_orphans, e->e_norphans);
		e->e_orphans = dc->dc_orphans;
		e->e_norphans = dc->dc_norphans;
		e->e_orphans_known = 1;
	} else {
		/* Keep the last known list; say it may be stale. */
		orphans_free(dc->dc_orphans, dc->dc_norphans);
		e->e_orphans_known = 0;
	}
	/* The snapshots read stay, for the next cycle to compare. */
	focus_end(dc);
	free(dc->dc_queue);

	clock_gettime(CLOCK_MONOTONIC, &end);
	e->e_last_detect_ms = (end.tv_sec - dc->dc_start.tv_sec) * 1e3 +
	    (end.tv_nsec - dc->dc_start.tv_nsec) / 1e6;
	e->e_last_requests = dc->dc_requests;
	e->e_last_planned = dc->dc_planned;
	e->e_last_skipped = dc->dc_skipped;
	e->e_last_full = dc->dc_full;
	e->e_last_full_why = dc->dc_full_why;
	e->e_last_files_reused = dc->dc_memo_hits;
	e->e_total_requests += dc->dc_requests;
	e->e_total_planned += dc->dc_planned;
	e->e_total_skipped += dc->dc_skipped;
	if (dc->dc_full)
		e->e_total_full++;
	e->e_last_detect = time(NULL);
	e->e_cycles++;
	survey_finish(dc);
	survey_free(dc);
	log_debug("detection cycle %llu: %.1f ms, %llu requests, %zu of %zu "
	    "files read before, %llu jobs planned, %llu unchanged, %llu "
	    "decided%s%s%s, %zu file errors",
	    (unsigned long long)e->e_cycles, e->e_last_detect_ms,
	    (unsigned long long)dc->dc_requests, dc->dc_memo_hits,
	    dc->dc_nparses, (unsigned long long)dc->dc_planned,
	    (unsigned long long)dc->dc_skipped,
	    (unsigned long long)dc->dc_decided,
	    e->e_last_focused ? "; focused" : "",
	    dc->dc_full ? "; full: " : "",
	    dc->dc_full ? dc->dc_full_why : "", dc->dc_nerrs);
	free(dc);
	cycle = NULL;
	e->e_detecting = 0;
	detect_trim_later();
	webpub_changed_now();
	hooks_cleanup();
	operation_cleanup();
	if (e->e_rerun)
		engine_detect_snapshot("queued while a cycle ran");
}
