#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The committed kernel/netlink_gen.[ch] and tools/lib/cf_attrs_gen.c must
# be what the generators make of
# docs/netlink/capfence.yaml now (make netlink-gen regenerates them; they
# are never edited by hand). With --test, a spec change that is not
# regenerated must be caught: a copy of the tree with one mutated spec
# must fail the check. kselftest-style lines, then a Totals line.
#   gen-check.sh YNLDIR PYTHON
ynl=$1 py=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
n=0 pass=0 fail=0

# TOP: is TOP's kernel/netlink_gen.[ch] current? (0 yes, 1 no, 2 failed)
current() {
	mkdir -p "$w/out"
	"$top/tools/build/netlink-gen.sh" "$ynl" "$py" "$w/out" > "$w/log" 2>&1 ||
		return 2
	for f in kernel/netlink_gen.c kernel/netlink_gen.h tools/lib/cf_attrs_gen.c; do
		diff -u "$1/$f" "$w/out/${f##*/}" > "$w/diff.${f##*/}" || return 1
	done
	return 0
}

n=$((n + 1))
current "$top"
rc=$?
if [ $rc = 0 ]; then
	pass=$((pass + 1)); echo "ok $n - kernel/netlink_gen.[ch], tools/lib/cf_attrs_gen.c are what make netlink-gen makes"
else
	fail=$((fail + 1))
	echo "not ok $n - the generated files are stale or edited: run make netlink-gen"
	cat "$w/log" "$w"/diff.* 2>/dev/null | head -20 | sed 's/^/#   /'
fi

# the check can fail: the spec given one more attribute, files as committed
n=$((n + 1))
mkdir -p "$w/tree/docs/netlink" "$w/tree/tools/build" "$w/tree/kernel" "$w/tree/tools/lib"
cp "$top/kernel/netlink_gen.c" "$top/kernel/netlink_gen.h" "$w/tree/kernel/"
cp "$top/tools/lib/cf_attrs_gen.c" "$w/tree/tools/lib/"
cp "$top/tools/build/netlink-gen.sh" "$top/tools/build/attrs-gen.py" "$w/tree/tools/build/"
sed 's/attributes: \[ cap-id, fleet-rev, fleet \]/attributes: [ cap-id, fleet-rev, fleet, dry-run ]/' \
	"$top/docs/netlink/capfence.yaml" > "$w/tree/docs/netlink/capfence.yaml"
if cmp -s "$top/docs/netlink/capfence.yaml" "$w/tree/docs/netlink/capfence.yaml"; then
	rc=0
else
	top=$w/tree current "$w/tree"
	rc=$?
fi
if [ $rc = 1 ]; then
	pass=$((pass + 1)); echo "ok $n - a spec change that was not regenerated is caught"
else
	fail=$((fail + 1)); echo "not ok $n - a spec change that was not regenerated is caught (got $rc)"
fi
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
