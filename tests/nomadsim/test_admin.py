"""The /_sim/ admin API: faults, outside changes, clock, state."""

import http.client
import shutil
import tempfile
import time
import unittest

from .simtest import Sim, SimTestCase, service_job


class TestFaults(SimTestCase):
    def test_status_fault_hits_n_requests(self):
        self.sim.ok("POST", "/_sim/faults", {"Method": "GET", "Path": "/v1/jobs",
                                             "Match": "exact", "Count": 2,
                                             "Status": 503, "Body": "No cluster leader"})
        for _ in range(2):
            st, h, body = self.sim.get("/v1/jobs")
            self.assertEqual((st, body), (503, "No cluster leader"))
            self.assertEqual(h["content-type"], "text/plain; charset=utf-8")
        st, _, _ = self.sim.get("/v1/jobs")
        self.assertEqual(st, 200)

    def test_drop_closes_connection(self):
        self.sim.ok("POST", "/_sim/faults", {"Path": "/v1/job/x", "Action": "drop"})
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.sim.get("/v1/job/x")
        st, _, _ = self.sim.get("/v1/job/x")
        self.assertEqual(st, 404)

    def test_stall_delays_then_answers(self):
        self.sim.ok("POST", "/_sim/faults", {"Path": "/v1/jobs", "Action": "stall",
                                             "Seconds": 0.3})
        t0 = time.monotonic()
        st, _, _ = self.sim.get("/v1/jobs")
        self.assertEqual(st, 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)

    def test_fault_list_and_clear(self):
        self.sim.ok("POST", "/_sim/faults", {"Path": "/v1/zzz", "Count": 5})
        self.assertEqual(len(self.sim.ok("GET", "/_sim/faults")), 1)
        self.assertEqual(self.sim.ok("DELETE", "/_sim/faults"), {"Cleared": 1})
        st, _, _ = self.sim.post("/_sim/faults", {"Action": "explode"})
        self.assertEqual(st, 400)


class TestOutsideChanges(SimTestCase):
    def test_register_behind_our_back_changes_plan(self):
        r = self.sim.register(service_job("bb", count=1))
        self.sim.ok("POST", "/_sim/job/register",
                    {"Job": service_job("bb", count=1, env={"PORT": "9999"})})
        job = self.sim.ok("GET", "/v1/job/bb")
        self.assertEqual(job["Version"], 1)
        self.assertGreater(job["JobModifyIndex"], r["JobModifyIndex"])
        st, _, body = self.sim.put("/v1/job/bb", {"Job": service_job("bb", count=1),
                                                  "EnforceIndex": True,
                                                  "JobModifyIndex": r["JobModifyIndex"]})
        self.assertEqual(st, 500)
        self.assertIn("conflicting job modify index", body)
        p = self.sim.ok("PUT", "/v1/job/bb/plan", {"Job": service_job("bb", count=1),
                                                   "Diff": True})
        t = p["Diff"]["TaskGroups"][0]["Tasks"][0]
        self.assertEqual(t["Fields"][0]["Name"], "Env[PORT]")
        self.assertEqual((t["Fields"][0]["Old"], t["Fields"][0]["New"]), ("9999", "8080"))

    def test_autoscaler_scale(self):
        job = service_job("auto", count=2)
        job["TaskGroups"][0]["Scaling"] = {"Min": 1, "Max": 8}
        self.sim.register(job)
        self.sim.ok("POST", "/_sim/job/scale", {"JobID": "auto", "Group": "web",
                                                "Count": 4, "Force": True})
        self.assertEqual(self.sim.ok("GET", "/v1/job/auto")["TaskGroups"][0]["Count"], 4)
        live = [a for a in self.sim.allocs("auto") if a["DesiredStatus"] == "run"]
        self.assertEqual(len(live), 4)

    def test_stop_behind_our_back(self):
        self.sim.register(service_job("gone", count=1))
        self.sim.ok("POST", "/_sim/job/stop", {"JobID": "gone"})
        self.assertTrue(self.sim.ok("GET", "/v1/job/gone")["Stop"])

    def test_clock_and_state(self):
        c0 = self.sim.ok("GET", "/_sim/clock")
        c1 = self.sim.advance(90)
        self.assertEqual(c1["Now"] - c0["Now"], 90_000_000_000)
        self.assertEqual(c1["Speed"], 0.0)
        state = self.sim.ok("GET", "/_sim/state")
        for k in ("Index", "Now", "Namespaces", "Jobs", "Allocations", "Deployments",
                  "Evaluations", "Tokens", "Faults"):
            self.assertIn(k, state)
        st, _, _ = self.sim.get("/_sim/nothing")
        self.assertEqual(st, 404)

    def test_namespaces(self):
        self.sim.ok("POST", "/_sim/namespace", {"Name": "team-a", "Description": "A"})
        names = [n["Name"] for n in self.sim.ok("GET", "/v1/namespaces")]
        self.assertEqual(names, sorted(names))
        self.assertIn("team-a", names)
        ns = self.sim.ok("GET", "/v1/namespace/team-a")
        self.assertEqual(ns["Description"], "A")
        st, _, body = self.sim.get("/v1/namespace/none")
        self.assertEqual(st, 404)
        self.sim.ok("PUT", "/v1/namespace/team-b", {"Name": "team-b"})
        self.sim.register(service_job("nsjob", count=1), ns="team-b")
        self.assertEqual(self.sim.ok("GET", "/v1/jobs?namespace=team-b")[0]["ID"], "nsjob")
        self.assertEqual(self.sim.ok("GET", "/v1/jobs?namespace=team-a"), [])
        st, _, _ = self.sim.get("/v1/job/nsjob")
        self.assertEqual(st, 404)


class TestPersistence(unittest.TestCase):
    def test_state_survives_restart(self):
        d = tempfile.mkdtemp(prefix="nomadsim-test-")
        try:
            s = Sim("--state", d)
            try:
                s.register(service_job("keep", count=1))
                s.advance(11)
                idx = s.ok("GET", "/v1/job/keep")["JobModifyIndex"]
            finally:
                s.stop()
            s = Sim("--state", d)
            try:
                job = s.ok("GET", "/v1/job/keep")
                self.assertEqual(job["JobModifyIndex"], idx)
                self.assertEqual(len(s.allocs("keep")), 1)
                r = s.register(service_job("keep", count=1, image="x:2"))
                self.assertGreater(r["JobModifyIndex"], idx)
            finally:
                s.stop()
        finally:
            shutil.rmtree(d, ignore_errors=True)


class TestScaleOfStore(SimTestCase):
    def test_thousand_jobs_and_concurrent_clients(self):
        import threading
        errors = []

        def worker(n):
            try:
                for i in range(n * 250, (n + 1) * 250):
                    self.sim.register(service_job("bulk-%04d" % i, count=1))
            except Exception as e:  # reported below
                errors.append(e)
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        jobs = self.sim.ok("GET", "/v1/jobs?prefix=bulk-")
        self.assertEqual(len(jobs), 1000)
        page = self.sim.get("/v1/jobs?prefix=bulk-&per_page=10")
        self.assertEqual(len(page[2]), 10)
        self.assertEqual(page[1]["x-nomad-nexttoken"], "bulk-0010")
        self.sim.advance(11)


if __name__ == "__main__":
    unittest.main()
