#!/bin/sh
# The scale runtime (tests/scale/scalecri) as kletd's runtime: a static pod runs and kletd
# reports it Running (podctl); a container scripted to exit 3 is seen exited; the runtime's
# control socket counts the calls and switches a node's delay; a second node's socket is
# independent of the first.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${top_builddir:-.}
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
PY=/usr/bin/python3
[ -x $PY ] || skip_all "python3 is missing"
T=$(mktemp -d /tmp/klet-scalecri.XXXXXX)
spid= kpid=
cleanup() {
	[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	[ -f "$T/kletd.log" ] && cp "$T/kletd.log" /tmp/klet-scalecri.last.log
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ctl() { $PY - "$T/cri/control.sock" "$1" <<'P'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(buf.decode().strip())
P
}
"$B/tests/scale/scalecri" --dir "$T/cri" --nodes 2 >"$T/cri.out" 2>&1 &
spid=$!
wait_for 100 grep -q 'scalecri: ready 2' "$T/cri.out"
check "scalecri listens on one socket per node" [ -S "$T/cri/node-0001.sock" -a -S "$T/cri/node-0002.sock" ]
mkdir -p "$T/m"
cat >"$T/m/web.yaml" <<'M'
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - {name: c, image: klet.local/busybox:1.35, command: ["sleep", "inf"]}
M
cat >"$T/m/once.yaml" <<'M'
apiVersion: v1
kind: Pod
metadata: {name: once, namespace: default}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: klet.local/busybox:1.35, command: ["fake-exit", "3", "200"]}
M
"$B/kletd" --root-dir "$T/root" --pod-logs-dir "$T/logs" --pod-manifest-path "$T/m" \
    --hostname-override sc1 --container-runtime-endpoint "unix://$T/cri/node-0001.sock" \
    --file-check-frequency 1s -v=2 --address 127.0.0.1 --port 0 --healthz-port 0 \
    --cgroup-root "${KLET_TEST_CGROUP_ROOT:-/}" >"$T/kletd.log" 2>&1 &
kpid=$!
pods() { "$B/podctl" --socket "$T/root/podctl.sock" get pods; }
web_running() { pods | grep -E '^web-sc1 .*Running'; }
wait_for 300 web_running
check "static pod Running on the scale runtime (podctl)" web_running
check "kletd sees the runtime as scalecri" sh -c "'$B/podctl' --socket '$T/root/podctl.sock' status | grep -q scalecri"
once_done() { pods | grep -E '^once-sc1 .*(Failed|Error)'; }
wait_for 300 once_done
check "scripted exit (code 3) seen as failed" once_done
s1=$(ctl "stats 1")
s2=$(ctl "stats 2")
check "calls counted on node 1 ($s1)" sh -c "echo '$s1' | grep -q '\"StartContainer\":2'"
check "node 2 untouched ($s2)" sh -c "echo '$s2' | grep -q '\"RunPodSandbox\":0'"
c=$(ctl counts)
check "counts ($c)" sh -c "echo '$c' | grep -q '\"sandboxes\":2,\"containers\":2,\"running\":1'"
d=$(ctl "delay 1 1 300")
check "delay 1 1 300 ($d)" sh -c "echo '$d' | grep -q ok"
check "bad control command refused" sh -c "echo '$(ctl "delay 0 5 x")' | grep -q error"
# With 300 ms per answer on node 1, kletd still sees the pod running (relists are slower).
rm -f "$T/m/once.yaml"
gone() { ! pods | grep -q '^once-sc1'; }
wait_for 300 gone
check "pod removed through a slow runtime" gone
check "kletd still running" kill -0 "$kpid"
check "no error lines from scalecri" sh -c "! grep -v '^scalecri: ready' '$T/cri.out' | grep -q ."
finish
