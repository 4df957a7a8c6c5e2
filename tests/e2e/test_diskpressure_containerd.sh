#!/bin/sh
# Disk pressure on a real containerd whose root (the image file system) is a small tmpfs,
# joined to the API stand-in: the eviction manager reclaims node-level resources before it
# evicts a pod, as the kubelet's reclaimNodeLevelResources (dead containers, then unused
# images), and evicts only when that was not enough. --eviction-hard imagefs.available<X is
# set some 25 MiB under what is free at the start, and a filler file crosses it on demand.
#  1. The reclaim suffices: a finished pod's dead container (the only user of img-a) and the
#     never used img-b are removed, img-a after its container, freeing more than the filler
#     took; no pod is evicted, DiskPressure goes True and clears after the transition period.
#  2. It does not: a second finished pod's dead container and its image img-c (imported
#     later) are removed first, then the running BestEffort pod is evicted with the kubelet's
#     message for ephemeral-storage; kubelet_evictions{eviction_signal="imagefs.available"}
#     counts it; its containers are collected while its exit code stays in its status.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-diskp}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup_tmpfs dpnode 160
metrics_ok
CTR="ctr --address $SOCK -n k8s.io"
for i in a b c; do $PY "$top/tests/e2e/mkimage.py" klet.local/img-$i 1 4 "$T/img-$i.tar"; done
for i in a b; do $CTR images import --snapshotter overlayfs "$T/img-$i.tar" >/dev/null; done
has_image() { has_ref "klet.local/img-$1:1"; }
id_of() { image_id "klet.local/img-$1:1"; }
not() { ! "$@"; }
IDA=$(id_of a) IDB=$(id_of b)
check "img-a and img-b imported" [ -n "$IDA" ] && [ -n "$IDB" ]

mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
avail_k() { df -P -k "$ROOTFS" | awk 'NR==2 {print $4}'; }
X=$(($(avail_k) / 1024 - 25)) # MiB
echo "# image fs: $(df -h "$ROOTFS" | tail -1); threshold imagefs.available<${X}Mi"
RO=$(free_port)
# Image GC for disk usage off (high threshold 100): only the eviction manager's reclaim
# removes images. Detection every second, so that an image imported later is soon known.
KLET_IMAGE_GC_PERIOD_MS=1000 start_kletd --kubeconfig "$T/kubeconfig" \
    --eviction-hard "imagefs.available<${X}Mi" --eviction-monitoring-period 1s \
    --eviction-pressure-transition-period 15s --image-gc-high-threshold 100 \
    --image-gc-low-threshold 99 --image-minimum-gc-age 1s \
    --pod-infra-container-image klet.local/pause:3.9 --read-only-port "$RO" -v=3
check "kletd started" logged 'kletd ready'

cond() { # TYPE -> status in the node status
	as_ctl /objects?kind=nodes | as_json \
	    "[c['status'] for n in d for c in n['status'].get('conditions', []) if c['type']=='$1'][0]"
}
disk_pressure() { [ "$(cond DiskPressure)" = "$1" ]; }
wait_for 300 disk_pressure False
check "node: DiskPressure False at first" disk_pressure False
mkpod() { # NAME IMAGE RESTARTPOLICY COMMAND
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$NODE\",
	    \"restartPolicy\":\"$3\",\"terminationGracePeriodSeconds\":30,
	    \"containers\":[{\"name\":\"$1\",\"image\":\"$2\",\"imagePullPolicy\":\"Never\",
	    \"command\":$4}]}}" >/dev/null
}
pod_get() { as_ctl "/pods/default/$1/get"; }
phase() { pod_get "$1" | as_json "d['status'].get('phase', '')"; }
is_phase() { [ "$(phase "$1")" = "$2" ]; }
mkpod be klet.local/busybox:1.35 Always '["sleep","1000"]'
mkpod done-a klet.local/img-a:1 Never '["/bin/busybox","true"]'
wait_for 600 is_phase be Running
wait_for 600 is_phase done-a Succeeded
check "be (BestEffort) Running" is_phase be Running
check "done-a Succeeded" is_phase done-a Succeeded
has_ctrs() { [ -n "$(api_ctrs "$1")" ]; }
sleep 3 # a few housekeeping passes
check "done-a's dead container kept (the newest instance of a finished pod)" has_ctrs done-a

# fill K: a filler file that leaves K KiB fewer than the threshold available.
fill() {
	need=$(($(avail_k) - X * 1024 + $1))
	dd if=/dev/zero of="$ROOTFS/filler$2" bs=1024 count="$need" 2>/dev/null
	echo "# filler$2: $need KiB, $(avail_k) KiB available (threshold $((X * 1024)) KiB)"
}
line_of() { grep -n -- "$1" "$T/kletd.log" | head -1 | cut -d: -f1; }
before() { # PATTERN1 PATTERN2: both logged, the first one first
	a=$(line_of "$1") b=$(line_of "$2")
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]
}

# 1. A filler leaving 4 MiB under the threshold: the reclaim frees more.
check "done-a's image img-a is there" has_image a
fill 4096 1
wait_for 300 logged 'eviction: able to reduce ephemeral-storage pressure without evicting pods'
grep -E 'eviction: |removing dead container|image GC: removed' "$T/kletd.log" | sed 's/^/# /'
check "reclaim: attempted for imagefs.available" \
    logged 'eviction: attempting to reclaim ephemeral-storage (imagefs.available<'
check "... done-a's dead container removed" no_api_ctrs done-a
check "... img-a (its image) removed" not has_image a
check "... img-b (never used) removed" not has_image b
check "... the container before its image" \
    before "removing dead container .* of pod default/done-a" "image GC: removed image $IDA"
check "... the reclaim before any image removal" \
    before 'eviction: attempting to reclaim' "image GC: removed image $IDB"
check "... images removed as the reclaim for the eviction manager" \
    logged "image GC: removed image $IDB ([0-9]* bytes, reclaim for the eviction manager)"
check "the reclaim was enough: logged" \
    logged 'eviction: able to reduce ephemeral-storage pressure without evicting pods'
check "no pod evicted" not logged 'eviction: evicting pod'
check "be still Running" is_phase be Running
check "done-a still Succeeded (not evicted)" is_phase done-a Succeeded
wait_for 200 disk_pressure True
check "node: DiskPressure True" disk_pressure True
wait_for 400 disk_pressure False
check "node: DiskPressure cleared after the transition period" disk_pressure False
check "/metrics: no eviction for imagefs.available" \
    no_sample "$RO" kubelet_evictions eviction_signal=imagefs.available
check "/metrics: klet_eviction_reclaims_total 1" \
    [ "$(metric "$RO" klet_eviction_reclaims_total)" = "counter 1" ]

# 2. img-c imported, used by a pod that finishes; a filler leaving 40 MiB under the
# threshold: the reclaim (about 12 MiB) is not enough, the BestEffort pod is evicted.
$CTR images import --snapshotter overlayfs "$T/img-c.tar" >/dev/null
IDC=$(id_of c)
check "img-c imported" [ -n "$IDC" ]
mkpod done-c klet.local/img-c:1 Never '["/bin/busybox","true"]'
wait_for 600 is_phase done-c Succeeded
check "done-c Succeeded" is_phase done-c Succeeded
sleep 3 # image GC's detection sees img-c (in use), older than the minimum age of 1 s
fill $((40 * 1024)) 2
wait_for 300 logged 'eviction: evicting pod default/be'
grep -E 'eviction: |removing dead container|image GC: removed' "$T/kletd.log" | tail -n +8 |
    sed 's/^/# /'
check "the BestEffort pod evicted" logged 'eviction: evicting pod default/be (hard threshold imagefs.available<'
check "... after done-c's dead container was removed" \
    before "removing dead container .* of pod default/done-c" 'eviction: evicting pod default/be'
check "... and its image img-c" before "image GC: removed image $IDC" 'eviction: evicting pod default/be'
check "... the reclaim found not enough: logged" \
    logged 'eviction: must evict pod(s) to reclaim ephemeral-storage'
wait_for 300 is_phase be Failed
check "be: phase Failed" is_phase be Failed
reason() { pod_get "$1" | as_json "d['status'].get('reason', '')"; }
msg() { pod_get "$1" | as_json "d['status'].get('message', '')"; }
echo "# be: $(reason be): $(msg be)"
check "be: reason Evicted" [ "$(reason be)" = Evicted ]
check "be: the kubelet's message for ephemeral-storage" sh -c "echo '$(msg be)' | grep -Eq \
    '^The node was low on resource: ephemeral-storage. Threshold quantity: ${X}Mi, available: [0-9]+(Ki|Mi)?. (Container be was using [0-9]+(Ki|Mi)?, request is 0, has larger consumption of ephemeral-storage. )?\$'"
check "done-c not evicted (finished)" is_phase done-c Succeeded
check "/metrics: kubelet_evictions{eviction_signal=\"imagefs.available\"} counter 1" \
    [ "$(metric "$RO" kubelet_evictions eviction_signal=imagefs.available)" = "counter 1" ]
# The evicted pod's dead containers are collected once its worker is done; its exit code
# stays in its status.
wait_for 300 no_api_ctrs be
check "be's containers removed from the runtime" no_api_ctrs be
exit_of() { pod_get "$1" | as_json "d['status']['containerStatuses'][0]['state']['terminated']['exitCode']"; }
check "be's exit code still in its API status ($(exit_of be))" [ "$(exit_of be)" -gt 0 ]
rm -f "$ROOTFS"/filler*
wait_for 400 disk_pressure False
check "node: DiskPressure cleared once the fillers are gone" disk_pressure False
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
