/*
 * nopsd: the master process.  It parses the config, opens the sockets the
 * webworker serves, forks and re-execs the workers, owns the SQLite store
 * and answers the API.  With -P the same binary becomes a worker.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "jsonwipe.h"
#include "log.h"
#include "nops.h"
#include "proc.h"
#include "conf.h"
#include "sandbox.h"
#include "nopsd_sandbox.h"
#include "master.h"
#include "webpub.h"
#include "wire_proc.h"
#include "nomad.h"
#include "repo.h"
#include "store.h"
#include "engine.h"
#include "hosts.h"
#include "nixrun.h"
#include "cfile.h"
#include "auth.h"
#include "webhook.h"
#include "metrics.h"
#include "notify.h"
#include "gitworker.h"
#include "nomadworker.h"
#include "webworker.h"

#define NOPSD_STORE_WATCH	5	/* s between checks of
					   the database file */

struct nopsd	*nopsd_env;

static __dead void	 usage(void);
static void		 nopsd_sig(int, short, void *);
static void		 nopsd_shutdown(void);

/*
 * The database file went away under us (store_check): the request that
 * found it is answered with the error, then the master stops, non-zero,
 * rather than go on with state nobody will find at the next start.
 */
static char	 nopsd_lostmsg[512];

static void
nopsd_store_exit(evutil_socket_t fd, short event, void *arg)
{
	struct nopsd	*env = nopsd_env;

	env->n_shutdown = 1;
	supervise_stop_all();
	control_close_all();
	fatalx("%s; exiting", nopsd_lostmsg);
}

static void
nopsd_store_lost(const char *msg)
{
	struct timeval	 tv = { 1, 0 };

	strlcpy(nopsd_lostmsg, msg, sizeof(nopsd_lostmsg));
	if (event_base_once(nopsd_env->n_base, -1, EV_TIMEOUT,
	    nopsd_store_exit, NULL, &tv) == -1)
		nopsd_store_exit(-1, 0, NULL);
}

/* Also when nothing writes: look every few seconds. */
static void
nopsd_store_watch(evutil_socket_t fd, short event, void *arg)
{
	/* A lost file is reported by store_lost, which ends the master. */
	if (nopsd_env->n_store != NULL && store_check(nopsd_env->n_store) == -1)
		log_debug("store check: %s", store_error(nopsd_env->n_store));
}

static __dead void
usage(void)
{
	extern char	*__progname;

	fprintf(stderr, "usage: %s [-cdFnv] [-D macro=value] [-f file]\n",
	    __progname);
	exit(2);
}

void
nopsd_set_verbose(int v)
{
	struct wire_verbose	 w = { .level = (uint32_t)v };
	struct msgw		 m;

	nopsd_env->n_verbose = v;
	log_setverbose(v);
	msg_init(&m);
	wire_put_verbose(&m, &w);
	if (m.err)
		fatalx("%s", __func__);
	supervise_broadcast(IMSG_CTL_VERBOSE, m.buf, m.len);
	msg_free(&m);
}

static int
nopsd_strne(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	return strcmp(a, b) != 0;
}

/*
 * What only a restart can change: the sockets opened as root (a new
 * port may be privileged), the users and the database the processes were
 * set up with.  Returns the statement that changed, or NULL.
 */
static int
nopsd_strs_ne(const struct conf_strs *a, const struct conf_strs *b)
{
	const struct conf_str	*sa, *sb = TAILQ_FIRST(b);

	TAILQ_FOREACH(sa, a, entry) {
		if (sb == NULL || strcmp(sa->str, sb->str) != 0)
			return 1;
		sb = TAILQ_NEXT(sb, entry);
	}
	return sb != NULL;
}

static const char *
nopsd_restart_only(struct nops_conf *a, struct nops_conf *b)
{
	struct conf_listen	*la, *lb;

	if (nopsd_strne(a->control_socket, b->control_socket) ||
	    nopsd_strne(a->control_group, b->control_group))
		return "control socket";
	if (nopsd_strne(a->user, b->user))
		return "user";
	if (nopsd_strne(a->master_user, b->master_user))
		return "master user";
	if (nopsd_strne(a->database, b->database))
		return "database";
	lb = TAILQ_FIRST(&b->listens);
	TAILQ_FOREACH(la, &a->listens, entry) {
		if (lb == NULL || strcmp(la->host, lb->host) != 0 ||
		    la->port != lb->port || la->tls != lb->tls ||
		    nopsd_strne(la->tls_cert, lb->tls_cert) ||
		    nopsd_strne(la->tls_key, lb->tls_key) ||
		    nopsd_strs_ne(&la->hostnames, &lb->hostnames))
			return "listen";
		lb = TAILQ_NEXT(lb, entry);
	}
	if (lb != NULL)
		return "listen";
	/* The webworker gets these with its listeners. */
	if (a->max_body_size != b->max_body_size)
		return "max-body-size";
	if (a->max_conns_per_address != b->max_conns_per_address)
		return "max-connections-per-address";
	return NULL;
}

/*
 * The master, which dropped root, reads the files of a reload as its own
 * user, or takes the copy it kept of a file unchanged since the start
 * (cfile.h).  The first file it can do neither for refuses the reload
 * before anything changes.
 */
static void
nopsd_mark_file(const char *path, int dir, void *arg)
{
	if (!dir)
		cfile_mark(path);
}

struct nopsd_unreadable {
	const char	*nu_path;
	int		 nu_changed;
	int		 nu_errno;
};

static void
nopsd_check_file(const char *path, int dir, void *arg)
{
	struct nopsd_unreadable	*nu = arg;
	int			 fd, changed = 0;

	if (nu->nu_path != NULL)
		return;
	if (dir) {
		/* open(2), not access(2): Landlock decides on open. */
		if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) !=
		    -1) {
			close(fd);
			return;
		}
	} else if (cfile_readable(path, &changed))
		return;
	nu->nu_path = path;
	nu->nu_changed = changed;
	nu->nu_errno = errno;
}

/* Record an audit event in a transaction of its own (none: no store). */
static void
nopsd_event(const char *who, const char *action, const char *target,
    const char *detail)
{
	struct nopsd	*env = nopsd_env;

	if (env->n_store != NULL && store_begin(env->n_store) == 0) {
		if (store_event(env->n_store, who, action, target,
		    detail) == -1 || store_commit(env->n_store) == -1)
			store_rollback(env->n_store);
	}
}

static void
nopsd_reload_refused(const char *who, const char *why)
{
	nopsd_env->n_reload_failures++;
	nopsd_event(who, "config.reload", nopsd_env->n_conffile, why);
}

/*
 * Re-read the config.  An invalid one is refused with its errors logged;
 * the running one stays.  Returns 0 or -1.
 */
int
nopsd_reload(const char *who)
{
	struct nopsd		*env = nopsd_env;
	struct nops_conf	*conf;
	struct nopsd_unreadable	 nu;
	const char		*what;
	char			 why[128];
	int			 fd;

	log_info("reloading %s (asked by %s)", env->n_conffile, who);
	if ((fd = open(env->n_conffile, O_RDONLY | O_CLOEXEC)) == -1) {
		log_warn("%s: cannot be read by the master's user %s; make it "
		    "readable by that user (for example chgrp %s, mode 0640) "
		    "or restart nopsd; the running configuration stays",
		    env->n_conffile, env->n_conf->master_user,
		    env->n_conf->master_user);
		nopsd_reload_refused(who, "refused: the configuration file "
		    "cannot be read");
		return -1;
	}
	close(fd);
	if ((conf = parse_config(env->n_conffile, 0)) == NULL) {
		log_warnx("%s has errors; keeping the running configuration",
		    env->n_conffile);
		nopsd_reload_refused(who, "refused: errors");
		return -1;
	}
	/* Refused whole, before any part of it is applied. */
	if ((what = nopsd_restart_only(env->n_conf, conf)) != NULL) {
		config_free(conf);
		log_warnx("%s: %s changed, which takes a restart of nopsd; "
		    "nothing was changed, the running configuration stays",
		    env->n_conffile, what);
		snprintf(why, sizeof(why), "refused: %s changed (needs a "
		    "restart)", what);
		nopsd_reload_refused(who, why);
		return -1;
	}
	memset(&nu, 0, sizeof(nu));
	nopsd_conf_files(conf, nopsd_check_file, &nu);
	if (nu.nu_path != NULL) {
		log_warnx("%s: %s cannot be read by the master's user %s (%s); "
		    "give it to that user (chown %s, mode 0600) or restart "
		    "nopsd; nothing was changed", env->n_conffile, nu.nu_path,
		    env->n_conf->master_user, nu.nu_changed ? "it changed "
		    "since nopsd read it as root at start" :
		    strerror(nu.nu_errno), env->n_conf->master_user);
		config_free(conf);
		nopsd_reload_refused(who, "refused: a file the master's user "
		    "cannot read");
		return -1;
	}
	/* The users file and bootstrap token are part of the config. */
	if (api_auth_configure(conf, 0) == -1) {
		config_free(conf);
		log_warnx("%s: users file or bootstrap token has errors; "
		    "keeping the running configuration", env->n_conffile);
		nopsd_reload_refused(who, "refused: users file or bootstrap "
		    "token");
		return -1;
	}
	config_free(env->n_conf);
	env->n_conf = conf;
	env->n_conf_loaded = time(NULL);
	/* Copies kept of files the configuration no longer names go. */
	nopsd_conf_files(conf, nopsd_mark_file, NULL);
	cfile_sweep();
	env->n_reloads++;
	/* Re-reads the token and CA files and tells the nomadworker. */
	nomad_configure(conf);
	/* Repositories added, removed or changed; the gitworker is told. */
	repo_reconfigure(conf);
	engine_reconfigure(conf);
	hosts_configure(conf);
	/* Webhook, metrics and notification secrets are read again. */
	webhook_configure(conf);
	metrics_configure(conf);
	notify_configure(conf);
	/* Policies, users and namespaces may have changed every class. */
	webpub_reset();
	nopsd_event(who, "config.reload", env->n_conffile, "ok");
	log_info("configuration reloaded");
	return 0;
}

static void
nopsd_sig(int sig, short event, void *arg)
{
	switch (sig) {
	case SIGHUP:
		nopsd_reload("signal");
		break;
	case SIGCHLD:
		supervise_sigchld();
		break;
	case SIGTERM:
	case SIGINT:
		log_info("received %s; stopping", strsignal(sig));
		nopsd_shutdown();
		break;
	}
}

static void
nopsd_shutdown(void)
{
	struct nopsd	*env = nopsd_env;

	env->n_shutdown = 1;
	supervise_stop_all();
	nomad_shutdown();
	webpub_shutdown();
	engine_shutdown();
	api_auth_shutdown();
	if (env->n_store != NULL) {
		nopsd_event("system", "daemon.stop", "nopsd", NULL);
		store_close(env->n_store);
		env->n_store = NULL;
	}
	control_close_all();
	event_base_loopbreak(env->n_base);
}

/*
 * -n: the users and the control group the config names must exist here.
 */
static int
nopsd_check_ids(const char *conffile, const struct nops_conf *conf)
{
	struct passwd	*pw;
	uid_t		 wuid = 0;
	int		 rc = 0;

	if ((pw = getpwnam(conf->user)) == NULL) {
		fprintf(stderr, "%s: user \"%s\" does not exist on this "
		    "system (scripts/deps creates _nops)\n", conffile,
		    conf->user);
		rc = -1;
	} else
		wuid = pw->pw_uid;
	if ((pw = getpwnam(conf->master_user)) == NULL) {
		fprintf(stderr, "%s: master user \"%s\" does not exist on "
		    "this system (scripts/deps creates _nopsd)\n", conffile,
		    conf->master_user);
		rc = -1;
	} else if (pw->pw_uid == 0 || pw->pw_uid == wuid) {
		fprintf(stderr, "%s: master user \"%s\" must be neither root "
		    "nor the workers' user\n", conffile, conf->master_user);
		rc = -1;
	}
	if (getgrnam(conf->control_group) == NULL) {
		fprintf(stderr, "%s: control socket group \"%s\" does not "
		    "exist on this system (scripts/deps creates _nopsadm)\n",
		    conffile, conf->control_group);
		rc = -1;
	}
	return rc;
}

static struct event	*nopsd_ev_hup, *nopsd_ev_term, *nopsd_ev_int,
			*nopsd_ev_chld;

/*
 * pd_run: the master, confined.  Its workers start inside its sandbox
 * (their own nests in it); then the store, the engine and the rest.
 */
void
nopsd_run(struct proc_ctx *pc)
{
	struct nopsd	*env = nopsd_env;
	static struct event *watch;
	struct timeval	 tv = { NOPSD_STORE_WATCH, 0 };
	char		 err[512];

	log_info("running as %s (uid %u), keeping only the capabilities to "
	    "start the workers", env->n_conf->master_user,
	    (unsigned int)env->n_muid);
	signal(SIGPIPE, SIG_IGN);
	nopsd_ev_hup = evsignal_new(env->n_base, SIGHUP, nopsd_sig, NULL);
	nopsd_ev_term = evsignal_new(env->n_base, SIGTERM, nopsd_sig, NULL);
	nopsd_ev_int = evsignal_new(env->n_base, SIGINT, nopsd_sig, NULL);
	nopsd_ev_chld = evsignal_new(env->n_base, SIGCHLD, nopsd_sig, NULL);
	if (nopsd_ev_hup == NULL || nopsd_ev_term == NULL ||
	    nopsd_ev_int == NULL || nopsd_ev_chld == NULL)
		fatalx("evsignal_new");
	evsignal_add(nopsd_ev_hup, NULL);
	evsignal_add(nopsd_ev_term, NULL);
	evsignal_add(nopsd_ev_int, NULL);
	evsignal_add(nopsd_ev_chld, NULL);
	supervise_start_all();
	auth_hash_init();

	/* Only now, with the workers forked: no connection crosses fork. */
	if ((env->n_store = store_open(env->n_conf->database, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		env->n_shutdown = 1;
		supervise_stop_all();
		control_close_all();
		fatalx("cannot open the database; nothing was changed");
	}
	store_lost = nopsd_store_lost;
	if ((watch = event_new(env->n_base, -1, EV_PERSIST,
	    nopsd_store_watch, NULL)) == NULL || event_add(watch, &tv) == -1)
		fatalx("store watch: event");
	nopsd_event("system", "daemon.start", "nopsd", NOPS_VERSION);
	/* Key files (kept from the start); polls start now. */
	repo_init(env->n_conf);
	engine_init(env->n_store, env->n_conf);
	hosts_configure(env->n_conf);
	hosts_init(env->n_store, env->n_conf);
	webhook_configure(env->n_conf);
	metrics_configure(env->n_conf);
	notify_configure(env->n_conf);
	/* The sessions and tokens are in the store: tell the webworker. */
	webpub_init();
	webpub_reset();
	log_info("nopsd %s started", NOPS_VERSION);

	event_base_dispatch(env->n_base);

	log_info("stopped");
	event_free(nopsd_ev_hup);
	event_free(nopsd_ev_term);
	event_free(nopsd_ev_int);
	event_free(nopsd_ev_chld);
	config_free(env->n_conf);
	event_base_free(env->n_base);
	free(env);
	exit(0);
}

int
main(int argc, char *argv[])
{
	struct nopsd	*env;
	const struct proc_def *pd;
	const char	*conffile = NOPS_CONF_FILE, *title = NULL;
	int		 ch, debug = 0, noaction = 0, verbose = 0, dumpable = 0;

	while ((ch = getopt(argc, argv, "cdD:f:FnP:v")) != -1) {
		switch (ch) {
		case 'c':
			dumpable = 1;
			break;
		case 'd':
			debug = 1;
			break;
		case 'D':
			if (cmdline_symset(optarg) == -1)
				errx(2, "could not parse macro definition %s",
				    optarg);
			break;
		case 'f':
			conffile = optarg;
			break;
		case 'F':
			store_fresh = 1;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'P':
			title = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	if (argc > 0)
		usage();

	/*
	 * Before any secret is read: no core file, no ptrace by others of
	 * our uid (unless -c asks for core dumps, to debug a crash).
	 */
	sandbox_nocore("nopsd", dumpable);
	jsonwipe_init();
	if (title != NULL) {
		if ((pd = proc_find(title)) == NULL ||
		    pd->pd_id == PROC_MASTER)
			errx(2, "unknown process %s", title);
		proc_run(pd, debug, verbose, dumpable);
	}

	/* Errors of -n go to stderr whoever runs it. */
	log_init(1, LOG_DAEMON);
	log_setverbose(verbose);
	log_procinit("nopsd");

	if ((env = calloc(1, sizeof(*env))) == NULL)
		fatal("calloc");
	nopsd_env = env;
	env->n_conffile = conffile;
	env->n_debug = debug;
	env->n_dumpable = dumpable;
	env->n_verbose = verbose;
	env->n_argv0 = argv[0];

	if (noaction) {
		struct nops_conf *conf;

		if ((conf = parse_config(conffile, 0)) == NULL ||
		    api_auth_configure(conf, 1) == -1 ||
		    nopsd_check_ids(conffile, conf) == -1) {
			fprintf(stderr, "%s: configuration has errors\n",
			    conffile);
			exit(1);
		}
		if (verbose)
			config_print(stdout, conf);
		else
			fprintf(stderr, "configuration OK\n");
		config_free(conf);
		exit(0);
	}

	/* The master's row: nopsd_init() as root, then nopsd_run(). */
	proc_run(&procs[PROC_MASTER], debug, verbose, dumpable);
}
