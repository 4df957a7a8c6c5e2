#!/bin/sh
# tests/fuzz/run.sh — builds the libFuzzer targets tests/fuzz/fuzz_*.c with clang (libFuzzer,
# ASan, UBSan; every source of src/ instrumented) and runs each, seeded from its committed
# corpus tests/fuzz/corpus/NAME (NAME: the target without "fuzz_" and "pod_").
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]      each target for SECONDS (default 15), as CI
#   tests/fuzz/run.sh --runs N [TARGET...]       each target for N executions (on demand:
#                                                --runs 10000000), however long that takes
#   --merge (before the targets)                 then merges what the run found into the
#                                                committed corpus (libFuzzer -merge=1: only
#                                                inputs that add coverage), for a campaign
#
# TARGET: e.g. fuzz_watch or watch (default: all). Prints one line per target with its
# executions; exits non-zero on a crash, leak, timeout or sanitizer report, and copies the
# reproducer to KLET_FUZZ_ARTIFACTS (default tests/fuzz/artifacts). Replay one with
#   KLET_FUZZ_BUILD=DIR tests/fuzz/run.sh 0 TARGET; DIR/fuzz_TARGET FILE
# KLET_FUZZ_BUILD=DIR keeps the build and the fuzzers' logs (DIR/log_NAME) in DIR (default: a
# temporary directory, removed).
# KLET_FUZZ_SEED=N gives libFuzzer -seed=N, so that a run is repeated exactly (contrib/test.sh,
# hence CI, uses seed 1: CI's short run replays the committed corpus and explores the same
# mutations each time, so it fails only on a regression; without it the seed is random, as a
# campaign wants). A failure prints the seed it ran with.
# Without clang it skips (77) unless KLET_REQUIRE_PEERS=1.
set -u
mode=time
secs=15
runs=0
merge=0
while [ $# -gt 0 ]; do
	case $1 in
	--runs) mode=runs; runs=${2:?--runs N}; shift 2 ;;
	--merge) merge=1; shift ;;
	-*) echo "usage: $0 [SECONDS | --runs N] [--merge] [TARGET...]" >&2; exit 2 ;;
	[0-9]*) secs=$1; shift ;;
	*) break ;;
	esac
done
top=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: $cc not found (apt-get install clang libclang-rt-14-dev)"
	[ "${KLET_REQUIRE_PEERS:-0}" = 1 ] && exit 1
	exit 77
fi
if [ -n "${KLET_FUZZ_BUILD:-}" ]; then
	bld=$KLET_FUZZ_BUILD
	mkdir -p "$bld" || exit 1
	tmp=$(mktemp -d /tmp/klet-fuzz.XXXXXX) || exit 1
	trap 'rm -rf "$tmp"' EXIT INT TERM
else
	tmp=$(mktemp -d /tmp/klet-fuzz.XXXXXX) || exit 1
	trap 'rm -rf "$tmp"' EXIT INT TERM
	bld=$tmp/build
	mkdir -p "$bld"
fi
pkgs="libevent libevent_openssl libnghttp2 openssl yajl sqlite3 yaml-0.1 libprotobuf-c libmd"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# The warnings of the main build (gcc), as clang sees them (clang also counts a positional
# initializer that leaves trailing fields to zero, which gcc does not).
warn="-Wall -Wextra -Werror -Wno-missing-field-initializers"
cflags="-g -O1 $warn $san -D_GNU_SOURCE -DKLET_VERSION=\"fuzz\" -I$top/src -I$bld -I$bld/schema/cri \
$(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -lm"

# The library: every source of src/ but the two programs, with the protobuf-c code.
lib=$bld/libklet-fuzz.a
stamp=$bld/lib.stamp
newest=$(find "$top/src" "$top/schema" "$top/mk/store.am" "$0" -newer "$stamp" 2>/dev/null | head -1)
if [ ! -f "$stamp" ] || [ -n "$newest" ]; then
	mkdir -p "$bld/schema/cri" "$bld/obj"
	protoc-c --c_out="$bld/schema/cri" -I"$top/schema/cri" "$top/schema/cri/api.proto" || exit 1
	sed -i 's|^#include <protobuf-c/protobuf-c.h>$|&\n#undef linux|' "$bld/schema/cri/api.pb-c.h"
	# store-schema.h as mk/store.am makes it (its STORE_SCHEMA list, in order).
	schema=$(sed -n 's/^STORE_SCHEMA *= *//p' "$top/mk/store.am")
	for f in $schema; do
		b=$(basename "$f" .sql)
		echo "{ \"$b\","
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$/\\n"/' "$top/$f"
		echo '},'
	done >"$bld/store-schema.h"
	rm -f "$bld"/obj/*.o "$lib" "$stamp"
	{ find "$top/src" -name '*.c' ! -path "$top/src/kletd.c" ! -path "$top/src/podctl/*"
	  echo "$bld/schema/cri/api.pb-c.c"; } >"$bld/srcs"
	export cc cflags bld
	# shellcheck disable=SC2016
	if ! xargs -P "${KLET_FUZZ_JOBS:-2}" -I{} sh -c \
	    'o=$bld/obj/$(echo "{}" | md5sum | cut -c1-12).o; $cc $cflags -fsanitize=fuzzer-no-link -c -o "$o" "{}"' \
	    <"$bld/srcs"; then
		echo "fuzz: building the library failed"
		exit 1
	fi
	ar rcs "$lib" "$bld"/obj/*.o && touch "$stamp" || exit 1
fi

targets=""
for t in "$@"; do
	case $t in fuzz_*) ;; *) t=fuzz_$t ;; esac
	[ -f "$top/tests/fuzz/$t.c" ] || { echo "fuzz: no target $t"; exit 2; }
	targets="$targets $t"
done
[ -n "$targets" ] || targets=$(cd "$top/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//')

# The fuzzers' logs: with KLET_FUZZ_BUILD, kept there (DIR/log_NAME).
logd=$tmp
[ -n "${KLET_FUZZ_BUILD:-}" ] && logd=$bld
status=0
for t in $targets; do
	name=${t#fuzz_}
	name=${name#pod_}
	bin=$bld/$t
	# shellcheck disable=SC2086
	if ! $cc $cflags -fsanitize=fuzzer -I"$top/tests/fuzz" -o "$bin" "$top/tests/fuzz/$t.c" \
	    "$lib" $libs; then
		echo "$t: build failed"
		status=1
		continue
	fi
	[ "$mode" = time ] && [ "$secs" = 0 ] && continue
	mkdir -p "$tmp/corpus_$name" "$tmp/art_$name" "$top/tests/fuzz/corpus/$name"
	dict=""
	for d in "$top/tests/fuzz/$name.dict" "$top/tests/fuzz/$t.dict"; do
		[ -f "$d" ] && dict="-dict=$d"
	done
	case $name in json | yaml | watch) dict="-dict=$top/tests/fuzz/pod.dict" ;; esac
	if [ "$mode" = runs ]; then limit="-runs=$runs"; else limit="-max_total_time=$secs"; fi
	[ -n "${KLET_FUZZ_SEED:-}" ] && limit="$limit -seed=$KLET_FUZZ_SEED"
	start=$(date +%s)
	# shellcheck disable=SC2086
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$bin" $limit -max_len="${KLET_FUZZ_MAX_LEN:-16384}" -rss_limit_mb=2048 -timeout=10 \
	    $dict -print_final_stats=1 -artifact_prefix="$tmp/art_$name/" \
	    "$tmp/corpus_$name" "$top/tests/fuzz/corpus/$name" >"$logd/log_$name" 2>&1 </dev/null
	rc=$?
	took=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logd/log_$name" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$logd/log_$name" | tail -1)
	if [ $rc -ne 0 ]; then
		status=1
		echo "$t: FAILED (exit $rc) after ${execs:-?} executions in ${took}s" \
		    "($(grep -o 'Seed: [0-9]*' "$logd/log_$name" | head -1))"
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$logd/log_$name" | head -20
		tail -40 "$logd/log_$name"
		keep=${KLET_FUZZ_ARTIFACTS:-$top/tests/fuzz/artifacts}
		mkdir -p "$keep" && cp "$tmp/art_$name"/* "$keep"/ 2>/dev/null &&
		    echo "$t: reproducer(s) copied to $keep"
	else
		ft=$(grep -o 'ft: [0-9]*' "$logd/log_$name" | tail -1)
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logd/log_$name" | tail -1)
		echo "$t: ${execs:-?} executions in ${took}s (${rate:-?}/s), ${cov:-cov: ?} edges," \
		    "${ft:-ft: ?} features, no findings"
	fi
	if [ "$merge" = 1 ]; then
		# What the run found, minimized into the committed corpus: only inputs that add
		# coverage to what is there already are copied.
		before=$(ls "$top/tests/fuzz/corpus/$name" | wc -l)
		# shellcheck disable=SC2086
		ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
		"$bin" -merge=1 -max_len="${KLET_FUZZ_MAX_LEN:-16384}" -rss_limit_mb=2048 \
		    -timeout=10 "$top/tests/fuzz/corpus/$name" "$tmp/corpus_$name" \
		    >"$logd/merge_$name" 2>&1 </dev/null || {
			echo "$t: merge failed"
			tail -20 "$logd/merge_$name"
			status=1
		}
		after=$(ls "$top/tests/fuzz/corpus/$name" | wc -l)
		echo "$t: corpus $before -> $after inputs," \
		    "$(cat "$top/tests/fuzz/corpus/$name"/* | wc -c) bytes"
	fi
done
exit $status
