/*
 * The API routes the dashboard needs beyond the engine's: an aggregated
 * overview (one request renders the Overview page) and the audit log,
 * paged.  Also the TLS material of the listeners, read as root.
 */
#ifndef NOPS_API_DASHBOARD_H
#define NOPS_API_DASHBOARD_H

#include <stddef.h>

#include "api.h"

/* At most this many items per list of the overview; counts are exact. */
#define WEB_OVERVIEW_ITEMS	25

extern const struct api_route	 web_routes[];
extern const size_t		 web_nroutes;

/*
 * A listener's certificate chain and key, read as root before the
 * webworker needs them and checked to belong together.  The key is a
 * secret: web_tls_free() zeroes it.
 */
struct web_tls {
	char		*wt_cert;
	size_t		 wt_certlen;
	char		*wt_key;
	size_t		 wt_keylen;
};

/* 0, or -1 with the reason logged (the file and what is wrong). */
int	 web_tls_read(const char *certfile, const char *keyfile,
	    struct web_tls *);
void	 web_tls_free(struct web_tls *);

#endif /* NOPS_API_DASHBOARD_H */
