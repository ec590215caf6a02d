/*
 * The message table and the payload layouts: every type has a name and
 * the senders and receivers of its row; each layout round-trips, and its
 * decoder refuses what the layout rules out, saying what.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "imsg.h"
#include "msg.h"
#include "msgtab.h"
#include "nops.h"
#include "wire.h"
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

int
main(void)
{
	test_table();
	test_web_request();
	test_web_answer();
	TEST_EXIT();
}
