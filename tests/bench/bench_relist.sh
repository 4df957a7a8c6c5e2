#!/bin/sh
# bench_relist.sh [N] — relist duration with N static pods (default 110) on the fake CRI,
# and the time from a kletd restart to its first relist and resumed workers. On demand only:
#   top_srcdir=$PWD top_builddir=BUILD sh tests/bench/bench_relist.sh 110
set -u
n=${1:-110}
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake nl-bench
i=1
while [ $i -le "$n" ]; do
	put "p$i.json" <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p$i"},
 "spec": {"terminationGracePeriodSeconds": 1,
  "containers": [{"name": "c", "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"]}]}}
M
	i=$((i + 1))
done
t0=$(date +%s%N)
start_kletd --max-pods "$n"
pat="relist pods=$n containers=$n sandboxes=$n .*status_calls=0"
wait_for 3000 logged "$pat"
t1=$(date +%s%N)
echo "# $n pods running after $(( (t1 - t0) / 1000000 )) ms"
echo "# steady: $(grep "$pat" "$T/kletd.log" | tail -1 | sed 's/.*\] //')"
stop_kletd KILL
: >"$T/kletd.log"
t0=$(date +%s%N)
start_kletd --max-pods "$n"
wait_for 3000 logged "relist pods=$n "
t1=$(date +%s%N)
echo "# restart: first relist after $(( (t1 - t0) / 1000000 )) ms: $(grep "relist pods=$n " "$T/kletd.log" | head -1 | sed 's/.*\] //')"
echo "# $(grep 'resumed' "$T/kletd.log" | sed 's/.*\] //')"
stop_kletd TERM
