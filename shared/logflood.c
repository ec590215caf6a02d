/*
 * Coalesced warnings: see logflood.h.  A client that makes the same
 * mistake 25,000 times in 15 s gets five lines and a count, not 25,000
 * lines; the count is what an operator needs, and syslog stays usable.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <syslog.h>
#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "logflood.h"

static struct log_flood	*log_floods;
static struct event	*log_flood_ev;

static time_t
log_flood_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void
log_flood_end(struct log_flood *lf, time_t now)
{
	if (lf->lf_held > 0)
		logit(lf->lf_pri, "%s: ... and %llu more in the last %lld s",
		    lf->lf_what, (unsigned long long)lf->lf_held,
		    (long long)(now - lf->lf_start));
	lf->lf_start = 0;
	lf->lf_lines = 0;
	lf->lf_held = 0;
}

void
log_flood_flush(struct log_flood *lf)
{
	time_t	 now = log_flood_now();

	if (lf->lf_start != 0 && now - lf->lf_start >= LOG_FLOOD_WINDOW)
		log_flood_end(lf, now);
}

void
log_flood(struct log_flood *lf, const char *fmt, ...)
{
	va_list	 ap;
	time_t	 now = log_flood_now();

	if (!lf->lf_registered) {
		lf->lf_registered = 1;
		lf->lf_next = log_floods;
		log_floods = lf;
	}
	lf->lf_total++;
	if (lf->lf_start != 0 && now - lf->lf_start >= LOG_FLOOD_WINDOW)
		log_flood_end(lf, now);
	if (lf->lf_start == 0)
		lf->lf_start = now;
	if (lf->lf_lines >= LOG_FLOOD_BURST) {
		lf->lf_held++;
		lf->lf_suppressed++;
		return;
	}
	lf->lf_lines++;
	va_start(ap, fmt);
	vlog(lf->lf_pri, fmt, ap);
	va_end(ap);
}

void
log_flood_flush_all(void)
{
	struct log_flood	*lf;

	for (lf = log_floods; lf != NULL; lf = lf->lf_next)
		log_flood_flush(lf);
}

struct log_flood *
log_flood_first(void)
{
	return log_floods;
}

static void
log_flood_tick(evutil_socket_t fd, short event, void *arg)
{
	log_flood_flush_all();
}

void
log_flood_timer(struct event_base *base)
{
	struct timeval	 tv = { 1, 0 };

	if (log_flood_ev != NULL)
		return;
	if ((log_flood_ev = event_new(base, -1, EV_PERSIST, log_flood_tick,
	    NULL)) == NULL || event_add(log_flood_ev, &tv) == -1)
		fatalx("event");
}
