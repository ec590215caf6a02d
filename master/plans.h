/*
 * The deploy plan of each repository, evaluated and checked
 * (master/plans.c).
 */
#ifndef NOPS_PLANS_H
#define NOPS_PLANS_H

#include <jansson.h>

#include "api.h"

struct plan;
struct repo_snap;

/* A new snapshot of repo: take its plan (or forget it). */
void		 plans_snapshot(const char *repo, const struct repo_snap *);
/* The checked plan of repo and its commit, or NULL (none, evaluating). */
const struct plan *plans_get(const char *repo, const char **commit);
/* Repositories with a plan, in the order they got one. */
const char	*plans_first(void);
const char	*plans_next(const char *repo);
/* GET /api/v1/plans/{repo}; NULL: no plan there. */
json_t		*plans_json(const char *repo);

extern const struct api_route	 plans_routes[];
extern const size_t		 plans_nroutes;

#endif /* NOPS_PLANS_H */
