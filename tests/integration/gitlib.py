"""Helpers of the git integration tests: remotes served by git daemon,
git http-backend and sshd on loopback, and nopsd started on them.

Each test starts only its own processes and stops them by pid.  Output is
one "ok - NAME" or "not ok - NAME" line per case.
"""
import atexit
import hashlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

NOPSD = os.environ["NOPSD"]
NOPSCTL = os.environ["NOPSCTL"]
HERE = os.path.dirname(os.path.abspath(__file__))

failures = 0


def ok(name, cond, detail=""):
    global failures
    if cond:
        print("ok - " + name, flush=True)
    else:
        failures += 1
        print("not ok - " + name, flush=True)
        if detail:
            for line in str(detail).splitlines()[:20]:
                print("# " + line, flush=True)
    return cond


def skip(name, why):
    """A case that cannot run here: counted as skipped, with why."""
    print("ok - %s # SKIP %s" % (name, why), flush=True)


def test_hooks_built():
    """nopsd was configured with --enable-test-hooks (its build tree's
    config.h says so)."""
    conf = os.path.join(os.path.dirname(NOPSD), "..", "config.h")
    try:
        with open(conf) as f:
            return "\n#define NOPS_TEST_HOOKS 1\n" in "\n" + f.read()
    except OSError:
        return False


NO_TEST_HOOKS = "needs a build with --enable-test-hooks"


def need_test_hooks(name):
    """Without the test hooks, report name as one skipped case and end
    the test."""
    if not test_hooks_built():
        skip(name, NO_TEST_HOOKS)
        sys.exit(0)


def wait_until(fn, timeout=10.0, step=0.1):
    end = time.monotonic() + timeout
    while True:
        try:
            v = fn()
            if v:
                return v
        except Exception:
            pass
        if time.monotonic() > end:
            return None
        time.sleep(step)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def give_to_master(path):
    """A secret file the test changes while nopsd runs: the master, which
    dropped root to _nopsd, reads it again at a reload only if it is that
    user's (nopsd.8, RELOAD).  One only root reads is kept from the start
    and may not change."""
    os.chown(path, pwd.getpwnam("_nopsd").pw_uid, -1)


def wait_port(port, timeout=10.0):
    def up():
        with socket.create_connection(("127.0.0.1", port), 0.5):
            return True
    return wait_until(up, timeout)


class Env:
    """A temporary directory and the processes started in it."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="nops-git.")
        # The gitworker (an unprivileged user) reaches its cache below.
        os.chmod(self.dir, 0o711)
        self.procs = []
        self.remotes = os.path.join(self.dir, "remotes")
        os.mkdir(self.remotes)
        os.chmod(self.remotes, 0o755)
        atexit.register(self.cleanup)

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def start(self, argv, **kw):
        p = subprocess.Popen(argv, **kw)
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGTERM):
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def cleanup(self):
        for p in reversed(self.procs):
            self.stop(p)
        shutil.rmtree(self.dir, ignore_errors=True)


def git(*args, cwd=None, check=True, input=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="Tess Ter",
               GIT_AUTHOR_EMAIL="tess@example.org",
               GIT_COMMITTER_NAME="Tess Ter",
               GIT_COMMITTER_EMAIL="tess@example.org",
               GIT_CONFIG_NOSYSTEM="1", HOME="/nonexistent")
    r = subprocess.run(["git"] + list(args), cwd=cwd, env=env, input=input,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if check and r.returncode != 0:
        raise RuntimeError("git %s: %s" % (" ".join(args), r.stderr))
    return r.stdout.strip()


class Remote:
    """A bare repository under env.remotes and a work tree to push from."""

    def __init__(self, env, name, branch="main"):
        self.env = env
        self.name = name
        self.branch = branch
        self.bare = os.path.join(env.remotes, name + ".git")
        self.work = env.path("work-" + name)
        git("init", "-q", "--bare", "-b", branch, self.bare)
        # Tests delete the branch the remote's HEAD names.
        git("config", "receive.denyDeleteCurrent", "ignore", cwd=self.bare)
        git("config", "http.receivepack", "true", cwd=self.bare)
        git("init", "-q", "-b", branch, self.work)
        git("remote", "add", "origin", self.bare, cwd=self.work)

    def write(self, files):
        """files: {path: content or None to delete}"""
        for p, content in files.items():
            full = os.path.join(self.work, p)
            if content is None:
                if os.path.lexists(full):
                    os.unlink(full)
                continue
            os.makedirs(os.path.dirname(full), exist_ok=True)
            if os.path.lexists(full):
                os.unlink(full)
            if isinstance(content, tuple) and content[0] == "symlink":
                os.symlink(content[1], full)
            else:
                with open(full, "wb") as f:
                    f.write(content.encode() if isinstance(content, str)
                            else content)

    def commit(self, files, msg="change", push=True):
        self.write(files)
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "--allow-empty", "-m", msg, cwd=self.work)
        if push:
            self.push()
        return self.head()

    def push(self, force=False):
        args = ["push", "-q"] + (["-f"] if force else []) + \
            ["origin", "HEAD:refs/heads/" + self.branch]
        git(*args, cwd=self.work)

    def head(self):
        return git("rev-parse", "HEAD", cwd=self.work)

    def remote_head(self):
        return git("rev-parse", "refs/heads/" + self.branch, cwd=self.bare,
                   check=False)

    def delete_branch(self):
        git("push", "-q", "origin", ":refs/heads/" + self.branch,
            cwd=self.work)

    def files_at(self, commit, top):
        """{path: bytes} of every file nops should take at commit."""
        names = git("ls-tree", "-r", "-z", "--full-tree", commit,
                    cwd=self.work).split("\0")
        out = {}
        for line in names:
            if not line:
                continue
            meta, path = line.split("\t", 1)
            mode = meta.split()[0]
            if mode not in ("100644", "100755"):
                continue
            if top and not path.startswith(top + "/"):
                continue
            rel = path[len(top) + 1:] if top else path
            base = os.path.basename(path)
            job = base.endswith(".nomad.hcl") or base.endswith(".nomad")
            plan = rel == "nops.plan.json"
            if job or plan:
                out[path] = None
                if job:
                    stem = base[:-10] if base.endswith(".nomad.hcl") \
                        else base[:-6]
                    v = os.path.join(os.path.dirname(path),
                                     stem + ".vars.hcl")
                    r = subprocess.run(["git", "cat-file", "-e",
                                        commit + ":" + v], cwd=self.work,
                                       stderr=subprocess.DEVNULL)
                    if r.returncode == 0:
                        out[v] = None
        for p in out:
            out[p] = subprocess.run(["git", "cat-file", "blob",
                                     commit + ":" + p], cwd=self.work,
                                    stdout=subprocess.PIPE).stdout
        return out


def sha256(data):
    return hashlib.sha256(data).hexdigest()


class GitDaemon:
    def __init__(self, env, port=None):
        self.env = env
        self.port = port or free_port()
        self.proc = None

    def start(self):
        self.proc = self.env.start(
            ["git", "daemon", "--reuseaddr", "--export-all",
             "--base-path=" + self.env.remotes, "--listen=127.0.0.1",
             "--port=%d" % self.port, "--informative-errors",
             self.env.remotes],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def stop(self):
        self.env.stop(self.proc)

    def url(self, name):
        return "git://127.0.0.1:%d/%s.git" % (self.port, name)


class HttpServer:
    """git http-backend behind gitserve.py; tls: a self-signed https."""

    def __init__(self, env, tls=False):
        self.env = env
        self.port = free_port()
        self.scheme = "https" if tls else "http"
        argv = [sys.executable, os.path.join(HERE, "gitserve.py"),
                str(self.port), env.remotes]
        if tls:
            cert, key = env.path("tls.crt"), env.path("tls.key")
            subprocess.run(["openssl", "req", "-x509", "-newkey",
                            "rsa:2048", "-nodes", "-keyout", key, "-out",
                            cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                            "-addext", "subjectAltName=IP:127.0.0.1"],
                           check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            argv += [cert, key]
        self.proc = env.start(argv, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def url(self, name):
        return "%s://127.0.0.1:%d/%s.git" % (self.scheme, self.port, name)


class Sshd:
    """An OpenSSH server with its own host key; root logs in with a key."""

    def __init__(self, env):
        self.env = env
        self.port = free_port()
        d = env.path("ssh")
        # Searchable, not listable: the master, which dropped root, sees
        # whether the key files it kept from the start changed.
        os.mkdir(d, 0o711)
        self.hostkey = os.path.join(d, "hostkey")
        self.clientkey = os.path.join(d, "id")
        self.otherkey = os.path.join(d, "other")
        for k in (self.hostkey, self.clientkey, self.otherkey):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "",
                            "-C", "nops-test", "-f", k], check=True)
        with open(self.clientkey + ".pub") as f:
            pub = f.read().strip()
        auth = os.path.join(d, "authorized_keys")
        with open(auth, "w") as f:
            f.write("restrict " + pub + "\n")
        os.chmod(auth, 0o600)
        host = open(self.hostkey + ".pub").read().split()
        other = open(self.otherkey + ".pub").read().split()
        self.known = os.path.join(d, "known_hosts")
        with open(self.known, "w") as f:
            f.write("# pinned for the test\n")
            f.write("[127.0.0.1]:%d %s %s\n" % (self.port, host[0], host[1]))
        self.wrong_known = os.path.join(d, "known_hosts.wrong")
        with open(self.wrong_known, "w") as f:
            f.write("[127.0.0.1]:%d %s %s\n" % (self.port, other[0],
                                                 other[1]))
        cfg = os.path.join(d, "sshd_config")
        with open(cfg, "w") as f:
            f.write("""ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile none
LogLevel ERROR
StrictModes no
""" % (self.port, self.hostkey, auth))
        # /tmp is world-writable: StrictModes would refuse the keys file.
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.proc = env.start(["/usr/sbin/sshd", "-D", "-e", "-f", cfg],
                              stdout=subprocess.DEVNULL,
                              stderr=open(env.path("sshd.log"), "w"))
        wait_port(self.port)

    def url(self, path):
        return "ssh://root@127.0.0.1:%d%s" % (self.port, path)


class Nopsd:
    """nopsd -d with a config of repositories."""

    def __init__(self, env, repos, hook=None, extra_env=None, tag="nopsd"):
        self.env = env
        self.tag = tag
        self.sock = env.path(tag + ".sock")
        self.conf = env.path(tag + ".conf")
        self.log = env.path(tag + ".log")
        self.db = env.path("db-" + tag)
        self.write_conf(repos)
        e = dict(os.environ)
        if hook:
            e["NOPS_TEST_HOOK"] = hook
        e.update(extra_env or {})
        self.proc = env.start([NOPSD, "-d", "-v", "-f", self.conf],
                              stdout=open(self.log, "w"),
                              stderr=subprocess.STDOUT, env=e)
        if not wait_until(lambda: self.ctl("-j", "status")[0] == 0, 15):
            raise RuntimeError("nopsd did not start:\n" + self.logtext())

    def write_conf(self, repos):
        # One port for the daemon's life: a reload that changes a listener
        # is refused whole (it takes a restart; nopsd.8 RELOAD).
        if getattr(self, "http_port", None) is None:
            self.http_port = free_port()
        lines = ['user "_nops"',
                 'database "%s/nops.db"' % self.db,
                 'control socket "%s" group "_nopsadm"' % self.sock,
                 "listen on 127.0.0.1 port %d" % self.http_port]
        for r in repos:
            lines.append('repository "%s" {' % r["name"])
            lines.append('\turl "%s"' % r["url"])
            for k in ("branch", "path"):
                if r.get(k) is not None:
                    lines.append('\t%s "%s"' % (k, r[k]))
            lines.append("\tpoll-interval %s" % r.get("poll", "1m"))
            if r.get("key"):
                lines.append('\tssh key file "%s"' % r["key"])
            if r.get("known"):
                lines.append('\tknown-hosts file "%s"' % r["known"])
            for extra in r.get("extra", ()):
                lines.append("\t" + extra)
            lines.append("}")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def logtext(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def ctl(self, *args):
        r = subprocess.run([NOPSCTL, "-s", self.sock] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        return r.returncode, r.stdout, r.stderr

    def repo(self, name):
        rc, out, err = self.ctl("-j", "repos", name)
        if rc != 0:
            raise RuntimeError(err)
        return json.loads(out)

    def repos(self):
        rc, out, err = self.ctl("-j", "repos")
        return json.loads(out)["items"]

    def status(self):
        return json.loads(self.ctl("-j", "status")[1])

    def worker(self, name):
        return [w for w in self.status()["workers"] if w["name"] == name][0]

    def fetch(self, name):
        return self.ctl("fetch", name)[0]

    def wait_commit(self, name, commit, timeout=15):
        return wait_until(lambda: self.repo(name)["commit"] == commit,
                          timeout)

    def wait_error(self, name, needle, timeout=15):
        def has():
            e = self.repo(name)["last_error"]
            return e is not None and needle in e["message"]
        return wait_until(has, timeout)

    def curl(self, method, path, body=None, ctype="application/json"):
        args = ["curl", "-s", "-o", "-", "-w", "\n%{http_code}",
                "--unix-socket", self.sock, "-X", method]
        if body is not None:
            args += ["-H", "Content-Type: " + ctype, "-d", body]
        r = subprocess.run(args + ["http://localhost" + path],
                           stdout=subprocess.PIPE, text=True)
        text, _, code = r.stdout.rpartition("\n")
        try:
            return int(code), json.loads(text) if text else None
        except ValueError:
            return int(code), text

    def restart(self, hook=None, extra_env=None):
        e = dict(os.environ)
        e.pop("NOPS_TEST_HOOK", None)
        if hook:
            e["NOPS_TEST_HOOK"] = hook
        e.update(extra_env or {})
        with open(self.log, "a") as f:
            f.write("---- restart ----\n")
        self.proc = self.env.start([NOPSD, "-d", "-v", "-f", self.conf],
                                   stdout=open(self.log, "a"),
                                   stderr=subprocess.STDOUT, env=e)
        if not wait_until(lambda: self.ctl("-j", "status")[0] == 0, 15):
            raise RuntimeError("nopsd did not restart:\n" + self.logtext())

    def api(self, method, path, body=None):
        return self.curl(method, path, None if body is None and
                         method == "GET" else json.dumps(body or {}))

    def stop(self):
        self.env.stop(self.proc)


def files_match(snap, expected):
    """Compare the API's file list with {path: bytes}; '' if equal."""
    got = {f["path"]: f for f in snap["files"]}
    if set(got) != set(expected):
        return "paths differ: got %s, want %s" % (sorted(got),
                                                 sorted(expected))
    for p, data in expected.items():
        if got[p]["size"] != len(data) or got[p]["sha256"] != sha256(data):
            return "%s: size or hash differs" % p
    return ""


def proc_status(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return line.split()[1]
    return None


def landlock_abi():
    """The kernel's Landlock ABI version, 0 without Landlock."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    v = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return v if v > 0 else 0
