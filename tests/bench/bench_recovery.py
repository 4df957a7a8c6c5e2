#!/usr/bin/env python3
"""bench_recovery.py — recovery after kill -9 with N running static pods (default 110).

  tests/bench/bench_recovery.py [--pods N] [--kletd PATH]

Starts the fake CRI (in process) and kletd with N static pods, waits until all run, kills
kletd with SIGKILL, resets the fake's call counts, starts kletd again and measures the time
from its start to the "recovered in" log line (first relist done with every source seen, all
workers resumed), then waits 3 s more and prints the CRI calls made during recovery by
method. The goal: list calls only (no Create/Start/Stop/RunPodSandbox).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "fakecri"))
try:
    import fakecri  # noqa: E402
except ImportError as e:
    print("bench_recovery: skip: %s" % e)
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=110)
    ap.add_argument("--kletd", default=os.environ.get("KLETD", "./kletd"))
    ap.add_argument("--after", type=float, default=3.0, help="seconds counted after recovery")
    a = ap.parse_args()
    t = tempfile.mkdtemp(prefix="klet-bench-recovery-")
    m = os.path.join(t, "m")
    os.makedirs(m)
    sock = os.path.join(t, "cri.sock")
    f = fakecri.FakeCRI(sock, control="", quiet=True).start()
    klog = os.path.join(t, "kletd.log")
    kp = None
    # Its pod cgroups under a root of its own, removed at the end (not the machine's kubepods).
    cgroot = "/" + os.path.basename(t)

    def start():
        lf = open(klog, "a")
        lf.write("=== bench start\n")
        lf.flush()
        return subprocess.Popen(
            [os.path.abspath(a.kletd), "--root-dir", os.path.join(t, "root"),
             "--pod-logs-dir", os.path.join(t, "logs"), "--pod-manifest-path", m,
             "--hostname-override", "bench", "--container-runtime-endpoint", "unix://" + sock,
             "--cgroup-root", cgroot, "-v=2"], stdout=lf, stderr=subprocess.STDOUT)

    try:
        for i in range(a.pods):
            doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b%d" % i},
                   "spec": {"terminationGracePeriodSeconds": 1, "containers": [
                       {"name": "c", "image": "klet.local/busybox:1.35",
                        "command": ["sleep", "inf"]}]}}
            with open(os.path.join(m, "b%d.json" % i), "w") as fp:
                json.dump(doc, fp)
        kp = start()
        end = time.time() + 300
        while time.time() < end:
            st = f.control({"cmd": "state"})
            n = sum(1 for c in st["containers"] if c["state"] == "CONTAINER_RUNNING")
            if n >= a.pods:
                break
            time.sleep(0.2)
        print("# %d pods running" % n)
        time.sleep(2)
        kp.kill()
        kp.wait()
        f.control({"cmd": "reset_calls"})
        with open(klog) as fp:
            skip = len(fp.read())
        t0 = time.time()
        kp = start()
        rec = None
        while time.time() < t0 + 120:
            with open(klog) as fp:
                txt = fp.read()[skip:]
            mo = re.search(r"recovered in (\d+)ms: first relist done, (\d+) pod workers", txt)
            if mo:
                rec = time.time() - t0
                break
            time.sleep(0.01)
        calls_rec = f.control({"cmd": "calls"})["counts"]
        time.sleep(a.after)
        calls = f.control({"cmd": "calls"})["counts"]
        if rec is None:
            print("bench_recovery: no 'recovered in' line; log %s" % klog)
            return 1
        print("recovery pods=%d workers=%s kletd_ms=%s wall_ms=%d" % (
            a.pods, mo.group(2), mo.group(1), rec * 1000))
        print("cri calls until recovered: %s" % " ".join(
            "%s=%d" % kv for kv in sorted(calls_rec.items())))
        print("cri calls in recovery + %gs: %s" % (a.after, " ".join(
            "%s=%d" % kv for kv in sorted(calls.items()))))
        bad = {k: v for k, v in calls.items() if not k.startswith(("List", "Version", "Status",
                                                                    "ImageFs", "GetContainer"))}
        print("non-list calls: %s" % (bad or "none"))
        return 0
    finally:
        if kp is not None:
            kp.kill()
            kp.wait()
        f.stop()
        for h in glob.glob("/sys/fs/cgroup/*"):
            # deepest first: the pod cgroups, the QoS tiers, kubepods, the root
            for d, _, _ in sorted(os.walk(h + cgroot), key=lambda w: -w[0].count("/")):
                try:
                    os.rmdir(d)
                except OSError:
                    pass
        shutil.rmtree(t, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
