/*
 * The API routes the dashboard needs beyond the engine's: an aggregated
 * overview (one request renders the Overview page) and the audit log,
 * paged.
 */
#ifndef NOPS_API_DASHBOARD_H
#define NOPS_API_DASHBOARD_H

#include <stddef.h>

#include "api.h"

/* At most this many items per list of the overview; counts are exact. */
#define API_DASHBOARD_ITEMS	25

extern const struct api_route	 api_dashboard_routes[];
extern const size_t		 api_dashboard_nroutes;

#endif /* NOPS_API_DASHBOARD_H */
