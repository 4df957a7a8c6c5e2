#!/bin/sh
# Black-box checks of kletd's store: <root-dir>/klet.db created 0600 in WAL mode with the
# schema, a restart reopening the same database (rows kept, no migration again), and a
# database that is newer than the binary or not a database refused (exit 1, clear message,
# file untouched).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
KLETD=${top_builddir:-.}/kletd
command -v sqlite3 >/dev/null 2>&1 || skip_all "sqlite3 command not installed"
tmp=$(mktemp -d /tmp/klet-store.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
db=$tmp/root/klet.db

run() { # run LOGFILE: starts kletd, waits until ready, stops it with SIGTERM; returns its rc
	"$KLETD" --address 127.0.0.1 --port 0 --healthz-port 0 --root-dir "$tmp/root" --container-runtime-endpoint "unix://$tmp/none.sock" \
	    >"$1" 2>&1 &
	pid=$!
	wait_for 100 grep -q 'kletd ready' "$1"
	kill -TERM $pid
	wait $pid
	_rc=$?
	pid=
	return $_rc
}

# 1. First start: the database is created and migrated.
run "$tmp/run1.log"; check "first start exits 0" [ $? -eq 0 ]
check "klet.db created" [ -f "$db" ]
check "klet.db mode 0600" sh -c "[ \$(stat -c %a '$db') = 600 ]"
check "migration applied" grep -q 'applied migration 001-init' "$tmp/run1.log"
check "WAL mode" sh -c "[ \$(sqlite3 '$db' 'PRAGMA journal_mode') = wal ]"
check "user_version set" sh -c "[ \$(sqlite3 '$db' 'PRAGMA user_version') -ge 1 ]"
ver=$(sqlite3 "$db" 'PRAGMA user_version')

# 2. A restart reopens the same database: rows survive, nothing is migrated again.
sqlite3 "$db" "INSERT INTO meta (key, value) VALUES ('probe', 'kept')"
run "$tmp/run2.log"; check "restart exits 0" [ $? -eq 0 ]
check "restart opens the store" grep -q "store $db: open" "$tmp/run2.log"
check "restart does not migrate again" sh -c "! grep -q 'applied migration' '$tmp/run2.log'"
check "rows kept across restart" sh -c "[ \$(sqlite3 '$db' \"SELECT value FROM meta WHERE key = 'probe'\") = kept ]"
check "user_version kept" sh -c "[ \$(sqlite3 '$db' 'PRAGMA user_version') = $ver ]"

# 3. A database from a newer klet: refused, exit 1, untouched.
sqlite3 "$db" "PRAGMA user_version = 9999"
cp -p "$db" "$tmp/newer.copy"
"$KLETD" --root-dir "$tmp/root" >"$tmp/newer.log" 2>&1; rc=$?
check "newer database: exit 1" [ "$rc" -eq 1 ]
check "newer database: says why" grep -q 'newer than this kletd' "$tmp/newer.log"
check "newer database: untouched" cmp "$db" "$tmp/newer.copy"

# 4. Not a database: refused, exit 1, untouched.
rm -f "$db" "$db-wal" "$db-shm"
printf 'this is not a database, it is a note\n' >"$db"
cp -p "$db" "$tmp/garbage.copy"
"$KLETD" --root-dir "$tmp/root" >"$tmp/garbage.log" 2>&1; rc=$?
check "garbage database: exit 1" [ "$rc" -eq 1 ]
check "garbage database: says why" grep -q 'not a usable SQLite database' "$tmp/garbage.log"
check "garbage database: untouched" cmp "$db" "$tmp/garbage.copy"
finish
