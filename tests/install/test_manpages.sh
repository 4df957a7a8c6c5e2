#!/bin/sh
# The man pages cannot drift from the code: every flag `kletd --help` prints is in kletd(8)
# and the other way round; the same for podctl(1)'s commands and options, and for the
# configuration fields src/core/config_file.c reads and klet-config(5).
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
b=${top_builddir:-.}
T=$(mktemp -d /tmp/klet-man.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

# Section SECTION of a man page: the first word after .B/.BI/.BR of each entry, unescaped.
man_words() { # PAGE SECTION
	awk -v sec="$2" '/^\.SH/ {on = ($2 == sec); next}
	    on && /^\.(B|BI|BR) / {w = $2; gsub(/\\-/, "-", w); gsub(/\\f[BIR]/, "", w); print w}' "$1" |
	    sort -u
}
# Long flags and -v of kletd --help.
"$b/kletd" --help >"$T/kletd.help" 2>&1
grep -oE '^ +(--[a-z-]+|-v)' "$T/kletd.help" | tr -d ' ' >"$T/help.flags"
grep -oE -- '--(help|version)' "$T/kletd.help" >>"$T/help.flags"
sort -u -o "$T/help.flags" "$T/help.flags"
man_words "$top/doc/kletd.8" OPTIONS >"$T/man.flags"
check "kletd --help lists flags" [ "$(wc -l <"$T/help.flags")" -gt 20 ]
missing=$(comm -23 "$T/help.flags" "$T/man.flags" | tr '\n' ' ')
extra=$(comm -13 "$T/help.flags" "$T/man.flags" | tr '\n' ' ')
[ -z "$missing" ] || echo "# in kletd --help, not in kletd.8: $missing"
[ -z "$extra" ] || echo "# in kletd.8, not in kletd --help: $extra"
check "kletd(8) has every flag of kletd --help" [ -z "$missing" ]
check "kletd(8) has no flag kletd lacks" [ -z "$extra" ]

# podctl: commands (first word of each line under Commands:) and long options.
"$b/podctl" --help >"$T/podctl.help" 2>&1
awk '/^Commands:/ {on = 1; next} /^$/ || /^Options:/ {on = 0} on {print $1}' "$T/podctl.help" |
    sort -u >"$T/help.cmds"
man_words "$top/doc/podctl.1" COMMANDS >"$T/man.cmds"
check "podctl --help lists commands" [ "$(wc -l <"$T/help.cmds")" -ge 5 ]
check "podctl(1) has exactly podctl's commands" cmp -s "$T/help.cmds" "$T/man.cmds"
cmp -s "$T/help.cmds" "$T/man.cmds" || diff "$T/help.cmds" "$T/man.cmds" | sed 's/^/# /'
grep -oE -- '--[a-z-]+' "$T/podctl.help" | sort -u >"$T/help.opts"
awk '/^\.SH/ {on = ($2 == "OPTIONS"); next} on' "$top/doc/podctl.1" | sed 's/\\-/-/g' |
    grep -oE -- '--[a-z-]+' | sort -u >"$T/man.opts"
check "podctl(1) has exactly podctl's long options" cmp -s "$T/help.opts" "$T/man.opts"
cmp -s "$T/help.opts" "$T/man.opts" || diff "$T/help.opts" "$T/man.opts" | sed 's/^/# /'

# Configuration fields: the cf_fields table of config_file.c against klet-config(5).
awk '/cf_fields\[\] = \{/ {on = 1; next} on && /^\};/ {on = 0} on' "$top/src/core/config_file.c" |
    grep -oE '^[[:space:]]*\{ "[A-Za-z.]+"' | grep -oE '"[^"]+"' | tr -d '"' | sort -u >"$T/code.fields"
man_words "$top/doc/klet-config.5" FIELDS >"$T/man.fields"
check "config_file.c reads fields" [ "$(wc -l <"$T/code.fields")" -gt 10 ]
check "klet-config(5) has exactly the fields config_file.c reads" cmp -s "$T/code.fields" "$T/man.fields"
cmp -s "$T/code.fields" "$T/man.fields" || diff "$T/code.fields" "$T/man.fields" | sed 's/^/# /'
finish
