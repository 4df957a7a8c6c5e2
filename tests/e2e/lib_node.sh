# lib_node.sh — shared set-up of the end-to-end tests on a real containerd: a private
# containerd (contrib/containerd-up.sh, KLET_CONTAINERD_DIR), a private kletd, and small CRI
# queries (tests/fakecri/client.py, python3-grpcio) to observe what kletd did.
# Source it after tests/lib/tap.sh; call node_setup NAME first. Everything started is
# stopped by PID in the EXIT trap.
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
KLETD=${top_builddir:-.}/kletd
case $KLETD in /*) ;; *) KLETD=$(pwd)/$KLETD ;; esac
kpid=
ctd_started=

node_skip() {
	if [ "${KLET_REQUIRE_PEERS:-0}" = 1 ]; then
		echo "not ok - peers required: $*"; echo "0 passed, 1 failed"; exit 1
	fi
	skip_all "$*"
}

node_cleanup() {
	[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null
	kpid=
	if [ -n "$ctd_started" ]; then
		KLET_CONTAINERD_DIR=$CTD_DIR sh "$top/contrib/containerd-down.sh" >/dev/null 2>&1
	fi
	[ -n "${TCGR:-}" ] && cgroup_root_rm "$TCGR"
	[ -n "${T:-}" ] && [ -f "$T/kletd.log" ] && cp "$T/kletd.log" "/tmp/klet-e2e-$NODE.last.log"
	[ -n "${T:-}" ] && rm -rf "$T"
}

# node_setup NAME: containerd for this test, a temp dir $T with $T/m (manifests).
node_setup() {
	NODE=$1
	[ "$(id -u)" -eq 0 ] || node_skip "needs root"
	command -v containerd >/dev/null 2>&1 || node_skip "containerd not installed"
	PY=python3
	[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
	$PY -c 'import grpc' 2>/dev/null || node_skip "python3-grpcio not installed"
	CTD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-nodeloop}
	T=$(mktemp -d /tmp/klet-e2e-$NODE.XXXXXX)
	mkdir -p "$T/m" "$T/host"
	trap node_cleanup EXIT
	trap 'exit 1' INT TERM
	ctd_started=1
	SOCK=$(KLET_CONTAINERD_DIR=$CTD_DIR sh "$top/contrib/containerd-up.sh" 2>"$T/ctd-up.log" |
	    tail -1)
	[ -S "$SOCK" ] || { cat "$T/ctd-up.log" >&2; node_skip "containerd did not start"; }
}

# node_setup_tmpfs NAME MIB: node_setup with containerd's root (images, snapshots: the image
# file system) on a fresh tmpfs of MIB MiB, $ROOTFS (under KLET_CONTAINERD_DIR, which the
# test sets; an instance left running is stopped first). At exit the API stand-in (if any)
# and kletd stop, then the tmpfs is unmounted.
node_setup_tmpfs() {
	[ "$(id -u)" -eq 0 ] || node_skip "needs root"
	command -v containerd >/dev/null 2>&1 || node_skip "containerd not installed"
	sh "$top/contrib/containerd-down.sh" >/dev/null 2>&1
	ROOTFS=$KLET_CONTAINERD_DIR/root
	mkdir -p "$ROOTFS"
	mountpoint -q "$ROOTFS" && umount -l "$ROOTFS"
	rm -rf "$ROOTFS" && mkdir -p "$ROOTFS"
	mount -t tmpfs -o size="$2"m "klet-$1" "$ROOTFS" || node_skip "cannot mount a tmpfs"
	node_setup "$1"
	trap 'command -v as_stop >/dev/null && as_stop; node_cleanup; umount -l "$ROOTFS" 2>/dev/null' EXIT
}

# images: one line per image of the runtime: ID TAG... SIZE. has_ref REF: a tag is REF.
# image_id REF: the ID of the image tagged REF.
images() {
	cri ListImages '{}' | $PY -c '
import json, sys
for i in json.load(sys.stdin).get("images", []):
    print(i["id"], " ".join(i.get("repo_tags", [])), i.get("size", 0))'
}
has_ref() { images | grep -q " $1 "; }
image_id() { images | awk -v t="$1" '$2==t {print $1}'; }

# start_kletd [ARGS...]: kletd on $T/root with manifests $T/m, log in $T/kletd.log; its
# server on 127.0.0.1, any free port (logged: "serving HTTPS on 127.0.0.1 port N").
start_kletd() {
	# The test's pod cgroups under a root of its own, removed by node_cleanup (a test that
	# passes its own --cgroup-root after this one removes that itself).
	TCGR=${KLET_TEST_CGROUP_ROOT:-}/e2e-$NODE-$$
	"$KLETD" --root-dir "$T/root" --pod-logs-dir "$T/logs" --pod-manifest-path "$T/m" \
	    --hostname-override "$NODE" --container-runtime-endpoint "unix://$SOCK" \
	    --file-check-frequency 2s --address 127.0.0.1 --port 0 --healthz-port 0 -v=2 \
	    --cgroup-root "$TCGR" "$@" \
	    >>"$T/kletd.log" 2>&1 &
	kpid=$!
	wait_for 100 grep -q 'kletd ready' "$T/kletd.log"
}

stop_kletd() { # SIGNAL (default TERM)
	[ -n "$kpid" ] || return 0
	kill -"${1:-TERM}" "$kpid" 2>/dev/null
	wait "$kpid" 2>/dev/null
	kpid=
}

# cgroup_root_rm ROOT: a test's private --cgroup-root removed from every hierarchy.
cgroup_root_rm() {
	for h in /sys/fs/cgroup/*; do
		[ -d "$h$1" ] && find "$h$1" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

# rss_sample PID SECONDS: one sample of PID's VmRSS a second for SECONDS s (the benches'
# steady-state figure); sets rss_mean, rss_max and rss_last, in KiB.
rss_sample() {
	_rs_sum=0 _rs_n=0 rss_max=0 rss_last=
	while [ "$_rs_n" -lt "$2" ]; do
		sleep 1
		rss_last=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status" 2>/dev/null)
		_rs_sum=$((_rs_sum + ${rss_last:-0})) _rs_n=$((_rs_n + 1))
		[ "${rss_last:-0}" -gt "$rss_max" ] && rss_max=$rss_last
	done
	rss_mean=$((_rs_n > 0 ? _rs_sum / _rs_n : 0))
}

cri() { $PY "$top/tests/fakecri/client.py" --timeout 10 "$SOCK" "$@"; }

# ctrs: one line per container of this node's pods:
#   POD CONTAINER STATE RESTARTCOUNT ID CREATED_NS
ctrs() {
	cri ListContainers '{}' | $PY -c '
import json, sys
node = sys.argv[1]
for c in json.load(sys.stdin).get("containers", []):
    l, a = c.get("labels", {}), c.get("annotations", {})
    pod = l.get("io.kubernetes.pod.name", "")
    if not pod.endswith("-" + node):
        continue
    print(pod[: -len(node) - 1], l.get("io.kubernetes.container.name"),
          c["state"].replace("CONTAINER_", ""), a.get("io.kubernetes.container.restartCount", "?"),
          c["id"], c.get("created_at", "0"))
' "$NODE"
}

# api_ctrs POD [NS]: the containers of the API pod POD (not renamed NAME-NODE as static pods
# are; namespace NS, default "default"), one line each: CONTAINER STATE RESTARTCOUNT ID
api_ctrs() {
	cri ListContainers '{}' | $PY -c '
import json, sys
for c in json.load(sys.stdin).get("containers", []):
    l, a = c.get("labels", {}), c.get("annotations", {})
    if l.get("io.kubernetes.pod.name") != sys.argv[1] or \
            l.get("io.kubernetes.pod.namespace") != sys.argv[2]:
        continue
    print(l.get("io.kubernetes.container.name"), c["state"].replace("CONTAINER_", ""),
          a.get("io.kubernetes.container.restartCount", "?"), c["id"])
' "$1" "${2:-default}"
}
no_api_ctrs() { [ -z "$(api_ctrs "$@")" ]; }

# sandboxes: POD STATE ID ATTEMPT
sandboxes() {
	cri ListPodSandbox '{}' | $PY -c '
import json, sys
node = sys.argv[1]
for s in json.load(sys.stdin).get("items", []):
    pod = s["metadata"]["name"]
    if not pod.endswith("-" + node):
        continue
    print(pod[: -len(node) - 1], s["state"].replace("SANDBOX_", ""), s["id"],
          s["metadata"].get("attempt", 0))
' "$NODE"
}

# exit_code ID
exit_code() {
	cri ContainerStatus "{\"container_id\": \"$1\"}" | $PY -c '
import json, sys; print(json.load(sys.stdin)["status"].get("exit_code", 0))'
}

# Predicates for wait_for / check.
running() { # POD CONTAINER
	ctrs | awk -v p="$1" -v c="$2" '$1==p && $2==c && $3=="RUNNING" {f=1} END {exit !f}'
}
count_ctrs() { # POD CONTAINER -> number of instances
	ctrs | awk -v p="$1" -v c="$2" '$1==p && $2==c {n++} END {print n+0}'
}
no_pod() { # POD: nothing left in the runtime
	! ctrs | awk -v p="$1" '$1==p {f=1} END {exit !f}' &&
	    ! sandboxes | awk -v p="$1" '$1==p {f=1} END {exit !f}'
}
restarts_at_least() { # POD CONTAINER N
	ctrs | awk -v p="$1" -v c="$2" -v n="$3" '$1==p && $2==c && $4+0>=n+0 {f=1} END {exit !f}'
}
logged() { grep -q "$1" "$T/kletd.log"; }

# free_port: a port of 127.0.0.1 free now (--read-only-port has no "any free port" value).
free_port() {
	$PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# metrics_ok: python3-prometheus-client is there to parse /metrics (node_skip otherwise).
metrics_ok() {
	$PY -c 'import prometheus_client' 2>/dev/null ||
	    node_skip "python3-prometheus-client is not installed"
}
# metric PORT FAMILY [LABEL=VALUE...]: "TYPE VALUE" of that sample of kletd's /metrics on the
# read-only port PORT; the whole answer must parse (tests/e2e/promparse.py) and the family
# have its HELP and TYPE lines.
metric() {
	_p=$1; shift
	curl -s --max-time 10 "http://127.0.0.1:$_p/metrics" | $PY "$top/tests/e2e/promparse.py" "$@"
}
# no_sample PORT FAMILY [LABEL=VALUE...]: the family is there (HELP, TYPE), not that sample.
no_sample() {
	metric "$@" >/dev/null 2>&1
	[ $? -eq 3 ]
}

# put NAME: manifest from stdin, written atomically.
put() { cat >"$T/m/.$1.tmp" && mv "$T/m/.$1.tmp" "$T/m/$1"; }

# node_setup_fake NAME: the Python fake CRI (tests/fakecri) instead of containerd.
fpid=
node_setup_fake() {
	NODE=$1
	PY=python3
	[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
	$PY -c 'import grpc, grpc_tools' 2>/dev/null || node_skip "python3-grpcio not installed"
	T=$(mktemp -d /tmp/klet-e2e-$NODE.XXXXXX)
	mkdir -p "$T/m" "$T/host"
	trap 'node_cleanup; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null' EXIT
	trap 'exit 1' INT TERM
	SOCK=$T/cri.sock
	sh "$top/tests/fakecri/run.sh" --socket "$SOCK" >"$T/fakecri.out" 2>&1 &
	fpid=$!
	wait_for 300 grep -q 'fakecri: ready' "$T/fakecri.out" ||
	    { cat "$T/fakecri.out" >&2; node_skip "fake CRI did not start"; }
}
