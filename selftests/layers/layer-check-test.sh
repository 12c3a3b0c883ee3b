#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module's layers (docs/design.md) held by tools/build/layer-check.py:
# the tree passes, and each deliberate violation, made in a copy of
# kernel/, fails with its own message (kselftest-style lines, then a
# Totals line).
#   layer-check-test.sh [PYTHON]
py=${1:-python3}
top=$(cd "$(dirname "$0")/../.." && pwd)
check=$top/tools/build/layer-check.py
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
n=0 pass=0 fail=0
echo "TAP version 13"

n=$((n + 1))
if "$py" "$check" "$top/kernel" > "$w/out" 2>&1; then
	pass=$((pass + 1)); echo "ok $n - kernel/ only points down its layers"
else
	fail=$((fail + 1)); echo "not ok $n - kernel/ only points down its layers"
	sed 's/^/#   /' "$w/out" | head -20
fi

# NAME FILE SED-EXPRESSION EXPECTED-TEXT: a fresh copy of kernel/ with
# FILE changed must fail and say EXPECTED-TEXT
mut() {
	n=$((n + 1))
	rm -rf "$w/k"
	cp -r "$top/kernel" "$w/k"
	[ -f "$w/k/$2" ] || : > "$w/k/$2"
	sed -i "$3" "$w/k/$2"
	if cmp -s "$top/kernel/$2" "$w/k/$2"; then
		fail=$((fail + 1)); echo "not ok $n - $1 (the mutation changed nothing)"; return
	fi
	"$py" "$check" "$w/k" > "$w/out" 2>&1
	rc=$?
	if [ $rc != 0 ] && grep -qF -- "$4" "$w/out"; then
		pass=$((pass + 1)); echo "ok $n - $1"
	else
		fail=$((fail + 1)); echo "not ok $n - $1 (exit $rc)"
		sed 's/^/#   /' "$w/out" | head -5
	fi
}

mut "a leaf that calls a decision" token.c \
	's/^\(#include "token.h"\)$/\1\n#include "decide.h"\nstatic int cf_up(void) { return cf_exercise(NULL, NULL, NULL); }/' \
	'token.c (leaves) uses decide (decisions)'
mut "the state that sends an event itself" epoch.c \
	's/cf_notify(CAPFENCE_EV_EPOCH_ACTIVATE/cf_netlink_exit(); cf_notify(CAPFENCE_EV_EPOCH_ACTIVATE/' \
	'epoch.c (state) uses netlink (control)'
mut "a decision that asks the hooks" decide.c \
	's/^\(#include "decide.h"\)$/\1\n#include "hooks.h"/' \
	'decide.c (decisions) uses hooks (control)'
mut "a header that includes a higher layer's" cap.h \
	's/^\(#include "epoch.h"\)$/\1\n#include "cred.h"/' \
	'cap.h (state) uses cred'
mut "a cycle inside a layer (sock.c calls net.c)" sock.c \
	's/^\(#include "sock.h"\)$/\1\n#include "net.h"\nstatic int cf_side(void) { return cf_net_create(NULL, 0, 0, 0); }/' \
	'sock.c (edges) uses net (edges)'
mut "a netlink message built outside netlink.c" fleet.c \
	's/^\(#include "fleet.h"\)$/\1\nstatic int cf_talk(struct sk_buff *s) { return nla_put_u32(s, 1, 0); }/' \
	'fleet.c: builds a netlink message (nla_put_u32)'
mut "the umbrella header back" class.c \
	's/^#include "class.h"$/#include "capfence.h"/' \
	'class.c: includes the umbrella capfence.h'
mut "a file in no layer" newfile.c \
	'1i #include "fence.h"' \
	'newfile: in no layer'

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
