#!/bin/sh
# tests/style/test_format.sh — fails when clang-format (the tree's .clang-format) would change
# a C file under src/ or tests/; prints the files and the first lines of the difference.
# Fix with `make format`. Skips (77) without clang-format, unless KLET_REQUIRE_PEERS=1.
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1
if ! command -v clang-format >/dev/null 2>&1; then
	echo "clang-format not found"
	[ "${KLET_REQUIRE_PEERS:-0}" = 1 ] && exit 1
	exit 77
fi
files=$(find src tests -name '*.[ch]' | sort)
bad=0
for f in $files; do
	if ! clang-format --style=file "$f" | cmp -s "$f" -; then
		echo "not formatted: $f"
		clang-format --style=file "$f" | diff -u "$f" - | sed -n '3,20p'
		bad=$((bad + 1))
	fi
done
echo "$(echo "$files" | wc -l) files checked, $bad not formatted"
[ "$bad" -eq 0 ]
