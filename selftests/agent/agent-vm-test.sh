#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# capfenced against the real module, one VM, etcd in the guest on loopback
# (make agent-check stages the host's etcd binary with --add):
# changes applied in revision order with the log line per change, a change
# the module refuses skipped, a compacted history rebuilt from a snapshot,
# staleness during an outage and recovery after it, --wait, the host key
# gone after a clean stop. Prints kselftest TAP and a Totals line.

E=http://127.0.0.1:2379
export CAPFENCE_ETCD_ENDPOINTS=$E
W=/tmp/cf-fleet-vm
mkdir -p "$W"
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; sed 's/^/#   /' "$W/agent.log" | tail -n 12; }
check() { name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }
state() { capfence status --json | sed -n 's/.*"fleet":{"state":"\([a-z]*\)".*/\1/p'; }
rev() { capfence status --json | sed -n 's/.*"fleet_rev":\([0-9]*\).*/\1/p'; }
etcd_start() {
	etcd --name g --data-dir "$W/etcd" --listen-client-urls $E --advertise-client-urls $E \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster g=http://127.0.0.1:2380 >>"$W/etcd.log" 2>&1 &
	EP=$!
	i=0
	until capfence fleet status >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 100 ] || return 1; sleep 0.2
	done
}
echo "TAP version 13"
command -v etcd >/dev/null || { echo "1..0 # SKIP no etcd in the guest"; exit 0; }
check "etcd starts in the guest" etcd_start

# history before the agent, then compacted: the agent rebuilds from a snapshot
capfence fleet epoch install 41 'net:connect=token:10.0.0.0/8' fs:read=open >/dev/null
capfence fleet epoch activate 41 >/dev/null
capfence fleet key add 9 >/dev/null
capfence fleet key remove 9 >/dev/null	# this host never had key 9: skipped
R=$(capfence fleet revoke 0x77 | sed 's/rev=//')
S=$(capfence fleet status --json | sed -n 's/.*"store_rev":\([0-9]*\).*/\1/p')
wget -q -O /dev/null --post-data "{\"revision\":\"$S\"}" $E/v3/kv/compaction
capfenced --endpoints $E --host vm1 --max-staleness 2000 --deny-after 4000 --heartbeat 300 \
	--lease-ttl 5 --foreground --log "$W/agent.log" 2>"$W/agent.out" &
AG=$!
sleep 3
check "compacted history: rebuilt from a snapshot" grep -q "rebuilt from a snapshot at rev=" "$W/agent.log"
check "rebuild applied epoch 41 at its revision" grep -q "^capfenced: applied rev=2 epoch_install 41$" "$W/agent.log"
check "rebuild applied the revocation" grep -q "^capfenced: applied rev=$R revoke 0000000000000077$" "$W/agent.log"
check "a key this host lacks is skipped, not wedged" grep -q "^capfenced: skipped rev=[0-9]* key_remove 9: " "$W/agent.log"
check "epoch 41 installed and active" sh -c "capfence epoch list | grep -q '^41  *yes'"
check "the module is at the snapshot's revision or later" [ "$(rev)" -ge "$S" ]
check "fleet state current" [ "$(state)" = current ]

# live changes through the watch, in order
R1=$(capfence fleet epoch install 42 fs:read=deny | sed 's/rev=//')
R2=$(capfence fleet epoch activate 42 --wait --timeout 10 | head -n1 | sed 's/rev=//')
check "watch: epoch_install 42 at its revision" grep -q "^capfenced: applied rev=$R1 epoch_install 42$" "$W/agent.log"
check "watch: epoch_activate 42 after it" grep -q "^capfenced: applied rev=$R2 epoch_activate 42$" "$W/agent.log"
# confirmations advance the module to the store revision they read
check "module at the last change's revision or past it" [ "$(rev)" -ge "$R2" ]
capfence fleet status --json > "$W/st"
check "fleet status lists vm1 current" grep -q '"host":"vm1","applied":[0-9]*,"current":true' "$W/st"

# an outage: stale, then deny, then current again
kill $EP; wait $EP 2>/dev/null
sleep 2.6
check "outage: stale after --max-staleness" [ "$(state)" = stale ]
sleep 2
check "outage: deny after --deny-after" [ "$(state)" = deny ]
check "the outage is logged once" [ "$(grep -c 'no confirmations until it answers' "$W/agent.log")" -eq 1 ]
etcd_start
sleep 1.5
check "store back: current again" [ "$(state)" = current ]
capfence fleet revoke 0x78 --wait --timeout 10 --json > "$W/out"
check "fleet revoke --wait after the outage" grep -q '"applied":true,"hosts":1' "$W/out"

# a clean stop leaves the lease to expire: the host stays live until its
# module denies (the lease was raised to the deny bound + heartbeat + 1 s)
check "--lease-ttl raised to outlive the deny bound" grep -q "^capfenced: --lease-ttl 5 raised to 6 s" "$W/agent.log"
kill $AG; wait $AG
check "clean stop logged" grep -q "^capfenced: stopped at rev=" "$W/agent.log"
capfence fleet status --json > "$W/st"
check "clean stop: the host is still live until its lease expires" grep -q '"host":"vm1"' "$W/st"
sleep 9
capfence fleet status --json > "$W/st"
check "the lease expired: no live host" grep -q '"hosts":\[\]' "$W/st"
kill $EP 2>/dev/null
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail -eq 0 ]
