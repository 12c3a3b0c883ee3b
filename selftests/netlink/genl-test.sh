#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# iproute2's `genl ctrl get name capfence` against the YAML spec. Runs in
# the test VM (busybox sh), where genl and the expectation file that
# check-spec.py --genl-expect generated from docs/netlink/capfence.yaml at
# build time (/usr/share/capfence/genl-expect) are staged:
#   family NAME VERSION | op ID NAME doit[,dumpit] | mcgrp NAME
# Prints kselftest-style "ok N - ..." lines and a Totals line.

EXP=${GENL_EXPECT:-/usr/share/capfence/genl-expect}
W=${TMPDIR:-/tmp}/cf-genl.$$
mkdir -p "$W" || exit 1
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "#   $2"; }

echo "TAP version 13"
[ -r "$EXP" ] || { nok "expectation file $EXP"; echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; exit 1; }

read -r _ fname fver <<EOF2
$(grep '^family ' "$EXP")
EOF2
genl ctrl get name "$fname" > "$W/get" 2>&1; rc=$?
sed 's/^/# genl: /' "$W/get"
if [ $rc -eq 0 ] && grep -q "^Name: $fname\$" "$W/get"; then
	ok "genl ctrl get name $fname lists the family"
else
	nok "genl ctrl get name $fname lists the family (exit $rc)"
fi
ver=$(sed -n 's/.*Version: \(0x[0-9a-f]*\).*/\1/p' "$W/get" | head -1)
if [ -n "$ver" ] && [ $((ver)) -eq "$fver" ]; then
	ok "family $fname version $fver"
else
	nok "family $fname version $fver" "genl shows version '$ver'"
fi

# the operations genl lists: "ID CAPS" with CAPS doit[,dumpit]
# iproute2 prints an operation's capabilities (can doit/dumpit) only for
# families of version >= 2 (print_ctrl_cmds() compares the family's own
# version): capfence is version 2; for a version 1 module only the ids
# are compared.
caps=1
grep -q 'Capabilities' "$W/get" || caps=0
cur=""
: > "$W/ops"
while IFS= read -r line; do
	case $line in
	*"multicast groups"*) break ;;
	*"#"*"ID-0x"*)
		id=${line##*ID-}; id=${id%% *}; cur=$((id))
		[ $caps = 1 ] || { echo "$cur -" >> "$W/ops"; cur=""; } ;;
	*"can d"*)
		[ -n "$cur" ] || continue
		c=""
		case $line in *"can doit"*) c=doit ;; esac
		case $line in *"can dumpit"*) c=${c:+$c,}dumpit ;; esac
		echo "$cur $c" >> "$W/ops"
		cur="" ;;
	esac
done < "$W/get"
want=$(grep -c '^op ' "$EXP")
have=$(wc -l < "$W/ops" | tr -d ' ')
if [ "$have" -eq "$want" ]; then
	ok "genl lists $want operations, as the spec has do/dump operations"
else
	nok "genl lists $want operations, as the spec has do/dump operations" "genl lists $have"
fi
grep '^op ' "$EXP" | while read -r _ id name want; do
	got=$(awk -v id="$id" '$1 == id { print $2 }' "$W/ops")
	if [ $caps = 0 ]; then
		[ "$got" = - ] && echo "ok - op $id $name listed" ||
			echo "not ok - op $id $name listed (genl does not list id $id)"
	elif [ "$got" = "$want" ]; then
		echo "ok - op $id $name: $want"
	else
		echo "not ok - op $id $name: $want (genl shows '${got:-nothing}')"
	fi
done > "$W/opres"
while read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	*) nok "${line#not ok - }" ;;
	esac
done < "$W/opres"
extra=$(awk 'NR == FNR { if ($1 == "op") want[$2] = 1; next } !($1 in want) { print $1 }' "$EXP" "$W/ops" | tr '\n' ' ')
if [ -z "$extra" ]; then
	ok "genl lists no operation the spec does not have"
else
	nok "genl lists no operation the spec does not have" "extra ids: $extra"
fi

grep '^mcgrp ' "$EXP" | while read -r _ g; do
	if grep -Eq "name: $g( |\$)" "$W/get"; then
		echo "ok - multicast group $g"
	else
		echo "not ok - multicast group $g"
	fi
done > "$W/grres"
while read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	*) nok "${line#not ok - }" ;;
	esac
done < "$W/grres"
ng=$(grep -c '^mcgrp ' "$EXP")
hg=$(sed -n '/multicast groups:/,$p' "$W/get" | grep -c 'name: ')
if [ "$hg" -eq "$ng" ]; then ok "genl lists $ng multicast group(s), as the spec"; else nok "genl lists $ng multicast group(s), as the spec" "genl lists $hg"; fi

if genl ctrl list 2>/dev/null | grep -q "^Name: $fname\$"; then
	ok "genl ctrl list includes $fname"
else
	nok "genl ctrl list includes $fname"
fi

rm -rf "$W"
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail -eq 0 ]
