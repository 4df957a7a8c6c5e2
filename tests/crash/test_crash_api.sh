#!/bin/sh
# kill -9 recovery with an API server: tests/crash/crash_api.py (kletd joined to the stand-in
# tests/apiserver, pods on the fake CRI; some restarts with the server unreachable, some after
# a compaction) for KLET_CRASH_API_ITERATIONS (default 30) iterations. The seed is printed
# (KLET_CRASH_API_SEED replays one). Skip 77 without python3-grpcio, python3-h2 or openssl
# unless KLET_REQUIRE_PEERS=1.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
kletd=${top_builddir:-.}/kletd
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
skip() {
	if [ "${KLET_REQUIRE_PEERS:-0}" = 1 ]; then
		echo "not ok - peers required: $*"; echo "0 passed, 1 failed"; exit 1
	fi
	echo "1..0 # SKIP $*"; exit 77
}
$PY -c 'import grpc' 2>/dev/null || skip "python3-grpcio not installed"
$PY -c 'import h2.connection' 2>/dev/null || skip "python3-h2 not installed"
command -v openssl >/dev/null || skip "openssl not installed"
pid=
# crash_api.py stops kletd, the stand-in and the fake CRI itself on exit (SIGTERM included).
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null' EXIT
trap 'exit 1' INT TERM
seed=${KLET_CRASH_API_SEED:-$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')}
$PY "$top/tests/crash/crash_api.py" --kletd "$kletd" --seed "$seed" \
    --iterations "${KLET_CRASH_API_ITERATIONS:-30}" \
    --max-delay "${KLET_CRASH_API_MAX_DELAY:-1.0}" &
pid=$!
wait "$pid"; rc=$?
pid=
case $rc in
0) echo "ok 1 - crash recovery with an API server (seed $seed)"; echo "1 passed, 0 failed" ;;
77) skip "crash_api harness: peer missing" ;;
*) echo "not ok 1 - crash recovery with an API server (seed $seed)"; echo "0 passed, 1 failed"
   exit 1 ;;
esac
