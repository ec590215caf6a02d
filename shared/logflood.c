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

#include "log.h"
#include "logflood.h"

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
		log_warnx("%s: ... and %llu more in the last %lld s",
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
	vlog(LOG_WARNING, fmt, ap);
	va_end(ap);
}
