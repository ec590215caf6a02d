/*
 * Notifications of deployments.  The engine calls notify_deployment()
 * once a deployment has entered a new state; for the states people act
 * on (pending approval, failed, waiting for canary promotion, and
 * completed when a job asks for it) each notify block of the config that
 * lists the event gets one request, built here: a JSON document (generic
 * webhook), {"text": ...} (Slack-compatible) or text with a title (ntfy).
 * The nomadworker sends it once, with a timeout, and answers with the
 * HTTP status or the error; a failure is a WARN and a counter in
 * /metrics, never a change to the deployment.
 *
 * What a notification carries: the deployment's id, job, namespace,
 * state, reason, commit and a link to the dashboard.  Never the spec or
 * the diff.  Token files are read as root at start and reload, and the
 * URL (a Slack URL is itself a secret) is never logged.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "text.h"
#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "proc.h"
#include "conf.h"
#include "master.h"
#include "deploy.h"
#include "store_deploy.h"
#include "engine.h"
#include "metrics.h"
#include "notify.h"
#include "wire_notify.h"
#include "cfile.h"
#include "webhook.h"
#include "jsonb.h"
#include "api.h"
#include "plan.h"
#include "plans.h"
#include "xmalloc.h"

/* An answer later than this is a failure (the worker's own timeout + slack). */
#define NOTIFY_ANSWER_SECS	(NOTIFY_TIMEOUT_MS / 1000 + 20)
/* The text of a notification; the JSON body holds it and the reason. */
#define NOTIFY_TEXT_MAX		(8 * 1024)

struct notifier {
	TAILQ_ENTRY(notifier)	 n_entry;
	char			*n_name;
	int			 n_kind;	/* CONF_NOTIFY_* */
	char			*n_url;		/* + ntfy's topic */
	uint32_t		 n_events;
	char			*n_token;	/* NULL: none */
	size_t			 n_tokenlen;
	int			 n_configured;
	uint64_t		 n_sent;
	uint64_t		 n_failed;
};
TAILQ_HEAD(notifiers, notifier);

/* A request the nomadworker has not answered yet. */
struct notify_pending {
	TAILQ_ENTRY(notify_pending) np_entry;
	uint32_t		 np_id;
	char			*np_notifier;
	int64_t			 np_deployment;
	const char		*np_event;
	time_t			 np_sent_at;
};
TAILQ_HEAD(notify_pendings, notify_pending);

static struct notifiers	 notifiers = TAILQ_HEAD_INITIALIZER(notifiers);
static struct notify_pendings pendings = TAILQ_HEAD_INITIALIZER(pendings);
static struct event		*notify_timer;
static uint32_t			 notify_lastid;
static char			*notify_dashboard;	/* no final '/' */

/* Alike on purpose: repo_find (repo.c), a TAILQ search by name. */
static struct notifier *
notifier_find(const char *name)
{
	struct notifier	*n;

	TAILQ_FOREACH(n, &notifiers, n_entry)
		if (strcmp(n->n_name, name) == 0)
			return n;
	return NULL;
}

static void
notifier_clear(struct notifier *n)
{
	if (n->n_url != NULL)
		freezero(n->n_url, strlen(n->n_url));
	n->n_url = NULL;
	cfile_free(n->n_token, n->n_tokenlen);
	n->n_token = NULL;
	n->n_tokenlen = 0;
}

void
notify_configure(const struct nops_conf *conf)
{
	const struct conf_notify	*cn;
	struct notifier			*n, *next;
	size_t				 len;
	char				 err[512];

	TAILQ_FOREACH(n, &notifiers, n_entry) {
		notifier_clear(n);
		n->n_configured = 0;
	}
	free(notify_dashboard);
	notify_dashboard = NULL;
	if (conf->dashboard_url != NULL) {
		notify_dashboard = xstrdup(conf->dashboard_url);
		len = strlen(notify_dashboard);
		while (len > 0 && notify_dashboard[len - 1] == '/')
			notify_dashboard[--len] = '\0';
	}

	/* Counters follow a notifier's name across reloads. */
	TAILQ_FOREACH(cn, &conf->notifies, entry) {
		if ((n = notifier_find(cn->name)) == NULL) {
			if ((n = calloc(1, sizeof(*n))) == NULL)
				fatal("calloc");
			n->n_name = xstrdup(cn->name);
			TAILQ_INSERT_TAIL(&notifiers, n, n_entry);
		}
		n->n_configured = 1;
		n->n_kind = cn->kind;
		n->n_events = cn->events;
		len = strlen(cn->url);
		if (cn->topic != NULL) {
			while (len > 0 && cn->url[len - 1] == '/')
				len--;
			n->n_url = xasprintf("%.*s/%s", (int)len, cn->url,
			    cn->topic);
		} else
			n->n_url = xstrdup(cn->url);
		if (cn->token_file != NULL && cfile_read(cn->token_file,
		    NOTIFY_TOKEN_MAX, CFILE_SECRET, &n->n_token, &n->n_tokenlen,
		    err, sizeof(err)) == -1) {
			/* Sending without the token would only be refused. */
			log_warnx("notify %s: token file %s; its notifications "
			    "will fail", cn->name, err);
			if ((n->n_token = calloc(1, 1)) == NULL)
				fatal("calloc");
			n->n_tokenlen = 0;
		}
	}
	for (n = TAILQ_FIRST(&notifiers); n != NULL; n = next) {
		next = TAILQ_NEXT(n, n_entry);
		if (n->n_configured)
			continue;
		TAILQ_REMOVE(&notifiers, n, n_entry);
		free(n->n_name);
		free(n);
	}
}

static void
notify_failed(const char *name, int64_t id, const char *event,
    const char *why)
{
	struct notifier	*n;

	if ((n = notifier_find(name)) != NULL)
		n->n_failed++;
	log_warnx("notify %s: %s notification of deployment %lld failed: %s",
	    name, event, (long long)id, why);
}

static void
notify_pending_free(struct notify_pending *np)
{
	TAILQ_REMOVE(&pendings, np, np_entry);
	free(np->np_notifier);
	free(np);
}

/* Requests the nomadworker never answered (it died, or hangs). */
static void
notify_sweep(int fd, short event, void *arg)
{
	struct notify_pending	*np, *next;
	struct timeval		 tv = { 5, 0 };
	time_t			 now = time(NULL);

	for (np = TAILQ_FIRST(&pendings); np != NULL; np = next) {
		next = TAILQ_NEXT(np, np_entry);
		if (now - np->np_sent_at < NOTIFY_ANSWER_SECS &&
		    now >= np->np_sent_at)
			continue;
		notify_failed(np->np_notifier, np->np_deployment,
		    np->np_event, "no answer from the nomadworker");
		notify_pending_free(np);
	}
	if (!TAILQ_EMPTY(&pendings))
		evtimer_add(notify_timer, &tv);
}

/* A header value: printable ASCII only, nothing that ends a line. */
static void
notify_header_text(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

static const char *
notify_event_name(uint32_t ev)
{
	return config_notify_event_name(ev);
}

/*
 * Each event in words (after the deployment) and as ntfy tags (emoji
 * short codes ntfy shows in front of the title).  The last row is
 * "completed", also for any event not listed.
 */
static const struct notify_event {
	uint32_t	 ne_ev;
	const char	*ne_words;
	const char	*ne_tags;
} notify_events[] = {
	{ CONF_NOTIFY_EV_PENDING_APPROVAL, "is waiting for approval",
	    "hourglass,nops" },
	{ CONF_NOTIFY_EV_FAILED, "failed", "x,nops" },
	{ CONF_NOTIFY_EV_AWAITING_PROMOTION,
	    "is waiting for canary promotion", "bird,nops" },
	{ CONF_NOTIFY_EV_COMPLETED, "completed", "white_check_mark,nops" },
};
#define NOTIFY_NEVENTS	(sizeof(notify_events) / sizeof(notify_events[0]))

static const struct notify_event *
notify_event(uint32_t ev)
{
	size_t	 i;

	for (i = 0; i < NOTIFY_NEVENTS - 1; i++)
		if (notify_events[i].ne_ev == ev)
			break;
	return &notify_events[i];
}

/* A plan's deployment has no namespace; its job is the repository. */
static int
notify_is_plan(const struct deploy *d)
{
	return d->d_ns[0] == '\0';
}

/* What the deployment deploys: "NAMESPACE/JOB" or "plan REPOSITORY". */
static void
notify_subject(const struct deploy *d, char *buf, size_t len)
{
	if (notify_is_plan(d))
		snprintf(buf, len, "plan %s", d->d_job);
	else
		snprintf(buf, len, "%s/%s", d->d_ns, d->d_job);
}

/* Does the job (or plan) of d ask to hear of completed deployments? */
static int
notify_wants_completed(const struct deploy *d)
{
	struct ejob		*ej;
	const struct plan	*pl;

	if (notify_is_plan(d))
		return (pl = plans_get(d->d_job, NULL)) != NULL &&
		    pl->pl_notify_completed;
	/* The job as git has it now: its meta, not the stored spec. */
	if ((ej = engine_job(d->d_ns, d->d_job)) == NULL)
		return 0;
	return ej->ej_notify_completed;
}

/* The document of a generic webhook notifier. */
static json_t *
notify_webhook_doc(const struct notifier *n, const struct deploy *d,
    uint32_t ev, const char *text, const char *link)
{
	return jsonb_pack("{s:s,s:s,s:s,s:{s:I,s:s,s:s,s:s,s:s,s:s,s:o,"
	    "s:s,s:s,s:s,s:o,s:o},s:o,s:o}",
	    "event", notify_event_name(ev),
	    "notifier", n->n_name,
	    "text", text,
	    "deployment",
	    "id", (json_int_t)d->d_id,
	    "kind", notify_is_plan(d) ? "plan" : "job",
	    "namespace", d->d_ns,
	    "job", d->d_job,
	    "repository", d->d_repo,
	    "state", deploy_state_str(d->d_state),
	    "reason", d->d_reason != NULL ? jsonb_str(d->d_reason) :
	    json_null(),
	    "commit", d->d_commit,
	    "spec_hash", d->d_spec_hash,
	    "policy", d->d_policy,
	    "created_at", api_time_json(d->d_created_at),
	    "updated_at", api_time_json(d->d_updated_at),
	    "url", link != NULL ? jsonb_str(link) : json_null(),
	    "sent_at", api_time_json(time(NULL)));
}

/* Wait for the worker's word on notification id; swept after a while. */
static void
notify_pending_add(uint32_t id, const struct notifier *n,
    const struct deploy *d, uint32_t ev)
{
	struct notify_pending	*np;
	struct timeval		 tv = { 5, 0 };

	if ((np = calloc(1, sizeof(*np))) == NULL)
		fatal("calloc");
	np->np_id = id;
	np->np_notifier = xstrdup(n->n_name);
	np->np_deployment = d->d_id;
	np->np_event = notify_event_name(ev);
	np->np_sent_at = time(NULL);
	TAILQ_INSERT_TAIL(&pendings, np, np_entry);
	if (notify_timer == NULL && (notify_timer = evtimer_new(
	    nopsd_env->n_base, notify_sweep, NULL)) == NULL)
		fatal("evtimer_new");
	if (!evtimer_pending(notify_timer, NULL))
		evtimer_add(notify_timer, &tv);
}

static void
notify_send(struct notifier *n, const struct deploy *d, uint32_t ev,
    const char *text, const char *link)
{
	struct worker		*w = supervise_worker(PROC_NOMADWORKER);
	struct msgw		 m;
	struct wire_notify	 wn;
	json_t			*doc;
	char			*body = NULL, title[NOTIFY_TITLE_MAX];
	char			 subject[NOPS_NAME_MAX * 2 + 8];
	uint32_t		 kind;

	if (n->n_token != NULL && n->n_tokenlen == 0) {
		notify_failed(n->n_name, d->d_id, notify_event_name(ev),
		    "its token file could not be read");
		return;
	}
	notify_subject(d, subject, sizeof(subject));
	snprintf(title, sizeof(title), "nops: %s %s", subject,
	    notify_event(ev)->ne_words);
	notify_header_text(title);
	switch (n->n_kind) {
	case CONF_NOTIFY_SLACK:
		kind = NOTIFY_KIND_JSON;
		doc = jsonb_pack("{s:s}", "text", text);
		break;
	case CONF_NOTIFY_NTFY:
		kind = NOTIFY_KIND_TEXT;
		doc = NULL;
		if ((body = strdup(text)) == NULL)
			fatal("strdup");
		break;
	default:
		kind = NOTIFY_KIND_JSON;
		doc = notify_webhook_doc(n, d, ev, text, link);
		break;
	}
	if (kind == NOTIFY_KIND_JSON) {
		body = jsonb_dump(doc, JSON_COMPACT);
		json_decref(doc);
	}
	/* Cutting JSON would break it: the parts are bounded instead. */
	if (strlen(body) > NOTIFY_BODY_MAX) {
		notify_failed(n->n_name, d->d_id, notify_event_name(ev),
		    "its body would be too large");
		free(body);
		return;
	}

	if (w == NULL || !w->w_running) {
		notify_failed(n->n_name, d->d_id, notify_event_name(ev),
		    "the nomadworker is not running");
		free(body);
		return;
	}
	if (++notify_lastid == 0)
		notify_lastid = 1;
	wn.kind = kind;
	wn.url = n->n_url;
	wn.title = kind == NOTIFY_KIND_TEXT ? title : "";
	wn.tags = kind == NOTIFY_KIND_TEXT ? notify_event(ev)->ne_tags : "";
	wn.click = kind == NOTIFY_KIND_TEXT && link != NULL ? link : "";
	wn.body = body;
	wn.bodylen = strlen(body);
	wn.token = n->n_token;
	wn.tokenlen = n->n_tokenlen;
	msg_init(&m);
	wire_put_notify(&m, &wn);
	free(body);
	if (imsgev_send(&w->w_iev, &m, IMSG_NOTIFY, notify_lastid, -1) ==
	    -1) {
		notify_failed(n->n_name, d->d_id, notify_event_name(ev),
		    "cannot queue it for the nomadworker");
		return;
	}
	notify_pending_add(notify_lastid, n, d, ev);
	log_debug("notify %s: %s notification of deployment %lld queued",
	    n->n_name, notify_event_name(ev), (long long)d->d_id);
}

void
notify_deployment(int64_t id, enum deploy_state to)
{
	struct notifier	*n;
	struct deploy	 d;
	uint32_t	 ev;
	char		*text, *link = NULL;
	char		 subject[NOPS_NAME_MAX * 2 + 8];
	int		 want = 0;

	switch (to) {
	case DS_PENDING_APPROVAL:
		ev = CONF_NOTIFY_EV_PENDING_APPROVAL;
		break;
	case DS_FAILED:
		ev = CONF_NOTIFY_EV_FAILED;
		break;
	case DS_AWAITING_PROMOTION:
		ev = CONF_NOTIFY_EV_AWAITING_PROMOTION;
		break;
	case DS_COMPLETED:
		ev = CONF_NOTIFY_EV_COMPLETED;
		break;
	default:
		return;
	}
	TAILQ_FOREACH(n, &notifiers, n_entry)
		if (n->n_events & ev)
			want = 1;
	if (!want || nopsd_env->n_store == NULL)
		return;
	if (store_deploy_load(nopsd_env->n_store, id, &d) != 0)
		return;
	/* Completed: only what was applied, and only when the job asks. */
	if (ev == CONF_NOTIFY_EV_COMPLETED && (d.d_apply_started_at == 0 ||
	    !notify_wants_completed(&d))) {
		deploy_free(&d);
		return;
	}
	if (notify_dashboard != NULL)
		link = xasprintf("%s/deployments/%lld", notify_dashboard,
		    (long long)id);
	/* What the store holds is bounded; cut on a character anyway. */
	if ((text = malloc(NOTIFY_TEXT_MAX)) == NULL)
		fatal("malloc");
	notify_subject(&d, subject, sizeof(subject));
	text_printf(text, NOTIFY_TEXT_MAX, 0, "nops: deployment %lld of "
	    "%s %s (commit %.12s)%s%s%s%s", (long long)id, subject,
	    notify_event(ev)->ne_words, d.d_commit,
	    d.d_reason != NULL ? ": " : "",
	    d.d_reason != NULL ? d.d_reason : "",
	    link != NULL ? " " : "", link != NULL ? link : "");
	TAILQ_FOREACH(n, &notifiers, n_entry)
		if (n->n_events & ev)
			notify_send(n, &d, ev, text, link);
	free(text);
	free(link);
	deploy_free(&d);
}

/* IMSG_NOTIFY_RESULT: u32 HTTP status (0: none), str error. */
void
notify_result(struct worker *w, struct imsg *imsg,
    const union imsg_payload *u)
{
	const struct wire_notify_result	*wr = &u->notify_result;
	struct notify_pending		*np;
	struct notifier			*n;
	const char			*error;
	uint32_t			 status;
	char				 why[NOTIFY_ERROR_MAX + 64];

	if (imsg->hdr.peerid == 0 || imsg->hdr.peerid > notify_lastid) {
		supervise_violation(w, "malformed %s (id)",
		    imsg_to_str(imsg->hdr.type));
		return;
	}
	status = wr->status;
	error = wr->error;
	TAILQ_FOREACH(np, &pendings, np_entry)
		if (np->np_id == imsg->hdr.peerid)
			break;
	if (np == NULL) {
		/* Counted as failed already when it was late. */
		log_debug("late answer to notification %u", imsg->hdr.peerid);
		return;
	}
	if (status >= 200 && status < 300) {
		if ((n = notifier_find(np->np_notifier)) != NULL)
			n->n_sent++;
		log_info("notify %s: %s notification of deployment %lld sent",
		    np->np_notifier, np->np_event,
		    (long long)np->np_deployment);
	} else {
		if (status != 0)
			snprintf(why, sizeof(why), "HTTP status %u", status);
		else
			text_printf(why, sizeof(why), 0, "%s", error);
		notify_failed(np->np_notifier, np->np_deployment,
		    np->np_event, why);
	}
	notify_pending_free(np);
}

void
notify_metrics(struct metrics_out *mo)
{
	struct notifier	*n;

	metrics_family(mo, "nops_notifications_sent_total", "counter",
	    "Notifications the receiver accepted (a 2xx answer).");
	TAILQ_FOREACH(n, &notifiers, n_entry)
		metrics_sample(mo, "nops_notifications_sent_total",
		    (int64_t)n->n_sent, "notifier", n->n_name, METRICS_END);
	metrics_family(mo, "nops_notification_failures_total", "counter",
	    "Notifications that failed (no answer, an error, not 2xx).");
	TAILQ_FOREACH(n, &notifiers, n_entry)
		metrics_sample(mo, "nops_notification_failures_total",
		    (int64_t)n->n_failed, "notifier", n->n_name, METRICS_END);
}
