#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-spec.py must catch what made the spec unreadable to the kernel's
# tooling: each mutation of a copy of docs/netlink/capfence.yaml must fail
# with its own message (kselftest-style lines, then a Totals line).
#   check-spec-test.sh PYTHON SCHEMA
py=$1 schema=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
spec=$top/docs/netlink/capfence.yaml
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
n=0 pass=0 fail=0
# NAME SED-EXPRESSION EXPECTED-TEXT
mut() {
	n=$((n + 1))
	sed "$2" "$spec" > "$w/spec.yaml"
	if cmp -s "$spec" "$w/spec.yaml"; then
		fail=$((fail + 1)); echo "not ok $n - $1 (the mutation changed nothing)"; return
	fi
	"$py" "$top/selftests/netlink/check-spec.py" --top "$top" --spec "$w/spec.yaml" \
		--schema "$schema" > "$w/out" 2>&1
	rc=$?
	if [ $rc != 0 ] && grep -qF -- "$3" "$w/out"; then
		pass=$((pass + 1)); echo "ok $n - $1"
	else
		fail=$((fail + 1)); echo "not ok $n - $1 (exit $rc)"
		sed 's/^/#   /' "$w/out" | grep -v '^#   ok ' | head -5
	fi
}
echo "TAP version 13"
mut "an unquoted enum entry off (YAML 1.1: a boolean) is refused" \
	's/- name: "off"/- name: off/' "{'name': False"
mut "a key outside the kernel's schema is refused" \
	's/^\(      doc: Release the links.*\)$/\1\n      internal-flags: [ admin ]/' \
	"'internal-flags' was unexpected"
mut "an admin operation without its (admin) mark" \
	's/^\(      doc: Install a key under an id; advances the fence.\) (admin)$/\1/' \
	'op key-install = 4 (do, internal-flags -)'
mut "an (admin) mark on an operation the kernel does not check" \
	'/name: status-get/,/doc:/ s/^\(      doc: .*\)$/\1 (admin)/' \
	'admin: spec True'
mut "an output attribute of a nested set without its (output) mark" \
	's/Fence value at which tokens of this class were fenced, 0 if never (output)./Fence value at which tokens of this class were fenced, 0 if never./' \
	'fenced-at: spec expects a policy entry'
mut "the events group's CAP_NET_ADMIN unsaid" \
	's/ to CAP_NET_ADMIN listeners\././' \
	'the family doc does not say CAP_NET_ADMIN'
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
