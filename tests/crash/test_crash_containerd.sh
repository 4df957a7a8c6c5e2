#!/bin/sh
# kill -9 recovery on the real containerd (its own instance: KLET_CONTAINERD_DIR, default
# /tmp/klet-ctd-recovery): tests/crash/crash.py with a bounded number of iterations
# (KLET_CRASH_ITERATIONS, default 20). The seed is printed (KLET_CRASH_SEED replays one).
# Skip 77 without root, containerd or python3-grpcio unless KLET_REQUIRE_PEERS=1.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/crash/lib_crash.sh"
$PY -c 'import grpc' 2>/dev/null || skip "python3-grpcio not installed"
[ "$(id -u)" -eq 0 ] || skip "needs root"
command -v containerd >/dev/null 2>&1 || skip "containerd not installed"
export KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-recovery}
seed=${KLET_CRASH_SEED:-$(crash_seed)}
if crash_run 1 "crash recovery on containerd (seed $seed)" crash.py --kletd "$build/kletd" \
    --seed "$seed" --runtime containerd --iterations "${KLET_CRASH_ITERATIONS:-20}" \
    --max-delay "${KLET_CRASH_MAX_DELAY:-5}"; then
	echo "1 passed, 0 failed"
else
	echo "0 passed, 1 failed"; exit 1
fi
