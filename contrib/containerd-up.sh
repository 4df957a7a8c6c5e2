#!/bin/sh
# contrib/containerd-up.sh — starts a PRIVATE containerd in the background (never touching a
# system containerd) and prints its socket path as the LAST line of stdout (progress goes to
# stderr). Idempotent: when this instance already runs, it is reused.
#
# Environment:
#   KLET_CONTAINERD_DIR  instance dir (default /tmp/klet-containerd). Holds config.toml,
#                        root/, state/, containerd.sock, containerd.pid, containerd.log,
#                        cni/net.d/ (the CNI config) and cni/ipam/ (host-local leases).
#   KLET_IMAGE_CACHE     where the image tarballs are cached (default /tmp/klet-images);
#                        built by contrib/mkimages.sh when absent or older than their sources.
#   KLET_CONTAINERD_WAIT seconds to wait for the socket to answer (default 30).
#
# The instance: CRI plugin with restrict_oom_score_adj = true (required on these VMs),
# sandbox_image klet.local/pause:3.9, snapshotter overlayfs, runc v2 with cgroupfs
# (SystemdCgroup = false), stream server on a random localhost port, CNI plugins from
# /usr/lib/cni with a bridge "kletNN" + host-local IPAM on 10.213.NN.0/24 (ipMasq false).
# NN is derived from the dir's name and claimed in /tmp/klet-cni-nets so that several
# instances run at once without clashing. Images imported into namespace k8s.io:
#   klet.local/busybox:1.35  klet.local/pause:3.9
# Stop it with contrib/containerd-down.sh (same KLET_CONTAINERD_DIR).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${KLET_CONTAINERD_DIR:-/tmp/klet-containerd}
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
cache=${KLET_IMAGE_CACHE:-/tmp/klet-images}
wait_s=${KLET_CONTAINERD_WAIT:-30}
sock=$dir/containerd.sock
pidf=$dir/containerd.pid
log=$dir/containerd.log
ctr="ctr --address $sock -n k8s.io"

say() { echo "containerd-up: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root"
if ! command -v containerd >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 ||
    [ ! -x /usr/lib/cni/bridge ]; then
	say "installing containerd, runc and CNI plugins with contrib/deps.sh"
	sh "$top/contrib/deps.sh" >&2
fi

alive() {
	[ -f "$pidf" ] || return 1
	p=$(cat "$pidf")
	[ -n "$p" ] && [ -r "/proc/$p/cmdline" ] &&
		tr '\0' ' ' <"/proc/$p/cmdline" | grep -q "containerd --config $dir/config.toml"
}
answers() { $ctr version >/dev/null 2>&1; }

mkdir -p "$dir" "$dir/root" "$dir/state" "$dir/cni/net.d" "$dir/cni/ipam" "$dir/opt"

# A network number NN in 20..219 for this dir, unique among live instances.
netdir=/tmp/klet-cni-nets
mkdir -p "$netdir"
nn=$(
	flock 9
	if [ -f "$dir/netid" ] && [ "$(cat "$netdir/$(cat "$dir/netid")" 2>/dev/null)" = "$dir" ]; then
		cat "$dir/netid"
		exit 0
	fi
	h=$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
	i=0
	while [ $i -lt 200 ]; do
		n=$(((h + i) % 200 + 20))
		owner=$(cat "$netdir/$n" 2>/dev/null || true)
		if [ -z "$owner" ] || [ "$owner" = "$dir" ] || [ ! -d "$owner" ]; then
			echo "$dir" >"$netdir/$n"
			echo "$n" >"$dir/netid"
			echo "$n"
			exit 0
		fi
		i=$((i + 1))
	done
	exit 1
) 9>"$netdir/.lock" || die "no free network number in $netdir"

cat >"$dir/cni/net.d/10-klet.conflist.tmp" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "klet$nn",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "klet$nn",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "10.213.$nn.0/24", "gateway": "10.213.$nn.1" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$dir/cni/ipam"
      }
    }
  ]
}
JSON
mv -f "$dir/cni/net.d/10-klet.conflist.tmp" "$dir/cni/net.d/10-klet.conflist"

cat >"$dir/config.toml.tmp" <<TOML
# Private containerd written by contrib/containerd-up.sh; do not edit (rewritten each start).
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$sock"

[ttrpc]
  address = "$sock.ttrpc"

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "klet.local/pause:3.9"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  max_container_log_line_size = 16384

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
    max_conf_num = 1
TOML

if alive && answers; then
	rm -f "$dir/config.toml.tmp"
	say "reusing containerd pid $(cat "$pidf") at $sock"
else
	if alive; then
		say "containerd pid $(cat "$pidf") does not answer; stopping it"
		kill "$(cat "$pidf")" 2>/dev/null || true
		i=0
		while alive && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		alive && kill -9 "$(cat "$pidf")" 2>/dev/null || true
	fi
	mv -f "$dir/config.toml.tmp" "$dir/config.toml"
	rm -f "$sock" "$sock.ttrpc"
	say "starting containerd (log $log)"
	# setsid: its own session, so that it outlives this script and a test's process group
	setsid containerd --config "$dir/config.toml" </dev/null >>"$log" 2>&1 &
	echo $! >"$pidf"
	i=0
	until answers; do
		if ! alive; then
			tail -20 "$log" >&2
			die "containerd exited; see $log"
		fi
		i=$((i + 1))
		[ $i -le $((wait_s * 10)) ] || { tail -20 "$log" >&2; die "no answer on $sock after ${wait_s}s"; }
		sleep 0.1
	done
	say "containerd pid $(cat "$pidf") answers on $sock"
fi

# Images: build the tarballs once (cached), import what is missing.
mkdir -p "$cache"
if [ ! -f "$cache/busybox.tar" ] || [ ! -f "$cache/pause.tar" ] ||
    [ "$top/contrib/mkimages.sh" -nt "$cache/busybox.tar" ] ||
    [ "$top/contrib/pause.c" -nt "$cache/pause.tar" ]; then
	(
		flock 8
		sh "$top/contrib/mkimages.sh" "$cache" >&2
	) 8>"$cache/.lock"
fi
have=$($ctr images ls -q 2>/dev/null || true)
for img in busybox:klet.local/busybox:1.35 pause:klet.local/pause:3.9; do
	f=${img%%:*}
	ref=${img#*:}
	if ! printf '%s\n' "$have" | grep -qx "$ref"; then
		$ctr images import --snapshotter overlayfs "$cache/$f.tar" >&2 ||
			die "import of $cache/$f.tar failed"
	fi
done
echo "$sock"
