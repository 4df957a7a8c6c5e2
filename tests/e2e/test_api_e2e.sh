#!/bin/sh
# kletd joined to the API server stand-in, running pods on a private containerd: a pod
# created through the API runs and is reported Running and Ready; the node registers and is
# Ready; its Lease is renewed; watch resets, GOAWAY, an outage with compaction converge with
# no restarted container; status patches carry only changes (the stand-in's request log); a
# graceful delete runs preStop, stops the containers and the node deletes the object.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-api}
export KLET_CONTAINERD_DIR
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
node_setup apinode
trap 'as_stop; node_cleanup' EXIT
OUTAGE=${KLET_E2E_OUTAGE_S:-10}
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as" --bookmark-interval 2
as_kubeconfig "$T/kubeconfig"
NS=$AS_URL/api/v1/namespaces/default

# A broken kubeconfig: kletd refuses to start and names the field.
sed 's#client-key: .*#client-key: /nonexistent/node.key#' "$T/kubeconfig" >"$T/bad.kubeconfig"
"$KLETD" --root-dir "$T/badroot" --container-runtime-endpoint "unix://$SOCK" \
    --kubeconfig "$T/bad.kubeconfig" >"$T/bad.log" 2>&1
check "bad kubeconfig: kletd exits non-zero" [ $? -ne 0 ]
check "bad kubeconfig: the error names the field" \
    grep -q 'users\[0\].user.client-key: /nonexistent/node.key' "$T/bad.log"

# Image GC's periods at 10 minutes: the node's images must be listed at the start.
KLET_API_PING_INTERVAL_MS=2000 KLET_API_PING_TIMEOUT_MS=2000 KLET_LEASE_RENEW_MS=2000 \
    KLET_IMAGE_GC_PERIOD_MS=600000 \
    start_kletd --kubeconfig "$T/kubeconfig" --node-labels example.com/rack=r1
check "kletd started with --kubeconfig" logged 'joining the cluster'

jq_node() { as_ctl /objects?kind=nodes | as_json "$1"; }
node_ready() {
	[ "$(jq_node '[c["status"] for n in d for c in n["status"]["conditions"] if c["type"]=="Ready"][0]')" = True ]
}
wait_for 300 node_ready
check "node registered and Ready" node_ready
has() { # PATH STRING: the control port's answer contains STRING
	as_ctl "$1" | grep -qF -- "$2"
}
check "node labels" has /objects?kind=nodes '"example.com/rack":"r1"'
wait_for 100 has /objects?kind=nodes 'containerd://'
check "node runtime version" has /objects?kind=nodes 'containerd://' 
wait_for 200 has /objects?kind=nodes '"images":[{"names":'
check "node status lists the runtime's images from the start" \
    has /objects?kind=nodes '"images":[{"names":'
lease_time() { as_ctl /objects?kind=leases | as_json 'd[0]["spec"]["renewTime"]'; }
l1=$(lease_time)
lease_moved() { [ "$(lease_time)" != "$1" ]; }
wait_for 100 lease_moved "$l1"
l2=$(lease_time)
check "lease renewed ($l1 -> $l2)" [ "$l1" != "$l2" ]

# A static pod gets a mirror pod in the API (annotation, owner Node), with its status;
# deleting the mirror through the API recreates it and never stops the static pod.
put st.yaml <<'M'
apiVersion: v1
kind: Pod
metadata: {name: st, namespace: default}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: s
    image: klet.local/busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
M
MIRROR=/pods/default/st-$NODE/get
mirror_running() {
	has "$MIRROR" '"kubernetes.io/config.mirror"' && has "$MIRROR" '"phase":"Running"'
}
wait_for 600 mirror_running
check "mirror pod created for the static pod" has "$MIRROR" '"kubernetes.io/config.mirror"'
check "mirror pod owned by the Node" has "$MIRROR" '"kind":"Node"'
check "static pod status reported on its mirror" mirror_running
static_id() {
	cri ListContainers '{}' | $AS_PY -c '
import json, sys
for c in json.load(sys.stdin).get("containers", []):
    l = c.get("labels", {})
    if l.get("io.kubernetes.pod.name") == "st-'"$NODE"'" and c["state"] == "CONTAINER_RUNNING":
        print(c["id"])'
}
sid=$(static_id)
muid=$(as_ctl "$MIRROR" | as_json 'd["metadata"]["uid"]')
as_ctl "/pods/default/st-$NODE?method=DELETE&grace=0" >/dev/null
mirror_back() { [ "$(as_ctl "$MIRROR" | as_json 'd["metadata"]["uid"]' 2>/dev/null)" != "$muid" ] && has "$MIRROR" config.mirror; }
wait_for 300 mirror_back
check "deleted mirror pod recreated" mirror_back
check "the static pod kept running" [ -n "$sid" ] && [ "$(static_id)" = "$sid" ]

mkdir -p "$T/host"
cat >"$T/web.json" <<J
{"metadata":{"name":"web","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":10,
  "volumes":[{"name":"h","hostPath":{"path":"$T/host"}}],
  "containers":[{"name":"app","image":"klet.local/busybox:1.35",
   "command":["sh","-c","trap 'exit 0' TERM; while true; do sleep 1; done"],
   "volumeMounts":[{"name":"h","mountPath":"/h"}],
   "readinessProbe":{"exec":{"command":["test","-f","/h/ready"]},"periodSeconds":1},
   "lifecycle":{"preStop":{"exec":{"command":["sh","-c","echo stopping > /h/prestop"]}}}}]}}
J
t0=$(date +%s%N)
as_ctl /pods -X POST --data-binary "@$T/web.json" >/dev/null
pod_field() { as_ctl /pods/default/web/get | as_json "$1" 2>/dev/null; }
pod_running_ready() {
	[ "$(pod_field 'd["status"].get("phase")')" = Running ] &&
	    [ "$(pod_field '[c["status"] for c in d["status"].get("conditions",[]) if c["type"]=="Ready"][0]')" = True ]
}
# The readiness probe fails until /h/ready exists: Running but not Ready in the API first.
pod_running_unready() {
	[ "$(pod_field 'd["status"].get("phase")')" = Running ] &&
	    [ "$(pod_field '[c["status"] for c in d["status"].get("conditions",[]) if c["type"]=="Ready"][0]')" = False ] &&
	    [ "$(pod_field 'd["status"]["containerStatuses"][0]["ready"]')" = False ]
}
wait_for 600 pod_running_unready
check "readiness probe failing: Running, Ready False in the API" pod_running_unready
touch "$T/host/ready"
wait_for 600 pod_running_ready
t1=$(date +%s%N)
check "readiness probe passing: container ready true in the API" \
    [ "$(pod_field 'd["status"]["containerStatuses"][0]["ready"]')" = True ]
check "pod created through the API is Running and Ready ($(( (t1 - t0) / 1000000 )) ms)" pod_running_ready
check "containerStatuses reported" has /pods/default/web/get '"running":{"startedAt"' 

ctr_id() {
	cri ListContainers '{}' | $AS_PY -c '
import json, sys
for c in json.load(sys.stdin).get("containers", []):
    l = c.get("labels", {})
    if l.get("io.kubernetes.pod.name") == "web" and c["state"] == "CONTAINER_RUNNING":
        print(c["id"])'
}
id1=$(ctr_id)
check "container running in containerd" [ -n "$id1" ]

# A pod whose image cannot be pulled: the waiting reason reaches the API.
as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"badimg\"},\"spec\":{\"nodeName\":\"$NODE\",\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/nosuch:1\"}]}}" >/dev/null
pull_err() { has /pods/default/badimg/get '"reason":"ErrImagePull"' || has /pods/default/badimg/get '"reason":"ImagePullBackOff"'; }
wait_for 300 pull_err
check "image pull failure reported as the container's waiting reason" pull_err
# Its repeating events are aggregated on the server: one Event object whose count grows
# (PATCHes after the POST, each carrying the message again).
ev_aggregated() {
	as_ctl /objects?kind=events | as_json 'len([e for e in d if e["involvedObject"]["name"] == "badimg" and e.get("count", 1) >= 2 and e.get("message") and e.get("reason")])' |
		grep -q '^[1-9]'
}
wait_for 300 ev_aggregated
check "a repeating event of the pod is one Event with a growing count" ev_aggregated
as_ctl "/pods/default/badimg?method=DELETE&grace=0" >/dev/null

# A pod that fails admission (a nodeSelector the node does not match) is Failed in the API
# with the kubelet's reason and message, and nothing of it runs.
as_ctl /pods -X POST -d "{\"metadata\":{\"name\":\"picky\"},\"spec\":{\"nodeName\":\"$NODE\",\"nodeSelector\":{\"disk\":\"ssd\"},\"containers\":[{\"name\":\"c\",\"image\":\"klet.local/busybox:1.35\"}]}}" >/dev/null
picky_failed() { has /pods/default/picky/get '"phase":"Failed"' && has /pods/default/picky/get '"reason":"NodeAffinity"'; }
wait_for 200 picky_failed
check "rejected pod: phase Failed, reason NodeAffinity" picky_failed
check "rejected pod: message says why" has /pods/default/picky/get 'Pod was rejected: Predicate NodeAffinity failed: node(s) didn'"'"'t match Pod'"'"'s node affinity/selector'
as_ctl "/pods/default/picky?method=DELETE&grace=0" >/dev/null

# Status patches carry only changes: no two PATCHes both send startTime.
n_start=$(as_ctl /log | as_json 'len([e for e in d if e["method"]=="PATCH" and "/pods/web/status" in e["path"] and "startTime" in json.dumps(e["body"])])')
n_patch=$(as_ctl /log | as_json 'len([e for e in d if e["method"]=="PATCH" and "/pods/web/status" in e["path"]])')
check "status patches carry only changes ($n_patch patches, startTime in $n_start)" [ "$n_start" -le 1 ]
n_nouid=$(as_ctl /log | as_json 'len([e for e in d if e["method"]=="PATCH" and "/pods/web/status" in e["path"] and not e["body"].get("metadata",{}).get("uid")])')
check "status patches carry the uid precondition" [ "$n_nouid" = 0 ]

watch_count() { as_ctl /log | as_json 'len([e for e in d if e.get("watch") and "/api/v1/pods" in e["path"]])'; }
list_count() { as_ctl /log | as_json 'len([e for e in d if e["method"]=="GET" and e["path"]=="/api/v1/pods" and not e.get("watch")])'; }

# Watch reset: re-watch, no relist, nothing restarted.
w0=$(watch_count); l0=$(list_count)
as_ctl /reset-watches >/dev/null
more_watches() { [ "$(watch_count)" -gt "$1" ]; }
wait_for 100 more_watches "$w0"
check "watch reset: re-watched without a relist" sh -c "[ $(watch_count) -gt $w0 ] && [ $(list_count) -eq $l0 ]"

# podctl status shows the API side: connected, watching, the stored position, a recent event.
PODCTL=${top_builddir:-.}/podctl
api_line() { "$PODCTL" --socket "$T/root/podctl.sock" status | grep '^API Server:'; }
check "podctl status: API connected and watching" sh -c "'$PODCTL' --socket '$T/root/podctl.sock' status | grep '^API Server:' | grep -q 'connected, watch watching'"
check "podctl status: watch resourceVersion shown" sh -c "'$PODCTL' --socket '$T/root/podctl.sock' status -o json 2>/dev/null | grep -q '\"resourceVersion\":\"[0-9]' || '$PODCTL' --socket '$T/root/podctl.sock' status | grep '^API Server:' | grep -q 'resourceVersion [0-9]'"
echo "# $(api_line)"

# GOAWAY: a new connection, the watch continues.
c0=$(as_ctl /stats | as_json 'd["connections"]')
as_ctl /goaway >/dev/null
more_conns() { [ "$(as_ctl /stats | as_json 'd["connections"]')" -gt "$1" ]; }
wait_for 100 more_conns "$c0"
check "GOAWAY: reconnected" more_conns "$c0"

# An outage with compaction: relist after 410, nothing restarted.
as_ctl "/refuse?seconds=$OUTAGE&drop=1" >/dev/null
sleep 1
# Something changes while the node is away, then history is compacted: its position is gone.
as_ctl /pods -X POST -d '{"metadata":{"name":"elsewhere"},"spec":{"nodeName":"other","containers":[{"name":"c","image":"i"}]}}' >/dev/null
as_ctl /compact >/dev/null
watching() { [ "$(as_ctl /stats | as_json 'd["open_watches"]')" -ge 1 ]; }
wait_for $(( (OUTAGE + 40) * 10 )) watching
check "after a ${OUTAGE}s outage: watching again" watching
check "after the outage: relisted (410)" sh -c "[ $(list_count) -gt $l0 ]"
check "no container restarted" [ "$(ctr_id)" = "$id1" ]
check "node still Ready" node_ready

# kletd restarted: the watch resumes from the stored resourceVersion, without a LIST, and
# nothing is restarted.
stop_kletd TERM
patch_count() { as_ctl /log | as_json 'len([e for e in d if e["method"]=="PATCH" and "/pods/web/status" in e["path"]])'; }
l1=$(list_count); w1=$(watch_count); p1=$(patch_count)
# Image GC's periods at 10 minutes: the node's images must be listed at the start.
KLET_API_PING_INTERVAL_MS=2000 KLET_API_PING_TIMEOUT_MS=2000 KLET_LEASE_RENEW_MS=2000 \
    KLET_IMAGE_GC_PERIOD_MS=600000 \
    start_kletd --kubeconfig "$T/kubeconfig" --node-labels example.com/rack=r1
wait_for 100 more_watches "$w1"
check "restart: watch resumed from the stored resourceVersion" logged 'resuming the pods of node'
check "restart: no LIST ($l1 -> $(list_count))" [ "$(list_count)" -eq "$l1" ]
check "restart: no container restarted" [ "$(ctr_id)" = "$id1" ]
check "restart: statuses resumed from the store" logged 'pod statuses resumed from the store'
wait_for 100 logged 'recovered in'
sleep 4   # relists, syncs and a status batch (2 s with the settings above)
check "restart: no status PATCH for the unchanged pod ($p1 -> $(patch_count))" [ "$(patch_count)" -eq "$p1" ]
as_ctl /log | as_json "'\\n'.join('# patch after restart: ' + json.dumps(e['body']) for e in [e for e in d if e['method']=='PATCH' and '/pods/web/status' in e['path']][$p1:])"
# Nothing changes: no pod status is even generated (each status is regenerated only when
# its inputs change), over three relists.
gen() { "$PODCTL" --socket "$T/root/podctl.sock" status -o json 2>/dev/null | as_json 'd["api"]["podStatuses"]["generated"]'; }
g0=$(gen)
sleep 3
g1=$(gen)
check "idle: no pod status generated over 3 s ($g0 -> $g1)" [ "${g0:-x}" = "${g1:-y}" ]

# Graceful delete: preStop, containers stop, the node deletes the object.
as_ctl "/pods/default/web?method=DELETE" >/dev/null
gone() { as_ctl /pods/default/web/get | grep -q NotFound; }
wait_for 600 gone
check "graceful delete: the node deleted the pod object" gone
check "preStop ran" test -f "$T/host/prestop"
check "container stopped" [ -z "$(ctr_id)" ]
fd=$(as_ctl /log | as_json '[(e["body"].get("gracePeriodSeconds"), bool(e["body"].get("preconditions",{}).get("uid"))) for e in d if e["method"]=="DELETE" and e["path"].endswith("/pods/web") and e["user"].startswith("system:node:")][-1:]')
check "final DELETE had grace 0 and the uid ($fd)" [ "$fd" = "[(0, True)]" ]
stop_kletd TERM
check "kletd stopped cleanly" logged 'kletd stopped'
finish
