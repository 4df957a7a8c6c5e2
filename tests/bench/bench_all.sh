#!/bin/sh
# bench_all.sh — issue 19's table (footprint and speed) from one run: `make bench`.
# Never part of make check. Uses the build's kletd when it has no sanitizers, else builds an
# optimized one (-O2 -g, no sanitizers) in KLET_BENCH_BUILD (default
# /tmp/klet-bench-build-HASH of the build dir). Runs, each with its own temp dir, fake CRI or
# private containerd, and pod cgroup root:
#   bench_footprint.sh 0 110 1000          RSS, idle CPU (fake CRI)
#   BENCH_TOOL=callgrind bench_footprint.sh 0 110 1000   instructions per relist and per s
#   bench_turns.sh 1000                    loop turns: start, create/delete churn, restart
#   bench_start.sh 30                      static pod start vs raw CRI (containerd), burst
#   bench_watch.sh 50                      API pod: watch ADDED -> RunPodSandbox; RSS over TLS
#   bench_recovery.py --pods 110           restart -> recovered, CRI calls made
# then prints the table, each figure beside its goal ("-": not measured: a part was skipped
# or failed; its output is kept in the run's directory, printed at the end). About 15 min.
# Environment: BENCH_QUICK=1 for a shorter run (fewer pods and pairs, shorter windows).
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${top_builddir:-.}
case $bld in /*) ;; *) bld=$(cd "$bld" && pwd) ;; esac
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
quick=${BENCH_QUICK:-0}

# An optimized kletd, podctl and bench_start.
if [ -x "$bld/kletd" ] && ! nm "$bld/kletd" 2>/dev/null | grep -q __asan_init; then
	B=$bld
	make -C "$B" -s kletd podctl bench-start-bin >/dev/null || exit 1
else
	B=${KLET_BENCH_BUILD:-/tmp/klet-bench-build-$(printf %s "$bld" | cksum | cut -d' ' -f1)}
	mkdir -p "$B"
	echo "# building an optimized tree without sanitizers in $B" >&2
	(
		cd "$B" || exit 1
		if [ ! -f config.status ] || [ "$top/configure" -nt config.status ]; then
			"$top/configure" -q CFLAGS='-O2 -g' --disable-werror >/dev/null || exit 1
		fi
		make -j2 -s kletd podctl bench-start-bin >/dev/null
	) || { echo "bench: the optimized build failed" >&2; exit 1; }
fi
R=$(mktemp -d /tmp/klet-bench-all.XXXXXX)
echo "# kletd: $B/kletd; outputs in $R" >&2
export top_srcdir="$top" top_builddir="$B"

run() { # NAME SECONDS COMMAND...
	_n=$1 _s=$2
	shift 2
	_t0=$(date +%s)
	echo "# $_n ..." >&2
	timeout "$_s" "$@" >"$R/$_n.out" 2>"$R/$_n.err"
	echo "# $_n: exit $? after $(( $(date +%s) - _t0 )) s" >&2
}

if [ "$quick" = 1 ]; then
	FP="0 110" CG="0 110" TN=200 PAIRS=5 WN=10 IDLE=10 CHURN=20 BURST=20
else
	# IDLE=60: an idle node's work has a period of a minute (every pod's periodic sync, the
	# manifest rescan's 20 s, image GC's 30 s), so a shorter window counts a share of it
	# that depends on where it falls. WN=100: the p99 of 50 starts is their maximum.
	FP="0 110 1000" CG="0 110 1000" TN=1000 PAIRS=30 WN=100 IDLE=60 CHURN=60 BURST=100
fi
t0=$(date +%s)
# shellcheck disable=SC2086 # word lists on purpose
BENCH_IDLE=$IDLE BENCH_SETTLE=5 run footprint 600 sh "$top/tests/bench/bench_footprint.sh" $FP
# shellcheck disable=SC2086
BENCH_TOOL=callgrind BENCH_IDLE=10 BENCH_SETTLE=3 run callgrind 900 \
    sh "$top/tests/bench/bench_footprint.sh" $CG
BENCH_CHURN=$CHURN run turns 600 sh "$top/tests/bench/bench_turns.sh" "$TN"
BENCH_BURST=$BURST BENCH_WINDOWS="4096 32" run start 900 \
    sh "$top/tests/bench/bench_start.sh" "$PAIRS"
run watch 600 sh "$top/tests/bench/bench_watch.sh" "$WN"
run recovery 300 "$PY" "$top/tests/bench/bench_recovery.py" --pods 110 --kletd "$B/kletd"

"$PY" - "$R" "$(( $(date +%s) - t0 ))" <<'PY'
import os, re, sys
R, secs = sys.argv[1], sys.argv[2]
def lines(name):
    try:
        return open(os.path.join(R, name + ".out")).read().splitlines()
    except OSError:
        return []
def kv(line):
    return dict(m.groups() for m in re.finditer(r"(\w+)[=<]+(\S+)", line))
def find(name, prefix, **want):
    for l in lines(name):
        if l.startswith(prefix):
            d = kv(l)
            if all(d.get(k) == str(v) for k, v in want.items()):
                return d
    return {}
def mib(kib):
    return "%.1f MiB" % (int(kib) / 1024) if kib not in (None, "?") else "-"
fp = {n: find("footprint", "footprint ", N=n) for n in ("0", "110", "1000")}
cg = {n: find("callgrind", "relist_ir ", N=n) for n in ("0", "110", "1000")}
cgs = {n: find("callgrind", "callgrind ", N=n) for n in ("0", "110", "1000")}
st = find("start", "start ")
bursts = [kv(l) for l in lines("start") if l.startswith("burst ")]
tn = {p: find("turns", "turns ", phase=p) for p in ("start", "churn", "restart")}
wt = find("watch", "watch_to_sandbox ")
tls = find("watch", "rss_tls ")
rec = find("recovery", "recovery ")
nonlist = next((l.split(": ", 1)[1] for l in lines("recovery") if l.startswith("non-list")), "-")
def g(d, k, fmt="%s"):
    return fmt % d[k] if d.get(k) not in (None, "?") else "-"
def ms_turn(v):
    return "-" if v in (None, "?") else ("> 1 s" if v == "more" else "%.1f ms" % (int(v) / 1000))
def rss(d): # the steady state: mean of one sample a second over the idle window (max)
    return "%s (max %s)" % (mib(d.get("rss_mean_kib", d.get("rss_kib"))), mib(d.get("rss_max_kib")))
rows = [
    ("RSS idle, no API server / joined over TLS (mean over the idle window, max)",
     "%s / %s (max %s)" % (rss(fp["0"]), mib(tls.get("rss_kib")), mib(tls.get("rss_max_kib"))),
     "<= 4 / <= 5 MiB"),
    ("RSS with 110 pods (165 containers), fake CRI", rss(fp["110"]), "<= 8 MiB"),
    ("RSS with 1000 pods", rss(fp["1000"]), "<= 24 MiB"),
    ("relist CPU, 0 pods, nothing changed", g(cg["0"], "Ir_per_relist", "%s instructions per relist"), "-"),
    ("relist CPU with 110 pods, nothing changed",
     "%s per relist (whole process: %s per s)" % (g(cg["110"], "Ir_per_relist"), g(cgs["110"], "Ir_per_s")),
     "<= 1 M instructions"),
    ("relist CPU with 1000 pods, nothing changed",
     "%s per relist (whole process: %s per s)" % (g(cg["1000"], "Ir_per_relist"), g(cgs["1000"], "Ir_per_s")),
     "<= 5 M instructions"),
    ("longest loop turn with 1000 pods (CPU): start",
     "p99 <= %s, max %s (%s)" % (ms_turn(tn["start"].get("p99_us")), ms_turn(tn["start"].get("max_us")), tn["start"].get("max_task", "-")),
     "p99 <= 20 ms, max <= 100 ms"),
    ("  ... while pods are created and deleted",
     "p99 <= %s, max %s, %s turns over 20 ms" % (ms_turn(tn["churn"].get("p99_us")), ms_turn(tn["churn"].get("period_max_us")), tn["churn"].get("over_20ms", "-")),
     "p99 <= 20 ms, max <= 100 ms"),
    ("  ... restart (recovery of 1000 pods)",
     "p99 <= %s, max %s (%s)" % (ms_turn(tn["restart"].get("p99_us")), ms_turn(tn["restart"].get("max_us")), tn["restart"].get("max_task", "-")),
     "p99 <= 20 ms, max <= 100 ms"),
    ("static pod start on containerd / raw CRI sequence",
     "%s (kletd %s / raw %s ms median, p90 %s / %s, %s pairs; the pairs' own difference: median %s ms, %s; kletd's own time, apart from the runtime's calls: median %s ms, p90 %s, %s; of it before RunPodSandbox: %s ms)" % (g(st, "ratio_p50"), g(st, "kletd_ms_p50"), g(st, "raw_ms_p50"), g(st, "kletd_ms_p90"), g(st, "raw_ms_p90"), g(st, "pairs"), g(st, "diff_ms_p50"), g(st, "ratio_paired"), g(st, "own_ms_p50"), g(st, "own_ms_p90"), g(st, "ratio_own"), g(st, "before_runtime_ms_p50")),
     "<= 1.03x"),
    ("burst of 100 pods, unbounded / window 32 (medians of rounds; the window's time against unbounded's in the same round, median)",
     (" / ".join("%s ms" % b.get("all_running_ms", "-") for b in bursts) or "-") +
     "".join("; paired %s" % b["ratio_paired"] for b in bursts if "ratio_paired" in b) +
     "".join(" (rounds %s)" % b.get("runs_ms", "-") for b in bursts[:1]) +
     "".join(" / (%s)" % b.get("runs_ms", "-") for b in bursts[1:]),
     "window not slower"),
    ("API pod: watch ADDED -> RunPodSandbox request",
     "p50 %s ms, p99 %s ms (%s pods)" % (g(wt, "p50_ms"), g(wt, "p99_ms"), g(wt, "pods")), "p99 <= 1 ms"),
    ("restart -> recovered, 110 pods",
     "%s ms (kletd) / %s ms (wall); non-list calls: %s" % (g(rec, "kletd_ms"), g(rec, "wall_ms"), nonlist),
     "<= 100 ms, list calls only"),
    ("idle CPU, 110 pods (wake-ups a second; what a bare process waking as often costs here)",
     "%s ms/s (%s wake-ups/s; bare: %s) / 0 pods: %s ms/s (%s; bare: %s)" % (
         g(fp["110"], "cpu_ms_per_s"), g(fp["110"], "wakes_per_s"),
         g(fp["110"], "wake_floor_ms_per_s", "%s ms/s"), g(fp["0"], "cpu_ms_per_s"),
         g(fp["0"], "wakes_per_s"), g(fp["0"], "wake_floor_ms_per_s", "%s ms/s")),
     "<= 0.5 ms/s"),
]
w = max(len(r[0]) for r in rows)
print("| figure | measured | goal |")
print("|---|---|---|")
for r in rows:
    print("| %s | %s | %s |" % r)
print("\n(make bench, %s s; outputs in %s)" % (secs, R))
PY
