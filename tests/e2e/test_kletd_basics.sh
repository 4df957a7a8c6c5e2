#!/bin/sh
# Black-box checks of the kletd binary: start, timers at -v=4, OpenSSL loaded only at the first
# TLS handshake (and never a plain reply on the HTTPS port when it cannot be), SIGTERM, restart
# on the same root dir, a second daemon refused, SIGHUP reopening the log file, bad flags.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLETD=${top_builddir:-.}/kletd
tmp=$(mktemp -d /tmp/klet-basics.XXXXXX)
trap 'kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
pid=

start() { # start LOGFILE ARGS...
	log=$1; shift
	"$KLETD" --root-dir "$tmp/root" --container-runtime-endpoint "unix://$tmp/none.sock" \
	    --address 127.0.0.1 --port 0 --healthz-port 0 "$@" >"$log" 2>&1 &
	pid=$!
}

# 1. Bad flags: one line naming the flag, exit 2, nothing created.
out=$("$KLETD" --root-dir "$tmp/never" --max-pods=lots 2>&1); rc=$?
check "bad flag exits 2" [ "$rc" -eq 2 ]
check "bad flag names it" sh -c "echo '$out' | grep -q 'invalid value \"lots\" for flag --max-pods'"
check "bad flag creates nothing" [ ! -e "$tmp/never" ]
"$KLETD" --bogus >/dev/null 2>&1; check "unknown flag exits 2" [ $? -eq 2 ]
"$KLETD" --help >/dev/null 2>&1; check "--help exits 0" [ $? -eq 0 ]
check "--version prints it" sh -c "'$KLETD' --version | grep -q '^kletd [0-9]'"

# 2. Start with -v=4: timers logged, ready.
start "$tmp/run1.log" -v=4
wait_for 50 grep -q 'kletd ready' "$tmp/run1.log"
check "daemon logs ready" grep -q 'kletd ready' "$tmp/run1.log"
for t in relist sync housekeeping status lease; do
	check "timer $t logged at -v=4" grep -q "timer $t registered" "$tmp/run1.log"
done
check "klog line format" grep -Eq '^I[0-9]{4} [0-9:.]{15} +[0-9]+ [a-z_-]+\.c:[0-9]+\] ' "$tmp/run1.log"
check "root dir created 0700" sh -c "[ \$(stat -c %a '$tmp/root') = 700 ]"

# 2b. OpenSSL costs nothing until TLS is used (issue 19): kletd is not linked with it, an idle
# kletd (its HTTPS listener up, nobody connected) maps none of it; the first handshake on the
# HTTPS port loads it, and the request is answered as before.
tls_mapped() { grep -qE '/(libssl|libcrypto|libevent_openssl)[-.][^/]*$' "/proc/$pid/maps"; }
tls_unmapped() { ! tls_mapped; }
tls_unlinked() { ! objdump -p "$KLETD" | grep -qE 'NEEDED.*(libssl|libcrypto|libevent_openssl)'; }
check "kletd is not linked with OpenSSL" tls_unlinked
check "an idle kletd maps no OpenSSL" tls_unmapped
port=$(sed -n 's/.*serving HTTPS on 127.0.0.1 port \([0-9]*\).*/\1/p' "$tmp/run1.log" | tail -1)
code=$(curl -ks -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/pods")
check "HTTPS answers without credentials: 401 ($code)" [ "$code" = 401 ]
check "the first handshake loaded OpenSSL" tls_mapped
check "its loading is logged" grep -q 'TLS: libcrypto.* loaded' "$tmp/run1.log"

# 3. A second daemon on the same root dir is refused.
"$KLETD" --root-dir "$tmp/root" >"$tmp/second.log" 2>&1; rc=$?
check "second daemon refused" [ "$rc" -ne 0 ]
check "second daemon says why" grep -q 'another kletd is running' "$tmp/second.log"

# 4. SIGTERM: exit 0 within 1 s.
kill -TERM $pid
t0=$(date +%s%N)
wait $pid; rc=$?
t1=$(date +%s%N)
check "SIGTERM exit 0" [ "$rc" -eq 0 ]
check "SIGTERM exit within 1s" [ $(( (t1 - t0) / 1000000 )) -lt 1000 ]
check "shutdown logged" grep -q 'shutting down' "$tmp/run1.log"

# 5. Restart on the same root dir, with a log file reopened on SIGHUP.
start "$tmp/run2.out" --log-file "$tmp/klet.log"
wait_for 50 grep -q 'kletd ready' "$tmp/klet.log"
check "restart on the same root dir" grep -q 'kletd ready' "$tmp/klet.log"
mv "$tmp/klet.log" "$tmp/klet.log.1"
kill -HUP $pid
wait_for 50 test -s "$tmp/klet.log"
check "SIGHUP reopens the log file" grep -q 'reopening the log file' "$tmp/klet.log.1"
check "new log file written after SIGHUP" test -s "$tmp/klet.log"
kill -INT $pid; wait $pid; rc=$?
check "SIGINT exit 0" [ "$rc" -eq 0 ]

# 6. Where OpenSSL cannot be loaded (KLET_TEST_NO_TLS stands for the libraries' absence), the
# HTTPS port never serves in plain: a request that comes without TLS gets a 503, not the pods.
KLET_TEST_NO_TLS=1 start "$tmp/run3.log"
wait_for 50 grep -q 'kletd ready' "$tmp/run3.log"
port=$(sed -n 's/.*serving HTTPS on 127.0.0.1 port \([0-9]*\).*/\1/p' "$tmp/run3.log" | tail -1)
check "no TLS: the handshake fails" sh -c "! curl -ksf -m 5 https://127.0.0.1:$port/pods"
code=$(curl -s -m 5 -o "$tmp/plain.out" -w '%{http_code}' "http://127.0.0.1:$port/pods")
check "no TLS: a plain request gets 503 ($code)" [ "$code" = 503 ]
check "no TLS: and not the pods" sh -c "! grep -q PodList '$tmp/plain.out'"
check "no TLS: the reason is logged" grep -q 'TLS is unavailable' "$tmp/run3.log"
kill -TERM $pid; wait $pid; rc=$?
check "no TLS: SIGTERM exit 0" [ "$rc" -eq 0 ]
pid=
finish
