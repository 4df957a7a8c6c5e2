#!/bin/sh
# RuntimeClass on a real containerd, joined to the API stand-in (which serves runtimeclasses
# and runs the RuntimeClass admission: a class's overhead.podFixed becomes the pod's
# spec.overhead). Checked: a pod of class klet-runc (handler runc, overhead 32Mi / 50m) runs
# with the sandbox's runtime handler runc, and its pod cgroup's memory limit counts the
# overhead (64Mi + 32Mi); a class created after kletd started is seen through the watch; a
# static pod naming a class the cluster does not have fails with the kubelet's NotFound error
# in a FailedCreatePodSandBox event; --runtime-handler still maps a class name the cluster
# lacks (the standalone mapping).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-rc}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup rcnode
MNT=/sys/fs/cgroup
[ -d $MNT/memory ] || node_skip "needs cgroup v1 memory (the overhead check reads it)"
CGR=${KLET_TEST_CGROUP_ROOT:-}/e2e-rc-$$
rc_cleanup() {
	as_stop
	node_cleanup
	cgroup_root_rm $CGR
}
trap rc_cleanup EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
mkrc() { # NAME HANDLER [OVERHEAD-JSON]
	_ov=
	[ -n "${3:-}" ] && _ov=",\"overhead\":{\"podFixed\":$3}"
	as_curl -X POST -H 'Content-Type: application/json' "$AS_URL/apis/node.k8s.io/v1/runtimeclasses" \
	    -d "{\"apiVersion\":\"node.k8s.io/v1\",\"kind\":\"RuntimeClass\",\"metadata\":{\"name\":\"$1\"},
	    \"handler\":\"$2\"$_ov}" | grep -q '"kind":"RuntimeClass"'
}
check "RuntimeClass klet-runc made" mkrc klet-runc runc '{"memory":"32Mi","cpu":"50m"}'
put legacy.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: legacy}
spec:
  runtimeClassName: legacy
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: klet.local/busybox:1.35, command: ["sleep", "1000"]}
M
put missing.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: missing}
spec:
  runtimeClassName: missing
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: klet.local/busybox:1.35, command: ["sleep", "1000"]}
M
start_kletd --kubeconfig "$T/kubeconfig" --cgroup-root $CGR --runtime-handler legacy=runc
check "kletd started" logged 'kletd ready'

mkpod() { # NAME CLASS
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$NODE\",
	    \"runtimeClassName\":\"$2\",\"terminationGracePeriodSeconds\":1,
	    \"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",
	    \"resources\":{\"limits\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}},
	    \"command\":[\"sleep\",\"1000\"]}]}}"
}
phase() { as_ctl /pods/default/$1/get | as_json "d['status'].get('phase', '')"; }
is_phase() { [ "$(phase $1)" = "$2" ]; }
mkpod rc klet-runc >"$T/rc.json"
echo "# admitted overhead: $(as_json "d['spec'].get('overhead')" <"$T/rc.json")"
check "... with the class's overhead in spec.overhead" \
    [ "$(as_json "d['spec'].get('overhead')" <"$T/rc.json")" = "{'memory': '32Mi', 'cpu': '50m'}" ]
wait_for 600 is_phase rc Running
check "pod rc Running" is_phase rc Running
handler() { # SANDBOX-NAME -> the runtime handler of its ready sandbox
	cri ListPodSandbox '{}' | $PY -c '
import json, sys
for s in json.load(sys.stdin).get("items", []):
    if s["metadata"]["name"] == sys.argv[1] and s["state"] == "SANDBOX_READY":
        print(s.get("runtime_handler", "")); break' "$1"
}
check "rc's sandbox runs with handler runc" [ "$(handler rc)" = runc ]
G=$(ls -d $MNT/memory$CGR/kubepods/pod* 2>/dev/null | head -1)
echo "# rc's pod cgroup: $G: memory.limit_in_bytes $(cat "$G/memory.limit_in_bytes" 2>/dev/null)"
check "rc's pod cgroup: memory limit 64Mi + 32Mi overhead" grep -qx $((96 * 1024 * 1024)) \
    "$G/memory.limit_in_bytes"
# A class made after the start: the watch brings it.
check "RuntimeClass late made after the start" mkrc late runc
mkpod late late >/dev/null
wait_for 600 is_phase late Running
check "a class created after the start (watch): pod late Running" is_phase late Running
check "... with handler runc" [ "$(handler late)" = runc ]
# The standalone mapping: --runtime-handler legacy=runc, no such class in the cluster.
wait_for 600 running legacy c
check "--runtime-handler legacy=runc: static pod legacy runs" running legacy c
check "... with handler runc" [ "$(handler legacy-$NODE)" = runc ]
# Unknown everywhere: the kubelet's error and event.
nf_event() {
	as_ctl /objects?kind=events | grep -q \
	    'Failed to create pod sandbox: runtimeclasses.node.k8s.io \\"missing\\" not found'
}
wait_for 300 nf_event
check "class missing: FailedCreatePodSandBox with the kubelet's NotFound error" nf_event
check "... logged" logged 'runtimeclasses.node.k8s.io "missing" not found'
check "... no sandbox made for it" no_pod missing
finish
