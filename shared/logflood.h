/*
 * Warnings that come in floods (rejected requests, failed logins): a
 * few lines per window are logged as they come, the rest are counted
 * and summed up in one line ("... and 24000 more in the last 10 s").
 * Every occurrence is counted, for /metrics.
 */
#ifndef NOPS_LOGFLOOD_H
#define NOPS_LOGFLOOD_H

#include <stdint.h>
#include <time.h>

#define LOG_FLOOD_BURST		5	/* lines logged per window */
#define LOG_FLOOD_WINDOW	10	/* seconds */

struct event_base;

struct log_flood {
	const char	*lf_what;	/* "rejected webhooks" */
	int		 lf_pri;	/* LOG_WARNING, LOG_INFO */
	struct log_flood *lf_next;	/* registered at first use */
	int		 lf_registered;
	time_t		 lf_start;	/* monotonic; 0: none open */
	unsigned int	 lf_lines;	/* logged in this window */
	uint64_t	 lf_held;	/* not logged in this window */
	uint64_t	 lf_total;	/* every occurrence */
	uint64_t	 lf_suppressed;	/* every line not logged */
};

#define LOG_FLOOD_INITIALIZER(what, pri)	\
	{ (what), (pri), NULL, 0, 0, 0, 0, 0, 0 }

/* One occurrence: logged (log_warnx) unless the window's burst is spent. */
void	 log_flood(struct log_flood *, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));
/* Call now and then: a window that ended says how many it held back. */
void	 log_flood_flush(struct log_flood *);
/* Every flood used so far, for a timer and for /metrics. */
void	 log_flood_flush_all(void);
struct log_flood *log_flood_first(void);
/* A timer on base that flushes every flood each second (once). */
void	 log_flood_timer(struct event_base *);

#endif /* NOPS_LOGFLOOD_H */
