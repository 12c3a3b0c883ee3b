#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# On the host (make unit): `capfence metrics` and its bad input; the text
# checked by Prometheus's own promtool (`promtool check metrics`): the
# CLI's without a module, and every family at once (the module's and the
# agent's, as test_metrics renders them); capfenced.service as systemd
# reads it (systemd-analyze verify) with Type=notify, a watchdog and its
# hardening (`systemd-analyze security --offline=yes`, exposure at most
# 2.0 of 10).
#
#   CAPFENCE=build/tools/capfence CAPFENCED=build/tools/capfenced \
#   UNIT_METRICS=build/unit/test_metrics sh selftests/cli/metrics-tests.sh
#
# Prints "ok N - name" / "not ok N - name" and a kselftest Totals line.

CF=${CAPFENCE:-capfence}
CFD=${CAPFENCED:-capfenced}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/cf-metrics.XXXXXX") || exit 1
n=0 pass=0 fail=0 skip=0

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"
	[ -s "$W/out" ] && sed 's/^/#   out: /' "$W/out" | head -n 12
	[ -s "$W/err" ] && sed 's/^/#   err: /' "$W/err" | head -n 8
}
skipt() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { name=$1; shift; if "$@" >"$W/out" 2>"$W/err"; then ok "$name"; else nok "$name"; fi; }
# tg NAME RC PATTERN CMD...: exit RC, PATTERN in the output, one error line
tg() {
	name=$1 want=$2 pat=$3; shift 3
	"$@" >"$W/out" 2>"$W/err"; rc=$?
	if [ "$rc" -ne "$want" ]; then
		nok "$name (exit $rc, want $want)"
	elif ! cat "$W/out" "$W/err" | grep -q -e "$pat"; then
		nok "$name (no '$pat' in output)"
	elif [ "$want" -ne 0 ] && [ "$(grep -c '^capfence' "$W/err")" -ne 1 ]; then
		nok "$name (not one error line)"
	else
		ok "$name"
	fi
}

echo "TAP version 13"
PROMTOOL=$(command -v promtool)

tg "metrics --help" 0 "usage: capfence metrics" "$CF" metrics --help
tg "metrics: extra argument" 2 "metrics: unexpected argument 'x'" "$CF" metrics x
if [ ! -e /sys/module/capfence ]; then
	tg "metrics without the module: capfence_module_loaded 0, exit 0" 0 "^capfence_module_loaded 0$" "$CF" metrics
	if [ -n "$PROMTOOL" ]; then
		"$CF" metrics > "$W/m.prom"
		check "promtool check metrics: the CLI's text without a module" sh -c "'$PROMTOOL' check metrics < '$W/m.prom'"
	else
		skipt "promtool check metrics: the CLI's text" "no promtool (apt-get install prometheus)"
	fi
else
	skipt "metrics without the module" "capfence.ko is loaded here"
fi
if [ -n "$PROMTOOL" ] && [ -x "${UNIT_METRICS:-}" ]; then
	CF_METRICS_SAMPLE=$W/all.prom "$UNIT_METRICS" -t agent_families >/dev/null 2>&1
	check "promtool check metrics: every family (module and agent)" sh -c "'$PROMTOOL' check metrics < '$W/all.prom'"
	check "the sample has the histogram and the delegation reasons" sh -c \
		"grep -q '^capfence_agent_apply_duration_seconds_bucket{le=\"+Inf\"} 4$' '$W/all.prom' &&
		 grep -q '^capfence_delegations_total{result=\"rejected\",reason=\"epoch_mismatch\"} 4$' '$W/all.prom'"
	# promtool is the reference: it must refuse what is wrong
	printf '# HELP x_total h\n# TYPE x_total counter\nx_total{a="1"} one\n' > "$W/bad.prom"
	check "promtool refuses a broken text (the check has teeth)" sh -c "! '$PROMTOOL' check metrics < '$W/bad.prom'"
else
	skipt "promtool check metrics: every family" "no promtool or no UNIT_METRICS"
fi

# capfenced.service, as installed (SBINDIR substituted)
U=$W/capfenced.service
SB=$(cd "$(dirname "$CFD")" && pwd)
sed "s|@SBINDIR@|$SB|" "$TOP/tools/build/capfenced.service.in" > "$U"
# the unit it requires, beside it (verify loads it)
sed "s|@SBINDIR@|$SB|" "$TOP/tools/build/capfence.service.in" > "$W/capfence.service"
check "unit: Type=notify with a watchdog" sh -c "grep -qx 'Type=notify' '$U' && grep -qx 'WatchdogSec=6s' '$U' && grep -qx 'NotifyAccess=main' '$U'"
check "unit: capabilities limited to CAP_MAC_ADMIN" grep -qx 'CapabilityBoundingSet=CAP_MAC_ADMIN' "$U"
check "unit: ProtectSystem=strict, NoNewPrivileges=yes" sh -c "grep -qx 'ProtectSystem=strict' '$U' && grep -qx 'NoNewPrivileges=yes' '$U'"
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify capfenced.service" sh -c "cd '$W' && systemd-analyze verify --man=no ./capfenced.service 2>&1 | { ! grep .; }"
	if systemd-analyze security --offline=yes "$U" > "$W/sec" 2>&1; then
		score=$(sed -n 's/.*Overall exposure level for capfenced.service: \([0-9.]*\).*/\1/p' "$W/sec")
		echo "# systemd-analyze security --offline=yes: exposure $score"
		check "systemd-analyze security: exposure at most 2.0 (got $score)" \
			systemd-analyze security --offline=yes --threshold=20 "$U"
	else
		skipt "systemd-analyze security" "this systemd has no --offline"
	fi
else
	skipt "systemd-analyze" "no systemd-analyze (apt-get install systemd)"
fi

rm -rf "$W"
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" -eq 0 ]
