#!/bin/sh
# bench_watch.sh [PODS] — API pods: the time from the watch's ADDED event (kletd has decoded
# it) to the start of the pod's RunPodSandbox call, for PODS pods (default 50) created one
# after the other, each once the previous one's sandbox call ended, with BENCH_RUNNING
# (default 110) pods already running. kletd joined to the API stand-in, on the fake CRI;
# times from kletd's own log (-v=3): the ADDED line, and the line kuberuntime writes once
# the RunPodSandbox request is handed to the CRI client (its intent row committed).
# On demand only (make bench); BENCH_KEEP=1 keeps the temp dir (kletd.log). Prints:
#   rss_tls pods=0 rss_kib=.. rss_max_kib=.. rss_last_kib=.. hwm_kib=..  (joined over TLS,
#     no pods, idle, before the pods: mean, maximum and last of one sample a second)
#   watch_to_sandbox pods=N p50_ms=.. p90_ms=.. p99_ms=.. max_ms=..
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
b=${top_builddir:-.}
top_srcdir=$top
. "$top/tests/lib/tap.sh"
. "$top/tests/e2e/lib_node.sh" # cgroup_root_rm
. "$top/tests/apiserver/lib.sh"
N=${1:-50}
R=${BENCH_RUNNING:-110}
T=$(mktemp -d /tmp/klet-bench-watch.XXXXXX)
CGROOT=/$(basename "$T" | tr -c 'a-zA-Z0-9\n' -)
kpid= fpid=
cleanup() {
	[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	as_stop
	cgroup_root_rm "$CGROOT"
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "# kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
AS_NODE=bench as_start "$T" --bookmark-interval 60
as_kubeconfig "$T/kubeconfig"
sh "$top/tests/fakecri/run.sh" --socket "$T/cri.sock" >"$T/fakecri.out" 2>"$T/fakecri.err" &
fpid=$!
wait_for 300 grep -q 'fakecri: ready' "$T/fakecri.out" || { cat "$T/fakecri.err"; exit 1; }
"$b/kletd" --root-dir "$T/root" --pod-logs-dir "$T/logs" --hostname-override bench \
    --container-runtime-endpoint "unix://$T/cri.sock" --kubeconfig "$T/kubeconfig" \
    --address 127.0.0.1 --port 0 --healthz-port 0 --cgroup-root "$CGROOT" \
    --max-pods $((N + R + 10)) -v=3 >"$T/kletd.log" 2>&1 &
kpid=$!
wait_for 100 grep -q 'kletd ready' "$T/kletd.log" || { tail "$T/kletd.log" >&2; exit 1; }
# Joined over TLS, no pods: its resident memory once registered and settled, in the steady
# state: from the first unmapping of clean file pages (10 s after the start, core/heap.h),
# one sample a second for BENCH_TLS_IDLE s (default 75: a bookmark's position is saved once
# a minute, and the image GC looks every 30 s): the mean, the maximum and the last; and the
# high-water mark (the start's peak).
wait_for 300 grep -q 'watch: .*-> watching' "$T/kletd.log"
wait_for 300 grep -q 'clean file pages unmapped' "$T/kletd.log"
rss_sample "$kpid" "${BENCH_TLS_IDLE:-75}"
echo "rss_tls pods=0 rss_kib=$rss_mean rss_max_kib=$rss_max rss_last_kib=${rss_last:-?}" \
    "hwm_kib=$(awk '$1 == "VmHWM:" {print $2}' "/proc/$kpid/status")"
pod() { # NAME
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"bench\",\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":[\"sleep\",\"inf\"]}]}}" >/dev/null
}
i=0
while [ $i -lt "$R" ]; do pod "r$i"; i=$((i + 1)); done
sent='RunPodSandbox sent'
sandboxes() { grep -c "$sent" "$T/kletd.log"; }
wait_for 3000 sh -c "[ \$(grep -c '$sent' '$T/kletd.log') -ge $R ]" ||
    { echo "the $R running pods did not start" >&2; exit 1; }
sleep 5
i=0
while [ $i -lt "$N" ]; do
	before=$(sandboxes)
	pod "w$i"
	wait_for 100 sh -c "[ \$(grep -c '$sent' '$T/kletd.log') -gt $before ]" ||
	    echo "# w$i: no RunPodSandbox" >&2
	sleep 0.2
	i=$((i + 1))
done
/usr/bin/python3 - "$T/kletd.log" "$N" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
def ts(l):
    m = re.match(r"^[IWEF]\d{4} (\d\d):(\d\d):(\d\d\.\d+)", l)
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3)) if m else None
lat = []
for i in range(int(sys.argv[2])):
    name = "default/w%d " % i
    a = next((k for k, l in enumerate(lines) if "watch: ADDED pod " + name in l), None)
    if a is None:
        continue
    for l in lines[a:]:
        if "RunPodSandbox sent" in l:
            lat.append((ts(l) - ts(lines[a])) * 1000)
            break
lat.sort()
def q(p):
    return lat[min(len(lat) - 1, int(p * (len(lat) - 1) + 0.5))] if lat else -1
print("watch_to_sandbox pods=%d p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f" % (len(lat),
      q(0.5), q(0.9), q(0.99), lat[-1] if lat else -1))
PY
