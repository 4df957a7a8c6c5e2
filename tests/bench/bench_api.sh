#!/bin/sh
# bench_api.sh — what an idle node costs the API server, and how fast a new pod starts.
# kletd joined to the API stand-in, on the fake CRI (tests/fakecri), with BENCH_PODS running
# pods (default 110). After they all report Running and a settling pause, the stand-in's
# request log is cleared and BENCH_SECONDS (default 60) of idle traffic are measured:
# requests per minute by kind, bytes sent by the node (bodies + headers, approximate) and
# bytes received (response bodies and watch stream). Then one more pod is created and the
# latency from its ADDED event (kletd's log) to the start of its RunPodSandbox call (the CRI
# log line minus the call's duration) is printed. Run on demand: not part of make check.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${top_builddir:-$top}
top_srcdir=$top
. "$top/tests/lib/tap.sh"
. "$top/tests/apiserver/lib.sh"
N=${BENCH_PODS:-110}
SECS=${BENCH_SECONDS:-60}
SETTLE=${BENCH_SETTLE:-15}
T=$(mktemp -d /tmp/klet-bench-api.XXXXXX)
kpid= fpid=
trap '[ -n "$kpid" ] && kill $kpid 2>/dev/null; [ -n "$fpid" ] && kill $fpid 2>/dev/null; as_stop; wait 2>/dev/null; rm -rf "$T"' EXIT
AS_NODE=bench as_start "$T" --bookmark-interval 60
as_kubeconfig "$T/kubeconfig"
sh "$top/tests/fakecri/run.sh" --socket "$T/cri.sock" >"$T/fakecri.out" 2>"$T/fakecri.err" &
fpid=$!
wait_for 300 grep -q 'fakecri: ready' "$T/fakecri.out" || { cat "$T/fakecri.err"; exit 1; }
"$bld/kletd" --root-dir "$T/root" --pod-logs-dir "$T/logs" --hostname-override bench \
    --container-runtime-endpoint "unix://$T/cri.sock" --kubeconfig "$T/kubeconfig" \
    --max-pods $((N + 10)) -v=5 >"$T/kletd.log" 2>&1 &
kpid=$!
wait_for 100 grep -q 'kletd ready' "$T/kletd.log" || { tail "$T/kletd.log"; exit 1; }
i=0
while [ $i -lt "$N" ]; do
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"p$i\"},\"spec\":{\"nodeName\":\"bench\",\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":[\"sleep\",\"inf\"]}]}}" >/dev/null
	i=$((i + 1))
done
running() {
	[ "$(as_ctl /objects?kind=pods | as_json 'len([p for p in d if p["status"].get("phase")=="Running"])')" -ge "$N" ]
}
t0=$(date +%s)
wait_for 3000 running || { echo "not all pods Running"; exit 1; }
echo "# $N pods Running in the API after $(( $(date +%s) - t0 )) s"
sleep "$SETTLE"
as_ctl /log/clear >/dev/null
sleep "$SECS"
as_ctl /log >"$T/log.json"
"$AS_PY" - "$T/log.json" "$SECS" "$N" <<'PY'
import collections, json, sys
log = json.load(open(sys.argv[1])); secs = float(sys.argv[2]); n = sys.argv[3]
kinds = collections.Counter()
sent = recv = 0
for e in log:
    p = e["path"]
    k = "watch pods" if e.get("watch") else e["method"] + " " + (
        "lease" if "/leases" in p else "node status" if "/nodes/" in p and p.endswith("/status")
        else "pod status" if p.endswith("/status") else "events" if "/events" in p
        else "nodes" if "/nodes" in p else "pods" if "/pods" in p else p)
    kinds[k] += 1
    sent += e.get("req_bytes", 0)
    recv += e.get("resp_bytes", 0)
per_min = 60.0 / secs
print("idle node with %s running pods, %.0f s measured:" % (n, secs))
print("  requests/min: %.1f" % (len(log) * per_min))
for k, c in sorted(kinds.items()):
    print("    %-20s %.1f/min" % (k, c * per_min))
print("  bytes sent by the node/min: %.0f" % (sent * per_min))
print("  bytes received/min (responses + watch stream): %.0f" % (recv * per_min))
PY
# Latency: ADDED event -> RunPodSandbox start.
as_ctl /pods -X POST -d '{"metadata":{"name":"lat"},"spec":{"nodeName":"bench","containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","inf"]}]}}' >/dev/null
wait_for 300 grep -q 'watch: ADDED pod default/lat' "$T/kletd.log"
wait_for 300 sh -c "grep -A100000 'watch: ADDED pod default/lat' '$T/kletd.log' | grep -q 'cri RunPodSandbox: OK in'"
"$AS_PY" - "$T/kletd.log" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
def ts(l):
    m = re.match(r"^[IWEF]\d{4} (\d\d):(\d\d):(\d\d\.\d+)", l)
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
added = next(i for i, l in enumerate(lines) if "watch: ADDED pod default/lat" in l)
t_added = ts(lines[added])
for l in lines[added:]:
    m = re.search(r"cri RunPodSandbox: OK in (\d+) us", l)
    if m:
        start = ts(l) - int(m.group(1)) / 1e6
        print("ADDED -> RunPodSandbox start: %.1f ms (the call itself: %.1f ms)" %
              ((start - t_added) * 1000, int(m.group(1)) / 1000))
        break
PY
