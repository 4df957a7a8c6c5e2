#!/bin/sh
# The pod IP at start (fake CRI): after RunPodSandbox, kletd waits for PodSandboxStatus only
# when a container needs the IP (an env var from status.podIP); the container then gets the
# sandbox's IP. A pod that needs no IP starts its containers without that call.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake nl-podip

put withip.json <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "withip"},
 "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "c",
  "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"],
  "env": [{"name": "MY_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]}]}}
M
put noip.json <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "noip"},
 "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "c",
  "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"]}]}}
M
start_kletd
check "kletd started" logged 'kletd ready'
wait_for 200 running withip c
wait_for 200 running noip c
check "withip runs" running withip c
check "noip runs" running noip c
ctl() { $PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" "$1"; }
# The IP the fake gave withip's sandbox, and the MY_IP its container was created with.
ip=$(ctl '{"cmd":"state"}' | $PY -c '
import json, sys
d = json.load(sys.stdin)
print(next(s["ip"] for s in d["sandboxes"] if s["name"].startswith("withip")))')
env=$(ctl '{"cmd":"requests","method":"CreateContainer","n":10}' | $PY -c '
import json, sys
for r in json.load(sys.stdin)["requests"]:
    if r["sandbox_config"]["metadata"]["name"].startswith("withip"):
        print(next((e["value"] for e in r["config"].get("envs", []) if e["key"] == "MY_IP"), ""))')
echo "# sandbox ip $ip, MY_IP $env"
check "the sandbox has an IP" [ -n "$ip" ]
check "a container needing the pod IP gets it" [ "$env" = "$ip" ]
check "withip: PodSandboxStatus waited for" logged 'pod default/withip-nl-podip: sandbox .* ready, ip '
check "noip: containers started without PodSandboxStatus" \
    sh -c "grep 'pod default/noip-nl-podip: sandbox .* ready' '$T/kletd.log' | grep -vq ', ip '"
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log'"
[ "$_fail" -eq 0 ] || tail -40 "$T/kletd.log"
stop_kletd
finish
