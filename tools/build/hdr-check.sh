#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Each header of kernel/ compiles alone, first in a file of its own, with
# the module's flags against a kernel prepared by kernel.sh:
#     hdr-check.sh KERNELDIR [BUILDROOT]
# Prints one TAP line per header; exits 1 when any fails. The objects go to
# KERNELDIR/hdrcheck (never linked).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$(cd "$1" && pwd)
broot=${2:-}
dir=$kdir/hdrcheck
rm -rf "$dir"
mkdir -p "$dir/kernel"
ln -sfn "$top/include" "$dir/include"
objs=()
for h in "$top"/kernel/*.h; do
	n=$(basename "$h" .h)
	ln -sfn "$h" "$dir/kernel/"
	# an X-macro list, included with CF_HOOK and CF_KFUNC defined
	[ "$n" = hook_defs ] && continue
	# twice: the include guard must hold too
	printf '#include "%s.h"\n#include "%s.h"\n' "$n" "$n" > "$dir/hdr_$n.c"
	objs+=("hdr_$n.o")
done
printf 'ccflags-y := -I$(src)/include -I$(src)/kernel\nobj-m := hdrcheck.o\nhdrcheck-y := %s\n' \
	"${objs[*]}" > "$dir/Kbuild"
hdr=$(readlink -f "$kdir/headers")
if [ -n "$broot" ]; then
	run=("$top/tools/build/buildroot.sh" run "$broot" "$dir")
else
	run=()
fi
echo "TAP version 13"
echo "1..${#objs[@]}"
# one make for every header (-k: past a failure), on every core; a header
# passes when its object was made
"${run[@]}" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -s -k -j"${JOBS:-$(nproc)}" -C "$hdr" M="$dir" "${objs[@]}" > "$dir/make.log" 2>&1
fail=0 i=0 pass=0 nfail=0
for o in "${objs[@]}"; do
	i=$((i + 1))
	n=${o#hdr_}; n=${n%.o}
	if [ -f "$dir/$o" ]; then
		echo "ok $i - $n.h compiles alone"
		pass=$((pass + 1))
	else
		echo "not ok $i - $n.h compiles alone"
		# its own diagnostics: made again, alone
		"${run[@]}" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
			make -s -C "$hdr" M="$dir" "$o" 2>&1 | grep -E 'error|warning' | head -5 | sed 's/^/# /'
		fail=1 nfail=$((nfail + 1))
	fi
done
echo "# Totals: pass:$pass fail:$nfail xfail:0 xpass:0 skip:0 error:0"
exit $fail
