#!/bin/sh
# kill -9 recovery with an API server: tests/crash/crash_api.py (kletd joined to the stand-in
# tests/apiserver, pods on the fake CRI; some restarts with the server unreachable, some after
# a compaction) for KLET_CRASH_API_ITERATIONS (default 30) iterations. The seed is printed
# (KLET_CRASH_API_SEED replays one). Skip 77 without python3-grpcio, python3-h2 or openssl
# unless KLET_REQUIRE_PEERS=1. crash_api.py stops kletd, the stand-in and the fake CRI itself.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/crash/lib_crash.sh"
$PY -c 'import grpc' 2>/dev/null || skip "python3-grpcio not installed"
$PY -c 'import h2.connection' 2>/dev/null || skip "python3-h2 not installed"
command -v openssl >/dev/null || skip "openssl not installed"
seed=${KLET_CRASH_API_SEED:-$(crash_seed)}
if crash_run 1 "crash recovery with an API server (seed $seed)" crash_api.py \
    --kletd "$build/kletd" --seed "$seed" --iterations "${KLET_CRASH_API_ITERATIONS:-30}" \
    --max-delay "${KLET_CRASH_API_MAX_DELAY:-1.0}"; then
	echo "1 passed, 0 failed"
else
	echo "0 passed, 1 failed"; exit 1
fi
