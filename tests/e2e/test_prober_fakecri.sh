#!/bin/sh
# Probes through kletd against the fake gRPC CRI and local listeners: exec success, failure
# with output, a command timing out (liveness restart), httpGet (headers, a same-host
# redirect, 500, HTTPS to a self-signed server), tcpSocket open and closed, and a runtime whose ExecSync never answers
# (probes fail by deadline, the loop keeps running).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
node_setup_fake prf
hpid=
gpid=
trap 'node_cleanup; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null; [ -n "$hpid" ] && kill "$hpid" 2>/dev/null; [ -n "$gpid" ] && kill "$gpid" 2>/dev/null' EXIT

# A local HTTP listener on 127.0.0.1 (an ephemeral port written to $T/port), and the same
# over TLS with a self-signed certificate ($T/tport).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=probe \
    -keyout "$T/tls.key" -out "$T/tls.crt" >/dev/null 2>&1
cat >"$T/srv.py" <<'P'
import http.server, ssl, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/redir":
            self.send_response(302); self.send_header("Location", "/ok"); self.end_headers()
        elif self.path == "/redirbad":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:%d/boom" % self.server.server_address[1])
            self.end_headers()
        elif self.path == "/ok":
            self.send_response(200); self.end_headers(); self.wfile.write(b"x" * 100000)
        elif self.path == "/hdr":
            ok = self.headers.get("X-Probe") == "yes"
            self.send_response(200 if ok else 403); self.end_headers()
        else:
            self.send_response(500); self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
t = http.server.HTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[3], sys.argv[4])
t.socket = ctx.wrap_socket(t.socket, server_side=True)
threading.Thread(target=t.serve_forever, daemon=True).start()
open(sys.argv[2], "w").write(str(t.server_address[1]))
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
P
$PY "$T/srv.py" "$T/port" "$T/tport" "$T/tls.crt" "$T/tls.key" &
hpid=$!
wait_for 100 test -s "$T/port"
PORT=$(cat "$T/port")
TPORT=$(cat "$T/tport")
# A gRPC health server (grpcio, raw bytes: no generated code): service "" and "ok" are
# SERVING, "down" NOT_SERVING.
cat >"$T/health.py" <<'P'
import grpc, sys, time
from concurrent import futures
def check(req, ctx):
    svc = req[2:].decode() if len(req) > 2 else ""
    return b"\x08\x02" if svc == "down" else b"\x08\x01"
h = grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
    "Check": grpc.unary_unary_rpc_method_handler(check, request_deserializer=lambda b: b,
                                                 response_serializer=lambda b: b)})
s = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
s.add_generic_rpc_handlers((h,))
port = s.add_insecure_port("127.0.0.1:0")
s.start()
open(sys.argv[1], "w").write(str(port))
while True:
    time.sleep(3600)
P
$PY "$T/health.py" "$T/gport" &
gpid=$!
wait_for 100 test -s "$T/gport"
GPORT=$(cat "$T/gport")
# A port nobody listens on: bind, take the number, close.
CLOSED=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

pod() { # NAME PROBES(yaml, indented 4)
	put "$1.yaml" <<M
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: klet.local/busybox:1.35
    command: [sleep, inf]
$2
M
}
rp() { # readinessProbe with HANDLER
	printf '    readinessProbe:\n      %s\n      periodSeconds: 1\n' "$1"
}
pod execok "$(rp 'exec: {command: [fake-exec, "0"]}')"
pod execbad "$(rp 'exec: {command: [sh, -c, "echo bad output; exit 3"]}')"
pod slowexec '    livenessProbe:
      exec: {command: [sleep, "5"]}
      timeoutSeconds: 1
      periodSeconds: 1
      failureThreshold: 1'
pod redir "$(rp "httpGet: {host: 127.0.0.1, port: $PORT, path: /redir}")"
pod redirbad "$(rp "httpGet: {host: 127.0.0.1, port: $PORT, path: /redirbad}")"
pod hdr "$(rp "httpGet: {host: 127.0.0.1, port: $PORT, path: /hdr, httpHeaders: [{name: X-Probe, value: 'yes'}]}")"
pod nohdr "$(rp "httpGet: {host: 127.0.0.1, port: $PORT, path: /hdr}")"
pod err500 "$(rp "httpGet: {host: 127.0.0.1, port: $PORT, path: /boom}")"
pod httpsok "$(rp "httpGet: {host: 127.0.0.1, port: $TPORT, path: /ok, scheme: HTTPS}")"
pod httpsplain "$(rp "httpGet: {host: 127.0.0.1, port: $PORT, path: /ok, scheme: HTTPS}")"
pod tcpopen "$(rp "tcpSocket: {port: $PORT}")"
pod tcpclosed "$(rp "tcpSocket: {host: 127.0.0.1, port: $CLOSED}")"
pod grpcok "$(rp "grpc: {port: $GPORT, service: ok}")"
pod grpcdown "$(rp "grpc: {port: $GPORT, service: down}")"
pod grpcclosed "$(rp "grpc: {port: $CLOSED}")"

start_kletd
res() { grep -q "probe pod=default/$1-prf container=c $2: $3 -> $4" "$T/kletd.log"; }
failed() { grep -q "probe failed pod=default/$1-prf container=c $2: $3" "$T/kletd.log"; }
wait_for 200 res execok readiness failure success
check "exec exit 0: ready" res execok readiness failure success
wait_for 100 failed execbad readiness "bad output"
check "exec exit 3: failure with its output" failed execbad readiness "bad output"
wait_for 100 failed slowexec liveness "command timed out"
check "exec timing out: command timed out" failed slowexec liveness "command timed out"
wait_for 200 restarts_at_least slowexec c 1
check "liveness failure by timeout: restarted" restarts_at_least slowexec c 1
wait_for 100 res redir readiness failure success
check "httpGet: same-host redirect followed, capped body" res redir readiness failure success
wait_for 100 failed redirbad readiness "HTTP probe failed with statuscode: 500"
check "httpGet: absolute same-host redirect followed to a 500" failed redirbad readiness "HTTP probe failed with statuscode: 500"
wait_for 100 res hdr readiness failure success
check "httpGet: httpHeaders sent" res hdr readiness failure success
wait_for 100 failed nohdr readiness "HTTP probe failed with statuscode: 403"
check "httpGet: 403 without the header" failed nohdr readiness "HTTP probe failed with statuscode: 403"
wait_for 100 failed err500 readiness "HTTP probe failed with statuscode: 500"
check "httpGet: 500 is a failure" failed err500 readiness "HTTP probe failed with statuscode: 500"
wait_for 100 res httpsok readiness failure success
check "httpGet HTTPS: a self-signed server, not verified (as the kubelet): ready" res httpsok readiness failure success
wait_for 100 failed httpsplain readiness "Get \"https://127.0.0.1:$PORT\": tls: "
check "httpGet HTTPS to a plain port: a TLS failure" failed httpsplain readiness "Get \"https://127.0.0.1:$PORT\": tls: "
wait_for 100 res tcpopen readiness failure success
check "tcpSocket: open port (host defaults to the pod IP, host network)" res tcpopen readiness failure success
wait_for 100 failed tcpclosed readiness "dial tcp 127.0.0.1:$CLOSED: connect: Connection refused"
check "tcpSocket: closed port refused" failed tcpclosed readiness "dial tcp 127.0.0.1:$CLOSED: connect"
wait_for 100 res grpcok readiness failure success
check "grpc: Health/Check SERVING over h2c: ready" res grpcok readiness failure success
wait_for 100 failed grpcdown readiness "service unhealthy"
check "grpc: NOT_SERVING is a failure" failed grpcdown readiness 'service unhealthy (responded with "NOT_SERVING")'
wait_for 100 failed grpcclosed readiness "failed to connect"
check "grpc: closed port is a failure" failed grpcclosed readiness "failed to connect"
check "grpc: closed port never ready" sh -c "! grep -q 'grpcclosed-prf container=c readiness: failure -> success' $T/kletd.log"

# The runtime stops answering ExecSync: checks end by their deadline, nothing blocks.
$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"fault","method":"ExecSync","hang":true}' >/dev/null
wait_for 100 res execok readiness success failure
check "ExecSync never answers: readiness fails by deadline" res execok readiness success failure
check "  ... as a timeout" failed execok readiness "command timed out"
n=$(grep -c "probe failed pod=default/tcpclosed-prf" "$T/kletd.log")
more() { [ "$(grep -c "probe failed pod=default/tcpclosed-prf" "$T/kletd.log")" -gt $((n + 2)) ]; }
wait_for 100 more
check "other probes keep running meanwhile" more
$PY "$top/tests/fakecri/ctl.py" "$SOCK.ctl" '{"cmd":"clear_faults"}' >/dev/null
wait_for 100 sh -c "[ \$(grep -c 'probe pod=default/execok-prf container=c readiness: failure -> success' $T/kletd.log) -ge 2 ]"
check "answers again: ready again" sh -c "[ \$(grep -c 'probe pod=default/execok-prf container=c readiness: failure -> success' $T/kletd.log) -ge 2 ]"
check "kletd alive" kill -0 "$kpid"
stop_kletd
finish
