#!/bin/sh
# kletd.service under a real systemd: systemd booted as PID 1 of private namespaces on an
# overlay of this machine (tests/install/systemd_boot.sh; the machine's own PID 1 is not
# systemd here), with the `make install` tree, dbus and the real systemd-logind, kletd on the
# fake CRI (its socket bound in). Checked: Type=notify (active only after READY=1, its
# STATUS=), the watchdog pinged from the loop and a stopped loop restarted (a drop-in
# shortens WatchdogSec and RestartSec), journald's priorities without a duplicated time,
# KillMode=process (the pods outlive a stop), logind's delay inhibitor lock, and a poweroff
# through logind: the pods terminated in the kubelet's order (cut to logind's default
# InhibitDelayMaxSec of 5 s), the lock released, then the shutdown.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
[ "$(id -u)" -eq 0 ] || node_skip "needs root"
[ -x /lib/systemd/systemd ] || node_skip "systemd is not installed"
command -v dbus-daemon >/dev/null 2>&1 || node_skip "dbus-daemon is not installed"
command -v unshare >/dev/null 2>&1 || node_skip "unshare is not installed"
node_setup_fake unit
B=$top/tests/install/systemd_boot.sh
D=$T/boot
trap 'sh "$B" stop "$D" >/dev/null 2>&1; node_cleanup; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null' EXIT
b=${top_builddir:-.}
make -s -C "$b" install DESTDIR="$T/inst" >"$T/install.log" 2>&1 ||
    { cat "$T/install.log"; echo "not ok - make install"; exit 1; }
# The unit reads SYSCONFDIR/default/kletd (the build's sysconfdir: /etc for a package).
prefix=$(sed -n 's/^prefix = //p' "$b/Makefile")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$b/Makefile" | sed "s|\${prefix}|$prefix|")
mkdir -p "$T/inst$sysconfdir/default" "$D/etc/kubernetes/manifests" \
    "$D/etc/systemd/system/kletd.service.d"
cat >"$T/inst$sysconfdir/default/kletd" <<'E'
KLETD_ARGS="--container-runtime-endpoint unix:///klet-cri/cri.sock --pod-logs-dir /klet-cri/logs --hostname-override unitnode --port 0 --healthz-port 0 --cgroup-root /klet --shutdown-grace-period 10s --shutdown-grace-period-critical-pods 4s -v=1"
E
cat >"$D/etc/systemd/system/kletd.service.d/test.conf" <<'E'
[Service]
# the fake CRI runs outside and writes the logs where kletd says: a directory both see
ReadWritePaths=/klet-cri
WatchdogSec=3
RestartSec=1
TimeoutAbortSec=5
E
cat >"$D/etc/kubernetes/manifests/web.yaml" <<'E'
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - {name: c, image: klet.local/busybox:1.35, command: [fake-ignore-term]}
E
cat >"$D/etc/kubernetes/manifests/crit.yaml" <<'E'
apiVersion: v1
kind: Pod
metadata: {name: crit, namespace: kube-system}
spec:
  priorityClassName: system-node-critical
  containers:
  - {name: c, image: klet.local/busybox:1.35, command: [sleep, inf]}
E
pid=$(sh "$B" start "$D" "$T/inst" "$T" 2>"$T/boot.err")
rc=$?
[ $rc -eq 77 ] && node_skip "$(cat "$T/boot.err")"
[ $rc -eq 0 ] || { cat "$T/boot.err"; echo "not ok - systemd did not boot"; exit 1; }
in_boot() { sh "$B" run "$D" "$@"; }
prop() { in_boot systemctl show kletd -p "$1" --value 2>/dev/null; }
active() { [ "$(prop ActiveState)" = active ]; }
wait_for 600 active
check "kletd.service active under systemd (PID 1 of the namespaces: $pid)" active
check "Type=notify" [ "$(prop Type)" = notify ]
st=$(prop StatusText)
check "its STATUS= once ready: \"$st\"" sh -c "echo '$st' | grep -Eq '^running 2 pods; recovered in [0-9]+ms$'"
in_boot systemctl status kletd --no-pager -l >"$T/status.out" 2>&1
sed 's/^/# /' "$T/status.out" | head -12
check "KillMode=process, Restart=always" \
    sh -c "[ '$(prop KillMode)' = process ] && [ '$(prop Restart)' = always ]"
wd1=$(prop WatchdogTimestampMonotonic)
sleep 3
wd2=$(prop WatchdogTimestampMonotonic)
check "the watchdog is pinged from the loop (WatchdogSec=3: $wd1 -> $wd2)" [ "$wd2" -gt "$wd1" ]
in_boot systemd-inhibit --list --no-pager >"$T/inhibit.out" 2>&1
sed 's/^/# /' "$T/inhibit.out"
check "logind lists kletd's delay lock for shutdown" grep -Eq '^kletd .* shutdown .* delay$' "$T/inhibit.out"
in_boot journalctl -u kletd -o verbose --no-pager >"$T/journal.out" 2>&1
check "journald: a warning at priority 4 (InhibitDelayMaxSec below the period)" sh -c "
    grep -B30 'MESSAGE=nodeshutdown.c:[0-9]*] node shutdown manager: systemd-logind holds a shutdown back 5s' '$T/journal.out' |
    grep -q 'PRIORITY=4'"
check "journald: the message without klog's time and pid" \
    grep -Eq '^    MESSAGE=kletd.c:[0-9]+] kletd [0-9.]+ starting node=unitnode' "$T/journal.out"

# A stuck loop: stopped, the watchdog runs out, systemd restarts kletd.
main1=$(prop MainPID)
in_boot kill -STOP "$main1"
restarted() { [ "$(prop NRestarts)" -ge 1 ] && [ "$(prop MainPID)" != "$main1" ] && active; }
wait_for 200 restarted
check "a stopped loop: watchdog timeout, restarted (NRestarts=$(prop NRestarts))" restarted
in_boot journalctl -u kletd --no-pager >"$T/journal2.out" 2>&1
check "systemd logged the watchdog timeout" grep -q 'Watchdog timeout' "$T/journal2.out"

# KillMode=process: stopping the service leaves the pods running.
in_boot systemctl stop kletd
ctrs_running() {
	$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"state"}' |
	    $PY -c 'import json,sys; print(len([c for c in json.load(sys.stdin)["containers"] if c["state"]=="CONTAINER_RUNNING"]))'
}
check "systemctl stop kletd: the two containers keep running" [ "$(ctrs_running)" -eq 2 ]
in_boot systemctl start kletd
wait_for 300 active
check "started again" active

# A poweroff through logind: the delay lock holds it until the pods are terminated.
$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"reset_calls"}' >/dev/null
in_boot systemctl poweroff >/dev/null 2>&1
gone() { ! kill -0 "$pid" 2>/dev/null; }
wait_for 300 gone
check "the namespaces' systemd powered off" gone
stops=$($PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"requests","method":"StopContainer","n":10}' |
    $PY -c 'import json,sys; print(" ".join(r.get("timeout","0") for r in json.load(sys.stdin)["requests"]))')
check "the pods stopped in the kubelet's order: web with 1s (5s - 4s), then crit with 4s ($stops)" \
    [ "$stops" = "1 4" ]
journalctl -D "$D/upper/var/log/journal" --no-pager -o short-precise >"$T/boot-journal.out" 2>&1
grep -E 'kletd\[[0-9]+\]: nodeshutdown|logind\[[0-9]+\]: (The system will power off|System is powering down)' \
    "$T/boot-journal.out" | sed 's/^/# /' | tail -12
line() { grep -n "$1" "$T/boot-journal.out" | tail -1 | cut -d: -f1; }
l_web=$(line 'killing pod default/web-unitnode')
l_crit=$(line 'killing pod kube-system/crit-unitnode')
l_crit_done=$(line 'the pods of priority 2000000000 and above are')
l_down=$(line 'System is powering down')
check "journal: web killed, then crit, and logind powers down only after crit is done" \
    sh -c "[ -n '$l_web' ] && [ -n '$l_crit' ] && [ -n '$l_crit_done' ] && [ -n '$l_down' ] &&
        [ '$l_web' -lt '$l_crit' ] && [ '$l_crit_done' -lt '$l_down' ]"
check "journal: kletd released the lock when done" grep -q 'done in [0-9]*ms; the inhibitor lock is released' "$T/boot-journal.out"
finish
