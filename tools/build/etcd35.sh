#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# etcd 3.5 (etcd, etcdctl, etcdutl) from Debian 13's etcd-server and
# etcd-client, for the fleet test that restores a backup the way 3.5
# allows (etcdutl snapshot restore --bump-revision --mark-compacted);
# Debian 12's etcd is 3.4, which has neither:
#   etcd35.sh OUTDIR  -> OUTDIR/bin/{etcd,etcdctl,etcdutl}, OUTDIR/version
# The packages are downloaded through build/apt-trixie's lists, never
# installed; Debian 12's libc runs the binaries (they need glibc >= 2.34).
set -eu
out=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CAPFENCE_BUILD:-$top/build}
. "$top/tools/build/trixie-apt.sh"
ver=$(apt-cache "$@" show etcd-server 2>/dev/null | awk '/^Version:/ { print $2; exit }')
if [ -z "$ver" ]; then
	apt-get "$@" update -q >/dev/null 2>&1 || true
	ver=$(apt-cache "$@" show etcd-server 2>/dev/null | awk '/^Version:/ { print $2; exit }')
fi
[ -n "$ver" ] || { echo "etcd35.sh: etcd-server not found in Debian 13's lists" >&2; exit 1; }
[ -f "$out/version" ] && [ "$(cat "$out/version")" = "$ver" ] && [ -x "$out/bin/etcdutl" ] && exit 0
echo "etcd: Debian 13's etcd-server and etcd-client $ver"
tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/x"
(cd "$tmp" && apt-get "$@" download -q "etcd-server=$ver" "etcd-client=$ver" >/dev/null 2>&1) ||
	{ echo "etcd35.sh: apt-get download etcd-server=$ver etcd-client=$ver failed" >&2; rm -rf "$tmp"; exit 1; }
for d in "$tmp"/*.deb; do
	dpkg-deb -x "$d" "$tmp/x"
done
rm -rf "$out"
mkdir -p "$out/bin"
for b in etcd etcdctl etcdutl; do
	mv "$tmp/x/usr/bin/$b" "$out/bin/$b"
done
"$out/bin/etcd" --version | grep -q '^etcd Version: 3\.5\.' ||
	{ echo "etcd35.sh: $out/bin/etcd is not 3.5" >&2; exit 1; }
echo "$ver" > "$out/version"
rm -rf "$tmp"
