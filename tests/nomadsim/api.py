"""The /v1 endpoints: routing by Nomad's rules and one handler each.

Handlers run with store.lock held (server.py takes it) and return a Resp
or raise CodedError / acl.Denied; reads return (body, index) through
`blocking`, which implements ?index=&wait=.
"""

import base64

import acl
import bexpr
import diff as diffmod
import jobs
import scheduler
import structs
from gojson import deepcopy, parse_duration
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
        return allocs_list(sim, req)
    if p.startswith("/v1/allocation/"):
        return alloc_specific(sim, req, p[len("/v1/allocation/"):])
    if p == "/v1/evaluations":
        return evals_list(sim, req)
    if p.startswith("/v1/evaluation/"):
        return eval_specific(sim, req, p[len("/v1/evaluation/"):])
    if p == "/v1/deployments":
        return deployments_list(sim, req)
    if p.startswith("/v1/deployment/"):
        return deployment_specific(sim, req, p[len("/v1/deployment/"):])
    if p.startswith("/v1/client/fs/"):
        return client_fs(sim, req, p[len("/v1/client/fs/"):])
    if p == "/v1/namespaces":
        return namespaces_list(sim, req)
    if p == "/v1/namespace" or p.startswith("/v1/namespace/"):
        return namespace_specific(sim, req, p[len("/v1/namespace"):].lstrip("/"))
    if p == "/v1/acl/token/self":
        return token_self(sim, req)
    if p == "/v1/acl/tokens":
        return tokens_list(sim, req)
    if p == "/v1/event/stream":
        import events
        return events.stream(sim, req)
    if p == "/v1/validate/job":
        return validate_job(sim, req)
    if p == "/v1/status/leader":
        return Resp("127.0.0.1:4647", index=None)
    if p == "/v1/status/peers":
        return Resp(["127.0.0.1:4647"])
    if p == "/v1/regions":
        return Resp(["global"])
    if p == "/v1/agent/self":
        return Resp({"config": {"Region": "global", "Datacenter": "dc1",
                                "ACL": {"Enabled": sim.acl_enabled}},
                     "member": {"Name": "nomadsim", "Tags": {"build": "2.0.6"}},
                     "stats": {}})
    if p == "/v1/nodes":
        return nodes_list(sim, req)
    if p == "/v1/scaling/policies":
        return scaling_policies(sim, req)
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
        out = []
        for (jns, jid), job in sorted(store.jobs.items()):
            if not _ns_match(req, jns) or not jid.startswith(prefix):
                continue
            if ns == "*" and not sim.allowed(req, jns, "list-jobs", "read-job"):
                continue
            out.append(structs.job_stub(store, job, with_meta))
        out = _filter(req, out)
        out = _paginate(req, out, lambda s: s["ID"])
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
    if sim.acl_enabled and job["Type"] == "system":
        pass
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
        out = [scheduler.alloc_stub(a)
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


# -- allocations and evaluations ------------------------------------------------------

def allocs_list(sim, req):
    _method(req, "GET")
    store = sim.store
    prefix = req.q("prefix") or ""

    def fn():
        out = []
        for a in store.allocs.values():
            if not _ns_match(req, a["Namespace"]) or not a["ID"].startswith(prefix):
                continue
            if not sim.allowed(req, a["Namespace"], "read-job"):
                continue
            out.append(scheduler.alloc_stub(a))
        out.sort(key=lambda a: a["ID"])
        out = _filter(req, out)
        return _paginate(req, out, lambda a: a["ID"]), store.max_index("allocs")
    return sim.blocking(req, fn)


def alloc_specific(sim, req, rest):
    store = sim.store
    if rest.endswith("/stop"):
        _method(req, *WRITE)
        aid = rest[:-len("/stop")]
        a = store.allocs.get(aid)
        if a is None:
            raise CodedError(404, "alloc not found")
        sim.check(req, a["Namespace"], "alloc-lifecycle", "submit-job")
        a["DesiredTransition"]["Migrate"] = True
        index = store.next_index("allocs")
        scheduler.stop_alloc(store, a, "alloc was stopped by user", index)
        job = store.jobs.get((a["Namespace"], a["JobID"]))
        ev = scheduler.create_eval(store, job or a["Job"], "alloc-stop")
        return Resp({"EvalID": ev["ID"], "Index": ev["CreateIndex"]},
                    index=ev["CreateIndex"])
    _method(req, "GET")

    def fn():
        a = store.allocs.get(rest)
        if a is None:
            return CodedError(404, "alloc not found"), store.max_index("allocs")
        sim.check(req, a["Namespace"], "read-job")
        return scheduler.alloc_wire(a), a["ModifyIndex"]
    return sim.blocking(req, fn)


def evals_list(sim, req):
    _method(req, "GET")
    store = sim.store

    def fn():
        out = [e for e in store.evals.values() if _ns_match(req, e["Namespace"])
               and e["ID"].startswith(req.q("prefix") or "")]
        out.sort(key=lambda e: e["CreateIndex"], reverse=True)
        return _filter(req, out), store.max_index("evals")
    return sim.blocking(req, fn)


def eval_specific(sim, req, rest):
    _method(req, "GET")
    store = sim.store
    if rest.endswith("/allocations"):
        eid = rest[:-len("/allocations")]

        def fn():
            out = [scheduler.alloc_stub(a) for a in store.allocs.values()
                   if a["EvalID"] == eid]
            return out, store.max_index("allocs")
        return sim.blocking(req, fn)

    def fn2():
        ev = store.evals.get(rest)
        if ev is None:
            return CodedError(404, "eval not found"), store.max_index("evals")
        return ev, ev["ModifyIndex"]
    return sim.blocking(req, fn2)


# -- deployments --------------------------------------------------------------------

def deployments_list(sim, req):
    _method(req, "GET")
    store = sim.store

    def fn():
        out = [d for d in store.deployments.values()
               if _ns_match(req, d["Namespace"])
               and d["ID"].startswith(req.q("prefix") or "")]
        out.sort(key=lambda d: d["CreateIndex"], reverse=True)
        return _filter(req, out), store.max_index("deployment")
    return sim.blocking(req, fn)


def _dep_update_resp(store, ev, dep, reverted=None):
    index = ev["CreateIndex"] if ev else dep["ModifyIndex"]
    return Resp({"EvalID": ev["ID"] if ev else "",
                 "EvalCreateIndex": ev["CreateIndex"] if ev else 0,
                 "DeploymentModifyIndex": dep["ModifyIndex"],
                 "RevertedJobVersion": reverted, "Index": index}, index=index)


def _dep_body(req, dep_id):
    body = req.json()
    did = _field(body, "DeploymentID")
    if not did:
        raise CodedError(400, "DeploymentID must be specified")
    if did != dep_id:
        raise CodedError(400, "Deployment ID does not match")
    return body


def _dep_lookup(sim, req, dep_id, cap):
    dep = sim.store.deployments.get(dep_id)
    if dep is None:
        raise CodedError(500, "deployment not found")
    sim.check(req, dep["Namespace"], cap, "submit-job")
    return dep


def deployment_specific(sim, req, rest):
    store = sim.store
    for prefix in ("allocations/", "fail/", "pause/", "promote/",
                   "allocation-health/", "unblock/"):
        if rest.startswith(prefix):
            dep_id = rest[len(prefix):]
            break
    else:
        prefix, dep_id = "", rest
    if prefix == "allocations/":
        _method(req, "GET")

        def fn():
            out = [scheduler.alloc_stub(a) for a in store.allocs.values()
                   if a["DeploymentID"] == dep_id]
            return out, store.max_index("allocs")
        return sim.blocking(req, fn)
    if prefix == "":
        _method(req, "GET")

        def fn2():
            dep = store.deployments.get(dep_id)
            if dep is None:
                return CodedError(404, "deployment not found"), store.max_index("deployment")
            sim.check(req, dep["Namespace"], "read-job")
            return dep, dep["ModifyIndex"]
        return sim.blocking(req, fn2)
    _method(req, *WRITE)
    if prefix == "promote/":
        body = _dep_body(req, dep_id)
        dep = _dep_lookup(sim, req, dep_id, "promote-deployment")
        if dep["Status"] not in scheduler.ACTIVE_DEP:
            raise CodedError(500, "can't promote terminal deployment")
        groups = None if _field(body, "All") else (_field(body, "Groups") or [])
        if not any(st["DesiredCanaries"] > 0 for st in dep["TaskGroups"].values()):
            raise CodedError(500, "no canaries to promote")
        err = scheduler.promote_errors(store, dep, groups)
        if err:
            raise CodedError(500, err)
        ev = scheduler.promote(store, dep, groups)
        return _dep_update_resp(store, ev, dep)
    if prefix == "fail/":
        dep = _dep_lookup(sim, req, dep_id, "submit-job")
        if dep["Status"] not in scheduler.ACTIVE_DEP:
            raise CodedError(500, "can't fail terminal deployment")
        reverted = scheduler.fail_deployment(store, dep, scheduler.DESC_MARKED)
        job = store.jobs.get((dep["Namespace"], dep["JobID"]))
        ev = scheduler.create_eval(store, job, "deployment-watcher", dep["ID"]) if job else None
        return _dep_update_resp(store, ev, dep, reverted)
    if prefix == "pause/":
        body = _dep_body(req, dep_id)
        dep = _dep_lookup(sim, req, dep_id, "submit-job")
        if dep["Status"] not in scheduler.ACTIVE_DEP:
            raise CodedError(500, "can't pause terminal deployment")
        if _field(body, "Pause"):
            scheduler.set_dep_status(store, dep, "paused", scheduler.DESC_PAUSED)
            return _dep_update_resp(store, None, dep)
        waiting = any(st["DesiredCanaries"] > 0 and not st["Promoted"]
                      for st in dep["TaskGroups"].values())
        scheduler.set_dep_status(store, dep, "running",
                                 scheduler.DESC_MANUAL if waiting else scheduler.DESC_RUNNING)
        job = store.jobs.get((dep["Namespace"], dep["JobID"]))
        ev = scheduler.create_eval(store, job, "deployment-watcher", dep["ID"])
        scheduler.watch_deployment(store, dep)
        return _dep_update_resp(store, ev, dep)
    if prefix == "allocation-health/":
        body = _dep_body(req, dep_id)
        dep = _dep_lookup(sim, req, dep_id, "submit-job")
        if dep["Status"] not in scheduler.ACTIVE_DEP:
            raise CodedError(500, "can't set health of allocations for a terminal deployment")
        for ids, healthy in ((_field(body, "HealthyAllocationIDs"), True),
                             (_field(body, "UnhealthyAllocationIDs"), False)):
            for aid in ids or []:
                a = store.allocs.get(aid)
                if a is None or a["DeploymentID"] != dep_id:
                    raise CodedError(500, "Deployment %q does not contain alloc %q"
                                     .replace("%q", '"%s"') % (dep_id, aid))
                scheduler.set_alloc_health(store, aid, healthy)
        job = store.jobs.get((dep["Namespace"], dep["JobID"]))
        ev = scheduler.create_eval(store, job, "deployment-watcher", dep["ID"])
        return _dep_update_resp(store, ev, dep)
    raise CodedError(500, "can't unblock a non-blocked deployment")


# -- client fs (logs) ------------------------------------------------------------------

def client_fs(sim, req, rest):
    import logs
    if rest.startswith("logs/"):
        return logs.logs(sim, req, rest[len("logs/"):])
    if rest.startswith("cat/"):
        return logs.cat(sim, req, rest[len("cat/"):])
    for p in ("ls/", "stat/", "readat/", "stream/"):
        if rest.startswith(p):
            raise CodedError(501, "not simulated by nomadsim")
    raise CodedError(404, INVALID_METHOD)


# -- namespaces, tokens, nodes ----------------------------------------------------------

def namespaces_list(sim, req):
    _method(req, "GET")
    store = sim.store

    def fn():
        out = [n for name, n in sorted(store.namespaces.items())
               if sim.allowed(req, name, "list-jobs", "read-job")
               and name.startswith(req.q("prefix") or "")]
        return out, store.max_index("namespaces")
    return sim.blocking(req, fn)


def namespace_specific(sim, req, name):
    store = sim.store
    if req.method == "GET":
        def fn():
            ns = store.namespaces.get(name)
            if ns is None:
                return CodedError(404, "Namespace not found"), store.max_index("namespaces")
            return ns, ns["ModifyIndex"]
        return sim.blocking(req, fn)
    if req.method in WRITE:
        if not sim.is_management(req):
            raise acl.Denied()
        body = req.json()
        nname = _field(body, "Name") or name
        if name and nname != name:
            raise CodedError(400, "Namespace name does not match request path")
        ns = upsert_namespace(store, nname, _field(body, "Description") or "",
                              _field(body, "Meta"))
        return Resp({"Index": ns["ModifyIndex"]}, index=ns["ModifyIndex"])
    if req.method == "DELETE":
        if not sim.is_management(req):
            raise acl.Denied()
        if name == "default":
            raise CodedError(500, "Deleting the default namespace is not allowed")
        if any(k[0] == name for k in store.jobs):
            raise CodedError(500, 'namespace "%s" has non-terminal jobs in regions: [global]'
                             % name)
        store.namespaces.pop(name, None)
        index = store.next_index("namespaces")
        return Resp({"Index": index}, index=index)
    raise CodedError(405, INVALID_METHOD)


def upsert_namespace(store, name, description="", meta=None):
    index = store.next_index("namespaces")
    old = store.namespaces.get(name)
    ns = {"Name": name, "Description": description, "Quota": "",
          "Meta": meta or None, "Capabilities": None,
          "NodePoolConfiguration": None, "VaultConfiguration": None,
          "ConsulConfiguration": None, "Hash": "",
          "CreateIndex": old["CreateIndex"] if old else index,
          "ModifyIndex": index}
    store.namespaces[name] = ns
    return ns


def token_self(sim, req):
    _method(req, "GET")
    if not sim.acl_enabled:
        raise CodedError(400, "ACL support disabled")
    tok = req.token
    if tok is None:
        raise acl.Denied(acl.TOKEN_NOT_FOUND)
    return Resp(tok, index=tok["ModifyIndex"], read=True)


def tokens_list(sim, req):
    _method(req, "GET")
    if not sim.acl_enabled:
        raise CodedError(400, "ACL support disabled")
    if not sim.is_management(req):
        raise acl.Denied()
    out = [{k: v for k, v in t.items() if k != "SecretID"}
           for t in sim.store.tokens.values()]
    return Resp(out, index=sim.store.max_index("acl_token"), read=True)


def nodes_list(sim, req):
    _method(req, "GET")
    out = []
    for n in sim.store.nodes:
        out.append({"ID": n["ID"], "Name": n["Name"], "Datacenter": n["Datacenter"],
                    "NodePool": n["NodePool"], "NodeClass": "", "Version": "2.0.6",
                    "Drain": False, "SchedulingEligibility": "eligible",
                    "Status": "ready", "StatusDescription": "", "Address": "127.0.0.1",
                    "Attributes": None, "Drivers": None, "NodeResources": None,
                    "ReservedResources": None, "LastDrain": None,
                    "CreateIndex": 5, "ModifyIndex": 5})
    return Resp(out, index=5, read=True)


def scaling_policies(sim, req):
    _method(req, "GET")
    out = []
    for (ns, jid), job in sorted(sim.store.jobs.items()):
        if not _ns_match(req, ns):
            continue
        for tg in job["TaskGroups"]:
            s = tg["Scaling"]
            if s:
                out.append({"ID": s["ID"], "Enabled": s["Enabled"], "Type": s["Type"],
                            "Target": s["Target"], "CreateIndex": s["CreateIndex"],
                            "ModifyIndex": s["ModifyIndex"]})
    return Resp(out, index=sim.store.max_index("scaling_policy"), read=True)


def validate_job(sim, req):
    _method(req, *WRITE)
    body = req.json()
    api_job = _decode_job(body)
    errs = []
    try:
        job = jobs.prepare(api_job)
        errs = structs.validate(job)
    except CodedError as e:
        errs = [e.msg]
    from gojson import multierror
    return Resp({"DriverConfigValidated": True, "ValidationErrors": errs or None,
                 "Error": multierror(errs) if errs else "", "Warnings": ""},
                index=None)


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


_ = deepcopy
