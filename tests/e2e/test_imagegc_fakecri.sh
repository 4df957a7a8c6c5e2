#!/bin/sh
# Image GC's cadence on the fake CRI, the kubelet's: the image list (ListImages, and
# ImageFsInfo for the image file system) every 30 s; what is in use (ListContainers) only at
# the detection every 5 min and in GC passes. With the list's period at 1 s
# (KLET_IMAGE_LIST_PERIOD_MS): list passes come every second (logged; ListImages and
# ImageFsInfo counted by the fake), an image added to the runtime is in the next one, and
# image GC makes no ListContainers call of its own: every relist makes one ListPodSandbox
# and one ListContainers, so their counts stay equal. With the detection's period at 1 s too
# (KLET_IMAGE_GC_PERIOD_MS), they part: image GC lists the containers at each pass.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake igc-fake

ctl() { $PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" "$@"; }
calls() { # METHOD -> count since the last reset
	ctl '{"cmd":"calls"}' | $PY -c 'import json,sys; print(json.load(sys.stdin).get("counts", {}).get(sys.argv[1], 0))' "$1"
}
listed() { # the image count of the last list pass
	grep 'image GC: list pass' "$T/kletd.log" | tail -1 |
	    sed -n 's/.*list pass: \([0-9]*\) images.*/\1/p'
}
# window SECONDS: the calls of that many seconds, as "ListImages ImageFsInfo ListContainers
# ListPodSandbox".
window() {
	ctl '{"cmd":"reset_calls"}' >/dev/null
	sleep "$1"
	echo "$(calls ListImages) $(calls ImageFsInfo) $(calls ListContainers) $(calls ListPodSandbox)"
}

KLET_IMAGE_LIST_PERIOD_MS=1000 start_kletd -v=3
check "kletd started" logged 'kletd ready'
detects='image GC: \(detection\|collection\|reclaim\) pass'
wait_for 100 logged "$detects"
check "the first pass detects (a collection pass: containers listed)" logged "$detects"
wait_for 100 logged 'image GC: list pass'
check "list passes follow" logged 'image GC: list pass'
set -- $(window 6)
echo "# 6 s, list period 1 s: ListImages $1, ImageFsInfo $2, ListContainers $3, ListPodSandbox $4"
check "a list pass a second: ListImages" [ "$1" -ge 4 ]
check "... and ImageFsInfo" [ "$2" -ge 4 ]
check "the relists ran (ListPodSandbox)" [ "$4" -ge 4 ]
near() { [ $(($1 - $2)) -le 1 ] && [ $(($2 - $1)) -le 1 ]; }
check "no ListContainers but the relists' (as many as ListPodSandbox, one in flight at most)" \
    near "$3" "$4"
n=$(listed)
echo "# last list pass: ${n:-?} images"
ctl '{"cmd":"images","add":["klet.local/extra:1"]}' >/dev/null
one_more() { [ "$(listed)" = $((${n:-0} + 1)) ]; }
wait_for 50 one_more
check "an image added to the runtime is in the next list pass" one_more
check "no detection since the first (its period is 5 min)" \
    [ "$(grep -c "$detects" "$T/kletd.log")" -eq 1 ]
stop_kletd TERM

# Detection (and collection) every second too: image GC lists the containers each pass.
KLET_IMAGE_GC_PERIOD_MS=1000 start_kletd -v=3
wait_for 100 logged 'image GC: collection pass'
set -- $(window 6)
echo "# 6 s, every period 1 s: ListImages $1, ImageFsInfo $2, ListContainers $3, ListPodSandbox $4"
check "detection every second: ListContainers of image GC's own on top of the relists'" \
    [ $(($3 - $4)) -ge 3 ]
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
