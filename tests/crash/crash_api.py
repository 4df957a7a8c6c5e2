#!/usr/bin/python3
"""crash_api.py — kill -9 kletd at random moments while it serves pods of the API server
stand-in (tests/apiserver) on the fake CRI (tests/fakecri); some restarts happen with the
API server unreachable, some after its history was compacted (issue 6, "With an API server").

  tests/crash/crash_api.py [--seed N] [--iterations K] [--max-delay S] [--kletd PATH] [--keep]

Pods are created, gracefully deleted (grace 2-5 s), force-deleted, and have containers that
exit, all through the stand-in; kletd gets SIGKILL and is started again. The server goes away
(/down: refused or black-holed connections, state kept) for some restarts and under some
running kletds (sometimes coming back before the kill, sometimes not), and its history is
compacted (/compact) at times, so that a stored position gets 410. The schedule comes
from one seeded generator: the seed is printed with the command that replays it. Exit 0: every
invariant held; 1: a violation; 77: a peer (python3-grpcio, python3-h2, openssl) is missing.

Checked while running (restarts with the API server unreachable, "away"):
  autonomy  kletd starts, recovers from its store and keeps running; the pods it had keep
            their sandbox and their running containers (no RunPodSandbox for them, no
            container of a long-running pod created again) until the server returns; once
            it is back, the status updates that queued arrive (the status check below holds)
Checked after the last restart, once everything settled:
  resume    a restart with a stored resourceVersion still valid makes no LIST of pods: its
            first pods request is a WATCH from exactly the stored resourceVersion
  relist    a restart after a compaction (stored position older than it) watches from the
            stored position, gets 410 and LISTs exactly once
  sandbox   one READY sandbox per pod on the server, and only one ever created for it
  unique    no container created twice for the same (pod UID, name, restartCount)
  norestart a container of a long-running pod that started is never replaced
  grace     every deleted pod had no running container within its grace period + 2 s,
            counting the time a recovered kletd was up (reachable or not) from the moment
            that kletd could know of the deletion: its store's position at or after it, its
            pods watch open when it happened, or else its next pods request (a kill -9
            before the commit of a turn loses what that turn learnt: the next kletd must
            learn it again from the server)
  gone      nothing of a deleted pod left in the runtime
  delete    every gracefully deleted pod object was deleted by the node (DELETE with grace
            0 and the uid precondition) and is gone from the server
  status    the server's status of every pod matches the runtime: phase Running, one
            container status per container with the ID of its newest instance, restartCount
            that instance's (0 for a long-running pod: not inflated), exit codes of the
            instances that ended
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "fakecri"))

try:
    import grpc  # noqa: E402
    import h2.connection  # noqa: E402,F401 (the stand-in needs it)
except ImportError as e:  # pragma: no cover
    print("crash_api: skip: %s" % e)
    sys.exit(77)
sys.path.insert(0, HERE)
import crash  # noqa: E402  the static-pod harness: its poller, pod generator, log
from crash import BUSYBOX, SLACK_S, Poller, log, pb  # noqa: E402

NODE = "crashapi"
USER = "system:node:" + NODE


class Version(crash.Version):
    """One pod (one UID) of the server: what the harness asked for and what it saw."""

    def __init__(self, uid, name, kind, grace, ignore_term, ncont):
        crash.Version.__init__(self, uid, name, kind, grace, ignore_term)
        self.ncont = ncont
        self.how = None             # graceful | force
        self.del_rv = None          # the server's resourceVersion of the deletion


class Run:
    """One kletd process."""

    def __init__(self, start, stored_rv, compacted, away):
        self.start = start
        self.end = None
        self.stored_rv = stored_rv      # the pods position in its store when it started
        self.compacted = compacted      # the stand-in's compaction point then
        self.away = away                # started with the server unreachable
        self.recovered = None


class Harness:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.versions = {}
        self.current = {}    # pod name -> uid on the server (not deleted)
        self.npod = 0
        self.kproc = None
        self.fake = None
        self.asproc = None
        self.calls = {"CreateContainer": [], "RunPodSandbox": [], "StartContainer": []}
        self.call_times = {"RunPodSandbox": [], "CreateContainer": []}
        self.t = tempfile.mkdtemp(prefix="klet-crashapi-")
        self.m = os.path.join(self.t, "m")
        os.makedirs(self.m)
        self.klog = os.path.join(self.t, "kletd.log")
        self.kletd = a.kletd
        self.runs = []
        self.downs = []      # [down wall time, up wall time or None]
        self.fails = []      # found while running
        self.stats = {"away": 0, "compact": 0, "force": 0, "graceful": 0, "created": 0,
                      "held": 0, "converged": 0, "converge_max": 0.0, "outage": 0}
        self.compactions = []   # wall times

    # --- peers -----------------------------------------------------------------------
    def start_fake(self):
        import fakecri
        self.sock = os.path.join(self.t, "cri.sock")
        f = fakecri.FakeCRI(self.sock, control="", quiet=True)
        orig = f._record
        calls, times = self.calls, self.call_times

        def record(method, req):
            if method in calls:
                calls[method].append(req)
            if method in times:
                times[method].append(time.time())
            orig(method, req)
        f._record = record
        f.start()
        self.fake = f

    def start_apiserver(self):
        d = os.path.join(self.t, "as")
        certs = os.path.join(d, "certs")
        os.makedirs(d)
        if shutil.which("openssl") is None:
            return False
        r = subprocess.run(["sh", os.path.join(TOP, "tests", "apiserver", "mkcerts.sh"),
                            certs, NODE], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise SystemExit("mkcerts failed: %s" % r.stdout.decode(errors="replace"))
        state = os.path.join(d, "as.state")
        self.aslog = open(os.path.join(d, "as.log"), "w")
        self.asproc = subprocess.Popen(
            [sys.executable, os.path.join(TOP, "tests", "apiserver", "apiserver.py"),
             "--certs", certs, "--state-file", state, "--bookmark-interval", "1"],
            stdout=self.aslog, stderr=subprocess.STDOUT)
        end = time.time() + 15
        while not os.path.exists(state) and time.time() < end:
            if self.asproc.poll() is not None:
                return False
            time.sleep(0.05)
        with open(state) as f:
            port, self.ctl_port = [int(x) for x in f.read().split()]
        self.kubeconfig = os.path.join(self.t, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write("""apiVersion: v1
kind: Config
clusters:
- name: standin
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority: %s/ca.crt
users:
- name: node
  user:
    client-certificate: %s/node.crt
    client-key: %s/node.key
contexts:
- name: standin
  context: {cluster: standin, user: node}
current-context: standin
""" % (port, certs, certs, certs))
        return True

    def ctl(self, path, method="GET", body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.ctl_port, path),
                                     data=data, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read())

    def compact(self):
        self.ctl("/compact")
        self.compactions.append(time.time())
        self.stats["compact"] += 1

    def down(self):
        mode = self.rng.choice(["refuse", "blackhole"])
        self.ctl("/down?mode=" + mode)
        self.downs.append([time.time(), None])
        return mode

    def up(self):
        self.ctl("/up")
        self.downs[-1][1] = time.time()

    def reachable_at(self, t):
        return not any(a <= t and (b is None or t < b) for a, b in self.downs)

    def reachable_between(self, t0, t1):
        return not any(a < t1 and (b is None or b > t0) for a, b in self.downs)

    def stop_peers(self):
        if self.fake is not None:
            self.fake.stop()
            self.fake = None
        if self.asproc is not None:
            self.asproc.terminate()
            try:
                self.asproc.wait(10)
            except subprocess.TimeoutExpired:
                self.asproc.kill()
                self.asproc.wait()
            self.asproc = None
            self.aslog.close()

    # --- kletd -----------------------------------------------------------------------
    def stored_rv(self):
        db = os.path.join(self.t, "root", "klet.db")
        if not os.path.exists(db):
            return ""
        try:
            con = sqlite3.connect(db, timeout=10)
            row = con.execute("SELECT value FROM meta WHERE key = 'pods.resourceVersion'"
                              ).fetchone()
            con.close()
        except sqlite3.Error:
            return ""   # killed before its schema was there: no stored position
        rv = row[0] if row else ""
        # A bookmark's later position, beside the store, is taken while its base is the
        # stored one (store_get_hint).
        try:
            with open(db + "-hint-pods.resourceVersion", "rb") as f:
                hint = f.read(600).decode("utf-8", "replace")
        except OSError:
            return rv
        parts = hint.split("\n")
        if rv and len(parts) == 3 and parts[2] == "" and parts[0] == rv and parts[1]:
            return parts[1]
        return rv

    def start_kletd(self, away):
        rv = self.stored_rv()
        compacted = self.ctl("/stats")["compacted"]
        env = dict(os.environ, KLET_API_PING_INTERVAL_MS="1000",
                   KLET_API_PING_TIMEOUT_MS="1000", KLET_LEASE_RENEW_MS="2000")
        with open(self.klog, "a") as lf:
            t0 = round(time.time(), 3)
            lf.write("=== crash: start %.3f %s rv=%s away=%d\n" %
                     (t0, time.strftime("%H:%M:%S"), rv, away))
            lf.flush()
            self.kproc = subprocess.Popen(
                [self.kletd, "--address", "127.0.0.1", "--port", "0", "--healthz-port", "0", "--root-dir", os.path.join(self.t, "root"),
                 "--pod-logs-dir", os.path.join(self.t, "logs"),
                 "--pod-manifest-path", self.m, "--hostname-override", NODE,
                 "--cgroup-root", os.environ.get("KLET_TEST_CGROUP_ROOT", "/"),
                 "--kubeconfig", self.kubeconfig,
                 "--container-runtime-endpoint", "unix://" + self.sock,
                 "--file-check-frequency", "1s", "-v=2"],
                stdout=lf, stderr=subprocess.STDOUT, env=env)
        self.runs.append(Run(t0, rv, compacted, away))

    def alive(self):
        if self.kproc is not None and self.kproc.poll() is not None:
            raise SystemExit("kletd exited by itself (rc %s); see %s" %
                             (self.kproc.returncode, self.klog))

    def kill_kletd(self):
        if self.kproc is None:
            return
        self.alive()
        self.kproc.send_signal(signal.SIGKILL)
        self.runs[-1].end = time.time()
        self.kproc.wait()
        self.kproc = None

    def stop_kletd(self):
        if self.kproc is not None:
            self.kproc.kill()
            self.kproc.wait()
            self.kproc = None
            if self.runs and self.runs[-1].end is None:
                self.runs[-1].end = time.time()

    # --- the schedule ----------------------------------------------------------------
    def create_pod(self):
        r = self.rng
        self.npod += 1
        name = "p%d" % self.npod
        kind, grace, ignore, policy, cmds = crash.random_pod(r)
        doc = {"metadata": {"name": name, "namespace": "default"},
               "spec": {"nodeName": NODE, "restartPolicy": policy,
                        "terminationGracePeriodSeconds": grace,
                        "containers": [{"name": "c%d" % i, "image": BUSYBOX, "command": c}
                                       for i, c in enumerate(cmds)]}}
        obj = self.ctl("/pods", "POST", doc)
        uid = obj["metadata"]["uid"]
        self.versions[uid] = Version(uid, name, kind, grace, ignore, len(cmds))
        self.current[name] = uid
        self.stats["created"] += 1

    def delete_pod(self, force):
        name = self.rng.choice(sorted(self.current))
        uid = self.current.pop(name)
        v = self.versions[uid]
        v.removed_at = time.time()
        v.how = "force" if force else "graceful"
        self.stats[v.how] += 1
        o = self.ctl("/pods/default/%s?method=DELETE%s" % (name, "&grace=0" if force else ""))
        v.del_rv = int(o["metadata"]["resourceVersion"])

    def mutate(self):
        r = self.rng
        n = len(self.current)
        x = r.random()
        if n < 3 or (x < 0.4 and n < self.a.max_pods):
            self.create_pod()
        elif x < 0.75:
            self.delete_pod(False)
        elif x < 0.9:
            self.delete_pod(True)

    # --- autonomy (checked while the server is away) ----------------------------------
    def runtime_now(self):
        rt = self.poller.rt
        sb = [{"id": s.id, "uid": s.metadata.uid, "state": pb.PodSandboxState.Name(s.state)}
              for s in rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=10).items]
        cs = [{"id": c.id, "uid": c.labels.get("io.kubernetes.pod.uid", ""),
               "name": c.metadata.name, "state": pb.ContainerState.Name(c.state),
               "restart": c.annotations.get("io.kubernetes.container.restartCount", "?")}
              for c in rt.ListContainers(pb.ListContainersRequest(), timeout=10).containers]
        return sb, cs

    def held_pods(self):
        """Pods the node runs now: uid -> (ready sandbox ids, running containers of a
        long-running pod)."""
        sb, cs = self.runtime_now()
        out = {}
        for uid in self.current.values():
            ready = {s["id"] for s in sb if s["uid"] == uid and s["state"] == "SANDBOX_READY"}
            if not ready:
                continue
            run = set()
            if self.versions[uid].kind == "stable":
                run = {c["id"] for c in cs if c["uid"] == uid and
                       c["state"] == "CONTAINER_RUNNING"}
            out[uid] = (ready, run)
        return out

    def away_window(self, run, held, t_start):
        """kletd runs with the server unreachable: it must recover and keep the pods."""
        r = self.rng
        end = time.time() + r.uniform(1.5, 3.0)
        while time.time() < end:
            self.alive()
            time.sleep(0.1)
        self.alive()
        rec = self.recovered_at(run)
        if run.stored_rv and rec is None:
            self.fails.append("autonomy: kletd started at %.3f with the server away did not "
                              "recover within %.1f s" % (run.start, time.time() - run.start))
        sb, cs = self.runtime_now()
        n_sb = len([t for t in self.call_times["RunPodSandbox"] if t >= t_start])
        for uid, (ready, run_ids) in sorted(held.items()):
            if self.versions[uid].removed_at is not None:
                continue
            now_ready = {s["id"] for s in sb if s["uid"] == uid and
                         s["state"] == "SANDBOX_READY"}
            if now_ready != ready:
                self.fails.append("autonomy: pod %s: ready sandboxes %s -> %s while the "
                                  "server was away" % (uid, sorted(x[:12] for x in ready),
                                                       sorted(x[:12] for x in now_ready)))
            now_run = {c["id"] for c in cs if c["uid"] == uid and
                       c["state"] == "CONTAINER_RUNNING"}
            if not run_ids <= now_run:
                self.fails.append("autonomy: pod %s: running containers %s stopped while the "
                                  "server was away" % (uid, sorted(x[:12] for x in
                                                                   run_ids - now_run)))
        for req in self.calls["RunPodSandbox"][len(self.calls["RunPodSandbox"]) - n_sb:]:
            if req.config.metadata.uid in held:
                self.fails.append("autonomy: RunPodSandbox for held pod %s while the server "
                                  "was away" % req.config.metadata.uid)

    def recovered_at(self, run):
        cur = None
        with open(self.klog, errors="replace") as f:
            for line in f:
                mo = re.match(r"=== crash: start ([0-9.]+)", line)
                if mo:
                    cur = float(mo.group(1))
                    continue
                mo = re.search(r"recovered in (\d+)ms", line)
                if mo and cur == run.start:
                    return cur + int(mo.group(1)) / 1000.0
        return None

    # --- settling and invariants -------------------------------------------------------
    def server_pods(self):
        return {o["metadata"]["uid"]: o for o in self.ctl("/objects?kind=pods")}

    def newest(self, cs, uid, name):
        """The newest instance of a container in the runtime (highest restartCount)."""
        best = None
        for c in cs:
            if c["uid"] == uid and c["name"] == name:
                rc = int(c["restart"]) if c["restart"].isdigit() else -1
                if best is None or rc > best[0]:
                    best = (rc, c)
        return best[1] if best else None

    def status_fails(self, spods, cs):
        fails = []
        with self.poller.lock:
            exits = {cid: c.get("exit_code") for cid, c in self.poller.ctrs.items()}
        for name, uid in sorted(self.current.items()):
            v = self.versions[uid]
            o = spods.get(uid)
            if o is None:
                fails.append("status: pod %s (%s) missing on the server" % (name, uid))
                continue
            st = o.get("status") or {}
            if st.get("phase") != "Running":
                fails.append("status: pod %s (%s) phase %s, want Running" %
                             (name, uid, st.get("phase")))
            css = {c.get("name"): c for c in st.get("containerStatuses") or []}
            for i in range(v.ncont):
                cn = "c%d" % i
                c = css.get(cn)
                if c is None:
                    fails.append("status: pod %s container %s: no status" % (name, cn))
                    continue
                rt = self.newest(cs, uid, cn)
                if rt is None:
                    fails.append("status: pod %s container %s: not in the runtime" %
                                 (name, cn))
                    continue
                cid = (c.get("containerID") or "").split("://")[-1]
                if cid != rt["id"]:
                    fails.append("status: pod %s container %s: containerID %s, runtime's "
                                 "newest %s (restartCount %s)" % (name, cn, cid[:12],
                                                                  rt["id"][:12], rt["restart"]))
                if str(c.get("restartCount")) != rt["restart"]:
                    fails.append("status: pod %s container %s: restartCount %s, runtime's "
                                 "newest instance has %s" % (name, cn, c.get("restartCount"),
                                                             rt["restart"]))
                if v.kind == "stable" and c.get("restartCount") != 0:
                    fails.append("status: long-running pod %s container %s: restartCount %s"
                                 " (inflated)" % (name, cn, c.get("restartCount")))
                for key in ("state", "lastState"):
                    term = (c.get(key) or {}).get("terminated")
                    if not term or not term.get("containerID"):
                        continue
                    tid = term["containerID"].split("://")[-1]
                    if tid in exits and exits[tid] is not None and \
                            term.get("exitCode") != exits[tid]:
                        fails.append("status: pod %s container %s: %s exitCode %s, the "
                                     "runtime says %s" % (name, cn, key, term.get("exitCode"),
                                                          exits[tid]))
        return fails

    def converge_status(self, limit):
        """After the server returned: the status updates that queued arrive (polled)."""
        t0 = time.time()
        why = None
        while time.time() < t0 + limit:
            self.alive()
            try:
                _, cs = self.runtime_now()
                sf = self.status_fails(self.server_pods(), cs)
            except grpc.RpcError as e:
                sf = ["runtime: %s" % e.code()]
            if not sf:
                took = time.time() - t0
                self.stats["converged"] += 1
                self.stats["converge_max"] = max(self.stats["converge_max"], took)
                return
            why = sf[0]
            time.sleep(0.2)
        self.fails.append("status: not converged %d s after the server returned: %s" %
                          (limit, why))

    def settle_ok(self):
        sb, cs = self.runtime_now()
        cur = set(self.current.values())
        for name, uid in self.current.items():
            n = len([s for s in sb if s["uid"] == uid and s["state"] == "SANDBOX_READY"])
            if n != 1:
                return "pod %s uid %s: %d ready sandboxes" % (name, uid, n)
            if self.versions[uid].kind == "stable":
                names = {c["name"] for c in cs if c["uid"] == uid and
                         c["state"] == "CONTAINER_RUNNING"}
                if len(names) != self.versions[uid].ncont:
                    return "pod %s: %d of %d containers running" % (
                        uid, len(names), self.versions[uid].ncont)
        for x in sb + cs:
            if x["uid"] in self.versions and x["uid"] not in cur:
                return "deleted pod %s: %s left" % (x["uid"], x["id"][:12])
        spods = self.server_pods()
        for uid in spods:
            if uid in self.versions and uid not in cur:
                return "deleted pod %s still on the server" % uid
        sf = self.status_fails(spods, cs)
        return sf[0] if sf else None

    def pods_requests(self, entries):
        return [e for e in entries if e.get("user") == USER and e["path"] == "/api/v1/pods"
                and e["method"] == "GET"]

    def known_from(self, run, v, preqs):
        """When the kletd of run could know of v's deletion: from its start when its store
        held a position at or after the deletion; at once when its pods watch was open
        (a pods request answered before, the server reachable since); else from its next
        pods request. None: it never could."""
        if run.stored_rv and int(run.stored_rv) >= v.del_rv:
            return run.start
        end = run.end if run.end is not None else time.time()
        t = v.removed_at
        mine = [e for e in preqs if run.start <= e["t"] <= end and e["code"] == 200]
        before = [e for e in mine if e["t"] <= t]
        if before and self.reachable_between(before[-1]["t"], t):
            return t
        after = [e["t"] for e in mine if e["t"] >= t]
        return after[0] if after else None

    def check(self):
        fails = list(self.fails)
        cur_uids = set(self.current.values())
        entries = self.ctl("/log")
        preqs = self.pods_requests(entries)
        sb, cs = self.runtime_now()
        cf, ncreated = crash.check_creations(self, sb, True, lambda u: u in self.versions)
        fails += cf
        # resume / relist, per kletd run
        nres = nrel = 0
        for i, run in enumerate(self.runs):
            end = run.end if run.end is not None else time.time()
            mine = [e for e in preqs if run.start <= e["t"] <= end]
            lists = [e for e in mine if not e.get("watch") and not e["query"].get("continue")]
            if not run.stored_rv:
                continue
            expired = int(run.stored_rv) < run.compacted
            # A compaction during the run (in an outage) may cost one more LIST.
            extra = len([c for c in self.compactions if run.start < c < end])
            if not mine:
                continue
            first = mine[0]
            if not first.get("watch") or first["query"].get("resourceVersion") != \
                    run.stored_rv:
                fails.append("resume: run %d (stored resourceVersion %s): first pods request "
                             "%s %s" % (i, run.stored_rv, "WATCH" if first.get("watch") else
                                        "LIST", json.dumps(first["query"])))
            if not expired:
                nres += 1
                if len(lists) > extra:
                    fails.append("resume: run %d (stored resourceVersion %s, valid): %d LIST "
                                 "of pods" % (i, run.stored_rv, len(lists)))
            else:
                nrel += 1
                # The 410 comes at once; a run killed right after its watch may not list.
                if len(lists) > 1 + extra or (not lists and end - first["t"] > 3.0):
                    fails.append("relist: run %d (stored resourceVersion %s < compaction %d):"
                                 " %d LISTs of pods, want 1" % (i, run.stored_rv,
                                                                run.compacted, len(lists)))
        log("resume: %d restarts from a valid position, %d after a compaction" % (nres, nrel))
        # grace
        ups = []
        for run in self.runs:
            rec = self.recovered_at(run)
            if rec is not None:
                ups.append((run, rec, run.end if run.end is not None else time.time()))
        worst = None
        ngrace = 0
        for v in sorted(self.versions.values(), key=lambda v: v.uid):
            if v.removed_at is None or not v.seen:
                continue
            if v.finished_at is None:
                fails.append("grace: pod %s (grace %d s) never finished" % (v.uid, v.grace))
                continue
            took = 0.0
            k = None
            for run, a, b in ups:
                kr = self.known_from(run, v, preqs)
                if kr is None:
                    continue
                k = kr if k is None else min(k, kr)
                took += max(0.0, min(b, v.finished_at) - max(a, kr, v.removed_at))
            if k is None:
                fails.append("grace: pod %s: deleted at %.3f, finished at %.3f, no recovered "
                             "kletd could know" % (v.uid, v.removed_at, v.finished_at))
                continue
            ngrace += 1
            worst = took - v.grace if worst is None else max(worst, took - v.grace)
            if took > v.grace + SLACK_S:
                fails.append("grace: pod %s (%s delete, grace %d s%s) finished after %.2f s "
                             "of daemon time (%.2f s wall from the deletion, %.2f s from when "
                             "kletd could know)" %
                             (v.uid, v.how, v.grace, ", ignores TERM" if v.ignore_term else "",
                              took, v.finished_at - v.removed_at, v.finished_at - k))
        log("grace: %d deleted pods checked, %d of %d kletd runs recovered; worst finish %s s "
            "past the grace period (daemon time)" % (ngrace, len(ups), len(self.runs),
                                                     "-" if worst is None else
                                                     "%.2f" % worst))
        # gone
        for x in sb + cs:
            if x["uid"] in self.versions and x["uid"] not in cur_uids:
                fails.append("gone: %s %s of deleted pod %s left (%s)" %
                             ("sandbox" if "name" not in x else "container " + x["name"],
                              x["id"][:12], x["uid"], x["state"]))
        # delete: the node's final DELETE, grace 0 with the uid
        spods = self.server_pods()
        dels = {}
        for e in entries:
            if e.get("user") == USER and e["method"] == "DELETE" and \
                    e["path"].startswith("/api/v1/namespaces/default/pods/"):
                b = e.get("body") if isinstance(e.get("body"), dict) else {}
                u = (b.get("preconditions") or {}).get("uid")
                if b.get("gracePeriodSeconds") == 0 and u:
                    dels[u] = dels.get(u, 0) + 1
        for v in sorted(self.versions.values(), key=lambda v: v.uid):
            if v.removed_at is None:
                continue
            if v.uid in spods:
                fails.append("delete: pod %s (%s) still on the server" % (v.name, v.uid))
            if v.how == "graceful" and not dels.get(v.uid):
                fails.append("delete: pod %s (%s): no DELETE with grace 0 and its uid by the "
                             "node" % (v.name, v.uid))
        # status (a crash-looping container may have been replaced a moment ago: the
        # status that says so gets a few seconds, a wrong one stays wrong)
        sf = self.status_fails(spods, cs)
        end = time.time() + 10
        while sf and time.time() < end:
            time.sleep(0.3)
            _, cs2 = self.runtime_now()
            sf = self.status_fails(self.server_pods(), cs2)
        fails += sf
        log("checked: %d pods now, %d created, %d graceful and %d forced deletions, %d "
            "containers created, %d compactions" %
            (len(cur_uids), self.stats["created"], self.stats["graceful"],
             self.stats["force"], ncreated, self.stats["compact"]))
        log("away: %d kletd runs started with the server unreachable, %d outages under a "
            "running kletd, %d held pods checked; status converged %d times after it "
            "returned (slowest %.1f s)" %
            (self.stats["away"], self.stats["outage"], self.stats["held"],
             self.stats["converged"], self.stats["converge_max"]))
        return fails

    # --- main ------------------------------------------------------------------------
    def run(self):
        a = self.a
        r = self.rng
        self.start_fake()
        if not self.start_apiserver():
            return 77
        self.poller = Poller(self.sock, self)
        self.poller.start()
        for _ in range(3):
            self.create_pod()
        self.start_kletd(False)
        for it in range(1, a.iterations + 1):
            for _ in range(r.choice([0, 1, 1, 2])):
                self.mutate()
            time.sleep(r.uniform(0, a.max_delay))
            if r.random() < 0.3:
                self.mutate()
                time.sleep(r.uniform(0, a.max_delay / 3))
            # An outage under a running kletd (its history maybe compacted meanwhile); the
            # server comes back before the kill, or the kill comes while it is away.
            outage = r.random() < a.away / 2
            still_away = False
            if outage:
                self.stats["outage"] += 1
                self.down()
                held = self.held_pods()
                time.sleep(r.uniform(0.5, 1.5))
                if r.random() < 0.5:
                    self.compact()
                if r.random() < 0.3:
                    self.mutate()
                if r.random() < 0.5:
                    self.up()
                    self.converge_status(a.settle)
                    time.sleep(r.uniform(0, a.max_delay))
                else:
                    still_away = True
            self.kill_kletd()
            if r.random() < 0.3:
                self.mutate()   # a change while the daemon is down
            if r.random() < 0.25:
                self.compact()
            away = still_away or r.random() < a.away
            if away:
                if not still_away:
                    self.down()
                    held = self.held_pods()
                self.stats["held"] += len(held)
                # One or two runs while the server is away (a kill -9 in between).
                for k in range(r.choice([1, 1, 2])):
                    if k > 0:
                        self.kill_kletd()
                    self.stats["away"] += 1
                    t_start = time.time()
                    self.start_kletd(True)
                    if r.random() < 0.3:
                        time.sleep(r.uniform(0.2, 1.0))
                        self.mutate()   # deleted or created while the node cannot see it
                    self.away_window(self.runs[-1], held, t_start)
                self.up()
                self.converge_status(a.settle)
            else:
                self.start_kletd(False)
            if it % 10 == 0:
                log("iteration %d/%d: %d pods, %d created" %
                    (it, a.iterations, len(self.current), len(self.versions)))
        deadline = time.time() + a.settle
        why = "?"
        while time.time() < deadline:
            self.alive()
            try:
                why = self.settle_ok()
            except grpc.RpcError as e:
                why = "runtime: %s" % e.code()
            if why is None:
                break
            time.sleep(0.3)
        time.sleep(1.0)
        self.alive()
        fails = self.check()
        if why is not None:
            fails.insert(0, "settle: not converged after %d s: %s" % (a.settle, why))
        return fails

    def cleanup(self):
        self.stop_kletd()
        if hasattr(self, "poller"):
            self.poller.stop_ev.set()
            self.poller.join(5)
        self.stop_peers()


def main():
    ap = argparse.ArgumentParser(description="kletd kill -9 recovery test with an API server")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--max-delay", type=float, default=1.0, help="kill delay bound (s)")
    ap.add_argument("--away", type=float, default=0.25,
                    help="share of restarts with the server unreachable")
    ap.add_argument("--max-pods", type=int, default=8)
    ap.add_argument("--settle", type=float, default=60)
    ap.add_argument("--kletd", default=os.environ.get("KLETD", "./kletd"))
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    a = ap.parse_args()
    if a.seed is None:
        a.seed = int.from_bytes(os.urandom(4), "big") % 1000000
    a.kletd = os.path.abspath(a.kletd)
    if not os.access(a.kletd, os.X_OK):
        print("crash_api: no kletd at %s" % a.kletd)
        return 1
    replay = ("tests/crash/crash_api.py --seed %d --iterations %d --max-delay %g --away %g "
              "--kletd %s" % (a.seed, a.iterations, a.max_delay, a.away, a.kletd))
    log("seed %d (replay: %s)" % (a.seed, replay))
    h = Harness(a)
    rc = 0

    def on_term(*_):
        raise SystemExit(1)
    signal.signal(signal.SIGTERM, on_term)
    try:
        fails = h.run()
        if fails == 77:
            print("crash_api: skip: openssl or the stand-in not available")
            return 77
        for f in fails:
            print("not ok - %s" % f)
        if fails:
            log("FAILED seed %d; replay: %s; kletd log: %s" % (a.seed, replay, h.klog))
            rc = 1
        else:
            log("ok: %d iterations, seed %d" % (a.iterations, a.seed))
    except SystemExit as e:
        log("FAILED seed %d: %s; replay: %s" % (a.seed, e, replay))
        rc = 1
    finally:
        h.cleanup()
        if rc == 0 and not a.keep:
            shutil.rmtree(h.t, ignore_errors=True)
        else:
            log("kept %s" % h.t)
    return rc


if __name__ == "__main__":
    sys.exit(main())
