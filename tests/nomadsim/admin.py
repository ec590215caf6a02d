"""The /_sim/ admin API: faults, outside changes, clock, tokens, state.

JSON in, JSON out; no ACLs.  Errors are plain text with 400/404.  Every
endpoint is documented in README.md.
"""

import json
import urllib.parse

from . import acl, api_cluster, deployments, jobs, jobspec, lifecycle, lookup
from .errors import CodedError
from .gojson import deepcopy, rfc3339, uuid


def upsert_ns(store, name, description=""):
    return api_cluster.upsert_namespace(store, name, description)


def make_nodes(store, n, cpu=1_000_000, memory=4_000_000, dc="dc1"):
    store.nodes = []
    for i in range(n):
        store.nodes.append({"ID": uuid(), "Name": "nomadsim-%d" % (i + 1),
                            "Datacenter": dc, "NodePool": "default",
                            "CPU": cpu, "MemoryMB": memory})


def _body(raw):
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError as e:
        raise CodedError(400, "invalid JSON: %s" % e)


def handle(sim, method, path, query, raw):
    store = sim.store
    try:
        body = _body(raw)
        with store.lock:
            return _route(sim, method, path, query, body)
    except CodedError as e:
        return e.code, e.msg
    except (KeyError, TypeError, ValueError) as e:
        return 400, "bad admin request: %r" % (e,)


def _get(body, *names, default=None):
    for n in names:
        if n in body:
            return body[n]
    return default


def _job_key(body):
    ns = _get(body, "Namespace", default="default")
    jid = _get(body, "JobID")
    if not jid:
        raise CodedError(400, "JobID is required")
    return ns, jid


def _route(sim, method, path, query, body):
    store = sim.store
    p = path[len("/_sim"):]
    if p == "/health":
        return 200, {"OK": True, "Index": store.index}
    if p == "/state":
        d = store.dump()
        d["Allocations"] = {k: lifecycle.alloc_wire(a, with_job=False)
                            for k, a in store.allocs.items()}
        d["Faults"] = store.faults
        return 200, d
    if p == "/clock":
        if method == "POST":
            if "Speed" in body:
                store.clock.set_speed(float(body["Speed"]))
            if "Set" in body:
                store.clock.set(int(body["Set"]))
            if "Advance" in body:
                store.advance(float(body["Advance"]))
            store.run_due()
            store.cond.notify_all()
        now = store.clock.now()
        return 200, {"Now": now, "NowRFC3339": rfc3339(now),
                     "Speed": store.clock.speed, "PendingTimers": len(store.timers)}
    if p == "/faults":
        if method == "DELETE":
            n = len(store.faults)
            store.faults.clear()
            return 200, {"Cleared": n}
        if method == "POST":
            f = {"ID": uuid(), "Method": _get(body, "Method", default="*").upper(),
                 "Path": _get(body, "Path", default="/"),
                 "Match": _get(body, "Match", default="prefix"),
                 "Count": int(_get(body, "Count", default=1)),
                 "Action": _get(body, "Action", default="status"),
                 "Status": int(_get(body, "Status", default=500)),
                 "Body": _get(body, "Body", default="injected fault"),
                 "Seconds": float(_get(body, "Seconds", default=0))}
            if f["Action"] not in ("status", "stall", "drop"):
                raise CodedError(400, "Action must be status, stall or drop")
            if f["Match"] not in ("exact", "prefix", "regex"):
                raise CodedError(400, "Match must be exact, prefix or regex")
            store.faults.append(f)
            return 200, f
        return 200, store.faults
    if p == "/alloc/fail":
        return 200, _alloc_fail(store, body)
    if p == "/deployment/fail":
        return 200, _deployment_fail(store, body)
    if p == "/health/hold":
        key = _job_key(body)
        if _get(body, "Hold", default=True):
            store.hold_health.add(key)
        else:
            lifecycle.release_health(store, *key)
        return 200, {"Held": sorted("%s/%s" % k for k in store.hold_health)}
    if p == "/job/break":
        key = _job_key(body)
        if _get(body, "Break", default=True):
            store.broken[key] = int(_get(body, "ExitCode", default=1))
        else:
            store.broken.pop(key, None)
        return 200, {"Broken": sorted("%s/%s" % k for k in store.broken)}
    if p == "/job/register":
        return 200, _register(sim, body)
    if p == "/job/scale":
        return 200, _scale(store, body)
    if p == "/job/stop":
        ns, jid = _job_key(body)
        return 200, jobs.deregister(store, ns, jid, bool(_get(body, "Purge", default=False)))
    if p == "/token":
        tok = acl.make_token(store, _get(body, "Name", default=""),
                             _get(body, "Type", default="client"),
                             _get(body, "Policies"), _get(body, "SecretID"))
        return 200, tok
    if p == "/tokens":
        return 200, list(store.tokens.values())
    if p == "/policy":
        name = _get(body, "Name")
        if not name:
            raise CodedError(400, "Name is required")
        rules = _get(body, "Rules", default={})
        if isinstance(rules, str):
            rules = json.loads(rules)
        store.policies[name] = {"Name": name, "Rules": rules,
                                "Description": _get(body, "Description", default="")}
        store.next_index("acl_policy")
        return 200, store.policies[name]
    if p == "/namespace":
        name = _get(body, "Name")
        if not name:
            raise CodedError(400, "Name is required")
        return 200, upsert_ns(store, name, _get(body, "Description", default=""))
    if p == "/config":
        if method == "POST":
            for k, v in body.items():
                if k not in store.config:
                    raise CodedError(400, "unknown config key %r" % k)
                store.config[k] = type(store.config[k])(v)
        return 200, store.config
    if p == "/nodes":
        if method == "POST":
            make_nodes(store, int(_get(body, "Count", default=len(store.nodes) or 1)),
                       int(_get(body, "CPU", default=1_000_000)),
                       int(_get(body, "MemoryMB", default=4_000_000)),
                       _get(body, "Datacenter", default="dc1"))
        return 200, store.nodes
    if p == "/allocs":
        q = {k: v[0] for k, v in query.items()}
        out = [lifecycle.alloc_wire(a, with_job=False) for a in store.allocs.values()
               if (not q.get("job") or a["JobID"] == q["job"])
               and a["Namespace"] == q.get("namespace", a["Namespace"])]
        out.sort(key=lambda a: a["CreateIndex"])
        return 200, out
    raise CodedError(404, "unknown admin endpoint %s" % urllib.parse.quote(path))


def _alloc_fail(store, body):
    exit_code = int(_get(body, "ExitCode", default=1))
    msg = _get(body, "Message", default="failure injected by nomadsim")
    targets = []
    if _get(body, "AllocID"):
        a = store.allocs.get(body["AllocID"])
        if a is None:
            raise CodedError(404, "alloc not found")
        targets = [a]
    else:
        ns, jid = _job_key(body)
        group = _get(body, "Group")
        live = [a for a in lookup.job_allocs(store, ns, jid)
                if lookup.is_live(a) and (not group or a["TaskGroup"] == group)]
        # Newest first: the allocs of the version being rolled out.
        live.sort(key=lambda a: a["CreateIndex"], reverse=True)
        targets = live[:int(_get(body, "Count", default=1))]
        if not targets:
            raise CodedError(404, "no live allocation to fail")
    for a in targets:
        lifecycle.fail_alloc(store, a, exit_code, msg)
    return {"Failed": [a["ID"] for a in targets]}


def _deployment_fail(store, body):
    dep = None
    if _get(body, "DeploymentID"):
        dep = store.deployments.get(body["DeploymentID"])
    else:
        dep = lookup.latest_deployment(store, *_job_key(body))
    if dep is None:
        raise CodedError(404, "deployment not found")
    if dep["Status"] not in lookup.ACTIVE_DEP:
        raise CodedError(400, "can't fail terminal deployment")
    reason = _get(body, "Reason", default="unhealthy")
    desc = {"unhealthy": deployments.DESC_UNHEALTHY,
            "progress": deployments.DESC_PROGRESS,
            "marked": deployments.DESC_MARKED}.get(reason)
    if desc is None:
        raise CodedError(400, "Reason must be unhealthy, progress or marked")
    reverted = deployments.fail_deployment(store, dep, desc)
    return {"Deployment": deepcopy(dep), "RevertedJobVersion": reverted}


def _register(sim, body):
    store = sim.store
    api_job = _get(body, "Job")
    if api_job is None and _get(body, "JobHCL"):
        try:
            api_job = jobspec.parse_job(body["JobHCL"], filename="input.hcl",
                                        variables=_get(body, "Variables"))
        except jobspec.JobParseError as e:
            raise CodedError(400, str(e))
    if not isinstance(api_job, dict):
        raise CodedError(400, "Job or JobHCL is required")
    api_job = deepcopy(api_job)
    if _get(body, "Namespace"):
        api_job["Namespace"] = body["Namespace"]
    api_job.setdefault("Namespace", "default")
    if api_job["Namespace"] is None:
        api_job["Namespace"] = "default"
    job = jobs.prepare(api_job)
    return jobs.register(store, job)


def _scale(store, body):
    key = _job_key(body)
    group = _get(body, "Group")
    count = int(_get(body, "Count"))
    if _get(body, "Force", default=False):
        job = store.jobs.get(key)
        if job is None:
            raise CodedError(404, "job not found")
        new = deepcopy(job)
        tg = next((g for g in new["TaskGroups"] if g["Name"] == group), None)
        if tg is None:
            raise CodedError(400, 'job does not contain task group "%s"' % group)
        tg["Count"] = count
        return jobs.register(store, new, trigger="job-scaling")
    return jobs.scale(store, key, group, count,
                      _get(body, "Message", default="scaled by nomadsim admin"))
