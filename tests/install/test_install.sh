#!/bin/sh
# make install into a DESTDIR puts exactly the documented tree in place (kletd in sbin,
# podctl in bin, the systemd unit with the configured paths, the default config, man pages,
# bash and zsh completion), and make uninstall removes exactly that.
set -u
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/tap.sh"
b=${top_builddir:-.}
D=$(mktemp -d /tmp/klet-install.XXXXXX) || exit 1
trap 'rm -rf "$D"' EXIT
prefix=$(sed -n 's/^prefix = //p' "$b/Makefile")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$b/Makefile" | sed "s|\${prefix}|$prefix|")
make -s -C "$b" install DESTDIR="$D" >"$D.log" 2>&1
check "make install succeeds" [ $? -eq 0 ]
[ -s "$D.log" ] && sed 's/^/# /' "$D.log" | tail -20
rm -f "$D.log"
(cd "$D" && find . -type f | sort) >"$D/../klet-install-list.$$"
sed 's/^/# /' "$D/../klet-install-list.$$"
has() { grep -q "^\.$1\$" "$D/../klet-install-list.$$"; }
check "kletd in sbin" has "$prefix/sbin/kletd"
check "podctl in bin" has "$prefix/bin/podctl"
check "systemd unit" has "$prefix/lib/systemd/system/kletd.service"
check "default config" has "$sysconfdir/klet/config.yaml"
check "kletd(8)" has "$prefix/share/man/man8/kletd.8"
check "podctl(1)" has "$prefix/share/man/man1/podctl.1"
check "klet-config(5)" has "$prefix/share/man/man5/klet-config.5"
check "bash completion" has "$prefix/share/bash-completion/completions/podctl"
check "zsh completion" has "$prefix/share/zsh/vendor-completions/_podctl"
localstatedir=$(sed -n 's/^localstatedir = //p' "$b/Makefile" | sed "s|\${prefix}|$prefix|")
check "the unit's writable state directory exists" [ -d "$D$localstatedir/lib/klet" ]
unit=$D$prefix/lib/systemd/system/kletd.service
check "unit: Type=notify" grep -q '^Type=notify$' "$unit"
check "unit: KillMode=process" grep -q '^KillMode=process$' "$unit"
check "unit: the installed kletd and config" grep -q "^ExecStart=$prefix/sbin/kletd --config $sysconfdir/klet/config.yaml" "$unit"
check "unit: no unsubstituted @...@" sh -c "! grep -q '@[a-z]*@' '$unit'"
check "the default config is accepted by kletd" sh -c "'$b/kletd' --config '$D$sysconfdir/klet/config.yaml' --container-runtime-endpoint unix:///nonexistent --root-dir /nonexistent/x --help >/dev/null 2>&1"
if command -v systemd-analyze >/dev/null 2>&1; then
	# systemd's own parser: unknown keys or bad values are reported.
	out=$(sed "s|^ExecStart=[^ ]*|ExecStart=/bin/true|" "$unit" >"$D/kletd.service" &&
	    systemd-analyze verify "$D/kletd.service" 2>&1 | grep -v "Command 'man" | grep -v 'not executable\|Failed to\|No such file\|containerd.service\|Cannot add dependency' || true)
	[ -n "$out" ] && echo "$out" | sed 's/^/# /'
	check "systemd-analyze verify: no complaint about the unit" [ -z "$out" ]
	rm -f "$D/kletd.service"
fi
make -s -C "$b" uninstall DESTDIR="$D" >/dev/null 2>&1
left=$(cd "$D" && find . -type f | sort)
check "make uninstall removes every installed file" [ -z "$left" ]
rm -f "$D/../klet-install-list.$$"
finish
