"""The plan diff structure for common edits (no server needed)."""

import unittest

from . import diff, structs
from .simtest import service_job


def sjob(**kw):
    """A struct job as the server stores it."""
    api = service_job(**kw)
    api["Namespace"] = "default"
    api["Region"] = "global"
    api["Priority"] = 50
    return structs.to_struct_job(api)


def group(d, name="web"):
    return next(g for g in d["TaskGroups"] if g["Name"] == name)


def task(d, name="app", grp="web"):
    return next(t for t in group(d, grp)["Tasks"] if t["Name"] == name)


class TestDiff(unittest.TestCase):
    def test_unchanged_job_lists_groups_and_tasks_as_none(self):
        d = diff.job_diff(sjob(), sjob())
        self.assertEqual(d["Type"], "None")
        self.assertIsNone(d["Fields"])
        self.assertIsNone(d["Objects"])
        self.assertEqual(group(d)["Type"], "None")
        self.assertEqual(task(d)["Type"], "None")
        self.assertIsNone(task(d)["Objects"])

    def test_image_change_is_contextual_config_object(self):
        d = diff.job_diff(sjob(), sjob(image="nginx:1.26"))
        self.assertEqual(d["Type"], "Edited")
        self.assertIsNone(d["Fields"])
        t = task(d)
        self.assertEqual(t["Type"], "Edited")
        self.assertIsNone(t["Fields"])
        cfg = t["Objects"][0]
        self.assertEqual(cfg["Name"], "Config")
        self.assertEqual(cfg["Type"], "Edited")
        self.assertEqual(cfg["Fields"], [
            {"Type": "Edited", "Name": "image", "Old": "nginx:1.25",
             "New": "nginx:1.26", "Annotations": None},
            {"Type": "None", "Name": "ports[0]", "Old": "http", "New": "http",
             "Annotations": None}])
        diff.annotate(d, {})
        self.assertEqual(t["Annotations"], ["forces create/destroy update"])

    def test_count_change_is_group_field_with_annotation(self):
        d = diff.job_diff(sjob(count=5), sjob(count=2))
        g = group(d)
        self.assertEqual(g["Type"], "Edited")
        self.assertEqual(g["Fields"], [{"Type": "Edited", "Name": "Count", "Old": "5",
                                        "New": "2", "Annotations": None}])
        diff.annotate(d, {"web": dict(Ignore=2, Place=0, Migrate=0, Stop=3,
                                      InPlaceUpdate=0, DestructiveUpdate=0, Canary=0)})
        self.assertEqual(g["Fields"][0]["Annotations"], ["forces destroy"])
        self.assertEqual(g["Updates"], {"ignore": 2, "destroy": 3})
        self.assertEqual(task(d)["Type"], "None")

    def test_meta_change_is_noncontextual_job_field(self):
        d = diff.job_diff(sjob(meta={"git_sha": "abc", "team": "a"}),
                          sjob(meta={"git_sha": "def", "owner": "b"}))
        self.assertEqual(d["Fields"], [
            {"Type": "Edited", "Name": "Meta[git_sha]", "Old": "abc", "New": "def",
             "Annotations": None},
            {"Type": "Added", "Name": "Meta[owner]", "Old": "", "New": "b",
             "Annotations": None},
            {"Type": "Deleted", "Name": "Meta[team]", "Old": "a", "New": "",
             "Annotations": None}])

    def test_env_change_is_task_field(self):
        d = diff.job_diff(sjob(env={"PORT": "8080"}), sjob(env={"PORT": "9090", "X": "1"}))
        t = task(d)
        self.assertEqual([f["Name"] for f in t["Fields"]], ["Env[PORT]", "Env[X]"])
        self.assertEqual(t["Fields"][0]["Type"], "Edited")
        self.assertEqual(t["Fields"][1]["Type"], "Added")
        diff.annotate(d, {})
        self.assertEqual(t["Annotations"], ["forces create/destroy update"])

    def test_new_group_is_added_with_added_fields(self):
        old = sjob()
        new_api = service_job()
        new_api["TaskGroups"].append({"Name": "worker", "Count": 1, "Tasks": [
            {"Name": "w", "Driver": "docker", "Config": {"image": "w:1"}}]})
        new_api.update(Namespace="default", Region="global", Priority=50)
        new = structs.to_struct_job(new_api)
        d = diff.job_diff(old, new)
        g = group(d, "worker")
        self.assertEqual(g["Type"], "Added")
        self.assertIn({"Type": "Added", "Name": "Count", "Old": "", "New": "1",
                       "Annotations": None}, g["Fields"])
        diff.annotate(d, {"worker": dict(Ignore=0, Place=1, Migrate=0, Stop=0,
                                         InPlaceUpdate=0, DestructiveUpdate=0, Canary=0)})
        self.assertEqual(g["Updates"], {"create": 1})
        self.assertEqual(g["Fields"][0]["Annotations"], ["forces create"])
        wt = g["Tasks"][0]
        self.assertEqual((wt["Type"], wt["Annotations"]), ("Added", ["forces create"]))
        self.assertEqual([x["Name"] for x in d["TaskGroups"]], ["web", "worker"])

    def test_new_job_is_added(self):
        d = diff.job_diff(None, sjob())
        self.assertEqual(d["Type"], "Added")
        names = [f["Name"] for f in d["Fields"]]
        for n in ("AllAtOnce", "Dispatched", "Meta[git_sha]", "Name", "Priority",
                  "Region", "Stop", "Type"):
            self.assertIn(n, names)
        self.assertNotIn("ID", names)
        self.assertTrue(all(f["Type"] == "Added" for f in d["Fields"]))

    def test_update_block_change_is_object_without_stagger(self):
        d = diff.job_diff(sjob(canary=0), sjob(canary=1))
        objs = group(d)["Objects"]
        self.assertEqual(objs[0]["Name"], "Update")
        names = [f["Name"] for f in objs[0]["Fields"]]
        self.assertIn("Canary", names)
        self.assertNotIn("Stagger", names)
        canary = next(f for f in objs[0]["Fields"] if f["Name"] == "Canary")
        self.assertEqual((canary["Old"], canary["New"], canary["Type"]), ("0", "1", "Edited"))
        self.assertEqual(task(d)["Type"], "None")

    def test_kill_timeout_only_is_in_place(self):
        old, new = sjob(), sjob()
        task_new = new["TaskGroups"][0]["Tasks"][0]
        task_new["KillTimeout"] = 9_000_000_000
        d = diff.job_diff(old, new)
        diff.annotate(d, {})
        self.assertEqual(task(d)["Annotations"], ["forces in-place update"])

    def test_datacenters_set_diff(self):
        old, new = sjob(), sjob()
        new["Datacenters"] = ["dc1", "dc2"]
        d = diff.job_diff(old, new)
        self.assertEqual(d["Objects"], [{"Type": "Added", "Name": "Datacenters", "Fields": [
            {"Type": "Added", "Name": "Datacenters", "Old": "", "New": "dc2",
             "Annotations": None},
            {"Type": "None", "Name": "Datacenters", "Old": "dc1", "New": "dc1",
             "Annotations": None}], "Objects": None}])


if __name__ == "__main__":
    unittest.main()
