/*
 * GET /metrics: Prometheus text format 0.0.4, built by the master from
 * its own state on each scrape.  Other master modules add their families
 * through metrics_family() / metrics_sample().
 */
#ifndef NOPS_METRICS_H
#define NOPS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "growbuf.h"

#define METRICS_CTYPE	"text/plain; version=0.0.4; charset=utf-8"
#define METRICS_TOKEN_MAX	4096

struct nops_conf;

/* The text being built. */
struct metrics_out {
	struct growbuf	 mo_text;
};

/* "# HELP" and "# TYPE" of a family; its samples follow at once. */
void	 metrics_family(struct metrics_out *, const char *name,
	    const char *type, const char *help);
/*
 * One sample; labels as name, value pairs ending with METRICS_END: a
 * null pointer of the type va_arg() reads, where a bare NULL in a
 * variadic list need not be one.
 */
#define METRICS_END	((const char *)NULL)
void	 metrics_sample(struct metrics_out *, const char *name,
	    int64_t value, ...) __attribute__((__sentinel__));

/* Families of one sample without labels, from a table of them. */
struct metrics_one {
	const char	*m_name;
	const char	*m_type;	/* "gauge", "counter" */
	const char	*m_help;
	int64_t		 m_value;
};
void	 metrics_ones(struct metrics_out *, const struct metrics_one *,
	    size_t n);

/* Read the metrics token file (as root): start and reload. */
void	 metrics_configure(const struct nops_conf *);
/* Count an answer of the API (api.c, for every response it sends). */
void	 metrics_http_count(int status);
/* n answers the webworker gave by itself (IMSG_WEB_SEEN). */
void	 metrics_http_add(int status, uint32_t n);
/*
 * The whole text; the per-job series only for the namespaces req may
 * read (NULL: all).  The caller frees it.
 */
char	*metrics_render(const struct api_req *, size_t *len);

extern const struct api_route	 metrics_routes[];
extern const size_t		 metrics_nroutes;

#endif /* NOPS_METRICS_H */
