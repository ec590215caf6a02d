/*
 * The master's SQLite store: the only place state is persisted (deployments
 * and what hangs off them, the audit log, tokens, sessions).  Opened by the
 * master alone, after the workers are forked.
 *
 * Rules the API enforces:
 * - the schema is moved forward by an ordered list of migrations, each in
 *   its own transaction with PRAGMA user_version bumped in it;
 * - a corrupt database, a file that is not SQLite, a database of another
 *   application or a schema newer than this binary is refused, never
 *   rewritten;
 * - an audit event is written in the same transaction as the change it
 *   records: store_event() fails outside a transaction.
 */
#ifndef NOPS_STORE_H
#define NOPS_STORE_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * One schema step.  sm_sql may hold several statements; it runs inside a
 * transaction that also sets user_version to the step's index + 1, so a
 * step applies entirely or not at all.  Never edit a released step: append
 * a new one.
 */
struct store_migration {
	const char	*sm_name;	/* short, for messages */
	const char	*sm_sql;
	int		 sm_flags;
};
/*
 * Run the step with foreign keys off (a table rebuild, the only way SQLite
 * changes a constraint) and check them with foreign_key_check before the
 * commit.
 */
#define STORE_MIGF_NOFK		0x01

/* The application_id the first migration stamps on the database ("NOPS"). */
#define STORE_APPLICATION_ID	0x4e4f5053

#define STORE_BUSY_TIMEOUT_MS	5000
#define STORE_PAGE_MAX		1000	/* rows per store_events_page() */
#define STORE_EVENT_FIELD_MAX	256	/* actor, action, target */
#define STORE_EVENT_DETAIL_MAX	65536

/*
 * A row of the events table, as handed to a store_events_page() callback.
 * The strings are only valid during the callback; target and detail may
 * be NULL.
 */
struct store_event_row {
	int64_t		 er_id;
	int64_t		 er_at;		/* unix seconds */
	const char	*er_actor;
	const char	*er_action;
	const char	*er_target;
	const char	*er_detail;
};

/*
 * store_open: open (creating it if missing, mode 0600) and migrate the
 * database at path, or ":memory:".  Returns NULL with a message in err if
 * the database is refused or cannot be opened; the file is left as it was
 * found.
 */
struct store	*store_open(const char *path, char *err, size_t errlen);
/* The same with a list of migrations of the caller's (tests). */
struct store	*store_open_migrations(const char *path,
		    const struct store_migration *, size_t nmigrations,
		    char *err, size_t errlen);
/*
 * Closing a database that was not found damaged, with no transaction
 * open and no write-ahead log left, leaves the marker <path>-clean,
 * which lets the next open check it in a thread while serving (nopsd.8,
 * DATABASE).
 */
void		 store_close(struct store *);
/* Write the marker for the file as it is now (tests); 0 or -1. */
int		 store_clean_mark(const char *path);
/* 1 while the integrity check of a clean start is still running. */
int		 store_verify_pending(struct store *);

/* The version the database is at (user_version), or -1. */
int		 store_schema_version(struct store *);
/* The version the built-in migrations reach. */
int		 store_schema_latest(void);

/*
 * Transactions: BEGIN IMMEDIATE, so that a writer never fails half-way
 * on a lock.  They do not nest.  store_commit() returns 0 if committed;
 * otherwise -1 and the transaction has been rolled back.
 */
/* A store call whose result says whether the write happened. */
#ifndef __must_check
#define __must_check	__attribute__((__warn_unused_result__))
#endif

/*
 * Counts writes to the tables detection's decisions read (deployments,
 * holds): the same count at two moments means none of those rows moved.
 */
uint64_t	 store_decide_gen(struct store *);
int		 store_begin(struct store *) __must_check;
int		 store_commit(struct store *) __must_check;
/*
 * A transaction whose commit does not wait for the disk (synchronous
 * NORMAL for it alone): a crash of nopsd loses nothing, a power cut may
 * lose the last such commits.  For frequent rows whose loss costs little
 * (a login's session and its audit line), not for deployments.
 */
int		 store_begin_lazy(struct store *) __must_check;
/* If set, called after every successful commit. */
extern void	(*store_committed)(void);

/*
 * The database file must stay the one opened: store_check() compares the
 * path's device and inode with it (store_begin() and store_commit() do,
 * and the master every few seconds).  Once it was unlinked or replaced,
 * every write is refused, store_lost (if set) is called once with the
 * message, and store_error() gives it.  So it is once the integrity
 * check of a clean start, run in a thread, found the file damaged.
 * Returns 0, or -1 if lost.
 */
int		 store_check(struct store *) __must_check;
extern void	(*store_lost)(const char *);
/* The last error: the lost file's message, else SQLite's own. */
const char	*store_error(struct store *);
/*
 * Set before store_open(): a missing database whose -wal is still there
 * is opened empty (the log renamed to -wal.orphan) instead of refused.
 */
extern int	 store_fresh;
int		 store_rollback(struct store *);
int		 store_in_transaction(struct store *);

/*
 * store_event: append an audit event (actor "system", "root", a user or
 * "token:<name>"; action like "deployment.approve"; target like
 * "deployment/12"; detail JSON or text, never a secret).  Must run inside
 * the transaction of the change it records.  Returns the event id, or -1
 * (no transaction open, a field empty or too long, an SQLite error).
 */
int64_t		 store_event(struct store *, const char *actor,
		    const char *action, const char *target, const char *detail)
		    __must_check;

/*
 * store_events_page: the events with id < before_id (0: from the newest),
 * newest first, at most limit (1..STORE_PAGE_MAX), only those of target
 * if it is not NULL.  cb is called per row and must not use the store; a
 * non-zero return stops the walk.  Returns the number of rows passed to
 * cb, or -1.
 */
int		 store_events_page(struct store *, const char *target,
		    int64_t before_id, int limit,
		    int (*cb)(const struct store_event_row *, void *),
		    void *arg);

/*
 * store_backup: copy the database to dest_path (which must not exist;
 * created 0600) with the SQLite backup API, which gives a consistent
 * snapshot where a file copy would not.  Not inside a transaction.
 * Returns 0, or -1 and no file is left at dest_path.
 */
int		 store_backup(struct store *, const char *dest_path);

#endif /* NOPS_STORE_H */
