#!/usr/bin/python3
"""soak.py — a long run of kletd against the API server stand-in (tests/apiserver) and the fake
CRI (tests/fakecri) with churn and faults; the figures that show a leak or a drift.

  tests/soak/soak.py --kletd BUILD/kletd [--minutes 60] [--seed N] [--keep] ...

For --minutes (default 60) pods are created and deleted (graceful and forced) through the
stand-in, a few per second, up to --max-pods at a time; every --fault-every seconds (about)
one fault: an API outage of 5-20 s (refused or black-holed connections, sometimes with a
compaction of its history, so that a watch gets 410), a compaction alone, or a fake-runtime
restart (GOAWAY, socket gone for a second, state kept); every --kill-every seconds (about)
kletd gets SIGKILL and is started again, except in the last --calm share of the time (a
third), so that the last kletd runs long enough for a memory slope. kletd runs with its pod cgroups under a cgroup root
of its own (--cgroup-root /klet-soak-PID), removed at the end.

Sampled every 5 s: kletd's RSS and open descriptors, the database size (klet.db + WAL).
At the end, after the server is back and everything settled, it checks and reports:
  converged   every pod of the server has one ready sandbox and its containers, statuses match
              the runtime, nothing of a deleted pod is left in the runtime or on the server
  rss         the slope of RSS over the last (long) kletd run after --warmup seconds of it
              (KiB/min; fails above --max-rss-slope), the same per earlier run (each only a
              few minutes long: information), and RSS at each kill
  fds         open descriptors after warm-up: first, last, max of the last run
  leftovers   of deleted pods: ROOT/pods/UID dirs, LOGS/NS_NAME_UID dirs, pod cgroups
              (pod<UID> under the cgroup root), rows in klet.db naming their UID
  db          database size at the end and its maximum
Exit 0 when every check held; 1 otherwise (each failure printed "not ok - ..."); 77 when a
peer is missing. Thresholds: --max-rss-slope KiB/min (default 64), --max-db-mib (default 64).
"""
import argparse
import glob
import os
import shutil
import signal
import sqlite3
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "crash"))
import crash_api  # noqa: E402  the API + fake CRI harness (peers, pods, settle checks)
from crash_api import log  # noqa: E402


class Soak(crash_api.Harness):
    def __init__(self, a):
        crash_api.Harness.__init__(self, a)
        self.cg_root = "/klet-soak-%d" % os.getpid()
        self.samples = []     # (wall, run index, age s, rss KiB, fds, db bytes)
        self.run_ends = []    # (run index, age s, rss KiB) at each kill
        self.counts = {"kills": 0, "outages": 0, "compactions": 0, "runtime_restarts": 0}

    def start_kletd(self, away):
        # As crash_api's, with the soak's own cgroup root.
        rv = self.stored_rv()
        compacted = self.ctl("/stats")["compacted"]
        env = dict(os.environ, KLET_API_PING_INTERVAL_MS="1000",
                   KLET_API_PING_TIMEOUT_MS="1000", KLET_LEASE_RENEW_MS="2000")
        import subprocess
        with open(self.klog, "a") as lf:
            t0 = round(time.time(), 3)
            lf.write("=== soak: start %.3f %s rv=%s away=%d\n" %
                     (t0, time.strftime("%H:%M:%S"), rv, away))
            lf.flush()
            self.kproc = subprocess.Popen(
                [self.kletd, "--address", "127.0.0.1", "--port", "0", "--healthz-port", "0", "--root-dir", os.path.join(self.t, "root"),
                 "--pod-logs-dir", os.path.join(self.t, "logs"),
                 "--pod-manifest-path", self.m, "--hostname-override", crash_api.NODE,
                 "--kubeconfig", self.kubeconfig, "--cgroup-root", self.cg_root,
                 "--container-runtime-endpoint", "unix://" + self.sock,
                 "--file-check-frequency", "1s", "-v=1"],
                stdout=lf, stderr=subprocess.STDOUT, env=env)
        self.runs.append(crash_api.Run(t0, rv, compacted, away))

    # --- measurements --------------------------------------------------------------------
    def db_bytes(self):
        db = os.path.join(self.t, "root", "klet.db")
        return sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))

    def sample(self):
        if self.kproc is None:
            return
        pid = self.kproc.pid
        try:
            with open("/proc/%d/status" % pid) as f:
                rss = int([ln.split()[1] for ln in f if ln.startswith("VmRSS:")][0])
            fds = len(os.listdir("/proc/%d/fd" % pid))
        except (OSError, IndexError):
            return
        age = time.time() - self.runs[-1].start
        self.samples.append((time.time(), len(self.runs) - 1, age, rss, fds, self.db_bytes()))

    def kill(self):
        if self.samples and self.samples[-1][1] == len(self.runs) - 1:
            s = self.samples[-1]
            self.run_ends.append((s[1], s[2], s[3]))
        self.kill_kletd()
        self.counts["kills"] += 1

    # --- faults --------------------------------------------------------------------------
    def fault(self):
        r = self.rng
        x = r.random()
        if x < 0.45:
            self.counts["outages"] += 1
            mode = self.down()
            log("fault: API server down (%s)" % mode)
            end = time.time() + r.uniform(5, 20)
            while time.time() < end:
                if r.random() < 0.3:
                    self.mutate()   # the node cannot see it yet
                self.sleep_sampling(1.0)
            if r.random() < 0.5:
                self.compact()
                self.counts["compactions"] += 1
            self.up()
        elif x < 0.6:
            log("fault: compaction")
            self.compact()
            self.counts["compactions"] += 1
        else:
            log("fault: fake runtime restart")
            self.counts["runtime_restarts"] += 1
            self.fake.control({"cmd": "goaway", "grace_ms": 500, "restart": True,
                               "down_ms": r.choice([200, 1000, 3000]), "wait": False})

    def sleep_sampling(self, d):
        end = time.time() + d
        while True:
            if time.time() - self.last_sample >= self.a.sample_every:
                self.sample()
                self.last_sample = time.time()
            left = end - time.time()
            if left <= 0:
                return
            time.sleep(min(left, 0.5))

    # --- the run -------------------------------------------------------------------------
    def run(self):
        a = self.a
        r = self.rng
        self.start_fake()
        if not self.start_apiserver():
            return 77
        self.poller = crash_api.Poller(self.sock, self)
        self.poller.start()
        for _ in range(3):
            self.create_pod()
        self.start_kletd(False)
        t_end = time.time() + a.minutes * 60
        t_calm = t_end - a.minutes * 60 * a.calm   # no kill -9 after this: one long last run
        self.last_sample = 0
        next_fault = time.time() + r.uniform(0.5, 1.5) * a.fault_every
        next_kill = time.time() + r.uniform(0.7, 1.3) * a.kill_every
        next_note = time.time() + 60
        while time.time() < t_end:
            self.alive()
            self.mutate()
            self.sleep_sampling(r.uniform(0.2, 2 * a.churn_every))
            now = time.time()
            if now >= next_fault:
                self.fault()
                next_fault = time.time() + r.uniform(0.5, 1.5) * a.fault_every
            if now >= next_kill and now < t_calm:
                self.kill()
                if r.random() < 0.3:
                    self.mutate()
                self.start_kletd(False)
                next_kill = time.time() + r.uniform(0.7, 1.3) * a.kill_every
            if now >= next_note:
                s = self.samples[-1] if self.samples else None
                log("%.0f min: %d pods on the server, %d created; run %d: rss %s KiB, "
                    "%s fds, db %s bytes" %
                    ((now - (t_end - a.minutes * 60)) / 60, len(self.current),
                     len(self.versions), len(self.runs), s[3] if s else "?",
                     s[4] if s else "?", s[5] if s else "?"))
                next_note = now + 60
        # Settle: the server is up (fault() always brings it back), everything converges.
        deadline = time.time() + a.settle
        why = "?"
        while time.time() < deadline:
            self.alive()
            try:
                why = self.settle_ok()
            except crash_api.grpc.RpcError as e:
                why = "runtime: %s" % e.code()
            if why is None:
                break
            self.sleep_sampling(0.5)
        # Garbage collection of the deleted pods' files and rows runs on its own clock.
        self.sleep_sampling(a.gc_wait)
        self.sample()
        fails = []
        if why is not None:
            fails.append("converged: not after %d s: %s" % (a.settle, why))
        else:
            log("converged: %d pods on the server, all running as they should" %
                len(self.current))
        fails += self.report()
        return fails

    def deleted(self):
        return {uid: v for uid, v in self.versions.items() if uid not in
                set(self.current.values())}

    def report(self):
        a = self.a
        fails = []
        log("churn: %d pods created, %d deleted gracefully, %d forced; %d kill -9, %d API "
            "outages, %d compactions, %d runtime restarts, %d kletd runs" %
            (self.stats["created"], self.stats["graceful"], self.stats["force"],
             self.counts["kills"], self.counts["outages"], self.counts["compactions"],
             self.counts["runtime_restarts"], len(self.runs)))
        # RSS slope per run after warm-up (KiB per minute).
        slopes = []
        for i in range(len(self.runs)):
            pts = [(s[2], s[3]) for s in self.samples if s[1] == i and s[2] >= a.warmup]
            if len(pts) < 6 or pts[-1][0] - pts[0][0] < 60:
                continue
            mx = statistics.mean(p[0] for p in pts)
            my = statistics.mean(p[1] for p in pts)
            den = sum((p[0] - mx) ** 2 for p in pts)
            slopes.append(60 * sum((p[0] - mx) * (p[1] - my) for p in pts) / den)
        ends = [e[2] for e in self.run_ends]
        if slopes:
            log("rss: slope after %d s of warm-up, per run (KiB/min): %s; RSS at each kill "
                "(KiB): %s" % (a.warmup, " ".join("%.1f" % x for x in slopes),
                               " ".join(str(x) for x in ends)))
        last_i = len(self.runs) - 1
        pts = [(s[2], s[3]) for s in self.samples if s[1] == last_i and s[2] >= a.warmup]
        if len(pts) >= 6 and pts[-1][0] - pts[0][0] >= 60:
            mx = statistics.mean(p[0] for p in pts)
            my = statistics.mean(p[1] for p in pts)
            slope = 60 * sum((p[0] - mx) * (p[1] - my) for p in pts) / \
                sum((p[0] - mx) ** 2 for p in pts)
            log("rss: last run (%.0f min without kill -9): slope after warm-up %.1f KiB/min, "
                "%d -> %d KiB (max %d)" % ((pts[-1][0] - pts[0][0] + a.warmup) / 60, slope,
                                           pts[0][1], pts[-1][1], max(p[1] for p in pts)))
            if slope > a.max_rss_slope:
                fails.append("rss: slope %.1f KiB/min in the last run (limit %d)" %
                             (slope, a.max_rss_slope))
        else:
            log("rss: the last run was too short for a slope (%d samples)" % len(pts))
        last = [s for s in self.samples if s[1] == len(self.runs) - 1 and s[2] >= a.warmup]
        if last:
            fds = [s[4] for s in last]
            log("fds: last run after warm-up: first %d, last %d, max %d" %
                (fds[0], fds[-1], max(fds)))
            if fds[-1] > fds[0] + 16:
                fails.append("fds: %d -> %d in the last run" % (fds[0], fds[-1]))
        dbs = [s[5] for s in self.samples]
        if dbs:
            log("db: %d bytes at the end, max %d" % (dbs[-1], max(dbs)))
            if dbs[-1] > a.max_db_mib << 20:
                fails.append("db: %d bytes at the end (limit %d MiB)" % (dbs[-1], a.max_db_mib))
        fails += self.leftovers()
        return fails

    def leftovers(self):
        gone = self.deleted()
        fails = []
        root = os.path.join(self.t, "root")
        pods = [u for u in gone if os.path.isdir(os.path.join(root, "pods", u))]
        logs = [d for d in glob.glob(os.path.join(self.t, "logs", "*"))
                if d.rsplit("_", 1)[-1] in gone]
        cgs = []
        for base in glob.glob("/sys/fs/cgroup/*" + self.cg_root) + \
                glob.glob("/sys/fs/cgroup" + self.cg_root):
            for dirpath, dirnames, _ in os.walk(base):
                cgs += [os.path.join(dirpath, d) for d in dirnames
                        if d.startswith("pod") and d[3:].replace("_", "-") in gone]
        rows = {}
        db = os.path.join(root, "klet.db")
        if os.path.exists(db):
            con = sqlite3.connect(db, timeout=30)
            for (tbl,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                cols = [c[1] for c in con.execute("PRAGMA table_info(%s)" % tbl)]
                for col in cols:
                    if "uid" not in col.lower():
                        continue
                    n = 0
                    for (v,) in con.execute("SELECT %s FROM %s" % (col, tbl)):
                        if isinstance(v, str) and v in gone:
                            n += 1
                    if n:
                        rows["%s.%s" % (tbl, col)] = n
            con.close()
        log("leftovers of %d deleted pods: %d pod dirs, %d log dirs, %d cgroups, rows %s" %
            (len(gone), len(pods), len(logs), len(cgs), rows or "none"))
        if pods:
            fails.append("leftovers: %d pod dirs of deleted pods, e.g. %s" % (len(pods), pods[0]))
        if logs:
            fails.append("leftovers: %d log dirs of deleted pods, e.g. %s" % (len(logs), logs[0]))
        if cgs:
            fails.append("leftovers: %d pod cgroups of deleted pods, e.g. %s" % (len(cgs), cgs[0]))
        if rows:
            fails.append("leftovers: rows of deleted pods in klet.db: %s" % rows)
        return fails

    def cleanup(self):
        crash_api.Harness.cleanup(self)
        for base in glob.glob("/sys/fs/cgroup/*" + self.cg_root) + \
                glob.glob("/sys/fs/cgroup" + self.cg_root):
            for dirpath, _, _ in sorted(os.walk(base), key=lambda w: -len(w[0])):
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass


def main():
    ap = argparse.ArgumentParser(description="kletd soak: churn and faults, then figures")
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--max-pods", type=int, default=20)
    ap.add_argument("--churn-every", type=float, default=1.0, help="mean seconds between changes")
    ap.add_argument("--fault-every", type=float, default=90)
    ap.add_argument("--kill-every", type=float, default=240)
    ap.add_argument("--warmup", type=float, default=120, help="seconds of each kletd run")
    ap.add_argument("--calm", type=float, default=0.33,
                    help="share of the end without kill -9 (the RSS slope is measured there)")
    ap.add_argument("--sample-every", type=float, default=5)
    ap.add_argument("--settle", type=float, default=120)
    ap.add_argument("--gc-wait", type=float, default=90,
                    help="seconds after settling before leftovers are counted")
    ap.add_argument("--max-rss-slope", type=int, default=64)
    ap.add_argument("--max-db-mib", type=int, default=64)
    ap.add_argument("--kletd", default=os.environ.get("KLETD", "./kletd"))
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    a = ap.parse_args()
    if a.seed is None:
        a.seed = int.from_bytes(os.urandom(4), "big") % 1000000
    a.kletd = os.path.abspath(a.kletd)
    a.max_delay, a.away = 1.0, 0.0     # crash_api's knobs, unused here
    if not os.access(a.kletd, os.X_OK):
        print("soak: no kletd at %s" % a.kletd)
        return 1
    log("soak: %g min, seed %d, kletd %s" % (a.minutes, a.seed, a.kletd))
    h = Soak(a)
    rc = 0

    def on_term(*_):
        raise SystemExit(1)
    signal.signal(signal.SIGTERM, on_term)
    try:
        fails = h.run()
        if fails == 77:
            print("soak: skip: openssl or the stand-in not available")
            return 77
        for f in fails:
            print("not ok - %s" % f)
        rc = 1 if fails else 0
        log("%s (seed %d); kletd log: %s" % ("FAILED" if fails else "ok", a.seed, h.klog))
    except SystemExit as e:
        log("FAILED seed %d: %s" % (a.seed, e))
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
