#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the Debian source package and its six binary packages, built
# with dpkg-buildpackage in a clean Debian root, then checked by lintian:
#
#   deb.sh SUITE OUTDIR VMLINUX_H [NEXT]
#
# SUITE is bookworm (Debian 12) or trixie (Debian 13). The source package
# (OUTDIR/capfence_VERSION.dsc, .tar.xz) is this tree's files (tracked and
# untracked, as git lists them; build/ excluded) plus debian/vmlinux.h, the
# kernel types the BPF object is compiled against (VMLINUX_H, dumped from
# Debian 12's stock cloud kernel), so that the build fetches no kernel.
# The build root is a minimal SUITE root (debootstrap --variant=minbase,
# build-essential; cached in build/deb/root-SUITE); each run installs
# lintian and debian/control's Build-Depends there with apt-get build-dep
# (nothing else installs them, so a missing one fails the build), then
# dpkg-buildpackage -us -uc, then lintian on the .changes. Fails on any
# lintian error or warning (overrides in debian/*.lintian-overrides say
# why). Output: OUTDIR/*.deb, OUTDIR/lintian.txt, OUTDIR/build.log. Root.
# NEXT (make check-deb's upgrade test): the same tree as version NEXT
# (module, CLI and changelog), a later version to upgrade to.
set -euo pipefail
die() { echo "deb: $*" >&2; exit 1; }
[ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: deb.sh SUITE OUTDIR VMLINUX_H [NEXT]"
suite=$1 out=$2 vmh=$3 next=${4:-}
case $suite in bookworm|trixie) ;; *) die "suite $suite: bookworm or trixie" ;; esac
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
[ -s "$vmh" ] || die "$vmh is missing (make build/lsm/vmlinux.h)"
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CAPFENCE_BUILD:-$top/build}
cd "$top"
version=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ -z "$next" ] || dpkg --compare-versions "$next" gt "$version" || die "NEXT $next is not later than $version"
root=$build/deb/root-$suite
mkdir -p "$out"
out=$(cd "$out" && pwd)
case $out in "$top"/*) ;; *) die "OUTDIR must be inside $top (the root sees only this tree)" ;; esac

# ---- the source package ----
t0=$(date +%s)
stage=$out/src
rm -rf "$stage" "$out"/*.deb "$out"/*.ddeb "$out"/*.dsc "$out"/*.tar.* "$out"/*.changes "$out"/*.buildinfo
mkdir -p "$stage/capfence-$version"
git ls-files -z --cached --others --exclude-standard | grep -zv '^build/' |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf - | tar -C "$stage/capfence-$version" -xf -
if [ -n "$next" ]; then
	d=$stage/capfence-$version
	sed -i "s/^#define CAPFENCE_VERSION \".*\"/#define CAPFENCE_VERSION \"$next\"/" "$d/kernel/version.h"
	sed -i "s/^#define CAPFENCE_CLI_VERSION \".*\"/#define CAPFENCE_CLI_VERSION \"$next\"/" "$d/tools/capfence/cli.h"
	{ echo "capfence ($next) $suite; urgency=medium"; echo
	  echo "  * Test upgrade: version $next of the same tree."; echo
	  echo " -- $(dpkg-parsechangelog -l debian/changelog -S Maintainer)  $(date -R)"; echo
	  cat "$d/debian/changelog"; } > "$d/debian/changelog.new"
	mv "$d/debian/changelog.new" "$d/debian/changelog"
	mv "$d" "$stage/capfence-$next"
	version=$next
fi
abi=$(cat "$build/kernel-6.1/release" 2>/dev/null || echo "6.1")
{ echo "/* SPDX-License-Identifier: GPL-2.0 */"
  echo "/* bpftool btf dump file vmlinux format c, of Debian 12's linux-image-$abi */"
  cat "$vmh"; } > "$stage/capfence-$version/debian/vmlinux.h"
(cd "$stage" && dpkg-source -q -b "capfence-$version") >/dev/null
rm -rf "$stage/capfence-$version"

# ---- the clean build root ----
# lintian comes later, through apt: debootstrap cannot resolve its
# virtual dependencies (perl-openssl-abi-3)
"$top/tools/build/buildroot.sh" make "$suite" "$root" build-essential
cp -L /etc/resolv.conf "$root/etc/resolv.conf"

# ---- build and check, in the root ----
echo "deb: dpkg-buildpackage capfence $version in a clean $suite root (log $out/build.log)"
t1=$(date +%s)
rc=0
"$top/tools/build/buildroot.sh" run "$root" "$stage" /bin/bash -c '
	set -e
	export DEBIAN_FRONTEND=noninteractive
	dsc=$(ls *.dsc)
	dpkg-source -q -x "$dsc" tree
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends lintian >/dev/null
	apt-get build-dep -y -q --no-install-recommends ./tree >/dev/null
	t=$(date +%s)
	(cd tree && dpkg-buildpackage -us -uc)
	echo "deb: dpkg-buildpackage $(( $(date +%s) - t )) s"
	rm -rf tree
	lintian --info --display-info --pedantic --show-overrides *.changes > lintian.txt 2>&1 || true
' > "$out/build.log" 2>&1 || rc=$?
grep '^deb: dpkg-buildpackage' "$out/build.log" || :
[ "$rc" = 0 ] || { tail -30 "$out/build.log" >&2; die "the package build failed (log $out/build.log)"; }
mv "$stage"/*.deb "$stage"/*.dsc "$stage"/*.tar.* "$stage"/*.changes "$stage"/*.buildinfo "$stage/lintian.txt" "$out/"
mv "$stage"/*.ddeb "$out/" 2>/dev/null || :
rm -rf "$stage"
ls "$out"/*.deb | sed 's|.*/|deb: |'
# E: and W: fail; I: (info) and P: (pedantic) are printed for the record
tags=$(grep -E '^[EWIPX]: ' "$out/lintian.txt" || :)
[ -z "$tags" ] || { echo "deb: lintian:"; sed 's/^/  /' <<<"$tags"; }
bad=$(grep -cE '^[EW]: ' "$out/lintian.txt" || :)
echo "deb: $suite packages in $out ($(( $(date +%s) - t0 )) s; lintian: $bad errors/warnings, $(grep -cE '^[IP]: ' "$out/lintian.txt" || :) info/pedantic, $(grep -c '^O: ' "$out/lintian.txt" || :) overridden)"
[ "$bad" = 0 ] || die "lintian reports errors or warnings ($out/lintian.txt)"
