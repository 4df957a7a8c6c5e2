#!/bin/sh
# kill -9 recovery on the fake gRPC CRI: tests/crash/crash.py with a bounded number of
# iterations (KLET_CRASH_ITERATIONS, default 200) and short kill delays. The seed is printed
# (KLET_CRASH_SEED replays one). Skip 77 without python3-grpcio unless KLET_REQUIRE_PEERS=1.
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
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null' EXIT
trap 'exit 1' INT TERM
seed=${KLET_CRASH_SEED:-$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')}
$PY "$top/tests/crash/crash.py" --kletd "$kletd" --seed "$seed" \
    --iterations "${KLET_CRASH_ITERATIONS:-200}" --max-delay "${KLET_CRASH_MAX_DELAY:-0.4}" &
pid=$!
wait "$pid"; rc=$?
pid=
case $rc in
0) echo "ok 1 - crash recovery on the fake CRI (seed $seed)"; echo "1 passed, 0 failed" ;;
77) skip "crash harness: peer missing" ;;
*) echo "not ok 1 - crash recovery on the fake CRI (seed $seed)"; echo "0 passed, 1 failed"
   exit 1 ;;
esac
