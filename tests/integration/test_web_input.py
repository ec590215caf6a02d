"""Bad input against the real webworker: oversized headers and bodies,
slow clients, malformed forms, wrong content types, bad cookies, forms
without their token, too many connections, plain HTTP on the TLS port.
Each gets the right 4xx (or 503) and the daemon stays up."""
import os
import socket
import ssl
import sys
import time
import warnings

# TLS 1.1 on purpose: the server must refuse it.
warnings.filterwarnings("ignore", category=DeprecationWarning)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "browser"))
from webenv import (Web, Client, USERS, raw, status_of, ok,  # noqa: E402
                    wait_until)

SEC_HEADERS = ("Content-Security-Policy", "X-Frame-Options",
               "X-Content-Type-Options", "Referrer-Policy")


def secure(headers):
    h = {k.lower(): v for k, v in headers.items()}
    return all(k.lower() in h for k in SEC_HEADERS) and \
        "default-src 'self'" in h["content-security-policy"]


def case_limits(w):
    big = b"X-Big: " + b"a" * (20 * 1024) + b"\r\n"
    r = raw(w.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + big + b"\r\n")
    ok("headers past 16 KiB: 431", status_of(r) == 431, r[:200])
    huge = b"".join(b"X-H%d: %s\r\n" % (i, b"b" * 1000) for i in range(80))
    r = raw(w.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + huge + b"\r\n")
    ok("headers past 64 KiB: 431 too, ours (libevent's backstop is "
       "never reached)", status_of(r) == 431, r[:200])
    r = raw(w.port, b"POST /api/v1/reload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: 2000000\r\n\r\n")
    ok("an API body announced past 1 MiB: 413 before it is sent",
       status_of(r) == 413, r[:200])
    r = raw(w.port, b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            b"application/x-www-form-urlencoded\r\nContent-Length: 20000"
            b"\r\nConnection: close\r\n\r\n" + b"a" * 20000)
    ok("a form past 16 KiB: 413", status_of(r) == 413, r[:200])
    r = raw(w.port, b"BREW / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    ok("an unknown method is refused", status_of(r) in (400, 405, 501),
       r[:200])
    r = raw(w.port, b"HEAD /login HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            b"GET /static/nops.svg HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Connection: close\r\n\r\n")
    head, _, rest = r.partition(b"\r\n\r\n")
    ok("HEAD: the headers and the length, no body (the next answer "
       "follows at once)", status_of(head) == 200 and
       b"Content-Length: " in head and b"Content-Length: 0" not in head and
       rest.startswith(b"HTTP/1.1 200") and rest.endswith(b"</svg>\n"),
       r[:600])
    c = Client(w.url)
    st, h, _ = c.req("PUT", "/")
    ok("a page with the wrong method: 405 with Allow",
       st == 405 and "Allow" in h, (st, h))
    st, h, body = c.get("/jobs/../etc/passwd")
    ok("a path with '..': 404", st == 404, st)
    st, h, body = c.get("/deployments/1%2f2")
    ok("a path with an encoded '/': 404", st == 404, st)
    st, h, body = c.get("/deployments/abc")
    ok("a deployment that is not a number: 404 page", st == 404 and
       "text/html" in h.get("Content-Type", ""), (st, h))
    st, h, body = c.get("/nothing-here")
    ok("an unknown path is the API's 404, JSON",
       st == 404 and "application/json" in h.get("Content-Type", ""),
       (st, h))
    ok("security headers on an error page", secure(h), h)


def case_slow_client(w):
    s = socket.create_connection(("127.0.0.1", w.port), 5)
    start = time.monotonic()
    closed = None
    data = b"GET / HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"z" * 40
    # One byte a second, as a slow loris does; the server must cut it.
    for i in range(len(data)):
        try:
            s.sendall(data[i:i + 1])
        except OSError:
            closed = time.monotonic() - start
            break
        s.settimeout(1.0)
        try:
            if s.recv(100) == b"":
                closed = time.monotonic() - start
                break
        except socket.timeout:
            pass
        except OSError:
            closed = time.monotonic() - start
            break
    s.close()
    ok("a client sending headers one byte a second is cut off "
       "(after %s s)" % (round(closed) if closed else closed),
       closed is not None and closed < 20, closed)
    c = Client(w.url)
    st, _, _ = c.get("/login")
    ok("meanwhile others are served", st == 200, st)


def case_forms(w, did):
    alice = Client(w.url)
    okl, why = alice.login("alice", USERS["alice"])
    ok("forms: alice logs in", okl, why)
    st, h, html = alice.get("/deployments/%d" % did)
    tok = alice.csrf(html)
    ok("forms: the deployment page has the session's token", tok, st)
    path = "/deployments/%d/approve" % did
    st, _, _ = alice.req("POST", path, "a=1&a=2",
                         "application/x-www-form-urlencoded")
    ok("forms: a field twice: 400", st == 400, st)
    st, _, _ = alice.req("POST", path, "csrf=%zz",
                         "application/x-www-form-urlencoded")
    ok("forms: a bad escape: 400", st == 400, st)
    st, _, _ = alice.req("POST", path, "csrf=a%0db",
                         "application/x-www-form-urlencoded")
    ok("forms: a control byte: 400", st == 400, st)
    st, _, _ = alice.req("POST", path, "noequals",
                         "application/x-www-form-urlencoded")
    ok("forms: a field without '=': 400", st == 400, st)
    st, _, _ = alice.req("POST", path, '{"csrf": "%s"}' % tok,
                         "application/json")
    ok("forms: JSON to a form path: 415", st == 415, st)
    st, _, _ = alice.req("POST", path, "csrf=" + tok, "text/plain")
    ok("forms: text/plain to a form path: 415", st == 415, st)
    st, _, _ = alice.form(path, {"spec_hash": "x"})
    ok("forms: no csrf field: 403", st == 403, st)
    st, _, _ = alice.form(path, {"csrf": "", "spec_hash": "x"})
    ok("forms: an empty csrf field: 403", st == 403, st)
    st, _, _ = alice.form(path, {"csrf": tok[:-2] + "xx"})
    ok("forms: another token: 403", st == 403, st)
    st, j = w.nops.api("GET", "/api/v1/deployments/%d" % did)
    ok("forms: after all that the deployment still waits",
       j["state"] == "pending_approval", j["state"])
    st, _, _ = alice.req("POST", "/api/v1/deployments/%d/actions/approve"
                         % did, "csrf=" + tok,
                         "application/x-www-form-urlencoded",
                         {"X-CSRF-Token": tok})
    ok("forms: an API write that is not JSON: 415", st == 415, st)
    st, j = w.nops.api("GET", "/api/v1/deployments/%d" % did)
    ok("forms: and nothing moved", j["state"] == "pending_approval",
       j["state"])


def case_cookies(w):
    c = Client(w.url)
    st, h, html = c.get("/login")
    tok = c.csrf(html)
    ok("login form: a token, and the same in a cookie",
       tok and tok in h.get("Set-Cookie", ""), h.get("Set-Cookie"))
    anon = Client(w.url)
    st, _, _ = anon.form("/login", {"csrf": tok, "username": "alice",
                                    "password": USERS["alice"]})
    ok("login: the form's token without the cookie: 403", st == 403, st)
    for cookie, what in (("nops_csrf=%s; nops_csrf=%s" % (tok, tok),
                          "the cookie twice"),
                         ("nops_csrf=%s\x01" % tok, "a control byte"),
                         ("nops_csrf=" + "a" * 400, "too long"),
                         ("nops_csrf=%s" % tok.upper(), "not our token")):
        st, _, _ = anon.req("POST", "/login", "csrf=%s&username=alice&"
                            "password=x" % tok,
                            "application/x-www-form-urlencoded",
                            {"Cookie": cookie})
        # A control byte is refused at the edge, before any cookie is
        # read (nopsd.8, HTTP FRAMING).
        want = 400 if what == "a control byte" else 403
        ok("login: a bad cookie (%s): %d" % (what, want), st == want, st)
    st, h, _ = anon.req("GET", "/", headers={
        "Cookie": "nops_session=!!not-a-session!!"})
    ok("a page with a bad session cookie goes to the login page",
       st == 303 and h.get("Location", "").startswith("/login"), (st, h))
    st, _, body = anon.req("GET", "/api/v1/jobs", headers={
        "Cookie": "nops_session=" + "A" * 43})
    ok("the API with an unknown session: 401", st == 401, (st, body))
    st, _, body = anon.req("GET", "/api/v1/jobs", headers={
        "Cookie": "nops_session=\"unterminated; ;; ="})
    ok("the API with a malformed cookie header: 401", st == 401,
       (st, body))
    st, h, body = c.form("/login", {"csrf": tok, "username": "alice",
                                    "password": "wrong"})
    ok("login: a wrong password: 401 and the form again",
       st == 401 and 'name="password"' in body, st)
    ok("login: a wrong password sets no session",
       "nops_session" not in h.get("Set-Cookie", ""), h)


def case_connection_cap(w):
    socks = []
    try:
        # From nine addresses, each under the per-address limit (32).
        for i in range(256):
            socks.append(socket.create_connection(
                ("127.0.0.1", w.port), 5,
                source_address=("127.0.1.%d" % (1 + i % 9), 0)))
        time.sleep(0.5)
        r = raw(w.port, b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 5)
        ok("past the connection cap: 503 with Retry-After",
           status_of(r) == 503 and b"Retry-After" in r, r[:300])
        st, _ = w.local("GET", "/api/v1/status")
        ok("the control socket is not capped", st == 200, st)
    finally:
        for s in socks:
            s.close()
    got = wait_until(lambda: status_of(raw(
        w.port, b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close"
        b"\r\n\r\n", 5)) == 200, 10)
    ok("once they close, connections are served again", got)


def case_tls(w):
    ctx = ssl.create_default_context(cafile=w.crt)
    c = Client("https://127.0.0.1:%d" % w.tport, cafile=w.crt)
    st, h, html = c.get("/login")
    ok("tls: the login page over https, verified", st == 200 and
       "<form" in html, st)
    ok("tls: its cookie is Secure", "Secure" in h.get("Set-Cookie", ""),
       h.get("Set-Cookie"))
    okl, why = c.login("alice", USERS["alice"])
    ok("tls: log in", okl, why)
    st, h, html = c.get("/")
    ok("tls: the overview as alice", st == 200 and "alice" in html, st)
    r = raw(w.tport, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 5)
    ok("tls: plain HTTP on the TLS port gets no page",
       b"<html" not in r.lower(), r[:100])
    r = raw(w.tport, b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close"
            b"\r\n\r\n", 5, tls_ctx=ctx)
    ok("tls: served again after that", status_of(r) == 200, r[:100])
    r = raw(w.tport, b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"X-A: a\x01b\r\n\r\n", 5, tls_ctx=ctx)
    ok("tls: a framing error is refused over TLS too (400, our headers)",
       status_of(r) == 400 and b"X-Frame-Options: DENY" in r, r[:300])
    r = raw(w.tport, b"GET /login HTTP/1.1\r\nHost: evil.example\r\n"
            b"\r\n", 5, tls_ctx=ctx)
    ok("tls: a Host it does not answer for: 421", status_of(r) == 421,
       r[:200])
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.check_hostname = False
    old.verify_mode = ssl.CERT_NONE
    # Let this client offer TLS 1.1, so that a refusal is the server's.
    old.set_ciphers("DEFAULT:@SECLEVEL=0")
    old.minimum_version = ssl.TLSVersion.TLSv1_1
    old.maximum_version = ssl.TLSVersion.TLSv1_1
    s = socket.create_connection(("127.0.0.1", w.tport), 5)
    try:
        old.wrap_socket(s, server_hostname="localhost").close()
        refused = False
    except (ssl.SSLError, OSError) as e:
        refused = str(e)
    s.close()
    ok("tls: TLS 1.1 is refused (the server wants 1.2)", refused, refused)


def case_tls_restart(w):
    pid = w.nops.worker("webworker")["pid"]
    os.kill(pid, 9)
    back = wait_until(lambda: w.nops.worker("webworker")["pid"] not in
                      (pid, None, 0) and
                      w.nops.worker("webworker")["state"] == "running", 20)
    ok("tls: a killed webworker is started again", back)
    c = Client("https://127.0.0.1:%d" % w.tport, cafile=w.crt)
    got = wait_until(lambda: c.get("/login")[0] == 200, 10)
    ok("tls: and serves TLS again, with the key the master kept", got)


def main():
    w = Web()
    try:
        did = w.wait_pending()
        ok("a deployment waits for approval", did, w.nops.logtext()[-2000:])
        case_limits(w)
        case_forms(w, did)
        case_cookies(w)
        case_tls(w)
        case_connection_cap(w)
        case_slow_client(w)
        alive, why = w.alive()
        ok("after all of it the daemon is up, the webworker never "
           "restarted", alive, why)
        case_tls_restart(w)
        log = w.nops.logtext()
        ok("no password in the log", USERS["alice"] not in log and
           "rita-Pw-2" not in log)
    finally:
        w.stop()


main()
