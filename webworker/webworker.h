#ifndef NOPS_WEBWORKER_H
#define NOPS_WEBWORKER_H

#include "log.h"

struct proc_ctx;
struct imsgev;

/*
 * The process table's row (master/proc.c).  Alike on purpose: gitworker.h
 * and nomadworker.h name their worker's own three entry points so.
 */
extern struct imsgev	 web_iev;
void	 webworker_init(struct proc_ctx *);
void	 webworker_loop(struct proc_ctx *);
void	 webworker_run(struct proc_ctx *);

#endif
