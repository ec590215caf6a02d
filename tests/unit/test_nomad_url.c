/*
 * The nomadworker's wire format: escaping, the address rule (https, or
 * http to loopback only), and the method, path, body and retry class of
 * every operation.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nops.h"
#include "addr.h"
#include "nomadworker.h"
#include "test.h"

static void
check_escape(const char *in, const char *want)
{
	char	*out = nomad_escape(in);

	CHECK_STR(out, want);
	free(out);
}

static int
addr_ok(const char *addr, const char *want_base)
{
	char	 base[NOMAD_ADDRESS_MAX + 1], err[256];

	if (nomad_address_parse(addr, base, sizeof(base), err,
	    sizeof(err)) == -1)
		return 0;
	return want_base == NULL || strcmp(base, want_base) == 0;
}

static int
addr_err(const char *addr, const char *want_in_err)
{
	char	 base[NOMAD_ADDRESS_MAX + 1], err[256];

	if (nomad_address_parse(addr, base, sizeof(base), err,
	    sizeof(err)) == 0)
		return 0;
	return strstr(err, want_in_err) != NULL;
}

/* Build; 0 on success with w filled. */
static int
build(struct nomad_ask *a, struct nomad_wire *w, char *err, size_t errlen)
{
	err[0] = '\0';
	return nomad_wire_build(a, w, err, errlen);
}

static json_t *
body_json(const struct nomad_wire *w)
{
	json_error_t	 jerr;

	if (w->nw_body == NULL)
		return NULL;

	return json_loadb(w->nw_body, w->nw_bodylen, 0, &jerr);
}

int
main(void)
{
	struct nomad_ask	 a;
	struct nomad_wire	 w;
	json_t			*j;
	char			 err[512];
	const char		*job = "{\"ID\":\"web\",\"Name\":\"web\","
				    "\"Priority\":50,\"Weight\":0.1}";

	TEST_BEGIN("escape: unreserved characters stay");
	check_escape("web", "web");
	check_escape("a-b_c.d~e", "a-b_c.d~e");
	check_escape("", "");
	TEST_END();

	TEST_BEGIN("escape: a dispatched child's / becomes %2F");
	check_escape("report/dispatch-1717200000-3f9c2a1b",
	    "report%2Fdispatch-1717200000-3f9c2a1b");
	check_escape("cron/periodic-1717200000",
	    "cron%2Fperiodic-1717200000");
	TEST_END();

	TEST_BEGIN("escape: query and path delimiters, %, space, UTF-8");
	check_escape("a b?c&d=e%f#g", "a%20b%3Fc%26d%3De%25f%23g");
	check_escape("d:1:2", "d%3A1%3A2");
	check_escape("\xc3\xa9", "%C3%A9");
	check_escape("..", "..");
	TEST_END();

	TEST_BEGIN("address: https anywhere, trailing / dropped");
	CHECK(addr_ok("https://nomad.example:4646",
	    "https://nomad.example:4646"));
	CHECK(addr_ok("https://nomad.example:4646/",
	    "https://nomad.example:4646"));
	CHECK(addr_ok("https://10.1.2.3", "https://10.1.2.3"));
	CHECK(addr_ok("https://[2001:db8::1]:4646", NULL));
	CHECK(addr_ok("HTTPS://nomad.example", NULL));
	TEST_END();

	TEST_BEGIN("address: http only to a loopback host");
	CHECK(addr_ok("http://127.0.0.1:4646", "http://127.0.0.1:4646"));
	CHECK(addr_ok("http://127.8.9.10:1", NULL));
	CHECK(addr_ok("http://localhost:4646", NULL));
	CHECK(addr_ok("http://[::1]:4646", NULL));
	CHECK(addr_err("http://10.0.0.1:4646", "in clear"));
	CHECK(addr_err("http://nomad.example", "in clear"));
	CHECK(addr_err("http://127.0.0.1.nip.io:4646", "in clear"));
	CHECK(addr_err("http://128.0.0.1", "in clear"));
	CHECK(addr_err("http://[::2]:4646", "in clear"));
	TEST_END();

	TEST_BEGIN("address: other schemes, credentials, junk refused");
	CHECK(addr_err("ftp://127.0.0.1", "https://"));
	CHECK(addr_err("127.0.0.1:4646", "https://"));
	CHECK(addr_err("https://user:pw@nomad.example", "not allowed"));
	CHECK(addr_err("https://nomad.example?x=1", "not allowed"));
	CHECK(addr_err("https://nomad.example/#x", "not allowed"));
	CHECK(addr_err("https://nomad .example", "not allowed"));
	CHECK(addr_err("https://nomad.example:", "bad port"));
	CHECK(addr_err("https://nomad.example:1234567", "bad port"));
	CHECK(addr_err("https://nomad.example:12a", "bad port"));
	CHECK(addr_err("https://", "bad host"));
	CHECK(addr_err("https://[::1", "unterminated"));
	TEST_END();

	TEST_BEGIN("loopback hosts");
	CHECK(addr_is_loopback("127.0.0.1"));
	CHECK(addr_is_loopback("::1"));
	CHECK(addr_is_loopback("LOCALHOST"));
	CHECK(!addr_is_loopback("localhost.example"));
	CHECK(!addr_is_loopback("0.0.0.0"));
	CHECK(!addr_is_loopback("::"));
	TEST_END();

	TEST_BEGIN("parse: POST /v1/jobs/parse, HCL + variables, canonical");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_PARSE;
	a.na_ns = "apps";
	a.na_data1 = "job \"web\" {}\n";
	a.na_data1len = strlen(a.na_data1);
	a.na_data2 = "image = \"nginx\"\n";
	a.na_data2len = strlen(a.na_data2);
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "POST");
	CHECK_STR(w.nw_path, "/v1/jobs/parse?namespace=apps");
	CHECK(w.nw_read == 1);
	j = body_json(&w);
	CHECK(j != NULL);
	CHECK_STR(json_string_value(json_object_get(j, "JobHCL")),
	    "job \"web\" {}\n");
	CHECK_STR(json_string_value(json_object_get(j, "Variables")),
	    "image = \"nginx\"\n");
	CHECK(json_is_true(json_object_get(j, "Canonicalize")));
	json_decref(j);
	nomad_wire_free(&w);
	TEST_END();

	TEST_BEGIN("parse: invalid UTF-8 and an empty file are refused");
	a.na_data1 = "job \"\xff\" {}";
	a.na_data1len = strlen(a.na_data1);
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	CHECK(strstr(err, "UTF-8") != NULL);
	a.na_data1len = 0;
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	TEST_END();

	TEST_BEGIN("plan: the job spliced in byte for byte, with Diff");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_PLAN;
	a.na_ns = "apps";
	a.na_id = "web";
	a.na_data1 = job;
	a.na_data1len = strlen(job);
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "POST");
	CHECK_STR(w.nw_path, "/v1/job/web/plan?namespace=apps");
	CHECK(w.nw_read == 1);
	CHECK(w.nw_body != NULL && strstr(w.nw_body, job) != NULL);
	j = body_json(&w);
	CHECK(json_is_true(json_object_get(j, "Diff")));
	CHECK(json_is_object(json_object_get(j, "Job")));
	json_decref(j);
	nomad_wire_free(&w);
	TEST_END();

	TEST_BEGIN("plan: a job that is not one JSON object is refused");
	a.na_data1 = "{\"ID\":\"web\"} {}";
	a.na_data1len = strlen(a.na_data1);
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	a.na_data1 = "[1]";
	a.na_data1len = 3;
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	a.na_data1 = "{\"ID\":";
	a.na_data1len = strlen(a.na_data1);
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	CHECK(strstr(err, "invalid JSON") != NULL);
	TEST_END();

	TEST_BEGIN("register: check-and-set fields only when enforced");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_REGISTER;
	a.na_ns = "apps";
	a.na_id = "web";
	a.na_data1 = job;
	a.na_data1len = strlen(job);
	a.na_flags = NOMAD_F_ENFORCE_INDEX;
	a.na_index = 42;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "POST");
	CHECK_STR(w.nw_path, "/v1/job/web?namespace=apps");
	CHECK(w.nw_read == 0);
	j = body_json(&w);
	CHECK(json_is_true(json_object_get(j, "EnforceIndex")));
	CHECK(json_integer_value(json_object_get(j, "JobModifyIndex")) == 42);
	CHECK(json_object_get(j, "PreserveCounts") == NULL);
	json_decref(j);
	nomad_wire_free(&w);
	a.na_flags = NOMAD_F_PRESERVE_COUNTS;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	j = body_json(&w);
	CHECK(json_object_get(j, "EnforceIndex") == NULL);
	CHECK(json_object_get(j, "JobModifyIndex") == NULL);
	CHECK(json_is_true(json_object_get(j, "PreserveCounts")));
	json_decref(j);
	nomad_wire_free(&w);
	a.na_flags = NOMAD_F_ENFORCE_INDEX;
	a.na_index = 0;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK(w.nw_body != NULL &&
	    strstr(w.nw_body, "\"JobModifyIndex\":0") != NULL);
	nomad_wire_free(&w);
	TEST_END();

	TEST_BEGIN("reads of a dispatched child: escaped id, GET, retryable");
	memset(&a, 0, sizeof(a));
	a.na_ns = "default";
	a.na_id = "report/dispatch-1717200000-3f9c2a1b";
	a.na_op = NOMAD_OP_JOB_READ;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "GET");
	CHECK_STR(w.nw_path, "/v1/job/report%2Fdispatch-1717200000-3f9c2a1b"
	    "?namespace=default");
	CHECK(w.nw_read == 1 && w.nw_body == NULL);
	nomad_wire_free(&w);
	a.na_op = NOMAD_OP_JOB_ALLOCATIONS;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/job/report%2Fdispatch-1717200000-3f9c2a1b"
	    "/allocations?namespace=default");
	nomad_wire_free(&w);
	a.na_op = NOMAD_OP_JOB_DEPLOYMENT;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/job/report%2Fdispatch-1717200000-3f9c2a1b"
	    "/deployment?namespace=default");
	nomad_wire_free(&w);
	TEST_END();

	TEST_BEGIN("deployment read and promote");
	memset(&a, 0, sizeof(a));
	a.na_ns = "apps";
	a.na_id = "70638f62-5c19-193e-30d6-f9d6e689ab8e";
	a.na_op = NOMAD_OP_DEPLOYMENT_READ;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "GET");
	CHECK_STR(w.nw_path, "/v1/deployment/70638f62-5c19-193e-30d6-"
	    "f9d6e689ab8e?namespace=apps");
	nomad_wire_free(&w);
	a.na_op = NOMAD_OP_DEPLOYMENT_PROMOTE;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "POST");
	CHECK_STR(w.nw_path, "/v1/deployment/promote/70638f62-5c19-193e-"
	    "30d6-f9d6e689ab8e?namespace=apps");
	CHECK(w.nw_read == 0);
	j = body_json(&w);
	CHECK_STR(json_string_value(json_object_get(j, "DeploymentID")),
	    a.na_id);
	CHECK(json_is_true(json_object_get(j, "All")));
	json_decref(j);
	nomad_wire_free(&w);
	a.na_data1 = "[\"web\",\"api\"]";
	a.na_data1len = strlen(a.na_data1);
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	j = body_json(&w);
	CHECK(json_object_get(j, "All") == NULL);
	CHECK(json_array_size(json_object_get(j, "Groups")) == 2);
	json_decref(j);
	nomad_wire_free(&w);
	a.na_data1 = "[1]";
	a.na_data1len = 3;
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	TEST_END();

	TEST_BEGIN("dispatch: idempotency token in the query, payload base64");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_DISPATCH;
	a.na_ns = "default";
	a.na_id = "report";
	a.na_idem = "d42:pre:1";
	a.na_data1 = "{\"date\":\"2024-06-01\"}";
	a.na_data1len = strlen(a.na_data1);
	a.na_data2 = "{\"customer\":\"acme\"}";
	a.na_data2len = strlen(a.na_data2);
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "POST");
	CHECK_STR(w.nw_path, "/v1/job/report/dispatch?namespace=default"
	    "&idempotency_token=d42%3Apre%3A1");
	CHECK(w.nw_read == 0);
	j = body_json(&w);
	CHECK_STR(json_string_value(json_object_get(j, "Payload")),
	    "eyJkYXRlIjoiMjAyNC0wNi0wMSJ9");
	CHECK_STR(json_string_value(json_object_get(json_object_get(j,
	    "Meta"), "customer")), "acme");
	json_decref(j);
	nomad_wire_free(&w);
	TEST_END();

	TEST_BEGIN("dispatch: no payload, no meta, no token");
	a.na_idem = "";
	a.na_data1len = 0;
	a.na_data2len = 0;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/job/report/dispatch?namespace=default");
	CHECK_STR(w.nw_body, "{}");
	nomad_wire_free(&w);
	TEST_END();

	TEST_BEGIN("dispatch: oversized payload and non-string meta refused");
	{
		char	*big = calloc(1, NOMAD_PAYLOAD_MAX + 2);

		memset(big, 'x', NOMAD_PAYLOAD_MAX + 1);
		a.na_data1 = big;
		a.na_data1len = NOMAD_PAYLOAD_MAX + 1;
		CHECK(build(&a, &w, err, sizeof(err)) == -1);
		a.na_data1len = NOMAD_PAYLOAD_MAX;
		CHECK(build(&a, &w, err, sizeof(err)) == 0);
		nomad_wire_free(&w);
		free(big);
	}
	a.na_data1len = 0;
	a.na_data2 = "{\"n\":1}";
	a.na_data2len = strlen(a.na_data2);
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	CHECK(strstr(err, "not a string") != NULL);
	TEST_END();

	TEST_BEGIN("logs: plain text, stream, last bytes from the end");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_ALLOC_LOGS;
	a.na_ns = "default";
	a.na_id = "5457f16d-0f87-8e6b-5e91-0c7da3a41eb7";
	a.na_task = "gen";
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "GET");
	CHECK_STR(w.nw_path, "/v1/client/fs/logs/5457f16d-0f87-8e6b-5e91-"
	    "0c7da3a41eb7?namespace=default&task=gen&type=stdout&plain=true");
	nomad_wire_free(&w);
	a.na_flags = NOMAD_F_STDERR;
	a.na_tail = 65536;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/client/fs/logs/5457f16d-0f87-8e6b-5e91-"
	    "0c7da3a41eb7?namespace=default&task=gen&type=stderr&plain=true"
	    "&origin=end&offset=65536");
	nomad_wire_free(&w);
	a.na_task = "";
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	TEST_END();

	TEST_BEGIN("stop: DELETE, purge only when asked, not retried");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_JOB_STOP;
	a.na_ns = "apps";
	a.na_id = "hook-1a2b3c4d";
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "DELETE");
	CHECK_STR(w.nw_path, "/v1/job/hook-1a2b3c4d?namespace=apps");
	CHECK(w.nw_read == 0 && w.nw_body == NULL);
	nomad_wire_free(&w);
	a.na_flags = NOMAD_F_PURGE;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/job/hook-1a2b3c4d?namespace=apps&purge=true");
	nomad_wire_free(&w);
	TEST_END();

	TEST_BEGIN("jobs list: prefix escaped, namespace escaped");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_JOBS_LIST;
	a.na_ns = "team a";
	a.na_prefix = "report/dispatch-";
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/jobs?namespace=team%20a"
	    "&prefix=report%2Fdispatch-");
	CHECK(w.nw_read == 1);
	nomad_wire_free(&w);
	a.na_prefix = NULL;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/jobs?namespace=team%20a");
	nomad_wire_free(&w);
	TEST_END();

	TEST_BEGIN("missing namespace, missing id, unknown op refused");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_JOB_READ;
	a.na_id = "web";
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	CHECK(strstr(err, "namespace") != NULL);
	a.na_ns = "apps";
	a.na_id = "";
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	CHECK(strstr(err, "no id") != NULL);
	a.na_id = "web";
	a.na_op = NOMAD_OP_MAX;
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	CHECK_STR(nomad_op_name(NOMAD_OP_MAX), "unknown");
	CHECK_STR(nomad_op_name(NOMAD_OP_DISPATCH), "dispatch");
	TEST_END();

	TEST_BEGIN("blocking queries: index and wait on the lists, own "
	    "connections");
	memset(&a, 0, sizeof(a));
	a.na_op = NOMAD_OP_JOBS_LIST;
	a.na_ns = "web";
	a.na_index = 42;
	a.na_flags = NOMAD_F_BLOCK;
	a.na_timeout_ms = (NOMAD_BLOCK_WAIT_S + 15) * 1000;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_method, "GET");
	CHECK_STR(w.nw_path, "/v1/jobs?namespace=web&index=42&wait=60s");
	CHECK(w.nw_read == 1 && w.nw_block == 1);
	nomad_wire_free(&w);
	a.na_op = NOMAD_OP_DEPLOYMENTS_LIST;
	a.na_index = 0;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/deployments?namespace=web&index=0&wait=60s");
	nomad_wire_free(&w);
	/* A timeout shorter than the wait would cut every query short. */
	a.na_timeout_ms = NOMAD_BLOCK_WAIT_S * 1000;
	CHECK(build(&a, &w, err, sizeof(err)) == -1);
	CHECK(strstr(err, "longer than its wait") != NULL);
	/* Without the flag: a plain list, on the shared connections. */
	a.na_flags = 0;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/deployments?namespace=web");
	CHECK(w.nw_block == 0);
	nomad_wire_free(&w);
	a.na_op = NOMAD_OP_STATUS_LEADER;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/status/leader?namespace=web");
	nomad_wire_free(&w);
	a.na_op = NOMAD_OP_AGENT_SELF;
	CHECK(build(&a, &w, err, sizeof(err)) == 0);
	CHECK_STR(w.nw_path, "/v1/agent/self?namespace=web");
	nomad_wire_free(&w);
	TEST_END();

	TEST_EXIT();
}
