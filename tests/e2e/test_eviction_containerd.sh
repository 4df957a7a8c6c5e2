#!/bin/sh
# The eviction manager on a real containerd, joined to the API stand-in, with memory pressure
# made on demand inside a private --cgroup-root: the pods' allocatable memory is set to
# 400Mi (--system-reserved = MemTotal - 400Mi) with --eviction-hard memory.available<150Mi,
# so allocatableMemory.available (400Mi minus the kubepods working set) crosses 150Mi when a
# BestEffort pod holds 300M, and nothing else on the machine matters. Checked: the memory
# threshold notification triggers the eviction (not the 10 s poll), the hog (BestEffort,
# largest usage above requests) is evicted and nothing else (an idle BestEffort pod, a
# Burstable and a Guaranteed pod stay), its API status is Failed / Evicted with the
# kubelet's message, its container is stopped, MemoryPressure goes True in the node status
# and back to False after the transition period, and an Evicted event is posted; once its
# worker is done its dead container is collected from the runtime while its exit code stays
# in its API status and podctl describe; /metrics (the read-only port, parsed with
# python3-prometheus-client) counts kubelet_evictions by eviction_signal: the hog under
# allocatableMemory.available (the kubelet's name of the signal that fired here), then the
# local storage limits (emptydirfs.limit, ephemeralpodfs.limit).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-evict}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup evnode
metrics_ok
[ -f /sys/fs/cgroup/memory/cgroup.event_control ] || node_skip "needs cgroup v1 memory"
CGR=${KLET_TEST_CGROUP_ROOT:-}/e2e-ev-$$
ev_cleanup() {
	as_stop
	node_cleanup
	cgroup_root_rm $CGR
}
trap ev_cleanup EXIT
mkdir -p "$T/as"
PODCTL=${top_builddir:-.}/podctl
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
memtotal=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024))
reserved=$((memtotal - 400 * 1024 * 1024))
RO=$(free_port)
start_kletd --kubeconfig "$T/kubeconfig" --cgroup-root $CGR --system-reserved memory=$reserved \
    --eviction-hard memory.available\<150Mi --eviction-pressure-transition-period 4s \
    --eviction-monitoring-period 10s -v=3 --read-only-port "$RO"
check "kletd started" logged 'kletd ready'

jq_node() { as_ctl /objects?kind=nodes | as_json "$1"; }
cond() { # TYPE -> status
	jq_node "[c['status'] for n in d for c in n['status'].get('conditions', []) if c['type']=='$1'][0]"
}
mem_pressure() { [ "$(cond MemoryPressure)" = "$1" ]; }
wait_for 300 mem_pressure False
check "node: MemoryPressure False at first" mem_pressure False

mkpod() { # NAME RESOURCES COMMAND
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$NODE\",
	    \"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":\"$1\",
	    \"image\":\"klet.local/busybox:1.35\",\"resources\":$2,
	    \"command\":[\"sh\",\"-c\",\"$3\"]}]}}" >/dev/null
}
phase() { as_ctl /pods/default/$1/get | as_json "d['status'].get('phase', '')"; }
is_phase() { [ "$(phase $1)" = "$2" ]; }
mkpod g '{"limits":{"cpu":"100m","memory":"64Mi"}}' "sleep 1000"
mkpod b '{"requests":{"memory":"32Mi"}}' "sleep 1000"
mkpod idle '{}' "sleep 1000"
for p in g b idle; do wait_for 600 is_phase $p Running; done
check "three pods Running" sh -c "true" && for p in g b idle; do
	check "$p Running" is_phase $p Running
done
mkpod hog '{}' "dd if=/dev/zero bs=300M count=1 | sleep 1000"
wait_for 600 logged 'eviction: evicting pod'
check "the hog is evicted" logged 'eviction: evicting pod default/hog (hard threshold allocatableMemory.available<150Mi, grace 1s'
check "... on the memory threshold notification, not the 10 s poll" \
    logged 'evicting pod default/hog .* on a memory threshold notification'
grep 'eviction: ' "$T/kletd.log" | sed 's/^/# /'
wait_for 100 mem_pressure True
check "node: MemoryPressure True" mem_pressure True
wait_for 300 is_phase hog Failed
check "hog: phase Failed" is_phase hog Failed
reason() { as_ctl /pods/default/$1/get | as_json "d['status'].get('reason', '')"; }
msg() { as_ctl /pods/default/$1/get | as_json "d['status'].get('message', '')"; }
echo "# hog message: $(msg hog)"
check "hog: reason Evicted" [ "$(reason hog)" = Evicted ]
check "hog: the kubelet's message" sh -c "echo '$(msg hog)' | grep -Eq \
    '^The node was low on resource: memory. Threshold quantity: 150Mi, available: [0-9]+(Ki|Mi)?. Container hog was using [0-9]+(Ki|Mi)?, request is 0, has larger consumption of memory.'"
hog_stopped() { ! api_ctrs hog | awk '$2=="RUNNING"' | grep -q .; }
check "hog: its container is stopped" hog_stopped
echo "# /metrics: kubelet_evictions{eviction_signal=\"allocatableMemory.available\"}: $(metric "$RO" \
    kubelet_evictions eviction_signal=allocatableMemory.available)"
check "/metrics: kubelet_evictions{eviction_signal=\"allocatableMemory.available\"} counter 1" \
    [ "$(metric "$RO" kubelet_evictions eviction_signal=allocatableMemory.available)" = \
    "counter 1" ]
check "/metrics: none under memory.available (the node's own memory did not cross)" \
    no_sample "$RO" kubelet_evictions eviction_signal=memory.available
# The evicted pod's dead container goes once its worker is done; its exit code was stored.
wait_for 300 no_api_ctrs hog
check "hog: its dead container collected from the runtime" no_api_ctrs hog
exit_of() {
	as_ctl /pods/default/$1/get | as_json "d['status']['containerStatuses'][0]['state']['terminated']['exitCode']"
}
check "hog: its exit code still in its API status ($(exit_of hog))" [ "$(exit_of hog)" = 137 ]
"$PODCTL" --socket "$T/root/podctl.sock" describe pod default/hog >"$T/describe.hog" 2>&1
sed -n '/^Containers:/,$p' "$T/describe.hog" | head -8 | sed 's/^/# /'
check "podctl describe: hog's container terminated, exit code 137" sh -c \
    "grep -q 'State: *Terminated' '$T/describe.hog' && grep -Eq 'Exit Code: *137\$' '$T/describe.hog'"
pstatus() { "$PODCTL" --socket "$T/root/podctl.sock" status; }
pstatus | grep -A12 '^Eviction:' | sed 's/^/# /'
check "podctl status: the threshold, its signal and the last eviction" sh -c \
    "'$PODCTL' --socket '$T/root/podctl.sock' status | grep -q 'hard allocatableMemory.available<150Mi' &&
     '$PODCTL' --socket '$T/root/podctl.sock' status | grep -q 'Last eviction: *default/hog: The node was low'"
check "only one pod evicted" [ "$(grep -c 'eviction: evicting pod' "$T/kletd.log")" = 1 ]
for p in g b idle; do check "$p still Running (ranked after the hog)" is_phase $p Running; done
evicted_event() { as_ctl /objects?kind=events | grep -q '"reason":"Evicted"'; }
wait_for 300 evicted_event
check "an Evicted event was posted" evicted_event
# Recovery: the hog is gone; after the 4 s transition period the condition clears.
wait_for 300 mem_pressure False
check "node: MemoryPressure back to False" mem_pressure False
check "logged: conditions without pressure" logged 'eviction: node conditions now without pressure'

# Local storage limits, whatever the pressure: an emptyDir above its sizeLimit, a pod above
# its containers' ephemeral-storage limits.
mkvol() { # NAME RESOURCES EMPTYDIR
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$NODE\",
	    \"volumes\":[{\"name\":\"d\",\"emptyDir\":$3}],\"containers\":[{\"name\":\"$1\",
	    \"image\":\"klet.local/busybox:1.35\",\"resources\":$2,
	    \"volumeMounts\":[{\"name\":\"d\",\"mountPath\":\"/d\"}],
	    \"command\":[\"sh\",\"-c\",\"dd if=/dev/zero of=/d/f bs=1M count=3; sleep 1000\"]}]}}" >/dev/null
}
mkvol scratch '{}' '{"sizeLimit":"1Mi"}'
mkvol fat '{"limits":{"ephemeral-storage":"1Mi"}}' '{}'
wait_for 600 is_phase scratch Failed
check "emptyDir above its sizeLimit: Failed" is_phase scratch Failed
check "... reason Evicted, the kubelet's message" sh -c "[ '$(reason scratch)' = Evicted ] &&
    [ '$(msg scratch)' = 'Usage of EmptyDir volume \"d\" exceeds the limit \"1Mi\". ' ]"
wait_for 600 is_phase fat Failed
check "pod above its ephemeral-storage limit: Failed" is_phase fat Failed
check "... reason Evicted, the kubelet's message" sh -c "[ '$(reason fat)' = Evicted ] &&
    [ '$(msg fat)' = 'Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. ' ]"
for p in g b idle; do check "$p still Running" is_phase $p Running; done
check "/metrics: kubelet_evictions{eviction_signal=\"emptydirfs.limit\"} counter 1" \
    [ "$(metric "$RO" kubelet_evictions eviction_signal=emptydirfs.limit)" = "counter 1" ]
check "/metrics: kubelet_evictions{eviction_signal=\"ephemeralpodfs.limit\"} counter 1" \
    [ "$(metric "$RO" kubelet_evictions eviction_signal=ephemeralpodfs.limit)" = "counter 1" ]
finish
