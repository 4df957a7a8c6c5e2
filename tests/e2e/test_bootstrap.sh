#!/bin/sh
# TLS bootstrap and client certificate rotation against the API stand-in (fake CRI):
# kletd with --bootstrap-kubeconfig (a bootstrap token) and no usable --kubeconfig creates a
# CertificateSigningRequest, waits while it is pending, and once an admin approves it (kubectl
# certificate approve, or the approval PUT when kubectl is missing) writes its certificate and
# key under ROOT-DIR/pki and the kubeconfig, then joins as system:node:NAME. With
# --rotate-certificates it renews the certificate before it expires (the stand-in signs for
# 60 s here) and reconnects with it. A restart with a valid kubeconfig makes no CSR; a denied
# CSR stops kletd with the reason.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib_node.sh"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/apiserver/lib.sh"
node_setup_fake boot
trap 'node_cleanup; as_stop; [ -n "$fpid" ] && kill "$fpid" 2>/dev/null' EXIT
TOKEN=07401b.f395accd246ae52d
AS_NODE=$NODE
as_start "$T/as" --token "$TOKEN=system:bootstrap:07401b" --csr-cert-seconds 60
cat >"$T/bootstrap.kubeconfig" <<K
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$AS_URL", certificate-authority: "$AS_CERTS/ca.crt"}
users:
- name: u
  user: {token: "$TOKEN"}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
K
cat >"$T/admin.kubeconfig" <<K
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$AS_URL", certificate-authority: "$AS_CERTS/ca.crt"}
users:
- name: admin
  user: {client-certificate: "$AS_CERTS/admin.crt", client-key: "$AS_CERTS/admin.key"}
contexts:
- name: x
  context: {cluster: c, user: admin}
current-context: x
K
csrs() { as_curl "$AS_URL/apis/certificates.k8s.io/v1/certificatesigningrequests" |
    as_json "' '.join(i['metadata']['name'] for i in d['items'])"; }
approve() { # NAME
	if command -v kubectl >/dev/null 2>&1; then
		kubectl --kubeconfig "$T/admin.kubeconfig" certificate approve "$1"
	else
		as_curl -X PUT -H 'Content-Type: application/json' \
		    "$AS_URL/apis/certificates.k8s.io/v1/certificatesigningrequests/$1/approval" \
		    -d "{\"status\": {\"conditions\": [{\"type\": \"Approved\", \"status\": \"True\", \"reason\": \"Test\"}]}}"
	fi
}
KC=$T/root/kubelet.kubeconfig
start_kletd --bootstrap-kubeconfig "$T/bootstrap.kubeconfig" --kubeconfig "$KC" \
    --rotate-certificates
wait_for 200 logged 'waiting for its approval'
check "a CSR is made and kletd waits for it" logged 'certificate signing request csr-.* created'
csr1=$(csrs)
check "one CSR in the API ($csr1)" [ "$(echo $csr1 | wc -w)" -eq 1 ]
spec=$(as_curl "$AS_URL/apis/certificates.k8s.io/v1/certificatesigningrequests/$csr1" |
    as_json "d['spec']['signerName'] + ' ' + d['spec']['username'] + ' ' + ','.join(d['spec']['usages'])")
check "CSR: the kubelet signer, the bootstrap user, client usages ($spec)" \
    [ "$spec" = "kubernetes.io/kube-apiserver-client-kubelet system:bootstrap:07401b digital signature,client auth" ]
check "nothing is written while it is pending" [ ! -e "$KC" ]
approve "$csr1" >"$T/approve.out" 2>&1
sed 's/^/# /' "$T/approve.out"
wait_for 200 logged 'kletd ready'
check "kubeconfig written after the approval" test -s "$KC"
check "kubeconfig mode 0600" [ "$(stat -c %a "$KC")" = 600 ]
check "pki/kubelet-client-current.pem links to the dated file" \
    sh -c "readlink '$T/root/pki/kubelet-client-current.pem' | grep -q 'kubelet-client-20[0-9-]*\.pem$'"
check "the certificate and key file is 0600" \
    [ "$(stat -L -c %a "$T/root/pki/kubelet-client-current.pem")" = 600 ]
subj=$(openssl x509 -noout -subject -in "$T/root/pki/kubelet-client-current.pem" 2>/dev/null)
check "certificate for system:node:$NODE ($subj)" sh -c "echo '$subj' | grep -q 'CN *= *system:node:$NODE'"
node_there() { as_curl "$AS_URL/api/v1/nodes/$NODE" | grep -q "\"name\":\"$NODE\""; }
wait_for 200 node_there
check "the node registered with the issued certificate" node_there

# Rotation: due at 70-90 % of the 65 s validity; approve the renewal when it comes.
wait_for 700 sh -c "[ \$(echo \$(as_curl '$AS_URL/apis/certificates.k8s.io/v1/certificatesigningrequests' 2>/dev/null | grep -o '\"name\":\"csr-[a-z0-9]*\"' | sort -u) | wc -w) -ge 2 ]" 2>/dev/null
csr2=$(csrs | tr ' ' '\n' | grep -v "^$csr1\$" | head -1)
check "a renewal CSR before the certificate expires ($csr2)" [ -n "$csr2" ]
old=$(readlink "$T/root/pki/kubelet-client-current.pem")
[ -n "$csr2" ] && approve "$csr2" >/dev/null 2>&1
wait_for 200 logged 'client certificate reloaded'
check "the API client reconnects with the renewed certificate" logged 'client certificate reloaded'
check "kubelet-client-current.pem points at the new file" \
    [ "$(readlink "$T/root/pki/kubelet-client-current.pem")" != "$old" ]
n_lease() { as_ctl /log | grep -o "\"path\": *\"[^\"]*leases/$NODE\"" | wc -l; }
l0=$(n_lease)
wait_for 300 sh -c "[ \$(curl -sS http://127.0.0.1:$AS_CTL/log | grep -o '\"path\": *\"[^\"]*leases/$NODE\"' | wc -l) -gt $l0 ]"
check "the Lease is still renewed after the rotation" [ "$(n_lease)" -gt "$l0" ]

# A restart with a valid kubeconfig makes no CSR.
stop_kletd TERM
n=$(csrs | wc -w)
start_kletd --bootstrap-kubeconfig "$T/bootstrap.kubeconfig" --kubeconfig "$KC"
wait_for 100 logged 'has a valid client certificate'
check "restart: the kubeconfig is used as it is" logged 'has a valid client certificate'
check "restart: no new CSR" [ "$(csrs | wc -w)" -eq "$n" ]
stop_kletd TERM

# A denied CSR: kletd stops with the reason.
rm -f "$KC"
"$KLETD" --address 127.0.0.1 --port 0 --healthz-port 0 --root-dir "$T/root" --pod-logs-dir "$T/logs" --hostname-override "$NODE" \
    --container-runtime-endpoint "unix://$SOCK" --bootstrap-kubeconfig "$T/bootstrap.kubeconfig" \
    --kubeconfig "$KC" >"$T/deny.log" 2>&1 &
dpid=$!
wait_for 200 grep -q 'waiting for its approval' "$T/deny.log"
csr3=$(sed -n 's/.*certificate signing request \(csr-[a-z0-9]*\) .*/\1/p' "$T/deny.log" | head -1)
as_curl -X PUT -H 'Content-Type: application/json' \
    "$AS_URL/apis/certificates.k8s.io/v1/certificatesigningrequests/$csr3/approval" \
    -d '{"status": {"conditions": [{"type": "Denied", "status": "True", "reason": "NotThisNode", "message": "no"}]}}' >/dev/null
wait "$dpid"
rc=$?
check "denied: kletd exits 1 ($rc)" [ "$rc" -eq 1 ]
check "denied: the reason is logged" grep -q 'Denied: NotThisNode' "$T/deny.log"
check "denied: no kubeconfig written" [ ! -e "$KC" ]
check "no sanitizer report" sh -c "! grep -q 'AddressSanitizer\|runtime error' '$T/kletd.log' '$T/deny.log'"
finish
