/*
 * POST /webhook/git/{repository}: a git host says a repository changed.
 *
 * The route needs no login: a delivery is authentic when the signature
 * headers it carries match the repository's webhook secret (see
 * webhook_verify.c).  An authentic delivery only asks for an immediate
 * fetch of that repository; its payload is never read, so nothing in it
 * can steer nops.  Answers:
 *
 *	202	accepted: a fetch is queued
 *	200	{"duplicate": true}: this delivery id was seen already
 *	400	a malformed signature header or delivery id
 *	401	no signature header at all
 *	403	a signature or token that does not match
 *	404	no such repository, or one without a webhook secret (the
 *		two look alike, so names cannot be probed)
 *	413	a body over the webworker's limit (answered there)
 *
 * Secrets are read by the master, as root, at start and on reload; they
 * are wiped when replaced and never logged.
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
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "log.h"
#include "logflood.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "repo.h"
#include "store.h"
#include "api.h"
#include "acl.h"
#include "metrics.h"
#include "webhook_verify.h"
#include "webhook.h"
#include "cfile.h"
#include "jsonb.h"

/* A repository's secret, and what its deliveries came to. */
struct whrepo {
	TAILQ_ENTRY(whrepo)	 wh_entry;
	char			*wh_name;
	char			*wh_secret;	/* NULL: refused */
	size_t			 wh_secretlen;
	int			 wh_configured;	/* in the config */
	uint64_t		 wh_accepted;
	uint64_t		 wh_duplicates;
	uint64_t		 wh_rejected;
};
TAILQ_HEAD(whrepos, whrepo);

static struct whrepos	 wh_repos = TAILQ_HEAD_INITIALIZER(wh_repos);
static struct webhook_seen	*wh_seen;
/* A client may send thousands of bad deliveries: logged coalesced. */
static struct log_flood		 webhook_flood =
				    LOG_FLOOD_INITIALIZER("rejected webhooks",
				    LOG_WARNING);

static struct whrepo *
webhook_repo(const char *name, int create)
{
	struct whrepo	*wh;

	TAILQ_FOREACH(wh, &wh_repos, wh_entry)
		if (strcmp(wh->wh_name, name) == 0)
			return wh;
	if (!create)
		return NULL;
	if ((wh = calloc(1, sizeof(*wh))) == NULL ||
	    (wh->wh_name = strdup(name)) == NULL)
		fatal("calloc");
	TAILQ_INSERT_TAIL(&wh_repos, wh, wh_entry);
	return wh;
}

static void
webhook_forget_secret(struct whrepo *wh)
{
	cfile_free(wh->wh_secret, wh->wh_secretlen);
	wh->wh_secret = NULL;
	wh->wh_secretlen = 0;
}

void
webhook_configure(const struct nops_conf *conf)
{
	const struct conf_repo	*cr;
	struct whrepo		*wh, *next;
	char			 err[512];

	if (wh_seen == NULL && (wh_seen = webhook_seen_new(WEBHOOK_SEEN_MAX,
	    WEBHOOK_SEEN_TTL)) == NULL)
		fatal("webhook_seen_new");
	TAILQ_FOREACH(wh, &wh_repos, wh_entry) {
		webhook_forget_secret(wh);
		wh->wh_configured = 0;
	}
	TAILQ_FOREACH(cr, &conf->repos, entry) {
		wh = webhook_repo(cr->name, 1);
		wh->wh_configured = 1;
		if (cr->webhook_secret_file == NULL)
			continue;
		if (cfile_read(cr->webhook_secret_file, WEBHOOK_SECRET_MAX,
		    CFILE_SECRET, &wh->wh_secret, &wh->wh_secretlen, err,
		    sizeof(err)) == -1)
			log_warnx("repository %s: webhook secret file %s; its "
			    "webhooks are refused", cr->name, err);
	}
	/* Alike on purpose: notify_configure's sweep, another list. */
	/* Counters of removed repositories go with them. */
	for (wh = TAILQ_FIRST(&wh_repos); wh != NULL; wh = next) {
		next = TAILQ_NEXT(wh, wh_entry);
		if (wh->wh_configured)
			continue;
		TAILQ_REMOVE(&wh_repos, wh, wh_entry);
		free(wh->wh_name);
		free(wh);
	}
}

static void
webhook_audit(const char *repo, const char *kind, const char *delivery,
    const struct api_req *req)
{
	struct store	*s = nopsd_env->n_store;
	json_t		*d;
	const char	*event;
	char		*detail, target[NOPS_NAME_MAX * 4 + 16];

	if (s == NULL)
		return;
	event = api_header(req, "X-GitHub-Event");
	if (event == NULL)
		event = api_header(req, "X-Gitea-Event");
	if (event == NULL)
		event = api_header(req, "X-Gitlab-Event");
	/* What identifies the delivery; never a header holding a secret. */
	d = jsonb_pack("{s:s,s:o,s:o,s:s}", "sender", kind,
	    "delivery", delivery != NULL ? jsonb_str(delivery) : json_null(),
	    "event", event != NULL ? jsonb_str(event) : json_null(),
	    "remote", req->ar_remote);
	if (d == NULL || (detail = json_dumps(d, JSON_COMPACT)) == NULL)
		fatalx("json");
	json_decref(d);
	snprintf(target, sizeof(target), "repository/%s", repo);
	if (store_begin(s) == 0) {
		if (store_event(s, "webhook", "repository.webhook", target,
		    detail) == -1 || store_commit(s) == -1)
			store_rollback(s);
	}
	free(detail);
}

static void
webhook_post(struct api_req *req, struct api_resp *resp)
{
	struct webhook_req	 wr;
	struct whrepo		*wh;
	enum webhook_verdict	 v;
	int			 queued;
	const char		*name = req->ar_args[0], *why, *id, *kind;
	char			 key[NOPS_NAME_MAX * 4 +
			    WEBHOOK_DELIVERY_MAX + 2];

	wh = webhook_repo(name, 0);
	if (wh == NULL || wh->wh_secret == NULL || repo_find(name) == NULL) {
		log_info("webhook from %s for %s refused: %s", req->ar_remote,
		    name, wh == NULL ? "no such repository" :
		    "the repository has no webhook secret");
		api_error(resp, 404, "not_found", "no webhook for repository "
		    "%s", name);
		return;
	}

	/* Alike on purpose: fields filled as nomad_debug.c's request. */
	memset(&wr, 0, sizeof(wr));
	wr.wr_hub256 = api_header(req, "X-Hub-Signature-256");
	wr.wr_gitea = api_header(req, "X-Gitea-Signature");
	wr.wr_gitlab = api_header(req, "X-Gitlab-Token");
	wr.wr_github_id = api_header(req, "X-GitHub-Delivery");
	wr.wr_gitea_id = api_header(req, "X-Gitea-Delivery");
	wr.wr_gitlab_id = api_header(req, "X-Gitlab-Event-UUID");
	wr.wr_body = req->ar_body;
	wr.wr_bodylen = req->ar_bodylen;
	kind = wr.wr_gitea != NULL ? "gitea" : wr.wr_hub256 != NULL ?
	    "github" : "gitlab";

	v = webhook_verify(&wr, (const uint8_t *)wh->wh_secret,
	    wh->wh_secretlen, &why);
	if (v != WEBHOOK_VALID) {
		wh->wh_rejected++;
		log_flood(&webhook_flood, "webhook from %s for %s rejected: "
		    "%s", req->ar_remote, name, why);
		switch (v) {
		case WEBHOOK_UNSIGNED:
			api_error(resp, 401, "unauthorized", "%s", why);
			break;
		case WEBHOOK_MALFORMED:
			api_error(resp, 400, "bad_request", "%s", why);
			break;
		default:
			api_error(resp, 403, "forbidden", "%s", why);
			break;
		}
		return;
	}
	if (webhook_delivery(&wr, &id) == -1) {
		wh->wh_rejected++;
		log_flood(&webhook_flood, "webhook from %s for %s rejected: "
		    "malformed delivery id", req->ar_remote, name);
		api_error(resp, 400, "bad_request", "malformed delivery id "
		    "(1 to %d of A-Z a-z 0-9 - _ .)", WEBHOOK_DELIVERY_MAX);
		return;
	}
	/* Only authentic deliveries enter the set: none can be spoiled. */
	if (id != NULL) {
		snprintf(key, sizeof(key), "%s\n%s", name, id);
		if (webhook_seen_add(wh_seen, key, time(NULL)) == 1) {
			wh->wh_duplicates++;
			log_info("webhook for %s: delivery %s seen already; "
			    "ignored", name, id);
			resp->status = 200;
			resp->body = jsonb_pack("{s:s,s:s,s:b}", "repository",
			    name, "delivery", id, "duplicate", 1);
			return;
		}
	}
	wh->wh_accepted++;
	/* The poll goes out first: the audit's write is not in its way. */
	queued = repo_fetch_now(name, "webhook");
	webhook_audit(name, kind, id, req);
	if (queued == -1) {
		api_error(resp, 404, "not_found", "no repository %s", name);
		return;
	}
	resp->status = 202;
	resp->body = jsonb_pack("{s:s,s:o,s:b,s:b}", "repository", name,
	    "delivery", id != NULL ? jsonb_str(id) : json_null(),
	    "duplicate", 0, "queued", 1);
}

void
webhook_metrics(struct metrics_out *mo)
{
	struct whrepo	*wh;

	metrics_family(mo, "nops_webhook_deliveries_total", "counter",
	    "Webhook deliveries per repository, by outcome (accepted, "
	    "duplicate, rejected).");
	TAILQ_FOREACH(wh, &wh_repos, wh_entry) {
		metrics_sample(mo, "nops_webhook_deliveries_total",
		    (int64_t)wh->wh_accepted, "repository", wh->wh_name,
		    "result", "accepted", METRICS_END);
		metrics_sample(mo, "nops_webhook_deliveries_total",
		    (int64_t)wh->wh_duplicates, "repository", wh->wh_name,
		    "result", "duplicate", METRICS_END);
		metrics_sample(mo, "nops_webhook_deliveries_total",
		    (int64_t)wh->wh_rejected, "repository", wh->wh_name,
		    "result", "rejected", METRICS_END);
	}
}

/* No login: the signature is the authentication. */
const struct api_route webhook_routes[] = {
	{ "POST", "/webhook/git/*",	0, webhook_post, ACL_ROUTE_PUBLIC,
	    API_NS_NONE },
};
const size_t webhook_nroutes = sizeof(webhook_routes) /
    sizeof(webhook_routes[0]);
