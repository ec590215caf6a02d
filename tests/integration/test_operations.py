"""Operations end to end, against nomadsim (raw_exec tasks run for real),
real git and the real daemon: the actions a job lists for its deployed
revision, a run with valid input (exit code, output, the input as the
dispatch payload), a non-zero exit code as a result, input the schema
refuses (nothing dispatched), a run past its timeout (stopped), a
sensitive run (output shown once, never stored or logged), the input
kept out of the store and the log, the 100-run cap, the ACL, the audit
event, the errors of seed 003's table, nopsctl and the run log's API."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import setup, job_hcl, ok, wait_until  # noqa: E402
import gitlib  # noqa: E402
from gitlib import NOPSCTL  # noqa: E402

# The timeout case shortens the run timeout (NOPS_TEST_OPERATION_TIMEOUT),
# a test hook: without it that case is skipped, saying so.
HOOKS = gitlib.test_hooks_built()

INPUT_MARK = "input-marker-7Qx9"
SECRET = "sensitive-output-Zk42wq"


def op_hcl(jid, serves, script, schema=None, sensitive=False, extra=""):
    meta = ['    nops_role = "operation"',
            '    nops_operation_of = "%s"' % serves]
    if schema is not None:
        meta.append("    nops_input_schema = %s" % json.dumps(
            json.dumps(schema)))
    if sensitive:
        meta.append('    nops_sensitive = "true"')
    if extra:
        meta.append(extra)
    return """job "%s" {
  type = "batch"
  datacenters = ["dc1"]
  meta {
%s
  }
  parameterized {
    payload = "optional"
    meta_optional = ["nops_run", "nops_job", "nops_operation"]
  }
  group "o" {
    restart {
      attempts = 0
      mode = "fail"
    }
    reschedule {
      attempts = 0
      unlimited = false
    }
    task "run" {
      driver = "raw_exec"
      dispatch_payload {
        file = "input.json"
      }
      config {
        command = "/bin/sh"
        args = ["-c", %s]
      }
    }
  }
}
""" % (jid, "\n".join(meta), json.dumps(script))


ECHO_SCHEMA = {"type": "object", "required": ["name"],
               "additionalProperties": False,
               "properties": {"name": {"type": "string", "minLength": 1},
                              "count": {"type": "integer", "maximum": 5}}}

# An input schema in a file of its own, below the job file's directory.
FILED_SCHEMA = {"type": "object", "required": ["table"],
                "additionalProperties": False,
                "properties": {"table": {"type": "string",
                                         "pattern": "^[a-z]+$"}}}

FILES = {
    "nomad/db.nomad.hcl": job_hcl(
        "db", policy="auto", count=1, extra_meta='    nops_operations = '
        '"db-echo, db-fail, db-slow, db-secret, db-broken, db-filed, '
        'db-nofile, db-badfile, db-wait, db-long"'),
    "nomad/db-long.nomad.hcl": op_hcl(
        "db-long", "db", "sleep 15; echo long-done"),
    "nomad/db-wait.nomad.hcl": op_hcl(
        "db-wait", "db", "sleep 5; echo waited-out"),
    "nomad/db-filed.nomad.hcl": op_hcl(
        "db-filed", "db", 'echo "filed $(cat "$NOMAD_TASK_DIR/input.json")"',
        extra='    nops_input_schema_file = "schemas/db-filed.schema.json"'),
    "nomad/schemas/db-filed.schema.json": json.dumps(FILED_SCHEMA,
                                                     indent=2) + "\n",
    "nomad/db-nofile.nomad.hcl": op_hcl(
        "db-nofile", "db", "exit 0",
        extra='    nops_input_schema_file = "db-nofile.schema.json"'),
    "nomad/db-badfile.nomad.hcl": op_hcl(
        "db-badfile", "db", "exit 0",
        extra='    nops_input_schema_file = "db-badfile.schema.json"'),
    # not JSON on its third line
    "nomad/db-badfile.schema.json": '{\n  "type": "object",\n'
                                    '  "properties": {,\n}\n',
    "nomad/db-echo.nomad.hcl": op_hcl(
        "db-echo", "db", 'echo "hello from run $NOMAD_META_nops_run"; '
        'echo "payload $(wc -c < "$NOMAD_TASK_DIR/input.json") bytes"; '
        'echo to-stderr >&2',
        ECHO_SCHEMA),
    "nomad/db-fail.nomad.hcl": op_hcl(
        "db-fail", "db", "echo failing; exit 3"),
    "nomad/db-slow.nomad.hcl": op_hcl("db-slow", "db", "sleep 60"),
    "nomad/db-secret.nomad.hcl": op_hcl(
        # printed in two halves: the job file must not hold it whole
        "db-secret", "db", "printf '%%s%%s\\n' '%s' '%s'" % (
            SECRET[:9], SECRET[9:]), sensitive=True),
    "nomad/db-broken.nomad.hcl": op_hcl(
        "db-broken", "db", "exit 0",
        {"$ref": "http://example.com/remote.json"}),
}


def children(sim, rev_prefix):
    st, j = sim.call("GET", "/v1/jobs?prefix=%s" % rev_prefix)
    return [x["ID"] for x in (j or []) if "/dispatch-" in x["ID"]]


def db_rows(nops, sql, args=()):
    c = sqlite3.connect(os.path.join(nops.db, "nops.db"), timeout=10)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


def tcp(nops, method, path, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (
        nops.http_port, path), data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


class Clock:
    """nomadsim's clock stands still in tests (--speed 0): move it a
    second every 0.2 s while runs are under way, as time passes in a
    real cluster (a raw_exec task still ends when its process does)."""

    def __init__(self, sim):
        self.sim = sim
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.wait(0.2):
            try:
                self.sim.advance(1)
            except Exception:
                pass


def schema_errors(item, schema, where):
    """The ways item breaks the OpenAPI schema (the subset ActionItem
    uses: type, required, properties, additionalProperties, enum,
    oneOf), as strings; [] when it agrees."""
    errs = []
    types = {"object": dict, "string": str, "boolean": bool,
             "integer": int, "array": list}
    if "oneOf" in schema:
        n = sum(1 for s in schema["oneOf"]
                if not schema_errors(item, s, where))
        if n != 1:
            errs.append("%s: matches %d of oneOf" % (where, n))
    t = schema.get("type")
    if t and not isinstance(item, types[t]):
        return errs + ["%s: not %s" % (where, t)]
    if "enum" in schema and item not in schema["enum"]:
        errs.append("%s: %r not in %r" % (where, item, schema["enum"]))
    if t == "object" and "properties" in schema:
        for k in schema.get("required", []):
            if k not in item:
                errs.append("%s: lacks %s" % (where, k))
        for k, v in item.items():
            if k in schema["properties"]:
                errs += schema_errors(v, schema["properties"][k],
                                      where + "." + k)
            elif schema.get("additionalProperties") is False:
                errs.append("%s: %s is not in the document" % (where, k))
    return errs


def case_errors():
    """The rows of seed 003's operations table the main case does not
    reach, with the clock standing still so that deployments wait."""
    files = {
        "nomad/api.nomad.hcl": job_hcl(
            "api", policy="auto", count=1,
            extra_meta='    nops_operations = "api-x, api-refused"'),
        "nomad/api-x.nomad.hcl": op_hcl("api-x", "api", "echo x"),
        # Nomad refuses its dispatch: a meta key nops never sends.
        "nomad/api-refused.nomad.hcl": op_hcl(
            "api-refused", "api", "exit 0").replace(
                "meta_optional = [", 'meta_required = ["customer"]\n'
                "    meta_optional = ["),
        "nomad/idle.nomad.hcl": job_hcl(
            "idle", policy="none", count=1,
            extra_meta='    nops_operations = "idle-x"'),
        "nomad/idle-x.nomad.hcl": op_hcl("idle-x", "idle", "echo x"),
    }
    env, sim, remote, nops = setup(files)
    try:
        # The first detection cycle must have found the job in git first.
        wait_until(lambda: nops.api("GET", "/api/v1/jobs/default/idle")[0]
                   == 200, 15)
        st, j = nops.job_action("idle", "idle.x")
        ok("errors: nothing deployed: conflict (409)", st == 409 and
           j["error"]["code"] == "conflict" and "nothing deployed" in
           j["error"]["message"], (st, j))
        wait_until(lambda: nops.active("api") is not None, 15)
        did = nops.active("api")
        nops.wait_deploy_state(did, ("completed", "failed"), 30,
                               sim_step=30)
        nops.push_and_fetch(remote, {"nomad/api.nomad.hcl": files[
            "nomad/api.nomad.hcl"].replace("nginx:1.26", "nginx:1.27")})
        wait_until(lambda: nops.active("api") not in (None, did), 15)
        d2 = nops.active("api")
        nops.wait_deploy_state(d2, "waiting_health", 15)
        st, j = nops.job_action("api", "api.x")
        ok("errors: a deployment of the job under way: queue_full (429)",
           st == 429 and j["error"]["code"] == "queue_full", (st, j))
        nops.wait_deploy_state(d2, ("completed", "failed"), 30,
                               sim_step=30)
        n = len(children(sim, "api-refused-"))
        st, j = nops.job_action("api", "api.refused")
        ok("errors: the command did not start (Nomad refused the "
           "dispatch): runtime_error (500)", st == 500 and
           j["error"]["code"] == "runtime_error" and "did not start" in
           j["error"]["message"], (st, j))
        ok("errors: and nothing runs", len(children(sim, "api-refused-"))
           == n)
        st, j = nops.job_action("api", "suspend", {"reason": "test"})
        st, j = nops.job_action("api", "api.x")
        ok("errors: the job is suspended: conflict (409)", st == 409 and
           j["error"]["code"] == "conflict" and "suspended" in
           j["error"]["message"], (st, j))
    finally:
        env.cleanup()


def main():
    # The webworker's idle timeout is 2 s here (30 s in use): the runs
    # below that take longer wait past it in seconds.
    env, sim, remote, nops = setup(
        FILES, extra=['policy "viewer" {', '\tnamespace "*" { read }', '}',
                      'policy "runner" {',
                      '\tnamespace "*" { read operate }', '}'],
        hook="webworker:idle-timeout:2",
        extra_env={"NOPS_TEST_OPERATION_TIMEOUT": "8"})
    wait_until(lambda: nops.active("db") is not None or
               nops.job_state("db") == "in_sync", 15)
    did = nops.active("db")
    if did is not None:
        nops.wait_deploy_state(did, ("completed", "failed"), 30, sim_step=30)
    ok("setup: the job's deployment completed",
       did is not None and nops.deployment(did)["state"] == "completed",
       nops.deployment(did) if did else nops.job("db"))

    clock = Clock(sim)
    acts = {a["id"]: a for a in nops.job("db")["actions"]}
    ok("list: the deployed revision's operations, as <job>.<operation>",
       all(("db." + n) in acts for n in ("echo", "fail", "slow", "secret",
                                         "broken")), sorted(acts))
    a = acts.get("db.echo", {})
    ok("list: an operation is kind operation with its group, schema and "
       "sensitive", a.get("kind") == "operation" and a.get("group") == "echo"
       and a.get("input_schema") == ECHO_SCHEMA and a.get("sensitive") is
       False and a.get("enabled") is True, a)
    ok("list: a sensitive operation says so",
       acts.get("db.secret", {}).get("sensitive") is True,
       acts.get("db.secret"))
    ok("list: an operation whose schema cannot be used is disabled, with "
       "why", acts.get("db.broken", {}).get("enabled") is False and
       "cannot do" in acts.get("db.broken", {}).get("disabled_reason", ""),
       acts.get("db.broken"))

    # The actions as served agree with the OpenAPI document's ActionItem.
    st, doc = nops.api("GET", "/api/v1/openapi.json")
    item = doc["components"]["schemas"]["ActionItem"] if st == 200 else {}
    errs = []
    for a in nops.job("db")["actions"]:
        errs += schema_errors(a, item, "job db: " + a.get("id", "?"))
    for a in nops.deployment(did)["actions"]:
        errs += schema_errors(a, item, "deployment: " + a.get("id", "?"))
    ok("openapi: every action the job and deployment details serve agrees "
       "with ActionItem (no field it does not list)", st == 200 and
       item.get("additionalProperties") is False and not errs, errs)
    ok("openapi: ActionItem lists group, sensitive and input_schema",
       all(k in item.get("properties", {}) for k in
           ("group", "sensitive", "input_schema")), item)
    detail = doc["components"]["schemas"]
    ok("openapi: JobDetail and DeploymentDetail give actions as ActionItem",
       all('"#/components/schemas/ActionItem"' in json.dumps(detail[n])
           for n in ("JobDetail", "DeploymentDetail")))

    # A schema in a file next to the job.
    a = acts.get("db.filed", {})
    ok("schema file: the action's input_schema is the file's schema",
       a.get("input_schema") == FILED_SCHEMA and a.get("enabled") is True,
       a)
    st, j = nops.job_action("db", "db.filed", {"input": {"table": "BAD"}})
    ok("schema file: input it refuses is invalid_configuration (422)",
       st == 422 and j["error"]["code"] == "invalid_configuration" and
       "/table" in j["error"]["message"], (st, j))
    st, j = nops.job_action("db", "db.filed", {"input": {"table": "users"}})
    ok("schema file: input it allows runs", st == 200 and
       j.get("exit_code") == 0 and '"table":"users"' in (
           j.get("output") or ""), (st, j))
    a = acts.get("db.nofile", {})
    ok("schema file: a missing file disables the operation, naming "
       "repository:path", a.get("enabled") is False and
       "nomad/db-nofile.schema.json: no such file" in
       a.get("disabled_reason", ""), a)
    a = acts.get("db.badfile", {})
    ok("schema file: a file that is not JSON is named with its line and "
       "column", a.get("enabled") is False and
       "nomad/db-badfile.schema.json:3:" in a.get("disabled_reason", "")
       and "not JSON" in a.get("disabled_reason", ""), a)
    st, j = nops.job_action("db", "db.badfile")
    ok("schema file: running it is invalid_configuration with the same "
       "error", st == 422 and "db-badfile.schema.json:3:" in
       j["error"]["message"], (st, j))

    # A run with valid input.
    st, j = nops.job_action("db", "db.echo", {"input": {
        "name": INPUT_MARK, "count": 2}})
    ok("run: valid input answers 200 with exit code 0",
       st == 200 and j.get("exit_code") == 0 and j.get("state") ==
       "succeeded", (st, j))
    out = (j or {}).get("output") or ""
    sent = json.dumps({"count": 2, "name": INPUT_MARK}, sort_keys=True,
                      separators=(",", ":")).encode()
    ok("run: the output holds stdout and stderr, and the input came as "
       "the payload", "hello from run %s" % j.get("id") in out and
       "payload %d bytes" % len(sent) in out and
       "to-stderr" in out, out)
    echo_run = (j or {}).get("id")

    # Input the schema refuses: nothing is dispatched.
    before = children(sim, "db-echo-")
    st, j = nops.job_action("db", "db.echo", {"input": {"name": 5}})
    ok("schema: a bad value is invalid_configuration (422) naming its path",
       st == 422 and j["error"]["code"] == "invalid_configuration" and
       "/name" in j["error"]["message"], (st, j))
    st, j = nops.job_action("db", "db.echo", {"input": {"name": "x",
                                                         "extra": 1}})
    ok("schema: a property the schema does not allow is refused",
       st == 422 and "extra" in j["error"]["message"], (st, j))
    st, j = nops.job_action("db", "db.echo", {"input": {}})
    ok("schema: a missing required property is refused",
       st == 422 and "name" in j["error"]["message"], (st, j))
    ok("schema: nothing was dispatched for refused input",
       children(sim, "db-echo-") == before, (before,
                                             children(sim, "db-echo-")))

    st, j = nops.job_action("db", "db.fail")
    ok("run: a non-zero exit code is a result (200), not an error",
       st == 200 and j.get("exit_code") == 3 and j.get("state") == "failed"
       and "failing" in (j.get("output") or ""), (st, j))

    if HOOKS:
        st, j = nops.job_action("db", "db.slow")
        ok("run: past its timeout the run is stopped and says so",
           st == 200 and j.get("state") == "timed_out" and
           j.get("exit_code") is None and
           "timed out" in (j.get("error") or ""), (st, j))
        slow = [c for c in children(sim, "db-slow-")]
        ok("run: the timed-out run is stopped in Nomad",
           slow and all((sim.job(c) or {}).get("Stop") for c in slow), slow)
    else:
        gitlib.skip("run: past its timeout the run is stopped, in Nomad "
                    "too", gitlib.NO_TEST_HOOKS)

    st, j = nops.job_action("db", "db.secret")
    ok("sensitive: the answer shows the output once",
       st == 200 and SECRET in (j.get("output") or ""), (st, j))
    sec_run = (j or {}).get("id")
    st, d = nops.api("GET", "/api/v1/jobs/default/db/operations/runs/%s" %
                     sec_run)
    ok("sensitive: the run log keeps no output", st == 200 and
       d["output"] is None and d["sensitive"] is True and
       d["exit_code"] == 0, (st, d))

    st, j = nops.job_action("db", "db.broken")
    ok("errors: the deployed revision cannot do it: invalid_configuration",
       st == 422 and j["error"]["code"] == "invalid_configuration",
       (st, j))
    st, j = nops.job_action("db", "db.nosuch")
    ok("errors: no such operation: not_found", st == 404 and
       j["error"]["code"] == "not_found", (st, j))
    st, j = nops.job_action("nosuch", "nosuch.echo")
    ok("errors: no such job: not_found", st == 404, (st, j))

    # ACL: a read-only token may list, not run.
    rc, tok, err = nops.ctl("token", "create", "viewer-t", "--policy",
                            "viewer")
    tok = tok.strip().splitlines()[-1] if rc == 0 else ""
    n_before = len(db_rows(nops, "SELECT id FROM operation_runs"))
    st, j = tcp(nops, "POST", "/api/v1/jobs/default/db/actions/db.echo",
                {"input": {"name": "acl"}}, tok)
    ok("acl: running an operation needs operate (403)", st == 403, (st, j))
    ok("acl: a refused run leaves no run", len(db_rows(
        nops, "SELECT id FROM operation_runs")) == n_before)
    st, j = tcp(nops, "GET", "/api/v1/jobs/default/db/operations/runs",
                None, tok)
    ok("acl: read may list the runs", st == 200 and len(j["items"]) >= 4,
       (st, j))
    acts = {a["id"]: a for a in tcp(nops, "GET", "/api/v1/jobs/default/db",
                                    None, tok)[1]["actions"]}
    ok("acl: the list says operate is needed",
       acts["db.echo"]["enabled"] is False and "operate" in
       acts["db.echo"]["disabled_reason"], acts.get("db.echo"))

    ev = db_rows(nops, "SELECT actor, action, target, detail FROM events "
                 "WHERE action LIKE 'operation.%'")
    ok("audit: each run has its event operation.<job>.<op>",
       ("root", "operation.db.echo", "job/default/db", "run %s" % echo_run)
       in [tuple(x) for x in ev] and any(x[1] == "operation.db.secret"
                                         for x in ev), ev)

    # The dashboard: the form from the schema, the run's result page.
    st, html = nops.curl("GET", "/jobs/default/db")
    ok("dashboard: the job page draws the operation's form from its "
       "schema", st == 200 and 'action="/jobs/default/db/actions/db.echo"'
       in html and 'name="in.name"' in html and 'name="in.n.count"' in html
       and 'data-group="echo"' in html, html[-3000:] if st == 200 else st)
    st, html = nops.curl("POST", "/jobs/default/db/actions/db.echo",
                         "in.name=from-the-page&in.n.count=1",
                         "application/x-www-form-urlencoded")
    ok("dashboard: running it shows the run: exit code and output",
       st == 200 and 'id="exit-code">exit code 0' in html and
       "hello from run" in html, (st, html[-1500:]))
    st, html = nops.curl("POST", "/jobs/default/db/actions/db.secret", "",
                         "application/x-www-form-urlencoded")
    ok("dashboard: a sensitive run's output is shown once, saying so",
       st == 200 and SECRET in html and "shown this once" in html,
       (st, html[-1500:]))

    # Neither the input nor the sensitive output is in the store or log.
    dbdir = nops.db
    blob = b""
    for f in os.listdir(dbdir):
        if os.path.isfile(os.path.join(dbdir, f)):
            with open(os.path.join(dbdir, f), "rb") as fh:
                blob += fh.read()
    ok("store: the input is nowhere in the database files",
       INPUT_MARK.encode() not in blob)
    ok("store: the sensitive output is nowhere in the database files",
       SECRET.encode() not in blob)
    log = nops.logtext()
    ok("log: neither the input nor the sensitive output is logged",
       INPUT_MARK not in log and SECRET not in log)

    # nopsctl
    r = subprocess.run([NOPSCTL, "-s", nops.sock, "action", "db", "db.echo",
                        "--input", '{"name": "from-ctl"}'],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    ok("nopsctl action: runs an operation and prints its exit code and "
       "output", r.returncode == 0 and "exit code 0" in r.stdout and
       "hello from run" in r.stdout, (r.returncode, r.stdout, r.stderr))
    r = subprocess.run([NOPSCTL, "-s", nops.sock, "action", "db", "db.fail"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    ok("nopsctl action: a failed run exits 1 with its exit code",
       r.returncode == 1 and "exit code 3" in r.stdout, (r.returncode,
                                                         r.stdout, r.stderr))
    rc, out, err = nops.ctl("runs", "db")
    ok("nopsctl runs: the run log as a table",
       rc == 0 and "db.fail" in out and "db.secret" in out and
       ("timed_out" in out or not HOOKS), (rc, out, err))
    rc, out, err = nops.ctl("runs", "default/db", str(sec_run))
    ok("nopsctl runs JOB RUN: one run; a sensitive one shows no output",
       rc == 0 and SECRET not in out and "not stored" in out,
       (rc, out, err))
    # The cap: 100 runs per job.
    c = sqlite3.connect(os.path.join(nops.db, "nops.db"), timeout=10)
    with c:
        for i in range(110):
            c.execute("INSERT INTO operation_runs (deployment_id, namespace,"
                      " job, operation, actor, started_at, ended_at,"
                      " exit_code, state) VALUES (?, 'default', 'db',"
                      " 'echo', 'filler', ?, ?, 0, 'succeeded')",
                      (did, int(time.time()), int(time.time())))
    c.close()
    st, j = nops.job_action("db", "db.echo", {"input": {"name": "cap"}})
    rows = db_rows(nops, "SELECT id FROM operation_runs WHERE job = 'db' "
                   "ORDER BY id DESC")
    ok("cap: the log keeps the last 100 runs of a job, the newest first",
       st == 200 and len(rows) == 100 and rows[0][0] == j.get("id"),
       (st, len(rows)))
    st, page = nops.api("GET", "/api/v1/jobs/default/db/operations/runs"
                        "?limit=60")
    st2, page2 = nops.api("GET", "/api/v1/jobs/default/db/operations/runs"
                          "?limit=60&cursor=" + str(page["next"]))
    ok("api: the run list pages with limit and cursor",
       st == 200 and len(page["items"]) == 60 and page["next"] and
       st2 == 200 and len(page2["items"]) == 40 and page2["next"] is None,
       (st, st2))

    # Waits past the webworker's idle timeout (2 s with the test hook):
    # first, that an idle keep-alive connection is indeed cut after it.
    if HOOKS:
        import http.client
        hc = http.client.HTTPConnection("127.0.0.1", nops.http_port,
                                        timeout=20)
        hc.request("GET", "/api/v1/openapi.json")
        hc.getresponse().read()
        t0 = time.monotonic()
        try:
            cut = hc.sock.recv(1) == b""
        except OSError:
            cut = False
        idle = time.monotonic() - t0
        hc.close()
        ok("idle: an idle keep-alive connection is closed after the test's "
           "short idle timeout (not the 30 s one)", cut and idle < 15, idle)
    else:
        gitlib.skip("idle: runs wait past a 2 s idle timeout (without the "
                    "hook the timeout is 30 s and the 5 s runs below do "
                    "not pass it)", gitlib.NO_TEST_HOOKS)
    rc, tok, err = nops.ctl("token", "create", "runner-t", "--policy",
                            "runner")
    tok = tok.strip().splitlines()[-1] if rc == 0 else ""
    st, j = tcp(nops, "POST", "/api/v1/jobs/default/db/actions/db.wait",
                {}, tok)
    ok("idle: a run of 5 s over TCP waits past the idle timeout and gets "
       "its answer", st == 200 and j.get("exit_code") == 0 and
       "waited-out" in (j.get("output") or ""), (st, j))
    r = subprocess.run([NOPSCTL, "-s", nops.sock, "action", "db", "db.wait"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    ok("idle: nopsctl action over the control socket waits past it too",
       r.returncode == 0 and "waited-out" in r.stdout,
       (r.returncode, r.stdout, r.stderr))

    # A run under way when nopsd is killed is found again by its token.
    def run_wait():
        try:
            nops.job_action("db", "db.wait")
        except Exception:
            pass        # the daemon is killed under it
    kids = len(children(sim, "db-wait-"))
    t = threading.Thread(target=run_wait, daemon=True)
    t.start()
    ok("restart: the run is dispatched",
       wait_until(lambda: len(children(sim, "db-wait-")) > kids, 20),
       nops.logtext()[-2000:])
    wait_row = db_rows(nops, "SELECT id, state FROM operation_runs WHERE "
                       "operation = 'wait' ORDER BY id DESC LIMIT 1")
    nops.env.stop(nops.proc, signal.SIGKILL)
    t.join(10)
    # And one the store has as running that Nomad never saw.
    c = sqlite3.connect(os.path.join(nops.db, "nops.db"), timeout=10)
    with c:
        ghost = c.execute(
            "INSERT INTO operation_runs (deployment_id, namespace, job,"
            " operation, actor, started_at, state) VALUES (?, 'default',"
            " 'db', 'fail', 'root', ?, 'running')",
            (did, int(time.time()))).lastrowid
    c.close()
    nops.restart(extra_env={"NOPS_TEST_OPERATION_TIMEOUT": "60"})
    wid = wait_row[0][0] if wait_row else None

    def run(rid):
        st, d = nops.api("GET", "/api/v1/jobs/default/db/operations/runs/"
                         "%s" % rid)
        return d if st == 200 else {}
    ok("restart: the run under way ends with its exit code and output, "
       "not lost", wait_until(lambda: run(wid).get("state") not in (
           None, "running"), 40) and run(wid).get("state") == "succeeded"
       and run(wid).get("exit_code") == 0 and "waited-out" in (
           run(wid).get("output") or ""), (wait_row, run(wid)))
    ok("restart: it was dispatched once (found by its token, not sent "
       "again)", len(children(sim, "db-wait-")) == kids + 1,
       children(sim, "db-wait-"))
    ok("restart: a run Nomad has no trace of is lost, saying so",
       wait_until(lambda: run(ghost).get("state") == "lost", 20) and
       "no run of db-fail-" in (run(ghost).get("error") or "") and
       "op:%d" % ghost in (run(ghost).get("error") or ""), run(ghost))
    ok("restart: the log says it looked for the run by its token",
       "found again after a restart by its token op:%s" % wid in
       nops.logtext())

    # Revisions no deployment offers are stopped; never under a run.
    def revisions(prefix):
        return [j["ID"] for j in sim.jobs(prefix) if "/dispatch-" not in
                j["ID"]]

    def stopped(rev):
        return bool((sim.job(rev) or {}).get("Stop"))
    old_echo = revisions("db-echo-")
    old_fail = revisions("db-fail-")
    lt = threading.Thread(target=lambda: nops.job_action("db", "db.long"),
                          daemon=True)
    lt.start()
    ok("cleanup: a long run is under way", wait_until(
        lambda: children(sim, "db-long-"), 20))
    old_long = revisions("db-long-")
    changed = dict(FILES)
    changed["nomad/db.nomad.hcl"] = FILES["nomad/db.nomad.hcl"].replace(
        "nginx:1.26", "nginx:1.27")
    changed["nomad/db-echo.nomad.hcl"] = FILES[
        "nomad/db-echo.nomad.hcl"].replace("hello from", "hello again from")
    changed["nomad/db-long.nomad.hcl"] = FILES[
        "nomad/db-long.nomad.hcl"].replace("long-done", "long-done-2")
    nops.push_and_fetch(remote, changed, "new echo and long")
    long_row = db_rows(nops, "SELECT id FROM operation_runs WHERE "
                       "operation = 'long' ORDER BY id DESC LIMIT 1")
    long_id = long_row[0][0] if long_row else None
    seen_stopped_while_running = []

    def echo_cleaned():
        if run(long_id).get("state") == "running" and old_long and \
                stopped(old_long[0]):
            seen_stopped_while_running.append(old_long[0])
        return old_echo and all(stopped(r) for r in old_echo)
    ok("cleanup: the old revision of a changed operation is stopped once a "
       "new deployment offers another", wait_until(echo_cleaned, 30),
       (old_echo, nops.logtext()[-2000:]))
    ok("cleanup: it happened while the long run was still under way (so "
       "the next case means something)", run(long_id).get("state") ==
       "running", run(long_id))
    ok("cleanup: the revision a run is under way on is not stopped",
       old_long and not stopped(old_long[0]) and
       not seen_stopped_while_running, (old_long, seen_stopped_while_running))
    ok("cleanup: the revision of an unchanged operation stays",
       old_fail and not any(stopped(r) for r in old_fail), old_fail)
    lt.join(40)
    ok("cleanup: the long run ends as it should", run(long_id).get(
        "state") == "succeeded" and "long-done" in (run(long_id).get(
            "output") or ""), run(long_id))
    nops.push_and_fetch(remote, {"nomad/other.nomad.hcl": job_hcl(
        "other", policy="none")}, "a cycle")
    ok("cleanup: once the run ended, its old revision is stopped too",
       wait_until(lambda: old_long and stopped(old_long[0]), 20),
       old_long)

    # Gone from git: the log stays while Nomad still has the job.
    nruns = len(db_rows(nops, "SELECT id FROM operation_runs WHERE job = "
                        "'db'"))
    gone = {k: None for k in FILES}
    gone["nomad/other.nomad.hcl"] = job_hcl("other", policy="none")
    nops.push_and_fetch(remote, gone, "remove db")
    nops.wait_cycle()
    ok("gone from git only: the run log stays", nruns >= 100 and len(
        db_rows(nops, "SELECT id FROM operation_runs WHERE job = 'db'")) ==
       nruns, nruns)
    sim.call("POST", "/_sim/job/stop", {"Namespace": "default",
                                        "JobID": "db", "Purge": True})
    # a new commit starts a detection cycle
    nops.push_and_fetch(remote, {"nomad/other.nomad.hcl": job_hcl(
        "other", policy="none", image="nginx:1.27")}, "touch")
    ok("gone from git and from Nomad: its run log is deleted",
       wait_until(lambda: len(db_rows(
           nops, "SELECT id FROM operation_runs WHERE job = 'db'")) == 0,
           15), nops.logtext()[-3000:])
    clock.stop.set()
    env.cleanup()


main()
case_errors()
