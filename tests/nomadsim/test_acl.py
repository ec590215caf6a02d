"""ACL tokens: headers, 403 texts, namespace policies, token/self."""

import unittest

from .simtest import SimTestCase, service_job

ROOT = "00000000-0000-4000-8000-000000000001"


class TestACL(SimTestCase):
    sim_args = ("--acl", "--acl-bootstrap-token", ROOT)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        s = cls.sim
        s.ok("POST", "/_sim/namespace", {"Name": "apps"})
        s.ok("POST", "/_sim/policy", {"Name": "deployer", "Rules": {"namespace": {
            "apps": {"policy": "write"}, "default": {"capabilities": ["list-jobs"]}}}})
        cls.deployer = s.ok("POST", "/_sim/token", {"Name": "nops", "Policies": ["deployer"]})

    def test_no_token_is_denied(self):
        st, h, body = self.sim.get("/v1/jobs", token="")
        self.assertEqual((st, body), (403, "Permission denied"))
        self.assertEqual(h["content-type"], "text/plain; charset=utf-8")

    def test_unknown_token(self):
        st, _, body = self.sim.get("/v1/jobs", token="not-a-real-secret")
        self.assertEqual((st, body), (403, "ACL token not found"))
        st, _, body = self.sim.get("/v1/jobs", token="", headers={
            "Authorization": "Bearer not-a-real-secret"})
        self.assertEqual((st, body), (403, "ACL token not found"))

    def test_management_token_and_bearer(self):
        st, _, _ = self.sim.get("/v1/jobs", token=ROOT)
        self.assertEqual(st, 200)
        st, _, _ = self.sim.get("/v1/jobs", token="", headers={"Authorization": "Bearer " + ROOT})
        self.assertEqual(st, 200)

    def test_namespace_policy(self):
        sec = self.deployer["SecretID"]
        st, _, body = self.sim.put("/v1/jobs?namespace=apps", {"Job": service_job("a1")},
                                   token=sec)
        self.assertEqual(st, 200, body)
        st, _, body = self.sim.put("/v1/jobs", {"Job": service_job("a2")}, token=sec)
        self.assertEqual((st, body), (403, "Permission denied"))
        st, _, body = self.sim.get("/v1/job/a1?namespace=apps", token=sec)
        self.assertEqual(st, 200)
        self.assertEqual(body["NomadTokenID"], self.deployer["AccessorID"])
        st, _, body = self.sim.get("/v1/jobs?namespace=*", token=sec)
        self.assertEqual(st, 200)
        st, _, body = self.sim.put("/v1/job/a1/plan?namespace=apps",
                                   {"Job": service_job("a1"), "Diff": True}, token=sec)
        self.assertEqual(st, 200)

    def test_token_self(self):
        st, _, tok = self.sim.get("/v1/acl/token/self", token=self.deployer["SecretID"])
        self.assertEqual(st, 200)
        self.assertEqual((tok["Name"], tok["Type"], tok["Policies"]),
                         ("nops", "client", ["deployer"]))
        for k in ("AccessorID", "SecretID", "Global", "CreateTime", "ExpirationTime",
                  "CreateIndex", "ModifyIndex", "Roles", "Hash"):
            self.assertIn(k, tok)
        st, _, body = self.sim.get("/v1/acl/token/self", token="nope")
        self.assertEqual((st, body), (403, "ACL token not found"))


class TestACLDisabled(SimTestCase):
    def test_tokens_are_ignored_and_self_is_400(self):
        st, _, _ = self.sim.get("/v1/jobs", token="whatever")
        self.assertEqual(st, 200)
        st, _, body = self.sim.get("/v1/acl/token/self", token="whatever")
        self.assertEqual((st, body), (400, "ACL support disabled"))


if __name__ == "__main__":
    unittest.main()
