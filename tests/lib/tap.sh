# tap.sh — tiny helpers for shell tests: check NAME CMD..., wait_for TENTHS CMD..., finish.
# Prints "ok"/"not ok" lines and ends with "N passed, N failed"; exit 1 on any failure.
_pass=0
_fail=0
check() {
	_name=$1; shift
	if "$@" >/dev/null 2>&1; then
		_pass=$((_pass + 1)); echo "ok - $_name"
	else
		_fail=$((_fail + 1)); echo "not ok - $_name"
	fi
}
# Polls CMD every 0.1 s, at most TENTHS times; returns CMD's last status.
wait_for() {
	_n=$1; shift
	while [ "$_n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1; _n=$((_n - 1))
	done
	return 1
}
skip_all() {
	echo "SKIP: $*"; exit 77
}
finish() {
	echo "$_pass passed, $_fail failed"
	[ "$_fail" -eq 0 ]
}
