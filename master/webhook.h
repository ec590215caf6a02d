/*
 * POST /webhook/git/{repository}: the route, and the repositories'
 * webhook secrets, read by the master as root at start and reload.
 */
#ifndef NOPS_WEBHOOK_H
#define NOPS_WEBHOOK_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

struct nops_conf;
struct metrics_out;

/* Read every repository's webhook secret file; forget the old ones. */
void	 webhook_configure(const struct nops_conf *);
/* Its counters for /metrics. */
void	 webhook_metrics(struct metrics_out *);

extern const struct api_route	 webhook_routes[];
extern const size_t		 webhook_nroutes;

#endif /* NOPS_WEBHOOK_H */
