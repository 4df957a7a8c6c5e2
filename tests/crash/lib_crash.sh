# lib_crash.sh — what the crash test wrappers share. Source it first; it sets top, build and
# PY (the Python with grpcio), skip MESSAGE (77, or a failure with KLET_REQUIRE_PEERS=1),
# crash_seed (a fresh random seed) and crash_run N DESCRIPTION SCRIPT ARGS...: runs
# tests/crash/SCRIPT in the background (stopped by crash_stop, which the EXIT trap set here
# calls, pass or fail), prints the TAP line "ok N" / "not ok N" and returns its exit code
# (77 skips the whole test).
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${top_builddir:-.}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

skip() {
	if [ "${KLET_REQUIRE_PEERS:-0}" = 1 ]; then
		echo "not ok - peers required: $*"; echo "0 passed, 1 failed"; exit 1
	fi
	echo "1..0 # SKIP $*"; exit 77
}

crash_seed() { od -An -N3 -tu4 /dev/urandom | tr -d ' '; }

crash_pid=
crash_stop() {
	[ -n "$crash_pid" ] && kill "$crash_pid" 2>/dev/null && wait "$crash_pid" 2>/dev/null
	crash_pid=
}
trap crash_stop EXIT
trap 'exit 1' INT TERM

crash_run() { # N DESCRIPTION SCRIPT ARGS...
	_n=$1 _desc=$2 _script=$3
	shift 3
	$PY "$top/tests/crash/$_script" "$@" &
	crash_pid=$!
	wait "$crash_pid"
	_rc=$?
	crash_pid=
	case $_rc in
	0) echo "ok $_n - $_desc" ;;
	77) skip "$_script: a peer is missing" ;;
	*) echo "not ok $_n - $_desc" ;;
	esac
	return $_rc
}
