#!/bin/sh
# contrib/containerd-down.sh [--purge] — stops the private containerd started by
# contrib/containerd-up.sh, by PID, and everything it started:
#   1. every pod through the CRI (StopPodSandbox + RemovePodSandbox: containers killed, CNI
#      torn down, network namespaces released), when python3-grpcio is there;
#   2. whatever is left with ctr: tasks killed (SIGKILL) and deleted, containers removed,
#      so that the instance's containerd-shim-runc-v2 processes exit;
#   3. containerd itself (SIGTERM, SIGKILL after 10 s), then any shim of this instance still
#      alive (found by its -address argument, killed by PID);
#   4. mounts left under the instance dir are unmounted.
#   5. its bridge kletNN is deleted (made again at the next start's first pod).
# --purge also removes the instance dir (images, snapshots, logs) and its network number
# claim. Safe to run when nothing runs.
#
# Environment:
#   KLET_CONTAINERD_DIR  instance dir (default /tmp/klet-containerd), as for containerd-up.sh
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${KLET_CONTAINERD_DIR:-/tmp/klet-containerd}
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
purge=0
[ "${1:-}" = "--purge" ] && purge=1
sock=$dir/containerd.sock
pidf=$dir/containerd.pid
ctr="ctr --address $sock -n k8s.io"

say() { echo "containerd-down: $*" >&2; }

alive() {
	[ -f "$pidf" ] || return 1
	p=$(cat "$pidf")
	[ -n "$p" ] && [ -r "/proc/$p/cmdline" ] &&
		tr '\0' ' ' <"/proc/$p/cmdline" | grep -q "containerd --config $dir/config.toml"
}

# PIDs of this instance's shims (their command line holds "-address SOCK").
shims() {
	for c in $(grep -lsF -- "$sock" /proc/[0-9]*/cmdline 2>/dev/null); do
		p=${c#/proc/}
		p=${p%/cmdline}
		case $(cat "/proc/$p/comm" 2>/dev/null) in containerd-shim*) echo "$p" ;; esac
	done
}

if alive; then
	pid=$(cat "$pidf")
	py=""
	for p in /usr/bin/python3 python3; do
		if "$p" -c 'import grpc' >/dev/null 2>&1; then py=$p; break; fi
	done
	if [ -n "$py" ]; then
		PYTHONDONTWRITEBYTECODE=1 "$py" - "$top/tests/fakecri" "$sock" <<'PYEOF' >&2 || true
import sys
sys.path.insert(0, sys.argv[1])
import client, grpc
c = client.Client(sys.argv[2], 30)
try:
    items = c.call("ListPodSandbox", {}).get("items", [])
except grpc.RpcError as e:
    print("containerd-down: ListPodSandbox: %s" % e.details()); sys.exit(0)
for it in items:
    for m in ("StopPodSandbox", "RemovePodSandbox"):
        try:
            c.call(m, {"pod_sandbox_id": it["id"]})
        except grpc.RpcError as e:
            print("containerd-down: %s %s: %s" % (m, it["id"][:12], e.details()))
print("containerd-down: removed %d pod(s) through the CRI" % len(items))
PYEOF
	fi
	for id in $($ctr tasks ls -q 2>/dev/null); do
		$ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
	done
	for id in $($ctr tasks ls -q 2>/dev/null); do
		i=0
		until $ctr tasks delete -f "$id" >/dev/null 2>&1 || [ $i -ge 20 ]; do
			sleep 0.1; i=$((i + 1))
		done
	done
	for id in $($ctr containers ls -q 2>/dev/null); do
		$ctr containers rm "$id" >/dev/null 2>&1 || true
	done
	i=0
	while [ -n "$(shims)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	say "stopping containerd pid $pid"
	kill "$pid" 2>/dev/null || true
	i=0
	while alive && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	if alive; then
		say "containerd pid $pid ignores SIGTERM; SIGKILL"
		kill -9 "$pid" 2>/dev/null || true
		i=0
		while alive && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	fi
else
	say "no containerd running for $dir"
fi
rm -f "$pidf"

for p in $(shims); do
	say "killing leftover shim pid $p"
	kill -9 "$p" 2>/dev/null || true
done

# Unmount what is left under the instance dir, deepest first.
if [ -d "$dir" ]; then
	awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
fi

# The instance's bridge goes with its pods (the CNI bridge plugin makes it again for the next
# start's first pod), so that a test that stops its containerd leaves no link behind.
[ -f "$dir/netid" ] && { ip link del "klet$(cat "$dir/netid")" >/dev/null 2>&1 || true; }

if [ $purge -eq 1 ] && [ -d "$dir" ]; then
	if [ -f "$dir/netid" ]; then
		nn=$(cat "$dir/netid")
		(
			flock 9
			[ "$(cat "/tmp/klet-cni-nets/$nn" 2>/dev/null)" = "$dir" ] && rm -f "/tmp/klet-cni-nets/$nn"
		) 9>/tmp/klet-cni-nets/.lock
	fi
	rm -rf "$dir"
	say "purged $dir"
fi
exit 0
