/*
 * libFuzzer target: the master's side of every channel.  Hostile
 * messages of every type, from every worker (gitworker, nomadworker,
 * webworker), go through the master's real read path and dispatch
 * (supervise.c: framing, the permit table, each handler) with the real
 * store in a temporary directory.  A worker that breaks protocol is
 * "restarted" (a new channel) as the master would.  Invariants (abort on
 * violation): the master survives every input (no crash, no fatal), and
 * after each the store is consistent: PRAGMA integrity_check is "ok",
 * no foreign key is broken, at most one deployment per job is active.
 *
 * Input: records of u8 worker (mod 3), u8 flags (bit 0: the header
 * names another pid), u16 type (mod IMSG_MAX + 2: unknown types too),
 * u32 peerid, u16 length, then that many payload bytes (fewer at the
 * end).  Seeds: tests/fuzz/corpus/fuzz_master/ (tests/fuzz/seeds_master).
 * The sources below are every master file but nopsd.c and proc.c (main
 * and the workers' entry points) and the shared ones they use: a new
 * file of the master goes on this list too.
 */
/* FUZZ-SOURCES: master/acl.c master/api.c master/engine_apply.c master/auth.c */
/* FUZZ-SOURCES: master/api_auth.c master/auth_hash.c master/auth_login.c */
/* FUZZ-SOURCES: master/auth_throttle.c master/config.c master/control.c */
/* FUZZ-SOURCES: master/engine_decide.c master/deploy.c master/engine_detect.c */
/* FUZZ-SOURCES: master/engine.c master/api_engine.c master/engine_health.c */
/* FUZZ-SOURCES: master/engine_hooks.c master/jsonb.c shared/meta.c */
/* FUZZ-SOURCES: master/engine_survey.c master/engine_memo.c master/engine_watch.c */
/* FUZZ-SOURCES: master/metrics.c master/nixrun.c master/nomad.c */
/* FUZZ-SOURCES: master/nomad_cache.c master/nomad_conf.c */
/* FUZZ-SOURCES: master/nomad_debug.c master/notify.c master/openapi.c */
/* FUZZ-SOURCES: master/plans.c master/redact.c */
/* FUZZ-SOURCES: master/repo.c master/store.c master/supervise.c */
/* FUZZ-SOURCES: master/api_dashboard.c master/webhook.c */
/* FUZZ-SOURCES: master/webhook_verify.c master/webpub.c master/parse.c */
/* FUZZ-SOURCES: master/cfile.c shared/addr.c shared/hex.c */
/* FUZZ-SOURCES: master/action.c master/leftbehind.c master/operation.c */
/* FUZZ-SOURCES: master/suspend.c master/hosts.c master/hosts_api.c */
/* FUZZ-SOURCES: master/schema.c master/nixrun_sandbox.c */
/* FUZZ-SOURCES: master/hosts_drift.c master/hosts_http.c */
/* FUZZ-SOURCES: master/hosts_each.c master/hosts_ops.c */
/* FUZZ-SOURCES: master/hoststep.c master/hoststep_copy.c */
/* FUZZ-SOURCES: master/hoststep_activate.c master/hoststep_check.c */
/* FUZZ-SOURCES: shared/plan_json.c master/diffview.c */
/* FUZZ-SOURCES: shared/authc.c shared/imsg.c shared/log.c */
/* FUZZ-SOURCES: shared/logflood.c shared/msg.c shared/msgtab.c */
/* FUZZ-SOURCES: shared/plan.c shared/plan_host.c shared/plan_phase.c */
/* FUZZ-SOURCES: shared/proc.c shared/sandbox.c */
/* FUZZ-SOURCES: shared/text.c shared/webdoc.c shared/wire.c */
/* FUZZ-SOURCES: master/gitctx.c shared/growbuf.c shared/hcl.c */
/* FUZZ-SOURCES: shared/wire_git.c shared/wire_nomad.c shared/wire_notify.c */
/* FUZZ-SOURCES: shared/wire_auth.c */
/* FUZZ-SOURCES: shared/wire_proc.c shared/wire_hosts.c */
/* FUZZ-SOURCES: shared/xmalloc.c */
/* FUZZ-SOURCES: master/store_auth.c master/store_dash.c master/store_deploy.c */
/* FUZZ-SOURCES: master/store_hosts.c master/store_job.c */
/* FUZZ-SOURCES: master/store_leftbehind.c master/store_operation.c */
/* FUZZ-SOURCES: master/engine_focus.c */
/* FUZZ-LIBS: jansson sqlite3 libevent libcrypto libssl libxcrypt */
/* FUZZ-LIBS: libseccomp libgit2 libcurl */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>
#include <sqlite3.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "nomad.h"
#include "repo.h"
#include "engine.h"
#include "webhook.h"
#include "metrics.h"
#include "notify.h"
#include "webpub.h"
#include "api.h"
#include "auth.h"

/* What nopsd.c (main) would give: the environment, reload, verbosity. */
struct nopsd	*nopsd_env;

int
nopsd_reload(const char *who)
{
	return -1;	/* the config stays: nothing to read again here */
}

void
nopsd_set_verbose(int v)
{
	nopsd_env->n_verbose = v;
}

int	 LLVMFuzzerInitialize(int *, char ***);
int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char	 fm_dir[] = "/tmp/nops-fuzz-master.XXXXXX";
static char	 fm_db[256];
static int	 fm_end[PROC_MAX] = { -1, -1, -1, -1 };	/* the workers' ends */

/*
 * The pid of each pretend worker: a child that has exited and is never
 * reaped, so the master's kill(2) of a worker it thinks broke protocol
 * hits a zombie, never a live process, and the pid is not reused.  A
 * "restarted" worker keeps it (no fork per restart: fuzzing stays fast).
 */
static pid_t	 fm_pid[PROC_MAX];

static pid_t
fm_zombie(enum nops_proc id)
{
	pid_t	 pid;

	if (fm_pid[id] != 0)
		return fm_pid[id];
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0)
		_exit(0);
	return fm_pid[id] = pid;
}

/* A new channel for a worker, as a restart would give. */
static void
fm_attach(enum nops_proc id)
{
	struct worker	*w = supervise_worker(id);
	int		 sp[2];

	if (fm_end[id] != -1)
		close(fm_end[id]);
	if (w->w_iev.ibuf.fd != -1 && w->w_running)
		imsgev_clear(&w->w_iev);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sp) == -1)
		fatal("socketpair");
	fm_end[id] = sp[1];
	supervise_attach(w, sp[0], fm_zombie(id));
}

/* Run what is ready in the master, and throw away what it sent. */
static void
fm_spin(void)
{
	char		 buf[65536];
	enum nops_proc	 id;
	int		 i;

	for (i = 0; i < 4; i++) {
		event_base_loop(nopsd_env->n_base, EVLOOP_NONBLOCK);
		for (id = PROC_GITWORKER; id < PROC_MAX; id++)
			while (fm_end[id] != -1 &&
			    read(fm_end[id], buf, sizeof(buf)) > 0)
				;
	}
}

/* The bootstrap token: seeds send it to reach the management routes. */
#define FM_TOKEN	"fuzz-master-bootstrap-token-0123456789"

static void
fm_write_conf(const char *path)
{
	FILE	*f;
	char	 tok[256];

	snprintf(tok, sizeof(tok), "%s/token", fm_dir);
	if ((f = fopen(tok, "w")) == NULL)
		fatal("%s", tok);
	fprintf(f, "%s\n", FM_TOKEN);
	fclose(f);
	chmod(tok, 0600);
	if ((f = fopen(path, "w")) == NULL)
		fatal("%s", path);
	fprintf(f,
	    "user \"nobody\"\n"
	    "bootstrap token file \"%s\"\n"
	    "database \"%s\"\n"
	    "control socket \"%s/nopsd.sock\"\n"
	    "repository \"infra\" {\n"
	    "\turl \"file:///nonexistent/infra.git\"\n"
	    "\tpath \"nomad\"\n"
	    "}\n"
	    "nomad {\n"
	    "\taddress \"http://127.0.0.1:9\"\n"
	    "\tnamespaces { \"default\" }\n"
	    "}\n"
	    "notify \"hook\" {\n"
	    "\twebhook url \"http://127.0.0.1:9/hook\"\n"
	    "}\n", tok, fm_db, fm_dir);
	fclose(f);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct nopsd	*env;
	char		 conf[256], errbuf[256];
	enum nops_proc	 id;

	if (mkdtemp(fm_dir) == NULL)
		fatal("mkdtemp");
	snprintf(fm_db, sizeof(fm_db), "%s/nops.db", fm_dir);
	snprintf(conf, sizeof(conf), "%s/nops.conf", fm_dir);
	fm_write_conf(conf);

	log_init(1, LOG_DAEMON);
	log_setverbose(getenv("FUZZ_MASTER_LOG") != NULL);
	/*
	 * The master's log lines are noise here: log.c writes to the stdio
	 * stderr, which is pointed elsewhere; libFuzzer and the sanitizers
	 * keep descriptor 2.  FUZZ_MASTER_LOG=1 shows them.
	 */
	if (getenv("FUZZ_MASTER_LOG") == NULL &&
	    (stderr = fopen("/dev/null", "w")) == NULL)
		abort();
	if ((env = calloc(1, sizeof(*env))) == NULL)
		fatal("calloc");
	nopsd_env = env;
	env->n_conffile = strdup(conf);
	if ((env->n_conf = parse_config(conf, 0)) == NULL ||
	    api_auth_configure(env->n_conf, 0) == -1)
		fatalx("the fuzz target's config does not load");
	env->n_statedir = strdup(fm_dir);
	env->n_started = time(NULL);
	if ((env->n_base = event_base_new()) == NULL)
		fatalx("event_base_new");
	supervise_init();
	nomad_init();
	nomad_configure(env->n_conf);
	for (id = PROC_GITWORKER; id < PROC_MAX; id++)
		fm_attach(id);
	if ((env->n_store = store_open(fm_db, errbuf, sizeof(errbuf))) == NULL)
		fatalx("%s", errbuf);
	/* Deliberately the start order of nopsd.c's main(), workers aside. */
	repo_init(env->n_conf);
	engine_init(env->n_store, env->n_conf);
	webhook_configure(env->n_conf);
	metrics_configure(env->n_conf);
	notify_configure(env->n_conf);
	webpub_init();
	webpub_reset();
	fm_spin();
	return 0;
}

/* The store after an input: sqlite's own checks and nops' invariants. */
static void
fm_check_store(void)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	const char	*sql[] = {
		"PRAGMA integrity_check",
		"PRAGMA foreign_key_check",
		"SELECT namespace, job, count(*) FROM deployments WHERE state "
		"NOT IN ('completed', 'failed', 'rejected', 'superseded') "
		"GROUP BY namespace, job HAVING count(*) > 1",
	};
	size_t		 i;
	int		 rc;

	if (sqlite3_open_v2(fm_db, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK)
		abort();
	for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		if (sqlite3_prepare_v2(db, sql[i], -1, &st, NULL) !=
		    SQLITE_OK) {
			fprintf(stderr, "fuzz_master: %s: %s\n", sql[i],
			    sqlite3_errmsg(db));
			abort();
		}
		rc = sqlite3_step(st);
		if (i == 0 && (rc != SQLITE_ROW || strcmp((const char *)
		    sqlite3_column_text(st, 0), "ok") != 0))
			abort();
		if (i > 0 && rc != SQLITE_DONE) {
			fprintf(stderr, "fuzz_master: broken: %s\n", sql[i]);
			abort();
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum nops_proc	 who[] = {
		PROC_GITWORKER, PROC_NOMADWORKER, PROC_WEBWORKER
	};
	struct imsg_hdr		 hdr;
	struct worker		*w;
	enum nops_proc		 id;
	uint8_t			 buf[sizeof(hdr) + 65536];
	uint16_t		 type, len;
	uint32_t		 peerid;
	size_t			 off = 0;
	uint8_t			 flags;
	ssize_t			 n;

	while (size - off >= 10) {
		id = who[data[off] % 3];
		flags = data[off + 1];
		memcpy(&type, data + off + 2, sizeof(type));
		memcpy(&peerid, data + off + 4, sizeof(peerid));
		memcpy(&len, data + off + 8, sizeof(len));
		off += 10;
		if (len > size - off)
			len = (uint16_t)(size - off);
		w = supervise_worker(id);
		if (!w->w_running)
			fm_attach(id);		/* killed: restarted */
		hdr.type = type % (IMSG_MAX + 2);
		hdr.len = (uint32_t)(sizeof(hdr) + len);
		hdr.peerid = peerid;
		hdr.pid = (uint32_t)w->w_pid + ((flags & 1) ? 1 : 0);
		memcpy(buf, &hdr, sizeof(hdr));
		memcpy(buf + sizeof(hdr), data + off, len);
		off += len;
		n = write(fm_end[id], buf, sizeof(hdr) + len);
		if (n != (ssize_t)(sizeof(hdr) + len) && !(n == -1 &&
		    (errno == EAGAIN || errno == EPIPE)))
			abort();
		fm_spin();
	}
	fm_check_store();
	return 0;
}
