#!/bin/sh
# The node server (issue 15) on a private containerd, kletd joined to the API server
# stand-in: the plain healthz port; HTTPS without credentials 401, a client certificate or a
# token the authorization webhook denies 403 with the kubelet's message, allowed 200; /pods,
# /runningpods/, /metrics; /containerLogs and Debian's kubectl through the stand-in's node
# proxy: kubectl logs plain, --tail, --timestamps, --limit-bytes, --since, -f (ending when
# the container exits) and --previous; a 20000-byte line (split by containerd into P and F
# records) comes back whole; bad paths and parameters get 400/404.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-srv}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
KUBECTL=$(command -v kubectl) || node_skip "kubectl is not installed (package kubernetes-client)"
node_setup srvnode
trap 'as_stop; node_cleanup' EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as" --token tok-alice=alice --token tok-bob=bob --sar-allow alice
as_kubeconfig "$T/kubeconfig"
sed "s#/node\.#/admin.#g" "$T/kubeconfig" >"$T/admin.kubeconfig"
HZ=$($AS_PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# Connections idle 2 s close (KLET_SERVER_IDLE_TIMEOUT_S): log follows must survive quiet
# containers all the same (the crash pod below is silent for 4 s).
KLET_SERVER_IDLE_TIMEOUT_S=2 start_kletd --kubeconfig "$T/kubeconfig" \
    --client-ca-file "$AS_CERTS/ca.crt" --authentication-token-webhook \
    --authorization-mode Webhook --healthz-port "$HZ"
P=$(sed -n 's/.*serving HTTPS on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/kletd.log" | tail -1)
check "HTTPS listener on a free port ($P)" [ -n "$P" ]
U=https://127.0.0.1:$P
code() { curl -sk -o "$T/body" -w '%{http_code}' --max-time 20 "$@"; }
admin() { curl -sk --max-time 20 --cert "$AS_CERTS/admin.crt" --key "$AS_CERTS/admin.key" "$@"; }

check "plain healthz: ok" sh -c "[ \"\$(curl -s --max-time 5 http://127.0.0.1:$HZ/healthz)\" = ok ]"
check "plain healthz port serves nothing else (404)" \
    [ "$(code "http://127.0.0.1:$HZ/pods")" = 404 ]
check "no TLS state before the first connection" [ ! -e "$T/root/pki/kubelet.key" ]
check "no credentials: 401" [ "$(code "$U/pods")" = 401 ]
check "self-signed serving certificate made at the first connection, key 0600" \
    sh -c "[ -s '$T/root/pki/kubelet.crt' ] && [ \$(stat -c %a '$T/root/pki/kubelet.key') = 600 ]"
check "no credentials on /healthz of the HTTPS port: 401" [ "$(code "$U/healthz")" = 401 ]
check "unknown bearer token: 401" [ "$(code -H 'Authorization: Bearer nope' "$U/pods")" = 401 ]
c=$(code --cert "$AS_CERTS/node.crt" --key "$AS_CERTS/node.key" "$U/pods")
check "a client certificate the webhook denies: 403 ($c)" [ "$c" = 403 ]
check "403 says who and what, as the kubelet" grep -qF \
    "Forbidden (user=system:node:$NODE, verb=get, resource=nodes, subresource=proxy)" "$T/body"
c=$(code -H 'Authorization: Bearer tok-bob' "$U/metrics")
check "a token the webhook denies: 403 ($c)" [ "$c" = 403 ]
check "403 for /metrics names subresource metrics" grep -qF \
    "Forbidden (user=bob, verb=get, resource=nodes, subresource=metrics)" "$T/body"
check "an allowed token: 200" [ "$(code -H 'Authorization: Bearer tok-alice' "$U/pods")" = 200 ]
check "an allowed certificate (system:masters): 200" \
    [ "$(code --cert "$AS_CERTS/admin.crt" --key "$AS_CERTS/admin.key" "$U/healthz")" = 200 ]
curl -sk -o /dev/null -H 'Authorization: Bearer tok-alice' "$U/pods"
reviews() { # KIND KEY VALUE: how many reviews of KIND with spec.KEY = VALUE the stand-in got
	as_ctl /log | as_json "len([e for e in d if e['path'].endswith('$1') and
	    ((e.get('body') or {}).get('spec') or {}).get('$2') == '$3'])"
}
check "TokenReview cached: one for two requests with tok-alice" \
    [ "$(reviews tokenreviews token tok-alice)" -eq 1 ]
check "SubjectAccessReview cached: one for two requests of alice" \
    [ "$(reviews subjectaccessreviews user alice)" -eq 1 ]

cat >"$T/steady.json" <<J
{"metadata":{"name":"steady","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,
  "containers":[{"name":"c","image":"klet.local/busybox:1.35",
   "command":["sh","-c","echo start; for i in 0 1 2 3 4; do echo line\$i; done; head -c 20000 /dev/zero | tr '\\\\0' x; echo; echo err >&2; sleep 1; echo done; trap 'exit 0' TERM; while true; do sleep 1; done"]}]}}
J
cat >"$T/crash.json" <<J
{"metadata":{"name":"crash","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,
  "containers":[{"name":"c","image":"klet.local/busybox:1.35",
   "command":["sh","-c","echo run; sleep 4; echo end; exit 3"]}]}}
J
as_ctl /pods -X POST --data-binary "@$T/steady.json" >/dev/null
as_ctl /pods -X POST --data-binary "@$T/crash.json" >/dev/null
phase() { as_ctl "/pods/default/$1/get" | as_json 'd["status"].get("phase")' 2>/dev/null; }
running() { [ "$(phase "$1")" = Running ]; }
wait_for 600 running steady
wait_for 600 running crash
check "pods Running" running steady
k() { timeout 60 "$KUBECTL" --kubeconfig "$T/admin.kubeconfig" "$@"; }
steady_logged() { k logs steady | grep -q '^done$'; }
wait_for 100 steady_logged

# kubectl logs -f on the crashing container: ends by itself when the container exits.
k logs -f crash >"$T/follow.out" 2>"$T/follow.err" &
fpid=$!
plain_ok() { k logs steady >"$T/plain.out" 2>&1 && grep -q '^done$' "$T/plain.out"; }
wait_for 100 plain_ok || sed 's/^/# kubectl logs steady: /' "$T/plain.out" | head -5
# stdout and stderr reach the file through two pipes: only each stream's own order is kept.
check "kubectl logs: the lines in order" sh -c "grep -vx err '$T/plain.out' | sed -n '1p;2p;6p;8p' | tr '\n' ' ' | grep -qx 'start line0 line4 done '"
check "kubectl logs: stderr's line too" grep -qx err "$T/plain.out"
check "kubectl logs: the 20000-byte line (P + F records) joined" \
    [ "$(awk 'length($0) == 20000' "$T/plain.out" | wc -l)" -eq 1 ]
check "kubectl logs: 9 lines" [ "$(wc -l <"$T/plain.out")" -eq 9 ]
check "kubectl logs --tail=2" sh -c "k() { timeout 60 '$KUBECTL' --kubeconfig '$T/admin.kubeconfig' \"\$@\"; }
    [ \"\$(k logs steady --tail=2 | wc -l)\" -eq 2 ] && [ \"\$(k logs steady --tail=2 | tail -1)\" = done ]"
k logs steady --timestamps >"$T/ts.out" 2>&1
check "kubectl logs --timestamps: RFC 3339 prefix" \
    grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+) start$' "$T/ts.out"
check "kubectl logs --limit-bytes=10" [ "$(k logs steady --limit-bytes=10 | wc -c)" -eq 10 ]
check "kubectl logs --since=1h: everything" [ "$(k logs steady --since=1h | wc -l)" -eq 9 ]
check "kubectl logs --since-time in the future: nothing" \
    [ "$(k logs steady --since-time=2099-01-01T00:00:00Z | wc -c)" -eq 0 ]
wait_for 200 sh -c "! kill -0 $fpid"
check "kubectl logs -f returned when the container exited" sh -c "! kill -0 $fpid"
wait $fpid; frc=$?
check "kubectl logs -f: exit 0 ($frc) and run..end" \
    sh -c "[ $frc -eq 0 ] && [ \"\$(tr '\n' ' ' <'$T/follow.out')\" = 'run end ' ]"
restarted() {
	[ "$(as_ctl /pods/default/crash/get | as_json 'd["status"]["containerStatuses"][0]["restartCount"]')" -ge 1 ]
}
wait_for 400 restarted
check "crash restarted" restarted
check "kubectl logs --previous: the dead instance" \
    sh -c "timeout 60 '$KUBECTL' --kubeconfig '$T/admin.kubeconfig' logs --previous crash | tr '\n' ' ' | grep -qx 'run end '"
check "kubectl logs --previous of a container never restarted: an error" \
    sh -c "! timeout 60 '$KUBECTL' --kubeconfig '$T/admin.kubeconfig' logs --previous steady"
check "podctl logs -p: the dead instance, as kubectl" sh -c "'${top_builddir:-.}/podctl' --socket '$T/root/podctl.sock' logs -p crash |
    tr '\n' ' ' | grep -qx 'run end '"

# Straight to the node.
timeout 5 curl -sk --cert "$AS_CERTS/admin.crt" --key "$AS_CERTS/admin.key" \
    "$U/containerLogs/default/steady/c?follow=true&tailLines=0" >/dev/null 2>&1
frc=$?
check "a follow of a quiet container outlives the 2 s idle timeout (killed by timeout: $frc)" \
    [ "$frc" -eq 124 ]
check "/containerLogs?tailLines=1" [ "$(admin "$U/containerLogs/default/steady/c?tailLines=1")" = done ]
check "/containerLogs stream=Stderr" [ "$(admin "$U/containerLogs/default/steady/c?stream=Stderr")" = err ]
ac() { code --cert "$AS_CERTS/admin.crt" --key "$AS_CERTS/admin.key" "$@"; }
check "unknown container: 404" [ "$(ac "$U/containerLogs/default/steady/nope")" = 404 ]
check "unknown pod: 404" [ "$(ac "$U/containerLogs/default/nosuch/c")" = 404 ]
check "tailLines=-1: 400" [ "$(ac "$U/containerLogs/default/steady/c?tailLines=-1")" = 400 ]
check "sinceSeconds and sinceTime: 400" \
    [ "$(ac "$U/containerLogs/default/steady/c?sinceSeconds=1&sinceTime=2020-01-01T00:00:00Z")" = 400 ]
check "an encoded slash in the path: 400" [ "$(ac "$U/containerLogs/default/steady%2Fc/c")" = 400 ]
check "a .. segment: 400" [ "$(ac --path-as-is "$U/containerLogs/default/../steady/c")" = 400 ]
check "/pods: a PodList with both pods" sh -c "curl -sk --cert '$AS_CERTS/admin.crt' --key '$AS_CERTS/admin.key' $U/pods | grep -q '\"kind\":\"PodList\"' &&
    curl -sk --cert '$AS_CERTS/admin.crt' --key '$AS_CERTS/admin.key' $U/pods | grep -q '\"name\":\"crash\"'"
check "/runningpods/ lists steady" sh -c "curl -sk --cert '$AS_CERTS/admin.crt' --key '$AS_CERTS/admin.key' $U/runningpods/ | grep -q '\"name\":\"steady\"'"
admin "$U/metrics" >"$T/metrics"
for m in 'kubelet_running_pods [0-9]' 'kubelet_running_containers{container_state="running"} [0-9]' \
    'kubelet_pleg_relist_duration_seconds_bucket{le="0.005"}' 'kubelet_pleg_relist_interval_seconds_count' \
    'kubelet_pleg_last_seen_seconds' 'kubelet_started_containers_total' 'kubelet_started_pods_total' \
    "kubelet_node_name{node=\"$NODE\"} 1" 'process_resident_memory_bytes' 'process_cpu_seconds_total'; do
	check "/metrics has $m" grep -q "^$m" "$T/metrics"
done
# exec, attach, port-forward: the upgraded connection goes to containerd's streaming server.
k exec steady -- sh -c 'echo out; echo oops >&2; exit 7' >"$T/exec.out" 2>"$T/exec.err"
erc=$?
check "kubectl exec: the command's stdout" grep -qx out "$T/exec.out"
check "kubectl exec: its stderr" grep -qx oops "$T/exec.err"
check "kubectl exec: its exit code (7, got $erc)" [ "$erc" -eq 7 ]
check "kubectl exec -i: stdin reaches the command" \
    sh -c "echo hello-stdin | timeout 60 '$KUBECTL' --kubeconfig '$T/admin.kubeconfig' exec -i steady -- cat | grep -qx hello-stdin"
cat >"$T/att.json" <<J
{"metadata":{"name":"att","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,"restartPolicy":"Never",
  "containers":[{"name":"c","image":"klet.local/busybox:1.35","stdin":true,"stdinOnce":true,
   "command":["sh","-c","while read l; do echo got:\$l; done; echo bye"]}]}}
J
cat >"$T/web.json" <<J
{"metadata":{"name":"web","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,
  "containers":[{"name":"c","image":"klet.local/busybox:1.35",
   "command":["sh","-c","mkdir -p /www && echo served-by-httpd > /www/index.html && exec httpd -f -p 8080 -h /www"]}]}}
J
as_ctl /pods -X POST --data-binary "@$T/att.json" >/dev/null
as_ctl /pods -X POST --data-binary "@$T/web.json" >/dev/null
wait_for 600 running att
wait_for 600 running web
printf 'one\ntwo\n' | k attach -i att >"$T/attach.out" 2>"$T/attach.err"
check "kubectl attach -i: the container read stdin and wrote back" \
    sh -c "grep -qx got:one '$T/attach.out' && grep -qx got:two '$T/attach.out'"
k port-forward --address 127.0.0.1 pod/web :8080 >"$T/pf.out" 2>&1 &
pfpid=$!
pf_port() { sed -n 's/^Forwarding from 127.0.0.1:\([0-9]*\) .*/\1/p' "$T/pf.out" | head -1; }
wait_for 300 sh -c "[ -n \"\$(sed -n 's/^Forwarding from 127.0.0.1:\([0-9]*\) .*/\1/p' '$T/pf.out')\" ]"
LP=$(pf_port)
check "kubectl port-forward to busybox httpd" \
    sh -c "[ \"\$(curl -s --max-time 20 http://127.0.0.1:$LP/index.html)\" = served-by-httpd ]"
check "kubectl port-forward: a second request on it" \
    sh -c "[ \"\$(curl -s --max-time 20 http://127.0.0.1:$LP/index.html)\" = served-by-httpd ]"
kill "$pfpid" 2>/dev/null; wait "$pfpid" 2>/dev/null
check "exec on an unknown container: 404" \
    [ "$(ac -X POST "$U/exec/default/steady/nope?command=true&output=1")" = 404 ]
check "exec without a command: 400" [ "$(ac -X POST "$U/exec/default/steady/c?output=1")" = 400 ]
admin "$U/metrics/resource" >"$T/res"
for m in 'node_cpu_usage_seconds_total [0-9]' 'node_memory_working_set_bytes [0-9]' \
    'container_cpu_usage_seconds_total{container="c",namespace="default",pod="steady"} [0-9]' \
    'container_memory_working_set_bytes{container="c",namespace="default",pod="steady"} [1-9]' \
    'pod_memory_working_set_bytes{namespace="default",pod="steady"} [1-9]' 'scrape_error 0'; do
	check "/metrics/resource has $m" grep -q "^$m" "$T/res"
done
check "/stats/summary: the node and the pod's container" sh -c "curl -sk --cert '$AS_CERTS/admin.crt' --key '$AS_CERTS/admin.key' $U/stats/summary |
    $AS_PY -c 'import json,sys; d=json.load(sys.stdin); p=[p for p in d[\"pods\"] if p[\"podRef\"][\"name\"]==\"steady\"][0]; assert d[\"node\"][\"nodeName\"]==\"$NODE\"; assert p[\"containers\"][0][\"memory\"][\"workingSetBytes\"]>0'"
k top pod steady >"$T/top.out" 2>&1
check "kubectl top pod (metrics.k8s.io from /metrics/resource)" grep -Eq '^steady +[0-9]+m +[0-9]+Mi' "$T/top.out"
k top node >"$T/topn.out" 2>&1
check "kubectl top node" grep -Eq "^$NODE +[0-9]+m +[0-9]+% +[0-9]+Mi +[0-9]+%" "$T/topn.out"
# podctl answers the same questions on the node, without the cluster: the same log reader
# (its own copy of it, reading the file), the same cgroup figures, the runtime's status.
PODCTL=${top_builddir:-.}/podctl
pcl() { "$PODCTL" --socket "$T/root/podctl.sock" "$@"; }
pcl logs steady >"$T/pc-logs.out" 2>&1
check "podctl logs: what kubectl logs shows" cmp -s "$T/plain.out" "$T/pc-logs.out"
check "podctl logs --tail=2 --timestamps" sh -c "'$PODCTL' --socket '$T/root/podctl.sock' logs steady --tail 2 --timestamps |
    tail -1 | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z done$'"
pcl top --containers >"$T/pc-top.out" 2>&1
sed 's/^/# podctl top --containers: /' "$T/pc-top.out"
check "podctl top --containers: steady's c with CPU and memory" \
    grep -Eq '^steady +c +[0-9]+m +[0-9]+Mi' "$T/pc-top.out"
pcl top -A -o json >"$T/pc-top.json" 2>&1
check "podctl top -o json: working set of steady above 0" $AS_PY -c "
import json, sys; d = json.load(open(sys.argv[1]))
p = [p for p in d if p['name'] == 'steady'][0]
assert p['namespace'] == 'default' and p['memoryWorkingSetBytes'] > 0 and p['cpuMillicores'] >= 0
assert p['containers'][0]['name'] == 'c' and p['containers'][0]['memoryWorkingSetBytes'] > 0" "$T/pc-top.json"
pcl top node >"$T/pc-topn.out" 2>&1
check "podctl top node" grep -Eq "^$NODE +[0-9]+m +[0-9]+% +[0-9]+Mi +[0-9]+%" "$T/pc-topn.out"
cid=$(pcl get containers | awk '$2=="steady" && $4=="Running" {print $1}' | head -1)
pcl inspect "$cid" >"$T/pc-inspect.json" 2>&1
check "podctl inspect ${cid}: containerd's status and verbose info (pid, runtimeSpec)" $AS_PY -c "
import json, sys; d = json.load(open(sys.argv[1]))
assert d['status']['id'].startswith(sys.argv[2]) and d['status']['state'] == 'CONTAINER_RUNNING'
assert d['status']['metadata']['name'] == 'c' and d['status']['labels']['io.kubernetes.pod.name'] == 'steady'
assert d['info']['info']['pid'] > 0 and 'runtimeSpec' in d['info']['info']" "$T/pc-inspect.json" "$cid"
pcl get nodes >"$T/pc-nodes.out" 2>&1
check "podctl get nodes: Ready, the lease renewed" grep -Eq "^$NODE +Ready +<none> +[0-9]+/110 .* ago " "$T/pc-nodes.out"
check "kubectl through nodes/NAME/proxy/healthz" \
    sh -c "[ \"\$(timeout 60 '$KUBECTL' --kubeconfig '$T/admin.kubeconfig' get --raw /api/v1/nodes/$NODE/proxy/healthz)\" = ok ]"
check "a malformed request line: 400, the daemon serves on" sh -c "
    printf 'GARBAGE\r\n\r\n' | timeout 5 openssl s_client -quiet -connect 127.0.0.1:$P 2>/dev/null | head -1 | grep -q 400 &&
    [ \"\$(curl -s http://127.0.0.1:$HZ/healthz)\" = ok ]"
check "a TLS handshake of garbage: closed, the daemon serves on" sh -c "
    head -c 300 /dev/urandom | timeout 5 $AS_PY -c 'import socket,sys; s=socket.create_connection((\"127.0.0.1\",$P)); s.sendall(sys.stdin.buffer.read()); s.settimeout(5); s.recv(100)'
    [ \"\$(curl -s http://127.0.0.1:$HZ/healthz)\" = ok ]"
stop_kletd TERM
check "kletd stopped cleanly" logged 'kletd stopped'

# A follow survives the log rotator: kletd again with 1 KiB logs checked every 300 ms; a
# container writes 60 numbered lines after a pause; the stream has them all, in order, and
# ends when the container exits.
cat >"$T/rot.yaml" <<Y
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerLogMonitorInterval: 300ms
containerLogMaxSize: 1Ki
containerLogMaxFiles: 2
Y
mv "$T/kletd.log" "$T/kletd.1.log"
cp "$AS_CERTS/server.crt" "$T/srv.crt"
cp "$AS_CERTS/server.key" "$T/srv.key"
start_kletd --kubeconfig "$T/kubeconfig" --client-ca-file "$AS_CERTS/ca.crt" \
    --authorization-mode Webhook --healthz-port "$HZ" --config "$T/rot.yaml" \
    --server-max-streams 2 --tls-cert-file "$T/srv.crt" --tls-private-key-file "$T/srv.key"
P=$(sed -n 's/.*serving HTTPS on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/kletd.log" | tail -1)
U=https://127.0.0.1:$P

# --tls-cert-file: served (verified against its CA), and reloaded when the files change.
check "--tls-cert-file served: verified by its CA" sh -c "[ \"\$(curl -s --max-time 10 --cacert '$AS_CERTS/ca.crt' \
    --cert '$AS_CERTS/admin.crt' --key '$AS_CERTS/admin.key' $U/healthz)\" = ok ]"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -keyout "$T/new.key" -out "$T/new.crt" -subj /CN=rotated-serving-cert \
    -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
mv "$T/new.crt" "$T/srv.crt"
mv "$T/new.key" "$T/srv.key"
served_cn() {
	openssl s_client -connect "127.0.0.1:$P" </dev/null 2>/dev/null | grep -q 'subject=.*rotated-serving-cert'
}
wait_for 100 served_cn
check "a new certificate in the files is served without a restart" served_cn
check "the reload is logged" logged 'serving certificate .* reloaded'

# Two follows hold both request slots: a third request gets 429; once they go, 200 again.
steady_known() { [ "$(ac "$U/containerLogs/default/steady/c?tailLines=1")" = 200 ]; }
wait_for 300 steady_known
# (curl itself in the background, not a shell function: $! must be curl's PID)
curl -sk --cert "$AS_CERTS/admin.crt" --key "$AS_CERTS/admin.key" -o /dev/null \
    "$U/containerLogs/default/steady/c?follow=true" &
h1=$!
curl -sk --cert "$AS_CERTS/admin.crt" --key "$AS_CERTS/admin.key" -o /dev/null \
    "$U/containerLogs/default/steady/c?follow=true" &
h2=$!
two_held() { [ "$(ac "$U/healthz")" = 429 ]; }
wait_for 100 two_held
check "--server-max-streams 2 with two follows open: 429" two_held
kill $h1 $h2 2>/dev/null; wait $h1 $h2 2>/dev/null
slots_back() { [ "$(ac "$U/healthz")" = 200 ]; }
wait_for 100 slots_back
check "the clients gone, their slots are free again" slots_back
cat >"$T/rot.json" <<J
{"metadata":{"name":"rot","namespace":"default"},
 "spec":{"nodeName":"$NODE","restartPolicy":"Never","terminationGracePeriodSeconds":1,
  "containers":[{"name":"c","image":"klet.local/busybox:1.35",
   "command":["sh","-c","sleep 4; i=0; while [ \$i -lt 60 ]; do echo n\$i-0123456789012345678901234567890123456789; i=\$((i+1)); sleep 0.05; done"]}]}}
J
as_ctl /pods -X POST --data-binary "@$T/rot.json" >/dev/null
rot_running() { [ "$(admin -o /dev/null -w '%{http_code}' "$U/containerLogs/default/rot/c")" = 200 ]; }
wait_for 600 rot_running
timeout 60 curl -sk --cert "$AS_CERTS/admin.crt" --key "$AS_CERTS/admin.key" \
    "$U/containerLogs/default/rot/c?follow=true" >"$T/rot.out" 2>/dev/null
rc=$?
i=0; : >"$T/rot.want"
while [ $i -lt 60 ]; do echo "n$i-0123456789012345678901234567890123456789" >>"$T/rot.want"; i=$((i + 1)); done
check "follow ended by itself when the container exited (rc $rc)" [ "$rc" -eq 0 ]
nrot=$(grep -c 'logrotate: rotated .*default_rot_' "$T/kletd.log")
check "the log was rotated meanwhile ($nrot times)" [ "$nrot" -ge 2 ]
check "follow across rotations: 60 lines, in order, none lost" cmp -s "$T/rot.want" "$T/rot.out"
# KLET_TEST_KEEP=DIR keeps what kubectl and podctl printed (transcripts for a report).
if [ -n "${KLET_TEST_KEEP:-}" ]; then
	mkdir -p "$KLET_TEST_KEEP" && cp "$T"/*.out "$T"/*.err "$KLET_TEST_KEEP"/ 2>/dev/null
fi
# Stopping with a follow and an exec session open: both end, nothing leaks (sanitizers).
admin -o /dev/null "$U/containerLogs/default/steady/c?follow=true" &
h1=$!
k exec -i steady -- cat </dev/zero >/dev/null 2>&1 &
h2=$!
wait_for 100 grep -q 'exec/default/steady/c streaming to the runtime' "$T/kletd.log"
stop_kletd TERM
wait $h1 $h2 2>/dev/null
check "stopped with a follow and an exec open: cleanly" logged 'kletd stopped'
check "no sanitizer report in kletd's logs" \
    sh -c "! grep -q 'Sanitizer' '$T/kletd.log' '$T/kletd.1.log'"
finish
