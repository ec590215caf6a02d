/*
 * Operations (master/operation.c): one-time commands declared in git as
 * parameterized batch jobs with nops_role = "operation", run through the
 * generic action procedure as <job>.<operation>.
 */
#ifndef NOPS_OPERATION_H
#define NOPS_OPERATION_H

#include <jansson.h>

struct action_ctx;
struct action_def;
struct api_resp;

/* Set the ACOND_OPERATIONS / ACOND_HAS_OPERATION conditions of ac. */
void	 operation_conditions(struct action_ctx *);
/* Append the operations of the job's deployed revision to list. */
void	 operation_list(struct action_ctx *, const struct action_def *,
	    json_t *list);
/* The procedure of the action table's operation row. */
void	 operation_action(struct action_ctx *, json_t *, struct api_resp *);

#endif /* NOPS_OPERATION_H */
