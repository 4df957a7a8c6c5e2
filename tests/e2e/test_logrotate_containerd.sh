#!/bin/sh
# Container log rotation on a real containerd: a container writing about 10 KB/s with
# --container-log-max-size=16Ki and --container-log-max-files=3 (checked every second, from
# the --config file): its log is rotated (LOG.YYYYMMDD-HHMMSS), containerd reopens a new live
# file (ReopenContainerLog), old rotated files are deleted so that at most 3 files remain,
# and the container is never restarted.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup nl-logrot

cat >"$T/kubelet.yaml" <<'C'
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerLogMaxSize: 16Ki
containerLogMaxFiles: 3
containerLogMonitorInterval: 1s
C
put chatty.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: chatty, uid: uid-chatty}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "i=0; while true; do echo \"line $i 0123456789012345678901234567890123456789\"; i=$((i+1)); sleep 0.01; done"]
M
start_kletd --config "$T/kubelet.yaml"
wait_for 300 running chatty c
check "chatty container running" running chatty c
D=$T/logs/default_chatty-${NODE}_uid-chatty/c
rotated() { ls "$D" 2>/dev/null | grep -c '^0\.log\.[0-9]\{8\}-[0-9]\{6\}$'; }
two_rotations() { [ "$(grep -c 'logrotate: rotated' "$T/kletd.log")" -ge 3 ]; }
wait_for 300 two_rotations
check "log rotated at least 3 times" two_rotations
check "rotated files named LOG.YYYYMMDD-HHMMSS" [ "$(rotated)" -ge 1 ]
sleep 3
nfiles=$(ls "$D" | wc -l)
echo "# files in $D: $(ls "$D" | tr '\n' ' ')"
check "at most 3 files kept ($nfiles)" [ "$nfiles" -le 3 ]
check "no temporary files left" sh -c "! ls '$D' | grep -q '\.tmp$'"
s1=$(stat -c %s "$D/0.log")
grows() { [ "$(stat -c %s "$D/0.log")" -ne "$s1" ]; }
wait_for 50 grows
check "the live file is written again after a reopen ($s1 -> $(stat -c %s "$D/0.log") bytes)" grows
check "the live file stays near the limit (< 64 KiB)" [ "$(stat -c %s "$D/0.log")" -lt 65536 ]
last=$(tail -n 1 "$D/0.log")
check "the live file has CRI-format lines" sh -c "echo '$last' | grep -q ' stdout [FP] line '"
check "container never restarted" [ "$(count_ctrs chatty c)" -eq 1 ]
check "no reopen failure logged" sh -c "! grep -q 'ReopenContainerLog.*kept' '$T/kletd.log'"
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
