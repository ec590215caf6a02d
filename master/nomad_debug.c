/*
 * Test builds only: POST /api/v1/debug/nomad turns a JSON description
 * into one call of the Nomad client and answers with its result, so the
 * integration tests drive the client before (and beside) the engine.
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "nomad.h"
#include "jsonb.h"

#ifdef NOPS_TEST_HOOKS
struct nomad_debug_ctx {
	void	(*answer)(void *, int, json_t *);
	void	*ctx;
	int	 brief;		/* the JSON's size, not the JSON */
};

static void
nomad_debug_cb(struct nomad_result *res, void *arg)
{
	struct nomad_debug_ctx	*d = arg;
	json_t			*o, *v;

	o = jsonb_pack("{s:I,s:s,s:i,s:I,s:i,s:b,s:I,s:I}",
	    "id", (json_int_t)res->nr_id,
	    "op", nomad_op_name(res->nr_op),
	    "status", res->nr_status,
	    "index", (json_int_t)res->nr_index,
	    "attempts", (int)res->nr_attempts,
	    "cached", res->nr_cached,
	    "outstanding", (json_int_t)nomad_outstanding(),
	    "cache_size", (json_int_t)nomad_parse_cache_size());
	if (o == NULL)
		fatalx("json_pack");
	json_object_set_new(o, "ok", json_boolean(nomad_ok(res)));
	json_object_set_new(o, "error", res->nr_error != NULL ?
	    jsonb_str(res->nr_error) : json_null());
	if (d->brief && res->nr_json != NULL) {
		char	*s = json_dumps(res->nr_json, JSON_COMPACT |
		    JSON_ENCODE_ANY);

		json_object_set_new(o, "json_bytes",
		    json_integer(s != NULL ? (json_int_t)strlen(s) : -1));
		free(s);
	} else
		json_object_set(o, "json", res->nr_json != NULL ?
		    res->nr_json : json_null());
	if (res->nr_op == NOMAD_OP_ALLOC_LOGS) {
		if ((v = json_stringn(res->nr_body, res->nr_bodylen)) == NULL)
			v = json_null();	/* not UTF-8: tests avoid it */
		json_object_set_new(o, "body", v);
	}
	if (res->nr_op == NOMAD_OP_REGISTER) {
		uint64_t	 sent, stored;
		int		 cas;

		cas = nomad_cas_error(res, &sent, &stored);
		json_object_set_new(o, "cas", jsonb_pack("{s:i,s:I,s:I}",
		    "kind", cas, "sent", (json_int_t)sent,
		    "stored", (json_int_t)stored));
	}
	d->answer(d->ctx, 200, o);
	free(d);
}

static const char *
nomad_debug_str(json_t *req, const char *key)
{
	return json_string_value(json_object_get(req, key));
}

int
nomad_debug(json_t *req, void (*answer)(void *, int, json_t *), void *ctx,
    char *err, size_t errlen)
{
	struct nomad_debug_ctx	*d;
	struct nomad_args	 a;
	const char		*opname, *s;
	json_t			*v;
	int			 op;

	memset(&a, 0, sizeof(a));
	if ((opname = nomad_debug_str(req, "op")) == NULL) {
		snprintf(err, errlen, "op missing");
		return -1;
	}
	for (op = NOMAD_OP_PARSE; op < NOMAD_OP_MAX; op++)
		if (strcmp(nomad_op_name(op), opname) == 0)
			break;
	if (op == NOMAD_OP_MAX) {
		snprintf(err, errlen, "unknown op %s", opname);
		return -1;
	}
	/*
	 * Alike on purpose: webhook_post (webhook.c) fills its request from
	 * headers the same way; other fields from another source.
	 */
	a.na_ns = nomad_debug_str(req, "namespace");
	a.na_id = nomad_debug_str(req, "id");
	a.na_task = nomad_debug_str(req, "task");
	a.na_prefix = nomad_debug_str(req, "prefix");
	a.na_idem = nomad_debug_str(req, "idempotency_token");
	a.na_job = json_object_get(req, "job");
	a.na_meta = json_object_get(req, "meta");
	a.na_groups = json_object_get(req, "groups");
	if ((s = nomad_debug_str(req, "hcl")) != NULL ||
	    (s = nomad_debug_str(req, "payload")) != NULL) {
		a.na_data = s;
		a.na_datalen = strlen(s);
	}
	if ((s = nomad_debug_str(req, "vars")) != NULL) {
		a.na_vars = s;
		a.na_varslen = strlen(s);
	}
	if ((v = json_object_get(req, "index")) != NULL)
		a.na_index = (uint64_t)json_integer_value(v);
	if ((v = json_object_get(req, "tail")) != NULL)
		a.na_tail = (uint64_t)json_integer_value(v);
	if ((v = json_object_get(req, "timeout_ms")) != NULL)
		a.na_timeout_ms = (uint32_t)json_integer_value(v);
	if (json_is_true(json_object_get(req, "enforce")))
		a.na_flags |= NOMAD_F_ENFORCE_INDEX;
	if (json_is_true(json_object_get(req, "preserve_counts")))
		a.na_flags |= NOMAD_F_PRESERVE_COUNTS;
	if (json_is_true(json_object_get(req, "purge")))
		a.na_flags |= NOMAD_F_PURGE;
	if (json_is_true(json_object_get(req, "stderr")))
		a.na_flags |= NOMAD_F_STDERR;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		fatal("calloc");
	d->answer = answer;
	d->ctx = ctx;
	d->brief = json_is_true(json_object_get(req, "brief"));
	nomad_call(op, &a, nomad_debug_cb, d);
	return 0;
}
#endif /* NOPS_TEST_HOOKS */
