#!/bin/sh
# Developer build: contrib/dev-build.sh NAME [make args...]
# Builds this tree out of tree in /tmp/klet-build-NAME (ASan+UBSan unless KLET_CONFIGURE_FLAGS
# says otherwise, e.g. KLET_CONFIGURE_FLAGS='CFLAGS="-O2 -g"'). The autotools files are
# regenerated under a lock, so several builds of the same tree may run at once.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
name=${1:-default}
[ $# -gt 0 ] && shift
b=/tmp/klet-build-$name
(
	flock 9
	cd "$top"
	if [ ! -f configure ] || [ ! -f Makefile.in ] ||
	    [ -n "$(find configure.ac Makefile.am mk -newer Makefile.in 2>/dev/null)" ]; then
		autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
	fi
) 9>/tmp/klet-autoreconf.lock
mkdir -p "$b"
cd "$b"
if [ ! -f config.status ] || [ "$top/configure" -nt config.status ]; then
	# KLET_CONFIGURE_FLAGS is split as the shell would ('CFLAGS="-O2 -g"' stays one word).
	eval "\"\$top/configure\" -q ${KLET_CONFIGURE_FLAGS---enable-sanitizers}"
elif [ "$top/Makefile.in" -nt Makefile ]; then
	./config.status -q
fi
exec make -j2 -s "$@"
