#!/bin/sh
# Self-tests of the API server stand-in with Debian's curl (HTTP/2 and HTTP/1.1): auth, pods
# CRUD, list paging and selectors, watch with bookmarks, 410 after compaction, strategic-merge
# status patches, PUT conflicts, graceful delete with uid preconditions, nodes, leases, events,
# fault injection, refusal, GOAWAY; kubectl (if installed) as a bonus.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top/tests/lib/tap.sh"
. "$top/tests/apiserver/lib.sh"
tmp=$(mktemp -d /tmp/klet-as-test.XXXXXX)
trap 'as_stop; rm -rf "$tmp"' EXIT
command -v curl >/dev/null || skip_all "curl is not installed"
AS_NODE=node1 as_start "$tmp" --token tok123=tokuser --bookmark-interval 0.5
NS=$AS_URL/api/v1/namespaces/default

# Transport and auth.
v=$(as_curl -o /dev/null -w '%{http_version}' "$AS_URL/api/v1/namespaces/default/pods")
check "curl --http2 negotiates h2" [ "$v" = 2 ]
v=$(as_curl --http1.1 -o /dev/null -w '%{http_version}' "$AS_URL/api/v1/nodes")
check "curl --http1.1 works too" [ "$v" = 1.1 ]
c=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$AS_CERTS/ca.crt" "$AS_URL/api/v1/nodes")
check "no credentials -> 401" [ "$c" = 401 ]
c=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$AS_CERTS/ca.crt" \
    -H 'Authorization: Bearer tok123' "$AS_URL/api/v1/nodes")
check "bearer token accepted" [ "$c" = 200 ]
c=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$AS_CERTS/ca.crt" \
    -H 'Authorization: Bearer nope' "$AS_URL/api/v1/nodes")
check "bad bearer token -> 401" [ "$c" = 401 ]
u=$(as_ctl /log | as_json 'd[0]["user"]')
check "client certificate user is system:node:node1" [ "$u" = system:node:node1 ]

# Pods.
mkpod() { # mkpod NAME NODE [curl args]
	_pn=$1 _nn=$2; shift 2
	as_curl "$@" -X POST -H 'Content-Type: application/json' "$NS/pods" \
	    -d "{\"metadata\":{\"name\":\"$_pn\",\"labels\":{\"app\":\"$_pn\"}},\"spec\":{\"nodeName\":\"$_nn\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1\"}]}}"
}
c=$(mkpod p1 node1 -o /dev/null -w '%{http_code}')
check "create pod -> 201" [ "$c" = 201 ]
c=$(mkpod p1 node1 -o "$tmp/dup" -w '%{http_code}')
check "duplicate create -> 409 AlreadyExists" sh -c "[ $c = 409 ] && grep -q AlreadyExists '$tmp/dup'"
for i in 2 3 4 5; do mkpod p$i node1 >/dev/null; done
mkpod other node2 >/dev/null
n=$(as_curl "$AS_URL/api/v1/pods?fieldSelector=spec.nodeName%3Dnode1" | as_json 'len(d["items"])')
check "fieldSelector spec.nodeName filters" [ "$n" = 5 ]
n=$(as_curl "$AS_URL/api/v1/pods?labelSelector=app%3Dp3" | as_json 'len(d["items"])')
check "labelSelector filters" [ "$n" = 1 ]
as_curl "$AS_URL/api/v1/pods?fieldSelector=spec.nodeName%3Dnode1&limit=2" >"$tmp/pg1"
cont=$(as_json 'd["metadata"]["continue"]' <"$tmp/pg1")
rv1=$(as_json 'd["metadata"]["resourceVersion"]' <"$tmp/pg1")
n=$(as_json 'len(d["items"])' <"$tmp/pg1")
check "limit=2 gives 2 items and a continue token" sh -c "[ '$n' = 2 ] && [ -n '$cont' ]"
mkpod p6 node1 >/dev/null
as_curl "$AS_URL/api/v1/pods?fieldSelector=spec.nodeName%3Dnode1&limit=2&continue=$cont" >"$tmp/pg2"
rv2=$(as_json 'd["metadata"]["resourceVersion"]' <"$tmp/pg2")
check "continue pages are one consistent snapshot" [ "$rv1" = "$rv2" ]
c=$(as_curl -o /dev/null -w '%{http_code}' "$NS/pods/nosuch")
check "get missing pod -> 404" [ "$c" = 404 ]
as_curl "$NS/pods/nosuch" >"$tmp/nf"
check "errors are Status objects" grep -q '"kind":"Status".*"reason":"NotFound"' "$tmp/nf"

# Watch: replay from a resourceVersion, bookmarks, timeout.
as_curl -N "$AS_URL/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode1&resourceVersion=$rv1&allowWatchBookmarks=true&timeoutSeconds=2" >"$tmp/w1"
check "watch replays p6 as ADDED" grep -q '"type":"ADDED".*"name":"p6"' "$tmp/w1"
check "watch skips other nodes' pods" sh -c "! grep -q '\"name\":\"other\"' '$tmp/w1'"
check "watch sends bookmarks" grep -q '"type":"BOOKMARK"' "$tmp/w1"

# Status patches.
uid=$(as_curl "$NS/pods/p1" | as_json 'd["metadata"]["uid"]')
as_curl -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' "$NS/pods/p1/status" \
    -d "{\"metadata\":{\"uid\":\"$uid\"},\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}" >/dev/null
as_curl -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' "$NS/pods/p1/status" \
    -d "{\"metadata\":{\"uid\":\"$uid\"},\"status\":{\"\$setElementOrder/conditions\":[{\"type\":\"PodScheduled\"},{\"type\":\"Ready\"}],\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}" >"$tmp/sp"
r=$(as_json '",".join(c["type"]+"="+c["status"] for c in d["status"]["conditions"])' <"$tmp/sp")
check "strategic merge by condition type with \$setElementOrder" [ "$r" = "PodScheduled=True,Ready=True" ]
c=$(as_curl -o /dev/null -w '%{http_code}' -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' \
    "$NS/pods/p1/status" -d '{"metadata":{"uid":"not-the-uid"},"status":{"phase":"Failed"}}')
check "status patch with another uid -> 409" [ "$c" = 409 ]
as_curl -X PATCH -H 'Content-Type: application/merge-patch+json' "$NS/pods/p1/status" \
    -d '{"status":{"message":"hi"},"spec":{"nodeName":"elsewhere"}}' >"$tmp/mp"
check "merge patch on status ignores spec" sh -c "grep -q '\"message\":\"hi\"' '$tmp/mp' && grep -q '\"nodeName\":\"node1\"' '$tmp/mp'"
c=$(as_curl -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/json' "$NS/pods/p1/status" \
    -d '{"metadata":{"name":"p1","resourceVersion":"1"},"status":{"phase":"Failed"}}')
check "PUT with a stale resourceVersion -> 409" [ "$c" = 409 ]

# Graceful delete.
as_curl -X DELETE "$NS/pods/p2" >"$tmp/d1"
check "delete sets deletionTimestamp" grep -q '"deletionGracePeriodSeconds":30' "$tmp/d1"
c=$(as_curl -o /dev/null -w '%{http_code}' "$NS/pods/p2")
check "pod still there while terminating" [ "$c" = 200 ]
c=$(as_curl -o /dev/null -w '%{http_code}' -X DELETE -H 'Content-Type: application/json' "$NS/pods/p2" \
    -d '{"gracePeriodSeconds":0,"preconditions":{"uid":"wrong"}}')
check "final delete with a wrong uid -> 409" [ "$c" = 409 ]
uid2=$(as_curl "$NS/pods/p2" | as_json 'd["metadata"]["uid"]')
c=$(as_curl -o /dev/null -w '%{http_code}' -X DELETE -H 'Content-Type: application/json' "$NS/pods/p2" \
    -d "{\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"$uid2\"}}")
c2=$(as_curl -o /dev/null -w '%{http_code}' "$NS/pods/p2")
check "final delete removes the pod" sh -c "[ $c = 200 ] && [ $c2 = 404 ]"

# Compaction: watch and list continue get 410.
rvold=$(as_curl "$AS_URL/api/v1/pods?limit=1" | as_json 'd["metadata"]["resourceVersion"]')
cont=$(as_curl "$AS_URL/api/v1/pods?limit=1" | as_json 'd["metadata"]["continue"]')
mkpod p7 node1 >/dev/null
as_ctl /compact >/dev/null
as_curl -N "$AS_URL/api/v1/pods?watch=1&resourceVersion=$rvold&timeoutSeconds=2" >"$tmp/w410"
check "watch from a compacted rv -> ERROR 410 Expired" grep -q '"type":"ERROR".*"reason":"Expired","code":410' "$tmp/w410"
c=$(as_curl -o /dev/null -w '%{http_code}' "$AS_URL/api/v1/pods?limit=1&continue=$cont")
check "continue after compaction -> 410" [ "$c" = 410 ]

# Nodes, leases, events.
c=$(as_curl -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' "$AS_URL/api/v1/nodes" \
    -d '{"metadata":{"name":"node1","labels":{"kubernetes.io/hostname":"node1"}},"status":{"conditions":[{"type":"Ready","status":"False"}]}}')
check "node create -> 201" [ "$c" = 201 ]
as_curl -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' "$AS_URL/api/v1/nodes/node1/status" \
    -d '{"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"MemoryPressure","status":"False"}]}}' >"$tmp/np"
r=$(as_json '",".join(c["type"]+"="+c["status"] for c in d["status"]["conditions"])' <"$tmp/np")
check "node status patch merges conditions" [ "$r" = "Ready=True,MemoryPressure=False" ]
L=$AS_URL/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases
c=$(as_curl -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' "$L" \
    -d '{"metadata":{"name":"node1"},"spec":{"holderIdentity":"node1","leaseDurationSeconds":40}}')
check "lease create -> 201" [ "$c" = 201 ]
lrv=$(as_curl "$L/node1" | as_json 'd["metadata"]["resourceVersion"]')
c=$(as_curl -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/json' "$L/node1" \
    -d "{\"metadata\":{\"name\":\"node1\",\"resourceVersion\":\"$lrv\"},\"spec\":{\"holderIdentity\":\"node1\",\"leaseDurationSeconds\":40,\"renewTime\":\"2026-01-01T00:00:00.000000Z\"}}")
c2=$(as_curl -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/json' "$L/node1" \
    -d "{\"metadata\":{\"name\":\"node1\",\"resourceVersion\":\"$lrv\"},\"spec\":{\"holderIdentity\":\"node1\"}}")
check "lease PUT with optimistic concurrency (200 then 409)" sh -c "[ $c = 200 ] && [ $c2 = 409 ]"
c=$(as_curl -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' "$NS/events" \
    -d '{"metadata":{"name":"p1.abc"},"involvedObject":{"kind":"Pod","name":"p1"},"reason":"Started","count":1}')
c2=$(as_curl -o /dev/null -w '%{http_code}' -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' "$NS/events/p1.abc" \
    -d '{"count":2,"lastTimestamp":"2026-01-01T00:00:00Z"}')
check "event POST and PATCH" sh -c "[ $c = 201 ] && [ $c2 = 200 ]"

# Faults.
as_ctl "/fail?n=2&code=429&retry_after=3&match=GET" >/dev/null
as_curl -D "$tmp/h429" -o /dev/null "$AS_URL/api/v1/nodes"
c=$(as_curl -o /dev/null -w '%{http_code}' "$AS_URL/api/v1/nodes")
c3=$(as_curl -o /dev/null -w '%{http_code}' "$AS_URL/api/v1/nodes")
check "429 burst with Retry-After, then normal" sh -c "grep -qi '^retry-after: 3' '$tmp/h429' && [ $c = 429 ] && [ $c3 = 200 ]"
as_ctl "/fail?n=1&code=503" >/dev/null
c=$(as_curl -o /dev/null -w '%{http_code}' "$AS_URL/api/v1/nodes")
check "503 burst" [ "$c" = 503 ]
as_ctl "/refuse?seconds=1" >/dev/null
c=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$AS_CERTS/ca.crt" "$AS_URL/api/v1/nodes")
check "refuse: connections refused" [ "$c" = 000 ]
wait_for 50 as_curl -o /dev/null "$AS_URL/healthz"
check "refuse: listening again after the pause" as_curl -o /dev/null "$AS_URL/healthz"
(as_curl -N "$AS_URL/api/v1/pods?watch=1&timeoutSeconds=30" >"$tmp/wg"; echo done >"$tmp/wg.done") &
wait_for 50 sh -c "[ \$(curl -s http://127.0.0.1:$AS_CTL/stats | $AS_PY -c 'import json,sys;print(json.load(sys.stdin)[\"open_watches\"])') = 1 ]"
as_ctl /goaway >/dev/null
wait_for 50 test -f "$tmp/wg.done"
check "GOAWAY ends open watches" test -f "$tmp/wg.done"
(as_curl -N "$AS_URL/api/v1/pods?watch=1&timeoutSeconds=30" >"$tmp/wr"; echo done >"$tmp/wr.done") &
wait_for 50 sh -c "[ \$(curl -s http://127.0.0.1:$AS_CTL/stats | $AS_PY -c 'import json,sys;print(json.load(sys.stdin)[\"open_watches\"])') = 1 ]"
as_ctl /reset-watches >/dev/null
wait_for 50 test -f "$tmp/wr.done"
check "reset-watches ends open watches" test -f "$tmp/wr.done"
n=$(as_ctl /log | as_json 'len([e for e in d if e["method"]=="PATCH"])')
check "request log records PATCH requests" [ "$n" -ge 4 ]

# The store goes back in time: a read from a newer resourceVersion is 504 Too large, with
# the ResourceVersionTooLarge cause (an HTTP answer, or an ERROR event with mode=event).
rvnow=$(as_curl "$AS_URL/api/v1/pods?limit=1" | as_json 'd["metadata"]["resourceVersion"]')
as_ctl '/rewind?rv=3' >/dev/null
as_curl -o "$tmp/w504" -w '%{http_code}' "$AS_URL/api/v1/pods?watch=1&resourceVersion=$rvnow&timeoutSeconds=2" >"$tmp/c504"
check "rewind: watch from the old position -> 504 Timeout, cause ResourceVersionTooLarge" \
    sh -c "[ \$(cat '$tmp/c504') = 504 ] && grep -q '\"reason\":\"Timeout\".*ResourceVersionTooLarge' '$tmp/w504'"
c=$(as_curl -o /dev/null -w '%{http_code}' "$AS_URL/api/v1/pods?resourceVersion=$rvnow")
c2=$(as_curl -o /dev/null -w '%{http_code}' "$AS_URL/api/v1/pods")
check "rewind: list from the old position 504, without one 200" sh -c "[ $c = 504 ] && [ $c2 = 200 ]"
as_ctl '/rewind?rv=3&mode=event' >/dev/null
as_curl -N "$AS_URL/api/v1/pods?watch=1&resourceVersion=$rvnow&timeoutSeconds=2" >"$tmp/wev"
check "rewind mode=event: an ERROR event with the 504 Status" \
    grep -q '"type":"ERROR".*"code":504' "$tmp/wev"

# kubectl, if installed.
if command -v kubectl >/dev/null 2>&1; then
	cat >"$tmp/admin.kc" <<EOK
apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: "$AS_URL", certificate-authority: "$AS_CERTS/ca.crt"}}]
users: [{name: a, user: {client-certificate: "$AS_CERTS/admin.crt", client-key: "$AS_CERTS/admin.key"}}]
contexts: [{name: s, context: {cluster: s, user: a}}]
current-context: s
EOK
	K="kubectl --kubeconfig $tmp/admin.kc --request-timeout=20s"
	check "kubectl get pods" sh -c "$K get pods | grep -q '^p1 '"
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: kpod}\nspec: {nodeName: node1, containers: [{name: c, image: busybox}]}\n' >"$tmp/kpod.yaml"
	check "kubectl create --validate=false" $K create --validate=false -f "$tmp/kpod.yaml"
	check "kubectl delete --wait=false" $K delete pod kpod --wait=false
fi
finish
