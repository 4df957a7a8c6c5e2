#!/bin/sh
# API faults a real node meets, through kletd, the API server stand-in and the fake CRI
# (issue 20):
#  - the server's store goes back in time (/rewind): every watch from the stored
#    resourceVersion gets 504 Too large resource version; kletd lists again without a
#    resourceVersion and new pods start, live and after a restart (case 2);
#  - a pod of 1.8 MB (its status) and a pod kletd cannot decode: the running pod is never
#    stopped, the watch goes on, later pods are seen, a 410 relist keeps the last good copy
#    (case 3);
#  - a restart with a static pod: its existing mirror pod is adopted (no 409 loop) and its
#    status keeps updating (case 4);
#  - smaller: a pod with an invalid name is skipped once; hostIP/hostIPs and the image name
#    in the pod status (case 10);
#  - the server refuses a pod's status patches and the runtime collects its dead container:
#    podctl still shows the exit the status manager keeps (case 11).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup_fake apif
trap 'as_stop; node_cleanup; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null' EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as" --bookmark-interval 2
as_kubeconfig "$T/kubeconfig"
PODCTL=${top_builddir:-.}/podctl

has() { as_ctl "$1" | grep -qF -- "$2"; }
pod_json() { as_ctl "/pods/default/$1/get"; }
phase() { pod_json "$1" | as_json 'd["status"].get("phase")' 2>/dev/null; }
is_running() { [ "$(phase "$1")" = Running ]; }
mkpod() { # NAME: a one-container pod on this node
	as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$NODE\",\"terminationGracePeriodSeconds\":1,\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":[\"sleep\",\"inf\"]}]}}" >/dev/null
}
ctr_of() { # POD: the id of its running container in the runtime
	cri ListContainers '{}' | $PY -c '
import json, sys
for c in json.load(sys.stdin).get("containers", []):
    if c.get("labels", {}).get("io.kubernetes.pod.name") == sys.argv[1] and \
            c["state"] == "CONTAINER_RUNNING":
        print(c["id"])' "$1"
}
stats() { as_ctl /stats | as_json "d[\"$1\"]"; }
kstart() {
	KLET_API_PING_INTERVAL_MS=2000 KLET_API_PING_TIMEOUT_MS=2000 KLET_LEASE_RENEW_MS=2000 \
	    start_kletd --kubeconfig "$T/kubeconfig" "$@"
}

kstart
check "kletd started with --kubeconfig" logged 'joining the cluster'
mkpod p1
wait_for 300 is_running p1
check "p1 Running" is_running p1
id1=$(ctr_of p1)

# ---- case 2: the store goes back in time ----
check "the server is ahead of 10 (rv $(stats rv))" [ "$(stats rv)" -gt 10 ]
as_ctl '/rewind?rv=2' >/dev/null
mkpod p2
wait_for 300 is_running p2
check "store rewound (504 Too large resource version): a new pod starts" is_running p2
check "store rewound: kletd listed again without a resourceVersion" \
    logged 'listing again without a resourceVersion'
check "store rewound: p1 kept running" [ -n "$id1" ] && [ "$(ctr_of p1)" = "$id1" ]
# The other form: a 200 stream whose first event is an ERROR with that Status.
as_ctl '/rewind?rv=2&mode=event' >/dev/null
mkpod p2e
wait_for 300 is_running p2e
check "store rewound (ERROR event form): a new pod starts" is_running p2e

# The same after a restart: the stored position is newer than the store.
stop_kletd TERM
as_ctl '/rewind?rv=2' >/dev/null
kstart
mkpod p3
wait_for 300 is_running p3
check "restart on a rewound store: a new pod starts" is_running p3
check "restart on a rewound store: p1 kept running" [ "$(ctr_of p1)" = "$id1" ]
check "restart on a rewound store: p2 kept running" [ -n "$(ctr_of p2)" ]

# ---- case 3: a pod of 1.8 MB, a pod kletd cannot decode ----
list_count() { as_ctl /log | as_json 'len([e for e in d if e["method"]=="GET" and e["path"]=="/api/v1/pods" and not e.get("watch")])'; }
# p1's status grows to 1.8 MB (thousands of conditions, as controllers can add).
$PY -c '
import json
c = [{"type": "example.com/gate-%05d" % i, "status": "True", "reason": "Gate",
      "message": "m" * 260} for i in range(5300)]
print(json.dumps({"conditions": c}))' >"$T/big.json"
as_ctl /pods/default/p1/status -X POST --data-binary "@$T/big.json" >/dev/null
size=$(pod_json p1 | wc -c)
check "p1 is $size bytes in the API (> 1.7 MB)" [ "$size" -gt 1700000 ]
mkpod p4
wait_for 300 is_running p4
check "a 1.8 MB pod does not blind the watch: a later pod starts" is_running p4
check "the 1.8 MB pod keeps running" [ "$(ctr_of p1)" = "$id1" ]
check "the 1.8 MB pod is still Running in the API" is_running p1
check "no watch event skipped for its size" sh -c "! grep -q 'over the limit' '$T/kletd.log'"
check "the 1.8 MB pod is not ignored by podconfig" sh -c "! grep -q 'does not parse again' '$T/kletd.log'"
pbytes=$(as_ctl /log | as_json 'max([e["req_bytes"] for e in d if e["method"]=="PATCH" and "/pods/p1/status" in e["path"]] or [0])')
# (The kubelet's patches carry $setElementOrder/conditions too: about 34 bytes a condition.)
check "status patches of the 1.8 MB pod do not resend its conditions (largest $pbytes bytes)" \
    [ "$pbytes" -lt $((size / 5)) ]

# p1 becomes undecodable (a field of the wrong type, as from a newer server): skipped, its
# last good copy kept through a 410 relist, reported once; the watch goes on.
as_curl -X PATCH -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"spec":{"activeDeadlineSeconds":"soon"}}' \
    "$AS_URL/api/v1/namespaces/default/pods/p1" >/dev/null
wait_for 300 logged 'pod default/p1 uid=.*skipped, its last good copy kept'
check "undecodable pod: reported, last good copy kept" \
    logged 'pod default/p1 uid=.*skipped, its last good copy kept'
# A 410: the node is away while something changes and history is compacted.
l0=$(list_count)
as_down
as_ctl /pods -X POST -d '{"metadata":{"name":"elsewhere"},"spec":{"nodeName":"other","containers":[{"name":"c","image":"i"}]}}' >/dev/null
as_ctl /compact >/dev/null
as_up
relisted() { [ "$(list_count)" -gt "$1" ]; }
wait_for 200 relisted "$l0"
check "410: relisted" relisted "$l0"
mkpod p5
wait_for 300 is_running p5
check "after a 410 relist: a later pod starts" is_running p5
check "after a 410 relist: the undecodable pod is not stopped" [ "$(ctr_of p1)" = "$id1" ]
check "the undecodable pod is reported once in the log" \
    [ "$(grep -c 'pod default/p1 uid=.*skipped' "$T/kletd.log")" = 1 ]
fv_event() { [ "$(as_ctl /objects?kind=events | as_json '[e["involvedObject"]["name"] for e in d if e["reason"]=="FailedValidation"]' | grep -c "'$1'")" -ge 1 ]; }
wait_for 150 fv_event p1
check "the undecodable pod has a FailedValidation event" fv_event p1

# ---- case 10: a pod with an invalid name is skipped once, no relist per event ----
l0=$(list_count)
as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"Bad_Name\"},\"spec\":{\"nodeName\":\"$NODE\",\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\"}]}}" >/dev/null
as_ctl /pods/default/Bad_Name/status -X POST -d '{"message":"one"}' >/dev/null
as_ctl /pods/default/Bad_Name/status -X POST -d '{"message":"two"}' >/dev/null
mkpod p6
wait_for 300 is_running p6
check "invalid pod name: a later pod starts" is_running p6
check "invalid pod name: no relist ($l0 -> $(list_count))" [ "$(list_count)" = "$l0" ]
check "invalid pod name: reported once" [ "$(grep -c 'pod default/Bad_Name uid=' "$T/kletd.log")" = 1 ]
check "invalid pod name: nothing of it runs" [ -z "$(ctr_of Bad_Name)" ]

# ---- case 10: the pod status has hostIP/hostIPs (the node's InternalIP) and the image's
# name (imageID its ID or digest) ----
nip=$(as_ctl /objects?kind=nodes | as_json '[a["address"] for n in d for a in n["status"]["addresses"] if a["type"]=="InternalIP"][0]')
st_of() { pod_json p6 | as_json "$1" 2>/dev/null; }
hostip_set() { [ "$(st_of 'd["status"].get("hostIP")')" = "$nip" ]; }
wait_for 300 hostip_set
check "pod status hostIP is the node's InternalIP ($nip)" hostip_set
check "pod status hostIPs" [ "$(st_of 'd["status"].get("hostIPs")')" = "[{'ip': '$nip'}]" ]
check "containerStatuses[].image is the image's name ($(st_of 'd["status"]["containerStatuses"][0]["image"]'))" \
    [ "$(st_of 'd["status"]["containerStatuses"][0]["image"]')" = klet.local/busybox:1.35 ]
check "containerStatuses[].imageID is its digest or ID ($(st_of 'd["status"]["containerStatuses"][0]["imageID"]'))" \
    sh -c "[ -n '$(st_of 'd["status"]["containerStatuses"][0]["imageID"]')' ] && [ '$(st_of 'd["status"]["containerStatuses"][0]["imageID"]')' != klet.local/busybox:1.35 ]"

# ---- case 4: the mirror pod of a static pod is adopted after a restart ----
ctl() { $PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" "$@"; }
put st.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: st, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: s, image: klet.local/busybox:1.35, command: [sleep, inf]}
M
MIRROR=/pods/default/st-$NODE/get
mirror_running() { has "$MIRROR" config.mirror && has "$MIRROR" '"phase":"Running"'; }
wait_for 300 mirror_running
check "static pod: mirror pod Running" mirror_running
muid=$(as_ctl "$MIRROR" | as_json 'd["metadata"]["uid"]')
stop_kletd TERM
seq0=$(as_ctl /log | as_json 'd[-1]["seq"]')
kstart
wait_for 100 logged 'recovered in'
ctl '{"cmd":"container_exit","name":"s","pod":"st-'"$NODE"'","code":1}' >/dev/null
restarts() { as_ctl "$MIRROR" | as_json 'd["status"]["containerStatuses"][0]["restartCount"]' 2>/dev/null; }
restarted() { [ "$(restarts)" -ge 1 ] 2>/dev/null; }
wait_for 300 restarted
check "restart: the mirror pod's status keeps updating (restartCount $(restarts))" restarted
check "restart: the mirror pod was adopted (same uid)" \
    [ "$(as_ctl "$MIRROR" | as_json 'd["metadata"]["uid"]')" = "$muid" ]
posts() { as_ctl "/log?since=$seq0" | as_json 'len([e for e in d if e["method"]=="POST" and e["path"]=="/api/v1/namespaces/default/pods"])'; }
check "restart: no POST of the mirror pod (no 409 loop): $(posts)" [ "$(posts)" = 0 ]

# The static pod changed while kletd was down: the old mirror is replaced.
stop_kletd TERM
sed -i 's/namespace: default}/namespace: default, labels: {v: "2"}}/' "$T/m/st.yaml"
kstart
mirror_v2() { has "$MIRROR" '"v":"2"' && has "$MIRROR" config.mirror && ! has "$MIRROR" "\"$muid\""; }
wait_for 300 mirror_v2
check "restart with a changed static pod: the outdated mirror is replaced" mirror_v2

# ---- case 10: a refused connection says so; podctl shows the watch's true state ----
api_line() { "$PODCTL" --socket "$T/root/podctl.sock" status | grep '^API Server:'; }
as_down refuse
wait_for 100 logged "127.0.0.1:$AS_PORT: connect: connection refused"
check "refused connection logged as 'connection refused' with the address" \
    logged "127.0.0.1:$AS_PORT: connect: connection refused"
check "no OpenSSL error code for a refused connection" sh -c "! grep -q 'TLS: error:00000005' '$T/kletd.log'"
echo "# $(api_line)"
check "podctl status while disconnected: the watch is not 'watching'" \
    sh -c "'$PODCTL' --socket '$T/root/podctl.sock' status | grep '^API Server:' | grep 'disconnected' | grep -qv 'watch watching'"
as_up
watching_again() { api_line | grep -q 'connected, watch watching'; }
wait_for 300 watching_again
check "podctl status once reconnected: watching" watching_again

# ---- case 11: podctl shows what kletd knows, not only what the server echoed back ----
# The server refuses this pod's status patches, so the API never learns its exit; once the
# runtime has collected the dead container (per-container limit 0), only the status manager
# still knows it. podctl must show it, not "ContainerCreating".
stop_kletd TERM
kstart --maximum-dead-containers-per-container 0
as_ctl "/fail?n=100000&code=503&match=pods/once/status" >/dev/null
as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"once\"},\"spec\":{\"nodeName\":\"$NODE\",\"restartPolicy\":\"Never\",\"terminationGracePeriodSeconds\":1,\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\",\"command\":[\"fake-exit\",\"3\"]}]}}" >/dev/null
once_ctrs() {
	cri ListContainers '{}' | $PY -c '
import json, sys
print(sum(c.get("labels", {}).get("io.kubernetes.pod.name") == "once"
          for c in json.load(sys.stdin).get("containers", [])))'
}
once_gone() { grep -q 'removing dead container .* of pod default/once' "$T/kletd.log" && [ "$(once_ctrs)" = 0 ]; }
wait_for 300 once_gone
check "once: its dead container collected from the runtime" once_gone
check "once: the server never got its status (phase $(phase once))" [ "$(phase once)" = Pending ]
cache_forgot() { ! "$PODCTL" --socket "$T/root/podctl.sock" get containers | awk '$2=="once"' | grep -q .; }
wait_for 100 cache_forgot
check "once: kletd's runtime cache has forgotten the container (podctl get containers)" cache_forgot
"$PODCTL" --socket "$T/root/podctl.sock" describe pod default/once >"$T/describe.once" 2>&1
sed -n '/^Containers:/,$p' "$T/describe.once" | head -8 | sed 's/^/# /'
check "podctl describe: Terminated, exit code 3 (the status manager's)" sh -c \
    "grep -q 'State: *Terminated' '$T/describe.once' && grep -Eq 'Exit Code: *3\$' '$T/describe.once'"
check "podctl get pods: once Error" sh -c \
    "'$PODCTL' --socket '$T/root/podctl.sock' get pods | awk '\$1==\"once\" || \$2==\"once\"' | grep -q Error"

finish
