/*
 * The master's SQLite store: opening (with the checks that refuse a
 * database we must not touch), ordered migrations, transactions, the audit
 * log, backups and a cache of prepared statements.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/tree.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "log.h"
#include "text.h"
#include "store_priv.h"

struct store_stmt {
	RB_ENTRY(store_stmt)	 ss_entry;
	const char		*ss_sql;	/* the key: ss_buf,
						   or a lookup's */
	char			*ss_buf;
	sqlite3_stmt		*ss_stmt;
};
RB_HEAD(store_stmts, store_stmt);

struct store {
	sqlite3			*st_db;
	char			*st_path;
	struct store_stmts	 st_stmts;
	int			 st_memory;
	dev_t			 st_dev;	/* the file we opened */
	ino_t			 st_ino;
	int			 st_lost;	/* unlinked or replaced */
	char			 st_lostmsg[512];
	char			 st_lasterr[256];	/* a rolled-back
							   write's */
	int			 st_lazy;	/* in store_begin_lazy()'s
						   transaction */
	int			 st_normal;	/* synchronous is NORMAL:
						   left so */
	int			 st_accepted;	/* opened and migrated */
	uint64_t		 st_decide_gen;	/* store_decide_gen() */
	/* The integrity check after a clean stop, in a thread. */
	sqlite3			*st_bgdb;
	pthread_t		 st_bgthread;
	int			 st_bgstarted;
	atomic_int		 st_bgstate;	/* STORE_BG_* */
	char			 st_bgmsg[256];	/* set before the state */
};

#define STORE_BG_NONE		0	/* not started, or checked at open */
#define STORE_BG_RUNNING	1
#define STORE_BG_OK		2
#define STORE_BG_FAILED		3
#define STORE_BG_NICE		10
#define STORE_CLEAN_SUFFIX	"-clean"


/* Called after each commit (the master pushes what reads show). */
void	(*store_committed)(void);
void	(*store_lost)(const char *);
int	 store_fresh;

static int	 store_stmt_cmp(struct store_stmt *, struct store_stmt *);
/* libbsd leaves __unused undefined (a Linux header uses the name). */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define STORE_UNDEF_UNUSED
#endif
RB_GENERATE_STATIC(store_stmts, store_stmt, ss_entry, store_stmt_cmp)
#ifdef STORE_UNDEF_UNUSED
#undef __unused
#undef STORE_UNDEF_UNUSED
#endif

static void	 store_seterr(char *, size_t, const char *, ...)
		    __attribute__((__format__(printf, 3, 4)));
static int	 store_check_dir(const char *, char *, size_t);
static int	 store_check_file(const char *, char *, size_t);
static int	 store_pragma_int(sqlite3 *, const char *, int *);
static int	 store_quick_check(sqlite3 *, char *, size_t);
static int	 store_refuse_checks(struct store *, int, int *, int, char *,
		    size_t);
static int	 store_configure(struct store *, int, char *, size_t);
static int	 store_migrate(struct store *, const struct store_migration *,
		    int, int, char *, size_t);
static int	 store_exec_cached(struct store *, const char *, const char *);
static void	 store_lazy_end(struct store *);
static int	 store_sync_full(struct store *);
static int	 store_companions(const char *);
static int	 store_orphan_wal(const char *, char *, size_t);
static void	 store_unlitter(const char *, int);
static int	 store_clean_path(const char *, char *, size_t);
static int	 store_clean_matches(const char *);
static int	 store_bg_start(struct store *);
static void	*store_bg_thread(void *);
static void	 store_bg_stop(struct store *);

/*
 * Schema version 1, designed for the whole of DESIGN §3.  Times are unix
 * seconds.  A plan (hosts, §7) is a target with namespace '' and the
 * plan's name in job, so every per-target table keys on (namespace, job).
 */
static const char store_schema_v1[] =
	/*
	 * The audit log.  Paging by id needs no index of its own: id is the
	 * rowid.  AUTOINCREMENT so that an id is never reused after pruning
	 * (the API's cursors are ids).  Append-only: a trigger refuses
	 * updates.
	 */
	"CREATE TABLE events ("
	"	id		INTEGER PRIMARY KEY AUTOINCREMENT,"
	"	at		INTEGER NOT NULL,"
	"	actor		TEXT NOT NULL CHECK (actor <> ''),"
	"	action		TEXT NOT NULL CHECK (action <> ''),"
	"	target		TEXT,"
	"	detail		TEXT"
	");"
	"CREATE INDEX events_target ON events (target, id);"
	"CREATE TRIGGER events_append_only BEFORE UPDATE ON events"
	" BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;"

	/*
	 * Deployment states are rows, not a CHECK, so that a later
	 * migration adds one with an INSERT instead of a table rebuild.
	 * The terminal ones must match deployments_one_active below.
	 */
	"CREATE TABLE deployment_states ("
	"	name		TEXT PRIMARY KEY,"
	"	terminal	INTEGER NOT NULL CHECK (terminal IN (0, 1))"
	") WITHOUT ROWID;"
	"INSERT INTO deployment_states (name, terminal) VALUES"
	"	('pending_approval', 0), ('pre_hooks', 0), ('registering', 0),"
	"	('waiting_health', 0), ('awaiting_promotion', 0),"
	"	('post_hooks', 0), ('preflight', 0), ('deploying', 0),"
	"	('completed', 1), ('failed', 1), ('rejected', 1),"
	"	('superseded', 1);"

	/*
	 * A deployment: one change of one target, frozen at detection.
	 * AUTOINCREMENT: audit events name "deployment/<id>", so an id must
	 * never come back after a deployment is destroyed.
	 */
	"CREATE TABLE deployments ("
	"	id		INTEGER PRIMARY KEY AUTOINCREMENT,"
	"	kind		TEXT NOT NULL CHECK (kind IN ('job', 'plan')),"
	"	namespace	TEXT NOT NULL,"
	"	job		TEXT NOT NULL CHECK (job <> ''),"
	"	repository	TEXT NOT NULL,"
	"	commit_id	TEXT NOT NULL,"
	"	spec		TEXT NOT NULL,"	/* to register; never shown */
	"	diff		TEXT,"		/* redacted */
	"	spec_hash	TEXT NOT NULL,"	/* covers the hooks */
	"	cas_index	INTEGER,"	/* NULL: a new job */
	"	policy		TEXT NOT NULL"
	"			CHECK (policy IN ('auto', 'approval', 'none')),"
	"	state		TEXT NOT NULL"
	"			REFERENCES deployment_states (name),"
	"	reason		TEXT,"
	"	suspend		INTEGER NOT NULL DEFAULT 0"
	"			CHECK (suspend IN (0, 1)),"
	"	retry_of	INTEGER REFERENCES deployments (id)"
	"			ON DELETE SET NULL,"
	"	created_at	INTEGER NOT NULL,"
	"	updated_at	INTEGER NOT NULL,"
	"	approved_by	TEXT,"
	"	approved_at	INTEGER,"
	"	approved_hash	TEXT,"		/* the spec_hash approved */
	"	apply_started_at INTEGER,"
	"	timeout_at	INTEGER,"
	"	nomad_deployment_id TEXT,"
	"	eval_id		TEXT,"
	"	job_version	INTEGER,"	/* as registered */
	"	ended_at	INTEGER,"
	"	CHECK ((kind = 'job' AND namespace <> '') OR"
	"	    (kind = 'plan' AND namespace = ''))"
	");"
	"CREATE UNIQUE INDEX deployments_one_active ON deployments"
	"	(namespace, job) WHERE state NOT IN"
	"	('completed', 'failed', 'rejected', 'superseded');"
	"CREATE INDEX deployments_target ON deployments (namespace, job, id);"
	"CREATE INDEX deployments_state ON deployments (state, id);"
	"CREATE INDEX deployments_retry_of ON deployments (retry_of);"

	/* Hooks frozen at detection: the spec each revision registers. */
	"CREATE TABLE deployment_hooks ("
	"	deployment_id	INTEGER NOT NULL"
	"			REFERENCES deployments (id) ON DELETE CASCADE,"
	"	phase		TEXT NOT NULL CHECK (phase IN ('pre', 'post')),"
	"	position	INTEGER NOT NULL CHECK (position >= 0),"
	"	hook_id		TEXT NOT NULL,"
	"	spec		TEXT NOT NULL,"
	"	spec_hash	TEXT NOT NULL,"
	"	revision_job_id	TEXT NOT NULL,"	/* <hook>-<8 hex> */
	"	timeout		INTEGER,"	/* seconds; NULL: default */
	"	PRIMARY KEY (deployment_id, phase, position)"
	") WITHOUT ROWID;"
	"CREATE INDEX deployment_hooks_revision ON deployment_hooks"
	"	(revision_job_id);"

	/*
	 * A dispatch of a hook revision.  The token
	 * "<deployment>:<phase>:<position>" is unique, so a dispatch
	 * repeated after a crash finds its run.
	 */
	"CREATE TABLE hook_runs ("
	"	id		INTEGER PRIMARY KEY,"
	"	deployment_id	INTEGER NOT NULL,"
	"	phase		TEXT NOT NULL,"
	"	position	INTEGER NOT NULL,"
	"	idempotency_token TEXT NOT NULL UNIQUE,"
	"	dispatched_job_id TEXT,"
	"	state		TEXT NOT NULL DEFAULT 'pending' CHECK (state IN"
	"	    ('pending', 'dispatched', 'running', 'succeeded',"
	" 'failed')),"
	"	exit_code	INTEGER,"
	"	error		TEXT,"
	"	started_at	INTEGER,"
	"	ended_at	INTEGER,"
	"	FOREIGN KEY (deployment_id, phase, position) REFERENCES"
	"	    deployment_hooks (deployment_id, phase, position)"
	"	    ON DELETE CASCADE"
	");"
	"CREATE INDEX hook_runs_hook ON hook_runs"
	"	(deployment_id, phase, position);"

	/*
	 * Host steps of a plan deployment, one row per host, saved before
	 * each action.  Preflight tests use phase_index -1.
	 */
	"CREATE TABLE deployment_steps ("
	"	id		INTEGER PRIMARY KEY,"
	"	deployment_id	INTEGER NOT NULL"
	"			REFERENCES deployments (id) ON DELETE CASCADE,"
	"	phase_index	INTEGER NOT NULL CHECK (phase_index >= -1),"
	"	phase		TEXT NOT NULL,"
	"	position	INTEGER NOT NULL CHECK (position >= 0),"
	"	host		TEXT NOT NULL,"
	"	step		TEXT NOT NULL DEFAULT 'copy' CHECK (step IN"
	"	    ('preflight', 'copy', 'activate', 'check', 'record')),"
	"	goal		TEXT CHECK (goal IN"
	"	    ('switch', 'boot', 'test', 'dry-activate')),"
	"	system		TEXT,"		/* path or hash to activate */
	"	state		TEXT NOT NULL DEFAULT 'pending' CHECK (state IN"
	"	    ('pending', 'running', 'succeeded', 'failed', 'skipped')),"
	"	error		TEXT,"
	"	started_at	INTEGER,"
	"	ended_at	INTEGER,"
	"	UNIQUE (deployment_id, phase_index, position)"
	");"

	/*
	 * The operation run log (the last 100 per deployment are kept).
	 * The input is never stored; a sensitive run keeps no output.
	 */
	"CREATE TABLE operation_runs ("
	"	id		INTEGER PRIMARY KEY,"
	"	deployment_id	INTEGER NOT NULL"
	"			REFERENCES deployments (id) ON DELETE CASCADE,"
	"	operation	TEXT NOT NULL,"
	"	instance	TEXT NOT NULL DEFAULT ''," /* a host, or '' */
	"	actor		TEXT NOT NULL,"
	"	sensitive	INTEGER NOT NULL DEFAULT 0"
	"			CHECK (sensitive IN (0, 1)),"
	"	started_at	INTEGER NOT NULL,"
	"	ended_at	INTEGER,"
	"	exit_code	INTEGER,"
	"	output		TEXT,"			/* last 64 KiB */
	"	error		TEXT,"
	"	CHECK (sensitive = 0 OR output IS NULL)"
	");"
	"CREATE INDEX operation_runs_deployment ON operation_runs"
	"	(deployment_id, id);"

	/*
	 * Objects a cleanup step failed to remove.  No foreign key: the
	 * records outlive their deployment.
	 */
	"CREATE TABLE left_behind ("
	"	id		INTEGER PRIMARY KEY,"
	"	deployment_id	INTEGER NOT NULL,"
	"	kind		TEXT NOT NULL,"
	"	object		TEXT NOT NULL,"
	"	environment	TEXT NOT NULL DEFAULT ''," /* namespace, host */
	"	error		TEXT,"
	"	created_at	INTEGER NOT NULL"
	");"
	"CREATE INDEX left_behind_deployment ON left_behind"
	" (deployment_id, id);"
	"CREATE INDEX left_behind_object ON left_behind"
	"	(kind, environment, object);"

	/* A person's pause, or a closed sync window, per target. */
	"CREATE TABLE holds ("
	"	id		INTEGER PRIMARY KEY,"
	"	namespace	TEXT NOT NULL,"
	"	job		TEXT NOT NULL,"
	"	kind		TEXT NOT NULL"
	" CHECK (kind IN ('pause', 'window')),"
	"	who		TEXT NOT NULL,"
	"	reason		TEXT NOT NULL DEFAULT '',"
	"	created_at	INTEGER NOT NULL,"
	"	UNIQUE (namespace, job, kind)"
	");"

	/* Suspend is part of the desired state of a target (§6). */
	"CREATE TABLE suspends ("
	"	namespace	TEXT NOT NULL,"
	"	job		TEXT NOT NULL,"
	"	who		TEXT NOT NULL,"
	"	reason		TEXT NOT NULL DEFAULT '',"
	"	created_at	INTEGER NOT NULL,"
	"	PRIMARY KEY (namespace, job)"
	") WITHOUT ROWID;"

	/*
	 * Secrets are stored hashed.  A revoked token's name may be reused,
	 * hence the partial index.
	 */
	"CREATE TABLE api_tokens ("
	"	id		INTEGER PRIMARY KEY AUTOINCREMENT,"
	"	name		TEXT NOT NULL CHECK (name <> ''),"
	"	hash		TEXT NOT NULL UNIQUE,"
	"	policy		TEXT NOT NULL,"		/* policy name(s) */
	"	created_by	TEXT NOT NULL,"
	"	created_at	INTEGER NOT NULL,"
	"	expires_at	INTEGER,"
	"	last_used	INTEGER,"
	"	revoked_at	INTEGER"
	");"
	"CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (name)"
	"	WHERE revoked_at IS NULL;"

	"CREATE TABLE sessions ("
	"	id_hash		TEXT PRIMARY KEY,"
	"	user		TEXT NOT NULL,"
	"	groups		TEXT NOT NULL DEFAULT '[]',"	/* JSON array */
	"	csrf		TEXT NOT NULL,"
	"	created_at	INTEGER NOT NULL,"
	"	last_seen	INTEGER NOT NULL,"
	"	expires_at	INTEGER NOT NULL"
	") WITHOUT ROWID;"
	"CREATE INDEX sessions_expires ON sessions (expires_at);";

/*
 * Version 2: what the operator saw while a deployment ran outlives a
 * restart: the last health progress (the JSON the API shows) and each
 * hook run's output (its last 64 KiB, redacted).
 */
static const char store_schema_v2[] =
	"ALTER TABLE deployments ADD COLUMN health TEXT;"
	"ALTER TABLE hook_runs ADD COLUMN output TEXT;";

/*
 * Version 3: the git context of a deployment.  The commit's subject,
 * author and time; the job file's path and text at the commit (redacted:
 * env values and template bodies are never kept) with its vars file; the
 * commit it was compared with (the last completed deployment of the job)
 * and the change of the file since then, NULL when git did not change it.
 */
static const char store_schema_v3[] =
	"ALTER TABLE deployments ADD COLUMN commit_subject TEXT;"
	"ALTER TABLE deployments ADD COLUMN commit_author TEXT;"
	"ALTER TABLE deployments ADD COLUMN commit_time INTEGER;"
	"ALTER TABLE deployments ADD COLUMN path TEXT;"
	"ALTER TABLE deployments ADD COLUMN source TEXT;"
	"ALTER TABLE deployments ADD COLUMN vars_source TEXT;"
	"ALTER TABLE deployments ADD COLUMN base_commit TEXT;"
	"ALTER TABLE deployments ADD COLUMN git_change TEXT;";

/*
 * Version 4: operations frozen with a deployment, as its revision
 * declared them (an invalid one with why); the run log names the job it
 * ran for and the run's state.
 */
static const char store_schema_v4[] =
	"CREATE TABLE deployment_operations ("
	"	deployment_id	INTEGER NOT NULL"
	"			REFERENCES deployments (id) ON DELETE CASCADE,"
	"	name		TEXT NOT NULL,"
	"	job_id		TEXT NOT NULL,"		/* its job in git */
	"	grp		TEXT NOT NULL,"
	"	spec		TEXT,"			/* NULL when invalid */
	"	spec_hash	TEXT,"
	"	revision	TEXT,"			/* <job>-<8 hex> */
	"	input_schema	TEXT,"
	"	sensitive	INTEGER NOT NULL DEFAULT 0,"
	"	description	TEXT,"
	"	confirm		TEXT,"
	"	error		TEXT,"			/* why it cannot run */
	"	PRIMARY KEY (deployment_id, name)"
	") WITHOUT ROWID;"
	"ALTER TABLE operation_runs ADD COLUMN namespace TEXT NOT NULL"
	"	DEFAULT '';"
	"ALTER TABLE operation_runs ADD COLUMN job TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE operation_runs ADD COLUMN state TEXT NOT NULL"
	"	DEFAULT 'running';"
	"CREATE INDEX operation_runs_job ON operation_runs"
	"	(namespace, job, id);";

/*
 * Version 5: what each detection cycle asks of the deployments, without
 * reading a million ended ones every cycle.
 * - The orphan search wants, per job, the last deployment nops
 *   registered in Nomad (eval_id set): registered_jobs keeps it, one
 *   row per job, kept by triggers from the partial index of registered
 *   deployments (each change looks up the last one of its job alone).
 * - The hook revisions to clean up are those of deployments that ended
 *   in the last week: an index by state and end.
 */
/* The row of the job of a deployment's row (OLD or NEW), looked up again. */
#define STORE_REGISTERED_AGAIN(row)					\
    "	INSERT OR REPLACE INTO registered_jobs (namespace, job, last_id)" \
    "	    SELECT namespace, job, id FROM deployments"			\
    "	    WHERE namespace = " row ".namespace AND job = " row ".job AND" \
    "	    eval_id IS NOT NULL AND kind = 'job' ORDER BY id DESC LIMIT 1;"

static const char store_schema_v5[] =
	"CREATE INDEX deployments_registered ON deployments"
	"	(namespace, job, id) WHERE eval_id IS NOT NULL"
	" AND kind = 'job';"
	"CREATE INDEX deployments_ended ON deployments (state, ended_at);"
	"CREATE TABLE registered_jobs ("
	"	namespace	TEXT NOT NULL,"
	"	job		TEXT NOT NULL,"
	"	last_id		INTEGER NOT NULL,"
	"	PRIMARY KEY (namespace, job)"
	") WITHOUT ROWID;"
	"INSERT INTO registered_jobs (namespace, job, last_id)"
	"	SELECT namespace, job, max(id) FROM deployments"
	"	WHERE eval_id IS NOT NULL AND kind = 'job'"
	"	GROUP BY namespace, job;"
	/* A job's row again from the index: after any change to its rows. */
	"CREATE TRIGGER registered_jobs_insert AFTER INSERT ON deployments"
	"	WHEN NEW.eval_id IS NOT NULL AND NEW.kind = 'job' BEGIN"
	STORE_REGISTERED_AGAIN("NEW")
	"	END;"
	"CREATE TRIGGER registered_jobs_update AFTER UPDATE OF eval_id, kind,"
	"	namespace, job ON deployments"
	"	WHEN (OLD.eval_id IS NOT NULL) IS NOT"
	" (NEW.eval_id IS NOT NULL) OR"
	"	OLD.kind IS NOT NEW.kind OR"
	" OLD.namespace IS NOT NEW.namespace OR"
	"	OLD.job IS NOT NEW.job BEGIN"
	"	DELETE FROM registered_jobs WHERE namespace = OLD.namespace AND"
	"	    job = OLD.job;"
	STORE_REGISTERED_AGAIN("OLD")
	STORE_REGISTERED_AGAIN("NEW")
	"	END;"
	"CREATE TRIGGER registered_jobs_delete AFTER DELETE ON deployments"
	"	WHEN OLD.eval_id IS NOT NULL AND OLD.kind = 'job' BEGIN"
	"	DELETE FROM registered_jobs WHERE namespace = OLD.namespace AND"
	"	    job = OLD.job;"
	STORE_REGISTERED_AGAIN("OLD")
	"	END;";

/*
 * Version 6: a user's sessions by age, for the trim at each login
 * (store_auth_sessions_trim), which scanned the whole table.
 */
static const char store_schema_v6[] =
	"CREATE INDEX sessions_user ON sessions (user, created_at);";

/* Append only; never edit a step that has been released. */
static const struct store_migration store_migrations[] = {
	{ "initial schema", store_schema_v1, 0 },
	{ "health progress and hook output kept", store_schema_v2, 0 },
	{ "git context of a deployment", store_schema_v3, 0 },
	{ "operations frozen with deployments; run log by job", store_schema_v4,
	    0 },
	{ "the last registered deployment of each job; ended deployments "
	    "by end", store_schema_v5, 0 },
	{ "sessions by user", store_schema_v6, 0 },
};

static int
store_stmt_cmp(struct store_stmt *a, struct store_stmt *b)
{
	return (strcmp(a->ss_sql, b->ss_sql));
}

static void
store_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	text_vprintf(err, errlen, 0, fmt, ap);
	va_end(ap);
}

/*
 * Anyone who can write the directory can swap the database or plant its
 * -wal/-journal files, so a world-writable one (even sticky, like /tmp) is
 * refused.
 */
static int
store_check_dir(const char *path, char *err, size_t errlen)
{
	struct stat	 sb;
	char		*copy, *dir;
	int		 rv = -1;

	if ((copy = strdup(path)) == NULL) {
		store_seterr(err, errlen, "database %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	dir = dirname(copy);
	if (stat(dir, &sb) == -1)
		store_seterr(err, errlen, "database %s: directory %s: %s",
		    path, dir, strerror(errno));
	else if (!S_ISDIR(sb.st_mode))
		store_seterr(err, errlen, "database %s: %s is not a directory",
		    path, dir);
	else if (sb.st_mode & S_IWOTH)
		store_seterr(err, errlen, "database %s: directory %s is "
		    "world-writable: refusing to use it", path, dir);
	else
		rv = 0;
	free(copy);
	return (rv);
}

/*
 * A write-ahead log without its database: the database was deleted or
 * moved, and the log holds the last transactions of it.  Starting on an
 * empty database would silently lose them (and bring back deployments
 * they had moved on), so refuse, unless the operator said to start
 * afresh (nopsd -F): then the log is kept aside, renamed.
 */
static int
store_orphan_wal(const char *path, char *err, size_t errlen)
{
	struct stat	 sb;
	char		 wal[PATH_MAX], aside[PATH_MAX], shm[PATH_MAX];

	if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", path) >=
	    sizeof(wal) || lstat(wal, &sb) == -1)
		return (0);
	if (!store_fresh) {
		store_seterr(err, errlen, "database %s is missing but its "
		    "write-ahead log %s is there: the database was deleted or "
		    "moved while its last changes were in the log; put it "
		    "back, or start nopsd with -F to begin with an empty "
		    "database (the log is then kept as %s.orphan)", path, wal,
		    wal);
		return (-1);
	}
	if ((size_t)snprintf(aside, sizeof(aside), "%s.orphan", wal) >=
	    sizeof(aside)) {
		store_seterr(err, errlen, "database %s: path too long", path);
		return (-1);
	}
	if (rename(wal, aside) == -1) {
		store_seterr(err, errlen, "database %s: rename %s: %s", path,
		    wal, strerror(errno));
		return (-1);
	}
	if ((size_t)snprintf(shm, sizeof(shm), "%s-shm", path) <
	    sizeof(shm))
		(void)unlink(shm);
	log_warnx("database %s was missing: starting afresh (-F); its "
	    "write-ahead log is kept as %s", path, aside);
	return (0);
}

/*
 * An existing file must be ours and private to us; a missing one is
 * created here with mode 0600, since SQLite would create it 0644 and its
 * -wal and -shm files take the database file's mode.
 */
static int
store_check_file(const char *path, char *err, size_t errlen)
{
	struct stat	 sb;
	int		 fd;

	if (lstat(path, &sb) == -1) {
		if (errno != ENOENT) {
			store_seterr(err, errlen, "database %s: %s", path,
			    strerror(errno));
			return (-1);
		}
		if (store_orphan_wal(path, err, errlen) == -1)
			return (-1);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
		if (fd == -1) {
			store_seterr(err, errlen, "database %s: create: %s",
			    path, strerror(errno));
			return (-1);
		}
		(void)close(fd);
		return (0);
	}
	if (!S_ISREG(sb.st_mode)) {
		store_seterr(err, errlen, "database %s is not a regular file: "
		    "refusing to open", path);
		return (-1);
	}
	if (sb.st_uid != geteuid()) {
		store_seterr(err, errlen, "database %s is owned by uid %u, "
		    "not %u: refusing to open", path, (unsigned int)sb.st_uid,
		    (unsigned int)geteuid());
		return (-1);
	}
	if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
		store_seterr(err, errlen, "database %s is writable by group "
		    "or others: refusing to open", path);
		return (-1);
	}
	return (0);
}

#define STORE_HAD_WAL	0x01
#define STORE_HAD_SHM	0x02

/* Which of the database's -wal and -shm files exist. */
static int
store_companions(const char *path)
{
	struct stat	 sb;
	char		 p[PATH_MAX];
	int		 had = 0;

	if ((size_t)snprintf(p, sizeof(p), "%s-wal", path) < sizeof(p) &&
	    lstat(p, &sb) == 0)
		had |= STORE_HAD_WAL;
	if ((size_t)snprintf(p, sizeof(p), "%s-shm", path) < sizeof(p) &&
	    lstat(p, &sb) == 0)
		had |= STORE_HAD_SHM;
	return (had);
}

/*
 * Merely reading a WAL database creates its -wal and -shm files.  After a
 * refusal, remove those we caused: ones that did not exist before (so no
 * other connection was using them), the -wal only while empty.
 */
static void
store_unlitter(const char *path, int had)
{
	struct stat	 sb;
	char		 p[PATH_MAX];

	if (!(had & STORE_HAD_WAL) &&
	    (size_t)snprintf(p, sizeof(p), "%s-wal", path) < sizeof(p) &&
	    lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0)
		(void)unlink(p);
	if (!(had & STORE_HAD_SHM) &&
	    (size_t)snprintf(p, sizeof(p), "%s-shm", path) < sizeof(p) &&
	    lstat(p, &sb) == 0 && S_ISREG(sb.st_mode))
		(void)unlink(p);
}

/*
 * The clean-stop marker, <database>-clean: written after a close that
 * checkpointed the whole log into the file and removed it, it holds the
 * file's device, inode, size, mtime and ctime.  A start that finds it
 * matching the file exactly, and no write-ahead log, knows nothing wrote
 * the file since nopsd last closed it after checking it, and runs the
 * integrity check in a thread while it serves instead of before.  Any
 * change (a write, a copy put back, a touch: the ctime moves) or a crash
 * (no marker, or a log left) makes the check run at open.
 */
static int
store_clean_path(const char *path, char *p, size_t len)
{
	return ((size_t)snprintf(p, len, "%s" STORE_CLEAN_SUFFIX, path) <
	    len ? 0 : -1);
}

static void
store_clean_line(const struct stat *sb, char *buf, size_t len)
{
	(void)snprintf(buf, len, "nops-clean 1 %llu %llu %lld %lld %ld %lld "
	    "%ld\n", (unsigned long long)sb->st_dev,
	    (unsigned long long)sb->st_ino, (long long)sb->st_size,
	    (long long)sb->st_mtim.tv_sec, (long)sb->st_mtim.tv_nsec,
	    (long long)sb->st_ctim.tv_sec, (long)sb->st_ctim.tv_nsec);
}

/* 1 if path's marker describes the file as it is now. */
static int
store_clean_matches(const char *path)
{
	struct stat	 sb, msb;
	char		 p[PATH_MAX], want[160], got[160];
	ssize_t		 n;
	int		 fd;

	if (store_clean_path(path, p, sizeof(p)) == -1 ||
	    lstat(path, &sb) == -1 || !S_ISREG(sb.st_mode))
		return (0);
	if ((fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return (0);
	n = -1;
	/* Ours alone, like the database. */
	if (fstat(fd, &msb) == 0 && S_ISREG(msb.st_mode) &&
	    msb.st_uid == geteuid() && !(msb.st_mode & (S_IWGRP | S_IWOTH)))
		n = read(fd, got, sizeof(got) - 1);
	(void)close(fd);
	if (n <= 0)
		return (0);
	got[n] = '\0';
	store_clean_line(&sb, want, sizeof(want));
	return (strcmp(got, want) == 0);
}

int
store_clean_mark(const char *path)
{
	struct stat	 sb;
	char		 p[PATH_MAX], line[160];
	size_t		 len;
	int		 fd, rv = 0;

	if (store_clean_path(path, p, sizeof(p)) == -1 ||
	    lstat(path, &sb) == -1)
		return (-1);
	store_clean_line(&sb, line, sizeof(line));
	len = strlen(line);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1)
		return (-1);
	if (write(fd, line, len) != (ssize_t)len || fsync(fd) == -1)
		rv = -1;
	if (close(fd) == -1)
		rv = -1;
	if (rv == -1)
		(void)unlink(p);
	return (rv);
}

/*
 * The integrity check of a start after a clean stop, on a read-only
 * connection of its own, below the event loop's priority.  Its result
 * is taken by store_check(): a failure makes the store lost.
 */
static void *
store_bg_thread(void *arg)
{
	struct store	*st = arg;
	char		 msg[sizeof(st->st_bgmsg)];
	int		 rc;

	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), STORE_BG_NICE);
	rc = store_quick_check(st->st_bgdb, msg, sizeof(msg));
	(void)sqlite3_db_release_memory(st->st_bgdb);
	if (rc == -1 && sqlite3_errcode(st->st_bgdb) == SQLITE_INTERRUPT) {
		/* stopped by store_close: no verdict */
		atomic_store(&st->st_bgstate, STORE_BG_NONE);
		return (NULL);
	}
	(void)strlcpy(st->st_bgmsg, msg, sizeof(st->st_bgmsg));
	atomic_store(&st->st_bgstate, rc == 0 ? STORE_BG_OK :
	    STORE_BG_FAILED);
	return (NULL);
}

static int
store_bg_start(struct store *st)
{
	if (sqlite3_open_v2(st->st_path, &st->st_bgdb, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK ||
	    sqlite3_db_config(st->st_bgdb, SQLITE_DBCONFIG_DEFENSIVE, 1,
	    NULL) != SQLITE_OK ||
	    sqlite3_db_config(st->st_bgdb, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0,
	    NULL) != SQLITE_OK) {
		log_warnx("database %s: a connection for the integrity check: "
		    "%s", st->st_path, st->st_bgdb != NULL ?
		    sqlite3_errmsg(st->st_bgdb) : "out of memory");
		goto fail;
	}
	(void)sqlite3_busy_timeout(st->st_bgdb, STORE_BUSY_TIMEOUT_MS);
	atomic_store(&st->st_bgstate, STORE_BG_RUNNING);
	if ((errno = pthread_create(&st->st_bgthread, NULL, store_bg_thread,
	    st)) != 0) {
		log_warn("database %s: integrity check thread", st->st_path);
		atomic_store(&st->st_bgstate, STORE_BG_NONE);
		goto fail;
	}
	st->st_bgstarted = 1;
	return (0);
 fail:
	(void)sqlite3_close(st->st_bgdb);
	st->st_bgdb = NULL;
	return (-1);
}

static void
store_bg_stop(struct store *st)
{
	if (st->st_bgstarted) {
		if (atomic_load(&st->st_bgstate) == STORE_BG_RUNNING)
			sqlite3_interrupt(st->st_bgdb);
		(void)pthread_join(st->st_bgthread, NULL);
		st->st_bgstarted = 0;
	}
	if (st->st_bgdb != NULL) {
		(void)sqlite3_close(st->st_bgdb);
		st->st_bgdb = NULL;
	}
}

int
store_verify_pending(struct store *st)
{
	return (atomic_load(&st->st_bgstate) == STORE_BG_RUNNING);
}

/* Read an integer PRAGMA; returns the SQLite result code. */
static int
store_pragma_int(sqlite3 *db, const char *pragma, int *value)
{
	sqlite3_stmt	*stmt;
	char		 sql[64];
	int		 rc;

	(void)snprintf(sql, sizeof(sql), "PRAGMA %s", pragma);
	if ((rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL)) != SQLITE_OK)
		return (rc);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*value = sqlite3_column_int(stmt, 0);
		rc = SQLITE_OK;
	} else if (rc == SQLITE_OK || rc == SQLITE_DONE)
		rc = SQLITE_ERROR;	/* no row: nothing was read */
	(void)sqlite3_finalize(stmt);
	return (rc);
}

/*
 * PRAGMA quick_check: returns 0 if the database is sound, else -1 with the
 * first problem (or the error that stopped the check) in msg.
 */
static int
store_quick_check(sqlite3 *db, char *msg, size_t msglen)
{
	sqlite3_stmt	*stmt;
	const char	*row;
	int		 rc;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &stmt,
	    NULL) != SQLITE_OK) {
		(void)strlcpy(msg, sqlite3_errmsg(db), msglen);
		return (-1);
	}
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW) {
		(void)strlcpy(msg, sqlite3_errmsg(db), msglen);
		(void)sqlite3_finalize(stmt);
		return (-1);
	}
	row = (const char *)sqlite3_column_text(stmt, 0);
	(void)strlcpy(msg, row != NULL ? row : "(null)", msglen);
	rc = row != NULL && strcmp(row, "ok") == 0 ? 0 : -1;
	(void)sqlite3_finalize(stmt);
	return (rc);
}

/*
 * Everything that decides whether the file may be used, before anything is
 * written to it.  Only reads: a refused file keeps its bytes.
 */
static int
store_refuse_checks(struct store *st, int nmigs, int *version, int verify,
    char *err, size_t errlen)
{
	sqlite3		*db = st->st_db;
	const char	*path = st->st_path;
	char		 msg[256];
	int		 rc, appid, ntables = 0;

	rc = store_pragma_int(db, "user_version", version);
	if ((rc & 0xff) == SQLITE_NOTADB) {
		store_seterr(err, errlen, "database %s is not an SQLite "
		    "database (corrupt?): refusing to open", path);
		return (-1);
	}
	if ((rc & 0xff) == SQLITE_CORRUPT) {
		store_seterr(err, errlen, "database %s is corrupt (%s): "
		    "refusing to open", path, sqlite3_errmsg(db));
		return (-1);
	}
	if (rc != SQLITE_OK) {
		store_seterr(err, errlen, "database %s: cannot read it: %s: "
		    "refusing to open", path, sqlite3_errmsg(db));
		return (-1);
	}
	if (store_pragma_int(db, "application_id", &appid) != SQLITE_OK) {
		store_seterr(err, errlen, "database %s: cannot read it: %s: "
		    "refusing to open", path, sqlite3_errmsg(db));
		return (-1);
	}
	if (appid != 0 && (uint32_t)appid != STORE_APPLICATION_ID) {
		store_seterr(err, errlen, "database %s belongs to another "
		    "application (application_id 0x%08x): refusing to open",
		    path, (uint32_t)appid);
		return (-1);
	}
	if (*version < 0 || (*version > 0 && appid == 0)) {
		store_seterr(err, errlen, "database %s is not a nops database "
		    "(schema version %d, no application_id): refusing to open",
		    path, *version);
		return (-1);
	}
	if (*version > nmigs) {
		store_seterr(err, errlen, "database %s has schema version %d, "
		    "this nopsd knows up to %d: refusing to open (downgrade?)",
		    path, *version, nmigs);
		return (-1);
	}
	if (*version == 0) {
		/* Version 0 with tables is some other program's database. */
		sqlite3_stmt	*stmt;

		rc = sqlite3_prepare_v2(db,
		    "SELECT count(*) FROM sqlite_schema", -1, &stmt, NULL);
		if (rc == SQLITE_OK) {
			if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
				ntables = sqlite3_column_int(stmt, 0);
				rc = SQLITE_OK;
			}
			(void)sqlite3_finalize(stmt);
		}
		if (rc != SQLITE_OK) {
			store_seterr(err, errlen, "database %s: cannot read "
			    "it: %s: refusing to open", path,
			    sqlite3_errmsg(db));
			return (-1);
		}
		if (ntables != 0) {
			store_seterr(err, errlen, "database %s has tables but "
			    "no schema version: not a nops database, refusing "
			    "to open", path);
			return (-1);
		}
	}
	if (verify && store_quick_check(db, msg, sizeof(msg)) == -1) {
		store_seterr(err, errlen, "database %s failed its integrity "
		    "check (%s): refusing to open", path, msg);
		return (-1);
	}
	return (0);
}

/* The settings of every connection, once the file is accepted. */
static int
store_configure(struct store *st, int memory, char *err, size_t errlen)
{
	static const char *pragmas[] = {
		"PRAGMA synchronous = FULL",
		"PRAGMA foreign_keys = ON",
		/* specs may hold secrets (env values): wipe deleted rows */
		"PRAGMA secure_delete = ON",
		/*
		 * Sorts too big for the cache (an index built by a migration
		 * over a million rows) in memory: the master's sandbox lets
		 * it open no temporary file.
		 */
		"PRAGMA temp_store = MEMORY",
	};
	sqlite3_stmt	*stmt;
	const char	*mode;
	size_t		 i;
	int		 fk, ok;

	if (!memory) {
		if (sqlite3_prepare_v2(st->st_db, "PRAGMA journal_mode = WAL",
		    -1, &stmt, NULL) != SQLITE_OK)
			goto fail;
		ok = 0;
		if (sqlite3_step(stmt) == SQLITE_ROW) {
			mode = (const char *)sqlite3_column_text(stmt, 0);
			ok = mode != NULL && strcmp(mode, "wal") == 0;
		}
		(void)sqlite3_finalize(stmt);
		if (!ok) {
			store_seterr(err, errlen, "database %s: cannot switch "
			    "to WAL mode: %s", st->st_path,
			    sqlite3_errmsg(st->st_db));
			return (-1);
		}
	}
	for (i = 0; i < sizeof(pragmas) / sizeof(pragmas[0]); i++)
		if (sqlite3_exec(st->st_db, pragmas[i], NULL, NULL, NULL) !=
		    SQLITE_OK)
			goto fail;
	if (store_pragma_int(st->st_db, "foreign_keys", &fk) != SQLITE_OK)
		goto fail;
	if (fk != 1) {
		store_seterr(err, errlen, "database %s: this SQLite cannot "
		    "enforce foreign keys", st->st_path);
		return (-1);
	}
	return (0);
 fail:
	store_seterr(err, errlen, "database %s: setup: %s", st->st_path,
	    sqlite3_errmsg(st->st_db));
	return (-1);
}

/*
 * Apply migrations[from..n-1] in order, each in its own transaction
 * together with its user_version; stop at the first failure, which leaves
 * the database at the version before it.
 */
static int
store_migrate(struct store *st, const struct store_migration *migs, int n,
    int from, char *err, size_t errlen)
{
	sqlite3				*db = st->st_db;
	const struct store_migration	*m;
	sqlite3_stmt			*stmt;
	char				 sql[64], why[256];
	int				 v, cur, nofk;

	for (v = from; v < n; v++) {
		m = &migs[v];
		nofk = (m->sm_flags & STORE_MIGF_NOFK) != 0;
		why[0] = '\0';
		/* foreign_keys is a no-op inside a transaction: set it first */
		if (nofk && sqlite3_exec(db, "PRAGMA foreign_keys = OFF",
		    NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
		    SQLITE_OK)
			goto fail;
		if (store_pragma_int(db, "user_version", &cur) != SQLITE_OK)
			goto fail;
		if (cur != v) {
			(void)snprintf(why, sizeof(why), "schema version "
			    "changed to %d under us", cur);
			goto fail;
		}
		if (sqlite3_exec(db, m->sm_sql, NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
		if (sqlite3_get_autocommit(db)) {
			(void)snprintf(why, sizeof(why), "the step ended its "
			    "own transaction");
			goto fail;
		}
		if (v == 0) {
			(void)snprintf(sql, sizeof(sql),
			    "PRAGMA application_id = %d",
			    (int)STORE_APPLICATION_ID);
			if (sqlite3_exec(db, sql, NULL, NULL, NULL) !=
			    SQLITE_OK)
				goto fail;
		}
		if (nofk) {
			if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check",
			    -1, &stmt, NULL) != SQLITE_OK)
				goto fail;
			if (sqlite3_step(stmt) == SQLITE_ROW)
				(void)snprintf(why, sizeof(why), "it breaks a "
				    "foreign key of table %s",
				    sqlite3_column_text(stmt, 0));
			(void)sqlite3_finalize(stmt);
			if (why[0] != '\0')
				goto fail;
		}
		(void)snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		    v + 1);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
		if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
		if (nofk && sqlite3_exec(db, "PRAGMA foreign_keys = ON",
		    NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
		log_info("database %s: migrated to schema version %d (%s)",
		    st->st_path, v + 1, m->sm_name);
	}
	return (0);

 fail:
	if (why[0] == '\0')
		(void)strlcpy(why, sqlite3_errmsg(db), sizeof(why));
	if (!sqlite3_get_autocommit(db))
		(void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	(void)sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	store_seterr(err, errlen, "database %s: migration %d (%s) failed: %s; "
	    "schema stays at version %d", st->st_path, v + 1, m->sm_name, why,
	    v);
	return (-1);
}

struct store *
store_open(const char *path, char *err, size_t errlen)
{
	return (store_open_migrations(path, store_migrations,
	    sizeof(store_migrations) / sizeof(store_migrations[0]), err,
	    errlen));
}

/*
 * A row of a table that detection's decisions read was written (or is
 * being: a rolled-back write counts too).  SQLite calls this for tables
 * with a rowid only; the suspends table has none, and every change of a
 * suspend starts a full detection cycle itself (suspend.c).
 */
static void
store_update_cb(void *arg, int op, const char *db, const char *table,
    sqlite3_int64 rowid)
{
	struct store	*st = arg;

	if (strcmp(table, "deployments") == 0 || strcmp(table, "holds") == 0)
		st->st_decide_gen++;
}

uint64_t
store_decide_gen(struct store *st)
{
	return st->st_decide_gen;
}

/*
 * Open st's connection to path (or memory), hardened: 0, or -1 with why
 * in err (the caller closes st).
 */
static int
store_db_open(struct store *st, const char *path, int memory, char *err,
    size_t errlen)
{
	int	 flags;

	/* The file exists by now (created above): never let SQLite create */
	flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
	if (memory)
		flags |= SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY;
	else
		flags |= SQLITE_OPEN_NOFOLLOW;
	if (sqlite3_open_v2(path, &st->st_db, flags, NULL) != SQLITE_OK) {
		store_seterr(err, errlen, "database %s: open: %s", path,
		    st->st_db != NULL ? sqlite3_errmsg(st->st_db) :
		    "out of memory");
		return -1;
	}
	/*
	 * Defensive mode keeps SQL from corrupting the file on purpose;
	 * an untrusted schema cannot call functions with side effects; and
	 * closing a refused database must not checkpoint into it.
	 */
	if (sqlite3_db_config(st->st_db, SQLITE_DBCONFIG_DEFENSIVE, 1,
	    NULL) != SQLITE_OK ||
	    sqlite3_db_config(st->st_db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0,
	    NULL) != SQLITE_OK ||
	    sqlite3_db_config(st->st_db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
	    NULL) != SQLITE_OK) {
		store_seterr(err, errlen, "database %s: db_config: %s", path,
		    sqlite3_errmsg(st->st_db));
		return -1;
	}
	(void)sqlite3_busy_timeout(st->st_db, STORE_BUSY_TIMEOUT_MS);
	(void)sqlite3_update_hook(st->st_db, store_update_cb, st);
	return 0;
}

struct store *
store_open_migrations(const char *path, const struct store_migration *migs,
    size_t nmigs, char *err, size_t errlen)
{
	struct store	*st;
	char		 marker[PATH_MAX], msg[256];
	int		 memory, version, had = 0, clean = 0;

	store_seterr(err, errlen, "%s", "");
	if (path == NULL || *path == '\0') {
		store_seterr(err, errlen, "no database path");
		return (NULL);
	}
	if (nmigs == 0 || nmigs > INT_MAX) {
		store_seterr(err, errlen, "database %s: bad migration list",
		    path);
		return (NULL);
	}
	memory = strcmp(path, ":memory:") == 0;
	if (!memory && (store_check_dir(path, err, errlen) == -1 ||
	    store_check_file(path, err, errlen) == -1))
		return (NULL);

	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->st_path = strdup(path)) == NULL) {
		store_seterr(err, errlen, "database %s: %s", path,
		    strerror(errno));
		free(st);
		return (NULL);
	}
	RB_INIT(&st->st_stmts);
	if (!memory)
		had = store_companions(path);

	if (store_db_open(st, path, memory, err, errlen) == -1)
		goto refused;

	/* After a clean stop, nothing wrote the file: check it later. */
	if (!memory && !(had & STORE_HAD_WAL))
		clean = store_clean_matches(path);
	if (store_refuse_checks(st, (int)nmigs, &version, !clean, err,
	    errlen) == -1)
		goto refused;
	/* Accepted: from here on it is written, the marker must go first. */
	if (!memory && store_clean_path(path, marker, sizeof(marker)) == 0 &&
	    unlink(marker) == -1 && errno != ENOENT) {
		store_seterr(err, errlen, "database %s: unlink %s: %s", path,
		    marker, strerror(errno));
		goto refused;
	}
	(void)sqlite3_db_config(st->st_db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
	    0, NULL);
	if (store_configure(st, memory, err, errlen) == -1)
		goto fail;
	if (store_migrate(st, migs, (int)nmigs, version, err, errlen) == -1)
		goto fail;
	st->st_memory = memory;
	if (!memory) {
		struct stat	 sb;

		if (stat(path, &sb) == -1) {
			store_seterr(err, errlen, "database %s: %s", path,
			    strerror(errno));
			goto fail;
		}
		st->st_dev = sb.st_dev;
		st->st_ino = sb.st_ino;
	}
	if (clean && store_bg_start(st) == -1) {
		if (store_quick_check(st->st_db, msg, sizeof(msg)) == -1) {
			store_seterr(err, errlen, "database %s failed its "
			    "integrity check (%s)", path, msg);
			goto fail;
		}
	}
	st->st_accepted = 1;
	return (st);

 refused:
	/* nothing was written: leave the directory as we found it too */
	store_close(st);
	if (!memory)
		store_unlitter(path, had);
	return (NULL);
 fail:
	store_close(st);
	return (NULL);
}

void
store_close(struct store *st)
{
	struct store_stmt	*ss, *next;
	int			 mark;

	if (st == NULL)
		return;
	store_bg_stop(st);
	/*
	 * Clean: accepted, still ours, not found damaged, and the close
	 * below leaves no log.  A check stopped before its end gave no
	 * verdict: the next clean start runs it again in the thread.
	 */
	mark = st->st_accepted && !st->st_memory && !st->st_lost &&
	    !store_in_transaction(st) &&
	    atomic_load(&st->st_bgstate) != STORE_BG_FAILED;
	RB_FOREACH_SAFE(ss, store_stmts, &st->st_stmts, next) {
		RB_REMOVE(store_stmts, &st->st_stmts, ss);
		(void)sqlite3_finalize(ss->ss_stmt);
		free(ss->ss_buf);
		free(ss);
	}
	if (st->st_db != NULL && sqlite3_close(st->st_db) != SQLITE_OK) {
		log_warnx("store: close %s: %s", st->st_path,
		    sqlite3_errmsg(st->st_db));
		mark = 0;
	}
	if (mark && !(store_companions(st->st_path) & STORE_HAD_WAL) &&
	    store_clean_mark(st->st_path) == -1)
		log_warn("store: %s" STORE_CLEAN_SUFFIX, st->st_path);
	free(st->st_path);
	free(st);
}

int
store_schema_version(struct store *st)
{
	int	 v;

	if (store_pragma_int(st->st_db, "user_version", &v) != SQLITE_OK) {
		log_warnx("store: PRAGMA user_version: %s",
		    sqlite3_errmsg(st->st_db));
		return (-1);
	}
	return (v);
}

int
store_schema_latest(void)
{
	return ((int)(sizeof(store_migrations) / sizeof(store_migrations[0])));
}

sqlite3 *
store_db(struct store *st)
{
	return (st->st_db);
}

char *
store_col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char	*s = sqlite3_column_text(st, i);
	char			*d;

	if (s == NULL)
		return (NULL);
	if ((d = strdup((const char *)s)) == NULL)
		fatal("%s", __func__);
	return (d);
}

const char *
store_col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

int
store_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	/* SQLite binds NULL for a NULL pointer. */
	return sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

int64_t
store_col_int(sqlite3_stmt *st, int i, int64_t null_value)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return (null_value);
	return (sqlite3_column_int64(st, i));
}

int
store_done(sqlite3_stmt *st)
{
	int	 rc;

	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_walk_names_id(struct store *st, const char *sql, int64_t n,
    void (*cb)(const char *, const char *, int64_t, void *), void *arg)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if ((stmt = store_prepare(st, sql)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, n);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		cb(store_col_text(stmt, 0), store_col_text(stmt, 1),
		    sqlite3_column_int64(stmt, 2), arg);
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * A write about to run in autocommit while synchronous is still NORMAL
 * from a lazy transaction: FULL first.  Should that fail (it is logged)
 * the write still runs, and the next one tries again.
 */
static void
store_prepared_write(struct store *st, sqlite3_stmt *stmt)
{
	if (st->st_normal && !st->st_lazy && !sqlite3_stmt_readonly(stmt) &&
	    !store_in_transaction(st))
		(void)store_sync_full(st);
}

sqlite3_stmt *
store_prepare_job(struct store *st, const char *sql, const char *ns,
    const char *job)
{
	sqlite3_stmt	*stmt;

	if ((stmt = store_prepare(st, sql)) == NULL)
		return NULL;
	store_bind_text(stmt, 1, ns);
	store_bind_text(stmt, 2, job);
	return stmt;
}

int
store_done_changes(struct store *st, sqlite3_stmt *stmt)
{
	if (store_done(stmt) == -1)
		return -1;
	return sqlite3_changes(st->st_db);
}

sqlite3_stmt *
store_prepare(struct store *st, const char *sql)
{
	struct store_stmt	 key, *ss;
	const char		*tail;

	key.ss_sql = sql;
	if ((ss = RB_FIND(store_stmts, &st->st_stmts, &key)) != NULL) {
		/* reset returns the last step's error: not ours to report */
		(void)sqlite3_reset(ss->ss_stmt);
		(void)sqlite3_clear_bindings(ss->ss_stmt);
		store_prepared_write(st, ss->ss_stmt);
		return (ss->ss_stmt);
	}
	if ((ss = calloc(1, sizeof(*ss))) == NULL ||
	    (ss->ss_buf = strdup(sql)) == NULL) {
		log_warn("store: prepare \"%.60s\"", sql);
		free(ss);
		return (NULL);
	}
	ss->ss_sql = ss->ss_buf;
	if (sqlite3_prepare_v3(st->st_db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &ss->ss_stmt, &tail) != SQLITE_OK) {
		log_warnx("store: prepare \"%.60s\": %s", sql,
		    sqlite3_errmsg(st->st_db));
		goto fail;
	}
	tail += strspn(tail, " \t\n;");
	if (ss->ss_stmt == NULL || *tail != '\0') {
		/* the rest would be silently ignored */
		log_warnx("store: prepare \"%.60s\": not exactly one "
		    "statement", sql);
		goto fail;
	}
	RB_INSERT(store_stmts, &st->st_stmts, ss);
	store_prepared_write(st, ss->ss_stmt);
	return (ss->ss_stmt);

 fail:
	(void)sqlite3_finalize(ss->ss_stmt);
	free(ss->ss_buf);
	free(ss);
	return (NULL);
}

/* Run a cached statement that returns no rows; what names it in logs. */
static int
store_exec_cached(struct store *st, const char *sql, const char *what)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if ((stmt = store_prepare(st, sql)) == NULL)
		return (-1);
	rc = sqlite3_step(stmt);
	(void)sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: %s: %s", what, sqlite3_errmsg(st->st_db));
		return (-1);
	}
	return (0);
}

int
store_in_transaction(struct store *st)
{
	return (sqlite3_get_autocommit(st->st_db) == 0);
}

int
store_check(struct store *st)
{
	struct stat	 sb;
	int		 gone;

	if (st->st_lost)
		return (-1);
	if (atomic_load(&st->st_bgstate) == STORE_BG_FAILED) {
		st->st_lost = 1;
		snprintf(st->st_lostmsg, sizeof(st->st_lostmsg), "database %s "
		    "failed its integrity check (%s), run while nopsd served "
		    "after a clean stop: writes are refused", st->st_path,
		    st->st_bgmsg);
		log_warnx("FATAL: %s", st->st_lostmsg);
		if (store_lost != NULL)
			store_lost(st->st_lostmsg);
		return (-1);
	}
	if (st->st_memory)
		return (0);
	if (lstat(st->st_path, &sb) == -1)
		gone = errno == ENOENT || errno == ENOTDIR;
	else
		gone = sb.st_dev != st->st_dev || sb.st_ino != st->st_ino;
	if (!gone)
		return (0);
	st->st_lost = 1;
	snprintf(st->st_lostmsg, sizeof(st->st_lostmsg), "database %s was "
	    "%s while nopsd ran: writes are refused (they would go to a file "
	    "nobody will read)", st->st_path, lstat(st->st_path, &sb) == -1 ?
	    "deleted" : "replaced by another file");
	log_warnx("FATAL: %s", st->st_lostmsg);
	if (store_lost != NULL)
		store_lost(st->st_lostmsg);
	return (-1);
}

const char *
store_error(struct store *st)
{
	int	 rc;

	if (st == NULL)
		return ("no database is open");
	if (st->st_lost)
		return (st->st_lostmsg);
	rc = sqlite3_errcode(st->st_db);
	if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
		return (sqlite3_errmsg(st->st_db));
	if (st->st_lasterr[0] != '\0')
		return (st->st_lasterr);
	return ("an error of the database");
}

int
store_begin(struct store *st)
{
	if (store_in_transaction(st)) {
		log_warnx("store: begin: a transaction is already open");
		return (-1);
	}
	if (store_check(st) == -1)
		return (-1);
	if (st->st_normal && !st->st_lazy && store_sync_full(st) == -1)
		return (-1);
	return (store_exec_cached(st, "BEGIN IMMEDIATE", "begin"));
}

int
store_begin_lazy(struct store *st)
{
	if (store_in_transaction(st)) {
		log_warnx("store: begin: a transaction is already open");
		return (-1);
	}
	/*
	 * Left NORMAL afterwards (the pragma costs a parse each time): the
	 * next write that is not lazy sets FULL first (store_sync_full), so
	 * a burst of logins sets it once.
	 */
	if (!st->st_normal) {
		if (store_exec_cached(st, "PRAGMA synchronous = NORMAL",
		    "synchronous") == -1)
			return (-1);
		st->st_normal = 1;
	}
	st->st_lazy = 1;
	if (store_begin(st) == -1) {
		store_lazy_end(st);
		return (-1);
	}
	return (0);
}

/* The lazy transaction ended; synchronous stays NORMAL until a write. */
static void
store_lazy_end(struct store *st)
{
	st->st_lazy = 0;
}

/*
 * Back to the default every other write keeps: FULL, before a
 * transaction that is not lazy begins, or a write runs in autocommit.
 */
static int
store_sync_full(struct store *st)
{
	st->st_normal = 0;	/* before: the pragma is prepared here too */
	if (store_exec_cached(st, "PRAGMA synchronous = FULL",
	    "synchronous") == -1) {
		st->st_normal = 1;
		return (-1);
	}
	return (0);
}

int
store_commit(struct store *st)
{
	if (!store_in_transaction(st)) {
		log_warnx("store: commit: no transaction is open");
		return (-1);
	}
	/* Unlinked since BEGIN: this transaction must not look done. */
	if (store_check(st) == -1) {
		(void)store_rollback(st);
		return (-1);
	}
	if (store_exec_cached(st, "COMMIT", "commit") == 0) {
		st->st_lasterr[0] = '\0';
		store_lazy_end(st);
		if (store_committed != NULL)
			store_committed();
		return (0);
	}
	/* A failed COMMIT may leave the transaction open: end it. */
	if (store_in_transaction(st))
		(void)store_rollback(st);
	store_lazy_end(st);
	return (-1);
}

/* Rolling back with no transaction open is a no-op, for error paths. */
int
store_rollback(struct store *st)
{
	int	 rc = sqlite3_errcode(st->st_db);

	/* Keep why the transaction failed: ROLLBACK clears it. */
	if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
		strlcpy(st->st_lasterr, sqlite3_errmsg(st->st_db),
		    sizeof(st->st_lasterr));
	if (!store_in_transaction(st)) {
		store_lazy_end(st);
		return (0);
	}
	rc = store_exec_cached(st, "ROLLBACK", "rollback");
	store_lazy_end(st);
	return (rc);
}

int64_t
store_event(struct store *st, const char *actor, const char *action,
    const char *target, const char *detail)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (!store_in_transaction(st)) {
		log_warnx("store: event %s: no transaction open (an event is "
		    "written with the change it records)",
		    action != NULL ? action : "(null)");
		return (-1);
	}
	if (actor == NULL || *actor == '\0' ||
	    strlen(actor) > STORE_EVENT_FIELD_MAX ||
	    action == NULL || *action == '\0' ||
	    strlen(action) > STORE_EVENT_FIELD_MAX ||
	    (target != NULL && strlen(target) > STORE_EVENT_FIELD_MAX) ||
	    (detail != NULL && strlen(detail) > STORE_EVENT_DETAIL_MAX)) {
		log_warnx("store: event %.64s: a field is empty or too long",
		    action != NULL ? action : "(null)");
		return (-1);
	}
	if ((stmt = store_prepare(st, "INSERT INTO events (at, actor, action, "
	    "target, detail) VALUES (?1, ?2, ?3, ?4, ?5)")) == NULL)
		return (-1);
	if (sqlite3_bind_int64(stmt, 1, (int64_t)time(NULL)) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 2, actor, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 3, action, -1, SQLITE_STATIC) !=
	    SQLITE_OK ||
	    sqlite3_bind_text(stmt, 4, target, -1, SQLITE_STATIC) !=
	    SQLITE_OK ||
	    sqlite3_bind_text(stmt, 5, detail, -1, SQLITE_STATIC) !=
	    SQLITE_OK) {
		log_warnx("store: event %s: bind: %s", action,
		    sqlite3_errmsg(st->st_db));
		return (-1);
	}
	rc = sqlite3_step(stmt);
	(void)sqlite3_reset(stmt);
	(void)sqlite3_clear_bindings(stmt);	/* no pointers left behind */
	if (rc != SQLITE_DONE) {
		log_warnx("store: event %s: insert: %s", action,
		    sqlite3_errmsg(st->st_db));
		return (-1);
	}
	return (sqlite3_last_insert_rowid(st->st_db));
}

/* The callback must not use the store: the statement is mid-walk. */
int
store_events_page(struct store *st, const char *target, int64_t before_id,
    int limit, int (*cb)(const struct store_event_row *, void *), void *arg)
{
	struct store_event_row	 row;
	sqlite3_stmt		*stmt;
	int			 rc, n = 0;

	if (before_id < 0 || limit < 1 || limit > STORE_PAGE_MAX) {
		log_warnx("store: events page: bad cursor %lld or limit %d",
		    (long long)before_id, limit);
		return (-1);
	}
	if (before_id == 0)
		before_id = INT64_MAX;
	if (target == NULL)
		stmt = store_prepare(st, "SELECT id, at, actor, action, "
		    "target, detail FROM events WHERE id < ?1 "
		    "ORDER BY id DESC LIMIT ?2");
	else
		stmt = store_prepare(st, "SELECT id, at, actor, action, "
		    "target, detail FROM events WHERE id < ?1 AND target = ?3 "
		    "ORDER BY id DESC LIMIT ?2");
	if (stmt == NULL)
		return (-1);
	if (sqlite3_bind_int64(stmt, 1, before_id) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 2, limit) != SQLITE_OK ||
	    (target != NULL && sqlite3_bind_text(stmt, 3, target, -1,
	    SQLITE_STATIC) != SQLITE_OK)) {
		log_warnx("store: events page: bind: %s",
		    sqlite3_errmsg(st->st_db));
		return (-1);
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		row.er_id = sqlite3_column_int64(stmt, 0);
		row.er_at = sqlite3_column_int64(stmt, 1);
		row.er_actor = (const char *)sqlite3_column_text(stmt, 2);
		row.er_action = (const char *)sqlite3_column_text(stmt, 3);
		row.er_target = (const char *)sqlite3_column_text(stmt, 4);
		row.er_detail = (const char *)sqlite3_column_text(stmt, 5);
		n++;
		if (cb(&row, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE) {
		log_warnx("store: events page: select: %s",
		    sqlite3_errmsg(st->st_db));
		n = -1;
	}
	(void)sqlite3_reset(stmt);
	(void)sqlite3_clear_bindings(stmt);
	return (n);
}

int
store_backup(struct store *st, const char *dest)
{
	sqlite3_backup	*bk;
	sqlite3		*bdb = NULL;
	char		 err[512];
	int		 fd, rc;

	if (store_in_transaction(st)) {
		log_warnx("store: backup to %s: a transaction is open", dest);
		return (-1);
	}
	if (store_check_dir(dest, err, sizeof(err)) == -1) {
		log_warnx("store: backup: %s", err);
		return (-1);
	}
	/* Created here so that it is private from the start; never reused */
	fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1) {
		log_warn("store: backup: create %s", dest);
		return (-1);
	}
	(void)close(fd);

	if (sqlite3_open_v2(dest, &bdb, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
		log_warnx("store: backup: open %s: %s", dest,
		    bdb != NULL ? sqlite3_errmsg(bdb) : "out of memory");
		goto fail;
	}
	if ((bk = sqlite3_backup_init(bdb, "main", st->st_db, "main")) ==
	    NULL) {
		log_warnx("store: backup to %s: init: %s", dest,
		    sqlite3_errmsg(bdb));
		goto fail;
	}
	rc = sqlite3_backup_step(bk, -1);
	if (sqlite3_backup_finish(bk) != SQLITE_OK || rc != SQLITE_DONE) {
		log_warnx("store: backup to %s: step: %s", dest,
		    sqlite3_errmsg(bdb));
		goto fail;
	}
	if (sqlite3_close(bdb) != SQLITE_OK) {
		log_warnx("store: backup to %s: close: %s", dest,
		    sqlite3_errmsg(bdb));
		goto fail;
	}
	return (0);

 fail:
	if (bdb != NULL)
		(void)sqlite3_close_v2(bdb);
	(void)unlink(dest);
	return (-1);
}
