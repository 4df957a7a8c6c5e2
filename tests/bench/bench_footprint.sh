#!/bin/sh
# bench_footprint.sh [N...] — kletd's resident memory and idle CPU with N static pods (default
# "0 110": the baseline and the project's target), on the Python fake CRI (tests/fakecri).
# On demand only (not in `make check`); prints figures, asserts nothing. Build WITHOUT
# sanitizers for meaningful numbers, e.g.:
#   CFLAGS="-O2 -g" KLET_CONFIGURE_FLAGS=--disable-werror sh contrib/dev-build.sh footprint kletd
#   (if that build dir was configured with sanitizers before: make -C it clean first)
#   top_srcdir=$PWD top_builddir=/tmp/klet-build-footprint sh tests/bench/bench_footprint.sh
# For each N: writes N manifests (image klet.local/busybox:1.35, `sleep 100000`; every
# BENCH_CTRS-th pod has two containers, the rest one), starts the fake and kletd, waits until
# the fake has N ready sandboxes and every container RUNNING, lets it settle (BENCH_SETTLE s),
# then samples for BENCH_IDLE s (default 60) and prints one line:
#   footprint N=.. containers=.. rss_kib=.. (at the end) rss_mean_kib=.. rss_max_kib=.. (of
#     one sample a second over the window, which begins at least 12 s after kletd's start:
#     after its first unmapping of what the start mapped) hwm_kib=.. private_dirty_kib=..
#     cpu_ms_per_s=.. wakes_per_s=.. (kletd's wake-ups in the window: its voluntary context
#     switches, one per poll that slept) wake_floor_ms_per_s=.. (without BENCH_TOOL: what as
#     many wake-ups cost a process that does nothing else, at the CPU time per wake-up of
#     bench_wake.c, which sleeps and wakes 3 times a second beside the window;
#     BENCH_WAKE_FLOOR=0: not run)
#     relist_us=.. (last, from the -v=2 "relist ..." line) relist_max_us=.. store_kib=..
#     (klet.db + -wal + -shm) fds=.. threads=.. ready_s=..
# and at the end, per pod: (RSS(N) - RSS(first N)) / (N - first N), same for private dirty.
# Environment:
#   BENCH_IDLE=60 BENCH_SETTLE=10  seconds of idle sampling / settling after all are running
#   BENCH_CTRS=2                   every 2nd pod gets a second container (0: one each)
#   BENCH_TOOL=callgrind           run kletd under valgrind --tool=callgrind, instrumentation
#                                  switched on only for a BENCH_IDLE (default 20) s idle window:
#                                  prints Ir in the window, relist cycles seen, Ir per second
#                                  and per relist, and the top functions (callgrind_annotate);
#                                  instruction counts are repeatable where seconds are not.
#   BENCH_TOOL=massif              valgrind --tool=massif over the whole run: heap peak and
#                                  the top allocation sites at the peak (ms_print).
#   BENCH_RUNTIME=containerd       a private real containerd instead of the fake
#                                  (KLET_CONTAINERD_DIR, default /tmp/klet-ctd-footprint;
#                                  needs root; purged at the end); image must be importable
#                                  by contrib/containerd-up.sh. Use N of 20 or so.
#   BENCH_KEEP=1                   keep the temp dir (logs, callgrind/massif output)
#   BENCH_KLETD_ARGS="..."         more kletd flags, e.g. "--address 127.0.0.1 --port 0
#                                  --healthz-port 0" to keep the node server off 10250
#   BENCH_SMAPS=1                  after the idle window, where the memory is: one line per
#                                  kind of mapping from /proc/PID/smaps (kletd's own image,
#                                  each library, [heap], anonymous mmaps, stack, SQLite's -shm,
#                                  other files, kernel), with RSS, PSS, private dirty and the
#                                  RSS of its executable part (text), largest first, and the
#                                  totals of smaps_rollup; BENCH_SMAPS=2 also lists each
#                                  anonymous/heap mapping over 64 KiB; and podctl status's
#                                  Store and Heap lines (SQLite's heap and page cache,
#                                  malloc's bytes in use and free) when podctl is built
#   BENCH_API=1                    also join the API stand-in (tests/apiserver) over TLS with a
#                                  client certificate (the static pods become mirror pods)
#   BENCH_API=pods                 joined the same way, but the N pods are API pods created
#                                  through the stand-in (no manifests): the idle figures
#                                  include their statuses (issue 18's agent with 30 pods)
#   BENCH_HTTPS=K                  after the idle window, what TLS costs once loaded: one
#                                  request to kletd's HTTPS port (OpenSSL loaded, the serving
#                                  key and context made), then K (e.g. 20) idle keep-alive
#                                  connections that each made one; a line after each
#                                  ("https N=.. after=first_request|K_idle_connections rss_kib=..
#                                  pss_kib=.. private_dirty_kib=..", and the mappings with
#                                  BENCH_SMAPS, as N=N+https)
#   BENCH_SCRAPE=K                 after the idle window, K scrapes each of /metrics,
#                                  /metrics/resource and /stats/summary on the read-only port
#                                  (plain HTTP: no TLS handshake in the figures): one line per
#                                  path, "scrape N=.. path=.. bytes=.. wall_ms=.." (curl's
#                                  time per scrape) and, with BENCH_TOOL=callgrind, Ir=..
#                                  (instructions per scrape: the request handler's inclusive
#                                  cost, so the relist meanwhile does not count) and
#                                  Ir_window=.. (everything in the scrapes' window, per scrape:
#                                  with the relists and any work the handler left for later)
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
KLETD=${top_builddir:-.}/kletd
case $KLETD in /*) ;; *) KLETD=$(pwd)/$KLETD ;; esac
. "$top/tests/lib/tap.sh"
. "$top/tests/e2e/lib_node.sh" # cgroup_root_rm
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tool=${BENCH_TOOL:-}
idle=${BENCH_IDLE:-60} # a minute: the period of an idle node's work (every pod's resync)
[ -n "$tool" ] && idle=${BENCH_IDLE:-20}
settle=${BENCH_SETTLE:-10}
ctrs2=${BENCH_CTRS:-2}
rt=${BENCH_RUNTIME:-fake}
[ $# -eq 0 ] && set -- 0 110
[ -x "$KLETD" ] || { echo "no kletd at $KLETD (set top_builddir)" >&2; exit 2; }
# An ASan kletd measures ASan (shadow memory, quarantine): say so loudly. dev-build.sh
# re-runs configure with its default (--enable-sanitizers) whenever configure changes.
if nm "$KLETD" 2>/dev/null | grep -q __asan_init; then
	echo "# WARNING: $KLETD is built with sanitizers: figures are meaningless" >&2
	[ -n "$tool" ] && { echo "valgrind cannot run an ASan binary" >&2; exit 2; }
fi
$PY -c 'import grpc' 2>/dev/null || skip_all "python3-grpcio not installed"
api=${BENCH_API:-0}
if [ "$api" != 0 ]; then
	top_srcdir=$top
	. "$top/tests/apiserver/lib.sh"
fi
hz=$(getconf CLK_TCK)

T=$(mktemp -d /tmp/klet-bench-footprint.XXXXXX)
# The wake-up floor's program (bench_wake.c), when a C compiler is there.
${CC:-cc} -O2 -o "$T/bench_wake" "$top/tests/bench/bench_wake.c" 2>/dev/null ||
    echo "# no C compiler: no wake-up floor" >&2
# The pods' cgroups go under a root of this run's own (the shared /kubepods may hold
# thousands of other runs' directories, which housekeeping would walk every 2 s).
CGROOT=/$(basename "$T" | tr -c 'a-zA-Z0-9\n' -)
kpid= fpid= ctd= hpid=
cleanup() {
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null && wait "$hpid" 2>/dev/null
	[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	if [ -n "$ctd" ]; then
		KLET_CONTAINERD_DIR=$ctd sh "$top/contrib/containerd-down.sh" --purge >/dev/null 2>&1
	fi
	cgroup_root_rm "$CGROOT"
	[ "$api" != 0 ] && as_stop
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "# kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if [ "$rt" = containerd ]; then
	[ "$(id -u)" -eq 0 ] || skip_all "containerd mode needs root"
	ctd=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-footprint}
	SOCK=$(KLET_CONTAINERD_DIR=$ctd sh "$top/contrib/containerd-up.sh" 2>"$T/ctd-up.log" |
	    tail -1)
	[ -S "$SOCK" ] || { cat "$T/ctd-up.log" >&2; skip_all "containerd did not start"; }
fi

start_fake() {
	SOCK=$T/cri.sock
	# A fresh output file: the last N's "fakecri: ready" must not answer for this one.
	rm -f "$SOCK" "$SOCK.ctl" "$T/fakecri.out"
	sh "$top/tests/fakecri/run.sh" --socket "$SOCK" >"$T/fakecri.out" 2>&1 &
	fpid=$!
	wait_for 300 grep -q 'fakecri: ready' "$T/fakecri.out" ||
	    { cat "$T/fakecri.out" >&2; skip_all "fake CRI did not start"; }
	$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" \
	    '{"cmd":"images","add":["klet.local/busybox:1.35"]}' >/dev/null
}

# counts: "SANDBOXES_READY CONTAINERS_RUNNING CONTAINERS_TOTAL" as the runtime sees them.
counts() {
	if [ "$rt" = containerd ]; then
		$PY - "$SOCK" "$top" <<'P'
import json, subprocess, sys
sock, top = sys.argv[1], sys.argv[2]
def call(m):
    out = subprocess.run([sys.executable, top + "/tests/fakecri/client.py", "--timeout", "10",
                          sock, m, "{}"], capture_output=True, text=True).stdout
    return json.loads(out or "{}")
sb = [s for s in call("ListPodSandbox").get("items", []) if s.get("state") == "SANDBOX_READY"]
cs = call("ListContainers").get("containers", [])
print(len(sb), sum(1 for c in cs if c.get("state") == "CONTAINER_RUNNING"), len(cs))
P
	else
		$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"state"}' | $PY -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for s in d["sandboxes"] if s["state"] == "SANDBOX_READY"),
      sum(1 for c in d["containers"] if c["state"] == "CONTAINER_RUNNING"), len(d["containers"]))'
	fi
}
joined() { as_ctl '/objects?kind=leases' | grep -q '"bench"'; }
all_running() { # PODS CONTAINERS
	set -- "$1" "$2" $(counts)
	[ "$3" -eq "$1" ] && [ "$4" -eq "$2" ]
}
relist_settled() { # PODS CONTAINERS
	grep -q "relist pods=$1 containers=$2 sandboxes=$1 .*status_calls=0\$" "$R/kletd.log"
}

# mem_kib PID: "rss_kib=.. pss_kib=.. private_dirty_kib=.." from smaps_rollup.
mem_kib() {
	awk '$1 == "Rss:" {r = $2} $1 == "Pss:" {p = $2} $1 == "Private_Dirty:" {d = $2}
	    END {printf "rss_kib=%d pss_kib=%d private_dirty_kib=%d", r, p, d}' "/proc/$1/smaps_rollup"
}
# https_load PORT K: one HTTPS request, then K keep-alive TLS connections that each made one,
# held (python's ssl, no verification: the serving certificate is self-signed) until hpid is
# killed. Prints the lines of BENCH_HTTPS.
# scrape_costs PORT K: K scrapes of each path on the read-only port; wall time per scrape,
# and under callgrind the handler's instructions per scrape (a dump per path).
scrape_costs() {
	if [ "$tool" = callgrind ]; then
		# The idle window's counts first, into a file of their own (read below).
		callgrind_control -d "$kpid" >/dev/null 2>&1
		mv "$(ls -t "$R"/callgrind.out.* | head -1)" "$R/callgrind.idle"
	fi
	for p in /metrics /metrics/resource /stats/summary; do
		[ "$tool" = callgrind ] && callgrind_control -z "$kpid" >/dev/null 2>&1 &&
		    callgrind_control -i on "$kpid" >/dev/null 2>&1
		w=0 b=0 i=0
		while [ "$i" -lt "$2" ]; do
			out=$(curl -s -o "$R/scrape.out" -w '%{time_total}' --max-time 60 \
			    "http://127.0.0.1:$1$p")
			w=$(awk -v a="$w" -v t="$out" 'BEGIN {print a + t}')
			b=$(wc -c <"$R/scrape.out")
			i=$((i + 1))
		done
		ir=
		if [ "$tool" = callgrind ]; then
			callgrind_control -i off "$kpid" >/dev/null 2>&1
			callgrind_control -d "$kpid" >/dev/null 2>&1
			f=$(ls -t "$R"/callgrind.out.* 2>/dev/null | head -1)
			h=$(callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null | awk '
			    !/=>/ && /^ *[0-9,]+ .*:server_on_request / {v = $1; gsub(/,/, "", v); s += v}
			    END {print s + 0}')
			tot=$(callgrind_annotate "$f" 2>/dev/null |
			    awk '/PROGRAM TOTALS/ {gsub(/,/, "", $1); print $1; exit}')
			ir=" Ir=$(awk -v h="$h" -v k="$2" 'BEGIN {printf "%.0f", h / k}')"
			ir="$ir Ir_window=$(awk -v h="${tot:-0}" -v k="$2" 'BEGIN {printf "%.0f", h / k}')"
		fi
		echo "scrape N=$n path=$p bytes=$b wall_ms=$(awk -v w="$w" -v k="$2" \
		    'BEGIN {printf "%.2f", w * 1000 / k}')$ir"
	done
}

https_load() {
	curl -ks -o /dev/null "https://127.0.0.1:$1/healthz"
	sleep 1
	echo "https N=$n after=first_request $(mem_kib "$kpid")"
	[ "${BENCH_SMAPS:-0}" != 0 ] && smaps_breakdown "$kpid" "$n+https"
	rm -f "$R/https.ready"
	$PY - "$1" "$2" "$R/https.ready" <<'P' &
import socket, ssl, sys, time
port, k, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
held = []
for _ in range(k):
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
    s.recv(65536)
    held.append(s)
open(ready, "w").write("ok")
time.sleep(3600)
P
	hpid=$!
	wait_for 600 test -s "$R/https.ready"
	sleep 1
	echo "https N=$n after=$2_idle_connections $(mem_kib "$kpid")"
	kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null; hpid=
}

status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }
# CPU time in ns (schedstat), for a precision the 10 ms clock ticks do not give.
cpu_ns() { awk '{print $1}' "/proc/$1/schedstat" 2>/dev/null; }
private_dirty() {
	if [ -r "/proc/$1/smaps_rollup" ]; then
		awk '$1 == "Private_Dirty:" {print $2}' "/proc/$1/smaps_rollup"
	else
		awk '$1 == "Private_Dirty:" {s += $2} END {print s}' "/proc/$1/smaps"
	fi
}
# smaps_breakdown PID N: the lines described under BENCH_SMAPS.
smaps_breakdown() {
	awk -v n="$2" -v detail="${BENCH_SMAPS:-1}" -v exe="$(readlink "/proc/$1/exe")" '
	function flush() {
		if (cat == "") return
		rss[cat] += r; pss[cat] += p; pd[cat] += d
		if (perm ~ /x/) text[cat] += r
		if (detail >= 2 && (cat == "heap" || cat == "anon") && sz >= 64)
			printf "smaps_map N=%s %s %s size_kib=%d rss_kib=%d private_dirty_kib=%d\n",
			    n, cat, range, sz, r, d
		cat = ""
	}
	/^[0-9a-f]+-[0-9a-f]+ / {
		flush()
		range = $1; perm = $2; path = $6
		r = p = d = sz = 0
		if (path == "") cat = "anon"
		else if (path == exe) cat = "kletd"
		else if (path == "[heap]") cat = "heap"
		else if (path == "[stack]") cat = "stack"
		else if (path ~ /^\[/) cat = "kernel"
		else if (path ~ /-shm$/) cat = "sqlite-shm"
		else if (path ~ /\.so/) {
			cat = path; sub(/.*\//, "", cat); sub(/\.so.*/, "", cat)
			sub(/-[0-9.]+$/, "", cat)
		} else cat = "file"
		next
	}
	$1 == "Size:" {sz = $2}
	$1 == "Rss:" {r = $2}
	$1 == "Pss:" {p = $2}
	$1 == "Private_Dirty:" {d = $2}
	END {
		flush()
		k = 0
		for (c in rss) order[k++] = c
		for (i = 0; i < k; i++)
			for (j = i + 1; j < k; j++)
				if (rss[order[j]] > rss[order[i]]) {t = order[i]; order[i] = order[j]; order[j] = t}
		for (i = 0; i < k; i++) {
			c = order[i]
			printf "smaps N=%s %-14s rss_kib=%5d pss_kib=%5d private_dirty_kib=%5d text_rss_kib=%5d\n",
			    n, c, rss[c], pss[c], pd[c], text[c]
		}
	}' "/proc/$1/smaps"
	awk -v n="$2" '$1 ~ /^(Rss|Pss|Private_Dirty|Private_Clean|Shared_Clean|Anonymous):$/ {
		k = $1; sub(/:$/, "", k); v[k] = $2}
	    END {printf "smaps N=%s total          rss_kib=%5d pss_kib=%5d private_dirty_kib=%5d" \
		" private_clean_kib=%d shared_clean_kib=%d anonymous_kib=%d\n", n, v["Rss"], v["Pss"],
		v["Private_Dirty"], v["Private_Clean"], v["Shared_Clean"], v["Anonymous"]}' \
	    "/proc/$1/smaps_rollup"
}
file_kib() { # FILES... -> total KiB of those that exist
	t=0
	for f; do [ -f "$f" ] && t=$((t + $(stat -c %s "$f"))); done
	echo $((t / 1024))
}

first_n= first_rss= first_pd=
for n in "$@"; do
	R=$T/n$n
	mkdir -p "$R/m" "$R/root" "$R/logs"
	nc=0 i=1
	: >"$R/apipods.json"
	while [ $i -le "$n" ]; do
		second=
		if [ "$ctrs2" -gt 0 ] && [ $((i % ctrs2)) -eq 0 ]; then
			second=', {"name": "d", "image": "klet.local/busybox:1.35",
    "command": ["sleep", "100000"]}'
			nc=$((nc + 1))
		fi
		if [ "$api" = pods ]; then
			# API pods: one JSON array for the stand-in's /scale/pods, below.
			[ $i -gt 1 ] && printf ',' >>"$R/apipods.json"
			cat >>"$R/apipods.json" <<M
{"metadata": {"name": "p$i", "namespace": "default"},
 "spec": {"nodeName": "bench", "terminationGracePeriodSeconds": 1,
  "containers": [{"name": "c", "image": "klet.local/busybox:1.35",
    "command": ["sleep", "100000"]}$second]}}
M
		else
			cat >"$R/m/p$i.json" <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p$i", "namespace": "default"},
 "spec": {"terminationGracePeriodSeconds": 1,
  "containers": [{"name": "c", "image": "klet.local/busybox:1.35",
    "command": ["sleep", "100000"]}$second]}}
M
		fi
		nc=$((nc + 1)) i=$((i + 1))
	done
	[ "$rt" = fake ] && start_fake
	v=-v=2
	apiargs=
	if [ "$api" != 0 ]; then
		[ -n "$AS_PID" ] && as_stop
		# --scale: the stand-in's /scale/pods creates the API pods in one request.
		AS_NODE=bench as_start "$R" ${BENCH_AS_ARGS:---scale 100000}
		as_kubeconfig "$R/kubeconfig"
		apiargs="--kubeconfig $R/kubeconfig"
		if [ "$api" = pods ] && [ "$n" -gt 0 ]; then
			{ printf '['; cat "$R/apipods.json"; printf ']'; } >"$R/apipods.all"
			as_ctl /scale/pods -X POST --data-binary @"$R/apipods.all" >/dev/null ||
			    { echo "# N=$n: the API pods were not created" >&2; exit 1; }
		fi
	fi
	pre=
	case $tool in
	callgrind)
		pre="valgrind -q --tool=callgrind --instr-atstart=no --callgrind-out-file=$R/callgrind.out"
		;;
	massif)
		pre="valgrind -q --tool=massif --threshold=0.1 --depth=40 --massif-out-file=$R/massif.out"
		;;
	esac
	t0=$(date +%s%N)
	rop=
	[ -n "${BENCH_SCRAPE:-}" ] && rop="--read-only-port $(free_port)"
	# shellcheck disable=SC2086 # $pre is a word list on purpose
	$pre "$KLETD" $rop --address 127.0.0.1 --port 0 --healthz-port 0 --container-runtime-endpoint "unix://$SOCK" --pod-manifest-path "$R/m" \
	    --root-dir "$R/root" --pod-logs-dir "$R/logs" --hostname-override bench \
	    --cgroup-root "$CGROOT" \
	    --max-pods $((n > 110 ? n : 110)) $v $apiargs ${BENCH_KLETD_ARGS:-} >"$R/kletd.log" 2>&1 &
	kpid=$!
	# Up to 10 min: under valgrind 110 pods start slowly.
	if ! wait_for 6000 all_running "$n" "$nc"; then
		echo "# N=$n: not all running after 600 s: $(counts) (want $n $nc)" >&2
		tail -20 "$R/kletd.log" >&2
		exit 1
	fi
	if [ "$api" != 0 ] && ! wait_for 600 joined; then
		echo "# N=$n: kletd did not join the API stand-in" >&2
		tail -20 "$R/kletd.log" >&2
		exit 1
	fi
	t1=$(date +%s%N)
	# kletd's own view caught up: one of its relist lines (every 10 s at -v=2) with every pod
	# and container and no status call. The runtime's counts above can be ahead of it, most
	# under valgrind, and a window that began sooner counted records still being decoded.
	if ! wait_for 6000 relist_settled "$n" "$nc"; then
		echo "# N=$n: kletd's relist did not settle in 600 s" >&2
		tail -5 "$R/kletd.log" >&2
	fi
	sleep "$settle"
	# The idle figures are the steady state: after the first unmapping of what the start
	# mapped (10 s after the start, core/heap.h HEAP_DROP_FIRST_MS).
	while [ "$(ps -o etimes= -p "$kpid" | tr -d ' ')" -lt 12 ] 2>/dev/null; do sleep 1; done
	relists0=$(grep -c 'relist pods=' "$R/kletd.log")
	[ "$tool" = callgrind ] && callgrind_control -i on "$kpid" >/dev/null 2>&1
	# Beside the window, a process that only sleeps and wakes (bench_wake.c, 3 times a
	# second): what one wake-up costs on this machine meanwhile.
	wpid=
	if [ -z "$tool" ] && [ "${BENCH_WAKE_FLOOR:-1}" != 0 ] && [ -x "$T/bench_wake" ]; then
		"$T/bench_wake" 3 "$idle" >"$R/wake.out" 2>&1 &
		wpid=$!
	fi
	w0=$(status_kib "$kpid" voluntary_ctxt_switches)
	c0=$(cpu_ticks "$kpid") n0=$(cpu_ns "$kpid") s0=$(date +%s%N)
	rss_sample "$kpid" "$idle" # the window: mean and maximum beside the last value
	c1=$(cpu_ticks "$kpid") n1=$(cpu_ns "$kpid") s1=$(date +%s%N)
	w1=$(status_kib "$kpid" voluntary_ctxt_switches)
	[ -n "$wpid" ] && wait "$wpid"
	[ "$tool" = callgrind ] && callgrind_control -i off "$kpid" >/dev/null 2>&1
	rss=$(status_kib "$kpid" VmRSS) hwm=$(status_kib "$kpid" VmHWM)
	pss=$(awk '$1 == "Pss:" {print $2}' "/proc/$kpid/smaps_rollup" 2>/dev/null)
	pd=$(private_dirty "$kpid")
	thr=$(status_kib "$kpid" Threads)
	fds=$(ls "/proc/$kpid/fd" | wc -l)
	last=$(grep 'relist pods=' "$R/kletd.log" | tail -1)
	rl=$(echo "$last" | sed -n 's/.* duration=\([0-9]*\)us.*/\1/p')
	rlmax=$(echo "$last" | sed -n 's/.* max=\([0-9]*\)us.*/\1/p')
	st=$(file_kib "$R/root/klet.db" "$R/root/klet.db-wal" "$R/root/klet.db-shm")
	if [ -n "$n0" ] && [ -n "$n1" ]; then
		cpu=$(awk -v c="$((n1 - n0))" -v ns="$((s1 - s0))" \
		    'BEGIN {printf "%.3f", c / 1e6 / (ns / 1e9)}')
	else
		cpu=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v ns="$((s1 - s0))" \
		    'BEGIN {printf "%.2f", c * 1000 / hz / (ns / 1e9)}')
	fi
	# Its wake-ups (each poll that slept is a voluntary switch), and what as many cost a
	# process that does nothing else, at the cost per wake-up bench_wake saw meanwhile.
	wakes=$(awk -v w="$((${w1:-0} - ${w0:-0}))" -v ns="$((s1 - s0))" \
	    'BEGIN {printf "%.2f", w / (ns / 1e9)}')
	floor=
	if [ -n "$wpid" ]; then
		uw=$(sed -n 's/.* us_per_wake=\([0-9.]*\).*/\1/p' "$R/wake.out")
		[ -n "$uw" ] && floor=$(awk -v w="$wakes" -v u="$uw" 'BEGIN {printf "%.3f", w * u / 1000}')
	fi
	echo "footprint N=$n containers=$nc runtime=$rt${tool:+ tool=$tool}${apiargs:+ api=tls}$(
	    [ "$api" = pods ] && echo " pods=api")" \
	    "rss_kib=$rss rss_mean_kib=$rss_mean rss_max_kib=$rss_max pss_kib=${pss:-?} hwm_kib=$hwm" \
	    "private_dirty_kib=$pd cpu_ms_per_s=$cpu wakes_per_s=$wakes${floor:+ wake_floor_ms_per_s=$floor}" \
	    "relist_us=${rl:-?} relist_max_us=${rlmax:-?} store_kib=$st fds=$fds threads=$thr" \
	    "ready_s=$(( (t1 - t0) / 1000000000 ))"
	if [ "${BENCH_SMAPS:-0}" != 0 ]; then
		smaps_breakdown "$kpid" "$n"
		# kletd's own view: SQLite's heap and page cache, malloc's in use and free.
		[ -x "${KLETD%/*}/podctl" ] && "${KLETD%/*}/podctl" --socket "$R/root/podctl.sock" \
		    status 2>/dev/null | sed -n '/^Store:/,/^Events:/p' |
		    grep -v '^Events:' | sed "s/^/# N=$n podctl: /"
	fi
	[ -n "${BENCH_SCRAPE:-}" ] && scrape_costs "${rop#--read-only-port }" "$BENCH_SCRAPE"
	if [ -n "${BENCH_HTTPS:-}" ]; then
		port=$(sed -n 's/.*serving HTTPS on 127.0.0.1 port \([0-9]*\).*/\1/p' \
		    "$R/kletd.log" | tail -1)
		https_load "$port" "$BENCH_HTTPS"
	fi
	kill -TERM "$kpid" 2>/dev/null
	wait_for 600 sh -c "! kill -0 $kpid" 2>/dev/null
	wait "$kpid" 2>/dev/null
	kpid=
	case $tool in
	callgrind)
		cgf=$R/callgrind.out
		[ -f "$R/callgrind.idle" ] && cgf=$R/callgrind.idle
		# Cycles in the window: relist runs every second.
		ir=$(callgrind_annotate "$cgf" 2>/dev/null |
		    awk '/PROGRAM TOTALS/ {gsub(/,/, "", $1); print $1; exit}')
		# Calls of kletd_relist in the window (cfn= names may be compressed: "(id) name").
		cyc=$(awk '/^c?fn=/ {k = $1; sub(/^c?fn=/, "", k); if ($2 != "") name[k] = $2}
		    /^cfn=/ {cur = name[k]; next}
		    /^calls=/ && cur == "kletd_relist" {sub(/^calls=/, "", $1); c += $1}
		    /^calls=/ {getline; cur = ""}
		    END {print c + 0}' "$cgf")
		# The relist itself: the list calls sent, their answers hashed, decoded where they
		# changed, diffed and committed, and kletd's relist-done work (inclusive costs of
		# pleg_relist and the PLEG's answer callbacks, the deferred decoding included; the
		# socket read, HTTP/2 framing and other raw answers, image GC's, excluded).
		rl=$(callgrind_annotate --inclusive=yes --threshold=100 "$cgf" 2>/dev/null | awk '
		    !/=>/ && /^ *[0-9,]+ .*:(pleg_relist|pl_sandboxes_cb|pl_containers_cb|pl_defer_run) / {
			v = $1; gsub(/,/, "", v); s += v } END {print s + 0}')
		echo "relist_ir N=$n relists=$cyc Ir_per_relist=$(awk -v i="$rl" -v c="$cyc" \
		    'BEGIN {printf "%.0f", (c > 0 ? i / c : 0)}')"
		echo "callgrind N=$n window_s=$idle Ir=${ir:-?} relists=$cyc" \
		    "Ir_per_s=$(awk -v i="${ir:-0}" -v s="$idle" 'BEGIN {printf "%.0f", i / s}')" \
		    "Ir_per_relist_cycle=$(awk -v i="${ir:-0}" -v c="$cyc" \
		    'BEGIN {printf "%.0f", (c > 0 ? i / c : 0)}')"
		callgrind_annotate --inclusive=no "$cgf" 2>/dev/null |
		    sed -n '/^Ir/,$p' | grep -v '^--' | sed -n '3,22p' | sed 's/^/#   /'
		;;
	massif)
		ms_print "$R/massif.out" >"$R/massif.txt" 2>/dev/null
		peak=$(awk '/^ *[0-9]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ *$/ {
		    gsub(/,/, "", $3); if ($3 + 0 > p) p = $3 + 0} END {print p}' "$R/massif.txt")
		echo "massif N=$n heap_peak_bytes=${peak:-?}"
		# The detailed snapshot with the largest total: its top-level entries.
		awk '/^ *[0-9]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ *$/ {
		    gsub(/,/, "", $3); cur = $3 + 0; snap = $1}
		    /^[0-9.]+% \(/ { if (cur >= best) {best = cur; b = snap} }
		    END {print b}' "$R/massif.txt" >"$R/peak.snap"
		awk -v s="$(cat "$R/peak.snap")" '
		    /^ *[0-9]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ *$/ {in_s = ($1 == s); next}
		    in_s && /^->/ {print "#   " substr($0, 1, 150); k++}
		    in_s && k >= 15 {exit}' "$R/massif.txt"
		;;
	esac
	if [ -n "$fpid" ]; then
		kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null; fpid=
	fi
	if [ -z "$first_n" ]; then
		first_n=$n first_rss=$rss first_pd=$pd
	elif [ "$n" -ne "$first_n" ]; then
		echo "per_pod N=$first_n..$n rss_kib_per_pod=$(awk -v a="$first_rss" -v b="$rss" \
		    -v n=$((n - first_n)) 'BEGIN {printf "%.1f", (b - a) / n}')" \
		    "private_dirty_kib_per_pod=$(awk -v a="$first_pd" -v b="$pd" \
		    -v n=$((n - first_n)) 'BEGIN {printf "%.1f", (b - a) / n}')"
	fi
done
