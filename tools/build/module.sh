#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build capfence.ko for a kernel prepared by kernel.sh, out of the source
# tree:   module.sh KERNELDIR [BUILDROOT]
# The objects go to KERNELDIR/module (a tree of symlinks to the sources),
# so modules for several kernels build from one tree without clobbering
# each other. With BUILDROOT, the build runs in that Debian root
# (buildroot.sh): Debian 13's headers need its gcc-14, pahole and glibc.
# Module BTF is mandatory: kfuncs are invisible to libbpf without it, and
# Kbuild only says "Skipping BTF generation" before exiting 0.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$(cd "$1" && pwd)
broot=${2:-}
mod=$kdir/module
mkdir -p "$mod/kernel"
ln -sfn "$top/Kbuild" "$mod/Kbuild"
ln -sfn "$top/include" "$mod/include"
# sources removed from the tree leave no link behind
find "$mod/kernel" -maxdepth 1 -type l ! -exec test -e {} \; -delete
for f in "$top"/kernel/*.[ch]; do ln -sfn "$f" "$mod/kernel/"; done
hdr=$(readlink -f "$kdir/headers")
if [ -n "$broot" ]; then
	run=("$top/tools/build/buildroot.sh" run "$broot" "$mod")
else
	run=()
fi
set +e
# on every core, a make of its own (not the caller's jobserver)
"${run[@]}" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j"${JOBS:-$(nproc)}" -C "$hdr" M="$mod" modules 2>&1 | tee "$mod/build.log" |
	grep -v -e '^make\[' -e 'Entering directory' -e 'Leaving directory'
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || { echo "module: the build for $(cat "$kdir/release") failed" >&2; exit 1; }
if grep -q 'Skipping BTF generation' "$mod/build.log"; then
	echo "error: module BTF was not generated; kfuncs would be unusable" >&2
	rm -f "$mod/capfence.ko"; exit 1
fi
readelf -S "$mod/capfence.ko" | grep -q '\.BTF ' ||
	{ echo "error: $mod/capfence.ko has no .BTF" >&2; rm -f "$mod/capfence.ko"; exit 1; }
