/*
 * A deploy plan in its evaluated form (man/nops-plan.5): the JSON a
 * nops.plan.json holds, or that a nops.plan.nix evaluates to.  Parsing
 * checks every field and collects every error at once, each naming the
 * host, phase or test it concerns; a plan with one error is not used.
 * Phase assignment follows the seed: the first phase whose include rule
 * matches, else the first phase without a rule, else the host is
 * dropped with a warning.
 *
 * Used by the master (detection, the API) and by nopsctl (check FILE).
 */
#ifndef NOPS_PLAN_H
#define NOPS_PLAN_H

#include <stddef.h>

#include <jansson.h>

#define PLAN_HOSTS_MAX		4096
#define PLAN_PHASES_MAX		64
#define PLAN_TESTS_MAX		256
#define PLAN_TAGS_MAX		32
#define PLAN_CHECKS_MAX		32
#define PLAN_NAME_MAX		63	/* a host, phase, test, check, tag */
#define PLAN_ADDRESS_MAX	253
#define PLAN_USER_MAX		32
#define PLAN_HOSTKEY_MAX	8192
#define PLAN_COMMAND_MAX	4096
#define PLAN_STORE_PATH_MAX	211	/* /nix/store/ + 32 + - + 211 */
#define PLAN_TIMEOUT_MAX	3600	/* seconds */
#define PLAN_CHECK_TIMEOUT	60	/* a check's default, seconds */
#define PLAN_ERRORS_MAX		200	/* more are counted, not kept */
#define PLAN_JSON_MAX		(8 * 1024 * 1024)

/* Activation goals (NixOS switch-to-configuration). */
#define PLAN_GOAL_AUTO		0
#define PLAN_GOAL_SWITCH	1
#define PLAN_GOAL_BOOT		2
#define PLAN_GOAL_TEST		3
#define PLAN_GOAL_DRY		4

struct plan_check {
	char		*pc_name;
	char		*pc_command;	/* over SSH on the host, or NULL */
	char		*pc_http;	/* a URL nops probes, or NULL */
	int		 pc_timeout;	/* seconds */
};

struct plan_host {
	char		*ph_name;
	char		*ph_address;
	int		 ph_port;
	char		*ph_user;
	char		*ph_hostkey;	/* "type base64", or NULL:
					   known-hosts */
	char		**ph_tags;
	size_t		 ph_ntags;
	char		*ph_system;	/* the toplevel's store path */
	char		*ph_drv;	/* the .drv that builds it, or NULL */
	char		*ph_source;	/* meta.sources for this host,
					   or NULL */
	int		 ph_build_on_target;
	struct plan_check *ph_checks;
	size_t		 ph_nchecks;
	json_t		*ph_attrs;	/* free-form, for include rules */
	json_t		*ph_operations;	/* name -> {command, ...}, or NULL */
	int		 ph_phase;	/* index into pl_phases, or -1 */
};

struct plan_phase {
	char		*pp_name;
	json_t		*pp_include;	/* NULL: no rule */
	size_t		*pp_hosts;	/* indexes into pl_hosts, in order */
	size_t		 pp_nhosts;
};

struct plan_test {
	char		*pt_name;
	char		*pt_build;	/* a store path or .drv to realise */
	char		*pt_host;	/* with pt_command: run there */
	char		*pt_command;
	int		 pt_timeout;
};

struct plan {
	char		*pl_policy;	/* "auto" or "approval" */
	int		 pl_goal;	/* PLAN_GOAL_*: forced, or AUTO */
	int		 pl_notify_completed;	/* notify of completed ones */
	json_t		*pl_meta;
	json_t		*pl_infra;	/* NULL: none */
	struct plan_host *pl_hosts;	/* sorted by name */
	size_t		 pl_nhosts;
	struct plan_phase *pl_phases;
	size_t		 pl_nphases;
	struct plan_test *pl_tests;
	size_t		 pl_ntests;
	char		**pl_errors;
	size_t		 pl_nerrors;	/* kept; pl_nerrors_all counts all */
	size_t		 pl_nerrors_all;
	char		**pl_warnings;
	size_t		 pl_nwarnings;
};

/*
 * Parse and check an evaluated plan.  Always returns a plan (NULL only
 * for a failed allocation); the plan is usable only when pl_nerrors_all
 * is 0.  Phases are assigned when the plan has no errors.
 */
struct plan	*plan_parse(const char *json, size_t len);
/* A plan with only this error, e.g. for a failed evaluation. */
struct plan	*plan_failed(const char *fmt, ...)
		    __attribute__((__format__(printf, 1, 2)));
void		 plan_free(struct plan *);
void		 plan_error(struct plan *, const char *fmt, ...)
		    __attribute__((__format__(printf, 2, 3)));
void		 plan_warn(struct plan *, const char *fmt, ...)
		    __attribute__((__format__(printf, 2, 3)));

/*
 * A program that can check a JSON Schema (master/schema.c's
 * schema_usable) gives it here, so that plan_parse refuses an
 * operation's schema that could not validate: 0, or -1 with err.
 * Without it only the schema's type is checked.
 */
void		 plan_set_schema_check(int (*)(json_t *, char *, size_t));

const struct plan_host *plan_host_find(const struct plan *, const char *);
/* Does a phase's include rule match a host? */
int		 plan_include_matches(json_t *rule,
		    const struct plan_host *);

/*
 * The canonical document the spec hash of a plan deployment covers:
 * every host's system and connection, the phase layout and the tests.
 */
json_t		*plan_spec_json(const struct plan *);
/* The API's view: phases with their hosts, hosts, errors, warnings. */
json_t		*plan_json(const struct plan *);

const char	*plan_goal_name(int);
int		 plan_goal_parse(const char *);	/* -1: unknown */
int		 plan_store_path_ok(const char *);

#endif /* NOPS_PLAN_H */
