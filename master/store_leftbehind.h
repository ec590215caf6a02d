/*
 * The store's record of what a deployment left behind in Nomad
 * (left_behind): hook revisions, operation revisions and suspends a stop
 * could not remove, by kind, environment (namespace) and object.  The
 * SQL is in store_leftbehind.c alone.  Writes run inside a transaction
 * the caller opened, with the audit event the caller writes.
 */
#ifndef NOPS_STORE_LEFTBEHIND_H
#define NOPS_STORE_LEFTBEHIND_H

#include <stdint.h>

struct store;

/* A row, as handed to a callback: the strings are valid during it only. */
struct store_leftbehind_row {
	int64_t		 lr_id;
	const char	*lr_kind;
	const char	*lr_object;
	const char	*lr_env;
	const char	*lr_error;
	int64_t		 lr_created_at;
};

/*
 * Refresh the error of the record of kind/env/object: the rows changed
 * (0: no such record), or -1.
 */
int		 store_leftbehind_refresh(struct store *, const char *kind,
		    const char *env, const char *object, const char *error);
/* A new record, made now: 0 or -1. */
int		 store_leftbehind_insert(struct store *, int64_t deployment,
		    const char *kind, const char *env, const char *object,
		    const char *error);
/* Remove the record of kind/env/object (none is no error): 0 or -1. */
int		 store_leftbehind_delete(struct store *, const char *kind,
		    const char *env, const char *object);
/* Remove record id of deployment: the rows removed (0 or 1), or -1. */
int		 store_leftbehind_forget(struct store *, int64_t id,
		    int64_t deployment);
/*
 * The records of a deployment, oldest first: cb per row.  The number of
 * rows passed to cb, or -1 if the read failed (rows may have been
 * passed before).
 */
int		 store_leftbehind_list(struct store *, int64_t deployment,
		    void (*cb)(const struct store_leftbehind_row *, void *),
		    void *arg);

#endif /* NOPS_STORE_LEFTBEHIND_H */
