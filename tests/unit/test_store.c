/*
 * Unit tests for master/store.c: migrations, refusal of databases we must
 * not touch, the audit events and their transaction rule, the schema's
 * constraints, paging and backups.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "log.h"
#include "store.h"
#include "store_priv.h"
#include "store_auth.h"
#include "test.h"

static char	 tmpdir[] = "/tmp/test_store.XXXXXX";

/* A file's bytes and times, to prove a refused database was not touched. */
struct snap {
	unsigned char	*sn_buf;
	size_t		 sn_len;
	struct timespec	 sn_mtim;
	ino_t		 sn_ino;
};

static char *
tpath(const char *name)
{
	static char	 buf[4][512];
	static int	 i;

	i = (i + 1) % 4;
	(void)snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return (buf[i]);
}

static int
exists(const char *path)
{
	struct stat	 sb;

	return (lstat(path, &sb) == 0);
}

/* The clean-stop marker of a database. */
static char *
marker(const char *path)
{
	static char	 p[600];

	(void)snprintf(p, sizeof(p), "%s-clean", path);
	return (p);
}

/* Wait for the integrity check of a clean start; 0 once it is done. */
static int
verify_wait(struct store *st)
{
	int	 i;

	for (i = 0; i < 3000 && store_verify_pending(st); i++)
		usleep(10000);
	return (store_verify_pending(st) ? -1 : 0);
}

/* Remove a database and its companions. */
static void
rmdb(const char *path)
{
	char	 p[600];

	(void)unlink(path);
	(void)snprintf(p, sizeof(p), "%s-wal", path);
	(void)unlink(p);
	(void)snprintf(p, sizeof(p), "%s-shm", path);
	(void)unlink(p);
	(void)snprintf(p, sizeof(p), "%s-journal", path);
	(void)unlink(p);
	(void)snprintf(p, sizeof(p), "%s-clean", path);
	(void)unlink(p);
}

static int
snap_take(const char *path, struct snap *sn)
{
	struct stat	 sb;
	FILE		*fp;

	memset(sn, 0, sizeof(*sn));
	if (stat(path, &sb) == -1 || (fp = fopen(path, "rb")) == NULL)
		return (-1);
	sn->sn_len = sb.st_size;
	sn->sn_mtim = sb.st_mtim;
	sn->sn_ino = sb.st_ino;
	if ((sn->sn_buf = malloc(sn->sn_len + 1)) == NULL ||
	    fread(sn->sn_buf, 1, sn->sn_len, fp) != sn->sn_len) {
		fclose(fp);
		return (-1);
	}
	fclose(fp);
	return (0);
}

/* 1 if path still has exactly the snapshot's bytes, inode and mtime. */
static int
snap_same(const char *path, struct snap *sn)
{
	struct snap	 now;
	int		 same;

	if (snap_take(path, &now) == -1)
		return (0);
	same = now.sn_len == sn->sn_len && now.sn_ino == sn->sn_ino &&
	    now.sn_mtim.tv_sec == sn->sn_mtim.tv_sec &&
	    now.sn_mtim.tv_nsec == sn->sn_mtim.tv_nsec &&
	    memcmp(now.sn_buf, sn->sn_buf, sn->sn_len) == 0;
	free(now.sn_buf);
	return (same);
}

/* 1 if the refused database got no -wal, -shm or -journal file. */
static int
no_litter(const char *path)
{
	static const char *sfx[] = { "-wal", "-shm", "-journal" };
	char		 p[600];
	size_t		 i;
	int		 clean = 1;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		(void)snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		if (exists(p)) {
			printf("# %s was left behind\n", p);
			clean = 0;
		}
	}
	return (clean);
}

static void
snap_free(struct snap *sn)
{
	free(sn->sn_buf);
	sn->sn_buf = NULL;
}

/* The first column of the first row of sql as an integer; -1 on error. */
static long long
qint(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*stmt;
	long long	 v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) {
		printf("# qint: %s: %s\n", sql, sqlite3_errmsg(db));
		return (-1);
	}
	if (sqlite3_step(stmt) == SQLITE_ROW)
		v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return (v);
}

static int
exec(sqlite3 *db, const char *sql)
{
	return (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1);
}

/* Raw access, bypassing the store, to prepare files for the store. */
static sqlite3 *
rawopen(const char *path)
{
	sqlite3	*db;

	if (sqlite3_open(path, &db) != SQLITE_OK) {
		sqlite3_close(db);
		return (NULL);
	}
	return (db);
}

static long long
rawint(const char *path, const char *sql)
{
	sqlite3		*db;
	long long	 v;

	if ((db = rawopen(path)) == NULL)
		return (-1);
	v = qint(db, sql);
	sqlite3_close(db);
	return (v);
}

static int
has_table(sqlite3 *db, const char *name)
{
	char	 sql[256];

	(void)snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_schema "
	    "WHERE type = 'table' AND name = '%s'", name);
	return (qint(db, sql) == 1);
}

static int
write_file(const char *path, const void *buf, size_t len)
{
	int	 fd;
	ssize_t	 n;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1)
		return (-1);
	n = write(fd, buf, len);
	close(fd);
	return (n == (ssize_t)len ? 0 : -1);
}

/* A small deployment row; returns the sqlite result code of the insert. */
static int
add_deployment(struct store *st, const char *ns, const char *job,
    const char *state)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_prepare(st, "INSERT INTO deployments (kind, namespace, "
	    "job, repository, commit_id, spec, spec_hash, policy, state, "
	    "created_at, updated_at) VALUES ('job', ?1, ?2, 'infra', "
	    "'abc123', '{}', 'h', 'approval', ?3, 1, 1)");
	if (stmt == NULL)
		return (SQLITE_ERROR);
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, job, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, state, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	return (rc);
}

static void
t_migrations_memory(void)
{
	static const char *tables[] = {
		"events", "deployments", "deployment_states",
		"deployment_hooks", "hook_runs", "deployment_steps",
		"operation_runs", "left_behind", "holds", "suspends",
		"api_tokens", "sessions",
	};
	struct store	*st;
	sqlite3		*db;
	char		 err[512];
	size_t		 i;

	TEST_BEGIN("migrations on :memory: reach the latest version");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		printf("# %s\n", err);
		TEST_END();
		return;
	}
	db = store_db(st);
	CHECK(store_schema_latest() >= 1);
	CHECK(store_schema_version(st) == store_schema_latest());
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (!has_table(db, tables[i])) {
			printf("# missing table %s\n", tables[i]);
			CHECK(0);
		}
	CHECK(qint(db, "PRAGMA application_id") == STORE_APPLICATION_ID);
	CHECK(qint(db, "PRAGMA foreign_keys") == 1);
	CHECK(qint(db, "PRAGMA synchronous") == 2);	/* FULL */
	CHECK(qint(db, "SELECT count(*) FROM sqlite_schema WHERE type = "
	    "'index' AND name = 'events_target'") == 1);
	CHECK(qint(db, "SELECT count(*) FROM sqlite_schema WHERE type = "
	    "'index' AND name = 'deployments_one_active'") == 1);
	CHECK(!store_in_transaction(st));
	store_close(st);
	TEST_END();
}

static void
t_file_settings(void)
{
	struct store	*st;
	struct stat	 sb;
	char		 err[512], *path = tpath("settings.db");
	mode_t		 old;

	TEST_BEGIN("file database: WAL, FULL, mode 0600 with a lax umask");
	old = umask(0);		/* the store must not depend on the umask */
	st = store_open(path, err, sizeof(err));
	umask(old);
	CHECK(st != NULL);
	if (st == NULL) {
		printf("# %s\n", err);
		TEST_END();
		return;
	}
	CHECK(sqlite3_db_readonly(store_db(st), "main") == 0);
	{
		sqlite3_stmt	*stmt;
		const char	*m;

		CHECK(sqlite3_prepare_v2(store_db(st), "PRAGMA journal_mode",
		    -1, &stmt, NULL) == SQLITE_OK);
		CHECK(sqlite3_step(stmt) == SQLITE_ROW);
		m = (const char *)sqlite3_column_text(stmt, 0);
		CHECK_STR(m, "wal");
		sqlite3_finalize(stmt);
	}
	CHECK(qint(store_db(st), "PRAGMA synchronous") == 2);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0600);
	CHECK(store_begin(st) == 0);
	CHECK(store_event(st, "system", "daemon.start", NULL, NULL) > 0);
	CHECK(store_commit(st) == 0);
	/* the WAL inherits the database file's mode */
	CHECK(stat(tpath("settings.db-wal"), &sb) == 0 &&
	    (sb.st_mode & 07777) == 0600);
	store_close(st);
	rmdb(path);
	TEST_END();

	TEST_BEGIN("a lazy transaction leaves NORMAL; the next write, FULL");
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	CHECK(store_begin_lazy(st) == 0);
	CHECK(qint(store_db(st), "PRAGMA synchronous") == 1);
	CHECK(store_event(st, "alice", "auth.login", "user/alice", NULL) > 0);
	CHECK(store_commit(st) == 0);
	/* Left so for the next lazy one; a read does not change it. */
	CHECK(qint(store_db(st), "PRAGMA synchronous") == 1);
	CHECK(store_begin_lazy(st) == 0);
	CHECK(store_rollback(st) == 0);
	CHECK(qint(store_db(st), "PRAGMA synchronous") == 1);
	/* A transaction that is not lazy begins at FULL. */
	CHECK(store_begin(st) == 0);
	CHECK(qint(store_db(st), "PRAGMA synchronous") == 2);
	CHECK(store_event(st, "system", "daemon.stop", NULL, NULL) > 0);
	CHECK(store_commit(st) == 0);
	CHECK(qint(store_db(st), "PRAGMA synchronous") == 2);
	/* So does a write in autocommit, prepared by the store. */
	CHECK(store_begin_lazy(st) == 0 && store_commit(st) == 0);
	CHECK(qint(store_db(st), "PRAGMA synchronous") == 1);
	CHECK(store_auth_session_seen(st, "none", 100) == 0);
	CHECK(qint(store_db(st), "PRAGMA synchronous") == 2);
	store_close(st);
	rmdb(path);
	TEST_END();
}

static void
t_reopen(void)
{
	struct store	*st;
	char		 err[512], *path = tpath("reopen.db");
	int		 ok;

	TEST_BEGIN("reopening a file database keeps its data, runs nothing");
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		printf("# %s\n", err);
		TEST_END();
		return;
	}
	CHECK(store_begin(st) == 0);
	CHECK(store_event(st, "root", "config.reload", "config", "first") > 0);
	CHECK(store_commit(st) == 0);
	store_close(st);

	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK(store_schema_version(st) == store_schema_latest());
		ok = qint(store_db(st), "SELECT count(*) FROM events WHERE "
		    "detail = 'first'") == 1;
		CHECK(ok);
		/* the seeded states were not inserted twice */
		CHECK(qint(store_db(st), "SELECT count(*) FROM "
		    "deployment_states WHERE name = 'completed'") == 1);
		store_close(st);
	} else
		printf("# %s\n", err);
	rmdb(path);
	TEST_END();
}

static void
t_newer_refused(void)
{
	struct store	*st;
	struct snap	 sn, wsn;
	sqlite3		*db;
	char		 err[512], want[768], *path = tpath("newer.db");

	TEST_BEGIN("a newer schema version is refused, file untouched");
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	store_close(st);
	db = rawopen(path);
	CHECK(db != NULL && exec(db, "PRAGMA user_version = 7") == 0);
	sqlite3_close(db);
	CHECK(!exists(tpath("newer.db-wal")));
	CHECK(snap_take(path, &sn) == 0);

	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	(void)snprintf(want, sizeof(want), "database %s has schema version 7, "
	    "this nopsd knows up to %d: refusing to open (downgrade?)", path,
	    store_schema_latest());
	CHECK_STR(err, want);
	CHECK(snap_same(path, &sn));
	CHECK(no_litter(path));
	CHECK(rawint(path, "PRAGMA user_version") == 7);
	snap_free(&sn);
	rmdb(path);

	/*
	 * A newer nopsd that stopped before a checkpoint: the version is only
	 * in the -wal.  Refusing must not checkpoint it into the file.
	 */
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	store_close(st);
	db = rawopen(path);
	CHECK(db != NULL);
	CHECK(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
	    NULL) == SQLITE_OK);
	CHECK(exec(db, "PRAGMA user_version = 9") == 0);
	sqlite3_close(db);
	CHECK(snap_take(path, &sn) == 0);
	CHECK(snap_take(tpath("newer.db-wal"), &wsn) == 0 && wsn.sn_len > 0);
	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "has schema version 9") != NULL);
	CHECK(snap_same(path, &sn));
	CHECK(snap_same(tpath("newer.db-wal"), &wsn));
	snap_free(&sn);
	snap_free(&wsn);
	rmdb(path);
	TEST_END();
}

static void
t_corrupt_random(void)
{
	struct store	*st;
	struct snap	 sn;
	unsigned char	 buf[16384];
	char		 err[512], *path = tpath("random.db");
	size_t		 i;
	uint32_t	 x = 2463534242U;

	TEST_BEGIN("a file of random bytes is refused and left untouched");
	for (i = 0; i < sizeof(buf); i++) {	/* xorshift: reproducible */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = x & 0xff;
	}
	CHECK(write_file(path, buf, sizeof(buf)) == 0);
	CHECK(snap_take(path, &sn) == 0);
	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "not an SQLite database") != NULL);
	CHECK(strstr(err, path) != NULL);
	CHECK(snap_same(path, &sn));
	CHECK(no_litter(path));
	snap_free(&sn);
	rmdb(path);
	TEST_END();
}

/* A real database of many pages, closed cleanly. */
static int
make_big_db(const char *path)
{
	struct store	*st;
	char		 err[512], detail[2048];
	int		 i, rv = 0;

	if ((st = store_open(path, err, sizeof(err))) == NULL) {
		printf("# %s\n", err);
		return (-1);
	}
	memset(detail, 'x', sizeof(detail) - 1);
	detail[sizeof(detail) - 1] = '\0';
	if (store_begin(st) == -1)
		rv = -1;
	for (i = 0; i < 200 && rv == 0; i++)
		if (store_event(st, "system", "test.fill", "fill", detail) ==
		    -1)
			rv = -1;
	if (rv == 0 && store_commit(st) == -1)
		rv = -1;
	store_close(st);
	return (rv);
}

/*
 * Overwrite a data page of a database made by make_big_db: the last
 * pages hold events, far from the schema.  0, or -1 (said why).
 */
static int
damage_page(const char *path)
{
	struct stat	 sb;
	unsigned char	 junk[4096];
	int		 fd, pgsz, rv = -1;

	pgsz = (int)rawint(path, "PRAGMA page_size");
	if (pgsz <= 0 || pgsz > (int)sizeof(junk) || stat(path, &sb) == -1 ||
	    sb.st_size <= 40 * pgsz) {
		printf("# %s: page size %d, too small to damage\n", path, pgsz);
		return (-1);
	}
	memset(junk, 0xa5, sizeof(junk));
	if ((fd = open(path, O_WRONLY)) == -1)
		return (-1);
	if (pwrite(fd, junk, pgsz, sb.st_size - 3 * pgsz) == pgsz)
		rv = 0;
	close(fd);
	return (rv);
}

static void
t_corrupt_truncated(void)
{
	struct store	*st;
	struct snap	 sn;
	struct stat	 sb;
	char		 err[512], *path = tpath("trunc.db");
	off_t		 sizes[2];
	int		 i;

	TEST_BEGIN("a truncated database is refused and left untouched");
	CHECK(make_big_db(path) == 0);
	CHECK(stat(path, &sb) == 0 && sb.st_size > 100000);
	sizes[0] = sb.st_size / 2;	/* pages lost */
	sizes[1] = 1000;		/* inside the first page */
	for (i = 0; i < 2; i++) {
		CHECK(truncate(path, sizes[i]) == 0);
		CHECK(snap_take(path, &sn) == 0);
		st = store_open(path, err, sizeof(err));
		CHECK(st == NULL);
		store_close(st);
		CHECK(strstr(err, "is corrupt") != NULL);
		CHECK(strstr(err, "refusing to open") != NULL);
		CHECK(snap_same(path, &sn));
		CHECK(no_litter(path));
		snap_free(&sn);
	}
	rmdb(path);
	TEST_END();
}

/*
 * A data page overwritten: the schema still reads, so only the
 * quick_check at open finds it.
 */
static void
t_corrupt_page(void)
{
	struct store	*st;
	struct snap	 sn;
	char		 err[512], *path = tpath("page.db");

	TEST_BEGIN("a database with a damaged page fails quick_check at open");
	CHECK(make_big_db(path) == 0);
	/* Closed cleanly: the marker is there, but the write changes mtime. */
	CHECK(exists(marker(path)));
	CHECK(damage_page(path) == 0);
	CHECK(snap_take(path, &sn) == 0);
	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "failed its integrity check") != NULL);
	CHECK(snap_same(path, &sn));
	CHECK(no_litter(path));
	snap_free(&sn);
	rmdb(path);
	TEST_END();
}

/*
 * A clean stop leaves a marker; the next open takes it, checks the file
 * in a thread, and the close after a sound check leaves it again.  A
 * file that changed, or a store that was not closed, has no valid one.
 */
static void
t_clean_marker(void)
{
	struct store	*st;
	char		 err[512], *path = tpath("clean.db");

	TEST_BEGIN("a clean stop's marker defers the check to a thread");
	CHECK(make_big_db(path) == 0);
	CHECK(exists(marker(path)));
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		printf("# %s\n", err);
		rmdb(path);
		TEST_END();
		return;
	}
	/* open: a crash from here on leaves no marker */
	CHECK(!exists(marker(path)));
	CHECK(verify_wait(st) == 0);
	CHECK(store_check(st) == 0);
	CHECK(store_begin(st) == 0);
	CHECK(store_event(st, "system", "test.after", NULL, NULL) > 0);
	CHECK(store_commit(st) == 0);
	store_close(st);
	CHECK(exists(marker(path)));
	CHECK(no_litter(path));

	/*
	 * Closed at once (the check may not have ended: no verdict is not
	 * a failure): the marker is left, the next start checks in the
	 * thread again.
	 */
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	store_close(st);
	CHECK(exists(marker(path)));
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	CHECK(verify_wait(st) == 0 && store_check(st) == 0);
	store_close(st);

	/* Touched since (mtime and ctime move): checked at open. */
	CHECK(exists(marker(path)));
	CHECK(utimensat(AT_FDCWD, path, NULL, 0) == 0);
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	CHECK(!store_verify_pending(st));
	store_close(st);
	rmdb(path);
	TEST_END();
}

/*
 * Damage the filesystem does not see (the marker is made again after
 * it, as if a disk had changed the bytes): the open is not refused,
 * but the thread's check finds it, the store is lost, writes are
 * refused with the reason, and no marker is left for the next start.
 */
static void
t_clean_marker_corrupt(void)
{
	struct store	*st;
	char		 err[512], *path = tpath("bgcheck.db");

	TEST_BEGIN("the thread's check after a clean stop finds a bad page");
	CHECK(make_big_db(path) == 0);
	CHECK(damage_page(path) == 0);
	CHECK(store_clean_mark(path) == 0);
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		printf("# %s\n", err);
		rmdb(path);
		TEST_END();
		return;
	}
	CHECK(verify_wait(st) == 0);
	CHECK(store_check(st) == -1);
	CHECK(strstr(store_error(st), "failed its integrity check") != NULL);
	CHECK(store_begin(st) == -1);
	store_close(st);
	CHECK(!exists(marker(path)));
	/* and the next start checks at open, and refuses it */
	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "failed its integrity check") != NULL);
	rmdb(path);
	TEST_END();
}

/* The two texts the orphan search can read are the same. */
static int
registered_same(sqlite3 *db)
{
	long long	 diff;

	diff = qint(db, "SELECT count(*) FROM ("
	    "SELECT namespace, job, last_id FROM registered_jobs EXCEPT "
	    "SELECT namespace, job, max(id) FROM deployments WHERE eval_id IS "
	    "NOT NULL AND kind = 'job' GROUP BY namespace, job)");
	diff += qint(db, "SELECT count(*) FROM ("
	    "SELECT namespace, job, max(id) FROM deployments WHERE eval_id IS "
	    "NOT NULL AND kind = 'job' GROUP BY namespace, job EXCEPT "
	    "SELECT namespace, job, last_id FROM registered_jobs)");
	return (diff == 0);
}

/*
 * registered_jobs, kept by triggers, says what the grouping of every
 * deployment says, after each of a random sequence of inserts, eval_id
 * set and cleared, renames and deletes (and plans, which it skips).
 */
static void
t_registered_jobs(void)
{
	struct store	*st;
	sqlite3		*db;
	char		 err[512], sql[512];
	unsigned int	 seed = 15;
	int		 i, op, bad = 0, nonempty = 0;

	TEST_BEGIN("registered_jobs follows the deployments it sums up");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	db = store_db(st);
	for (i = 0; i < 400 && !bad; i++) {
		op = rand_r(&seed) % 6;
		if (op <= 1)
			(void)snprintf(sql, sizeof(sql), "INSERT INTO deployments "
			    "(kind, namespace, job, repository, commit_id, spec, "
			    "spec_hash, policy, state, created_at, updated_at, "
			    "eval_id) VALUES ('job', 'ns%d', 'j%d', 'r', 'c', "
			    "'{}', 'h', 'auto', 'completed', 1, 1, %s)",
			    rand_r(&seed) % 2, rand_r(&seed) % 5,
			    op == 0 ? "'e'" : "NULL");
		else if (op == 2)
			(void)snprintf(sql, sizeof(sql), "UPDATE deployments SET "
			    "eval_id = %s WHERE id = (SELECT id FROM deployments "
			    "ORDER BY random() LIMIT 1)",
			    rand_r(&seed) % 3 ? "'e2'" : "NULL");
		else if (op == 3)
			(void)snprintf(sql, sizeof(sql), "DELETE FROM deployments "
			    "WHERE id = (SELECT id FROM deployments ORDER BY "
			    "random() LIMIT 1)");
		else if (op == 4)
			(void)snprintf(sql, sizeof(sql), "UPDATE deployments SET "
			    "job = 'j%d' WHERE id = (SELECT id FROM deployments "
			    "WHERE kind = 'job' ORDER BY random() LIMIT 1)",
			    rand_r(&seed) % 5);
		else
			(void)snprintf(sql, sizeof(sql), "INSERT INTO deployments "
			    "(kind, namespace, job, repository, commit_id, spec, "
			    "spec_hash, policy, state, created_at, updated_at, "
			    "eval_id) VALUES ('plan', '', 'j%d', 'r', 'c', '{}', "
			    "'h', 'auto', 'completed', 1, 1, 'e')",
			    rand_r(&seed) % 5);
		if (exec(db, sql) == -1) {
			printf("# %s: %s\n", sql, sqlite3_errmsg(db));
			bad = 1;
		}
		if (!registered_same(db)) {
			printf("# differs after: %s\n", sql);
			bad = 1;
		}
		if (qint(db, "SELECT count(*) FROM registered_jobs") > 3)
			nonempty = 1;
	}
	CHECK(!bad);
	CHECK(nonempty);
	store_close(st);
	TEST_END();
}

static void
t_foreign_refused(void)
{
	struct store	*st;
	struct snap	 sn;
	sqlite3		*db;
	char		 err[512], *path = tpath("foreign.db");

	TEST_BEGIN("another program's SQLite database is refused");
	db = rawopen(path);
	CHECK(db != NULL && exec(db, "CREATE TABLE mine (a)") == 0);
	sqlite3_close(db);
	CHECK(chmod(path, 0600) == 0);
	CHECK(snap_take(path, &sn) == 0);
	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "not a nops database") != NULL);
	CHECK(snap_same(path, &sn));
	CHECK(no_litter(path));
	snap_free(&sn);
	rmdb(path);

	db = rawopen(path);
	CHECK(db != NULL && exec(db, "PRAGMA application_id = 1234") == 0);
	sqlite3_close(db);
	CHECK(chmod(path, 0600) == 0);
	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "another application") != NULL);
	rmdb(path);
	TEST_END();
}

static void
t_unsafe_paths(void)
{
	struct store	*st;
	char		 err[512], *dir = tpath("open"), *path = tpath("open/x.db");
	char		*lax = tpath("lax.db");

	TEST_BEGIN("a world-writable directory or a lax file is refused");
	CHECK(mkdir(dir, 0700) == 0 && chmod(dir, 01777) == 0);
	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "world-writable") != NULL);
	CHECK(!exists(path));
	rmdir(dir);

	st = store_open(lax, err, sizeof(err));
	CHECK(st != NULL);
	store_close(st);
	CHECK(chmod(lax, 0666) == 0);
	st = store_open(lax, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "writable by group or others") != NULL);
	rmdb(lax);

	CHECK(symlink("/etc/passwd", lax) == 0);
	st = store_open(lax, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "not a regular file") != NULL);
	(void)unlink(lax);
	TEST_END();
}

static void
t_event_needs_tx(void)
{
	struct store	*st;
	char		 err[512], longs[STORE_EVENT_FIELD_MAX + 2];

	TEST_BEGIN("store_event only inside a transaction");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	CHECK(store_event(st, "root", "daemon.start", NULL, NULL) == -1);
	CHECK(qint(store_db(st), "SELECT count(*) FROM events") == 0);
	CHECK(store_begin(st) == 0);
	CHECK(store_in_transaction(st));
	CHECK(store_event(st, "root", "daemon.start", NULL, NULL) == 1);
	CHECK(store_event(st, "token:ci", "deployment.approve",
	    "deployment/12", "{\"hash\":\"ab\"}") == 2);
	/* empty and over-long fields are refused */
	CHECK(store_event(st, "", "x.y", NULL, NULL) == -1);
	CHECK(store_event(st, "root", NULL, NULL, NULL) == -1);
	memset(longs, 'a', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = '\0';
	CHECK(store_event(st, longs, "x.y", NULL, NULL) == -1);
	CHECK(store_event(st, "root", "x.y", longs, NULL) == -1);
	CHECK(store_commit(st) == 0);
	CHECK(!store_in_transaction(st));
	CHECK(qint(store_db(st), "SELECT count(*) FROM events") == 2);
	CHECK(qint(store_db(st), "SELECT count(*) FROM events WHERE "
	    "actor = 'token:ci' AND target = 'deployment/12' AND at > "
	    "1600000000") == 1);
	/* the audit is append-only */
	CHECK(exec(store_db(st), "UPDATE events SET actor = 'x'") == -1);
	store_close(st);
	TEST_END();
}

static void
t_tx_rules(void)
{
	struct store	*st;
	char		 err[512];

	TEST_BEGIN("transactions do not nest; commit needs one");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	CHECK(store_commit(st) == -1);
	CHECK(store_rollback(st) == 0);		/* nothing to undo */
	CHECK(store_begin(st) == 0);
	CHECK(store_begin(st) == -1);
	CHECK(store_in_transaction(st));	/* the first one is intact */
	CHECK(store_rollback(st) == 0);
	CHECK(!store_in_transaction(st));
	/* a failing commit rolls back: a deferred FK violation */
	CHECK(exec(store_db(st), "CREATE TABLE p (id INTEGER PRIMARY KEY);"
	    "CREATE TABLE c (p REFERENCES p (id) DEFERRABLE INITIALLY "
	    "DEFERRED)") == 0);
	CHECK(store_begin(st) == 0);
	CHECK(exec(store_db(st), "INSERT INTO c VALUES (42)") == 0);
	CHECK(store_commit(st) == -1);
	CHECK(!store_in_transaction(st));
	CHECK(qint(store_db(st), "SELECT count(*) FROM c") == 0);
	store_close(st);
	TEST_END();
}

static void
t_rollback(void)
{
	struct store	*st;
	char		 err[512];

	TEST_BEGIN("rollback removes the state change and its event");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	CHECK(store_begin(st) == 0);
	CHECK(add_deployment(st, "default", "web", "pending_approval") ==
	    SQLITE_DONE);
	CHECK(store_event(st, "system", "deployment.create", "deployment/1",
	    NULL) > 0);
	CHECK(qint(store_db(st), "SELECT count(*) FROM deployments") == 1);
	CHECK(store_rollback(st) == 0);
	CHECK(qint(store_db(st), "SELECT count(*) FROM deployments") == 0);
	CHECK(qint(store_db(st), "SELECT count(*) FROM events") == 0);
	store_close(st);
	TEST_END();
}

static void
t_one_active(void)
{
	struct store	*st;
	sqlite3_stmt	*stmt;
	sqlite3		*db;
	char		 err[512], job[64];
	int		 n = 0, terminal, rc1, rc2;

	TEST_BEGIN("one active deployment per job, another once terminal");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	db = store_db(st);
	CHECK(add_deployment(st, "default", "web", "pending_approval") ==
	    SQLITE_DONE);
	CHECK(add_deployment(st, "default", "web", "registering") ==
	    SQLITE_CONSTRAINT);
	CHECK(add_deployment(st, "default", "api", "registering") ==
	    SQLITE_DONE);
	CHECK(add_deployment(st, "other", "web", "registering") ==
	    SQLITE_DONE);
	CHECK(exec(db, "UPDATE deployments SET state = 'completed' WHERE "
	    "id = 1") == 0);
	CHECK(add_deployment(st, "default", "web", "pending_approval") ==
	    SQLITE_DONE);
	/* an unknown state is refused */
	CHECK(add_deployment(st, "default", "new", "bogus") ==
	    SQLITE_CONSTRAINT);
	/* kind and namespace agree */
	CHECK(exec(db, "INSERT INTO deployments (kind, namespace, job, "
	    "repository, commit_id, spec, spec_hash, policy, state, "
	    "created_at, updated_at) VALUES ('plan', 'default', 'hosts', "
	    "'r', 'c', '{}', 'h', 'auto', 'preflight', 1, 1)") == -1);

	/* every state's terminal flag agrees with the partial index */
	CHECK(sqlite3_prepare_v2(db, "SELECT name, terminal FROM "
	    "deployment_states", -1, &stmt, NULL) == SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(stmt, 0);

		terminal = sqlite3_column_int(stmt, 1);
		(void)snprintf(job, sizeof(job), "job-%s", name);
		rc1 = add_deployment(st, "default", job, name);
		rc2 = add_deployment(st, "default", job, name);
		if (rc1 != SQLITE_DONE || rc2 != (terminal ? SQLITE_DONE :
		    SQLITE_CONSTRAINT)) {
			printf("# state %s: %d %d\n", name, rc1, rc2);
			CHECK(0);
		}
		n++;
	}
	sqlite3_finalize(stmt);
	CHECK(n >= 12);
	CHECK(qint(db, "SELECT count(*) FROM deployment_states WHERE "
	    "terminal = 1") == 4);
	store_close(st);
	TEST_END();
}

static void
t_cascades(void)
{
	struct store	*st;
	sqlite3		*db;
	char		 err[512];

	TEST_BEGIN("hooks and runs go with their deployment; left_behind stays");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	db = store_db(st);
	CHECK(add_deployment(st, "default", "web", "pre_hooks") ==
	    SQLITE_DONE);
	CHECK(exec(db, "INSERT INTO deployment_hooks (deployment_id, phase, "
	    "position, hook_id, spec, spec_hash, revision_job_id) VALUES "
	    "(1, 'pre', 0, 'migrate', '{}', 'abcdef0123', "
	    "'migrate-abcdef01')") == 0);
	CHECK(exec(db, "INSERT INTO hook_runs (deployment_id, phase, "
	    "position, idempotency_token) VALUES (1, 'pre', 0, '1:pre:0')") ==
	    0);
	/* one run per token */
	CHECK(exec(db, "INSERT INTO hook_runs (deployment_id, phase, "
	    "position, idempotency_token) VALUES (1, 'pre', 0, '1:pre:0')") ==
	    -1);
	/* a run needs its frozen hook */
	CHECK(exec(db, "INSERT INTO hook_runs (deployment_id, phase, "
	    "position, idempotency_token) VALUES (1, 'post', 0, "
	    "'1:post:0')") == -1);
	CHECK(exec(db, "INSERT INTO left_behind (deployment_id, kind, object, "
	    "created_at) VALUES (1, 'hook_revision', 'migrate-abcdef01', 1)") ==
	    0);
	CHECK(exec(db, "INSERT INTO operation_runs (deployment_id, operation, "
	    "actor, sensitive, started_at, output) VALUES (1, 'x', 'root', 1, "
	    "1, 'secret output')") == -1);
	CHECK(exec(db, "DELETE FROM deployments WHERE id = 1") == 0);
	CHECK(qint(db, "SELECT count(*) FROM deployment_hooks") == 0);
	CHECK(qint(db, "SELECT count(*) FROM hook_runs") == 0);
	CHECK(qint(db, "SELECT count(*) FROM left_behind") == 1);
	/* AUTOINCREMENT: a destroyed deployment's id never comes back */
	CHECK(add_deployment(st, "default", "web", "pre_hooks") ==
	    SQLITE_DONE);
	CHECK(qint(db, "SELECT max(id) FROM deployments") == 2);
	store_close(st);
	TEST_END();
}

struct page {
	int64_t	 ids[STORE_PAGE_MAX];
	int	 n;
	int	 stop_after;	/* 0: never */
	int	 bad;
};

static int
page_cb(const struct store_event_row *row, void *arg)
{
	struct page	*pg = arg;

	if (row->er_actor == NULL || row->er_action == NULL ||
	    strcmp(row->er_action, "test.page") != 0 || row->er_at <= 0)
		pg->bad++;
	pg->ids[pg->n++] = row->er_id;
	return (pg->stop_after != 0 && pg->n >= pg->stop_after);
}

static void
t_paging(void)
{
	struct store	*st;
	struct page	 pg;
	char		 err[512], target[32];
	int		 i, n, ok;

	TEST_BEGIN("events page newest first by id, by target");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	CHECK(store_begin(st) == 0);
	for (i = 1; i <= 25; i++) {
		(void)snprintf(target, sizeof(target), "deployment/%d", i % 3);
		CHECK(store_event(st, "system", "test.page", target, NULL) ==
		    i);
	}
	CHECK(store_commit(st) == 0);

	memset(&pg, 0, sizeof(pg));
	CHECK(store_events_page(st, NULL, 0, 10, page_cb, &pg) == 10);
	ok = pg.n == 10;
	for (i = 0; ok && i < 10; i++)
		ok = pg.ids[i] == 25 - i;
	CHECK(ok);
	memset(&pg, 0, sizeof(pg));
	CHECK(store_events_page(st, NULL, 16, 10, page_cb, &pg) == 10);
	CHECK(pg.ids[0] == 15 && pg.ids[9] == 6);
	memset(&pg, 0, sizeof(pg));
	CHECK(store_events_page(st, NULL, 6, 10, page_cb, &pg) == 5);
	CHECK(pg.ids[0] == 5 && pg.ids[4] == 1);
	memset(&pg, 0, sizeof(pg));
	CHECK(store_events_page(st, NULL, 1, 10, page_cb, &pg) == 0);

	/* by target: ids 1, 4, 7, ... 25 are deployment/1 */
	memset(&pg, 0, sizeof(pg));
	n = store_events_page(st, "deployment/1", 0, 4, page_cb, &pg);
	CHECK(n == 4);
	CHECK(pg.ids[0] == 25 && pg.ids[1] == 22 && pg.ids[3] == 16);
	memset(&pg, 0, sizeof(pg));
	CHECK(store_events_page(st, "deployment/1", 16, 100, page_cb, &pg) ==
	    5);
	CHECK(pg.ids[4] == 1);

	/* the callback may stop the walk */
	memset(&pg, 0, sizeof(pg));
	pg.stop_after = 3;
	CHECK(store_events_page(st, NULL, 0, 10, page_cb, &pg) == 3);
	CHECK(pg.bad == 0);

	CHECK(store_events_page(st, NULL, 0, 0, page_cb, &pg) == -1);
	CHECK(store_events_page(st, NULL, 0, STORE_PAGE_MAX + 1, page_cb,
	    &pg) == -1);
	CHECK(store_events_page(st, NULL, -1, 10, page_cb, &pg) == -1);
	store_close(st);
	TEST_END();
}

static void
t_backup(void)
{
	struct store	*st, *bst;
	struct snap	 sn;
	struct stat	 sb;
	char		 err[512], *path = tpath("live.db");
	char		*dest = tpath("backup.db"), *dest2 = tpath("backup2.db");

	TEST_BEGIN("the backup API makes a database that opens the same");
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	CHECK(store_begin(st) == 0);
	CHECK(store_event(st, "root", "test.backup", "x", "1") > 0);
	CHECK(add_deployment(st, "default", "web", "completed") ==
	    SQLITE_DONE);
	/* not inside a transaction */
	CHECK(store_backup(st, dest) == -1);
	CHECK(!exists(dest));
	CHECK(store_commit(st) == 0);
	CHECK(store_backup(st, dest) == 0);
	CHECK(stat(dest, &sb) == 0 && (sb.st_mode & 07777) == 0600);

	/* an existing file is never overwritten */
	CHECK(snap_take(dest, &sn) == 0);
	CHECK(store_backup(st, dest) == -1);
	CHECK(snap_same(dest, &sn));
	snap_free(&sn);

	bst = store_open(dest, err, sizeof(err));
	CHECK(bst != NULL);
	if (bst != NULL) {
		CHECK(store_schema_version(bst) == store_schema_version(st));
		CHECK(qint(store_db(bst), "SELECT count(*) FROM events WHERE "
		    "action = 'test.backup'") == 1);
		CHECK(qint(store_db(bst), "SELECT count(*) FROM "
		    "deployments") == 1);
		store_close(bst);
	} else
		printf("# %s\n", err);
	store_close(st);

	/* a memory database backs up too */
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL && store_backup(st, dest2) == 0);
	store_close(st);
	CHECK(rawint(dest2, "PRAGMA user_version") == store_schema_latest());
	rmdb(path);
	rmdb(dest);
	rmdb(dest2);
	TEST_END();
}

static void
t_prepare_cache(void)
{
	struct store	*st;
	sqlite3_stmt	*a, *b;
	char		 err[512], sql[64];

	TEST_BEGIN("prepared statements are cached by text");
	st = store_open(":memory:", err, sizeof(err));
	CHECK(st != NULL);
	if (st == NULL) {
		TEST_END();
		return;
	}
	a = store_prepare(st, "SELECT count(*) FROM events");
	/* the same text from another buffer finds the same statement */
	(void)strlcpy(sql, "SELECT count(*) FROM events", sizeof(sql));
	b = store_prepare(st, sql);
	CHECK(a != NULL && a == b);
	CHECK(store_prepare(st, "SELECT 1") != a);
	CHECK(store_prepare(st, "SELECT 1; SELECT 2") == NULL);
	CHECK(store_prepare(st, "SELEKT nonsense") == NULL);
	CHECK(store_prepare(st, "SELECT 1;  \n") != NULL);
	store_close(st);
	TEST_END();
}

/* Test-only migrations: each logs its number; 2 and 3 need 1 before. */
static const struct store_migration mig_ok[] = {
	{ "log table", "CREATE TABLE miglog (n INTEGER);"
	    "INSERT INTO miglog VALUES (1);", 0 },
	{ "second", "ALTER TABLE miglog ADD COLUMN note TEXT;"
	    "INSERT INTO miglog VALUES (2, 'b');", 0 },
	{ "third", "CREATE TABLE t3 (a);"
	    "INSERT INTO miglog VALUES (3, 'c');", 0 },
};

static const struct store_migration mig_bad[] = {
	{ "log table", "CREATE TABLE miglog (n INTEGER);"
	    "INSERT INTO miglog VALUES (1);", 0 },
	{ "second", "ALTER TABLE miglog ADD COLUMN note TEXT;"
	    "INSERT INTO miglog VALUES (2, 'b');", 0 },
	{ "broken", "CREATE TABLE half (a);"
	    "INSERT INTO miglog VALUES (3, 'c');"
	    "INSERT INTO no_such_table VALUES (1);", 0 },
};

static void
t_test_migrations(void)
{
	struct store	*st;
	char		 err[512], *path = tpath("mig.db");
	long long	 order;

	TEST_BEGIN("a caller's migration list applies in order, once");
	st = store_open_migrations(":memory:", mig_ok, 3, err, sizeof(err));
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK(store_schema_version(st) == 3);
		/* 1,2,3 in that order: the concatenation is 123 */
		order = qint(store_db(st), "SELECT group_concat(n, '') FROM "
		    "(SELECT n FROM miglog ORDER BY rowid)");
		CHECK(order == 123);
		store_close(st);
	} else
		printf("# %s\n", err);

	/* a file at version 2 gets only the third step */
	st = store_open_migrations(path, mig_ok, 2, err, sizeof(err));
	CHECK(st != NULL);
	store_close(st);
	CHECK(rawint(path, "PRAGMA user_version") == 2);
	st = store_open_migrations(path, mig_ok, 3, err, sizeof(err));
	CHECK(st != NULL);
	store_close(st);
	CHECK(rawint(path, "SELECT group_concat(n, '') FROM (SELECT n FROM "
	    "miglog ORDER BY rowid)") == 123);
	CHECK(rawint(path, "PRAGMA user_version") == 3);
	CHECK(rawint(path, "PRAGMA application_id") == STORE_APPLICATION_ID);

	/* and a binary that knows only 2 refuses it */
	st = store_open_migrations(path, mig_ok, 2, err, sizeof(err));
	CHECK(st == NULL);
	CHECK(strstr(err, "has schema version 3, this nopsd knows up to 2") !=
	    NULL);
	rmdb(path);
	TEST_END();
}

static void
t_failing_migration(void)
{
	struct store	*st;
	char		 err[512], *path = tpath("migbad.db");

	TEST_BEGIN("a failing migration leaves the previous version, whole");
	st = store_open_migrations(path, mig_bad, 3, err, sizeof(err));
	CHECK(st == NULL);
	store_close(st);
	CHECK(strstr(err, "migration 3 (broken) failed") != NULL);
	CHECK(strstr(err, "no_such_table") != NULL);
	CHECK(strstr(err, "schema stays at version 2") != NULL);
	CHECK(rawint(path, "PRAGMA user_version") == 2);
	/* none of the broken step's statements stayed */
	CHECK(rawint(path, "SELECT count(*) FROM sqlite_schema WHERE "
	    "name = 'half'") == 0);
	CHECK(rawint(path, "SELECT count(*) FROM miglog") == 2);
	/* the good steps are usable */
	st = store_open_migrations(path, mig_bad, 2, err, sizeof(err));
	CHECK(st != NULL);
	store_close(st);
	rmdb(path);

	/* from scratch: a failing first step leaves version 0, no tables */
	st = store_open_migrations(path, &mig_bad[2], 1, err, sizeof(err));
	CHECK(st == NULL);
	CHECK(strstr(err, "schema stays at version 0") != NULL);
	CHECK(rawint(path, "PRAGMA user_version") == 0);
	CHECK(rawint(path, "SELECT count(*) FROM sqlite_schema") == 0);
	rmdb(path);
	TEST_END();
}

/* A table rebuild with foreign keys off, checked before the commit. */
static const struct store_migration mig_fk[] = {
	{ "tables", "CREATE TABLE p (id INTEGER PRIMARY KEY);"
	    "CREATE TABLE c (p INTEGER REFERENCES p (id), x TEXT);"
	    "INSERT INTO p VALUES (1); INSERT INTO c VALUES (1, 'a');", 0 },
	{ "rebuild c", "CREATE TABLE c_new (p INTEGER REFERENCES p (id),"
	    " x TEXT NOT NULL);"
	    "INSERT INTO c_new SELECT p, x FROM c; DROP TABLE c;"
	    "ALTER TABLE c_new RENAME TO c;", STORE_MIGF_NOFK },
	{ "orphan", "DELETE FROM p;", STORE_MIGF_NOFK },
};

static void
t_nofk_migration(void)
{
	struct store	*st;
	char		 err[512];

	TEST_BEGIN("a foreign-keys-off migration is checked and re-armed");
	st = store_open_migrations(":memory:", mig_fk, 2, err, sizeof(err));
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK(store_schema_version(st) == 2);
		CHECK(qint(store_db(st), "PRAGMA foreign_keys") == 1);
		CHECK(qint(store_db(st), "SELECT count(*) FROM c") == 1);
		store_close(st);
	} else
		printf("# %s\n", err);
	st = store_open_migrations(":memory:", mig_fk, 3, err, sizeof(err));
	CHECK(st == NULL);
	CHECK(strstr(err, "breaks a foreign key of table c") != NULL);
	CHECK(strstr(err, "schema stays at version 2") != NULL);
	TEST_END();
}

static int	 lost_calls;
static char	 lost_msg[512];

static void
lost_cb(const char *msg)
{
	lost_calls++;
	snprintf(lost_msg, sizeof(lost_msg), "%s", msg);
}

static void
t_lost_file(void)
{
	struct store	*st;
	char		 err[512], *path = tpath("lost.db");
	int		 fd;

	TEST_BEGIN("a database deleted while open: writes refused, once told");
	store_lost = lost_cb;
	lost_calls = 0;
	st = store_open(path, err, sizeof(err));
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK(store_check(st) == 0);
		CHECK(store_begin(st) == 0 && store_commit(st) == 0);
		CHECK(unlink(path) == 0);
		CHECK(store_begin(st) == -1);
		CHECK(strstr(store_error(st), "was deleted while nopsd ran") !=
		    NULL);
		CHECK(store_begin(st) == -1);
		CHECK(store_check(st) == -1);
		CHECK(lost_calls == 1 && strstr(lost_msg, path) != NULL);
		store_close(st);
	} else
		printf("# %s\n", err);
	TEST_END();

	TEST_BEGIN("a database replaced while open, and a commit after it");
	lost_calls = 0;
	st = store_open(tpath("swap.db"), err, sizeof(err));
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK(store_begin(st) == 0);
		fd = open(tpath("other.db"), O_WRONLY | O_CREAT, 0600);
		CHECK(fd != -1);
		if (fd != -1)
			close(fd);
		CHECK(rename(tpath("other.db"), tpath("swap.db")) == 0);
		/* The transaction begun before must not commit into it. */
		CHECK(store_commit(st) == -1);
		CHECK(!store_in_transaction(st));
		CHECK(strstr(store_error(st), "replaced by another file") !=
		    NULL);
		CHECK(lost_calls == 1);
		store_close(st);
	}
	store_lost = NULL;
	unlink(tpath("swap.db"));
	unlink(tpath("swap.db-wal"));
	unlink(tpath("swap.db-shm"));
	unlink(tpath("lost.db-wal"));
	unlink(tpath("lost.db-shm"));
	TEST_END();
}

static void
t_orphan_wal(void)
{
	struct store	*st;
	char		 err[512], *path = tpath("orphan.db");
	int		 fd;

	TEST_BEGIN("a -wal without its database is refused, -F sets it aside");
	fd = open(tpath("orphan.db-wal"), O_WRONLY | O_CREAT, 0600);
	CHECK(fd != -1 && write(fd, "x", 1) == 1);
	if (fd != -1)
		close(fd);
	st = store_open(path, err, sizeof(err));
	CHECK(st == NULL);
	CHECK(strstr(err, "write-ahead log") != NULL &&
	    strstr(err, "-F") != NULL);
	CHECK(!exists(path));
	store_fresh = 1;
	st = store_open(path, err, sizeof(err));
	store_fresh = 0;
	CHECK(st != NULL);
	CHECK(exists(tpath("orphan.db-wal.orphan")));
	store_close(st);
	unlink(path);
	unlink(tpath("orphan.db-wal"));
	unlink(tpath("orphan.db-shm"));
	unlink(tpath("orphan.db-wal.orphan"));
	unlink(tpath("orphan.db-clean"));
	TEST_END();
}

int
main(void)
{
	log_init(1, LOG_DAEMON);
	log_procinit("test_store");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return (1);
	}

	t_migrations_memory();
	t_file_settings();
	t_reopen();
	t_newer_refused();
	t_corrupt_random();
	t_corrupt_truncated();
	t_corrupt_page();
	t_clean_marker();
	t_clean_marker_corrupt();
	t_registered_jobs();
	t_foreign_refused();
	t_unsafe_paths();
	t_event_needs_tx();
	t_tx_rules();
	t_rollback();
	t_one_active();
	t_cascades();
	t_paging();
	t_backup();
	t_prepare_cache();
	t_test_migrations();
	t_failing_migration();
	t_nofk_migration();
	t_lost_file();
	t_orphan_wal();

	(void)rmdir(tmpdir);
	TEST_EXIT();
}
