"""Evaluations: the row, its events, and the broker that runs one.

Nomad's eval broker hands evaluations to the scheduler's workers; here
create_eval() hands them to store.scheduler (scheduler.evaluate, set by
server.make_sim), which runs at once.  The allocation lifecycle and the
deployment watcher create evaluations without importing the scheduler,
which sits above them.  Callers hold store.lock."""

from .gojson import deepcopy, uuid


def new_eval(store, job, trigger, index, deployment_id=""):
    now = store.clock.now()
    return {
        "ID": uuid(), "Namespace": job["Namespace"], "Priority": job["Priority"],
        "Type": job["Type"], "TriggeredBy": trigger, "JobID": job["ID"],
        "JobModifyIndex": job["JobModifyIndex"], "NodeID": "",
        "NodeModifyIndex": 0, "DeploymentID": deployment_id,
        "Status": "pending", "StatusDescription": "", "Wait": 0,
        "WaitUntil": None, "NextEval": "", "PreviousEval": "",
        "BlockedEval": "", "RelatedEvals": None, "FailedTGAllocs": None,
        "ClassEligibility": None, "QuotaLimitReached": "",
        "EscapedComputedClass": False, "AnnotatePlan": False,
        "QueuedAllocations": None, "LeaderACL": "", "SnapshotIndex": index,
        "CreateIndex": index, "ModifyIndex": index, "CreateTime": now,
        "ModifyTime": now,
    }


def create_eval(store, job, trigger, deployment_id=""):
    """Insert a pending eval at a fresh index and have it run."""
    index = store.next_index("evals")
    ev = new_eval(store, job, trigger, index, deployment_id)
    store.evals[ev["ID"]] = ev
    publish_eval(store, ev, "EvaluationUpdated")
    store.scheduler(store, ev)
    return ev


def publish_eval(store, ev, etype):
    store.publish("Evaluation", etype, ev["ID"], ev["Namespace"],
                  {"Evaluation": deepcopy(ev)},
                  [ev["JobID"], ev["DeploymentID"]])
