"""Helpers of the engine's integration tests: the Nomad simulator, a git
remote of job files, and nopsd with both, driven through its API.

Built on gitlib (Env, Remote, ok, wait_until).  Each test starts only its
own processes and stops them by handle.
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitlib import (Env, Remote, ok, wait_until, free_port,  # noqa: E402
                    NOPSD, NOPSCTL)
import gitlib  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
NOMADSIM = os.path.join(TOP, "tests", "nomadsim", "nomadsim")


class Sim:
    """tests/nomadsim on a free port, its clock moved only by the test
    (speed 0) unless told otherwise; with acl, token is the SecretID of
    its management token."""

    def __init__(self, env, acl=False, token=None, speed=0):
        self.env = env
        args = [sys.executable, NOMADSIM, "--port", "0", "--speed", str(speed)]
        if acl:
            args.append("--acl")
        if token:
            args += ["--acl-bootstrap-token", token]
        self.log = env.path("nomadsim.log")
        self.proc = env.start(args, stdout=subprocess.PIPE,
                              stderr=open(self.log, "w"), text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError("nomadsim did not start: " + line)
        self.url = line.split()[-1].strip()

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                text = r.read().decode()
                return r.status, json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def advance(self, seconds):
        return self.call("POST", "/_sim/clock", {"Advance": seconds})

    def job(self, jid, ns="default"):
        st, j = self.call("GET", "/v1/job/%s?namespace=%s" % (
            urllib.parse.quote(jid, safe=""), ns))
        return j if st == 200 else None

    def versions(self, jid, ns="default"):
        st, j = self.call("GET", "/v1/job/%s/versions?namespace=%s" % (
            urllib.parse.quote(jid, safe=""), ns))
        return j["Versions"] if st == 200 else []

    def jobs(self, prefix="", ns="default"):
        st, j = self.call("GET", "/v1/jobs?prefix=%s&namespace=%s" % (
            urllib.parse.quote(prefix, safe=""), ns))
        return j if st == 200 else []


import urllib.parse  # noqa: E402


class Nops(gitlib.Nopsd):
    """nopsd with a nomad block pointing at the simulator."""

    def __init__(self, env, sim, repos, apply_timeout="10m", extra=(),
                 hook=None, extra_env=None, tag="nopsd"):
        self.sim = sim
        self.apply_timeout = apply_timeout
        self.extra = list(extra)
        super().__init__(env, repos, hook=hook, extra_env=extra_env,
                         tag=tag)

    def write_conf(self, repos):
        super().write_conf(repos)
        with open(self.conf, "a") as f:
            f.write("engine-interval 1s\n")
            f.write("drift-interval 1h\n")
            f.write("apply-timeout %s\n" % self.apply_timeout)
            f.write('nomad {\n\taddress "%s"\n\tnamespaces { "default" '
                    '"web" }\n}\n' % self.sim.url)
            for line in self.extra:
                f.write(line + "\n")

    def jobs(self):
        st, j = self.api("GET", "/api/v1/jobs?limit=500")
        return {(x["namespace"], x["id"]): x for x in j["items"]}

    def job(self, jid, ns="default"):
        st, j = self.api("GET", "/api/v1/jobs/%s/%s" % (ns, jid))
        return j if st == 200 else None

    def deployment(self, did):
        st, j = self.api("GET", "/api/v1/deployments/%d" % did)
        return j if st == 200 else None

    def deployments(self, job=None):
        q = "?limit=500" + ("&job=" + job if job else "")
        st, j = self.api("GET", "/api/v1/deployments" + q)
        return j["items"]

    def action(self, did, action, body=None):
        return self.api("POST", "/api/v1/deployments/%d/actions/%s" % (
            did, action), body or {})

    def job_action(self, jid, action, body=None, ns="default"):
        return self.api("POST", "/api/v1/jobs/%s/%s/actions/%s" % (
            ns, jid, action), body or {})

    def engine(self):
        return self.api("GET", "/api/v1/engine")[1]

    def wait_cycle(self, timeout=15):
        """Wait for a detection cycle that starts after now to end."""
        start = self.engine()["cycles"]
        return wait_until(lambda: self.engine()["cycles"] > start and
                          not self.engine()["detecting"], timeout)

    def job_state(self, jid, ns="default"):
        j = self.job(jid, ns)
        return j["state"] if j else None

    def wait_job(self, jid, state, timeout=15, ns="default"):
        return wait_until(lambda: self.job_state(jid, ns) == state, timeout)

    def active(self, jid, ns="default"):
        j = self.job(jid, ns)
        return j["deployment"] if j else None

    def wait_deploy_state(self, did, states, timeout=20, sim_step=0):
        if isinstance(states, str):
            states = (states,)

        def reached():
            if sim_step:
                self.sim.advance(sim_step)
            d = self.deployment(did)
            return d is not None and d["state"] in states
        return wait_until(reached, timeout, step=0.2)

    def push_and_fetch(self, remote, files, msg="change"):
        commit = remote.commit(files, msg)
        self.fetch(remote.name)
        self.wait_commit(remote.name, commit)
        return commit


def job_hcl(jid, image="nginx:1.26", policy="approval", count=2, pre=None,
            post=None, extra_meta="", group_extra="", ns=None,
            pre_timeout=None):
    meta = ['    nops_managed = "true"', '    nops_policy = "%s"' % policy]
    if pre:
        meta.append('    nops_pre_hook = "%s"' % pre)
    if post:
        meta.append('    nops_post_hook = "%s"' % post)
    if pre_timeout:
        meta.append('    nops_pre_hook_timeout = "%s"' % pre_timeout)
    if extra_meta:
        meta.append(extra_meta)
    return """job "%s" {
  datacenters = ["dc1"]
%s  meta {
%s
  }
  group "app" {
    count = %d
%s
    task "server" {
      driver = "docker"
      config {
        image = "%s"
      }
    }
  }
}
""" % (jid, '  namespace = "%s"\n' % ns if ns else "", "\n".join(meta),
       count, group_extra, image)


def hook_hcl(hid, script="exit 0", meta_optional=('nops_deployment',
             'nops_job', 'nops_commit', 'nops_phase')):
    return """job "%s" {
  type = "batch"
  datacenters = ["dc1"]
  meta {
    nops_role = "hook"
  }
  parameterized {
    meta_optional = [%s]
  }
  group "h" {
    task "run" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args = ["-c", %s]
      }
    }
  }
}
""" % (hid, ", ".join('"%s"' % m for m in meta_optional), json.dumps(script))


def setup(repo_files, apply_timeout="10m", extra=(), hook=None,
          extra_env=None):
    """A fresh env, sim, remote with files, and nopsd; returns them."""
    env = Env()
    sim = Sim(env)
    remote = Remote(env, "infra")
    remote.commit(repo_files, "initial")
    nops = Nops(env, sim, [{"name": "infra", "url": "file://" + remote.bare,
                            "path": "nomad", "poll": "1h"}],
                apply_timeout=apply_timeout, extra=extra, hook=hook,
                extra_env=extra_env)
    nops.wait_commit("infra", remote.head())
    return env, sim, remote, nops


class StatefulSim(Sim):
    """nomadsim keeping its state in a directory (--state) on a port of
    its own, so that a test can stop it (Nomad is down) and start it again
    on the same address with the same jobs, allocations and clock."""

    def __init__(self, env, acl=False):
        self.env = env
        self.acl = acl
        self.port = free_port()
        self.state = env.path("nomadsim-state")
        self.log = env.path("nomadsim.log")
        self.proc = None
        self.start()

    def start(self):
        args = [sys.executable, NOMADSIM, "--port", str(self.port),
                "--speed", "0", "--state", self.state]
        if self.acl:
            args.append("--acl")
        self.proc = self.env.start(args, stdout=subprocess.PIPE,
                                   stderr=open(self.log, "a"), text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError("nomadsim did not start: " + line)
        self.url = line.split()[-1].strip()

    def stop(self):
        """SIGTERM: the simulator saves its state and closes its port."""
        self.env.stop(self.proc)


def setup_with(sim, repo_files, nops_class=Nops, **kw):
    """setup() with a simulator (and an env) the caller made:
    sim.env is used.  Returns (remote, nops)."""
    remote = Remote(sim.env, "infra")
    remote.commit(repo_files, "initial")
    nops = nops_class(sim.env, sim, [{"name": "infra",
                                      "url": "file://" + remote.bare,
                                      "path": "nomad", "poll": "1h"}], **kw)
    nops.wait_commit("infra", remote.head())
    return remote, nops
