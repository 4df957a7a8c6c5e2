#!/bin/sh
# Issue 20 case 9: secret data never reaches a disk. Through kletd (-v=10), the API stand-in
# and the fake CRI: a secret volume and a projected volume (service account token, a secret)
# are each a tmpfs mount (size-limited, nosuid, nodev) under the 0700 plugin directory, their
# files readable; a configMap volume stays on disk; the secret value and the token are in
# neither klet.db nor the log nor podctl; kletd dumps no core; the pod deleted, its tmpfs
# mounts are gone with its directory; after a kill -9, a pod deleted meanwhile loses its
# mounts and directory through housekeeping.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "$top/tests/apiserver/lib.sh"
command -v curl >/dev/null || node_skip "curl is not installed"
as_python >/dev/null || node_skip "python3-h2 is not installed"
[ "$(id -u)" -eq 0 ] || node_skip "needs root (mount)"
PODCTL=${top_builddir:-.}/podctl
case $PODCTL in /*) ;; *) PODCTL=$(pwd)/$PODCTL ;; esac
node_setup_fake secf
# Mounts below $T go before $T does (rm -rf never crosses them), whatever failed.
umount_T() {
	awk -v t="$T/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r |
	    while read -r m; do umount -l "$m"; done
}
trap 'as_stop; [ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null; umount_T; node_cleanup; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null' EXIT
mkdir -p "$T/as"
AS_NODE=$NODE as_start "$T/as"
as_kubeconfig "$T/kubeconfig"
API=$AS_URL/api/v1/namespaces/default
post() { as_curl -X POST -H 'Content-Type: application/json' --data-binary "$2" "$API/$1" >/dev/null; }
pod_json() { as_ctl "/pods/default/$1/get"; }
uid_of() { pod_json "$1" | as_json 'd["metadata"]["uid"]'; }
phase() { pod_json "$1" | as_json 'd["status"].get("phase")' 2>/dev/null; }
fstype() { awk -v m="$1" '$5 == m {for (i = 7; $i != "-"; i++); print $(i+1); exit}' /proc/self/mountinfo; }
mopts() { awk -v m="$1" '$5 == m {for (i = 7; $i != "-"; i++); print $6 "," $(i+3); exit}' /proc/self/mountinfo; }
mounts_under() { awk -v t="$1/" 'index($5, t) == 1' /proc/self/mountinfo | wc -l; }

SECRET=klet-secret-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
post secrets "{\"metadata\":{\"name\":\"creds\"},\"stringData\":{\"password\":\"$SECRET\"}}"
post configmaps '{"metadata":{"name":"cfg"},"data":{"greeting":"hello"}}'
post configmaps '{"metadata":{"name":"kube-root-ca.crt"},"data":{"ca.crt":"CA"}}'
pod() { # NAME
	cat <<J
{"metadata":{"name":"$1","namespace":"default"},
 "spec":{"nodeName":"$NODE","terminationGracePeriodSeconds":1,
  "volumes":[{"name":"sec","secret":{"secretName":"creds","defaultMode":288}},
   {"name":"cfg","configMap":{"name":"cfg"}},
   {"name":"kube-api-access-x1","projected":{"defaultMode":420,"sources":[
     {"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
     {"secret":{"name":"creds","items":[{"key":"password","path":"pw"}]}},
     {"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}}]}}],
  "containers":[{"name":"c","image":"klet.local/busybox:1.35","command":["sleep","inf"],
   "resources":{"limits":{"memory":"64Mi"}},
   "env":[{"name":"PASS","valueFrom":{"secretKeyRef":{"name":"creds","key":"password"}}}],
   "volumeMounts":[{"name":"sec","mountPath":"/etc/sec"},{"name":"cfg","mountPath":"/etc/cfg"},
    {"name":"kube-api-access-x1","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}]}]}}
J
}
start_kletd --kubeconfig "$T/kubeconfig" -v=10
check "kletd started with --kubeconfig at -v=10" logged 'joining the cluster'
pod one >"$T/one.json"
as_ctl /pods -X POST --data-binary "@$T/one.json" >/dev/null
running_one() { [ "$(phase one)" = Running ]; }
wait_for 300 running_one
check "pod with secret and projected volumes Running" running_one
U1=$(uid_of one)
V=$T/root/pods/$U1/volumes
S=$V/kubernetes.io~secret/sec
P=$V/kubernetes.io~projected/kube-api-access-x1
C=$V/kubernetes.io~configmap/cfg
check "secret volume is a tmpfs mount ($(fstype "$S"))" [ "$(fstype "$S")" = tmpfs ]
check "projected volume is a tmpfs mount ($(fstype "$P"))" [ "$(fstype "$P")" = tmpfs ]
check "configMap volume is not a mount" [ -z "$(fstype "$C")" ]
check "tmpfs nosuid, nodev, sized to the pod's 64Mi limit ($(mopts "$S"))" \
    sh -c "echo '$(mopts "$S")' | grep -q 'nosuid,nodev' && echo '$(mopts "$S")' | grep -q 'size=65536k'"
check "plugin directory stays 0700" [ "$(stat -c %a "$V/kubernetes.io~secret")" = 700 ]
check "secret file readable, mode 0440" \
    sh -c "[ \"\$(cat '$S/password')\" = '$SECRET' ] && [ \"\$(stat -L -c %a '$S/password')\" = 440 ]"
check "projected secret and token readable" \
    sh -c "[ \"\$(cat '$P/pw')\" = '$SECRET' ] && grep -q '^eyJ' '$P/token'"
TOKEN=$(cat "$P/token")
check "the container mounts the tmpfs directory" sh -c "$PY '$top/tests/fakecri/ctl.py' '$SOCK.ctl' '{\"cmd\":\"requests\",\"method\":\"CreateContainer\",\"n\":5}' | grep -q '$S'"
pc_out=$("$PODCTL" --socket "$T/root/podctl.sock" describe pod one 2>&1; "$PODCTL" --socket "$T/root/podctl.sock" get pods -o json 2>&1)
check "podctl answered" sh -c "echo '$pc_out' | grep -q one"
check "podctl shows neither the secret nor the token" \
    sh -c "! echo '$pc_out' | grep -qF -e '$SECRET' -e '$TOKEN'"
# The store is written at once (WAL); the log is flushed per line.
check "klet.db (and its WAL) hold neither the secret nor the token" \
    sh -c "! cat '$T/root/'klet.db* | grep -aqF -e '$SECRET' -e '$TOKEN'"
check "the log (-v=10) holds neither the secret nor the token" \
    sh -c "! grep -aqF -e '$SECRET' -e '$TOKEN' '$T/kletd.log'"
check "nothing under the root on disk holds the secret (tmpfs excluded)" \
    sh -c "! grep -rlaF --exclude-dir=kubernetes.io~secret --exclude-dir=kubernetes.io~projected -e '$SECRET' '$T/root' '$T/logs'"

# A core file of kletd would hold secrets: it makes itself non-dumpable with a core limit of
# 0 (not under AddressSanitizer, whose leak checker must ptrace it).
check "kletd dumps no core (core limit 0, or an ASan build)" \
    sh -c "grep -q 'Max core file size *0 *0 ' /proc/$kpid/limits || grep -aq __asan_init '$KLETD'"

# Deleted: unmounted, the pod directory gone.
as_ctl "/pods/default/one?method=DELETE&grace=0" >/dev/null
gone_one() { [ ! -e "$T/root/pods/$U1" ]; }
wait_for 300 gone_one
check "pod deleted: its directory is gone" gone_one
check "pod deleted: no mount left below it ($(mounts_under "$T/root/pods/$U1"))" \
    [ "$(mounts_under "$T/root/pods/$U1")" -eq 0 ]

# kill -9 while a pod with a secret runs; the pod is deleted while kletd is down; the
# restarted kletd (housekeeping) unmounts the leftover tmpfs before removing the directory.
pod two >"$T/two.json"
as_ctl /pods -X POST --data-binary "@$T/two.json" >/dev/null
running_two() { [ "$(phase two)" = Running ]; }
wait_for 300 running_two
U2=$(uid_of two)
check "second pod Running, its secret on a tmpfs" \
    [ "$(fstype "$T/root/pods/$U2/volumes/kubernetes.io~secret/sec")" = tmpfs ]
stop_kletd KILL
as_ctl "/pods/default/two?method=DELETE&grace=0" >/dev/null
as_ctl "/pods/default/two/delete" >/dev/null 2>&1
check "after kill -9 the tmpfs is still mounted" [ "$(mounts_under "$T/root/pods/$U2")" -ge 2 ]
start_kletd --kubeconfig "$T/kubeconfig" -v=10
gone_two() { [ ! -e "$T/root/pods/$U2" ] && [ "$(mounts_under "$T/root/pods/$U2")" -eq 0 ]; }
wait_for 600 gone_two
check "after restart: the deleted pod's mounts and directory are gone" gone_two
check "no mount left below the root" [ "$(mounts_under "$T/root")" -eq 0 ]
stop_kletd
check "kletd exited cleanly" sh -c "! grep -q 'Sanitizer\|runtime error' '$T/kletd.log'"
finish
