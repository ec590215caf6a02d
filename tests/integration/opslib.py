"""Helpers of the webhook, /metrics and notification tests: nopsd's TCP
listener, webhook signatures, a local HTTP receiver that records what
it is sent, promtool, and the Prometheus text format.

Built on gitlib and enginelib; each test starts only its own processes.
"""
import hashlib
import hmac
import http.server as httpserver
import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitlib  # noqa: E402


def secret_file(env, name, content, mode=0o600):
    path = env.path(name)
    with open(path, "w") as f:
        f.write(content)
    os.chmod(path, mode)
    return path


def add_to_repo(conf, repo, lines):
    """Add lines to the repository block named repo of a config file."""
    with open(conf) as f:
        text = f.read()
    head = 'repository "%s" {\n' % repo
    if head not in text:
        raise RuntimeError("no repository %s in %s" % (repo, conf))
    text = text.replace(head, head + "".join("\t%s\n" % x for x in lines))
    with open(conf, "w") as f:
        f.write(text)


def tcp_port(conf):
    """The port of the first "listen on 127.0.0.1 port N" of a config."""
    with open(conf) as f:
        m = re.search(r"^listen on 127\.0\.0\.1 port (\d+)", f.read(), re.M)
    return int(m.group(1))


def http(port, method, path, body=None, headers=None, timeout=15):
    """One request over TCP: (status, headers, body bytes)."""
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 data=body, method=method)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def as_json(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


def hub_signature(secret, body):
    return "sha256=" + hmac.new(secret.encode(), body,
                                hashlib.sha256).hexdigest()


def gitea_signature(secret, body):
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Receiver:
    """An HTTP server on a free loopback port that records each POST
    (path, headers, body) and answers with self.status."""

    def __init__(self, status=200):
        self.status = status
        self.requests = []
        self.lock = threading.Lock()
        outer = self

        class Handler(httpserver.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                with outer.lock:
                    outer.requests.append({
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in
                                    self.headers.items()},
                        "body": body})
                self.send_response(outer.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = httpserver.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      Handler)
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    def got(self):
        with self.lock:
            return list(self.requests)

    def json_bodies(self):
        out = []
        for r in self.got():
            try:
                out.append(json.loads(r["body"]))
            except ValueError:
                out.append(None)
        return out

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def promtool(text):
    """promtool check metrics on text: (exit status, output)."""
    r = subprocess.run(["promtool", "check", "metrics"], input=text,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return r.returncode, r.stdout


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """{(name, ((label, value), ...)): float} of the text format."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            raise ValueError("bad sample line: %r" % line)
        labels = tuple(sorted(
            (k, bytes(v, "utf-8").decode("unicode_escape"))
            for k, v in _LABEL.findall(m.group(3) or "")))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def metric(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))))


def grep_tree(paths, needle):
    """Files under paths (files or directories) whose bytes hold needle."""
    hits = []
    for top in paths:
        walk = [(top, [], [os.path.basename(top)])] \
            if os.path.isfile(top) else os.walk(top)
        for d, _, files in walk:
            for f in files:
                p = os.path.join(d, f) if not os.path.isfile(top) else top
                try:
                    with open(p, "rb") as fh:
                        if needle.encode() in fh.read():
                            hits.append(p)
                except OSError:
                    pass
    return hits


ok = gitlib.ok
wait_until = gitlib.wait_until
