"""The /v1 routes: dispatch by Nomad's rules (command/agent/http.go), the
status and agent endpoints, and the handlers of api_jobs.py,
api_cluster.py, events.py and logs.py.

Handlers run with store.lock held (server.py takes it) and return a Resp
or raise CodedError / acl.Denied; reads return (body, index) through
`sim.blocking`, which implements ?index=&wait=.
"""

from . import api_cluster, api_jobs, events
from .errors import CodedError
from .request import Resp


# -- routing -----------------------------------------------------------------

def route(sim, req):
    p = req.path
    if p == "/v1/jobs":
        return api_jobs.jobs_root(sim, req)
    if p == "/v1/jobs/parse":
        return api_jobs.jobs_parse(sim, req)
    if p.startswith("/v1/job/"):
        return api_jobs.job_specific(sim, req, p[len("/v1/job/"):])
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
