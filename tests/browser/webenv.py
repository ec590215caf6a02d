"""A nopsd for the web tests: nomadsim, a git remote with a job waiting
for approval, a plain and a TLS listener on loopback, a users file with an
approver (alice, group ops) and a reader (rita), and HTTP clients that
keep cookies.  Used by tests/integration/test_web_*.py and by the browser
test's wrapper.
"""
import http.client
import http.cookiejar
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
from enginelib import (Env, Sim, Remote, Nops, job_hcl, hook_hcl,  # noqa
                       ok, wait_until, free_port)

USERS = {"alice": "alice-Pw-1", "rita": "rita-Pw-2"}


def make_users(env, users=USERS):
    path = env.path("users")
    with open(path, "w") as f:
        for name, pw in users.items():
            # bcrypt, cost 10: htpasswd -B (apache2-utils).
            r = subprocess.run(["htpasswd", "-nbBC", "10", name, pw],
                               stdout=subprocess.PIPE, text=True,
                               check=True)
            f.write(r.stdout.strip() + "\n")
    os.chmod(path, 0o600)
    return path


def make_cert(env):
    key, crt = env.path("tls.key"), env.path("tls.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "2",
                    "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    os.chmod(key, 0o600)
    return crt, key


class Web:
    """The daemon and its listeners: .port (HTTP), .tport (HTTPS)."""

    def __init__(self, files=None, tls=True, extra=()):
        self.env = Env()
        self.sim = Sim(self.env)
        self.remote = Remote(self.env, "infra")
        self.remote.commit(files or {
            "nomad/web.nomad.hcl": job_hcl("web", pre="migrate"),
            "nomad/migrate.nomad.hcl": hook_hcl("migrate")}, "initial")
        self.users = make_users(self.env)
        self.port = free_port()
        lines = ["listen on 127.0.0.1 port %d" % self.port,
                 'users file "%s"' % self.users,
                 'group "ops" { "alice" }',
                 'policy "deployer" {\n\tnamespace "*" { read approve '
                 'promote retry deploy-now pause operate }\n}',
                 'policy "viewer" {\n\tnamespace "*" { read }\n}',
                 'bind group "ops" policy "deployer"',
                 'bind user "rita" policy "viewer"']
        self.tport = None
        if tls:
            self.crt, self.key = make_cert(self.env)
            self.tport = free_port()
            lines.append('listen on 127.0.0.1 port %d tls certificate "%s" '
                         'key "%s"' % (self.tport, self.crt, self.key))
        self.nops = Nops(self.env, self.sim, [{
            "name": "infra", "url": "file://" + self.remote.bare,
            "path": "nomad", "poll": "1h"}], extra=lines + list(extra))
        self.url = "http://127.0.0.1:%d" % self.port

    def wait_pending(self, jid="web", timeout=20):
        if not wait_until(lambda: self.nops.job_state(jid) ==
                          "pending_approval", timeout):
            return None
        return self.nops.active(jid)

    def local(self, method, path, body=None, ctype=None):
        """A request over the control socket (the local admin)."""
        args = ["curl", "-s", "-o", "-", "-w", "\n%{http_code}",
                "--unix-socket", self.nops.sock, "-X", method]
        if body is not None:
            args += ["-H", "Content-Type: " + (ctype or "application/json"),
                     "--data-binary", body]
        r = subprocess.run(args + ["http://localhost" + path],
                           stdout=subprocess.PIPE, text=True)
        text, _, code = r.stdout.rpartition("\n")
        return int(code), text

    def alive(self):
        """The daemon answers and the webworker never restarted."""
        try:
            w = self.nops.worker("webworker")
        except Exception as e:
            return False, str(e)
        return w["restarts"] == 0 and w["state"] == "running", w

    def stop(self):
        self.env.cleanup()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kw):
        return None


class Client:
    """A browser-like client: cookies, no automatic redirects."""

    def __init__(self, base, cafile=None):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        handlers = [urllib.request.HTTPCookieProcessor(self.jar),
                    NoRedirect()]
        if cafile:
            ctx = ssl.create_default_context(cafile=cafile)
            handlers.append(urllib.request.HTTPSHandler(context=ctx))
        self.opener = urllib.request.build_opener(*handlers)

    def req(self, method, path, body=None, ctype=None, headers=None):
        data = body.encode() if isinstance(body, str) else body
        r = urllib.request.Request(self.base + path, data=data,
                                   method=method)
        if ctype:
            r.add_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            r.add_header(k, v)
        try:
            with self.opener.open(r, timeout=30) as resp:
                return resp.status, dict(resp.headers), \
                    resp.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), \
                e.read().decode("utf-8", "replace")

    def get(self, path):
        return self.req("GET", path)

    def form(self, path, fields, ctype="application/x-www-form-urlencoded"):
        return self.req("POST", path, urllib.parse.urlencode(fields),
                        ctype)

    def csrf(self, html):
        m = re.search(r'name="csrf" value="([^"]*)"', html)
        return m.group(1) if m else None

    def login(self, user, password):
        st, h, html = self.get("/login")
        tok = self.csrf(html)
        st, h, _ = self.form("/login", {"csrf": tok, "username": user,
                                        "password": password})
        return st == 303, (st, h)


def raw(port, data, timeout=10, tls_ctx=None):
    """Send bytes, return what comes back until the server closes."""
    s = socket.create_connection(("127.0.0.1", port), timeout)
    if tls_ctx is not None:
        s = tls_ctx.wrap_socket(s, server_hostname="localhost")
    s.sendall(data)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    except (ConnectionResetError, ssl.SSLError):
        pass
    s.close()
    return out


def status_of(resp):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", resp)
    return int(m.group(1)) if m else None


def text_of(html):
    """The page's text, tags dropped, entities as they are."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def json_or(text):
    try:
        return json.loads(text)
    except ValueError:
        return None
