#!/bin/sh
# kletd under a systemd-style supervisor: the notify datagrams it sends to $NOTIFY_SOCKET
# (a socket of this test's own, read by a small Python listener), against the fake CRI:
# STATUS while it waits, READY=1 once the store is open, the runtime connected and the first
# relist done, WATCHDOG=1 pings at half of $WATCHDOG_USEC from the loop, none while the loop
# is stopped (SIGSTOP), and STOPPING=1 on SIGTERM.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake nl-notify

NOTIFY_SOCKET=$T/notify.sock
$PY - "$NOTIFY_SOCKET" "$T/notify.log" <<'PYEOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(120)
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        try:
            data = s.recv(4096)
        except socket.timeout:
            break
        for line in data.decode().split("\n"):
            out.write("%.3f %s\n" % (time.monotonic(), line))
PYEOF
listener=$!
wait_for 100 test -S "$NOTIFY_SOCKET"
export NOTIFY_SOCKET
WATCHDOG_USEC=1000000 # 1 s: pings every 500 ms
export WATCHDOG_USEC
start_kletd
unset NOTIFY_SOCKET WATCHDOG_USEC
got() { grep -q "$1" "$T/notify.log" 2>/dev/null; }
wait_for 200 got '^[0-9.]* READY=1'
check "STATUS while waiting for the runtime" got 'STATUS=store open; waiting for the container runtime'
check "READY=1 after the first relist" got 'READY=1'
check "STATUS once running" got 'STATUS=running [0-9]* pods; recovered in'
ready_line=$(grep -n 'READY=1' "$T/notify.log" | head -1 | cut -d: -f1)
status_line=$(grep -n 'STATUS=store open' "$T/notify.log" | head -1 | cut -d: -f1)
check "the store's STATUS comes before READY" [ "${status_line:-99999}" -lt "${ready_line:-0}" ]
pings() { grep -c 'WATCHDOG=1' "$T/notify.log"; }
n0=$(pings)
wait_for 50 sh -c "[ \$(grep -c 'WATCHDOG=1' '$T/notify.log') -ge $((n0 + 3)) ]"
check "watchdog pings from the loop" [ "$(pings)" -ge $((n0 + 3)) ]
kill -STOP "$kpid"
sleep 2 # a stuck loop: no condition to wait for, only the absence of pings
n1=$(pings)
sleep 1.5
n2=$(pings)
kill -CONT "$kpid"
check "no pings while the loop is stuck" [ "$n1" -eq "$n2" ]
stop_kletd TERM
check "STOPPING=1 on SIGTERM" got 'STOPPING=1'
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
