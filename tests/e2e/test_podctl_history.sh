#!/bin/sh
# podctl history on the fake CRI: a pod's worker state changes and events are stored as they
# happen and outlive kletd's restarts (kill -9 included); a terminating pod shows why.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
PODCTL=${top_builddir:-.}/podctl
case $PODCTL in /*) ;; *) PODCTL=$(pwd)/$PODCTL ;; esac
node_setup_fake hist
S=$T/root/podctl.sock
pc() { "$PODCTL" --socket "$S" "$@"; }
put web.json <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
 "spec": {"terminationGracePeriodSeconds": 3,
  "containers": [{"name": "c", "image": "klet.local/busybox:1.35",
   "command": ["fake-ignore-term"]}]}}
M
start_kletd
wait_for 200 running web c
hist() { pc history web-hist >"$T/h.out" 2>&1; }
shows() { hist && grep -q "$1" "$T/h.out"; }
wait_for 100 shows 'Started'
sed 's/^/# /' "$T/h.out"
check "history: the worker's first state" shows 'Worker .*sync'
check "history: the container's events" shows 'Started .*c: '
check "history: a header" shows '^TIME *AGE *REASON *MESSAGE'
check "history -o json" sh -c "'$PODCTL' --socket '$S' history default/web-hist -o json | grep -q '\"reason\": *\"Worker\"'"
check "history of an unknown pod fails" sh -c "! '$PODCTL' --socket '$S' history nope"
check "history needs a name (usage, exit 2)" sh -c "'$PODCTL' --socket '$S' history; [ \$? -eq 2 ]"
before=$(grep -c . "$T/h.out")

# kill -9 and back: what was stored is still there, nothing is lost or written twice.
stop_kletd KILL
start_kletd
wait_for 100 logged 'recovered in'
wait_for 50 hist
after=$(grep -c . "$T/h.out")
sed 's/^/# /' "$T/h.out"
check "history survives kill -9 ($before lines before, $after after)" [ "$after" -ge "$before" ]
check "no event written twice by the restart" [ "$(grep -c 'Started' "$T/h.out")" -eq 1 ]

# Removed from its source: the termination and why, while it lasts (grace 3 s).
rm -f "$T/m/web.json"
wait_for 100 shows 'terminating'
check "history: terminating, removed, with its grace" shows 'Worker .*terminating, grace 3s, removed from its source'
check "history: the kill event" shows 'Killing'
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
