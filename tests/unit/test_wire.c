/*
 * The message table and the payload layouts: every type has a name and
 * the senders and receivers of its row; each layout round-trips, and its
 * decoder refuses what the layout rules out, saying what; the generic
 * coder of the layouts' tables (wire.c), kind by kind and layout by
 * layout.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "wire.h"
#include "wire_auth.h"
#include "wire_git.h"
#include "wire_hosts.h"
#include "wire_nomad.h"
#include "wire_notify.h"
#include "wire_proc.h"
#include "test.h"

static void
test_table(void)
{
	uint32_t	 t;
	int		 named = 1;

	TEST_BEGIN("message table: every type is named after itself");
	for (t = IMSG_NONE + 1; t < IMSG_MAX; t++)
		if (strncmp(imsg_to_str(t), "IMSG_", 5) != 0 ||
		    strchr(imsg_to_str(t), '%') != NULL)
			named = 0;
	CHECK(named);
	CHECK_STR(imsg_to_str(IMSG_WEB_REQUEST), "IMSG_WEB_REQUEST");
	{
		char	 want[32];

		snprintf(want, sizeof(want), "IMSG_%u", IMSG_MAX + 7);
		CHECK_STR(imsg_to_str(IMSG_MAX + 7), want);
	}
	TEST_END();

	TEST_BEGIN("message table: the permit check follows the rows");
	CHECK(imsg_permitted(IMSG_WEB_REQUEST, PROC_WEBWORKER, PROC_MASTER));
	CHECK(!imsg_permitted(IMSG_WEB_REQUEST, PROC_GITWORKER, PROC_MASTER));
	CHECK(!imsg_permitted(IMSG_WEB_REQUEST, PROC_MASTER, PROC_WEBWORKER));
	CHECK(imsg_permitted(IMSG_WORKER_READY, PROC_NOMADWORKER,
	    PROC_MASTER));
	CHECK(imsg_permitted(IMSG_INIT, PROC_MASTER, PROC_GITWORKER));
	CHECK(!imsg_permitted(IMSG_INIT, PROC_WEBWORKER, PROC_MASTER));
	CHECK(!imsg_permitted(IMSG_GIT_POLL, PROC_MASTER, PROC_WEBWORKER));
	CHECK(!imsg_permitted(IMSG_NONE, PROC_WEBWORKER, PROC_MASTER));
	CHECK(!imsg_permitted(IMSG_MAX, PROC_WEBWORKER, PROC_MASTER));
	TEST_END();

	TEST_BEGIN("message table: each row's decoder runs from the table");
	{
		static const uint8_t	 poll[] = { 7, 0, 0, 0, 0, 0, 0, 0, 0 };
		static const uint8_t	 bad[] = { 1, 0, 0, 0, 1, 0, 0, 0,
		    'x', 0 };
		static union imsg_payload u;
		const char		*what;
		uint32_t		 t;
		int			 undecoded = 0;

		CHECK(imsg_decode(IMSG_GIT_POLL, poll, sizeof(poll), &u,
		    &what) == 0);
		CHECK(what == NULL);
		/* The struct the handler gets is the row's, filled in. */
		CHECK(u.git_poll.seq == 7);
		CHECK_STR(u.git_poll.commit, "");
		CHECK(imsg_decode(IMSG_GIT_POLL, bad, sizeof(bad), &u,
		    &what) == -1);
		CHECK_STR(what, "commit id");
		CHECK(imsg_decode(IMSG_WORKER_READY, NULL, 0, &u, &what) == 0);
		CHECK(imsg_decode(IMSG_WEB_AUTH_COMMIT, poll, 1, &u,
		    &what) == -1);
		CHECK_STR(what, "trailing bytes");
		CHECK(imsg_decode(IMSG_MAX, NULL, 0, &u, &what) == -1);
		CHECK_STR(what, "no such message type");
		CHECK(imsg_decode(IMSG_NONE, NULL, 0, &u, &what) == -1);
		CHECK_STR(what, "no such message type");
		/* Every row has a decoder. */
		for (t = IMSG_NONE + 1; t < IMSG_MAX; t++)
			if (imsg_decode(t, NULL, 0, &u, &what) == -1 &&
			    strcmp(what, "no such message type") == 0)
				undecoded++;
		CHECK(undecoded == 0);
		CHECK(imsg_decode(IMSG_INIT, NULL, 0, &u, &what) == -1);
		CHECK(imsg_decode(IMSG_SSH_RUN, NULL, 0, &u, &what) == -1);
	}
	TEST_END();
}

static void
test_web_request(void)
{
	struct wire_web_request	 q, got;
	struct msgw		 m;
	struct msgr		 r;

	memset(&q, 0, sizeof(q));
	q.peer = WEB_PEER_TCP;
	q.remote = "127.0.0.1:5000";
	q.tls = 1;
	q.method = "POST";
	q.target = "/api/v1/repos/app/fetch?x=1";
	q.ctype = "application/json";
	q.nheaders = 1;
	q.hname[0] = "X-CSRF-Token";
	q.hvalue[0] = "abc";
	q.body = "{}";
	q.bodylen = 2;

	TEST_BEGIN("web request: round trip");
	msg_init(&m);
	wire_put_web_request(&m, &q);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_web_request(&r, &got) == 0);
	CHECK(got.peer == WEB_PEER_TCP && got.tls == 1);
	CHECK_STR(got.remote, "127.0.0.1:5000");
	CHECK_STR(got.target, "/api/v1/repos/app/fetch?x=1");
	CHECK(got.nheaders == 1);
	CHECK_STR(got.hname[0], "X-CSRF-Token");
	CHECK(got.bodylen == 2 && memcmp(got.body, "{}", 2) == 0);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web request: a tls flag of 2 is refused");
	q.tls = 2;
	msg_init(&m);
	wire_put_web_request(&m, &q);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_web_request(&r, &got) == -1);
	CHECK_STR(r.what, "tls flag");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web request: an unknown peer kind is refused");
	q.tls = 0;
	q.peer = 9;
	msg_init(&m);
	wire_put_web_request(&m, &q);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_web_request(&r, &got) == -1);
	CHECK_STR(r.what, "peer kind");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web request: more headers than WEB_HEADERS_MAX refused");
	q.peer = WEB_PEER_TCP;
	q.nheaders = WEB_HEADERS_MAX + 1;
	msg_init(&m);
	msg_add_u32(&m, q.peer);
	msg_add_u32(&m, 0);
	msg_add_u32(&m, 0);
	msg_add_str(&m, "x");
	msg_add_u32(&m, 0);
	msg_add_str(&m, "GET");
	msg_add_str(&m, "/");
	msg_add_str(&m, "");
	msg_add_u32(&m, WEB_HEADERS_MAX + 1);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_web_request(&r, &got) == -1);
	CHECK_STR(r.what, "too many headers");
	msg_free(&m);
	TEST_END();
}

static void
test_web_answer(void)
{
	struct wire_web_doc	 d, got;
	struct msgw		 m;
	struct msgr		 r;

	memset(&d, 0, sizeof(d));
	d.cls = 3;
	d.target = "/api/v1/status";
	d.answer.status = 200;
	d.answer.ctype = "application/json";
	d.answer.body = "{}";
	d.answer.bodylen = 2;

	TEST_BEGIN("web doc: round trip");
	msg_init(&m);
	wire_put_web_doc(&m, &d);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_web_doc(&r, &got) == 0);
	CHECK(got.cls == 3 && got.answer.status == 200);
	CHECK_STR(got.target, "/api/v1/status");
	CHECK_STR(got.answer.ctype, "application/json");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web answer: a status out of 100-599 is refused");
	d.answer.status = 99;
	msg_init(&m);
	wire_put_web_answer(&m, &d.answer);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_web_answer(&r, &got.answer) == -1);
	CHECK_STR(r.what, "status");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web doc: a target not starting with / is refused");
	d.answer.status = 200;
	d.target = "api";
	msg_init(&m);
	wire_put_web_doc(&m, &d);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_web_doc(&r, &got) == -1);
	CHECK_STR(r.what, "target");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web want: a class past WEB_CLASSES_MAX is refused");
	msg_init(&m);
	msg_add_u32(&m, WEB_CLASSES_MAX);
	msg_add_str(&m, "/api/v1/status");
	msg_reader_buf(&r, m.buf, m.len);
	{
		struct wire_web_want	 w;

		CHECK(wire_get_web_want(&r, &w) == -1);
	}
	CHECK_STR(r.what, "class out of range");
	msg_free(&m);
	TEST_END();
}

/*
 * The generic coder (wire.c), on a layout made for the test that holds
 * one field of every kind, and on a valid sample of every layout of
 * WIRE_LAYOUTS: each round-trips through its table; a payload cut short
 * anywhere, or with any string, blob or list one past its maximum, is
 * refused, saying which.
 */
struct wire_t_rec {
	uint32_t	 a;
	const char	*s;
};
struct wire_t_all {
	uint8_t		 u8;
	uint32_t	 u32;
	int32_t		 i32;
	uint64_t	 u64;
	int64_t		 i64;
	const char	*str;
	const void	*data;
	size_t		 datalen;
	uint32_t	 nstrs;
	const char	*k[3];
	const char	*v[3];
	uint32_t	 nrecs;
	struct wire_t_rec recs[2];
	struct wire_web_want part;
};
WIRE_DECLARE(t_all);

static const struct wire_field t_strs[] = {
	WF_STR(t_all, k[0], 4),
	WF_STR(t_all, v[0], 5),
};
static const struct wire_field t_recs[] = {
	WF_U32(t_rec, a),
	WF_STR(t_rec, s, 6),
};
static const struct wire_field t_all_fields[] = {
	WF_U8(t_all, u8),
	WF_U32(t_all, u32),
	WF_I32(t_all, i32),
	WF_U64(t_all, u64),
	WF_I64(t_all, i64),
	WF_STR(t_all, str, 8),
	WF_DATA(t_all, data, datalen, 9),
	WF_STRS(t_all, nstrs, 3, "too many strs", t_strs),
	WF_RECS(t_all, nrecs, 2, "too many recs", recs, t_recs),
	WF_PART(t_all, part, &wire_layout_web_want),
};
WIRE_DEFINE(t_all, t_all_fields, NULL)

/* What a payload cut in a field of each kind says. */
static const char *const t_cut_whats[] = {
	"u8: short payload", "u32: short payload", "i32: short payload",
	"u64: short payload", "i64: short payload", "str: short length",
	"str: past the end", "data: short length", "data: past the end",
};

static void
test_table_kinds(void)
{
	struct wire_t_all	 t, got;
	struct msgw		 m, m2;
	struct msgr		 r;
	uint8_t			*buf;
	size_t			 len, cut, i;
	int			 seen[sizeof(t_cut_whats) /
				    sizeof(t_cut_whats[0])];
	int			 all;

	memset(&t, 0, sizeof(t));
	t.u8 = 0xa5;
	t.u32 = 0xdeadbeef;
	t.i32 = -7;
	t.u64 = 0x0102030405060708ULL;
	t.i64 = -1234567890123LL;
	t.str = "12345678";			/* at its maximum */
	t.data = "123456789";
	t.datalen = 9;
	t.nstrs = 3;
	t.k[0] = "a"; t.v[0] = "b";
	t.k[1] = "";  t.v[1] = "12345";
	t.k[2] = "1234"; t.v[2] = "";
	t.nrecs = 2;
	t.recs[0].a = 1; t.recs[0].s = "x";
	t.recs[1].a = 2; t.recs[1].s = "123456";
	t.part.cls = 3;
	t.part.target = "/p";

	TEST_BEGIN("wire table: every kind of field round-trips");
	msg_init(&m);
	wire_put_t_all(&m, &t);
	CHECK(m.err == 0);
	/* 1 + 4 + 4 + 8 + 8 + (4 + 8 + 1) + (4 + 9) + ... */
	CHECK(m.len > 1 + 4 + 4 + 8 + 8 + 13 + 13);
	msg_reader_buf(&r, m.buf, m.len);
	memset(&got, 0, sizeof(got));
	CHECK(wire_get_t_all(&r, &got) == 0);
	CHECK(got.u8 == 0xa5 && got.u32 == 0xdeadbeef && got.i32 == -7);
	CHECK(got.u64 == t.u64 && got.i64 == t.i64);
	CHECK_STR(got.str, "12345678");
	CHECK(got.datalen == 9 && memcmp(got.data, "123456789", 9) == 0);
	CHECK(got.nstrs == 3);
	CHECK_STR(got.k[0], "a");
	CHECK_STR(got.v[1], "12345");
	CHECK_STR(got.k[2], "1234");
	CHECK_STR(got.v[2], "");
	CHECK(got.nrecs == 2 && got.recs[0].a == 1 && got.recs[1].a == 2);
	CHECK_STR(got.recs[1].s, "123456");
	CHECK(got.part.cls == 3);
	CHECK_STR(got.part.target, "/p");
	msg_init(&m2);
	wire_put_t_all(&m2, &got);
	CHECK(m2.len == m.len && memcmp(m2.buf, m.buf, m.len) == 0);
	msg_free(&m2);
	TEST_END();

	TEST_BEGIN("wire table: a payload cut short in any field is refused");
	buf = m.buf;
	len = m.len;
	memset(seen, 0, sizeof(seen));
	all = 1;
	for (cut = 0; cut < len; cut++) {
		msg_reader_buf(&r, buf, cut);
		if (wire_get_t_all(&r, &got) != -1 || r.what == NULL) {
			all = 0;
			continue;
		}
		for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
			if (strcmp(r.what, t_cut_whats[i]) == 0)
				seen[i] = 1;
	}
	CHECK(all);
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		if (!seen[i])
			printf("# never cut: %s\n", t_cut_whats[i]);
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		CHECK(seen[i]);
	/* One byte more is trailing. */
	msg_add_u8(&m, 0);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_t_all(&r, &got) == -1);
	CHECK_STR(r.what, "trailing bytes");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("wire table: a field one past its maximum is refused");
	{
		struct wire_t_all	 bad;
		static const struct {
			const char	*what;
			int		 field;
		} cases[] = {
			{ "str: longer than allowed", 0 },	/* str */
			{ "data: longer than allowed", 1 },	/* data */
			{ "str: longer than allowed", 2 },	/* k[1] */
			{ "str: longer than allowed", 3 },	/* v[0] */
			{ "str: longer than allowed", 4 },	/* recs[0].s */
			{ "str: longer than allowed", 5 },	/* part */
		};
		char	 target[WEB_PATH_MAX + 2];

		memset(target, 'a', sizeof(target) - 1);
		target[0] = '/';
		target[sizeof(target) - 1] = '\0';
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			bad = t;
			switch (cases[i].field) {
			case 0:
				bad.str = "123456789";
				break;
			case 1:
				bad.data = "1234567890";
				bad.datalen = 10;
				break;
			case 2:
				bad.k[1] = "12345";
				break;
			case 3:
				bad.v[0] = "123456";
				break;
			case 4:
				bad.recs[0].s = "1234567";
				break;
			case 5:
				bad.part.target = target;
				break;
			}
			msg_init(&m);
			wire_put_t_all(&m, &bad);
			msg_reader_buf(&r, m.buf, m.len);
			CHECK(wire_get_t_all(&r, &got) == -1);
			CHECK_STR(r.what, cases[i].what);
			msg_free(&m);
		}
	}
	TEST_END();

	TEST_BEGIN("wire table: a list one past its maximum is refused");
	{
		struct wire_t_all	 bad;
		struct wire_layout	 head;

		/* The encoder will not read past the arrays. */
		bad = t;
		bad.nstrs = 4;
		msg_init(&m);
		wire_put_t_all(&m, &bad);
		CHECK(m.err == ERANGE);
		msg_free(&m);
		bad = t;
		bad.nrecs = 3;
		msg_init(&m);
		wire_put_t_all(&m, &bad);
		CHECK(m.err == ERANGE);
		msg_free(&m);

		/* The decoder refuses a count past it, written by hand. */
		head = wire_layout_t_all;
		head.wl_nfields = 7;			/* up to nstrs */
		msg_init(&m);
		wire_put(&m, &head, &t);
		msg_add_u32(&m, 4);
		msg_reader_buf(&r, m.buf, m.len);
		CHECK(wire_get_t_all(&r, &got) == -1);
		CHECK_STR(r.what, "too many strs");
		CHECK(got.nstrs == 0);
		msg_free(&m);
		head.wl_nfields = 8;			/* up to nrecs */
		msg_init(&m);
		wire_put(&m, &head, &t);
		msg_add_u32(&m, 3);
		msg_reader_buf(&r, m.buf, m.len);
		CHECK(wire_get_t_all(&r, &got) == -1);
		CHECK_STR(r.what, "too many recs");
		msg_free(&m);
	}
	TEST_END();

	TEST_BEGIN("wire table: a part's own check runs");
	{
		struct wire_t_all	 bad = t;

		bad.part.cls = WEB_CLASSES_MAX;
		msg_init(&m);
		wire_put_t_all(&m, &bad);
		msg_reader_buf(&r, m.buf, m.len);
		CHECK(wire_get_t_all(&r, &got) == -1);
		CHECK_STR(r.what, "class out of range");
		msg_free(&m);
	}
	TEST_END();
}

#define COMMIT	"0123456789abcdef0123456789abcdef01234567"
#define SHA256	"0123456789abcdef0123456789abcdef" \
		"0123456789abcdef0123456789abcdef"

/* A valid payload of every layout, as its sender would fill it. */
static const struct wire_web_request s_web_request = { WEB_PEER_TCP, 1, 2,
    "127.0.0.1:9", 1, "GET", "/x?y", "text/plain", 2, { "A", "B" },
    { "1", "" }, "body", 4 };
static const struct wire_web_answer s_web_answer = { 200, "text/plain", 1,
    { "X" }, { "y" }, "ok", 2 };
static const struct wire_web_doc s_web_doc = { 1, "/d",
    { 404, "a/b", 1, { "H" }, { "v" }, "{}", 2 } };
static const struct wire_web_want s_web_want = { 2, "/w" };
static const struct wire_git_repo s_git_repo = { "app", "https://h/a.git",
    "main", "jobs", 1, 2, 3, "KEY", 3, "HOSTS", 5 };
static const struct wire_git_poll s_git_poll = { 3, COMMIT };
static const struct wire_git_poll s_git_unchanged = { 4, COMMIT };
static const struct wire_git_error s_git_error = { 5, "failed" };
static const struct wire_git_begin s_git_begin = { 6, COMMIT, "A <a@b>",
    1700000000, "subject", 7, 8 };
static const struct wire_git_file s_git_file = { 9, GITW_FILE_JOB, "a.hcl",
    10, SHA256 };
static const struct wire_git_data s_git_data = { 11, "chunk", 5 };
static const struct wire_git_note s_git_note = { 12, "b.hcl", "too big" };
static const struct wire_git_end s_git_end = { 13, GITW_SNAP_FETCHED };
static const struct wire_git_same s_git_same = { 14, GITW_FILE_SCHEMA,
    "c.json" };
static const struct wire_nomad_config s_nomad_config = { "https://n:4646",
    "CA", 2, 2, { "default", "ops" }, "TOKEN", 5 };
static const struct wire_nomad_request s_nomad_request = { NOMAD_OP_PLAN,
    0, 1000, "default", "job", "task", "pre", "idem", 15, 16, "{}", 2,
    "[]", 2 };
static const struct wire_nomad_response s_nomad_response = { 200, 17, 1,
    "", 2, "{}", 2 };
static const struct wire_nomad_body s_nomad_body = { "x", 1 };
static const struct wire_notify s_notify = { NOTIFY_KIND_TEXT,
    "https://h/n", "a title", "tag", "https://c", "body", 4, "tok", 3 };
static const struct wire_notify_result s_notify_result = { 200, "" };
static const struct wire_auth_begin s_auth_begin = { 60, SHA256, 1, 0 };
static const struct wire_auth_class s_auth_class = { 1, "{}", 2 };
static const struct wire_auth_principal s_auth_principal = {
    WEB_PRIN_SESSION, SHA256, "user", 1, 18, 19, "[]", 2 };
static const struct wire_auth_forget s_auth_forget = { SHA256 };
static const struct wire_empty s_empty = { 0 };
static const struct wire_init s_init = { 20, 21, 2, "nops", "/var/db",
    "/var/empty", "" };
static const struct wire_verbose s_verbose = { 3 };
static const struct wire_web_listen s_web_listen = { WEB_LISTEN_TCP, "l",
    1, "CERT", 4, "KEY", 3, WEB_BODY_MIN, 0, 2, { "a.example", "b" }, 1 };
static const struct wire_web_seen s_web_seen = { 2,
    { { WEB_PRIN_TOKEN, SHA256, 22 }, { WEB_PRIN_SESSION, SHA256, 0 } }, 1,
    { { 200, 23 } } };
static const struct wire_ssh_key s_ssh_key = { "KEY", 3 };
static const struct wire_ssh_run s_ssh_run = { "h.example", 22, "root",
    "KNOWN", 5, "true", 30, 0, "in", 2 };
static const struct wire_ssh_result s_ssh_result = { 0, SSH_STAGE_DONE, "",
    "out", 3 };
static const struct wire_http_probe s_http_probe = { "http://h/", 1000 };
static const struct wire_http_probe_result s_http_probe_result = { 200, "",
    "ok", 2 };

struct sample {
	const struct wire_layout	*layout;
	const void			*value;
};
#define SAMPLE(l)	{ &wire_layout_##l, &s_##l },
static const struct sample samples[] = {
	WIRE_LAYOUTS(SAMPLE)
};

/*
 * Each sample's payload as the hand-written coder of each layout encoded
 * it before the tables (session 8): length and FNV-1a 64 of the bytes,
 * on a little-endian host (integers go in host order).  A table that
 * moves, drops or resizes a field changes these.
 */
static const struct golden {
	const char	*name;
	size_t		 len;
	uint64_t	 fnv;
} goldens[] = {
	{ "web_request", 99, 0xa707b9b433215da3ULL },
	{ "web_answer", 41, 0xc54f135e26ba9951ULL },
	{ "web_doc", 45, 0x1969990add65d9a8ULL },
	{ "web_want", 11, 0xb59902b71dedd1b1ULL },
	{ "git_repo", 78, 0x0c6adfa19f7cd326ULL },
	{ "git_poll", 49, 0x46b602d057e8f692ULL },
	{ "git_unchanged", 49, 0x6cc442bb678aa0b3ULL },
	{ "git_error", 15, 0x898d5ce6c6cf92c5ULL },
	{ "git_begin", 93, 0x48a08aafc764290fULL },
	{ "git_file", 92, 0x3e2e2c05e7fb3a6eULL },
	{ "git_data", 13, 0x096eec822c093d88ULL },
	{ "git_note", 26, 0x6c7f18e15df801deULL },
	{ "git_end", 8, 0xa5b2f9559f1dd4b9ULL },
	{ "nomad_config", 58, 0x430528a1ba8e656fULL },
	{ "nomad_request", 86, 0x8588d38638444f33ULL },
	{ "nomad_response", 35, 0xb28081062adedcebULL },
	{ "nomad_body", 5, 0xd80d24aea7dc0494ULL },
	{ "notify", 69, 0xeb2b2309fc45627dULL },
	{ "notify_result", 9, 0x111733563da06897ULL },
	{ "auth_begin", 81, 0x299639f5689ba41aULL },
	{ "auth_class", 10, 0x0a3c4c2e7970b3eeULL },
	{ "auth_principal", 108, 0xe2ff8cb23df327efULL },
	{ "auth_forget", 69, 0x76c13b436caa44efULL },
	{ "empty", 0, 0xcbf29ce484222325ULL },
	{ "init", 53, 0xabe95ca7acaaebbaULL },
	{ "verbose", 4, 0xed202287f403d086ULL },
	{ "web_listen", 65, 0x49c9c1cf01caec6dULL },
	{ "web_seen", 178, 0x108f041dec36e676ULL },
	{ "ssh_key", 7, 0xa2f46da063ec05bdULL },
	{ "ssh_run", 59, 0x12cad20229a09a41ULL },
	{ "ssh_result", 20, 0x427d55b5cfbffa35ULL },
	{ "http_probe", 18, 0x298b6d36fadf488aULL },
	{ "http_probe_result", 15, 0xef639ccc2dd8152fULL },
	{ "git_same", 16, 0x4f8589701b9b9a7eULL },
};

static uint64_t
fnv1a(const uint8_t *p, size_t n)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;

	while (n-- > 0) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static const struct golden *
golden_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++)
		if (strcmp(goldens[i].name, name) == 0)
			return &goldens[i];
	return NULL;
}

/* A field of a string or a blob, wherever it is in the struct. */
struct slot {
	const struct wire_field	*field;
	size_t			 off;		/* from the struct */
	size_t			 aux;		/* DATA: its length's */
};

/*
 * The strings and blobs of a layout's fields at base: its own, a part's,
 * and those of a list's first item when the sample has one.
 */
static size_t
slots(const struct wire_field *f, size_t n, const uint8_t *s, size_t base,
    struct slot *out, size_t nout)
{
	size_t		 k = 0, i;
	uint32_t	 count;

	for (i = 0; i < n && k < nout; i++) {
		switch (f[i].wf_kind) {
		case WIRE_STR:
		case WIRE_DATA:
			out[k].field = &f[i];
			out[k].off = base + f[i].wf_off;
			out[k].aux = base + f[i].wf_aux;
			k++;
			break;
		case WIRE_LIST:
			memcpy(&count, s + base + f[i].wf_off, sizeof(count));
			if (count > 0)
				k += slots(f[i].wf_items, f[i].wf_nitems, s,
				    base + f[i].wf_aux, out + k, nout - k);
			break;
		case WIRE_PART:
			k += slots(f[i].wf_part->wl_fields,
			    f[i].wf_part->wl_nfields, s, base + f[i].wf_off,
			    out + k, nout - k);
			break;
		default:
			break;
		}
	}
	return k;
}

static void
test_layouts(void)
{
	static union imsg_payload	 got, bad;
	static char			*big;
	static const uint16_t		 one = 1;
	const struct sample		*s;
	const struct golden		*g;
	const struct wire_layout	*l;
	struct slot			 sl[32];
	struct msgw			 m, m2;
	struct msgr			 r;
	size_t				 i, j, n, cut, bigmax = 0;
	int				 ok, little;

	little = *(const uint8_t *)&one == 1;

	/* Room for the longest string or blob any layout allows, plus one. */
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		s = &samples[i];
		n = slots(s->layout->wl_fields, s->layout->wl_nfields,
		    s->value, 0, sl, 32);
		for (j = 0; j < n; j++)
			if (sl[j].field->wf_max > bigmax)
				bigmax = sl[j].field->wf_max;
	}
	if ((big = malloc(bigmax + 2)) == NULL)
		exit(1);
	memset(big, 'a', bigmax + 1);
	big[bigmax + 1] = '\0';

	/* samples[] comes from WIRE_LAYOUTS: a layout without one fails. */
	TEST_BEGIN("wire layouts: each fits its member of imsg_payload");
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		CHECK(samples[i].layout->wl_size <= sizeof(union imsg_payload) &&
		    samples[i].layout->wl_name != NULL);
	TEST_END();

	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		char	 name[96];

		s = &samples[i];
		l = s->layout;

		snprintf(name, sizeof(name), "wire layout %s: round trip, "
		    "the old bytes, cut short, too long", l->wl_name);
		TEST_BEGIN(name);
		msg_init(&m);
		wire_put(&m, l, s->value);
		CHECK(m.err == 0);
		msg_reader_buf(&r, m.buf, m.len);
		memset(&got, 0, sizeof(got));
		ok = wire_get(&r, l, &got) == 0;
		CHECK(ok);
		if (!ok)
			printf("# %s: %s\n", l->wl_name, r.what);
		g = golden_find(l->wl_name);
		CHECK(g != NULL);
		if (g != NULL && little) {
			CHECK(m.len == g->len);
			CHECK(fnv1a(m.buf, m.len) == g->fnv);
		}
		msg_init(&m2);
		wire_put(&m2, l, &got);
		CHECK(m2.len == m.len &&
		    (m.len == 0 || memcmp(m2.buf, m.buf, m.len) == 0));
		msg_free(&m2);

		/* Every prefix is refused, and says why. */
		ok = 1;
		for (cut = 0; cut < m.len; cut++) {
			msg_reader_buf(&r, m.buf, cut);
			if (wire_get(&r, l, &got) != -1 || r.what == NULL)
				ok = 0;
		}
		CHECK(ok);
		msg_free(&m);

		/* Each string and blob one past its maximum is refused. */
		n = slots(l->wl_fields, l->wl_nfields, s->value, 0, sl, 32);
		for (j = 0; j < n; j++) {
			const struct wire_field	*f = sl[j].field;
			uint8_t			*b = (uint8_t *)&bad;
			const void		*p = big + bigmax - f->wf_max;
			size_t			 len = f->wf_max + 1;

			memcpy(&bad, s->value, l->wl_size);
			memcpy(b + sl[j].off, &p, sizeof(p));
			if (f->wf_kind == WIRE_DATA)
				memcpy(b + sl[j].aux, &len, sizeof(len));
			msg_init(&m);
			wire_put(&m, l, &bad);
			CHECK(m.err == 0);
			msg_reader_buf(&r, m.buf, m.len);
			CHECK(wire_get(&r, l, &got) == -1);
			CHECK_STR(r.what, f->wf_kind == WIRE_STR ?
			    "str: longer than allowed" :
			    "data: longer than allowed");
			msg_free(&m);
		}
		TEST_END();
	}
	free(big);
}

int
main(void)
{
	test_table();
	test_web_request();
	test_web_answer();
	test_table_kinds();
	test_layouts();
	TEST_EXIT();
}
