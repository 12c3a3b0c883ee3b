#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A guest overlay with Python for the VM tests of the capfence package:
#   pyroot.sh OUT SDK
# OUT gets Debian's python3 (the host's /usr/bin/python3.X, its standard
# library without tests, GUI and build files, every extension module and
# the libraries they load), pytest from python3-pytest, PyYAML from
# python3-yaml (for the kernel's ynl in the spec's VM test), and from SDK (a
# `make install PREFIX=/usr DESTDIR=SDK`) libcapfence.so.1 and the capfence
# package, as they are installed.
# selftests/vm/run --overlay OUT copies it into the guest.
set -euo pipefail
out=$1 sdk=$2
so=$sdk/usr/lib/libcapfence.so.1
py=$(readlink -f /usr/bin/python3)
ver=$(basename "$py")			# python3.11
dp=/usr/lib/python3/dist-packages
[ -x "$py" ] || { echo "pyroot: no /usr/bin/python3 (apt-get install python3)" >&2; exit 1; }
[ -d "$dp/_pytest" ] || { echo "pyroot: no pytest (apt-get install python3-pytest)" >&2; exit 1; }
rm -rf "$out.tmp"
mkdir -p "$out.tmp/usr/bin" "$out.tmp/usr/lib" "$out.tmp$dp"

# a file and the shared libraries it loads, at their own paths
deps() {
	ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r l; do
		[ -e "$out.tmp$l" ] || { mkdir -p "$out.tmp$(dirname "$l")"; cp -L "$l" "$out.tmp$l"; }
	done
}
cp -L "$py" "$out.tmp/usr/bin/python3"
deps "$py"
( cd /usr/lib && tar -c --exclude='test' --exclude='tests' --exclude='idlelib' \
	--exclude='tkinter' --exclude='turtledemo' --exclude='ensurepip' \
	--exclude='lib2to3' --exclude='pydoc_data' --exclude='config-*' \
	--exclude='*.opt-1.pyc' --exclude='*.opt-2.pyc' --exclude='_test*.so' \
	--exclude='_xx*.so' --exclude='xxlimited*.so' "$ver" ) | tar -x -C "$out.tmp/usr/lib"
for so_mod in "$out.tmp/usr/lib/$ver/lib-dynload"/*.so; do
	deps "/usr/lib/$ver/lib-dynload/$(basename "$so_mod")"
done
# pytest and the python3-* packages it depends on (dpkg's file lists)
# and python3-yaml, which the kernel's ynl (the netlink spec's VM test) needs
pkgs="python3-pytest python3-yaml $(dpkg-query -W -f='${Depends}' python3-pytest | tr ',' '\n' |
	sed -n 's/^ *\(python3-[a-z0-9.-]*\).*/\1/p' | sort -u)"
for pkg in $pkgs; do
	{ dpkg -L "$pkg" 2>/dev/null || true; } | { grep "^$dp/" || true; } | while read -r f; do
		[ -f "$f" ] || continue
		mkdir -p "$out.tmp$(dirname "$f")"
		cp -a "$f" "$out.tmp$f"
		case $f in *.so) deps "$f" ;; esac
	done
done
# the library and the package, as make install PREFIX=/usr put them
[ -e "$so" ] || { echo "pyroot: $so missing (make install PREFIX=/usr DESTDIR=$sdk)" >&2; exit 1; }
cp -a "$sdk"/usr/lib/libcapfence.so* "$out.tmp/usr/lib/"
deps "$so"
cp -a "$sdk$dp/capfence" "$out.tmp$dp/capfence"
find "$out.tmp$dp/capfence" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$out"
mv "$out.tmp" "$out"
