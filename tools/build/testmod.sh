#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test-only module selftests/kernel/seqwrap for a kernel prepared
# by kernel.sh:   testmod.sh KERNELDIR [BUILDROOT]
# The objects go to KERNELDIR/testmod; selftests/vm/run puts seqwrap.ko in
# the guest's /usr/lib/capfence-test/ (fs_mediation_test loads it).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$(cd "$1" && pwd)
broot=${2:-}
out=$kdir/testmod
mkdir -p "$out"
ln -sfn "$top/selftests/kernel/seqwrap/Kbuild" "$out/Kbuild"
ln -sfn "$top/selftests/kernel/seqwrap/seqwrap.c" "$out/seqwrap.c"
hdr=$(readlink -f "$kdir/headers")
if [ -n "$broot" ]; then
	run=("$top/tools/build/buildroot.sh" run "$broot" "$out")
else
	run=()
fi
"${run[@]}" make -s -C "$hdr" M="$out" modules > "$out/build.log" 2>&1 ||
	{ cat "$out/build.log" >&2; echo "testmod: the build for $(cat "$kdir/release") failed" >&2; exit 1; }
