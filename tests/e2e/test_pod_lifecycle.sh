#!/bin/sh
# Pod lifecycle on a real containerd: restart policies with exiting containers, crash-loop
# backoff with growing intervals, a failing postStart hook, preStop before the stop, a
# container ignoring SIGTERM killed after its grace period (not before), a missing image.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup nl-life

pod() { # NAME RESTARTPOLICY COMMAND [IMAGE]
	put "$1.yaml" <<M
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  restartPolicy: $2
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: ${4:-klet.local/busybox:1.35}
    command: ["sh", "-c", "$3"]
M
}
pod never Never "exit 3"
pod onfail-ok OnFailure "exit 0"
pod onfail-bad OnFailure "exit 1"
pod always Always "exit 0"
pod noimage Always "sleep 1000" klet.local/nope:1.0
put hookfail.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: hookfail}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]
    lifecycle:
      postStart:
        exec: {command: ["sh", "-c", "exit 7"]}
M
put prestop.yaml <<M
apiVersion: v1
kind: Pod
metadata: {name: prestop}
spec:
  terminationGracePeriodSeconds: 10
  volumes:
  - {name: h, hostPath: {path: $T/host}}
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "trap 'echo term \$(date +%s%N) >> /h/prestop.log; exit 0' TERM; while :; do sleep 0.2; done"]
    volumeMounts: [{name: h, mountPath: /h}]
    lifecycle:
      preStop:
        exec: {command: ["sh", "-c", "echo prestop \$(date +%s%N) >> /h/prestop.log; sleep 1"]}
M
put stubborn.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: stubborn}
spec:
  terminationGracePeriodSeconds: 4
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "trap '' TERM; while :; do sleep 1; done"]
M
start_kletd
check "kletd started" logged 'kletd ready'

wait_for 300 running stubborn c
wait_for 300 running prestop c
check "long-running pods run" running stubborn c

# Restart policies (the crash-looping "always" pod needs ~30 s for its third instance).
wait_for 900 restarts_at_least always c 2
check "Always: an exiting container is restarted, count grows" restarts_at_least always c 2
check "OnFailure: a failing container is restarted" restarts_at_least onfail-bad c 1
check "OnFailure: a succeeded container is not restarted" [ "$(count_ctrs onfail-ok c)" -eq 1 ]
check "Never: not restarted" [ "$(count_ctrs never c)" -eq 1 ]
never_id=$(ctrs | awk '$1=="never" {print $5}')
check "Never: exit code kept (3)" [ "$(exit_code "$never_id")" = 3 ]
check "Never: restart count stays 0" [ "$(ctrs | awk '$1=="never" {print $4}')" = 0 ]
check "completed container exit seen" logged 'container exited pod uid=.* container=c .*exit_code=3'

# Crash-loop backoff: intervals between instance creations grow.
always_uid=$(grep -o 'pod update ADD pod=default/always-nl-life uid=[0-9a-f]*' "$T/kletd.log" |
    head -1 | sed 's/.*uid=//')
# The PLEG sees each instance exit once: the gaps between exits are the restart delays.
three_exits() { [ "$(grep -c "container exited pod uid=$always_uid " "$T/kletd.log")" -ge 3 ]; }
wait_for 100 three_exits
intervals=$(grep "container exited pod uid=$always_uid " "$T/kletd.log" |
    awk '{split($2, t, ":"); s = t[1]*3600 + t[2]*60 + t[3]; if (p) printf "%.1f ", s - p; p = s}')
echo "# crash-loop restart intervals (s): $intervals"
growing() { echo "$intervals" | awk '{ if (NF < 2) exit 1; for (i = 2; i <= NF; i++) if ($i <= $(i-1)) exit 1 }'; }
check "crash-loop restarts at growing intervals" growing
check "CrashLoopBackOff recorded" logged 'CrashLoopBackOff\|Back-off restarting failed container'

# A failing postStart hook kills the container.
check "failing postStart recorded (FailedPostStartHook)" logged 'FailedPostStartHook'
hook_killed() { ctrs | awk '$1=="hookfail" && $3=="EXITED" {f=1} END {exit !f}'; }
wait_for 100 hook_killed
check "failing postStart: container killed" hook_killed

# A missing image: the right waiting reason, no crash.
check "missing image: ErrImagePull / ImagePullBackOff" logged 'ErrImagePull\|ImagePullBackOff'
check "missing image: no container created" [ "$(count_ctrs noimage c)" -eq 0 ]
check "kletd still alive" kill -0 "$kpid"

# preStop runs before the stop; a container ignoring SIGTERM is killed after its grace.
t_rm=$(date +%H:%M:%S.%N)
rm -f "$T/m/prestop.yaml" "$T/m/stubborn.yaml"
wait_for 200 no_pod prestop
check "preStop pod removed" no_pod prestop
order=$(awk '{print $1}' "$T/host/prestop.log" 2>/dev/null | tr '\n' ' ')
check "preStop ran before SIGTERM" [ "$order" = "prestop term " ]
wait_for 200 logged 'container c (.*) of pod stubborn-nl-life stopped'
line=$(grep 'container c (.*) of pod stubborn-nl-life stopped' "$T/kletd.log" | head -1)
if [ -n "$line" ]; then
	stub_id=$(echo "$line" | sed 's/.*container c (\([0-9a-f]*\)).*/\1/')
	took=$(echo "$line $t_rm" | awk '{split($2, t, ":"); s = t[1]*3600 + t[2]*60 + t[3];
	    split($NF, r, ":"); q = r[1]*3600 + r[2]*60 + r[3]; printf "%d", (s - q) * 1000}')
	echo "# SIGTERM-ignoring container (grace 4 s) stopped ${took} ms after the manifest was removed"
	check "SIGTERM ignored: not killed before the grace period" [ "$took" -ge 3500 ]
	check "SIGTERM ignored: killed after the grace period" [ "$took" -le 9000 ]
	wait_for 50 logged "id=$stub_id exit_code=137"
	check "SIGTERM ignored: exit code 137" logged "id=$stub_id exit_code=137"
else
	check "SIGTERM-ignoring container stopped" false
fi
wait_for 200 no_pod stubborn
check "stubborn pod removed" no_pod stubborn

rm -f "$T"/m/*.yaml
all_gone() { [ "$(ctrs | wc -l)" -eq 0 ] && [ "$(sandboxes | wc -l)" -eq 0 ]; }
wait_for 300 all_gone
check "everything removed" all_gone
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
[ "$_fail" -eq 0 ] || tail -60 "$T/kletd.log"
finish
