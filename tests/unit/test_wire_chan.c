/*
 * The payload layouts of the git, Nomad, notification, identity, start-up,
 * plan hosts' and web listener channels (shared/wire_git.h, wire_nomad.h,
 * wire_notify.h, wire_auth.h, wire_proc.h, wire_hosts.h, wire.h): each
 * round-trips,
 * and each decoder refuses what its layout rules out, saying what.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "wire_auth.h"
#include "wire.h"
#include "wire_git.h"
#include "wire_hosts.h"
#include "wire_nomad.h"
#include "wire_notify.h"
#include "wire_proc.h"
#include "test.h"

#define COMMIT	"0123456789abcdef0123456789abcdef01234567"
#define SHA256	"0123456789abcdef0123456789abcdef" \
		"0123456789abcdef0123456789abcdef"

/* Encode with put, decode with get into out: get's result. */
#define ROUND(put, get, in, out, r, m) (				\
	msg_init(&(m)), put(&(m), (in)),				\
	msg_reader_buf(&(r), (m).buf, (m).len), get(&(r), (out)))

static void
test_git(void)
{
	struct wire_git_repo	 g, gg;
	struct wire_git_poll	 p, pp;
	struct wire_git_begin	 b, bb;
	struct wire_git_file	 f, ff;
	struct wire_git_end	 e, ee;
	struct wire_git_error	 x, xx;
	struct msgw		 m;
	struct msgr		 r;

	memset(&g, 0, sizeof(g));
	g.name = "app";
	g.url = "https://example.org/app.git";
	g.branch = "main";
	g.path = "jobs";
	g.max_file = 1024;
	g.max_files = 10;
	g.max_total = 4096;
	g.key = "KEY";
	g.keylen = 3;
	TEST_BEGIN("git repo: round trip");
	CHECK(ROUND(wire_put_git_repo, wire_get_git_repo, &g, &gg, r, m) == 0);
	CHECK_STR(gg.name, "app");
	CHECK_STR(gg.path, "jobs");
	CHECK(gg.max_total == 4096 && gg.keylen == 3 && gg.knownlen == 0);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("git repo: a name that is not a file name is refused");
	g.name = "..";
	CHECK(ROUND(wire_put_git_repo, wire_get_git_repo, &g, &gg, r, m) ==
	    -1);
	CHECK_STR(r.what, "repository name");
	msg_free(&m);
	g.name = "a/b";
	CHECK(ROUND(wire_put_git_repo, wire_get_git_repo, &g, &gg, r, m) ==
	    -1);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("git poll: a commit id must be 40 hex digits or empty");
	p.seq = 7;
	p.commit = "";
	CHECK(ROUND(wire_put_git_poll, wire_get_git_poll, &p, &pp, r, m) == 0);
	CHECK(pp.seq == 7 && *pp.commit == '\0');
	msg_free(&m);
	p.commit = COMMIT;
	CHECK(ROUND(wire_put_git_poll, wire_get_git_poll, &p, &pp, r, m) == 0);
	msg_free(&m);
	p.commit = "0123456789ABCDEF0123456789abcdef01234567";
	CHECK(ROUND(wire_put_git_poll, wire_get_git_poll, &p, &pp, r, m) ==
	    -1);
	CHECK_STR(r.what, "commit id");
	msg_free(&m);
	p.commit = "";
	CHECK(ROUND(wire_put_git_unchanged, wire_get_git_unchanged, &p, &pp,
	    r, m) == -1);
	CHECK_STR(r.what, "no commit id");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("git error: an empty error is refused");
	x.seq = 1;
	x.error = "";
	CHECK(ROUND(wire_put_git_error, wire_get_git_error, &x, &xx, r, m) ==
	    -1);
	CHECK_STR(r.what, "empty error");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("git snapshot begin: round trip; counts past the limits");
	b.seq = 3;
	b.commit = COMMIT;
	b.author = "A <a@example.org>";
	b.time = 1700000000;
	b.subject = "Deploy";
	b.nfiles = 2;
	b.total = 10;
	CHECK(ROUND(wire_put_git_begin, wire_get_git_begin, &b, &bb, r, m) ==
	    0);
	CHECK(bb.seq == 3 && bb.time == 1700000000 && bb.nfiles == 2);
	CHECK_STR(bb.subject, "Deploy");
	msg_free(&m);
	b.nfiles = GITW_LIMIT_FILES + 1;
	CHECK(ROUND(wire_put_git_begin, wire_get_git_begin, &b, &bb, r, m) ==
	    -1);
	CHECK_STR(r.what, "counts past the limits");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("git snapshot file: kind and hash are checked");
	f.seq = 3;
	f.kind = GITW_FILE_JOB;
	f.path = "jobs/a.nomad.hcl";
	f.size = 5;
	f.sha256 = SHA256;
	CHECK(ROUND(wire_put_git_file, wire_get_git_file, &f, &ff, r, m) == 0);
	CHECK(ff.kind == GITW_FILE_JOB && ff.size == 5);
	msg_free(&m);
	f.kind = 0;
	CHECK(ROUND(wire_put_git_file, wire_get_git_file, &f, &ff, r, m) ==
	    -1);
	CHECK_STR(r.what, "file kind");
	msg_free(&m);
	f.kind = GITW_FILE_VARS;
	f.sha256 = "zz";
	CHECK(ROUND(wire_put_git_file, wire_get_git_file, &f, &ff, r, m) ==
	    -1);
	CHECK_STR(r.what, "sha256");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("git snapshot end: unknown flags are refused");
	e.seq = 3;
	e.flags = GITW_SNAP_FETCHED;
	CHECK(ROUND(wire_put_git_end, wire_get_git_end, &e, &ee, r, m) == 0);
	msg_free(&m);
	e.flags = 0x80;
	CHECK(ROUND(wire_put_git_end, wire_get_git_end, &e, &ee, r, m) == -1);
	CHECK_STR(r.what, "unknown flags");
	msg_free(&m);
	TEST_END();
}

static void
test_nomad(void)
{
	struct wire_nomad_config	 c, cc;
	struct wire_nomad_request	 q, qq;
	struct wire_nomad_response	 a, aa;
	struct wire_nomad_body		 b, bb;
	struct msgw			 m;
	struct msgr			 r;

	memset(&c, 0, sizeof(c));
	c.address = "http://127.0.0.1:4646";
	c.nnames = 2;
	c.names[0] = "default";
	c.names[1] = "apps";
	c.token = "secret";
	c.tokenlen = 6;
	TEST_BEGIN("nomad config: round trip");
	CHECK(ROUND(wire_put_nomad_config, wire_get_nomad_config, &c, &cc, r,
	    m) == 0);
	CHECK(cc.nnames == 2 && cc.tokenlen == 6 && cc.calen == 0);
	CHECK_STR(cc.names[1], "apps");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("nomad config: more namespaces than NOMAD_NAMESPACES_MAX");
	msg_init(&m);
	msg_add_str(&m, "");
	msg_add_data(&m, NULL, 0);
	msg_add_u32(&m, NOMAD_NAMESPACES_MAX + 1);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_nomad_config(&r, &cc) == -1);
	CHECK_STR(r.what, "too many namespaces");
	CHECK(cc.nnames == 0);
	msg_free(&m);
	TEST_END();

	memset(&q, 0, sizeof(q));
	q.op = NOMAD_OP_JOB_READ;
	q.timeout_ms = 1000;
	q.ns = "default";
	q.id = "web";
	TEST_BEGIN("nomad request: round trip; op, flags and timeout checked");
	CHECK(ROUND(wire_put_nomad_request, wire_get_nomad_request, &q, &qq,
	    r, m) == 0);
	CHECK(qq.op == NOMAD_OP_JOB_READ && qq.timeout_ms == 1000);
	CHECK_STR(qq.id, "web");
	msg_free(&m);
	q.op = NOMAD_OP_MAX;
	CHECK(ROUND(wire_put_nomad_request, wire_get_nomad_request, &q, &qq,
	    r, m) == -1);
	CHECK_STR(r.what, "unknown operation");
	msg_free(&m);
	q.op = NOMAD_OP_JOB_READ;
	q.flags = 0x100;
	CHECK(ROUND(wire_put_nomad_request, wire_get_nomad_request, &q, &qq,
	    r, m) == -1);
	CHECK_STR(r.what, "unknown flags");
	msg_free(&m);
	q.flags = 0;
	q.timeout_ms = 0;
	CHECK(ROUND(wire_put_nomad_request, wire_get_nomad_request, &q, &qq,
	    r, m) == -1);
	CHECK_STR(r.what, "timeout out of range");
	msg_free(&m);
	TEST_END();

	memset(&a, 0, sizeof(a));
	a.status = 200;
	a.index = 42;
	a.attempts = 1;
	a.error = "";
	a.total = 2;
	a.chunk = "{}";
	a.chunklen = 2;
	TEST_BEGIN("nomad response: round trip; status, error, attempts, "
	    "length");
	CHECK(ROUND(wire_put_nomad_response, wire_get_nomad_response, &a, &aa,
	    r, m) == 0);
	CHECK(aa.status == 200 && aa.index == 42 && aa.chunklen == 2);
	msg_free(&m);
	a.status = 99;
	CHECK(ROUND(wire_put_nomad_response, wire_get_nomad_response, &a, &aa,
	    r, m) == -1);
	CHECK_STR(r.what, "status out of range");
	msg_free(&m);
	a.status = 200;
	a.error = "refused";
	CHECK(ROUND(wire_put_nomad_response, wire_get_nomad_response, &a, &aa,
	    r, m) == -1);
	CHECK_STR(r.what, "a status and an error");
	msg_free(&m);
	a.status = 0;
	CHECK(ROUND(wire_put_nomad_response, wire_get_nomad_response, &a, &aa,
	    r, m) == -1);
	CHECK_STR(r.what, "no status, but a body or no error");
	msg_free(&m);
	a.status = 200;
	a.error = "";
	a.attempts = NOMAD_READ_ATTEMPTS + 1;
	CHECK(ROUND(wire_put_nomad_response, wire_get_nomad_response, &a, &aa,
	    r, m) == -1);
	CHECK_STR(r.what, "attempts out of range");
	msg_free(&m);
	a.attempts = 1;
	a.total = 3;
	CHECK(ROUND(wire_put_nomad_response, wire_get_nomad_response, &a, &aa,
	    r, m) == -1);
	CHECK_STR(r.what, "body length");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("nomad body: an empty chunk is refused");
	b.chunk = "";
	b.chunklen = 0;
	CHECK(ROUND(wire_put_nomad_body, wire_get_nomad_body, &b, &bb, r, m) ==
	    -1);
	CHECK_STR(r.what, "empty chunk");
	msg_free(&m);
	TEST_END();
}

static void
test_notify(void)
{
	struct wire_notify		 n, nn;
	struct wire_notify_result	 s, ss;
	struct msgw			 m;
	struct msgr			 r;

	memset(&n, 0, sizeof(n));
	n.kind = NOTIFY_KIND_TEXT;
	n.url = "https://ntfy.example.org/deploys";
	n.title = "web deployed";
	n.tags = "ok";
	n.click = "";
	n.body = "done";
	n.bodylen = 4;
	TEST_BEGIN("notify: round trip");
	CHECK(ROUND(wire_put_notify, wire_get_notify, &n, &nn, r, m) == 0);
	CHECK(nn.kind == NOTIFY_KIND_TEXT && nn.bodylen == 4);
	CHECK_STR(nn.title, "web deployed");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("notify: kind, scheme and header values are checked");
	n.kind = 3;
	CHECK(ROUND(wire_put_notify, wire_get_notify, &n, &nn, r, m) == -1);
	CHECK_STR(r.what, "unknown kind");
	msg_free(&m);
	n.kind = NOTIFY_KIND_JSON;
	n.url = "file:///etc/passwd";
	CHECK(ROUND(wire_put_notify, wire_get_notify, &n, &nn, r, m) == -1);
	CHECK_STR(r.what, "not an http(s) URL");
	msg_free(&m);
	n.url = "http://127.0.0.1/";
	n.title = "a\r\nX-Injected: 1";
	CHECK(ROUND(wire_put_notify, wire_get_notify, &n, &nn, r, m) == -1);
	CHECK_STR(r.what, "a header value with control characters");
	msg_free(&m);
	n.title = "";
	n.tags = "two words";
	CHECK(ROUND(wire_put_notify, wire_get_notify, &n, &nn, r, m) == -1);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("notify result: a status is 0 or 100-599");
	s.status = 0;
	s.error = "connection refused";
	CHECK(ROUND(wire_put_notify_result, wire_get_notify_result, &s, &ss,
	    r, m) == 0);
	CHECK_STR(ss.error, "connection refused");
	msg_free(&m);
	s.status = 600;
	CHECK(ROUND(wire_put_notify_result, wire_get_notify_result, &s, &ss,
	    r, m) == -1);
	CHECK_STR(r.what, "HTTP status");
	msg_free(&m);
	TEST_END();
}

static void
test_auth(void)
{
	struct wire_auth_begin		 b, bb;
	struct wire_auth_class		 c, cc;
	struct wire_auth_principal	 p, pp;
	struct wire_auth_forget		 f, ff;
	struct msgw			 m;
	struct msgr			 r;

	b.idle = 3600;
	b.boot = SHA256;
	b.manage = 1;
	b.anon = 0;
	TEST_BEGIN("auth begin: round trip; idle, classes, hash checked");
	CHECK(ROUND(wire_put_auth_begin, wire_get_auth_begin, &b, &bb, r, m) ==
	    0);
	CHECK(bb.idle == 3600 && bb.manage == 1);
	CHECK_STR(bb.boot, SHA256);
	msg_free(&m);
	b.boot = "abc";
	CHECK(ROUND(wire_put_auth_begin, wire_get_auth_begin, &b, &bb, r, m) ==
	    -1);
	CHECK_STR(r.what, "bootstrap hash");
	msg_free(&m);
	b.boot = "";
	b.anon = WEB_CLASSES_MAX;
	CHECK(ROUND(wire_put_auth_begin, wire_get_auth_begin, &b, &bb, r, m) ==
	    -1);
	CHECK_STR(r.what, "class out of range");
	msg_free(&m);
	TEST_END();

	c.cls = 2;
	c.json = "{}";
	c.jsonlen = 0;
	TEST_BEGIN("auth class: a class without its view is refused");
	CHECK(ROUND(wire_put_auth_class, wire_get_auth_class, &c, &cc, r, m) ==
	    -1);
	CHECK_STR(r.what, "no view");
	msg_free(&m);
	c.jsonlen = 2;
	CHECK(ROUND(wire_put_auth_class, wire_get_auth_class, &c, &cc, r, m) ==
	    0);
	CHECK(cc.cls == 2 && cc.jsonlen == 2);
	msg_free(&m);
	TEST_END();

	memset(&p, 0, sizeof(p));
	p.kind = WEB_PRIN_SESSION;
	p.hash = SHA256;
	p.name = "alice";
	p.cls = 3;
	p.groups = "[]";
	p.groupslen = 2;
	TEST_BEGIN("auth principal: round trip; a session needs its groups");
	CHECK(ROUND(wire_put_auth_principal, wire_get_auth_principal, &p, &pp,
	    r, m) == 0);
	CHECK_STR(pp.name, "alice");
	CHECK(pp.cls == 3 && pp.groupslen == 2);
	msg_free(&m);
	p.groupslen = 0;
	CHECK(ROUND(wire_put_auth_principal, wire_get_auth_principal, &p, &pp,
	    r, m) == -1);
	CHECK_STR(r.what, "a session without its groups");
	msg_free(&m);
	p.kind = WEB_PRIN_TOKEN;
	p.seen = -1;
	CHECK(ROUND(wire_put_auth_principal, wire_get_auth_principal, &p, &pp,
	    r, m) == -1);
	CHECK_STR(r.what, "negative time");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("auth forget: the hash is 64 hex digits");
	f.hash = "ABC";
	CHECK(ROUND(wire_put_auth_forget, wire_get_auth_forget, &f, &ff, r,
	    m) == -1);
	CHECK_STR(r.what, "hash");
	msg_free(&m);
	TEST_END();
}

static void
test_proc(void)
{
	struct wire_init	 i, ii;
	struct wire_verbose	 v, vv;
	struct msgw		 m;
	struct msgr		 r;
	char			 big[WIRE_INIT_USER_MAX + 2];

	TEST_BEGIN("init: round trip");
	i.uid = 1000;
	i.gid = 1001;
	i.verbose = 2;
	i.user = "_nops";
	i.statedir = "/var/lib/nops";
	i.chroot = "/var/empty";
	i.testhook = "";
	CHECK(ROUND(wire_put_init, wire_get_init, &i, &ii, r, m) == 0);
	CHECK(ii.uid == 1000 && ii.gid == 1001 && ii.verbose == 2);
	CHECK_STR(ii.user, "_nops");
	CHECK_STR(ii.chroot, "/var/empty");
	CHECK_STR(ii.testhook, "");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("init: a user name past its bound is refused");
	memset(big, 'u', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	i.user = big;
	CHECK(ROUND(wire_put_init, wire_get_init, &i, &ii, r, m) == -1);
	CHECK(r.what != NULL);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("verbose: round trip; trailing bytes are refused");
	v.level = 3;
	CHECK(ROUND(wire_put_verbose, wire_get_verbose, &v, &vv, r, m) == 0);
	CHECK(vv.level == 3);
	msg_add_u32(&m, 1);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_verbose(&r, &vv) == -1);
	CHECK_STR(r.what, "trailing bytes");
	msg_free(&m);
	TEST_END();
}

static void
test_hosts(void)
{
	struct wire_ssh_key		 k, kk;
	struct wire_ssh_run		 s, ss;
	struct wire_ssh_result		 x, xx;
	struct wire_http_probe		 p, pp;
	struct wire_http_probe_result	 q, qq;
	struct msgw			 m;
	struct msgr			 r;

	TEST_BEGIN("ssh key: round trip, also empty");
	k.key = "PEM";
	k.keylen = 3;
	CHECK(ROUND(wire_put_ssh_key, wire_get_ssh_key, &k, &kk, r, m) == 0);
	CHECK(kk.keylen == 3 && memcmp(kk.key, "PEM", 3) == 0);
	msg_free(&m);
	k.keylen = 0;
	CHECK(ROUND(wire_put_ssh_key, wire_get_ssh_key, &k, &kk, r, m) == 0);
	CHECK(kk.keylen == 0);
	msg_free(&m);
	TEST_END();

	memset(&s, 0, sizeof(s));
	s.address = "192.0.2.1";
	s.port = 22;
	s.user = "root";
	s.known = "192.0.2.1 ssh-ed25519 AAAA\n";
	s.knownlen = strlen(s.known);
	s.command = "true";
	s.timeout = 30;
	s.flags = SSH_F_STDIN_FD;
	s.in = "";
	s.inlen = 0;
	TEST_BEGIN("ssh run: round trip");
	CHECK(ROUND(wire_put_ssh_run, wire_get_ssh_run, &s, &ss, r, m) == 0);
	CHECK(ss.port == 22 && ss.timeout == 30 && ss.flags == SSH_F_STDIN_FD);
	CHECK_STR(ss.address, "192.0.2.1");
	CHECK_STR(ss.command, "true");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("ssh run: an address like an option, port 0, an unknown "
	    "flag are refused");
	s.address = "-oProxyCommand=x";
	CHECK(ROUND(wire_put_ssh_run, wire_get_ssh_run, &s, &ss, r, m) == -1);
	CHECK_STR(r.what, "a field out of range");
	msg_free(&m);
	s.address = "192.0.2.1";
	s.port = 0;
	CHECK(ROUND(wire_put_ssh_run, wire_get_ssh_run, &s, &ss, r, m) == -1);
	msg_free(&m);
	s.port = 22;
	s.flags = 0x80;
	CHECK(ROUND(wire_put_ssh_run, wire_get_ssh_run, &s, &ss, r, m) == -1);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("ssh result: round trip; a status before the end is "
	    "refused");
	x.status = 3;
	x.stage = SSH_STAGE_DONE;
	x.error = "";
	x.out = "out\n";
	x.outlen = 4;
	CHECK(ROUND(wire_put_ssh_result, wire_get_ssh_result, &x, &xx, r,
	    m) == 0);
	CHECK(xx.status == 3 && xx.stage == SSH_STAGE_DONE && xx.outlen == 4);
	msg_free(&m);
	x.stage = SSH_STAGE_EXEC;
	CHECK(ROUND(wire_put_ssh_result, wire_get_ssh_result, &x, &xx, r,
	    m) == -1);
	CHECK_STR(r.what, "stage or status out of range");
	msg_free(&m);
	x.status = -1;
	CHECK(ROUND(wire_put_ssh_result, wire_get_ssh_result, &x, &xx, r,
	    m) == 0);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("http probe: round trip; not http(s), no timeout refused");
	p.url = "https://192.0.2.1/health";
	p.timeout = 2000;
	CHECK(ROUND(wire_put_http_probe, wire_get_http_probe, &p, &pp, r,
	    m) == 0);
	CHECK(pp.timeout == 2000);
	CHECK_STR(pp.url, "https://192.0.2.1/health");
	msg_free(&m);
	p.url = "file:///etc/passwd";
	CHECK(ROUND(wire_put_http_probe, wire_get_http_probe, &p, &pp, r,
	    m) == -1);
	CHECK_STR(r.what, "not an http(s) URL");
	msg_free(&m);
	p.url = "http://192.0.2.1/";
	p.timeout = 0;
	CHECK(ROUND(wire_put_http_probe, wire_get_http_probe, &p, &pp, r,
	    m) == -1);
	CHECK_STR(r.what, "timeout out of range");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("http probe result: a status with an error is refused");
	q.status = 200;
	q.error = "";
	q.body = "ok";
	q.bodylen = 2;
	CHECK(ROUND(wire_put_http_probe_result, wire_get_http_probe_result,
	    &q, &qq, r, m) == 0);
	CHECK(qq.status == 200 && qq.bodylen == 2);
	msg_free(&m);
	q.error = "refused";
	CHECK(ROUND(wire_put_http_probe_result, wire_get_http_probe_result,
	    &q, &qq, r, m) == -1);
	msg_free(&m);
	q.status = 0;
	CHECK(ROUND(wire_put_http_probe_result, wire_get_http_probe_result,
	    &q, &qq, r, m) == 0);
	CHECK_STR(qq.error, "refused");
	msg_free(&m);
	TEST_END();
}

static void
test_web(void)
{
	static struct wire_web_seen	 w, ww;
	struct wire_web_listen		 l, ll;
	struct msgw			 m;
	struct msgr			 r;

	memset(&l, 0, sizeof(l));
	l.kind = WEB_LISTEN_TCP;
	l.name = "127.0.0.1:8080";
	l.tls = 1;
	l.cert = "CERT";
	l.certlen = 4;
	l.key = "KEY";
	l.keylen = 3;
	l.bodymax = WEB_BODY_MIN;
	l.nhosts = 2;
	l.hosts[0] = "nops.example.org";
	l.hosts[1] = "localhost";
	l.persrc = 8;
	TEST_BEGIN("web listen: round trip");
	CHECK(ROUND(wire_put_web_listen, wire_get_web_listen, &l, &ll, r,
	    m) == 0);
	CHECK(ll.kind == WEB_LISTEN_TCP && ll.tls == 1 && ll.nhosts == 2 &&
	    ll.persrc == 8 && ll.keylen == 3);
	CHECK_STR(ll.hosts[1], "localhost");
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web listen: tls on the control socket, a key without tls "
	    "are refused");
	l.kind = WEB_LISTEN_CONTROL;
	CHECK(ROUND(wire_put_web_listen, wire_get_web_listen, &l, &ll, r,
	    m) == -1);
	CHECK_STR(r.what, "tls flag, certificate and key");
	msg_free(&m);
	l.kind = WEB_LISTEN_TCP;
	l.tls = 0;
	CHECK(ROUND(wire_put_web_listen, wire_get_web_listen, &l, &ll, r,
	    m) == -1);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web listen: too many hostnames, a body size out of "
	    "range are refused");
	l.tls = 1;
	l.nhosts = WEB_HOSTS_MAX + 1;
	msg_init(&m);
	msg_add_u32(&m, l.kind);
	msg_add_str(&m, l.name);
	msg_add_u32(&m, 0);
	msg_add_data(&m, NULL, 0);
	msg_add_data(&m, NULL, 0);
	msg_add_u32(&m, WEB_BODY_MIN);
	msg_add_u32(&m, 0);
	msg_add_u32(&m, l.nhosts);
	msg_reader_buf(&r, m.buf, m.len);
	CHECK(wire_get_web_listen(&r, &ll) == -1);
	CHECK_STR(r.what, "too many hostnames");
	msg_free(&m);
	l.nhosts = 0;
	l.bodymax = WEB_BODY_MAX + 1;
	CHECK(ROUND(wire_put_web_listen, wire_get_web_listen, &l, &ll, r,
	    m) == -1);
	CHECK_STR(r.what, "max-body-size out of range");
	msg_free(&m);
	TEST_END();

	memset(&w, 0, sizeof(w));
	w.nseen = 2;
	w.seen[0].kind = WEB_PRIN_SESSION;
	w.seen[0].hash = SHA256;
	w.seen[0].at = 0;
	w.seen[1].kind = WEB_PRIN_TOKEN;
	w.seen[1].hash = SHA256;
	w.seen[1].at = 1700000000;
	w.ncodes = 1;
	w.codes[0].status = 404;
	w.codes[0].count = 7;
	TEST_BEGIN("web seen: round trip");
	CHECK(ROUND(wire_put_web_seen, wire_get_web_seen, &w, &ww, r, m) ==
	    0);
	CHECK(ww.nseen == 2 && ww.seen[1].at == 1700000000 &&
	    ww.ncodes == 1 && ww.codes[0].status == 404 &&
	    ww.codes[0].count == 7);
	msg_free(&m);
	TEST_END();

	TEST_BEGIN("web seen: an expired token, a short hash, a status out "
	    "of range are refused");
	w.seen[1].at = 0;
	CHECK(ROUND(wire_put_web_seen, wire_get_web_seen, &w, &ww, r, m) ==
	    -1);
	CHECK_STR(r.what, "bad entry");
	msg_free(&m);
	w.seen[1].at = 1;
	w.seen[0].hash = "abc";
	CHECK(ROUND(wire_put_web_seen, wire_get_web_seen, &w, &ww, r, m) ==
	    -1);
	msg_free(&m);
	w.seen[0].hash = SHA256;
	w.codes[0].status = 99;
	CHECK(ROUND(wire_put_web_seen, wire_get_web_seen, &w, &ww, r, m) ==
	    -1);
	CHECK_STR(r.what, "bad status count");
	msg_free(&m);
	TEST_END();
}

int
main(void)
{
	test_git();
	test_nomad();
	test_notify();
	test_auth();
	test_proc();
	test_hosts();
	test_web();
	TEST_EXIT();
}
