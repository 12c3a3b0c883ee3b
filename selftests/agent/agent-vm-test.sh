#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# capfenced against the real module, one VM, etcd in the guest on loopback
# (make agent-check stages the host's etcd binary with --add):
# changes applied in revision order with the log line per change, a key
# removal this host never needed taken as applied, a compacted history
# rebuilt from a snapshot, staleness during an outage and recovery after
# it, --wait; a change that fails to apply (CAPFENCED_FAULT_FILE) never
# skipped: retried, the host not confirmed (stale, then deny) and named as
# failing by --wait until it applies; a module reload re-armed and
# replayed without an agent restart; a change that cannot be decoded
# stops the host loudly; the host key gone after a clean stop. Prints
# kselftest TAP and a Totals line.

E=http://127.0.0.1:2379
export CAPFENCE_ETCD_ENDPOINTS=$E
W=/tmp/cf-fleet-vm
mkdir -p "$W"
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"
	sed 's/^/#   /' "$W/agent.log" | tail -n 12
	[ -s "$W/out" ] && sed 's/^/#   out: /' "$W/out" | tail -n 4
}
check() { name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }
state() { capfence status --json | sed -n 's/.*"fleet":{"state":"\([a-z]*\)".*/\1/p'; }
rev() { capfence status --json | sed -n 's/.*"fleet_rev":\([0-9]*\).*/\1/p'; }
state_is() { [ "$(state)" = "$1" ]; }
# wait_until SECONDS CMD...: CMD true within SECONDS, polled every 0.2 s
wait_until() {
	t=$(($1 * 5)) i=0; shift
	until "$@"; do i=$((i + 1)); [ $i -lt $t ] || return 1; sleep 0.2; done
}
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
CAPFENCED_FAULT_FILE=$W/faults \
capfenced --endpoints $E --host vm1 --max-staleness 2000 --deny-after 4000 --heartbeat 300 \
	--lease-ttl 5 --reconcile 2 --foreground --log "$W/agent.log" 2>"$W/agent.out" &
AG=$!
# the rebuild is done once the host is current (a loaded guest takes a while)
wait_until 60 state_is current
check "compacted history: rebuilt from a snapshot" grep -q "rebuilt from a snapshot at rev=" "$W/agent.log"
check "rebuild applied epoch 41 at its revision" grep -q "^capfenced: applied rev=2 epoch_install 41$" "$W/agent.log"
check "rebuild applied the revocation" grep -q "^capfenced: applied rev=$R revoke 0000000000000077$" "$W/agent.log"
check "a key this host lacks: its removal holds, applied, not wedged" \
	grep -q "^capfenced: applied rev=[0-9]* key_remove 9 (the module had it: " "$W/agent.log"
check "epoch 41 installed and active" sh -c "capfence epoch list | grep -q '^41  *yes'"
check "the module is at the snapshot's revision or later" [ "$(rev)" -ge "$S" ]
# current again within a few heartbeats: a loaded guest may miss its
# --max-staleness (2 s) for a moment, which is the state working
check "fleet state current" wait_until 10 state_is current

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
# (SIGKILL: a graceful stop stops answering long before it exits; the
# states are polled, the bounds themselves are fleet_test's to time)
kill -9 $EP; wait $EP 2>/dev/null
i=0
until [ "$(state)" != current ] || [ $i -ge 60 ]; do sleep 0.1; i=$((i + 1)); done
# a loaded guest's polls can step over the stale window (2 s to 4 s) into
# deny; the order stale, then deny, is fleet_test's (the module's events)
st=$(state)
check "outage: stale after --max-staleness" [ "$st" = stale -o "$st" = deny ]
i=0
until [ "$(state)" = deny ] || [ $i -ge 60 ]; do sleep 0.1; i=$((i + 1)); done
check "outage: deny after --deny-after" [ "$(state)" = deny ]
check "the outage is logged once" [ "$(grep -c 'no confirmations until it answers' "$W/agent.log")" -eq 1 ]
etcd_start
check "store back: current again" wait_until 10 state_is current
capfence fleet revoke 0x78 --wait --timeout 10 --json > "$W/out"
check "fleet revoke --wait after the outage" grep -q '"applied":true,"hosts":1' "$W/out"

# a revoke the module fails to apply (ENOMEM) is never skipped nor acknowledged
echo always > "$W/faults"
capfence fleet revoke 0x79 --wait --timeout 3 > "$W/out" 2>&1; rc=$?
R79=$(sed -n 's/^rev=//p' "$W/out")
check "apply failure: --wait exits 12" [ $rc -eq 12 ]
check "apply failure: --wait names the host, its revision and why" grep -q \
	"not applied after 3 s by: vm1 (rev=[0-9]*, failing: rev=$R79 revoke 0000000000000079: Cannot allocate memory (injected))" "$W/out"
# once per distinct failure: a retry never repeats the line (a reconcile
# that fails meanwhile, on the same injected faults, is another failure)
check "apply failure: logged once, loudly" sh -c "grep -q 'FAILING: rev=$R79 revoke' '$W/agent.log' &&
	[ \$(grep 'FAILING: ' '$W/agent.log' | uniq -d | wc -l) -eq 0 ]"
check "apply failure: the module is below the revoke" [ "$(rev)" -lt "$R79" ]
sleep 1.5
check "apply failure: no confirmation, the host denies on its own clock" [ "$(state)" = deny ]
capfence fleet status > "$W/st"
check "apply failure: fleet status says why" grep -q "^vm1  *[0-9]* deny  *yes (failing: rev=$R79 revoke" "$W/st"
rm -f "$W/faults"
capfence fleet revoke 0x7a --wait --timeout 10 > "$W/out" 2>&1; rc=$?
check "apply failure over: the retry applied the revoke" grep -q "^capfenced: applied rev=$R79 revoke 0000000000000079$" "$W/agent.log"
check "apply failure over: --wait succeeds" [ $rc -eq 0 ]
# --wait counts the apply (the watch); the confirmation is the next heartbeat's
check "apply failure over: the host current again" wait_until 10 state_is current

# periodic reconciliation (--reconcile 2): a key the fleet removed, installed
# again by hand behind the agent's back, is removed again
capfence key generate --id 9 -o "$W/k9" >/dev/null 2>&1 && capfence key install "$W/k9" >/dev/null
i=0
until grep -q "^capfenced: reconcile: key 9 was back in the module: removed" "$W/agent.log" || [ $i -ge 50 ]; do
	sleep 0.2; i=$((i + 1))
done
check "reconcile: a removed key installed again is removed again" \
	grep -q "^capfenced: reconcile: key 9 was back in the module: removed" "$W/agent.log"
check "reconcile: the key is gone from the module" sh -c "! capfence key remove 9 >/dev/null 2>&1"

# a module reload: fleet mode comes back and the fleet is replayed, no agent restart
reload() {
	capfence detach >/dev/null || return 1
	j=0
	until rmmod capfence 2>/dev/null; do j=$((j + 1)); [ $j -lt 100 ] || return 1; sleep 0.1; done
	insmod /capfence.ko && capfence attach >/dev/null
}
check "module unloaded and loaded again" reload
check "reload: fleet mode re-armed by the running agent, current" wait_until 10 state_is current
check "reload: logged" grep -q "^capfenced: the module was reloaded or reset (rev=0, fleet mode off): re-arming" "$W/agent.log"
check "reload: epoch 42 installed and active again" sh -c "capfence epoch list | grep -q '^42  *yes'"
check "reload: the module back at the fleet's revision" [ "$(rev)" -ge "$R79" ]

# a change the agent cannot decode (a newer schema) stops the host, loudly
K=$(printf '/capfence/fleet/revoke/999' | base64) V=$(printf '{"kind":"revoke2","cap_id":"999"}' | base64)
wget -q -O /dev/null --post-data "{\"key\":\"$K\",\"value\":\"$V\"}" $E/v3/kv/put
capfence fleet revoke 0x7b --wait --timeout 3 > "$W/out" 2>&1; rc=$?
check "undecodable change: --wait exits 12" [ $rc -eq 12 ]
check "undecodable change: --wait names the host and why" grep -q \
	"vm1 (rev=[0-9]*, failing: rev=[0-9]* cannot be decoded: /capfence/fleet/revoke/999: unknown change kind 'revoke2')" "$W/out"
check "undecodable change: not skipped, the later revoke not applied" sh -c "! grep -q 'revoke 000000000000007b' $W/agent.log"

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

# capfenced against an etcd that requires client certificates (mutual TLS;
# certificates made on the host with openssl, in /root/tls); a module
# reloaded first, so that its revision is this store's
if [ -f /root/tls/ca.crt ]; then
	reload
	TE=https://127.0.0.1:2479
	etcd --name t --data-dir "$W/etcd-tls" --listen-client-urls $TE --advertise-client-urls $TE \
		--listen-peer-urls http://127.0.0.1:2480 --initial-advertise-peer-urls http://127.0.0.1:2480 \
		--initial-cluster t=http://127.0.0.1:2480 --cert-file /root/tls/server.crt \
		--key-file /root/tls/server.key --client-cert-auth --trusted-ca-file /root/tls/ca.crt \
		>>"$W/etcd-tls.log" 2>&1 &
	TPID=$!
	TLS="--cacert /root/tls/ca.crt --cert /root/tls/client.crt --key /root/tls/client.key"
	i=0
	until capfence fleet --endpoints $TE $TLS status >/dev/null 2>&1 || [ $i -ge 100 ]; do
		i=$((i + 1)); sleep 0.2
	done
	capfenced --endpoints $TE $TLS --host vm2 --max-staleness 2000 --deny-after 4000 --heartbeat 300 \
		--foreground --log "$W/agent-tls.log" 2>>"$W/agent.out" &
	AG=$!
	capfenced --endpoints $TE --cacert /root/tls/ca.crt --host vm3 --max-staleness 2000 \
		--deny-after 4000 --heartbeat 300 --foreground --log "$W/agent-nocert.log" 2>>"$W/agent.out" &
	AG3=$!
	# a TLS handshake in a loaded emulated guest can outlast a connect timeout: retry
	i=0
	until capfence fleet --endpoints $TE $TLS epoch install 44 fs:read=open >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 5 ] || break
	done
	i=0
	until capfence fleet --endpoints $TE $TLS epoch activate 44 >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 5 ] || break
	done
	i=0
	until capfence fleet --endpoints $TE $TLS key add 45 --wait --timeout 20 > "$W/out" 2>&1; do
		grep -q "etcd unreachable" "$W/out" || break
		i=$((i + 1)); [ $i -lt 5 ] || break
	done
	check "mutual TLS: capfenced applies and reports, --wait over TLS counts it" grep -q "^rev=[0-9]* applied by 1 host$" "$W/out"
	# current at its next confirmation (a loaded guest may miss one beat)
	check "mutual TLS: the module has the TLS store's epoch, current" sh -c "capfence epoch list | grep -q '^44  *yes' &&
		i=0; until capfence status --json | grep -q '\"fleet\":{\"state\":\"current\"'; do
			i=\$((i + 1)); [ \$i -lt 50 ] || exit 1; sleep 0.2; done"
	check "mutual TLS: an agent without a client certificate is refused" grep -q "etcd unreachable" "$W/agent-nocert.log"
	kill $AG $AG3; wait $AG $AG3 2>/dev/null
	kill $TPID; wait $TPID 2>/dev/null
else
	ok "mutual TLS # SKIP no certificates (selftests/fleet/make-certs.sh needs openssl)"
fi
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail -eq 0 ]
