#!/usr/bin/env python3
"""The same cases as bench_cri.c with a Python grpcio client: bench_cri.py SOCK [SECONDS]
Prints "case METHOD CONC calls N rate R/s p50 US p99 US errors N" and "rss_kb N ..." lines."""
import os
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "fakecri"))
sys.dont_write_bytecode = True

import grpc  # noqa: E402
import cripb  # noqa: E402

pb, pb_grpc = cripb.load()


def rss():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line[:5]] = int(line.split()[1])
    return out.get("VmRSS", -1), out.get("VmHWM", -1)


def run_case(stub, method, conc, seconds, cid):
    if method == "ListContainers":
        fn, req = stub.ListContainers, pb.ListContainersRequest()
    else:
        fn, req = stub.ContainerStatus, pb.ContainerStatusRequest(container_id=cid)
    lat = []
    errors = [0]
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def worker():
        mine = []
        while time.monotonic() < end:
            t0 = time.monotonic()
            try:
                fn(req, timeout=30)
                mine.append((time.monotonic() - t0) * 1e6)
            except grpc.RpcError:
                errors[0] += 1
        with lock:
            lat.extend(mine)

    t0 = time.monotonic()
    ts = [threading.Thread(target=worker) for _ in range(conc)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    secs = time.monotonic() - t0
    lat.sort()
    n = len(lat)
    print("case %s %d calls %d rate %.0f/s p50 %d us p99 %d us errors %d" % (
        method, conc, n, n / secs, lat[n // 2] if n else -1,
        lat[int(n * 0.99)] if n else -1, errors[0]), flush=True)


def main(argv):
    sock = argv[1]
    seconds = float(argv[2]) if len(argv) > 2 else 3
    r0, _ = rss()
    chan = grpc.insecure_channel("unix:" + sock, options=[
        ("grpc.max_receive_message_length", 16 << 20)])
    stub = pb_grpc.RuntimeServiceStub(chan)
    resp = stub.ListContainers(pb.ListContainersRequest(), timeout=30)
    r1, h1 = rss()
    print("rss_kb %d hwm_kb %d start_rss_kb %d containers %d" % (
        r1, h1, r0, len(resp.containers)), flush=True)
    cid = resp.containers[0].id
    for method in ("ListContainers", "ContainerStatus"):
        for conc in (1, 16):
            run_case(stub, method, conc, seconds, cid)
    chan.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
