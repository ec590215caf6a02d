"""Deployments on the virtual clock: canaries, promotion, failure, revert."""

import unittest

from .simtest import SimTestCase, service_job


def healthy_rollout(sim, jid, **kw):
    """Register a job and let its first deployment succeed."""
    r = sim.register(service_job(jid, **kw))
    sim.advance(1)
    sim.advance(10)
    d = sim.deployment(jid)
    assert d["Status"] == "successful", d
    return r


class TestCanaries(SimTestCase):
    def test_canary_flow_to_promotion(self):
        healthy_rollout(self.sim, "can", count=3, canary=1)
        new = service_job("can", count=3, canary=1, image="nginx:1.26")
        self.sim.register(new)
        d = self.sim.deployment("can")
        self.assertEqual(d["Status"], "running")
        self.assertEqual(d["StatusDescription"],
                         "Deployment is running but requires manual promotion")
        g = d["TaskGroups"]["web"]
        self.assertEqual((g["DesiredCanaries"], g["DesiredTotal"], g["Promoted"]), (1, 3, False))
        self.assertEqual(len(g["PlacedCanaries"]), 1)
        self.assertEqual(g["HealthyAllocs"], 0)
        self.assertIsNotNone(g["RequireProgressBy"])
        for k in ("ID", "Namespace", "JobID", "JobVersion", "JobModifyIndex",
                  "JobSpecModifyIndex", "JobCreateIndex", "IsMultiregion",
                  "EvalPriority", "CreateIndex", "ModifyIndex", "CreateTime", "ModifyTime"):
            self.assertIn(k, d)
        # promoting before the canary is healthy is refused
        st, _, body = self.sim.put("/v1/deployment/promote/" + d["ID"],
                                   {"DeploymentID": d["ID"], "All": True})
        self.assertEqual(st, 500)
        self.assertEqual(body, '1 error occurred:\n\t* Task group "web" has 0/1 '
                               'healthy allocations\n\n')
        self.sim.advance(1)
        self.sim.advance(10)
        d = self.sim.deployment("can")
        g = d["TaskGroups"]["web"]
        self.assertEqual((d["Status"], g["HealthyAllocs"], g["PlacedAllocs"]), ("running", 1, 1))
        canary = self.sim.ok("GET", "/v1/allocation/" + g["PlacedCanaries"][0])
        self.assertEqual(canary["DeploymentStatus"]["Canary"], True)
        self.assertEqual(canary["DeploymentStatus"]["Healthy"], True)
        self.assertEqual(canary["DeploymentID"], d["ID"])
        # the old allocations are still running, untouched
        old = [a for a in self.sim.allocs("can") if a["JobVersion"] == 0]
        self.assertEqual({a["DesiredStatus"] for a in old}, {"run"})
        # more time does not fail a deployment that only waits for promotion
        self.sim.advance(3600)
        self.assertEqual(self.sim.deployment("can")["Status"], "running")
        st, _, body = self.sim.put("/v1/deployment/promote/" + d["ID"], {"All": True})
        self.assertEqual((st, body), (400, "DeploymentID must be specified"))
        st, _, body = self.sim.put("/v1/deployment/promote/" + d["ID"],
                                   {"DeploymentID": "other", "All": True})
        self.assertEqual((st, body), (400, "Deployment ID does not match"))
        r = self.sim.ok("PUT", "/v1/deployment/promote/" + d["ID"],
                        {"DeploymentID": d["ID"], "All": True})
        self.assertEqual(sorted(r), ["DeploymentModifyIndex", "EvalCreateIndex",
                                     "EvalID", "Index", "RevertedJobVersion"])
        self.assertIsNone(r["RevertedJobVersion"])
        d = self.sim.deployment("can")
        self.assertEqual((d["StatusDescription"], d["TaskGroups"]["web"]["Promoted"]),
                         ("Deployment is running", True))
        for _ in range(4):
            self.sim.advance(1)
            self.sim.advance(10)
        d = self.sim.deployment("can")
        self.assertEqual((d["Status"], d["StatusDescription"]),
                         ("successful", "Deployment completed successfully"))
        live = [a for a in self.sim.allocs("can") if a["DesiredStatus"] == "run"]
        self.assertEqual(len(live), 3)
        self.assertEqual({a["JobVersion"] for a in live}, {1})
        self.assertEqual(sorted(a["Name"] for a in live),
                         ["can.web[0]", "can.web[1]", "can.web[2]"])
        st, _, body = self.sim.put("/v1/deployment/promote/" + d["ID"],
                                   {"DeploymentID": d["ID"], "All": True})
        self.assertEqual((st, body), (500, "can't promote terminal deployment"))

    def test_auto_promote(self):
        healthy_rollout(self.sim, "auto", count=2, canary=1, auto_promote=True)
        self.sim.register(service_job("auto", count=2, canary=1, auto_promote=True,
                                      image="nginx:2"))
        d = self.sim.deployment("auto")
        self.assertEqual(d["StatusDescription"],
                         "Deployment is running pending automatic promotion")
        for _ in range(4):
            self.sim.advance(1)
            self.sim.advance(10)
        d = self.sim.deployment("auto")
        self.assertEqual(d["Status"], "successful")
        self.assertTrue(d["TaskGroups"]["web"]["Promoted"])

    def test_canaries_wait_when_held(self):
        healthy_rollout(self.sim, "held", count=2, canary=1, auto_promote=True)
        self.sim.ok("POST", "/_sim/health/hold", {"JobID": "held"})
        self.sim.register(service_job("held", count=2, canary=1, auto_promote=True,
                                      image="nginx:2"))
        self.sim.advance(1)
        self.sim.advance(60)
        d = self.sim.deployment("held")
        self.assertEqual((d["Status"], d["TaskGroups"]["web"]["HealthyAllocs"]), ("running", 0))
        self.sim.ok("POST", "/_sim/health/hold", {"JobID": "held", "Hold": False})
        d = self.sim.deployment("held")
        self.assertEqual(d["TaskGroups"]["web"]["HealthyAllocs"], 1)
        self.assertTrue(d["TaskGroups"]["web"]["Promoted"])


class TestRolling(SimTestCase):
    def test_rolling_update_respects_max_parallel(self):
        healthy_rollout(self.sim, "roll", count=4, max_parallel=2)
        self.sim.register(service_job("roll", count=4, max_parallel=2, image="n:2"))
        new = [a for a in self.sim.allocs("roll") if a["JobVersion"] == 1]
        self.assertEqual(len(new), 2)
        stopped = [a for a in self.sim.allocs("roll")
                   if a["JobVersion"] == 0 and a["DesiredStatus"] == "stop"]
        self.assertEqual(len(stopped), 2)
        self.assertEqual(stopped[0]["DesiredDescription"],
                         "alloc is being updated due to job update")
        self.sim.advance(1)
        self.sim.advance(10)
        new = [a for a in self.sim.allocs("roll") if a["JobVersion"] == 1]
        self.assertEqual(len(new), 4)
        self.sim.advance(1)
        self.sim.advance(10)
        d = self.sim.deployment("roll")
        self.assertEqual((d["Status"], d["TaskGroups"]["web"]["HealthyAllocs"]), ("successful", 4))

    def test_deployments_list_and_job_deployments(self):
        healthy_rollout(self.sim, "lst", count=1)
        deps = self.sim.ok("GET", "/v1/job/lst/deployments")
        self.assertEqual(len(deps), 1)
        self.assertEqual(self.sim.ok("GET", "/v1/deployment/" + deps[0]["ID"])["JobID"], "lst")
        st, _, body = self.sim.get("/v1/deployment/00000000-0000-0000-0000-000000000000")
        self.assertEqual((st, body), (404, "deployment not found"))
        allocs = self.sim.ok("GET", "/v1/deployment/allocations/" + deps[0]["ID"])
        self.assertEqual(len(allocs), 1)
        self.assertNotIn("DeploymentID", allocs[0])


class TestFailure(SimTestCase):
    def test_failing_alloc_fails_deployment_at_progress_deadline_and_reverts(self):
        healthy_rollout(self.sim, "bad", count=2, auto_revert=True)
        self.sim.register(service_job("bad", count=2, auto_revert=True, image="broken:1"))
        self.sim.ok("POST", "/_sim/job/break", {"JobID": "bad", "ExitCode": 2})
        self.sim.advance(1)
        failed = {"Failed": [a["ID"] for a in self.sim.allocs("bad")
                             if a["ClientStatus"] == "failed"]}
        self.assertEqual(len(failed["Failed"]), 1)
        a = self.sim.ok("GET", "/v1/allocation/" + failed["Failed"][0])
        self.assertEqual(a["ClientStatus"], "failed")
        self.assertEqual(a["DeploymentStatus"]["Healthy"], False)
        term = [e for e in a["TaskStates"]["app"]["Events"] if e["Type"] == "Terminated"]
        self.assertEqual(term[-1]["ExitCode"], 2)
        d = self.sim.deployment("bad")
        self.assertEqual(d["Status"], "running")
        self.assertEqual(d["TaskGroups"]["web"]["UnhealthyAllocs"], 1)
        # Nomad reschedules the failed alloc (30s, then exponential); the
        # replacements fail too, so no progress is made within the deadline.
        self.sim.advance(600)
        d = self.sim.ok("GET", "/v1/deployment/" + d["ID"])
        self.sim.ok("POST", "/_sim/job/break", {"JobID": "bad", "Break": False})
        self.assertEqual(d["Status"], "failed")
        self.assertEqual(d["StatusDescription"],
                         "Failed due to progress deadline - rolling back to job version 0")
        job = self.sim.ok("GET", "/v1/job/bad")
        self.assertEqual(job["Version"], 2)
        self.assertEqual(job["TaskGroups"][0]["Tasks"][0]["Config"]["image"], "nginx:1.25")

    def test_zero_progress_deadline_fails_on_first_unhealthy(self):
        healthy_rollout(self.sim, "zero", count=1, progress_deadline=0)
        self.sim.register(service_job("zero", count=1, progress_deadline=0, image="x:2"))
        self.sim.advance(1)
        self.sim.ok("POST", "/_sim/alloc/fail", {"JobID": "zero"})
        d = self.sim.deployment("zero")
        self.assertEqual((d["Status"], d["StatusDescription"]),
                         ("failed", "Failed due to unhealthy allocations - no stable job "
                                    "version to auto revert to")
                         if d["TaskGroups"]["web"]["AutoRevert"] else
                         ("failed", "Failed due to unhealthy allocations"))

    def test_deployment_fail_endpoint(self):
        healthy_rollout(self.sim, "mf", count=1, auto_revert=True)
        self.sim.register(service_job("mf", count=1, auto_revert=True, image="x:2"))
        d = self.sim.deployment("mf")
        r = self.sim.ok("POST", "/v1/deployment/fail/" + d["ID"])
        self.assertEqual(r["RevertedJobVersion"], 0)
        d = self.sim.ok("GET", "/v1/deployment/" + d["ID"])
        self.assertEqual(d["StatusDescription"],
                         "Deployment marked as failed - rolling back to job version 0")
        st, _, body = self.sim.post("/v1/deployment/fail/" + d["ID"])
        self.assertEqual((st, body), (500, "can't fail terminal deployment"))
        st, _, body = self.sim.post("/v1/deployment/fail/nope")
        self.assertEqual((st, body), (500, "deployment not found"))

    def test_newer_version_cancels_deployment(self):
        healthy_rollout(self.sim, "nv", count=1)
        self.sim.register(service_job("nv", count=1, image="x:2"))
        first = self.sim.deployment("nv")
        self.sim.register(service_job("nv", count=1, image="x:3"))
        d = self.sim.ok("GET", "/v1/deployment/" + first["ID"])
        self.assertEqual((d["Status"], d["StatusDescription"]),
                         ("cancelled", "Cancelled due to newer version of job"))

    def test_pause_and_resume(self):
        healthy_rollout(self.sim, "pz", count=1)
        self.sim.register(service_job("pz", count=1, image="x:2"))
        d = self.sim.deployment("pz")
        self.sim.ok("PUT", "/v1/deployment/pause/" + d["ID"],
                    {"DeploymentID": d["ID"], "Pause": True})
        self.assertEqual(self.sim.deployment("pz")["Status"], "paused")
        self.sim.ok("PUT", "/v1/deployment/pause/" + d["ID"],
                    {"DeploymentID": d["ID"], "Pause": False})
        self.sim.advance(1)
        self.sim.advance(10)
        self.assertEqual(self.sim.deployment("pz")["Status"], "successful")


if __name__ == "__main__":
    unittest.main()
