#!/bin/sh
# contrib/run.sh — builds kletd and runs it in the foreground as a standalone node (no cluster):
# a private containerd (contrib/containerd-up.sh), a private root dir, and the example static
# pods of contrib/examples/. Ctrl-C stops kletd; the pods keep running, as with the kubelet.
# Stop everything afterwards with: sh contrib/containerd-down.sh
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
if [ -x contrib/containerd-up.sh ]; then
	sock=$(KLET_CONTAINERD_DIR=$demo/containerd sh contrib/containerd-up.sh | tail -1)
	endpoint="--container-runtime-endpoint unix://$sock"
fi
mkdir -p "$demo/root" "$demo/logs"
cat <<MSG
klet demo
  root dir:      $demo/root
  manifests:     $manifests
  pod logs:      $demo/logs
  runtime:       ${endpoint:-none}
  inspect:       build-run/podctl --socket $demo/root/podctl.sock get pods
  stop:          Ctrl-C (pods keep running); then sh contrib/containerd-down.sh
MSG
# shellcheck disable=SC2086
exec build-run/kletd --root-dir "$demo/root" --pod-manifest-path "$manifests" \
    --pod-logs-dir "$demo/logs" --hostname-override "${KLET_NODE_NAME:-klet-demo}" $endpoint -v=2
