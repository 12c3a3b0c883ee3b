#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A capfence denial read by Debian's audit tools, in the test VM: auditd
# (config /usr/share/capfence/auditd.conf, log in /tmp/audit) receives the
# kernel's type 1460 records; `ausearch -m 1460` finds them and interprets
# them; cfaudit (libauparse: auparse_init(AUSOURCE_FILE), auparse_find_field)
# extracts pid, epoch, class, reason and cap_id, and the test asserts each
# against what it provoked:
#   - an exercise denial: a bound `nc` connects outside its token's
#     constraint (reason=constraint, EACCES);
#   - a delegation rejection: a token of another epoch (epoch_mismatch).
# Prints kselftest-style lines and a Totals line.

CF=${CAPFENCE:-capfence}
W=${TMPDIR:-/tmp}/cf-audit.$$
LOG=/tmp/audit/audit.log
mkdir -p "$W" || exit 1
n=0 pass=0 fail=0 skip=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "#   $2"; }
finish() {
	[ -n "${SLEEPER:-}" ] && kill "$SLEEPER" 2>/dev/null
	[ -n "${AUDITD:-}" ] && kill "$AUDITD" 2>/dev/null
	rm -rf "$W"
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	[ $fail -eq 0 ]
	exit $?
}
# field FILE KEY: the value of KEY= in the first line of FILE
field() { tr ' ' '\n' < "$1" | sed -n "s/^$2=//p" | head -1; }
# wait_for PATTERN: until ausearch shows a 1460 record matching PATTERN
wait_for() {
	i=0
	while [ $i -lt 100 ]; do
		ausearch -if "$LOG" -m 1460 --raw 2>/dev/null | grep -q -e "$1" && return 0
		sleep 0.1 2>/dev/null || sleep 1
		i=$((i + 1))
	done
	return 1
}

echo "TAP version 13"

# --- auditd
mkdir -p /etc/audit/plugins.d /tmp/audit /var/run /var/log/audit
cp /usr/share/capfence/auditd.conf /etc/audit/auditd.conf
chmod 0640 /etc/audit/auditd.conf
auditd -n > "$W/auditd.out" 2>&1 &
AUDITD=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'DAEMON_START' "$LOG" 2>/dev/null; do
	sleep 0.1 2>/dev/null || sleep 1
	i=$((i + 1))
done
if grep -q 'DAEMON_START' "$LOG" 2>/dev/null; then
	ok "auditd started, logging to $LOG"
else
	nok "auditd started, logging to $LOG" "$(head -3 "$W/auditd.out" | tr '\n' ' ')"
	finish
fi

# --- provoke an exercise denial and a delegation rejection
E=7 OLD=6 CAP=c0ffee0123456789 CAP2=0badc0de00000042 CAP3=5eed000000000007
"$CF" key generate --id 1 -o "$W/k" > /dev/null &&
"$CF" key install "$W/k" > /dev/null &&
"$CF" epoch install $OLD net:connect=token fs:read=open fs:write=open > /dev/null &&
"$CF" epoch install $E net:connect=token:127.0.0.0/8 fs:read=open fs:write=open > /dev/null &&
TOK=$("$CF" mint --key "$W/k" --class net:connect --epoch $E --constraint 127.0.0.1/32:80 --id $CAP) &&
TOLD=$("$CF" mint --key "$W/k" --class net:connect --epoch $OLD --id $CAP2)
[ $? -eq 0 ] && ok "key, epochs $OLD and $E, tokens minted" || { nok "key, epochs $OLD and $E, tokens minted"; finish; }

# 1. constraint: the token admits 127.0.0.1:80 only
"$CF" exec --epoch $E --token "$TOK" -- sh -c 'echo $$ > '"$W/pid"'; exec nc 127.0.0.1 9 < /dev/null' > "$W/nc.out" 2>&1
rc=$?
PID=$(cat "$W/pid" 2>/dev/null)
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qi 'permission denied' "$W/nc.out"; then
	ok "bound nc to 127.0.0.1:9 outside its token is denied with EACCES (pid $PID)"
else
	nok "bound nc to 127.0.0.1:9 outside its token is denied with EACCES (pid $PID)" "exit $rc: $(head -2 "$W/nc.out" | tr '\n' ' ')"
fi
# 2. revoked: the agent holds CAP3, which is revoked before it connects
TREV=$("$CF" mint --key "$W/k" --class net:connect --epoch $E --constraint 127.0.0.1/32 --id $CAP3)
"$CF" exec --epoch $E --token "$TREV" -- sh -c 'echo $$ > '"$W/pid2"'; while [ ! -e '"$W/go"' ]; do sleep 1; done; exec nc 127.0.0.1 9 < /dev/null' > "$W/nc2.out" 2>&1 &
AG=$!
i=0
while [ $i -lt 100 ] && ! [ -s "$W/pid2" ]; do sleep 0.1 2>/dev/null || sleep 1; i=$((i + 1)); done
PID2=$(cat "$W/pid2" 2>/dev/null)
"$CF" revoke $CAP3 > /dev/null 2>&1
touch "$W/go"
wait $AG
rc=$?
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qi 'permission denied' "$W/nc2.out"; then
	ok "after revoke $CAP3, the agent's nc is denied with EACCES (pid $PID2)"
else
	nok "after revoke $CAP3, the agent's nc is denied with EACCES (pid $PID2)" "exit $rc: $(head -2 "$W/nc2.out" | tr '\n' ' ')"
fi

"$CF" exec --epoch $E -- sleep 600 &
SLEEPER=$!
i=0
while [ $i -lt 100 ] && ! "$CF" task $SLEEPER --json 2>/dev/null | grep -q '"bound":true'; do
	sleep 0.1 2>/dev/null || sleep 1; i=$((i + 1))
done
"$CF" delegate "$TOLD" --pid $SLEEPER > "$W/del.out" 2>&1
rc=$?
[ $rc -eq 3 ] && ok "delegating an epoch $OLD token to an epoch $E task: epoch_mismatch (exit 3)" ||
	nok "delegating an epoch $OLD token to an epoch $E task: epoch_mismatch (exit 3)" "exit $rc"

# --- ausearch finds and interprets them
if wait_for "op=exercise.* pid=$PID " && wait_for "op=exercise.* pid=$PID2 " &&
   wait_for "op=delegate.*pid=$SLEEPER "; then
	ok "auditd logged the three records (type 1460)"
else
	nok "auditd logged the three records (type 1460)"
fi
ausearch -if "$LOG" -m 1460 --raw > "$W/raw" 2>&1
sed 's/^/# raw: /' "$W/raw"
grep -q '^type=UNKNOWN\[1460\] msg=audit([0-9.]*:[0-9]*): lsm=capfence ' "$W/raw" &&
	ok "ausearch -m 1460 --raw: well-formed records starting with lsm=capfence" ||
	nok "ausearch -m 1460 --raw: well-formed records starting with lsm=capfence"
ausearch -if "$LOG" -m 1460 -i > "$W/interp" 2>&1
grep "op=exercise" "$W/interp" | grep -q "pid=$PID comm=nc epoch=$E class=net:connect" &&
	ok "ausearch -m 1460 -i interprets the denial (comm=nc unquoted)" ||
	nok "ausearch -m 1460 -i interprets the denial (comm=nc unquoted)" "$(grep op=exercise "$W/interp" | head -1)"
# a record is an event of its own, written after the call (the module's
# queue): ausearch -p, which takes an event's pid from its SYSCALL record,
# does not select it; its own pid field does
ausearch -if "$LOG" -m 1460 --raw 2>/dev/null | grep "op=exercise" | grep -q " pid=$PID " &&
	ok "ausearch -m 1460 --raw: the denial selected by its own pid field" ||
	nok "ausearch -m 1460 --raw: the denial selected by its own pid field"
ausearch -if "$LOG" -m 1460 --format csv > "$W/csv" 2>&1 && [ "$(wc -l < "$W/csv")" -ge 2 ] &&
	ok "ausearch --format csv reads the records" || nok "ausearch --format csv reads the records"

# --- libauparse: cfaudit
cfaudit "$LOG" > "$W/au" 2>&1
sed 's/^/# auparse: /' "$W/au"
grep "op=exercise" "$W/au" | grep " pid=$PID " > "$W/ex"
grep "op=delegate" "$W/au" | grep " target_pid=$SLEEPER " > "$W/de"
grep "op=exercise" "$W/au" | grep " pid=$PID2 " > "$W/rv"
[ -s "$W/ex" ] && ok "auparse reads the exercise denial record" || nok "auparse reads the exercise denial record"
chk() {	# chk FILE KEY WANT WHAT
	got=$(field "$1" "$2")
	[ "$got" = "$3" ] && ok "auparse: $4 $2=$3" || nok "auparse: $4 $2=$3" "got '$got'"
}
chk "$W/ex" pid "$PID" denial
chk "$W/ex" epoch "$E" denial
chk "$W/ex" class net:connect denial
chk "$W/ex" reason constraint denial
# the record names the capability that came closest (0 when none was held;
# see the revoked record below)
cid=$(field "$W/ex" cap_id)
echo "$cid" | grep -qx '[0-9a-f]\{16\}' && ok "auparse: denial cap_id is 16 hex digits ($cid)" ||
	nok "auparse: denial cap_id is 16 hex digits" "got '$cid'"
chk "$W/ex" errno 13 denial
chk "$W/ex" lsm capfence denial
chk "$W/ex" comm_i nc denial
chk "$W/ex" target 127.0.0.1:9 denial
grep -q '=<missing>' "$W/ex" && nok "auparse finds every field of the denial" || ok "auparse finds every field of the denial"
[ -s "$W/rv" ] && ok "auparse reads the revoked denial record" || nok "auparse reads the revoked denial record"
chk "$W/rv" pid "$PID2" revoked-denial
chk "$W/rv" epoch "$E" revoked-denial
chk "$W/rv" class net:connect revoked-denial
chk "$W/rv" reason revoked revoked-denial
chk "$W/rv" cap_id "$CAP3" revoked-denial
chk "$W/rv" target 127.0.0.1:9 revoked-denial
[ -s "$W/de" ] && ok "auparse reads the delegation rejection record" || nok "auparse reads the delegation rejection record"
chk "$W/de" target_pid "$SLEEPER" rejection
chk "$W/de" epoch "$E" rejection
chk "$W/de" token_epoch "$OLD" rejection
chk "$W/de" class net:connect rejection
chk "$W/de" reason epoch_mismatch rejection
chk "$W/de" cap_id "$CAP2" rejection
chk "$W/de" errno 116 rejection
finish
