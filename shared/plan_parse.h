/*
 * Between the files that parse a deploy plan (shared/plan*.c): the
 * checks of single values, and each part's parser.
 *
 * plan.c		the document: top level, meta, errors, goals, freeing
 * plan_host.c		hosts over the defaults: connection, checks, tags
 * plan_phase.c		phases, include rules, assignment, preflight tests
 * plan_json.c		the API's view and the spec hash's document
 */
#ifndef NOPS_PLAN_PARSE_H
#define NOPS_PLAN_PARSE_H

#include <jansson.h>

struct plan;
struct plan_host;

int	 plan_name_ok(const char *);
int	 plan_address_ok(const char *);
int	 plan_user_ok(const char *);
int	 plan_hostkey_ok(const char *);
int	 plan_command_ok(const char *);
void	 plan_unknown_keys(struct plan *, const char *where, json_t *obj,
	    const char *const *keys);
int	 plan_timeout(struct plan *, const char *where, json_t *, int def);

/* plan_host.c */
extern const char *const plan_host_keys[];
void	 plan_parse_host(struct plan *, struct plan_host *, const char *name,
	    json_t *def, json_t *v, json_t *sources);
int	 plan_host_cmp(const void *, const void *);

/* plan_phase.c */
void	 plan_parse_phases(struct plan *, json_t *);
void	 plan_parse_tests(struct plan *, json_t *);
void	 plan_assign(struct plan *);

#endif /* NOPS_PLAN_PARSE_H */
