"""The job endpoints: /v1/jobs, /v1/jobs/parse and /v1/job/<id>/... routed
by suffix on the decoded path (command/agent/job_endpoint.go), so job IDs
may contain "/"."""

import base64

from . import diff as diffmod
from . import jobs, jobspec, lifecycle, lookup, structs
from .errors import CodedError
from .evals import create_eval
from .request import (INVALID_METHOD, WRITE, Resp, check_method, decode_job,
                      field, filter_items, job_ns, paginate, query_bool,
                      ns_match)


# -- /v1/jobs ----------------------------------------------------------------

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
    with_meta = query_bool(req, "meta")

    def fn():
        found = []
        for (jns, jid), job in sorted(store.jobs.items()):
            if not ns_match(req, jns) or not jid.startswith(prefix):
                continue
            if ns == "*" and not sim.allowed(req, jns, "list-jobs", "read-job"):
                continue
            found.append(job)
        # Nomad evaluates `filter` against the job itself, not the stub.
        found = paginate(req, filter_items(req, found), lambda j: j["ID"])
        out = [structs.job_stub(store, j, with_meta) for j in found]
        return out, store.max_index("jobs", "job_summary")
    return sim.blocking(req, fn)


def jobs_parse(sim, req):
    check_method(req, *WRITE)
    sim.check(req, req.ns, "parse-job", "submit-job")
    body = req.json()
    src = field(body, "JobHCL") or ""
    if not src:
        raise CodedError(400, "Job spec is empty")
    try:
        job = jobspec.parse_job(src, filename="input.hcl",
                                variables=field(body, "Variables") or None,
                                canonicalize=bool(field(body, "Canonicalize")))
    except jobspec.JobParseError as e:
        msg = str(e)
        if not msg.startswith("Failed to parse job"):
            msg = "Failed to parse job: " + msg
        raise CodedError(400, msg)
    return Resp(job, index=None)


def job_register(sim, req, path_id):
    body = req.json()
    api_job = decode_job(body)
    if not api_job.get("ID"):
        raise CodedError(400, "Job ID hasn't been provided")
    if path_id is not None and api_job["ID"] != path_id:
        raise CodedError(400, "Job ID does not match name")
    ns = job_ns(req, body, api_job)
    api_job["Namespace"] = ns
    sim.check(req, ns, "submit-job")
    job = jobs.prepare(api_job)
    for tg in job["TaskGroups"]:
        if job["Type"] == "system" and tg["Scaling"] is not None:
            raise CodedError(400, "Task groups with job type system do not "
                             "support scaling blocks")
    resp = jobs.register(sim.store, job,
                         enforce=bool(field(body, "EnforceIndex")),
                         jmi=int(field(body, "JobModifyIndex") or 0),
                         preserve_counts=bool(field(body, "PreserveCounts")),
                         token=req.token, submission=field(body, "Submission"))
    return Resp(resp, index=resp["Index"])


# -- /v1/job/<id>/... --------------------------------------------------------

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
        purge = query_bool(req, "purge")
        query_bool(req, "global")
        caps = ("submit-job", "purge-job") if purge else (
            "submit-job", "purge-job", "deregister-job")
        sim.check(req, req.ns, *caps)
        resp = jobs.deregister(store, req.ns, jid, purge)
        return Resp(resp, index=resp["Index"])
    raise CodedError(405, INVALID_METHOD)


def job_plan(sim, req, jid):
    check_method(req, *WRITE)
    body = req.json()
    api_job = decode_job(body)
    if not api_job.get("ID"):
        raise CodedError(400, "Job must have a valid ID")
    if api_job["ID"] != jid:
        raise CodedError(400, "Job ID does not match")
    ns = job_ns(req, body, api_job)
    api_job["Namespace"] = ns
    sim.check(req, ns, "submit-job", "plan-job")
    job = jobs.prepare(api_job)
    resp = jobs.plan(sim.store, job, bool(field(body, "Diff")))
    return Resp(resp, index=resp["Index"])


def job_allocations(sim, req, jid):
    check_method(req, "GET")
    sim.check(req, req.ns, "read-job")
    query_bool(req, "all")
    store = sim.store

    def fn():
        out = [lifecycle.alloc_stub(a)
               for a in lookup.job_allocs(store, req.ns, jid)]
        out.sort(key=lambda a: a["CreateIndex"], reverse=True)
        return out, store.max_index("allocs")
    return sim.blocking(req, fn)


def job_evaluations(sim, req, jid):
    check_method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store

    def fn():
        out = [e for e in store.evals.values()
               if e["Namespace"] == req.ns and e["JobID"] == jid]
        out.sort(key=lambda e: e["CreateIndex"], reverse=True)
        return out, store.max_index("evals")
    return sim.blocking(req, fn)


def job_evaluate(sim, req, jid):
    check_method(req, *WRITE)
    sim.check(req, req.ns, "submit-job")
    job = sim.store.jobs.get(_key(req, jid))
    if job is None:
        raise CodedError(404, "job not found")
    if job["Periodic"] is not None or (job["ParameterizedJob"] is not None
                                       and not job["Dispatched"]):
        raise CodedError(500, "can't evaluate periodic job")
    ev = create_eval(sim.store, job, "job-register")
    resp = dict({"EvalID": ev["ID"], "EvalCreateIndex": ev["CreateIndex"],
                 "JobModifyIndex": job["ModifyIndex"], "Warnings": ""},
                **jobs.write_meta(ev["CreateIndex"]))
    return Resp(resp, index=ev["CreateIndex"])


def job_summary(sim, req, jid):
    check_method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store

    def fn():
        job = store.jobs.get(_key(req, jid))
        if job is None:
            return CodedError(404, "job not found"), store.max_index("job_summary")
        return structs.job_summary(store, job), store.max_index("job_summary")
    return sim.blocking(req, fn)


def job_versions(sim, req, jid):
    check_method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store
    want_diffs = query_bool(req, "diffs")

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
    check_method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store

    def fn():
        return (lookup.job_deployments(store, req.ns, jid),
                store.max_index("deployment"))
    return sim.blocking(req, fn)


def job_latest_deployment(sim, req, jid):
    check_method(req, "GET")
    sim.check(req, req.ns, "read-job")
    store = sim.store

    def fn():
        return (lookup.latest_deployment(store, req.ns, jid),
                store.max_index("deployment"))
    return sim.blocking(req, fn)


def job_dispatch(sim, req, jid):
    check_method(req, *WRITE)
    body = req.json()
    if field(body, "JobID") and field(body, "JobID") != jid:
        raise CodedError(400, "Job ID does not match")
    sim.check(req, req.ns, "dispatch-job")
    token = req.q("idempotency_token") or field(body, "IdempotencyToken") or ""
    payload = field(body, "Payload")
    if payload:
        try:
            base64.b64decode(payload, validate=True)
        except ValueError:
            raise CodedError(400, "illegal base64 data at input byte 0")
    resp = jobs.dispatch(sim.store, _key(req, jid), payload,
                         field(body, "Meta"), token,
                         field(body, "IdPrefixTemplate") or "",
                         int(field(body, "Priority") or 0))
    return Resp(resp, index=resp["Index"])


def job_dispatch_payload(sim, req, jid):
    check_method(req, *WRITE)
    sim.check(req, req.ns, "dispatch-job")
    token = req.q("idempotency_token") or ""
    payload = base64.b64encode(req.body).decode() if req.body else None
    resp = jobs.dispatch(sim.store, _key(req, jid), payload, None, token)
    return Resp(resp, index=resp["Index"])


def job_periodic_force(sim, req, jid):
    check_method(req, *WRITE)
    sim.check(req, req.ns, "dispatch-job", "submit-job")
    resp = jobs.periodic_force(sim.store, _key(req, jid))
    return Resp(resp, index=resp["Index"])


def job_revert(sim, req, jid):
    check_method(req, *WRITE)
    sim.check(req, req.ns, "submit-job")
    body = req.json()
    if field(body, "JobID") and field(body, "JobID") != jid:
        raise CodedError(400, "Job ID does not match")
    prior = field(body, "EnforcePriorVersion")
    resp = jobs.revert(sim.store, _key(req, jid), int(field(body, "JobVersion") or 0),
                       None if prior is None else int(prior))
    return Resp(resp, index=resp["Index"])


def job_stable(sim, req, jid):
    check_method(req, *WRITE)
    sim.check(req, req.ns, "submit-job")
    body = req.json()
    if field(body, "JobID") and field(body, "JobID") != jid:
        raise CodedError(400, "Job ID does not match")
    store = sim.store
    vers = store.versions.get(_key(req, jid)) or []
    ver = int(field(body, "JobVersion") or 0)
    target = next((v for v in vers if v["Version"] == ver), None)
    if target is None:
        raise CodedError(500, 'job "%s" at version %d not found' % (jid, ver))
    target["Stable"] = bool(field(body, "Stable"))
    index = store.next_index("jobs", "job_version")
    return Resp({"Index": index}, index=index)


def job_scale(sim, req, jid):
    store = sim.store
    if req.method == "GET":
        sim.check(req, req.ns, "read-job-scaling", "read-job")

        def fn():
            return jobs.scale_status(store, _key(req, jid)), store.max_index("jobs")
        return sim.blocking(req, fn)
    check_method(req, *WRITE)
    body = req.json()
    sim.check(req, req.ns, "scale-job", "submit-job")
    target = field(body, "Target") or {}
    count = field(body, "Count")
    resp = jobs.scale(store, _key(req, jid), target.get("Group"),
                      None if count is None else int(count),
                      field(body, "Message") or "", field(body, "Error"),
                      field(body, "Meta"))
    return Resp(resp, index=resp["Index"])


def job_services(sim, req, jid):
    check_method(req, "GET")
    return Resp([], index=sim.store.index, read=True)


def job_submission(sim, req, jid):
    check_method(req, "GET")
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
