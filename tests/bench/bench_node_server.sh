#!/bin/sh
# bench_node_server.sh — the node server's costs on a private containerd (on demand, not in
# `make check`; prints figures, asserts nothing; build without sanitizers, e.g. -O2):
#   logs: a container writes BENCH_LOG_MB (50) MB to stdout; /containerLogs of the whole
#         file read once (MB/s, kletd CPU ms per MB), and once more with follow=true until
#         the container exits;
#   exec: BENCH_EXECS (20) concurrent `kubectl exec ... sleep 5` sessions through the
#         stand-in: kletd's RSS and CPU while they run;
#   scrapes: wall time of /metrics, /metrics/resource and /stats/summary (BENCH_PODS extra
#         pause pods, default 10).
#   top_srcdir=$PWD top_builddir=build-o2 sh tests/bench/bench_node_server.sh
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-srvbench}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
MB=${BENCH_LOG_MB:-50}
EXECS=${BENCH_EXECS:-20}
PODS=${BENCH_PODS:-10}
KUBECTL=$(command -v kubectl) || node_skip "kubectl is not installed"
node_setup srvbench
trap 'as_stop; node_cleanup' EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
sed "s#/node\.#/admin.#g" "$T/kubeconfig" >"$T/admin.kubeconfig"
start_kletd --kubeconfig "$T/kubeconfig" --client-ca-file "$AS_CERTS/ca.crt" \
    --container-log-max-size=-1 --max-pods 200
P=$(sed -n 's/.*serving HTTPS on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/kletd.log" | tail -1)
U=https://127.0.0.1:$P
admin() { curl -sk --cert "$AS_CERTS/admin.crt" --key "$AS_CERTS/admin.key" "$@"; }
cpu_ms() { awk '{print ($14 + $15) * 10}' "/proc/$kpid/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$kpid/status"; }
k() { timeout 120 "$KUBECTL" --kubeconfig "$T/admin.kubeconfig" "$@"; }
phase() { as_ctl "/pods/default/$1/get" | as_json 'd["status"].get("phase")' 2>/dev/null; }
running() { [ "$(phase "$1")" = Running ]; }
echo "# idle: rss_kib=$(rss_kib)"
cat >"$T/w.json" <<J
{"metadata":{"name":"writer","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,"restartPolicy":"Never",
  "containers":[{"name":"c","image":"klet.local/busybox:1.35",
   "command":["sh","-c","sleep 3; head -c $((MB * 1000000)) /dev/zero | tr '\\\\0' x | fold -w 99"]}]}}
J
as_ctl /pods -X POST --data-binary "@$T/w.json" >/dev/null
wait_for 600 running writer
c0=$(cpu_ms); t0=$(date +%s%N)
admin -o "$T/follow.out" "$U/containerLogs/default/writer/c?follow=true"
t1=$(date +%s%N); c1=$(cpu_ms)
b=$(wc -c <"$T/follow.out")
echo "logs follow: bytes=$b wall_ms=$(( (t1 - t0) / 1000000 )) (includes the writer's own pace) kletd_cpu_ms=$((c1 - c0))"
c0=$(cpu_ms); t0=$(date +%s%N)
admin -o "$T/read.out" "$U/containerLogs/default/writer/c"
t1=$(date +%s%N); c1=$(cpu_ms)
b=$(wc -c <"$T/read.out"); ms=$(( (t1 - t0) / 1000000 ))
echo "logs read: bytes=$b wall_ms=$ms MB_per_s=$(( b / 1000 / (ms > 0 ? ms : 1) )) kletd_cpu_ms=$((c1 - c0)) cpu_ms_per_MB=$(echo "$c0 $c1 $b" | awk '{printf "%.2f", ($2-$1)/($3/1e6)}')"
c0=$(cpu_ms); t0=$(date +%s%N)
k logs writer >"$T/klogs.out"
t1=$(date +%s%N); c1=$(cpu_ms)
echo "kubectl logs (through the stand-in): bytes=$(wc -c <"$T/klogs.out") wall_ms=$(( (t1 - t0) / 1000000 )) kletd_cpu_ms=$((c1 - c0))"
cat >"$T/s.json" <<J
{"metadata":{"name":"sleeper","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,
  "containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","100000"]}]}}
J
as_ctl /pods -X POST --data-binary "@$T/s.json" >/dev/null
wait_for 600 running sleeper
r0=$(rss_kib); c0=$(cpu_ms); t0=$(date +%s%N)
i=0; pids=
while [ $i -lt "$EXECS" ]; do
	k exec sleeper -- sleep 5 >/dev/null 2>&1 &
	pids="$pids $!"; i=$((i + 1))
done
sleep 3
r1=$(rss_kib)
wait $pids
t1=$(date +%s%N); c1=$(cpu_ms)
echo "exec x$EXECS: rss_kib before=$r0 during=$r1 after=$(rss_kib) kletd_cpu_ms=$((c1 - c0)) wall_ms=$(( (t1 - t0) / 1000000 ))"
i=0
while [ $i -lt "$PODS" ]; do
	sed "s/sleeper/p$i/" "$T/s.json" >"$T/p.json"
	as_ctl /pods -X POST --data-binary "@$T/p.json" >/dev/null
	i=$((i + 1))
done
allrun() { [ "$(admin "$U/runningpods/" | grep -o '"uid"' | wc -l)" -ge $((PODS + 1)) ]; }
wait_for 3000 allrun
for ep in /metrics /metrics/resource /stats/summary; do
	c0=$(cpu_ms); t0=$(date +%s%N)
	n=0; while [ $n -lt 20 ]; do admin -o "$T/scrape" "$U$ep"; n=$((n + 1)); done
	t1=$(date +%s%N); c1=$(cpu_ms)
	echo "scrape $ep x20 with $((PODS + 1)) running pods: bytes=$(wc -c <"$T/scrape") wall_ms_each=$(( (t1 - t0) / 20000000 )) kletd_cpu_ms_each=$(( (c1 - c0) / 20 ))"
done
echo "# rss_kib at the end=$(rss_kib)"
