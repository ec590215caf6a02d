"""Pushed reads: the webworker answers reads from the state the master
pushes (identities by hash, documents per access class) and sends every
write to the master.

What is checked, against the real daemon:
- a read the webworker holds is answered while the master is stopped
  (SIGSTOP), and so is GET /api/v1/session; a write waits for the master;
  a read nobody asked for yet gets 503 after the webworker's deadline;
- a change the engine makes (a deployment going on by itself) reaches a
  read the webworker already holds, without anyone asking again;
- a write's answer comes after the pushes it caused: the next read sees it;
- logout, token revocation and token creation take effect on reads at
  once; a reload that drops a policy takes effect on reads at once;
- the webworker reports what it answered itself (/metrics counts it) and
  when tokens were used (last_used in GET /api/v1/tokens);
- a 403 document shared by a class names no user.
"""
import http.client
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "browser"))
from webenv import Web, USERS, ok, wait_until  # noqa: E402
import gitlib  # noqa: E402


def call(port, method, path, body=None, headers=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body)
        h["Content-Type"] = "application/json"
    t0 = time.monotonic()
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    took = time.monotonic() - t0
    hdrs = r.getheaders()
    c.close()
    try:
        j = json.loads(text)
    except ValueError:
        j = text
    return r.status, j, hdrs, took


def login(w, user):
    st, j, hdrs, _ = call(w.port, "POST", "/api/v1/login",
                          {"username": user, "password": USERS[user]})
    cookie = None
    for k, v in hdrs:
        m = re.match(r"nops_session=([^;]+)", v) if \
            k.lower() == "set-cookie" else None
        if m:
            cookie = m.group(1)
    if st != 200 or cookie is None:
        raise RuntimeError("login %s: %s %s" % (user, st, j))
    return {"Cookie": "nops_session=" + cookie}, j["csrf_token"]


def metric(w, name, code):
    st, text = w.local("GET", "/metrics")
    m = re.search(r'^%s\{code="%d"\} (\d+)' % (name, code), text, re.M)
    return int(m.group(1)) if m else 0


def case_master_stopped(w, alice):
    st, j, _, _ = call(w.port, "GET", "/api/v1/overview", headers=alice)
    ok("warm: the overview is read", st == 200 and "attention" in j, j)
    # The first fetch may still be on its way on a busy machine: the
    # held reads below are only worth checking once they hold the job.
    ok("warm: the jobs are read, the job from git among them",
       wait_until(lambda: '"web"' in json.dumps(call(
           w.port, "GET", "/api/v1/jobs", headers=alice)[1]), 30))
    st, j, _, _ = call(w.port, "GET", "/jobs", headers=alice)
    ok("warm: the Jobs page is read", st == 200, st)
    master = w.nops.proc.pid
    os.kill(master, signal.SIGSTOP)
    try:
        st, j, _, took = call(w.port, "GET", "/api/v1/overview",
                              headers=alice, timeout=10)
        # Stopped, the master answers nothing: whatever comes is the
        # webworker's.
        ok("master stopped: a held read is still answered, from the "
           "webworker", st == 200 and "attention" in j, (st, took))
        st, j, _, _ = call(w.port, "GET", "/api/v1/session", headers=alice,
                           timeout=10)
        ok("master stopped: GET /api/v1/session is answered by the "
           "webworker", st == 200 and j.get("user") == "alice" and
           j.get("kind") == "user" and j.get("csrf_token"), j)
        st, j, _, _ = call(w.port, "GET", "/jobs", headers=alice,
                           timeout=10)
        ok("master stopped: the Jobs page renders from held reads",
           st == 200 and "web" in j, st)
        st, j, _, _ = call(w.port, "GET", "/api/v1/jobs",
                           headers={"Cookie": "nops_session=" + "B" * 43},
                           timeout=10)
        ok("master stopped: an unknown session is refused by the "
           "webworker", st == 401, (st, j))
        st, j, hdrs, took = call(w.port, "GET",
                                 "/api/v1/deployments?limit=7",
                                 headers=alice, timeout=40)
        ok("master stopped: a read never asked for gets 503 after the "
           "webworker's deadline", st == 503 and
           "did not answer" in json.dumps(j), (st, j, took))
    finally:
        os.kill(master, signal.SIGCONT)
    st, j, _, _ = call(w.port, "GET", "/api/v1/deployments?limit=7",
                       headers=alice)
    ok("master back: the same read is answered", st == 200 and
       "items" in j, (st, j))


def case_pushed_changes(w, alice, csrf):
    did = w.wait_pending()
    ok("a deployment waits for approval", did is not None)
    path = "/api/v1/deployments/%d" % did
    st, j, _, _ = call(w.port, "GET", path, headers=alice)
    ok("the deployment is read while pending", st == 200 and
       j.get("state") == "pending_approval", j)
    st, j, _, _ = call(w.port, "POST", path + "/actions/approve",
                       {"spec_hash": j.get("spec_hash")},
                       headers=dict(alice, **{"X-CSRF-Token": csrf}))
    ok("approve is answered by the master", st in (200, 202), (st, j))
    st, j, _, _ = call(w.port, "GET", path, headers=alice)
    ok("read after write: the held deployment shows the approval at "
       "once", st == 200 and j.get("state") != "pending_approval" and
       j.get("approved_by") == "alice", j)

    def done():
        w.sim.advance(30)  # the simulator's clock: the hook runs
        st, j, _, _ = call(w.port, "GET", path, headers=alice)
        return st == 200 and j.get("state") == "completed"
    reached = wait_until(done, 40, 0.3)
    ok("a change the engine makes reaches a held read by itself "
       "(completed)", reached, call(w.port, "GET", path, headers=alice)[1])
    st, j, _, _ = call(w.port, "GET", "/api/v1/overview", headers=alice)
    ok("the overview held since the start shows nothing awaiting approval",
       st == 200 and j["attention"]["awaiting_approval"]["count"] == 0, j)


def case_identities(w):
    rita, _ = login(w, "rita")
    st, j, _, _ = call(w.port, "GET", "/api/v1/jobs", headers=rita)
    ok("a new session reads at once", st == 200, (st, j))
    st, j, _, _ = call(w.port, "POST", "/api/v1/logout", {},
                       headers=dict(rita, **{"X-CSRF-Token": call(
                           w.port, "GET", "/api/v1/session",
                           headers=rita)[1]["csrf_token"]}))
    ok("logout", st == 200, (st, j))
    st, j, hdrs, _ = call(w.port, "GET", "/api/v1/jobs", headers=rita)
    ok("after logout the cookie reads nothing (401, cookie cleared)",
       st == 401 and any(k.lower() == "set-cookie" and "Max-Age=0" in v
                         for k, v in hdrs), (st, j, hdrs))

    rc, out, err = w.nops.ctl("token", "create", "pushci", "--policy",
                              "viewer")
    tok = out.strip()
    ok("a token is made", rc == 0 and tok.startswith("nops_"), err)
    bearer = {"Authorization": "Bearer " + tok}
    st, j, _, _ = call(w.port, "GET", "/api/v1/jobs", headers=bearer)
    ok("a new token reads at once", st == 200, (st, j))

    def used():
        rc, out, _ = w.nops.ctl("-j", "token", "list")
        items = json.loads(out)["items"] if rc == 0 else []
        return any(t["name"] == "pushci" and t.get("last_used")
                   for t in items)
    ok("the webworker reports the token's use (last_used set)",
       wait_until(used, 15, 0.5), w.nops.ctl("-j", "token", "list")[1])
    rc, out, err = w.nops.ctl("token", "revoke", "pushci")
    ok("the token is revoked", rc == 0, err)
    st, j, _, _ = call(w.port, "GET", "/api/v1/jobs", headers=bearer)
    ok("a revoked token reads nothing at once (401)", st == 401, (st, j))


def case_classes(w, alice):
    nobody, _ = login(w, "nora")
    st, j, _, _ = call(w.port, "GET", "/api/v1/jobs/default/web",
                       headers=nobody)
    ok("a user with no policy: 403 from the pushed read",
       st == 403 and j["error"]["code"] == "forbidden", (st, j))
    ok("the 403 a class shares names no user",
       "nora" not in json.dumps(j) and "alice" not in json.dumps(j), j)
    before = metric(w, "nops_http_requests_total", 403)
    for _ in range(3):
        call(w.port, "GET", "/api/v1/jobs/default/web", headers=nobody)

    def counted():
        return metric(w, "nops_http_requests_total", 403) >= before + 3
    ok("/metrics counts the answers the webworker gave itself",
       wait_until(counted, 15, 0.5),
       (before, metric(w, "nops_http_requests_total", 403)))
    st, text = w.local("GET", "/metrics")

    def value(name):
        m = re.search(r"^%s (\d+)$" % name, text, re.M)
        return int(m.group(1)) if m else -1
    ok("/metrics shows the documents held and pushed",
       value("nops_web_documents") > 0 and
       value("nops_web_document_pushes_total") >=
       value("nops_web_documents") and
       value("nops_web_access_classes") >= 3 and
       value("nops_web_identity_resets_total") >= 1, text[-1500:])


def case_reload(w):
    rita, _ = login(w, "rita")
    st, j, _, _ = call(w.port, "GET", "/api/v1/jobs/default/web",
                       headers=rita)
    ok("rita reads the job (viewer)", st == 200, (st, j))
    with open(w.nops.conf) as f:
        conf = f.read()
    with open(w.nops.conf, "w") as f:
        f.write(conf.replace('bind user "rita" policy "viewer"', ""))
    rc, out, err = w.nops.ctl("reload")
    ok("reload without rita's bind", rc == 0, err)
    st, j, _, _ = call(w.port, "GET", "/api/v1/jobs/default/web",
                       headers=rita)
    ok("after the reload rita's read is refused at once (403)",
       st == 403, (st, j))
    st, j, _, _ = call(w.port, "GET", "/api/v1/session", headers=rita)
    ok("and her session says she may do nothing",
       st == 200 and j.get("capabilities") == [], j)


def case_login_renders(w, alice):
    """A login's commit (its session and audit event) renders no document:
    it marks the audit log's documents stale, and they are rendered at
    their next read, which shows each login answered before it, over the
    control socket and to a user's session alike."""
    docs = ["/api/v1/overview", "/api/v1/jobs", "/api/v1/deployments",
            "/api/v1/repositories", "/api/v1/engine", "/api/v1/status",
            "/api/v1/orphans", "/api/v1/events"]
    for p in docs:
        call(w.port, "GET", p, headers=alice)
        w.local("GET", p)

    def gauge(name):
        text = w.local("GET", "/metrics")[1]
        m = re.search(r"^%s (\d+)" % name, text, re.M)
        return int(m.group(1)) if m else 0
    held = gauge("nops_web_documents")
    ok("logins: the webworker holds both classes' documents", held >= 16,
       held)
    def newest(st, j):
        return [(e["action"], e["target"]) for e in
                (j.get("items", []) if st == 200 else [])[:1]]
    n, seen, seen_alice, counts, stales = 20, 0, 0, [], []
    for i in range(n):
        before = gauge("nops_web_document_renders_total")
        sbefore = gauge("nops_web_document_stale_total")
        login(w, "rita")
        counts.append(gauge("nops_web_document_renders_total") - before)
        stales.append(gauge("nops_web_document_stale_total") - sbefore)
        st, text = w.local("GET", "/api/v1/events")
        seen += newest(st, json.loads(text) if st == 200 else {}) == \
            [("auth.login", "user/rita")]
        if i % 4 == 0:
            # Hers hides user/ targets, but it was marked stale too: her
            # read asks the master, which renders it again.
            before = gauge("nops_web_document_renders_total")
            st, j, _, _ = call(w.port, "GET", "/api/v1/events",
                               headers=alice)
            seen_alice += st == 200 and "items" in j and \
                gauge("nops_web_document_renders_total") > before
    ok("logins: the held audit log shows each login when it is answered",
       seen == n, "%d of %d" % (seen, n))
    ok("logins: a user's held audit log, read over HTTP after a login, is "
       "rendered again for that read",
       seen_alice == (n + 3) // 4, "%d of %d" % (seen_alice, (n + 3) // 4))
    # The audit log read after each login is stale again at the next; the
    # 2 s safety net and the engine render every document now and then,
    # so some logins overlap one of those, but not all of them.
    ok("logins: each marks the audit log read since stale", min(stales) >= 1,
       stales)
    ok("logins: a login renders nothing itself (fewest %d of the %d held)"
       % (min(counts), held), min(counts) == 0, counts)
    counts, stales, codes = [], [], []
    for i in range(5):
        rita, csrf = login(w, "rita")
        w.local("GET", "/api/v1/events")
        before = gauge("nops_web_document_renders_total")
        sbefore = gauge("nops_web_document_stale_total")
        st, _, _, _ = call(w.port, "POST", "/api/v1/logout", {},
                           headers=dict(rita, **{"X-CSRF-Token": csrf}))
        counts.append(gauge("nops_web_document_renders_total") - before)
        stales.append(gauge("nops_web_document_stale_total") - sbefore)
        codes.append(st)
    st, text = w.local("GET", "/api/v1/events")
    j = json.loads(text) if st == 200 else {}
    ok("logins: the held audit log shows the logout when it is answered",
       [e["action"] for e in j.get("items", [])[:1]] == ["auth.logout"],
       j.get("items", [])[:1])
    ok("logins: a logout marks the audit log stale and renders nothing "
       "itself (fewest %d of the %d held)" % (min(counts), held),
       codes == [200] * 5 and min(stales) >= 1 and min(counts) == 0,
       (codes, counts, stales))


def main():
    # nora has no bind: her class may do nothing.
    USERS["nora"] = "nora-Pw-3"
    w = Web(tls=False, extra=())
    try:
        ok("setup: the daemon runs", w.alive()[0], w.alive()[1])
        alice, csrf = login(w, "alice")
        for name, fn in (("master stopped",
                          lambda: case_master_stopped(w, alice)),
                         ("changes", lambda: case_pushed_changes(
                             w, alice, csrf)),
                         ("identities", lambda: case_identities(w)),
                         ("classes", lambda: case_classes(w, alice)),
                         ("logins", lambda: case_login_renders(w, alice)),
                         ("reload", lambda: case_reload(w))):
            try:
                fn()
            except Exception:
                import traceback
                ok(name + " ran to its end", False, traceback.format_exc())
        ok("the webworker never restarted", w.alive()[0], w.alive()[1])
    finally:
        w.stop()
    sys.exit(1 if gitlib.failures else 0)


if __name__ == "__main__":
    main()
