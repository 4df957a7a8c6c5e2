# lib.sh — start and drive the API server stand-in from shell tests (source after tap.sh).
# as_start DIR [apiserver args...]: certificates in DIR/certs, the server's log in DIR/as.log;
#   sets AS_PID AS_PORT AS_CTL AS_URL AS_CERTS. Skips (77) without python3-h2 unless
#   KLET_REQUIRE_PEERS=1. as_stop stops it. as_ctl PATH [curl args]: the control port.
#   as_curl ARGS: curl --http2 against the API with the node's client certificate.
#   as_kubeconfig FILE [NODE]: writes a kubeconfig with the node's certificate.
#   as_down [refuse|blackhole] / as_up: the API unreachable and back (state kept).
_as_here=$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)
AS_DIR=${top_srcdir:+$top_srcdir/tests/apiserver}
AS_DIR=${AS_DIR:-$_as_here}
AS_PID=

as_python() {
	for p in /usr/bin/python3 python3; do
		if "$p" -c 'import h2.connection' 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}

as_start() {
	_d=$1; shift
	AS_PY=$(as_python) || {
		if [ "${KLET_REQUIRE_PEERS:-0}" = 1 ]; then
			echo "not ok - python3-h2 is required (KLET_REQUIRE_PEERS=1)"; exit 1
		fi
		skip_all "python3-h2 is not installed"
	}
	command -v openssl >/dev/null || skip_all "openssl is not installed"
	AS_CERTS=$_d/certs
	sh "$AS_DIR/mkcerts.sh" "$AS_CERTS" "${AS_NODE:-node1}" || { echo "mkcerts failed"; exit 1; }
	rm -f "$_d/as.state"
	"$AS_PY" "$AS_DIR/apiserver.py" --certs "$AS_CERTS" --state-file "$_d/as.state" "$@" \
	    >"$_d/as.log" 2>&1 &
	AS_PID=$!
	_n=100
	while [ ! -s "$_d/as.state" ] && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	[ -s "$_d/as.state" ] || { echo "the stand-in did not start:"; cat "$_d/as.log"; exit 1; }
	read -r AS_PORT AS_CTL <"$_d/as.state"
	AS_URL=https://127.0.0.1:$AS_PORT
}

as_stop() {
	[ -n "$AS_PID" ] && kill "$AS_PID" 2>/dev/null && wait "$AS_PID" 2>/dev/null
	AS_PID=
}

as_ctl() {
	_p=$1; shift
	curl -sS --max-time 30 "$@" "http://127.0.0.1:$AS_CTL$_p"
}

as_curl() {
	curl -sS --max-time 30 --http2 --cacert "$AS_CERTS/ca.crt" --cert "$AS_CERTS/node.crt" \
	    --key "$AS_CERTS/node.key" "$@"
}

as_kubeconfig() {
	cat >"$1" <<EOK
apiVersion: v1
kind: Config
clusters:
- name: standin
  cluster:
    server: $AS_URL
    certificate-authority: $AS_CERTS/ca.crt
users:
- name: node
  user:
    client-certificate: $AS_CERTS/node.crt
    client-key: $AS_CERTS/node.key
contexts:
- name: standin
  context:
    cluster: standin
    user: node
current-context: standin
EOK
}

# as_json EXPR: reads JSON on stdin, prints the Python expression EXPR over it (as d).
as_json() {
	"${AS_PY:-python3}" -c "import json,sys; d=json.load(sys.stdin); print($1)"
}

# as_down [refuse|blackhole]: the API becomes unreachable (open connections dropped; the port
#   refuses, or accepts and never answers) until as_up; objects and history are kept.
as_down() { as_ctl "/down?mode=${1:-refuse}" >/dev/null; }
as_up() { as_ctl /up >/dev/null; }
