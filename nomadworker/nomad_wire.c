/*
 * Nomad's wire format: which method, path, query and body carry each
 * operation the master asks for.  Job ids are path-escaped (dispatched
 * and periodic children contain '/'), every request names its namespace,
 * and request bodies are JSON built here; what the master sent as JSON is
 * checked to be exactly one JSON value before it is wrapped.
 */
#include "config.h"

#include <sys/types.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "log.h"
#include "addr.h"
#include "nops.h"
#include "nomadworker.h"

/*
 * Percent-encode everything but RFC 3986's unreserved characters.  Used
 * for path segments and query values alike: stricter than Go's
 * url.PathEscape, and Nomad decodes both the same way.
 */
char *
nomad_escape(const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*p;
	char			*out, *o;
	size_t			 len = strlen(s);

	if (len > SIZE_MAX / 3 - 1 || (out = malloc(len * 3 + 1)) == NULL)
		return NULL;
	for (p = (const unsigned char *)s, o = out; *p != '\0'; p++) {
		if (isalnum(*p) && *p < 0x80)
			*o++ = (char)*p;
		else if (*p == '-' || *p == '.' || *p == '_' || *p == '~')
			*o++ = (char)*p;
		else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 0x0f];
		}
	}
	*o = '\0';
	return out;
}

/*
 * Check a Nomad address and give the base every path is appended to.
 * https:// always; http:// only to a loopback host, because the token
 * would cross the network in clear (the config parser says the same; the
 * worker checks again as the one that sends it).
 */
int
nomad_address_parse(const char *addr, char *base, size_t baselen, char *err,
    size_t errlen)
{
	const char	*p, *auth, *end;
	char		 host[256];
	size_t		 len;
	int		 plain;

	for (p = addr; *p != '\0'; p++)
		if (!isgraph((unsigned char)*p) || *p == '@' || *p == '?' ||
		    *p == '#' || *p == '\\') {
			snprintf(err, errlen, "address: character 0x%02x not "
			    "allowed", (unsigned char)*p);
			return -1;
		}
	if (strncasecmp(addr, "https://", 8) == 0) {
		plain = 0;
		auth = addr + 8;
	} else if (strncasecmp(addr, "http://", 7) == 0) {
		plain = 1;
		auth = addr + 7;
	} else {
		snprintf(err, errlen, "address must start with https:// "
		    "(or http:// for a loopback host)");
		return -1;
	}
	end = auth + strcspn(auth, "/");
	if (*auth == '[') {
		if ((p = memchr(auth, ']', end - auth)) == NULL) {
			snprintf(err, errlen, "address: unterminated [");
			return -1;
		}
		len = p - auth - 1;
		auth++;
		p++;
		if (*p != ':' && p != end) {
			snprintf(err, errlen, "address: junk after ]");
			return -1;
		}
	} else {
		p = auth + strcspn(auth, ":/");
		len = p - auth;
	}
	if (len == 0 || len >= sizeof(host)) {
		snprintf(err, errlen, "address: bad host");
		return -1;
	}
	memcpy(host, auth, len);
	host[len] = '\0';
	if (*p == ':') {
		const char	*q;

		for (q = p + 1; q < end; q++)
			if (!isdigit((unsigned char)*q))
				break;
		if (q != end || q == p + 1 || q - p > 6) {
			snprintf(err, errlen, "address: bad port");
			return -1;
		}
	}
	if (plain && !addr_is_loopback(host)) {
		snprintf(err, errlen, "refusing http:// to %s: the token "
		    "would travel in clear; use https:// (http:// is only "
		    "for a loopback host)", host);
		return -1;
	}
	len = strlen(addr);
	while (len > 0 && addr[len - 1] == '/')
		len--;
	if (len >= baselen) {
		snprintf(err, errlen, "address too long");
		return -1;
	}
	memcpy(base, addr, len);
	base[len] = '\0';
	return 0;
}

static int
wire_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((__format__(printf, 3, 4)));

static int
wire_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* "/v1/<a><escaped id><b>?namespace=<ns>" */
static char *
wire_path(const char *a, const char *id, const char *b, const char *ns)
{
	char	*eid = NULL, *ens, *path;
	int	 n;

	if (id != NULL && (eid = nomad_escape(id)) == NULL)
		return NULL;
	if ((ens = nomad_escape(ns)) == NULL) {
		free(eid);
		return NULL;
	}
	n = asprintf(&path, "/v1/%s%s%s?namespace=%s", a,
	    eid != NULL ? eid : "", b, ens);
	free(eid);
	free(ens);
	return n == -1 ? NULL : path;
}

/* Append "&name=<escaped value>". */
static int
wire_query(char **path, const char *name, const char *value)
{
	char	*ev, *np;
	int	 n;

	if ((ev = nomad_escape(value)) == NULL)
		return -1;
	n = asprintf(&np, "%s&%s=%s", *path, name, ev);
	free(ev);
	if (n == -1)
		return -1;
	free(*path);
	*path = np;
	return 0;
}

/*
 * The master's JSON, checked to be one value of the expected kind and
 * used as sent (no reformatting of numbers).
 */
static int
wire_json_check(const void *buf, size_t len, json_type type, const char *what,
    char *err, size_t errlen)
{
	json_error_t	 jerr;
	json_t		*j;
	int		 ok;

	if (len == 0)
		return wire_err(err, errlen, "%s missing", what);
	if ((j = json_loadb(buf, len, 0, &jerr)) == NULL)
		return wire_err(err, errlen, "%s: invalid JSON: %s", what,
		    jerr.text);
	ok = json_typeof(j) == type;
	json_decref(j);
	if (!ok)
		return wire_err(err, errlen, "%s: not a JSON %s", what,
		    type == JSON_OBJECT ? "object" : "array");
	return 0;
}

/* body = pre + json + post, the master's JSON spliced in as it is. */
static int
wire_splice(struct nomad_wire *w, const char *pre, const void *json,
    size_t jlen, const char *post)
{
	size_t	 a = strlen(pre), c = strlen(post);

	if ((w->nw_body = malloc(a + jlen + c + 1)) == NULL)
		return -1;
	memcpy(w->nw_body, pre, a);
	memcpy(w->nw_body + a, json, jlen);
	memcpy(w->nw_body + a + jlen, post, c);
	w->nw_bodylen = a + jlen + c;
	w->nw_body[w->nw_bodylen] = '\0';
	return 0;
}

static int
wire_dump(struct nomad_wire *w, json_t *j)
{
	if (j == NULL)
		return -1;
	w->nw_body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (w->nw_body == NULL)
		return -1;
	w->nw_bodylen = strlen(w->nw_body);
	return 0;
}

static int
wire_parse(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	json_t	*j;

	if (a->na_data1len == 0)
		return wire_err(err, errlen, "parse: empty job file");
	j = json_pack("{s:s%,s:s%,s:b}",
	    "JobHCL", a->na_data1, a->na_data1len,
	    "Variables", a->na_data2 != NULL ? a->na_data2 : "",
	    a->na_data2len,
	    "Canonicalize", 1);
	if (j == NULL)
		return wire_err(err, errlen, "parse: the job file or the "
		    "variables are not valid UTF-8");
	w->nw_method = "POST";
	w->nw_read = 1;
	if ((w->nw_path = wire_path("jobs/parse", NULL, "", a->na_ns)) ==
	    NULL || wire_dump(w, j) == -1)
		return wire_err(err, errlen, "out of memory");
	return 0;
}

static int
wire_dispatch(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	json_t		*j, *meta = NULL;
	json_error_t	 jerr;
	char		*b64;
	const char	*k;
	json_t		*v;
	int		 n;

	if (a->na_data1len > NOMAD_PAYLOAD_MAX)
		return wire_err(err, errlen, "dispatch: payload of %zu bytes "
		    "exceeds %d", a->na_data1len, NOMAD_PAYLOAD_MAX);
	if (a->na_data2len > 0) {
		if ((meta = json_loadb(a->na_data2, a->na_data2len, 0,
		    &jerr)) == NULL || !json_is_object(meta)) {
			json_decref(meta);
			return wire_err(err, errlen, "dispatch: meta must be "
			    "a JSON object");
		}
		json_object_foreach(meta, k, v)
			if (!json_is_string(v)) {
				json_decref(meta);
				return wire_err(err, errlen, "dispatch: meta "
				    "%s is not a string", k);
			}
	}
	if ((j = json_object()) == NULL)
		return wire_err(err, errlen, "out of memory");
	if (a->na_data1len > 0) {
		if ((b64 = malloc(4 * ((a->na_data1len + 2) / 3) + 1)) ==
		    NULL) {
			json_decref(j);
			json_decref(meta);
			return wire_err(err, errlen, "out of memory");
		}
		n = EVP_EncodeBlock((unsigned char *)b64, a->na_data1,
		    (int)a->na_data1len);
		b64[n] = '\0';
		json_object_set_new(j, "Payload", json_string(b64));
		free(b64);
	}
	if (meta != NULL)
		json_object_set_new(j, "Meta", meta);
	w->nw_method = "POST";
	if ((w->nw_path = wire_path("job/", a->na_id, "/dispatch",
	    a->na_ns)) == NULL ||
	    (a->na_idem != NULL && a->na_idem[0] != '\0' &&
	    wire_query(&w->nw_path, "idempotency_token", a->na_idem) == -1) ||
	    wire_dump(w, j) == -1)
		return wire_err(err, errlen, "out of memory");
	return 0;
}

static int
wire_promote(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	json_t		*j, *groups, *v;
	json_error_t	 jerr;
	size_t		 i;

	if (a->na_data1len > 0) {
		if ((groups = json_loadb(a->na_data1, a->na_data1len, 0,
		    &jerr)) == NULL || !json_is_array(groups) ||
		    json_array_size(groups) == 0) {
			json_decref(groups);
			return wire_err(err, errlen, "promote: groups must be "
			    "a non-empty JSON array");
		}
		json_array_foreach(groups, i, v)
			if (!json_is_string(v)) {
				json_decref(groups);
				return wire_err(err, errlen, "promote: a group "
				    "is not a string");
			}
		j = json_pack("{s:s,s:o}", "DeploymentID", a->na_id,
		    "Groups", groups);
	} else
		j = json_pack("{s:s,s:b}", "DeploymentID", a->na_id, "All", 1);
	if (j == NULL)
		return wire_err(err, errlen, "promote: bad deployment id");
	w->nw_method = "POST";
	if ((w->nw_path = wire_path("deployment/promote/", a->na_id, "",
	    a->na_ns)) == NULL || wire_dump(w, j) == -1)
		return wire_err(err, errlen, "out of memory");
	return 0;
}

/* Alike on purpose: wire_plan, wire_register: each op builds its call. */
static int
wire_logs(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	char	 num[32];

	if (a->na_task == NULL || a->na_task[0] == '\0')
		return wire_err(err, errlen, "alloc-logs: no task");
	w->nw_method = "GET";
	w->nw_read = 1;
	if ((w->nw_path = wire_path("client/fs/logs/", a->na_id, "",
	    a->na_ns)) == NULL ||
	    wire_query(&w->nw_path, "task", a->na_task) == -1 ||
	    wire_query(&w->nw_path, "type",
	    (a->na_flags & NOMAD_F_STDERR) ? "stderr" : "stdout") == -1 ||
	    wire_query(&w->nw_path, "plain", "true") == -1)
		return wire_err(err, errlen, "out of memory");
	if (a->na_tail > 0) {
		snprintf(num, sizeof(num), "%" PRIu64, a->na_tail);
		if (wire_query(&w->nw_path, "origin", "end") == -1 ||
		    wire_query(&w->nw_path, "offset", num) == -1)
			return wire_err(err, errlen, "out of memory");
	}
	return 0;
}

/*
 * A list as a blocking query: "&index=N&wait=60s".  Nomad answers when its
 * index passes N, or after the wait (plus up to 1/16 of jitter) with the
 * same index.  Only lists may block, and only with a timeout that leaves
 * Nomad the time to answer.
 */
static int
wire_block(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	char	 num[32];

	if ((a->na_flags & NOMAD_F_BLOCK) == 0)
		return 0;
	if (a->na_timeout_ms < (NOMAD_BLOCK_WAIT_S + NOMAD_BLOCK_WAIT_S / 16 +
	    1) * 1000)
		return wire_err(err, errlen, "%s: a blocking query needs a "
		    "timeout longer than its wait", nomad_op_name(a->na_op));
	snprintf(num, sizeof(num), "%" PRIu64, a->na_index);
	if (wire_query(&w->nw_path, "index", num) == -1)
		return wire_err(err, errlen, "out of memory");
	snprintf(num, sizeof(num), "%ds", NOMAD_BLOCK_WAIT_S);
	if (wire_query(&w->nw_path, "wait", num) == -1)
		return wire_err(err, errlen, "out of memory");
	w->nw_block = 1;
	return 0;
}

/* A dry run of the job in data1: its plan, with the diff. */
static int
wire_plan(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	if (wire_json_check(a->na_data1, a->na_data1len, JSON_OBJECT,
	    "plan: job", err, errlen) == -1)
		return -1;
	w->nw_method = "POST";
	w->nw_read = 1;		/* a dry run */
	if ((w->nw_path = wire_path("job/", a->na_id, "/plan",
	    a->na_ns)) == NULL ||
	    wire_splice(w, "{\"Job\":", a->na_data1, a->na_data1len,
	    ",\"Diff\":true,\"PolicyOverride\":false}") == -1)
		return wire_err(err, errlen, "out of memory");
	return 0;
}

/* Register the job in data1, at the index it was read at if asked. */
static int
wire_register(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	char	 pre[64];

	if (wire_json_check(a->na_data1, a->na_data1len, JSON_OBJECT,
	    "register: job", err, errlen) == -1)
		return -1;
	if (a->na_index > INT64_MAX)
		return wire_err(err, errlen, "register: index out of "
		    "range");
	w->nw_method = "POST";
	if (a->na_flags & NOMAD_F_ENFORCE_INDEX)
		snprintf(pre, sizeof(pre), ",\"EnforceIndex\":true,"
		    "\"JobModifyIndex\":%" PRIu64, a->na_index);
	else
		pre[0] = '\0';
	strlcat(pre, (a->na_flags & NOMAD_F_PRESERVE_COUNTS) ?
	    ",\"PreserveCounts\":true}" : "}", sizeof(pre));
	if ((w->nw_path = wire_path("job/", a->na_id, "",
	    a->na_ns)) == NULL ||
	    wire_splice(w, "{\"Job\":", a->na_data1, a->na_data1len,
	    pre) == -1)
		return wire_err(err, errlen, "out of memory");
	return 0;
}

/* A namespace's jobs (by prefix) or deployments, maybe blocking. */
static int
wire_list(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	w->nw_method = "GET";
	w->nw_read = 1;
	if (a->na_op == NOMAD_OP_JOBS_LIST) {
		if ((w->nw_path = wire_path("jobs", NULL, "", a->na_ns)) ==
		    NULL || (a->na_prefix != NULL && a->na_prefix[0] != '\0' &&
		    wire_query(&w->nw_path, "prefix", a->na_prefix) == -1))
			return wire_err(err, errlen, "out of memory");
	} else if ((w->nw_path = wire_path("deployments", NULL, "",
	    a->na_ns)) == NULL)
		return wire_err(err, errlen, "out of memory");
	return wire_block(a, w, err, errlen);
}

/*
 * Build the request for one operation.  Returns 0, or -1 with err set
 * when the request cannot be sent as asked (a bug of the caller, or JSON
 * that does not parse); w is then freed.
 */
int
nomad_wire_build(const struct nomad_ask *a, struct nomad_wire *w, char *err,
    size_t errlen)
{
	const char	*sub = NULL;
	int		 rc = 0;

	memset(w, 0, sizeof(*w));
	if (a->na_ns == NULL || a->na_ns[0] == '\0')
		return wire_err(err, errlen, "%s: no namespace",
		    nomad_op_name(a->na_op));
	switch (a->na_op) {
	case NOMAD_OP_PARSE:
	case NOMAD_OP_JOBS_LIST:
	case NOMAD_OP_DEPLOYMENTS_LIST:
	case NOMAD_OP_STATUS_LEADER:
	case NOMAD_OP_AGENT_SELF:
		break;
	default:
		if (a->na_id == NULL || a->na_id[0] == '\0')
			return wire_err(err, errlen, "%s: no id",
			    nomad_op_name(a->na_op));
	}

	switch (a->na_op) {
	case NOMAD_OP_PARSE:
		rc = wire_parse(a, w, err, errlen);
		break;
	case NOMAD_OP_PLAN:
		rc = wire_plan(a, w, err, errlen);
		break;
	case NOMAD_OP_REGISTER:
		rc = wire_register(a, w, err, errlen);
		break;
	case NOMAD_OP_JOB_READ:
		sub = "";
		break;
	case NOMAD_OP_JOB_ALLOCATIONS:
		sub = "/allocations";
		break;
	case NOMAD_OP_JOB_DEPLOYMENT:
		sub = "/deployment";
		break;
	case NOMAD_OP_DEPLOYMENT_READ:
		w->nw_method = "GET";
		w->nw_read = 1;
		if ((w->nw_path = wire_path("deployment/", a->na_id, "",
		    a->na_ns)) == NULL)
			rc = wire_err(err, errlen, "out of memory");
		break;
	case NOMAD_OP_DEPLOYMENT_PROMOTE:
		rc = wire_promote(a, w, err, errlen);
		break;
	case NOMAD_OP_DISPATCH:
		rc = wire_dispatch(a, w, err, errlen);
		break;
	case NOMAD_OP_ALLOC_LOGS:
		rc = wire_logs(a, w, err, errlen);
		break;
	case NOMAD_OP_JOB_STOP:
		w->nw_method = "DELETE";
		if ((w->nw_path = wire_path("job/", a->na_id, "",
		    a->na_ns)) == NULL ||
		    ((a->na_flags & NOMAD_F_PURGE) &&
		    wire_query(&w->nw_path, "purge", "true") == -1))
			rc = wire_err(err, errlen, "out of memory");
		break;
	case NOMAD_OP_JOBS_LIST:
	case NOMAD_OP_DEPLOYMENTS_LIST:
		rc = wire_list(a, w, err, errlen);
		break;
	case NOMAD_OP_STATUS_LEADER:
	case NOMAD_OP_AGENT_SELF:
		w->nw_method = "GET";
		w->nw_read = 1;
		if ((w->nw_path = wire_path(a->na_op == NOMAD_OP_STATUS_LEADER ?
		    "status/leader" : "agent/self", NULL, "", a->na_ns)) ==
		    NULL)
			rc = wire_err(err, errlen, "out of memory");
		break;
	default:
		return wire_err(err, errlen, "unknown operation %u",
		    a->na_op);
	}
	if (sub != NULL) {
		w->nw_method = "GET";
		w->nw_read = 1;
		if ((w->nw_path = wire_path("job/", a->na_id, sub,
		    a->na_ns)) == NULL)
			rc = wire_err(err, errlen, "out of memory");
	}
	if (rc == -1)
		nomad_wire_free(w);
	return rc;
}

void
nomad_wire_free(struct nomad_wire *w)
{
	free(w->nw_path);
	free(w->nw_body);
	w->nw_path = NULL;
	w->nw_body = NULL;
	w->nw_bodylen = 0;
}
