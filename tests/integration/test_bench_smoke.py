#!/usr/bin/env python3
"""Every benchmark in bench/ runs once at a tiny size: it must exit 0 and
print its figures (the line or table its README section quotes).  No
figure is compared with anything: benchmarks measure, tests do not time
(TESTING.md).  `make bench` runs them at full size.

A benchmark whose tool is missing here (wrk, nginx) is reported skipped.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitlib import ok, skip  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BENCH = os.path.join(TOP, "bench")

# name, arguments (tiny), what its output must show, tools it needs
CASES = [
    ("git_bench.py", ["1", "2", "5"], r"ratio fetch-to-snapshot/git-fetch: [\d.]+",
     ()),
    ("engine_detect", ["1", "1", "3"],
     r"nothing changed: cycle \d+ ms.*\n.*\n.*ratio cycle/plain", ()),
    ("detect_events", ["5", "2"],
     r"requests per unchanged job: [\d.]+(.|\n)*push -> webhook(.|\n)*"
     r"p50 [\d.]+ ms", ()),
    ("rss_jobs", ["0", "2"],
     r"\| 2 \| [\d.]+ / .*\nper job, 0 -> 2 jobs: [\d.]+ KiB", ()),
    ("restart_serving", ["1", "1000"], r"\| 1000 \| \d+ ms \| \d+ ms \|",
     ()),
    ("web_overview", ["1", "4"],
     r"\| GET /deployments \(HTML\) \| \d+ \| \d+ .*\| [\d.]+ \|",
     ("wrk", "nginx")),
    ("login_burst", ["1", "1"], r"ratio p99 burst / quiet: every run [\d.]+",
     ()),
    ("web_idle_flood", ["20"], r"ratio \(flood / alone\): median [\d.]+",
     ()),
    ("wake_latency", ["1", "1"],
     r"\| none \| \d+ \| \d+ \| 1\.00 \|(.|\n)*\| giveway \| (.|\n)*\| giveway apart \| ", ()),
    ("webhook_latency", ["5", "2"],
     r"p50 [\d.]+ ms, p99 [\d.]+ ms(.|\n)*nomadsim alone", ()),
]


def have(tool):
    return shutil.which(tool) is not None or os.path.exists(
        "/usr/sbin/" + tool)


def main():
    listed = sorted(f for f in os.listdir(BENCH)
                    if f not in ("README.md", "benchlib.py") and
                    not f.startswith(".") and
                    not f.endswith((".pyc", ".c")) and
                    os.path.isfile(os.path.join(BENCH, f)))
    ok("bench: every benchmark has a smoke case",
       listed == sorted(c[0] for c in CASES),
       "in bench/: %s; here: %s" % (listed, sorted(c[0] for c in CASES)))
    env = dict(os.environ)
    env["PATH"] = env.get("PATH", "") + ":/usr/sbin"

    def run(case):
        name, args, want, tools = case
        t = time.perf_counter()
        r = subprocess.run([sys.executable, os.path.join(BENCH, name)] +
                           args, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=env,
                           timeout=600)
        return r, time.perf_counter() - t

    # Two at a time: each mostly waits on daemons it started, and nothing
    # here is timed against anything.
    runnable = []
    for case in CASES:
        missing = [t for t in case[3] if not have(t)]
        if missing:
            skip("bench %s runs" % case[0], "missing " + ", ".join(missing))
        else:
            runnable.append(case)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, runnable))
    for (name, args, want, _), (r, secs) in zip(runnable, results):
        print("# %s %s: %.1f s" % (name, " ".join(args), secs))
        ok("bench %s runs (exit 0)" % name, r.returncode == 0,
           r.stdout[-1500:])
        ok("bench %s prints its figures" % name,
           re.search(want, r.stdout) is not None, r.stdout[-1500:])

main()
