#!/bin/sh
# Starts the fake CRI runtime: tests/fakecri/run.sh --socket PATH [fakecri.py options]
# Runs in the foreground; prints "fakecri: ready socket=PATH control=PATH pid=N" on
# stdout once it serves. Stop it with SIGTERM (it removes its sockets).
# Environment: KLET_PYTHON  the Python with grpcio (default: the first of /usr/bin/python3,
#                           python3 that imports grpc and grpc_tools)
# Exit 77 when no such Python exists (tests then skip).
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONDONTWRITEBYTECODE=1
py=${KLET_PYTHON-}
if [ -z "$py" ]; then
	for p in /usr/bin/python3 python3; do
		if "$p" -c 'import grpc, grpc_tools' >/dev/null 2>&1; then py=$p; break; fi
	done
fi
if [ -z "$py" ]; then
	echo "fakecri: no python3 with grpcio and grpc_tools (python3-grpcio python3-grpc-tools)" >&2
	exit 77
fi
exec "$py" "$here/fakecri.py" "$@"
