/*
 * Hosts of deploy plans: SSH runs (the nomadworker holds the sessions;
 * the master decides every command), what each host runs, drift, and
 * the deployments a plan change makes (hosts.h).
 *
 * A host drifts when the system its plan names differs from the one it
 * runs (/run/current-system, read over SSH), or when it cannot be read.
 * A valid plan with a drifting host makes one deployment of kind "plan"
 * (job = the repository), with the plan's policy: "auto" starts it,
 * "approval" waits for a person, who approves the spec hash (every
 * host's system and connection, checks and the phase layout).  Like a
 * job's, a failed or rejected deployment blocks its spec until git
 * changes it; a hold on the repository keeps new ones from starting.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "deploy.h"
#include "engine.h"
#include "plan.h"
#include "plans.h"
#include "hosts.h"
#include "webpub.h"
#include "redact.h"

struct hosts_run {
	TAILQ_ENTRY(hosts_run)	 hr_entry;
	uint32_t		 hr_id;
	hosts_ssh_cb		 hr_cb;
	void			*hr_arg;
};

/* What nops last saw of a host (memory only: read again after a start). */
struct hosts_host {
	TAILQ_ENTRY(hosts_host)	 hh_entry;
	char			*hh_repo;
	char			*hh_name;
	char			*hh_current;
	char			*hh_booted;
	char			*hh_error;
	char			*hh_last_step;
	time_t			 hh_seen_at;
	int			 hh_probing;
};

struct hosts_probe {
	char			*hp_repo;
	char			*hp_host;
	char			 hp_commit[GITW_COMMIT_HEXLEN + 1];
};

static TAILQ_HEAD(, hosts_run) hosts_runs = TAILQ_HEAD_INITIALIZER(hosts_runs);
static TAILQ_HEAD(, hosts_host) hosts_hosts =
    TAILQ_HEAD_INITIALIZER(hosts_hosts);
static uint32_t		 hosts_nextid = 1;
static struct store	*hosts_db;
static const struct nops_conf *hosts_cf;
static char		*hosts_key;		/* a secret */
static size_t		 hosts_keylen;
static char		*hosts_known;		/* the known-hosts file */
static size_t		 hosts_knownlen;
static struct event	*hosts_timer;
static time_t		 hosts_probed_at;

#define HOSTS_TICK		2	/* seconds between looks */
#define HOSTS_PROBE_TIMEOUT	30

static void	 hosts_decide(const char *repo);

const struct nops_conf *
hosts_conf(void)
{
	return hosts_cf;
}

struct store *
hosts_store(void)
{
	return hosts_db;
}

/* Read a file the configuration names, as root at start and reload. */
static int
hosts_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	struct stat	 sb;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		log_warn("hosts: %s", path);
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (size_t)sb.st_size > max) {
		log_warnx("hosts: %s: not a regular file of at most %zu bytes",
		    path, max);
		close(fd);
		return -1;
	}
	if ((*buf = malloc(sb.st_size + 1)) == NULL)
		fatal("malloc");
	while (off < (size_t)sb.st_size) {
		if ((n = read(fd, *buf + off, sb.st_size - off)) <= 0) {
			log_warn("hosts: read %s", path);
			freezero(*buf, sb.st_size + 1);
			close(fd);
			return -1;
		}
		off += n;
	}
	(*buf)[off] = '\0';
	*len = off;
	close(fd);
	return 0;
}

static void
hosts_send_key(void)
{
	struct worker	*w = supervise_worker(PROC_NOMADWORKER);
	struct msgw	 m;

	if (w == NULL || !w->w_running)
		return;
	msg_init(&m);
	msg_add_data(&m, hosts_key, hosts_key != NULL ? hosts_keylen : 0);
	if (imsgev_send(&w->w_iev, &m, IMSG_SSH_KEY, 0, -1) == -1)
		fatal("%s", imsg_to_str(IMSG_SSH_KEY));
}

void
hosts_configure(const struct nops_conf *conf)
{
	hosts_cf = conf;
	if (hosts_key != NULL)
		freezero(hosts_key, hosts_keylen + 1);
	hosts_key = NULL;
	free(hosts_known);
	hosts_known = NULL;
	hosts_knownlen = 0;
	if (conf->hosts.ssh_key_file != NULL &&
	    hosts_read_file(conf->hosts.ssh_key_file, SSH_KEY_MAX,
	    &hosts_key, &hosts_keylen) == -1)
		hosts_key = NULL;
	if (conf->hosts.known_hosts_file != NULL &&
	    hosts_read_file(conf->hosts.known_hosts_file, SSH_KNOWN_MAX,
	    &hosts_known, &hosts_knownlen) == -1)
		hosts_known = NULL;
	hosts_send_key();
}

void
hosts_worker_started(struct worker *w)
{
	(void)w;
	hosts_send_key();
}

static struct hosts_run *
hosts_run_find(uint32_t id)
{
	struct hosts_run	*r;

	TAILQ_FOREACH(r, &hosts_runs, hr_entry)
		if (r->hr_id == id)
			return r;
	return NULL;
}

void
hosts_worker_exited(struct worker *w)
{
	struct hosts_run	*r;
	struct hosts_ssh_res	 res;

	(void)w;
	while ((r = TAILQ_FIRST(&hosts_runs)) != NULL) {
		TAILQ_REMOVE(&hosts_runs, r, hr_entry);
		memset(&res, 0, sizeof(res));
		res.hr_status = -1;
		res.hr_stage = SSH_STAGE_CONNECT;
		res.hr_error = "the nomadworker ended before answering";
		res.hr_out = res.hr_shown = "";
		if (r->hr_cb != NULL)
			r->hr_cb(&res, r->hr_arg);
		free(r);
	}
}

void
hosts_ssh_cancel(uint32_t id)
{
	struct hosts_run	*r;

	if ((r = hosts_run_find(id)) != NULL)
		r->hr_cb = NULL;
}

uint32_t
hosts_ssh(const struct plan_host *h, const char *command, int timeout,
    const void *in, size_t inlen, int fd, hosts_ssh_cb cb, void *arg)
{
	struct worker		*w = supervise_worker(PROC_NOMADWORKER);
	struct hosts_run	*r;
	struct msgw		 m;
	char			*known = NULL;
	size_t			 knownlen = 0;
	int			 len;

	if (w == NULL || !w->w_running) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	/* A key pinned in the plan, else the known-hosts file. */
	if (h->ph_hostkey != NULL) {
		if (h->ph_port == 22)
			len = asprintf(&known, "%s %s\n", h->ph_address,
			    h->ph_hostkey);
		else
			len = asprintf(&known, "[%s]:%d %s\n", h->ph_address,
			    h->ph_port, h->ph_hostkey);
		if (len == -1)
			fatal("asprintf");
		knownlen = len;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->hr_id = hosts_nextid++;
	if (hosts_nextid == 0)
		hosts_nextid = 1;
	r->hr_cb = cb;
	r->hr_arg = arg;
	msg_init(&m);
	msg_add_str(&m, h->ph_address);
	msg_add_u32(&m, h->ph_port);
	msg_add_str(&m, h->ph_user);
	if (known != NULL)
		msg_add_data(&m, known, knownlen);
	else
		msg_add_data(&m, hosts_known, hosts_known != NULL ?
		    hosts_knownlen : 0);
	msg_add_str(&m, command);
	msg_add_u32(&m, timeout);
	msg_add_u32(&m, fd != -1 ? SSH_F_STDIN_FD : 0);
	msg_add_data(&m, in, inlen);
	if (imsgev_send(&w->w_iev, &m, IMSG_SSH_RUN, r->hr_id, fd) == -1)
		fatal("%s", imsg_to_str(IMSG_SSH_RUN));
	free(known);
	TAILQ_INSERT_TAIL(&hosts_runs, r, hr_entry);
	return r->hr_id;
}

/* Secrets out of host output: KEY=value with a secret name, tokens. */
void
hosts_redact(char *s)
{
	char	*p, *end, *eq, save;
	size_t	 len;

	for (p = s; *p != '\0'; p = end) {
		p += strspn(p, " \t\n");
		if (*p == '\0')
			break;
		len = strcspn(p, " \t\n");
		end = p + len;
		save = *end;
		*end = '\0';
		eq = strchr(p, '=');
		if (strstr(p, "/nix/store/") != NULL) {
			/* store paths: their hashes are not secrets */
		} else if (eq != NULL && eq > p) {
			*eq = '\0';
			if (redact_name_is_secret(p) ||
			    redact_value_looks_secret(eq + 1))
				memset(eq + 1, '*', strlen(eq + 1));
			*eq = '=';
		} else if (redact_value_looks_secret(p))
			memset(p, '*', len);
		*end = save;
	}
}

/* IMSG_SSH_RESULT from the nomadworker: untrusted, checked. */
void
hosts_ssh_result(struct worker *w, struct imsg *imsg)
{
	struct hosts_run	*r;
	struct hosts_ssh_res	 res;
	struct msgr		 m;
	const char		*error;
	const void		*out;
	size_t			 outlen;
	int32_t			 status;
	uint32_t		 stage;
	char			*text, *shown;

	msg_reader(&m, imsg);
	msg_get_i32(&m, &status);
	msg_get_u32(&m, &stage);
	msg_get_str(&m, &error, SSH_ERROR_MAX);
	msg_get_data(&m, &out, &outlen, SSH_OUTPUT_MAX);
	if (m.err == 0 && (stage < SSH_STAGE_CONNECT ||
	    stage > SSH_STAGE_DONE || status < -1 || status > 255 ||
	    (stage == SSH_STAGE_DONE) != (status != -1)))
		msg_fail(&m, "stage or status out of range");
	if (msg_end(&m) == -1) {
		supervise_violation(w, "malformed %s (%s)",
		    imsg_to_str(imsg->hdr.type), m.what);
		return;
	}
	if ((r = hosts_run_find(imsg->hdr.peerid)) == NULL) {
		supervise_violation(w, "%s for a run never asked for (%u)",
		    imsg_to_str(imsg->hdr.type), imsg->hdr.peerid);
		return;
	}
	TAILQ_REMOVE(&hosts_runs, r, hr_entry);
	/* Output is shown and stored: valid text, secrets out. */
	if ((text = malloc(outlen + 1)) == NULL)
		fatal("malloc");
	memcpy(text, out, outlen);
	text[outlen] = '\0';
	for (size_t i = 0; i < outlen; i++)
		if (((unsigned char)text[i] < 0x20 && text[i] != '\n' &&
		    text[i] != '\t') || (unsigned char)text[i] >= 0x7f ||
		    text[i] == '\0')
			text[i] = '?';
	if ((shown = strdup(text)) == NULL)
		fatal("strdup");
	hosts_redact(shown);
	memset(&res, 0, sizeof(res));
	res.hr_status = status;
	res.hr_stage = stage;
	res.hr_error = error;
	res.hr_out = text;
	res.hr_outlen = strlen(text);
	res.hr_shown = shown;
	if (r->hr_cb != NULL)
		r->hr_cb(&res, r->hr_arg);
	free(text);
	free(shown);
	free(r);
}

static struct hosts_host *
hosts_host_get(const char *repo, const char *name, int create)
{
	struct hosts_host	*hh;

	TAILQ_FOREACH(hh, &hosts_hosts, hh_entry)
		if (strcmp(hh->hh_repo, repo) == 0 &&
		    strcmp(hh->hh_name, name) == 0)
			return hh;
	if (!create)
		return NULL;
	if ((hh = calloc(1, sizeof(*hh))) == NULL ||
	    (hh->hh_repo = strdup(repo)) == NULL ||
	    (hh->hh_name = strdup(name)) == NULL)
		fatal("calloc");
	TAILQ_INSERT_TAIL(&hosts_hosts, hh, hh_entry);
	return hh;
}

static void
hosts_set(char **field, const char *v)
{
	free(*field);
	*field = NULL;
	if (v != NULL && (*field = strdup(v)) == NULL)
		fatal("strdup");
}

void
hosts_seen(const char *repo, const char *host, const char *current,
    const char *booted, const char *error)
{
	struct hosts_host	*hh = hosts_host_get(repo, host, 1);

	if (error == NULL) {
		hosts_set(&hh->hh_current, current);
		hosts_set(&hh->hh_booted, booted);
	}
	hosts_set(&hh->hh_error, error);
	hh->hh_seen_at = time(NULL);
	webpub_changed();
}

void
hosts_last_step(const char *repo, const char *host, const char *text)
{
	hosts_set(&hosts_host_get(repo, host, 1)->hh_last_step, text);
	webpub_changed();
}

/* The first line of s (at most n bytes) into buf, for a store path. */
static void
hosts_line(const char **s, char *buf, size_t n)
{
	size_t	 len = strcspn(*s, "\n");

	if (len >= n)
		len = 0;
	memcpy(buf, *s, len);
	buf[len] = '\0';
	*s += len + ((*s)[len] == '\n');
}

static void
hosts_probe_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hosts_probe	*hp = arg;
	struct hosts_host	*hh;
	const char		*p = res->hr_out;
	char			 cur[512], boot[512], err[SSH_ERROR_MAX + 64];
	const char		*commit;
	int			 pending = 0;

	if (res->hr_stage != SSH_STAGE_DONE || res->hr_status != 0) {
		snprintf(err, sizeof(err), "%s", res->hr_error[0] != '\0' ?
		    res->hr_error : "reading the current system failed");
		hosts_seen(hp->hp_repo, hp->hp_host, NULL, NULL, err);
	} else {
		hosts_line(&p, cur, sizeof(cur));
		hosts_line(&p, boot, sizeof(boot));
		hosts_seen(hp->hp_repo, hp->hp_host,
		    plan_store_path_ok(cur) ? cur : NULL,
		    plan_store_path_ok(boot) ? boot : NULL, NULL);
	}
	if ((hh = hosts_host_get(hp->hp_repo, hp->hp_host, 0)) != NULL)
		hh->hh_probing = 0;
	TAILQ_FOREACH(hh, &hosts_hosts, hh_entry)
		if (strcmp(hh->hh_repo, hp->hp_repo) == 0 && hh->hh_probing)
			pending = 1;
	/* Every host of the plan read: decide, if the plan is the same. */
	if (!pending && plans_get(hp->hp_repo, &commit) != NULL &&
	    strcmp(commit, hp->hp_commit) == 0)
		hosts_decide(hp->hp_repo);
	free(hp->hp_repo);
	free(hp->hp_host);
	free(hp);
}

/* What a host runs: /run/current-system and /run/booted-system. */
#define HOSTS_PROBE_CMD							\
	"readlink -f /run/current-system || echo; "			\
	"readlink -f /run/booted-system || echo"

static void
hosts_probe_repo(const char *repo)
{
	const struct plan	*pl;
	const char		*commit;
	struct hosts_host	*hh;
	struct hosts_probe	*hp;
	size_t			 i;

	if ((pl = plans_get(repo, &commit)) == NULL || pl->pl_nerrors_all > 0)
		return;
	for (i = 0; i < pl->pl_nhosts; i++) {
		if (pl->pl_hosts[i].ph_phase < 0)
			continue;
		hh = hosts_host_get(repo, pl->pl_hosts[i].ph_name, 1);
		if (hh->hh_probing)
			continue;
		if ((hp = calloc(1, sizeof(*hp))) == NULL ||
		    (hp->hp_repo = strdup(repo)) == NULL ||
		    (hp->hp_host = strdup(pl->pl_hosts[i].ph_name)) == NULL)
			fatal("calloc");
		strlcpy(hp->hp_commit, commit, sizeof(hp->hp_commit));
		hh->hh_probing = 1;
		if (hosts_ssh(&pl->pl_hosts[i], HOSTS_PROBE_CMD,
		    HOSTS_PROBE_TIMEOUT, NULL, 0, -1, hosts_probe_done,
		    hp) == 0) {
			hh->hh_probing = 0;
			free(hp->hp_repo);
			free(hp->hp_host);
			free(hp);
		}
	}
}

static void
hosts_spec_hash(const struct plan *pl, char **spec, char hash[ENGINE_HASHLEN + 1])
{
	json_t	*j = plan_spec_json(pl);

	*spec = engine_json_canonical(j);
	json_decref(j);
	engine_sha256_hex(*spec, strlen(*spec), hash);
}

/* The active plan deployment of repo: its id, state and spec hash. */
static int
hosts_active(const char *repo, int64_t *id, char *state, size_t statelen,
    char hash[ENGINE_HASHLEN + 1])
{
	sqlite3_stmt	*st;
	int		 rc;

	st = store_prepare(hosts_db, "SELECT id, state, spec_hash FROM"
	    " deployments WHERE kind = 'plan' AND namespace = '' AND job = ?"
	    " AND state NOT IN ('completed', 'failed', 'rejected',"
	    " 'superseded')");
	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, repo, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		strlcpy(state, (const char *)sqlite3_column_text(st, 1),
		    statelen);
		strlcpy(hash, (const char *)sqlite3_column_text(st, 2),
		    ENGINE_HASHLEN + 1);
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 1 : 0;
}

/* Is this spec blocked: its last deployment failed or was rejected? */
static int
hosts_blocked(const char *repo, const char *hash)
{
	sqlite3_stmt	*st;
	int		 blocked = 0, rc;

	st = store_prepare(hosts_db, "SELECT state, spec_hash FROM deployments"
	    " WHERE kind = 'plan' AND namespace = '' AND job = ? AND state IN"
	    " ('completed', 'failed', 'rejected') ORDER BY id DESC LIMIT 1");
	if (st == NULL)
		return 1;
	sqlite3_bind_text(st, 1, repo, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(st, 0), "completed") != 0 &&
	    strcmp((const char *)sqlite3_column_text(st, 1), hash) == 0)
		blocked = 1;
	/* Unknown counts as blocked: the next tick asks again. */
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		blocked = 1;
	sqlite3_reset(st);
	return blocked;
}

static int
hosts_create(const char *repo, const char *commit, const struct plan *pl,
    const char *spec, const char *hash, const char *why)
{
	sqlite3_stmt	*st;
	struct hosts_host *hh;
	int64_t		 id, now = time(NULL);
	size_t		 i, j;
	char		 target[64], detail[512];
	int		 insync;
	int		 autostart = strcmp(pl->pl_policy, "auto") == 0;

	if (store_begin(hosts_db) == -1)
		return -1;
	st = store_prepare(hosts_db, "INSERT INTO deployments (kind, namespace,"
	    " job, repository, commit_id, spec, diff, spec_hash, policy, state,"
	    " reason, created_at, updated_at, apply_started_at) VALUES ('plan',"
	    " '', ?1, ?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?8, ?8, ?9)");
	if (st == NULL)
		goto fail;
	sqlite3_bind_text(st, 1, repo, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, commit, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, spec, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, pl->pl_policy, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, autostart ? "deploying" : "pending_approval",
	    -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, why, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 8, now);
	if (autostart)
		sqlite3_bind_int64(st, 9, now);
	else
		sqlite3_bind_null(st, 9);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		goto fail;
	}
	sqlite3_reset(st);
	id = sqlite3_last_insert_rowid(store_db(hosts_db));

	/* One step per host, in phase order, saved before anything acts. */
	for (i = 0; i < pl->pl_nphases; i++)
		for (j = 0; j < pl->pl_phases[i].pp_nhosts; j++) {
			const struct plan_host *h =
			    &pl->pl_hosts[pl->pl_phases[i].pp_hosts[j]];

			/* A host seen running its system has nothing to do. */
			hh = hosts_host_get(repo, h->ph_name, 0);
			insync = hh != NULL &&
			    hh->hh_error == NULL && hh->hh_current != NULL &&
			    strcmp(hh->hh_current, h->ph_system) == 0;
			st = store_prepare(hosts_db, "INSERT INTO"
			    " deployment_steps (deployment_id, phase_index,"
			    " phase, position, host, step, system, state,"
			    " error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
			if (st == NULL)
				goto fail;
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int(st, 2, (int)i);
			sqlite3_bind_text(st, 3, pl->pl_phases[i].pp_name, -1,
			    SQLITE_TRANSIENT);
			sqlite3_bind_int(st, 4, (int)j);
			sqlite3_bind_text(st, 5, h->ph_name, -1,
			    SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 6, insync ? "record" : "copy", -1,
			    SQLITE_STATIC);
			sqlite3_bind_text(st, 7, h->ph_system, -1,
			    SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 8, insync ? "skipped" : "pending",
			    -1, SQLITE_STATIC);
			if (insync)
				sqlite3_bind_text(st, 9, "already runs the "
				    "wanted system", -1, SQLITE_STATIC);
			else
				sqlite3_bind_null(st, 9);
			if (sqlite3_step(st) != SQLITE_DONE) {
				sqlite3_reset(st);
				goto fail;
			}
			sqlite3_reset(st);
		}
	/* Preflight tests first (phase_index -1; host: the test's name). */
	for (i = 0; i < pl->pl_ntests; i++) {
		st = store_prepare(hosts_db, "INSERT INTO deployment_steps"
		    " (deployment_id, phase_index, phase, position, host, step,"
		    " system) VALUES (?, -1, 'preflight', ?, ?, 'preflight', ?)");
		if (st == NULL)
			goto fail;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, (int)i);
		sqlite3_bind_text(st, 3, pl->pl_tests[i].pt_name, -1,
		    SQLITE_TRANSIENT);
		if (pl->pl_tests[i].pt_build != NULL)
			sqlite3_bind_text(st, 4, pl->pl_tests[i].pt_build, -1,
			    SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 4);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_reset(st);
			goto fail;
		}
		sqlite3_reset(st);
	}
	snprintf(target, sizeof(target), "deployment/%lld", (long long)id);
	snprintf(detail, sizeof(detail), "plan %s at %.12s, state %s: %s",
	    repo, commit, autostart ? "deploying" : "pending_approval", why);
	if (store_event(hosts_db, "system", "deployment.create", target,
	    detail) == -1)
		goto fail;
	if (store_commit(hosts_db) == -1)
		return -1;
	log_info("deployment %lld: plan %s at %.12s (%s)", (long long)id, repo,
	    commit, autostart ? "deploying" : "waits for approval");
	webpub_changed();
	if (autostart)
		hosts_kick();
	return 0;
fail:
	log_warnx("hosts: cannot create the deployment of plan %s: %s", repo,
	    sqlite3_errmsg(store_db(hosts_db)));
	store_rollback(hosts_db);
	return -1;
}

/* A plan's hosts were read: is there drift, and may it be deployed? */
static void
hosts_decide(const char *repo)
{
	const struct plan	*pl;
	struct hosts_host	*hh;
	const char		*commit;
	char			*spec, hash[ENGINE_HASHLEN + 1];
	char			 ahash[ENGINE_HASHLEN + 1], state[32], why[256];
	int64_t			 id;
	size_t			 i, ndrift = 0;
	int			 rc;

	if ((pl = plans_get(repo, &commit)) == NULL || pl->pl_nerrors_all > 0)
		return;
	for (i = 0; i < pl->pl_nhosts; i++) {
		if (pl->pl_hosts[i].ph_phase < 0)
			continue;
		hh = hosts_host_get(repo, pl->pl_hosts[i].ph_name, 1);
		if (hh->hh_error != NULL || hh->hh_current == NULL ||
		    strcmp(hh->hh_current, pl->pl_hosts[i].ph_system) != 0)
			ndrift++;
	}
	hosts_spec_hash(pl, &spec, hash);
	rc = hosts_active(repo, &id, state, sizeof(state), ahash);
	if (rc == 1) {
		/* A waiting deployment of another spec is superseded. */
		if (strcmp(ahash, hash) != 0 &&
		    strcmp(state, "pending_approval") == 0 &&
		    store_begin(hosts_db) == 0) {
			if (deploy_transition(hosts_db, id, DS_PENDING_APPROVAL,
			    DS_SUPERSEDED, "system", "supersede",
			    "the plan changed") != 1 ||
			    store_commit(hosts_db) == -1)
				store_rollback(hosts_db);
			else
				rc = 0;
		}
	}
	if (rc != 0 || ndrift == 0 || hosts_blocked(repo, hash) ||
	    hold_get("", repo, NULL, NULL, NULL) == 1) {
		free(spec);
		return;
	}
	snprintf(why, sizeof(why), "%zu of the plan's hosts drift%s", ndrift,
	    ndrift == 1 ? "s" : "");
	hosts_create(repo, commit, pl, spec, hash, why);
	free(spec);
}

/* A plan changed (master/plans.c): read its hosts, then decide. */
void
plans_changed_hook(const char *repo)
{
	hosts_probe_repo(repo);
	hosts_kick();
}

static void
hosts_tick(int fd, short ev, void *arg)
{
	sqlite3_stmt	*st;
	struct timeval	 tv = { HOSTS_TICK, 0 };
	const char	*repo;
	int64_t		 ids[64];
	size_t		 n = 0, i;

	(void)fd;
	(void)ev;
	(void)arg;
	/* Deployments that should run and do not (a start, an approval). */
	st = store_prepare(hosts_db, "SELECT id FROM deployments WHERE"
	    " kind = 'plan' AND state IN ('deploying', 'preflight')"
	    " ORDER BY id");
	if (st != NULL) {
		while (n < 64 && sqlite3_step(st) == SQLITE_ROW)
			ids[n++] = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	for (i = 0; i < n; i++)
		if (!hoststep_running(ids[i]))
			hoststep_start(ids[i]);
	/* Drift: read every plan's hosts again each drift interval. */
	if (time(NULL) - hosts_probed_at >= hosts_cf->drift_interval) {
		hosts_probed_at = time(NULL);
		for (repo = plans_first(); repo != NULL;
		    repo = plans_next(repo))
			hosts_probe_repo(repo);
	}
	evtimer_add(hosts_timer, &tv);
}

void
hosts_kick(void)
{
	struct timeval	 tv = { 0, 100000 };

	if (hosts_timer != NULL) {
		evtimer_del(hosts_timer);
		evtimer_add(hosts_timer, &tv);
	}
}

void
hosts_init(struct store *db, const struct nops_conf *conf)
{
	hosts_db = db;
	hosts_cf = conf;
	hosts_probed_at = time(NULL);
	if ((hosts_timer = evtimer_new(nopsd_env->n_base, hosts_tick,
	    NULL)) == NULL)
		fatal("evtimer_new");
	/* Recovery: unfinished steps resume on the first tick. */
	hosts_kick();
}

/* GET /api/v1/hosts: every host of every plan, as nops last saw it. */
json_t *
hosts_json(void)
{
	const struct plan	*pl;
	const struct plan_host	*h;
	struct hosts_host	*hh;
	const char		*repo, *commit, *state;
	json_t			*items, *o;
	size_t			 i;

	if ((items = json_array()) == NULL)
		fatal("json_array");
	for (repo = plans_first(); repo != NULL; repo = plans_next(repo)) {
		if ((pl = plans_get(repo, &commit)) == NULL)
			continue;
		for (i = 0; i < pl->pl_nhosts; i++) {
			h = &pl->pl_hosts[i];
			hh = hosts_host_get(repo, h->ph_name, 0);
			if (pl->pl_nerrors_all > 0)
				state = "invalid_plan";
			else if (h->ph_phase < 0)
				state = "in_no_phase";
			else if (hh == NULL || hh->hh_seen_at == 0)
				state = "unknown";
			else if (hh->hh_error != NULL)
				state = "unreachable";
			else if (hh->hh_current != NULL &&
			    strcmp(hh->hh_current, h->ph_system) == 0)
				state = "in_sync";
			else
				state = "drifted";
			o = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:i, s:s}",
			    "name", h->ph_name, "repository", repo,
			    "commit", commit, "wanted", h->ph_system,
			    "address", h->ph_address, "port", h->ph_port,
			    "state", state);
			if (o == NULL)
				fatal("json_pack");
			json_object_set_new(o, "phase", h->ph_phase >= 0 ?
			    json_string(pl->pl_phases[h->ph_phase].pp_name) :
			    json_null());
			json_object_set_new(o, "current", hh != NULL &&
			    hh->hh_current != NULL ?
			    json_string(hh->hh_current) : json_null());
			json_object_set_new(o, "booted", hh != NULL &&
			    hh->hh_booted != NULL ?
			    json_string(hh->hh_booted) : json_null());
			json_object_set_new(o, "error", hh != NULL &&
			    hh->hh_error != NULL ?
			    json_string(hh->hh_error) : json_null());
			json_object_set_new(o, "last_step", hh != NULL &&
			    hh->hh_last_step != NULL ?
			    json_string(hh->hh_last_step) : json_null());
			json_object_set_new(o, "seen_at", api_time_json(
			    hh != NULL ? hh->hh_seen_at : 0));
			json_array_append_new(items, o);
		}
	}
	if ((o = json_pack("{s:o, s:n}", "items", items, "next")) == NULL)
		fatal("json_pack");
	return o;
}
