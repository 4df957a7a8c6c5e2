#!/bin/sh
# QoS and pod cgroups on a real containerd (cgroup v1 here; v2 and the systemd driver's
# names are in tests/unit/test_qos): the kubepods / burstable / besteffort tiers under a
# private --cgroup-root, one cgroup per pod with the kubelet's cpu.shares, CFS quota and
# memory limit, the containers inside it, the burstable tier's shares following its pods,
# and housekeeping removing a deleted pod's cgroup. Everything under the root is removed.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup nl-cg
CGR=${KLET_TEST_CGROUP_ROOT:-}/e2e-cg-$$
MNT=/sys/fs/cgroup
[ -d $MNT/memory ] || node_skip "needs cgroup v1 (v2 is covered by tests/unit/test_qos)"
cg_cleanup() {
	node_cleanup
	cgroup_root_rm $CGR
}
trap cg_cleanup EXIT

put g.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: g}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sleep", "1000"]
    resources: {limits: {cpu: 250m, memory: 64Mi}}
M
put b.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sleep", "1000"]
    resources: {requests: {cpu: 100m}, limits: {cpu: 300m}}
M
put be.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: be}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sleep", "1000"]
M
start_kletd --cgroup-root $CGR
check "kletd started" logged 'kletd ready'
KP=$CGR/kubepods
check "kubepods and its tiers made in cpu and memory" test -d $MNT/cpu$KP/burstable -a \
    -d $MNT/cpu$KP/besteffort -a -d $MNT/memory$KP/burstable -a -d $MNT/memory$KP/besteffort
check "besteffort tier: cpu.shares 2" grep -qx 2 $MNT/cpu$KP/besteffort/cpu.shares
check "kubepods: cpu.shares of the node's cpus" grep -qx $(($(nproc) * 1024)) \
    $MNT/cpu$KP/cpu.shares
wait_for 600 running g c
wait_for 300 running b c
wait_for 300 running be c
check "pods run" running be c

# The pod cgroup: kubepods/podUID (Guaranteed), kubepods/burstable/podUID, besteffort/podUID.
poddir() { # TIER-DIR: the one podUID directory there
	ls -d $MNT/memory$KP$1/pod* 2>/dev/null | head -1 | sed "s|$MNT/memory||"
}
G=$(poddir "")
B=$(poddir /burstable)
BE=$(poddir /besteffort)
echo "# pod cgroups: $G $B $BE"
check "guaranteed pod cgroup: cpu.shares 256" grep -qx 256 $MNT/cpu$G/cpu.shares
check "guaranteed pod cgroup: quota 25000/100000" sh -c \
    "grep -qx 25000 $MNT/cpu$G/cpu.cfs_quota_us && grep -qx 100000 $MNT/cpu$G/cpu.cfs_period_us"
check "guaranteed pod cgroup: memory limit 64Mi" grep -qx 67108864 \
    $MNT/memory$G/memory.limit_in_bytes
check "burstable pod cgroup: cpu.shares 102, quota 30000" sh -c \
    "grep -qx 102 $MNT/cpu$B/cpu.shares && grep -qx 30000 $MNT/cpu$B/cpu.cfs_quota_us"
check "burstable pod cgroup: no memory limit" sh -c \
    "[ \$(cat $MNT/memory$B/memory.limit_in_bytes) -gt 1000000000000 ]"
check "besteffort pod cgroup: cpu.shares 2" grep -qx 2 $MNT/cpu$BE/cpu.shares
check "burstable tier: cpu.shares of its pod's request (102)" grep -qx 102 \
    $MNT/cpu$KP/burstable/cpu.shares
# The containers (and the pause container) run inside the pod cgroup.
id=$(ctrs | awk '$1=="g" {print $5}')
check "the container's cgroup is inside the pod cgroup" test -d "$MNT/memory$G/$id"
pid=$(cri ContainerStatus "{\"container_id\": \"$id\", \"verbose\": true}" | $PY -c '
import json, sys; print(json.loads(json.load(sys.stdin)["info"]["info"])["pid"])')
check "the container's process is in it" grep -q "memory:$G/$id" /proc/$pid/cgroup
echo "# tree:"; find $MNT/memory$KP -type d | sed "s|$MNT/memory||; s|^|#   |"

# Deleting the burstable pod: its cgroup is removed, the tier's shares go back to 2.
rm "$T/m/b.yaml"
wait_for 300 test ! -d "$MNT/memory$B"
check "housekeeping removed the deleted pod's cgroup (memory)" test ! -d "$MNT/memory$B"
check "... and in every hierarchy" sh -c "! ls -d $MNT/*$B 2>/dev/null | grep -q ."
check "burstable tier: cpu.shares back to 2" grep -qx 2 $MNT/cpu$KP/burstable/cpu.shares
check "the other pods' cgroups stay" test -d "$MNT/memory$G" -a -d "$MNT/memory$BE"
check "logged" logged 'cgroups: removed the cgroup of pod'
finish
