#!/bin/sh
# bench_eviction.sh — how fast the eviction manager reacts to memory pressure, on a real
# containerd (root; a private instance, KLET_CONTAINERD_DIR, default
# ${KLET_TEST_TMP:-/tmp}/klet-ctd-bench-ev). As tests/e2e/test_eviction_containerd.sh: the
# pods' allocatable memory is 400Mi (--system-reserved), --eviction-hard
# memory.available<150Mi, and a BestEffort pod allocates 300M. From kletd's log (-v=3):
#   notify_to_stop_ms  the cgroup memory threshold notification (the eventfd fires when the
#                      usage crosses) to the StopContainer call of the evicted pod
#   started_to_stop_ms the hog container's Started event to that StopContainer (an upper
#                      bound that includes the allocation itself)
# BENCH_RUNS (default 3) runs. On demand only; asserts nothing. Build without sanitizers:
#   KLET_CONFIGURE_FLAGS='CFLAGS=-O2 -g' sh contrib/dev-build.sh NAME-o2
#   top_srcdir=$PWD top_builddir=/tmp/klet-build-NAME-o2 sh tests/bench/bench_eviction.sh
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-bench-ev}
export KLET_CONTAINERD_DIR
. "$top/tests/lib/tap.sh"
. "$top/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
[ -f /sys/fs/cgroup/memory/cgroup.event_control ] || { echo "needs cgroup v1 memory"; exit 2; }
node_setup benchev
CGR=/klet-bench-ev-$$
b_cleanup() {
	as_stop
	node_cleanup
	cgroup_root_rm $CGR
}
trap b_cleanup EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
memtotal=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024))
start_kletd --kubeconfig "$T/kubeconfig" --cgroup-root $CGR \
    --system-reserved memory=$((memtotal - 400 * 1024 * 1024)) \
    --eviction-hard memory.available\<150Mi --eviction-pressure-transition-period 2s \
    --eviction-monitoring-period 10s -v=3
ms() { # a glog line's time of day in ms
	awk '{split($2, t, ":"); printf "%d\n", ((t[1] * 60 + t[2]) * 60 + t[3]) * 1000}'
}
phase() { as_ctl /pods/default/$1/get | as_json "d['status'].get('phase', '')"; }
is_phase() { [ "$(phase $1)" = "$2" ]; }
runs=${BENCH_RUNS:-3}
i=1
while [ $i -le "$runs" ]; do
	n=$(grep -c 'eviction: evicting pod' "$T/kletd.log")
	wp=$(grep -c 'conditions now without pressure' "$T/kletd.log")
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"hog$i\"},\"spec\":{\"nodeName\":\"$NODE\",
	    \"containers\":[{\"name\":\"hog\",\"image\":\"klet.local/busybox:1.35\",
	    \"command\":[\"sh\",\"-c\",\"dd if=/dev/zero bs=300M count=1 | sleep 1000\"]}]}}" >/dev/null
	wait_for 1200 sh -c "[ \$(grep -c 'eviction: evicting pod' '$T/kletd.log') -gt $n ]"
	wait_for 300 grep -q "killing container hog (" "$T/kletd.log"
	sleep 1
	st=$(grep "hog$i .*Normal Started" "$T/kletd.log" | head -1 | ms)
	# the notification that ran the evicting pass (the eventfd also fires on the way down)
	nt=$(awk -v p="eviction: evicting pod default/hog$i " '/eviction: memory threshold notification/ {l = $0}
	    index($0, p) {print l; exit}' "$T/kletd.log" | ms)
	ev=$(grep "eviction: evicting pod default/hog$i " "$T/kletd.log" | head -1)
	sp=$(grep "killing container hog (" "$T/kletd.log" | tail -1 | ms)
	echo "run $i: notify_to_stop_ms=$((sp - nt)) started_to_stop_ms=$((sp - st)) by=$(echo "$ev" |
	    grep -q 'notification' && echo notification || echo poll)"
	wait_for 600 is_phase hog$i Failed
	as_ctl "/pods/default/hog$i?method=DELETE&grace=0" >/dev/null
	wait_for 600 sh -c "[ \$(grep -c 'conditions now without pressure' '$T/kletd.log') -gt $wp ]"
	sleep 1
	i=$((i + 1))
done
