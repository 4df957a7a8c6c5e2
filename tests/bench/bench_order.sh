#!/bin/sh
# bench_order.sh [OUT] — writes the list of kletd's idle functions, contrib/kletd.order by
# default: the functions its loop runs when nothing happens, which the link (gold's
# --section-ordering-file, configure.ac) lays out together at the start of .text, beside
# the PLT. The kernel maps a program's code 64 KiB around each page touched: spread over
# .text, the idle functions kept nine such windows of kletd resident; together, two.
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
# The functions of the kletd object with a cost of their own in any window.
python3 - "$bld/kletd" "$T"/cg*.out >"$T/order" <<'EOF' || exit 1
import re, sys
obj, names = sys.argv[1], set()
for path in sys.argv[2:]:
    tab = {"ob": {}, "fn": {}}
    ob = fn = None
    in_call = False
    for line in open(path, errors="replace"):
        m = re.match(r"(c?)(ob|fn)=(?:\((\d+)\))? ?(.*)", line.rstrip("\n"))
        if m:
            kind, key, name = m.group(2), m.group(3), m.group(4)
            if key is not None and name:
                tab[kind][key] = name
            val = tab[kind].get(key) if key is not None else name
            if not m.group(1):
                if kind == "ob":
                    ob = val
                else:
                    fn = val
            continue
        if line.startswith("calls="):
            in_call = True  # the next cost line is the callee's
            continue
        if line[:1].isdigit() or line[:1] in "+-*":
            if in_call:
                in_call = False
            elif ob == obj and fn and re.match(r"^[A-Za-z_][\w.]*$", fn):
                names.add(re.sub(r"\.(constprop|isra|part|cold|lto_priv)(\..*)?$", "", fn))
print("# kletd's idle functions (tests/bench/bench_order.sh): gold lays them out first")
for n in sorted(names):
    print(".text.%s\n.text.%s.*" % (n, n))
print("# then everything else")
print(".text.*")
EOF
n=$(grep -c '^\.text\.[^*]*$' "$T/order")
if [ "$n" -lt 50 ]; then
	echo "bench_order: only $n functions found; not writing $out" >&2
	exit 1
fi
cp "$T/order" "$out"
echo "bench_order: $n functions in $out"
