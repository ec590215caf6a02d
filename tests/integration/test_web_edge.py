"""The HTTP edge against the real daemon (nopsd.8, HTTP EDGE): the body
limit holds as documented (just under, at and over it, by Content-Length
and chunked, on the API and on a signed webhook: exact statuses, never a
stall); strict framing; the Host allow-list; our security headers on every
early refusal; an idle flood from one address while another is served;
in a network namespace of its own, IPv6 connections counted per /64."""
import concurrent.futures
import hashlib
import hmac
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "browser"))
import webenv  # noqa: E402
from webenv import Web, status_of, ok, wait_until, free_port  # noqa: E402
from enginelib import Nops  # noqa: E402
import opslib  # noqa: E402

LIMIT = 1024 * 1024		# max-body-size's default
SECRET = "whsec-edge-test-5d1e"
SEC_HEADERS = ("content-security-policy", "x-frame-options",
               "x-content-type-options", "referrer-policy")


class HookNops(Nops):
    """The web test's daemon, with a webhook secret for its repository."""

    def write_conf(self, repos):
        super().write_conf(repos)
        opslib.add_to_repo(self.conf, "infra", [
            'webhook secret file "%s"' % self.secret])


def exchange(port, data, src="127.0.0.1", timeout=10, chunks=None,
             whole=False):
    """Send bytes, read until the server closes or (unless whole) the
    first answer is complete; None if nothing came within timeout (a
    stall)."""
    s = socket.create_connection(("127.0.0.1", port), timeout,
                                 source_address=(src, 0))
    out = b""
    try:
        s.sendall(data)
        for c in chunks or ():
            s.sendall(c)
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
            head, sep, body = out.partition(b"\r\n\r\n")
            if sep:
                hl = dict(x.split(b":", 1) for x in head.split(
                    b"\r\n")[1:] if b":" in x)
                hl = {k.strip().lower(): v.strip() for k, v in hl.items()}
                n = int(hl.get(b"content-length", b"-1"))
                if n >= 0 and len(body) >= n and not whole:
                    break
    except socket.timeout:
        return out or None
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return out


def headers_of(resp):
    head = resp.partition(b"\r\n\r\n")[0].decode("latin-1")
    h = {}
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        h[k.strip().lower()] = v.strip()
    return h


def secure(resp):
    h = headers_of(resp)
    return all(k in h for k in SEC_HEADERS) and \
        "default-src 'self'" in h["content-security-policy"]


def padded(n):
    """A JSON object of exactly n bytes."""
    return b'{"pad": "' + b"a" * (n - 11) + b'"}'


def post_head(path, n, extra=b"", chunked=False):
    h = b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" \
        b"Content-Type: application/json\r\nConnection: close\r\n" + extra
    if chunked:
        return h + b"Transfer-Encoding: chunked\r\n\r\n"
    return h + b"Content-Length: %d\r\n\r\n" % n


def chunked(body, size=100000):
    out = b""
    for i in range(0, len(body), size):
        part = body[i:i + size]
        out += b"%x\r\n%s\r\n" % (len(part), part)
    return out + b"0\r\n\r\n"


def case_bodies(w):
    api = "/api/v1/deployments/1/actions/approve"
    for n, what in ((LIMIT - 1, "just under"), (LIMIT, "at")):
        for ch in (False, True):
            body = padded(n)
            how = "chunked" if ch else "Content-Length"
            r = exchange(w.port, post_head(api, n, chunked=ch) +
                         (chunked(body) if ch else body))
            ok("API body %s the limit (%s): read and answered by the "
               "master (401, no credentials)" % (what, how),
               r is not None and status_of(r) == 401, (r or b"")[:200])
            hid = "edge-%d-%d" % (n, ch)
            sig = "sha256=" + hmac.new(SECRET.encode(), body,
                                       hashlib.sha256).hexdigest()
            extra = ("X-Hub-Signature-256: %s\r\nX-GitHub-Delivery: %s\r\n"
                     % (sig, hid)).encode()
            r = exchange(w.port, post_head("/webhook/git/infra", n, extra,
                                           ch) +
                         (chunked(body) if ch else body))
            ok("signed webhook %s the limit (%s): 202" % (what, how),
               r is not None and status_of(r) == 202, (r or b"")[:300])
    # Over: refused at once, before the body is sent.
    r = exchange(w.port, post_head(api, LIMIT + 1), timeout=5)
    ok("API body one byte over the limit (Content-Length): 413 before "
       "the body is sent", r is not None and status_of(r) == 413 and
       secure(r), (r or b"")[:300])
    r = exchange(w.port, post_head("/webhook/git/infra", LIMIT + 1),
                 timeout=5)
    ok("webhook body over the limit (Content-Length): 413 at once",
       r is not None and status_of(r) == 413, (r or b"")[:300])
    for path in (api, "/webhook/git/infra"):
        # A first chunk under the limit, then one that crosses it: the
        # answer comes once its size line is seen, its data never sent.
        first = b"%x\r\n%s\r\n" % (LIMIT - 10, b"a" * (LIMIT - 10))
        r = exchange(w.port, post_head(path, 0, chunked=True) + first +
                     b"b\r\n", timeout=5)
        ok("%s chunked past the limit: 413 as soon as it is crossed" %
           path, r is not None and status_of(r) == 413 and secure(r),
           (r or b"")[:300])
    r = exchange(w.port, post_head(api, LIMIT + 1) + padded(LIMIT + 1))
    ok("over the limit with the body sent anyway: 413, and the answer "
       "is not lost to a reset", r is not None and status_of(r) == 413,
       (r or b"")[:200])


FRAMING = [
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
     b"2\r\nContent-Length: 3\r\n\r\n{}", 400, "two different "
     "Content-Length"),
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
     b"2\r\nContent-Length: 2\r\n\r\n{}", 400, "the same Content-Length "
     "twice"),
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
     b"Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400,
     "whitespace before a header colon (Transfer-Encoding :)"),
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length"
     b"\t: 2\r\n\r\n{}", 400, "a tab before a header colon"),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b\r\n c\r\n\r\n", 400,
     "obsolete line folding"),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b\n\r\n", 400,
     "a bare LF"),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b\rX-B: c\r\n\r\n", 400,
     "a bare CR"),
    (b"GET / HTTP/1.1\nHost: 127.0.0.1\n\n", 400, "LF-only lines"),
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
     b"5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
     "Content-Length and Transfer-Encoding"),
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
     b"Transfer-Encoding: gzip, chunked\r\n\r\n", 501,
     "a Transfer-Encoding other than chunked"),
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n2;ext=1\r\n{}\r\n0\r\n\r\n", 400,
     "a chunk extension"),
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
     b"+2\r\n\r\n{}", 400, "a Content-Length that is not digits"),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\x00b\r\n\r\n", 400,
     "a NUL in a header"),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\x1bb\r\n\r\n", 400,
     "a control byte in a header"),
    (b"GET /  HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400,
     "a malformed request line"),
    (b"\r\nGET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400,
     "an empty line before the request line"),
    (b"GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400,
     "an absolute-form target"),
    (b"GET / HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n", 505, "HTTP/2.0"),
    (b"BREW / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501,
     "an unknown method"),
    (b"GET /" + b"a" * 3000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
     414, "a target past 2048 bytes"),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20000 +
     b"\r\n\r\n", 431, "headers past 16 KiB"),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}",
     400, "a body on GET"),
    (b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: "
     b"200-ok\r\nContent-Length: 2\r\n\r\n{}", 417, "an unknown Expect"),
]


def case_framing(w):
    for data, want, what in FRAMING:
        r = exchange(w.port, data, timeout=5)
        ok("framing: %s: %d with the security headers" % (what, want),
           r is not None and status_of(r) == want and secure(r),
           (r or b"")[:300])
    r = exchange(w.port, b"GET /static/nops.svg HTTP/1.1\r\nHost: "
                 b"127.0.0.1\r\n\r\nGET /login HTTP/1.1\r\nHost: "
                 b"127.0.0.1\r\nConnection: close\r\n\r\n", whole=True)
    ok("framing: two well-formed requests in one write are both answered",
       r is not None and r.count(b"HTTP/1.1 200") == 2, (r or b"")[:200])
    r = exchange(w.port, b"POST /api/v1/login HTTP/1.1\r\nHost: "
                 b"127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                 b"2\r\n{}\r\n0\r\nX-Trailer: 1\r\n\r\n")
    ok("framing: a chunked body with a trailer is read and answered",
       r is not None and status_of(r) == 400 and b"username" in r,
       (r or b"")[:300])


def case_host(w, port2):
    def get(port, host, ver=b"1.1", src="127.0.0.1"):
        h = b"Host: " + host + b"\r\n" if host is not None else b""
        return exchange(port, b"GET /login HTTP/" + ver + b"\r\n" + h +
                        b"Connection: close\r\n\r\n", src)

    r = get(w.port, b"127.0.0.1:%d" % w.port)
    ok("host: the listen address: 200", status_of(r) == 200, r[:200])
    r = get(w.port, b"LocalHost:%d" % w.port)
    ok("host: localhost on a loopback listen: 200", status_of(r) == 200,
       r[:200])
    r = get(w.port, b"rebind.attacker.example:%d" % w.port)
    ok("host: another name (DNS rebinding): 421 with our headers",
       status_of(r) == 421 and secure(r), r[:300])
    r = get(w.port, b"127.0.0.2")
    ok("host: another address: 421", status_of(r) == 421, r[:200])
    r = get(w.port, None)
    ok("host: none on HTTP/1.1: 400", status_of(r) == 400 and secure(r),
       r[:200])
    r = get(w.port, None, b"1.0")
    ok("host: none on HTTP/1.0: served", status_of(r) == 200, r[:200])
    r = exchange(w.port, b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Host: 127.0.0.1\r\n\r\n")
    ok("host: twice: 400", status_of(r) == 400, r[:200])
    r = get(port2, b"nops.test:%d" % port2)
    ok("host: a listen's own hostnames: 200", status_of(r) == 200, r[:200])
    r = get(port2, b"127.0.0.1:%d" % port2)
    ok("host: with hostnames set, the address is not among them: 421",
       status_of(r) == 421, r[:200])
    st, _ = w.local("GET", "/api/v1/status")
    ok("host: the control socket is not checked", st == 200, st)


def login(port, src, user, password):
    body = json.dumps({"username": user, "password": password}).encode()
    r = exchange(port, b"POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/json\r\nConnection: close\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body) + body, src)
    return status_of(r or b""), headers_of(r or b"")


def case_login(w):
    # 14 addresses try alice's password 5 times each.  The first fails 5
    # times; then alice's name is under attack and each other address,
    # once it has failed, waits: one guess per address, not five.
    t0 = time.monotonic()
    codes = []
    for i in range(14):
        for _ in range(5):
            codes.append(login(w.port, "127.0.3.%d" % (i + 1), "alice",
                               "wrong")[0])
    want = [401] * 5 + ([401] + [429] * 4) * 13
    ok("lockout: alice under attack from 14 addresses: 5 guesses from the "
       "first, then one from each other", codes == want, codes)
    # 60 more addresses fail once each (unknown names): the brake is on.
    # Eight at a time: the brake counts the last minute, and one by one
    # on a loaded machine (bcrypt for each) they could take longer.
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: login(w.port, "127.0.5.%d" % (i + 1),
                                      "nobody%d" % i, "wrong"), range(60)))
    st, h = login(w.port, "127.0.3.1", "alice", "wrong")
    ok("lockout: an address with 5 failures is refused (429, "
       "Retry-After)", st == 429 and "retry-after" in h, (st, h))
    st, _ = login(w.port, "127.0.3.1", "alice", webenv.USERS["alice"])
    ok("lockout: ... even with the right password", st == 429, st)
    st, _ = login(w.port, "127.0.0.2", "alice", webenv.USERS["alice"])
    ok("lockout: alice with the right password from an address that has "
       "not failed logs in, though her name is under attack and the brake "
       "is on", st == 200, st)
    st, _ = login(w.port, "127.0.0.5", "rita", webenv.USERS["rita"])
    ok("lockout: another user from a fresh address logs in", st == 200, st)
    st, _ = login(w.port, "127.0.4.1", "rita", "wrong")
    ok("lockout: under the brake, a new address still gets its try (401)",
       st == 401, st)
    st, h = login(w.port, "127.0.4.1", "rita", webenv.USERS["rita"])
    ok("lockout: and then waits its turn (429, Retry-After at most 30 s)",
       st == 429 and 0 < int(h.get("retry-after", "0")) <= 30, (st, h))
    log = w.nops.logtext()
    n = log.count("failed login for")
    # At most 5 lines per 10-second window (nopsd.8): a slow machine
    # spreads the logins over more windows, so the bound is the windows'.
    windows = int((time.monotonic() - t0) // 10) + 2
    ok("lockout: 79 failed logins made %d log lines (coalesced, at most "
       "5 in each of %d windows)" % (n, windows), n <= 5 * windows and
       n < 79, n)
    st, text = w.local("GET", "/metrics")
    m = re.search(r'nops_log_events_total\{what="failed logins"\} (\d+)',
                  text)
    s = re.search(r'nops_log_suppressed_total\{what="failed logins"\} '
                  r'(\d+)', text)
    ok("lockout: /metrics counts every failed login and the lines held "
       "back", m and int(m.group(1)) == 79 and s and int(s.group(1)) > 0,
       (m and m.group(0), s and s.group(0)))
    # A check at bcrypt cost 10 runs about 57 ms: its process gives way
    # every 250 us of it (auth_hash.c), some 200 times per check.
    g = re.search(r'^nops_auth_hash_gave_way_total (\d+)$', text, re.M)
    ok("lockout: the checks' processes gave way while hashing (at least "
       "50 times for the checks of 79 logins)",
       g and int(g.group(1)) >= 50, g and g.group(0))


def case_webhook_flood(w):
    """The log flood of issue 11: rejected webhooks, one line each."""
    body = b'{"ref": "refs/heads/main"}'
    head = (b"POST /webhook/git/infra HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nX-Hub-Signature-256: "
            b"sha256=" + b"0" * 64 + b"\r\nContent-Length: %d\r\n\r\n"
            % len(body))
    # Keep-alive: 300 bad deliveries on one connection.
    sock = socket.create_connection(("127.0.0.1", w.port), 10)
    sock.sendall((head + body) * 300)
    got, buf = 0, b""
    sock.settimeout(10)
    try:
        while got < 300:
            d = sock.recv(65536)
            if not d:
                break
            buf += d
            got = buf.count(b"HTTP/1.1 403")
    except socket.timeout:
        pass
    sock.close()
    ok("log flood: 300 badly signed webhooks, each refused (403)",
       got == 300, got)
    log = w.nops.logtext()
    lines = log.count("webhook from")
    ok("log flood: they made %d log lines, not 300" % lines, lines <= 10,
       lines)
    summed = wait_until(lambda: "rejected webhooks: ... and" in
                        w.nops.logtext(), 15)
    m = re.search(r"rejected webhooks: \.\.\. and (\d+) more in the last "
                  r"(\d+) s", w.nops.logtext())
    ok("log flood: then one line sums up the rest (%s)" %
       (m.group(0) if m else None), summed and m and
       int(m.group(1)) + lines == 300, m and m.group(0))
    st, text = w.local("GET", "/metrics")
    m = re.search(r'nops_log_events_total\{what="rejected webhooks"\} '
                  r'(\d+)', text)
    ok("log flood: /metrics counts all 300", m and int(m.group(1)) == 300,
       m and m.group(0))


def idle_open(port, src, n):
    socks = []
    for i in range(n):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), 5,
                                                  source_address=(src, 0)))
        except OSError:
            break
    return socks


def still_open(socks):
    n = 0
    for s in socks:
        s.setblocking(False)
        try:
            d = s.recv(4096)
            if d and not d.startswith(b"HTTP/1.1 503"):
                n += 1
        except BlockingIOError:
            n += 1
        except OSError:
            pass
    return n


def case_idle_flood(w):
    # An address nothing else uses, so that the count is its own.
    socks = idle_open(w.port, "127.0.0.3", 400)
    try:
        time.sleep(1)
        kept = still_open(socks)
        ok("idle flood: 400 connections from one address, at most 32 "
           "kept (%d)" % kept, kept <= 32, kept)
        r = exchange(w.port, b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Connection: close\r\n\r\n", src="127.0.0.2")
        ok("idle flood: another address is served meanwhile",
           r is not None and status_of(r) == 200, (r or b"")[:200])
        r = exchange(w.port, b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Connection: close\r\n\r\n", src="127.0.0.3")
        ok("idle flood: the flooding address gets 503 with Retry-After",
           r is not None and status_of(r) == 503 and
           "retry-after" in headers_of(r), (r or b"")[:200])
    finally:
        for s in socks:
            s.close()
    got = wait_until(lambda: status_of(exchange(
        w.port, b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
        b"close\r\n\r\n", src="127.0.0.3") or b"") == 200, 10)
    ok("idle flood: once they close, the address is served again", got)


V6_NET = "fd00:6e6f:7073::"		# the daemon's /64, and a neighbour
V6_OTHER = "fd00:6e6f:7073:1::"	# another /64


def v6_exchange(port, src, timeout=10):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(timeout)
    out = b""
    try:
        s.bind((src, 0))
        s.connect((V6_NET + "10", port))
        s.sendall(b"GET /login HTTP/1.1\r\nHost: v6.test\r\n"
                  b"Connection: close\r\n\r\n")
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except (socket.timeout, ConnectionResetError):
        pass
    finally:
        s.close()
    return out


def case_v6_prefix():
    """Run in a network namespace of our own (main() starts it), where
    loopback may carry any IPv6 address: two addresses of one /64 share
    its count, another /64 has its own."""
    for cmd in (["ip", "link", "set", "lo", "up"],
                ["ip", "addr", "add", V6_NET + "10/64", "dev", "lo",
                 "nodad"],
                ["ip", "addr", "add", V6_NET + "11/64", "dev", "lo",
                 "nodad"],
                ["ip", "addr", "add", V6_NET + "12/64", "dev", "lo",
                 "nodad"],
                ["ip", "addr", "add", V6_OTHER + "10/64", "dev", "lo",
                 "nodad"]):
        subprocess.run(cmd, check=True)
    port = free_port()
    w = Web(tls=False, extra=['listen on %s10 port %d hostnames { '
                              '"v6.test" }' % (V6_NET, port),
                              "max-connections-per-address 2"])
    socks = []
    try:
        for src in (V6_NET + "11", V6_NET + "11"):
            s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            s.settimeout(5)
            s.bind((src, 0))
            s.connect((V6_NET + "10", port))
            socks.append(s)
        time.sleep(1)
        ok("v6: two idle connections from %s11 are kept" % V6_NET,
           still_open(socks) == 2, still_open(socks))
        r = v6_exchange(port, V6_NET + "12")
        ok("v6: a third from another address of the same /64 (%s12) is "
           "answered 503" % V6_NET, status_of(r) == 503 and
           "retry-after" in headers_of(r), r[:200])
        r = v6_exchange(port, V6_OTHER + "10")
        ok("v6: one from another /64 (%s10) is served" % V6_OTHER,
           status_of(r) == 200, r[:200])
    finally:
        for s in socks:
            s.close()
        w.stop()


def main():
    port2 = free_port()
    webenv.Nops = HookNops
    HookNops.secret = None
    # The secret file must exist before the config is written.
    import enginelib
    env_probe = enginelib.Env()
    HookNops.secret = opslib.secret_file(env_probe, "infra.webhook",
                                         SECRET + "\n")
    w = Web(tls=False, extra=['listen on 127.0.0.1 port %d hostnames { '
                              '"nops.test" }' % port2])
    try:
        ok("the daemon is up", w.nops.ctl("-j", "status")[0] == 0)
        case_bodies(w)
        case_framing(w)
        case_host(w, port2)
        case_idle_flood(w)
        case_login(w)
        case_webhook_flood(w)
        alive, why = w.alive()
        ok("after all of it the webworker never restarted", alive, why)
        # The summary comes when the window ends (10 s).
        wait_until(lambda: "refused requests: ... and" in
                   w.nops.logtext(), 15)
        log = w.nops.logtext()
        lines = log.count("webworker: refused ")
        ok("refusals are logged coalesced: %d lines for some 400 "
           "refusals, and a summary with the count" % lines, lines <= 40 and
           "refused requests: ... and" in log, log[-3000:])
    finally:
        w.stop()
        env_probe.cleanup()


if sys.argv[1:] == ["--v6"]:
    case_v6_prefix()
else:
    main()
    # Its own network namespace: its output joins ours.
    r = subprocess.run(["unshare", "--net", sys.executable,
                        os.path.abspath(__file__), "--v6"])
    ok("v6: the namespaced part ran to its end", r.returncode == 0,
       r.returncode)
