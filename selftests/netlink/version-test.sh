#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# capfence --version in the test VM: the CLI's version and ABI, the loaded
# module's (STATUS_GET), a clear stderr line on a version or ABI mismatch
# (test builds capfence-vtest-ver/-abi pretend to be another CLI), exit 0
# in every case, and "module not loaded" without the module. Unloads and
# reloads capfence.ko (/capfence.ko), so run it last in a boot.
# Prints kselftest-style lines and a Totals line.

CF=${CAPFENCE:-capfence}
W=${TMPDIR:-/tmp}/cf-ver.$$
mkdir -p "$W" || exit 1
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"
	[ -s "$W/out" ] && sed 's/^/#   out: /' "$W/out"
	[ -s "$W/err" ] && sed 's/^/#   err: /' "$W/err"
}
# v NAME PROG LINE1 LINE2 ERRPATTERN('' = stderr empty)
v() {
	name=$1 prog=$2 l1=$3 l2=$4 ep=$5
	"$prog" --version > "$W/out" 2> "$W/err"; rc=$?
	if [ $rc -ne 0 ]; then nok "$name (exit $rc)"; return; fi
	if [ "$(sed -n 1p "$W/out")" != "$l1" ] || [ "$(sed -n 2p "$W/out")" != "$l2" ] ||
	   [ "$(wc -l < "$W/out" | tr -d ' ')" != 2 ]; then
		nok "$name (stdout is not '$l1' / '$l2')"; return
	fi
	if [ -z "$ep" ]; then
		[ -s "$W/err" ] && { nok "$name (unexpected stderr)"; return; }
	else
		[ "$(wc -l < "$W/err" | tr -d ' ')" = 1 ] && grep -qF -e "$ep" "$W/err" ||
			{ nok "$name (stderr is not one line with '$ep')"; return; }
	fi
	ok "$name"
}

echo "TAP version 13"
mver=$(cat /sys/module/capfence/version 2>/dev/null)
[ -n "$mver" ] && ok "module version $mver in /sys/module/capfence/version" ||
	nok "module version in /sys/module/capfence/version"
cver=$("$CF" --version 2>/dev/null | sed -n '1s/^capfence \([^ ]*\) (abi \([0-9]*\))$/\1/p')
abi=$("$CF" --version 2>/dev/null | sed -n '1s/^capfence \([^ ]*\) (abi \([0-9]*\))$/\2/p')
[ -n "$cver" ] && [ -n "$abi" ] && ok "CLI line: capfence $cver (abi $abi)" || nok "CLI line: capfence VERSION (abi N)"

v "matching CLI and module: both lines, nothing on stderr" "$CF" \
	"capfence $cver (abi $abi)" "module $mver (abi $abi)" ""
v "version mismatch: both lines, one stderr line, exit 0" capfence-vtest-ver \
	"capfence 9.9.9-test (abi $abi)" "module $mver (abi $abi)" \
	"capfence: version mismatch: CLI 9.9.9-test, module $mver (same abi $abi)"
v "ABI mismatch: both lines, one stderr line, exit 0" capfence-vtest-abi \
	"capfence $cver (abi 99)" "module $mver (abi $abi)" \
	"capfence: ABI mismatch: this CLI speaks abi 99, the loaded module abi $abi"
[ "$cver" = "$mver" ] && ok "this build's CLI and module versions agree ($cver)" ||
	nok "this build's CLI and module versions agree (CLI $cver, module $mver)"

# without the module; the programs hold it until they are freed, which
# happens after detach returns (later on 6.12 than on 6.1): retry for 5 s
unload() {
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 \
		26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50; do
		rmmod capfence 2> "$W/err" && return 0
		sleep 0.1
	done
	return 1
}
if "$CF" detach > /dev/null 2>&1 && unload; then
	v "module not loaded: CLI line and 'module not loaded', exit 0" "$CF" \
		"capfence $cver (abi $abi)" "module not loaded" ""
	insmod /capfence.ko && "$CF" attach > /dev/null 2>&1 &&
		ok "module reloaded and hooks attached" || nok "module reloaded and hooks attached"
else
	nok "detach and unload the module"
fi

rm -rf "$W"
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail -eq 0 ]
