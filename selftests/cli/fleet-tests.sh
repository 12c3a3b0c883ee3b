#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# capfence fleet and capfenced on the host (make unit): every bad input is
# one clear line and its exit code; then, against an etcd this script
# starts on free loopback ports, the changes print their revisions, the
# guards refuse repeats, `--wait` waits for the live hosts and exits 12
# naming the ones that lag, and `fleet status` lists the hosts. The etcd
# part is skipped when there is no etcd binary (Debian: etcd-server).
#
#   CAPFENCE=build/tools/capfence CAPFENCED=build/tools/capfenced \
#       sh selftests/cli/fleet-tests.sh
#
# Prints "ok N - name" / "not ok N - name" and a kselftest Totals line.

CF=${CAPFENCE:-capfence}
CFD=${CAPFENCED:-capfenced}
W=$(mktemp -d "${TMPDIR:-/tmp}/cf-fleet.XXXXXX") || exit 1
n=0 pass=0 fail=0 skip=0
EPID=

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"
	[ -s "$W/out" ] && sed 's/^/#   out: /' "$W/out" | head -n 8
	[ -s "$W/err" ] && sed 's/^/#   err: /' "$W/err" | head -n 8
}
skipt() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $1 # SKIP $2"; }

# tg NAME RC PATTERN CMD...: exits with RC, PATTERN is in stdout+stderr,
# and a failure says so in exactly one line on stderr
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

finish() {
	[ -n "$EPID" ] && kill "$EPID" 2>/dev/null && wait "$EPID" 2>/dev/null
	rm -rf "$W"
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	[ "$fail" -eq 0 ]
	exit $?
}

echo "TAP version 13"
# a port nothing listens on
DEAD=http://127.0.0.1:1

# ---- bad input: no store needed ------------------------------------------------------
tg "fleet --help" 0 "usage: capfence fleet" "$CF" fleet --help
tg "fleet: no subcommand" 2 "missing subcommand" "$CF" fleet
tg "fleet: unknown subcommand" 2 "unknown subcommand 'frob'" "$CF" fleet frob
# the subcommands are one table: the missing-subcommand list and --help come from its rows
tg "fleet: no subcommand lists each once" 2 \
	"missing subcommand (epoch, key, revoke, status, head, compact, recover, keygen)$" "$CF" fleet
tg "fleet --help: a line per subcommand" 0 "^       capfence fleet key remove ID$" "$CF" fleet --help
tg "fleet key --help is fleet's" 0 "^       capfence fleet --signing-key F recover \[--json\]$" "$CF" fleet key --help
tg "fleet: unknown option" 2 "unknown option '--frob'" "$CF" fleet status --frob
tg "fleet: --endpoints needs a value" 2 "option '--endpoints' needs a value" "$CF" fleet status --endpoints
tg "fleet: bad endpoint" 2 "bad etcd endpoint 'localhost:2379'" "$CF" fleet --endpoints localhost:2379 status
tg "fleet: bad endpoint from the environment" 2 "bad etcd endpoint 'ftp://x'" \
	env CAPFENCE_ETCD_ENDPOINTS=ftp://x "$CF" fleet status
tg "fleet: bad prefix" 2 "bad fleet prefix 'capfence'" "$CF" fleet --prefix capfence --endpoints $DEAD status
tg "fleet: --timeout without --wait" 2 "--timeout goes with --wait" "$CF" fleet revoke 1 --timeout 3
tg "fleet: --timeout 0" 2 "is not a number of seconds" "$CF" fleet revoke 1 --wait --timeout 0
tg "fleet: --timeout x" 2 "is not a number of seconds" "$CF" fleet revoke 1 --wait --timeout x
tg "fleet status --wait" 2 "--wait goes with a change" "$CF" fleet status --wait
tg "fleet status: extra argument" 2 "unexpected argument 'x'" "$CF" fleet status x
tg "fleet epoch: no subcommand" 2 "fleet epoch: missing subcommand" "$CF" fleet epoch
tg "fleet epoch: unknown subcommand" 2 "fleet epoch: unknown subcommand 'list'" "$CF" fleet epoch list
tg "fleet epoch install: no id" 2 "missing epoch ID" "$CF" fleet epoch install
tg "fleet epoch install: bad id" 2 "bad epoch id '0'" "$CF" fleet epoch install 0 fs:read=open
tg "fleet epoch install: bad rule" 2 "rule 1: " "$CF" fleet epoch install 5 fs:read=maybe
tg "fleet epoch install: duplicate class" 2 "rule 2: " "$CF" fleet epoch install 5 fs:read=open fs:read=deny
tg "fleet epoch install: rules and -f" 2 "either as arguments or with -f" \
	"$CF" fleet epoch install 5 -f /dev/null fs:read=open
tg "fleet epoch install: -f without FILE" 2 "option '-f' needs a value" "$CF" fleet epoch install 5 -f
tg "fleet epoch install: missing file" 1 "No such file" "$CF" fleet epoch install 5 -f "$W/none"
printf 'fs:read=open\n' > "$W/noid"
tg "fleet epoch install -f: file without an epoch id" 2 "" "$CF" fleet epoch install -f "$W/noid"
tg "fleet epoch activate: no id" 2 "missing ID" "$CF" fleet epoch activate
tg "fleet epoch activate: bad id" 2 "bad epoch id 'x'" "$CF" fleet epoch activate x
tg "fleet epoch activate: two ids" 2 "unexpected argument '2'" "$CF" fleet epoch activate 1 2
tg "fleet key: no subcommand" 2 "fleet key: missing subcommand" "$CF" fleet key
tg "fleet key install: refused (key material never goes to the fleet)" 2 \
	"fleet key: unknown subcommand 'install'" "$CF" fleet key install /etc/passwd
tg "fleet key add: bad id" 2 "bad key id '4294967296'" "$CF" fleet key add 4294967296
tg "fleet key remove: bad id" 2 "bad key id '-1'" "$CF" fleet key remove -1
tg "fleet revoke: no id" 2 "missing ID" "$CF" fleet revoke
tg "fleet revoke: bad cap id" 2 "bad cap id 'xyz'" "$CF" fleet revoke xyz
tg "fleet: --cacert to a missing file" 2 "fleet: --cacert $W/none: No such file or directory" \
	"$CF" fleet --endpoints https://127.0.0.1:1 --cacert "$W/none" status
tg "fleet: --cert without --key" 2 "fleet: --cert and --key come together" \
	"$CF" fleet --endpoints https://127.0.0.1:1 --cert /etc/passwd status
tg "fleet: --signing-key to a missing file" 2 "fleet: --signing-key $W/none: No such file or directory" \
	"$CF" fleet --endpoints $DEAD --signing-key "$W/none" revoke 1
printf 'x\n' > "$W/badkey"
tg "fleet: --signing-key not a key" 2 "not a signing key (base64 of 64 bytes)" \
	"$CF" fleet --endpoints $DEAD --signing-key "$W/badkey" revoke 1
tg "fleet: --host-keys with a bad line" 2 "fleet: --host-keys $W/badkey:1: expected NAME PUBLIC-KEY" \
	"$CF" fleet --endpoints $DEAD --host-keys "$W/badkey" status
tg "fleet keygen: no -o" 2 "fleet keygen: expected -o FILE" "$CF" fleet keygen
tg "fleet keygen -o FILE prints the public key" 0 '^[A-Za-z0-9+/]\{43\}=$' "$CF" fleet keygen -o "$W/fk"
if [ "$(stat -c %a "$W/fk")" = 600 ] && grep -qx "$(cat "$W/out")" "$W/fk.pub"; then
	ok "fleet keygen: FILE mode 0600, FILE.pub the public key"
else
	nok "fleet keygen: FILE mode 0600, FILE.pub the public key"
fi
tg "fleet keygen: never overwrites a key" 1 "fleet keygen: $W/fk: File exists" "$CF" fleet keygen -o "$W/fk"
tg "fleet: store unreachable is one line, exit 1" 1 "etcd unreachable" \
	"$CF" fleet --endpoints $DEAD revoke 5
tg "fleet status: store unreachable" 1 "etcd unreachable" "$CF" fleet --endpoints $DEAD status

# ---- capfenced: bad input --------------------------------------------------------------
tg "capfenced: no --endpoints" 2 "--endpoints is required" env -u CAPFENCE_ETCD_ENDPOINTS "$CFD" --host a
tg "capfenced: no --host" 2 "--host is required" "$CFD" --endpoints $DEAD
tg "capfenced: bad --host" 2 "bad host name 'a/b'" "$CFD" --endpoints $DEAD --host a/b
tg "capfenced: bad endpoint" 2 "bad etcd endpoint" "$CFD" --endpoints nope --host a
tg "capfenced: bad prefix" 2 "bad fleet prefix" "$CFD" --endpoints $DEAD --host a --prefix x
tg "capfenced: deny below stale" 2 "must not be below --max-staleness" \
	"$CFD" --endpoints $DEAD --host a --max-staleness 5000 --deny-after 1000
tg "capfenced: heartbeat above stale" 2 "must be below --max-staleness" \
	"$CFD" --endpoints $DEAD --host a --max-staleness 1000 --heartbeat 1000
tg "capfenced: bad --report-every" 2 "--report-every: 'soon' is not a number from 0 to 3600000" \
	"$CFD" --endpoints $DEAD --host a --report-every soon
tg "capfenced: --report-every too long" 2 "--report-every: '3600001' is not a number" \
	"$CFD" --endpoints $DEAD --host a --report-every 3600001
tg "capfenced: --max-staleness 0 (no bound) refused" 2 "--max-staleness: '0' is not a number from 1 to 86400000" \
	"$CFD" --endpoints $DEAD --host a --max-staleness 0
tg "capfenced: --deny-after 0 refused" 2 "--deny-after: '0' is not a number from 1 to 86400000" \
	"$CFD" --endpoints $DEAD --host a --deny-after 0
tg "capfenced: stale above the module's bound" 2 "not a number from 1 to 86400000" \
	"$CFD" --endpoints $DEAD --host a --max-staleness 86400001
tg "capfenced: bad --lease-ttl" 2 "--lease-ttl: 'x'" "$CFD" --endpoints $DEAD --host a --lease-ttl x
tg "capfenced: unknown option" 2 "unknown option or missing value: .--frob." "$CFD" --frob
tg "capfenced: option without its value" 2 "unknown option or missing value: .--host." "$CFD" --endpoints $DEAD --host
tg "capfenced: extra argument" 2 "unexpected argument 'x'" "$CFD" --endpoints $DEAD --host a x
tg "capfenced: --log to a bad path" 2 "--log /nonexistent/x" "$CFD" --endpoints $DEAD --host a --log /nonexistent/x
tg "capfenced: --cacert to a missing file" 2 "capfenced: --cacert $W/none: No such file" \
	"$CFD" --endpoints $DEAD --host a --cacert "$W/none"
tg "capfenced: --key without --cert" 2 "capfenced: --cert and --key come together" \
	"$CFD" --endpoints $DEAD --host a --key /etc/passwd
tg "capfenced: --fleet-pubkey not a key" 2 "capfenced: --fleet-pubkey $W/badkey: not a fleet public key" \
	"$CFD" --endpoints $DEAD --host a --fleet-pubkey "$W/badkey"
tg "capfenced: --fleet-pubkey five times" 2 "capfenced: --fleet-pubkey: at most 4 keys" \
	"$CFD" --endpoints $DEAD --host a --fleet-pubkey "$W/fk.pub" --fleet-pubkey "$W/fk.pub" \
	--fleet-pubkey "$W/fk.pub" --fleet-pubkey "$W/fk.pub" --fleet-pubkey "$W/fk.pub"
tg "capfenced: --host-key not a key" 2 "capfenced: --host-key $W/badkey: not a signing key" \
	"$CFD" --endpoints $DEAD --host a --host-key "$W/badkey"
tg "capfenced: --metrics-listen without a port" 2 \
	"capfenced: --metrics-listen '127.0.0.1': expected ADDR:PORT with a numeric address" \
	"$CFD" --endpoints $DEAD --host a --metrics-listen 127.0.0.1
tg "capfenced: --metrics-listen with a host name" 2 "--metrics-listen 'localhost:9464': expected ADDR:PORT" \
	"$CFD" --endpoints $DEAD --host a --metrics-listen localhost:9464
tg "capfenced: --metrics-listen with a bad address" 2 "--metrics-listen '999.1.1.1:9464': expected ADDR:PORT" \
	"$CFD" --endpoints $DEAD --host a --metrics-listen 999.1.1.1:9464
tg "capfenced: --metrics-listen with an unbracketed IPv6 address" 2 "--metrics-listen '::1:9464': expected ADDR:PORT" \
	"$CFD" --endpoints $DEAD --host a --metrics-listen ::1:9464
tg "capfenced: --metrics-listen port 0" 2 "--metrics-listen '127.0.0.1:0': the port must be a number from 1 to 65535" \
	"$CFD" --endpoints $DEAD --host a --metrics-listen 127.0.0.1:0
tg "capfenced: --metrics-listen port 65536" 2 "the port must be a number from 1 to 65535" \
	"$CFD" --endpoints $DEAD --host a --metrics-listen '[::1]:65536'
tg "capfenced: --metrics-listen without its value" 2 "unknown option or missing value: .--metrics-listen." \
	"$CFD" --endpoints $DEAD --host a --metrics-listen
# a port another socket holds: the bind error, before anything else
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); sys.stdout.close(); time.sleep(10)' > "$W/busy" &
BUSY=$!
i=0
until [ -s "$W/busy" ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
tg "capfenced: --metrics-listen on a port in use" 2 "capfenced: --metrics-listen 127.0.0.1:$(cat "$W/busy"): Address already in use" \
	"$CFD" --endpoints $DEAD --host a --metrics-listen "127.0.0.1:$(cat "$W/busy")"
kill $BUSY 2>/dev/null; wait $BUSY 2>/dev/null

# ---- against a real etcd ---------------------------------------------------------------------
ETCD=$(command -v etcd || ls /usr/bin/etcd 2>/dev/null)
ETCDCTL=$(command -v etcdctl || ls /usr/bin/etcdctl 2>/dev/null)
if [ -z "$ETCD" ] || [ -z "$ETCDCTL" ]; then
	skipt "fleet against etcd" "no etcd/etcdctl binary (apt-get install etcd-server etcd-client)"
	finish
fi
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CP=$(port) PP=$(port)
E=http://127.0.0.1:$CP
"$ETCD" --name f --data-dir "$W/etcd" --listen-client-urls "$E" --advertise-client-urls "$E" \
	--listen-peer-urls "http://127.0.0.1:$PP" --initial-advertise-peer-urls "http://127.0.0.1:$PP" \
	--initial-cluster "f=http://127.0.0.1:$PP" >"$W/etcd.log" 2>&1 &
EPID=$!
i=0
until "$CF" fleet --endpoints "$E" status >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || { nok "etcd starts"; finish; }
	sleep 0.1
done
export CAPFENCE_ETCD_ENDPOINTS="$DEAD,$E"	# the first one fails over

tg "fleet epoch install prints rev=R" 0 "^rev=[0-9][0-9]*$" "$CF" fleet epoch install 41 'net:connect=token:10.0.0.0/8' fs:read=open
tg "fleet epoch install again: already in the fleet" 1 "epoch 41 is already in the fleet" \
	"$CF" fleet epoch install 41 fs:read=open
printf 'epoch 42\nfs:read=open # comment\n\nnet:bind=deny\n' > "$W/e42"
tg "fleet epoch install -f FILE" 0 "^rev=" "$CF" fleet epoch install -f "$W/e42"
printf 'fs:write=open\n' | "$CF" fleet epoch install 43 -f - >"$W/out" 2>"$W/err" &&
	grep -q '^rev=' "$W/out" && ok "fleet epoch install ID -f - (stdin)" || nok "fleet epoch install ID -f - (stdin)"
tg "fleet epoch activate --json" 0 '^{"rev":[0-9]*,"kind":"epoch_activate","epoch_id":41}$' \
	"$CF" fleet epoch activate 41 --json
tg "fleet epoch activate: not in the fleet" 1 "epoch 44 is not in the fleet" "$CF" fleet epoch activate 44
tg "fleet key add" 0 "^rev=" "$CF" fleet key add 1
tg "fleet key remove: not in the fleet" 1 "key 2 is not in the fleet" "$CF" fleet key remove 2
tg "fleet key remove" 0 "^rev=" "$CF" fleet key remove 1
tg "fleet key remove again" 1 "key 1 is already removed" "$CF" fleet key remove 1
tg "fleet revoke --json" 0 '"cap_id":"00000000000000ff"' "$CF" fleet revoke 0xff --json
tg "fleet revoke again" 1 "cap 00000000000000ff is already revoked" "$CF" fleet revoke 0xff
tg "fleet --prefix keeps fleets apart" 0 "^rev=" "$CF" fleet --prefix /other/ revoke 0xff
tg "fleet --wait without live hosts: exit 12, nothing enforces it" 12 \
	"rev=[0-9]* committed; no live host under /capfence/hosts/ after 1 s" \
	"$CF" fleet revoke 0x100 --wait --timeout 1
tg "fleet --wait --json without live hosts" 12 '"applied":false,"hosts":0,"lagging":\[\],"counted":\[\]}$' \
	"$CF" fleet revoke 0x104 --wait --timeout 1 --json

# two live hosts, one lagging (reports written as capfenced writes them)
R=$("$CF" fleet status --json | sed -n 's/.*"fleet_rev":\([0-9]*\).*/\1/p')
"$ETCDCTL" --endpoints "$E" put /capfence/hosts/fast "{\"host\":\"fast\",\"applied\":\"$((R + 100))\",\"state\":\"current\"}" >/dev/null
"$ETCDCTL" --endpoints "$E" put /capfence/hosts/slow '{"host":"slow","applied":"1","state":"current"}' >/dev/null
tg "fleet --wait: a lagging host is exit 12 and named" 12 "not applied after 1 s by: slow (rev=1)" \
	"$CF" fleet revoke 0x101 --wait --timeout 1
if grep -q "^rev=" "$W/out" && ! grep -q fast "$W/err"; then ok "fleet --wait: the revision first, only the laggard named"
else nok "fleet --wait: the revision first, only the laggard named"; fi
tg "fleet --wait --json: lagging hosts in the JSON" 12 '"applied":false,"hosts":2,"lagging":\[{"host":"slow","applied":1}\],"counted":\["fast"\]}$' \
	"$CF" fleet revoke 0x102 --wait --timeout 1 --json
tg "fleet status: the hosts" 0 "^slow  *1 current  yes$" "$CF" fleet status
tg "fleet status --json" 0 '"hosts":\[{"host":"fast",' "$CF" fleet status --json
"$ETCDCTL" --endpoints "$E" put /capfence/hosts/slow "{\"host\":\"slow\",\"applied\":\"$((R + 100))\"}" >/dev/null
tg "fleet --wait: every live host applied" 0 "applied by 2 hosts" "$CF" fleet revoke 0x103 --wait --timeout 5
# a malformed report is named, never counted as a host that applied
"$ETCDCTL" --endpoints "$E" put /capfence/hosts/odd 'not json' >/dev/null
tg "fleet --wait: a malformed host report is exit 12 and named" 12 \
	'not applied after 1 s by: odd (malformed report (not JSON with "host" and "applied"))' \
	"$CF" fleet revoke 0x105 --wait --timeout 1
"$ETCDCTL" --endpoints "$E" put /capfence/hosts/odd "{\"host\":\"fast\",\"applied\":\"$((R + 100))\"}" >/dev/null
tg "fleet --wait: a report under another host's name is malformed" 12 \
	"odd (the report names host 'fast')" "$CF" fleet revoke 0x106 --wait --timeout 1
tg "fleet status: a malformed report is listed" 0 "^odd  *- ? *yes (the report names host 'fast')$" "$CF" fleet status
"$ETCDCTL" --endpoints "$E" put /capfence/hosts/odd "{\"host\":\"odd\",\"applied\":\"$((R + 100))\",\"failing\":\"x\"}" >/dev/null
tg "fleet status --json: a failing host says why" 0 '"host":"odd","applied":[0-9]*,"current":false,"state":"","stale_ms":0,"deny_ms":0,"time_ms":0,"failing":"x"}' \
	"$CF" fleet status --json
"$ETCDCTL" --endpoints "$E" del /capfence/hosts/odd >/dev/null

# signed changes: the value carries the signature of the key and value
"$CF" fleet --signing-key "$W/fk" revoke 0x200 >/dev/null
"$ETCDCTL" --endpoints "$E" get /capfence/fleet/revoke/512 --print-value-only > "$W/v"
# and opens the chain: seq 1 after the genesis link (zeros)
if grep -q '^{"kind":"revoke","cap_id":"512","seq":"1","prev":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","sig":"[A-Za-z0-9+/]*=*"}$' "$W/v"; then
	ok "fleet --signing-key: the change is signed and chained"
else nok "fleet --signing-key: the change is signed and chained"; cat "$W/v"; fi
tg "fleet --json: a chained change says its seq" 0 '"rev":[0-9]*,"kind":"revoke","cap_id":"0000000000000201","seq":2}' \
	env CAPFENCE_FLEET_SIGNING_KEY="$W/fk" "$CF" fleet revoke 0x201 --json
"$ETCDCTL" --endpoints "$E" get /capfence/fleet/revoke/513 --print-value-only > "$W/v"
if grep -q '"seq":"2","prev":"[A-Za-z0-9+/]*=*","sig":' "$W/v"; then ok "fleet: CAPFENCE_FLEET_SIGNING_KEY signs too"
else nok "fleet: CAPFENCE_FLEET_SIGNING_KEY signs too"; fi
"$ETCDCTL" --endpoints "$E" get /capfence/head --print-value-only > "$W/v"
if grep -q '^{"seq":"2","hash":"[A-Za-z0-9+/]*=*","time_ms":[0-9]*,"sig":"[A-Za-z0-9+/]*=*"}$' "$W/v"; then
	ok "fleet: each chained change moves the signed head"
else nok "fleet: each chained change moves the signed head"; cat "$W/v"; fi

# the head's timestamp role
tg "fleet head: renews the head (same seq, a new time)" 0 '^head seq=2 rev=[0-9]* time_ms=[0-9]*$' \
	"$CF" fleet --signing-key "$W/fk" head
tg "fleet head --json" 0 '^{"seq":2,"rev":[0-9]*,"time_ms":[0-9]*}$' "$CF" fleet --signing-key "$W/fk" head --json
tg "fleet status: the head, verified, and its age" 0 '^head  *seq=2, signed [0-9]* ms ago$' \
	"$CF" fleet --signing-key "$W/fk" status
tg "fleet status --json: the head" 0 '"head":{"seq":2,"rev":[0-9]*,"age_ms":[0-9]*}' \
	"$CF" fleet --fleet-pubkey "$W/fk.pub" status --json
tg "fleet head: needs the signing key" 2 "the head is signed with the fleet signing key" "$CF" fleet head
tg "fleet head: --every below 10 ms" 2 "--every: '5' is not a number of milliseconds from 10 to 3600000" \
	"$CF" fleet --signing-key "$W/fk" head --every 5
tg "fleet: --every goes with head only" 2 "fleet: --every goes with head" "$CF" fleet --every 100 status
tg "fleet head: --wait is refused" 2 "fleet head: --wait goes with a change" "$CF" fleet --signing-key "$W/fk" head --wait
tg "fleet head: an extra argument" 2 "fleet head: unexpected argument 'x'" "$CF" fleet --signing-key "$W/fk" head x
"$CF" fleet keygen -o "$W/fk2" >/dev/null
tg "fleet: a new signing key does not chain onto a head it cannot verify" 1 \
	"/capfence/head: bad signature on the head (no pinned key made it)" \
	"$CF" fleet --signing-key "$W/fk2" revoke 0x204
tg "fleet: ... and does with the old key pinned (a rotation)" 0 "^rev=[0-9]*$" \
	"$CF" fleet --signing-key "$W/fk2" --fleet-pubkey "$W/fk.pub" revoke 0x204
tg "fleet head: with the new key and the old one pinned" 0 '^head seq=3 ' \
	"$CF" fleet --signing-key "$W/fk2" --fleet-pubkey "$W/fk.pub" head
tg "fleet: --fleet-pubkey that is not a key" 2 "fleet: --fleet-pubkey" \
	"$CF" fleet --signing-key "$W/fk2" --fleet-pubkey nonsense head
# a head the store altered is refused by the timestamp role and by commits
"$ETCDCTL" --endpoints "$E" put /capfence/head '{"seq":"9","hash":"","time_ms":1}' >/dev/null
tg "fleet head: an unsigned head is refused, not re-signed" 1 "/capfence/head: unsigned head refused" \
	"$CF" fleet --signing-key "$W/fk2" head
tg "fleet: no change is chained onto an unsigned head" 1 "/capfence/head: unsigned head refused" \
	"$CF" fleet --signing-key "$W/fk2" revoke 0x205
"$ETCDCTL" --endpoints "$E" del /capfence/head >/dev/null

# compaction: the log folded into a signed snapshot, its revocation keys deleted
tg "fleet compact: needs the signing key" 2 "the snapshot is signed with the fleet signing key" "$CF" fleet compact
tg "fleet compact: an extra argument" 2 "fleet compact: unexpected argument 'x'" \
	"$CF" fleet --signing-key "$W/fk" compact x
tg "fleet compact: --wait is refused" 2 "fleet compact: --wait goes with a change" \
	"$CF" fleet --signing-key "$W/fk" compact --wait
tg "fleet compact: no head, nothing to compact" 1 "fleet compact: the fleet has no chained change to compact" \
	"$CF" fleet --signing-key "$W/fk" compact
# the head deleted above is a rollback to this signer: signed again only when the operator says so
tg "fleet head: a deleted head is below the high-water mark" 1 "fleet head: the store.s head (seq=0) is below this signer.s high-water mark" \
	"$CF" fleet --signing-key "$W/fk" head
"$CF" fleet --signing-key "$W/fk" --accept-rollback head >/dev/null
tg "fleet compact: a log with unchained changes is refused" 1 \
	": an unchained change (committed without --signing-key): only a chained log is compacted" \
	"$CF" fleet --signing-key "$W/fk" compact
"$ETCDCTL" --endpoints "$E" del /capfence/head >/dev/null
C="$CF fleet --prefix /c/ --signing-key $W/fk"
$C head >/dev/null && $C epoch install 7 'net:connect=open' >/dev/null && $C revoke 0x301 >/dev/null &&
	$C revoke 0x302 >/dev/null
tg "fleet compact: folds the chain, deletes the revocation keys it covers" 0 \
	'^snapshot seq=3 rev=[0-9]* bytes=[0-9]*: 3 changes folded, 1 revocation keys deleted (1 epochs, 0 keys removed, 2 revocations)$' \
	$C compact
if [ "$("$ETCDCTL" --endpoints "$E" get --prefix --keys-only /c/fleet/ | grep -c .)" = 2 ]; then
	ok "fleet compact: the epoch's key and the newest change's stay"
else nok "fleet compact: the epoch's key and the newest change's stay"; fi
tg "fleet compact --json: nothing new" 0 '^{"seq":3,"rev":[0-9]*,"bytes":[0-9]*,"folded":0,"deleted":0,"epochs":1,"keys_removed":0,"revoked":2}$' \
	$C compact --json
tg "fleet: an epoch id is still never installed twice" 1 "epoch 7 is already in the fleet" \
	$C epoch install 7 'net:connect=deny'
tg "fleet status: the snapshot" 0 '^snapshot  *seq=3 rev=[0-9]*, [0-9]* bytes, [0-9]* s old$' $C status
tg "fleet status --json: the snapshot" 0 '"snapshot":{"seq":3,"rev":[0-9]*,"bytes":[0-9]*,"age_ms":[0-9]*}' \
	$C status --json
"$ETCDCTL" --endpoints "$E" get /c/snapshot --print-value-only | sed 's/"revoked":\["769"/"revoked":["1"/' > "$W/v"
"$ETCDCTL" --endpoints "$E" put /c/snapshot "$(cat "$W/v")" >/dev/null
tg "fleet compact: a forged snapshot is refused" 1 "/c/snapshot: bad signature on the snapshot" $C compact
tg "fleet status: a forged snapshot is named" 0 '^snapshot  */c/snapshot: bad signature on the snapshot' $C status

# a store rolled back (restored from a backup): the lost changes committed
# again, as signed, from the signer's record; or the seqs it lacks named
RC="$CF fleet --prefix /r/ --signing-key $W/fk"
$RC head >/dev/null && $RC epoch install 9 'net:connect=open' >/dev/null && $RC revoke 0x401 >/dev/null
OLDHEAD=$("$ETCDCTL" --endpoints "$E" get /r/head --print-value-only)
$RC revoke 0x402 >/dev/null && $RC key add 5 >/dev/null
V1=$("$ETCDCTL" --endpoints "$E" get /r/fleet/revoke/1026 --print-value-only)
V2=$("$ETCDCTL" --endpoints "$E" get /r/fleet/key/5 --print-value-only)
rollback() {	# the store as a backup had it: the newer keys gone, the older head
	for k in "$@"; do "$ETCDCTL" --endpoints "$E" del "$k" >/dev/null; done
	"$ETCDCTL" --endpoints "$E" put /r/head "$OLDHEAD" >/dev/null
}
rollback /r/fleet/revoke/1026 /r/fleet/key/5
tg "fleet revoke over a restored store: below the high-water mark, the lost seq not reused" 1 \
	"the store.s head (seq=2) is below this signer.s high-water mark seq=4" $RC revoke 0x403
tg "fleet status: the seqs the store lost" 0 \
	"^lost  *seq=3..4 (below this signer's high-water mark: capfence fleet recover)$" $RC status
tg "fleet status --json: the seqs the store lost" 0 '"high_water":4,"lost":\[3,4\]' $RC status --json
tg "fleet recover: needs the signing key" 2 "fleet recover: the changes are committed again with the fleet signing key" \
	"$CF" fleet --prefix /r/ recover
tg "fleet recover: an extra argument" 2 "fleet recover: unexpected argument 'x'" $RC recover x
tg "fleet recover: --wait is refused" 2 "fleet recover: --wait goes with a change" $RC recover --wait
tg "fleet recover: --accept-rollback is refused" 2 "fleet recover: --accept-rollback goes with a change or head" \
	$RC --accept-rollback recover
tg "fleet recover: the lost changes committed again, in order" 0 \
	"^seq=4 rev=[0-9]* key_add 5 committed again$" $RC recover
if sed -n 1p "$W/out" | grep -q "^seq=3 rev=[0-9]* revoke 0000000000000402 committed again$" &&
	grep -q "^the store's head is at seq=4 again (2 changes committed again)$" "$W/out" &&
	[ "$("$ETCDCTL" --endpoints "$E" get /r/fleet/revoke/1026 --print-value-only)" = "$V1" ] &&
	[ "$("$ETCDCTL" --endpoints "$E" get /r/fleet/key/5 --print-value-only)" = "$V2" ]; then
	ok "fleet recover: each change back byte for byte (the links the hosts hold)"
else nok "fleet recover: each change back byte for byte (the links the hosts hold)"; fi
tg "fleet recover --json: nothing lost" 0 '^{"store_seq":4,"high_water":4,"recommitted":\[\]}$' $RC recover --json
tg "fleet revoke after recovery: the next seq" 0 '"seq":5' $RC revoke 0x403 --json
OLDHEAD=$("$ETCDCTL" --endpoints "$E" get /r/head --print-value-only)
$RC revoke 0x404 >/dev/null
mv "$W/fk.hw_r_.log" "$W/record"
grep -v "^6 " "$W/record" > "$W/fk.hw_r_.log"
rollback /r/fleet/revoke/1028
tg "fleet recover: a lost change the record lacks is named, nothing committed" 1 \
	"fleet recover: the store lost seq=6..6 (its head is at seq=5); this signer's record .* has no seq=6..6" $RC recover
tg "fleet recover --json: the unrecorded seqs" 1 '"recommitted":\[\],"unrecorded":\[6,6\],"error":' $RC recover --json
mv "$W/record" "$W/fk.hw_r_.log"
"$ETCDCTL" --endpoints "$E" put /r/fleet/revoke/1028 '{"kind":"revoke","cap_id":"1028"}' >/dev/null
tg "fleet recover: a key written since the restore is named" 1 \
	"fleet recover: /r/fleet/revoke/1028 holds another change than seq=6" $RC recover
"$ETCDCTL" --endpoints "$E" del /r/fleet/revoke/1028 >/dev/null
tg "fleet recover: with the record back" 0 "^seq=6 rev=[0-9]* revoke 0000000000000404 committed again$" $RC recover

# --host-keys: only signed reports of the listed hosts count; a listed host
# the store does not show lags (etcd can neither forge nor hide a host)
"$CF" fleet keygen -o "$W/hk-fast" > "$W/hk-fast.b64"
"$CF" fleet keygen -o "$W/hk-gone" > "$W/hk-gone.b64"
printf '# hosts\nfast %s\ngone %s\n' "$(cat "$W/hk-fast.b64")" "$(cat "$W/hk-gone.b64")" > "$W/hosts"
tg "fleet --host-keys: a forged (unsigned) report, a hidden host and a stranger all lag" 12 \
	"by: fast (unsigned report refused), gone (no live report), slow (not a host of --host-keys)" \
	"$CF" fleet --host-keys "$W/hosts" revoke 0x202 --wait --timeout 1
"$ETCDCTL" --endpoints "$E" put /capfence/hosts/fast "{\"host\":\"fast\",\"applied\":\"$((R + 1000))\",\"sig\":\"$(cat "$W/hk-gone.b64")$(cat "$W/hk-gone.b64")\"}" >/dev/null
tg "fleet --host-keys: a report signed by another key lags" 12 \
	"fast (bad signature on the report" "$CF" fleet --host-keys "$W/hosts" revoke 0x203 --wait --timeout 1

# etcd with mutual TLS (client-certificate auth), certificates made here
if command -v openssl >/dev/null; then
	T=$W/tls
	sh "$(dirname "$0")/../fleet/make-certs.sh" "$T"
	TP=$(port) TPP=$(port)
	TE=https://127.0.0.1:$TP
	"$ETCD" --name t --data-dir "$W/etcd-tls" --listen-client-urls "$TE" --advertise-client-urls "$TE" \
		--listen-peer-urls "http://127.0.0.1:$TPP" --initial-advertise-peer-urls "http://127.0.0.1:$TPP" \
		--initial-cluster "t=http://127.0.0.1:$TPP" --cert-file "$T/server.crt" --key-file "$T/server.key" \
		--client-cert-auth --trusted-ca-file "$T/ca.crt" >"$W/etcd-tls.log" 2>&1 &
	TPID=$!
	TLS="--cacert $T/ca.crt --cert $T/client.crt --key $T/client.key"
	i=0
	until "$CF" fleet --endpoints "$TE" $TLS status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 100 ] || break
		sleep 0.1
	done
	tg "fleet over mutual TLS: --cacert --cert --key" 0 "^rev=" "$CF" fleet --endpoints "$TE" $TLS revoke 0x300
	tg "fleet over TLS without a client certificate: refused" 1 "etcd unreachable" \
		"$CF" fleet --endpoints "$TE" --cacert "$T/ca.crt" status
	tg "fleet over TLS without the CA: the member is not trusted" 1 "etcd unreachable" \
		"$CF" fleet --endpoints "$TE" --cert "$T/client.crt" --key "$T/client.key" status
	kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null
else
	skipt "fleet over mutual TLS" "no openssl (apt-get install openssl)"
fi

# etcd user auth: root with a password, auth enabled on the store
printf 'pw-%s\n' "$$" > "$W/pw"
printf 'wrong\n' > "$W/badpw"
if "$ETCDCTL" --endpoints "$E" user add "root:$(cat "$W/pw")" >/dev/null 2>&1 &&
	"$ETCDCTL" --endpoints "$E" auth enable >/dev/null 2>&1; then
	tg "etcd auth: without a user, refused" 1 "fleet status: etcd: etcdserver: user name is empty" "$CF" fleet --endpoints "$E" status
	# this store is http://: the password goes in clear text only when asked
	tg "etcd auth: --user over http:// refused" 2 "plaintext endpoint $E: its requests and the etcd password" \
		"$CF" fleet --endpoints "$E" --user root --password-file "$W/pw" status
	tg "etcd auth: --user --password-file" 0 "^rev=" \
		"$CF" fleet --endpoints "$E" --user root --password-file "$W/pw" --insecure-plaintext revoke 0x400
	tg "etcd auth: a wrong password is one line, exit 1" 1 "etcd user 'root': etcd: .*authentication failed" \
		"$CF" fleet --endpoints "$E" --user root --password-file "$W/badpw" --insecure-plaintext status
	"$ETCDCTL" --endpoints "$E" --user "root:$(cat "$W/pw")" auth disable >/dev/null 2>&1
else
	nok "etcd auth enabled for the test"
fi
tg "fleet: --user without --password-file" 2 "fleet: --user and --password-file come together" \
	"$CF" fleet --endpoints $DEAD --user root status
tg "fleet: --password-file missing" 2 "fleet: --password-file $W/none: No such file" \
	"$CF" fleet --endpoints $DEAD --user root --password-file "$W/none" status
tg "capfenced: --password-file without --user" 2 "capfenced: --user and --password-file come together" \
	"$CFD" --endpoints $DEAD --host a --password-file "$W/pw"
# TLS means TLS: an http:// endpoint with TLS options or a user is refused
tg "fleet: --cacert with an http:// endpoint" 2 "fleet: --cacert with the plaintext endpoint $DEAD" \
	"$CF" fleet --endpoints $DEAD --cacert "$W/pw" status
tg "fleet: --cert --key with an http:// endpoint" 2 "fleet: --cert with the plaintext endpoint $DEAD" \
	"$CF" fleet --endpoints https://127.0.0.1:1,$DEAD --cert "$W/pw" --key "$W/pw" status
tg "fleet: --user with an http:// endpoint" 2 "fleet: --user with the plaintext endpoint $DEAD: its requests and the etcd password" \
	"$CF" fleet --endpoints $DEAD --user root --password-file "$W/pw" status
tg "capfenced: --cacert with an http:// endpoint" 2 "capfenced: --cacert with the plaintext endpoint $DEAD" \
	"$CFD" --endpoints $DEAD --host a --cacert "$W/pw"
tg "capfenced: --user with an http:// endpoint" 2 "capfenced: --user with the plaintext endpoint $DEAD" \
	"$CFD" --endpoints $DEAD --host a --user root --password-file "$W/pw"

# capfenced without the module: one line, exit 1 (the etcd side is fine)
if [ ! -e /sys/module/capfence ]; then
	tg "capfenced: module not loaded" 1 "the capfence module is not loaded" \
		"$CFD" --endpoints "$E" --host h1 --foreground
else
	skipt "capfenced: module not loaded" "capfence.ko is loaded here"
fi
finish
