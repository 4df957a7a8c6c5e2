#!/bin/sh
# configMap / secret / projected volumes on a real containerd: a busybox container reads its
# mounted configMap file, the service account files of a kube-api-access projected volume and
# a secretKeyRef env var; the mounts are read-only inside the container; a configMap update
# becomes visible inside the running container (the ..data swap through the bind mount);
# a secret volume is a tmpfs the container reads, unmounted and gone when the pod is deleted.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-volumes}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup volctd
# Mounts below $T go before $T does (rm -rf never crosses them), whatever failed.
umount_T() {
	awk -v t="$T/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r |
	    while read -r m; do umount -l "$m"; done
}
trap 'as_stop; [ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null; umount_T; node_cleanup' EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
API=$AS_URL/api/v1/namespaces/default
post() { as_curl -X POST -H 'Content-Type: application/json' --data-binary "$2" "$API/$1" >/dev/null; }
phase() { as_ctl "/pods/default/$1/get" | as_json 'd["status"].get("phase")' 2>/dev/null; }

post configmaps '{"metadata":{"name":"cfg"},"data":{"greeting":"hello"}}'
post configmaps '{"metadata":{"name":"kube-root-ca.crt"},"data":{"ca.crt":"CA"}}'
post secrets '{"metadata":{"name":"creds"},"stringData":{"password":"s3cr3t"}}'
KLET_OBJECT_TTL_MS=1000 start_kletd --kubeconfig "$T/kubeconfig"
cat >"$T/pod.json" <<J
{"metadata":{"name":"reader","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,
  "volumes":[{"name":"cfg","configMap":{"name":"cfg"}},
   {"name":"sec","secret":{"secretName":"creds"}},
   {"name":"kube-api-access-abcde","projected":{"defaultMode":420,"sources":[
     {"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
     {"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},
     {"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"fieldPath":"metadata.namespace"}}]}}]}}],
  "containers":[{"name":"c","image":"klet.local/busybox:1.35",
   "command":["sh","-c","S=/var/run/secrets/kubernetes.io/serviceaccount; echo \"ns=\$(cat \$S/namespace) ca=\$(cat \$S/ca.crt) tok=\$(head -c 3 \$S/token) pass=\$PASS secfile=\$(cat /etc/sec/password)\"; touch /etc/cfg/x 2>/dev/null || echo readonly-ok; while true; do echo \"greeting=\$(cat /etc/cfg/greeting)\"; sleep 0.5; done"],
   "env":[{"name":"PASS","valueFrom":{"secretKeyRef":{"name":"creds","key":"password"}}}],
   "volumeMounts":[{"name":"cfg","mountPath":"/etc/cfg"},{"name":"sec","mountPath":"/etc/sec"},
    {"name":"kube-api-access-abcde","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}]}]}}
J
as_ctl /pods -X POST --data-binary "@$T/pod.json" >/dev/null
running() { [ "$(phase reader)" = Running ]; }
wait_for 600 running
check "pod with configMap, secret env and kube-api-access volumes Running on containerd" running
log() { cat "$T"/logs/default_reader_*/c/0.log 2>/dev/null; }
said() { log | grep -qF -- "$1"; }
wait_for 100 said greeting=hello
check "container reads its configMap file" said greeting=hello
check "container reads the projected namespace, CA, token and the secret env" \
    said "ns=default ca=CA tok=eyJ pass=s3cr3t"
check "container reads its secret volume file" said "secfile=s3cr3t"
U=$(as_ctl /pods/default/reader/get | as_json 'd["metadata"]["uid"]')
fstype() { awk -v m="$1" '$5 == m {for (i = 7; $i != "-"; i++); print $(i+1); exit}' /proc/self/mountinfo; }
check "the secret volume is a tmpfs on the host" \
    [ "$(fstype "$T/root/pods/$U/volumes/kubernetes.io~secret/sec")" = tmpfs ]
check "configMap mount is read-only in the container" said readonly-ok
as_curl -X PUT -H 'Content-Type: application/json' \
    --data-binary '{"metadata":{"name":"cfg","namespace":"default"},"data":{"greeting":"bonjour"}}' \
    "$API/configmaps/cfg" >/dev/null
wait_for 150 said greeting=bonjour
check "configMap update visible inside the running container" said greeting=bonjour
as_ctl "/pods/default/reader?method=DELETE&grace=0" >/dev/null
gone() { [ ! -e "$T/root/pods/$U" ] && ! grep -qF "$T/root/pods/$U/" /proc/self/mountinfo; }
wait_for 600 gone
check "pod deleted: its tmpfs unmounted and its directory gone" gone
stop_kletd
check "kletd exited cleanly" sh -c "! grep -q 'Sanitizer\|runtime error' '$T/kletd.log'"
finish
