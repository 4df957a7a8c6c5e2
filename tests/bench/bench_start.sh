#!/bin/sh
# bench_start.sh [PAIRS] — a static pod's start by kletd against the raw CRI sequence on a
# private containerd, interleaved in one run (tests/bench/bench_start.c; default 20 pairs),
# then a burst of BENCH_BURST pods (default 100) started at once with each window of
# BENCH_WINDOWS (default "4096 32": the first is "unbounded") to compare the time until all
# run, BENCH_BURST_ROUNDS times (default 5) with the windows taken in turn, so that a
# machine's noise falls on each alike; a round's bursts run back to back, and each window's
# time is also taken against the first window's in the same round (ratio_paired: the
# median of those ratios), since the rounds differ more than the windows. On demand only
# (make bench); needs root and containerd. Prints:
#   start raw_ms_p50=.. raw_ms_p90=.. kletd_ms_p50=.. kletd_ms_p90=.. ratio_p50=.. pairs=..
#         before_runtime_ms_p50=.. diff_ms_p50=.. ratio_paired=.. (the pairs' own differences)
#         own_ms_p50=.. own_ms_p90=.. ratio_own=.. (kletd's own time, apart from the runtime's)
#   # burst round=R pods=N all_running_ms=.. window=W in_flight_max=.. waited_max=..
#   burst pods=N window=W all_running_ms=MEDIAN rounds=R runs_ms=A,B,C in_flight_max=..
#         ratio_paired=.. (W's time / the first window's, per round; median; not on the first)
# Environment: BENCH_KLETD_ARGS (more kletd flags), BENCH_KEEP=1 (keep the temporary
# directory and print its name), top_srcdir, top_builddir (an optimized build with
# tests/bench/bench_start: `make bench-start-bin`), KLET_CONTAINERD_DIR (default
# $KLET_TEST_TMP or /tmp, + klet-ctd-bench).
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
b=${top_builddir:-.}
. "$top/tests/lib/tap.sh"
. "$top/tests/e2e/lib_node.sh" # cgroup_root_rm
pairs=${1:-20}
burst=${BENCH_BURST:-100}
windows=${BENCH_WINDOWS:-4096 32}
rounds=${BENCH_BURST_ROUNDS:-5}
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
command -v containerd >/dev/null 2>&1 || skip_all "containerd not installed"
[ -x "$b/tests/bench/bench_start" ] || { echo "no $b/tests/bench/bench_start" >&2; exit 2; }
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
T=$(mktemp -d /tmp/klet-bench-start.XXXXXX)
CTD=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-bench}
CGROOT=/$(basename "$T" | tr -c 'a-zA-Z0-9\n' -)
NODE=bench
kpid=
cleanup() {
	[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null
	KLET_CONTAINERD_DIR=$CTD sh "$top/contrib/containerd-down.sh" --purge >/dev/null 2>&1
	cgroup_root_rm "$CGROOT"
	cgroup_root_rm "$CGROOT-raw"
	if [ "${BENCH_KEEP:-0}" != 0 ]; then echo "# kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
SOCK=$(KLET_CONTAINERD_DIR=$CTD sh "$top/contrib/containerd-up.sh" 2>"$T/ctd-up.log" | tail -1)
[ -S "$SOCK" ] || { cat "$T/ctd-up.log" >&2; skip_all "containerd did not start"; }
mkdir -p "$T/m" "$T/root" "$T/logs"

start_kletd() { # [ARGS...]
	"$b/kletd" --root-dir "$T/root" --pod-logs-dir "$T/logs" --pod-manifest-path "$T/m" \
	    --hostname-override "$NODE" --container-runtime-endpoint "unix://$SOCK" \
	    --address 127.0.0.1 --port 0 --healthz-port 0 --cgroup-root "$CGROOT" \
	    --podctl-socket "$T/ctl.sock" --max-pods $((burst + 10)) -v=2 ${BENCH_KLETD_ARGS:-} "$@" \
	    >>"$T/kletd.log" 2>&1 &
	kpid=$!
	wait_for 100 grep -q 'kletd ready' "$T/kletd.log" || { tail "$T/kletd.log" >&2; exit 1; }
}
stop_kletd() {
	kill -TERM "$kpid" 2>/dev/null
	wait "$kpid" 2>/dev/null
	kpid=
}

# -v=5: each CRI call's time in the log, for kletd's own part (bench_start.c: own). The
# lines cost kletd a little time in every start: the figures err against it.
start_kletd -v=5
# The raw pods' files go apart from kletd's root and log dirs: its housekeeping removes the
# directories of pods it does not know.
mkdir -p "$T/rawroot" "$T/rawlogs"
"$b/tests/bench/bench_start" "$SOCK" "$T/m" "$T/kletd.log" "$NODE" "$T/rawroot" "$T/rawlogs" \
    "$pairs" "$CGROOT-raw" >"$T/start.out" || { cat "$T/start.out"; tail -20 "$T/kletd.log" >&2; exit 1; }
sed 's/^/# /' "$T/start.out" | grep '# pair' | tail -3
grep '^start ' "$T/start.out"
stop_kletd
cp "$T/kletd.log" "$T/kletd-start.log" # the burst's runs start their own log

# The burst: BURST manifests renamed in at once; the time until every container runs.
running() {
	n=$("$b/podctl" --socket "$T/ctl.sock" get pods -A 2>/dev/null | awk '$4 == "Running"' | wc -l)
	[ "$n" -ge "$burst" ]
}
r=1
while [ "$r" -le "$rounds" ]; do
for w in $windows; do
	rm -f "$T/m"/*.json
	: >"$T/kletd.log"
	start_kletd --runtime-request-window "$w"
	i=0
	while [ $i -lt "$burst" ]; do
		cat >"$T/m/.b$i.tmp" <<M
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b$i"},"spec":{"terminationGracePeriodSeconds":1,
 "containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","3600"]}]}}
M
		i=$((i + 1))
	done
	t0=$(date +%s%N)
	i=0
	while [ $i -lt "$burst" ]; do
		mv "$T/m/.b$i.tmp" "$T/m/b$i.json"
		i=$((i + 1))
	done
	wait_for 3000 running || echo "# window $w: not all running after 300 s" >&2
	t1=$(date +%s%N)
	st=$("$b/podctl" --socket "$T/ctl.sock" status -o json 2>/dev/null)
	echo "# burst round=$r pods=$burst all_running_ms=$(( (t1 - t0) / 1000000 ))" \
	    "$(echo "$st" | $PY -c 'import json,sys
d = json.load(sys.stdin).get("runtime", {})
print("window=%s in_flight_max=%s waited_max=%s" % (d.get("window", "?"), d.get("inFlightMax", "?"), d.get("waitingMax", "?")))' 2>/dev/null)" |
	    tee -a "$T/bursts"
	# Remove them all before the next window.
	rm -f "$T/m"/*.json
	gone() { [ "$("$b/podctl" --socket "$T/ctl.sock" get pods -A 2>/dev/null | grep -c ' b[0-9]')" -eq 0 ]; }
	wait_for 3000 gone || echo "# window $w: pods not all gone" >&2
	stop_kletd
done
r=$((r + 1))
done
# Per window: the median of its rounds.
$PY - "$T/bursts" $windows <<'P'
import sys
from statistics import median
rows = [dict(kv.split("=", 1) for kv in l.split()[2:] if "=" in kv) for l in open(sys.argv[1])]
first = {r["round"]: int(r["all_running_ms"]) for r in rows if r.get("window") == sys.argv[2]}
for w in sys.argv[2:]:
    runs = [r for r in rows if r.get("window") == w]
    if not runs:
        continue
    ms = sorted(int(r["all_running_ms"]) for r in runs)
    ratios = [int(r["all_running_ms"]) / first[r["round"]] for r in runs if first.get(r["round"])]
    paired = " ratio_paired=%.3f" % median(ratios) if w != sys.argv[2] and ratios else ""
    print("burst pods=%s window=%s all_running_ms=%d rounds=%d runs_ms=%s in_flight_max=%s%s" % (
        runs[0]["pods"], w, ms[len(ms) // 2], len(ms), ",".join(str(r["all_running_ms"]) for r in runs),
        max(int(r.get("in_flight_max", "0")) for r in runs), paired))
P
