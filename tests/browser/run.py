"""The browser test: installs playwright-core (npm ci, never a browser of
its own) into the build tree, starts nomadsim, a git remote and nopsd with
two deployments waiting for approval, and runs dashboard.test.js in
Debian's Chromium against the daemon's TCP listener.  Prints its "ok" /
"not ok" lines and adds the daemon's side of the story."""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from webenv import Web, USERS, job_hcl, hook_hcl, ok  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def install(dest):
    """npm ci into dest, once per lockfile."""
    os.makedirs(dest, exist_ok=True)
    for f in ("package.json", "package-lock.json", "dashboard.test.js"):
        shutil.copyfile(os.path.join(HERE, f), os.path.join(dest, f))
    stamp = os.path.join(dest, "node_modules", ".nops-lock")
    with open(os.path.join(HERE, "package-lock.json")) as f:
        lock = f.read()
    if os.path.exists(stamp) and open(stamp).read() == lock:
        return True
    env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
    r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund",
                        "--loglevel=error"], cwd=dest, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        ok("browser: npm ci of playwright-core", False, r.stdout)
        return False
    with open(stamp, "w") as f:
        f.write(lock)
    return True


def greet_hcl():
    """An operation of web: its input drawn as a form from its schema."""
    schema = {"type": "object", "required": ["name"],
              "properties": {"name": {"type": "string", "title": "Name"}}}
    return """job "web-greet" {
  type = "batch"
  datacenters = ["dc1"]
  meta {
    nops_role = "operation"
    nops_operation_of = "web"
    nops_input_schema = %s
  }
  parameterized {
    payload = "required"
  }
  group "g" {
    restart {
      attempts = 0
      mode = "fail"
    }
    task "run" {
      driver = "raw_exec"
      dispatch_payload {
        file = "in.json"
      }
      config {
        command = "/bin/sh"
        args = ["-c", "echo greeted; cat local/in.json"]
      }
    }
  }
}
""" % json.dumps(json.dumps(schema))


def main():
    if not os.access(CHROMIUM, os.X_OK) or shutil.which("node") is None:
        ok("browser: chromium and node are installed (scripts/deps)", False)
        return 1
    top = os.environ.get("top_builddir") or os.path.join(
        os.path.dirname(os.path.dirname(HERE)), "build")
    dest = os.path.join(os.path.abspath(top), "tests", "browser")
    if not install(dest):
        return 1
    w = Web(tls=False, files={
        "nomad/web.nomad.hcl": job_hcl(
            "web", pre="migrate",
            extra_meta='    nops_operations = "web-greet"'),
        "nomad/web-greet.nomad.hcl": greet_hcl(),
        "nomad/api.nomad.hcl": job_hcl("api"),
        "nomad/migrate.nomad.hcl": hook_hcl("migrate")})
    try:
        web, api = w.wait_pending("web"), w.wait_pending("api")
        if not ok("browser: two deployments wait for approval",
                  web and api, w.nops.logtext()[-2000:]):
            return 1
        env = dict(os.environ, NOPS_URL=w.url, NOPS_SIM=w.sim.url,
                   NOPS_APPROVE=str(web), NOPS_FORGE=str(api),
                   NOPS_USERS=json.dumps(USERS),
                   SHOTS=os.path.join(dest, "shots"))
        r = subprocess.run(["node", os.path.join(dest, "dashboard.test.js")],
                           cwd=dest, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        sys.stdout.write(r.stdout)
        if "ok - " not in r.stdout:
            ok("browser: the test ran", False, r.stdout[-2000:])
        st, d = w.nops.api("GET", "/api/v1/deployments/%d" % web)
        ok("browser: the daemon has the deployment completed, approved by "
           "alice", d["state"] == "completed" and
           d["approved_by"] == "alice", (d["state"], d["approved_by"]))
        st, d = w.nops.api("GET", "/api/v1/deployments/%d" % api)
        ok("browser: the forged approve changed nothing",
           d["state"] == "pending_approval", d["state"])
        alive, why = w.alive()
        ok("browser: the webworker never restarted", alive, why)
    finally:
        w.stop()
    return 0


sys.exit(main())
