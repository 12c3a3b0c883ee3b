#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# capfenced as systemd runs it, against the real module, one VM, etcd in
# the guest (after agent-vm-test.sh, in the same boot): NOTIFY_SOCKET is a
# socket notify-sink reads, WATCHDOG_USEC is set, as systemd sets them for
# a Type=notify unit with WatchdogSec=. READY=1 only once the module is in
# fleet mode and current (not while etcd is down); WATCHDOG=1 from the
# heartbeat, stopping while it hangs (an apply held with the module lock,
# CAPFENCED_FAULT_FILE=hang) and coming back after; /metrics and /healthz
# (--metrics-listen): the text passes promtool (when staged), counters move
# with a delegation rejected as epoch_mismatch and a denied exercise, the
# listener answers while the heartbeat hangs and while a client holds a
# connection open, refuses bad requests, and /healthz is 503 when the
# module is stale or its hooks are detached. Prints kselftest TAP and a
# Totals line.

E=http://127.0.0.1:2579
L=127.0.0.1:9464
W=/tmp/cf-metrics-vm
rm -rf "$W"
mkdir -p "$W"
n=0 pass=0 fail=0 skip=0
AG= EP= SINK= P=
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"
	[ -s "$W/agent.log" ] && sed 's/^/#   /' "$W/agent.log" | tail -n 8
	[ -s "$W/out" ] && sed 's/^/#   out: /' "$W/out" | tail -n 6
	[ -s "$W/notes" ] && sed 's/^/#   notify: /' "$W/notes" | tail -n 4
}
skipt() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }
state() { capfence status --json | sed -n 's/.*"fleet":{"state":"\([a-z]*\)".*/\1/p'; }
# get PATH: the whole HTTP response (status line, headers, body) in $W/out
get() { printf 'GET %s HTTP/1.0\r\nHost: capfenced\r\n\r\n' "$1" | nc -w 5 127.0.0.1 9464 > "$W/out" 2>&1; }
status_is() { get "$1" && head -n1 "$W/out" | grep -q "^HTTP/1.1 $2 "; }
scrape() { get /metrics && head -n1 "$W/out" | grep -q '^HTTP/1.1 200 ' && sed '1,/^\r*$/d' "$W/out" > "$1"; }
val() { grep "^$1 " "$2" | awk '{ print $2 }'; }
etcd_start() {
	etcd --name m --data-dir "$W/etcd" --listen-client-urls $E --advertise-client-urls $E \
		--listen-peer-urls http://127.0.0.1:2580 --initial-advertise-peer-urls http://127.0.0.1:2580 \
		--initial-cluster m=http://127.0.0.1:2580 >>"$W/etcd.log" 2>&1 &
	EP=$!
	i=0
	until capfence fleet --endpoints $E status >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 100 ] || return 1; sleep 0.2
	done
}
reload() {
	capfence detach >/dev/null || return 1
	j=0
	until rmmod capfence 2>/dev/null; do j=$((j + 1)); [ $j -lt 100 ] || return 1; sleep 0.1; done
	insmod /capfence.ko && capfence attach >/dev/null
}
finish() {
	[ -n "$P" ] && kill "$P" 2>/dev/null
	[ -n "$AG" ] && kill "$AG" 2>/dev/null && wait "$AG" 2>/dev/null
	[ -n "$EP" ] && kill "$EP" 2>/dev/null
	[ -n "$SINK" ] && kill "$SINK" 2>/dev/null
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	[ $fail -eq 0 ]
	exit $?
}
# lines of $W/notes matching PATTERN from line FROM on
notes_from() { tail -n +"$2" "$W/notes" | grep -c "$1"; }

echo "TAP version 13"
command -v etcd >/dev/null || { echo "1..0 # SKIP no etcd in the guest"; exit 0; }
command -v notify-sink >/dev/null || { echo "1..0 # SKIP no notify-sink in the guest"; exit 0; }
export CAPFENCE_ETCD_ENDPOINTS=$E
check "a fresh module (fleet mode off)" reload

notify-sink "$W/notify" > "$W/notes" 2>&1 &
SINK=$!
i=0
until [ -S "$W/notify" ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
# as systemd starts a Type=notify unit with WatchdogSec=2s; etcd not up yet
NOTIFY_SOCKET=$W/notify WATCHDOG_USEC=2000000 CAPFENCED_FAULT_FILE=$W/faults \
capfenced --endpoints $E --host mt --max-staleness 2000 --deny-after 4000 --heartbeat 300 \
	--lease-ttl 5 --reconcile 0 --foreground --log "$W/agent.log" --metrics-listen $L \
	2>"$W/agent.out" &
AG=$!
sleep 2.5
check "etcd down: no READY=1 (the module is not current)" sh -c "! grep -q 'READY=1' '$W/notes'"
check "etcd down: STATUS= says why" grep -q "STATUS=etcd does not answer" "$W/notes"
check "etcd down: the module is in fleet mode, not current" sh -c "[ \"\$(capfence status --json | sed -n 's/.*\"fleet\":{\"state\":\"\([a-z]*\)\".*/\1/p')\" != current ]"
if status_is /healthz 503 && grep -q "^fleet \(stale\|deny\): never confirmed" "$W/out"; then ok "etcd down: /healthz 503 names the state"
else nok "etcd down: /healthz 503 names the state"; fi
scrape "$W/m0"
check "etcd down: /metrics answers, agent not ready, etcd errors counted" sh -c \
	"grep -q '^capfence_agent_ready 0$' '$W/m0' && [ \"\$(grep '^capfence_agent_errors_total{error=\"etcd\"}' '$W/m0' | awk '{print \$2}')\" -ge 1 ]"

check "etcd starts" etcd_start
i=0
until grep -q 'READY=1' "$W/notes" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
check "READY=1 once etcd answers" grep -q 'READY=1' "$W/notes"
check "READY=1 sent once" [ "$(grep -c 'READY=1' "$W/notes")" -eq 1 ]
check "READY=1 after the agent saw the module current in fleet mode" \
	grep -q "^capfenced: ready: the module is in fleet mode and current at rev=" "$W/agent.log"
# READY=1 was sent at a beat that found the module current; the module
# stays current while beats (300 ms) confirm within --max-staleness
# (2 s). Under TCG on a loaded host one beat can come late, so the
# state is read until it is current again, for at most 10 s: it must
# be current (not merely have been), and a module that never is fails.
current_within() {
	i=0
	until [ "$(state)" = current ]; do
		i=$((i + 1)); [ $i -lt 50 ] || { capfence status | sed 's/^/#   status: /'; return 1; }
		sleep 0.2
	done
}
check "ready: the module is current" current_within
# a beat (300 ms) pings: 3 pings take 0.9 s, read for at most 10 s (a
# loaded TCG host can hold the guest still for a moment)
L0=$(wc -l < "$W/notes")
pings_within() {
	i=0
	until [ "$(notes_from 'WATCHDOG=1' $((L0 + 1)))" -ge 3 ]; do
		i=$((i + 1)); [ $i -lt 50 ] || return 1; sleep 0.2
	done
}
check "WATCHDOG=1 pings arrive (3 beats' worth)" pings_within
check "STATUS= fleet current" grep -q "STATUS=fleet current" "$W/notes"

# /metrics, /healthz
check "/healthz 200 when current" status_is /healthz 200
check "/healthz names the revision" grep -q "^ok: fleet current at rev=[0-9]*, confirmed [0-9]* ms ago" "$W/out"
get /metrics
check "/metrics 200, Prometheus text 0.0.4" sh -c "head -n1 '$W/out' | grep -q '^HTTP/1.1 200 ' && grep -q '^Content-Type: text/plain; version=0.0.4' '$W/out'"
scrape "$W/m1"
if command -v promtool >/dev/null; then
	check "promtool check metrics: capfenced's /metrics" sh -c "promtool check metrics < '$W/m1' > '$W/out' 2>&1"
	capfence metrics > "$W/c0"
	check "promtool check metrics: capfence metrics" sh -c "promtool check metrics < '$W/c0' > '$W/out' 2>&1"
else
	skipt "promtool check metrics" "promtool not staged (apt-get install prometheus on the host)"
fi
check "metrics: fleet mode, current, hooks attached, ready" sh -c \
	"grep -q '^capfence_fleet_mode 1$' '$W/m1' && grep -q '^capfence_fleet_state{state=\"current\"} 1$' '$W/m1' &&
	 grep -q '^capfence_hooks_attached 1$' '$W/m1' && grep -q '^capfence_agent_ready 1$' '$W/m1' &&
	 grep -q '^capfence_fleet_confirmation_age_seconds [0-9.]*$' '$W/m1'"
check "metrics: the fleet revision is the module's" [ "$(val capfence_fleet_revision "$W/m1")" -ge 1 ]
capfence metrics > "$W/c1"
check "metrics: capfence metrics and /metrics agree on the delegations" \
	[ "$(grep '^capfence_delegations_total' "$W/c1")" = "$(grep '^capfence_delegations_total' "$W/m1")" ]

# fleet changes: the agent's apply counts and latency move
capfence fleet epoch install 61 'net:connect=token:127.0.0.0/8' fs:read=open >/dev/null
capfence fleet epoch install 62 'net:connect=token:127.0.0.0/8' fs:read=open >/dev/null
capfence fleet epoch activate 62 --wait --timeout 10 >/dev/null
capfence key generate --id 7 -o "$W/k7" >/dev/null && capfence key install "$W/k7" >/dev/null
# a task bound to 62; a token of 61 delegated to it (epoch_mismatch); its
# connect without a token (denied: no_capability)
capfence exec --epoch 62 -- sleep 600 &
P=$!
i=0
until capfence task $P --json 2>/dev/null | grep -q '"bound":true' || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
T61=$(capfence mint --key "$W/k7" --class net:connect --epoch 61 --constraint 127.0.0.1/32)
capfence delegate "$T61" --pid $P > "$W/out" 2>&1
check "a token of 61 delegated to a task of 62: epoch_mismatch" grep -q "epoch_mismatch" "$W/out"
capfence exec --epoch 62 -- nc -w 2 127.0.0.1 2579 </dev/null > "$W/out" 2>&1
check "a bound connect without a token is refused" grep -q "Permission denied" "$W/out"
scrape "$W/m2"
d0=$(val 'capfence_delegations_total{result="rejected",reason="epoch_mismatch"}' "$W/m1")
d1=$(val 'capfence_delegations_total{result="rejected",reason="epoch_mismatch"}' "$W/m2")
check "metrics: delegations rejected as epoch_mismatch +1 ($d0 -> $d1)" [ "$d1" -eq $((d0 + 1)) ]
x0=$(val 'capfence_exercises_total{result="denied",reason="no_capability"}' "$W/m1")
x1=$(val 'capfence_exercises_total{result="denied",reason="no_capability"}' "$W/m2")
check "metrics: exercises denied as no_capability went up ($x0 -> $x1)" [ "$x1" -gt "$x0" ]
check "metrics: the active epoch is 62, a task bound" sh -c \
	"grep -q '^capfence_epoch_active 62$' '$W/m2' && [ \"\$(grep '^capfence_bound_credentials ' '$W/m2' | awk '{print \$2}')\" -ge 1 ]"
check "metrics: the agent applied 2 epoch installs and the activation" sh -c \
	"grep -q '^capfence_agent_applies_total{kind=\"epoch_install\",result=\"applied\"} 2$' '$W/m2' &&
	 grep -q '^capfence_agent_applies_total{kind=\"epoch_activate\",result=\"applied\"} 1$' '$W/m2'"
check "metrics: the apply latency histogram counts them" [ "$(val capfence_agent_apply_duration_seconds_count "$W/m2")" -ge 3 ]
check "metrics: confirmations counted" [ "$(val capfence_agent_confirmations_total "$W/m2")" -ge 3 ]

# the listener: bad requests, and a client that holds its connection open
printf 'POST /metrics HTTP/1.1\r\n\r\n' | nc -w 5 127.0.0.1 9464 > "$W/out" 2>&1
check "POST: 405" grep -q "^HTTP/1.1 405 " "$W/out"
printf 'GET /nope HTTP/1.1\r\n\r\n' | nc -w 5 127.0.0.1 9464 > "$W/out" 2>&1
check "an unknown path: 404" grep -q "^HTTP/1.1 404 " "$W/out"
{ printf 'GET /'; head -c 5000 /dev/zero | tr '\0' a; printf ' HTTP/1.1\r\n\r\n'; } | nc -w 5 127.0.0.1 9464 > "$W/out" 2>&1
check "a request over 4096 bytes: 431" grep -q "^HTTP/1.1 431 " "$W/out"
sleep 8 | nc 127.0.0.1 9464 >/dev/null 2>&1 &
HOLD=$!
sleep 0.3
check "a client holding a connection open does not hold up a scrape" scrape "$W/m3"
kill $HOLD 2>/dev/null; wait $HOLD 2>/dev/null

# the heartbeat hangs (an apply holds the module lock): the pings stop,
# the listener still answers, the host goes stale; then all resume
echo hang > "$W/faults"
capfence fleet revoke 0x91 >/dev/null
i=0
until grep -q "apply hangs" "$W/agent.log" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
L1=$(wc -l < "$W/notes")
sleep 3
check "heartbeat hung: no WATCHDOG=1 for 3 s (systemd would restart it)" [ "$(notes_from 'WATCHDOG=1' $((L1 + 1)))" -eq 0 ]
check "heartbeat hung: /metrics still answers" scrape "$W/m4"
check "heartbeat hung: the module is stale or denies" sh -c "grep -q '^capfence_fleet_state{state=\"current\"} 0$' '$W/m4'"
if status_is /healthz 503 && grep -q "^fleet \(stale\|deny\): confirmed [0-9]* ms ago" "$W/out"; then ok "heartbeat hung: /healthz 503, stale"
else nok "heartbeat hung: /healthz 503, stale"; fi
rm -f "$W/faults"
L2=$(wc -l < "$W/notes")
i=0
until [ "$(state)" = current ] || [ $i -ge 50 ]; do sleep 0.2; i=$((i + 1)); done
sleep 1
check "unhung: WATCHDOG=1 again" [ "$(notes_from 'WATCHDOG=1' $((L2 + 1)))" -ge 1 ]
healthz_ok_within() {
	i=0
	until status_is /healthz 200; do i=$((i + 1)); [ $i -lt 20 ] || return 1; sleep 0.5; done
}
check "unhung: /healthz 200" healthz_ok_within

# hooks detached: /healthz 503 (no bound task may remain)
kill $P 2>/dev/null; wait $P 2>/dev/null; P=
i=0
until capfence detach >/dev/null 2>&1 || [ $i -ge 50 ]; do sleep 0.2; i=$((i + 1)); done
if status_is /healthz 503 && grep -q "^hooks not attached" "$W/out"; then ok "hooks detached: /healthz 503"
else nok "hooks detached: /healthz 503"; fi
scrape "$W/m5"
check "hooks detached: capfence_hooks_attached 0" grep -q '^capfence_hooks_attached 0$' "$W/m5"

kill $AG; wait $AG; AG=
check "a clean stop says STOPPING=1" grep -q 'STOPPING=1' "$W/notes"
capfence attach >/dev/null
finish
