#!/bin/sh
# Image garbage collection on a real containerd whose root (images, snapshots) is a small
# tmpfs, joined to the API stand-in. Four test images (tests/e2e/mkimage.py, 4 MiB each):
# one of img-a / img-b is used by a pod that is then deleted (the one whose ID sorts first, so
# that no order but the least recently used one passes), the other never used, img-c used by
# a running pod,
# img-d imported after kletd started (younger than --image-minimum-gc-age). The thresholds
# are set a few percent above the present usage, and usage is pushed over the high one on
# demand with a filler file on the tmpfs. Checked: the first GC removes the never used one
# (least recently used), the second the used one, the third finds nothing it may remove
# (img-c in use, img-d too young, busybox in use, the sandbox image kept) and posts
# FreeDiskSpaceFailed with the kubelet's message; the node status lists the images by size;
# podctl status shows the image GC; /metrics (the read-only port, parsed with
# python3-prometheus-client) counts kubelet_image_garbage_collected_total{reason="space"} 2.
# Then, restarted with --image-maximum-gc-age 10s and the disk thresholds off, the age
# removals: img-d (never used) once kletd has run 10 s, img-c 10 s after its pod went, and
# reason="age" counts them.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-imagegc}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup_tmpfs igcnode 160
metrics_ok
CTR="ctr --address $SOCK -n k8s.io"
for i in a b c d; do $PY "$top/tests/e2e/mkimage.py" klet.local/img-$i 1 4 "$T/img-$i.tar"; done
for i in a b c; do $CTR images import --snapshotter overlayfs "$T/img-$i.tar" >/dev/null; done
has_image() { has_ref "klet.local/img-$1:1"; }
not() { ! "$@"; }
id_of() { image_id "klet.local/img-$1:1"; }
for i in a b c; do check "img-$i imported" has_image $i; done
IDA=$(id_of a) IDB=$(id_of b)
# The image used for a while is the one an order by ID would take first, so that only the
# least recently used order removes the never used one first.
if [ "$(printf '%s\n%s\n' "$IDA" "$IDB" | sort | head -1)" = "$IDA" ]; then
	USED=a NEVER=b IDU=$IDA IDN=$IDB
else
	USED=b NEVER=a IDU=$IDB IDN=$IDA
fi
echo "# used then unused: img-$USED ($IDU); never used: img-$NEVER ($IDN)"

mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
usage() { df -P "$ROOTFS" | awk 'NR==2 {print int(100 - $4 * 100 / $2)}'; }
U=$(usage)
H=$((U + 8))
echo "# image fs: $(df -h "$ROOTFS" | tail -1); usage $U%, thresholds $H% / $((H - 1))%"
RO=$(free_port)
KLET_IMAGE_GC_PERIOD_MS=2000 start_kletd --kubeconfig "$T/kubeconfig" \
    --image-gc-high-threshold $H --image-gc-low-threshold $((H - 1)) \
    --pod-infra-container-image klet.local/pause:3.9 -v=3 --read-only-port "$RO"
check "kletd started" logged 'kletd ready'

mkpod() { # NAME IMAGE COMMAND
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$NODE\",
	    \"terminationGracePeriodSeconds\":1,\"containers\":[{\"name\":\"c\",\"image\":\"$2\",
	    \"imagePullPolicy\":\"Never\",\"command\":$3}]}}" >/dev/null
}
phase() { as_ctl /pods/default/$1/get | as_json "d['status'].get('phase', '')"; }
is_phase() { [ "$(phase $1)" = "$2" ]; }
mkpod user-a klet.local/img-$USED:1 '["/bin/busybox","sleep","1000"]'
mkpod keep-c klet.local/img-c:1 '["/bin/busybox","sleep","1000"]'
mkpod keep-bb klet.local/busybox:1.35 '["sleep","1000"]'
for p in user-a keep-c keep-bb; do wait_for 600 is_phase $p Running; done
for p in user-a keep-c keep-bb; do check "$p Running" is_phase $p Running; done
# img-$USED: used (seen in use by a detection pass, every 2 s here), then unused (its pod
# deleted, its containers removed).
sleep 5
as_ctl "/pods/default/user-a?method=DELETE&grace=0" >/dev/null
wait_for 600 no_api_ctrs user-a
check "user-a's containers removed" no_api_ctrs user-a
sleep 3 # a detection pass sees img-a unused after its use
$CTR images import --snapshotter overlayfs "$T/img-d.tar" >/dev/null
check "img-d imported after the start" has_image d

# fill DELTA_PCT: the tmpfs usage at or over the high threshold.
fill() {
	n=$1
	df -P -B1 "$ROOTFS" | awk -v h=$H 'NR==2 {need = $4 - int($2 * (100 - h) / 100) + 65536;
	    if (need < 0) need = 0; print int(need / 1024) + 1}' >"$T/fillk"
	dd if=/dev/zero of="$ROOTFS/filler$n" bs=1024 count="$(cat "$T/fillk")" 2>/dev/null
	echo "# filler$n: $(cat "$T/fillk") KiB, usage now $(usage)%"
}
removed() { grep -q "image GC: removed image $1" "$T/kletd.log"; }
fill 1
wait_for 300 removed "$IDN"
check "first GC: the never used image (img-$NEVER) removed" removed "$IDN"
check "... gone from the runtime" not has_image $NEVER
check "... img-$USED (used more recently) still there" has_image $USED
check "logged the kubelet's high threshold line" logged \
    'image GC: Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold'
fill 2
wait_for 300 removed "$IDU"
check "second GC: img-$USED removed" removed "$IDU"
check "... gone from the runtime" not has_image $USED
fill 3
failed_event() { as_ctl /objects?kind=events | grep -q '"reason":"FreeDiskSpaceFailed"'; }
wait_for 300 failed_event
check "third GC: nothing eligible, FreeDiskSpaceFailed event" failed_event
failed_msg() { as_ctl /objects?kind=events | grep -Eq \
    'Failed to garbage collect required amount of images. Attempted to free [0-9]+ bytes, but only found 0 bytes eligible to free.'; }
check "... with the kubelet's message" failed_msg
check "img-c (in use) kept" has_image c
check "img-d (younger than 2m) kept" has_image d
check "busybox (in use) kept" has_ref klet.local/busybox:1.35
check "the sandbox image kept" has_ref klet.local/pause:3.9
check "exactly two images removed" [ "$(grep -c 'image GC: removed image' "$T/kletd.log")" = 2 ]
echo "# /metrics: kubelet_image_garbage_collected_total space: $(metric "$RO" \
    kubelet_image_garbage_collected_total reason=space), age: $(metric "$RO" \
    kubelet_image_garbage_collected_total reason=age)"
check "/metrics: kubelet_image_garbage_collected_total{reason=\"space\"} counter 2 (HELP, TYPE)" \
    [ "$(metric "$RO" kubelet_image_garbage_collected_total reason=space)" = "counter 2" ]
check "/metrics: ... {reason=\"age\"} 0" \
    [ "$(metric "$RO" kubelet_image_garbage_collected_total reason=age)" = "counter 0" ]
grep 'image GC' "$T/kletd.log" | sed 's/^/# /'

node_images() {
	as_ctl /objects?kind=nodes | as_json "[' '.join(i['names']) + ' ' + str(i['sizeBytes']) for n in d for i in n['status'].get('images', [])]"
}
echo "# node status images: $(node_images)"
listed_c() { node_images | grep -Eq "'klet.local/img-c:1 [0-9]{7,}'"; }
listed_b() { node_images | grep -q "klet.local/img-$NEVER:1"; }
by_size() {
	as_ctl /objects?kind=nodes | as_json "[i['sizeBytes'] for n in d for i in n['status'].get('images', [])]" |
	    $PY -c 'import ast, sys; v = ast.literal_eval(sys.stdin.read()); sys.exit(v != sorted(v, reverse=True) or len(v) < 4)'
}
check "node status: img-c listed with its size" listed_c
check "node status: img-$NEVER no longer listed" not listed_b
check "node status: images sorted by size" by_size
PODCTL=${top_builddir:-.}/podctl
"$PODCTL" --socket "$T/root/podctl.sock" status | grep -A2 '^Image GC:' | sed 's/^/# /'
check "podctl status: image GC with two removals" sh -c \
    "'$PODCTL' --socket '$T/root/podctl.sock' status | grep -q '2 images removed'"
rm -f "$ROOTFS"/filler*

# Age (imageMaximumGCAge): the disk thresholds off, unused images go once unused for 10 s,
# but not before kletd has run 10 s.
IDD=$(id_of d) IDC=$(id_of c)
stop_kletd TERM
RO=$(free_port)
t0=$(date +%s)
KLET_IMAGE_GC_PERIOD_MS=1000 start_kletd --kubeconfig "$T/kubeconfig" \
    --image-gc-high-threshold 100 --image-gc-low-threshold 99 --image-minimum-gc-age 1s \
    --image-maximum-gc-age 10s --pod-infra-container-image klet.local/pause:3.9 -v=3 \
    --read-only-port "$RO"
ready2() { [ "$(grep -c 'kletd ready' "$T/kletd.log")" -ge 2 ]; }
wait_for 100 ready2
check "kletd restarted with --image-maximum-gc-age 10s" ready2
wait_for 300 removed "$IDD"
t1=$(date +%s)
check "age: img-d (never used) removed" removed "$IDD"
check "... not before kletd ran 10 s ($((t1 - t0)) s)" [ $((t1 - t0)) -ge 10 ]
check "... logged as unused for longer than the maximum age" \
    logged "image GC: removed image $IDD ([0-9]* bytes, unused for longer than the maximum age)"
check "img-c (in use) kept" has_image c
check "keep-c's container is there" [ -n "$(api_ctrs keep-c)" ]
as_ctl "/pods/default/keep-c?method=DELETE&grace=0" >/dev/null
wait_for 600 no_api_ctrs keep-c
t2=$(date +%s)
check "keep-c's containers removed" no_api_ctrs keep-c
sleep 5
check "img-c kept 5 s after its last use" has_image c
wait_for 300 removed "$IDC"
t3=$(date +%s)
check "img-c removed once unused for 10 s ($((t3 - t2)) s after its container)" \
    [ $((t3 - t2)) -ge 8 ]
check "... gone from the runtime" not has_image c
check "busybox (in use) kept" has_ref klet.local/busybox:1.35
check "the sandbox image kept" has_ref klet.local/pause:3.9
check "/metrics: kubelet_image_garbage_collected_total{reason=\"age\"} 2" \
    [ "$(metric "$RO" kubelet_image_garbage_collected_total reason=age)" = "counter 2" ]
check "... {reason=\"space\"} 0" \
    [ "$(metric "$RO" kubelet_image_garbage_collected_total reason=space)" = "counter 0" ]
check "podctl status: two removed for their age" sh -c \
    "'$PODCTL' --socket '$T/root/podctl.sock' status | grep -q '2 images removed (2 for their age)'"
finish
