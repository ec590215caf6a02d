"""nopsctl check FILE... (issue 12, item 11): job files checked offline,
with FILE:LINE errors, and the same verdict on their nops_ meta keys as
nopsd gives once Nomad (the simulator) parsed them from git.  And the
control socket nopsctl takes from nops.conf when nothing names one."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import setup, job_hcl, hook_hcl, wait_until  # noqa
import gitlib  # noqa: E402


def ok(name, cond, detail=""):
    return gitlib.ok(name, cond, str(detail)[-2000:])


def check(*args):
    r = subprocess.run([gitlib.NOPSCTL] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, NOPS_SOCKET="/nonexistent"))
    return r.returncode, r.stdout, r.stderr


FILES = {
    # line 10: nops_policy, line 11: the hooks, line 12: a typo
    "nomad/web.nomad.hcl": """# the web front
job "web" {
  datacenters = ["dc1"]
  group "app" {
    meta = {
      nops_policy = "auto"
    }
  }
  meta {
    nops_policy = "sometimes"
    nops_pre_hook = "migrate,gone"
    nops_polcy = "auto"
    nops_managed = "true"
  }
}
""",
    "nomad/migrate.nomad.hcl": """job "migrate" {
  type = "service"
  datacenters = ["dc1"]
  meta {
    nops_role = "hook"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
""",
    "nomad/api.nomad.hcl": job_hcl("api", policy="auto", pre="db",
                                   extra_meta='    nops_sync_window = '
                                   '"0 2 * * *"\n    '
                                   'nops_sync_window_duration = "1h"',
                                   group_extra='    update {\n      '
                                   'min_healthy_time = "20s"\n    }\n'),
    "nomad/db.nomad.hcl": hook_hcl("db", 'echo "quoted \\"x\\" ${y}"'),
}


def main():
    d = tempfile.mkdtemp(prefix="nops-check.")
    for p, text in FILES.items():
        os.makedirs(os.path.join(d, os.path.dirname(p)), exist_ok=True)
        with open(os.path.join(d, p), "w") as f:
            f.write(text)
    os.chdir(d)
    rc, out, err = check("check", "nomad")
    ok("check: an error makes exit status 1", rc == 1, (rc, out, err))
    ok("check: an invalid value names file:line and the valid ones",
       'nomad/web.nomad.hcl:10: error: nops_policy: "sometimes" is not '
       'auto, approval or none' in out, out)
    ok("check: an unknown nops_ key is a warning at its line",
       "nomad/web.nomad.hcl:12: warning: nops_polcy: unknown nops_ key" in
       out, out)
    ok("check: nops_ keys in a group's meta are said to be ignored",
       "nomad/web.nomad.hcl:6: warning: nops_policy in the meta of a "
       "group" in out, out)
    ok("check: a hook that is not batch and parameterized is an error",
       "nomad/migrate.nomad.hcl:1: error: a hook must be a batch, "
       "parameterized job" in out, out)
    ok("check: a job naming that invalid hook is told so at the key",
       "nomad/web.nomad.hcl:11: error: pre hook migrate is invalid" in out,
       out)
    ok("check: a hook not among the files is a warning",
       "nomad/web.nomad.hcl:11: warning: pre hook gone: not among the "
       "files checked" in out, out)
    ok("check: a valid job and hook are reported fine",
       "nomad/api.nomad.hcl: job default/api: managed, policy auto" in out
       and "nomad/db.nomad.hcl: job default/db: hook" in out, out)
    rc, out, err = check("check", "nomad/api.nomad.hcl", "nomad/db.nomad.hcl")
    ok("check: files without errors exit 0", rc == 0, (rc, out, err))

    with open("nomad/broken.nomad", "w") as f:
        f.write('job "b" {\n  meta {\n    nops_managed = "true\n  }\n}\n')
    with open("nomad/open.nomad", "w") as f:
        f.write('job "o" {\n  group "g" {\n    count = 1\n  }\n')
    rc, out, err = check("check", "nomad/broken.nomad", "nomad/open.nomad")
    ok("check: a syntax error names its line",
       rc == 1 and "nomad/broken.nomad:3: error: syntax error: a string "
       "not closed on its line" in out and
       "nomad/open.nomad:1: error: syntax error: the job block opened "
       "here is not closed" in out, out)
    rc, out, err = check("-j", "check", "nomad/web.nomad.hcl")
    checked = json.loads(out) if out.startswith("[") else []
    issues = {(i["severity"], i["message"].split(":")[0])
              for f in checked for i in f["issues"]
              if i["message"].startswith("nops_") and " in the meta of "
              not in i["message"]}
    ok("check -j: JSON with line, severity and message",
       rc == 1 and checked and checked[0]["file"] == "nomad/web.nomad.hcl"
       and all(isinstance(i["line"], int) for i in checked[0]["issues"]),
       out)
    # A deploy plan is checked as nopsd checks one.
    sys_path = "/nix/store/6xc5ywvjx9a6q6plflkvmmp0zb7i2q4s-nixos-system-x"
    os.mkdir("hosts")
    with open("hosts/nops.plan.json", "w") as f:
        json.dump({"hosts": {"x": {"system": sys_path, "port": 0},
                             "y": {"system": sys_path,
                                   "address": "10.0.0.2",
                                   "operations": {"op": {
                                       "command": "cat", "schema": {
                                           "$ref": "#/nowhere"}}}}},
                   "phases": [{"name": "main"}]}, f)
    rc, out, err = check("check", "hosts")
    ok("check: a deploy plan's errors, naming the host",
       rc == 1 and 'hosts/nops.plan.json: error: host "x": port' in out,
       out)
    ok("check: an operation's schema that cannot validate fails the plan",
       'host "y": operation op: schema: $ref "#/nowhere"' in out, out)
    with open("hosts/nops.plan.json", "w") as f:
        json.dump({"hosts": {"y": {"system": sys_path,
                                   "address": "10.0.0.2"}},
                   "phases": [{"name": "main"}]}, f)
    rc, out, err = check("check", "hosts/nops.plan.json")
    ok("check: a valid deploy plan passes",
       rc == 0 and "deploy plan: 1 host in 1 phase" in out, (rc, out))
    os.chdir("/")

    # nopsd's verdict on the same files, parsed by Nomad from git.
    env, sim, remote, nops = setup(FILES)
    wait_until(lambda: nops.job("web"), 15)
    j = nops.job("web") or {}
    daemon = {(i["severity"], i["key"]) for i in j.get("issues", [])}
    ok("check: the same meta verdict as nopsd gives",
       issues and issues == daemon, (issues, daemon))

    # The socket from the config: -f, macros and include followed.
    def ctl(*args):
        e = dict(os.environ)
        e.pop("NOPS_SOCKET", None)
        r = subprocess.run([gitlib.NOPSCTL] + list(args), env=e, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return r.returncode, r.stdout, r.stderr
    rc, out, err = ctl("-f", nops.conf, "-j", "status")
    ok("socket: nopsctl -f nops.conf finds the control socket in it",
       rc == 0 and '"workers"' in out, (rc, out, err))
    inc = env.path("ctl-inc.conf")
    top = env.path("ctl-top.conf")
    with open(inc, "w") as f:
        f.write("# the socket, through a macro\ncontrol socket $run/%s "
                'group "_nopsadm"\n' % os.path.basename(nops.sock))
    with open(top, "w") as f:
        f.write('run = "%s"\ninclude "%s"\n' % (
            os.path.dirname(nops.sock), inc))
    rc, out, err = ctl("-f", top, "status")
    ok("socket: a macro and an include file are followed", rc == 0,
       (rc, out, err))
    with open(top, "w") as f:
        f.write('control socket "%s/gone.sock"\n' % env.path(""))
    rc, out, err = ctl("-f", top, "status")
    ok("socket: a socket that is not there is said to come from the file",
       rc == 1 and "gone.sock" in err and "from " + top in err, err)
    rc, out, err = ctl("-f", env.path("nothing.conf"), "status")
    ok("socket: -f with a file that cannot be read is a usage error",
       rc == 2 and "nothing.conf" in err, err)
    env.cleanup()
    shutil.rmtree(d)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        ok("test_nopsctl_check ran to its end", False,
           traceback.format_exc())
    sys.exit(1 if gitlib.failures else 0)
