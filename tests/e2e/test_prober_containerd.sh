#!/bin/sh
# Probes on a real containerd with busybox, driven through kletd with static pods: an exec
# liveness probe failing once a file is removed (restart, restartCount 1), httpGet against
# busybox httpd, tcpSocket against busybox nc, readiness flipping, a startup probe holding
# liveness off, a probe of a port nobody listens on.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-prober}
export KLET_CONTAINERD_DIR
node_setup pr

pod() { # NAME COMMAND PROBES(yaml, indented 4)
	put "$1.yaml" <<M
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "$2"]
$3
M
}

pod live "touch /tmp/healthy; sleep 3; rm /tmp/healthy; trap 'exit 0' TERM; while :; do sleep 1; done" \
'    livenessProbe:
      exec: {command: [cat, /tmp/healthy]}
      periodSeconds: 1
      failureThreshold: 2
      terminationGracePeriodSeconds: 1'
pod web "mkdir -p /www; echo ok >/www/index.html; exec httpd -f -p 8080 -h /www" \
'    readinessProbe:
      httpGet: {path: /index.html, port: 8080}
      periodSeconds: 1'
pod tcp "trap 'exit 0' TERM; while :; do nc -l -p 9000 </dev/null; done" \
'    readinessProbe:
      tcpSocket: {port: 9000}
      periodSeconds: 1'
pod flip "trap 'exit 0' TERM; while :; do touch /tmp/ready; sleep 3; rm -f /tmp/ready; sleep 3; done" \
'    readinessProbe:
      exec: {command: [test, -f, /tmp/ready]}
      periodSeconds: 1'
pod slow "sleep 4; touch /tmp/started; trap 'exit 0' TERM; while :; do sleep 1; done" \
'    startupProbe:
      exec: {command: [test, -f, /tmp/started]}
      periodSeconds: 1
      timeoutSeconds: 5
      failureThreshold: 30
    livenessProbe:
      exec: {command: [test, -f, /tmp/started]}
      periodSeconds: 1
      timeoutSeconds: 5
      failureThreshold: 1'
pod closed "trap 'exit 0' TERM; while :; do sleep 1; done" \
'    readinessProbe:
      tcpSocket: {port: 9999}
      periodSeconds: 1'

start_kletd
for p in live web tcp flip slow closed; do
	wait_for 300 running $p c
done
check "all probed pods run" running closed c

res() { # POD KIND FROM TO: a logged result change
	grep -q "probe pod=default/$1-pr container=c $2: $3 -> $4" "$T/kletd.log"
}
wait_for 300 restarts_at_least live c 1
check "exec liveness failing -> restarted, restartCount 1" restarts_at_least live c 1
check "liveness failure logged" res live liveness success failure
check "liveness probe output in the failure" grep -q \
    "probe failed pod=default/live-pr container=c liveness: .*No such file" "$T/kletd.log"
wait_for 100 res web readiness failure success
check "httpGet against busybox httpd: ready" res web readiness failure success
wait_for 100 res tcp readiness failure success
check "tcpSocket against busybox nc: ready" res tcp readiness failure success
wait_for 150 res flip readiness success failure
check "readiness flips to not ready" res flip readiness success failure
ups() { grep -c "probe pod=default/flip-pr container=c readiness: failure -> success" "$T/kletd.log"; }
more_ups() { [ "$(ups)" -gt "$n" ]; }
n=$(ups)
wait_for 100 more_ups
check "readiness back to ready" more_ups
wait_for 150 res slow startup none success
check "startup probe succeeds after the file appears" res slow startup none success
sleep 2
check "startup held liveness off: no restart" [ "$(ctrs | awk '$1=="slow" {print $4}')" = 0 ]
check "startup failures before success" grep -q \
    "probe failed pod=default/slow-pr container=c startup" "$T/kletd.log"
check "no liveness failure before started" sh -c \
    "! grep -q 'probe failed pod=default/slow-pr container=c liveness' $T/kletd.log"
wait_for 50 grep -q "probe failed pod=default/closed-pr container=c readiness: dial tcp .*:9999: connect: Connection refused" "$T/kletd.log"
check "port nobody listens on: refused, never ready" grep -q \
    "probe failed pod=default/closed-pr container=c readiness: dial tcp .*:9999: connect: Connection refused" "$T/kletd.log"
check "not ready: no success logged" sh -c \
    "! grep -q 'probe pod=default/closed-pr container=c readiness: failure -> success' $T/kletd.log"
check "kletd still alive" kill -0 "$kpid"
stop_kletd
finish
