#!/bin/sh
# The CRI client against a REAL containerd (private instance, contrib/containerd-up.sh):
# Version, ImageStatus, RunPodSandbox (pod network, and host network) -> CreateContainer ->
# StartContainer -> ExecSync -> UpdateContainerResources -> StopContainer -> RemoveContainer
# -> StopPodSandbox -> RemovePodSandbox, with the kubelet's labels.
# Skips (77) without root/containerd unless KLET_REQUIRE_PEERS=1.
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
[ "$(id -u)" = 0 ] || skip "containerd needs root"
[ -f "$top_srcdir/contrib/containerd-up.sh" ] || skip "no contrib/containerd-up.sh"
if ! command -v containerd >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
	[ "${KLET_REQUIRE_PEERS:-0}" = 1 ] || skip "containerd or runc not installed"
fi
# our own instance, whatever KLET_CONTAINERD_DIR says (this test stops it at the end)
export KLET_CONTAINERD_DIR=${KLET_CRI_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-cri}
d=$(mktemp -d /tmp/klet-cri-ctd.XXXXXX)
cleanup() {
	sh "$top_srcdir/contrib/containerd-down.sh" >/dev/null 2>&1
	rm -rf "$d"
}
trap cleanup EXIT INT TERM
if ! sh "$top_srcdir/contrib/containerd-up.sh" >"$d/up.out" 2>"$d/up.err"; then
	cat "$d/up.err" >&2
	echo "not ok - containerd-up.sh failed"; echo "0 passed, 1 failed"; exit 1
fi
sock=$(tail -n 1 "$d/up.out")
[ -S "$sock" ] || { echo "not ok - no socket $sock"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$d/logs"
"$driver" containerd "$sock" "$d/logs"
rc=$?
[ "$rc" = 0 ] || tail -40 "$KLET_CONTAINERD_DIR/containerd.log" >&2
exit $rc
