#!/bin/sh
# systemd_boot.sh — boots systemd as PID 1 of private namespaces (PID, mount, network, UTS,
# IPC, cgroup) on an overlay of this machine's root (writes go to a temporary upper layer:
# the host's files are never touched), with the klet tree installed into it (`make install`),
# so that kletd.service runs under a real systemd where systemd is not PID 1 of the machine.
#
#   systemd_boot.sh start DIR INSTALL-TREE CRI-SOCKET-DIR
#                                                    boots; prints the PID of its systemd
#   systemd_boot.sh run DIR CMD...                   runs CMD inside (nsenter)
#   systemd_boot.sh stop DIR                         kills it and removes DIR
#
# INSTALL-TREE is a `make install DESTDIR=...` tree, copied into the root; DIR/etc, when
# it exists, is copied over /etc (e.g. default/kletd, kubernetes/manifests/, unit drop-ins).
# KLET_BOOT_SHARED=DIR (outside /tmp: the unit has a private /tmp) is bound at the same path
# inside, for files that a runtime outside and kletd inside must both find at one path (the
# pods' log files that containerd writes where kletd says).
# Inside: no unit of the host is enabled (an empty /etc/systemd/system), the boot target is
# klet-boot.target: dbus, systemd-logind and kletd.service; /proc/sys is read-only; the
# journal is kept in DIR/upper/var/log/journal (readable with journalctl -D after a
# poweroff); the directory CRI-SOCKET-DIR (a runtime's socket) is bound at /klet-cri.
# Root only; exit 77 when something it needs is missing.
set -eu
cmd=$1
D=$2
case $cmd in
start)
	INST=$3
	CRI=$4
	[ "$(id -u)" -eq 0 ] || { echo "systemd_boot: needs root" >&2; exit 77; }
	[ -x /lib/systemd/systemd ] || { echo "systemd_boot: no /lib/systemd/systemd" >&2; exit 77; }
	command -v unshare >/dev/null 2>&1 && command -v nsenter >/dev/null 2>&1 ||
	    { echo "systemd_boot: no unshare or nsenter (util-linux)" >&2; exit 77; }
	grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	    { echo "systemd_boot: no overlay file system" >&2; exit 77; }
	mkdir -p "$D/upper" "$D/work" "$D/root"
	# The cgroups it may use, its cgroup namespace's roots: one below this shell's own
	# cgroup in each hierarchy (cgroup v1 with name=systemd and unified, or v2).
	while IFS=: read -r _ ctrl path; do
		case $ctrl in
		"") mnt=/sys/fs/cgroup/unified; [ -f /sys/fs/cgroup/cgroup.procs ] && mnt=/sys/fs/cgroup ;;
		name=systemd) mnt=/sys/fs/cgroup/systemd ;;
		*) mnt=/sys/fs/cgroup/$ctrl ;;
		esac
		[ -f "$mnt/cgroup.procs" ] || continue
		h=$mnt${path%/}/klet-boot-$$
		mkdir -p "$h"
		kind=ctrl:$ctrl
		[ -z "$ctrl" ] && kind=v2:$mnt
		[ "$ctrl" = name=systemd ] && kind=named:systemd
		# a new cpuset has no CPU nor memory node: its parent's
		if [ -f "$h/cpuset.cpus" ]; then
			cat "$(dirname "$h")/cpuset.cpus" >"$h/cpuset.cpus"
			cat "$(dirname "$h")/cpuset.mems" >"$h/cpuset.mems"
		fi
		echo "$kind $h" >>"$D/cgroups"
	done </proc/self/cgroup
	cat >"$D/inner.sh" <<'INNER'
set -eu
D=$1 INST=$2 CRI=$3 SHARED=$4
R=$D/root
mount --make-rprivate /
mount -t overlay overlay -o "lowerdir=/,upperdir=$D/upper,workdir=$D/work" "$R"
mount -t proc proc "$R/proc"
mount --bind "$R/proc/sys" "$R/proc/sys"
mount -o remount,bind,ro "$R/proc/sys"
mount -t sysfs -o ro sysfs "$R/sys"
mount -t tmpfs -o mode=755 tmpfs "$R/sys/fs/cgroup"
while read -r kind h; do
	case $kind in
	v2:/sys/fs/cgroup) umount "$R/sys/fs/cgroup"; mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup" ;;
	v2:*) mkdir -p "$R/sys/fs/cgroup/unified"; mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup/unified" ;;
	named:systemd) mkdir -p "$R/sys/fs/cgroup/systemd"; mount -t cgroup -o none,name=systemd cgroup "$R/sys/fs/cgroup/systemd" ;;
	ctrl:*) n=${kind#ctrl:}; mkdir -p "$R/sys/fs/cgroup/$n"; mount -t cgroup -o "$n" cgroup "$R/sys/fs/cgroup/$n" ;;
	esac
done <"$D/cgroups"
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=755 tmpfs "$R/run"
mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
mkdir -p "$R/klet-cri"
mount --bind "$CRI" "$R/klet-cri"
if [ -n "$SHARED" ]; then
	mkdir -p "$R$SHARED"
	mount --bind "$SHARED" "$R$SHARED"
fi
# Nothing of the host's own set-up: only the units below are started.
rm -rf "$R/etc/systemd/system"
mkdir -p "$R/etc/systemd/system"
cp -a "$INST"/. "$R"/
[ -d "$D/etc" ] && cp -a "$D/etc"/. "$R/etc"/
mkdir -p "$R/var/log/journal"
cat >"$R/etc/systemd/system/klet-boot.target" <<T
[Unit]
Description=klet boot test
Requires=basic.target dbus.service systemd-logind.service
Wants=kletd.service
After=basic.target dbus.service systemd-logind.service kletd.service
AllowIsolate=yes
T
# The host's way of creating machine ids is not needed: one for this boot.
echo 0123456789abcdef0123456789abcdef >"$R/etc/machine-id"
echo klet-boot >"$R/etc/hostname"
cd "$R"
mkdir -p oldroot
pivot_root . oldroot
umount -l /oldroot
rmdir /oldroot 2>/dev/null || true
exec env -i container=klet-test TERM=dumb /lib/systemd/systemd --system --unit=klet-boot.target \
    --log-target=journal --show-status=no </dev/null
INNER
	# The child joins the cgroups first, so that its cgroup namespace starts there.
	(
		while read -r _ h; do echo 0 >"$h/cgroup.procs"; done <"$D/cgroups"
		exec unshare --pid --fork --mount --net --uts --ipc --cgroup sh "$D/inner.sh" \
		    "$D" "$INST" "$CRI" "${KLET_BOOT_SHARED:-}"
	) >"$D/console.log" 2>&1 &
	echo $! >"$D/unshare.pid"
	# The PID of its systemd (PID 1 inside): the child of unshare.
	for _ in $(seq 100); do
		pid=$(pgrep -P "$(cat "$D/unshare.pid")" 2>/dev/null | head -1 || true)
		if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = /usr/lib/systemd/systemd ] ||
		    { [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = /lib/systemd/systemd ]; }; then
			echo "$pid" >"$D/systemd.pid"
			echo "$pid"
			exit 0
		fi
		sleep 0.1
	done
	echo "systemd_boot: systemd did not start:" >&2
	cat "$D/console.log" >&2
	exit 1
	;;
run)
	shift 2
	exec nsenter --target "$(cat "$D/systemd.pid")" --mount --pid --net --uts --ipc --cgroup \
	    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_COLORS=0 "$@"
	;;
stop)
	[ -f "$D/unshare.pid" ] && kill -KILL "$(cat "$D/systemd.pid" 2>/dev/null || echo 0)" 2>/dev/null || true
	[ -f "$D/unshare.pid" ] && { kill "$(cat "$D/unshare.pid")" 2>/dev/null || true; }
	sleep 1
	if [ -f "$D/cgroups" ]; then
		# Depth first: systemd's own sub-cgroups, then ours.
		while read -r _ h; do
			find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		done <"$D/cgroups"
	fi
	rm -rf "$D"
	;;
esac
