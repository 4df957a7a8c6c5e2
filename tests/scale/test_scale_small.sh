#!/bin/sh
# A small fleet (tests/scale/scale.py): 20 kletd agents on the scale runtime against the API
# stand-in, 5 pods each created through the API: every node Ready, every pod Running, no agent
# exits, no error answer from the API, no error line in any agent's log; idle, an agent's API
# load is its lease renewals; kill -9 of half the agents recovers with no mutating runtime call.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${top_builddir:-.}
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
. "$top/tests/apiserver/lib.sh"
PY=$(as_python) || {
	[ "${KLET_REQUIRE_PEERS:-0}" = 1 ] && { echo "not ok - python3-h2 is required"; exit 1; }
	skip_all "python3-h2 is not installed"
}
command -v openssl >/dev/null || skip_all "openssl is not installed"
N=${KLET_SCALE_NODES:-20}
P=${KLET_SCALE_PODS:-5}
J=$(mktemp /tmp/klet-scale-small.XXXXXX)
trap 'rm -f "$J"' EXIT
"$PY" "$top/tests/scale/scale.py" --build "$B" --nodes "$N" --pods "$P" --window 10 \
    --settle 3 --timeout 120 --faults kill --check --json "$J" >"$J.out" 2>&1
rc=$?
sed 's/^/# /' "$J.out" | grep '^# #' | cut -c3-
rm -f "$J.out"
check "harness succeeded (every node Ready, every pod Running, no error)" [ $rc -eq 0 ]
val() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$J"; }
check "all $N nodes Ready" [ "$(val 'd.get("seconds_all_nodes_ready") is not None')" = True ]
check "all $((N * P)) pods Running" [ "$(val 'd["pod_startup_latency_s"]["n"]')" = $((N * P)) ]
check "every container running in the runtime" [ "$(val 'd["containers_running"]')" = $((N * P)) ]
check "two watches per agent (its pods, RuntimeClasses)" [ "$(val 'd["steady"]["watches"]')" = "$((2 * N))" ]
check "idle: only lease renewals (PUT leases)" \
    [ "$(val 'sorted(d["steady"]["api_by_verb_resource_per_node_per_min"])')" = "['PUT leases']" ]
check "no agent exited" [ "$(val 'd["agents_exited"]')" = 0 ]
check "no error answer from the API" [ "$(val 'd["bad_codes"]')" = "{}" ]
check "no error line in any agent's log" [ "$(val 'd["kletd_error_lines"]')" = 0 ]
check "kill -9 of half the agents: no mutating runtime call" \
    [ "$(val 'd["fault_kill"]["mutating_calls"]')" = 0 ]
finish
