#ifndef NOPS_GITWORKER_H
#define NOPS_GITWORKER_H

#include "log.h"

struct proc_ctx;
struct imsgev;

/*
 * Alike on purpose: nomadworker.h and webworker.h: the process table's row
 * (master/proc.c) names each worker's own three entry points.
 */
extern struct imsgev	 git_iev;
void	 gitworker_init(struct proc_ctx *);
void	 gitworker_loop(struct proc_ctx *);
void	 gitworker_run(struct proc_ctx *);

#endif
