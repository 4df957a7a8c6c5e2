#!/bin/sh
# Admission on a real containerd, joined to the API stand-in (issue 17): kletd runs with
# --kube-reserved and --system-reserved and a NoExecute taint, and
#  - the node status' allocatable is the capacity minus the reservations and the hard
#    eviction threshold (memory.available<100Mi), as admission computes it;
#  - a pod asking more memory than allocatable is Failed with OutOfmemory and the kubelet's
#    message, one asking more cpu with OutOfcpu; a pod that fits runs;
#  - a second pod asking a hostPort a running pod holds is Failed with NodePorts (the same
#    port on UDP, or on another hostIP, is admitted);
#  - a pod without a toleration for the node's NoExecute taint is Failed with TaintToleration;
#  - required node affinity: NotIn this node's hostname is Failed with NodeAffinity, In it runs.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-admit}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup admitnode
CGR=${KLET_TEST_CGROUP_ROOT:-}/e2e-admit-$$
admit_cleanup() {
	as_stop
	node_cleanup
	cgroup_root_rm $CGR
}
trap admit_cleanup EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
start_kletd --kubeconfig "$T/kubeconfig" --cgroup-root $CGR \
    --kube-reserved cpu=300m,memory=256Mi --system-reserved cpu=200m,memory=256Mi \
    --register-with-taints klet.test/dedicated=e2e:NoExecute
check "kletd started" logged 'kletd ready'

node_field() { as_curl "$AS_URL/api/v1/nodes/$NODE" | as_json "$1"; }
has_node() { [ -n "$(node_field "d['status']['allocatable'].get('memory', '')" 2>/dev/null)" ]; }
wait_for 300 has_node
check "node registered with capacity and allocatable" has_node
bytes() { # Kubernetes quantity (Ki or plain bytes, as the node status writes them) -> bytes
	case $1 in *Ki) echo $((${1%Ki} * 1024)) ;; *) echo "$1" ;; esac
}
cap_mem=$(bytes "$(node_field "d['status']['capacity']['memory']")")
alloc_mem=$(bytes "$(node_field "d['status']['allocatable']['memory']")")
cap_cpu=$(node_field "d['status']['capacity']['cpu']")
alloc_cpu=$(node_field "d['status']['allocatable']['cpu']")
echo "# capacity memory $cap_mem cpu $cap_cpu; allocatable memory $alloc_mem cpu $alloc_cpu"
check "allocatable memory = capacity - 512Mi reserved - 100Mi hard threshold" \
    [ "$alloc_mem" -eq $((cap_mem - 612 * 1024 * 1024)) ]
check "allocatable cpu = capacity - 500m reserved" [ "$alloc_cpu" = "$((cap_cpu * 1000 - 500))m" ]

TOL='"tolerations":[{"key":"klet.test/dedicated","operator":"Equal","value":"e2e","effect":"NoExecute"}]'
mkpod() { # NAME EXTRA-SPEC-JSON CONTAINER-EXTRA-JSON
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$NODE\",
	    \"terminationGracePeriodSeconds\":1$2,
	    \"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",
	    \"command\":[\"sleep\",\"1000\"]$3}]}}" >/dev/null
}
field() { as_ctl /pods/default/$1/get | as_json "$2" 2>/dev/null; }
is_phase() { [ "$(field $1 "d['status'].get('phase', '')")" = "$2" ]; }
rejected() { # NAME REASON MESSAGE-PREFIX
	is_phase $1 Failed && [ "$(field $1 "d['status'].get('reason', '')")" = "$2" ] &&
	    field $1 "d['status'].get('message', '')" | grep -qF "Pod was rejected: $3"
}

# Resources: memory and cpu above allocatable; a pod that fits.
mkpod bigmem ",$TOL" ",\"resources\":{\"requests\":{\"memory\":\"$((alloc_mem + 1024 * 1024))\"}}"
wait_for 300 is_phase bigmem Failed
check "memory above allocatable: Failed, OutOfmemory, the kubelet's message" \
    rejected bigmem OutOfmemory "Node didn't have enough resource: memory, requested: $((alloc_mem + 1024 * 1024)), used: 0, capacity: $alloc_mem"
mkpod bigcpu ",$TOL" ",\"resources\":{\"requests\":{\"cpu\":\"$((cap_cpu * 1000))m\"}}"
wait_for 300 is_phase bigcpu Failed
check "cpu above allocatable: Failed, OutOfcpu" \
    rejected bigcpu OutOfcpu "Node didn't have enough resource: cpu, requested: $((cap_cpu * 1000)), used: 0, capacity: $((cap_cpu * 1000 - 500))"
no_big_sandbox() { ! cri ListPodSandbox '{}' | grep -q '"name": "big'; }
check "... no sandbox made for the rejected pods" no_big_sandbox
mkpod fits ",$TOL" ",\"resources\":{\"requests\":{\"memory\":\"64Mi\",\"cpu\":\"100m\"}}"
wait_for 600 is_phase fits Running
check "a pod that fits runs" is_phase fits Running

# Host ports: TCP 18080 held by web1; the same port is refused on TCP, admitted on UDP.
PORT=",\"ports\":[{\"containerPort\":8080,\"hostPort\":18080,\"protocol\":\"TCP\"}]"
mkpod web1 ",$TOL" "$PORT"
wait_for 600 is_phase web1 Running
check "web1 with hostPort 18080/TCP runs" is_phase web1 Running
mkpod web2 ",$TOL" "$PORT"
wait_for 300 is_phase web2 Failed
check "web2 asking 18080/TCP too: Failed, NodePorts" \
    rejected web2 NodePorts "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
mkpod web3 ",$TOL" ",\"ports\":[{\"containerPort\":8080,\"hostPort\":18080,\"protocol\":\"UDP\"}]"
wait_for 600 is_phase web3 Running
check "web3 asking 18080/UDP: admitted and Running" is_phase web3 Running

# The node's NoExecute taint.
mkpod untolerated "" ""
wait_for 300 is_phase untolerated Failed
check "no toleration for the NoExecute taint: Failed, TaintToleration" \
    rejected untolerated TaintToleration "Predicate TaintToleration failed: node(s) had untolerated taint"

# Required node affinity on the hostname label.
aff() { # OPERATOR
	echo ",$TOL,\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":
	    {\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",
	    \"operator\":\"$1\",\"values\":[\"$NODE\"]}]}]}}}"
}
mkpod away "$(aff NotIn)" ""
wait_for 300 is_phase away Failed
check "required node affinity NotIn this node: Failed, NodeAffinity" \
    rejected away NodeAffinity "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
mkpod here "$(aff In)" ""
wait_for 600 is_phase here Running
check "required node affinity In this node: Running" is_phase here Running
still_running() { is_phase fits Running && is_phase web1 Running && is_phase here Running; }
check "the admitted pods kept running" still_running
finish
