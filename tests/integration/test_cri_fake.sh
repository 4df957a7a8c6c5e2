#!/bin/sh
# The CRI client (src/cri/cri.c, src/net/grpc.c, src/net/h2.c) against the Python grpcio fake CRI
# (tests/fakecri): every RPC, error codes, deadlines, oversize, cancel, GOAWAY, drops.
# Skips (77) without python3-grpcio unless KLET_REQUIRE_PEERS=1.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
. "$top_srcdir/tests/lib/tap.sh"

skip() {
	if [ "${KLET_REQUIRE_PEERS:-0}" = 1 ]; then
		echo "not ok - peer required: $*"; echo "0 passed, 1 failed"; exit 1
	fi
	skip_all "$*"
}

[ "${KLET_UNIT_ONLY:-0}" = 1 ] && skip_all "KLET_UNIT_ONLY=1"
driver=$top_builddir/tests/integration/cri_client_test
[ -x "$driver" ] || skip "no $driver"
d=$(mktemp -d /tmp/klet-cri-fake.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT INT TERM
sock=$d/cri.sock
"$top_srcdir/tests/fakecri/run.sh" --socket "$sock" >"$d/fake.out" 2>"$d/fake.err" &
pid=$!
if ! wait_for 300 grep -q "fakecri: ready" "$d/fake.out"; then
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"; rc=$?; pid=
		[ "$rc" = 77 ] && skip "fake CRI unavailable (python3-grpcio)"
	fi
	cat "$d/fake.err" >&2
	echo "not ok - fake CRI did not start"; echo "0 passed, 1 failed"; exit 1
fi
mkdir -p "$d/logs"
"$driver" fake "$sock" "$d/logs"
rc=$?
[ "$rc" = 0 ] || tail -30 "$d/fake.err" >&2
exit $rc
