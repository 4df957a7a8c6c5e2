#!/bin/sh
# The status manager and the node (registration, status, Lease) against the API server
# stand-in: patches carry only changes (asserted on the request log), coalescing, retries
# with Retry-After, 404 / recreated pods, final DELETE; node labels, capacity, conditions,
# lease renewal with optimistic concurrency, recreation after deletion.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${top_builddir:-.}
. "$top/tests/lib/tap.sh"
. "$top/tests/apiserver/lib.sh"
tmp=$(mktemp -d /tmp/klet-status-test.XXXXXX)
trap 'as_stop; rm -rf "$tmp"' EXIT
command -v curl >/dev/null || skip_all "curl is not installed"
as_start "$tmp"
as_kubeconfig "$tmp/kubeconfig"
KLET_TEST_KUBECONFIG=$tmp/kubeconfig KLET_TEST_AS_CTL=$AS_CTL \
    "$bld/tests/integration/test_status_client" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
check "status and node scenarios pass" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -30 "$tmp/err"
finish
