"""The dashboard against the real daemon: every page renders (as the local
admin and as logged-in users), values are escaped, forms approve, pause
and log out, buttons follow the capabilities and a forged form is
refused, the overview and audit log APIs page, and with 100,000
deployments in the database the lists still page."""
import os
import re
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "browser"))
from webenv import (Web, Client, USERS, job_hcl, ok, wait_until,  # noqa
                    text_of, json_or)

PAGES = ("/", "/jobs", "/jobs/default/web", "/deployments",
         "/deployments/%d", "/activity", "/login")


def case_local_pages(w, did):
    for p in PAGES:
        path = p % did if "%d" in p else p
        st, html = w.local("GET", path)
        ok("local admin: %s renders" % path, st == 200 and
           html.startswith("<!DOCTYPE html>") and "</html>" in html,
           (st, html[:300]))
    st, html = w.local("GET", "/deployments/%d" % did)
    ok("local admin: the deployment shows approve and reject",
       'id="approve"' in html and 'id="reject"' in html)
    ok("local admin: it says what approve will do",
       "What approve will do" in html and "migrate" in html)
    ok("local admin: the diff is rendered as rows",
       'class="diff"' in html and "task group" in html, html[-2000:])
    c = Client(w.url)
    st, h, css = c.get("/static/nops.css")
    ok("static: nops.css with its type, cacheable",
       st == 200 and h.get("Content-Type", "").startswith("text/css") and
       "max-age" in h.get("Cache-Control", ""), h)
    st, h, js = c.get("/static/nops.js")
    ok("static: nops.js with its type", st == 200 and h.get(
        "Content-Type", "").startswith("text/javascript") and
        "data-refresh" in js, h)
    st, h, _ = c.get("/static/passwd")
    ok("static: anything else is 404", st == 404, st)
    st, h, html = c.get("/login")
    ok("no inline script or style in a page (the CSP forbids them)",
       "<script>" not in html and "<style" not in html and
       " style=" not in html and " onclick" not in html, html[:500])


def case_api(w, did):
    st, o = w.nops.api("GET", "/api/v1/overview")
    ok("overview API: answers", st == 200 and isinstance(o, dict),
       (st, o))
    att = o["attention"]
    ok("overview API: the waiting deployment is under awaiting approval",
       att["awaiting_approval"]["count"] == 1 and
       att["awaiting_approval"]["items"][0]["id"] == did, att)
    ok("overview API: counts jobs by state",
       o["jobs"]["by_state"].get("pending_approval") == 1, o["jobs"])
    ok("overview API: lists the repository with its commit",
       o["repositories"]["items"][0]["commit"] == w.remote.head(),
       o["repositories"])
    st, e1 = w.nops.api("GET", "/api/v1/events?limit=1")
    ok("events API: a page of 1 and a cursor",
       st == 200 and len(e1["items"]) == 1 and e1["next"], e1)
    st, e2 = w.nops.api("GET", "/api/v1/events?limit=1&cursor=" +
                        str(e1["next"]))
    ok("events API: the next page is older",
       st == 200 and e2["items"] and
       e2["items"][0]["id"] < e1["items"][-1]["id"], e2)
    st, e3 = w.nops.api("GET", "/api/v1/events?target=deployment/%d" % did)
    ok("events API: filtered by target", st == 200 and e3["items"] and
       all(e["target"] == "deployment/%d" % did for e in e3["items"]), e3)
    for q in ("limit=0", "limit=x", "cursor=-1", "cursor=abc"):
        st, e = w.nops.api("GET", "/api/v1/events?" + q)
        ok("events API: %s is a bad request" % q, st == 400, (st, e))


def case_users(w, did):
    alice, rita = Client(w.url), Client(w.url)
    okl, why = alice.login("alice", USERS["alice"])
    ok("alice logs in over TCP", okl, why)
    okl, why = rita.login("rita", USERS["rita"])
    ok("rita logs in over TCP", okl, why)
    st, h, html = Client(w.url).get("/")
    ok("anonymous: to the login page", st == 303 and
       h.get("Location", "").startswith("/login"), (st, h))
    st, h, html = Client(w.url).get("/deployments/%d" % did)
    ok("anonymous: back to the page after login",
       "next=%2Fdeployments%2F" + str(did) in h.get("Location", ""), h)

    st, _, html = rita.get("/deployments/%d" % did)
    ok("rita (read only) sees the deployment", st == 200 and
       "pending_approval" in html, st)
    ok("rita sees approve and reject disabled, with the reason",
       'id="approve"' not in html and 'id="reject"' not in html and
       'id="off-approve"' in html and
       "needs the approve capability" in html)
    tok = rita.csrf(html)
    st, _, body = rita.form("/deployments/%d/approve" % did, {
        "csrf": tok})
    ok("rita's forged approve (with her own token) is refused: 403",
       st == 403, (st, text_of(body)[:300]))
    st, j = w.nops.api("GET", "/api/v1/deployments/%d" % did)
    ok("and the deployment still waits", j["state"] == "pending_approval",
       j["state"])
    st, _, html = rita.get("/jobs/default/web")
    ok("rita sees no pause button", st == 200 and 'id="pause"' not in html,
       st)

    st, _, html = alice.get("/deployments/%d" % did)
    ok("alice sees approve and reject",
       'id="approve"' in html and 'id="reject"' in html)
    tok = alice.csrf(html)
    spec = re.search(r'name="spec_hash" value="([0-9a-f]+)"', html)
    st, h, _ = alice.form("/deployments/%d/approve" % did, {
        "csrf": tok, "spec_hash": spec.group(1) if spec else ""})
    ok("alice approves with the form: 303 back to the deployment",
       st == 303 and h.get("Location", "").startswith(
           "/deployments/%d" % did), (st, h))
    st, _, html = alice.get(h.get("Location", "/"))
    ok("the page says it is done", "msg done" in html, st)
    done = w.nops.wait_deploy_state(did, ("completed", "failed"), 30,
                                    sim_step=30)
    st, j = w.nops.api("GET", "/api/v1/deployments/%d" % did)
    ok("the approved deployment completes", j["state"] == "completed" and
       j["approved_by"] == "alice", (done, j["state"], j["approved_by"]))
    st, _, html = alice.get("/deployments/%d" % did)
    ok("its page shows it completed, approved by alice, no buttons",
       "completed" in html and "alice" in html and
       'id="approve"' not in html, st)

    evil = "<img src=x onerror=alert(1)>"
    st, _, html = alice.get("/jobs/default/web")
    tok = alice.csrf(html)
    st, h, _ = alice.form("/jobs/default/web/pause", {"csrf": tok,
                                                      "reason": evil})
    ok("alice pauses the job with the form", st == 303, (st, h))
    st, _, html = alice.get("/jobs/default/web")
    ok("the pause reason is shown escaped, never as markup",
       "&lt;img src=x onerror=alert(1)&gt;" in html and evil not in html,
       html[-3000:])
    st, h, _ = alice.form("/jobs/default/web/resume", {"csrf": tok})
    ok("alice resumes it", st == 303, (st, h))
    st, _, html = alice.get("/activity")
    ok("the activity page shows the pause and the resume by alice",
       "job.pause" in html and "job.resume" in html and "alice" in html,
       text_of(html)[:500])

    st, _, html = alice.get("/")
    tok = alice.csrf(html)
    dead = [c.value for c in alice.jar if c.name == "nops_session"]
    st, h, _ = alice.form("/logout", {"csrf": tok})
    ok("alice logs out: to the login page, the cookie cleared",
       st == 303 and h.get("Location") == "/login" and
       "nops_session=;" in h.get("Set-Cookie", ""), (st, h))
    st, h, _ = alice.get("/")
    ok("after logout a page asks to log in again", st == 303, (st, h))
    # A browser that kept the ended session's cookie: the page sends it to
    # the login page and ends the cookie, as the pushed reads do.
    st, h, _ = Client(w.url).req("GET", "/deployments/%d" % did, headers={
        "Cookie": "nops_session=%s" % (dead[0] if dead else "none")})
    ok("a page asked with an ended session's cookie: to the login page, "
       "the cookie cleared", len(dead) == 1 and st == 303 and
       h.get("Location", "").startswith("/login") and
       "nops_session=;" in h.get("Set-Cookie", "") and
       "Max-Age=0" in h.get("Set-Cookie", ""), (dead, st, h))


def case_escaping(w):
    evil = "<script>alert('x')</script>"
    w.nops.push_and_fetch(w.remote, {"README": "x"}, evil)
    st, html = w.local("GET", "/")
    ok("a commit subject with markup is escaped on the overview",
       "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html and
       evil not in html, html[-2500:])


def seed(db, n):
    con = sqlite3.connect(db)
    con.executescript("""
BEGIN;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < %d)
INSERT INTO deployments (kind, namespace, job, repository, commit_id, spec,
    spec_hash, policy, state, reason, created_at, updated_at, ended_at)
SELECT 'job', 'default', 'bulk-' || (i %% 1000), 'infra',
    printf('%%040d', i), '{}', printf('%%064d', i), 'auto',
    CASE i %% 3 WHEN 0 THEN 'completed' WHEN 1 THEN 'failed'
    ELSE 'superseded' END, 'seeded', 1700000000 + i, 1700000000 + i,
    1700000000 + i FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < %d)
INSERT INTO events (at, actor, action, target, detail)
SELECT 1700000000 + i, 'system', 'deployment.create', 'deployment/' || i,
    'seeded' FROM k;
COMMIT;
""" % (n, n))
    con.close()


def case_many(w):
    n = 100000
    db = os.path.join(w.nops.db, "nops.db")
    w.nops.stop()
    t = time.monotonic()
    seed(db, n)
    print("# seeded %d deployments and events in %.1f s" % (
        n, time.monotonic() - t))
    w.nops.restart()
    alice = Client(w.url)
    okl, why = alice.login("alice", USERS["alice"])
    ok("many: alice logs in again", okl, why)
    t = time.monotonic()
    st, _, html = alice.get("/deployments")
    dt = time.monotonic() - t
    rows = re.findall(r'class="deployment" href="/deployments/(\d+)"', html)
    ok("many: the deployments page shows one page of 50", st == 200 and
       len(rows) == 50, (st, len(rows)))
    nxt = re.search(r'rel="next" href="([^"]+)"', html)
    ok("many: with a link to the next page", nxt, html[-500:])
    print("# /deployments with %d rows: %.3f s" % (n, dt))
    if nxt:
        st, _, html2 = alice.get(nxt.group(1).replace("&amp;", "&"))
        rows2 = re.findall(r'class="deployment" href="/deployments/(\d+)"',
                           html2)
        ok("many: the next page follows on, older",
           st == 200 and len(rows2) == 50 and
           int(rows2[0]) < int(rows[-1]), (st, rows2[:3], rows[-1:]))
    st, _, html = alice.get("/deployments?state=failed")
    states = re.findall(r'class="state [^"]+" data-state="([a-z_]+)"', html)
    ok("many: filtered by state", st == 200 and states and
       set(states) == {"failed"}, set(states))
    t = time.monotonic()
    st, h, body = alice.get("/api/v1/deployments?limit=50")
    j = json_or(body)
    print("# /api/v1/deployments?limit=50: %.3f s" % (time.monotonic() - t))
    ok("many: the API answers a page of 50 and a cursor",
       st == 200 and j and len(j["items"]) == 50 and j["next"], st)
    st, h, body = alice.get("/api/v1/deployments?limit=500&cursor=" +
                            j["next"])
    j2 = json_or(body)
    ok("many: its next page of 500", st == 200 and j2 and
       len(j2["items"]) == 500 and j2["items"][0]["id"] <
       j["items"][-1]["id"], st)
    t = time.monotonic()
    st, _, html = alice.get("/activity")
    print("# /activity with %d events: %.3f s" % (n, time.monotonic() - t))
    ok("many: the activity page shows a page and a next link",
       st == 200 and html.count("<tr>") >= 50 and 'rel="next"' in html, st)
    t = time.monotonic()
    st, _, html = alice.get("/")
    print("# / (overview): %.3f s" % (time.monotonic() - t))
    ok("many: the overview renders", st == 200 and "Overview" in html, st)


def main():
    w = Web(tls=False)
    try:
        did = w.wait_pending()
        ok("a deployment waits for approval", did, w.nops.logtext()[-2000:])
        case_local_pages(w, did)
        case_api(w, did)
        case_escaping(w)
        case_users(w, did)
        case_many(w)
        alive, why = w.alive()
        ok("the webworker never restarted", alive, why)
    finally:
        w.stop()


main()
