/*
 * A host step's checks (hoststep.h): after the activation, each check of
 * the host must pass within its timeout, in order; the first that fails
 * fails the step.
 *
 * A command check runs once over SSH: exit 0 passes.  An HTTP check is a
 * GET the nomadworker makes (the master never touches the network): a
 * 2xx answer passes; anything else (no answer, a redirect, a 4xx or 5xx)
 * is asked again every HS_HTTP_RETRY seconds until the check's timeout,
 * so that a service the activation restarted has time to come up.  One
 * attempt waits at most HS_HTTP_ATTEMPT seconds and never past the
 * timeout.  "{address}" in the URL is the host's address.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "conf.h"
#include "master.h"
#include "store.h"
#include "deploy.h"
#include "engine.h"
#include "nixrun.h"
#include "plan.h"
#include "hosts.h"
#include "webpub.h"
#include "hoststep.h"

static void
hoststep_check_done(const struct hosts_ssh_res *res, void *arg)
{
	struct hoststep		*hs = arg;
	const struct plan_check	*c = &hs->hs_host->ph_checks[hs->hs_check];

	hs->hs_ssh = 0;
	if (res->hr_stage != SSH_STAGE_DONE || res->hr_status != 0) {
		if (res->hr_stage == SSH_STAGE_DONE)
			hoststep_fail(hs, "check %s failed (exit %d): %s",
			    c->pc_name, res->hr_status,
			    hoststep_tail(res->hr_shown, 1024));
		else
			hoststep_fail(hs, "check %s: %s: %s", c->pc_name,
			    hoststep_stage(res), res->hr_error);
		return;
	}
	hs->hs_check++;
	hoststep_sub(hs);
}

/* The check's URL for this host: {address} is the host's address. */
static char *
hoststep_http_url(const struct plan_check *c, const struct plan_host *h)
{
	const char	*p, *q;
	char		*url, addr[PLAN_ADDRESS_MAX + 3];
	size_t		 len;

	if (strchr(h->ph_address, ':') != NULL)
		snprintf(addr, sizeof(addr), "[%s]", h->ph_address);
	else
		strlcpy(addr, h->ph_address, sizeof(addr));
	len = strlen(c->pc_http) + 1;
	for (p = c->pc_http; (p = strstr(p, "{address}")) != NULL; p += 9)
		len += strlen(addr);
	if ((url = calloc(1, len)) == NULL)
		fatal("calloc");
	for (p = c->pc_http; (q = strstr(p, "{address}")) != NULL; p = q + 9) {
		strncat(url, p, q - p);
		strlcat(url, addr, len);
	}
	strlcat(url, p, len);
	return url;
}

static void
hoststep_http_done(int status, const char *error, const char *body,
    void *arg)
{
	struct hoststep		*hs = arg;
	const struct plan_check	*c = &hs->hs_host->ph_checks[hs->hs_check];
	struct timeval		 tv = { HS_HTTP_RETRY, 0 };

	hs->hs_http = 0;
	if (status >= 200 && status <= 299) {
		log_debug("deployment %lld: %s: check %s: HTTP %d",
		    (long long)hs->hs_id, hs->hs_name, c->pc_name, status);
		hs->hs_check++;
		hs->hs_check_until = 0;
		hoststep_sub(hs);
		return;
	}
	if (status != 0)
		snprintf(hs->hs_check_error, sizeof(hs->hs_check_error),
		    "HTTP %d%s%.200s", status, body[0] != '\0' ? ": " : "",
		    body);
	else
		snprintf(hs->hs_check_error, sizeof(hs->hs_check_error),
		    "%s", error);
	if (time(NULL) + HS_HTTP_RETRY < hs->hs_check_until) {
		evtimer_add(hs->hs_retry, &tv);
		return;
	}
	hoststep_fail(hs, "check %s failed: no 2xx answer within %ds, the "
	    "last: %s", c->pc_name, c->pc_timeout, hs->hs_check_error);
}

static void
hoststep_http(struct hoststep *hs, const struct plan_check *c)
{
	char	*url;
	time_t	 now = time(NULL);
	long	 left;

	if (hs->hs_check_until == 0)
		hs->hs_check_until = now + c->pc_timeout;
	left = (long)(hs->hs_check_until - now);
	if (left > HS_HTTP_ATTEMPT)
		left = HS_HTTP_ATTEMPT;
	if (left < 1)
		left = 1;
	url = hoststep_http_url(c, hs->hs_host);
	hs->hs_http = hosts_http(url, (int)left * 1000, hoststep_http_done,
	    hs);
	free(url);
	if (hs->hs_http == 0)
		hoststep_fail(hs, "the nomadworker is not running");
}

/* HS_CHECKS: each of the host's checks, in order; then the record. */
void
hoststep_checks(struct hoststep *hs)
{
	const struct plan_host	*h = hs->hs_host;
	const struct plan_check	*c;

	if (hs->hs_check == 0 && (hs->hs_saved_step == NULL ||
	    strcmp(hs->hs_saved_step, "check") != 0) &&
	    hoststep_save(hs, "check", "running", NULL) == -1) {
		hoststep_fail(hs, "the store refused the step");
		return;
	}
	if (hs->hs_check < h->ph_nchecks) {
		c = &h->ph_checks[hs->hs_check];
		if (c->pc_http != NULL) {
			hoststep_http(hs, c);
			return;
		}
		hoststep_ssh(hs, c->pc_command, c->pc_timeout, NULL, -1,
		    hoststep_check_done);
		return;
	}
	if (hoststep_save(hs, "record", "succeeded", NULL) == -1) {
		hoststep_fail(hs, "the store refused the step");
		return;
	}
	hoststep_next(hs);
}
