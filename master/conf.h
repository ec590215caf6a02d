/*
 * The master's view of the configuration (nops.conf) and its globals.
 * Only the master parses the config; workers receive what they need as
 * messages.
 */
#ifndef NOPS_CONF_H
#define NOPS_CONF_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>

#define NOPS_CONF_FILE		"/etc/nops/nops.conf"
#define NOPS_DB_FILE		NOPS_STATEDIR "/nops.db"
#define NOPS_CONTROL_SOCKET	NOPS_RUNDIR "/nopsd.sock"
#define NOPS_CONTROL_GROUP	"_nopsadm"

#define NOPS_DRIFT_INTERVAL	300	/* seconds */
#define NOPS_REPLAN_INTERVAL	3600	/* seconds: every job planned */
#define NOPS_ENGINE_INTERVAL	5
#define NOPS_APPLY_TIMEOUT	600
#define NOPS_POLL_INTERVAL	60
/* What a repository's snapshot may hold, and how long a poll may take. */
#define NOPS_FETCH_TIMEOUT	120			/* seconds */
#define NOPS_MAX_FILE_SIZE	(1024 * 1024)		/* bytes per file */
#define NOPS_MAX_FILES		2000			/* files */
#define NOPS_MAX_SNAPSHOT_SIZE	(32ULL * 1024 * 1024)	/* bytes in all */
#define NOPS_SESSION_IDLE	(8 * 3600)
#define NOPS_SESSION_LIFETIME	(7 * 86400)

#define NOPS_NAME_MAX		64	/* repository, group, policy names */

/* A string in a list, e.g. namespaces { "default" "web" }. */
struct conf_str {
	TAILQ_ENTRY(conf_str)	 entry;
	char			*str;
};
TAILQ_HEAD(conf_strs, conf_str);

/*
 * "listen on ADDR port N [tls certificate F key F]
 * [hostnames { NAME ... }]"
 */
struct conf_listen {
	TAILQ_ENTRY(conf_listen) entry;
	char			*host;	/* as written: address or name */
	struct sockaddr_storage	 ss;	/* resolved at parse time */
	socklen_t		 sslen;
	in_port_t		 port;
	int			 tls;
	char			*tls_cert;
	char			*tls_key;
	struct conf_strs	 hostnames;	/* empty: the defaults */
};
TAILQ_HEAD(conf_listens, conf_listen);

struct conf_nomad {
	char			*address;	/* NULL: no nomad block */
	char			*token_file;	/* secret: owner/mode checked */
	char			*ca_file;
	struct conf_strs	 namespaces;	/* empty means { "default" } */
};

/* The hosts block: SSH to the hosts of deploy plans (nops-plan.5). */
struct conf_hosts {
	int			 set;		/* a hosts block was given */
	char			*ssh_key_file;	/* secret; NULL: none */
	char			*known_hosts_file;	/* NULL: plan keys
							   only */
	char			*nix_store;	/* NIX_REMOTE for builds */
	int			 confirm_timeout;	/* seconds */
	int			 command_timeout;	/* seconds */
	int			 eval_timeout;	/* a plan's evaluation, s */
	uint64_t		 eval_memory;	/* its address space, bytes */
	int			 build_timeout;	/* a system's build, s */
	int			 check_interval;	/* drift reads,
							   seconds */
};
#define NOPS_CONFIRM_TIMEOUT	30
#define NOPS_COMMAND_TIMEOUT	600
#define NOPS_EVAL_TIMEOUT	120
#define NOPS_EVAL_TIMEOUT_MIN	5
#define NOPS_EVAL_TIMEOUT_MAX	3600
#define NOPS_EVAL_MEMORY	(2ULL * 1024 * 1024 * 1024)
#define NOPS_EVAL_MEMORY_MIN	(256ULL * 1024 * 1024)
#define NOPS_EVAL_MEMORY_MAX	(64ULL * 1024 * 1024 * 1024)
#define NOPS_NIX_STORE		"daemon"
#define NOPS_BUILD_TIMEOUT	3600
#define NOPS_BUILD_TIMEOUT_MIN	60
#define NOPS_BUILD_TIMEOUT_MAX	86400	/* SSH_TIMEOUT_MAX */

struct conf_repo {
	TAILQ_ENTRY(conf_repo)	 entry;
	char			*name;
	char			*url;
	char			*branch;	/* default "main" */
	char			*path;		/* default "" (top) */
	int			 poll_interval;	/* seconds */
	int			 fetch_timeout;	/* seconds */
	uint32_t		 max_file_size;	/* bytes */
	uint32_t		 max_files;
	uint64_t		 max_snapshot_size; /* bytes */
	char			*webhook_secret_file;	/* secret */
	char			*ssh_key_file;		/* secret */
	char			*known_hosts_file;
	char			*commit_url;	/* NULL: by the url; "": none */
};
TAILQ_HEAD(conf_repos, conf_repo);

/* group "ops" { "alice" "bob" } */
struct conf_group {
	TAILQ_ENTRY(conf_group)	 entry;
	char			*name;
	struct conf_strs	 members;
};
TAILQ_HEAD(conf_groups, conf_group);

/* Capabilities a policy grants, per namespace glob. */
#define CAP_READ		0x0001
#define CAP_APPROVE		0x0002
#define CAP_PROMOTE		0x0004
#define CAP_RETRY		0x0008
#define CAP_DEPLOY_NOW		0x0010
#define CAP_PAUSE		0x0020
#define CAP_FETCH		0x0040
#define CAP_OPERATE		0x0080
#define CAP_SUSPEND		0x0100
#define CAP_LEFT_BEHIND		0x0200
#define CAP_HOSTS		0x0400
#define CAP_MANAGEMENT		0x8000

struct conf_policy_ns {
	TAILQ_ENTRY(conf_policy_ns) entry;
	char			*glob;
	uint32_t		 caps;
};

/* policy "deployer" { namespace "*" { read approve ... } } */
struct conf_policy {
	TAILQ_ENTRY(conf_policy) entry;
	char			*name;
	TAILQ_HEAD(, conf_policy_ns) namespaces;
};
TAILQ_HEAD(conf_policies, conf_policy);

/* bind group "ops" policy "deployer" / bind user "carol" policy "management" */
#define BIND_USER		1
#define BIND_GROUP		2
struct conf_bind {
	TAILQ_ENTRY(conf_bind)	 entry;
	int			 kind;	/* BIND_* */
	char			*who;
	char			*policy;
};
TAILQ_HEAD(conf_binds, conf_bind);

/*
 * notify "NAME" { slack url "URL" events { ... } }: where notifications
 * of deployments go (sent by the nomadworker).
 */
#define CONF_NOTIFY_WEBHOOK		1	/* POST a JSON document */
#define CONF_NOTIFY_SLACK		2	/* POST {"text": ...} */
#define CONF_NOTIFY_NTFY		3	/* POST text to an ntfy topic */
#define CONF_NOTIFY_EV_PENDING_APPROVAL	0x01
#define CONF_NOTIFY_EV_FAILED		0x02
#define CONF_NOTIFY_EV_AWAITING_PROMOTION 0x04
#define CONF_NOTIFY_EV_COMPLETED	0x08	/* and the job asks for it */
#define CONF_NOTIFY_EV_ALL		0x0f
struct conf_notify {
	TAILQ_ENTRY(conf_notify) entry;
	char			*name;
	int			 kind;		/* CONF_NOTIFY_* */
	char			*url;		/* may hold a secret (Slack) */
	char			*topic;		/* ntfy: added to url,
						   or NULL */
	char			*token_file;	/* secret, or NULL */
	uint32_t		 events;	/* CONF_NOTIFY_EV_* */
};
TAILQ_HEAD(conf_notifies, conf_notify);

struct nops_conf {
	char			*path;		/* the file parsed */
	char			*user;		/* workers' user, NOPS_USER */
	char			*master_user;	/* NOPS_MASTER_USER */
	char			*database;	/* NOPS_DB_FILE */
	char			*control_socket; /* NOPS_CONTROL_SOCKET */
	char			*control_group;	/* NOPS_CONTROL_GROUP */
	char			*users_file;	/* NULL: none */
	char			*bootstrap_token_file;	/* secret; NULL: none */
	char			*anonymous_policy;	/* NULL: no anonymous
							   access */
	int			 session_idle;		/* seconds */
	int			 session_lifetime;	/* seconds */
	int			 drift_interval;	/* seconds */
	int			 engine_interval;
	int			 replan_interval;	/* seconds */
	int			 apply_timeout;
	char			*metrics_token_file;	/* secret; NULL: none */
	char			*dashboard_url;	/* for links; NULL: none */
	uint64_t		 max_body_size;	/* WEB_BODY_DEFAULT */
	int			 max_conns_per_address;
						/* WEB_CONN_SOURCE_DEFAULT */
	struct conf_notifies	 notifies;
	struct conf_listens	 listens;
	struct conf_nomad	 nomad;
	struct conf_hosts	 hosts;
	struct conf_repos	 repos;
	struct conf_groups	 groups;
	struct conf_policies	 policies;
	struct conf_binds	 binds;
};

/* parse.y */
#define CONF_NOSECRECY		0x01	/* skip the owner/mode check (tests) */
/*
 * parse_config: parse file into a new config.  Every error is logged
 * (log_warnx, "file:line: message") and counted; returns NULL if there was
 * any.  Defaults are filled in.
 */
struct nops_conf *parse_config(const char *file, int flags);
/* cmdline_symset: -D name=value; returns 0, or -1 if malformed. */
int		  cmdline_symset(char *);

/* config.c */
struct nops_conf *config_new(void);	/* defaults */
void		  config_free(struct nops_conf *);
/* config_print: the config in nops.conf syntax; the output parses again. */
void		  config_print(FILE *, const struct nops_conf *);
const char	 *config_cap_name(uint32_t);	/* "read", ... */
int		  config_cap_parse(const char *, uint32_t *);
/* fmt_duration: 300 -> "5m", 90 -> "90s", 3600 -> "1h" */
const char	 *config_fmt_duration(int, char *, size_t);

/* The built-in policy: every capability in every namespace. */
#define CONF_POLICY_MANAGEMENT	"management"

/*
 * Value checks shared by the parser and the tests.  Each returns NULL when
 * the value is acceptable, else a short reason for the error message.
 */
/* "30s", "5m", "1h30m", "1d", or plain seconds; *secs gets the value. */
const char	 *config_parse_duration(const char *, int *secs);
/* "512K", "4M", "1G" or bytes (units of 1024); NULL or why not. */
const char	 *config_parse_size(const char *, uint64_t *bytes);
const char	 *config_fmt_size(uint64_t, char *, size_t);
const char	 *config_check_name(const char *);	/* repo/group/policy */
const char	 *config_check_username(const char *);	/* a login name */
const char	 *config_check_unixname(const char *);	/* user, group */
const char	 *config_check_namespace(const char *);	/* a Nomad namespace */
const char	 *config_check_glob(const char *);	/* namespace glob */
const char	 *config_check_nomad_address(const char *);
/* *is_ssh is set for ssh:// and scp-like user@host:path URLs. */
const char	 *config_check_repo_url(const char *, int *is_ssh);
const char	 *config_check_commit_url(const char *);
const char	 *config_check_branch(const char *);
const char	 *config_check_repo_path(const char *);
/*
 * An http:// or https:// URL without credentials or fragment; with
 * secure set, http:// only for a loopback host.
 */
const char	 *config_check_url(const char *, int secure);
const char	 *config_check_ntfy_topic(const char *);
/* notify blocks: "webhook", "slack", "ntfy"; event names. */
const char	 *config_notify_kind_name(int);
const char	 *config_notify_event_name(uint32_t);
int		  config_notify_event_parse(const char *, uint32_t *);

#endif /* NOPS_CONF_H */
