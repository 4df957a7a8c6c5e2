#!/bin/sh
# The C API client and reflector against the API server stand-in: requests, Status errors,
# 429/5xx, multiplexing, list paging, watch, bookmarks, 410 relist, GOAWAY, outage, PING
# timeout; a server without h2 and a server with an unknown CA fail clearly.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${top_builddir:-.}
. "$top/tests/lib/tap.sh"
. "$top/tests/apiserver/lib.sh"
tmp=$(mktemp -d /tmp/klet-api-test.XXXXXX)
pid2=
trap 'as_stop; [ -n "$pid2" ] && kill $pid2 2>/dev/null; rm -rf "$tmp"' EXIT
command -v curl >/dev/null || skip_all "curl is not installed"
as_start "$tmp" --bookmark-interval 0.5
as_kubeconfig "$tmp/kubeconfig"
KLET_TEST_KUBECONFIG=$tmp/kubeconfig KLET_TEST_AS_CTL=$AS_CTL \
    "$bld/tests/integration/test_api_client" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
check "client scenarios pass" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -30 "$tmp/err"

# A server that does not speak h2 (ALPN http/1.1 only).
mkdir -p "$tmp/b"
"$AS_PY" "$AS_DIR/apiserver.py" --certs "$AS_CERTS" --state-file "$tmp/b/state" --no-h2 \
    >"$tmp/b/log" 2>&1 &
pid2=$!
wait_for 100 test -s "$tmp/b/state"
read -r p2 c2 <"$tmp/b/state"
sed "s#$AS_URL#https://127.0.0.1:$p2#" "$tmp/kubeconfig" >"$tmp/kc-noh2"
KLET_TEST_KUBECONFIG=$tmp/kc-noh2 KLET_TEST_AS_CTL=$c2 KLET_TEST_MODE=no-h2 \
    "$bld/tests/integration/test_api_client" >"$tmp/out2" 2>"$tmp/err2"
check "no h2: the request fails" grep -q '^ok - no-h2: the request fails' "$tmp/out2"
check "no h2: the log says why" grep -q 'did not negotiate HTTP/2' "$tmp/err2" "$tmp/out2"
kill $pid2; wait $pid2 2>/dev/null; pid2=

# A server whose certificate does not verify against the kubeconfig's CA.
sed "s#$AS_CERTS/ca.crt#$AS_CERTS/other-ca.crt#" "$tmp/kubeconfig" >"$tmp/kc-wrongca"
KLET_TEST_KUBECONFIG=$tmp/kc-wrongca KLET_TEST_AS_CTL=$AS_CTL KLET_TEST_MODE=wrong-ca \
    "$bld/tests/integration/test_api_client" >"$tmp/out3" 2>"$tmp/err3"
check "unknown CA: the request fails" grep -q '^ok - wrong-ca: the request fails' "$tmp/out3"
check "unknown CA: the log says why" grep -qi 'certificate verify failed\|verify' "$tmp/err3" "$tmp/out3"
finish
