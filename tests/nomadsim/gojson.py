"""Go-compatible value formatting used on Nomad's wire.

Nomad encodes responses with go-msgpack's JSON handle: struct fields come out
sorted by name, nil becomes null, durations are integer nanoseconds, zero
times are null and other times RFC3339Nano.  The plan diff stringifies values
with Go's fmt "%v", so floats need Go's formatting too.
"""

import datetime
import json
import math
import os
import re


def encode(obj, pretty=False):
    """Encode a response body the way Nomad's HTTP layer does."""
    if pretty:
        return (json.dumps(obj, sort_keys=True, indent=4, ensure_ascii=False)
                + "\n").encode()
    return json.dumps(obj, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


def rfc3339(ns):
    """time.Time -> RFC3339Nano string, zero time -> None (null)."""
    if not ns:
        return None
    sec, frac = divmod(int(ns), 1_000_000_000)
    dt = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc)
    out = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        out += "." + ("%09d" % frac).rstrip("0")
    return out + "Z"


def go_float(f):
    """fmt.Sprintf("%v", float64): strconv 'g' with shortest precision."""
    if isinstance(f, bool):
        return "true" if f else "false"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if math.isnan(f):
        return "NaN"
    if f == 0:
        return "0"
    r = repr(float(f))
    # Decompose Python's shortest repr into digits and a decimal exponent.
    m = re.match(r"^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$", r)
    sign, ip, fp, ex = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    digits = (ip + fp).lstrip("0")
    exp = int(ex or 0) + len(ip) - 1
    if ip == "0":
        # 0.00123 -> leading zeros of fp move the exponent down
        stripped = fp.lstrip("0")
        exp = -(len(fp) - len(stripped)) - 1 + int(ex or 0)
        digits = stripped
    digits = digits.rstrip("0") or "0"
    # strconv uses %e when exp < -4 || exp >= 6 for the shortest precision.
    if exp < -4 or exp >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return "%s%se%s%02d" % (sign, mant, "-" if exp < 0 else "+", abs(exp))
    if exp >= len(digits) - 1:
        return sign + digits + "0" * (exp - len(digits) + 1)
    if exp >= 0:
        return sign + digits[:exp + 1] + "." + digits[exp + 1:]
    return sign + "0." + "0" * (-exp - 1) + digits


def go_str(v):
    """Stringify a primitive like flatmap does (fmt "%v")."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return go_float(v)
    if v is None:
        return "nil"
    return str(v)


_DUR_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DUR_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000,
              "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}


def parse_duration(s):
    """Go time.ParseDuration -> ns; raises ValueError."""
    if s is None:
        raise ValueError("empty duration")
    s = s.strip()
    if s in ("0", "+0", "-0"):
        return 0
    neg = s.startswith("-")
    body = s.lstrip("+-")
    if not body:
        raise ValueError("invalid duration %r" % s)
    pos, total = 0, 0.0
    while pos < len(body):
        m = _DUR_RE.match(body, pos)
        if not m:
            raise ValueError("invalid duration %r" % s)
        total += float(m.group(1)) * _DUR_UNITS[m.group(2)]
        pos = m.end()
    return -int(total) if neg else int(total)


def uuid():
    """Nomad-style UUID (random, 8-4-4-4-12 hex)."""
    b = os.urandom(16).hex()
    return "%s-%s-%s-%s-%s" % (b[:8], b[8:12], b[12:16], b[16:20], b[20:])


def multierror(errors):
    """hashicorp/go-multierror's default text."""
    if len(errors) == 1:
        head = "1 error occurred:"
    else:
        head = "%d errors occurred:" % len(errors)
    return head + "\n" + "".join("\t* %s\n" % e for e in errors) + "\n"


def deepcopy(obj):
    """Fast copy of JSON-shaped data (dicts, lists, scalars)."""
    if isinstance(obj, dict):
        return {k: deepcopy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [deepcopy(v) for v in obj]
    return obj


def go_duration(ns):
    """time.Duration.String(): 5s, 1m0s, 24h0m0s, 1.5s, 100ms, 0s."""
    ns = int(ns)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim(ns / size) + unit
    h, rem = divmod(ns, 3_600_000_000_000)
    m, rem = divmod(rem, 60_000_000_000)
    s = _trim(rem / 1e9)
    if h:
        return "%s%dh%dm%ss" % (sign, h, m, s)
    if m:
        return "%s%dm%ss" % (sign, m, s)
    return "%s%ss" % (sign, s)


def _trim(x):
    out = ("%.9f" % x).rstrip("0").rstrip(".")
    return out or "0"


def parse_rfc3339(s):
    """Inverse of rfc3339() for our own UTC strings; None -> None."""
    if not s:
        return None
    main, _, frac = s.rstrip("Z").partition(".")
    dt = datetime.datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return int(dt.timestamp()) * 1_000_000_000 + int((frac + "000000000")[:9])
