/*
 * Operations: one-time commands of a managed job, declared in git (never
 * typed by a client).  Each is a parameterized batch job with
 * nops_role = "operation" and nops_operation_of naming the job it
 * serves, which lists it in nops_operations.  Detection freezes them
 * with each deployment (like hook revisions, and in its spec hash), so
 * the operations a job offers are those of its last successful
 * deployment: an old revision never offers one it cannot do.
 *
 * A run, through the generic action procedure as <job>.<operation>: the
 * input is checked against the operation's JSON Schema (master/schema.c)
 * before anything is dispatched; the run is written to the run log (who,
 * when; never the input) with its audit event operation.<job>.<op>; the
 * frozen spec is registered as its revision <job>-<8 hex>, dispatched
 * with the input as the payload (never in a command line or meta) and
 * the idempotency token op:<run>, and waited for at most
 * OPERATION_TIMEOUT seconds (then stopped).  The answer holds the exit
 * code (non-zero is a result, not an error) and the last 64 KiB of its
 * output (stdout, then stderr).  The log keeps the last
 * OPERATION_RUNS_MAX runs of each job, with the output redacted like a
 * hook's; a sensitive operation's output is in the answer only, as it
 * is, and never stored or logged.
 */
#include "config.h"

#include <sys/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_operation.h"
#include "nomad.h"
#include "deploy.h"
#include "store_deploy.h"
#include "engine.h"
#include "engine_detect.h"
#include "engine_apply.h"
#include "api.h"
#include "jsonb.h"
#include "redact.h"
#include "repo.h"
#include "leftbehind.h"
#include "webpub.h"
#include "action.h"
#include "schema.h"
#include "operation.h"

#define OPERATION_INFLIGHT_MAX	64
#define OPERATION_POLL_S	1
#define OPERATION_DISPATCHES	4	/* tries of a dispatch unanswered */

/* An operation that takes no input: an empty object. */
#define OPERATION_NO_INPUT \
	"{\"type\":\"object\",\"additionalProperties\":false}"

/* ---- detection: freezing ---- */

/*
 * Alike on purpose: op_row_free below frees a struct op_row's members the
 * same way; the members differ.
 */
static void
op_frozen_clear(struct op_frozen *of)
{
	free(of->of_name);
	free(of->of_job_id);
	free(of->of_group);
	free(of->of_spec);
	free(of->of_spec_hash);
	free(of->of_revision);
	free(of->of_schema);
	free(of->of_schema_path);
	free(of->of_description);
	free(of->of_confirm);
	free(of->of_error);
	memset(of, 0, sizeof(*of));
}

void
operation_frozen_free(struct ejob *ej)
{
	size_t	 i;

	for (i = 0; i < ej->ej_nops; i++)
		op_frozen_clear(&ej->ej_ops[i]);
	free(ej->ej_ops);
	ej->ej_ops = NULL;
	ej->ej_nops = 0;
}

static void
op_error(struct op_frozen *of, const char *fmt, ...)
    __attribute__((__format__(printf, 2, 3)));

/*
 * Alike on purpose: api_error_json (api.c) formats into a buffer the same
 * way; it builds a JSON answer, this keeps the text with the operation.
 */
static void
op_error(struct op_frozen *of, const char *fmt, ...)
{
	va_list	 ap;
	char	 buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(of->of_error);
	of->of_error = xstrdup(buf);
}

/*
 * An operation's schema in a file next to its job (meta
 * nops_input_schema_file, a path relative to the job file's directory):
 * from the snapshot the job was read from, so both are of one commit.
 * Errors say repository:path and, for JSON, line:column.
 */
static int
op_schema_file(struct op_frozen *of, const struct ejob *op, const char *rel)
{
	const struct repo_snap	*snap = op->ej_snap;
	const struct repo_file	*rf = NULL;
	const char		*slash;
	char			*path;
	json_t			*j;
	json_error_t		 je;
	size_t			 i;
	int			 rv = -1;

	slash = strrchr(op->ej_path, '/');
	path = xasprintf("%.*s%s%s", slash != NULL ?
	    (int)(slash - op->ej_path) : 0, op->ej_path, slash != NULL ?
	    "/" : "", rel);
	of->of_schema_path = xasprintf("%s:%s", op->ej_repo, path);
	for (i = 0; snap != NULL && i < snap->rs_nfiles; i++)
		if (snap->rs_files[i].rf_kind == GITW_FILE_SCHEMA &&
		    strcmp(snap->rs_files[i].rf_path, path) == 0)
			rf = &snap->rs_files[i];
	if (rf == NULL) {
		op_error(of, "%s: no such file in commit %.12s (the input "
		    "schema of operation %s, nops_input_schema_file of %s)",
		    of->of_schema_path, op->ej_commit != NULL ? op->ej_commit :
		    "?", op->ej_id, op->ej_path);
		goto out;
	}
	if (rf->rf_size > OPERATION_SCHEMA_MAX) {
		op_error(of, "%s: %zu bytes; an input schema is at most %d",
		    of->of_schema_path, rf->rf_size, OPERATION_SCHEMA_MAX);
		goto out;
	}
	if ((j = json_loadb((const char *)rf->rf_data, rf->rf_size,
	    JSON_REJECT_DUPLICATES, &je)) == NULL) {
		op_error(of, "%s:%d:%d: not JSON: %s", of->of_schema_path,
		    je.line, je.column, je.text);
		goto out;
	}
	if (!json_is_object(j) && !json_is_boolean(j)) {
		op_error(of, "%s: not a JSON Schema (an object or a boolean)",
		    of->of_schema_path);
		json_decref(j);
		goto out;
	}
	/* Kept compact, as an inline schema is. */
	if ((of->of_schema = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY)) ==
	    NULL)
		fatal("json_dumps");
	engine_sha256_hex((const char *)rf->rf_data, rf->rf_size,
	    of->of_schema_hash);
	json_decref(j);
	rv = 0;
out:
	free(path);
	return rv;
}

void
operation_freeze(struct ejob *ej, const char *jobid, struct ejob *op)
{
	struct op_frozen *of;
	const struct job_meta *jm;
	const char	*type, *name;
	char		 hash[ENGINE_HASHLEN + 1], rev[300], err[256];
	size_t		 n, l;
	json_t		*schema;

	ej->ej_ops = reallocarray(ej->ej_ops, ej->ej_nops + 1,
	    sizeof(*ej->ej_ops));
	if (ej->ej_ops == NULL)
		fatal("reallocarray");
	of = &ej->ej_ops[ej->ej_nops++];
	memset(of, 0, sizeof(*of));
	of->of_job_id = xstrdup(jobid);
	/* shop-backup-now serving shop is its operation backup-now */
	l = strlen(ej->ej_id);
	name = strncmp(jobid, ej->ej_id, l) == 0 && jobid[l] == '-' &&
	    jobid[l + 1] != '\0' ? jobid + l + 1 : jobid;
	of->of_name = xstrdup(name);
	n = strcspn(name, "-_");
	if ((of->of_group = strndup(name, n)) == NULL)
		fatal("strndup");

	if (strchr(name, '.') != NULL) {
		op_error(of, "operation %s: an operation's name has no '.' "
		    "(the action is <job>.<operation>)", name);
		goto bad;
	}
	if (op == NULL) {
		op_error(of, "operation %s: no such job in namespace %s in git",
		    jobid, ej->ej_ns);
		goto bad;
	}
	jm = &op->ej_meta;
	if (jm->jm_role != META_OPERATION) {
		op_error(of, "operation %s: the job is not an operation "
		    "(nops_role = \"operation\")", jobid);
		goto bad;
	}
	if (op->ej_error != NULL || jm->jm_errors > 0) {
		op_error(of, "operation %s is invalid: %s", jobid,
		    op->ej_error != NULL ? op->ej_error :
		    jm->jm_issues[0].mi_msg);
		goto bad;
	}
	if (jm->jm_op_of == NULL || strcmp(jm->jm_op_of, ej->ej_id) != 0) {
		op_error(of, "operation %s serves job %s (nops_operation_of), "
		    "not %s", jobid, jm->jm_op_of != NULL ? jm->jm_op_of : "?",
		    ej->ej_id);
		goto bad;
	}
	type = json_string_value(json_object_get(detect_job_json(op), "Type"));
	if (type == NULL || strcmp(type, "batch") != 0 ||
	    !json_is_object(json_object_get(detect_job_json(op),
	    "ParameterizedJob"))) {
		op_error(of, "operation %s must be a batch, parameterized job",
		    jobid);
		goto bad;
	}
	if (jm->jm_input_schema_file != NULL) {
		if (op_schema_file(of, op, jm->jm_input_schema_file) == -1)
			goto bad;
	} else
		of->of_schema = xstrdup(jm->jm_input_schema != NULL ?
		    jm->jm_input_schema : OPERATION_NO_INPUT);
	if (strlen(of->of_schema) > OPERATION_SCHEMA_MAX) {
		op_error(of, "operation %s: its input schema is %zu bytes; at "
		    "most %d", jobid, strlen(of->of_schema),
		    OPERATION_SCHEMA_MAX);
		goto bad;
	}
	schema = json_loads(of->of_schema, 0, NULL);
	if (schema == NULL || schema_usable(schema, err, sizeof(err)) == -1) {
		op_error(of, "operation %s: its input schema%s%s cannot be "
		    "used: %s", jobid, of->of_schema_path != NULL ? " " : "",
		    of->of_schema_path != NULL ? of->of_schema_path : "",
		    schema == NULL ? "not JSON" : err);
		json_decref(schema);
		goto bad;
	}
	json_decref(schema);
	of->of_sensitive = jm->jm_sensitive;
	of->of_description = xstrdup(jm->jm_description);
	of->of_confirm = xstrdup(jm->jm_confirm);
	of->of_spec = engine_json_canonical(detect_job_json(op));
	engine_sha256_hex(of->of_spec, strlen(of->of_spec), hash);
	of->of_spec_hash = xstrdup(hash);
	snprintf(rev, sizeof(rev), "%s-%.8s", jobid, hash);
	of->of_revision = xstrdup(rev);
	return;
bad:
	log_warnx("job %s/%s: %s", ej->ej_ns, ej->ej_id, of->of_error);
}

char *
operation_hash_text(const struct ejob *ej)
{
	const struct op_frozen *of;
	char		*buf = NULL, *line;
	size_t		 i;

	buf = xasprintf("%s", "");
	for (i = 0; i < ej->ej_nops; i++) {
		of = &ej->ej_ops[i];
		line = xasprintf("%soperation %s %s %s %s\n", buf,
		    of->of_name, of->of_job_id, of->of_spec_hash != NULL ?
		    of->of_spec_hash : "-", of->of_error != NULL ?
		    of->of_error : "");
		free(buf);
		buf = line;
		/* A schema file is not in the job's spec: its hash is. */
		if (of->of_schema_path == NULL)
			continue;
		line = xasprintf("%sschema %s %s\n", buf,
		    of->of_schema_path, of->of_schema_hash);
		free(buf);
		buf = line;
	}
	return buf;
}

int
operation_store(struct store *s, int64_t id, const struct ejob *ej)
{
	const struct op_frozen *of;
	struct store_operation_def od;
	size_t		 i;

	for (i = 0; i < ej->ej_nops; i++) {
		of = &ej->ej_ops[i];
		od.od_name = of->of_name;
		od.od_job_id = of->of_job_id;
		od.od_group = of->of_group;
		od.od_spec = of->of_spec;
		od.od_spec_hash = of->of_spec_hash;
		od.od_revision = of->of_revision;
		od.od_schema = of->of_schema;
		od.od_sensitive = of->of_sensitive;
		od.od_description = of->of_description;
		od.od_confirm = of->of_confirm;
		od.od_error = of->of_error;
		if (store_operation_def_put(s, id, &od) == -1)
			return -1;
	}
	return 0;
}

/* ---- the frozen operations of a deployment ---- */

struct op_row {
	char		*or_name;
	char		*or_job_id;
	char		*or_group;
	char		*or_spec;
	char		*or_revision;
	char		*or_schema;
	int		 or_sensitive;
	char		*or_description;
	char		*or_confirm;
	char		*or_error;
};

static void
op_row_free(struct op_row *r)
{
	free(r->or_name);
	free(r->or_job_id);
	free(r->or_group);
	free(r->or_spec);
	free(r->or_revision);
	free(r->or_schema);
	free(r->or_description);
	free(r->or_confirm);
	free(r->or_error);
	memset(r, 0, sizeof(*r));
}

/* The rows op_rows() collects. */
struct op_rowset {
	struct op_row	*rs_rows;
	size_t		 rs_n;
};

static void
op_rows_add(const struct store_operation_def *od, void *arg)
{
	struct op_rowset *rs = arg;
	struct op_row	*r;

	rs->rs_rows = reallocarray(rs->rs_rows, rs->rs_n + 1,
	    sizeof(*rs->rs_rows));
	if (rs->rs_rows == NULL)
		fatal("reallocarray");
	r = &rs->rs_rows[rs->rs_n++];
	r->or_name = xstrdup(od->od_name);
	r->or_job_id = xstrdup(od->od_job_id);
	r->or_group = xstrdup(od->od_group);
	r->or_spec = xstrdup(od->od_spec);
	r->or_revision = xstrdup(od->od_revision);
	r->or_schema = xstrdup(od->od_schema);
	r->or_sensitive = od->od_sensitive;
	r->or_description = xstrdup(od->od_description);
	r->or_confirm = xstrdup(od->od_confirm);
	r->or_error = xstrdup(od->od_error);
}

/*
 * The operations of deployment id (name NULL: all, else that one), into
 * rows (*n of them; free with op_rows_free).  -1 on a store error.
 */
static int
op_rows(int64_t id, const char *name, struct op_row **rows, size_t *n)
{
	struct op_rowset rs = { NULL, 0 };
	int		 rc;

	rc = store_operation_defs(engine_store(), id, name, op_rows_add, &rs);
	*rows = rs.rs_rows;
	*n = rs.rs_n;
	return rc;
}

static void
op_rows_free(struct op_row *rows, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		op_row_free(&rows[i]);
	free(rows);
}

/* The operation's name in an action id <job>.<operation>, or NULL. */
static const char *
op_name(const struct action_ctx *ac)
{
	const char	*dot;
	size_t		 l = strlen(ac->ac_job);

	if (ac->ac_operation == NULL ||
	    (dot = strrchr(ac->ac_operation, '.')) == NULL ||
	    (size_t)(dot - ac->ac_operation) != l ||
	    strncmp(ac->ac_operation, ac->ac_job, l) != 0)
		return NULL;
	return dot + 1;
}

/* ---- the action list and its conditions ---- */

void
operation_conditions(struct action_ctx *ac)
{
	struct op_row	*rows;
	size_t		 n;
	const char	*name = op_name(ac);

	ac->ac_cond &= ~(ACOND_HAS_OPERATION | ACOND_OPERATIONS);
	ac->ac_cond |= ACOND_OPERATIONS;
	ac->ac_op_error[0] = '\0';
	if (name == NULL || ac->ac_last_ok == 0 ||
	    op_rows(ac->ac_last_ok, name, &rows, &n) == -1)
		return;
	if (n > 0) {
		ac->ac_cond |= ACOND_HAS_OPERATION;
		if (rows[0].or_error != NULL) {
			ac->ac_cond &= ~ACOND_OPERATIONS;
			strlcpy(ac->ac_op_error, rows[0].or_error,
			    sizeof(ac->ac_op_error));
		}
	}
	op_rows_free(rows, n);
}

void
operation_list(struct action_ctx *ac, const struct action_def *ad,
    json_t *list)
{
	struct action_def tmp;
	struct op_row	*rows;
	json_t		*o;
	char		 id[512], desc[512];
	size_t		 i, n;

	if (ac->ac_last_ok == 0 ||
	    op_rows(ac->ac_last_ok, NULL, &rows, &n) == -1)
		return;
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s.%s", ac->ac_job, rows[i].or_name);
		if (rows[i].or_description != NULL)
			snprintf(desc, sizeof(desc), "%s",
			    rows[i].or_description);
		else
			snprintf(desc, sizeof(desc), "Run %s (job %s) once%s",
			    rows[i].or_name, rows[i].or_job_id,
			    rows[i].or_sensitive ? "; its output is shown once "
			    "and never stored" : "");
		tmp = *ad;
		tmp.ad_id = id;
		tmp.ad_title = rows[i].or_name;
		tmp.ad_description = desc;
		tmp.ad_confirm = rows[i].or_confirm;
		tmp.ad_input = rows[i].or_schema;
		ac->ac_operation = id;
		o = action_json_row(&tmp, ac);
		ac->ac_operation = NULL;
		/* an invalid schema: the action says why, and has none */
		if (json_object_get(o, "input_schema") == NULL)
			json_object_set_new(o, "input_schema", json_object());
		json_object_set_new(o, "group", jsonb_str(rows[i].or_group));
		json_object_set_new(o, "sensitive",
		    json_boolean(rows[i].or_sensitive));
		json_array_append_new(list, o);
	}
	op_rows_free(rows, n);
}

/* ---- runs ---- */

struct oprun {
	int64_t		 r_id;
	char		*r_ns;
	char		*r_job;
	char		*r_name;
	char		*r_revision;
	json_t		*r_spec;
	char		*r_payload;	/* the input; wiped once dispatched */
	size_t		 r_payloadlen;
	json_t		*r_meta;
	char		 r_token[64];
	char		*r_child;
	char		*r_alloc;
	char		*r_task;
	char		*r_stdout;
	int		 r_sensitive;
	int		 r_exit;
	int		 r_attempts;
	time_t		 r_started;
	int		 r_timeout;
	struct event	*r_timer;
	void		(*r_next)(struct oprun *);
	struct api_later *r_later;
};

static struct oprun	*op_inflight[OPERATION_INFLIGHT_MAX];
static size_t		 op_ninflight;
/* Runs to find again after a restart wait for room in op_inflight. */
static int		 op_recover_more;

static int
op_running(int64_t id)
{
	size_t	 i;

	for (i = 0; i < op_ninflight; i++)
		if (op_inflight[i]->r_id == id)
			return 1;
	return 0;
}

/* A limit (1 to max) a test-hooks build may lower with variable env. */
int
operation_limit(const char *env, int max)
{
#ifdef NOPS_TEST_HOOKS
	const char	*t = getenv(env);
	const char	*errstr;
	long long	 v;

	if (t != NULL) {
		v = strtonum(t, 1, max, &errstr);
		if (errstr == NULL)
			return (int)v;
	}
#else
	(void)env;
#endif
	return max;
}

static int
op_timeout(void)
{
	return operation_limit("NOPS_TEST_OPERATION_TIMEOUT",
	    OPERATION_TIMEOUT);
}

static void
oprun_free(struct oprun *r)
{
	size_t	 i;

	for (i = 0; i < op_ninflight; i++)
		if (op_inflight[i] == r) {
			op_inflight[i] = op_inflight[--op_ninflight];
			break;
		}
	if (r->r_timer != NULL)
		event_free(r->r_timer);
	if (op_recover_more) {
		/* Room now: the next of those left to find again. */
		op_recover_more = 0;
		operation_recover();
	}
	/*
	 * Alike on purpose: repo_snap_free (repo.c) and hoststep_free
	 * (hoststep.c) free their own structs' members the same way; the
	 * members differ.
	 */
	if (r->r_payload != NULL)
		freezero(r->r_payload, r->r_payloadlen);
	if (r->r_stdout != NULL)
		freezero(r->r_stdout, strlen(r->r_stdout));
	json_decref(r->r_spec);
	json_decref(r->r_meta);
	free(r->r_ns);
	free(r->r_job);
	free(r->r_name);
	free(r->r_revision);
	free(r->r_child);
	free(r->r_alloc);
	free(r->r_task);
	free(r);
}

/*
 * ---- the run log ----
 *
 * operation_runs holds a job's runs (its namespace and job, instance "")
 * and a host's (hosts_ops.c, hosts_each.c: namespace "", job the plan's
 * repository, instance the host).  Both write and read it here.
 */

/* Save a new run (never its input) and its event; cap its scope's log. */
int64_t
operation_run_create(struct store *s, const struct oprun_new *n)
{
	int64_t		 id;
	char		 detail[64];

	if (store_begin(s) == -1)
		return -1;
	if ((id = store_operation_run_insert(s, n->on_deployment, n->on_ns,
	    n->on_job, n->on_instance, n->on_operation, n->on_actor,
	    n->on_sensitive)) == -1)
		goto fail;
	/* The last on_keep runs of the job (of the host) stay. */
	if (store_operation_run_trim(s, n->on_ns, n->on_job, n->on_instance,
	    n->on_keep) == -1)
		goto fail;
	snprintf(detail, sizeof(detail), "run %lld", (long long)id);
	if (n->on_event != NULL && store_event(s, n->on_actor, n->on_event,
	    n->on_target, detail) == -1)
		goto fail;
	if (store_commit(s) == -1)
		goto fail;
	return id;
fail:
	store_rollback(s);
	return -1;
}

/* A run ended: save it, a sensitive run's output never.  0 or -1. */
int
operation_run_end(struct store *s, int64_t id, const char *state,
    int exit_code, const char *output, const char *error, int sensitive)
{
	if (store_begin(s) == -1)
		return -1;
	if (store_operation_run_end(s, id, state, exit_code,
	    sensitive ? NULL : output, error) == -1 ||
	    store_commit(s) == -1) {
		store_rollback(s);
		return -1;
	}
	return 0;
}

static json_t *
op_time(int64_t t)
{
	return t == STORE_OPERATION_NULL ? json_null() :
	    api_time_json((time_t)t);
}

/*
 * A row of the run log as the API gives it: a job's run names its
 * namespace and job, a host's its repository and host.
 */
static json_t *
op_run_json(const struct store_operation_run *or)
{
	const char	*ns = or->or_ns;
	const char	*job = or->or_job;
	const char	*host = or->or_instance;
	const char	*op = or->or_operation;
	int		 hostrun = *ns == '\0';
	char		 action[512];
	json_t		*o;

	/*
	 * A job's run the store has as running is under way here, or is
	 * being looked for since a restart, or waits for room to be
	 * (operation_recover()): running, in every case.
	 */
	snprintf(action, sizeof(action), "%s.%s", hostrun ? host : job, op);
	o = jsonb_pack("{s:I,s:s,s:s,s:s,s:s,s:I,s:s,s:b,s:o,s:o,s:s}",
	    "id", (json_int_t)or->or_id,
	    hostrun ? "repository" : "namespace", hostrun ? job : ns,
	    hostrun ? "host" : "job", hostrun ? host : job,
	    "operation", op, "action", action,
	    "deployment", (json_int_t)or->or_deployment,
	    "actor", or->or_actor,
	    "sensitive", or->or_sensitive,
	    "started_at", op_time(or->or_started_at),
	    "ended_at", op_time(or->or_ended_at),
	    "state", or->or_state);
	json_object_set_new(o, "exit_code",
	    or->or_exit_code == STORE_OPERATION_NULL ? json_null() :
	    json_integer((int)or->or_exit_code));
	json_object_set_new(o, "output", jsonb_str(or->or_output));
	json_object_set_new(o, "error", jsonb_str(or->or_error));
	return o;
}

static void
op_run_read_cb(const struct store_operation_run *or, void *arg)
{
	json_t		**o = arg;

	*o = op_run_json(or);
}

/* Run id of namespace ns and job (NULL: any job), or NULL. */
json_t *
operation_run_read(struct store *s, int64_t id, const char *ns,
    const char *job)
{
	json_t		*o = NULL;

	(void)store_operation_run_get(s, id, ns, job, op_run_read_cb, &o);
	return o;
}

/* A page of the run log, as operation_runs_answer() fills it. */
struct op_run_page {
	json_t		*rp_items;
	int64_t		 rp_last;
	long long	 rp_limit;
	long long	 rp_n;
	int		 rp_more;
};

static int
op_run_page_add(const struct store_operation_run *or, void *arg)
{
	struct op_run_page *rp = arg;

	if (rp->rp_n++ == rp->rp_limit) {
		rp->rp_more = 1;
		return 1;
	}
	json_array_append_new(rp->rp_items, op_run_json(or));
	rp->rp_last = or->or_id;
	return 0;
}

/*
 * The answer to GET ...operations/runs[?limit=&cursor=]: the runs of job
 * in ns (of its host instance; NULL: all), newest first, a page.
 */
void
operation_runs_answer(struct store *s, struct api_req *req,
    struct api_resp *resp, const char *ns, const char *job,
    const char *instance)
{
	struct op_run_page rp;
	char		*limit_s, *cursor_s;
	const char	*errstr = NULL;
	long long	 limit = 50, cursor = 0;

	limit_s = api_query(req, "limit");
	cursor_s = api_query(req, "cursor");
	if (limit_s != NULL)
		limit = strtonum(limit_s, 1, OPERATION_RUNS_MAX, &errstr);
	if (errstr == NULL && cursor_s != NULL)
		cursor = strtonum(cursor_s, 1, INT64_MAX, &errstr);
	free(limit_s);
	free(cursor_s);
	if (errstr != NULL) {
		api_error(resp, 400, "bad_request", "limit (1 to %d) or "
		    "cursor is %s", OPERATION_RUNS_MAX, errstr);
		return;
	}
	memset(&rp, 0, sizeof(rp));
	rp.rp_items = json_array();
	rp.rp_limit = limit;
	if (store_operation_run_page(s, ns, job, instance, cursor, limit + 1,
	    op_run_page_add, &rp) == -1) {
		json_decref(rp.rp_items);
		api_error(resp, 500, "runtime_error", "the database: %s",
		    store_error(s));
		return;
	}
	resp->status = 200;
	resp->body = jsonb_pack("{s:o,s:o}", "items", rp.rp_items, "next",
	    rp.rp_more ? jsonb_printf("%lld", (long long)rp.rp_last) :
	    json_null());
}

/*
 * A run ended: save it (a sensitive run's output never), answer the
 * caller with it (a sensitive run's output in that answer only).
 */
static void
oprun_end(struct oprun *r, const char *state, int exit_code,
    const char *output, const char *error, int status)
{
	struct store	*s = engine_store();
	struct api_resp	 resp;
	json_t		*run;

	if (operation_run_end(s, r->r_id, state, exit_code, output, error,
	    r->r_sensitive) == -1)
		log_warnx("operation %s.%s run %lld: cannot save its end: %s",
		    r->r_job, r->r_name, (long long)r->r_id, store_error(s));
	if (exit_code >= 0)
		log_info("operation %s/%s.%s run %lld ended: exit code %d",
		    r->r_ns, r->r_job, r->r_name, (long long)r->r_id,
		    exit_code);
	else
		log_warnx("operation %s/%s.%s run %lld: %s: %s", r->r_ns,
		    r->r_job, r->r_name, (long long)r->r_id, state,
		    error != NULL ? error : "?");
	if (r->r_later != NULL) {
		memset(&resp, 0, sizeof(resp));
		if (status != 200)
			resp.body = api_error_json("runtime_error", "operation "
			    "%s.%s run %lld: %s", r->r_job, r->r_name,
			    (long long)r->r_id, error);
		else if ((run = operation_run_read(s, r->r_id, r->r_ns,
		    r->r_job)) != NULL) {
			if (r->r_sensitive)
				json_object_set_new(run, "output",
				    jsonb_str(output));
			resp.body = run;
		} else {
			status = 500;
			resp.body = api_error_json("runtime_error", "operation "
			    "run %lld: cannot read it back: %s",
			    (long long)r->r_id, store_error(s));
		}
		resp.status = status;
		api_later_answer(r->r_later, &resp);
		r->r_later = NULL;
	}
	webpub_changed();
	oprun_free(r);
}

static void
oprun_later(struct oprun *r, void (*next)(struct oprun *), int seconds)
{
	struct timeval	 tv = { seconds, 0 };

	r->r_next = next;
	evtimer_add(r->r_timer, &tv);
}

static void
oprun_timer(int fd, short what, void *arg)
{
	struct oprun	*r = arg;

	r->r_next(r);
}

static void	 oprun_dispatch(struct oprun *);
static void	 oprun_poll(struct oprun *);

static void
oprun_registered(struct nomad_result *res, void *arg)
{
	struct oprun	*r = arg;
	char		 err[512];

	if (!nomad_ok(res)) {
		snprintf(err, sizeof(err), "the command did not start: "
		    "registering its revision %s: %s", r->r_revision,
		    apply_err(res));
		oprun_end(r, "error", -1, NULL, err, 500);
		return;
	}
	/* A write of the revision: a record of it left behind goes. */
	leftbehind_clear(LB_OPERATION_REVISION, r->r_ns, r->r_revision);
	oprun_dispatch(r);
}

static void
oprun_dispatched(struct nomad_result *res, void *arg)
{
	struct oprun	*r = arg;
	const char	*child;
	char		 err[512];

	child = nomad_ok(res) ? json_string_value(json_object_get(res->nr_json,
	    "DispatchedJobID")) : NULL;
	if (child == NULL) {
		/* No answer: again with the token (never a second run). */
		if (apply_transient(res) && res->nr_status != 500 &&
		    ++r->r_attempts < OPERATION_DISPATCHES) {
			oprun_later(r, oprun_dispatch, r->r_attempts);
			return;
		}
		snprintf(err, sizeof(err), "the command did not start: "
		    "dispatching %s: %s", r->r_revision, apply_err(res));
		oprun_end(r, "error", -1, NULL, err, 500);
		return;
	}
	r->r_child = xstrdup(child);
	freezero(r->r_payload, r->r_payloadlen);
	r->r_payload = NULL;
	log_info("operation %s/%s.%s run %lld dispatched as %s", r->r_ns,
	    r->r_job, r->r_name, (long long)r->r_id, child);
	oprun_later(r, oprun_poll, OPERATION_POLL_S);
}

static void
oprun_dispatch(struct oprun *r)
{
	nomad_job_dispatch(r->r_ns, r->r_revision, r->r_payload,
	    r->r_payloadlen, r->r_meta, r->r_token, oprun_dispatched, r);
}

static void
oprun_stopped(struct nomad_result *res, void *arg)
{
	struct oprun	*r = arg;
	char		 err[256];

	snprintf(err, sizeof(err), "timed out after %ds; the run %s %s",
	    r->r_timeout, r->r_child, nomad_ok(res) ? "was stopped" :
	    "could not be stopped");
	oprun_end(r, "timed_out", -1, NULL, err, 200);
}

/* The output: stdout, then stderr, the last 64 KiB of the two. */
static void
oprun_stderr(struct nomad_result *res, void *arg)
{
	struct oprun	*r = arg;
	const char	*e = nomad_ok(res) && res->nr_body != NULL ?
			    res->nr_body : "";
	size_t		 elen = nomad_ok(res) ? res->nr_bodylen : 0, n;
	size_t		 olen = strlen(r->r_stdout);
	char		*all, *out, *tail;

	all = xasprintf("%s%s%.*s", r->r_stdout, elen == 0 ? "" :
	    olen > 0 && r->r_stdout[olen - 1] != '\n' ? "\n--- stderr ---\n" :
	    "--- stderr ---\n", (int)elen, e);
	n = strlen(all);
	tail = n > OPERATION_OUTPUT_MAX ? all + n - OPERATION_OUTPUT_MAX : all;
	/* sensitive: as it is, for the caller alone; else redacted */
	if (r->r_sensitive)
		out = xstrdup(tail);
	else if ((out = redact_text(tail, strlen(tail))) == NULL)
		out = xstrdup("");
	freezero(all, n);
	oprun_end(r, r->r_exit == 0 ? "succeeded" : "failed", r->r_exit, out,
	    NULL, 200);
	freezero(out, strlen(out));
}

static void
oprun_stdout(struct nomad_result *res, void *arg)
{
	struct oprun		*r = arg;
	struct nomad_args	 a;

	if (nomad_ok(res) && res->nr_body != NULL) {
		if ((r->r_stdout = strndup(res->nr_body, res->nr_bodylen)) ==
		    NULL)
			fatal("strndup");
	} else
		r->r_stdout = xstrdup("");
	memset(&a, 0, sizeof(a));
	a.na_ns = r->r_ns;
	a.na_id = r->r_alloc;
	a.na_task = r->r_task;
	a.na_tail = OPERATION_OUTPUT_MAX;
	a.na_flags = NOMAD_F_STDERR;
	nomad_call(NOMAD_OP_ALLOC_LOGS, &a, oprun_stderr, r);
}

static void
oprun_polled(struct nomad_result *res, void *arg)
{
	struct oprun		*r = arg;
	struct nomad_args	 a;
	json_t			*al, *last = NULL, *v;
	const char		*cs, *task = NULL;
	size_t			 i;
	int			 running = 0, ended = 0;

	if (nomad_ok(res))
		json_array_foreach(res->nr_json, i, al) {
			cs = json_string_value(json_object_get(al,
			    "ClientStatus"));
			if (cs == NULL)
				continue;
			if (strcmp(cs, "complete") == 0 ||
			    strcmp(cs, "failed") == 0 ||
			    strcmp(cs, "lost") == 0) {
				ended++;
				last = al;
			} else
				running++;
		}
	if (running > 0 || ended == 0) {
		if (time(NULL) - r->r_started >= r->r_timeout) {
			nomad_job_stop(r->r_ns, r->r_child, 0, oprun_stopped,
			    r);
			return;
		}
		oprun_later(r, oprun_poll, OPERATION_POLL_S);
		return;
	}
	r->r_exit = hooks_exit_code(last);
	cs = json_string_value(json_object_get(last, "ClientStatus"));
	if (r->r_exit < 0)
		r->r_exit = strcmp(cs, "complete") == 0 ? 0 : 1;
	json_object_foreach(json_object_get(last, "TaskStates"), task, v)
		break;
	if (task == NULL || json_string_value(json_object_get(last,
	    "ID")) == NULL) {
		r->r_stdout = xstrdup("");
		oprun_end(r, r->r_exit == 0 ? "succeeded" : "failed",
		    r->r_exit, "", NULL, 200);
		return;
	}
	r->r_alloc = xstrdup(json_string_value(json_object_get(last, "ID")));
	r->r_task = xstrdup(task);
	memset(&a, 0, sizeof(a));
	a.na_ns = r->r_ns;
	a.na_id = r->r_alloc;
	a.na_task = r->r_task;
	a.na_tail = OPERATION_OUTPUT_MAX;
	nomad_call(NOMAD_OP_ALLOC_LOGS, &a, oprun_stdout, r);
}

static void
oprun_poll(struct oprun *r)
{
	nomad_job_allocations(r->r_ns, r->r_child, oprun_polled, r);
}

/*
 * After a restart: the runs the store has as running were under way when
 * nopsd stopped.  Each is found again in Nomad by its dispatch token
 * (op:<run>): the children of its revision are listed and read in full
 * (a list stub has no token), newest first, until one carries it; then it
 * is waited on as if nopsd had never stopped, within the same timeout
 * from when it started.  Only a run Nomad has no trace of is lost: it
 * was never dispatched, or it ended and was garbage collected.  While
 * Nomad cannot be asked, it is asked again, and the run stays running.
 */
#define OPERATION_RECOVER_RETRY_MAX	30	/* s between tries, at most */

static void	 oprun_search(struct oprun *);

static void
oprun_search_again(struct oprun *r, const struct nomad_result *res)
{
	int	 wait;

	r->r_attempts++;
	wait = r->r_attempts < 5 ? 1 << r->r_attempts :
	    OPERATION_RECOVER_RETRY_MAX;
	if (wait > OPERATION_RECOVER_RETRY_MAX)
		wait = OPERATION_RECOVER_RETRY_MAX;
	log_warnx("operation %s/%s.%s run %lld: looking for it in Nomad: %s; "
	    "again in %d s", r->r_ns, r->r_job, r->r_name, (long long)r->r_id,
	    apply_err(res), wait);
	json_decref(r->r_meta);
	r->r_meta = NULL;
	oprun_later(r, oprun_search, wait);
}

static void	 oprun_search_next(struct oprun *);

static void
oprun_child_read(struct nomad_result *res, void *arg)
{
	struct oprun	*r = arg;
	const char	*id;

	/* A child gone meanwhile (garbage collected) is not ours to know. */
	if (!nomad_ok(res) && res->nr_status != 404) {
		oprun_search_again(r, res);
		return;
	}
	if ((id = nomad_child_of(res, r->r_token)) != NULL) {
		log_info("operation %s/%s.%s run %lld: found again after a "
		    "restart by its token %s: %s", r->r_ns, r->r_job,
		    r->r_name, (long long)r->r_id, r->r_token, id);
		json_decref(r->r_meta);
		r->r_meta = NULL;
		r->r_child = xstrdup(id);
		r->r_attempts = 0;
		oprun_poll(r);
		return;
	}
	oprun_search_next(r);
}

/* r_meta holds, while searching, the IDs of the children not read yet. */
static void
oprun_search_next(struct oprun *r)
{
	size_t	 n = json_array_size(r->r_meta);
	char	 err[512];

	if (n > 0) {
		const char *id = json_string_value(json_array_get(r->r_meta,
		    n - 1));
		char	*child = xstrdup(id);

		json_array_remove(r->r_meta, n - 1);
		nomad_job_read(r->r_ns, child, oprun_child_read, r);
		free(child);
		return;
	}
	json_decref(r->r_meta);
	r->r_meta = NULL;
	snprintf(err, sizeof(err), "lost: nopsd restarted while the run was "
	    "under way, and Nomad has no run of %s with its token %s (it was "
	    "never dispatched, or it ended and was garbage collected)",
	    r->r_revision, r->r_token);
	oprun_end(r, "lost", -1, NULL, err, 200);
}

static void
oprun_found(struct nomad_result *res, void *arg)
{
	struct oprun	*r = arg;
	json_t		*j;
	const char	*parent, *id;
	size_t		 i;

	if (!nomad_ok(res) || !json_is_array(res->nr_json)) {
		oprun_search_again(r, res);
		return;
	}
	/* Oldest first in the list: read from its end, the newest. */
	r->r_meta = json_array();
	json_array_foreach(res->nr_json, i, j) {
		parent = json_string_value(json_object_get(j, "ParentID"));
		id = json_string_value(json_object_get(j, "ID"));
		if (parent != NULL && id != NULL &&
		    strcmp(parent, r->r_revision) == 0)
			json_array_append_new(r->r_meta, jsonb_str(id));
	}
	oprun_search_next(r);
}

static void
oprun_search(struct oprun *r)
{
	char	 prefix[400];

	snprintf(prefix, sizeof(prefix), "%s/dispatch-", r->r_revision);
	nomad_jobs_list(r->r_ns, prefix, oprun_found, r);
}

static void
oprun_lost_now(int64_t id, const char *why)
{
	struct store	*s = engine_store();

	if (store_begin(s) == -1)
		goto fail;
	if (store_operation_run_lost(s, id, why) == 0 && store_commit(s) == 0)
		return;
fail:
	store_rollback(s);
	log_warnx("operation run %lld: cannot mark it lost: %s",
	    (long long)id, store_error(s));
}

/* The runs operation_recover() finds lost: no revision to look for. */
struct op_lost {
	int64_t		*ol_ids;
	size_t		 ol_n;
};

static int
op_recover_one(const struct store_operation_run *or, const char *rev,
    void *arg)
{
	struct op_lost	*ol = arg;
	struct oprun	*r;
	int64_t		*more;

	if (op_running(or->or_id))
		return 0;
	if (op_ninflight >= OPERATION_INFLIGHT_MAX) {
		/* Looked for when a run ends (oprun_free()). */
		op_recover_more = 1;
		return 1;
	}
	if (rev == NULL) {
		/* Its revision is gone from the store: unknowable. */
		if ((more = reallocarray(ol->ol_ids, ol->ol_n + 1,
		    sizeof(*ol->ol_ids))) == NULL)
			fatal("reallocarray");
		ol->ol_ids = more;
		ol->ol_ids[ol->ol_n++] = or->or_id;
		return 0;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->r_id = or->or_id;
	r->r_ns = xstrdup(or->or_ns);
	r->r_job = xstrdup(or->or_job);
	r->r_name = xstrdup(or->or_operation);
	r->r_sensitive = or->or_sensitive;
	r->r_started = (time_t)or->or_started_at;
	r->r_revision = xstrdup(rev);
	r->r_timeout = op_timeout();
	snprintf(r->r_token, sizeof(r->r_token), "op:%lld",
	    (long long)r->r_id);
	if ((r->r_timer = evtimer_new(nopsd_env->n_base, oprun_timer,
	    r)) == NULL)
		fatal("evtimer_new");
	op_inflight[op_ninflight++] = r;
	log_info("operation %s/%s.%s run %lld was under way at the "
	    "restart: looking for it in Nomad by its token %s",
	    r->r_ns, r->r_job, r->r_name, (long long)r->r_id, r->r_token);
	/* A moment: the nomadworker starts with us. */
	oprun_later(r, oprun_search, 1);
	return 0;
}

void
operation_recover(void)
{
	struct op_lost	 ol = { NULL, 0 };
	size_t		 i;

	if (store_operation_running(engine_store(), op_recover_one,
	    &ol) == -1 && ol.ol_n == 0) {
		log_warnx("operation runs under way at the restart: %s",
		    store_error(engine_store()));
		return;
	}
	for (i = 0; i < ol.ol_n; i++)
		oprun_lost_now(ol.ol_ids[i], "lost: nopsd restarted while the "
		    "run was under way, and its operation's revision is not in "
		    "the store, so it cannot be looked for in Nomad");
	free(ol.ol_ids);
}

/*
 * Dispatch meta: only the keys the operation declares (Nomad refuses
 * others), from facts of the run; never the input.
 */
static json_t *
op_meta(const json_t *spec, const struct oprun *r, const char *commit)
{
	char		 id[32];
	const char	*kv[] = { "nops_job", r->r_job,
	    "nops_namespace", r->r_ns,
	    "nops_operation", r->r_name, "nops_run", id,
	    commit != NULL ? "nops_commit" : NULL, commit, NULL };

	snprintf(id, sizeof(id), "%lld", (long long)r->r_id);
	return nomad_dispatch_meta(spec, kv);
}

/* Save the run (never its input) and its audit event; cap the log. */
static int64_t
op_run_create(struct action_ctx *ac, const char *name, int sensitive)
{
	struct oprun_new	 n;
	char			 action[512], target[512];

	snprintf(action, sizeof(action), "operation.%s.%s", ac->ac_job, name);
	snprintf(target, sizeof(target), "job/%s/%s", ac->ac_ns, ac->ac_job);
	memset(&n, 0, sizeof(n));
	n.on_deployment = ac->ac_last_ok;
	n.on_ns = ac->ac_ns;
	n.on_job = ac->ac_job;
	n.on_instance = "";
	n.on_operation = name;
	n.on_actor = ac->ac_req->ar_actor;
	n.on_sensitive = sensitive;
	n.on_keep = OPERATION_RUNS_MAX;
	n.on_event = action;
	n.on_target = target;
	return operation_run_create(engine_store(), &n);
}

/*
 * The input of an operation, checked against its schema and encoded as
 * the dispatch payload (the caller frees it with freezero()), or NULL
 * with the error answered.
 */
static char *
op_payload(struct action_ctx *ac, json_t *schema, json_t *input,
    struct api_resp *resp)
{
	char	 err[512], *payload;

	switch (schema_validate(schema, input, err, sizeof(err))) {
	case SCHEMA_VALID:
		break;
	case SCHEMA_INVALID:
		api_error(resp, 422, "invalid_configuration", "input of %s "
		    "does not agree with its schema: at %s", ac->ac_operation,
		    err);
		return NULL;
	default:
		api_error(resp, 422, "invalid_configuration", "job %s/%s: the "
		    "input schema of %s cannot be used: %s", ac->ac_ns,
		    ac->ac_job, ac->ac_operation, err);
		return NULL;
	}
	payload = json_dumps(input, JSON_COMPACT | JSON_SORT_KEYS);
	if (payload == NULL) {
		api_error(resp, 400, "bad_request", "the input cannot be "
		    "encoded");
		return NULL;
	}
	if (strlen(payload) > OPERATION_PAYLOAD_MAX) {
		api_error(resp, 422, "invalid_configuration", "the input of "
		    "%s is %zu bytes; a dispatch payload is at most %d",
		    ac->ac_operation, strlen(payload), OPERATION_PAYLOAD_MAX);
		freezero(payload, strlen(payload));
		return NULL;
	}
	return payload;
}

/*
 * Run id of operation row, saved, in memory: it owns spec from now and
 * takes *payload unless the job forbids one; its dispatch meta names the
 * deployed commit.
 */
static struct oprun *
op_run_new(struct action_ctx *ac, int64_t id, const char *name,
    const struct op_row *row, json_t *spec, char **payload)
{
	struct oprun	*r;
	struct deploy	 d;
	json_t		*pj;
	const char	*mode;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->r_id = id;
	r->r_ns = xstrdup(ac->ac_ns);
	r->r_job = xstrdup(ac->ac_job);
	r->r_name = xstrdup(name);
	r->r_revision = xstrdup(row->or_revision);
	r->r_sensitive = row->or_sensitive;
	r->r_started = time(NULL);
	r->r_timeout = op_timeout();
	snprintf(r->r_token, sizeof(r->r_token), "op:%lld",
	    (long long)r->r_id);
	/* Nomad refuses a payload the job forbids; the input is {} then. */
	pj = json_object_get(spec, "ParameterizedJob");
	mode = json_string_value(json_object_get(pj, "Payload"));
	if (mode == NULL || strcmp(mode, "forbidden") != 0) {
		r->r_payload = *payload;
		r->r_payloadlen = strlen(*payload);
		*payload = NULL;
	}
	if (store_deploy_load(engine_store(), ac->ac_last_ok, &d) == 0) {
		r->r_meta = op_meta(spec, r, d.d_commit);
		deploy_free(&d);
	} else
		r->r_meta = op_meta(spec, r, NULL);
	json_object_set_new(spec, "ID", jsonb_str(r->r_revision));
	json_object_set_new(spec, "Name", jsonb_str(r->r_revision));
	r->r_spec = spec;
	if ((r->r_timer = evtimer_new(nopsd_env->n_base, oprun_timer, r)) ==
	    NULL)
		fatal("evtimer_new");
	return r;
}

void
operation_action(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	struct op_row	*rows = NULL;
	struct oprun	*r;
	json_t		*schema = NULL, *spec = NULL;
	const char	*name = op_name(ac);
	char		*payload = NULL;
	size_t		 n = 0;
	int64_t		 id;

	if (name == NULL || op_rows(ac->ac_last_ok, name, &rows, &n) == -1 ||
	    n == 0) {
		api_error(resp, 404, "not_found", "job %s/%s has no operation "
		    "%s in its deployed revision", ac->ac_ns, ac->ac_job,
		    ac->ac_operation);
		goto out;
	}
	if (rows[0].or_error != NULL || (schema = json_loads(rows[0].or_schema,
	    0, NULL)) == NULL || (spec = json_loads(rows[0].or_spec, 0,
	    NULL)) == NULL) {
		api_error(resp, 422, "invalid_configuration", "job %s/%s: the "
		    "deployed revision cannot do %s: %s", ac->ac_ns,
		    ac->ac_job, ac->ac_operation, rows[0].or_error != NULL ?
		    rows[0].or_error : "its frozen spec does not parse");
		goto out;
	}
	if ((payload = op_payload(ac, schema, input, resp)) == NULL)
		goto out;
	if (op_ninflight >= OPERATION_INFLIGHT_MAX) {
		api_error(resp, 429, "queue_full", "%d operation runs are "
		    "under way; try again when one ends",
		    OPERATION_INFLIGHT_MAX);
		goto out;
	}
	if ((id = op_run_create(ac, name, rows[0].or_sensitive)) == -1) {
		api_error(resp, 500, "runtime_error", "the store refused the "
		    "run: %s", store_error(engine_store()));
		goto out;
	}
	r = op_run_new(ac, id, name, &rows[0], spec, &payload);
	spec = NULL;
	op_inflight[op_ninflight++] = r;
	r->r_later = api_later(ac->ac_req);
	log_info("operation %s/%s.%s run %lld started by %s", r->r_ns,
	    r->r_job, r->r_name, (long long)r->r_id, ac->ac_req->ar_actor);
	resp->status = API_DEFERRED;
	nomad_register(r->r_ns, r->r_revision, r->r_spec, 0, 0,
	    oprun_registered, r);
out:
	if (payload != NULL)
		freezero(payload, strlen(payload));
	json_decref(schema);
	json_decref(spec);
	op_rows_free(rows, n);
}

/*
 * Revisions no one needs: after each detection cycle, an operation
 * revision that was registered for a run (of the last week) is stopped
 * when it is no operation of its job's last successful deployment nor of
 * a deployment under way, and no run of it is under way (a stop of the
 * parent never touches a dispatched run, but a run is left alone all the
 * same).  A stop that fails is left behind (LB_OPERATION_REVISION).  The
 * next run of it registers it again.
 */
static struct leftbehind_clean op_clean = {
	LB_OPERATION_REVISION, "operation", "no deployment offers it and no "
	"run of it is under way", store_operation_revision_busy, 0
};

void
operation_cleanup(void)
{
	if (op_clean.lk_inflight > 0)
		return;
	(void)store_operation_idle_revisions(engine_store(),
	    time(NULL) - 7 * 86400, leftbehind_clean_one, &op_clean);
}

void
operation_forget(const char *ns, const char *job)
{
	struct store	*s = engine_store();
	int		 n;

	if (store_begin(s) == -1)
		return;
	if ((n = store_operation_run_forget(s, ns, job)) == -1)
		goto fail;
	if (store_commit(s) == -1)
		goto fail;
	if (n > 0)
		log_info("job %s/%s is gone from git and from Nomad: the run "
		    "log of its operations (%d runs) is deleted", ns, job, n);
	return;
fail:
	store_rollback(s);
	log_warnx("job %s/%s: cannot delete its operations' run log: %s", ns,
	    job, store_error(s));
}

/* ---- the run log's API ---- */

/* GET /api/v1/jobs/{namespace}/{job}/operations/runs */
static void
op_api_runs(struct api_req *req, struct api_resp *resp)
{
	operation_runs_answer(engine_store(), req, resp, req->ar_args[0],
	    req->ar_args[1], "");
}

/* GET /api/v1/jobs/{namespace}/{job}/operations/runs/{id} */
static void
op_api_run(struct api_req *req, struct api_resp *resp)
{
	const char	*errstr = NULL;
	json_t		*run;
	int64_t		 id;

	id = strtonum(req->ar_args[2], 1, INT64_MAX, &errstr);
	run = errstr == NULL ? operation_run_read(engine_store(), id,
	    req->ar_args[0], req->ar_args[1]) : NULL;
	if (run == NULL) {
		api_error(resp, 404, "not_found", "job %s/%s has no operation "
		    "run %s", req->ar_args[0], req->ar_args[1],
		    req->ar_args[2]);
		return;
	}
	resp->status = 200;
	resp->body = run;
}

/*
 * Alike on purpose: a route table like hosts_ops.c's and leftbehind.c's;
 * the rows are data api.c reads, only their layout repeats.
 */
const struct api_route operation_routes[] = {
	{ "GET", "/api/v1/jobs/*/*/operations/runs", 1, op_api_runs, CAP_READ,
	    API_NS_JOB },
	{ "GET", "/api/v1/jobs/*/*/operations/runs/*", 1, op_api_run,
	    CAP_READ, API_NS_JOB },
};
const size_t operation_nroutes = sizeof(operation_routes) /
    sizeof(operation_routes[0]);
