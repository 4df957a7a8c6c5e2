#!/bin/sh
# Benchmark of the prober (not part of make check): CPU time per second with N containers
# each carrying a 1 s readiness probe: tcpSocket against a local listener, then exec through
# ExecSync against the fake CRI (--populate Nx1).
#   sh tests/bench/bench_prober.sh [N] [SECONDS]
# Builds an optimized, sanitizer-free tree in /tmp/klet-build-prober-bench (KLET_BENCH_BUILD).
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-1000}
secs=${2:-10}
b=${KLET_BENCH_BUILD:-/tmp/klet-build-prober-bench}
mkdir -p "$b"
KLET_CONFIGURE_FLAGS="--disable-werror" sh "$top/contrib/dev-build.sh" "${b#/tmp/klet-build-}" \
	bench-prober-bin >/dev/null
bin=$b/tests/bench/bench_prober
d=$(mktemp -d /tmp/klet-bench-prober.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT INT TERM
echo "# $n probes, period 1 s, $secs s measured; $(nproc) CPUs"
"$bin" tcp "$n" "$secs"
sock=$d/cri.sock
"$top/tests/fakecri/run.sh" --socket "$sock" --no-proxy --populate "${n}x1" >"$d/fake.out" 2>&1 &
pid=$!
i=0
until grep -q "fakecri: ready" "$d/fake.out"; do
	i=$((i + 1)); [ $i -lt 900 ] || { cat "$d/fake.out"; exit 1; }
	kill -0 "$pid" 2>/dev/null || { cat "$d/fake.out"; exit 1; }
	sleep 0.1
done
c0=$(awk '{print $14 + $15}' /proc/$pid/stat)
"$bin" exec "$n" "$secs" "$sock"
c1=$(awk '{print $14 + $15}' /proc/$pid/stat)
echo "# fake CRI (Python) CPU during the exec run (incl. warm-up): $(( (c1 - c0) * 1000 / $(getconf CLK_TCK) )) ms"
