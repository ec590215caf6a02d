"""The demo's job with operations (etc/demo/db*.nomad.hcl), run for real
against nomadsim, real git and the real daemon: the backup set of seed
003 and its erasure rule.  A restore from a snapshot older than a
recorded erasure adds that erasure to the list backup-list shows, until
backup-confirm-erasures clears it."""
import glob
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import setup, ok, wait_until  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def demo_files(backup_dir):
    files = {}
    for p in glob.glob(os.path.join(TOP, "etc", "demo", "db*.nomad.hcl")):
        with open(p) as f:
            files["nomad/" + os.path.basename(p)] = f.read().replace(
                "/var/tmp/nops-demo/db", backup_dir)
    return files


def main():
    import tempfile
    backup = tempfile.mkdtemp(prefix="nops-backup-")
    env, sim, remote, nops = setup(demo_files(backup))
    stop = threading.Event()

    def tick():
        while not stop.wait(0.2):
            try:
                sim.advance(1)
            except Exception:
                pass
    threading.Thread(target=tick, daemon=True).start()
    wait_until(lambda: nops.active("db") is not None, 15)
    did = nops.active("db")
    if did is not None:
        nops.wait_deploy_state(did, ("completed", "failed"), 30)
    acts = {a["id"]: a for a in nops.job("db")["actions"]}
    names = ["db.backup-%s" % n for n in ("now", "list", "restore",
                                         "record-erasure",
                                         "confirm-erasures")]
    ok("demo: db offers the five backup operations, grouped as backup",
       all(n in acts and acts[n]["enabled"] and acts[n]["group"] ==
           "backup" for n in names), sorted(acts))
    ok("demo: restore asks for a snapshot, and for a confirmation",
       acts.get("db.backup-restore", {}).get("input_schema", {}).get(
           "required") == ["snapshot"] and
       acts.get("db.backup-restore", {}).get("confirm"),
       acts.get("db.backup-restore"))

    def run(name, inp=None):
        st, j = nops.job_action("db", "db.backup-" + name,
                                {"input": inp or {}})
        return st, j if isinstance(j, dict) else {}

    st, j = run("now")
    ok("backup-now: snapshot 1", st == 200 and j.get("exit_code") == 0 and
       "snapshot 1 taken" in j.get("output", ""), (st, j))
    st, j = run("record-erasure", {"reference": "ticket-42"})
    ok("backup-record-erasure: recorded after snapshot 1",
       st == 200 and j.get("exit_code") == 0, (st, j))
    st, j = run("record-erasure", {"reference": "alice; rm -rf /"})
    ok("backup-record-erasure: a reference the schema refuses never runs",
       st == 422 and "/reference" in j["error"]["message"], (st, j))
    st, j = run("now")
    ok("backup-now: snapshot 3 (after the erasure)", st == 200 and
       "snapshot 3 taken" in j.get("output", ""), (st, j))
    st, j = run("restore", {"snapshot": "3"})
    ok("restore of a snapshot newer than the erasure: nothing to do again",
       st == 200 and j.get("exit_code") == 0, (st, j))
    st, j = run("list")
    ok("backup-list: the snapshots, the restore, no erasure to do again",
       st == 200 and "  1  taken" in j.get("output", "") and
       "snapshot 3 restored" in j.get("output", "") and
       "erasures to do again:\n  none" in j.get("output", ""), (st, j))
    st, j = run("restore", {"snapshot": "1"})
    ok("restore of snapshot 1, older than the erasure", st == 200 and
       j.get("exit_code") == 0, (st, j))
    st, j = run("list")
    ok("backup-list: the erasure is listed to do again", st == 200 and
       "ticket-42 (erased" in j.get("output", ""), (st, j))
    st, j = run("restore", {"snapshot": "9"})
    ok("restore of no such snapshot: exit code 2, and the list says so",
       st == 200 and j.get("exit_code") == 2, (st, j))
    st, j = run("confirm-erasures")
    ok("backup-confirm-erasures: cleared", st == 200 and
       j.get("exit_code") == 0, (st, j))
    st, j = run("list")
    ok("backup-list: nothing to do again, and the failed restore shown",
       st == 200 and "erasures to do again:\n  none" in
       j.get("output", "") and "no such snapshot" in j.get("output", ""),
       (st, j))
    stop.set()
    env.cleanup()
    for root, dirs, files in os.walk(backup, topdown=False):
        for f in files:
            os.unlink(os.path.join(root, f))
        for d in dirs:
            os.rmdir(os.path.join(root, d))
    os.rmdir(backup)


main()
