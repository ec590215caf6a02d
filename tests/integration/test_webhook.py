#!/usr/bin/env python3
"""POST /webhook/git/{repository} against the real daemon and a real git
remote (file://, poll interval 1h, so only a webhook can make it fetch
during the test): correctly signed GitHub, Gitea and GitLab deliveries
bring the new commit's snapshot at once; a bad, missing or malformed
signature, an unknown repository and one without a secret are refused
and fetch nothing; a replayed delivery does nothing; an oversized body
is refused by the webworker.  Accepted deliveries are audited; the
secret appears nowhere.  The OpenAPI document is served to anyone.
"""
import json
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitlib  # noqa: E402
import opslib  # noqa: E402
from opslib import ok, wait_until, http, as_json  # noqa: E402

SECRET = "whsec-Kx93-test-secret-7c1f0a"

env = gitlib.Env()
remote = gitlib.Remote(env, "infra")
remote.commit({"nomad/a.nomad.hcl": 'job "a" {}\n'}, "first")
other = gitlib.Remote(env, "plain")
other.commit({"x.nomad.hcl": 'job "x" {}\n'}, "first")
secret_path = opslib.secret_file(env, "infra.webhook", SECRET + "\n")


class Nopsd(gitlib.Nopsd):
    def write_conf(self, repos):
        super().write_conf(repos)
        opslib.add_to_repo(self.conf, "infra",
                           ['webhook secret file "%s"' % secret_path])


n = Nopsd(env, [
    {"name": "infra", "url": "file://" + remote.bare, "path": "nomad",
     "poll": "1h"},
    {"name": "plain", "url": "file://" + other.bare, "poll": "1h"},
])
port = opslib.tcp_port(n.conf)
ok("first snapshots", n.wait_commit("infra", remote.head()) and
   n.wait_commit("plain", other.head()), n.logtext()[-2000:])


def post(repo, body, headers):
    h = {"Content-Type": "application/json"}
    h.update(headers)
    return http(port, "POST", "/webhook/git/" + repo, body, h)


def polls(name):
    return n.repo(name)["polls"]


def delivered(name, commit, timeout=10):
    return n.wait_commit(name, commit, timeout)


def nothing_fetched(name, before_polls, before_commit, secs=2.5):
    time.sleep(secs)
    r = n.repo(name)
    return r["polls"] == before_polls and r["commit"] == before_commit


# --- GitHub
c2 = remote.commit({"nomad/b.nomad.hcl": 'job "b" {}\n'}, "second")
body = json.dumps({"ref": "refs/heads/main", "after": c2}).encode()
gh_id = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
gh_headers = {"X-Hub-Signature-256": opslib.hub_signature(SECRET, body),
              "X-GitHub-Delivery": gh_id, "X-GitHub-Event": "push"}
t0 = time.monotonic()
st, _, rb = post("infra", body, gh_headers)
ok("github: a signed delivery is accepted (202)", st == 202 and
   as_json(rb).get("queued") is True and as_json(rb).get("delivery") ==
   gh_id, (st, rb))
ok("github: the new commit's snapshot arrives without waiting for the "
   "poll interval", delivered("infra", c2) and time.monotonic() - t0 < 10,
   n.repo("infra"))

# --- Gitea: its own header (and GitHub's, as Gitea sends both)
c3 = remote.commit({"nomad/c.nomad.hcl": 'job "c" {}\n'}, "third")
body = json.dumps({"ref": "refs/heads/main", "after": c3}).encode()
st, _, rb = post("infra", body, {
    "X-Gitea-Signature": opslib.gitea_signature(SECRET, body),
    "X-Hub-Signature-256": opslib.hub_signature(SECRET, body),
    "X-Gitea-Delivery": "a6a1d2c4-0001-4b7e-9c1e-000000000003",
    "X-Gitea-Event": "push"})
ok("gitea: a signed delivery is accepted", st == 202, (st, rb))
ok("gitea: the new commit arrives", delivered("infra", c3), n.repo("infra"))

# --- GitLab: the token is the secret
c4 = remote.commit({"nomad/d.nomad.hcl": 'job "d" {}\n'}, "fourth")
body = b'{"object_kind": "push"}'
st, _, rb = post("infra", body, {
    "X-Gitlab-Token": SECRET,
    "X-Gitlab-Event-UUID": "0f7a4a2e-1d6c-4e55-9b7e-44a1c3b2d0aa",
    "X-Gitlab-Event": "Push Hook"})
ok("gitlab: a delivery with the token is accepted", st == 202, (st, rb))
ok("gitlab: the new commit arrives", delivered("infra", c4),
   n.repo("infra"))

# --- refusals: each fetches nothing
c5 = remote.commit({"nomad/e.nomad.hcl": 'job "e" {}\n'}, "fifth")
body = json.dumps({"after": c5}).encode()
p0, h0 = polls("infra"), n.repo("infra")["commit"]
cases = [
    ("a wrong signature is 403", 403, "forbidden",
     {"X-Hub-Signature-256": opslib.hub_signature("not-the-secret", body),
      "X-GitHub-Delivery": "bad-1"}),
    ("a signature of another body is 403", 403, "forbidden",
     {"X-Hub-Signature-256": opslib.hub_signature(SECRET, body + b" "),
      "X-GitHub-Delivery": "bad-2"}),
    ("a wrong GitLab token is 403", 403, "forbidden",
     {"X-Gitlab-Token": SECRET + "x"}),
    ("no signature at all is 401", 401, "unauthorized",
     {"X-GitHub-Delivery": "bad-3"}),
    ("a truncated signature is 400", 400, "bad_request",
     {"X-Hub-Signature-256": opslib.hub_signature(SECRET, body)[:-2]}),
    ("a signature without sha256= is 400", 400, "bad_request",
     {"X-Hub-Signature-256": opslib.gitea_signature(SECRET, body)}),
    ("a good signature with a malformed delivery id is 400", 400,
     "bad_request", {"X-Hub-Signature-256": opslib.hub_signature(SECRET,
                                                                 body),
                     "X-GitHub-Delivery": "id with spaces"}),
]
for name, want, code, headers in cases:
    st, _, rb = post("infra", body, headers)
    j = as_json(rb) or {}
    ok("refused: " + name, st == want and j.get("error", {}).get("code") ==
       code, (st, rb))
st, _, rb = post("nosuch", body, gh_headers)
ok("refused: an unknown repository is 404", st == 404 and
   as_json(rb)["error"]["code"] == "not_found", (st, rb))
st, _, rb = post("plain", body, {
    "X-Hub-Signature-256": opslib.hub_signature(SECRET, body)})
ok("refused: a repository without a webhook secret is 404", st == 404,
   (st, rb))
st, _, rb = http(port, "GET", "/webhook/git/infra")
ok("refused: GET is not a webhook (405)", st == 405, (st, rb))
ok("refusals fetched nothing", nothing_fetched("infra", p0, h0),
   (p0, h0, n.repo("infra")))
ok("the repository without a secret fetched nothing either",
   n.repo("plain")["polls"] == 1, n.repo("plain"))

# --- replay: the GitHub delivery again, byte for byte
body2 = json.dumps({"ref": "refs/heads/main", "after": c2}).encode()
st, _, rb = post("infra", body2, gh_headers)
j = as_json(rb) or {}
ok("replay: the same delivery id answers 200 duplicate", st == 200 and
   j.get("duplicate") is True and j.get("delivery") == gh_id, (st, rb))
ok("replay: it triggers nothing", nothing_fetched("infra", p0, h0),
   n.repo("infra"))

# --- oversized body: the webworker caps it
big = b"x" * (1024 * 1024 + 1)
st, _, rb = post("infra", big, {
    "X-Hub-Signature-256": opslib.hub_signature(SECRET, big)})
ok("an oversized body is 413", st == 413, (st, rb[:200]))
ok("the daemon is still up", n.proc.poll() is None and
   n.ctl("-j", "status")[0] == 0)

# --- a new delivery id still works after all that
st, _, rb = post("infra", body, {
    "X-Hub-Signature-256": opslib.hub_signature(SECRET, body),
    "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0959"})
ok("a fresh delivery after the refusals fetches", st == 202 and
   delivered("infra", c5), (st, rb, n.repo("infra")))

# --- audit, without secrets
db = sqlite3.connect(os.path.join(n.db, "nops.db"))
rows = db.execute("SELECT actor, action, target, detail FROM events "
                  "WHERE action = 'repository.webhook' ORDER BY id").fetchall()
db.close()
ok("audit: the accepted deliveries are recorded (4)", len(rows) == 4 and
   all(r[0] == "webhook" and r[2] == "repository/infra" for r in rows),
   rows)
details = [json.loads(r[3]) for r in rows]
ok("audit: each names the sender kind, delivery and event",
   [d["sender"] for d in details] == ["github", "gitea", "gitlab",
                                      "github"] and
   details[0]["delivery"] == gh_id and details[0]["event"] == "push",
   details)
hits = opslib.grep_tree([n.log, n.db], SECRET)
ok("the secret is in neither the log nor the database", hits == [], hits)
ok("refused deliveries are logged with why", "does not match" in
   n.logtext() and "rejected" in n.logtext())

# --- reload: a new secret is read again
NEW = "whsec-rotated-2-" + "b" * 20
# Rotated while nopsd runs: the master's user must read the new one.
gitlib.give_to_master(opslib.secret_file(env, "infra.webhook", NEW + "\n"))
rc = n.ctl("reload")[0]
c6 = remote.commit({"nomad/f.nomad.hcl": 'job "f" {}\n'}, "sixth")
body = b'{"after": "%s"}' % c6.encode()
st_old, _, _ = post("infra", body, {
    "X-Hub-Signature-256": opslib.hub_signature(SECRET, body)})
st_new, _, rb = post("infra", body, {
    "X-Hub-Signature-256": opslib.hub_signature(NEW, body)})
ok("reload reads the secret again: the old one is 403, the new 202",
   rc == 0 and st_old == 403 and st_new == 202 and delivered("infra", c6),
   (rc, st_old, st_new, rb))

# --- the API's description is served to anyone, as JSON
st, hdr, rb = http(port, "GET", "/api/v1/openapi.json")
doc = as_json(rb) or {}
ops = doc.get("paths", {})
ok("openapi: served without credentials, JSON, OpenAPI 3.0.x",
   st == 200 and str(doc.get("openapi", "")).startswith("3.0.") and
   "application/json" in hdr.get("Content-Type", ""), (st, rb[:200]))
ok("openapi: it describes the webhook and /metrics",
   "post" in ops.get("/webhook/git/{repository}", {}) and
   "get" in ops.get("/metrics", {}) and
   "get" in ops.get("/api/v1/deployments/{id}", {}), sorted(ops))
bad = [(p, m) for p, item in ops.items() for m, op in item.items()
       if not isinstance(op.get("responses"), dict) or not op["responses"]]
ok("openapi: every operation has responses", bad == [], bad)
# The document's structure is checked field by field by unit/test_openapi
# (no validator package can be installed here: no PyPI).

n.stop()
sys.exit(1 if gitlib.failures else 0)
