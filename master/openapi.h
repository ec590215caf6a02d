/*
 * GET /api/v1/openapi.json: an OpenAPI 3.0 document of every route the
 * master answers, built from a table of descriptions (master/openapi.c).
 */
#ifndef NOPS_OPENAPI_H
#define NOPS_OPENAPI_H

#include <stddef.h>

#include <jansson.h>

#include "api.h"

/* The document (a new reference), or NULL if it cannot be built. */
json_t	*openapi_document(void);

extern const struct api_route	 openapi_routes[];
extern const size_t		 openapi_nroutes;

#endif /* NOPS_OPENAPI_H */
