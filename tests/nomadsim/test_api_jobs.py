"""Round trips of the job endpoints: wire format, CAS, versions, plan."""

import unittest

from .simtest import SimTestCase, service_job


class TestWireFormat(SimTestCase):
    def test_unknown_job_is_404_plain_text(self):
        st, h, body = self.sim.get("/v1/job/nope")
        self.assertEqual(st, 404)
        self.assertEqual(body, "job not found")
        self.assertEqual(h["content-type"], "text/plain; charset=utf-8")
        self.assertIn("x-nomad-index", h)

    def test_invalid_method_is_405(self):
        st, _, body = self.sim.request("PATCH", "/v1/jobs")
        self.assertEqual((st, body), (405, "Invalid method"))
        st, _, body = self.sim.get("/v1/job/x/plan")
        self.assertEqual((st, body), (405, "Invalid method"))
        st, _, body = self.sim.get("/v1/deployment/promote/abc")
        self.assertEqual((st, body), (405, "Invalid method"))

    def test_empty_and_malformed_bodies(self):
        st, _, body = self.sim.put("/v1/jobs")
        self.assertEqual((st, body), (400, "Request body is empty"))
        st, _, body = self.sim.put("/v1/jobs", b"{bad")
        self.assertEqual(st, 400)
        self.assertTrue(body.startswith("invalid character"), body)
        st, _, body = self.sim.put("/v1/jobs", {"Job": None})
        self.assertEqual((st, body), (400, "Job must be specified"))
        st, _, body = self.sim.put("/v1/job/a", {"Job": service_job("b")})
        self.assertEqual((st, body), (400, "Job ID does not match name"))

    def test_null_versus_empty_list(self):
        st, h, body = self.sim.get("/v1/job/ghost/allocations")
        self.assertEqual((st, body), (200, []))
        self.assertIn("x-nomad-index", h)
        st, _, raw = self.sim.get("/v1/job/ghost/deployment", raw=True)
        self.assertEqual((st, raw), (200, b"null"))
        st, _, body = self.sim.get("/v1/job/ghost/deployments")
        self.assertEqual((st, body), (200, []))

    def test_read_headers(self):
        self.sim.register(service_job("hdr"))
        st, h, body = self.sim.get("/v1/job/hdr")
        self.assertEqual(h["x-nomad-index"], str(body["ModifyIndex"]))
        self.assertEqual(h["x-nomad-knownleader"], "true")
        self.assertEqual(h["x-nomad-lastcontact"], "0")
        self.assertEqual(h["content-type"], "application/json")
        st, _, raw = self.sim.get("/v1/job/hdr?pretty", raw=True)
        self.assertTrue(raw.startswith(b"{\n    \""))
        self.assertTrue(raw.endswith(b"}\n"))


class TestRegister(SimTestCase):
    def test_register_response_and_server_fields(self):
        r = self.sim.register(service_job("reg"))
        self.assertEqual(sorted(r), ["EvalCreateIndex", "EvalID", "Index",
                                     "JobModifyIndex", "KnownLeader",
                                     "LastContact", "NextToken", "Warnings"])
        self.assertEqual(r["Index"], r["JobModifyIndex"])
        self.assertEqual(r["EvalCreateIndex"], r["Index"])
        job = self.sim.ok("GET", "/v1/job/reg")
        self.assertEqual(job["Version"], 0)
        self.assertEqual(job["JobModifyIndex"], r["JobModifyIndex"])
        self.assertFalse(job["Stable"])
        self.assertFalse(job["Stop"])
        self.assertIn(job["Status"], ("pending", "running"))
        for k in ("Dispatched", "DispatchIdempotencyToken", "NomadTokenID",
                  "SubmitTime", "ParentID", "Payload", "NodePool", "UI"):
            self.assertIn(k, job)
        self.assertIsInstance(job["Update"], dict)
        ev = self.sim.ok("GET", "/v1/evaluation/" + r["EvalID"])
        self.assertEqual((ev["Status"], ev["TriggeredBy"]), ("complete", "job-register"))

    def test_cas_errors(self):
        r = self.sim.register(service_job("cas"))
        jmi = r["JobModifyIndex"]
        cases = [
            ({"EnforceIndex": True, "JobModifyIndex": 0},
             "Enforcing job modify index 0: job already exists"),
            ({"EnforceIndex": True, "JobModifyIndex": jmi - 1},
             "Enforcing job modify index %d: job exists with conflicting job modify "
             "index: %d" % (jmi - 1, jmi)),
        ]
        for extra, want in cases:
            st, h, body = self.sim.put("/v1/job/cas", dict(
                {"Job": service_job("cas", image="x:2")}, **extra))
            self.assertEqual((st, body), (500, want))
            self.assertEqual(h["content-type"], "text/plain; charset=utf-8")
        st, _, body = self.sim.put("/v1/jobs", {"Job": service_job("cas-new"),
                                                "EnforceIndex": True,
                                                "JobModifyIndex": 41})
        self.assertEqual((st, body), (500, "Enforcing job modify index 41: job does not exist"))
        ok = self.sim.register(service_job("cas", image="x:2"), EnforceIndex=True,
                               JobModifyIndex=jmi)
        self.assertGreater(ok["JobModifyIndex"], jmi)

    def test_versions_and_unchanged_reregister(self):
        r1 = self.sim.register(service_job("ver"))
        r2 = self.sim.register(service_job("ver"))
        job = self.sim.ok("GET", "/v1/job/ver")
        self.assertEqual(job["Version"], 0)
        self.assertEqual(r2["JobModifyIndex"], job["ModifyIndex"])
        self.assertNotEqual(r2["EvalID"], "")
        self.assertGreater(r2["EvalCreateIndex"], r1["EvalCreateIndex"])
        self.assertEqual(job["JobModifyIndex"], r1["JobModifyIndex"])
        self.sim.register(service_job("ver", image="nginx:2"))
        v = self.sim.ok("GET", "/v1/job/ver/versions?diffs=true")
        self.assertEqual([x["Version"] for x in v["Versions"]], [1, 0])
        self.assertEqual(len(v["Diffs"]), 1)
        self.assertEqual(v["Diffs"][0]["Type"], "Edited")
        for k in ("Index", "LastContact", "KnownLeader", "NextToken"):
            self.assertIn(k, v)
        st, _, body = self.sim.get("/v1/job/nothing/versions")
        self.assertEqual((st, body), (404, "job versions not found"))

    def test_stable_follows_successful_deployment(self):
        self.sim.register(service_job("stab", count=1))
        self.sim.advance(1)
        self.sim.advance(10)
        self.assertTrue(self.sim.ok("GET", "/v1/job/stab")["Stable"])

    def test_validation_error_is_multierror_500(self):
        job = service_job("bad")
        job["TaskGroups"][0]["Tasks"][0]["Driver"] = ""
        st, _, body = self.sim.put("/v1/jobs", {"Job": job})
        self.assertEqual(st, 500)
        self.assertTrue(body.startswith("1 error occurred:\n\t* Task group web validation failed"),
                        body)

    def test_nonexistent_namespace(self):
        st, _, body = self.sim.put("/v1/jobs?namespace=nowhere", {"Job": service_job("nsx")})
        self.assertEqual((st, body), (500, 'job "nsx" is in nonexistent namespace "nowhere"'))

    def test_list_prefix_namespaces_meta_filter(self):
        self.sim.ok("POST", "/_sim/namespace", {"Name": "apps"})
        self.sim.register(service_job("lst-a", meta={"nops_managed": "true"}), ns="apps")
        self.sim.register(service_job("lst-b", meta={"nops_managed": "false"}))
        st, h, body = self.sim.get("/v1/jobs?prefix=lst-")
        self.assertEqual([j["ID"] for j in body], ["lst-b"])
        self.assertNotIn("Meta", body[0])
        body = self.sim.ok("GET", "/v1/jobs?prefix=lst-&namespace=*&meta=true")
        self.assertEqual([(j["Namespace"], j["ID"]) for j in body],
                         [("apps", "lst-a"), ("default", "lst-b")])
        self.assertEqual(body[0]["Meta"], {"nops_managed": "true"})
        body = self.sim.ok("GET", '/v1/jobs?namespace=*&filter=' +
                           'Meta.nops_managed%20%3D%3D%20%22true%22')
        self.assertEqual([j["ID"] for j in body], ["lst-a"])
        stub = body[0]
        for k in ("ParentID", "Periodic", "ParameterizedJob", "JobSummary",
                  "JobModifyIndex", "SubmitTime", "Status", "Stop", "Datacenters"):
            self.assertIn(k, stub)

    def test_delete_stops_then_purges(self):
        self.sim.register(service_job("del", count=1))
        self.sim.advance(1)
        r = self.sim.ok("DELETE", "/v1/job/del")
        self.assertNotEqual(r["EvalID"], "")
        for k in ("VolumeEvalID", "VolumeEvalIndex", "JobModifyIndex"):
            self.assertIn(k, r)
        job = self.sim.ok("GET", "/v1/job/del")
        self.assertTrue(job["Stop"])
        self.assertEqual(job["Version"], 1)
        self.sim.advance(1)
        self.assertEqual(self.sim.ok("GET", "/v1/job/del")["Status"], "dead")
        allocs = self.sim.allocs("del")
        self.assertEqual({(a["DesiredStatus"], a["ClientStatus"]) for a in allocs},
                         {("stop", "complete")})
        self.sim.ok("DELETE", "/v1/job/del?purge=true")
        st, _, _ = self.sim.get("/v1/job/del")
        self.assertEqual(st, 404)
        r = self.sim.ok("DELETE", "/v1/job/never-existed")
        self.assertEqual((r["EvalID"], r["JobModifyIndex"]), ("", 0))
        st, _, body = self.sim.request("DELETE", "/v1/job/x?purge=maybe")
        self.assertEqual(st, 400)
        self.assertIn('"purge"', body)


class TestPlan(SimTestCase):
    def test_plan_new_job(self):
        p = self.sim.ok("PUT", "/v1/job/pn/plan", {"Job": service_job("pn"), "Diff": True})
        self.assertEqual(sorted(p), ["Annotations", "CreatedEvals", "Diff",
                                     "FailedTGAllocs", "Index", "JobModifyIndex",
                                     "NextPeriodicLaunch", "Warnings"])
        self.assertEqual(p["JobModifyIndex"], 0)
        self.assertEqual(p["Diff"]["Type"], "Added")
        self.assertEqual(p["Annotations"]["DesiredTGUpdates"]["web"]["Place"], 2)
        self.assertEqual(p["Diff"]["TaskGroups"][0]["Updates"], {"create": 2})
        self.assertIsNone(p["FailedTGAllocs"])
        self.assertIsNone(p["NextPeriodicLaunch"])
        self.assertEqual(p["Warnings"], "")
        st, _, body = self.sim.put("/v1/job/other/plan", {"Job": service_job("pn")})
        self.assertEqual((st, body), (400, "Job ID does not match"))

    def test_plan_without_diff_flag_has_null_diff(self):
        p = self.sim.ok("POST", "/v1/job/pnd/plan", {"Job": service_job("pnd")})
        self.assertIsNone(p["Diff"])

    def test_plan_existing_job_index_and_updates(self):
        r = self.sim.register(service_job("pe", count=3, canary=0))
        self.sim.advance(1)
        p = self.sim.ok("PUT", "/v1/job/pe/plan", {"Job": service_job("pe", count=3), "Diff": True})
        self.assertEqual(p["JobModifyIndex"], r["JobModifyIndex"])
        self.assertEqual(p["Index"], r["JobModifyIndex"])
        self.assertEqual(p["Diff"]["Type"], "None")
        self.assertEqual(p["Diff"]["TaskGroups"][0]["Updates"], {"ignore": 3})
        # image change with max_parallel 1: one destructive update now
        p = self.sim.ok("PUT", "/v1/job/pe/plan",
                        {"Job": service_job("pe", count=3, image="nginx:9"), "Diff": True})
        self.assertEqual(p["Diff"]["TaskGroups"][0]["Updates"],
                         {"create/destroy update": 1, "ignore": 2})
        # count change only: in-place for existing allocs, create for new
        p = self.sim.ok("PUT", "/v1/job/pe/plan",
                        {"Job": service_job("pe", count=4), "Diff": True})
        g = p["Diff"]["TaskGroups"][0]
        self.assertEqual(g["Updates"], {"create": 1, "in-place update": 3})
        self.assertEqual(g["Fields"][0]["Annotations"], ["forces create"])

    def test_plan_reports_failed_placements(self):
        job = service_job("pf")
        job["Datacenters"] = ["mars"]
        p = self.sim.ok("PUT", "/v1/job/pf/plan", {"Job": job, "Diff": True})
        self.assertIn("web", p["FailedTGAllocs"])
        m = p["FailedTGAllocs"]["web"]
        self.assertEqual(m["NodesEvaluated"], 0)
        self.assertEqual(m["CoalescedFailures"], 1)
        self.assertEqual(p["CreatedEvals"][0]["Status"], "blocked")

    def test_job_id_with_slash_routes_by_suffix(self):
        job = service_job("team/web", count=1)
        r = self.sim.ok("PUT", "/v1/job/team%2Fweb", {"Job": job})
        self.assertGreater(r["Index"], 0)
        self.assertEqual(self.sim.ok("GET", "/v1/job/team%2Fweb")["ID"], "team/web")
        self.assertEqual(len(self.sim.allocs("team/web")), 1)
        p = self.sim.ok("PUT", "/v1/job/team%2Fweb/plan", {"Job": job})
        self.assertEqual(p["JobModifyIndex"], r["JobModifyIndex"])


class TestScale(SimTestCase):
    def test_scale_creates_version_and_is_blocked_during_deployment(self):
        job = service_job("sc", count=2)
        job["TaskGroups"][0]["Scaling"] = {"Min": 1, "Max": 10, "Enabled": True}
        r = self.sim.register(job)
        body = {"Count": 5, "Target": {"Group": "web"}, "Message": "autoscaler"}
        st, _, text = self.sim.put("/v1/job/sc/scale", body)
        self.assertEqual((st, text), (400, "job scaling blocked due to active deployment"))
        self.sim.advance(1)
        self.sim.advance(10)
        s = self.sim.ok("PUT", "/v1/job/sc/scale", body)
        self.assertGreater(s["JobModifyIndex"], r["JobModifyIndex"])
        job_now = self.sim.ok("GET", "/v1/job/sc")
        self.assertEqual((job_now["Version"], job_now["TaskGroups"][0]["Count"]), (1, 5))
        status = self.sim.ok("GET", "/v1/job/sc/scale")
        self.assertEqual(status["TaskGroups"]["web"]["Desired"], 5)
        st, _, text = self.sim.put("/v1/job/sc/scale", {"Count": 50, "Target": {"Group": "web"}})
        self.assertEqual(st, 400)
        # git still says 2: the plan shows the autoscaler's count as drift
        p = self.sim.ok("PUT", "/v1/job/sc/plan", {"Job": job, "Diff": True})
        g = p["Diff"]["TaskGroups"][0]
        count = next(f for f in g["Fields"] if f["Name"] == "Count")
        self.assertEqual((count["Old"], count["New"], count["Annotations"]),
                         ("5", "2", ["forces destroy"]))
        self.assertEqual(p["Annotations"]["DesiredTGUpdates"]["web"]["Stop"], 3)


class TestParse(SimTestCase):
    HCL = '''
job "web" {
  datacenters = ["dc1"]
  group "web" {
    count = 2
    task "app" {
      driver = "docker"
      config { image = "nginx:1.25" }
    }
  }
}
'''

    def test_parse_returns_bare_job(self):
        job = self.sim.ok("PUT", "/v1/jobs/parse", {"JobHCL": self.HCL, "Canonicalize": True})
        self.assertEqual(job["ID"], "web")
        self.assertNotIn("Job", job)
        self.assertEqual(job["TaskGroups"][0]["Count"], 2)
        raw = self.sim.ok("POST", "/v1/jobs/parse", {"JobHCL": self.HCL})
        self.assertIsNone(raw.get("Priority"))
        r = self.sim.register(job)
        self.assertGreater(r["JobModifyIndex"], 0)

    def test_parse_errors(self):
        st, _, body = self.sim.put("/v1/jobs/parse", {"JobHCL": ""})
        self.assertEqual((st, body), (400, "Job spec is empty"))
        st, _, body = self.sim.put("/v1/jobs/parse", {"JobHCL": 'job "x" {\n  foo = 1\n}\n'})
        self.assertEqual(st, 400)
        self.assertTrue(body.startswith("Failed to parse job: "), body)
        st, _, body = self.sim.get("/v1/jobs/parse")
        self.assertEqual((st, body), (405, "Invalid method"))


if __name__ == "__main__":
    unittest.main()
