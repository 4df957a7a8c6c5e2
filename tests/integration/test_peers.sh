#!/bin/sh
# test_peers.sh — the test peers themselves, seen by real gRPC clients (python3-grpcio):
#   1. tests/fakecri: a pod's whole life (pod and host network), its conventions, and each
#      scriptable fault (error codes, latency, hang, oversized and garbage replies, dropped
#      connections, GOAWAY, down/up);
#   2. a private containerd (contrib/containerd-up.sh): both images imported, the instance
#      reused, a pod's whole life with host network and with CNI pod network (the host
#      reaches busybox httpd at the pod IP), then contrib/containerd-down.sh leaves no
#      process and no mount.
# Part 2 needs root and containerd; without them the test skips (77) after part 1, unless
# KLET_REQUIRE_PEERS=1. Instance dir: $KLET_PEERS_CONTAINERD_DIR (default /tmp/klet-ctd-peers;
# not KLET_CONTAINERD_DIR, so that an instance other tests share is never taken down here).
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/lib/tap.sh"
export PYTHONDONTWRITEBYTECODE=1
require=${KLET_REQUIRE_PEERS:-0}

py=""
for p in ${KLET_PYTHON:-} /usr/bin/python3 python3; do
	if "$p" -c 'import grpc, grpc_tools' >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
	[ "$require" = 1 ] && { echo "not ok - python3 with grpcio and grpc_tools is required"; exit 1; }
	skip_all "no python3 with grpcio and grpc_tools"
fi
fc=$top_srcdir/tests/fakecri
drive=$top_srcdir/tests/integration/test_peers_lifecycle.py
tmp=$(mktemp -d "${TMPDIR:-/tmp}/klet-test-peers.XXXXXX")
cdir=${KLET_PEERS_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-peers}
cgparent=/klet-peers-test-$$
fakepid=""
ctd=0

cleanup() {
	if [ -n "$fakepid" ]; then
		kill "$fakepid" 2>/dev/null
		wait "$fakepid" 2>/dev/null
	fi
	if [ $ctd = 1 ]; then
		KLET_CONTAINERD_DIR=$cdir sh "$top_srcdir/contrib/containerd-down.sh" --purge 2>/dev/null
	fi
	for d in /sys/fs/cgroup/*$cgparent /sys/fs/cgroup/*/*$cgparent; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Feeds "ok - X" / "not ok - X" lines of the driver into tap.sh's counters.
tally() {
	while IFS= read -r line; do
		case $line in
		"ok - "*) check "${line#ok - }" true ;;
		"not ok - "*) check "${line#not ok - }" false; echo "#   $line" ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done
}
# Runs the driver; its checks count here (no pipe: tally must run in this shell).
drive() {
	"$py" "$drive" "$@" >"$tmp/drive.out" 2>&1
	echo $? >"$tmp/drive.rc"
	tally <"$tmp/drive.out"
}
drive_ok() { [ "$(cat "$tmp/drive.rc")" = 0 ]; }

# ---- 1. the fake ----------------------------------------------------------------------
fs=$tmp/fake.sock
sh "$fc/run.sh" --socket "$fs" >"$tmp/fake.out" 2>&1 &
fakepid=$!
check "fake: run.sh prints ready" wait_for 200 grep -q "^fakecri: ready socket=$fs" "$tmp/fake.out"
cli() { "$py" "$fc/client.py" "$@"; }
ctl() { "$py" "$fc/ctl.py" "$fs.ctl" "$@"; }
check "fake: Version answers" cli "$fs" Version
drive "$fs" pod "$tmp/logs"
check "fake: pod-network lifecycle driver exits 0" drive_ok
drive "$fs" host "$tmp/logs"
check "fake: host-network lifecycle driver exits 0" drive_ok
drive "$fs" fake-conventions "$tmp/logs"
check "fake: conventions driver exits 0" drive_ok

# faults
fails_with() { # CODE CMD... : CMD fails and prints "ERROR CODE:"
	code=$1; shift
	! "$@" 2>"$tmp/err" >/dev/null && grep -q "^ERROR $code:" "$tmp/err"
}
ctl '{"cmd":"fault","method":"Version","code":"UNAVAILABLE","message":"injected","count":1}' >/dev/null
check "fault: code UNAVAILABLE once" fails_with UNAVAILABLE cli "$fs" Version
check "fault: count 1 -> next call fine" cli "$fs" Version
ctl '{"cmd":"fault","method":"ListContainers","after":1,"code":"INTERNAL","count":1}' >/dev/null
check "fault: after 1 lets the first call through" cli "$fs" ListContainers
check "fault: ... and fails the second" fails_with INTERNAL cli "$fs" ListContainers
ctl '{"cmd":"fault","method":"Status","latency_ms":1500,"count":1}' >/dev/null
check "fault: latency beyond the deadline -> DEADLINE_EXCEEDED" \
	fails_with DEADLINE_EXCEEDED cli --timeout 0.3 "$fs" Status
ctl '{"cmd":"fault","method":"Version","hang":true,"count":1}' >/dev/null
check "fault: hang -> DEADLINE_EXCEEDED" fails_with DEADLINE_EXCEEDED cli --timeout 0.5 "$fs" Version
ctl '{"cmd":"fault","method":"ListPodSandbox","oversize":true,"count":1}' >/dev/null
check "fault: 17 MiB reply -> RESOURCE_EXHAUSTED at a 16 MiB client" \
	fails_with RESOURCE_EXHAUSTED cli "$fs" ListPodSandbox
ctl '{"cmd":"fault","method":"ListPodSandbox","garbage":true,"count":1}' >/dev/null
check "fault: garbage reply -> client cannot decode" fails_with INTERNAL cli "$fs" ListPodSandbox
ctl '{"cmd":"fault","method":"Version","drop":true,"count":1}' >/dev/null
check "fault: drop -> UNAVAILABLE" fails_with UNAVAILABLE cli --timeout 5 "$fs" Version
check "fault: served again after a drop" wait_for 50 cli "$fs" Version
check "control: cut arms a mid-stream close" ctl '{"cmd":"cut","after_bytes":20000}'
check "control: cut -> a 1000-container list breaks off (UNAVAILABLE/INTERNAL)" sh -c \
	"'$py' '$fc/ctl.py' '$fs.ctl' '{\"cmd\":\"populate\",\"pods\":100,\"containers\":10}' >/dev/null &&
	 ! '$py' '$fc/client.py' '$fs' ListContainers >/dev/null 2>'$tmp/cut.err' &&
	 grep -Eq '^ERROR (UNAVAILABLE|INTERNAL):' '$tmp/cut.err' &&
	 '$py' '$fc/ctl.py' '$fs.ctl' '{\"cmd\":\"reset\"}' >/dev/null"
check "control: served again after a cut" wait_for 50 cli "$fs" Version
check "control: goaway with grace" ctl '{"cmd":"goaway","grace_ms":200}'
check "control: served again after GOAWAY" wait_for 50 cli "$fs" Version
check "control: down" ctl '{"cmd":"down"}'
check "control: down removes the socket" test ! -S "$fs"
check "control: down -> UNAVAILABLE" fails_with UNAVAILABLE cli --timeout 1 "$fs" Version
check "control: up" ctl '{"cmd":"up"}'
check "control: served again after up" wait_for 50 cli "$fs" Version
check "control: status network_ready false" ctl '{"cmd":"status","network_ready":false}'
check "control: Status shows NetworkReady false" sh -c \
	"'$py' '$fc/client.py' '$fs' Status | grep -q '\"status\": false, \"type\": \"NetworkReady\"'"
check "control: unknown command -> ok false" sh -c "! '$py' '$fc/ctl.py' '$fs.ctl' '{\"cmd\":\"nope\"}'"
check "control: calls counts Version" sh -c "'$py' '$fc/ctl.py' '$fs.ctl' '{\"cmd\":\"calls\"}' | grep -q '\"Version\": '"
kill "$fakepid"
check "fake: exits on SIGTERM" wait_for 100 sh -c "! kill -0 $fakepid 2>/dev/null"
wait "$fakepid" 2>/dev/null
fakepid=""
check "fake: removed its sockets" sh -c "test ! -e '$fs' && test ! -e '$fs.ctl'"

# ---- 2. a private containerd --------------------------------------------------------------
why=""
[ "$(id -u)" -eq 0 ] || why="not root"
for b in containerd ctr runc; do
	[ -n "$why" ] || command -v $b >/dev/null 2>&1 || why="$b not installed"
done
[ -n "$why" ] || [ -x /usr/lib/cni/bridge ] || why="CNI plugins not installed"
if [ -n "$why" ]; then
	if [ "$require" = 1 ]; then
		check "containerd part: $why" false
		finish
		exit
	fi
	finish || exit 1
	echo "SKIP: containerd part: $why"
	exit 77
fi

export KLET_CONTAINERD_DIR=$cdir
ctd=1
sock=$(sh "$top_srcdir/contrib/containerd-up.sh" 2>"$tmp/up.err" | tail -1)
check "containerd-up prints the socket path last" test "$sock" = "$cdir/containerd.sock"
check "containerd-up: the socket answers ctr version" ctr --address "$sock" version
ctr --address "$sock" -n k8s.io images ls -q >"$tmp/images" 2>&1
check "ctr lists klet.local/busybox:1.35" grep -qx klet.local/busybox:1.35 "$tmp/images"
check "ctr lists klet.local/pause:3.9" grep -qx klet.local/pause:3.9 "$tmp/images"
pid1=$(cat "$cdir/containerd.pid")
sock2=$(sh "$top_srcdir/contrib/containerd-up.sh" 2>"$tmp/up2.err" | tail -1)
check "containerd-up again reuses the running instance" \
	sh -c "test '$sock2' = '$sock' && test \"\$(cat '$cdir/containerd.pid')\" = '$pid1' && grep -q reusing '$tmp/up2.err'"
drive "$sock" host "$tmp/ctd-logs" --cgroup-parent "$cgparent"
check "containerd: host-network lifecycle driver exits 0" drive_ok
drive "$sock" pod "$tmp/ctd-logs" --reach --cgroup-parent "$cgparent"
check "containerd: pod-network (CNI) lifecycle driver exits 0" drive_ok
check "containerd: GetContainerEvents is UNIMPLEMENTED in 1.6 (PLEG relists)" sh -c \
	"'$py' -c \"
import sys; sys.path.insert(0, '$fc'); import client, grpc
c = client.Client('$sock', 5)
try:
    next(iter(c.call_pb('GetContainerEvents', {})))
except grpc.RpcError as e:
    sys.exit(0 if e.code() == grpc.StatusCode.UNIMPLEMENTED else 1)
\""
# a pod left running: containerd-down must take it down too
"$py" - "$fc" "$sock" "$cgparent" >/dev/null 2>&1 <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import client
c = client.Client(sys.argv[2], 30)
cfg = {"metadata": {"name": "left", "namespace": "default", "uid": "uid-left"},
       "hostname": "left", "linux": {"cgroup_parent": sys.argv[3]}}
sb = c.call("RunPodSandbox", {"config": cfg})["pod_sandbox_id"]
cid = c.call("CreateContainer", {"pod_sandbox_id": sb, "sandbox_config": cfg, "config": {
    "metadata": {"name": "c"}, "image": {"image": "klet.local/busybox:1.35"},
    "command": ["sleep", "3600"]}})["container_id"]
c.call("StartContainer", {"container_id": cid})
PYEOF
shims() { grep -lsF -- "$sock" /proc/[0-9]*/cmdline 2>/dev/null; }
check "a pod left running has a shim" test -n "$(shims)"
check "containerd-down --purge" sh "$top_srcdir/contrib/containerd-down.sh" --purge
ctd=0
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
check "containerd-down: containerd pid $pid1 gone" wait_for 50 gone "$pid1"
check "containerd-down: no process of the instance left" test -z "$(shims)"
check "containerd-down: no mount left under $cdir" sh -c "! grep -qF ' $cdir/' /proc/self/mountinfo"
check "containerd-down --purge removed $cdir" test ! -e "$cdir"
finish
