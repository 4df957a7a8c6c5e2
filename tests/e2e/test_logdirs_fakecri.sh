#!/bin/sh
# Pod log directories (issue 20, case 6): LOGS/NS_NAME_UID goes once its pod is gone and the
# pod's containers were collected, as the kubelet's evictPodLogsDirectories; a running pod's
# directory stays; a pod removed while kletd is down loses its directory after the restart,
# and so does a directory left by a pod the runtime no longer knows (fake CRI).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake ld-fake

pod() { # NAME
	put "$1.json" <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"terminationGracePeriodSeconds": 1,
  "containers": [{"name": "c", "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"]}]}}
M
}
for p in keep gone1 gone2 gone3; do pod $p; done
start_kletd
for p in keep gone1 gone2 gone3; do wait_for 200 running $p c; done
check "four pods running" sh -c "[ \$(ls '$T/logs' | wc -l) -eq 4 ]"
logdir() { ls -d "$T/logs/default_$1-ld-fake_"* 2>/dev/null; }
has_dir() { [ -n "$(logdir "$1")" ]; }
no_dir() { [ -z "$(logdir "$1")" ]; }
for p in keep gone1 gone2 gone3; do check "$p: log directory made" has_dir $p; done
check "its container log is there" sh -c "ls '$(logdir keep)/c/'"
# The pod's cgroup and log directory are made once RunPodSandbox has left, and before the
# pod's first container is created.
kuid=$(sed -n 's/.*keep.json: pod default\/keep-ld-fake uid=\([0-9a-f]*\).*/\1/p' "$T/kletd.log" |
    head -1)
order() {
	awk -v u="pod$kuid " '
	/keep-ld-fake: creating sandbox attempt 0 \(RunPodSandbox sent\)/ && !s {s = NR}
	/cgroups: made / && index($0, u) && !m {m = NR}
	/event default\/keep-ld-fake spec.containers\{c\} Normal Created/ && !c {c = NR}
	END {exit !(s && m && c && s < m && m < c)}' "$T/kletd.log"
}
check "keep: RunPodSandbox sent, then its cgroup made, then its container created" order

# Deleted while kletd runs: the directory goes after the containers.
rm -f "$T/m/gone1.json"
wait_for 200 no_pod gone1
wait_for 100 no_dir gone1
check "deleted pod: log directory removed" no_dir gone1
check "removal logged" logged 'housekeeping: removed pod log directory .*default_gone1-ld-fake_'

# Deleted while kletd is down, and a directory whose pod the runtime has long forgotten.
stop_kletd KILL
rm -f "$T/m/gone2.json"
mkdir -p "$T/logs/default_ghost-ld-fake_0123456789abcdef/c" "$T/logs/not-a-pod-dir"
echo line >"$T/logs/default_ghost-ld-fake_0123456789abcdef/c/0.log"
start_kletd
wait_for 200 no_pod gone2
wait_for 100 no_dir gone2
check "deleted while down: removed after the restart" no_dir gone2
wait_for 50 no_dir ghost
check "left by a forgotten pod: removed" no_dir ghost
check "a name that is not NS_NAME_UID of a pod is left alone" test -d "$T/logs/not-a-pod-dir"
check "running pod: log directory kept" has_dir keep
check "running pod: log directory kept (2)" has_dir gone3
check "running pod: its log file kept" sh -c "ls '$(logdir keep)/c/'"

# Once more after a clean restart, then the last ones go.
stop_kletd TERM
start_kletd
rm -f "$T/m/gone3.json"
wait_for 200 no_pod gone3
wait_for 100 no_dir gone3
check "deleted after a restart: removed" no_dir gone3
check "running pod still has its directory" has_dir keep
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
