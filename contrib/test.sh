#!/bin/sh
# contrib/test.sh — installs what the tests need, builds with ASan+UBSan, runs the whole suite
# (unit, fake-CRI, real containerd, black-box kletd), a valgrind leak check of the unit tests,
# bounded fuzzing of the decoders and `make distcheck`; ends with "N passed, N failed".
# Run as root from the top of the tree. Environment:
#   KLET_SKIP_DISTCHECK=1  skip the distcheck step     KLET_FUZZ_SECONDS=N  per fuzz target (15)
#   KLET_FUZZ_SEED=N       the fuzzers' seed (1: the same mutations each run; a campaign is
#                          tests/fuzz/run.sh --runs N, random seeds)
set -u
t_start=$(date +%s)
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${KLET_TEST_BUILD:-$top/build-test}
vbuild=$top/build-valgrind
passed=0
failed=0
failures=""
say() { printf '\n=== %s (at %ss)\n' "$*" $(( $(date +%s) - t_start )); }
# The TESTS list of a configured build, filtered by a pattern.
tests_of() { # tests_of BUILD PATTERN
	printf 'print-tests:\n\t@echo $(TESTS)\n' | make -s -C "$1" -f Makefile -f - print-tests |
	    tr ' ' '\n' | grep -E "$2" | tr '\n' ' '
}
step() { # step NAME CMD...: one counted step outside automake's harness
	name=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "PASS: $name"
	else failed=$((failed + 1)); failures="$failures $name"; echo "FAIL: $name"; fi
}

say "dependencies"
sh contrib/deps.sh || { echo "0 passed, 1 failed"; exit 1; }

say "autoreconf + configure (sanitizers)"
autoreconf -fi >/dev/null 2>&1 || autoreconf -fi || exit 1
mkdir -p "$build"
(cd "$build" && "$top/configure" -q --enable-sanitizers) || { echo "0 passed, 1 failed"; exit 1; }

say "build"
make -C "$build" -j2 -s || { echo "0 passed, 1 failed"; exit 1; }

# The pod cgroups (pod* under any kubepods) before the suite, so that the last step can tell
# which ones this run left behind.
podcgs_now() {
	find /sys/fs/cgroup -type d -path '*kubepods*' -name 'pod*' 2>/dev/null | sort
}
podcgs_before=$(mktemp /tmp/klet-podcgs.XXXXXX)
podcgs_now >"$podcgs_before"

say "test suite (ASan+UBSan, LeakSanitizer on)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export KLET_REQUIRE_PEERS=${KLET_REQUIRE_PEERS:-1}
make -C "$build" -j1 check >"$build/check.out" 2>&1
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' "$build/check.out"
for trs in $(find "$build" -name '*.trs'); do
	res=$(sed -n 's/^:test-result: //p' "$trs" | head -1)
	name=${trs#"$build/"}; name=${name%.trs}
	case $res in
	PASS) passed=$((passed + 1)) ;;
	SKIP) if [ "$KLET_REQUIRE_PEERS" = 1 ]; then failed=$((failed + 1)); failures="$failures $name(skipped)"; else echo "skipped: $name"; fi ;;
	*) failed=$((failed + 1)); failures="$failures $name"
	   echo "--- $name.log"; tail -40 "$build/$name.log" ;;
	esac
done

say "leak check: unit tests under valgrind (no sanitizers)"
mkdir -p "$vbuild"
(cd "$vbuild" && [ -f Makefile ] || "$top/configure" -q CFLAGS="-O1 -g") &&
    make -C "$vbuild" -j2 -s check TESTS= >/dev/null || { failed=$((failed + 1)); failures="$failures valgrind-build"; }
vunits=$(tests_of "$vbuild" '^tests/unit/test_[a-z0-9_]+$')
[ -n "$vunits" ] || { failed=$((failed + 1)); failures="$failures valgrind(no-unit-tests)"; }
for t in $vunits; do
	t=$vbuild/$t
	[ -x "$t" ] || { failed=$((failed + 1)); failures="$failures $t(missing)"; continue; }
	step "valgrind $(basename "$t")" sh -c "cd '$vbuild' && top_srcdir='$top' top_builddir='$vbuild' \
	    valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
	    --error-exitcode=9 '$t' >'$t.valgrind.log' 2>&1 || { tail -30 '$t.valgrind.log'; exit 1; }"
done

if [ -x tests/fuzz/run.sh ]; then
	say "fuzzing the parsers of outside input (${KLET_FUZZ_SECONDS:-15}s per target)"
	step "fuzz" env KLET_FUZZ_SEED="${KLET_FUZZ_SEED:-1}" sh tests/fuzz/run.sh "${KLET_FUZZ_SECONDS:-15}"
fi

say "Debian package (dpkg-buildpackage, lintian)"
step "debian-package" sh -c "KLET_DEB_CHECK=0 KLET_DEB_OUT='$build/deb' sh contrib/build-deb.sh >'$build/deb.out' 2>&1 || { tail -40 '$build/deb.out'; exit 1; }"
# The package installed with apt-get under a real systemd (in private namespaces), on containerd.
dtmp="/tmp/klet-t$(printf %s "$(cd "$build" && pwd)" | cksum | cut -d' ' -f1)"
step "debian-package-systemd" sh -c "deb=\$(ls '$build'/deb/klet_*.deb | tail -1) && cd '$build' &&
    KLET_DEB=\$deb KLET_REQUIRE_PEERS=1 top_srcdir='$top' top_builddir='$build' KLET_TEST_TMP='$dtmp' \
    KLET_TEST_CGROUP_ROOT='/$(basename "$dtmp")' sh '$top/tests/install/test_deb_systemd.sh' >'$build/deb-systemd.out' 2>&1 ||
    { tail -40 '$build/deb-systemd.out'; exit 1; }"

if [ "${KLET_SKIP_DISTCHECK:-0}" != 1 ]; then
	say "make distcheck (unit tests only)"
	# The tarball must build everything and pass the unit tests; the peer tests ran above.
	units=$(tests_of "$build" '^tests/unit/')
	step "distcheck" sh -c "cd '$build' && KLET_REQUIRE_PEERS=0 KLET_UNIT_ONLY=1 make -s distcheck TESTS='$units' >'$build/distcheck.out' 2>&1 || { tail -40 '$build/distcheck.out'; exit 1; }"
fi

say "nothing left behind by the tests"
# The containerd instances of this run (KLET_TEST_TMP of each build dir, as in Makefile.am)
# are stopped by the tests but kept for reuse; the run ends by purging them: containerd,
# shims, mounts, the bridge kletNN and its network claim go.
ttmp_of() { echo "/tmp/klet-t$(printf %s "$(cd "$1" 2>/dev/null && pwd || echo "$1")" | cksum | cut -d' ' -f1)"; }
ttmps="$(ttmp_of "$build") $(ttmp_of "$vbuild")"
bridges=""
for c in /tmp/klet-cni-nets/[0-9]*; do
	[ -f "$c" ] || continue
	for t in $ttmps; do
		case $(cat "$c") in "$t"/*) bridges="$bridges klet${c##*/}" ;; esac
	done
done
for t in $ttmps; do
	for d in "$t"/*/; do
		[ -f "$d/config.toml" ] || continue
		KLET_CONTAINERD_DIR=${d%/} sh contrib/containerd-down.sh --purge >/dev/null 2>&1
	done
done
left_behind() {
	for p in $(pgrep -x kletd 2>/dev/null); do
		case $(readlink "/proc/$p/exe" 2>/dev/null) in "$build"/*|"$vbuild"/*) echo "kletd:$p" ;; esac
	done
	for t in $ttmps; do
		for c in $(find /proc -maxdepth 2 -name cmdline -path '/proc/[0-9]*' \
		    -exec grep -lsF -- "$t/" {} + 2>/dev/null); do
			p=${c#/proc/}; p=${p%/cmdline}
			comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue # gone (the grep itself)
			[ "$comm" = grep ] || echo "$comm:$p"
		done
	done
}
left=$(left_behind)
if [ -z "$left" ]; then passed=$((passed + 1)); echo "PASS: no process left running"
else failed=$((failed + 1)); failures="$failures left-running"; echo "FAIL: left running: $left"; fi
left=""
for b in $bridges; do ip link show "$b" >/dev/null 2>&1 && left="$left $b"; done
if [ -z "$left" ]; then passed=$((passed + 1)); echo "PASS: no bridge left (this run's:${bridges:- none})"
else failed=$((failed + 1)); failures="$failures left-bridges"; echo "FAIL: bridges left:$left"; fi
# Mounts under this run's dirs; pod cgroups that appeared during the run (another run at the
# same time on this machine would be counted too). The empty pod cgroups found are removed
# afterwards (rmdir refuses a cgroup that still has processes or children).
left=$(awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
	for d in $ttmps "$build" "$vbuild"; do
		case $m in "$d"/*) echo "$m" ;; esac
	done
done)
if [ -z "$left" ]; then passed=$((passed + 1)); echo "PASS: no mount left under$ttmps $build $vbuild"
else failed=$((failed + 1)); failures="$failures left-mounts"; echo "FAIL: mounts left:"; echo "$left" | head -20; fi
# The tests' pods had their cgroups under this build's own --cgroup-root
# (KLET_TEST_CGROUP_ROOT, /klet-tHASH as in Makefile.am): with containerd purged above, the
# tree is empty and goes, deepest first, in every hierarchy; what stays (a cgroup that still
# holds a process) is reported below.
for t in $ttmps; do
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		r=$h$(basename "$t")
		[ -d "$r" ] && find "$r" -depth -type d -exec rmdir {} + 2>/dev/null
	done
done
# Another run's tests and benches keep their pod cgroups under roots of their own
# (/klet-tHASH of its build, /klet-bench-*, /klet-soak-*, /klet-scale-*): those are not this
# run's, so that two runs on one machine do not fail each other.
ours=$(for t in $ttmps; do printf '/%s/\n' "$(basename "$t")"; done)
left=$(podcgs_now | grep -vxF -f "$podcgs_before" | while read -r d; do
	case $d in */klet-*/*)
		printf '%s\n' "$ours" | while read -r o; do
			case $d in *"$o"*) echo "$d" ;; esac
		done ;;
	*) echo "$d" ;;
	esac
done)
rm -f "$podcgs_before"
if [ -z "$left" ]; then passed=$((passed + 1)); echo "PASS: no pod cgroup left"
else
	failed=$((failed + 1)); failures="$failures left-cgroups"
	echo "FAIL: $(echo "$left" | wc -l) pod cgroups left, e.g.:"; echo "$left" | head -10
	echo "$left" | sort -r | while read -r d; do rmdir "$d" 2>/dev/null; done
fi

say "summary"
echo "took $(( $(date +%s) - t_start ))s"
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
