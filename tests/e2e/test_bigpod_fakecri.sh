#!/bin/sh
# A pod with many containers (issue 20, case 5), fake CRI: 1000 containers (the limit per
# pod) need four times more CRI calls at once than kletd hands the runtime (256): the calls
# wait for room instead of failing, the pod starts, and once its manifest is removed it stops
# completely. A pod over the limit is refused with an error that names it.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake big-fake
N=1000

bigpod() { # NAME N
	$PY - "$1" "$2" <<'PY' >"$T/m/.$1.tmp" && mv "$T/m/.$1.tmp" "$T/m/$1.json"
import json, sys
n = int(sys.argv[2])
print(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": sys.argv[1]},
    "spec": {"terminationGracePeriodSeconds": 1, "containers": [
        {"name": "c%d" % i, "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"]}
        for i in range(n)]}}))
PY
}
bigpod huge $((N + 1))
bigpod big $N
start_kletd
wait_for 100 logged 'Failed to load manifest .*huge.json'
check "over the limit: refused, the limit named" logged "huge.json: spec.containers: $((N + 1)) containers (init, regular and ephemeral together) is over kletd's limit of $N per pod"
nrun() { [ "$(ctrs | awk '$1=="big" && $3=="RUNNING"' | wc -l)" -eq "$1" ]; }
t0=$(date +%s)
wait_for 1200 nrun $N
check "$N containers running" nrun $N
echo "# $N containers running after $(($(date +%s) - t0)) s; kletd RSS $(ps -o rss= -p "$kpid") KiB"
check "calls waited for room" logged 'calls in flight; .* and later calls wait for room'
sleep 3 # a few syncs of the running pod: each reads $N container statuses
rm -f "$T/m/big.json"
t0=$(date +%s)
wait_for 1200 no_pod big
check "manifest removed: every container and the sandbox gone" no_pod big
echo "# stopped and removed in $(($(date +%s) - t0)) s; kletd RSS $(ps -o rss= -p "$kpid") KiB"
check "no call failed for want of room" sh -c "! grep -q 'requests queued' '$T/kletd.log'"
check "no sync or termination failed" sh -c "! grep -q 'sync failed\|terminating failed' '$T/kletd.log'"
check "nothing left in the runtime" [ "$(ctrs | wc -l)" -eq 0 ]
stop_kletd TERM
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
finish
