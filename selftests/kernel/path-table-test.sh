#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# path-table.py --check can fail: a copy of the files it reads, one
# fs_path row's path changed and not regenerated, must fail the check; a
# row removed must show its hook among those no row names once
# regenerated. kselftest-style lines, then a Totals line.
top=$(cd "$(dirname "$0")/../.." && pwd)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
n=0 pass=0 fail=0
res() { n=$((n + 1)); if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok $n - $2"; else fail=$((fail + 1)); echo "not ok $n - $2"; fi; }
mkdir -p "$w/docs" "$w/kernel" "$w/selftests/kernel"
cp "$top/docs/threat-model.md" "$w/docs/"
cp "$top/kernel/hook_defs.h" "$w/kernel/"
cp "$top/selftests/kernel/net_mediation_test.c" "$w/selftests/kernel/"
sed 's/\.path = "`truncate()`"/.path = "`truncate(2)`"/' "$top/selftests/kernel/fs_mediation_test.c" \
	> "$w/selftests/kernel/fs_mediation_test.c"
cmp -s "$top/selftests/kernel/fs_mediation_test.c" "$w/selftests/kernel/fs_mediation_test.c"
res $((1 - $?)) "the copy has one row's path changed"
"$top/selftests/kernel/path-table.py" --check --top "$w" > /dev/null
[ $? = 1 ]; res $? "a row changed and not regenerated fails the check"
# the truncate row gone: its hook is listed as one no row names
awk '/^FIXTURE_VARIANT_ADD\(fs_path, truncate\)/ { skip = 1 } !skip { print } /^};/ { skip = 0 }' \
	"$top/selftests/kernel/fs_mediation_test.c" > "$w/selftests/kernel/fs_mediation_test.c"
"$top/selftests/kernel/path-table.py" --write --top "$w" &&
	grep -q '^Hooks of these classes that no row.*`path_truncate`' "$w/docs/threat-model.md"
res $? "a hook whose only row is removed shows as untested"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
