/*
 * The master's start-up as root: its row's pd_init (master/proc.c).  It
 * reads the configuration and every file it names (a copy of each is
 * kept, cfile.h), opens the sockets, prepares the directories and the
 * database, and says what the master keeps once proc_run() drops it:
 * its user, NOPSD_CAPS, its Landlock paths and the rows of its filter
 * known only now.  nopsd.c has the rest of the master's life.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "xmalloc.h"
#include "nops.h"
#include "proc.h"
#include "conf.h"
#include "sandbox.h"
#include "nopsd_sandbox.h"
#include "master.h"
#include "nomad.h"
#include "auth.h"
#include "nixrun.h"
#include "cfile.h"

/*
 * Make a directory if it is missing.  With own set, the directory is ours
 * alone and its owner and mode are enforced; otherwise an existing one is
 * left as it is (never chmod a directory such as /tmp).
 */
static void
nopsd_mkdir(const char *path, mode_t mode, uid_t uid, gid_t gid, int own)
{
	struct stat	 sb;
	int		 made = 0;

	if (mkdir(path, mode) == 0)
		made = 1;
	else if (errno != EEXIST)
		fatal("mkdir %s", path);
	if (lstat(path, &sb) == -1)
		fatal("%s", path);
	if (!S_ISDIR(sb.st_mode))
		fatalx("%s: not a directory", path);
	if ((made || own) &&
	    (sb.st_uid != uid || sb.st_gid != gid ||
	    (sb.st_mode & 07777) != mode)) {
		if (chown(path, uid, gid) == -1 || chmod(path, mode) == -1)
			fatal("chown/chmod %s", path);
	}
}

/* The webworker's root: empty, root-owned, not writable by it. */
static void
nopsd_mkempty(const char *path)
{
	struct dirent	*de;
	DIR		*d;
	char		*copy;

	if ((copy = strdup(path)) == NULL)
		fatal("strdup");
	nopsd_mkdir(dirname(copy), 0755, 0, 0, 0);
	free(copy);
	nopsd_mkdir(path, 0755, 0, 0, 1);
	if ((d = opendir(path)) == NULL)
		fatal("opendir %s", path);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			fatalx("%s must be an empty directory (found %s)",
			    path, de->d_name);
	closedir(d);
}

/*
 * The master's own user (master user in nops.conf) owns the state
 * directory and the database.  A directory others may write (such as
 * /tmp) is refused: it cannot be the master's alone.
 */
static void
nopsd_own_statedir(const char *path)
{
	struct nopsd	*env = nopsd_env;
	struct stat	 sb;

	if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    (sb.st_mode & (S_IWOTH | S_ISVTX)) != 0)
		fatalx("%s: the database must be in a directory of its own, "
		    "not one others may write", path);
	nopsd_mkdir(path, 0711, env->n_muid, env->n_mgid, 1);
}

/* A database left by a master that ran as root becomes the master's. */
static void
nopsd_own_database(const char *db)
{
	struct nopsd	*env = nopsd_env;
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	struct stat	 sb;
	char		 p[PATH_MAX];
	size_t		 i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s%s", db, sfx[i]) >=
		    sizeof(p))
			fatalx("%s: path too long", db);
		if (lstat(p, &sb) == -1 || !S_ISREG(sb.st_mode) ||
		    sb.st_uid == env->n_muid)
			continue;
		if (sb.st_uid != 0)
			fatalx("%s is owned by uid %u, neither root nor the "
			    "master's user %s", p, (unsigned int)sb.st_uid,
			    env->n_conf->master_user);
		if (chown(p, env->n_muid, env->n_mgid) == -1)
			fatal("chown %s", p);
		log_info("%s: now owned by the master's user %s", p,
		    env->n_conf->master_user);
	}
}

/*
 * Every file the configuration names, for fn: the files the master reads
 * itself (keys, tokens, certificates, the users file: dir 0) and the
 * directories of file:// remotes the gitworker reads (dir 1).
 */
void
nopsd_conf_files(struct nops_conf *conf, nopsd_file_fn fn, void *arg)
{
	struct conf_listen	*cl;
	struct conf_repo	*cr;
	struct conf_notify	*cn;
	const char		*files[8];
	size_t			 i, n = 0;

	files[n++] = conf->nomad.token_file;
	files[n++] = conf->nomad.ca_file;
	files[n++] = conf->users_file;
	files[n++] = conf->bootstrap_token_file;
	files[n++] = conf->metrics_token_file;
	files[n++] = conf->hosts.ssh_key_file;
	files[n++] = conf->hosts.known_hosts_file;
	for (i = 0; i < n; i++)
		if (files[i] != NULL)
			fn(files[i], 0, arg);
	TAILQ_FOREACH(cl, &conf->listens, entry) {
		if (cl->tls_cert != NULL)
			fn(cl->tls_cert, 0, arg);
		if (cl->tls_key != NULL)
			fn(cl->tls_key, 0, arg);
	}
	TAILQ_FOREACH(cr, &conf->repos, entry) {
		if (cr->webhook_secret_file != NULL)
			fn(cr->webhook_secret_file, 0, arg);
		if (cr->ssh_key_file != NULL)
			fn(cr->ssh_key_file, 0, arg);
		if (cr->known_hosts_file != NULL)
			fn(cr->known_hosts_file, 0, arg);
		if (strncmp(cr->url, "file://", 7) == 0)
			fn(cr->url + 7, 1, arg);
	}
	TAILQ_FOREACH(cn, &conf->notifies, entry)
		if (cn->token_file != NULL)
			fn(cn->token_file, 0, arg);
}

/* Kept as read now, as root (cfile.h): the master may not open it later. */
static void
nopsd_keep_file(const char *path, int dir, void *arg)
{
	if (!dir)
		(void)cfile_keep(path);
}

/* A Landlock path of the master: path itself, or its directory. */
static void
nopsd_ll_add(struct proc_ctx *pc, const char *path, int dir,
    unsigned int access)
{
	char	*copy, *real;

	if (path == NULL || strcmp(path, ":memory:") == 0)
		return;
	if ((copy = strdup(path)) == NULL)
		fatal("strdup");
	if ((real = realpath(dir ? dirname(copy) : copy, NULL)) == NULL) {
		log_debug("landlock: %s: %s", path, strerror(errno));
		free(copy);
		return;
	}
	free(copy);
	proc_add_path(pc, real, access);
	free(real);
}

/* Read the directory of each file (a reload reads them again). */
static void
nopsd_ll_file(const char *path, int dir, void *arg)
{
	nopsd_ll_add(arg, path, !dir, SANDBOX_FS_READ);
}

/*
 * What the master may touch once confined: the directories of its
 * configuration and of every file it names (read: a reload reads them
 * again; a file in another directory takes a restart), the local paths
 * of file:// remotes (read, for the gitworker it starts), the state
 * directory (read-write), the nopsd binary with its loader (execute),
 * Nix for the Nix children (execute its programs, read the store), and
 * the control socket's directory, when it is the master's, to remove
 * the socket at shutdown.
 */
static void
nopsd_ll_paths(struct proc_ctx *pc)
{
	struct nopsd	*env = nopsd_env;
	struct stat	 sb;
	char		*copy;

	nopsd_ll_add(pc, env->n_conffile, 1, SANDBOX_FS_READ);
	nopsd_conf_files(env->n_conf, nopsd_ll_file, pc);
	nopsd_ll_add(pc, env->n_statedir, 0,
	    SANDBOX_FS_READ | SANDBOX_FS_WRITE);
	nopsd_ll_add(pc, "/proc/self/exe", 0,
	    SANDBOX_FS_READ | SANDBOX_FS_EXEC);
	nopsd_ll_add(pc, NOPSD_LOADER, 0, SANDBOX_FS_READ | SANDBOX_FS_EXEC);
	nopsd_ll_add(pc, nixrun_bin("nix-instantiate"), 0,
	    SANDBOX_FS_READ | SANDBOX_FS_EXEC);
	nopsd_ll_add(pc, nixrun_bin("nix-store"), 0,
	    SANDBOX_FS_READ | SANDBOX_FS_EXEC);
	nopsd_ll_add(pc, "/nix", 0, SANDBOX_FS_READ);
	if ((copy = strdup(env->n_conf->control_socket)) == NULL)
		fatal("strdup");
	if (stat(dirname(copy), &sb) == 0 && sb.st_uid == env->n_muid)
		proc_add_path(pc, copy, SANDBOX_FS_UNLINK);
	else
		log_info("control socket %s: its directory is not %s's, so "
		    "the socket stays when nopsd stops (the next start "
		    "replaces it)", env->n_conf->control_socket,
		    env->n_conf->master_user);
	free(copy);
}

/*
 * The control socket's directory: one nopsd makes, and its run
 * directory, belong to the master's user, so that it can remove its
 * socket when it stops.  Another (such as /tmp) is left as it is.
 */
static void
nopsd_ctldir(void)
{
	struct nopsd	*env = nopsd_env;
	struct stat	 sb;
	char		*copy, *dir;

	if ((copy = strdup(env->n_conf->control_socket)) == NULL)
		fatal("strdup");
	dir = dirname(copy);
	if (strcmp(dir, NOPS_RUNDIR) == 0)
		nopsd_mkdir(dir, 0755, env->n_muid, env->n_mgid, 1);
	else if (lstat(dir, &sb) == -1 && errno == ENOENT)
		nopsd_mkdir(dir, 0755, env->n_muid, env->n_mgid, 0);
	else if (lstat(dir, &sb) == -1 || !S_ISDIR(sb.st_mode))
		fatalx("control socket %s: %s is not a directory",
		    env->n_conf->control_socket, dir);
	free(copy);
}

/*
 * The master's row of the process table (master/proc.c), pd_init: all
 * that takes root, done as root.  Read the config and every file it
 * names (kept, cfile.h), open the listeners and the control socket,
 * prepare the directories and the database (the master's user's), then
 * say what the master keeps: its user, NOPSD_CAPS, its Landlock paths
 * and the rows of its filter known only now.  proc_run() then drops and
 * confines it before a single worker exists.
 */
void
nopsd_init(struct proc_ctx *pc)
{
	struct nopsd	*env = nopsd_env;
	struct passwd	*pw;
	struct group	*gr;
	const char	*conffile = env->n_conffile;
	char		*copy;

	if (geteuid() != 0)
		errx(1, "need root privileges: the master must start as root "
		    "to drop the workers' privileges");

	if ((env->n_conf = parse_config(conffile, 0)) == NULL ||
	    api_auth_configure(env->n_conf, 0) == -1)
		errx(1, "%s: configuration has errors", conffile);
	env->n_conf_loaded = time(NULL);

	if ((pw = getpwnam(env->n_conf->user)) == NULL)
		errx(1, "unknown user %s (the workers' user; see nops.conf(5))",
		    env->n_conf->user);
	if (pw->pw_uid == 0)
		errx(1, "user %s is root: the workers must not run as root",
		    env->n_conf->user);
	env->n_uid = pw->pw_uid;
	env->n_gid = pw->pw_gid;
	if ((pw = getpwnam(env->n_conf->master_user)) == NULL)
		errx(1, "unknown user %s (the master's user; scripts/deps "
		    "creates _nopsd; see nops.conf(5))",
		    env->n_conf->master_user);
	if (pw->pw_uid == 0 || pw->pw_gid == 0)
		errx(1, "master user %s is root", env->n_conf->master_user);
	if (pw->pw_uid == env->n_uid || pw->pw_gid == env->n_gid)
		errx(1, "master user %s must not share its uid or gid with "
		    "the workers' user %s", env->n_conf->master_user,
		    env->n_conf->user);
	env->n_muid = pw->pw_uid;
	env->n_mgid = pw->pw_gid;
	if ((gr = getgrnam(env->n_conf->control_group)) == NULL)
		errx(1, "unknown control group %s",
		    env->n_conf->control_group);
	env->n_ctlgid = gr->gr_gid;

	log_init(pc->pc_debug, LOG_DAEMON);
	log_setverbose(pc->pc_verbose);
	log_procinit("nopsd");

	nopsd_mkempty(NOPS_RUNDIR "/empty");
	nopsd_ctldir();

	/* The gitworker's cache lives next to the database, owned by it. */
	if ((copy = strdup(env->n_conf->database)) == NULL)
		fatal("strdup");
	if (strcmp(env->n_conf->database, ":memory:") == 0)
		env->n_statedir = strdup(NOPS_STATEDIR);
	else
		env->n_statedir = strdup(dirname(copy));
	free(copy);
	if (env->n_statedir == NULL)
		fatal("strdup");
	nopsd_own_statedir(env->n_statedir);
	copy = xasprintf("%s/git", env->n_statedir);
	nopsd_mkdir(copy, 0700, env->n_uid, env->n_gid, 1);
	free(copy);
	/* The Nix children's directories, theirs too (nixrun.c). */
	copy = xasprintf("%s/" NIXRUN_DIR, env->n_statedir);
	nopsd_mkdir(copy, 0700, env->n_uid, env->n_gid, 1);
	free(copy);
	if (strcmp(env->n_conf->database, ":memory:") != 0)
		nopsd_own_database(env->n_conf->database);

	if (!pc->pc_debug && daemon(0, 0) == -1)
		fatal("daemon");
	env->n_started = time(NULL);

	if ((env->n_base = event_base_new()) == NULL)
		fatalx("event_base_new");
	if (control_listen_all(env->n_conf, env->n_ctlgid) == -1)
		fatalx("cannot open the sockets of the config");

	supervise_init();
	nomad_init();
	/*
	 * Every file the config names is read now, as root, and kept: the
	 * modules that use them read them below and at each reload
	 * (cfile.h), as the master's user.
	 */
	nopsd_conf_files(env->n_conf, nopsd_keep_file, NULL);
	nomad_configure(env->n_conf);

	auth_hash_cgroup(env->n_muid, env->n_mgid);	/* as root */

	nopsd_sandbox_prepare(pc, env->n_muid, env->n_mgid, env->n_uid,
	    env->n_gid);
	nopsd_ll_paths(pc);
}
