#!/bin/sh
# kill -9 recovery on the fake gRPC CRI: tests/crash/crash.py with a bounded number of
# iterations (KLET_CRASH_ITERATIONS, default 200) and short kill delays. The seed is printed
# (KLET_CRASH_SEED replays one). Skip 77 without python3-grpcio unless KLET_REQUIRE_PEERS=1.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/crash/lib_crash.sh"
$PY -c 'import grpc' 2>/dev/null || skip "python3-grpcio not installed"
seed=${KLET_CRASH_SEED:-$(crash_seed)}
if crash_run 1 "crash recovery on the fake CRI (seed $seed)" crash.py --kletd "$build/kletd" \
    --seed "$seed" --iterations "${KLET_CRASH_ITERATIONS:-200}" \
    --max-delay "${KLET_CRASH_MAX_DELAY:-0.4}"; then
	echo "1 passed, 0 failed"
else
	echo "0 passed, 1 failed"; exit 1
fi
