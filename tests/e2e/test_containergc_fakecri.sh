#!/bin/sh
# Container garbage collection on the fake CRI, with the kubelet's flags: with
# --maximum-dead-containers-per-container 2 a crash-looping container keeps exactly its two
# newest dead instances (the oldest goes); --maximum-dead-containers 1 leaves one dead
# container on the node, the newest, across pods; --minimum-container-ttl-duration keeps
# younger dead containers whatever the limits.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake cgc-fake

pod() { # NAME RESTARTPOLICY COMMAND...(JSON array items)
	put "$1.json" <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"restartPolicy": "$2", "terminationGracePeriodSeconds": 1,
  "containers": [{"name": "c", "image": "klet.local/busybox:1.35", "command": [$3]}]}}
M
}
dead() { # POD -> restart counts of its exited instances, oldest first
	ctrs | awk -v p="$1" '$1==p && $3=="EXITED" {print $4}' | sort -n | tr '\n' ' '
}
ndead() { ctrs | awk -v p="${1:-}" '(p=="" || $1==p) && $3=="EXITED"' | wc -l; }
is_dead() { [ "$(dead "$1")" = "$2" ]; }

# A crash loop (exit 1 after 200 ms; back-off 10 s, then 20 s): the third exit comes about
# 30 s after the first, the fourth 40 s after that.
pod crash Always '"fake-exit", "1", "200"'
start_kletd --maximum-dead-containers-per-container 2
check "kletd started" logged 'kletd ready'
third_exit() { ctrs | awk '$1=="crash" && $3=="EXITED" && $4>=2 {f=1} END {exit !f}'; }
wait_for 600 third_exit
check "the crash loop exited a third time" third_exit
wait_for 100 is_dead crash "1 2 "
sleep 5 # a few housekeeping passes (the next exit is 40 s away)
echo "# crash: exited instances (restart counts) $(dead crash); all: $(ctrs | awk '$1=="crash" {print $4 ":" $3}' | tr '\n' ' ')"
check "the two newest dead instances kept (restart counts 1 and 2)" is_dead crash "1 2 "
check "the oldest (restart count 0) removed" logged 'housekeeping: removing dead container .* (c) of pod [a-z]*/crash-cgc-fake'
rm -f "$T/m/crash.json"
wait_for 200 no_pod crash
check "the crash pod removed" no_pod crash

# Three pods that ran once (restartPolicy Never): one dead container each.
for p in a b c; do
	pod once-$p Never '"fake-exit", "0"'
	sleep 1.2 # created in this order, a second apart
done
three() { [ "$(ndead)" -eq 3 ]; }
wait_for 200 three
check "three dead containers (one per pod, default limits)" three
# A MinAge of one hour: none of them may go, whatever --maximum-dead-containers says.
stop_kletd TERM
start_kletd --maximum-dead-containers 1 --minimum-container-ttl-duration 1h
wait_for 100 logged 'resumed [0-9]* pod workers'
sleep 5
check "--minimum-container-ttl-duration 1h: all three kept" three
# Without it, --maximum-dead-containers 1: the oldest across pods go first.
stop_kletd TERM
start_kletd --maximum-dead-containers 1
one_left() { [ "$(ndead)" -eq 1 ]; }
wait_for 200 one_left
check "--maximum-dead-containers 1: one dead container left on the node" one_left
check "... the newest (once-c's)" [ "$(ndead once-c)" -eq 1 ]
sleep 4
check "... and it stays" one_left
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
