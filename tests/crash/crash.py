#!/usr/bin/env python3
"""crash.py — kill -9 kletd at random moments while static pods are created, restarted,
replaced and terminated; restart it; let it settle; check the recovery invariants (issue 6).

  tests/crash/crash.py [--seed N] [--iterations K] [--runtime fake|containerd]
                       [--max-delay S] [--kletd PATH] [--keep]

An iteration is one SIGKILL + restart of kletd. The schedule (manifest changes, kill delays)
comes from one seeded random generator: the seed is printed at the start and on failure with
the command that replays it. Exit 0: all invariants held; 1: a violation; 77: no peer.

Invariants checked after the last restart, once kletd has settled:
  sandbox   exactly one READY sandbox per pod still in the manifest directory, and only one
            sandbox ever created for it (RunPodSandbox calls / sandboxes seen)
  unique    no container created twice for the same (pod UID, container name, restartCount)
            (every CreateContainer call the fake saw, across all restarts; on containerd every
            container seen by the poller)
  norestart a long-running container of a pod never changed was created exactly once
  grace     every removed or replaced pod had no running container within its grace
            period + 2 s of the ORIGINAL removal, counting the time a kletd was up
            (recovered and not yet killed): no daemon acts while it is down
  exits     every exit code of a container of a pod still present is in the store
            (container_exits rows of ROOT/klet.db)
  gone      nothing of a removed pod is left in the runtime
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
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "fakecri"))

try:
    import grpc  # noqa: E402
    import cripb  # noqa: E402
except ImportError as e:  # pragma: no cover
    print("crash: skip: %s" % e)
    sys.exit(77)

pb, pbg = cripb.load()
BUSYBOX = "klet.local/busybox:1.35"
NODE = "crash"
SLACK_S = 2.0


def log(msg):
    print("# %s %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


class Version:
    """One pod version (one UID): what the harness asked for and what it saw."""

    def __init__(self, uid, name, kind, grace, ignore_term):
        self.uid = uid
        self.name = name
        self.kind = kind            # stable | exits | oneshot
        self.grace = grace
        self.ignore_term = ignore_term
        self.removed_at = None      # wall time of the removal (or replacement)
        self.finished_at = None     # first time seen with nothing running after removal
        self.seen = False


class Poller(threading.Thread):
    """Watches the runtime every 50 ms: containers seen, exit codes, finish times."""

    def __init__(self, sock, harness):
        threading.Thread.__init__(self, daemon=True)
        self.ch = grpc.insecure_channel("unix://" + sock)
        self.rt = pbg.RuntimeServiceStub(self.ch)
        self.h = harness
        self.stop_ev = threading.Event()
        self.lock = threading.Lock()
        self.ctrs = {}      # id -> dict(uid, name, restart, state, exit_code)
        self.sandboxes = {}  # id -> dict(uid, attempt, state)
        self.errors = 0

    def snapshot(self):
        s = self.rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=10)
        c = self.rt.ListContainers(pb.ListContainersRequest(), timeout=10)
        return s.items, c.containers

    def poll_once(self):
        sbs, cs = self.snapshot()
        now = time.time()
        with self.lock:
            for s in sbs:
                self.sandboxes[s.id] = {"uid": s.metadata.uid, "attempt": s.metadata.attempt,
                                        "state": pb.PodSandboxState.Name(s.state)}
            for c in cs:
                uid = c.labels.get("io.kubernetes.pod.uid", "")
                e = self.ctrs.get(c.id)
                st = pb.ContainerState.Name(c.state)
                if e is None:
                    e = self.ctrs[c.id] = {
                        "uid": uid, "name": c.metadata.name,
                        "restart": c.annotations.get("io.kubernetes.container.restartCount",
                                                     "?"),
                        "state": st, "exit_code": None, "image": c.image.image}
                e["state"] = st
                if st == "CONTAINER_EXITED" and e["exit_code"] is None:
                    try:
                        r = self.rt.ContainerStatus(pb.ContainerStatusRequest(
                            container_id=c.id), timeout=10)
                        e["exit_code"] = r.status.exit_code
                        e["reason"] = r.status.reason
                    except grpc.RpcError:
                        pass
            live = set()
            for c in cs:
                if c.state in (pb.CONTAINER_RUNNING, pb.CONTAINER_UNKNOWN):
                    live.add(c.labels.get("io.kubernetes.pod.uid", ""))
            # The grace period bounds the containers; the sandbox (network teardown) is
            # stopped after them and checked by "gone" at the end.
            for v in self.h.versions.values():
                if v.uid in live:
                    v.seen = True
                if v.removed_at is not None and v.finished_at is None and v.uid not in live:
                    v.finished_at = now

    def run(self):
        while not self.stop_ev.is_set():
            try:
                self.poll_once()
            except grpc.RpcError:
                self.errors += 1
            except Exception as e:  # noqa: BLE001 a poller must keep going
                log("poller: %r" % e)
            self.stop_ev.wait(0.05)


class Harness:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.versions = {}   # uid -> Version
        self.current = {}    # pod name -> uid in the manifest dir
        self.nver = 0
        self.npod = 0
        self.kproc = None
        self.fake = None
        self.ctd = False
        self.calls = {"CreateContainer": [], "RunPodSandbox": [], "StartContainer": []}
        self.t = tempfile.mkdtemp(prefix="klet-crash-")
        self.m = os.path.join(self.t, "m")
        os.makedirs(self.m)
        self.klog = os.path.join(self.t, "kletd.log")
        self.kletd = a.kletd
        self.procs = []      # [start wall time, SIGKILL wall time or None] per kletd run

    # --- peers -----------------------------------------------------------------------
    def start_fake(self):
        import fakecri
        self.sock = os.path.join(self.t, "cri.sock")
        f = fakecri.FakeCRI(self.sock, control="", quiet=True)
        orig = f._record
        calls = self.calls

        def record(method, req):
            if method in calls:
                calls[method].append(req)
            orig(method, req)
        f._record = record
        f.start()
        self.fake = f

    def start_containerd(self):
        if os.geteuid() != 0 or shutil.which("containerd") is None:
            return False
        env = dict(os.environ)
        env.setdefault("KLET_CONTAINERD_DIR", "/tmp/klet-ctd-recovery")
        self.ctd_env = env
        p = subprocess.run(["sh", os.path.join(TOP, "contrib", "containerd-up.sh")],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        lines = p.stdout.strip().splitlines()
        if p.returncode != 0 or not lines or not os.path.exists(lines[-1]):
            log("containerd-up failed: %s" % p.stderr[-500:])
            return False
        self.sock = lines[-1]
        self.ctd = True
        return True

    def stop_peers(self):
        if self.fake is not None:
            self.fake.stop()
            self.fake = None
        if self.ctd:
            subprocess.run(["sh", os.path.join(TOP, "contrib", "containerd-down.sh")],
                           env=self.ctd_env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            self.ctd = False

    # --- kletd -----------------------------------------------------------------------
    def start_kletd(self):
        with open(self.klog, "a") as lf:
            t0 = round(time.time(), 3)
            lf.write("=== crash: start %.3f %s\n" % (t0, time.strftime("%H:%M:%S")))
            lf.flush()
            self.kproc = subprocess.Popen(
                [self.kletd, "--root-dir", os.path.join(self.t, "root"),
                 "--pod-logs-dir", os.path.join(self.t, "logs"),
                 "--pod-manifest-path", self.m, "--hostname-override", NODE,
                 "--container-runtime-endpoint", "unix://" + self.sock,
                 "--file-check-frequency", "1s", "-v=2"],
                stdout=lf, stderr=subprocess.STDOUT)
            self.procs.append([t0, None])

    def kill_kletd(self):
        if self.kproc is None:
            return
        if self.kproc.poll() is not None:
            raise SystemExit("kletd exited by itself (rc %s); see %s" %
                             (self.kproc.returncode, self.klog))
        self.kproc.send_signal(signal.SIGKILL)
        self.procs[-1][1] = time.time()
        self.kproc.wait()
        self.kproc = None

    def stop_kletd(self):
        if self.kproc is not None:
            self.kproc.kill()
            self.kproc.wait()
            self.kproc = None

    # --- the schedule ----------------------------------------------------------------
    def write_pod(self, name):
        r = self.rng
        self.nver += 1
        uid = "crash-%d-%04d" % (self.a.seed, self.nver)
        kind = r.choice(["stable", "stable", "exits", "oneshot"])
        grace = r.choice([2, 3, 4, 5])
        ignore = r.random() < 0.4
        if kind == "stable":
            policy = "Always"
            cmds = [["fake-ignore-term"] if ignore else ["sleep", "inf"]]
            if r.random() < 0.5:
                cmds.append(["sleep", "inf"])
        elif kind == "exits":
            policy = r.choice(["Always", "OnFailure"])
            cmds = [["sh", "-c", "sleep %d; exit %d" % (r.choice([1, 2]), r.randint(1, 9))]]
            if ignore:
                cmds.append(["fake-ignore-term"])
        else:
            policy = "Never"
            cmds = [["sh", "-c", "sleep 1; exit %d" % r.randint(0, 7)], ["sleep", "inf"]]
        if self.ctd:
            cmds = [self.ctd_cmd(c) for c in cmds]
        doc = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "uid": uid, "labels": {"crash-version": uid}},
               "spec": {"restartPolicy": policy, "terminationGracePeriodSeconds": grace,
                        "containers": [{"name": "c%d" % i, "image": BUSYBOX, "command": c}
                                       for i, c in enumerate(cmds)]}}
        tmp = os.path.join(self.m, ".%s.tmp" % name)
        with open(tmp, "w") as f:
            json.dump(doc, f)
        old = self.current.get(name)
        now = time.time()
        os.rename(tmp, os.path.join(self.m, name + ".json"))
        if old is not None:
            self.versions[old].removed_at = now
        self.versions[uid] = Version(uid, name, kind, grace, ignore)
        self.current[name] = uid

    @staticmethod
    def ctd_cmd(c):
        """The same behaviour with a real busybox shell."""
        if c == ["fake-ignore-term"]:
            return ["sh", "-c", "trap '' TERM; while :; do sleep 1; done"]
        if c == ["sleep", "inf"]:
            return ["sleep", "1000000"]
        return c

    def remove_pod(self, name):
        uid = self.current.pop(name)
        now = time.time()
        os.unlink(os.path.join(self.m, name + ".json"))
        self.versions[uid].removed_at = now

    def mutate(self):
        r = self.rng
        n = len(self.current)
        x = r.random()
        if n < 3 or (x < 0.35 and n < self.a.max_pods):
            self.npod += 1
            self.write_pod("p%d" % self.npod)
        elif x < 0.6:
            self.write_pod(r.choice(sorted(self.current)))
        elif x < 0.85:
            self.remove_pod(r.choice(sorted(self.current)))

    # --- invariants ------------------------------------------------------------------
    def settle_ok(self):
        """Converged: every current pod has a ready sandbox, nothing of a removed one."""
        with self.poller.lock:
            sbs = dict(self.poller.sandboxes)
            ctrs = dict(self.poller.ctrs)
        sb, cur = self.runtime_now()
        ready = {}
        for s in sb:
            if s["state"] == "SANDBOX_READY":
                ready[s["uid"]] = ready.get(s["uid"], 0) + 1
        for name, uid in self.current.items():
            if ready.get(uid, 0) != 1:
                return "pod %s uid %s: %d ready sandboxes" % (name, uid, ready.get(uid, 0))
        cur_uids = set(self.current.values())
        for s in sb:
            if s["uid"].startswith("crash-") and s["uid"] not in cur_uids:
                return "removed pod %s: sandbox %s left" % (s["uid"], s["id"][:12])
        for c in cur:
            if c["uid"].startswith("crash-") and c["uid"] not in cur_uids:
                return "removed pod %s: container %s left" % (c["uid"], c["name"])
        for uid in cur_uids:
            v = self.versions[uid]
            if v.kind == "stable":
                run = [c for c in cur if c["uid"] == uid and c["state"] == "CONTAINER_RUNNING"]
                names = {c["name"] for c in run}
                if len(names) < 1:
                    return "pod %s: not running" % uid
        del sbs, ctrs
        ef = self.exit_fails()[0]
        return ef[0] if ef else None

    def up_intervals(self):
        """[(recovered, killed)] wall times of every kletd run that recovered."""
        rec = {}
        cur = None
        with open(self.klog, errors="replace") as f:
            for line in f:
                mo = re.match(r"=== crash: start ([0-9.]+)", line)
                if mo:
                    cur = float(mo.group(1))
                    continue
                mo = re.search(r"recovered in (\d+)ms", line)
                if mo and cur is not None and cur not in rec:
                    rec[cur] = cur + int(mo.group(1)) / 1000.0
        out = []
        for start, killed in self.procs:
            if start in rec:
                out.append((rec[start], killed if killed is not None else time.time()))
        return out

    def runtime_now(self):
        rt = self.poller.rt
        sb = [{"id": s.id, "uid": s.metadata.uid, "state": pb.PodSandboxState.Name(s.state)}
              for s in rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=10).items]
        cs = [{"id": c.id, "uid": c.labels.get("io.kubernetes.pod.uid", ""),
               "name": c.metadata.name, "state": pb.ContainerState.Name(c.state)}
              for c in rt.ListContainers(pb.ListContainersRequest(), timeout=10).containers]
        return sb, cs

    def check(self):
        fails = []
        cur_uids = set(self.current.values())
        # unique: (uid, name, restartCount) created once.
        keys = {}
        if self.fake is not None:
            for req in self.calls["CreateContainer"]:
                k = (req.config.labels.get("io.kubernetes.pod.uid", ""),
                     req.config.metadata.name,
                     req.config.annotations.get("io.kubernetes.container.restartCount", "?"))
                keys[k] = keys.get(k, 0) + 1
        else:
            with self.poller.lock:
                for c in self.poller.ctrs.values():
                    k = (c["uid"], c["name"], c["restart"])
                    keys[k] = keys.get(k, 0) + 1
        for k, n in sorted(keys.items()):
            if n > 1 and k[0].startswith("crash-"):
                fails.append("unique: container %s of pod %s restartCount %s created %d times"
                             % (k[1], k[0], k[2], n))
        # sandbox: one ever per current pod.
        sbn = {}
        if self.fake is not None:
            for req in self.calls["RunPodSandbox"]:
                u = req.config.metadata.uid
                sbn[u] = sbn.get(u, 0) + 1
        else:
            with self.poller.lock:
                for s in self.poller.sandboxes.values():
                    sbn[s["uid"]] = sbn.get(s["uid"], 0) + 1
        sb, cur = self.runtime_now()
        for uid in sorted(cur_uids):
            if sbn.get(uid, 0) != 1:
                fails.append("sandbox: pod %s: %d sandboxes created" % (uid, sbn.get(uid, 0)))
            nready = len([s for s in sb if s["uid"] == uid and s["state"] == "SANDBOX_READY"])
            if nready != 1:
                fails.append("sandbox: pod %s: %d ready sandboxes" % (uid, nready))
        # norestart: a long-running container that was started is never replaced (one
        # created but never started, the daemon killed in between, may be).
        started = {r.container_id for r in self.calls["StartContainer"]}
        by_key = {}
        with self.poller.lock:
            for cid, c in self.poller.ctrs.items():
                by_key[(c["uid"], c["name"], c["restart"])] = cid
                if c["state"] in ("CONTAINER_RUNNING", "CONTAINER_EXITED") and \
                        c.get("reason") != "StartError":
                    started.add(cid)
        for (u, name, rc), n in keys.items():
            if u not in cur_uids or self.versions[u].kind != "stable" or rc in ("0", "?"):
                continue
            prev = by_key.get((u, name, str(int(rc) - 1)))
            if prev is not None and prev in started:
                fails.append("norestart: container %s of stable pod %s restarted (restartCount"
                             " %s, the previous instance %s had started)" %
                             (name, u, rc, prev[:12]))
        # grace: counted from the original removal over the time a kletd was up (recovered,
        # not yet killed): no daemon can act while it is down or still starting.
        up = self.up_intervals()
        worst = None
        ngrace = 0
        for v in sorted(self.versions.values(), key=lambda v: v.uid):
            if v.removed_at is None or not v.seen:
                continue
            if v.finished_at is None:
                fails.append("grace: pod %s (grace %d s) never finished" % (v.uid, v.grace))
                continue
            took = sum(max(0.0, min(b, v.finished_at) - max(a, v.removed_at)) for a, b in up)
            ngrace += 1
            worst = took - v.grace if worst is None else max(worst, took - v.grace)
            if took > v.grace + SLACK_S:
                fails.append("grace: pod %s (grace %d s%s) finished after %.2f s of daemon "
                             "time (%.2f s wall) from its removal" %
                             (v.uid, v.grace, ", ignores TERM" if v.ignore_term else "",
                              took, v.finished_at - v.removed_at))
        log("grace: %d removed pods checked, %d of %d kletd runs recovered; worst finish "
            "%s s past the grace period (daemon time)" % (ngrace, len(up), len(self.procs),
                                                       "-" if worst is None else
                                                       "%.2f" % worst))
        # gone
        for s in sb:
            if s["uid"].startswith("crash-") and s["uid"] not in cur_uids:
                fails.append("gone: sandbox %s of removed pod %s left (%s)" %
                             (s["id"][:12], s["uid"], s["state"]))
        for c in cur:
            if c["uid"].startswith("crash-") and c["uid"] not in cur_uids:
                fails.append("gone: container %s of removed pod %s left (%s)" %
                             (c["name"], c["uid"], c["state"]))
        # exits (containers of restarting pods keep exiting: an exit seen by the poller a
        # moment before the daemon's relist gets a few seconds; a lost one stays lost)
        end = time.time() + 8
        ef, nexits = self.exit_fails()
        while ef and time.time() < end:
            time.sleep(0.3)
            ef, nexits = self.exit_fails()
        fails += ef
        log("checked: %d pods now, %d versions, %d containers created, %d exits compared" %
            (len(cur_uids), len(self.versions), sum(keys.values()), nexits))
        return fails

    def exit_fails(self):
        """Exit codes seen in the runtime for current pods but not in the store."""
        fails = []
        cur_uids = set(self.current.values())
        db = os.path.join(self.t, "root", "klet.db")
        rows = {}
        try:
            con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
            for cid, uid, code in con.execute(
                    "SELECT container_id, uid, exit_code FROM container_exits"):
                rows[cid] = (uid, code)
            con.close()
        except sqlite3.Error as e:
            fails.append("exits: cannot read %s: %s" % (db, e))
        nexits = 0
        with self.poller.lock:
            for cid, c in sorted(self.poller.ctrs.items()):
                if c["uid"] not in cur_uids or c["exit_code"] is None:
                    continue
                nexits += 1
                got = rows.get(cid)
                if got is None:
                    fails.append("exits: container %s (%s restart %s) of pod %s exited %d: "
                                 "not in the store" % (cid[:12], c["name"], c["restart"],
                                                       c["uid"], c["exit_code"]))
                elif got[1] != c["exit_code"]:
                    fails.append("exits: container %s of pod %s exited %d, store says %d" %
                                 (cid[:12], c["uid"], c["exit_code"], got[1]))
        return fails, nexits

    # --- main ------------------------------------------------------------------------
    def run(self):
        a = self.a
        if a.runtime == "fake":
            self.start_fake()
        elif not self.start_containerd():
            return 77
        self.poller = Poller(self.sock, self)
        self.poller.start()
        r = self.rng
        for _ in range(3):
            self.write_pod_new()
        self.start_kletd()
        for it in range(1, a.iterations + 1):
            for _ in range(r.choice([0, 1, 1, 2])):
                self.mutate()
            time.sleep(r.uniform(0, a.max_delay))
            if r.random() < 0.3:
                self.mutate()
                time.sleep(r.uniform(0, a.max_delay / 3))
            self.kill_kletd()
            if r.random() < 0.15:
                self.mutate()   # a change while the daemon is down
            self.start_kletd()
            if it % 25 == 0:
                log("iteration %d/%d: %d pods, %d versions" %
                    (it, a.iterations, len(self.current), len(self.versions)))
        # settle
        deadline = time.time() + a.settle
        why = "?"
        while time.time() < deadline:
            try:
                why = self.settle_ok()
            except grpc.RpcError as e:
                why = "runtime: %s" % e.code()
            if why is None:
                break
            time.sleep(0.2)
        # the last finishes and exits need a moment to be noticed by the poller
        time.sleep(1.5)
        fails = self.check()
        if why is not None:
            fails.insert(0, "settle: not converged after %d s: %s" % (a.settle, why))
        return fails

    def write_pod_new(self):
        self.npod += 1
        self.write_pod("p%d" % self.npod)

    def cleanup(self):
        self.stop_kletd()
        # remove every pod so that a real runtime is left clean
        if self.ctd and os.path.isdir(self.m):
            for f in os.listdir(self.m):
                os.unlink(os.path.join(self.m, f))
            self.start_kletd()
            end = time.time() + 30
            while time.time() < end:
                try:
                    sb, cs = self.runtime_now()
                except grpc.RpcError:
                    break
                if not any(s["uid"].startswith("crash-") for s in sb) and \
                        not any(c["uid"].startswith("crash-") for c in cs):
                    break
                time.sleep(0.3)
            self.stop_kletd()
        if hasattr(self, "poller"):
            self.poller.stop_ev.set()
            self.poller.join(5)
        self.stop_peers()


def main():
    ap = argparse.ArgumentParser(description="kletd kill -9 recovery test")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--runtime", choices=["fake", "containerd"], default="fake")
    ap.add_argument("--max-delay", type=float, default=1.5, help="kill delay bound (s)")
    ap.add_argument("--max-pods", type=int, default=8)
    ap.add_argument("--settle", type=float, default=40)
    ap.add_argument("--kletd", default=os.environ.get("KLETD", "./kletd"))
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    a = ap.parse_args()
    if a.seed is None:
        a.seed = int.from_bytes(os.urandom(4), "big") % 1000000
    a.kletd = os.path.abspath(a.kletd)
    if not os.access(a.kletd, os.X_OK):
        print("crash: no kletd at %s" % a.kletd)
        return 1
    replay = "tests/crash/crash.py --seed %d --iterations %d --runtime %s --max-delay %g" % (
        a.seed, a.iterations, a.runtime, a.max_delay)
    log("seed %d (replay: %s)" % (a.seed, replay))
    h = Harness(a)
    rc = 0

    def on_term(*_):
        raise SystemExit(1)
    signal.signal(signal.SIGTERM, on_term)
    try:
        fails = h.run()
        if fails == 77:
            print("crash: skip: containerd not available")
            return 77
        for f in fails:
            print("not ok - %s" % f)
        if fails:
            log("FAILED seed %d; replay: %s; kletd log: %s" % (a.seed, replay, h.klog))
            rc = 1
        else:
            log("ok: %d iterations on %s, seed %d" % (a.iterations, a.runtime, a.seed))
    finally:
        h.cleanup()
        if rc == 0 and not a.keep:
            shutil.rmtree(h.t, ignore_errors=True)
        else:
            log("kept %s" % h.t)
    return rc


if __name__ == "__main__":
    sys.exit(main())
