/*
 * The store modules' own view of the store (master/store.c and
 * master/store_*.c only): the SQLite connection, its cached statements
 * and the helpers that read their columns.  No other file includes this
 * header (tests/unit/test_layering.sh checks it): the rest of the master
 * calls the store_<group>_<verb>() functions of store_<group>.h, which
 * name no SQLite type.
 */
#ifndef NOPS_STORE_PRIV_H
#define NOPS_STORE_PRIV_H

#include <stdint.h>

#include <sqlite3.h>

#include "store.h"

/*
 * store_prepare: a cached prepared statement for sql, reset and with its
 * bindings cleared.  The cache is keyed by the text of sql.  The caller
 * binds, steps, and calls sqlite3_reset() when done (an unreset SELECT
 * holds a read transaction open).  Fetching the same text again resets
 * the statement, so do not while walking its rows.  Returns NULL on error
 * (logged), also if sql holds more than one statement.
 */
sqlite3_stmt	*store_prepare(struct store *, const char *sql);
/* The same with ns and job bound as ?1 and ?2 (a job's rows). */
sqlite3_stmt	*store_prepare_job(struct store *, const char *sql,
		    const char *ns, const char *job);
/* The connection (the store modules, and the store's unit tests). */
sqlite3		*store_db(struct store *);
/* A column as a copy (NULL stays NULL), or as an integer (NULL: null_value). */
char		*store_col_strdup(sqlite3_stmt *, int);
/* A text column as it is (NULL stays NULL), valid until the next step. */
const char	*store_col_text(sqlite3_stmt *, int);
/* Bind a copy of s, or NULL if s is NULL: SQLite's return code. */
int		 store_bind_text(sqlite3_stmt *, int, const char *s);
int64_t		 store_col_int(sqlite3_stmt *, int, int64_t null_value);
/* Step a bound statement that returns no rows, and reset it: 0 or -1. */
int		 store_done(sqlite3_stmt *);
/* The same: the rows the statement changed, or -1. */
int		 store_done_changes(struct store *, sqlite3_stmt *);
/*
 * The rows of sql, with ?1 bound to n (a statement without ?1 ignores
 * it), as two texts and an integer (two names and a deployment id), each
 * to cb: 0 or -1.
 */
int		 store_walk_names_id(struct store *, const char *sql, int64_t n,
		    void (*cb)(const char *, const char *, int64_t, void *),
		    void *);

#endif /* NOPS_STORE_PRIV_H */
