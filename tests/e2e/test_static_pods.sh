#!/bin/sh
# Static pods on a real containerd: add -> running, init containers in order, postStart,
# a second manifest of the same name refused, manifest edited -> container replaced,
# manifest removed -> killed and removed, kletd killed and restarted -> nothing restarted,
# no second sandbox; 20 pods at once.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup nl-static

put web.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 3
  containers:
  - name: httpd
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; echo v1 > /tmp/v; httpd -f -p 8080 & wait"]
    lifecycle:
      postStart:
        exec: {command: ["sh", "-c", "echo hooked > /tmp/poststart"]}
M
put init.yaml <<M
apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - {name: h, hostPath: {path: $T/host}}
  initContainers:
  - name: first
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "sleep 1; echo first \$(date +%s%N) >> /h/order"]
    volumeMounts: [{name: h, mountPath: /h}]
  - name: second
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "echo second \$(date +%s%N) >> /h/order"]
    volumeMounts: [{name: h, mountPath: /h}]
  containers:
  - name: app
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "echo app \$(date +%s%N) >> /h/order; trap 'exit 0' TERM; while :; do sleep 1; done"]
    volumeMounts: [{name: h, mountPath: /h}]
M
start_kletd
check "kletd started" logged 'kletd ready'

echo "# $(date +%T)"
# 1. Add -> running.
wait_for 300 running web httpd
check "static pod add -> running" running web httpd
check "pod name has the node suffix" logged 'pod update ADD pod=default/web-nl-static'
one_ready_sandbox() { [ "$(sandboxes | awk '$1=="web" && $2=="READY"' | wc -l)" -eq 1 ]; }
check "one sandbox ready" one_ready_sandbox

echo "# $(date +%T)"
# 2. postStart effect.
web_id=$(ctrs | awk '$1=="web" && $2=="httpd" {print $5}')
in_ctr() { # ID FILE TEXT: FILE in the container holds TEXT
	cri ExecSync "{\"container_id\":\"$1\",\"cmd\":[\"cat\",\"$2\"],\"timeout\":5}" |
	    $PY -c 'import base64, json, sys; sys.exit(sys.argv[1] not in base64.b64decode(json.load(sys.stdin).get("stdout", "")).decode())' "$3"
}
check "postStart exec hook ran" in_ctr "$web_id" /tmp/poststart hooked

echo "# $(date +%T)"
# 3. Init containers in order, to completion, before the app.
wait_for 300 running init app
check "app container runs after the init containers" running init app
check "init order first, second, app" sh -c "[ \"\$(awk '{print \$1}' '$T/host/order' | tr '\n' ' ')\" = 'first second app ' ]"
inits_exited() { [ "$(ctrs | awk '$1=="init" && ($2=="first"||$2=="second") && $3=="EXITED"' | wc -l)" -eq 2 ]; }
check "init containers exited" inits_exited

echo "# $(date +%T)"
# 3b. Issue 20 case 7: a second manifest with the same name is refused, naming both files;
# the running pod is left alone (before: a second pod of that name, ContainerCreating for ever).
sed 's/echo v1/echo copy/' "$T/m/web.yaml" | put web-copy.yaml
wait_for 100 logged "Failed to load manifest $T/m/web-copy.yaml: duplicate pod name: default/web-$NODE is already given by $T/m/web.yaml"
check "duplicate static pod name refused, naming both files" \
    logged "Failed to load manifest $T/m/web-copy.yaml: duplicate pod name: default/web-$NODE is already given by $T/m/web.yaml"
check "duplicate: no second pod" sh -c "[ \$(grep -c 'pod update ADD pod=default/web-$NODE' '$T/kletd.log') -eq 1 ]"
check "duplicate: the running container is left alone" running web httpd
rm -f "$T/m/web-copy.yaml"

echo "# $(date +%T)"
# 4. Restart of kletd: kill -9, start again: no container restarted, no second sandbox.
before=$(ctrs | awk '$3=="RUNNING" {print $5}' | sort | tr '\n' ' ')
sb_before=$(sandboxes | wc -l)
stop_kletd KILL
start_kletd
wait_for 100 logged 'relist pods=2'
sleep 3
after=$(ctrs | awk '$3=="RUNNING" {print $5}' | sort | tr '\n' ' ')
check "restart: the same containers keep running" [ "$before" = "$after" ]
check "restart: no second sandbox" [ "$(sandboxes | wc -l)" -eq "$sb_before" ]
check "restart: workers resumed from the store" logged 'resumed [0-9]* pod workers from the store'

echo "# $(date +%T)"
# 5. Manifest edited -> container replaced (old pod terminated first, new UID).
sed -i 's/echo v1/echo v2/' "$T/m/web.yaml"
replaced() {
	new_id=$(ctrs | awk '$1=="web" && $2=="httpd" && $3=="RUNNING" {print $5}')
	[ -n "$new_id" ] && [ "$new_id" != "$web_id" ]
}
wait_for 300 replaced
new_id=$(ctrs | awk '$1=="web" && $2=="httpd" && $3=="RUNNING" {print $5}')
check "manifest edit -> container replaced" replaced
check "edited pod runs the new command" in_ctr "$new_id" /tmp/v v2
one_web_sandbox() { [ "$(sandboxes | awk '$1=="web"' | wc -l)" -eq 1 ]; }
wait_for 100 one_web_sandbox
check "old sandbox removed after the edit" one_web_sandbox

echo "# $(date +%T)"
# 6. Manifest removed -> killed within its grace and removed.
t0=$(date +%s)
rm -f "$T/m/init.yaml"
wait_for 200 no_pod init
t1=$(date +%s)
check "manifest removed -> pod killed and removed" no_pod init
check "removed within grace plus housekeeping" [ $((t1 - t0)) -le 12 ]
check "pod directory of the removed pod gone" [ "$(ls "$T/root/pods" 2>/dev/null | wc -l)" -le 1 ]
logs_of() { ls -d "$T/logs/default_$1-nl-static_"* 2>/dev/null; }
wait_for 50 sh -c "! ls -d '$T/logs/default_init-nl-static_'* >/dev/null 2>&1"
check "log directory of the removed pod gone" [ -z "$(logs_of init)" ]
check "log directory of the running pod kept" [ -n "$(logs_of web)" ]

echo "# $(date +%T)"
# 7. 20 pods at once.
rm -f "$T/m/web.yaml"
wait_for 200 no_pod web
i=1
while [ $i -le 20 ]; do
	put "p$i.yaml" <<M
apiVersion: v1
kind: Pod
metadata: {name: p$i}
spec:
  terminationGracePeriodSeconds: 1
  hostNetwork: $( [ $((i % 2)) -eq 0 ] && echo true || echo false )
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]
M
	i=$((i + 1))
done
all_running() { [ "$(ctrs | awk '$1 ~ /^p[0-9]+$/ && $3=="RUNNING"' | wc -l)" -eq 20 ]; }
wait_for 600 all_running
check "20 pods at once all reach running" all_running
echo "# $(date +%T)"
# A steady relist (nothing changed, no status calls) with the 20 pods.
wait_for 150 logged 'relist pods=20 containers=20 sandboxes=20 .*status_calls=0'
line=$(grep 'relist pods=20 containers=20 sandboxes=20 .*status_calls=0' "$T/kletd.log" | tail -1)
echo "# relist with 20 pods: ${line#*] }"
check "relist duration with 20 pods logged" test -n "$line"
rm -f "$T"/m/p*.yaml
all_gone() { [ "$(ctrs | awk '$1 ~ /^p[0-9]+$/' | wc -l)" -eq 0 ] && [ "$(sandboxes | wc -l)" -eq 0 ]; }
wait_for 300 all_gone
check "20 pods removed" all_gone
stop_kletd TERM
check "kletd stops cleanly" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
[ "$_fail" -eq 0 ] || tail -40 "$T/kletd.log"
finish
