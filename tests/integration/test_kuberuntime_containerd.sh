#!/bin/sh
# The runtime manager's machines (tests/integration/test_kuberuntime_driver, KR_REAL=1)
# against a PRIVATE real containerd + runc (contrib/containerd-up.sh): init containers in
# order, preStop + grace with a SIGTERM-ignoring shell, postStart failure, image errors and
# pull backoff, crash-loop backoff. Needs root and containerd; skips (77) otherwise unless
# KLET_REQUIRE_PEERS=1. The instance dir is KLET_KR_CONTAINERD_DIR (default
# /tmp/klet-ctd-kuberuntime-test); containerd is stopped at the end, pass or fail.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
export top_srcdir
. "$top_srcdir/tests/lib/tap.sh"

skip() {
	if [ "${KLET_REQUIRE_PEERS:-0}" = 1 ]; then
		echo "not ok - peer required: $*"; echo "0 passed, 1 failed"; exit 1
	fi
	skip_all "$*"
}

driver=$top_builddir/tests/integration/test_kuberuntime_driver
[ -x "$driver" ] || skip "no $driver"
[ "$(id -u)" -eq 0 ] || skip "not root"
command -v containerd >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 ||
	skip "no containerd/runc"
KLET_CONTAINERD_DIR=${KLET_KR_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-kuberuntime-test}
export KLET_CONTAINERD_DIR
d=$(mktemp -d /tmp/klet-kr-ctd.XXXXXX)
cleanup() {
	sh "$top_srcdir/contrib/containerd-down.sh" >/dev/null 2>&1
	# containerd leaves pod cgroups behind (housekeeping removes them in kletd)
	for c in /sys/fs/cgroup/*/kubepods/*/podu-* /sys/fs/cgroup/*/kubepods/podu-* \
	    /sys/fs/cgroup/kubepods/*/podu-* /sys/fs/cgroup/kubepods/podu-*; do
		[ -d "$c" ] && rmdir "$c" 2>/dev/null
	done
	rm -rf "$d"
}
trap cleanup EXIT INT TERM
sock=$(sh "$top_srcdir/contrib/containerd-up.sh" 2>"$d/up.err" | tail -1)
if [ -z "$sock" ] || [ ! -S "$sock" ]; then
	cat "$d/up.err" >&2
	skip "containerd did not start"
fi
KR_REAL=1 "$driver" "$sock" /nonexistent "$d"
