"""Deploying plans to hosts over SSH (man/nops-plan.5), with real
components: three OpenSSH servers with their own host keys, stores and
system profiles (hostlib.py), a Nix plan in a git repository evaluated by
real Nix, closures copied with nix-store --export/--import over the SSH
channel, activation through each system's switch-to-configuration.

Skipped, and said so, when Nix or the namespace tools are missing.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http import server as httpserver

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitlib  # noqa: E402
import hostlib  # noqa: E402
import opslib  # noqa: E402
from gitlib import ok, wait_until  # noqa: E402

missing = hostlib.have_tools()
if missing:
    print("ok - hosts # SKIP missing: " + " ".join(missing))
    sys.exit(0)

env = gitlib.Env()
gd = gitlib.GitDaemon(env)
gd.start()
daemon = hostlib.NixDaemon(env)
mk = env.path("mk.nix")
with open(mk, "w") as f:
    f.write(hostlib.MK_NIX)

key, pub = hostlib.client_key(env)
H = {n: hostlib.Host(env, n, pub) for n in ("alpha", "beta", "gamma")}
v0 = {n: hostlib.build(daemon, mk, n, "v0") for n in H}
for n, h in H.items():
    h.install(daemon, v0[n])
other = env.path("otherkey")
subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other],
               check=True)
WRONG_KEY = " ".join(open(other + ".pub").read().split()[:2])


class Health:
    """What the hosts' HTTP checks ask: /ok answers 200, /down 503,
    /flaky 503 twice and then 200.  Every GET is recorded."""

    def __init__(self):
        self.gets = []
        self.flaky = 0
        outer = self

        class Handler(httpserver.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.gets.append(self.path)
                if self.path == "/flaky":
                    outer.flaky += 1
                    code = 503 if outer.flaky <= 2 else 200
                else:
                    code = 200 if self.path == "/ok" else 503
                body = b"fine" if code == 200 else b"not ready TOKEN=hunter2"
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = httpserver.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever,
                         daemon=True).start()


health = Health()
notes = opslib.Receiver()


def notes_of(did):
    """The notifications of plan deployment did: [(event, body), ...]."""
    out = []
    for b in notes.json_bodies():
        if b and b.get("deployment", {}).get("id") == did:
            out.append((b["event"], b))
    return out


# The operations every host declares (EachHost, and each host's actions):
# stamp notes when it ran on the host, greet echoes its input (checked by
# a schema), probe fails on beta only, secret is sensitive.
OPS = """{
    stamp.command = "echo start $(date +%s.%N) >> /run/nops-each; sleep 1; \\
echo end $(date +%s.%N) >> /run/nops-each; echo stamped";
    greet = { command = "cat"; schema = { type = "object";
              required = [ "name" ];
              properties.name.type = "string"; }; };
    probe.command = "true";
    secret = { command = "echo s3cr3t-$((6 * 7))"; sensitive = true; };
  }"""


def plan_nix(versions, policy="auto", goal=None, checks=None, keys=None,
             kernels=None, bad=(), tests="", bot=()):
    """A plan: alpha is the spire host (first phase by its tag)."""
    checks = checks or {}
    keys = keys or {}
    kernels = kernels or {}
    hosts = []
    for n, h in H.items():
        sysexpr = 'mk { name = "%s"; version = "%s"; kernel = "%s"; ' \
            'bad = %s; }' % (n, versions[n], kernels.get(n, "k1"),
                             "true" if n in bad else "false")
        cl = "".join('{ name = "%s"; %s = %s; timeout = %d; } ' %
                     (c[0], "http" if c[1].startswith("http://") else
                      "command", json.dumps(c[1]),
                      c[2] if len(c) > 2 else 20)
                     for c in checks.get(n, []))
        hosts.append('    %s = { port = %d; hostKey = "%s"; system = %s; '
                     'checks = [ %s]; %s};' % (
                         n, h.port, keys.get(n, h.pubkey()), sysexpr, cl,
                         ('tags = [ "spire" ]; ' if n == "alpha" else "") +
                         ("buildOnTarget = true; " if n in bot else "") +
                         ('operations.probe.command = "echo no; exit 5"; '
                          if n == "beta" else "")))
    return """let mk = import ./lib/mk.nix; in {
  policy = "%s";
  notifyCompleted = true;
%s  defaults = { address = "127.0.0.1"; user = "root";
                operations = %s; };
  hosts = {
%s
  };
  phases = [
    { name = "spire"; include = { tags = [ "spire" ]; }; }
    { name = "main"; }
  ];
  tests = [ %s ];
}
""" % (policy, '  goal = "%s";\n' % goal if goal else "", OPS,
       "\n".join(hosts), tests)


class Nops(gitlib.Nopsd):
    def write_conf(self, repos):
        super().write_conf(repos)
        with open(self.conf, "a") as f:
            f.write('hosts {\n\tssh key file "%s"\n\tnix store "%s"\n'
                    '\tconfirm-timeout 12s\n\tcommand-timeout 60s\n}\n' %
                    (key, daemon.store))
            f.write('notify "plans" {\n\twebhook url "%s/n"\n}\n' %
                    notes.url)

    def plan_deployments(self):
        st, j = self.api("GET", "/api/v1/deployments?job=hosts&limit=100")
        return [d for d in j["items"] if d["namespace"] == ""] \
            if st == 200 else []

    def steps(self, did):
        st, j = self.api("GET", "/api/v1/deployments/%d/steps" % did)
        return j if st == 200 else None


repo = gitlib.Remote(env, "hosts")
n = None
versions = {h: "v0" for h in H}


def push(vers, **kw):
    versions.update(vers)
    c = repo.commit({"nops.plan.nix": plan_nix(versions, **kw),
                     "lib/mk.nix": hostlib.MK_NIX})
    if n is not None:
        n.fetch("hosts")
    return c


def new_deployment(after, timeout=150):
    """The first plan deployment with an id above after, once it ended."""
    def f():
        ds = [d for d in n.plan_deployments() if d["id"] > after]
        if ds and ds[-1]["state"] in ("completed", "failed", "rejected",
                                      "superseded", "pending_approval"):
            return ds[-1]
        return None
    return wait_until(f, timeout, 0.3)


def last_id():
    ds = n.plan_deployments()
    return max([d["id"] for d in ds] or [0])


def steps_of(d):
    s = n.steps(d["id"])
    return {x["host"]: x for x in s["steps"]} if s else {}


# 1. Phases in order; the spire-tagged host first.
HEALTH = "http://{address}:%d/" % health.port
c1 = push({h: "v1" for h in H},
          checks={"beta": [("web", HEALTH + "flaky")],
                  "gamma": [("web", HEALTH + "ok")]})
# Each host keeps its last 100 runs; 5 here (test-hooks build), so that
# the cap shows within a few runs.
os.environ["NOPS_TEST_HOST_RUNS_MAX"] = "5"
n = Nops(env, [{"name": "hosts", "url": gd.url("hosts"), "poll": "1h"}])
sys1 = {h: hostlib.build(daemon, mk, h, "v1") for h in H}
d = new_deployment(0, 150)
ok("a plan change makes one deployment of kind plan, and it completes",
   d is not None and d["state"] == "completed", json.dumps(d) +
   n.logtext()[-3000:])
ok("every host runs its new system (copied into its own store)",
   all(H[h].current() == sys1[h] for h in H),
   str({h: H[h].current() for h in H}))
g = {h: [x for x in H[h].goals() if x[1] == sys1[h]] for h in H}
ok("each host was switched once", all(len(g[h]) == 1 and g[h][0][0] ==
                                      "switch" for h in H), str(g))
if all(g[h] for h in H):
    ok("phases in order, hosts in sequence: alpha (spire) then beta, "
       "gamma", g["alpha"][0][2] < g["beta"][0][2] < g["gamma"][0][2],
       str(g))
s = n.steps(d["id"]) if d else None
ok("the steps show the phase layout and each step recorded",
   s is not None and [(x["phase"], x["host"], x["state"], x["step"])
                      for x in s["steps"]] ==
   [("spire", "alpha", "succeeded", "record"),
    ("main", "beta", "succeeded", "record"),
    ("main", "gamma", "succeeded", "record")], json.dumps(s))
ok("the system profile names the new system", H["beta"].profile() ==
   sys1["beta"], str(H["beta"].profile()))
st, hosts = n.api("GET", "/api/v1/hosts")
hs = {x["name"]: x for x in hosts["items"]} if st == 200 else {}
ok("GET /api/v1/hosts: wanted, current, phase, state in_sync, last step",
   st == 200 and all(hs[h]["wanted"] == sys1[h] and hs[h]["current"] ==
                     sys1[h] and hs[h]["state"] == "in_sync"
                     for h in H) and hs["alpha"]["phase"] == "spire" and
   "record succeeded" in (hs["gamma"]["last_step"] or ""), json.dumps(hosts))
ok("HTTP checks from nops: 2xx passes, a 503 is asked again until 2xx",
   d is not None and d["state"] == "completed" and
   health.gets.count("/flaky") == 3 and health.gets.count("/ok") == 1,
   str(health.gets))
nt = wait_until(lambda: notes_of(d["id"]) if d else None, 15) or []
ok("a completed plan deployment is notified (the plan asks for it)",
   [e for e, b in nt] == ["completed"] and
   nt[0][1]["deployment"]["kind"] == "plan" and
   nt[0][1]["deployment"]["job"] == "hosts" and
   "plan hosts completed" in nt[0][1]["text"], json.dumps(nt))
rc, out, err = n.ctl("hosts")
ok("nopsctl hosts", rc == 0 and "alpha" in out and "in_sync" in out,
   out + err)
st, page = n.curl("GET", "/hosts")
ok("the dashboard's Hosts page shows the plan's phases and each host",
   st == 200 and isinstance(page, str) and "spire" in page and
   all(h in page for h in H) and "in_sync" in page, str(page)[:2000])
if d:
    st, page = n.curl("GET", "/deployments/%d" % d["id"])
    ok("a plan deployment's page shows its phase progress",
       st == 200 and isinstance(page, str) and 'id="steps"' in page and
       "succeeded" in page and "Deploy plan" in page, str(page)[:2000])

# 2. A changed kernel gets boot; the others are left alone.
last = last_id()
push({"beta": "v2"}, kernels={"beta": "k2"})
sys2 = hostlib.build(daemon, mk, "beta", "v2", kernel="k2")
d = new_deployment(last)
st = steps_of(d) if d else {}
ok("a host whose kernel changed gets boot", d is not None and
   d["state"] == "completed" and st["beta"]["goal"] == "boot" and
   H["beta"].goals()[-1][:2] == ("boot", sys2) and
   H["beta"].profile() == sys2 and H["beta"].current() == sys1["beta"],
   json.dumps(d) + str(H["beta"].goals()))
ok("hosts already running their system are skipped",
   st.get("alpha", {}).get("state") == "skipped" and
   st.get("gamma", {}).get("state") == "skipped", json.dumps(st))

# 3. A forced goal overrides the choice; gamma builds its system itself.
last = last_id()
# A version no earlier run built: the deployer's store keeps what it built.
V3 = "v3-%d-%d" % (os.getpid(), int(time.time()))
push({"gamma": V3}, goal="test", kernels={"beta": "k2"}, bot=("gamma",))
sys3 = hostlib.outpath(daemon, mk, "gamma", V3)
d = new_deployment(last)
ok("a forced goal overrides (test: activated, the profile unchanged)",
   d is not None and d["state"] == "completed" and
   H["gamma"].goals()[-1][:2] == ("test", sys3) and
   H["gamma"].current() == sys3 and H["gamma"].profile() == sys1["gamma"],
   json.dumps(d) + str(H["gamma"].goals()))
bot = {"completed": d is not None and d["state"] == "completed",
       "runs it": H["gamma"].current() == sys3,
       "not built here": daemon.nix("nix-store", "--check-validity",
                                    sys3).returncode != 0,
       "built there": os.path.isdir(os.path.join(H["gamma"].root,
                                                 sys3.lstrip("/"))),
       "said so": "building /nix/store/" in n.logtext()}
ok("buildOnTarget: the host built its system; nops did not",
   all(bot.values()), str(bot))

# 4. A failing check stops the deployment before the next host.
last = last_id()
beta_goals = len(H["beta"].goals())
push({"alpha": "v4", "beta": "v4"}, kernels={"beta": "k2"},
     checks={"alpha": [("up", "echo checking; exit 3")]})
d = new_deployment(last)
st = steps_of(d) if d else {}
ok("a failing host check fails the deployment", d is not None and
   d["state"] == "failed" and "check up failed (exit 3)" in
   (st.get("alpha", {}).get("error") or ""), json.dumps(d) +
   json.dumps(st))
ok("the next host is untouched (pending, not activated)",
   st.get("beta", {}).get("state") == "pending" and
   len(H["beta"].goals()) == beta_goals, json.dumps(st))

nt = wait_until(lambda: notes_of(d["id"]) if d else None, 15) or []
ok("a failed plan deployment is notified", [e for e, b in nt] == ["failed"]
   and "check up failed" in nt[0][1]["deployment"]["reason"], json.dumps(nt))

# 4b. An HTTP check that never answers 2xx fails the step at its timeout.
last = last_id()
push({"alpha": "v4b"}, kernels={"beta": "k2"},
     checks={"alpha": [("web", HEALTH + "down", 3)]})
d = new_deployment(last)
st = steps_of(d) if d else {}
err = st.get("alpha", {}).get("error") or ""
ok("an HTTP check without a 2xx answer within its timeout fails the step",
   d is not None and d["state"] == "failed" and
   "check web failed: no 2xx answer within 3s, the last: HTTP 503" in err
   and st.get("beta", {}).get("state") == "pending", json.dumps(st))
ok("the answer shown is redacted", "hunter2" not in err and
   "hunter2" not in n.logtext(), err)

# 5. A wrong host key is refused before anything runs.
last = last_id()
gamma_goals = len(H["gamma"].goals())
accepted = open(H["gamma"].log).read().count("Accepted publickey")
push({"alpha": "v5", "beta": "v5", "gamma": "v5"},
     keys={"gamma": WRONG_KEY}, kernels={"beta": "k2"})
d = new_deployment(last)
st = steps_of(d) if d else {}
ok("a wrong host key is refused before anything runs",
   d is not None and d["state"] == "failed" and
   "host key" in (st.get("gamma", {}).get("error") or "") and
   len(H["gamma"].goals()) == gamma_goals and
   open(H["gamma"].log).read().count("Accepted publickey") == accepted,
   json.dumps(st))

# 6. A host down mid-phase: the phase stops there.
last = last_id()
H["beta"].stop()
gamma_goals = len(H["gamma"].goals())
push({"alpha": "v6", "beta": "v6", "gamma": "v6"}, kernels={"beta": "k2"})
sys6 = hostlib.build(daemon, mk, "alpha", "v6")
d = new_deployment(last)
st = steps_of(d) if d else {}
ok("a host down mid-phase fails its step; the hosts after it stay "
   "untouched", d is not None and d["state"] == "failed" and
   st["alpha"]["state"] == "succeeded" and H["alpha"].current() == sys6 and
   st["beta"]["state"] == "failed" and "connect" in
   (st["beta"]["error"] or "") and st["gamma"]["state"] == "pending" and
   len(H["gamma"].goals()) == gamma_goals, json.dumps(st))
H["beta"].start()

# 7. Connectivity-safe activation: a system that cuts SSH rolls back.
last = last_id()
before = H["gamma"].current()
push({"alpha": "v6", "beta": "v7", "gamma": "v7"}, kernels={"beta": "k2"},
     bad=("gamma",))
d = new_deployment(last, 150)
st = steps_of(d) if d else {}
ok("after a switch nops must reach the host again: the step fails",
   d is not None and d["state"] == "failed" and
   "not reachable again" in (st.get("gamma", {}).get("error") or ""),
   json.dumps(st))
back = wait_until(lambda: H["gamma"].current() == before, 20)
ok("the on-host watchdog rolled the host back to the previous system",
   back and H["gamma"].goals()[-1:] and
   H["gamma"].goals()[-1][:2] == ("switch", before) and
   H["gamma"].profile() != hostlib.build(daemon, mk, "gamma", "v7",
                                         bad=True),
   str(H["gamma"].goals()[-3:]) + " " + str(H["gamma"].current()))
H["gamma"].stop()
H["gamma"].start()

# 8. kill -9 of the master mid-phase: resumed, no host activated twice.
last = last_id()
push({"alpha": "v8", "beta": "v8", "gamma": "v8"}, kernels={"beta": "k2"},
     checks={"beta": [("slow", "sleep 3")]})
sys8 = {h: hostlib.build(daemon, mk, h, "v8",
                         kernel="k2" if h == "beta" else "k1") for h in H}


def beta_checking():
    ds = [x for x in n.plan_deployments() if x["id"] > last]
    if not ds:
        return None
    s = steps_of(ds[-1])
    return ds[-1] if s.get("beta", {}).get("step") == "check" and \
        s["beta"]["state"] == "running" else None


mid = wait_until(beta_checking, 150, 0.1)
ok("the deployment reached beta's checks", mid is not None,
   n.logtext()[-2000:])
n.proc.send_signal(signal.SIGKILL)
n.proc.wait()
# The workers go when the master does.
time.sleep(1)
n.restart()
d = new_deployment(last, 150)
count = {h: len([x for x in H[h].goals() if x[1] == sys8[h]]) for h in H}
ok("after kill -9 the deployment resumes and completes",
   d is not None and d["state"] == "completed", json.dumps(d) +
   n.logtext()[-2000:])
ok("no host was activated twice", count == {"alpha": 1, "beta": 1,
                                            "gamma": 1}, str(count))

# 9. Preflight tests run before the first phase; a failing one stops it.
last = last_id()
alpha_goals = len(H["alpha"].goals())
push({"alpha": "v10"}, kernels={"beta": "k2"},
     tests='{ name = "vm"; build = mk { name = "vmtest"; version = "1"; '
     '}; } { name = "smoke"; host = "beta"; command = "exit 4"; }')
d = new_deployment(last)
st = n.steps(d["id"]) if d else None
pre = [x for x in st["steps"] if x["phase_index"] == -1] if st else []
ok("preflight tests run first: a build, then a command that fails",
   d is not None and d["state"] == "failed" and
   [(x["host"], x["state"]) for x in pre] == [("vm", "succeeded"),
                                              ("smoke", "failed")] and
   "test smoke" in (d.get("reason") or ""), json.dumps(st))
ok("a failing preflight test stops the deployment before any host",
   len(H["alpha"].goals()) == alpha_goals, str(H["alpha"].goals()[-2:]))

# 10. Approval: bound to the spec hash.
last = last_id()
push({"alpha": "v9"}, policy="approval", kernels={"beta": "k2"})
d = new_deployment(last)
ok("policy approval: the deployment waits", d is not None and
   d["state"] == "pending_approval", json.dumps(d))
if d:
    st, j = n.api("POST", "/api/v1/deployments/%d/actions/approve" %
                  d["id"], {"spec_hash": "0" * 64})
    nt = wait_until(lambda: notes_of(d["id"]), 15) or []
    ok("a plan deployment waiting for approval is notified",
       [e for e, b in nt] == ["pending-approval"], json.dumps(nt))
    ok("a stale spec hash is refused", st == 409, str(j))
    st, j = n.api("POST", "/api/v1/deployments/%d/actions/approve" %
                  d["id"], {"spec_hash": d["spec_hash"]})
    done = wait_until(lambda: [x for x in n.plan_deployments()
                               if x["id"] == d["id"] and
                               x["state"] == "completed"], 60)
    ok("approved with its spec hash, it deploys", st == 200 and
       done is not None and H["alpha"].current() ==
       hostlib.build(daemon, mk, "alpha", "v9"), str(j))

# 11. EachHost: a declared operation on every host, at most limit at once.
st, j = n.api("POST", "/api/v1/plans/hosts/operations/stamp", {"limit": 2})
spans = []
for h in H.values():
    t = [float(x.split()[1]) for x in h.file("run/nops-each").splitlines()]
    spans += [(t[i], t[i + 1]) for i in range(0, len(t) - 1, 2)]
most = max(sum(1 for a, b in spans if a <= s0 < b) for s0, _ in spans) \
    if spans else 0
ok("EachHost runs the operation on every host of the plan",
   st == 200 and j["succeeded"] == 3 and j["error"] is None and
   all(x["output"] == "stamped\n" for x in j["hosts"]) and
   len(spans) == 3, json.dumps(j))
ok("EachHost: never more hosts at once than the limit", 1 <= most <= 2,
   str(spans))
st, j = n.api("POST", "/api/v1/plans/hosts/operations/greet",
              {"limit": 3, "input": {"name": "nops"}})
ok("EachHost: the input reaches the command on stdin, as JSON",
   st == 200 and all(json.loads(x["output"]) == {"name": "nops"}
                     for x in j["hosts"]), json.dumps(j))
st, j = n.api("POST", "/api/v1/plans/hosts/operations/greet",
              {"input": {"name": 7}})
ok("EachHost: input the schema refuses runs nowhere", st == 422 and
   "/name" in j["error"]["message"], json.dumps(j))
rc, out, err = n.ctl("each-host", "hosts", "probe")
ok("EachHost stops starting hosts at the first failure (nopsctl)",
   rc == 1 and "alpha" in out and "succeeded" in out and
   "exit 5" in out and "not_started" in out, out + err)
st, j = n.api("POST", "/api/v1/plans/hosts/operations/reboot", {})
ok("EachHost runs only operations the plan declares (404 when no host "
   "declares it)", st == 404 and j["error"]["code"] == "not_found" and
   "declares an operation reboot" in j["error"]["message"], json.dumps(j))
rc, out, err = n.ctl("each-host", "hosts", "greet", "--host", "gamma",
                     "--host", "beta", "--input", '{"name": "g"}')
ok("nopsctl each-host --host: only the hosts named",
   rc == 0 and "gamma" in out and "beta" in out and "alpha" not in out,
   out + err)
st, runs = n.api("GET", "/api/v1/plans/hosts/operations/runs")
items = runs.get("items", []) if st == 200 else []
ok("EachHost's run log: each host's run, exit code, output, who, when",
   len([r for r in items if r["operation"] == "stamp"]) == 3 and
   all(r["actor"] and r["started_at"] and r["ended_at"] and
       r["deployment"] and r["state"] in ("succeeded", "failed")
       for r in items) and
   [r["exit_code"] for r in items if r["operation"] == "probe"] == [5, 0] and
   any(r["output"] == "stamped\n" for r in items), json.dumps(runs))
rc, out, err = n.ctl("host-runs", "hosts", "gamma")
ok("nopsctl host-runs REPOSITORY HOST", rc == 0 and "greet" in out and
   "stamp" in out and "alpha" not in out, out + err)

# 12. A host's operations are its actions (scope instance).
st, j = n.api("GET", "/api/v1/hosts/hosts/beta")
acts = {a["id"]: a for a in j.get("actions", [])} if st == 200 else {}
g = acts.get("beta.greet", {})
ok("a host's detail lists its operations as actions of the seed's shape",
   sorted(acts) == ["beta.greet", "beta.probe", "beta.secret",
                    "beta.stamp"] and g.get("scope") == "instance" and
   g.get("kind") == "operation" and g.get("enabled") is True and
   g.get("input_schema", {}).get("required") == ["name"] and
   g.get("group") == "greet" and g.get("sensitive") is False and
   acts["beta.secret"]["sensitive"] is True and
   all(k in g for k in ("title", "description")), json.dumps(j))
st, j = n.api("POST", "/api/v1/hosts/hosts/beta/actions/beta.greet",
              {"input": {"name": "b"}})
ok("the generic procedure runs the operation on that host",
   st == 200 and json.loads(j["output"]) == {"name": "b"} and
   j["exit_code"] == 0 and j["host"] == "beta", json.dumps(j))
st, j = n.api("POST", "/api/v1/hosts/hosts/beta/actions/beta.probe", {})
ok("a non-zero exit is a result", st == 200 and j["exit_code"] == 5 and
   j["state"] == "failed", json.dumps(j))
st, j = n.api("POST", "/api/v1/hosts/hosts/beta/actions/beta.greet",
              {"input": {"name": 1}})
st2, j2 = n.api("POST", "/api/v1/hosts/hosts/beta/actions/beta.reboot", {})
ok("bad input: invalid_configuration; no such operation: not_found",
   st == 422 and j["error"]["code"] == "invalid_configuration" and
   st2 == 404 and j2["error"]["code"] == "not_found", json.dumps([j, j2]))
st, j = n.api("POST", "/api/v1/hosts/hosts/alpha/actions/alpha.secret", {})
_, run = n.api("GET", "/api/v1/plans/hosts/operations/runs/%s" %
               j.get("id"))
ok("a sensitive run's output is in the answer only, never stored",
   st == 200 and j["output"] == "s3cr3t-42\n" and run["output"] is None
   and run["sensitive"] is True and "s3cr3t-42" not in n.logtext() and
   b"s3cr3t-42" not in open(n.db + "/nops.db", "rb").read(),
   json.dumps([j, run]))
rc, out, err = n.ctl("action", "host:hosts/gamma", "gamma.greet",
                     "--input", '{"name": "c"}')
ok("nopsctl action host:REPOSITORY/HOST and the audit event",
   rc == 0 and '"name": "c"' in out.replace('":"', '": "') and
   "operation.gamma.greet" in subprocess.run(
       ["sqlite3", "-readonly", "%s/nops.db" % n.db,
        "SELECT action FROM events"], stdout=subprocess.PIPE,
       text=True).stdout, out + err)

st, j = n.api("GET", "/api/v1/plans/hosts/operations/runs?host=beta")
if gitlib.test_hooks_built():
    ops = [r["operation"] for r in j.get("items", [])] if st == 200 else []
    ok("the run log is bounded per host: the oldest runs go",
       len(ops) == 5 and "stamp" not in ops and ops[0] == "probe",
       json.dumps(j))
else:
    gitlib.skip("the run log is bounded per host", gitlib.NO_TEST_HOOKS)
st, j = n.api("GET", "/api/v1/plans/hosts")
each = {a["id"]: a for a in j.get("actions", [])} if st == 200 else {}
st, page = n.curl("GET", "/hosts")
st2, hpage = n.curl("GET", "/hosts/hosts/beta")
ok("the dashboard draws EachHost and each host's operations from the "
   "actions lists (no per-action code)",
   sorted(each) == ["greet", "probe", "secret", "stamp"] and
   each["greet"]["kind"] == "operation" and each["stamp"]["enabled"] and
   st == 200 and 'action="/hosts/hosts/actions/stamp"' in page and
   st2 == 200 and 'action="/hosts/hosts/beta/actions/beta.greet"' in hpage
   and 'name="in.name"' in hpage, json.dumps(each) + str(hpage)[:1500])

n.stop()
for h in H.values():
    h.stop()
sys.exit(1 if gitlib.failures else 0)
