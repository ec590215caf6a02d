/*
 * The parse cache: what Nomad answered to /v1/jobs/parse, kept by the
 * SHA-256 of the job file and its variables, so an unchanged file costs
 * no request.  Bounded in entries and bytes; least recently used first
 * out; flushed when the Nomad address changes.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "log.h"
#include "xmalloc.h"
#include "nomad.h"

struct nomad_cached {
	TAILQ_ENTRY(nomad_cached) pc_entry;	/* most recent first */
	uint8_t			 pc_key[NOMAD_KEY_LEN];
	uint32_t		 pc_status;
	uint64_t		 pc_index;
	char			*pc_text;	/* 200: the job, compact JSON */
	char			*pc_error;	/* 400 */
	size_t			 pc_size;	/* of Nomad's answer */
};
TAILQ_HEAD(nomad_cache, nomad_cached);

static struct nomad_cache	 nomad_cache =
    TAILQ_HEAD_INITIALIZER(nomad_cache);
static size_t			 nomad_ncached;
static size_t			 nomad_cachebytes;
static uint64_t			 nomad_cachegen;	/* flushes */

static void
nomad_cached_free(struct nomad_cached *pc)
{
	free(pc->pc_text);
	free(pc->pc_error);
	free(pc);
}

void
nomad_parse_cache_flush(void)
{
	struct nomad_cached	*pc;

	while ((pc = TAILQ_FIRST(&nomad_cache)) != NULL) {
		TAILQ_REMOVE(&nomad_cache, pc, pc_entry);
		nomad_cached_free(pc);
	}
	nomad_ncached = 0;
	nomad_cachebytes = 0;
	nomad_cachegen++;
}

/* Changes with every flush: what was kept from a parse is stale. */
uint64_t
nomad_parse_cache_generation(void)
{
	return nomad_cachegen;
}

size_t
nomad_parse_cache_size(void)
{
	return nomad_ncached;
}

/* SHA-256 over both inputs, each preceded by its length. */
void
nomad_cache_key(const void *hcl, size_t hcllen, const void *vars,
    size_t varslen, uint8_t *key)
{
	EVP_MD_CTX	*ctx;
	uint64_t	 l;
	unsigned int	 n;

	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		fatalx("EVP_DigestInit_ex");
	l = hcllen;
	EVP_DigestUpdate(ctx, &l, sizeof(l));
	EVP_DigestUpdate(ctx, hcl, hcllen);
	l = varslen;
	EVP_DigestUpdate(ctx, &l, sizeof(l));
	if (varslen > 0)
		EVP_DigestUpdate(ctx, vars, varslen);
	if (EVP_DigestFinal_ex(ctx, key, &n) != 1 || n != NOMAD_KEY_LEN)
		fatalx("EVP_DigestFinal_ex");
	EVP_MD_CTX_free(ctx);
}

static struct nomad_cached *
nomad_cache_find(const uint8_t *key)
{
	struct nomad_cached	*pc;

	TAILQ_FOREACH(pc, &nomad_cache, pc_entry)
		if (memcmp(pc->pc_key, key, NOMAD_KEY_LEN) == 0) {
			TAILQ_REMOVE(&nomad_cache, pc, pc_entry);
			TAILQ_INSERT_HEAD(&nomad_cache, pc, pc_entry);
			return pc;
		}
	return NULL;
}

/*
 * The answer for a key, if kept: *json a copy the caller owns (for a
 * 200), *error a copy (for a 400).  Returns 1 on a hit, else 0.
 */
int
nomad_cache_get(const uint8_t *key, uint32_t *status, uint64_t *index,
    json_t **json, char **error)
{
	struct nomad_cached	*pc;

	if ((pc = nomad_cache_find(key)) == NULL)
		return 0;
	*status = pc->pc_status;
	*index = pc->pc_index;
	/*
	 * Kept as text, not as a jansson tree: a tree costs ten times the
	 * text, and detection parses every file again each cycle.
	 */
	if (pc->pc_text != NULL && (*json = json_loads(pc->pc_text, 0,
	    NULL)) == NULL)
		fatalx("json_loads of a cached parse");
	if (pc->pc_error != NULL)
		*error = xstrdup(pc->pc_error);
	return 1;
}

/* Drop the answer for a key: its caller keeps what it needs itself. */
void
nomad_cache_forget(const uint8_t *key)
{
	struct nomad_cached	*pc;

	if ((pc = nomad_cache_find(key)) == NULL)
		return;
	TAILQ_REMOVE(&nomad_cache, pc, pc_entry);
	nomad_ncached--;
	nomad_cachebytes -= pc->pc_size;
	nomad_cached_free(pc);
}

/*
 * Keep what Nomad's parser said: a job (200) or a parse error (400) are
 * functions of the input.  Anything else (403, 5xx) may change.  size is
 * that of Nomad's answer, for the memory bound.
 */
void
nomad_cache_put(const uint8_t *key, uint32_t status, uint64_t index,
    json_t *json, const char *error, size_t size)
{
	struct nomad_cached	*pc;

	if (status == 200 && json != NULL && error == NULL) {
		;
	} else if (status != 400 || error == NULL)
		return;
	if (nomad_cache_find(key) != NULL ||
	    size > NOMAD_PARSE_CACHE_BYTES / 4)
		return;
	if ((pc = calloc(1, sizeof(*pc))) == NULL)
		fatal("calloc");
	memcpy(pc->pc_key, key, NOMAD_KEY_LEN);
	pc->pc_status = status;
	pc->pc_index = index;
	if (status == 200) {
		if ((pc->pc_text = json_dumps(json, JSON_COMPACT |
		    JSON_ENCODE_ANY)) == NULL)
			fatalx("json_dumps");
	} else
		pc->pc_error = xstrdup(error);
	pc->pc_size = size;
	TAILQ_INSERT_HEAD(&nomad_cache, pc, pc_entry);
	nomad_ncached++;
	nomad_cachebytes += pc->pc_size;
	/* Least recently used out, to stay within both bounds. */
	while (nomad_ncached > NOMAD_PARSE_CACHE_MAX ||
	    nomad_cachebytes > NOMAD_PARSE_CACHE_BYTES) {
		pc = TAILQ_LAST(&nomad_cache, nomad_cache);
		TAILQ_REMOVE(&nomad_cache, pc, pc_entry);
		nomad_ncached--;
		nomad_cachebytes -= pc->pc_size;
		nomad_cached_free(pc);
	}
}
