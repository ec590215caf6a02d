/*
 * JSON Schema (draft 7) validation of an operation's input, in the
 * master's boundary code (master/schema.c).  What it supports is listed
 * in nops-jobs(7); tests/unit/test_schema runs the official JSON Schema
 * Test Suite's draft7 files against it.
 */
#ifndef NOPS_SCHEMA_H
#define NOPS_SCHEMA_H

#include <stddef.h>

#include <jansson.h>

#define SCHEMA_VALID		0
#define SCHEMA_INVALID		1	/* the instance does not agree */
#define SCHEMA_UNUSABLE		(-1)	/* the schema cannot be used */

/*
 * schema_validate: check instance against schema.  SCHEMA_VALID;
 * SCHEMA_INVALID with err naming the JSON Pointer of the first bad value
 * and what is wrong with it; SCHEMA_UNUSABLE with err saying why the
 * schema cannot be used (a remote $ref, a pattern that does not compile,
 * a $ref that leads nowhere or loops).
 */
int	 schema_validate(json_t *schema, json_t *instance,
	    char *err, size_t errlen);

/*
 * schema_usable: can schema validate at all?  Walks every subschema once
 * (each $ref resolved, each pattern compiled).  0, or -1 with err.
 */
int	 schema_usable(json_t *schema, char *err, size_t errlen);

/* JSON equality as JSON Schema means it: 1 equals 1.0. */
int	 schema_equal(json_t *, json_t *);

#endif /* NOPS_SCHEMA_H */
