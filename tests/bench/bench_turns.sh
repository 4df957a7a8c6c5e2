#!/bin/sh
# bench_turns.sh [N] — the longest loop turns of kletd with N static pods (default 1000) on
# the fake CRI: from the start (N pods created, the first relists), then BENCH_CHURN seconds
# (default 60) in which BENCH_STEP pods (default 50) are deleted and as many created every
# 5 s, then a restart (recovery of N pods). The turns are kletd's own figures (podctl status
# -o json, loop.turns: the CPU time of each turn). On demand only (make bench). Prints:
#   turns phase=start|churn|restart n=N count=.. p50_us=.. p99_us=.. max_us=.. max_task=..
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
b=${top_builddir:-.}
. "$top/tests/lib/tap.sh"
. "$top/tests/e2e/lib_node.sh" # cgroup_root_rm
n=${1:-1000}
churn=${BENCH_CHURN:-60}
step=${BENCH_STEP:-50}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
$PY -c 'import grpc' 2>/dev/null || skip_all "python3-grpcio not installed"
T=$(mktemp -d /tmp/klet-bench-turns.XXXXXX)
CGROOT=/$(basename "$T" | tr -c 'a-zA-Z0-9\n' -)
kpid= fpid=
cleanup() {
	[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	cgroup_root_rm "$CGROOT"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
SOCK=$T/cri.sock
sh "$top/tests/fakecri/run.sh" --socket "$SOCK" >"$T/fakecri.out" 2>&1 &
fpid=$!
wait_for 300 grep -q 'fakecri: ready' "$T/fakecri.out" || { cat "$T/fakecri.out" >&2; exit 1; }
$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"images","add":["klet.local/busybox:1.35"]}' \
    >/dev/null
mkdir -p "$T/m" "$T/root" "$T/logs"
manifest() { # I
	cat >"$T/m/.p$1.tmp" <<M
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p$1"},"spec":{"terminationGracePeriodSeconds":1,
 "containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","100000"]}]}}
M
	mv "$T/m/.p$1.tmp" "$T/m/p$1.json"
}
i=0
while [ $i -lt "$n" ]; do manifest $i; i=$((i + 1)); done
start_kletd() {
	"$b/kletd" --root-dir "$T/root" --pod-logs-dir "$T/logs" --pod-manifest-path "$T/m" \
	    --hostname-override bench --container-runtime-endpoint "unix://$SOCK" \
	    --address 127.0.0.1 --port 0 --healthz-port 0 --cgroup-root "$CGROOT" \
	    --podctl-socket "$T/ctl.sock" --max-pods $((n + 10)) -v=2 >>"$T/kletd.log" 2>&1 &
	kpid=$!
}
status() { "$b/podctl" --socket "$T/ctl.sock" status -o json 2>/dev/null; }
running() {
	c=$($PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"state"}' | $PY -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for c in d["containers"] if c["state"] == "CONTAINER_RUNNING"))')
	[ "$c" -ge "$1" ]
}
# report PHASE [BEFORE_JSON]: the turns since BEFORE (bucket counts subtracted).
report() {
	status >"$T/now.json"
	$PY - "$1" "$n" "$T/now.json" "${2:-}" <<'P'
import json, sys
phase, n, now = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))["loop"]["turns"]
before = json.load(open(sys.argv[4]))["loop"]["turns"] if sys.argv[4] else None
b = [[u, c - (before["buckets"][i][1] if before else 0)] for i, (u, c) in
     enumerate(now["buckets"])]
count = sum(c for _, c in b)
def q(p):
    want, seen = max(1, int(p * count + 0.999999)), 0
    for u, c in b:
        seen += c
        if seen >= want:
            return "more" if u < 0 else u
    return "?"
over = sum(c for u, c in b if u < 0 or u > 20000)
top = next((u for u, c in reversed(b) if c > 0), 0)
print("turns phase=%s n=%s count=%d p50_us<=%s p99_us<=%s period_max_us<=%s max_us=%d "
      "max_task=%s over_20ms=%d" % (phase, n, count, q(0.5), q(0.99),
      "more" if top < 0 else top, now["maxUs"], (now.get("maxTask") or "-").replace(" ", "_"),
      over))
P
}
t0=$(date +%s)
start_kletd
wait_for 6000 running "$n" || { echo "not all $n running" >&2; tail "$T/kletd.log" >&2; exit 1; }
sleep 5
echo "# $n pods running after $(( $(date +%s) - t0 )) s"
report start
status >"$T/before.json"
end=$(( $(date +%s) + churn ))
k=0
while [ "$(date +%s)" -lt "$end" ]; do
	j=0
	while [ $j -lt "$step" ]; do
		rm -f "$T/m/p$(( (k * step + j) % n )).json"
		j=$((j + 1))
	done
	sleep 2.5
	j=0
	while [ $j -lt "$step" ]; do
		manifest $(( (k * step + j) % n ))
		j=$((j + 1))
	done
	sleep 2.5
	k=$((k + 1))
done
wait_for 6000 running "$n"
sleep 3
report churn "$T/before.json"
kill -9 "$kpid"
wait "$kpid" 2>/dev/null
kpid=
start_kletd
wait_for 600 grep -q 'recovered in' "$T/kletd.log"
sleep 5
report restart
# The long turns by their longest part.
grep -o 'loop: a turn took .*' "$T/kletd.log" | sed 's/.*longest part: \([^,]*\),.*/\1/' |
    sort | uniq -c | sort -rn | sed 's/^/# turns of 20 ms or more, longest part: /'
grep 'loop: a turn took' "$T/kletd.log" |
    awk '{for (i = 1; i < NF; i++) if ($i == "took") print $(i + 1) + 0, $0}' | sort -n |
    tail -3 | cut -d' ' -f2- | sed 's/^/# /'
