#!/bin/sh
# The pod loop against the fake gRPC CRI (fast, no containerd): add -> running, restart
# policies, a container ignoring SIGTERM, kletd killed and restarted, removal, and the relist
# duration with 20 pods, admission at --max-pods.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake nl-fake

pod() { # NAME RESTARTPOLICY GRACE COMMAND...(JSON array items)
	put "$1.json" <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"restartPolicy": "$2", "terminationGracePeriodSeconds": $3,
  "containers": [{"name": "c", "image": "klet.local/busybox:1.35", "command": [$4]}]}}
M
}
pod run Always 2 '"sleep", "inf"'
pod never Never 2 '"fake-exit", "3"'
pod onfail OnFailure 2 '"false"'
pod stubborn Always 3 '"fake-ignore-term"'
printf 'nameserver 127.0.0.1\n' >"$T/resolv.conf"
start_kletd --max-pods 21 --resolv-conf "$T/resolv.conf" --sync-frequency 2s
check "kletd started" logged 'kletd ready'
wait_for 200 running run c
check "add -> running" running run c
never_done() { ctrs | awk '$1=="never" && $3=="EXITED" {f=1} END {exit !f}'; }
wait_for 200 never_done
check "Never: exited, exit code 3" [ "$(exit_code "$(ctrs | awk '$1=="never" {print $5}')")" = 3 ]
wait_for 300 restarts_at_least onfail c 1
check "OnFailure: failing container restarted" restarts_at_least onfail c 1
sleep 2
check "Never: one instance, not restarted" [ "$(count_ctrs never c)" -eq 1 ]

# kletd killed and restarted: nothing restarted, no second sandbox.
wait_for 200 running stubborn c
before=$(ctrs | awk '$3=="RUNNING" {print $5}' | sort | tr '\n' ' ')
nsb=$(sandboxes | wc -l)
stop_kletd KILL
start_kletd --max-pods 21 --resolv-conf "$T/resolv.conf" --sync-frequency 2s
wait_for 100 logged 'resumed [0-9]* pod workers'
sleep 3
check "restart: running containers untouched" [ "$before" = "$(ctrs | awk '$3=="RUNNING" {print $5}' | sort | tr '\n' ' ')" ]
check "restart: no second sandbox" [ "$(sandboxes | wc -l)" -eq "$nsb" ]

# A container ignoring SIGTERM is killed after its grace (3 s), not before.
t_rm=$(date +%H:%M:%S.%N)
rm -f "$T/m/stubborn.json"
wait_for 200 logged 'container c (.*) of pod stubborn-nl-fake stopped'
took=$(grep 'container c (.*) of pod stubborn-nl-fake stopped' "$T/kletd.log" | head -1 |
    awk -v r="$t_rm" '{split($2, t, ":"); s = t[1]*3600 + t[2]*60 + t[3];
    split(r, q, ":"); printf "%d", (s - q[1]*3600 - q[2]*60 - q[3]) * 1000}')
echo "# SIGTERM-ignoring container (grace 3 s) stopped after ${took:-?} ms"
check "grace respected (>= 2.5 s)" [ "${took:-0}" -ge 2500 ]
check "killed after the grace (<= 7 s)" [ "${took:-99999}" -le 7000 ]
wait_for 200 no_pod stubborn
check "removed pod gone from the runtime" no_pod stubborn

# A sync with nothing to start builds no sandbox config: with --resolv-conf gone, run's
# periodic resyncs (--sync-frequency 2s) log nothing about it; a restart of its container
# (CreateContainer takes the config) does.
rm -f "$T/resolv.conf"
t_rm=$(date +%s%N)
sync_ago_ms() {
	"$(dirname "$KLETD")/podctl" --socket "$T/root/podctl.sock" describe pod run-nl-fake -o json |
	    $PY -c 'import json,sys; print(json.load(sys.stdin)["runtime"].get("lastSyncAgoMs", 99999999))'
}
synced_since_rm() { [ "$(sync_ago_ms)" -lt $(( ($(date +%s%N) - t_rm) / 1000000 )) ]; }
wait_for 100 synced_since_rm
check "run resynced, nothing to start" synced_since_rm
check "... its sandbox config not built (no read of --resolv-conf)" \
    sh -c "! grep -q 'pod=default/run-nl-fake: $T/resolv.conf' '$T/kletd.log'"
$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" \
    '{"cmd":"container_exit","name":"c","pod":"run-nl-fake","code":1,"reason":"Error"}' >/dev/null
wait_for 300 restarts_at_least run c 1
check "run's container restarted" restarts_at_least run c 1
check "... with a sandbox config (the missing --resolv-conf logged)" \
    logged "pod=default/run-nl-fake: $T/resolv.conf"
printf 'nameserver 127.0.0.1\n' >"$T/resolv.conf"

# 20 pods at once (the crash-looping pod goes first: a steady runtime), then admission:
# kletd runs with --max-pods 21: "run" and 20 of the 21 new pods are admitted, one is rejected.
rm -f "$T/m/onfail.json"
wait_for 200 no_pod onfail
i=1
while [ $i -le 21 ]; do
	pod "p$i" Always 1 '"sleep", "inf"'
	i=$((i + 1))
done
n_running() { [ "$(ctrs | awk '$1 ~ /^p[0-9]+$/ && $3=="RUNNING"' | wc -l)" -eq "$1" ]; }
wait_for 600 n_running 20
check "20 pods reach running" n_running 20
check "pod beyond --max-pods rejected (OutOfpods)" logged 'rejected: OutOfpods'
pat="relist pods=22 containers=[0-9]* sandboxes=22 .*status_calls=0"
wait_for 150 logged "$pat"
line=$(grep "$pat" "$T/kletd.log" | tail -1)
echo "# fake CRI, 20 pods (+2): ${line#*] }"
check "relist with 20 pods logged" test -n "$line"
rm -f "$T"/m/*.json
all_gone() { [ "$(ctrs | wc -l)" -eq 0 ] && [ "$(sandboxes | wc -l)" -eq 0 ]; }
wait_for 600 all_gone
check "everything removed" all_gone
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
[ "$_fail" -eq 0 ] || tail -40 "$T/kletd.log"
finish
