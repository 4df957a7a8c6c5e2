#!/usr/bin/env python3
"""Python grpcio side of the CRI client benchmarks: bench.py SOCKET METHOD [N [JSON]]

Makes N (default 2000) sequential unary calls of METHOD (e.g. ListContainers,
ContainerStatus) with one channel, after 50 warm-up calls, and prints one line:
  METHOD calls=N secs=S rate=R/s p50_us=X p99_us=Y
JSON is the request; for ContainerStatus without one, the first listed container is used.
"""
import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client  # noqa: E402


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    sock, method = argv[1], argv[2]
    n = int(argv[3]) if len(argv) > 3 else 2000
    c = client.Client(sock, 30)
    if len(argv) > 4:
        req = json.loads(argv[4])
    elif method == "ContainerStatus":
        cs = c.call_pb("ListContainers", {}).containers
        if not cs:
            print("bench: no container to ask about", file=sys.stderr)
            return 1
        req = {"container_id": cs[0].id}
    else:
        req = {}
    for _ in range(50):
        c.call_pb(method, req)
    lat = []
    t0 = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        c.call_pb(method, req)
        lat.append(time.perf_counter() - t)
    secs = time.perf_counter() - t0
    lat.sort()
    print("%s calls=%d secs=%.3f rate=%.0f/s p50_us=%.0f p99_us=%.0f" % (
        method, n, secs, n / secs, lat[len(lat) // 2] * 1e6, lat[min(len(lat) - 1,
                                                                      int(len(lat) * 0.99))] * 1e6))
    c.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
