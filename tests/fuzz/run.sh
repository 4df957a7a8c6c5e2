#!/bin/sh
# tests/fuzz/run.sh SECONDS — builds the pod decoder fuzz targets with clang (libFuzzer,
# ASan, UBSan) into a temporary directory and runs each for SECONDS (default 20), seeded from
# tests/fuzz/corpus/{json,yaml}. Exits non-zero on a crash, leak or sanitizer report.
# Without clang it skips (77) unless KLET_REQUIRE_PEERS=1.
set -u
secs=${1:-20}
top=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: $cc not found (apt-get install clang libclang-rt-14-dev)"
	[ "${KLET_REQUIRE_PEERS:-0}" = 1 ] && exit 1
	exit 77
fi
tmp=$(mktemp -d /tmp/klet-fuzz.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
-fno-omit-frame-pointer -D_GNU_SOURCE -I$top/src $(pkg-config --cflags yajl yaml-0.1)"
libs="$(pkg-config --libs yajl yaml-0.1) -lm"
srcs="$top/src/pod/pod.c $top/src/pod/decode.c $top/src/pod/validate.c $top/src/core/json.c \
$top/src/core/util.c $top/src/core/log.c"
status=0
for t in json yaml; do
	bin=$tmp/fuzz_pod_$t
	# shellcheck disable=SC2086
	if ! $cc $cflags -o "$bin" "$top/tests/fuzz/fuzz_pod_$t.c" $srcs $libs; then
		echo "fuzz_pod_$t: build failed"
		status=1
		continue
	fi
	mkdir -p "$tmp/corpus_$t" "$tmp/art_$t"
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$bin" -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048 -timeout=10 \
	    -dict="$top/tests/fuzz/pod.dict" -print_final_stats=1 \
	    -artifact_prefix="$tmp/art_$t/" \
	    "$tmp/corpus_$t" "$top/tests/fuzz/corpus/$t" >"$tmp/log_$t" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log_$t" | tail -1)
	if [ $rc -ne 0 ]; then
		status=1
		echo "fuzz_pod_$t: FAILED (exit $rc) after ${execs:-?} executions"
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$tmp/log_$t" | head -20
		tail -40 "$tmp/log_$t"
		keep=${KLET_FUZZ_ARTIFACTS:-$top/tests/fuzz/artifacts}
		mkdir -p "$keep" && cp "$tmp/art_$t"/* "$keep"/ 2>/dev/null &&
		    echo "fuzz_pod_$t: reproducer(s) copied to $keep"
	else
		echo "fuzz_pod_$t: ${execs:-?} executions in ${secs}s, no findings"
	fi
done
exit $status
