#!/bin/sh
# podctl links only the protocol (src/ctl/proto.c: the helpers it calls; the request parser
# is the server's, and a build that drops unused code leaves it out), the json/yaml DOM with
# its helpers and the CRI log reader (src/core/logreader.c, the node server's): none of the
# daemon's modules (store, runtime manager, PLEG, CRI client, workers, server, API client)
# and none of their libraries (SQLite, libevent, nghttp2, OpenSSL, protobuf-c).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
PODCTL=${top_builddir:-.}/podctl
command -v nm >/dev/null 2>&1 || skip_all "nm not installed"
[ -x "$PODCTL" ] || skip_all "$PODCTL not built"
tmp=$(mktemp /tmp/klet-podctl-nm.XXXXXX)
trap 'rm -f "$tmp"' EXIT
nm "$PODCTL" >"$tmp" 2>/dev/null
daemon='store|kr|kuberuntime|pleg|cri|podworkers|podcache|podconfig|prober|api|housekeeping|recovery|volumes|h2|grpc|loop|sqlite3|event_base|event_new|evbuffer|bufferevent|nghttp2|protobuf_c|runtime__v1'
check "podctl has symbols" grep -q ' ctl_format_age$' "$tmp"
check "podctl reads logs with the node server's reader" grep -q ' logreader_step$' "$tmp"
check "no daemon or daemon library symbol in podctl" \
    sh -c "! grep -Eq ' [A-Za-z] ($daemon)_' '$tmp'"
check "no podctl server or reply code in podctl" \
    sh -c "! grep -Eq ' [A-Za-z] ctl_(new|free|reply_build|reply_node|reply_top|gen_event|inspect_start)$' '$tmp'"
check "no CRI JSON writer (the daemon's) in podctl" sh -c "! grep -q ' crijson_' '$tmp'"
if command -v readelf >/dev/null 2>&1; then
	check "podctl needs no daemon library" sh -c "! readelf -d '$PODCTL' | grep NEEDED |
	    grep -Eq 'sqlite|libevent|nghttp2|libssl|libcrypto|protobuf'"
fi
finish
