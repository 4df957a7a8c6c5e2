#!/bin/sh
# Installs every build and test dependency of klet with apt-get (Debian 12). Idempotent:
# packages already present are not fetched again. Run as root.
set -e
PKGS="build-essential autoconf automake libtool pkg-config
libevent-dev libnghttp2-dev libssl-dev libyajl-dev libsqlite3-dev libyaml-dev
libprotobuf-c-dev protobuf-c-compiler libcmocka-dev libmd-dev libxxhash-dev
clang libclang-rt-14-dev valgrind clang-format
python3 python3-grpcio python3-grpc-tools python3-pkg-resources python3-h2 python3-yaml
python3-cryptography python3-prometheus-client python3-dbus python3-gi dbus-daemon systemd
containerd runc containernetworking-plugins busybox-static iproute2 util-linux
sqlite3 curl openssl"
# kubectl for the node server's end-to-end test: Debian's kubernetes-client, unless a kubectl
# is already installed (another package owning /usr/bin/kubectl would conflict with it).
command -v kubectl >/dev/null 2>&1 || PKGS="$PKGS kubernetes-client"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps.sh: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "deps.sh: all dependencies present"
