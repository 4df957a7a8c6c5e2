#!/bin/sh
# Descriptor exhaustion (issue 20, case 1): kletd runs with a limit of 128 open files and a
# client opens 400 idle connections to podctl.sock. kletd must not spin on accept() (CPU
# stays low), the log stays small (accept errors paused for a second, repeated lines
# rate-limited, libevent's warnings through our log), a static pod is neither killed nor
# restarted when manifest scans fail with EMFILE, and podctl answers once the flood is gone.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
PODCTL=${top_builddir:-.}/podctl
case $PODCTL in /*) ;; *) PODCTL=$(pwd)/$PODCTL ;; esac
node_setup_fake fd-fake
LIMIT=128
NCONN=400

put keep.json <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "keep"},
 "spec": {"terminationGracePeriodSeconds": 1,
  "containers": [{"name": "c", "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"]}]}}
M
# kletd under a hard limit it cannot raise (the soft one is raised to the hard one at start).
cat >"$T/kletd-lim" <<S
#!/bin/sh
ulimit -n $LIMIT || exit 1
exec "$KLETD" "\$@"
S
chmod +x "$T/kletd-lim"
KLETD0=$KLETD
KLETD=$T/kletd-lim
start_kletd --file-check-frequency 1s
check "kletd started with a limit of $LIMIT descriptors" logged 'kletd ready'
check "its limit is $LIMIT" sh -c "grep -q '^Max open files *$LIMIT *$LIMIT' /proc/$kpid/limits"
wait_for 200 running keep c
check "static pod running" running keep c
id0=$(ctrs | awk '$1=="keep" {print $5}')

S=$T/root/podctl.sock
cat >"$T/flood.py" <<'PY'
# Opens up to N connections (non-blocking: a full backlog is retried), holds them for HOLD
# seconds, closes them. Prints the number connected.
import socket, sys, time
path, n, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
ss, end = [], time.monotonic() + 3
while len(ss) < n and time.monotonic() < end:
    s = socket.socket(socket.AF_UNIX); s.setblocking(False)
    try:
        s.connect(path); ss.append(s)
    except (BlockingIOError, InterruptedError):
        s.close(); time.sleep(0.01)
open(sys.argv[4], "w").write("%d\n" % len(ss))
time.sleep(hold)
for s in ss: s.close()
PY
cpu() { awk '{print $14 + $15}' "/proc/$kpid/stat"; }
size0=$(wc -c <"$T/kletd.log")
$PY "$T/flood.py" "$S" $NCONN 9 "$T/flood.n" &
flpid=$!
wait_for 50 test -s "$T/flood.n"
sleep 1 # the flood is on: measure kletd's CPU while it lasts
c0=$(cpu)
sleep 5
c1=$(cpu)
hz=$(getconf CLK_TCK)
pct=$(((c1 - c0) * 100 / hz / 5))
grown=$(($(wc -c <"$T/kletd.log") - size0))
echo "# $(cat "$T/flood.n") connections held; kletd CPU ${pct}% over 5 s; log grew by $grown bytes"
check "connections held: more than the limit" [ "$(cat "$T/flood.n")" -gt $LIMIT ]
check "kletd CPU stays low (< 10%)" [ "$pct" -lt 10 ]
check "log stays small (< 64 KiB in 6 s)" [ "$grown" -lt 65536 ]
check "accept paused on EMFILE" logged 'podctl: accept: Too many open files; not accepting for 1s'
check "no libevent accept warning flood" sh -c "[ \$(grep -c 'Error from accept' '$T/kletd.log') -le 10 ]"
wait "$flpid"
ok_status() { "$PODCTL" --socket "$S" status >/dev/null 2>&1; }
wait_for 100 ok_status
check "podctl works after the flood" ok_status
sleep 2 # two more manifest scans with descriptors back
check "static pod: same container, still running" [ "$(ctrs | awk '$1=="keep" && $3=="RUNNING" {print $5}')" = "$id0" ]
check "static pod: one instance, never restarted" [ "$(count_ctrs keep c)" -eq 1 ]
check "static pod: never killed" sh -c "! grep -q 'killing container\|manifest .*keep.json removed\|pod update REMOVE' '$T/kletd.log'"
check "kletd alive" kill -0 "$kpid"

# Without the low limit: 200 idle clients meet the cap of 128 clients; one over it is told.
stop_kletd TERM
KLETD=$KLETD0
start_kletd --file-check-frequency 1s
wait_for 200 test -S "$S" # the first run's "kletd ready" is in the log already
$PY "$T/flood.py" "$S" 200 6 "$T/flood2.n" &
flpid=$!
wait_for 50 test -s "$T/flood2.n"
"$PODCTL" --socket "$S" status >"$T/busy.out" 2>&1
check "a client over the cap is told why" grep -q 'too many podctl clients (limit 128)' "$T/busy.out"
wait "$flpid"
wait_for 100 ok_status
check "podctl works after the second flood" ok_status
check "static pod: same container after a restart" [ "$(ctrs | awk '$1=="keep" && $3=="RUNNING" {print $5}')" = "$id0" ]
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
