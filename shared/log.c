/*
 * Logging for every nops process: stderr in the foreground (-d), syslog
 * otherwise.  syslog is opened with LOG_NDELAY so that the socket exists
 * before a worker chroots.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int	 log_debugging;
static int	 log_verbose;
static int	 log_toparent;	/* a worker: lines to the master's pipe */
static const char *log_procname;

void
log_init(int foreground, int facility)
{
	extern char	*__progname;

	log_debugging = foreground;
	log_verbose = foreground > 1;
	if (!log_debugging)
		openlog(__progname, LOG_PID | LOG_NDELAY, facility);
	tzset();
}

/*
 * A worker logs only to its standard error, a pipe the master reads and
 * labels with the worker's name (supervise.c): "<pri>message" per line,
 * no name of its own, never syslog nor the master's stream directly.
 */
void
log_init_parent(void)
{
	log_debugging = 1;
	log_toparent = 1;
	tzset();
}

/*
 * The master logs a line a worker wrote: labelled with the name the
 * master knows the worker by, control characters escaped so the line
 * stays one line and cannot pass for the master's own.
 */
void
log_relay(int pri, const char *label, const char *line, size_t len)
{
	char	 buf[4096];
	size_t	 i, n = 0;

	for (i = 0; i < len && n + 5 < sizeof(buf); i++) {
		unsigned char	 c = (unsigned char)line[i];

		if (c < 0x20 || c == 0x7f || c == '\\') {
			snprintf(buf + n, sizeof(buf) - n, "\\x%02x", c);
			n += 4;
		} else
			buf[n++] = (char)c;
	}
	buf[n] = '\0';
	if (log_debugging) {
		fprintf(stderr, "%s: %s\n", label, buf);
		fflush(stderr);
	} else
		syslog(pri, "%s: %s", label, buf);
}

void
log_procinit(const char *procname)
{
	if (procname != NULL)
		log_procname = procname;
}

void
log_setverbose(int v)
{
	log_verbose = v;
}

int
log_getverbose(void)
{
	return log_verbose;
}

void
logit(int pri, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(pri, fmt, ap);
	va_end(ap);
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char	 buf[4096];
	int	 saved_errno = errno;

	if (log_debugging) {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		/*
		 * Strip control characters so a hostile string cannot forge
		 * lines.
		 */
		for (char *p = buf; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 && *p != '\t')
				*p = '?';
		if (log_toparent)
			fprintf(stderr, "<%d>%s\n", LOG_PRI(pri), buf);
		else if (log_procname != NULL)
			fprintf(stderr, "%s: %s\n", log_procname, buf);
		else
			fprintf(stderr, "%s\n", buf);
		fflush(stderr);
	} else
		vsyslog(pri, fmt, ap);
	errno = saved_errno;
}

void
log_warn(const char *emsg, ...)
{
	char	*nfmt;
	va_list	 ap;
	int	 saved_errno = errno;

	va_start(ap, emsg);
	if (emsg == NULL)
		logit(LOG_ERR, "%s", strerror(saved_errno));
	else if (asprintf(&nfmt, "%s: %s", emsg, strerror(saved_errno)) == -1)
		vlog(LOG_ERR, emsg, ap);
	else {
		vlog(LOG_ERR, nfmt, ap);
		free(nfmt);
	}
	va_end(ap);
	errno = saved_errno;
}

/*
 * Alike on purpose: log_warnx, log_info and log_debug differ only in the
 * priority they hand vlog(); a variadic function can pass its arguments
 * on only as a va_list, so each keeps its own va_start and va_end.
 */
void
log_warnx(const char *emsg, ...)
{
	va_list	 ap;

	va_start(ap, emsg);
	vlog(LOG_ERR, emsg, ap);
	va_end(ap);
}

void
log_info(const char *emsg, ...)
{
	va_list	 ap;

	va_start(ap, emsg);
	vlog(LOG_INFO, emsg, ap);
	va_end(ap);
}

void
log_debug(const char *emsg, ...)
{
	va_list	 ap;

	if (log_verbose) {
		va_start(ap, emsg);
		vlog(LOG_DEBUG, emsg, ap);
		va_end(ap);
	}
}

void
log_fatal(const char *where, int witherrno, const char *emsg, ...)
{
	static char	 s[BUFSIZ];
	va_list		 ap;
	int		 code = witherrno ? errno : 0;
	const char	*proc = log_procname != NULL ? log_procname : "nopsd";

	s[0] = '\0';
	if (emsg != NULL) {
		va_start(ap, emsg);
		(void)vsnprintf(s, sizeof(s), emsg, ap);
		va_end(ap);
	}
	if (code)
		logit(LOG_CRIT, "fatal in %s: %s%s%s: %s", proc, where,
		    s[0] != '\0' ? ": " : "", s, strerror(code));
	else
		logit(LOG_CRIT, "fatal in %s: %s%s%s", proc, where,
		    s[0] != '\0' ? ": " : "", s);
	exit(1);
}
