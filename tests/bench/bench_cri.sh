#!/bin/sh
# Benchmark of the CRI client against the Python fake CRI holding 1000 running containers:
# calls/s and p50/p99 latency of ListContainers (all 1000) and ContainerStatus, one call at
# a time and 16 in flight, from kletd's C client and from a Python grpcio client in the same
# run (ratio C/Python), and the C client's resident memory with 1000 containers listed.
#   sh tests/bench/bench_cri.sh [SECONDS_PER_CASE]
# Builds an optimized, sanitizer-free tree in /tmp/klet-build-cri-bench (KLET_BENCH_BUILD).
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-3}
b=${KLET_BENCH_BUILD:-/tmp/klet-build-cri-bench}
mkdir -p "$b"
KLET_CONFIGURE_FLAGS="--disable-werror" sh "$top/contrib/dev-build.sh" "${b#/tmp/klet-build-}" \
	bench-cri-bin >/dev/null
bin=$b/tests/bench/bench_cri
py=${KLET_PYTHON:-/usr/bin/python3}
d=$(mktemp -d /tmp/klet-bench-cri.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT INT TERM
sock=$d/cri.sock
"$top/tests/fakecri/run.sh" --socket "$sock" --no-proxy --populate 100x10 >"$d/fake.out" 2>&1 &
pid=$!
n=0
until grep -q "fakecri: ready" "$d/fake.out"; do
	n=$((n + 1)); [ $n -lt 600 ] || { cat "$d/fake.out"; exit 1; }
	kill -0 "$pid" 2>/dev/null || { cat "$d/fake.out"; exit 1; }
	sleep 0.1
done
echo "# fake CRI: 100 pods x 10 containers; $secs s per case; $(nproc) CPUs"
"$bin" "$sock" "$secs" >"$d/c.out"
"$py" "$top/tests/bench/bench_cri.py" "$sock" "$secs" >"$d/py.out"
awk '
FNR == 1 { f++ }
/^case/ { k = $2 " " $3; rate[f, k] = $7; p50[f, k] = $9; p99[f, k] = $12; keys[k] = 1 }
/^rss_kb / { rss[f] = $2; hwm[f] = $4; start[f] = $6; nc = $8 }
/^rss_kb_end/ { rssend = $2 }
END {
	printf "%-18s %4s | %9s %8s %8s | %9s %8s %8s | %6s\n", "method", "conc",
	    "C calls/s", "p50 us", "p99 us", "Py calls/s", "p50 us", "p99 us", "ratio"
	n = split("ListContainers 1,ListContainers 16,ContainerStatus 1,ContainerStatus 16", ks, ",")
	for (i = 1; i <= n; i++) {
		k = ks[i]; split(k, kk, " ")
		printf "%-18s %4s | %9s %8s %8s | %9s %8s %8s | %5.2fx\n", kk[1], kk[2],
		    rate[1, k], p50[1, k], p99[1, k], rate[2, k], p50[2, k], p99[2, k],
		    (rate[2, k] > 0 ? rate[1, k] / rate[2, k] : 0)
	}
	printf "resident memory with %d containers listed: C client %d kB (start %d kB, peak %d kB, after the runs %d kB); Python grpcio client %d kB\n",
	    nc, rss[1], start[1], hwm[1], rssend, rss[2]
}' "$d/c.out" "$d/py.out" | sed 's|/s||g'
