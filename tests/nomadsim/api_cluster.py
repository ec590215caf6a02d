"""The /v1 endpoints beyond jobs: allocations, evaluations, deployments,
client fs, namespaces, ACL tokens, nodes, scaling policies, validation."""

from . import acl, deployments, jobs, lifecycle, logs, lookup, structs
from .errors import CodedError
from .evals import create_eval
from .gojson import multierror
from .request import (INVALID_METHOD, WRITE, Resp, check_method, decode_job,
                      field, filter_items, ns_match, paginate)


def allocs_list(sim, req):
    check_method(req, "GET")
    store = sim.store
    prefix = req.q("prefix") or ""

    def fn():
        out = []
        for a in store.allocs.values():
            if not ns_match(req, a["Namespace"]) or not a["ID"].startswith(prefix):
                continue
            if not sim.allowed(req, a["Namespace"], "read-job"):
                continue
            out.append(lifecycle.alloc_stub(a))
        out.sort(key=lambda a: a["ID"])
        out = filter_items(req, out)
        return paginate(req, out, lambda a: a["ID"]), store.max_index("allocs")
    return sim.blocking(req, fn)


def alloc_specific(sim, req, rest):
    store = sim.store
    if rest.endswith("/stop"):
        check_method(req, *WRITE)
        aid = rest[:-len("/stop")]
        a = store.allocs.get(aid)
        if a is None:
            raise CodedError(404, "alloc not found")
        sim.check(req, a["Namespace"], "alloc-lifecycle", "submit-job")
        a["DesiredTransition"]["Migrate"] = True
        index = store.next_index("allocs")
        lifecycle.stop_alloc(store, a, "alloc was stopped by user", index)
        job = store.jobs.get((a["Namespace"], a["JobID"]))
        ev = create_eval(store, job or a["Job"], "alloc-stop")
        return Resp({"EvalID": ev["ID"], "Index": ev["CreateIndex"]},
                    index=ev["CreateIndex"])
    check_method(req, "GET")

    def fn():
        a = store.allocs.get(rest)
        if a is None:
            return CodedError(404, "alloc not found"), store.max_index("allocs")
        sim.check(req, a["Namespace"], "read-job")
        return lifecycle.alloc_wire(a), a["ModifyIndex"]
    return sim.blocking(req, fn)


def evals_list(sim, req):
    check_method(req, "GET")
    store = sim.store

    def fn():
        out = [e for e in store.evals.values() if ns_match(req, e["Namespace"])
               and e["ID"].startswith(req.q("prefix") or "")]
        out.sort(key=lambda e: e["CreateIndex"], reverse=True)
        return filter_items(req, out), store.max_index("evals")
    return sim.blocking(req, fn)


def eval_specific(sim, req, rest):
    check_method(req, "GET")
    store = sim.store
    if rest.endswith("/allocations"):
        eid = rest[:-len("/allocations")]

        def fn():
            out = [lifecycle.alloc_stub(a) for a in store.allocs.values()
                   if a["EvalID"] == eid]
            return out, store.max_index("allocs")
        return sim.blocking(req, fn)

    def fn2():
        ev = store.evals.get(rest)
        if ev is None:
            return CodedError(404, "eval not found"), store.max_index("evals")
        return ev, ev["ModifyIndex"]
    return sim.blocking(req, fn2)


def deployments_list(sim, req):
    check_method(req, "GET")
    store = sim.store

    def fn():
        out = [d for d in store.deployments.values()
               if ns_match(req, d["Namespace"])
               and d["ID"].startswith(req.q("prefix") or "")]
        out.sort(key=lambda d: d["CreateIndex"], reverse=True)
        return filter_items(req, out), store.max_index("deployment")
    return sim.blocking(req, fn)


def _dep_update_resp(store, ev, dep, reverted=None):
    index = ev["CreateIndex"] if ev else dep["ModifyIndex"]
    return Resp({"EvalID": ev["ID"] if ev else "",
                 "EvalCreateIndex": ev["CreateIndex"] if ev else 0,
                 "DeploymentModifyIndex": dep["ModifyIndex"],
                 "RevertedJobVersion": reverted, "Index": index}, index=index)


def _dep_body(req, dep_id):
    body = req.json()
    did = field(body, "DeploymentID")
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
        check_method(req, "GET")

        def fn():
            out = [lifecycle.alloc_stub(a) for a in store.allocs.values()
                   if a["DeploymentID"] == dep_id]
            return out, store.max_index("allocs")
        return sim.blocking(req, fn)
    if prefix == "":
        check_method(req, "GET")

        def fn2():
            dep = store.deployments.get(dep_id)
            if dep is None:
                return CodedError(404, "deployment not found"), store.max_index("deployment")
            sim.check(req, dep["Namespace"], "read-job")
            return dep, dep["ModifyIndex"]
        return sim.blocking(req, fn2)
    check_method(req, *WRITE)
    if prefix == "promote/":
        body = _dep_body(req, dep_id)
        dep = _dep_lookup(sim, req, dep_id, "promote-deployment")
        if dep["Status"] not in lookup.ACTIVE_DEP:
            raise CodedError(500, "can't promote terminal deployment")
        groups = None if field(body, "All") else (field(body, "Groups") or [])
        if not any(st["DesiredCanaries"] > 0 for st in dep["TaskGroups"].values()):
            raise CodedError(500, "no canaries to promote")
        err = deployments.promote_errors(store, dep, groups)
        if err:
            raise CodedError(500, err)
        ev = deployments.promote(store, dep, groups)
        return _dep_update_resp(store, ev, dep)
    if prefix == "fail/":
        dep = _dep_lookup(sim, req, dep_id, "submit-job")
        if dep["Status"] not in lookup.ACTIVE_DEP:
            raise CodedError(500, "can't fail terminal deployment")
        reverted = deployments.fail_deployment(store, dep, deployments.DESC_MARKED)
        job = store.jobs.get((dep["Namespace"], dep["JobID"]))
        ev = create_eval(store, job, "deployment-watcher", dep["ID"]) if job else None
        return _dep_update_resp(store, ev, dep, reverted)
    if prefix == "pause/":
        body = _dep_body(req, dep_id)
        dep = _dep_lookup(sim, req, dep_id, "submit-job")
        if dep["Status"] not in lookup.ACTIVE_DEP:
            raise CodedError(500, "can't pause terminal deployment")
        if field(body, "Pause"):
            deployments.set_dep_status(store, dep, "paused", deployments.DESC_PAUSED)
            return _dep_update_resp(store, None, dep)
        waiting = any(st["DesiredCanaries"] > 0 and not st["Promoted"]
                      for st in dep["TaskGroups"].values())
        deployments.set_dep_status(store, dep, "running",
                                 deployments.DESC_MANUAL if waiting else deployments.DESC_RUNNING)
        job = store.jobs.get((dep["Namespace"], dep["JobID"]))
        ev = create_eval(store, job, "deployment-watcher", dep["ID"])
        deployments.watch_deployment(store, dep)
        return _dep_update_resp(store, ev, dep)
    if prefix == "allocation-health/":
        body = _dep_body(req, dep_id)
        dep = _dep_lookup(sim, req, dep_id, "submit-job")
        if dep["Status"] not in lookup.ACTIVE_DEP:
            raise CodedError(500, "can't set health of allocations for a terminal deployment")
        for ids, healthy in ((field(body, "HealthyAllocationIDs"), True),
                             (field(body, "UnhealthyAllocationIDs"), False)):
            for aid in ids or []:
                a = store.allocs.get(aid)
                if a is None or a["DeploymentID"] != dep_id:
                    raise CodedError(500, "Deployment %q does not contain alloc %q"
                                     .replace("%q", '"%s"') % (dep_id, aid))
                lifecycle.set_alloc_health(store, aid, healthy,
                                           etype="DeploymentAllocHealth")
        job = store.jobs.get((dep["Namespace"], dep["JobID"]))
        ev = create_eval(store, job, "deployment-watcher", dep["ID"])
        return _dep_update_resp(store, ev, dep)
    raise CodedError(500, "can't unblock a non-blocked deployment")


def client_fs(sim, req, rest):
    if rest.startswith("logs/"):
        return logs.logs(sim, req, rest[len("logs/"):])
    if rest.startswith("cat/"):
        return logs.cat(sim, req, rest[len("cat/"):])
    for p in ("ls/", "stat/", "readat/", "stream/"):
        if rest.startswith(p):
            raise CodedError(501, "not simulated by nomadsim")
    raise CodedError(404, INVALID_METHOD)


def namespaces_list(sim, req):
    check_method(req, "GET")
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
        nname = field(body, "Name") or name
        if name and nname != name:
            raise CodedError(400, "Namespace name does not match request path")
        ns = upsert_namespace(store, nname, field(body, "Description") or "",
                              field(body, "Meta"))
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
    check_method(req, "GET")
    if not sim.acl_enabled:
        raise CodedError(400, "ACL support disabled")
    tok = req.token
    if tok is None:
        raise acl.Denied(acl.TOKEN_NOT_FOUND)
    return Resp(tok, index=tok["ModifyIndex"], read=True)


def tokens_list(sim, req):
    check_method(req, "GET")
    if not sim.acl_enabled:
        raise CodedError(400, "ACL support disabled")
    if not sim.is_management(req):
        raise acl.Denied()
    out = [{k: v for k, v in t.items() if k != "SecretID"}
           for t in sim.store.tokens.values()]
    return Resp(out, index=sim.store.max_index("acl_token"), read=True)


def nodes_list(sim, req):
    check_method(req, "GET")
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
    check_method(req, "GET")
    out = []
    for (ns, jid), job in sorted(sim.store.jobs.items()):
        if not ns_match(req, ns):
            continue
        for tg in job["TaskGroups"]:
            s = tg["Scaling"]
            if s:
                out.append({"ID": s["ID"], "Enabled": s["Enabled"], "Type": s["Type"],
                            "Target": s["Target"], "CreateIndex": s["CreateIndex"],
                            "ModifyIndex": s["ModifyIndex"]})
    return Resp(out, index=sim.store.max_index("scaling_policy"), read=True)


def validate_job(sim, req):
    check_method(req, *WRITE)
    body = req.json()
    api_job = decode_job(body)
    errs = []
    try:
        job = jobs.prepare(api_job)
        errs = structs.validate(job)
    except CodedError as e:
        errs = [e.msg]
    return Resp({"DriverConfigValidated": True, "ValidationErrors": errs or None,
                 "Error": multierror(errs) if errs else "", "Warnings": ""},
                index=None)
