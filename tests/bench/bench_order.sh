#!/bin/sh
# bench_order.sh [OUT] — writes the list of kletd's idle functions, contrib/kletd.order by
# default: the functions its loop runs when nothing happens, which the link (gold's
# --section-ordering-file, configure.ac) lays out together at the start of .text, beside
# the PLT. The kernel maps a program's code 64 KiB around each page touched: spread over
# .text, the idle functions kept nine such windows of kletd resident; together, three.
# On demand (not in make check); run it again when the idle path changed much (a missing or
# renamed function only costs the window it falls in, never correctness). Needs an
# optimized build without sanitizers (top_builddir, e.g. contrib/dev-build.sh with
# CFLAGS="-O2 -g"), valgrind, and what bench_footprint.sh needs (the fake CRI, root for
# the pod cgroups). Three idle windows of BENCH_IDLE s (default 75: the image GC looks every
# 30 s, a bookmark's position is saved once a minute) under callgrind: no pods, no pods
# joined over TLS, 110 pods; every function of kletd that ran in one of them is listed
# (sorted by name; a GCC clone such as f.constprop.0 as f and f.*). About 6 min.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${1:-$top/contrib/kletd.order}
bld=${top_builddir:-.}
case $bld in /*) ;; *) bld=$(cd "$bld" && pwd) ;; esac
if nm "$bld/kletd" 2>/dev/null | grep -q __asan_init; then
	echo "bench_order: $bld/kletd has sanitizers: use an optimized build" >&2
	exit 1
fi
T=$(mktemp -d /tmp/klet-bench-order.XXXXXX)
trap 'rm -rf "$T"' EXIT
export top_srcdir="$top" top_builddir="$bld"
idle=${BENCH_IDLE:-75}
i=0
for run in "0" "api 0" "110"; do
	api=0
	case $run in api*) api=1 run=${run#api } ;; esac
	BENCH_API=$api BENCH_KEEP=1 BENCH_TOOL=callgrind BENCH_IDLE=$idle BENCH_SETTLE=5 \
	    sh "$top/tests/bench/bench_footprint.sh" "$run" >"$T/run$i.out" 2>"$T/run$i.err"
	kept=$(cat "$T/run$i.out" "$T/run$i.err" | sed -n "s/^# kept //p" | tail -1)
	if [ -z "$kept" ] || ! ls "$kept"/n*/callgrind.out >/dev/null 2>&1; then
		echo "bench_order: run '$run' (api $api) gave no callgrind output:" >&2
		tail -5 "$T/run$i.err" >&2
		exit 1
	fi
	cp "$kept"/n*/callgrind.out "$T/cg$i.out"
	rm -rf "$kept"
	i=$((i + 1))
done
# The functions of the kletd object with a cost of their own in any window (callgrind's
# own report, as bench_footprint.sh reads it), GCC's clone suffixes taken off.
for cg in "$T"/cg*.out; do
	callgrind_annotate --inclusive=no --threshold=100 "$cg" 2>/dev/null |
	    awk -v o="[$bld/kletd]" '$NF == o {f = $(NF - 1); sub(/.*:/, "", f)
		if (f ~ /^[A-Za-z_][A-Za-z0-9_.]*$/) print f}'
done | sed -E 's/\.(constprop|isra|part|cold|lto_priv)(\..*)?$//' | LC_ALL=C sort -u >"$T/names"
{
	echo "# kletd's idle functions (tests/bench/bench_order.sh): gold lays them out first"
	sed 's/.*/.text.&\n.text.&.*/' "$T/names"
	echo "# then everything else"
	echo ".text.*"
} >"$T/order"
n=$(grep -c '^\.text\.[^*]*$' "$T/order")
if [ "$n" -lt 50 ]; then
	echo "bench_order: only $n functions found; not writing $out" >&2
	exit 1
fi
cp "$T/order" "$out"
echo "bench_order: $n functions in $out"
