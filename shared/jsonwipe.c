/*
 * jansson's memory wiped as it is freed (jsonwipe.h).
 */
#include "config.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsonwipe.h"

static void
jsonwipe_free(void *p)
{
	if (p == NULL)
		return;
	/* The whole block: jansson does not say how much it used. */
	explicit_bzero(p, malloc_usable_size(p));
	free(p);
}

void
jsonwipe_init(void)
{
	json_set_alloc_funcs(malloc, jsonwipe_free);
}
