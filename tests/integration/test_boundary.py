#!/usr/bin/env python3
"""Hostile text at the master's doors (nopsd(8), BOUNDARY).  Nomad
answers a register with 400 and ~1,200 bytes of "é" while a notifier
listens for failures: the master keeps running, the deployment fails
with a clean reason (valid UTF-8, bounded, cut on a character) and the
notifier gets valid JSON.  Paths, queries and bodies that decode to
bytes which are not UTF-8 (%ff, a cut sequence, overlong forms) or to
control characters get JSON answers (404 for a path), never 500.
Every answer of the master is valid UTF-8 JSON.
"""
import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import enginelib  # noqa: E402
import gitlib  # noqa: E402
import opslib  # noqa: E402
from enginelib import job_hcl  # noqa: E402
from opslib import ok, wait_until  # noqa: E402

hook = opslib.Receiver()
env = gitlib.Env()
sim = enginelib.Sim(env)
remote = gitlib.Remote(env, "infra")
remote.commit({"nomad/web.nomad.hcl": job_hcl("web", policy="approval")},
              "initial")
conf = ['notify "hook" {\n\twebhook url "%s/hook"\n'
        '\tevents { failed }\n}' % hook.url]
n = enginelib.Nops(env, sim, [{"name": "infra", "url": "file://" +
                               remote.bare, "path": "nomad", "poll": "1h"}],
                   extra=conf)
ok("the daemon starts with a notifier for failures",
   n.wait_commit("infra", remote.head()), n.logtext()[-2000:])
pid = n.proc.pid


def raw(method, target, body=b"", headers=()):
    """One request on the control socket, bytes exactly as given; the
    status and the body as bytes."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(15)
    s.connect(n.sock)
    req = b"%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" % (
        method.encode(), target)
    for h in headers:
        req += h + b"\r\n"
    if body:
        req += b"Content-Type: application/json\r\n"
    req += b"Content-Length: %d\r\n\r\n" % len(body) + body
    s.sendall(req)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head else 0
    return status, rest


def utf8_json(b):
    """The body as JSON if it is valid UTF-8 JSON, else None."""
    try:
        return json.loads(b.decode("utf-8", "strict"))
    except (UnicodeDecodeError, ValueError):
        return None


# --- paths, queries and bodies that are not UTF-8
for target in (b"/api/v1/repositories/%ff", b"/api/v1/repositories/%c3",
               b"/api/v1/repositories/%c0%af", b"/api/v1/repositories/%ed%a0%80",
               b"/api/v1/jobs/default/%ff%fe", b"/api/v1/deployments/%ff",
               b"/api/v1/%ff", b"/api/v1/repositories/a%1bb"):
    st, body = raw("GET", target)
    j = utf8_json(body)
    ok("GET %s: 404 with a JSON not_found body" % target.decode(),
       st == 404 and j is not None and j.get("error", {}).get("code") ==
       "not_found", (st, body[:300]))
st, body = raw("GET", b"/api/v1/deployments?job=%ff%c3&state=%e2%82")
ok("a query that is not UTF-8: a JSON answer, not 500",
   st in (200, 400) and utf8_json(body) is not None, (st, body[:300]))
st, body = raw("POST", b"/api/v1/repositories/infra/fetch",
               body=b'{"x": "\xff\xfe"}')
ok("a body that is not UTF-8: 400 JSON", st == 400 and
   utf8_json(body) is not None, (st, body[:300]))
st, body = raw("GET", b"/api/v1/status", headers=(
    b"Cookie: nops_session=\xff\xfe\x01",))
ok("a cookie that is not UTF-8: a JSON answer", st in (200, 400, 401) and
   utf8_json(body) is not None, (st, body[:300]))
ok("the master still runs after the hostile paths",
   n.proc.poll() is None and n.ctl("-j", "status")[0] == 0)

# --- a register refused with 1,200 bytes of "é", a notifier listening
did = wait_until(lambda: n.active("web"), 20)
ok("a deployment waits for approval", did)
enginelib_fault = {"Method": "POST", "Path": "/v1/job/web", "Match": "exact",
                   "Count": 1, "Action": "status", "Status": 400,
                   "Body": "\u00e9" * 600 + "\x1b[31m\x07end"}
st, r = sim.call("POST", "/_sim/faults", enginelib_fault)
ok("nomadsim takes the fault", st == 200, r)
d = n.deployment(did) if did else None
st, r = n.action(did, "approve", {"spec_hash": d["spec_hash"]}) if d else \
    (0, None)
ok("the deployment is approved", st == 200, (st, r))
end = n.wait_deploy_state(did, ("failed", "completed"), 30)
ok("the master still runs (same pid) after the register failure",
   n.proc.poll() is None and n.ctl("-j", "status")[0] == 0 and
   json.loads(n.ctl("-j", "status")[1])["pid"] == pid,
   n.logtext()[-3000:])
d = n.deployment(did)
reason = (d or {}).get("reason") or ""
ok("the deployment failed with Nomad's reason", end and d["state"] ==
   "failed" and "\u00e9\u00e9\u00e9" in reason, d)
ok("the reason is bounded and holds no control character",
   d is not None and 1000 <= len(reason.encode()) <= 1024 and not any(
       ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in reason), reason)
ok("the reason is cut on a character, marked: no replacement character",
   d is not None and reason.endswith("\u00e9\u2026") and
   "\ufffd" not in reason, reason[-40:])
got = wait_until(lambda: [j for j in hook.json_bodies() if j and
                          j.get("event") == "failed"], 15)
ok("the notifier gets the failure as valid JSON", got and
   got[0]["deployment"]["id"] == did and "\u00e9" in
   got[0]["deployment"]["reason"], hook.got())
ok("every notification body is valid UTF-8 JSON", hook.got() and all(
    utf8_json(r["body"]) is not None for r in hook.got()), hook.got())
st, body = raw("GET", b"/api/v1/deployments/%d" % did)
ok("the deployment's API answer is valid UTF-8 JSON", st == 200 and
   utf8_json(body) is not None, body[:300])
st, body = raw("GET", b"/api/v1/events?limit=50")
ok("the audit log's API answer is valid UTF-8 JSON", st == 200 and
   utf8_json(body) is not None, (st, body[:300]))

hook.stop()
n.stop()
env.cleanup()
sys.exit(1 if gitlib.failures else 0)
