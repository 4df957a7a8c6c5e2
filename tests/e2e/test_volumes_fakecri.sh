#!/bin/sh
# configMap / secret volumes and env references through kletd, the API server stand-in and
# the fake CRI: the CreateContainer config carries read-only mounts of the volume directories
# and the resolved env; the files are written with the atomic writer layout and modes; a
# configMap update reaches the files within the TTL (KLET_OBJECT_TTL_MS); a missing required
# object or key is a CreateContainerConfigError in the API status, a missing optional one is
# skipped; an object created later lets the waiting pod start; a static pod may not use them.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup_fake volf
# Secret and projected volumes are tmpfs mounts: below $T they go before $T does.
umount_T() {
	awk -v t="$T/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r |
	    while read -r m; do umount -l "$m"; done
}
trap 'as_stop; [ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null; umount_T; node_cleanup; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null' EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
API=$AS_URL/api/v1/namespaces/default
ctl() { $PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" "$@"; }
post() { # RESOURCE JSON
	as_curl -X POST -H 'Content-Type: application/json' --data-binary "$2" "$API/$1" >/dev/null
}
has() { as_ctl "$1" | grep -qF -- "$2"; }
pod_json() { as_ctl "/pods/default/$1/get"; }
uid_of() { pod_json "$1" | as_json 'd["metadata"]["uid"]'; }
phase() { pod_json "$1" | as_json 'd["status"].get("phase")' 2>/dev/null; }
waiting() { # POD -> "reason: message" of its first container, if waiting
	pod_json "$1" | as_json '"%s: %s" % (d["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], d["status"]["containerStatuses"][0]["state"]["waiting"].get("message", ""))' 2>/dev/null
}
# The last CreateContainer config the fake CRI got for container NAME, as JSON.
created() {
	ctl '{"cmd":"requests","method":"CreateContainer","n":50}' | $PY -c '
import json, sys
rs = [r for r in json.load(sys.stdin)["requests"] if r["config"]["metadata"]["name"] == sys.argv[1]]
print(json.dumps(rs[-1]["config"]) if rs else "")' "$1"
}
env_val() { # CONTAINER VAR
	created "$1" | $PY -c '
import json, sys
c = json.load(sys.stdin)
print([e.get("value", "") for e in c.get("envs", []) if e["key"] == sys.argv[1]][0])' "$2"
}
mount_of() { # CONTAINER PATH -> "host_path readonly"
	created "$1" | $PY -c '
import json, sys
c = json.load(sys.stdin)
m = [m for m in c.get("mounts", []) if m["container_path"] == sys.argv[1]][0]
print(m["host_path"], m.get("readonly", False))' "$2"
}

post configmaps '{"metadata":{"name":"cfg"},"data":{"greeting":"hello","app.conf":"x=1\n"},"binaryData":{"blob":"AAEC"}}'
post secrets '{"metadata":{"name":"creds"},"stringData":{"user":"admin","password":"s3cr3t"}}'
KLET_OBJECT_TTL_MS=1000 start_kletd --kubeconfig "$T/kubeconfig"
check "kletd started with --kubeconfig" logged 'joining the cluster'

cat >"$T/app.json" <<J
{"metadata":{"name":"app","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,
  "volumes":[{"name":"cfg","configMap":{"name":"cfg"}},
   {"name":"some","configMap":{"name":"cfg","defaultMode":384,
     "items":[{"key":"app.conf","path":"conf/app.conf"},{"key":"greeting","path":"g","mode":256}]}},
   {"name":"sec","secret":{"secretName":"creds","defaultMode":288}},
   {"name":"maybe","configMap":{"name":"nosuch","optional":true}}],
  "containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","inf"],
   "env":[{"name":"GREETING","valueFrom":{"configMapKeyRef":{"name":"cfg","key":"greeting"}}},
    {"name":"PASS","valueFrom":{"secretKeyRef":{"name":"creds","key":"password"}}},
    {"name":"OPT","valueFrom":{"configMapKeyRef":{"name":"nosuch","key":"k","optional":true}}},
    {"name":"MSG","value":"\$(GREETING) \$(S_user)"}],
   "envFrom":[{"configMapRef":{"name":"cfg"},"prefix":"CFG_"},{"secretRef":{"name":"creds"},"prefix":"S_"}],
   "volumeMounts":[{"name":"cfg","mountPath":"/etc/cfg"},{"name":"some","mountPath":"/etc/some"},
    {"name":"sec","mountPath":"/etc/sec"},{"name":"maybe","mountPath":"/etc/maybe"}]}]}}
J
as_ctl /pods -X POST --data-binary "@$T/app.json" >/dev/null
running_app() { [ "$(phase app)" = Running ]; }
wait_for 300 running_app
check "pod with configMap / secret volumes and env is Running" running_app
UID_APP=$(uid_of app)
V=$T/root/pods/$UID_APP/volumes
check "env configMapKeyRef" [ "$(env_val c GREETING)" = hello ]
check "env secretKeyRef" [ "$(env_val c PASS)" = s3cr3t ]
check "env envFrom configMapRef with prefix" [ "$(env_val c CFG_greeting)" = hello ]
check "env envFrom secretRef with prefix" [ "$(env_val c S_user)" = admin ]
check "env optional reference to a missing configMap left out" \
    sh -c "! created c | grep -q '\"OPT\"'"
check "env \$(VAR) expansion sees resolved values" [ "$(env_val c MSG)" = "hello admin" ]
check "configMap mount read-only from the volume dir" \
    [ "$(mount_of c /etc/cfg)" = "$V/kubernetes.io~configmap/cfg True" ]
check "secret mount read-only from the volume dir" \
    [ "$(mount_of c /etc/sec)" = "$V/kubernetes.io~secret/sec True" ]
check "configMap file content" [ "$(cat "$V/kubernetes.io~configmap/cfg/greeting")" = hello ]
check "binaryData decoded" [ "$(od -An -tx1 "$V/kubernetes.io~configmap/cfg/blob" | tr -d ' ')" = 000102 ]
check "atomic writer: ..data symlink to a timestamped dir" \
    sh -c "readlink '$V/kubernetes.io~configmap/cfg/..data' | grep -q '^\.\.[0-9]'"
check "atomic writer: key is a symlink into ..data" \
    [ "$(readlink "$V/kubernetes.io~configmap/cfg/greeting")" = ..data/greeting ]
check "items: key -> path, defaultMode 0600" \
    [ "$(stat -L -c %a "$V/kubernetes.io~configmap/some/conf/app.conf")" = 600 ]
check "items: item mode 0400" [ "$(stat -L -c %a "$V/kubernetes.io~configmap/some/g")" = 400 ]
check "items: unlisted keys absent" [ ! -e "$V/kubernetes.io~configmap/some/blob" ]
check "secret file decoded, defaultMode 0440" \
    sh -c "[ \"\$(cat '$V/kubernetes.io~secret/sec/password')\" = s3cr3t ] && [ \"\$(stat -L -c %a '$V/kubernetes.io~secret/sec/password')\" = 440 ]"
check "secret plugin dir is root-only (0700)" [ "$(stat -c %a "$V/kubernetes.io~secret")" = 700 ]
check "optional missing configMap: empty volume" \
    sh -c "[ -L '$V/kubernetes.io~configmap/maybe/..data' ] && [ -z \"\$(ls '$V/kubernetes.io~configmap/maybe')\" ]"

# An update reaches the files within the TTL (1 s here), atomically swapped.
old=$(readlink "$V/kubernetes.io~configmap/cfg/..data")
as_curl -X PUT -H 'Content-Type: application/json' \
    --data-binary '{"metadata":{"name":"cfg","namespace":"default"},"data":{"greeting":"bonjour","extra":"new"}}' \
    "$API/configmaps/cfg" >/dev/null
updated() { [ "$(cat "$V/kubernetes.io~configmap/cfg/greeting" 2>/dev/null)" = bonjour ]; }
wait_for 100 updated
check "configMap update reached the volume" updated
check "update: new key appears" [ "$(cat "$V/kubernetes.io~configmap/cfg/extra")" = new ]
check "update: removed key gone" [ ! -e "$V/kubernetes.io~configmap/cfg/app.conf" ]
check "update: old timestamped dir removed" [ ! -e "$V/kubernetes.io~configmap/cfg/$old" ]
check "update: items volume keeps its mode" [ "$(stat -L -c %a "$V/kubernetes.io~configmap/some/g")" = 400 ] 
# The update dropped app.conf, which the items volume needs: its files are left as they were.
check "update: a volume whose key went missing keeps its last files" \
    [ "$(cat "$V/kubernetes.io~configmap/some/conf/app.conf")" = "x=1" ]
gets=$(as_ctl /log | $PY -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin) if e["method"]=="GET" and "/configmaps/cfg" in e["path"]))')
check "configMap re-read on the TTL, not per sync ($gets GETs)" [ "$gets" -ge 2 ] && [ "$gets" -le 30 ]

# The volume every API pod gets (kube-api-access-*): a projected service account token
# (TokenRequest bound to the pod), the cluster CA from a configMap and the namespace; plus a
# downwardAPI volume of the pod's labels, which follows a label change.
post configmaps '{"metadata":{"name":"kube-root-ca.crt"},"data":{"ca.crt":"-----BEGIN CERTIFICATE-----\nstandin\n"}}'
as_ctl '/token-lifetime?seconds=8' >/dev/null
cat >"$T/sa.json" <<J
{"metadata":{"name":"sa","namespace":"default","labels":{"tier":"front"}},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,"serviceAccountName":"default",
  "securityContext":{"fsGroup":2000},
  "volumes":[{"name":"kube-api-access-x1","projected":{"defaultMode":420,"sources":[
     {"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
     {"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},
     {"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}]}},
   {"name":"podinfo","downwardAPI":{"items":[{"path":"labels","fieldRef":{"fieldPath":"metadata.labels"}},
     {"path":"cpu_limit","resourceFieldRef":{"containerName":"c","resource":"limits.cpu","divisor":"1m"}}]}}],
  "containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","inf"],
   "resources":{"limits":{"cpu":"250m"}},
   "volumeMounts":[{"name":"kube-api-access-x1","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true},
    {"name":"podinfo","mountPath":"/etc/podinfo"}]}]}}
J
as_ctl /pods -X POST --data-binary "@$T/sa.json" >/dev/null
running_sa() { [ "$(phase sa)" = Running ]; }
wait_for 300 running_sa
check "pod with a kube-api-access projected volume is Running" running_sa
UID_SA=$(uid_of sa)
P=$T/root/pods/$UID_SA/volumes/kubernetes.io~projected/kube-api-access-x1
D=$T/root/pods/$UID_SA/volumes/kubernetes.io~downward-api/podinfo
check "projected: token file, fsGroup: mode 0640, group 2000" \
    sh -c "grep -q '^eyJ' '$P/token' && [ \"\$(stat -L -c %a:%g '$P/token')\" = 640:2000 ]"
check "projected: fsGroup: ca.crt group-readable, dirs setgid" \
    sh -c "[ \"\$(stat -L -c %a:%g '$P/ca.crt')\" = 644:2000 ] && [ \"\$(stat -c %a '$P')\" = 2755 ]"
check "projected: ca.crt from the configMap" grep -q standin "$P/ca.crt"
check "projected: namespace from the downward API" [ "$(cat "$P/namespace")" = default ]
check "projected: mounted read-only" \
    [ "$(mount_of c /var/run/secrets/kubernetes.io/serviceaccount)" = "$P True" ]
treq() { as_ctl /log | $PY -c '
import json, sys
rs = [e for e in json.load(sys.stdin) if e["method"] == "POST" and e["path"].endswith("/serviceaccounts/default/token")]
print(len(rs)); b = rs[-1]["body"]["spec"] if rs else {}
print(json.dumps(b, sort_keys=True))'; }
spec=$(treq | tail -1)
check "TokenRequest: bound to the pod, expirationSeconds 3607, default audiences ($spec)" \
    sh -c "echo '$spec' | grep -q '\"boundObjectRef\": {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"name\": \"sa\", \"uid\": \"$UID_SA\"}' && echo '$spec' | grep -q '\"expirationSeconds\": 3607' && echo '$spec' | grep -q '\"audiences\": \[\]'"
tok1=$(cat "$P/token")
tok_changed() { [ "$(cat "$P/token")" != "$tok1" ]; }
wait_for 150 tok_changed
check "token refreshed after 80% of its (8 s) lifetime" tok_changed
check "downwardAPI: labels file" [ "$(cat "$D/labels")" = 'tier="front"' ]
check "downwardAPI: resourceFieldRef limits.cpu in 1m" [ "$(cat "$D/cpu_limit")" = 250 ]
as_curl -X PATCH -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"metadata":{"labels":{"tier":"back","new":"yes"}}}' "$API/pods/sa" >/dev/null
labels_moved() { [ "$(cat "$D/labels")" = "$(printf 'new="yes"\ntier="back"')" ]; }
wait_for 100 labels_moved
check "downwardAPI: a label change reaches the file" labels_moved

# A required configMap that does not exist: CreateContainerConfigError with the server's
# message; created later, the pod starts.
as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"needy\"},\"spec\":{\"nodeName\":\"$NODE\",\"terminationGracePeriodSeconds\":1,\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"later\"}}],\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":[\"sleep\",\"inf\"],\"volumeMounts\":[{\"name\":\"v\",\"mountPath\":\"/v\"}]}]}}" >/dev/null
needy_err() { waiting needy | grep -q 'CreateContainerConfigError: configmaps "later" not found'; }
wait_for 300 needy_err
check "missing configMap: CreateContainerConfigError 'configmaps \"later\" not found' ($(waiting needy))" needy_err
post configmaps '{"metadata":{"name":"later"},"data":{"k":"v"}}'
needy_running() { [ "$(phase needy)" = Running ]; }
wait_for 300 needy_running
check "configMap created later: the pod starts" needy_running

# A required key missing from an existing secret.
as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"nokey\"},\"spec\":{\"nodeName\":\"$NODE\",\"terminationGracePeriodSeconds\":1,\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":[\"sleep\",\"inf\"],\"env\":[{\"name\":\"X\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"creds\",\"key\":\"token\"}}}]}]}}" >/dev/null
nokey_err() { waiting nokey | grep -q 'CreateContainerConfigError: couldn.t find key token in Secret default/creds'; }
wait_for 300 nokey_err
check "missing secret key: CreateContainerConfigError ($(waiting nokey))" nokey_err

# After a restart of kletd the running pod's volumes are still kept up to date (the
# containers are not created again).
stop_kletd
KLET_OBJECT_TTL_MS=1000 start_kletd --kubeconfig "$T/kubeconfig"
as_curl -X PUT -H 'Content-Type: application/json' \
    --data-binary '{"metadata":{"name":"cfg","namespace":"default"},"data":{"greeting":"hola","app.conf":"x=2\n"}}' \
    "$API/configmaps/cfg" >/dev/null
hola() { [ "$(cat "$V/kubernetes.io~configmap/cfg/greeting" 2>/dev/null)" = hola ]; }
wait_for 150 hola
check "after a restart: a configMap update still reaches a running pod's volume" hola
check "after a restart: the items volume is whole again" \
    [ "$(cat "$V/kubernetes.io~configmap/some/conf/app.conf")" = "x=2" ]

# A static pod may not use API objects.
put st.json <<M
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"st","namespace":"default"},
 "spec":{"volumes":[{"name":"v","configMap":{"name":"cfg"}}],
  "containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","inf"],
   "volumeMounts":[{"name":"v","mountPath":"/v"}]}]}}
M
wait_for 300 logged 'static pod may not use configmap'
check "static pod using a configMap refused" logged 'static pod may not use configmap \\"cfg\\"\|static pod may not use configmap "cfg"'

check "no container failed while its objects or token were being read" \
    sh -c "! grep -q 'Failed: Error: .*waiting for' '$T/kletd.log'"
stop_kletd
check "kletd exited cleanly" sh -c "! grep -q 'Sanitizer\|runtime error' '$T/kletd.log'"
finish
