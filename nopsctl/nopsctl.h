#ifndef NOPS_NOPSCTL_H
#define NOPS_NOPSCTL_H

#include <stdio.h>

#include <jansson.h>

#ifndef __dead
#define __dead	__attribute__((__noreturn__))
#endif

#define EXIT_ANSWER	1	/* the daemon answered with an error */
#define EXIT_USAGE	2

struct ctl {
	const char	*socket;	/* control socket, or NULL with url */
	const char	*url;		/* base URL, e.g. http://host:8080 */
	char		*token;		/* bearer token read from -t file */
	int		 json;		/* -j */

	/* options after the command (see ctl_cmds[]) */
	const char	*reason;	/* --reason */
	const char	*hash;		/* --hash */
	const char	*state;		/* deployments -s */
	const char	*ns;		/* deployments -n */
	const char	*job;		/* deployments -J */
	long long	 limit;		/* deployments -l, 0 for all */
	const char	*input;		/* action --input */
#define CTL_HOSTS_MAX	64
	const char	*hosts[CTL_HOSTS_MAX];	/* each-host --host */
	size_t		 nhosts;
	long		 timeout;	/* seconds for an answer; 0: default */
};

struct option;

struct ctl_cmd {
	const char	*name;
	int		 minargs;
	int		 maxargs;
	const char	*args;		/* for the usage line */
	const struct option *longopts;	/* options after the command */
	const char	*shortopts;
	int		(*fn)(struct ctl *, int, char **);
	const char	*desc;		/* one line, for --help */
};

/* nopsctl.c: the API client */
__dead void	 ctl_usage(void);
long		 ctl_call(struct ctl *, const char *, const char *, json_t *,
		    json_t **);
int		 ctl_check(struct ctl *, long, json_t *);
void		 ctl_print_json(json_t *);
int		 ctl_answer(struct ctl *, long, json_t *, int *);
int		 ctl_get(struct ctl *, const char *, json_t **, int *);
int		 ctl_post(struct ctl *, const char *, json_t *, json_t **);
json_t		*ctl_items(json_t *, const char *);
long long	 ctl_int(json_t *, const char *);
const char	*ctl_num(char *, size_t, json_t *, const char *);
const char	*ctl_str(json_t *, const char *, const char *);
char		*ctl_escape(const char *);

/* ctl_engine.c: jobs, deployments and their actions */
int		 cmd_jobs(struct ctl *, int, char **);
int		 cmd_deployments(struct ctl *, int, char **);
int		 cmd_show(struct ctl *, int, char **);
int		 cmd_approve(struct ctl *, int, char **);
int		 cmd_reject(struct ctl *, int, char **);
int		 cmd_retry(struct ctl *, int, char **);
int		 cmd_acknowledge(struct ctl *, int, char **);
int		 cmd_promote(struct ctl *, int, char **);
int		 cmd_pause(struct ctl *, int, char **);
int		 cmd_resume(struct ctl *, int, char **);
int		 cmd_deploy_now(struct ctl *, int, char **);
int		 cmd_orphans(struct ctl *, int, char **);
int		 cmd_errors(struct ctl *, int, char **);
/* ctl_plan.c */
int		 cmd_plan(struct ctl *, int, char **);
int		 cmd_hosts(struct ctl *, int, char **);

/* ctl_action.c: the actions of a job or a deployment, as nopsd lists them */
int		 cmd_actions(struct ctl *, int, char **);
int		 cmd_action(struct ctl *, int, char **);
/* --input: JSON text, or @file (- for standard input); NULL: none. */
json_t		*ctl_input(const char *);
int		 cmd_each_host(struct ctl *, int, char **);
int		 cmd_host_runs(struct ctl *, int, char **);
char		*ctl_actions_enabled(json_t *);
int		 cmd_left_behind(struct ctl *, int, char **);
int		 cmd_runs(struct ctl *, int, char **);
/* ctl_conf.c: the control socket nops.conf names, or NULL */
char		*ctl_conf_socket(const char *path);
/* ctl_check.c: job files checked offline */
int		 cmd_check(struct ctl *, int, char **);

/* ctl_print.c: tables, safe strings, plan diffs */
struct ctl_table;

struct ctl_table *table_new(size_t, ...);
void		 table_row(struct ctl_table *, ...);
void		 table_note(struct ctl_table *, const char *, ...)
		    __attribute__((__format__(printf, 2, 3)));
void		 table_out(struct ctl_table *, int);
char		*safe_str(const char *);
void		 safe_printf(const char *, ...)
		    __attribute__((__format__(printf, 1, 2)));
void		 print_field(const char *, const char *);
void		 print_git(json_t *);
void		 print_diff(json_t *, int);

#endif
