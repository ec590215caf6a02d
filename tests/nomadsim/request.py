"""What every /v1 handler shares: the response values it returns, the
method check, Go-style reading of query parameters and request bodies,
`filter=`, pagination and namespace matching (NOMAD-API.md §1)."""

from . import bexpr
from .errors import CodedError
from .gojson import parse_duration

INVALID_METHOD = "Invalid method"
WRITE = ("PUT", "POST")


class Resp:
    def __init__(self, body, index=None, code=200, read=False, raw=None,
                 content_type="application/json", headers=None):
        self.body, self.index, self.code = body, index, code
        self.read, self.raw, self.content_type = read, raw, content_type
        self.headers = headers or {}


class Stream:
    """Marker: the server hands the connection to a streaming function."""

    def __init__(self, fn):
        self.fn = fn


def check_method(req, *allowed):
    if req.method not in allowed:
        raise CodedError(405, INVALID_METHOD)


def query_bool(req, name):
    v = req.q(name)
    if v is None or v == "":
        return False
    if v.lower() in ("1", "t", "true"):
        return True
    if v.lower() in ("0", "f", "false"):
        return False
    raise CodedError(400, 'Failed to parse value of "%s" (%s) as a bool: '
                     'strconv.ParseBool: parsing "%s": invalid syntax' % (name, v, v))


def field(body, name, default=None):
    """Go's encoding/json matches field names case-insensitively."""
    if not isinstance(body, dict):
        return default
    if name in body:
        return body[name]
    low = name.lower()
    for k, v in body.items():
        if k.lower() == low:
            return v
    return default


def job_ns(req, body, job):
    """namespaceForJob: query > body Namespace > Job.Namespace > default."""
    if req.q("namespace"):
        return req.q("namespace")
    if field(body, "Namespace"):
        return field(body, "Namespace")
    if job and job.get("Namespace"):
        return job["Namespace"]
    return "default"


def filter_items(req, items):
    expr = req.q("filter")
    if not expr:
        return items
    try:
        f = bexpr.compile_filter(expr)
    except bexpr.FilterError as e:
        raise CodedError(400, "failed to read filter expression: %s" % e)
    return [i for i in items if f(i)]


def paginate(req, items, key):
    per_page = req.q("per_page")
    token = req.q("next_token")
    if token:
        items = [i for i in items if key(i) >= token]
    if per_page:
        try:
            n = int(per_page)
        except ValueError:
            raise CodedError(400, "Expect a number for `per_page` query string parameter")
        if 0 < n < len(items):
            req.next_token = key(items[n])
            items = items[:n]
    return items


def ns_match(req, ns):
    want = req.ns
    return want == "*" or want == ns


def decode_job(body):
    job = field(body, "Job")
    if not isinstance(job, dict):
        raise CodedError(400, "Job must be specified")
    return job


def parse_wait(req):
    """(index, wait seconds) of a blocking query."""
    idx = req.q("index")
    index = 0
    if idx:
        try:
            index = int(idx)
        except ValueError:
            raise CodedError(400, "Invalid index")
    w = req.q("wait")
    wait = 300.0
    if w:
        try:
            wait = parse_duration(w) / 1e9
        except ValueError:
            raise CodedError(400, "Invalid wait time")
        if wait <= 0:
            wait = 300.0
    return index, min(wait, 300.0)
