#!/bin/sh
# Issue 20 case 8: names that reach paths. A pod from the API whose metadata.uid is
# "../../escaped" is rejected as admission does (Failed, FailedValidation, saying why) and
# nothing is made for it: no directory outside the root (before the fix kletd created
# $T/escaped through ROOT/pods/UID/... and LOGS/NS_NAME_UID/...), no pod or log directory, no
# sandbox. Manifests with such a UID, or a namespace or name "..", are refused with an error
# naming the file. A well-formed pod next to them runs.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup_fake pathf
trap 'as_stop; node_cleanup; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null' EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
ctl() { $PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" "$@"; }
pod_json() { as_ctl "/pods/default/$1/get"; }
phase() { pod_json "$1" | as_json 'd["status"].get("phase")' 2>/dev/null; }
reason() { pod_json "$1" | as_json '"%s: %s" % (d["status"].get("reason"), d["status"].get("message"))' 2>/dev/null; }
sandbox_requests() { # POD -> RunPodSandbox requests for it
	ctl '{"cmd":"requests","method":"RunPodSandbox","n":100}' | $PY -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin)["requests"] if r["config"]["metadata"]["name"] == sys.argv[1]))' "$1"
}
pod_spec() { # NAME
	cat <<J
{"metadata":{"name":"$1","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,
  "volumes":[{"name":"scratch","emptyDir":{}},
   {"name":"info","downwardAPI":{"items":[{"path":"uid","fieldRef":{"fieldPath":"metadata.uid"}}]}}],
  "containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","inf"],
   "volumeMounts":[{"name":"scratch","mountPath":"/s"},{"name":"info","mountPath":"/i"}]}]}}
J
}

start_kletd --kubeconfig "$T/kubeconfig"
check "kletd started with --kubeconfig" logged 'joining the cluster'

# A hostile UID from the API (a real API server only issues UUIDs; the stand-in is told).
pod_spec evil >"$T/evil.json"
as_ctl '/pods?uid=..%2F..%2Fescaped' -X POST --data-binary "@$T/evil.json" >/dev/null
check "the stand-in holds the pod with uid ../../escaped" \
    [ "$(pod_json evil | as_json 'd["metadata"]["uid"]')" = ../../escaped ]
# A good pod, created after it: once it runs, kletd has long seen the evil one.
pod_spec good >"$T/good.json"
as_ctl /pods -X POST --data-binary "@$T/good.json" >/dev/null
running_good() { [ "$(phase good)" = Running ]; }
wait_for 300 running_good
check "a well-formed pod next to it runs" running_good
failed_evil() { [ "$(phase evil)" = Failed ]; }
wait_for 100 failed_evil
check "the pod with the hostile UID is Failed ($(phase evil))" failed_evil
r=$(reason evil)
check "... rejected as admission does: FailedValidation, saying why ($r)" \
    sh -c "echo '$r' | grep -q '^FailedValidation: Pod was rejected: Pod failed validation: metadata.uid: \"../../escaped\" is not a valid UID'"
check "... and logged" logged 'uid=../../escaped rejected: FailedValidation'
check "nothing created outside the root ($T/escaped)" [ ! -e "$T/escaped" ]
check "no pod directory for it (only the good pod's)" [ "$(ls "$T/root/pods" | wc -l)" -eq 1 ]
check "no log directory for it" sh -c "! ls '$T/logs' | grep -q evil"
check "no sandbox asked for it" [ "$(sandbox_requests evil)" = 0 ]

# Static pods: a UID in the manifest, a namespace or a name that is no file name.
put uid.yaml <<'M'
metadata: {name: s1, uid: "../../escaped-static"}
spec:
  containers: [{name: c, image: klet.local/busybox:1.35, command: [sleep, inf]}]
M
put ns.yaml <<'M'
metadata: {name: s2, namespace: ".."}
spec:
  containers: [{name: c, image: klet.local/busybox:1.35, command: [sleep, inf]}]
M
put name.yaml <<'M'
metadata: {name: ".."}
spec:
  containers: [{name: c, image: klet.local/busybox:1.35, command: [sleep, inf]}]
M
put ok.yaml <<'M'
metadata: {name: s4}
spec:
  containers: [{name: c, image: klet.local/busybox:1.35, command: [sleep, inf]}]
M
s4_up() { [ "$(sandbox_requests "s4-$NODE")" -ge 1 ]; }
wait_for 300 s4_up
check "a well-formed manifest next to them runs" s4_up
check "manifest with uid ../../escaped-static refused, naming the file" \
    logged "Failed to load manifest $T/m/uid.yaml: metadata.uid: \"../../escaped-static\" is not a valid UID"
check "manifest with namespace .. refused" \
    logged "Failed to load manifest $T/m/ns.yaml: metadata.namespace: \"..\" is not a DNS-1123 label"
check "manifest with name .. refused" \
    logged "Failed to load manifest $T/m/name.yaml: metadata.name: \"..-$NODE\" is not a DNS-1123 subdomain"
check "nothing created outside the root for them" [ ! -e "$T/escaped-static" ]
check "no sandbox asked for them" \
    [ "$(sandbox_requests "s1-$NODE")$(sandbox_requests "s2-$NODE")$(sandbox_requests "..-$NODE")" = 000 ]
stop_kletd
check "kletd exited cleanly" sh -c "! grep -q 'Sanitizer\\|runtime error' '$T/kletd.log'"
finish
