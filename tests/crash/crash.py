#!/usr/bin/env python3
"""crash.py — kill -9 kletd at random moments while static pods are created, restarted,
replaced and terminated; restart it; let it settle; check the recovery invariants (issue 6).

  tests/crash/crash.py [--seed N] [--iterations K] [--runtime fake|containerd]
                       [--max-delay S] [--kletd PATH] [--keep] [--store-faults]
                       [--workdir DIR] [--podctl PATH]

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
            (recovered and not yet killed): no daemon acts while it is down. With
            --store-faults, a kill while the store could not commit may lose the
            termination already begun (the store's contract): the grace then runs from
            that kill (counted and printed)
  exits     every exit code of a container of a pod still present is in the store
            (container_exits rows of ROOT/klet.db)
  gone      nothing of a removed pod is left in the runtime
  dbcheck   after EVERY kill -9 (all modes), a copy of ROOT/klet.db (+ -wal, -shm) passes
            PRAGMA integrity_check and foreign_key_check, and its user_version is the
            schema version of the tree (schema/NNN-*.sql) with every table there, or 0 with
            no table at all (killed before the migrations committed): a crash in the middle
            of a transaction leaves a consistent database

--store-faults (root only; 77 otherwise): ROOT is a private 16 MiB tmpfs and the schedule
injects faults of the store's file system at random moments:
  full      a filler file takes the tmpfs until ENOSPC (kletd running or down); later the
            filler is removed while kletd runs, or kletd is killed and restarted under it
  ro        mount -o remount,ro while kletd is DOWN (after a kill -9); kletd is started under
            it (its store runs from a copy in memory, degraded; podctl's socket is kept
            outside ROOT so that it answers), then the fault is cleared (remount,rw) while
            it runs or after a kill.
            Linux refuses a read-only remount (EBUSY) while a process holds a file of the
            mount open for writing, and kletd always holds klet.db, its WAL and kletd.lock:
            a live read-only fault cannot be made without a test hook (a live EROFS only
            happens when the kernel forces it after I/O errors)
and checks, beside the invariants above:
  alive     kletd keeps running while its store's file system is full or read-only, and
            starts under either (a refusal to start is a failure; the harness then clears
            the fault and starts it again to go on)
  degraded  with a full file system and kletd up, podctl status shows store.health
            "degraded" (polled a few seconds; a fault kletd never feels, because SQLite
            rewrites WAL pages it already owns, is counted and printed, not failed)
  retry     once the fault is cleared, store.health returns to "ok" with journalOps 0
            without any restart (polled; the store's retry timer backs off to 5 s), and
            then every exit seen since the fault began (pods still present) is in the
            database (polled a few relists)
  exits     (refined) the store contract (src/store/store.h): nothing acknowledged is lost
            while the process lives; a crash loses what was not committed. A kill -9 while
            the store may hold uncommitted writes (a fault on, or cleared but "ok" not yet
            seen) loses its journal: an exit the poller saw before that kill, missing from
            the database copy taken at the kill, whose container was already removed from
            the runtime at the kill (the next kletd cannot see it: nothing removes anything
            while kletd is down) is excused and counted. Every other exit must be in the
            store: every exit seen while degraded by a kletd that lived until the fault
            cleared, and every exit whose container was still in the runtime at a kill (the
            next kletd's first relist must report it again). A kill with the store healthy
            excuses nothing (the crash loses at most the uncommitted turn, and a container is
            removed only turns after its exit was recorded)
The per-kind behaviour seen (started / refused under a fault, degraded felt or not, recovery
times) is printed at the end.
"""
import errno
import glob
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

FAULT_FS_BYTES = 16 << 20
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


def random_pod(r):
    """A pod of the schedule from the generator r: (kind, grace, ignores SIGTERM, restart
    policy, the containers' commands for the fake CRI)."""
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
    return kind, grace, ignore, policy, cmds


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
                if st == "CONTAINER_EXITED" and "exited_at" not in e:
                    e["exited_at"] = now
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
            for v in list(self.h.versions.values()):  # the harness adds meanwhile
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


def check_creations(h, sb, from_calls, ours):
    """The unique, sandbox and norestart invariants over a harness h (its calls, poller,
    versions and current pods); sb: the runtime's sandboxes now; from_calls: count what was
    created from the fake CRI's call log (else from what the poller saw, on containerd);
    ours(uid): a pod of this run. Returns the failures and the number of containers
    created."""
    fails = []
    cur_uids = set(h.current.values())
    # unique: (uid, name, restartCount) created once.
    keys = {}
    if from_calls:
        for req in h.calls["CreateContainer"]:
            k = (req.config.labels.get("io.kubernetes.pod.uid", ""), req.config.metadata.name,
                 req.config.annotations.get("io.kubernetes.container.restartCount", "?"))
            keys[k] = keys.get(k, 0) + 1
    else:
        with h.poller.lock:
            for c in h.poller.ctrs.values():
                k = (c["uid"], c["name"], c["restart"])
                keys[k] = keys.get(k, 0) + 1
    for k, n in sorted(keys.items()):
        if n > 1 and ours(k[0]):
            fails.append("unique: container %s of pod %s restartCount %s created %d times"
                         % (k[1], k[0], k[2], n))
    # sandbox: one ever per current pod, and it is ready.
    sbn = {}
    if from_calls:
        for req in h.calls["RunPodSandbox"]:
            u = req.config.metadata.uid
            sbn[u] = sbn.get(u, 0) + 1
    else:
        with h.poller.lock:
            for s in h.poller.sandboxes.values():
                sbn[s["uid"]] = sbn.get(s["uid"], 0) + 1
    for uid in sorted(cur_uids):
        if sbn.get(uid, 0) != 1:
            fails.append("sandbox: pod %s: %d sandboxes created" % (uid, sbn.get(uid, 0)))
        nready = len([s for s in sb if s["uid"] == uid and s["state"] == "SANDBOX_READY"])
        if nready != 1:
            fails.append("sandbox: pod %s: %d ready sandboxes" % (uid, nready))
    # norestart: a long-running container that was started is never replaced (one created
    # but never started, the daemon killed in between, may be).
    started = {r.container_id for r in h.calls["StartContainer"]}
    by_key = {}
    with h.poller.lock:
        for cid, c in h.poller.ctrs.items():
            by_key[(c["uid"], c["name"], c["restart"])] = cid
            if c["state"] in ("CONTAINER_RUNNING", "CONTAINER_EXITED") and \
                    c.get("reason") != "StartError":
                started.add(cid)
    for (u, name, rc), n in keys.items():
        if u not in cur_uids or h.versions[u].kind != "stable" or rc in ("0", "?"):
            continue
        prev = by_key.get((u, name, str(int(rc) - 1)))
        if prev is not None and prev in started:
            fails.append("norestart: container %s of stable pod %s restarted (restartCount"
                         " %s, the previous instance %s had started)" %
                         (name, u, rc, prev[:12]))
    return fails, sum(keys.values())


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
        if a.workdir:
            os.makedirs(a.workdir, exist_ok=True)
            self.t = tempfile.mkdtemp(prefix="klet-crash-", dir=a.workdir)
        else:
            self.t = tempfile.mkdtemp(prefix="klet-crash-")
        self.m = os.path.join(self.t, "m")
        os.makedirs(self.m)
        self.root = os.path.join(self.t, "root")
        self.klog = os.path.join(self.t, "kletd.log")
        self.kletd = a.kletd
        self.podctl = a.podctl
        self.procs = []      # [start wall time, SIGKILL wall time or None] per kletd run
        self.fails = []      # violations seen during the run (dbcheck, alive, retry...)
        self.nkills = 0
        self.ndbchecks = 0
        self.schema_version = len(glob.glob(os.path.join(TOP, "schema", "[0-9]*-*.sql")))
        self.tables = set()
        for f in glob.glob(os.path.join(TOP, "schema", "[0-9]*-*.sql")):
            with open(f) as fh:
                self.tables |= set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)",
                                              fh.read(), re.I))
        # --store-faults
        self.mounted = False
        self.fault = None        # None, "full" or "ro"
        self.fault_since = None
        self.store_dirty = False  # the running kletd may hold uncommitted writes
        self.dirty_kills = []     # times of kills while the store may have held writes
        self.excused = {}        # container id -> kill time (exit lost with a journal)
        self.stats = {}          # "kind/what" -> count
        self.recover_s = []      # seconds from clearing a fault to health ok + journal 0

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
        env.setdefault("KLET_CONTAINERD_DIR", os.environ.get("KLET_TEST_TMP", "/tmp") + "/klet-ctd-recovery")
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
            lf.write("=== crash: start %.3f %s%s\n" % (
                t0, time.strftime("%H:%M:%S"),
                " (store fault: %s)" % self.fault if self.fault else ""))
            lf.flush()
            self.log_off = lf.tell()
            self.store_dirty = self.fault is not None
            self.kproc = subprocess.Popen(
                [self.kletd, "--address", "127.0.0.1", "--port", "0", "--healthz-port", "0", "--root-dir", self.root,
                 "--pod-logs-dir", os.path.join(self.t, "logs"),
                 "--pod-manifest-path", self.m, "--hostname-override", NODE,
                 "--cgroup-root", os.environ.get("KLET_TEST_CGROUP_ROOT", "/"),
                 "--container-runtime-endpoint", "unix://" + self.sock,
                 # outside ROOT: podctl answers even when ROOT is read-only
                 "--podctl-socket", os.path.join(self.t, "podctl.sock"),
                 "--file-check-frequency", "1s", "-v=2"],
                stdout=lf, stderr=subprocess.STDOUT)
            self.procs.append([t0, None])
        with open(os.path.join(self.t, "kletd.pid"), "w") as f:
            f.write("%d\n" % self.kproc.pid)

    def log_since_start(self):
        with open(self.klog, errors="replace") as f:
            f.seek(self.log_off)
            return f.read()

    def died(self, what):
        """kletd exited by itself: a violation (it must never), recorded with its log."""
        tail = self.log_since_start().strip().splitlines()[-4:]
        self.fails.append("alive: kletd exited by itself (rc %s) %s; log: %s" %
                          (self.kproc.returncode, what, " | ".join(tail)))
        log(self.fails[-1])
        self.procs[-1][1] = time.time()
        self.kproc = None

    def kill_kletd(self):
        if self.kproc is None:
            return
        if self.kproc.poll() is not None:
            if self.a.store_faults:
                self.died("before a kill (store fault: %s)" % self.fault)
                return
            raise SystemExit("kletd exited by itself (rc %s); see %s" %
                             (self.kproc.returncode, self.klog))
        dirty = self.fault is not None or self.store_dirty
        self.kproc.send_signal(signal.SIGKILL)
        kt = self.procs[-1][1] = time.time()
        self.kproc.wait()
        self.kproc = None
        self.nkills += 1
        stored = self.db_check("kill %d%s" % (self.nkills, " (store fault: %s)" % self.fault
                                             if self.fault else ""))
        if dirty:
            self.dirty_kills.append(kt)
        if dirty and stored is not None:
            # What the next kletd can still see: nobody removes anything while it is down.
            self.count("kill/with the store possibly degraded")
            present = {c.id for c in self.poller.rt.ListContainers(
                pb.ListContainersRequest(), timeout=10).containers}
            with self.poller.lock:
                for cid, c in self.poller.ctrs.items():
                    if c.get("exited_at", kt) < kt and cid not in stored and \
                            cid not in present:
                        self.excused.setdefault(cid, kt)

    # --- dbcheck: the database a kill -9 left ---------------------------------------
    def db_check(self, when):
        """Checks a copy of the database left by a kill; returns the container ids of its
        container_exits rows (None when there is no database yet or it is unreadable)."""
        db = os.path.join(self.root, "klet.db")
        if not os.path.exists(db):
            return None
        d = os.path.join(self.t, "dbcopy")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for sfx in ("", "-wal", "-shm"):
            if os.path.exists(db + sfx):
                shutil.copyfile(db + sfx, os.path.join(d, "klet.db" + sfx))
        self.ndbchecks += 1
        why = []
        ids = None
        try:
            con = sqlite3.connect(os.path.join(d, "klet.db"), timeout=10)
            ic = [r[0] for r in con.execute("PRAGMA integrity_check")]
            if ic != ["ok"]:
                why.append("integrity_check: %s" % "; ".join(map(str, ic[:5])))
            fk = con.execute("PRAGMA foreign_key_check").fetchall()
            if fk:
                why.append("foreign_key_check: %r" % fk[:5])
            uv = con.execute("PRAGMA user_version").fetchone()[0]
            have = {r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if uv == self.schema_version:
                if not self.tables <= have:
                    why.append("schema version %d without tables %s" %
                               (uv, ", ".join(sorted(self.tables - have))))
            elif uv != 0 or (have - {"sqlite_sequence"}):
                why.append("user_version %d (tree: %d), tables %s" %
                           (uv, self.schema_version, ", ".join(sorted(have))))
            if "container_exits" in have:
                ids = {r[0] for r in con.execute("SELECT container_id FROM container_exits")}
            else:
                ids = set()
            con.close()
        except sqlite3.Error as e:
            why.append("unreadable: %s" % e)
        if why:
            keep = os.path.join(self.t, "bad-db-%d" % self.ndbchecks)
            shutil.copytree(d, keep)
            self.fails.append("dbcheck: after %s: %s (copy kept in %s)" %
                              (when, "; ".join(why), keep))
            log(self.fails[-1])
        shutil.rmtree(d, ignore_errors=True)
        return ids

    # --- store faults ----------------------------------------------------------------
    def count(self, key):
        self.stats[key] = self.stats.get(key, 0) + 1

    def mount_root(self):
        os.makedirs(self.root, mode=0o700)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o",
                            "size=%d,mode=0700" % FAULT_FS_BYTES, "klet-crash", self.root],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if p.returncode != 0:
            log("mount tmpfs on %s failed: %s" % (self.root, p.stdout.strip()))
            return False
        self.mounted = True
        return True

    def umount_root(self):
        if not self.mounted:
            return
        if subprocess.run(["umount", self.root]).returncode != 0:
            subprocess.run(["umount", "-l", self.root])
        self.mounted = False

    def inject(self, kind):
        """Turns a fault on; False when it could not be made (logged)."""
        if kind == "full":
            filler = os.path.join(self.root, "filler")
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                for chunk in (1 << 20, 4096, 512):
                    buf = b"\0" * chunk
                    while True:
                        os.write(fd, buf)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
            finally:
                os.close(fd)
            st = os.statvfs(self.root)
            log("fault full: filler %d KiB, %d bytes free" %
                (os.path.getsize(filler) >> 10, st.f_bavail * st.f_frsize))
        else:
            p = subprocess.run(["mount", "-o", "remount,ro", self.root],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True)
            if p.returncode != 0:
                log("fault ro: remount failed: %s" % p.stdout.strip())
                self.count("ro/remount refused")
                return False
            log("fault ro: %s remounted read-only" % self.root)
        self.fault = kind
        self.fault_since = time.time()
        self.store_dirty = self.kproc is not None
        self.count("%s/injected%s" % (kind, " (kletd running)" if self.kproc else
                                      " (kletd down)"))
        return True

    def clear_fault(self):
        if self.kproc is not None:
            with self.poller.lock:
                n = len([c for c in self.poller.ctrs.values()
                         if c.get("exited_at", 0) >= self.fault_since])
            self.stats["%s/exits during the fault, kletd up" % self.fault] = \
                self.stats.get("%s/exits during the fault, kletd up" % self.fault, 0) + n
        if self.fault == "full":
            os.unlink(os.path.join(self.root, "filler"))
        elif self.fault == "ro":
            p = subprocess.run(["mount", "-o", "remount,rw", self.root])
            if p.returncode != 0:
                raise SystemExit("cannot remount %s read-write" % self.root)
        self.last_fault_since = self.fault_since
        log("fault %s cleared after %.1f s%s" % (self.fault, time.time() - self.fault_since,
                                                 " (kletd running)" if self.kproc else ""))
        self.fault = None

    def store_health(self):
        """podctl status: the "store" object, or None (socket not up yet, or kletd busy)."""
        try:
            p = subprocess.run([self.podctl, "--socket", os.path.join(self.t,
                                                                    "podctl.sock"),
                                "status", "-o", "json"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, universal_newlines=True, timeout=10)
        except subprocess.TimeoutExpired:
            return None
        if p.returncode != 0:
            return None
        try:
            j = json.loads(p.stdout)
            return j.get("data", j)["store"]   # podctl prints the reply's data
        except (ValueError, KeyError, TypeError):
            return None

    def watch_degraded(self, bound):
        """Polls podctl until the store says degraded (counted) or bound s pass (counted:
        the fault was not felt); kletd must stay alive. Returns the last health seen."""
        end = time.time() + bound
        h = h0 = None
        while time.time() < end:
            if self.kproc.poll() is not None:
                self.died("under store fault %s" % self.fault)
                return None
            h = self.store_health()
            if h is not None and h.get("health") == "degraded":
                self.count("%s/degraded reported" % self.fault)
                log("store degraded under %s: %s, journalOps %s" %
                    (self.fault, h.get("lastError"), h.get("journalOps")))
                return h
            if h0 is None and h is not None:
                h0 = h
            time.sleep(0.2)
        landed = h is not None and h0 is not None and \
            (h.get("commits") or 0) > (h0.get("commits") or 0)
        self.count("%s/not felt within %g s (health %s; %s)" %
                   (self.fault, bound, h.get("health") if h else "?",
                    "commits landed meanwhile" if landed else "no commit meanwhile"))
        return h

    def wait_recovered(self, bound=45.0):
        """After a fault cleared under a live kletd: health ok and journal drained."""
        t0 = time.time()
        h = None
        while time.time() < t0 + bound:
            if self.kproc.poll() is not None:
                self.died("after the store fault cleared")
                return
            h = self.store_health()
            if h is not None and h.get("health") == "ok" and h.get("journalOps") == 0:
                self.recover_s.append(time.time() - t0)
                self.store_dirty = False
                self.exits_after_fault()
                return
            time.sleep(0.2)
        self.fails.append("retry: store not back to ok with an empty journal %g s after the "
                          "fault cleared: %r" % (bound, h))
        log(self.fails[-1])

    def exits_after_fault(self):
        """The same kletd lived through the fault and its store is ok again: every exit seen
        since the fault began (pods still present) is in the database now, or within a few
        relists (polled: the poller may see an exit before kletd's next relist)."""
        since = self.last_fault_since
        end = time.time() + 10
        ef, n = self.exit_fails(since)
        while ef and time.time() < end and self.kproc is not None and \
                self.kproc.poll() is None:
            time.sleep(0.3)
            ef, n = self.exit_fails(since)
        self.stats["retry/exits checked after a live fault"] = \
            self.stats.get("retry/exits checked after a live fault", 0) + n
        for f in ef:
            self.fails.append("%s (seen during a store fault kletd lived through)" % f)
            log(self.fails[-1])

    def wait_ready(self):
        """Waits for "kletd ready" of the current kletd (a live fault is one that hits a
        started daemon; one that hits its start is start_under_fault's case)."""
        end = time.time() + 30
        while time.time() < end:
            if self.kproc.poll() is not None:
                self.died("during its start (no store fault)")
                return False
            if "kletd ready" in self.log_since_start():
                return True
            time.sleep(0.05)
        self.fails.append("alive: kletd not ready 30 s after its start (no store fault)")
        log(self.fails[-1])
        return False

    def fault_live(self):
        """Between kills, kletd up: maybe a disk-full fault; maybe clear the current one."""
        r = self.rng
        if self.kproc is None or not self.wait_ready():
            return
        if self.fault is None and r.random() < 0.4:
            if self.inject("full"):
                if r.random() < 0.7:
                    self.mutate()    # writes that need room
                self.watch_degraded(r.choice([1.5, 3.0]))
                self.hold()
        if self.fault is not None and self.kproc is not None and r.random() < 0.6:
            self.clear_fault()
            self.wait_recovered()

    def hold(self):
        """Keeps a live fault on a while (exits, restarts and removals happen meanwhile)."""
        r = self.rng
        end = time.time() + r.choice([0.2, 0.6, 1.5, 2.5])
        if r.random() < 0.5:
            self.mutate()
        while time.time() < end and self.kproc is not None:
            if self.kproc.poll() is not None:
                self.died("under store fault %s" % self.fault)
                return
            time.sleep(0.1)

    def start_under_fault(self):
        """kletd was just started with a fault on: it runs (checked like a live fault) or
        refuses to start (recorded); a refusal clears the fault and starts it again."""
        kind = self.fault
        end = time.time() + 30
        while time.time() < end:
            if self.kproc.poll() is not None:
                txt = self.log_since_start()
                err = [ln for ln in txt.splitlines() if re.match(r"[EF]\d{4} ", ln)][-1:]
                self.count("%s/kletd refused to start (rc %d)" % (kind, self.kproc.returncode))
                if not self.stats.get("%s/refusal" % kind):
                    self.stats["%s/refusal" % kind] = " ".join(err)[-200:] or "?"
                # The pods must not lose their supervisor to the disk: a refusal fails.
                self.fails.append("alive: kletd refused to start under store fault %s: %s" %
                                  (kind, " ".join(err)[-200:] or "?"))
                self.procs[-1][1] = time.time()
                self.kproc = None
                self.clear_fault()
                self.start_kletd()
                return
            if "kletd ready" in self.log_since_start():
                self.count("%s/kletd started under it" % kind)
                # full: the fault may go unnoticed (SQLite reuses its pages); ro: the
                # store runs from a copy in memory, degraded, until the remount.
                self.watch_degraded(1.0 if kind == "full" else 3.0)
                self.hold()
                return
            time.sleep(0.05)
        self.fails.append("alive: kletd neither ready nor exited 30 s after a start under "
                          "store fault %s" % kind)

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
        kind, grace, ignore, policy, cmds = random_pod(r)
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
        sb, cur = self.runtime_now()
        cf, ncreated = check_creations(self, sb, self.fake is not None,
                                       lambda u: u.startswith("crash-"))
        fails += cf
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
            # A kill while the store could not commit may lose the termination that had
            # begun (src/store/store.h: a crash loses the uncommitted writes); the next
            # kletd learns of the removal afresh, so the grace runs from that kill.
            since = v.removed_at
            lost = [kt for kt in self.dirty_kills if since < kt < v.finished_at]
            if lost:
                since = max(lost)
                self.count("grace/termination restarted after a kill with the store degraded")
            took = sum(max(0.0, min(b, v.finished_at) - max(a, since)) for a, b in up)
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
            (len(cur_uids), len(self.versions), ncreated, nexits))
        return fails

    def exit_fails(self, since=None):
        """Exit codes seen in the runtime for current pods but not in the store (since: only
        the containers first seen exited at or after that wall time)."""
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
        self.nexcused = 0
        with self.poller.lock:
            for cid, c in sorted(self.poller.ctrs.items()):
                if c["uid"] not in cur_uids or c["exit_code"] is None:
                    continue
                if since is not None and c.get("exited_at", 0) < since:
                    continue
                nexits += 1
                got = rows.get(cid)
                if got is None and cid in self.excused:
                    self.nexcused += 1   # lost with a degraded journal at a kill -9
                    continue
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
        sf = a.store_faults
        if sf and not self.mount_root():
            return 77
        for _ in range(3):
            self.write_pod_new()
        self.start_kletd()
        for it in range(1, a.iterations + 1):
            for _ in range(r.choice([0, 1, 1, 2])):
                self.mutate()
            time.sleep(r.uniform(0, a.max_delay))
            if sf:
                self.fault_live()
                if self.kproc is None:
                    self.start_kletd()
            if r.random() < 0.3:
                self.mutate()
                time.sleep(r.uniform(0, a.max_delay / 3))
            self.kill_kletd()
            if r.random() < 0.15:
                self.mutate()   # a change while the daemon is down
            if sf and self.fault is None and r.random() < 0.3:
                self.inject(r.choice(["ro", "full"]))
            self.start_kletd()
            if sf and self.fault is not None:
                self.start_under_fault()
            if it % 25 == 0:
                log("iteration %d/%d: %d pods, %d versions" %
                    (it, a.iterations, len(self.current), len(self.versions)))
        if sf and self.fault is not None:
            self.clear_fault()
            if self.kproc is not None:
                self.wait_recovered()
        if sf and self.kproc is None:
            self.start_kletd()
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
        fails = self.fails + self.check()
        if why is not None:
            fails.insert(0, "settle: not converged after %d s: %s" % (a.settle, why))
        log("dbcheck: %d kills, %d database copies checked" % (self.nkills, self.ndbchecks))
        if sf:
            for k in sorted(self.stats):
                log("store faults: %s: %s" % (k, self.stats[k]))
            if self.recover_s:
                log("store faults: health ok + journal drained %.2f s (median) / %.2f s "
                    "(max) after a fault cleared, %d times" %
                    (sorted(self.recover_s)[len(self.recover_s) // 2], max(self.recover_s),
                     len(self.recover_s)))
            log("store faults: exits excused (lost with a degraded journal at a kill -9, "
                "container gone): %d" % getattr(self, "nexcused", 0))
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
        self.umount_root()


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
    ap.add_argument("--store-faults", action="store_true",
                    help="ROOT on a private tmpfs; disk-full and read-only faults (root)")
    ap.add_argument("--workdir", default=None, help="make the temp dir under DIR")
    ap.add_argument("--podctl", default=None, help="podctl (default: beside kletd)")
    a = ap.parse_args()
    if a.seed is None:
        a.seed = int.from_bytes(os.urandom(4), "big") % 1000000
    a.kletd = os.path.abspath(a.kletd)
    if not os.access(a.kletd, os.X_OK):
        print("crash: no kletd at %s" % a.kletd)
        return 1
    if a.podctl is None:
        a.podctl = os.path.join(os.path.dirname(a.kletd), "podctl")
    a.podctl = os.path.abspath(a.podctl)
    if a.store_faults:
        if os.geteuid() != 0 or shutil.which("mount") is None:
            print("crash: skip: --store-faults needs root (a private tmpfs)")
            return 77
        if not os.access(a.podctl, os.X_OK):
            print("crash: no podctl at %s" % a.podctl)
            return 1
    replay = "tests/crash/crash.py --seed %d --iterations %d --runtime %s --max-delay %g%s" % (
        a.seed, a.iterations, a.runtime, a.max_delay,
        " --store-faults" if a.store_faults else "")
    log("seed %d (replay: %s)" % (a.seed, replay))
    h = Harness(a)
    rc = 0

    def on_term(*_):
        raise SystemExit(1)
    signal.signal(signal.SIGTERM, on_term)
    try:
        fails = h.run()
        if fails == 77:
            print("crash: skip: %s not available" % (
                "a tmpfs" if a.store_faults and not h.mounted else "containerd"))
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
