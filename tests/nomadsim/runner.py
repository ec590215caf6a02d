"""Real execution of raw_exec/exec tasks.

A task's command runs as a subprocess in its own task directory, with the
environment Nomad gives it (NOMAD_* variables, NOMAD_META_*, the task's env)
and the dispatch payload written where `dispatch_payload` says.  Output goes
to alloc/logs/<task>.stdout.0 and .stderr.0, which /v1/client/fs/logs reads.

Clock rule: a real process decides when its task ends.  Whenever it exits,
the task is marked dead at the virtual time of that moment, so with a manual
clock a batch alloc completes when its process exits, not when the clock
advances.  Starting and restarting still follow the virtual clock.
"""

import base64
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading

enabled = True
root = None                 # directory holding per-alloc directories
_procs = {}                 # (alloc_id, task) -> Popen
_plock = threading.Lock()


def setup(directory=None, enable=True):
    global root, enabled
    enabled = enable
    root = directory or tempfile.mkdtemp(prefix="nomadsim-allocs-")
    os.makedirs(root, exist_ok=True)


def alloc_dir(alloc_id):
    return os.path.join(root, alloc_id)


def log_path(alloc_id, task, kind):
    return os.path.join(alloc_dir(alloc_id), "alloc", "logs",
                        "%s.%s.0" % (task, kind))


def _env(alloc, task, adir, tdir):
    job = alloc["Job"]
    tg = next(g for g in job["TaskGroups"] if g["Name"] == alloc["TaskGroup"])
    name = alloc["Name"]
    idx = name[name.rindex("[") + 1:-1] if "[" in name else "0"
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": tdir, "LANG": os.environ.get("LANG", "C.UTF-8"),
        "NOMAD_ALLOC_ID": alloc["ID"], "NOMAD_SHORT_ALLOC_ID": alloc["ID"][:8],
        "NOMAD_ALLOC_NAME": name, "NOMAD_ALLOC_INDEX": idx,
        "NOMAD_ALLOC_DIR": os.path.join(adir, "alloc"),
        "NOMAD_TASK_DIR": os.path.join(tdir, "local"),
        "NOMAD_SECRETS_DIR": os.path.join(tdir, "secrets"),
        "NOMAD_TASK_NAME": task["Name"], "NOMAD_GROUP_NAME": tg["Name"],
        "NOMAD_JOB_ID": job["ID"], "NOMAD_JOB_NAME": job["Name"],
        "NOMAD_JOB_PARENT_ID": job["ParentID"],
        "NOMAD_NAMESPACE": job["Namespace"], "NOMAD_REGION": job["Region"],
        "NOMAD_DC": "dc1", "NOMAD_NODE_ID": alloc["NodeID"],
        "NOMAD_NODE_NAME": alloc["NodeName"],
        "NOMAD_CPU_LIMIT": str(task["Resources"]["CPU"]),
        "NOMAD_MEMORY_LIMIT": str(task["Resources"]["MemoryMB"]),
    }
    meta = {}
    for src in (job.get("Meta"), tg.get("Meta"), task.get("Meta")):
        meta.update(src or {})
    for k, v in meta.items():
        # Nomad exports each meta key as given and upper-cased.
        key = re.sub(r"[^A-Za-z0-9_]", "_", k)
        env["NOMAD_META_" + key] = v
        env["NOMAD_META_" + key.upper()] = v
    for k, v in (task.get("Env") or {}).items():
        env[k] = interpolate(v, env)
    return env


_VAR = re.compile(r"\$\{([^}]+)\}")


def interpolate(s, env):
    """Replace ${NOMAD_*}, ${env.X} and ${meta.k}; leave unknown ones as is."""
    def sub(m):
        name = m.group(1).strip()
        if name.startswith("env."):
            return env.get(name[4:], m.group(0))
        if name.startswith("NOMAD_META_") or name.startswith("meta."):
            key = name[5:] if name.startswith("meta.") else name[11:]
            return env.get("NOMAD_META_" + key, m.group(0))
        return env.get(name, m.group(0))
    return _VAR.sub(sub, s) if isinstance(s, str) else s


def start(store, alloc, task, exited):
    """Spawn the task's command.  Its end is reported with the store lock
    held as exited(store, alloc_id, task, exit_code, signal, launch_error),
    launch_error being the driver's message when the command could not
    start (lifecycle.process_exited)."""
    if store.shutting_down:
        return
    aid, tname = alloc["ID"], task["Name"]
    adir = alloc_dir(aid)
    tdir = os.path.join(adir, tname)
    for d in (os.path.join(adir, "alloc", "logs"), os.path.join(adir, "alloc", "data"),
              os.path.join(adir, "alloc", "tmp"), os.path.join(tdir, "local"),
              os.path.join(tdir, "secrets"), os.path.join(tdir, "tmp")):
        os.makedirs(d, exist_ok=True)
    env = _env(alloc, task, adir, tdir)
    payload = alloc["Job"].get("Payload")
    dp = task.get("DispatchPayload")
    if payload and dp and dp.get("File"):
        with open(os.path.join(tdir, "local", dp["File"]), "wb") as f:
            f.write(base64.b64decode(payload))
    for tmpl in task.get("Templates") or []:
        # Templates are written verbatim: no consul-template rendering.
        dest = tmpl.get("DestPath")
        if dest and tmpl.get("EmbeddedTmpl") is not None:
            path = os.path.join(tdir, dest)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(interpolate(tmpl["EmbeddedTmpl"], env))
    cfg = task.get("Config") or {}
    cmd = interpolate(cfg.get("command") or "", env)
    args = [interpolate(str(a), env) for a in cfg.get("args") or []]
    out = open(log_path(aid, tname, "stdout"), "ab")
    err = open(log_path(aid, tname, "stderr"), "ab")
    try:
        proc = subprocess.Popen([cmd] + args, cwd=tdir, env=env, stdout=out,
                                stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as e:
        out.close()
        err.close()
        msg = "failed to launch command with executor: %s" % e.strerror
        exited(store, aid, tname, 1, 0, msg)
        return
    out.close()
    err.close()
    with _plock:
        _procs[(aid, tname)] = proc
    timeout = store.config["task_timeout"]
    threading.Thread(target=_wait, args=(store, aid, tname, proc, timeout, exited),
                     daemon=True, name="task-%s" % aid[:8]).start()


def _wait(store, aid, tname, proc, timeout, exited):
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _signal(proc, signal.SIGKILL)
        code = proc.wait()
    with _plock:
        if _procs.get((aid, tname)) is proc:
            del _procs[(aid, tname)]
    sig = -code if code < 0 else 0
    exit_code = 0 if code < 0 else code
    with store.lock:
        if store.shutting_down:
            return
        exited(store, aid, tname, exit_code, sig, None)


def _signal(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill(store, aid, tname, quiet=False):
    """Stop a running process: its kill signal, then SIGKILL after the
    task's kill_timeout (capped).  Returns True if a process was running."""
    with _plock:
        proc = _procs.get((aid, tname))
    if proc is None:
        return False
    if quiet:
        with _plock:
            _procs.pop((aid, tname), None)
        _signal(proc, signal.SIGKILL)
        return True
    a = store.allocs.get(aid)
    sig, grace = signal.SIGINT, 5.0
    if a is not None:
        tg = next(g for g in a["Job"]["TaskGroups"] if g["Name"] == a["TaskGroup"])
        t = next((t for t in tg["Tasks"] if t["Name"] == tname), None)
        if t is not None:
            grace = t["KillTimeout"] / 1e9
            if t["KillSignal"]:
                sig = getattr(signal, t["KillSignal"], signal.SIGINT)
    grace = min(grace, store.config["max_kill_timeout"])
    _signal(proc, sig)
    timer = threading.Timer(grace, _signal, (proc, signal.SIGKILL))
    timer.daemon = True
    timer.start()
    return True


def shutdown():
    with _plock:
        procs = list(_procs.values())
        _procs.clear()
    for p in procs:
        _signal(p, signal.SIGKILL)
    for p in procs:
        try:
            p.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass


def cleanup():
    if root and os.path.basename(root).startswith("nomadsim-allocs-"):
        shutil.rmtree(root, ignore_errors=True)
