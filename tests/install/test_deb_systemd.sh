#!/bin/sh
# The Debian package on a machine with systemd and containerd: systemd booted as PID 1 of
# private namespaces on an overlay of this machine (tests/install/systemd_boot.sh: the
# machine's own files are never touched), `apt-get install ./klet_*.deb` inside it, then
# kletd.service started against a private containerd running outside (its socket bound in).
# Checked: the package installs with apt-get, enables the unit without starting it (the node
# must be configured first), the unit starts (Type=notify: active after READY=1) and runs a
# static pod on containerd, podctl (installed by the package) sees it, `systemctl stop`
# leaves the pod running, `apt-get purge` removes the package's files and the unit.
#   KLET_DEB=PATH   the package (contrib/build-deb.sh's output; contrib/test.sh's Debian
#                   package step passes it); skipped (77) without it.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
[ -n "${KLET_DEB:-}" ] && [ -f "$KLET_DEB" ] || node_skip "KLET_DEB is not a package file"
[ "$(id -u)" -eq 0 ] || node_skip "needs root"
[ -x /lib/systemd/systemd ] || node_skip "systemd is not installed"
command -v dbus-daemon >/dev/null 2>&1 || node_skip "dbus-daemon is not installed"
command -v apt-get >/dev/null 2>&1 || node_skip "apt-get is not installed"
KLET_CONTAINERD_DIR=${KLET_CONTAINERD_DIR:-${KLET_TEST_TMP:-/tmp}/klet-ctd-deb}
export KLET_CONTAINERD_DIR
node_setup debnode
B=$top/tests/install/systemd_boot.sh
D=$T/boot
# Pod logs: containerd (outside) writes them where kletd (inside) says, so one directory is
# bound at the same path in both; outside /tmp, which the unit has private.
KLET_BOOT_SHARED=/run/klet-deb-$$
export KLET_BOOT_SHARED
CGR=${KLET_TEST_CGROUP_ROOT:-}/deb-$$
trap 'sh "$B" stop "$D" >/dev/null 2>&1; node_cleanup; cgroup_root_rm "$CGR"; rm -rf "$KLET_BOOT_SHARED"' EXIT
mkdir -p "$KLET_BOOT_SHARED/logs" "$T/inst/var/cache/klet-test" "$D/etc/default" \
    "$D/etc/kubernetes/manifests" "$D/etc/systemd/system/kletd.service.d"
deb=$(basename "$KLET_DEB")
cp "$KLET_DEB" "$T/inst/var/cache/klet-test/$deb"
# The operator's part: /etc/default/kletd (read by the unit) and a static pod.
cat >"$D/etc/default/kletd" <<E
KLETD_ARGS="--container-runtime-endpoint unix:///klet-cri/$(basename "$SOCK") --pod-logs-dir $KLET_BOOT_SHARED/logs --hostname-override $NODE --port 0 --healthz-port 0 --cgroup-root $CGR"
E
cat >"$D/etc/systemd/system/kletd.service.d/test.conf" <<E
[Service]
ReadWritePaths=/klet-cri $KLET_BOOT_SHARED
E
cat >"$D/etc/kubernetes/manifests/web.yaml" <<'E'
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: klet.local/busybox:1.35, command: [sh, -c, 'echo hello-from-deb; sleep 100000']}
E
pid=$(sh "$B" start "$D" "$T/inst" "$(dirname "$SOCK")" 2>"$T/boot.err")
rc=$?
[ $rc -eq 77 ] && node_skip "$(cat "$T/boot.err")"
[ $rc -eq 0 ] || { cat "$T/boot.err"; echo "not ok - systemd did not boot"; exit 1; }
in_boot() { sh "$B" run "$D" "$@"; }
prop() { in_boot systemctl show kletd -p "$1" --value 2>/dev/null; }
booted() { in_boot systemctl is-system-running 2>/dev/null | grep -Eq 'running|degraded'; }
wait_for 600 booted
in_boot env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "/var/cache/klet-test/$deb" >"$T/apt.out" 2>&1
arc=$?
sed -n 's/^/# apt-get: /p' "$T/apt.out" | grep -E 'Setting up|Unpacking|newly installed|E:' | head -5
check "apt-get install ./$deb (exit $arc)" [ "$arc" -eq 0 ]
check "dpkg: klet installed" sh -c "sh '$B' run '$D' dpkg-query -W -f='\${Status}' klet | grep -qx 'install ok installed'"
check "the unit is enabled" [ "$(in_boot systemctl is-enabled kletd 2>/dev/null)" = enabled ]
check "... and not started by the package (the node is configured first)" \
    [ "$(prop ActiveState)" = inactive ]
check "/usr/sbin/kletd and /etc/klet/config.yaml are the package's" \
    sh -c "sh '$B' run '$D' dpkg -S /usr/sbin/kletd /etc/klet/config.yaml | grep -c '^klet:' | grep -qx 2"
in_boot systemctl start kletd >"$T/start.out" 2>&1
src=$?
check "systemctl start kletd (exit $src): returns once READY=1" [ "$src" -eq 0 ]
check "active, Type=notify" sh -c "[ '$(prop ActiveState)' = active ] && [ '$(prop Type)' = notify ]"
wait_for 900 running web c
check "the static pod runs on containerd" running web c
in_boot systemctl status kletd --no-pager -l >"$T/status.out" 2>&1
sed 's/^/# /' "$T/status.out" | head -10
pods() { in_boot podctl get pods; }
wait_for 100 sh -c "sh '$B' run '$D' podctl get pods | grep -q 'web-$NODE.*Running'"
pods >"$T/pods.out" 2>&1
sed 's/^/# podctl get pods: /' "$T/pods.out"
check "podctl (the package's) sees it Running" grep -q "web-$NODE.*Running" "$T/pods.out"
logf() { find "$KLET_BOOT_SHARED/logs" -name '0.log' | head -1; }
check "its log file where kletd said, written by containerd" \
    sh -c "grep -q hello-from-deb \"\$(find '$KLET_BOOT_SHARED/logs' -name 0.log | head -1)\""
id1=$(ctrs | awk '$1=="web" && $2=="c" {print $5}')
in_boot systemctl stop kletd >/dev/null 2>&1
check "systemctl stop kletd: inactive" [ "$(prop ActiveState)" = inactive ]
check "... the pod keeps running (KillMode=process)" running web c
in_boot env DEBIAN_FRONTEND=noninteractive apt-get purge -y klet >"$T/purge.out" 2>&1
check "apt-get purge klet" sh -c "! sh '$B' run '$D' dpkg-query -W -f='\${Status}' klet 2>/dev/null | grep -q installed"
check "... kletd, podctl and the unit are gone" \
    sh -c "sh '$B' run '$D' sh -c '! [ -e /usr/sbin/kletd ] && ! [ -e /usr/bin/podctl ] && ! [ -e /lib/systemd/system/kletd.service ]'"
[ -n "$id1" ] && cri StopContainer "{\"container_id\": \"$id1\", \"timeout\": 0}" >/dev/null 2>&1
finish
