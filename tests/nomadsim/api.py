"""The /v1 endpoints: routing by Nomad's rules and one handler each.

Handlers run with store.lock held (server.py takes it) and return a Resp
or raise CodedError / acl.Denied; reads return (body, index) through
`blocking`, which implements ?index=&wait=.
"""

import base64

import api_cluster
import bexpr
import diff as diffmod
import jobs
import lifecycle
import scheduler
import structs
from gojson import parse_duration
from jobs import CodedError

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


def _method(req, *allowed):
    if req.method not in allowed:
        raise CodedError(405, INVALID_METHOD)


def _bool(req, name):
    v = req.q(name)
    if v is None or v == "":
        return False
    if v.lower() in ("1", "t", "true"):
        return True
    if v.lower() in ("0", "f", "false"):
        return False
    raise CodedError(400, 'Failed to parse value of "%s" (%s) as a bool: '
                     'strconv.ParseBool: parsing "%s": invalid syntax' % (name, v, v))


def _field(body, name, default=None):
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


def _job_ns(req, body, job):
    """namespaceForJob: query > body Namespace > Job.Namespace > default."""
    if req.q("namespace"):
        return req.q("namespace")
    if _field(body, "Namespace"):
        return _field(body, "Namespace")
    if job and job.get("Namespace"):
        return job["Namespace"]
    return "default"


def _filter(req, items):
    expr = req.q("filter")
    if not expr:
        return items
    try:
        f = bexpr.compile_filter(expr)
    except bexpr.FilterError as e:
        raise CodedError(400, "failed to read filter expression: %s" % e)
    return [i for i in items if f(i)]


def _paginate(req, items, key):
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


def _ns_match(req, ns):
    want = req.ns
    return want == "*" or want == ns


# -- routing ---------------------------------------------------------------------

def route(sim, req):
    p = req.path
    if p == "/v1/jobs":
        return jobs_root(sim, req)
    if p == "/v1/jobs/parse":
        return jobs_parse(sim, req)
    if p.startswith("/v1/job/"):
        return job_specific(sim, req, p[len("/v1/job/"):])
    if p == "/v1/allocations":
        return api_cluster.allocs_list(sim, req)
    if p.startswith("/v1/allocation/"):
        return api_cluster.alloc_specific(sim, req, p[len("/v1/allocation/"):])
    if p == "/v1/evaluations":
        return api_cluster.evals_list(sim, req)
    if p.startswith("/v1/evaluation/"):
        return api_cluster.eval_specific(sim, req, p[len("/v1/evaluation/"):])
    if p == "/v1/deployments":
        return api_cluster.deployments_list(sim, req)
    if p.startswith("/v1/deployment/"):
        return api_cluster.deployment_specific(sim, req, p[len("/v1/deployment/"):])
    if p.startswith("/v1/client/fs/"):
        return api_cluster.client_fs(sim, req, p[len("/v1/client/fs/"):])
    if p == "/v1/namespaces":
        return api_cluster.namespaces_list(sim, req)
    if p == "/v1/namespace" or p.startswith("/v1/namespace/"):
        return api_cluster.namespace_specific(sim, req, p[len("/v1/namespace"):].lstrip("/"))
    if p == "/v1/acl/token/self":
        return api_cluster.token_self(sim, req)
    if p == "/v1/acl/tokens":
        return api_cluster.tokens_list(sim, req)
    if p == "/v1/event/stream":
        import events
        return events.stream(sim, req)
    if p == "/v1/validate/job":
        return api_cluster.validate_job(sim, req)
    if p == "/v1/status/leader":
        return Resp(sim.store.config["leader"], index=None)
    if p == "/v1/status/peers":
        return Resp(["127.0.0.1:4647"])
    if p == "/v1/regions":
        return Resp(["global"])
    if p == "/v1/agent/self":
        return Resp({"config": {"Region": "global", "Datacenter": "dc1",
                                "ACL": {"Enabled": sim.acl_enabled}},
                     "member": {"Name": "nomadsim",
                                "Tags": {"build": sim.store.config["version"]}},
                     "stats": {}})
    if p == "/v1/nodes":
        return api_cluster.nodes_list(sim, req)
    if p == "/v1/scaling/policies":
        return api_cluster.scaling_policies(sim, req)
    raise CodedError(404, "404 page not found\n")


# -- /v1/jobs --------------------------------------------------------------------

def jobs_root(sim, req):
    if req.method == "GET":
        return jobs_list(sim, req)
    if req.method in WRITE:
        return job_register(sim, req, None)
    raise CodedError(405, INVALID_METHOD)


def jobs_list(sim, req):
    store = sim.store
    ns = req.ns
    if ns != "*":
        sim.check(req, ns, "list-jobs", "read-job")
    prefix = req.q("prefix") or ""
    with_meta = _bool(req, "meta")

    def fn():
        found = []
        for (jns, jid), job in sorted(store.jobs.items()):
            if not _ns_match(req, jns) or not jid.startswith(prefix):
                continue
            if ns == "*" and not sim.allowed(req, jns, "list-jobs", "read-job"):
                continue
            found.append(job)
        # Nomad evaluates `filter` against the job itself, not the stub.
        found = _paginate(req, _filter(req, found), lambda j: j["ID"])
        out = [structs.job_stub(store, j, with_meta) for j in found]
        return out, store.max_index("jobs", "job_summary")
    return sim.blocking(req, fn)


def jobs_parse(sim, req):
    _method(req, *WRITE)
    sim.check(req, req.ns, "parse-job", "submit-job")
    body = req.json()
    src = _field(body, "JobHCL") or ""
    if not src:
        raise CodedError(400, "Job spec is empty")
    import jobspec
    try:
        job = jobspec.parse_job(src, filename="input.hcl",
                                variables=_field(body, "Variables") or None,
                                canonicalize=bool(_field(body, "Canonicalize")))
    except jobspec.JobParseError as e:
        msg = str(e)
        if not msg.startswith("Failed to parse job"):
            msg = "Failed to parse job: " + msg
        raise CodedError(400, msg)
    return Resp(job, index=None)


def _decode_job(body):
    job = _field(body, "Job")
    if not isinstance(job, dict):
        raise CodedError(400, "Job must be specified")
    return job


def job_register(sim, req, path_id):
    body = req.json()
    api_job = _decode_job(body)
    if not api_job.get("ID"):
        raise CodedError(400, "Job ID hasn't been provided")
    if path_id is not None and api_job["ID"] != path_id:
        raise CodedError(400, "Job ID does not match name")
    ns = _job_ns(req, body, api_job)
    api_job["Namespace"] = ns
    sim.check(req, ns, "submit-job")
    job = jobs.prepare(api_job)
    for tg in job["TaskGroups"]:
        if job["Type"] == "system" and tg["Scaling"] is not None:
            raise CodedError(400, "Task groups with job type system do not "
                             "support scaling blocks")
    resp = jobs.register(sim.store, job,
                         enforce=bool(_field(body, "EnforceIndex")),
                         jmi=int(_field(body, "JobModifyIndex") or 0),
                         preserve_counts=bool(_field(body, "PreserveCounts")),
                         token=req.token, submission=_field(body, "Submission"))
    return Resp(resp, index=resp["Index"])


# -- /v1/job/<id>/... --------------------------------------------------------------

_SUFFIXES = ("/evaluate", "/allocations", "/evaluations", "/periodic/force",
             "/plan", "/summary", "/dispatch/payload", "/dispatch", "/versions",
             "/revert", "/deployments", "/deployment", "/stable", "/scale",
             "/services", "/submission", "/actions", "/action")


def job_specific(sim, req, rest):
    for suf in _SUFFIXES:
        if rest.endswith(suf):
            jid = rest[:-len(suf)]
            return _JOB_SUB[suf](sim, req, jid)
    return job_crud(sim, req, rest)


def _key(req, jid):
    return (req.ns, jid)


def job_crud(sim, req, jid):
    store = sim.store
    if req.method == "GET":
        sim.check(req, req.ns, "read-job")

        def fn():
            job = store.jobs.get(_key(req, jid))
            if job is None:
                return CodedError(404, "job not found"), store.max_index("jobs")
            return job, job["ModifyIndex"]
        return sim.blocking(req, fn)
    if req.method in WRITE:
        return job_register(sim, req, jid)
    if req.method == "DELETE":
        purge = _bool(req, "purge")
        _bool(req, "global")
        caps = ("submit-job", "purge-job") if purge else (
            "submit-job", "purge-job", "deregister-job")
        sim.check(req, req.ns, *caps)
        resp = jobs.deregister(store, req.ns, jid, purge)
        return Resp(resp, index=resp["Index"])
    raise CodedError(405, INVALID_METHOD)


def job_plan(sim, req, jid):
    _method(req, *WRITE)
    body = req.json()
    api_job = _decode_job(body)
    if not api_job.get("ID"):
        raise CodedError(400, "Job must have a valid ID")
    if api_job["ID"] != jid:
        raise CodedError(400, "Job ID does not match")
    ns = _job_ns(req, body, api_job)
    api_job["Namespace"] = ns
    sim.check(req, ns, "submit-job", "plan-job")
    job = jobs.prepare(api_job)
    resp = jobs.plan(sim.store, job, bool(_field(body, "Diff")))
    return Resp(resp, index=resp["Index"])


def job_allocations(sim, req, jid):
    _method(req, "GET")
    sim.check(req, req.ns, "read-job")
    _bool(req, "all")
    store = sim.store

    def fn():
        out = [lifecycle.alloc_stub(a)
               for a in scheduler.job_allocs(store, req.ns, jid)]
        out.sort(key=lambda a: a["CreateIndex"], reverse=True)
        return out, store.max_index("allocs")
    return sim.blocking(req, fn)


def job_evaluations(sim, req, jid):
    _method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store

    def fn():
        out = [e for e in store.evals.values()
               if e["Namespace"] == req.ns and e["JobID"] == jid]
        out.sort(key=lambda e: e["CreateIndex"], reverse=True)
        return out, store.max_index("evals")
    return sim.blocking(req, fn)


def job_evaluate(sim, req, jid):
    _method(req, *WRITE)
    sim.check(req, req.ns, "submit-job")
    job = sim.store.jobs.get(_key(req, jid))
    if job is None:
        raise CodedError(404, "job not found")
    if job["Periodic"] is not None or (job["ParameterizedJob"] is not None
                                       and not job["Dispatched"]):
        raise CodedError(500, "can't evaluate periodic job")
    ev = scheduler.create_eval(sim.store, job, "job-register")
    resp = dict({"EvalID": ev["ID"], "EvalCreateIndex": ev["CreateIndex"],
                 "JobModifyIndex": job["ModifyIndex"], "Warnings": ""},
                **jobs.write_meta(ev["CreateIndex"]))
    return Resp(resp, index=ev["CreateIndex"])


def job_summary(sim, req, jid):
    _method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store

    def fn():
        job = store.jobs.get(_key(req, jid))
        if job is None:
            return CodedError(404, "job not found"), store.max_index("job_summary")
        return structs.job_summary(store, job), store.max_index("job_summary")
    return sim.blocking(req, fn)


def job_versions(sim, req, jid):
    _method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store
    want_diffs = _bool(req, "diffs")

    def fn():
        vers = store.versions.get(_key(req, jid))
        if not vers:
            return CodedError(404, "job versions not found"), store.max_index("job_version")
        diffs = None
        if want_diffs:
            diffs = [diffmod.job_diff(vers[i + 1], vers[i], True,
                                      store.config["scaling_diff_quirk"])
                     for i in range(len(vers) - 1)] or None
        body = {"Versions": vers, "Diffs": diffs}
        return body, store.max_index("job_version")
    return sim.blocking(req, fn, query_meta=True)


def job_deployments(sim, req, jid):
    _method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store

    def fn():
        return (scheduler.job_deployments(store, req.ns, jid),
                store.max_index("deployment"))
    return sim.blocking(req, fn)


def job_latest_deployment(sim, req, jid):
    _method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store

    def fn():
        return (scheduler.latest_deployment(store, req.ns, jid),
                store.max_index("deployment"))
    return sim.blocking(req, fn)


def job_dispatch(sim, req, jid):
    _method(req, *WRITE)
    body = req.json()
    if _field(body, "JobID") and _field(body, "JobID") != jid:
        raise CodedError(400, "Job ID does not match")
    sim.check(req, req.ns, "dispatch-job")
    token = req.q("idempotency_token") or _field(body, "IdempotencyToken") or ""
    payload = _field(body, "Payload")
    if payload:
        try:
            base64.b64decode(payload, validate=True)
        except ValueError:
            raise CodedError(400, "illegal base64 data at input byte 0")
    resp = jobs.dispatch(sim.store, _key(req, jid), payload,
                         _field(body, "Meta"), token,
                         _field(body, "IdPrefixTemplate") or "",
                         int(_field(body, "Priority") or 0))
    return Resp(resp, index=resp["Index"])


def job_dispatch_payload(sim, req, jid):
    _method(req, *WRITE)
    sim.check(req, req.ns, "dispatch-job")
    token = req.q("idempotency_token") or ""
    payload = base64.b64encode(req.body).decode() if req.body else None
    resp = jobs.dispatch(sim.store, _key(req, jid), payload, None, token)
    return Resp(resp, index=resp["Index"])


def job_periodic_force(sim, req, jid):
    _method(req, *WRITE)
    sim.check(req, req.ns, "dispatch-job", "submit-job")
    import periodic
    resp = periodic.force(sim.store, _key(req, jid))
    return Resp(resp, index=resp["Index"])


def job_revert(sim, req, jid):
    _method(req, *WRITE)
    sim.check(req, req.ns, "submit-job")
    body = req.json()
    if _field(body, "JobID") and _field(body, "JobID") != jid:
        raise CodedError(400, "Job ID does not match")
    prior = _field(body, "EnforcePriorVersion")
    resp = jobs.revert(sim.store, _key(req, jid), int(_field(body, "JobVersion") or 0),
                       None if prior is None else int(prior))
    return Resp(resp, index=resp["Index"])


def job_stable(sim, req, jid):
    _method(req, *WRITE)
    sim.check(req, req.ns, "submit-job")
    body = req.json()
    if _field(body, "JobID") and _field(body, "JobID") != jid:
        raise CodedError(400, "Job ID does not match")
    store = sim.store
    vers = store.versions.get(_key(req, jid)) or []
    ver = int(_field(body, "JobVersion") or 0)
    target = next((v for v in vers if v["Version"] == ver), None)
    if target is None:
        raise CodedError(500, 'job "%s" at version %d not found' % (jid, ver))
    target["Stable"] = bool(_field(body, "Stable"))
    index = store.next_index("jobs", "job_version")
    return Resp({"Index": index}, index=index)


def job_scale(sim, req, jid):
    store = sim.store
    if req.method == "GET":
        sim.check(req, req.ns, "read-job-scaling", "read-job")

        def fn():
            return jobs.scale_status(store, _key(req, jid)), store.max_index("jobs")
        return sim.blocking(req, fn)
    _method(req, *WRITE)
    body = req.json()
    sim.check(req, req.ns, "scale-job", "submit-job")
    target = _field(body, "Target") or {}
    count = _field(body, "Count")
    resp = jobs.scale(store, _key(req, jid), target.get("Group"),
                      None if count is None else int(count),
                      _field(body, "Message") or "", _field(body, "Error"),
                      _field(body, "Meta"))
    return Resp(resp, index=resp["Index"])


def job_services(sim, req, jid):
    _method(req, "GET")
    return Resp([], index=sim.store.index, read=True)


def job_submission(sim, req, jid):
    _method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store
    job = store.jobs.get(_key(req, jid))
    ver = req.q("version")
    ver = int(ver) if ver else (job["Version"] if job else 0)
    sub = store.submissions.get((req.ns, jid, ver))
    if sub is None:
        raise CodedError(404, "job source not found")
    return Resp(sub, index=store.index, read=True)


def job_actions(sim, req, jid):
    raise CodedError(404, "job actions are not simulated")


_JOB_SUB = {
    "/evaluate": job_evaluate, "/allocations": job_allocations,
    "/evaluations": job_evaluations, "/periodic/force": job_periodic_force,
    "/plan": job_plan, "/summary": job_summary,
    "/dispatch/payload": job_dispatch_payload, "/dispatch": job_dispatch,
    "/versions": job_versions, "/revert": job_revert,
    "/deployments": job_deployments, "/deployment": job_latest_deployment,
    "/stable": job_stable, "/scale": job_scale, "/services": job_services,
    "/submission": job_submission, "/actions": job_actions,
    "/action": job_actions,
}


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

