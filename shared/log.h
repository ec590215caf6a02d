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
void	 logit(int, const char *, ...) __attribute__((__format__(printf, 2, 3)));
void	 vlog(int, const char *, va_list) __attribute__((__format__(printf, 2, 0)));
__dead void fatal(const char *, ...) __attribute__((__format__(printf, 1, 2)));
__dead void fatalx(const char *, ...) __attribute__((__format__(printf, 1, 2)));

#endif /* NOPS_LOG_H */
