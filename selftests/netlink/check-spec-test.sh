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
	'admin: spec False ("(admin)" ending its doc), do pre cf-nl-pre-admin'
mut "an (admin) mark on an operation the kernel does not check" \
	'/name: status-get/,/doc:/ s/^\(      doc: .*\)$/\1 (admin)/' \
	'admin: spec True ("(admin)" ending its doc), do pre cf-nl-pre-bare'
mut "an output-only attribute in a request" \
	's/attributes: \[ cap-id, fleet-rev, fleet \]/attributes: [ cap-id, fleet-rev, fleet, fence ]/' \
	'op revoke: do request lists fence, marked output-only'
mut "an operation without request attributes that would ignore them" \
	'/^        pre: cf-nl-pre-bare$/d' \
	'do has no request and no pre'
mut "the events group's CAP_NET_ADMIN unsaid" \
	's/ to CAP_NET_ADMIN listeners\././' \
	'the family doc does not say CAP_NET_ADMIN'
# the hand-kept copies of the class registry and the hook list: a
# mutation of a copy of one source file must fail with its message
# NAME FILE SED-EXPRESSION EXPECTED-TEXT
mutsrc() {
	n=$((n + 1))
	rm -rf "$w/top"
	mkdir -p "$w/top/tools" "$w/top/python" "$w/top/selftests/bench"
	cp -r "$top/docs" "$top/kernel" "$top/lsm" "$top/include" "$w/top/"
	cp -r "$top/tools/lib" "$top/tools/capfence" "$w/top/tools/"
	cp -r "$top/python/capfence" "$w/top/python/"
	cp "$top/selftests/bench/noop-lsm.bpf.c" "$w/top/selftests/bench/"
	sed -i "$3" "$w/top/$2"
	if cmp -s "$top/$2" "$w/top/$2"; then
		fail=$((fail + 1)); echo "not ok $n - $1 (the mutation changed nothing)"; return
	fi
	"$py" "$top/selftests/netlink/check-spec.py" --top "$w/top" --schema "$schema" > "$w/out" 2>&1
	rc=$?
	if [ $rc != 0 ] && grep -qF -- "$4" "$w/out"; then
		pass=$((pass + 1)); echo "ok $n - $1"
	else
		fail=$((fail + 1)); echo "not ok $n - $1 (exit $rc)"
		sed 's/^/#   /' "$w/out" | grep -v '^#   ok ' | head -5
	fi
}
mutsrc "a class count of the Python binding's own" python/capfence/_lib.py \
	's/^CLASS_MAX = lib.capfence_class_count()/CLASS_MAX = 4/' \
	'_lib.py: CLASS_MAX = 4, not lib.capfence_class_count()'
mutsrc "a Python mirror of the epoch struct" python/capfence/_lib.py \
	's/^class Result(Structure):/class EpochS(Structure):\n    pass\n\n\nclass Result(Structure):/' \
	"_lib.py mirrors an epoch (class EpochS): the 2 interface's epochs are handles"
mutsrc "the Python binding on libcapfence.so.1" python/capfence/_lib.py \
	's/^SONAME = "libcapfence.so.2"/SONAME = "libcapfence.so.1"/' \
	'_lib.py binds libcapfence.so.1, not libcapfence.so.2'
mutsrc "a class missing from the man page's Classes" docs/capfence.8 \
	's/^\.BR fs:read " and " fs:write /.BR fs:read " and writes "/' \
	"docs/capfence.8 (Classes) lists ['net:connect', 'net:bind', 'fs:read', 'vsock:connect']"
mutsrc "a hook without its no-op twin" selftests/bench/noop-lsm.bpf.c \
	's|SEC("lsm/cred_free")|SEC("lsm/cred_free_x")|' \
	"selftests/bench/noop-lsm.bpf.c: missing ['cred_free'], extra ['cred_free_x']"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
