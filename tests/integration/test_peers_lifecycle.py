#!/usr/bin/env python3
"""Drives one pod through a CRI runtime with a real gRPC client (python3-grpcio):
RunPodSandbox -> CreateContainer -> StartContainer -> ExecSync -> StopContainer ->
RemoveContainer -> StopPodSandbox -> RemovePodSandbox, plus status, filters and logs.

  test_peers_lifecycle.py SOCKET host|pod LOGDIR [--reach] [--cgroup-parent P]
  test_peers_lifecycle.py SOCKET fake-conventions LOGDIR   (fakecri only: its conventions)

Prints one "ok - NAME" / "not ok - NAME: why" line per check (read by test_peers.sh).
--reach: also serve HTTP from a busybox container and connect to the pod IP from here.
"""
import os
import re
import socket
import sys
import time

sys.dont_write_bytecode = True
top = os.environ.get("top_srcdir") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "..")
sys.path.insert(0, os.path.join(top, "tests", "fakecri"))
import grpc  # noqa: E402

import client  # noqa: E402

BUSYBOX = "klet.local/busybox:1.35"


def main(argv):
    sock, mode, logdir = argv[1], argv[2], argv[3]
    if mode == "fake-conventions":
        return conventions(sock)
    reach = "--reach" in argv
    cgparent = ""
    if "--cgroup-parent" in argv:
        cgparent = argv[argv.index("--cgroup-parent") + 1]
    c = client.Client(sock, 60)
    results = []

    def check(name, cond, why=""):
        results.append(bool(cond))
        print(("ok - %s" if cond else "not ok - %s" + (": " + str(why) if why else "")) % name,
              flush=True)
        return cond

    def wait(fn, secs=20):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            v = fn()
            if v:
                return v
            time.sleep(0.1)
        return fn()

    v = c.call("Version", {"version": "v1"})
    check("%s: Version speaks runtime.v1" % mode, v["runtime_api_version"] == "v1", v)
    st = c.call("Status", {})
    conds = {x["type"]: x["status"] for x in st["status"]["conditions"]}
    check("%s: Status RuntimeReady" % mode, conds.get("RuntimeReady") is True, conds)
    im = c.call("ImageStatus", {"image": {"image": BUSYBOX}})
    check("%s: ImageStatus finds %s" % (mode, BUSYBOX), im.get("image", {}).get("id", "")
          .startswith("sha256:"), im)
    im = c.call("ImageStatus", {"image": {"image": "klet.local/absent:0"}})
    check("%s: ImageStatus of an absent image is empty" % mode, not im.get("image", {}).get("id"))
    try:
        c.call("PullImage", {"image": {"image": "klet.local/absent:0"},
                             "auth": {"username": "u", "password": "p"}}, timeout=30)
        check("%s: PullImage of an unknown image fails" % mode, False, "it succeeded")
    except grpc.RpcError as e:
        check("%s: PullImage of an unknown image fails" % mode, True)
        print("# PullImage error: %s %s" % (e.code().name, e.details()[:120]))
    fs = c.call("ImageFsInfo", {})
    check("%s: ImageFsInfo has a filesystem" % mode, len(fs["image_filesystems"]) >= 1, fs)

    uid = "uid-peers-%s-%d" % (mode, os.getpid())
    labels = {"io.kubernetes.pod.name": "peers-" + mode, "io.kubernetes.pod.namespace": "default",
              "io.kubernetes.pod.uid": uid}
    pod_logdir = os.path.join(logdir, "default_peers-%s_%s" % (mode, uid))
    os.makedirs(pod_logdir, exist_ok=True)
    cfg = {"metadata": {"name": "peers-" + mode, "namespace": "default", "uid": uid, "attempt": 0},
           "log_directory": pod_logdir, "labels": labels,
           "annotations": {"kubernetes.io/config.source": "file"},
           "linux": {"security_context": {"namespace_options": {
               "network": "NODE" if mode == "host" else "POD", "pid": "CONTAINER", "ipc": "POD"}}}}
    if cgparent:
        cfg["linux"]["cgroup_parent"] = cgparent
    if mode != "host":
        cfg["hostname"] = "peers-pod"
    t0 = time.monotonic()
    sb = c.call("RunPodSandbox", {"config": cfg})["pod_sandbox_id"]
    print("# RunPodSandbox took %.0f ms" % ((time.monotonic() - t0) * 1000))
    check("%s: RunPodSandbox returns an id" % mode, len(sb) >= 12, sb)
    ps = c.call("PodSandboxStatus", {"pod_sandbox_id": sb})["status"]
    check("%s: sandbox READY" % mode, ps["state"] == "SANDBOX_READY", ps["state"])
    check("%s: sandbox labels and annotations kept" % mode,
          all(ps["labels"].get(k) == v for k, v in labels.items()) and
          ps["annotations"].get("kubernetes.io/config.source") == "file", ps)
    ip = ps.get("network", {}).get("ip", "")
    if mode == "host":
        check("host: host-network sandbox has no IP", ip == "", ip)
    else:
        check("pod: pod-network sandbox has an IP", re.fullmatch(r"\d+\.\d+\.\d+\.\d+", ip), ip)
    lst = c.call("ListPodSandbox", {"filter": {"label_selector": {"io.kubernetes.pod.uid": uid}}})
    check("%s: ListPodSandbox label filter finds it" % mode,
          [x["id"] for x in lst["items"]] == [sb], lst)
    lst = c.call("ListPodSandbox", {"filter": {"id": sb, "state": {"state": "SANDBOX_NOTREADY"}}})
    check("%s: ListPodSandbox state filter excludes it" % mode, lst["items"] == [], lst)

    def create(name, cmd, extra=None):
        cc = {"metadata": {"name": name, "attempt": 0}, "image": {"image": BUSYBOX},
              "command": cmd, "log_path": "%s/0.log" % name,
              "labels": dict(labels, **{"io.kubernetes.container.name": name}),
              "annotations": {"io.kubernetes.container.hash": "1a2b3c4d",
                              "io.kubernetes.container.restartCount": "0"},
              "envs": [{"key": "KLET_TEST", "value": "1"}]}
        if extra:
            cc.update(extra)
        return c.call("CreateContainer", {"pod_sandbox_id": sb, "config": cc,
                                          "sandbox_config": cfg})["container_id"]

    def status(cid):
        return c.call("ContainerStatus", {"container_id": cid})["status"]

    cid = create("main", ["sh", "-c", "echo started; exec sleep 3600"])
    check("%s: CreateContainer -> CREATED" % mode, status(cid)["state"] == "CONTAINER_CREATED")
    c.call("StartContainer", {"container_id": cid})
    s = status(cid)
    check("%s: StartContainer -> RUNNING" % mode, s["state"] == "CONTAINER_RUNNING", s["state"])
    check("%s: container labels/annotations kept" % mode,
          s["labels"].get("io.kubernetes.container.name") == "main" and
          s["annotations"].get("io.kubernetes.container.hash") == "1a2b3c4d", s)
    lc = c.call("ListContainers", {"filter": {"pod_sandbox_id": sb,
                                              "state": {"state": "CONTAINER_RUNNING"}}})
    check("%s: ListContainers sandbox+state filter" % mode,
          [x["id"] for x in lc["containers"]] == [cid], lc)
    r = c.call("ExecSync", {"container_id": cid, "cmd": ["sh", "-c", "echo hi; exit 3"],
                            "timeout": 10})
    import base64
    out = base64.b64decode(r["stdout"]).decode()
    check("%s: ExecSync exit code 3 and stdout" % mode, r["exit_code"] == 3 and out == "hi\n", r)
    log = s.get("log_path") or os.path.join(pod_logdir, "main/0.log")
    got = wait(lambda: os.path.exists(log) and re.search(r"^\S+ stdout F ", open(log).read(), re.M))
    check("%s: CRI-format log at %s" % (mode, log), got)

    eid = create("exits", ["sh", "-c", "exit 7"])
    c.call("StartContainer", {"container_id": eid})
    es = wait(lambda: (lambda x: x if x["state"] == "CONTAINER_EXITED" else None)(status(eid)))
    check("%s: exiting container EXITED, code 7, reason Error" % mode,
          es and es["exit_code"] == 7 and es["reason"] == "Error" and int(es["finished_at"]) > 0, es)

    if reach and mode == "pod":
        hid = create("web", ["httpd", "-f", "-p", "8080", "-h", "/etc"])
        c.call("StartContainer", {"container_id": hid})

        def connect():
            try:
                with socket.create_connection((ip, 8080), timeout=1) as so:
                    so.sendall(b"GET /passwd HTTP/1.0\r\n\r\n")
                    return b"root:" in so.recv(4096)
            except OSError:
                return False
        check("pod: host reaches busybox httpd at %s:8080 over CNI" % ip, wait(connect, 10))

    t0 = time.monotonic()
    c.call("StopContainer", {"container_id": cid, "timeout": 2})
    s = status(cid)
    check("%s: StopContainer -> EXITED 137/143" % mode,
          s["state"] == "CONTAINER_EXITED" and s["exit_code"] in (137, 143), s)
    print("# StopContainer took %.0f ms" % ((time.monotonic() - t0) * 1000))
    c.call("RemoveContainer", {"container_id": cid})
    lc = c.call("ListContainers", {"filter": {"id": cid}})
    check("%s: RemoveContainer removes it" % mode, lc["containers"] == [], lc)
    c.call("RemoveContainer", {"container_id": cid})
    check("%s: RemoveContainer again is fine (idempotent)" % mode, True)
    c.call("StopPodSandbox", {"pod_sandbox_id": sb})
    ps = c.call("PodSandboxStatus", {"pod_sandbox_id": sb})["status"]
    check("%s: StopPodSandbox -> NOTREADY" % mode, ps["state"] == "SANDBOX_NOTREADY", ps["state"])
    c.call("RemovePodSandbox", {"pod_sandbox_id": sb})
    lst = c.call("ListPodSandbox", {"filter": {"id": sb}})
    check("%s: RemovePodSandbox removes it and its containers" % mode,
          lst["items"] == [] and c.call("ListContainers", {"filter": {"pod_sandbox_id": sb}})
          ["containers"] == [], lst)
    try:
        c.call("ContainerStatus", {"container_id": eid})
        check("%s: ContainerStatus of a removed container is NOT_FOUND" % mode, False)
    except grpc.RpcError as e:
        check("%s: ContainerStatus of a removed container is NOT_FOUND" % mode,
              e.code() == grpc.StatusCode.NOT_FOUND, e.code())
    c.close()
    return 0 if all(results) else 1


def conventions(sock):
    """The fake's documented conventions (tests/fakecri/README), seen from a client."""
    sys.path.insert(0, os.path.join(top, "tests", "fakecri"))
    import ctl
    ctlsock = sock + ".ctl"
    c = client.Client(sock, 30)
    ok = []

    def check(name, cond, why=""):
        ok.append(bool(cond))
        print(("ok - fake: %s" % name) if cond else ("not ok - fake: %s: %s" % (name, why)),
              flush=True)

    cfg = {"metadata": {"name": "conv", "namespace": "default", "uid": "uid-conv"}}
    sb = c.call("RunPodSandbox", {"config": cfg})["pod_sandbox_id"]

    def run(name, cmd, envs=()):
        cid = c.call("CreateContainer", {"pod_sandbox_id": sb, "config": {
            "metadata": {"name": name}, "image": {"image": BUSYBOX},
            "command": cmd, "envs": [{"key": k, "value": v} for k, v in envs]}})["container_id"]
        c.call("StartContainer", {"container_id": cid})
        return cid

    def st(cid):
        return c.call("ContainerStatus", {"container_id": cid})["status"]

    def exited(cid, secs=5):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            s = st(cid)
            if s["state"] == "CONTAINER_EXITED":
                return s
            time.sleep(0.05)
        return st(cid)

    s = exited(run("fe", ["fake-exit", "5", "100"]))
    check("fake-exit 5 100 -> EXITED 5 Error", s["exit_code"] == 5 and s["reason"] == "Error", s)
    s = exited(run("env", ["sleep", "inf"], [("FAKE_EXIT_CODE", "0"), ("FAKE_EXIT_AFTER_MS", "50")]))
    check("FAKE_EXIT_CODE=0 -> EXITED 0 Completed", s["exit_code"] == 0 and
          s["reason"] == "Completed", s)
    s = exited(run("oom", ["fake-oom", "10"]))
    check("fake-oom -> 137 OOMKilled", s["exit_code"] == 137 and s["reason"] == "OOMKilled", s)
    s = exited(run("shx", ["sh", "-c", "sleep 0.1; exit 4"]))
    check("sh -c 'sleep 0.1; exit 4' -> 4", s["exit_code"] == 4, s)
    try:
        run("fs", ["fake-fail-start", "boom"])
        check("fake-fail-start fails StartContainer", False, "started")
    except grpc.RpcError as e:
        s = st([x["id"] for x in c.call("ListContainers", {})["containers"]
                if x["metadata"]["name"] == "fs"][0])
        check("fake-fail-start fails StartContainer, 128 StartError",
              "boom" in e.details() and s["exit_code"] == 128 and s["reason"] == "StartError", s)
    it = run("it", ["fake-ignore-term"])
    t0 = time.monotonic()
    c.call("StopContainer", {"container_id": it, "timeout": 1})
    s = st(it)
    check("fake-ignore-term: StopContainer waits the timeout, then 137",
          time.monotonic() - t0 >= 0.9 and s["exit_code"] == 137, s)
    lr = run("long", ["sleep", "inf"])
    r = c.call("ExecSync", {"container_id": lr, "cmd": ["fake-exec", "2", "out", "err"]})
    check("ExecSync fake-exec 2 out err", r["exit_code"] == 2, r)
    r = c.call("ExecSync", {"container_id": lr, "cmd": ["sh", "-c", "exit 3"]})
    check("ExecSync sh -c 'exit 3' -> 3", r["exit_code"] == 3, r)
    try:
        c.call("ExecSync", {"container_id": lr, "cmd": ["sleep", "5"], "timeout": 1})
        check("ExecSync past its timeout -> DEADLINE_EXCEEDED", False, "answered")
    except grpc.RpcError as e:
        check("ExecSync past its timeout -> DEADLINE_EXCEEDED",
              e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, e.code())
    ctl.send(ctlsock, {"cmd": "exec_result", "container": "long", "exit_code": 9, "count": 1})
    r = c.call("ExecSync", {"container_id": lr, "cmd": ["true"]})
    check("control exec_result scripts ExecSync", r["exit_code"] == 9, r)
    rep = ctl.send(ctlsock, {"cmd": "container_exit", "name": "long", "code": 42})[0]
    s = st(lr)
    check("control container_exit", rep["ok"] and s["exit_code"] == 42, s)
    ctl.send(ctlsock, {"cmd": "images", "pullable": ["reg.example/app:1"]},
             {"cmd": "require_auth", "image": "reg.example/app:1", "username": "u",
              "password": "p"})
    try:
        c.call("PullImage", {"image": {"image": "reg.example/app:1"}})
        check("PullImage without credentials -> 401", False, "pulled")
    except grpc.RpcError as e:
        check("PullImage without credentials -> 401", "401" in e.details(), e.details())
    r = c.call("PullImage", {"image": {"image": "reg.example/app:1"},
                             "auth": {"auth": "dTpw"}})  # base64 "u:p"
    check("PullImage with AuthConfig.auth", r["image_ref"].startswith("sha256:"), r)
    req = ctl.send(ctlsock, {"cmd": "requests", "method": "PullImage", "n": 1})[0]
    check("control requests shows the AuthConfig sent",
          req["requests"][0]["auth"]["auth"] == "dTpw", req)
    ctl.send(ctlsock, {"cmd": "sandbox_notready", "id": sb})
    ps = c.call("PodSandboxStatus", {"pod_sandbox_id": sb})["status"]
    check("control sandbox_notready", ps["state"] == "SANDBOX_NOTREADY", ps["state"])
    c.call("RemovePodSandbox", {"pod_sandbox_id": sb})
    rep = ctl.send(ctlsock, {"cmd": "populate", "pods": 100, "containers": 10})[0]
    n = len(c.call_pb("ListContainers", {}).containers)
    check("populate 100x10 -> ListContainers 1000", n == 1000, n)
    ctl.send(ctlsock, {"cmd": "reset"}, {"cmd": "clear_faults"})

    # GOAWAY with a chosen last-stream-id: streams above it are retried by grpcio on a
    # new connection; the stream at it fails cleanly when the connection closes.
    import threading
    c.call("Version")
    ctl.send(ctlsock, {"cmd": "fault", "method": "ListContainers", "hang": True, "count": 3},
             {"cmd": "reset_calls"})
    res = {}

    def call(i):
        try:
            c.call_pb("ListContainers", {}, timeout=20)
            res[i] = "OK"
        except grpc.RpcError as e:
            res[i] = e.code().name
    ths = [threading.Thread(target=call, args=(i,)) for i in range(3)]
    for t in ths:
        t.start()

    def three_open():  # the server runs all three (each took its hang), the proxy saw them
        conns = ctl.send(ctlsock, {"cmd": "connections"})[0]["connections"]
        calls = ctl.send(ctlsock, {"cmd": "calls"})[0]["counts"].get("ListContainers", 0)
        return calls >= 3 and any(len(x["open"]) >= 3 for x in conns)
    end = time.monotonic() + 10
    while not three_open() and time.monotonic() < end:
        time.sleep(0.05)
    time.sleep(0.05)  # from recording the call to taking the fault
    rep = ctl.send(ctlsock, {"cmd": "h2_goaway", "last_stream_id": "min_open",
                             "close_after_ms": 300})[0]
    for t in ths:
        t.join()
    # (grpcio may also retry the stream at last-stream-id once the connection closes)
    vals = sorted(res.values())
    check("h2_goaway: streams above last-stream-id are retried on a new connection",
          rep["ok"] and vals.count("OK") >= 2 and set(vals) <= {"OK", "UNAVAILABLE"},
          (rep, res))
    c.close()
    return 0 if all(ok) else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except grpc.RpcError as e:
        print("not ok - unexpected RPC error: %s %s" % (e.code().name, e.details()))
        sys.exit(1)
