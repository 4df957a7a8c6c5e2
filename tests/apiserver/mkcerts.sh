#!/bin/sh
# mkcerts.sh DIR [NODE]: creates a CA, a server certificate for 127.0.0.1 / localhost / ::1,
# a node client certificate (CN=system:node:NODE, O=system:nodes) and an admin client
# certificate (CN=admin, O=system:masters), all signed by the CA, plus a second unrelated CA
# (other-ca.crt) for negative tests. Files: ca.crt ca.key server.crt server.key node.crt
# node.key admin.crt admin.key other-ca.crt. Idempotent: existing files are kept.
set -eu
dir=${1:?usage: mkcerts.sh DIR [NODE]}
node=${2:-node1}
mkdir -p "$dir"
cd "$dir"
[ -f ca.crt ] && [ -f node.crt ] && [ -f server.crt ] && exit 0
ossl() { openssl "$@" >/dev/null 2>&1 || { echo "mkcerts.sh: openssl $1 failed" >&2; exit 1; }; }

ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -keyout ca.key -out ca.crt -subj "/CN=klet-test-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -keyout other-ca.key -out other-ca.crt -subj "/CN=klet-other-ca" \
    -addext "basicConstraints=critical,CA:TRUE"

leaf() { # leaf NAME SUBJECT EXTFILE-CONTENT
	name=$1 subj=$2 ext=$3
	printf '%s\n' "$ext" >"$name.ext"
	ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	    -keyout "$name.key" -out "$name.csr" -subj "$subj"
	ossl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
	    -out "$name.crt" -extfile "$name.ext"
	rm -f "$name.csr" "$name.ext"
}
leaf server "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost"
leaf node "/O=system:nodes/CN=system:node:$node" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
leaf admin "/O=system:masters/CN=admin" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
chmod 600 ./*.key
