#!/bin/sh
# podctl against a real kletd on the Python fake CRI: pods running, crash-looping, with a
# missing image (ErrImageNeverPull) and a secret reference; every command and output format;
# access control (a user outside the group); malformed and oversized requests; 100
# concurrent clients; a client that never reads; kletd not running.
# Samples of every command go to $KLET_PODCTL_SAMPLES (default /tmp/klet-podctl-samples.txt).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
PODCTL=${top_builddir:-.}/podctl
case $PODCTL in /*) ;; *) PODCTL=$(pwd)/$PODCTL ;; esac
SAMPLES=${KLET_PODCTL_SAMPLES:-${KLET_TEST_TMP:-/tmp}/klet-podctl-samples.txt}
node_setup_fake pc-fake
[ "$(id -u)" -eq 0 ] || node_skip "needs root (setpriv to another user)"
chmod 711 "$T"
GROUP=$(getent group users | cut -d: -f1)
GID=$(getent group users | cut -d: -f3)
[ -n "$GID" ] || node_skip "no 'users' group"

pod() { # NAME JSON-OF-CONTAINER
	put "$1.json" <<M
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"terminationGracePeriodSeconds": 2, "containers": [$2]}}
M
}
pod web '{"name": "c", "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"],
  "env": [{"name": "MODE", "value": "demo"}],
  "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 1}}'
pod crash '{"name": "c", "image": "klet.local/busybox:1.35", "command": ["fake-exit", "1"]}'
pod noimg '{"name": "c", "image": "klet.local/missing:1", "imagePullPolicy": "Never"}'
pod sec '{"name": "c", "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"],
  "env": [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}},
          {"name": "PLAIN", "value": "visible"}]}'

S=$T/root/podctl.sock
pc() { "$PODCTL" --socket "$S" "$@"; }
as_nobody() { setpriv --reuid=65534 --regid=65534 "$@"; }

# An unknown group is a clear start-up error.
"$KLETD" --root-dir "$T/badroot" --container-runtime-endpoint "unix://$SOCK" \
    --podctl-group no-such-group-klet >"$T/bad.log" 2>&1
check "unknown --podctl-group: kletd exits 1" [ $? -eq 1 ]
check "unknown --podctl-group: message" grep -q 'podctl-group no-such-group-klet' "$T/bad.log"

start_kletd --podctl-group "$GROUP"
check "kletd started" logged 'kletd ready'
chmod 711 "$T/root"
check "socket mode 0660, group $GROUP" [ "$(stat -c '%a %U %G' "$S")" = "660 root $GROUP" ]

pods_status() { pc get pods | awk -v p="$1-pc-fake" -v s="$2" '$1==p && $3==s {f=1} END {exit !f}'; }
wait_for 200 pods_status web Running
web_ready() { pc get pods | grep -q '^web-pc-fake  *1/1 '; }
wait_for 100 web_ready
check "get pods: web Running 1/1" sh -c "'$PODCTL' --socket '$S' get pods | grep -q '^web-pc-fake  *1/1  *Running  *0 '"
wait_for 200 pods_status noimg ErrImageNeverPull
check "get pods: noimg ErrImageNeverPull" pods_status noimg ErrImageNeverPull
wait_for 400 pods_status crash CrashLoopBackOff
check "get pods: crash CrashLoopBackOff" pods_status crash CrashLoopBackOff
check "get pods: STATE column (sync)" sh -c "'$PODCTL' --socket '$S' get pods | awk '\$1==\"web-pc-fake\" {exit \$6 != \"sync\"}'"
check "get pods: IP column" sh -c "'$PODCTL' --socket '$S' get pods | awk '\$1==\"web-pc-fake\" {exit \$7 !~ /^10\\.88\\./}'"
check "get pods -n other: none" sh -c "'$PODCTL' --socket '$S' get pods -n other 2>&1 | grep -q 'No resources found in other namespace'"
check "get pods -A: NAMESPACE column" sh -c "'$PODCTL' --socket '$S' get pods -A | head -1 | grep -q '^NAMESPACE  *NAME  *READY  *STATUS  *RESTARTS  *AGE  *STATE  *IP'"
check "get pods -o wide: UID and CRI CALL" sh -c "'$PODCTL' --socket '$S' get pods -o wide | head -1 | grep -q 'NODE  *UID  *CRI CALL'"
pc get pods -o json >"$T/pods.json"
check "get pods -o json: parses, 4 pods" $PY -c "
import json, sys; d = json.load(open(sys.argv[1])); assert len(d) == 4
w = [p for p in d if p['name'] == 'web-pc-fake'][0]
assert w['ready'] == '1/1' and w['status'] == 'Running' and w['state'] == 'sync'
c = [p for p in d if p['name'] == 'crash-pc-fake'][0]; assert c['restarts'] >= 1" "$T/pods.json"
check "get pods -o yaml" sh -c "'$PODCTL' --socket '$S' get pods -o yaml | grep -q '^- namespace: default'"
if $PY -c 'import yaml' 2>/dev/null; then
	yaml_same() { # ARGS...: the YAML of a command reads back as its JSON (volatile keys aside)
		pc "$@" -o json >"$T/y.json" && pc "$@" -o yaml >"$T/y.yaml" && $PY -c '
import json, sys, yaml
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not k.endswith(("Ms", "Us", "Seconds", "KiB", "runs", "Bytes", "commits", "calls", "relists", "count", "failures", "seq"))}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
a, b = strip(json.load(open(sys.argv[1]))), strip(yaml.safe_load(open(sys.argv[2])))
sys.exit(a != b)' "$T/y.json" "$T/y.yaml"
	}
	check "-o yaml reads back as -o json: get pods" yaml_same get pods
	check "-o yaml reads back as -o json: describe" yaml_same describe pod web-pc-fake
	check "-o yaml reads back as -o json: get containers" yaml_same get containers
fi

pc describe pod crash-pc-fake >"$T/describe.txt"
check "describe: worker state" grep -q '^  State: *sync' "$T/describe.txt"
check "describe: last exit code 1" grep -q 'Exit Code: *1' "$T/describe.txt"
check "describe: restart count" grep -Eq 'Restart Count: *[1-9]' "$T/describe.txt"
check "describe: backoff event" grep -q 'BackOff' "$T/describe.txt"
check "describe: command" grep -q 'Command: *fake-exit 1' "$T/describe.txt"
check "describe: readiness probe result" sh -c "'$PODCTL' --socket '$S' describe pod web-pc-fake | grep -q 'readiness: success'"
pc describe pod default/noimg-pc-fake >"$T/describe2.txt"
check "describe NS/NAME: start error" grep -q 'ErrImageNeverPull' "$T/describe2.txt"
pc describe pod sec-pc-fake >"$T/describe3.txt"
check "describe: secret env shows the reference only" grep -q 'PASSWORD: <secret db/pw>' "$T/describe3.txt"
check "describe: literal env shows the value" grep -q 'PLAIN: visible' "$T/describe3.txt"
pc describe pod nothere >"$T/nf.out" 2>&1
check "describe unknown pod: exit 1" [ $? -eq 1 ]
check "describe unknown pod: message" grep -q 'pod default/nothere not found' "$T/nf.out"

check "get containers: web running" sh -c "'$PODCTL' --socket '$S' get containers | awk '\$2==\"web-pc-fake\" && \$4==\"Running\" {f=1} END {exit !f}'"
check "get containers: crash exited 1" sh -c "'$PODCTL' --socket '$S' get containers | awk '\$2==\"crash-pc-fake\" && \$4==\"Exited\" && \$6==1 {f=1} END {exit !f}'"
check "events: Started" sh -c "'$PODCTL' --socket '$S' events | grep -q 'Started'"
check "events -o json" sh -c "'$PODCTL' --socket '$S' events -o json | $PY -c 'import json,sys; assert len(json.load(sys.stdin)) > 0'"
check "status: runtime fakecri ready" sh -c "'$PODCTL' --socket '$S' status | grep -q '^Runtime: *fakecri 0.1.0 (CRI v1) ready'"
check "status: PLEG healthy" sh -c "'$PODCTL' --socket '$S' status | grep -q '^PLEG: *healthy'"
check "status -o json: rss, store, loop" sh -c "'$PODCTL' --socket '$S' status -o json | $PY -c '
import json,sys; d=json.load(sys.stdin); assert d[\"rssKiB\"] > 0 and d[\"store\"][\"health\"] == \"ok\" and d[\"loop\"][\"tasks\"]'"
check "version: client and server" sh -c "'$PODCTL' --socket '$S' version | grep -q 'Server Version'"
KLET_PODCTL_SOCKET=$S "$PODCTL" version >/dev/null 2>&1
check "KLET_PODCTL_SOCKET picks the socket" [ $? -eq 0 ]

# events -w: a new event (a pod removed) arrives on the stream.
pc events -w -o json >"$T/watch.out" 2>&1 &
wpid=$!
wait_for 50 test -s "$T/watch.out"
pod late '{"name": "c", "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"]}'
wait_for 200 grep -q '"name":"late-pc-fake".*Started' "$T/watch.out"
check "events -w: streams the events of a new pod" grep -q '"name":"late-pc-fake".*Started' "$T/watch.out"
kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null

# Access: a user outside the group; the same user with the group.
as_nobody --clear-groups "$PODCTL" --socket "$S" get pods >"$T/nobody.out" 2>&1
check "nobody: exit 1" [ $? -eq 1 ]
check "nobody: cannot connect (socket 0660)" grep -q 'cannot connect to kletd at .*Permission denied' "$T/nobody.out"
as_nobody --groups="$GID" "$PODCTL" --socket "$S" get pods >"$T/member.out" 2>&1
check "member of $GROUP (supplementary): allowed" grep -q 'web-pc-fake' "$T/member.out"
chmod 666 "$S" # a too-open socket: the daemon still checks the peer
as_nobody --clear-groups "$PODCTL" --socket "$S" get pods >"$T/nobody2.out" 2>&1
check "nobody on a 0666 socket: refused by kletd" grep -q 'permission denied: uid 65534 is not root nor a member of group' "$T/nobody2.out"
chmod 660 "$S"

# Raw protocol.
cat >"$T/raw.py" <<'PY'
import socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(path); return s
def line(s):
    b = b""
    while not b.endswith(b"\n"):
        d = s.recv(65536)
        if not d: break
        b += d
    return b.decode()
if mode == "send":
    s = conn(); s.sendall(sys.argv[3].encode() + b"\n"); print(line(s), end="")
    s.sendall(b'{"v":1,"cmd":"version"}\n'); print(line(s), end="")
elif mode == "big":
    s = conn()
    try:
        s.sendall(b'{"v":1,"cmd":"version","pad":"' + b"x" * 70000)
        print(line(s), end="")
        print("closed" if s.recv(10) == b"" else "open")
    except ConnectionResetError:
        print("closed")
elif mode == "many":
    n = int(sys.argv[3]); ss = [conn() for _ in range(n)]
    for s in ss: s.sendall(b'{"v":1,"cmd":"get_pods","all":true}\n')
    ok = sum('"ok":true' in line(s) for s in ss); print(ok)
elif mode == "noread":
    s = conn(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b'{"v":1,"cmd":"events","watch":true}\n')
    req = b'{"v":1,"cmd":"status"}\n' * 2000
    try:
        for _ in range(40): s.sendall(req)
    except OSError:
        pass
    open(sys.argv[3], "w").write("sent\n")
    time.sleep(30)
PY
check "malformed JSON: error reply, connection usable" sh -c "$PY '$T/raw.py' '$S' send 'not json' | tr -d '\n' | grep -q '\"ok\":false,\"error\":\"invalid JSON request.*\"server\"'"
check "unknown cmd: error" sh -c "$PY '$T/raw.py' '$S' send '{\"v\":1,\"cmd\":\"delete_pod\"}' | grep -q 'unknown cmd'"
check "wrong protocol version: error" sh -c "$PY '$T/raw.py' '$S' send '{\"v\":9,\"cmd\":\"status\"}' | grep -q 'unsupported protocol version 9'"
$PY "$T/raw.py" "$S" big >"$T/big.out" 2>&1
check "oversized request: error" grep -q 'over the limit of 65536' "$T/big.out"
check "oversized request: connection closed" grep -q '^closed' "$T/big.out"
check "100 concurrent clients all answered" [ "$($PY "$T/raw.py" "$S" many 100)" = 100 ]
$PY "$T/raw.py" "$S" noread "$T/noread.sent" &
npid=$!
wait_for 300 logged 'podctl: client pid=.* dropped'
check "client that never reads: dropped" logged 'podctl: client pid=.* dropped'
check "others still answered meanwhile" sh -c "'$PODCTL' --socket '$S' status >/dev/null"
kill "$npid" 2>/dev/null; wait "$npid" 2>/dev/null
check "kletd alive" kill -0 "$kpid"

# The daily questions: logs (the CRI log file, read by podctl itself), the node, top,
# inspect.
pc logs web-pc-fake >"$T/logs.out" 2>&1
check "logs: the container's output" grep -qx 'fakecri: started sleep inf' "$T/logs.out"
pc logs web-pc-fake --timestamps >"$T/logs-ts.out" 2>&1
check "logs --timestamps: RFC 3339 prefix" \
    grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z fakecri: started sleep inf$' "$T/logs-ts.out"
LOGF=$(ls "$T"/logs/default_web-pc-fake_*/c/0.log)
for i in 1 2 3; do echo "2026-01-01T00:00:0${i}.000000000Z stdout F extra $i" >>"$LOGF"; done
check "logs --tail 2: the last two lines" sh -c "[ \"\$('$PODCTL' --socket '$S' logs web-pc-fake --tail 2 | tr '\n' ' ')\" = 'extra 2 extra 3 ' ]"
check "logs -c c (the container named)" sh -c "'$PODCTL' --socket '$S' logs web-pc-fake -c c | grep -qx 'extra 1'"
pc logs web-pc-fake -c nope >"$T/logs-nope.out" 2>&1
check "logs -c unknown: exit 1, the kubelet's message" sh -c "[ $? -eq 1 ] &&
    grep -q 'container nope is not valid for pod web-pc-fake' '$T/logs-nope.out'"
pc logs nothere >/dev/null 2>&1
check "logs of an unknown pod: exit 1" [ $? -eq 1 ]
pc logs web-pc-fake -p >"$T/logs-p.out" 2>&1
check "logs -p without a previous instance: exit 1" sh -c "[ $? -eq 1 ] &&
    grep -q 'previous terminated container \"c\" in pod \"web-pc-fake\" not found' '$T/logs-p.out'"
pod two '{"name": "a", "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"]},
  {"name": "b", "image": "klet.local/busybox:1.35", "command": ["sleep", "inf"]}'
wait_for 200 pods_status two Running
pc logs two-pc-fake >"$T/logs-two.out" 2>"$T/logs-two.err"
check "logs of a pod of two: the first, as kubectl says" \
    grep -qx 'Defaulted container "a" out of: a, b' "$T/logs-two.err"
# -f: follows the file until the container exits, then returns 0.
pc logs two-pc-fake -c b -f >"$T/follow.out" 2>&1 &
flpid=$!
wait_for 50 grep -q started "$T/follow.out"
LOGB=$(ls "$T"/logs/default_two-pc-fake_*/b/0.log)
echo "2026-01-01T00:00:09.000000000Z stdout F appended while following" >>"$LOGB"
wait_for 50 grep -q 'appended while following' "$T/follow.out"
check "logs -f: a line appended later" grep -q 'appended while following' "$T/follow.out"
bid=$($PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"state"}' | $PY -c '
import json, sys
print([c["id"] for c in json.load(sys.stdin)["containers"] if c["name"] == "b" and c["state"] == "CONTAINER_RUNNING"][0])')
$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" "{\"cmd\":\"container_exit\",\"id\":\"$bid\",\"code\":0}" >/dev/null
wait_for 100 sh -c "! kill -0 $flpid"
check "logs -f returns when the container exits" sh -c "! kill -0 $flpid"
wait "$flpid"
check "logs -f: exit 0 and the runtime's last line" sh -c "[ $? -eq 0 ] && tail -1 '$T/follow.out' | grep -qx 'fakecri: exited with code 0'"

pc get nodes >"$T/nodes.out" 2>&1
check "get nodes: pc-fake Ready, no pressure, no lease (standalone)" \
    grep -Eq '^pc-fake +Ready +<none> +[0-9]+/110 +[0-9]+ +[0-9]+Ki +<none> ' "$T/nodes.out"
check "get nodes --no-headers: the row only" sh -c "[ \"\$('$PODCTL' --socket '$S' get nodes --no-headers | wc -l)\" -eq 1 ] &&
    '$PODCTL' --socket '$S' get nodes --no-headers | grep -q '^pc-fake '"
check "get nodes -o wide: runtime and shutdown manager" sh -c "'$PODCTL' --socket '$S' get nodes -o wide | grep -q 'fakecri://0.1.0 *disabled'"
pc describe node >"$T/dnode.out" 2>&1
check "describe node: Ready condition, KubeletReady" grep -Eq '^  Ready +True +KubeletReady +kubelet is posting ready status' "$T/dnode.out"
check "describe node: allocatable pods" grep -Eq '^  pods +110$' "$T/dnode.out"
pc get nodes -o json >"$T/node.json"
check "get nodes -o json: conditions, capacity, allocatable, lease" $PY -c "
import json, sys; d = json.load(open(sys.argv[1]))
assert [c['type'] for c in d['conditions']] == ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready']
assert d['capacity']['pods'] == '110' and int(d['capacity']['cpu']) >= 1 and d['lease']['configured'] is False
assert d['shutdownManager'] == 'disabled'" "$T/node.json"
pc describe node other >/dev/null 2>&1
check "describe node of another name: exit 1" [ $? -eq 1 ]

pc top >"$T/top.out" 2>&1
check "top: the pods of the namespace (their cgroups)" grep -Eq '^web-pc-fake +[0-9]+m +[0-9]+Mi$' "$T/top.out"
check "top: kubectl's header" grep -Eq '^NAME +CPU\(cores\) +MEMORY\(bytes\)$' "$T/top.out"
check "top -A: NAMESPACE first" sh -c "'$PODCTL' --socket '$S' top -A | head -1 | grep -q '^NAMESPACE  *NAME  *CPU(cores)'"
check "top -n other: none" sh -c "'$PODCTL' --socket '$S' top -n other 2>&1 | grep -q 'No resources found in other namespace'"
check "top node: CPU and memory with their share of allocatable" sh -c "'$PODCTL' --socket '$S' top node |
    grep -Eq '^pc-fake +[0-9]+m +[0-9]+% +[0-9]+Mi +[0-9]+%$'"

wid=$(pc get containers | awk '$2=="web-pc-fake" && $4=="Running" {print $1}')
pc inspect "$wid" >"$T/inspect.json" 2>&1
check "inspect PREFIX: the runtime's status, JSON" $PY -c "
import json, sys; d = json.load(open(sys.argv[1]))
s = d['status']; assert s['id'].startswith(sys.argv[2]) and s['state'] == 'CONTAINER_RUNNING'
assert s['metadata']['name'] == 'c' and s['labels']['io.kubernetes.pod.name'] == 'web-pc-fake'
assert s['logPath'].endswith('c/0.log') and s['image']['image'] == 'klet.local/busybox:1.35'" \
    "$T/inspect.json" "$wid"
check "inspect -o yaml" sh -c "'$PODCTL' --socket '$S' inspect '$wid' -o yaml | grep -q '^  state: CONTAINER_RUNNING$'"
pc inspect 0000000000dead >"$T/inspect-nf.out" 2>&1
check "inspect of an unknown container: exit 1, not found" sh -c "[ $? -eq 1 ] &&
    grep -q 'container \"0000000000dead\" not found' '$T/inspect-nf.out'"

# Usage errors exit 2.
pc get secrets >/dev/null 2>&1
check "unknown resource: exit 2" [ $? -eq 2 ]
pc logs >/dev/null 2>&1
check "logs without a pod: exit 2" [ $? -eq 2 ]
pc logs web-pc-fake --tail x >/dev/null 2>&1
check "logs --tail x: exit 2" [ $? -eq 2 ]
pc get pods -f >/dev/null 2>&1
check "-f outside logs: exit 2" [ $? -eq 2 ]
pc top --containers -w >/dev/null 2>&1
check "-w outside events: exit 2" [ $? -eq 2 ]
pc get pods -o xml >/dev/null 2>&1
check "unknown format: exit 2" [ $? -eq 2 ]

# Samples for the report.
{
	for c in "get pods" "get pods -o wide" "describe pod crash-pc-fake" \
	    "describe pod noimg-pc-fake" "describe pod sec-pc-fake" "get containers" "events" "status" "version" \
	    "get pods -o json" "get nodes" "get nodes -o wide" "describe node" "logs web-pc-fake" \
	    "logs two-pc-fake --tail 1 --timestamps" "top" "top -A --no-headers" "top node" \
	    "inspect $wid"; do
		echo "\$ podctl $c"
		pc $c 2>&1
		echo
	done
} >"$SAMPLES" 2>&1

stop_kletd
check "socket removed at exit" [ ! -e "$S" ]
pc get pods >"$T/down.out" 2>&1
check "kletd not running: exit 1" [ $? -eq 1 ]
check "kletd not running: message" grep -q "podctl: cannot connect to kletd at $S: " "$T/down.out"
finish
