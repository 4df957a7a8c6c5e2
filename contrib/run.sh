#!/bin/sh
# contrib/run.sh — builds kletd and runs it in the foreground as a standalone node (no cluster):
# a private containerd (contrib/containerd-up.sh), a private root dir, and the example static
# pods of contrib/examples/. Ctrl-C stops kletd; the pods keep running, as with the kubelet.
# Stop everything afterwards with:
#   KLET_CONTAINERD_DIR=/tmp/klet-demo/containerd sh contrib/containerd-down.sh
# Environment: KLET_DEMO_DIR (default /tmp/klet-demo), KLET_MANIFESTS (default contrib/examples).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
demo=${KLET_DEMO_DIR:-/tmp/klet-demo}
manifests=${KLET_MANIFESTS:-$top/contrib/examples}
sh contrib/deps.sh
[ -f configure ] || autoreconf -fi >/dev/null
mkdir -p build-run
(cd build-run && { [ -f Makefile ] || "$top/configure" -q; } && make -j2 -s)
endpoint=""
if [ -f contrib/containerd-up.sh ]; then
	sock=$(KLET_CONTAINERD_DIR=$demo/containerd sh contrib/containerd-up.sh | tail -1)
	endpoint="--container-runtime-endpoint unix://$sock"
fi
mkdir -p "$demo/root" "$demo/logs"
node=${KLET_NODE_NAME:-klet-demo}
if build-run/podctl --help 2>&1 | grep -q 'get'; then
	inspect="build-run/podctl --socket $demo/root/podctl.sock get pods"
else
	inspect="kletd's log below (-v=2: pod updates, worker states, events)"
fi
cat <<MSG
klet demo
  node:          $node (static pods are named NAME-$node)
  root dir:      $demo/root (klet.db: pods, worker states, exits)
  manifests:     $manifests
  pod logs:      $demo/logs/NAMESPACE_POD_UID/CONTAINER/N.log
  runtime:       ${endpoint:-none (contrib/containerd-up.sh not found)}
  inspect:       $inspect
MSG
if [ -n "$endpoint" ]; then
	cat <<MSG
  containers:    ctr --address $sock -n k8s.io containers ls
                 ctr --address $sock -n k8s.io tasks ls
  CRI view:      /usr/bin/python3 tests/fakecri/client.py $sock ListPodSandbox
  web page:      curl http://POD_IP:8080/   (POD_IP: the "sandbox ... ready, ip" log line of web-$node)
  init demo:     cat $demo/logs/default_init-demo-${node}_*/app/0.log
MSG
fi
cat <<MSG
  stop:          Ctrl-C (pods keep running), then
                 KLET_CONTAINERD_DIR=$demo/containerd sh contrib/containerd-down.sh
MSG
# shellcheck disable=SC2086
exec build-run/kletd --root-dir "$demo/root" --pod-manifest-path "$manifests" \
    --pod-logs-dir "$demo/logs" --hostname-override "$node" $endpoint -v=2
