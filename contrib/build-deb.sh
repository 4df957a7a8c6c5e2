#!/bin/sh
# contrib/build-deb.sh — builds the Debian package (klet_VERSION_ARCH.deb) from a clean copy of
# the committed tree (git archive HEAD), runs lintian on it and lists its contents. Installs
# debhelper, dpkg-dev, fakeroot and lintian with apt-get when missing. Run as root from the
# top of the tree. The .deb, .buildinfo and .changes land in OUT (default ./build-deb/).
#   KLET_DEB_OUT=DIR   where the results go
#   KLET_DEB_CHECK=0   skip the unit tests in the package build (DEB_BUILD_OPTIONS=nocheck)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${KLET_DEB_OUT:-$top/build-deb}
need=""
for p in debhelper dpkg-dev fakeroot lintian; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || need="$need $p"
done
if [ -n "$need" ]; then
	echo "build-deb: installing:$need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
sh contrib/deps.sh >/dev/null
work=$(mktemp -d /tmp/klet-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/klet" "$out"
git archive HEAD | tar -x -C "$work/klet"
[ "${KLET_DEB_CHECK:-1}" = 1 ] || export DEB_BUILD_OPTIONS=nocheck
(cd "$work/klet" && dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) || {
	tail -40 "$work/build.log"
	echo "build-deb: dpkg-buildpackage failed"
	exit 1
}
for f in "$work"/klet_*; do cp "$f" "$out/"; done
deb=$(ls "$out"/klet_*.deb | tail -1)
echo "build-deb: $deb"
dpkg-deb -c "$deb" | awk '{print "  " $NF}'
lintian --tag-display-limit 0 "$deb" >"$work/lintian.out" 2>&1 || true
sed 's/^/  lintian: /' "$work/lintian.out"
e=$(grep -c '^E:' "$work/lintian.out" || true)
w=$(grep -c '^W:' "$work/lintian.out" || true)
echo "build-deb: lintian: $e errors, $w warnings"
[ "$e" -eq 0 ]
