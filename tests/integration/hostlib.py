"""Hosts for the deploy-plan tests: real OpenSSH servers, each in a mount
namespace of its own where /nix and /run are the host's own directories,
so every host has its own Nix store, system profile, /run/current-system
and /run/booted-system, and nops copies closures into it for real.

A host's systems are toplevels built with builtins.derivation (no
nixpkgs): kernel, initrd and kernel-modules links, and a
bin/switch-to-configuration that appends "GOAL SYSTEM TIME" to
/run/nops-test-goals and, for switch and test, points /run/current-system
at its system, as NixOS's activation does.  A system made with bad=True
also stops the host's sshd when activated (for the rollback test).
A host builds with its own Nix when the plan says buildOnTarget: its
sshd gives sessions NIX_CONF_DIR, a nix.conf without build users,
sandbox (the builders are /bin/sh, outside the store) or substituters.

The deployer's Nix store is the machine's /nix, built by a nix-daemon the
test starts on a private socket (build-users-group empty and sandbox off:
the test runs as root on a machine without nixbld users).

Everything is started by the test and stopped by pid.
"""
import json
import os
import shutil
import signal
import subprocess
import time

import gitlib
from gitlib import wait_until, free_port, wait_port

HERE = os.path.dirname(os.path.abspath(__file__))

MK_NIX = r"""
# Toplevels without nixpkgs (tests/integration/hostlib.py).
let
  drv = name: script: builtins.derivation {
    inherit name;
    system = builtins.currentSystem;
    builder = "/bin/sh";
    args = [ "-c" script ];
  };
  file = name: text: drv name "echo ${text} > $out";
in
{ name, version, kernel ? "k1", bad ? false }:
let
  k = file "linux-${kernel}" kernel;
  i = file "initrd-${kernel}" kernel;
  m = file "modules-${kernel}" kernel;
in drv "nixos-system-${name}-${version}" ''
  /bin/mkdir -p $out/bin
  /bin/ln -s ${k} $out/kernel
  /bin/ln -s ${i} $out/initrd
  /bin/ln -s ${m} $out/kernel-modules
  /bin/cat > $out/bin/switch-to-configuration <<EOF
  #!/bin/sh
  echo "\$1 $out \$(date +%s.%N)" >> /run/nops-test-goals
  case "\$1" in
  switch|test) ln -sfn $out /run/current-system ;;
  esac
  ${if bad then ''
  if [ "\$1" = switch ] || [ "\$1" = test ]; then
    kill \$(cat /run/sshd-listener.pid)
  fi
  '' else ""}
  exit 0
  EOF
  /bin/chmod 755 $out/bin/switch-to-configuration
''
"""


class NixDaemon:
    """nix-daemon on a private socket: the store nops builds in."""

    def __init__(self, env):
        self.env = env
        d = env.path("nixd")
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o755)
        with open(os.path.join(d, "nix.conf"), "w") as f:
            f.write("build-users-group =\nsandbox = false\n"
                    "substituters =\n")
        self.sock = os.path.join(d, "daemon.sock")
        e = dict(os.environ, NIX_CONF_DIR=d,
                 NIX_DAEMON_SOCKET_PATH=self.sock)
        self.proc = env.start(["nix-daemon"], env=e,
                              stdout=open(env.path("nix-daemon.log"), "w"),
                              stderr=subprocess.STDOUT)
        if not wait_until(lambda: os.path.exists(self.sock), 10):
            raise RuntimeError("nix-daemon did not start")
        self.store = "unix://" + self.sock

    def nix(self, *args, **kw):
        """Run a Nix command against this store, as root."""
        e = dict(os.environ, NIX_REMOTE=self.store,
                 NIX_CONF_DIR=os.path.dirname(self.sock))
        return subprocess.run(list(args), env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, **kw)


class Host:
    """sshd in its own mount namespace with its own /nix and /run."""

    def __init__(self, env, name, client_pub):
        self.env = env
        self.name = name
        self.port = free_port()
        self.root = env.path("host-" + name)
        for d in ("nix/store", "nix/var/nix/profiles", "run/sshd", "etc"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        os.chmod(os.path.join(self.root, "run/sshd"), 0o755)
        self.hostkey = os.path.join(self.root, "etc", "hostkey")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                        name, "-f", self.hostkey], check=True)
        auth = os.path.join(self.root, "etc", "authorized_keys")
        with open(auth, "w") as f:
            f.write(client_pub + "\n")
        os.chmod(auth, 0o600)
        # Its own Nix settings, for buildOnTarget: no build users, no
        # sandbox (the builders are /bin/sh), no substituters (offline).
        nixconf = os.path.join(self.root, "etc", "nix")
        os.makedirs(nixconf, exist_ok=True)
        with open(os.path.join(nixconf, "nix.conf"), "w") as f:
            f.write("build-users-group =\nsandbox = false\n"
                    "substituters =\n")
        self.cfg = os.path.join(self.root, "etc", "sshd_config")
        with open(self.cfg, "w") as f:
            f.write("""ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile /run/sshd-listener.pid
LogLevel VERBOSE
StrictModes no
MaxStartups 50
SetEnv NIX_CONF_DIR=%s
""" % (self.port, self.hostkey, auth, nixconf))
        self.log = env.path("sshd-%s.log" % name)
        self.proc = None
        self.start()

    def pubkey(self):
        t, b64 = open(self.hostkey + ".pub").read().split()[:2]
        return "%s %s" % (t, b64)

    def start(self):
        """(Re)start sshd; the namespace is made anew each time."""
        script = ("mount --bind %s/nix /nix && mount --bind %s/run /run && "
                  "exec /usr/sbin/sshd -D -e -f %s" %
                  (self.root, self.root, self.cfg))
        self.proc = self.env.start(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             script], stdout=subprocess.DEVNULL,
            stderr=open(self.log, "a"))
        # Up to 30 s: a loaded machine (a suite run beside other work)
        # has been seen to need more than 10; a quiet one needs a moment.
        if not wait_port(self.port, 30.0):
            with open(self.log, errors="replace") as f:
                tail = f.read()[-600:]
            raise RuntimeError("sshd of %s did not start (exit status %s);"
                               " its log ends:\n%s" % (self.name,
                                                       self.proc.poll(), tail))

    def stop(self):
        if self.proc is not None:
            self.env.stop(self.proc)
        self.proc = None

    def down(self):
        """The listener is gone (stopped, or killed by a bad system)."""
        if self.proc is not None and self.proc.poll() is None:
            return False
        return True

    def run(self, cmd, stdin=None):
        """A command inside the host's namespace (through its /nix, /run)."""
        r = subprocess.run(["nsenter", "-t", str(self.proc.pid), "-m",
                            "sh", "-c", cmd], input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise RuntimeError("%s: %s: %s" % (self.name, cmd,
                                               r.stderr.decode()))
        return r.stdout.decode()

    def file(self, rel):
        p = os.path.join(self.root, rel)
        return open(p).read() if os.path.exists(p) else ""

    def goals(self):
        """[(goal, system), ...] in the order switch-to-configuration ran."""
        out = []
        for line in self.file("run/nops-test-goals").splitlines():
            parts = line.split()
            if len(parts) >= 2:
                out.append((parts[0], parts[1], float(parts[2])
                            if len(parts) > 2 else 0.0))
        return out

    def link(self, rel):
        """Where a link of the host points, resolved in its /nix."""
        p = os.path.join(self.root, rel)
        if not os.path.islink(p):
            return None
        return os.readlink(p)

    def current(self):
        return self.link("run/current-system")

    def booted(self):
        return self.link("run/booted-system")

    def profile(self):
        """The system profile's generation's target."""
        p = os.path.join(self.root, "nix/var/nix/profiles/system")
        if not os.path.islink(p):
            return None
        gen = os.readlink(p)
        return os.readlink(os.path.join(os.path.dirname(p), gen))

    def install(self, daemon, system):
        """Give the host a first system (booted and current)."""
        closure = daemon.nix("nix-store", "-qR", system).stdout.split()
        exp = subprocess.run(["nix-store", "--export"] + closure,
                             stdout=subprocess.PIPE, check=True,
                             env=dict(os.environ, NIX_REMOTE=daemon.store))
        self.run("nix-store --import >/dev/null 2>&1", stdin=exp.stdout)
        self.run("nix-env -p /nix/var/nix/profiles/system --set %s "
                 ">/dev/null 2>&1 && ln -sfn %s /run/current-system && "
                 "ln -sfn %s /run/booted-system" % (system, system, system))


def build(daemon, mk_path, name, version, kernel="k1", bad=False):
    """Build a toplevel in the deployer's store; its store path."""
    expr = "(import %s) { name = %s; version = %s; kernel = %s; bad = %s; }" \
        % (mk_path, json.dumps(name), json.dumps(version),
           json.dumps(kernel), "true" if bad else "false")
    r = daemon.nix("nix-build", "--no-out-link", "-E", expr)
    if r.returncode != 0:
        raise RuntimeError("nix-build: " + r.stderr)
    return r.stdout.strip()


def outpath(daemon, mk_path, name, version, kernel="k1"):
    """A toplevel's store path, without building it."""
    expr = "(import %s) { name = %s; version = %s; kernel = %s; }" \
        % (mk_path, json.dumps(name), json.dumps(version),
           json.dumps(kernel))
    r = daemon.nix("nix-instantiate", "-E", expr)
    if r.returncode != 0:
        raise RuntimeError("nix-instantiate: " + r.stderr)
    r = daemon.nix("nix-store", "--query", "--outputs", r.stdout.strip())
    return r.stdout.strip()


def client_key(env):
    key = env.path("hosts-id")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                    "nops", "-f", key], check=True)
    os.chmod(key, 0o600)
    return key, open(key + ".pub").read().strip()


def have_tools():
    missing = [t for t in ("nix-instantiate", "nix-daemon", "nix-store",
                           "unshare", "nsenter", "/usr/sbin/sshd")
               if shutil.which(t) is None]
    return missing
