#!/usr/bin/python3
"""scale.py — the fleet-scale harness (kubemark-style, with real kletd agents).

Starts the API server stand-in (tests/apiserver/apiserver.py --scale), the scale runtime
(tests/scale/scalecri: one process, one socket per node) and N kletd agents (own root dir,
node name, runtime socket, one kubeconfig), creates P pods per node through the API, and
reports: time until all nodes are Ready and all pods Running, p50/p99 pod startup latency
(creation to Running-and-ready as the stand-in stored them), then over a steady window the
per-agent PSS/RSS (smaps_rollup) and CPU (/proc/PID/stat), the API requests per node per
minute by verb and resource and per second of the window (mean, p99, max: agents started
together must not call in the same second), bytes per node per minute, the watch count, and the stand-in's
and the runtime's own CPU (measured apart, from their own /proc entries).

Fleet faults (--faults restart,outage,kill,slow):
  restart  the API goes away and comes back with the same store (/down, /up): LISTs counted,
           then again after a compaction; time until every lease is renewed again
  outage   the API unreachable (blackhole) for --outage-s seconds: agents alive, pods
           running; the request rate per second after it returns
  kill     kill -9 half the agents and restart them: runtime calls counted (no mutation)
  slow     10 % of the runtimes answer after --slow-ms: a new pod on every node, the
           startup latency of the others compared with the slow ones

Usage: scale.py [--nodes 100] [--pods 30] [--window 60] [--faults ...] [--json FILE]
Everything started is stopped on exit, SIGINT and SIGTERM (and dies with the harness:
PR_SET_PDEATHSIG). Exit status 0 when every node was Ready and every pod Running (and, with
--check, no agent exited and no error was counted).
"""

import argparse
import glob
import ctypes
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
CLK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
MUTATING = ("RunPodSandbox", "StopPodSandbox", "RemovePodSandbox", "CreateContainer",
            "StartContainer", "StopContainer", "RemoveContainer")

procs = []   # every Popen started, for the cleanup


def log(*a):
    print("# " + " ".join(str(x) for x in a), flush=True)


def die_with_parent():
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def spawn(argv, out, env=None):
    f = open(out, "ab")
    p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         preexec_fn=die_with_parent, env=env)
    f.close()
    procs.append(p)
    return p


# Every agent's pod cgroups under a root of its own (CGROUP_BASE/NODE): agents sharing one
# kubepods would list (and, as orphans, remove) each other's pod cgroups. Removed at the end.
CGROUP_BASE = os.environ.get("KLET_TEST_CGROUP_ROOT", "").rstrip("/") + \
    "/scale-%d" % os.getpid()


def cgroup_base_rm():
    """The run's cgroup root removed from every hierarchy (deepest first; empty by then)."""
    for h in glob.glob("/sys/fs/cgroup/*"):
        top = h + CGROUP_BASE
        if not os.path.isdir(top):
            continue
        for d, subs, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
            try:
                os.rmdir(d)
            except OSError:
                pass


def cleanup():
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM if getattr(p, "gentle", False) else
                              signal.SIGKILL)
            except OSError:
                pass
    deadline = time.time() + 10
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    procs.clear()
    cgroup_base_rm()


def on_signal(sig, frame):
    raise SystemExit(128 + sig)


# ---- /proc ----------------------------------------------------------------------------------

def cpu_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
        v = s[s.rindex(")") + 2:].split()
        return int(v[11]) + int(v[12])
    except (OSError, ValueError, IndexError):
        return None


def mem_kib(pid):
    r = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Rss", "Pss"):
                    r[k] = int(v.split()[0])
    except OSError:
        pass
    return r


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


# ---- the stand-in's control port and the runtime's control socket ----------------------------

class Ctl:
    def __init__(self, port):
        self.port = port

    def req(self, method, path, body=None, timeout=120):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            c.request(method, path, body=data,
                      headers={"Content-Type": "application/json"} if data else {})
            r = c.getresponse()
            d = r.read()
            try:
                return json.loads(d)
            except ValueError:
                return d.decode()
        finally:
            c.close()

    def get(self, path):
        return self.req("GET", path)


def cri_ctl(path, cmd):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(path)
    s.sendall(cmd.encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        d = s.recv(65536)
        if not d:
            break
        buf += d
    s.close()
    return json.loads(buf)


# ---- the fleet ------------------------------------------------------------------------------

class Fleet:
    def __init__(self, a):
        self.a = a
        self.dir = a.dir or tempfile.mkdtemp(prefix="klet-scale.")
        os.makedirs(self.dir, exist_ok=True)
        b = a.build
        self.kletd = os.path.join(b, "kletd")
        self.scalecri = os.path.join(b, "tests", "scale", "scalecri")
        self.agents = {}   # index -> Popen
        self.names = ["%s-%04d" % (a.prefix, i) for i in range(1, a.nodes + 1)]

    # -- start --

    def start_api(self):
        certs = os.path.join(self.dir, "certs")
        subprocess.run(["sh", os.path.join(TOP, "tests/apiserver/mkcerts.sh"), certs, "scale"],
                       check=True)
        state = os.path.join(self.dir, "as.state")
        p = spawn(["nice", "-n", str(self.a.nice), sys.executable,
                   os.path.join(TOP, "tests/apiserver/apiserver.py"), "--certs", certs,
                   "--state-file", state, "--bookmark-interval", str(self.a.bookmark),
                   "--max-streams", "1000", "--scale", str(self.a.history)],
                  os.path.join(self.dir, "as.log"))
        p.gentle = True
        self.api = p
        for _ in range(300):
            if os.path.exists(state):
                break
            if p.poll() is not None:
                raise SystemExit("the stand-in exited: see %s/as.log" % self.dir)
            time.sleep(0.1)
        port, cport = open(state).read().split()
        self.ctl = Ctl(int(cport))
        with open(os.path.join(self.dir, "kubeconfig"), "w") as f:
            f.write("""apiVersion: v1
kind: Config
clusters:
- name: standin
  cluster: {server: "https://127.0.0.1:%s", certificate-authority: "%s/ca.crt"}
users:
- name: node
  user: {client-certificate: "%s/node.crt", client-key: "%s/node.key"}
contexts:
- name: standin
  context: {cluster: standin, user: node}
current-context: standin
""" % (port, certs, certs, certs))

    def start_cri(self):
        d = os.path.join(self.dir, "cri")
        out = os.path.join(self.dir, "scalecri.out")
        p = spawn(["nice", "-n", str(self.a.nice), self.scalecri, "--dir", d, "--nodes",
                   str(self.a.nodes)], out)
        p.gentle = True
        self.cri = p
        self.cri_ctl = os.path.join(d, "control.sock")
        for _ in range(300):
            if "scalecri: ready" in open(out).read():
                return
            if p.poll() is not None:
                raise SystemExit("scalecri exited: see %s" % out)
            time.sleep(0.1)
        raise SystemExit("scalecri did not start")

    def start_agent(self, i):
        n = os.path.join(self.dir, "n", "%04d" % i)
        os.makedirs(n, exist_ok=True)
        p = spawn(["nice", "-n", str(self.a.nice), self.kletd, "--address", "127.0.0.1", "--port", "0", "--healthz-port", "0", "--root-dir", n + "/root",
                   "--pod-logs-dir", n + "/logs", "--hostname-override", self.names[i - 1],
                   "--cgroup-root", "%s/%s" % (CGROUP_BASE, self.names[i - 1]),
                   # The kubelet's hard thresholds without memory.available: that signal is
                   # the machine's, the same for every agent here, and its threshold notifier
                   # is registered on the machine's root memory cgroup, where the kernel
                   # serializes registrations (an RCU grace period each, under one lock):
                   # 1000 agents queued there in D state for minutes. A packing artifact (one
                   # kubelet per machine; kubemark's hollow nodes run no eviction manager).
                   "--eviction-hard", "nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%",
                   "--container-runtime-endpoint",
                   "unix://%s/cri/node-%04d.sock" % (self.dir, i),
                   "--kubeconfig", os.path.join(self.dir, "kubeconfig"),
                   "--podctl-socket", n + "/podctl.sock", "-v=%d" % self.a.v],
                  n + "/kletd.log")
        self.agents[i] = p

    def start_agents(self, which):
        t0 = time.time()
        for k, i in enumerate(which):
            self.start_agent(i)
            # at most --start-rate agents per second
            lag = t0 + (k + 1) / float(self.a.start_rate) - time.time()
            if lag > 0:
                time.sleep(lag)

    # -- observation --

    def nodes_ready(self):
        nodes = self.ctl.get("/objects?kind=nodes")
        ready = 0
        for n in nodes:
            for c in (n.get("status") or {}).get("conditions") or []:
                if c.get("type") == "Ready" and c.get("status") == "True":
                    ready += 1
        return ready

    def leases(self):
        return {l["metadata"]["name"]: l["spec"].get("renewTime", "")
                for l in self.ctl.get("/objects?kind=leases")}

    def dead_agents(self):
        return [i for i, p in self.agents.items() if p.poll() is not None]

    def wait(self, what, pred, timeout, every=2.0):
        t0 = time.time()
        last = None
        while time.time() - t0 < timeout:
            ok, info = pred()
            if info != last:
                log("%s: %s (%.0f s)" % (what, info, time.time() - t0))
                last = info
            if ok:
                return time.time() - t0
            dead = self.dead_agents()
            if dead:
                raise SystemExit("agents exited: %s (logs in %s/n/)" % (dead[:10], self.dir))
            time.sleep(every)
        return None

    def create_pods(self, per_node, tag):
        made = 0
        batch = []
        for idx, name in enumerate(self.names):
            for k in range(per_node):
                batch.append({"metadata": {"name": "%s-%s-%d" % (name, tag, k),
                                           "namespace": "default",
                                           "labels": {"app": "scale"}},
                              "spec": {"nodeName": name, "terminationGracePeriodSeconds": 1,
                                       "containers": [{"name": "c",
                                                       "image": "klet.local/busybox:1.35",
                                                       "command": ["sleep", "inf"]}]}})
            if len(batch) >= 500 or idx == len(self.names) - 1:
                made += self.ctl.req("POST", "/scale/pods", batch)["created"]
                batch = []
        return made

    def pods_state(self, since):
        return self.ctl.get("/scale/pods?since=%f" % since)

    def sample(self):
        r = {"t": time.time(), "agents": {}, "as": cpu_ticks(self.api.pid),
             "cri": cpu_ticks(self.cri.pid)}
        for i, p in self.agents.items():
            r["agents"][i] = cpu_ticks(p.pid)
        return r


def latency_summary(lat, names=None):
    xs = [v[0] for k, v in lat.items() if v[0] is not None and (names is None or v[1] in names)]
    return {"n": len(xs), "p50": pct(xs, 50), "p99": pct(xs, 99), "max": max(xs) if xs else None}


def steady(f, a, res, label):
    """A steady window: CPU and memory of every agent, API load per node per minute."""
    s0 = f.sample()
    st0 = f.ctl.get("/scale/stats?since=999999999999")
    seq0 = st0["seq"]
    cri0 = cri_ctl(f.cri_ctl, "stats")
    time.sleep(a.window)
    s1 = f.sample()
    st1 = f.ctl.get("/scale/stats?since=%d" % seq0)
    cri1 = cri_ctl(f.cri_ctl, "stats")
    dt = s1["t"] - s0["t"]
    mins = dt / 60.0
    n = len(f.agents)
    cpu = []
    for i in f.agents:
        a0, a1 = s0["agents"].get(i), s1["agents"].get(i)
        if a0 is not None and a1 is not None:
            cpu.append((a1 - a0) / CLK / dt * 1000.0)   # ms of CPU per second
    pss, rss = [], []
    for i, p in f.agents.items():
        m = mem_kib(p.pid)
        if "Pss" in m:
            pss.append(m["Pss"] / 1024.0)
            rss.append(m["Rss"] / 1024.0)
    by = {k: round(v / n / mins, 2) for k, v in sorted(st1["by"].items())}
    # Requests in each whole second of the window (the first and last are partial): how the
    # fleet's periodic calls spread over time. Agents started together whose periodic work
    # kept one phase would send their leases in the same second.
    secs = sorted(int(k) for k in st1["per_second"])
    whole = [st1["per_second"].get(str(t), st1["per_second"].get(t, 0))
             for t in range(secs[0] + 1, secs[-1])] if len(secs) > 2 else []
    out = {
        "window_s": round(dt, 1),
        "agent_cpu_ms_per_s": {"sum": round(sum(cpu), 1), "mean": round(sum(cpu) / len(cpu), 3),
                               "p50": round(pct(cpu, 50), 3), "max": round(max(cpu), 3)},
        "agent_pss_mib": {"sum": round(sum(pss), 1), "mean": round(sum(pss) / len(pss), 2),
                          "max": round(max(pss), 2)},
        "agent_rss_mib": {"mean": round(sum(rss) / len(rss), 2), "max": round(max(rss), 2)},
        "api_requests_per_node_per_min": round(st1["requests"] / n / mins, 2),
        "api_requests_per_s": {"mean": round(sum(whole) / len(whole), 1) if whole else None,
                               "p99": pct(whole, 99) if whole else None,
                               "max": max(whole) if whole else None},
        "api_by_verb_resource_per_node_per_min": by,
        "api_bytes_in_per_node_per_min": round((st1["bytes_in"] - st0["bytes_in"]) / n / mins),
        "api_bytes_out_per_node_per_min": round((st1["bytes_out"] - st0["bytes_out"]) / n / mins),
        "watches": st1["open_watches"],
        "connections": st1["open_connections"],
        "codes": st1["codes"],
        "standin_cpu_ms_per_s": round((s1["as"] - s0["as"]) / CLK / dt * 1000.0, 1),
        "standin_pss_mib": round(mem_kib(f.api.pid).get("Pss", 0) / 1024.0, 1),
        "scalecri_cpu_ms_per_s": round((s1["cri"] - s0["cri"]) / CLK / dt * 1000.0, 1),
        "runtime_calls_per_node_per_min": {k: round((cri1[k] - cri0[k]) / n / mins, 2)
                                           for k in cri1 if cri1[k] != cri0[k]},
    }
    res[label] = out
    log("%s: %s" % (label, json.dumps(out)))
    return out


def all_leases_after(f, t_iso_floor):
    ls = f.leases()
    ok = sum(1 for v in ls.values() if v and v > t_iso_floor)
    return ok == len(f.names), "%d/%d leases renewed" % (ok, len(f.names))


def iso_now():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)


def count_lists(by):
    return sum(v for k, v in by.items() if k.startswith("LIST "))


def fault_restart(f, a, res):
    r = {}
    for compact in (False, True):
        seq0 = f.ctl.get("/scale/stats?since=999999999999")["seq"]
        f.ctl.get("/down?mode=refuse")
        time.sleep(a.restart_down_s)
        if compact:
            f.ctl.get("/compact")
        floor = iso_now()
        f.ctl.get("/up")
        t = f.wait("restart%s: leases" % (" (compacted)" if compact else ""),
                   lambda: all_leases_after(f, floor), a.timeout)
        time.sleep(a.settle)
        st = f.ctl.get("/scale/stats?since=%d" % seq0)
        key = "after_compaction" if compact else "same_store"
        r[key] = {"lists": count_lists(st["by"]), "agents": len(f.agents),
                  "seconds_until_all_leases_renewed": round(t, 1) if t else None,
                  "watches": f.ctl.get("/scale/stats?since=999999999999")["open_watches"],
                  "requests_by": {k: v for k, v in st["by"].items()
                                  if not k.startswith("PUT leases")}}
    res["fault_restart"] = r
    log("fault restart: %s" % json.dumps(r))


def fault_outage(f, a, res):
    running0 = cri_ctl(f.cri_ctl, "counts")["running"]
    seq0 = f.ctl.get("/scale/stats?since=999999999999")["seq"]
    f.ctl.get("/down?mode=blackhole")
    t_down = time.time()
    while time.time() - t_down < a.outage_s:
        time.sleep(2)
        if f.dead_agents():
            break
    alive = len(f.agents) - len(f.dead_agents())
    running1 = cri_ctl(f.cri_ctl, "counts")["running"]
    floor = iso_now()
    f.ctl.get("/up")
    t_up = time.time()
    t = f.wait("outage: leases", lambda: all_leases_after(f, floor), a.timeout)
    time.sleep(max(0, a.outage_after_s - (time.time() - t_up)))
    st = f.ctl.get("/scale/stats?since=%d" % seq0)
    per_s = {int(k) - int(t_up): v for k, v in st["per_second"].items() if int(k) >= int(t_up)}
    curve = [(s, per_s.get(s, 0)) for s in range(0, max(per_s) + 1 if per_s else 0)]
    rates = [v for _, v in curve]
    r = {"outage_s": a.outage_s, "agents_alive": alive, "agents": len(f.agents),
         "containers_running_before_after": [running0, running1],
         "seconds_until_all_leases_renewed": round(t, 1) if t else None,
         "requests_per_s_after_up": {"max": max(rates) if rates else 0,
                                     "max_per_agent": round(max(rates) / len(f.agents), 3)
                                     if rates else 0,
                                     "first_10s": [v for _, v in curve[:10]],
                                     "curve": curve},
         "lists": count_lists(st["by"])}
    res["fault_outage"] = r
    log("fault outage: %s" % json.dumps({k: v for k, v in r.items()
                                          if k != "requests_per_s_after_up"}))
    log("fault outage: requests/s after up: %s" % [v for _, v in curve])


def fault_kill(f, a, res):
    half = [i for i in sorted(f.agents) if i % 2 == 0]
    c0 = cri_ctl(f.cri_ctl, "stats")
    for i in half:
        f.agents[i].kill()
    for i in half:
        f.agents[i].wait()
    floor = iso_now()
    t0 = time.time()
    f.start_agents(half)

    def renewed():
        ls = f.leases()
        ok = sum(1 for i in half if ls.get(f.names[i - 1], "") > floor)
        return ok == len(half), "%d/%d restarted agents renewed their lease" % (ok, len(half))
    t = f.wait("kill: leases", renewed, a.timeout)
    time.sleep(a.settle)
    c1 = cri_ctl(f.cri_ctl, "stats")
    calls = {k: c1[k] - c0[k] for k in c1 if c1[k] != c0[k]}
    r = {"killed": len(half), "seconds_until_renewed": round(t, 1) if t else None,
         "runtime_calls": calls, "mutating_calls": sum(calls.get(k, 0) for k in MUTATING),
         "containers_running": cri_ctl(f.cri_ctl, "counts")["running"],
         "since_restart_s": round(time.time() - t0, 1)}
    res["fault_kill"] = r
    log("fault kill: %s" % json.dumps(r))


def fault_slow(f, a, res):
    n = len(f.names)
    k = max(1, n // 10)
    first = n - k + 1
    cri_ctl(f.cri_ctl, "delay %d %d %d" % (first, n, a.slow_ms))
    slow = set(f.names[first - 1:])
    since = time.time()
    f.create_pods(1, "slow")
    want = n

    def done():
        lat = f.pods_state(since)["lat"]
        ok = sum(1 for v in lat.values() if v[0] is not None)
        return ok >= want, "%d/%d new pods Running" % (ok, want)
    t = f.wait("slow: new pods", done, a.timeout)
    lat = f.pods_state(since)["lat"]
    cri_ctl(f.cri_ctl, "delay %d %d 0" % (first, n))
    fast = set(f.names) - slow
    r = {"slow_nodes": k, "slow_ms": a.slow_ms, "seconds_all_running": round(t, 1) if t else None,
         "fast_latency": latency_summary(lat, fast), "slow_latency": latency_summary(lat, slow)}
    res["fault_slow"] = r
    log("fault slow: %s" % json.dumps(r))


def churn(f, a, res):
    """A steady window with churn: every 10 s one pod per node is deleted and one created."""
    r = {}
    seq0 = f.ctl.get("/scale/stats?since=999999999999")["seq"]
    s0 = f.sample()
    t0 = time.time()
    k = 0
    while time.time() - t0 < a.churn_window:
        if k > 0:
            for name in f.names:
                f.ctl.get("/pods/default/%s-c-%d?method=DELETE" % (name, k - 1))
        batch = [{"metadata": {"name": "%s-c-%d" % (name, k), "namespace": "default"},
                  "spec": {"nodeName": name, "terminationGracePeriodSeconds": 1,
                           "containers": [{"name": "c", "image": "klet.local/busybox:1.35",
                                           "command": ["sleep", "inf"]}]}}
                 for name in f.names]
        f.ctl.req("POST", "/scale/pods", batch)
        k += 1
        time.sleep(max(0, t0 + 10 * k - time.time()))
    dt = time.time() - t0
    s1 = f.sample()
    st = f.ctl.get("/scale/stats?since=%d" % seq0)
    n = len(f.names)
    r["window_s"] = round(dt, 1)
    # Who worked meanwhile (1.0 = one core): a stand-in near 1.0 is saturated (one thread),
    # and answers late, leases included.
    r["cpu_cores"] = {
        "standin": round((s1["as"] - s0["as"]) / CLK / dt, 2),
        "agents": round(sum(s1["agents"][i] - s0["agents"][i] for i in s0["agents"]
                            if s0["agents"][i] is not None and
                            s1["agents"].get(i) is not None) / CLK / dt, 2)}
    r["pods_replaced_per_node_per_min"] = round(k / (dt / 60.0), 2)
    r["api_requests_per_node_per_min"] = round(st["requests"] / n / (dt / 60.0), 2)
    r["api_by_verb_resource_per_node_per_min"] = {
        kk: round(v / n / (dt / 60.0), 2) for kk, v in sorted(st["by"].items())
        if not kk.startswith("POST /scale")}
    res["churn"] = r
    log("churn: %s" % json.dumps(r))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--pods", type=int, default=30, help="pods per node")
    ap.add_argument("--window", type=float, default=60, help="steady window, seconds")
    ap.add_argument("--churn-window", type=float, default=0,
                    help="a window with churn (one pod per node replaced every 10 s)")
    ap.add_argument("--faults", default="", help="restart,outage,kill,slow")
    ap.add_argument("--outage-s", type=float, default=120)
    ap.add_argument("--outage-after-s", type=float, default=60)
    ap.add_argument("--restart-down-s", type=float, default=5)
    ap.add_argument("--slow-ms", type=int, default=2000)
    ap.add_argument("--settle", type=float, default=15, help="seconds after a fault")
    ap.add_argument("--timeout", type=float, default=1800, help="per phase")
    ap.add_argument("--start-rate", type=float, default=50, help="agents started per second")
    ap.add_argument("--bookmark", type=float, default=60, help="stand-in bookmark interval")
    ap.add_argument("--history", type=int, default=200000, help="stand-in event history")
    ap.add_argument("--prefix", default="scale")
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("-v", type=int, default=0, help="kletd verbosity")
    ap.add_argument("--build", default=os.environ.get("top_builddir") or
                    os.path.join(TOP, "build"))
    ap.add_argument("--dir", help="work directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--check", action="store_true",
                    help="fail on any agent exit, non-2xx/409 answer or kletd error line")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    f = Fleet(a)
    res = {"nodes": a.nodes, "pods_per_node": a.pods}
    ok = False
    try:
        log("dir %s, %d nodes x %d pods" % (f.dir, a.nodes, a.pods))
        f.start_api()
        f.start_cri()
        t0 = time.time()
        f.start_agents(range(1, a.nodes + 1))
        t = f.wait("nodes Ready", lambda: (lambda r: (r == a.nodes, "%d/%d Ready" %
                                                      (r, a.nodes)))(f.nodes_ready()),
                   a.timeout)
        if t is None:
            raise SystemExit("not every node became Ready")
        res["seconds_all_nodes_ready"] = round(time.time() - t0, 1)
        since = time.time()
        s0 = f.sample()
        made = f.create_pods(a.pods, "p")
        want = a.nodes * a.pods
        log("created %d pods in %.1f s" % (made, time.time() - since))

        def running():
            lat = f.pods_state(since)["lat"]
            n = sum(1 for v in lat.values() if v[0] is not None)
            return n >= want, "%d/%d pods Running" % (n, want)
        t = f.wait("pods Running", running, a.timeout, every=3.0)
        if t is None:
            raise SystemExit("not every pod became Running")
        res["seconds_all_pods_running"] = round(t, 1)
        s1 = f.sample()
        dt = s1["t"] - s0["t"]
        # Who worked during the start: CPU seconds per second of each part (1.0 = one core).
        res["startup_cpu_cores"] = {
            "standin": round((s1["as"] - s0["as"]) / CLK / dt, 2),
            "scalecri": round((s1["cri"] - s0["cri"]) / CLK / dt, 2),
            "agents": round(sum(s1["agents"][i] - s0["agents"][i] for i in s0["agents"]
                                if s0["agents"][i] is not None and
                                s1["agents"].get(i) is not None) / CLK / dt, 2)}
        res["pod_startup_latency_s"] = latency_summary(f.pods_state(since)["lat"])
        res["containers_running"] = cri_ctl(f.cri_ctl, "counts")["running"]
        log("all %d pods Running after %.1f s; latency %s" %
            (want, t, res["pod_startup_latency_s"]))
        time.sleep(a.settle)
        if a.window > 0:
            steady(f, a, res, "steady")
        if a.churn_window > 0:
            churn(f, a, res)
        for fault in [x for x in a.faults.split(",") if x]:
            {"restart": fault_restart, "outage": fault_outage, "kill": fault_kill,
             "slow": fault_slow}[fault](f, a, res)
        res["agents_exited"] = len(f.dead_agents())
        ok = res["agents_exited"] == 0
        if a.check:
            bad = {c: n for c, n in f.ctl.get("/scale/stats?since=0")["codes"].items()
                   if not (c.startswith("2") or c in ("409", "0"))}
            errs = []
            for i in f.agents:
                lf = os.path.join(f.dir, "n", "%04d" % i, "kletd.log")
                with open(lf, errors="replace") as fh:
                    errs += [l for l in fh if l.startswith("E")]
            res["bad_codes"] = bad
            res["kletd_error_lines"] = len(errs)
            for l in errs[:5]:
                log("kletd error: " + l.rstrip())
            ok = ok and not bad and not errs
    finally:
        cleanup()
        if a.json:
            with open(a.json, "w") as fh:
                json.dump(res, fh, indent=1)
        print(json.dumps(res, indent=1))
        if not a.keep and not a.dir:
            shutil.rmtree(f.dir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
