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

/*
 * Read a file holding a secret (as root), at most max bytes; the
 * trailing newlines are dropped and what is left must be non-empty and
 * free of NUL bytes.  The caller frees *buf with freezero(*buf, *len + 1)
 * (the buffer may be larger: freezero never reads past what it wipes).
 */
int	 web_secret_read(const char *path, size_t max, uint8_t **buf,
	    size_t *len, char *err, size_t errlen);

extern const struct api_route	 webhook_routes[];
extern const size_t		 webhook_nroutes;

#endif /* NOPS_WEBHOOK_H */
