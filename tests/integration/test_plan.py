"""Deploy plans (man/nops-plan.5): a nops.plan.nix in a git repository is
evaluated by real Nix (Debian's nix-bin) in nopsd's sandboxed child, a
nops.plan.json is read as is; both are checked with every error at once.

Hosts' toplevels are builtins.derivation (no nixpkgs).  Skipped, and said
so, when nix-instantiate is not installed.
"""
import json
import os
import pwd
import re
import shutil
import tempfile
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitlib  # noqa: E402
from gitlib import ok, wait_until  # noqa: E402

if shutil.which("nix-instantiate") is None:
    print("ok - plans # SKIP nix-instantiate is not installed "
          "(scripts/deps installs nix-bin)")
    sys.exit(0)

env = gitlib.Env()
gd = gitlib.GitDaemon(env)
gd.start()

MK = r"""
# A toplevel without nixpkgs: switch-to-configuration records its goal.
name: kernel: builtins.derivation {
  name = "nixos-system-${name}";
  system = builtins.currentSystem;
  builder = "/bin/sh";
  args = [ "-c" ''
    /bin/mkdir -p $out/bin
    echo ${kernel} > $out/kernel
    echo "#!/bin/sh" > $out/bin/switch-to-configuration
    /bin/chmod +x $out/bin/switch-to-configuration
  '' ];
}
"""

PLAN = r"""
{ namesToInclude ? [ ], withTests ? true }:
let
  mk = import ./lib/mk.nix;
  hosts = {
    alpha = { address = "127.0.0.1"; port = 2201; system = mk "alpha" "k1";
              tags = [ "spire" ]; };
    beta = { address = "127.0.0.1"; port = 2202; system = mk "beta" "k1"; };
    gamma = { address = "127.0.0.1"; port = 2203; system = mk "gamma" "k1";
              attrs = { role = "db"; }; };
  };
in {
  meta = { sources = { default = "nixos-small"; gamma = "nixos"; };
           args = { }; };
  defaults = { user = "root"; checks = [ { name = "up"; command = "true"; } ]; };
  hosts = if namesToInclude == [ ] then hosts
    else builtins.removeAttrs hosts
      (builtins.filter (n: !builtins.elem n namesToInclude)
        (builtins.attrNames hosts));
  phases = [
    { name = "spire"; include = { tags = [ "spire" ]; }; }
    { name = "main"; }
  ];
  tests = if withTests then [ { name = "smoke"; host = "beta";
                                command = "true"; } ] else [ ];
  infra = { vhosts = { www = true; }; vaultRoles = [ "alpha" "beta" ]; };
}
"""

r = gitlib.Remote(env, "hosts")
c1 = r.commit({"nix/nops.plan.nix": PLAN, "nix/lib/mk.nix": MK,
               "nix/README": "not Nix\n"})

class Nops(gitlib.Nopsd):
    """The evaluation limits from nops.conf's hosts block."""

    def write_conf(self, repos):
        super().write_conf(repos)
        with open(self.conf, "a") as f:
            f.write("hosts {\n\teval-timeout 10s\n\teval-memory 1G\n}\n")


n = Nops(env, [{"name": "hosts", "url": gd.url("hosts"), "path": "nix"}])


def plan(name="hosts"):
    st, j = n.curl("GET", "/api/v1/plans/" + name)
    return j if st == 200 else None


def settled(commit):
    def f():
        p = plan()
        return p if p and p["commit"] == commit and \
            p["state"] != "evaluating" else None
    return f


p = wait_until(settled(c1), 30)
ok("a Nix plan in git is evaluated by real Nix", p is not None and
   p["state"] == "valid" and p["file"] == "nix/nops.plan.nix",
   json.dumps(p)[:2000] + n.logtext()[-2000:])
if p:
    phases = {ph["name"]: ph["hosts"] for ph in p["phases"]}
    ok("the first phase takes the host tagged spire, the default phase "
       "the rest", phases == {"spire": ["alpha"], "main": ["beta", "gamma"]},
       json.dumps(p["phases"]))
    hosts = {h["name"]: h for h in p["hosts"]}
    ok("each host's system is the toplevel's store path",
       all(hosts[h]["system"].startswith("/nix/store/") and
           hosts[h]["system"].endswith("-nixos-system-" + h)
           for h in ("alpha", "beta", "gamma")), json.dumps(hosts))
    ok("defaults and meta sources are merged into each host",
       hosts["beta"]["user"] == "root" and
       hosts["beta"]["checks"][0]["name"] == "up" and
       hosts["gamma"]["source"] == "nixos" and
       hosts["alpha"]["source"] == "nixos-small", json.dumps(hosts))
    ok("withTests is true when nops evaluates",
       [t["name"] for t in p["tests"]] == ["smoke"], json.dumps(p["tests"]))

st, j = n.curl("GET", "/api/v1/plans/hosts/infra")
ok("the infra document is served per commit", st == 200 and
   j["commit"] == c1 and j["infra"]["vhosts"] == {"www": True}, str(j))
st, j = n.curl("GET", "/api/v1/plans/nope")
ok("no plan: 404", st == 404 and j["error"]["code"] == "not_found", str(j))

# The same system as Nix computes outside nopsd.
want = subprocess.run(
    ["nix-instantiate", "--eval", "--strict", "--json", "--readonly-mode",
     "-E", "(import %s/nix/lib/mk.nix) \"beta\" \"k1\"" % r.work],
    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    env=dict(os.environ, NIX_STATE_DIR=env.path("nixstate"),
             NIX_CONF_DIR=env.path("nixconf")))
if p and want.returncode == 0:
    ok("the sandboxed evaluation gives Nix's own answer",
       json.loads(want.stdout) == hosts["beta"]["system"], want.stdout)

rc, out, err = n.ctl("plan", "hosts")
ok("nopsctl plan REPOSITORY shows phases and hosts", rc == 0 and
   "spire" in out and "alpha" in out and "gamma" in out, out + err)
rc, out, err = n.ctl("-j", "plan", "hosts")
ok("nopsctl -j plan prints the API's JSON", rc == 0 and
   json.loads(out)["state"] == "valid", out + err)

# Two bad hosts: both reported, in one evaluation round.
BAD = PLAN.replace('system = mk "beta" "k1";',
                   'system = throw "beta has no disk";').replace(
    'system = mk "gamma" "k1";', 'system = mk "gamma" { }.kernel;')
c2 = r.commit({"nix/nops.plan.nix": BAD})
n.fetch("hosts")
p = wait_until(settled(c2), 30)
errs = p["errors"] if p else []
ok("an evaluation error is reported for every bad host at once",
   p is not None and p["state"] == "invalid" and
   any('host "beta"' in e and "beta has no disk" in e for e in errs) and
   any('host "gamma"' in e and "'kernel' missing" in e for e in errs) and
   not any("/tmp/" in e for e in errs) and
   not any('host "alpha"' in e for e in errs), json.dumps(p))
st, j = n.curl("GET", "/api/v1/plans/hosts/infra")
ok("a plan with errors serves no infra", st == 409, str(j))

# Evaluation has no network and cannot read outside the plan.
ESC = PLAN.replace('system = mk "beta" "k1";',
                   'system = mk "beta" (builtins.readFile /etc/passwd);')
ESC = ESC.replace('system = mk "gamma" "k1";',
                  'system = mk "gamma" (builtins.readFile (builtins.fetchurl '
                  '"http://127.0.0.1:%d/"));' % gd.port)
c3 = r.commit({"nix/nops.plan.nix": ESC})
n.fetch("hosts")
p = wait_until(settled(c3), 30)
errs = p["errors"] if p else []
ok("evaluation may not read files outside the plan (restrict-eval)",
   any('host "beta"' in e and "/etc/passwd" in e for e in errs),
   json.dumps(p))
ok("evaluation has no network", any('host "gamma"' in e for e in errs),
   json.dumps(p))

# eval-timeout: a plan that computes for minutes is killed after 10s
# (the default of 120s would not end within the wait).
SLOW = PLAN.replace('system = mk "beta" "k1";', 'system = mk "beta" '
                    '(toString (builtins.foldl\' (a: i: a + builtins.foldl\' '
                    '(b: j: b + j) 0 (builtins.genList (j: j) 100000)) 0 '
                    '(builtins.genList (i: i) 100000)));')
c5 = r.commit({"nix/nops.plan.nix": SLOW})
n.fetch("hosts")
p = wait_until(settled(c5), 60)
errs = p["errors"] if p else []
ok("eval-timeout of nops.conf bounds the evaluation: killed, said so",
   p is not None and p["state"] == "invalid" and
   any("no result within its time limit" in e for e in errs),
   json.dumps(p))

# eval-memory: a host that allocates past the 1G limit fails with Nix's
# out of memory and the limit it met; the other hosts evaluate.
BIG = PLAN.replace('system = mk "beta" "k1";', 'system = mk "beta" '
                   '(toString (builtins.length (builtins.genList '
                   '(i: "x${toString i}") 100000000)));')
c6 = r.commit({"nix/nops.plan.nix": BIG})
n.fetch("hosts")
p = wait_until(settled(c6), 60)
errs = p["errors"] if p else []
ok("eval-memory of nops.conf bounds the evaluation: out of memory, said so",
   p is not None and p["state"] == "invalid" and
   any('host "beta"' in e and "out of memory" in e and
       "eval-memory 1G of nops.conf" in e for e in errs) and
   not any('host "alpha"' in e or "GC Warning" in e for e in errs),
   json.dumps(p))

# A JSON plan is checked the same way, every error at once.
SYS = "/nix/store/6xc5ywvjx9a6q6plflkvmmp0zb7i2q4s-nixos-system-x"
c4 = r.commit({"nix/nops.plan.nix": None, "nix/nops.plan.json": json.dumps({
    "hosts": {"x": {"system": SYS, "port": 0},
              "y": {"system": "/etc", "address": "a b",
                    "operations": {"greet": {"command": "cat",
                                             "schema": {"pattern": "("}}}}},
    "phases": [{"name": "main"}]})})
n.fetch("hosts")
p = wait_until(settled(c4), 20)
errs = p["errors"] if p else []
ok("a JSON plan: every error, each naming its host",
   p is not None and p["file"] == "nix/nops.plan.json" and
   any('host "x": port' in e for e in errs) and
   any('host "y": system' in e for e in errs) and
   any('host "y": address' in e for e in errs), json.dumps(p))
# From nopsd's start, not only after its first drift interval.
ok("an operation's schema that cannot validate is an error of the plan",
   any('host "y": operation greet: schema:' in e for e in errs),
   json.dumps(errs))

# The Nix child's Landlock rules and syscall list, seen from inside: a
# test build runs a stand-in nix-instantiate (NOPS_NIX_BINDIR) that tries
# what the child may not do and says what happened.  The stand-in is a
# static C program (tests/sandbox/nix_probe.c): a shell cannot run there,
# since every child keeps the master's Landlock (exec of nopsd and Nix
# only) and seccomp allowlist (which kills the shells' vfork and getpgrp).
PROBE_CASES = (
    "the Nix child reads and writes its own directory, as the workers' "
    "user, and reads the store and the system's files",
    "Landlock: nothing outside the store, the system's files and its own "
    "directory (not the state directory, /etc/resolv.conf, /etc/hostname, "
    "another process's /proc, /tmp): EACCES",
    "seccomp: no network socket but a Unix one (EACCES), no namespaces or "
    "identity change (EPERM), ptrace, mount, bpf and keyctl kill it "
    "(SIGSYS)")
probe = os.path.join(os.environ.get("top_builddir", "."), "tests", "sandbox",
                     "nix_probe")
if not gitlib.test_hooks_built():
    for name in PROBE_CASES:
        gitlib.skip(name, gitlib.NO_TEST_HOOKS)
else:
    fake = tempfile.mkdtemp(prefix="nops-fakenix.")
    os.chmod(fake, 0o755)
    if os.path.exists(probe):
        shutil.copy(probe, os.path.join(fake, "nix-instantiate"))
        os.chmod(os.path.join(fake, "nix-instantiate"), 0o755)
    fr = gitlib.Remote(env, "fake")
    fr.commit({"nops.plan.nix": "{ }\n"})
    n2 = gitlib.Nopsd(env, [{"name": "fake", "url": gd.url("fake")}],
                      extra_env={"NOPS_NIX_BINDIR": fake}, tag="fakenix")

    def fake_plan():
        st, j = n2.curl("GET", "/api/v1/plans/fake")
        return j if st == 200 and j.get("state") == "invalid" else None

    p = wait_until(fake_plan, 30)
    e = "\n".join(p["errors"]) if p else ""
    # "probe NAME: allowed|refused ERRNO|killed SIGNAL", one after another
    # (the plan's error joins the lines of standard error).
    lines = dict(re.findall(r"probe ([^:]+): (allowed|refused [A-Z0-9]+|"
                            r"killed [A-Z0-9]+)", e))
    m = re.search(r"probe uid: (\d+)", e)
    lines["uid"] = m.group(1) if m else None
    why = "built %s: %s\n%s\n%s" % (probe, os.path.exists(probe), e,
                                    n2.logtext()[-1500:])

    def says(pairs):
        return all(lines.get(k) == v for k, v in pairs)

    ok(PROBE_CASES[0],
       "the probe is done" in e and
       lines.get("uid") == str(pwd.getpwnam("_nops").pw_uid) and
       says((("write own dir", "allowed"), ("read own dir", "allowed"),
             ("read the plan nopsd wrote", "allowed"),
             ("list /nix/store", "allowed"), ("read /etc/passwd", "allowed"),
             ("list /usr/lib", "allowed"))), why)
    ok(PROBE_CASES[1],
       says((("list the state directory", "refused EACCES"),
             ("read /etc/resolv.conf", "refused EACCES"),
             ("list /etc/ssl/certs", "refused EACCES"),
             ("read /etc/hostname", "refused EACCES"),
             ("read /proc/1/status", "refused EACCES"),
             ("write /tmp", "refused EACCES"))), why)
    ok(PROBE_CASES[2],
       says((("socket AF_INET", "refused EACCES"),
             ("socket AF_INET6", "refused EACCES"),
             ("socket AF_NETLINK", "refused EACCES"),
             ("socket AF_UNIX", "allowed"),
             ("unshare user", "refused EPERM"),
             ("unshare mount", "refused EPERM"),
             ("setuid 0", "refused EPERM"),
             ("ptrace", "killed SYS"), ("mount", "killed SYS"),
             ("bpf", "killed SYS"), ("keyctl", "killed SYS"))), why)
    n2.stop()
    shutil.rmtree(fake, ignore_errors=True)

n.stop()
nixdir = os.path.join(n.db, "nix")
ok("the Nix children's directory is the workers' user's, 0700",
   os.stat(nixdir).st_uid == pwd.getpwnam("_nops").pw_uid and
   os.stat(nixdir).st_mode & 0o777 == 0o700, oct(os.stat(nixdir).st_mode))
ok("no evaluation directory is left behind", os.listdir(nixdir) == [],
   str(os.listdir(nixdir)))
sys.exit(1 if gitlib.failures else 0)
