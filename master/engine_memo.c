/*
 * What each job file gave, kept by its content: a cycle reads only the
 * files that changed.  A job file and its variables parse to the same
 * answer as long as their bytes are the same (the parse cache makes the
 * same assumption, nomad_cache.c), so everything detection takes from
 * that answer alone is kept here between cycles: the job's namespace and
 * ID, its spec as compact text, its meta, whether a suspend applies to
 * its type, and the SHA-256 state after its canonical text (the start of
 * its spec hash, engine_detect.c).  An unchanged file then costs a tree
 * lookup and a copy of its text: no parse, no jansson tree, no hash.
 *
 * The key is the SHA-256 of the file and that of its variables file, as
 * the master computed them when the snapshot arrived (repo.c checks each
 * against what the gitworker announced): the content's own name, like a
 * git blob id, but one the master has verified rather than taken from
 * the untrusted gitworker.  A Nomad answer that may change (no answer, a
 * 5xx, a 403) is never kept.  Entries no cycle used are dropped at the
 * end of each cycle, and all of them when the parse cache is flushed
 * (another Nomad cluster).  A job's answer leaves the parse cache once
 * it is kept here (one copy of its text).  The test hook NOPS_TEST_NO_SKIP
 * (engine_no_skip) turns this off, so that the equivalence test's
 * reference parses every file every cycle as the seed says.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "log.h"
#include "nomad.h"
#include "repo.h"
#include "engine.h"
#include "engine_detect.h"
#include "suspend.h"
#include "xmalloc.h"

RB_HEAD(dmemos, dmemo);

static struct dmemos	 memos = RB_INITIALIZER(&memos);
static uint64_t		 memo_cycle;	/* the cycle running, or the last */
static uint64_t		 memo_flushgen;	/* the parse cache's, when filled */
static size_t		 memo_count;

static int
dmemo_cmp(struct dmemo *a, struct dmemo *b)
{
	return strcmp(a->dm_key, b->dm_key);
}

/* libbsd leaves __unused undefined (a Linux header uses the name). */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define MEMO_UNDEF_UNUSED
#endif
RB_GENERATE_STATIC(dmemos, dmemo, dm_node, dmemo_cmp)
#ifdef MEMO_UNDEF_UNUSED
#undef __unused
#endif

/*
 * Alike on purpose: op_frozen_clear (operation.c), hoststep_free
 * (hoststep.c) and repo_free (repo.c) free their own structs' members the
 * same way; the members differ.
 */
static void
dmemo_free(struct dmemo *dm)
{
	free(dm->dm_error);
	free(dm->dm_ns);
	free(dm->dm_id);
	free(dm->dm_spec);
	json_decref(dm->dm_meta);
	EVP_MD_CTX_free(dm->dm_canon);
	free(dm);
}

static void
memo_key(const struct repo_file *rf, char *key)
{
	snprintf(key, DMEMO_KEYLEN + 1, "%s:%s", rf->rf_sha256,
	    rf->rf_vars != NULL ? rf->rf_vars->rf_sha256 : "");
}

void
memo_flush(void)
{
	struct dmemo	*dm, *next;

	RB_FOREACH_SAFE(dm, dmemos, &memos, next) {
		RB_REMOVE(dmemos, &memos, dm);
		dmemo_free(dm);
	}
	memo_count = 0;
}

void
memo_begin(void)
{
	memo_cycle++;
	if (nomad_parse_cache_generation() != memo_flushgen) {
		memo_flush();
		memo_flushgen = nomad_parse_cache_generation();
	}
}

/* After a cycle: what it did not read belongs to no snapshot now. */
void
memo_sweep(void)
{
	struct dmemo	*dm, *next;

	RB_FOREACH_SAFE(dm, dmemos, &memos, next)
		if (dm->dm_cycle != memo_cycle) {
			RB_REMOVE(dmemos, &memos, dm);
			dmemo_free(dm);
			memo_count--;
		}
}

size_t
memo_size(void)
{
	return memo_count;
}

struct dmemo *
memo_find(const struct repo_file *rf)
{
	struct dmemo	 key, *dm;

	if (engine_no_skip())
		return NULL;
	memo_key(rf, key.dm_key);
	if ((dm = RB_FIND(dmemos, &memos, &key)) != NULL)
		dm->dm_cycle = memo_cycle;
	return dm;
}

/*
 * Keep Nomad's answer to the parse of rf: a job (an object) or, with
 * job NULL, the error of a 400.  Returns the entry, or NULL when off.
 */
struct dmemo *
memo_put(const struct repo_file *rf, const json_t *job, const char *error)
{
	struct dmemo	*dm, *old;
	const char	*ns, *id;
	uint8_t		 ckey[NOMAD_KEY_LEN];

	if (engine_no_skip() || (job == NULL && error == NULL))
		return NULL;
	if ((dm = calloc(1, sizeof(*dm))) == NULL)
		fatal("calloc");
	memo_key(rf, dm->dm_key);
	dm->dm_cycle = memo_cycle;
	if (job == NULL) {
		dm->dm_error = xstrdup(error);
	} else {
		dm->dm_ok = 1;
		ns = json_string_value(json_object_get(job, "Namespace"));
		id = json_string_value(json_object_get(job, "ID"));
		dm->dm_ns = xstrdup(ns != NULL && *ns != '\0' ? ns :
		    "default");
		dm->dm_id = xstrdup(id);
		if ((dm->dm_spec = json_dumps(job, JSON_COMPACT)) == NULL)
			fatalx("json_dumps");
		if (json_object_get(job, "Meta") != NULL &&
		    (dm->dm_meta = json_deep_copy(json_object_get(job,
		    "Meta"))) == NULL)
			fatalx("json_deep_copy");
		dm->dm_suspendable = suspend_type_suspendable(job);
	}
	if (job != NULL) {
		/*
		 * The spec's text is here now: the parse cache's copy of it
		 * would only double the memory a job costs.
		 */
		nomad_cache_key(rf->rf_data, rf->rf_size, rf->rf_vars != NULL ?
		    rf->rf_vars->rf_data : NULL, rf->rf_vars != NULL ?
		    rf->rf_vars->rf_size : 0, ckey);
		nomad_cache_forget(ckey);
	}
	if ((old = RB_INSERT(dmemos, &memos, dm)) != NULL) {
		/* Two files of the same content in one cycle: one entry. */
		dmemo_free(dm);
		old->dm_cycle = memo_cycle;
		return old;
	}
	memo_count++;
	return dm;
}

/*
 * A new SHA-256 state that has hashed the job's canonical text and a
 * newline, the start of its spec hash; the caller frees it.
 */
EVP_MD_CTX *
memo_spec_hash(struct dmemo *dm)
{
	EVP_MD_CTX	*ctx;
	json_t		*job;
	json_error_t	 err;
	char		*canon;

	if (dm->dm_canon == NULL) {
		if ((job = json_loads(dm->dm_spec, 0, &err)) == NULL)
			fatalx("a kept job spec: %s", err.text);
		canon = engine_json_canonical(job);
		json_decref(job);
		if ((dm->dm_canon = EVP_MD_CTX_new()) == NULL ||
		    EVP_DigestInit_ex(dm->dm_canon, EVP_sha256(), NULL) != 1 ||
		    EVP_DigestUpdate(dm->dm_canon, canon, strlen(canon)) != 1 ||
		    EVP_DigestUpdate(dm->dm_canon, "\n", 1) != 1)
			fatalx("EVP_Digest sha256");
		free(canon);
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_MD_CTX_copy_ex(ctx, dm->dm_canon) != 1)
		fatalx("EVP_MD_CTX_copy_ex");
	return ctx;
}
