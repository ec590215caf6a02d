/* Logging shared by every nops process (the OpenBSD log.c interface). */
#ifndef NOPS_LOG_H
#define NOPS_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/cdefs.h>

#ifndef __dead
#define __dead	__attribute__((__noreturn__))
#endif

void	 log_init(int foreground, int syslog_facility);
void	 log_procinit(const char *procname);
void	 log_init_parent(void);
void	 log_relay(int pri, const char *label, const char *line, size_t len);
void	 log_setverbose(int);
int	 log_getverbose(void);
void	 log_warn(const char *, ...) __attribute__((__format__(printf, 1, 2)));
void	 log_warnx(const char *, ...) __attribute__((__format__(printf, 1, 2)));
void	 log_info(const char *, ...) __attribute__((__format__(printf, 1, 2)));
void	 log_debug(const char *, ...) __attribute__((__format__(printf, 1, 2)));
void	 logit(int, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));
void	 vlog(int, const char *, va_list)
	    __attribute__((__format__(printf, 2, 0)));
/*
 * fatal: log "fatal in PROCESS: FUNCTION: message: strerror(errno)" and
 * exit 1; fatalx: the same without errno.  The macros put the calling
 * function in, so every fatal message says where; the message may be
 * NULL.
 */
__dead void log_fatal(const char *, int, const char *, ...)
	    __attribute__((__format__(printf, 3, 4)));
#define fatal(...)	log_fatal(__func__, 1, __VA_ARGS__)
#define fatalx(...)	log_fatal(__func__, 0, __VA_ARGS__)

#endif /* NOPS_LOG_H */
