/*
 * Hosts of deploy plans (hosts.h): SSH runs (the nomadworker holds the
 * sessions; the master decides every command), what nops last saw of
 * each host, and the timer that starts plan deployments and reads every
 * plan's hosts each drift interval (hosts_drift.c decides).
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
#include "xmalloc.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "store_hosts.h"
#include "deploy.h"
#include "engine.h"
#include "plan.h"
#include "schema.h"
#include "plans.h"
#include "hosts.h"
#include "cfile.h"
#include "webpub.h"
#include "redact.h"
#include "wire_hosts.h"

struct hosts_run {
	TAILQ_ENTRY(hosts_run)	 hr_entry;
	uint32_t		 hr_id;
	hosts_ssh_cb		 hr_cb;
	void			*hr_arg;
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

/* Read a file the configuration names (cfile.h: kept from the start). */
static int
hosts_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	char	 err[512];

	if (cfile_read(path, max, 0, buf, len, err, sizeof(err)) == -1) {
		log_warnx("hosts: %s", err);
		return -1;
	}
	return 0;
}

static void
hosts_send_key(void)
{
	struct worker		*w = supervise_worker(PROC_NOMADWORKER);
	struct wire_ssh_key	 k;
	struct msgw		 m;

	if (w == NULL || !w->w_running)
		return;
	k.key = hosts_key;
	k.keylen = hosts_key != NULL ? hosts_keylen : 0;
	msg_init(&m);
	wire_put_ssh_key(&m, &k);
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

/*
 * Alike on purpose: hosts_http_find (hosts_http.c), hoststep_find and
 * nixrun_find search their own TAILQ by id the same way; the element
 * types differ, and one search for all would need a macro.
 */
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
	hosts_http_worker_exited();
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
	struct wire_ssh_run	 sr;
	struct msgw		 m;
	char			*known = NULL;
	size_t			 knownlen = 0;

	if (w == NULL || !w->w_running) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	/* A key pinned in the plan, else the known-hosts file. */
	if (h->ph_hostkey != NULL) {
		if (h->ph_port == 22)
			known = xasprintf("%s %s\n", h->ph_address,
			    h->ph_hostkey);
		else
			known = xasprintf("[%s]:%d %s\n", h->ph_address,
			    h->ph_port, h->ph_hostkey);
		knownlen = strlen(known);
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->hr_id = hosts_nextid++;
	if (hosts_nextid == 0)
		hosts_nextid = 1;
	r->hr_cb = cb;
	r->hr_arg = arg;
	sr.address = h->ph_address;
	sr.port = (uint32_t)h->ph_port;
	sr.user = h->ph_user;
	if (known != NULL) {
		sr.known = known;
		sr.knownlen = knownlen;
	} else {
		sr.known = hosts_known;
		sr.knownlen = hosts_known != NULL ? hosts_knownlen : 0;
	}
	sr.command = command;
	sr.timeout = (uint32_t)timeout;
	sr.flags = fd != -1 ? SSH_F_STDIN_FD : 0;
	sr.in = in;
	sr.inlen = inlen;
	msg_init(&m);
	wire_put_ssh_run(&m, &sr);
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
hosts_ssh_result(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	const struct wire_ssh_result	*sr = &u->ssh_result;
	struct hosts_run		*r;
	struct hosts_ssh_res		 res;
	size_t				 outlen;
	char				*text, *shown;

	if ((r = hosts_run_find(imsg->hdr.peerid)) == NULL) {
		supervise_violation(w, "%s for a run never asked for (%u)",
		    imsg_to_str(imsg->hdr.type), imsg->hdr.peerid);
		return;
	}
	TAILQ_REMOVE(&hosts_runs, r, hr_entry);
	/* Output is shown and stored: valid text, secrets out. */
	outlen = sr->outlen;
	if ((text = malloc(outlen + 1)) == NULL)
		fatal("malloc");
	memcpy(text, sr->out, outlen);
	text[outlen] = '\0';
	for (size_t i = 0; i < outlen; i++)
		if (((unsigned char)text[i] < 0x20 && text[i] != '\n' &&
		    text[i] != '\t') || (unsigned char)text[i] >= 0x7f ||
		    text[i] == '\0')
			text[i] = '?';
	shown = xstrdup(text);
	hosts_redact(shown);
	memset(&res, 0, sizeof(res));
	res.hr_status = sr->status;
	res.hr_stage = sr->stage;
	res.hr_error = sr->error;
	res.hr_out = text;
	res.hr_outlen = strlen(text);
	res.hr_shown = shown;
	if (r->hr_cb != NULL)
		r->hr_cb(&res, r->hr_arg);
	free(text);
	free(shown);
	free(r);
}

struct hosts_host *
hosts_host_get(const char *repo, const char *name, int create)
{
	struct hosts_host	*hh;

	TAILQ_FOREACH(hh, &hosts_hosts, hh_entry)
		if (strcmp(hh->hh_repo, repo) == 0 &&
		    strcmp(hh->hh_name, name) == 0)
			return hh;
	if (!create)
		return NULL;
	if ((hh = calloc(1, sizeof(*hh))) == NULL)
		fatal("calloc");
	hh->hh_repo = xstrdup(repo);
	hh->hh_name = xstrdup(name);
	TAILQ_INSERT_TAIL(&hosts_hosts, hh, hh_entry);
	return hh;
}

/*
 * The first line of *s into buf and *s past it: "" when it does not fit
 * in n bytes (a store path cut short would name another path).
 */
void
hosts_line(const char **s, char *buf, size_t n)
{
	size_t	 len = strcspn(*s, "\n");

	if (len >= n)
		len = 0;
	memcpy(buf, *s, len);
	buf[len] = '\0';
	*s += len + ((*s)[len] == '\n');
}

/*
 * Alike on purpose: repo_first/repo_next (repo.c) walk another module's
 * private list the same way; each keeps its list to itself.
 */
struct hosts_host *
hosts_host_first(void)
{
	return TAILQ_FIRST(&hosts_hosts);
}

struct hosts_host *
hosts_host_next(struct hosts_host *hh)
{
	return TAILQ_NEXT(hh, hh_entry);
}

static void
hosts_set(char **field, const char *v)
{
	free(*field);
	*field = NULL;
	*field = xstrdup(v);
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

static void
hosts_tick(int fd, short ev, void *arg)
{
	struct timeval	 tv = { HOSTS_TICK, 0 };
	const char	*repo;
	int64_t		 ids[64];
	int		 n, i;

	(void)fd;
	(void)ev;
	(void)arg;
	/* Deployments that should run and do not (a start, an approval). */
	n = store_hosts_deploy_running(hosts_db, ids, 64);
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
	/* An operation's schema that cannot validate fails its plan. */
	plan_set_schema_check(schema_usable);
	/* Not at each drift interval: that ended runs under way. */
	hosts_runs_lost();
	if ((hosts_timer = evtimer_new(nopsd_env->n_base, hosts_tick,
	    NULL)) == NULL)
		fatal("evtimer_new");
	/* Recovery: unfinished steps resume on the first tick. */
	hosts_kick();
}
