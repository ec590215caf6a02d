"""Periodic and system jobs, the speed-factor clock, misc endpoints."""

import unittest

from .simtest import Sim, SimTestCase, batch_job, service_job


def periodic_job(jid):
    job = batch_job(jid)
    job["Periodic"] = {"Enabled": True, "Spec": "*/5 * * * *", "SpecType": "cron",
                       "ProhibitOverlap": False, "TimeZone": "UTC"}
    return job


class TestPeriodicAndSystem(SimTestCase):
    def test_periodic_parent_force_and_clock_launches(self):
        r = self.sim.register(periodic_job("nightly"))
        self.assertEqual((r["EvalID"], r["EvalCreateIndex"]), ("", 0))
        p = self.sim.ok("PUT", "/v1/job/nightly/plan",
                        {"Job": periodic_job("nightly"), "Diff": True})
        self.assertRegex(p["NextPeriodicLaunch"], r"^\d{4}-\d\d-\d\dT\d\d:\d[05]:00Z$")
        f = self.sim.ok("PUT", "/v1/job/nightly/periodic/force")
        self.assertEqual(sorted(f), ["EvalCreateIndex", "EvalID", "Index"])
        kids = [j for j in self.sim.ok("GET", "/v1/jobs?prefix=nightly/periodic-")]
        self.assertEqual(len(kids), 1)
        self.assertEqual(kids[0]["ParentID"], "nightly")
        self.sim.advance(600)
        kids = self.sim.ok("GET", "/v1/jobs?prefix=nightly/periodic-")
        self.assertGreaterEqual(len(kids), 2)
        parent = self.sim.ok("GET", "/v1/job/nightly")
        self.assertEqual(parent["Status"], "running")
        st, _, body = self.sim.put("/v1/job/nightly/dispatch", {})
        self.assertEqual(st, 500)

    def test_system_job_one_alloc_per_node(self):
        job = service_job("agent", count=1)
        job["Type"] = "system"
        job["TaskGroups"][0]["Update"] = None
        self.sim.register(job)
        nodes = {a["NodeID"] for a in self.sim.allocs("agent")}
        self.assertEqual(len(nodes), len(self.sim.ok("GET", "/v1/nodes")))

    def test_misc_endpoints(self):
        self.assertEqual(self.sim.ok("GET", "/v1/status/leader"), "127.0.0.1:4647")
        st, _, body = self.sim.get("/v1/nonsense")
        self.assertEqual(st, 404)
        v = self.sim.ok("PUT", "/v1/validate/job", {"Job": service_job("v")})
        self.assertEqual(v["ValidationErrors"], None)
        bad = service_job("v")
        bad["TaskGroups"] = []
        v = self.sim.ok("PUT", "/v1/validate/job", {"Job": bad})
        self.assertIn("Missing job task groups", v["ValidationErrors"])

    def test_alloc_stop_is_replaced(self):
        self.sim.register(service_job("stp", count=1, max_parallel=0))
        a = self.sim.allocs("stp")[0]
        r = self.sim.ok("POST", "/v1/allocation/%s/stop" % a["ID"])
        self.assertIn("EvalID", r)
        live = [x for x in self.sim.allocs("stp") if x["DesiredStatus"] == "run"]
        self.assertEqual(len(live), 1)
        self.assertNotEqual(live[0]["ID"], a["ID"])


class TestScalingQuirk(SimTestCase):
    def test_unchanged_scaling_job_shows_scaling_object(self):
        job = service_job("q", count=2)
        job["TaskGroups"][0]["Scaling"] = {"Min": 1, "Max": 4}
        self.sim.register(job)
        p = self.sim.ok("PUT", "/v1/job/q/plan", {"Job": job, "Diff": True})
        g = p["Diff"]["TaskGroups"][0]
        self.assertEqual(p["Diff"]["Type"], "Edited")
        self.assertEqual(g["Objects"], [{"Type": "Edited", "Name": "Scaling",
                                         "Fields": None, "Objects": None}])
        self.assertEqual(g["Updates"], {"ignore": 2})
        self.sim.ok("POST", "/_sim/config", {"scaling_diff_quirk": False})
        try:
            p = self.sim.ok("PUT", "/v1/job/q/plan", {"Job": job, "Diff": True})
            self.assertEqual(p["Diff"]["Type"], "None")
        finally:
            self.sim.ok("POST", "/_sim/config", {"scaling_diff_quirk": True})


class TestSpeedClock(unittest.TestCase):
    def test_deployment_progresses_on_its_own_at_speed(self):
        s = Sim(speed=100)
        try:
            s.register(service_job("fast", count=2))
            s.wait_for(lambda: s.deployment("fast")["Status"] == "successful",
                       timeout=10, what="deployment at speed 100")
            c = s.ok("GET", "/_sim/clock")
            self.assertEqual(c["Speed"], 100.0)
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main()
