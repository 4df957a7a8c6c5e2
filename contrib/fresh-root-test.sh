#!/bin/sh
# shellcheck disable=SC2016,SC2317
# contrib/fresh-root-test.sh — runs the README's two set-up commands on a FRESH minimal Debian 12
# (bookworm): debootstraps a root, copies HEAD of this tree into it (git archive: commit first),
# and runs in a chroot
#   1. sh contrib/run.sh   until the demo comes up (a static pod's sandbox is ready and
#                          podctl answers), then stops kletd and its containerd;
#   2. sh contrib/test.sh  (the whole suite), printing its result.
# Catches a missing install step (contrib/deps.sh) before it reaches a user: run it whenever
# the dependencies change. Takes 30 to 90 minutes. Root only; needs the Debian archive.
#
# Isolation: everything runs in its own mount and PID namespaces (debootstrap included) and the
# two commands in their own network namespace (loopback only: the CNI bridges and pod IPs stay
# in it; the packages are installed before, with the host's network). The root is a mount
# point with /proc (of the PID namespace), /sys and /sys/fs/cgroup, /dev, /dev/pts, and tmpfs
# /run, /tmp and /dev/shm. On exit — success, failure or signal — every process of the run is
# killed (the PID namespace), every mount under the root is gone, and the root is deleted unless
# KLET_FRESH_KEEP=1. (Pod cgroups go to the host's cgroup tree, /sys being bound; contrib/test.sh's
# last step checks that the suite left none.)
#
# Environment:
#   KLET_FRESH_DIR        where to build the root (default: mktemp -d /var/tmp/klet-fresh.XXXXXX)
#   KLET_FRESH_KEEP=1     keep the root afterwards (its logs: ROOT/src/klet/build-*/)
#   KLET_DEBIAN_MIRROR    default http://deb.debian.org/debian
#   KLET_RUN_WAIT         seconds for contrib/run.sh to build and come up (default 2400)
#   KLET_SKIP_DISTCHECK, KLET_FUZZ_SECONDS, KLET_REQUIRE_PEERS   passed on to contrib/test.sh
# Exit status: 0 when both commands succeeded.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
self=$top/contrib/fresh-root-test.sh
say() { printf 'fresh-root: %s\n' "$*" >&2; }

if [ "${1:-}" = "--inner" ]; then
	# Inside the mount + PID namespaces (we are PID 1): build the root, run the two commands.
	root=$2
	tarball=$3
	set -e
	mount --bind "$root" "$root"
	mount --make-private "$root"
	mirror=${KLET_DEBIAN_MIRROR:-http://deb.debian.org/debian}
	say "debootstrap bookworm (minbase) into $root from $mirror"
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
		{ tail -20 "$root.debootstrap.log" >&2; exit 1; }
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --make-rslave "$root/sys"
	mount --rbind /dev "$root/dev"
	mount --make-rslave "$root/dev"
	mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" 2>/dev/null || true
	mount -t tmpfs -o mode=755 tmpfs "$root/run"
	mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	# As in any chroot: packages installed now must not start services (a system containerd).
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	mkdir -p "$root/src/klet"
	tar -x -C "$root/src/klet" -f "$tarball"
	set +e
	env_in="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
KLET_SKIP_DISTCHECK=${KLET_SKIP_DISTCHECK:-0} KLET_FUZZ_SECONDS=${KLET_FUZZ_SECONDS:-}
KLET_REQUIRE_PEERS=${KLET_REQUIRE_PEERS:-1}"
	[ -n "${KLET_FUZZ_SECONDS:-}" ] || env_in=$(echo "$env_in" | sed 's/KLET_FUZZ_SECONDS= *//')
	# Packages first, with the host's network (deps.sh is what both README commands run first).
	say "contrib/deps.sh in the fresh root"
	# shellcheck disable=SC2086
	chroot "$root" /usr/bin/env -i $env_in /bin/sh -c 'cd /src/klet && sh contrib/deps.sh' ||
		{ say "FAIL: contrib/deps.sh"; exit 1; }
	# The rest in a network namespace of its own.
	# shellcheck disable=SC2086
	unshare --net chroot "$root" /usr/bin/env -i $env_in RUN_WAIT="${KLET_RUN_WAIT:-2400}" \
	    /bin/sh -c '
ip link set lo up || exit 1
cd /src/klet || exit 1
rc=0
echo "=== 1. sh contrib/run.sh (until it comes up)"
sh contrib/run.sh >/tmp/run.log 2>&1 &
runpid=$!
up=0
i=0
while [ $i -lt "$RUN_WAIT" ] && kill -0 $runpid 2>/dev/null; do
	if grep -q "sandbox .* ready" /tmp/run.log &&
	    build-run/podctl --socket /tmp/klet-demo/root/podctl.sock get pods >/tmp/podctl.out 2>&1; then
		up=1
		break
	fi
	sleep 2
	i=$((i + 2))
done
if [ $up = 1 ]; then
	echo "contrib/run.sh: up after ${i}s; podctl get pods:"
	cat /tmp/podctl.out
else
	echo "contrib/run.sh: FAILED to come up (${i}s); its output:"
	tail -60 /tmp/run.log
	rc=1
fi
kill $runpid 2>/dev/null
wait $runpid 2>/dev/null
KLET_CONTAINERD_DIR=/tmp/klet-demo/containerd sh contrib/containerd-down.sh --purge
echo "=== 2. sh contrib/test.sh"
sh contrib/test.sh >/tmp/test.log 2>&1
trc=$?
cp /tmp/run.log /tmp/test.log /src/klet/ 2>/dev/null
grep -E "^(PASS|FAIL|SKIP|ERROR):|^failed:|passed, .* failed|^took |^---" /tmp/test.log | tail -120
echo "contrib/test.sh: exit $trc"
[ $trc = 0 ] || rc=1
exit $rc'
	exit $?
fi

[ "$(id -u)" -eq 0 ] || { say "must run as root"; exit 1; }
for c in unshare chroot git; do
	command -v $c >/dev/null 2>&1 || { say "$c not found"; exit 1; }
done
if ! command -v debootstrap >/dev/null 2>&1; then
	say "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null || exit 1
fi
root=${KLET_FRESH_DIR:-}
[ -n "$root" ] || root=$(mktemp -d /var/tmp/klet-fresh.XXXXXX) || exit 1
mkdir -p "$root" || exit 1
root=$(cd "$root" && pwd)
[ -z "$(ls -A "$root")" ] || { say "$root is not empty"; exit 1; }
tarball=$root.src.tar
inner=""

cleanup() {
	trap - EXIT INT TERM HUP
	if [ -n "$inner" ] && kill -0 "$inner" 2>/dev/null; then
		# SIGKILL to unshare's child, PID 1 of the namespace, kills every process in it.
		for c in $(cat "/proc/$inner/task/$inner/children" 2>/dev/null); do kill -9 "$c" 2>/dev/null; done
		kill -9 "$inner" 2>/dev/null
		wait "$inner" 2>/dev/null
	fi
	# The mounts lived in the namespace; should any have leaked to ours, unmount them.
	awk -v d="$root" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo |
	    sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	if [ "${KLET_FRESH_KEEP:-0}" = 1 ]; then
		say "kept $root"
	elif awk -v d="$root" '$5 == d || index($5, d "/") == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		say "mounts left under $root: not removed"
	else
		rm -rf --one-file-system "$root" "$tarball" "$root.debootstrap.log"
	fi
}
trap 'cleanup' EXIT
trap 'exit 130' INT TERM HUP

git -C "$top" archive --format=tar -o "$tarball" HEAD || exit 1
say "root $root, tree $(git -C "$top" rev-parse --short HEAD)"
start=$(date +%s)
unshare --mount --pid --fork --propagation private sh "$self" --inner "$root" "$tarball" &
inner=$!
wait "$inner"
rc=$?
inner=""
say "took $(($(date +%s) - start))s"
if [ $rc -eq 0 ]; then say "PASS: both README commands succeed on a fresh Debian 12"; else say "FAIL (exit $rc)"; fi
exit $rc
