#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own generic netlink tooling, from Debian 13's
# linux-source-6.12 package (Debian 12 ships no YNL):
#   ynl.sh OUTDIR  -> OUTDIR/cli.py, OUTDIR/ynl-gen-c.py, OUTDIR/lib/
#                     (tools/net/ynl) and OUTDIR/schemas/
#                     (Documentation/netlink/*.yaml)
# Done once per package version (OUTDIR/version). The package's 150 MB are
# downloaded through build/apt-trixie's lists and removed after; only the
# two scripts and two directories are kept (ynl-gen-c.py generates
# kernel/netlink_gen.[ch]: tools/build/netlink-gen.sh).
set -eu
out=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CAPFENCE_BUILD:-$top/build}
. "$top/tools/build/trixie-apt.sh"
pkg=linux-source-6.12
ver=$(apt-cache "$@" show "$pkg" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
if [ -z "$ver" ]; then
	apt-get "$@" update -q >/dev/null 2>&1 || true
	ver=$(apt-cache "$@" show "$pkg" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
fi
[ -n "$ver" ] || { echo "ynl.sh: $pkg not found in Debian 13's lists" >&2; exit 1; }
[ -f "$out/version" ] && [ "$(cat "$out/version")" = "$ver" ] && [ -x "$out/cli.py" ] &&
	[ -x "$out/ynl-gen-c.py" ] && exit 0
echo "ynl: $pkg $ver"
tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
(cd "$tmp" && apt-get "$@" download -q "$pkg=$ver" >/dev/null 2>&1) ||
	{ echo "ynl.sh: apt-get download $pkg=$ver failed" >&2; rm -rf "$tmp"; exit 1; }
dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb |
	tar -x -C "$tmp" --wildcards '*/linux-source-6.12.tar.xz'
src=linux-source-6.12
tar -C "$tmp" -xf "$tmp/usr/src/$src.tar.xz" --wildcards \
	"$src/tools/net/ynl/cli.py" "$src/tools/net/ynl/ynl-gen-c.py" \
	"$src/tools/net/ynl/lib/*" "$src/Documentation/netlink/*.yaml"
rm -rf "$out"
mkdir -p "$out/schemas"
cp -a "$tmp/$src/tools/net/ynl/cli.py" "$tmp/$src/tools/net/ynl/ynl-gen-c.py" \
	"$tmp/$src/tools/net/ynl/lib" "$out/"
cp -a "$tmp/$src/Documentation/netlink/"*.yaml "$out/schemas/"
rm -rf "$tmp"
echo "$ver" > "$out/version"
