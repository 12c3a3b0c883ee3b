#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module's netlink contract, generated from docs/netlink/capfence.yaml
# by the kernel's own ynl-gen-c.py (kernel mode, split ops), and the
# library's attribute tables by attrs-gen.py:
#   netlink-gen.sh YNLDIR PYTHON OUTDIR [LIBOUTDIR]
# writes OUTDIR/netlink_gen.c and OUTDIR/netlink_gen.h, and
# LIBOUTDIR/cf_attrs_gen.c (default OUTDIR); make netlink-gen commits them
# to kernel/ and tools/lib/. YNLDIR is tools/build/ynl.sh's.
#
# ynl-gen-c.py of 6.12 finds the spec's schema two directories above the
# spec and names the spec by its path below a directory holding a
# MAINTAINERS file: the spec is read from a scratch tree shaped so. What
# it cannot express is rewritten there, and checked by hand in
# kernel/netlink.c:
#  - an indexed-array of scalars (link-fds, tokens) is refused
#    ("unsupported sub-type"): it is given as an indexed-array of nests.
#    Every indexed-array comes out as NLA_INDEXED_ARRAY, the kernel's
#    NLA_NESTED_ARRAY without a member policy (compat.h): members are
#    checked by cf_scalar_array() and cf_nl_rules();
#  - a binary's max-len is refused ("not implemented"): the token's
#    length is checked by its handler.
set -eu
ynl=$(cd "$1" && pwd) py=$2 out=$(cd "$3" && pwd) libout=$(cd "${4:-$3}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs/netlink"
: > "$tmp/MAINTAINERS"
cp "$ynl/schemas/genetlink-legacy.yaml" "$tmp/docs/"
"$py" - "$top/docs/netlink/capfence.yaml" "$tmp/docs/netlink/capfence.yaml" <<'PY'
import re, sys
src, dst = sys.argv[1:3]
text = open(src).read()
# text, not YAML: the generator reads the file's own SPDX line and layout
text = re.sub(r'(type: indexed-array\n\s+sub-type: )(?!nest\b)\w+', r'\1nest', text)
text = re.sub(r'(type: binary\n)\s+checks:\n\s+max-len: [\w-]+\n', r'\1', text)
open(dst, 'w').write(text)
PY
for kind in source header; do
	ext=c; [ $kind = header ] && ext=h
	(cd "$tmp" && "$py" "$ynl/ynl-gen-c.py" --mode kernel --$kind \
		--spec "$tmp/docs/netlink/capfence.yaml" -o "$tmp/netlink_gen.$ext")
	cp "$tmp/netlink_gen.$ext" "$out/netlink_gen.$ext"
done
# a policy entry longer than the kernel's 100 columns (checkpatch) is
# wrapped after its type, the rest aligned with the open parenthesis
"$py" - "$out/netlink_gen.c" <<'PY'
import sys
path = sys.argv[1]
out = []
for line in open(path).read().split("\n"):
    if len(line.expandtabs()) > 100 and "= NLA_POLICY_" in line and ", " in line:
        head, tail = line.split(", ", 1)
        col = len(head[:head.index("(") + 1].expandtabs())
        line = head + ",\n" + "\t" * (col // 8) + " " * (col % 8) + tail
    out.append(line)
open(path, "w").write("\n".join(out))
PY
"$py" "$top/tools/build/attrs-gen.py" "$top/docs/netlink/capfence.yaml" "$libout/cf_attrs_gen.c"
