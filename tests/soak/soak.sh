#!/bin/sh
# tests/soak/soak.sh [MINUTES] [soak.py options] — on demand (not in make check): kletd for
# MINUTES (default 60) against the API server stand-in and the fake CRI with pods churning,
# API outages and compactions, fake-runtime restarts and kill -9 every few minutes; then
# checks that everything converged and prints the figures (RSS slope after warm-up,
# descriptors, database size, leftovers of deleted pods). See tests/soak/soak.py for the
# options. kletd: $KLETD, else BUILD/kletd with top_builddir=BUILD, else ./build/kletd.
# Use a build without sanitizers for the memory figures. Root (cgroups), python3-grpcio,
# python3-h2 and openssl.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
min=60
case ${1:-} in [0-9]*) min=$1; shift ;; esac
kletd=${KLETD:-${top_builddir:-$top/build}/kletd}
exec /usr/bin/python3 "$top/tests/soak/soak.py" --kletd "$kletd" --minutes "$min" "$@"
