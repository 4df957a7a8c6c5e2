#!/bin/sh
# Graceful node shutdown against a real D-Bus: a private dbus-daemon with a small stand-in
# for systemd-logind (tests/e2e/fakelogind.py, python3-dbus) and kletd joined to the API
# stand-in on the fake CRI, with --shutdown-grace-period 8s and 3s for critical pods.
# kletd takes a delay inhibitor lock; on PrepareForShutdown(true) the node turns NotReady
# ("node is shutting down"), the pods below the critical priority are terminated first (5s
# at most, their own shorter grace winning), the critical one only after them (3s), all are
# reported Failed / Terminated with the kubelet's message and DisruptionTarget, a new pod is
# rejected (NodeShutdown), and the lock is released once they are done. A cancellation makes
# the node Ready and takes a new lock. Without a system bus, or without logind on it, kletd
# says once that the feature is off.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/apiserver/lib.sh"
command -v dbus-daemon >/dev/null 2>&1 || node_skip "dbus-daemon is not installed"
/usr/bin/python3 -c 'import dbus, dbus.mainloop.glib, gi' 2>/dev/null ||
    node_skip "python3-dbus or python3-gi is not installed"
command -v curl >/dev/null || node_skip "curl is not installed"
node_setup_fake shut
bpid= lpid=
trap 'node_cleanup; as_stop; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null;
    [ -n "$lpid" ] && kill "$lpid" 2>/dev/null; [ -n "$bpid" ] && kill "$bpid" 2>/dev/null' EXIT
BUS=$T/bus
cat >"$T/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$BUS</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$T/bus.conf" --nofork >"$T/bus.log" 2>&1 &
bpid=$!
wait_for 50 test -S "$BUS" || { cat "$T/bus.log"; node_skip "dbus-daemon did not start"; }
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$BUS

# No system bus at all, then a bus without logind: the feature is off, said once.
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/nobus start_kletd --shutdown-grace-period 8s
wait_for 50 logged 'graceful node shutdown is off'
sleep 2
check "no system bus: 'graceful node shutdown is off' logged once" \
    [ "$(grep -c 'graceful node shutdown is off: no system bus' "$T/kletd.log")" -eq 1 ]
stop_kletd
mv "$T/kletd.log" "$T/kletd-nobus.log"
start_kletd --shutdown-grace-period 8s
wait_for 100 logged 'graceful node shutdown is off'
sleep 2
check "no logind on the bus: off, logged once" \
    [ "$(grep -c 'graceful node shutdown is off: systemd-logind is not on the system bus' "$T/kletd.log")" -eq 1 ]
stop_kletd
mv "$T/kletd.log" "$T/kletd-nologind.log"

# logind's stand-in, then kletd joined to the API stand-in.
LOG=$T/logind.log
: >"$LOG"
/usr/bin/python3 "$top/tests/e2e/fakelogind.py" --address "$DBUS_SYSTEM_BUS_ADDRESS" \
    --delay-sec 30 --log "$LOG" --ready-file "$T/logind.ready" >"$T/logind.out" 2>&1 &
lpid=$!
wait_for 100 test -s "$T/logind.ready" || { cat "$T/logind.out"; echo "not ok - fakelogind"; exit 1; }
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
rm -rf "$T/root"
start_kletd --kubeconfig "$T/kubeconfig" --shutdown-grace-period 8s \
    --shutdown-grace-period-critical-pods 3s -v=2
wait_for 100 grep -q '^[0-9.]* inhibit 1 ' "$LOG"
check "kletd takes a delay lock for shutdown (who=kletd)" \
    grep -q 'inhibit 1 who=kletd what=shutdown mode=delay' "$LOG"
check "the groups are logged (pods 5s, critical pods 3s)" \
    logged 'inhibitor lock is held (delay up to 30s); pods get 5s, critical pods 3s'

# low: priority 0, ignores SIGTERM, its own grace 3s (< the group's 5s); mid: a user
# priority, stops at once; crit: system-node-critical, stops at once.
pod() { # NAME PRIORITY GRACE COMMAND (a JSON list)
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$NODE\",
	    \"priority\":$2,\"terminationGracePeriodSeconds\":$3,
	    \"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":$4}]}}" >/dev/null
}
pod low 0 3 '["fake-ignore-term"]'
pod mid 1000 30 '["sleep", "inf"]'
as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"crit\"},\"spec\":{\"nodeName\":\"$NODE\",
    \"priority\":2000001000,\"priorityClassName\":\"system-node-critical\",
    \"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":[\"sleep\",\"inf\"]}]}}" >/dev/null
field() { as_ctl "/pods/default/$1/get" | as_json "$2" 2>/dev/null; }
all_running() {
	for p in low mid crit; do [ "$(field $p 'd["status"]["phase"]')" = Running ] || return 1; done
}
wait_for 300 all_running
check "three pods Running" all_running
node_ready() {
	as_ctl /objects?kind=nodes | as_json '[c["status"]+"/"+c.get("reason","")+"/"+c.get("message","") for n in d for c in n["status"]["conditions"] if c["type"]=="Ready"][0]'
}
ready_now() { node_ready | grep -q '^True/KubeletReady'; }
wait_for 100 ready_now
check "node Ready before the shutdown" ready_now
$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"reset_calls"}' >/dev/null

# The shutdown.
kill -USR1 "$lpid"
wait_for 300 grep -q '^[0-9.]* released 1 ' "$LOG"
check "the lock is released once the pods are done" grep -q 'released 1 after' "$LOG"
t_sig=$(awk '$2=="signal" && $3=="true" {print $1}' "$LOG")
t_rel=$(awk '$2=="released" && $3=="1" {print $1}' "$LOG")
echo "# PrepareForShutdown at $t_sig, lock released at $t_rel"
line() { grep -n "$1" "$T/kletd.log" | head -1 | cut -d: -f1; }
l_low=$(line 'killing pod default/low with grace 3s')
l_mid=$(line 'killing pod default/mid with grace 5s')
l_low_done=$(line 'terminating -> terminated pod=default/low ')
l_group=$(line 'the pods of priority 0 and above are terminated')
l_crit=$(line 'killing pod default/crit with grace 3s')
l_rel=$(line 'the inhibitor lock is released')
echo "# kletd.log lines: low=$l_low mid=$l_mid low-terminated=$l_low_done group-done=$l_group crit=$l_crit released=$l_rel"
check "non-critical pods killed first: low with its own grace 3s, mid with the group's 5s" \
    [ -n "$l_low" ] && [ -n "$l_mid" ]
check "the critical pod only after the others are terminated" \
    [ -n "$l_crit" ] && [ -n "$l_low_done" ] && [ "$l_low_done" -lt "$l_crit" ] &&
    [ -n "$l_group" ] && [ "$l_group" -lt "$l_crit" ] && [ "$l_mid" -lt "$l_crit" ]
check "the lock released after the critical pod was killed" \
    [ -n "$l_rel" ] && [ "$l_crit" -lt "$l_rel" ]
stops=$($PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"requests","method":"StopContainer","n":10}' |
    $PY -c 'import json,sys; print(" ".join(r.get("timeout","0") for r in json.load(sys.stdin)["requests"]))')
check "the runtime was asked to stop with 3, 5 then 3 s, in that order ($stops)" \
    sh -c "[ '$stops' = '3 5 3' ] || [ '$stops' = '5 3 3' ]"
terminated() { # POD
	[ "$(field "$1" 'd["status"]["phase"]+"|"+d["status"].get("reason","")+"|"+d["status"].get("message","")')" = \
	    "Failed|Terminated|Pod was terminated in response to imminent node shutdown." ]
}
disrupted() {
	[ "$(field "$1" '[c["status"]+"/"+c.get("reason","") for c in d["status"]["conditions"] if c["type"]=="DisruptionTarget"][0]')" = \
	    True/TerminationByKubelet ]
}
for p in low mid crit; do
	wait_for 150 terminated $p
	check "$p: Failed, Terminated, the kubelet's message" terminated $p
	check "$p: DisruptionTarget True, TerminationByKubelet" disrupted $p
done
shutting() { node_ready | grep -qx 'False/KubeletNotReady/node is shutting down'; }
wait_for 100 shutting
check "node NotReady: KubeletNotReady, node is shutting down ($(node_ready))" shutting
node_event() { as_ctl /objects?kind=events | grep -q "$1"; }
wait_for 100 node_event 'Shutdown manager detected shutdown event'
check "node event NodeShutdown: Shutdown manager detected shutdown event" \
    node_event '"reason":"NodeShutdown".*Shutdown manager detected shutdown event'

as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"late\"},\"spec\":{\"nodeName\":\"$NODE\",
    \"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":[\"sleep\",\"inf\"]}]}}" >/dev/null
rejected() {
	[ "$(field late 'd["status"]["phase"]+"|"+d["status"].get("reason","")+"|"+d["status"].get("message","")')" = \
	    "Failed|NodeShutdown|Pod was rejected: Pod was rejected as the node is shutting down." ]
}
wait_for 100 rejected
check "a new pod is rejected: NodeShutdown" rejected

# Cancelled: Ready again and a new lock.
kill -USR2 "$lpid"
wait_for 100 grep -q '^[0-9.]* inhibit 2 ' "$LOG"
check "after a cancellation kletd takes a new lock" grep -q 'inhibit 2 who=kletd' "$LOG"
wait_for 150 ready_now
check "node Ready again after the cancellation ($(node_ready))" ready_now
wait_for 100 node_event 'Shutdown manager detected shutdown cancellation'
check "node event: Shutdown manager detected shutdown cancellation" \
    node_event 'Shutdown manager detected shutdown cancellation'

stop_kletd
wait_for 50 grep -q '^[0-9.]* released 2 ' "$LOG"
check "kletd stopping releases its lock" grep -q 'released 2 after' "$LOG"
sed 's/^/# logind: /' "$LOG"
finish
