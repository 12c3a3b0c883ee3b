#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# capfence CLI tests: every command's --help, usage errors, each exit code
# the CLI documents, --json shapes and the seed scenario (epochs 41, 42).
# Runs as root inside the test VM (POSIX sh / busybox ash):
#
#   selftests/vm/run --add selftests/cli/cli-tests.sh:/root/cli-tests.sh \
#       -- sh /root/cli-tests.sh
#
# With CF_HOST_ONLY=1 it runs only the tests that need no kernel module.
# Prints "ok N - name" / "not ok N - name" and a kselftest Totals line.

CF=${CAPFENCE:-capfence}
W=${TMPDIR:-/tmp}/cf-cli.$$
mkdir -p "$W" || exit 1
n=0 pass=0 fail=0 skip=0
pids=""

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"
	[ -s "$W/out" ] && sed 's/^/#   out: /' "$W/out" | head -n 8
	[ -s "$W/err" ] && sed 's/^/#   err: /' "$W/err" | head -n 8
}
skipt() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $1 # SKIP $2"; }

# t NAME RC CMD...: CMD exits with RC
t() {
	name=$1 want=$2; shift 2
	"$@" >"$W/out" 2>"$W/err"; rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$name"; else nok "$name (exit $rc, want $want)"; fi
}

# tg NAME RC PATTERN CMD...: exits with RC and PATTERN is in stdout+stderr
tg() {
	name=$1 want=$2 pat=$3; shift 3
	"$@" >"$W/out" 2>"$W/err"; rc=$?
	if [ "$rc" -ne "$want" ]; then
		nok "$name (exit $rc, want $want)"
	elif ! cat "$W/out" "$W/err" | grep -q -e "$pat"; then
		nok "$name (no '$pat' in output)"
	else
		ok "$name"
	fi
}

# json NAME KEY... : the last command's stdout has every "KEY":
json() {
	name=$1; shift
	for k in "$@"; do
		if ! grep -q "\"$k\":" "$W/out"; then
			nok "$name (no \"$k\" key)"
			return
		fi
	done
	ok "$name"
}

# spawn EPOCH [TOKEN]...: a bound `sleep` child; its pid in $P
spawn() {
	ep=$1; shift
	set -- $(for tk in "$@"; do printf -- '--token %s ' "$tk"; done)
	"$CF" exec --epoch "$ep" "$@" -- sleep 600 &
	P=$!
	pids="$pids $P"
	i=0
	while [ $i -lt 100 ]; do
		"$CF" task "$P" --json 2>/dev/null | grep -q '"bound":true' && return 0
		sleep 0.1 2>/dev/null || sleep 1
		i=$((i + 1))
	done
	return 1
}

capid() { "$CF" inspect "$1" --json | sed 's/.*"cap_id":"\([0-9a-f]*\)".*/\1/'; }

finish() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	[ -n "$MON" ] && kill "$MON" "$MONJ" 2>/dev/null
	rm -rf "$W"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	[ "$fail" -eq 0 ]
	exit $?
}

# ---- --help on every command ---------------------------------------------
for c in "" key "key generate" "key install" "key remove" epoch \
	 "epoch install" "epoch list" "epoch show" "epoch activate" "epoch retire" mint \
	 inspect check delegate revoke exec learn task monitor status attach detach; do
	# shellcheck disable=SC2086
	tg "help: capfence $c --help" 0 "usage: capfence" "$CF" $c --help
done
tg "help: -h works too" 0 "usage: capfence mint" "$CF" mint -h
# each usage line is written once, in its command's row: capfence --help
# lists exactly the lines each command's --help prints
"$CF" --help > "$W/all" 2>&1
for c in attach detach status metrics "key generate" "key install" "key remove" \
	 "epoch install" "epoch list" "epoch show" "epoch activate" "epoch retire" mint \
	 inspect check delegate revoke exec learn task monitor fleet; do
	# shellcheck disable=SC2086
	line=$("$CF" $c --help 2>&1 | sed -n 's/^usage: //p')
	if [ -n "$line" ] && grep -qxF "  $line" "$W/all"; then
		ok "help: capfence --help lists '$c' as its --help does"
	else
		nok "help: capfence --help lists '$c' as its --help does ('$line')"
	fi
done
tg "help: a group's --help is its subcommands' lines" 0 "^       capfence key remove ID$" "$CF" key --help
tg "usage: a group without a subcommand lists them" 2 "^usage: capfence key generate" "$CF" key

# ---- usage errors (exit 2, the bad argument named) ------------------------
tg "usage: unknown command" 2 "frobnicate" "$CF" frobnicate
tg "usage: no command" 2 "usage:" "$CF"
tg "usage: key unknown subcommand" 2 "'rotate'" "$CF" key rotate
tg "usage: key generate bad id" 2 "'0'" "$CF" key generate --id 0
tg "usage: key remove bad id" 2 "'x1'" "$CF" key remove x1
tg "usage: key install missing FILE" 2 "missing key FILE" "$CF" key install
tg "usage: epoch unknown subcommand" 2 "'drop'" "$CF" epoch drop
tg "usage: epoch install bad id" 2 "'4x'" "$CF" epoch install 4x net:connect=open
tg "usage: epoch install unknown class named" 2 'rule 2: unknown class "net:listen"' \
	"$CF" epoch install 50 net:connect=open net:listen=deny
tg "usage: epoch install bad constraint named" 2 "10.0.0.1/8" \
	"$CF" epoch install 50 net:connect=token:10.0.0.1/8
tg "usage: epoch install duplicate class" 2 "duplicate class" \
	"$CF" epoch install 50 fs:read=open fs:read=deny
tg "usage: epoch show bad id" 2 "'abc'" "$CF" epoch show abc
tg "usage: epoch activate missing id" 2 "missing epoch ID" "$CF" epoch activate
tg "usage: epoch retire missing id" 2 "epoch retire: missing epoch ID" "$CF" epoch retire
tg "usage: epoch retire bad id" 2 "epoch retire: bad epoch id 'abc'" "$CF" epoch retire abc
tg "usage: epoch retire id 0" 2 "epoch retire: bad epoch id '0'" "$CF" epoch retire 0
tg "usage: epoch retire extra argument" 2 "epoch retire: unexpected argument '42'" "$CF" epoch retire 41 42
tg "usage: epoch retire unknown option" 2 "epoch retire: unknown option '--force'" "$CF" epoch retire 41 --force
tg "usage: epoch retire --json=yes" 2 "epoch retire: option '--json' takes no value" "$CF" epoch retire 41 --json=yes
tg "usage: mint missing --key" 2 "missing --key" "$CF" mint --class net:connect --epoch 1
tg "usage: mint unknown class named" 2 '"net:listen"' "$CF" mint --key /nonexistent --class net:listen --epoch 1
tg "usage: mint bad epoch" 2 "'0'" "$CF" mint --key /nonexistent --class net:connect --epoch 0
tg "usage: mint bad cap_id" 2 "'0xzz'" "$CF" mint --key /nonexistent --class net:connect --epoch 1 --id 0xzz
tg "usage: mint bad constraint named" 2 "10.0.0.1/8" "$CF" mint --key /nonexistent --class net:connect --epoch 1 --constraint 10.0.0.1/8
tg "usage: mint option without value" 2 "'--epoch' needs a value" "$CF" mint --key k --class net:connect --epoch
tg "usage: inspect missing TOKEN" 2 "missing TOKEN" "$CF" inspect
tg "usage: check needs --pid or --epoch" 2 "exactly one of" "$CF" check cf1_x
tg "usage: check not both --pid and --epoch" 2 "exactly one of" "$CF" check cf1_x --pid 1 --epoch 1
tg "usage: check bad pid" 2 "'-5'" "$CF" check cf1_x --pid -5
tg "usage: delegate missing --pid" 2 "missing --pid" "$CF" delegate cf1_x
tg "usage: delegate bad pid" 2 "'p1'" "$CF" delegate cf1_x --pid p1
tg "usage: delegate --remint needs --key" 2 "needs --key" "$CF" delegate cf1_x --pid 1 --remint
tg "usage: delegate --key needs --remint" 2 "only used with --remint" "$CF" delegate cf1_x --pid 1 --key k
tg "usage: revoke cap_id 0" 2 "'0'" "$CF" revoke 0
tg "usage: revoke missing CAP_ID" 2 "missing CAP_ID" "$CF" revoke
tg "usage: task bad pid" 2 "'self'" "$CF" task self
tg "usage: exec missing --epoch" 2 "missing --epoch" "$CF" exec -- true
tg "usage: exec missing COMMAND" 2 "missing COMMAND" "$CF" exec --epoch 41 --
tg "usage: exec unknown option" 2 "exec: unknown option '--tokens'" "$CF" exec --epoch 41 --tokens x -- true
tg "usage: monitor unknown argument" 2 "monitor: unknown option '--follow'" "$CF" monitor --follow
tg "usage: status unknown argument" 2 "status: unknown option '-v'" "$CF" status -v
# one option parser (getopt_long) for every command: the same messages
tg "options: unknown long option" 2 "mint: unknown option '--frob'" "$CF" mint --frob
tg "options: no abbreviations" 2 "delegate: unknown option '--pi'" "$CF" delegate cf1_x --pi 1
tg "options: a value for a flag" 2 "revoke: option '--json' takes no value" "$CF" revoke 1 --json=yes
tg "options: a long option without its value" 2 "check: option '--epoch' needs a value" "$CF" check cf1_x --epoch
tg "options: a short option without its value" 2 "key generate: option '-o' needs a value" "$CF" key generate -o
tg "options: unknown short option" 2 "task: unknown option '-x'" "$CF" task -x 1
tg "options: an extra argument" 2 "epoch show: unexpected argument '42'" "$CF" epoch show 41 42
tg "options: an argument after --" 2 "key remove: unexpected argument '1'" "$CF" key remove -- 1
tg "options: attach takes none" 2 "attach: unexpected argument 'now'" "$CF" attach now
tg "options: --help takes no value" 2 "revoke: option '--help' takes no value" "$CF" revoke --help=1
tg "options: --help after other options" 0 "^usage: capfence exec" "$CF" exec --epoch 41 --help
tg "options: --hel is no abbreviation of --help" 2 "status: unknown option '--hel'" "$CF" status --hel
tg "options: the last of a command's 19 long options (fleet --output)" 2 \
	"fleet: option '--output' needs a value" "$CF" fleet --output
tg "options: detach takes none" 2 "detach: unknown option '--force'" "$CF" detach --force
tg "options: --opt=VALUE" 2 "mint: bad epoch id '0'" "$CF" mint --key=/nonexistent --class=net:connect --epoch=0
tg "options: a negative number is an argument" 2 "revoke: bad cap_id '-1'" "$CF" revoke -1
tg "options: epoch install --seccomp without its value" 2 "epoch install: option '--seccomp' needs a value" \
	"$CF" epoch install 41 net:connect=open --seccomp
for c in "key generate" "key install" "key remove" "epoch install" "epoch list" "epoch show" \
	 "epoch activate" "epoch retire" mint inspect check delegate revoke exec learn task monitor status attach detach \
	 metrics fleet; do
	# shellcheck disable=SC2086
	tg "options: $c --help" 0 "^usage: capfence $c" "$CF" $c --help
done

# ---- keys, mint and inspect: offline --------------------------------------
umask 022
tg "key generate -o writes the key" 0 "key 1 written" "$CF" key generate -o "$W/k1"
tg "key generate -o '' names the problem" 1 "^capfence: key generate: no key file path given$" "$CF" key generate -o ""
case $(stat -c %a "$W/k1" 2>/dev/null) in
600) ok "key file mode is 0600" ;;
*) nok "key file mode is 0600 (got $(stat -c %a "$W/k1" 2>/dev/null))" ;;
esac
tg "key generate --id 7 to stdout" 0 "^id 7$" "$CF" key generate --id 7
"$CF" key generate --id 7 -o "$W/k7" >/dev/null
"$CF" key generate --id 1 -o "$W/kforge" >/dev/null	# same id, other bytes
printf 'capfence-key v2\nid 1\nkey x\n' >"$W/kbad"

T41=$("$CF" mint --key "$W/k1" --class net:connect --epoch 41 --constraint 10.0.0.0/8)
case $T41 in cf1_*) ok "mint prints a cf1_ token" ;; *) nok "mint prints a cf1_ token" ;; esac
t "mint --json" 0 "$CF" mint --key "$W/k1" --class fs:read --epoch 41 --constraint /srv,/etc --json
json "mint --json keys" token cap_id class epoch_id key_id constraint
tg "mint --id hex" 0 '"cap_id":"00000000000000ff"' "$CF" mint --key "$W/k1" --class net:bind --epoch 3 --id 0xff --json
tg "mint --id decimal" 0 '"cap_id":"00000000000000ff"' "$CF" mint --key "$W/k1" --class net:bind --epoch 3 --id 255 --json
tg "mint: class and constraint kinds must agree" 2 "fs:read" "$CF" mint --key "$W/k1" --class fs:read --epoch 3 --constraint 10.0.0.0/8
tg "mint: unreadable key file named" 1 "/nonexistent/key" "$CF" mint --key /nonexistent/key --class net:bind --epoch 3
tg "mint: malformed key file" 1 "line 1" "$CF" mint --key "$W/kbad" --class net:bind --epoch 3
tg "mint vsock:connect: a CID with a port range, any CID at one port" 0 \
	'"constraint":\["cid:2:1024-2048","cid:any:52"\]' \
	"$CF" mint --key "$W/k1" --class vsock:connect --epoch 3 --constraint cid:2:1024-2048,cid:any:52 --json
tg "mint: vsock:connect takes CIDs, not CIDRs" 2 "net constraint in a vsock:connect token" \
	"$CF" mint --key "$W/k1" --class vsock:connect --epoch 3 --constraint 10.0.0.0/8
tg "mint: net:connect takes CIDRs, not CIDs" 2 "vsock constraint in a net:connect token" \
	"$CF" mint --key "$W/k1" --class net:connect --epoch 3 --constraint cid:2
tg "mint: bad CID named" 2 '"cid:x".*bad CID' \
	"$CF" mint --key "$W/k1" --class vsock:connect --epoch 3 --constraint cid:x
tg "inspect shows the fields" 0 "epoch_id    41" "$CF" inspect "$T41"
t "inspect --json" 0 "$CF" inspect "$T41" --json
json "inspect --json keys" version cap_id class epoch_id key_id flags constraint mac verified
tg "inspect --key verifies" 0 "verified    yes" "$CF" inspect "$T41" --key "$W/k1"
tg "inspect --key: other key id is forged (5)" 5 "key 1, the key file holds key 7" "$CF" inspect "$T41" --key "$W/k7"
TF=$("$CF" mint --key "$W/kforge" --class net:connect --epoch 41 --constraint 10.0.0.0/8)
tg "inspect --key: wrong MAC is forged (5)" 5 "MAC does not verify" "$CF" inspect "$TF" --key "$W/k1"
tg "inspect: malformed token is forged (5)" 5 "malformed token" "$CF" inspect cf1_AAAA
tg "inspect: wrong prefix is forged (5)" 5 "malformed token" "$CF" inspect xx1_AAAA

if [ -n "$CF_HOST_ONLY" ]; then
	finish
fi

# ---- kernel: exec fails closed without hooks (nothing is bound yet) ----------
# (built into the kernel, CONFIG_SECURITY_CAPFENCE, the hooks are always there)
if grep -qw capfence /sys/kernel/security/lsm 2>/dev/null; then
	tg "detach: built in, refused (1)" 1 "capfence is built into this kernel: its hooks cannot be detached" "$CF" detach
	skipt "exec without hooks: refused (1)" "capfence is built into this kernel: its hooks cannot be detached"
	skipt "exec without hooks ran nothing" "capfence is built into this kernel: its hooks cannot be detached"
	tg "attach: built in, already attached" 0 "hooks already attached" "$CF" attach
else
	tg "detach (nothing bound)" 0 "hooks detached" "$CF" detach
	tg "exec without hooks: refused (1)" 1 "hooks are not attached" "$CF" exec --epoch 41 -- echo RAN
	grep -q RAN "$W/out" && nok "exec without hooks ran nothing" || ok "exec without hooks ran nothing"
	tg "attach again" 0 "hooks attached" "$CF" attach
fi
tg "status: attached" 0 "attached" "$CF" status
t "status --json" 0 "$CF" status --json
json "status --json keys" hooks_attached fence max_epoch_id active_epoch_id \
	bound_creds held_caps delegate_reject exercise_deny audit records \
	not_recorded over_budget over_ceiling lost reports window_ms budget \
	floor ceiling cred_limit cred_refused
tg "status: the audit budget" 0 "per sandbox (the first" "$CF" status
# the host's status is an admin's: anyone else gets one line saying why
if grep -q '^nobody:' /etc/passwd; then
	tg "status: unprivileged refused (1)" 1 "status: .*CAP_MAC_ADMIN in the initial user namespace is needed to read the status of the host" \
		su -s /bin/sh -c "$CF status" nobody
	[ "$(wc -l < "$W/err")" -eq 1 ] && [ ! -s "$W/out" ] && ok "status: unprivileged, one line on stderr" ||
		nok "status: unprivileged, one line on stderr"
else
	skipt "status: unprivileged refused (1)" "no user nobody"
	skipt "status: unprivileged, one line on stderr" "no user nobody"
fi

# ---- kernel: keys and epochs -------------------------------------------------
tg "key install" 0 "key 1 installed" "$CF" key install "$W/k1"
# the host's fence moves with every tenant's work: only an admin sees it
tg "task: an admin sees the host's fence" 0 '^fence: [1-9]' "$CF" task $$
if grep -q '^nobody:' /etc/passwd; then
	tg "task: an unprivileged caller's own reply names no fence" 0 '^fence: 0$' \
		su -s /bin/sh -c "$CF task \$\$" nobody
else
	skipt "task: an unprivileged caller's own reply names no fence" "no user nobody"
fi
tg "key install twice: EEXIST shown" 1 "remove it first" "$CF" key install "$W/k1"
tg "key install: malformed file" 1 "line 1" "$CF" key install "$W/kbad"
tg "key remove unknown id" 1 "no key with this id" "$CF" key remove 9
tg "key install id 7" 0 "key 7 installed" "$CF" key install "$W/k7"
tg "key remove id 7" 0 "key 7 removed" "$CF" key remove 7

MON= MONJ=
"$CF" monitor >"$W/mon" 2>&1 &
MON=$!
"$CF" monitor --json >"$W/monj" 2>&1 &
MONJ=$!
sleep 1

tg "epoch install 41 (seed)" 0 "epoch 41 installed" "$CF" epoch install 41 \
	net:connect=token:10.0.0.0/8,127.0.0.0/8 fs:read=open fs:write=deny
tg "epoch install 42 (seed, narrows net:connect)" 0 "epoch 42 installed" "$CF" epoch install 42 \
	net:connect=token:127.0.0.0/8 fs:read=open
tg "epoch install 42 again: not monotonic (10)" 10 "not above the highest" "$CF" epoch install 42 net:connect=open
tg "epoch install 40: not monotonic (10)" 10 "not above" "$CF" epoch install 40 net:connect=open
cat >"$W/rules" <<'EOF'
# a rules file
epoch 43
net:connect=token:127.0.0.1/32:80-90   # loopback web
fs:read=token:/srv,/etc
EOF
tg "epoch install -f FILE (id from the file)" 0 "epoch 43 installed" "$CF" epoch install -f "$W/rules"
printf 'net:bind=open\nnet:bogus=deny\n' >"$W/rules2"
tg "epoch install -f: bad line named" 2 "rules2:2: unknown class" "$CF" epoch install 44 -f "$W/rules2"
tg "epoch install -f: missing file" 1 "No such file" "$CF" epoch install 44 -f "$W/none"
tg "epoch install -f - (stdin)" 0 "epoch 44 installed" sh -c "printf 'net:bind=open\n' | $CF epoch install 44 -f -"
tg "epoch show 43" 0 "net:connect=token:127.0.0.1/32:80-90" "$CF" epoch show 43
tg "epoch show: fs constraints" 0 "fs:read=token:/srv,/etc" "$CF" epoch show 43
tg "epoch show: omitted class is deny" 0 "^net:bind=deny" "$CF" epoch show 43
tg "epoch show: inactive" 0 "# active no" "$CF" epoch show 43
tg "epoch show output installs again" 0 "epoch 45 installed" sh -c \
	"$CF epoch show 43 | sed 's/^epoch 43\$/epoch 45/' | $CF epoch install -f -"
tg "epoch show 45 = 43" 0 "fs:read=token:/srv,/etc" "$CF" epoch show 45
tg "epoch show: omitted vsock:connect is deny" 0 "^vsock:connect=deny" "$CF" epoch show 43
tg "epoch install: vsock:connect by CID and port" 0 "epoch 46 installed" "$CF" epoch install 46 \
	vsock:connect=token:cid:2:1024-2048,cid:1 net:connect=open
tg "epoch show: vsock constraints" 0 "^vsock:connect=token:cid:2:1024-2048,cid:1 " "$CF" epoch show 46
t "epoch show --json" 0 "$CF" epoch show 41 --json
json "epoch show --json keys" epoch_id active rules class kind rule constraint fenced_at
tg "epoch show unknown epoch" 1 "not installed" "$CF" epoch show 999
tg "epoch list" 0 "^41 " "$CF" epoch list
t "epoch list --json" 0 "$CF" epoch list --json
json "epoch list --json keys" epochs epoch_id active rules fenced_at
tg "epoch activate unknown" 1 "not installed" "$CF" epoch activate 999

# ---- local check (--epoch) ------------------------------------------------------
T41b=$("$CF" mint --key "$W/k1" --class net:connect --epoch 41 --constraint 10.1.0.0/16)
T41w=$("$CF" mint --key "$W/k1" --class fs:write --epoch 41 --constraint /tmp)
T41x=$("$CF" mint --key "$W/k1" --class net:connect --epoch 41 --constraint 192.168.0.0/16)
T41L=$("$CF" mint --key "$W/k1" --class net:connect --epoch 41 --constraint 127.0.0.1/32)
T42=$("$CF" mint --key "$W/k1" --class net:connect --epoch 42 --constraint 127.0.0.0/8)
"$CF" key generate --id 5 -o "$W/k5" >/dev/null
T41k5=$("$CF" mint --key "$W/k5" --class net:connect --epoch 41 --constraint 10.0.0.0/8)
tg "check --epoch: ok" 0 "^ok$" "$CF" check "$T41" --epoch 41 --key "$W/k1"
tg "check --epoch without --key: ok, says MAC unchecked" 0 "MAC not verified" "$CF" check "$T41" --epoch 41
tg "check --epoch: epoch_mismatch (3)" 3 "rejected: epoch_mismatch (ESTALE)" "$CF" check "$T41" --epoch 42 --key "$W/k1"
tg "check --epoch: class_denied (4)" 4 "rejected: class_denied (EACCES)" "$CF" check "$T41w" --epoch 41 --key "$W/k1"
tg "check --epoch: constraint outside the rule (4)" 4 "not inside" "$CF" check "$T41x" --epoch 41
tg "check --epoch: forged (5)" 5 "rejected: forged (EBADMSG)" "$CF" check "$TF" --epoch 41 --key "$W/k1"
tg "check --epoch: unknown epoch" 1 "not installed" "$CF" check "$T41" --epoch 999
t "check --epoch --json" 3 "$CF" check "$T41" --epoch 42 --json
json "check --json keys" mode reason errno message cap_id class epoch_id

# ---- bind, delegate, check --pid ---------------------------------------------------
if spawn 41 "$T41"; then ok "exec binds a child to epoch 41"; else nok "exec binds a child to epoch 41"; fi
P1=$P
spawn 41; P1b=$P
tg "task: bound to 41" 0 "bound to epoch 41" "$CF" task "$P1"
tg "task: holds the exec token" 0 "$(capid "$T41")" "$CF" task "$P1"
t "task --json" 0 "$CF" task "$P1" --json
json "task --json keys" pid bound epoch_id pending_epoch_id fence caps cap_id class key_id from_pid state constraint \
	sandbox creds cred_limit cred_refused audit_records audit_over_budget audit_over_ceiling audit_lost
tg "task: its sandbox" 0 "denial records: 0 written" "$CF" task "$P1"
tg "task: unbound task" 0 "not bound" "$CF" task $$
tg "task: no such pid (8)" 8 "no task" "$CF" task 999999
tg "epoch show: 41 active after the first bind" 0 "# active yes" "$CF" epoch show 41
tg "epoch retire: 41, the active epoch (1)" 1 \
	"^capfence: epoch retire: capfence: epoch is the active epoch; activate a newer one first (Device or resource busy)$" \
	"$CF" epoch retire 41

tg "check --pid: ok (dry run)" 0 "^ok$" "$CF" check "$T41b" --pid "$P1"
if "$CF" task "$P1" | grep -q "$(capid "$T41b")"; then nok "check --pid has no side effect"; else ok "check --pid has no side effect"; fi
t "check --pid --json" 0 "$CF" check "$T41b" --pid "$P1" --json
json "check --pid --json keys" mode pid reason errno message cap_id epoch_id fence
tg "check --pid --key: local MAC check first (5)" 5 "forged" "$CF" check "$TF" --pid "$P1" --key "$W/k1"
tg "delegate: ok" 0 "ok: cap_id $(capid "$T41b") delegated to pid $P1" "$CF" delegate "$T41b" --pid "$P1"
tg "delegate: now held" 0 "$(capid "$T41b")" "$CF" task "$P1"
t "delegate --json" 0 "$CF" delegate "$T41b" --pid "$P1b" --json
json "delegate --json keys" action pid reason errno message cap_id epoch_id fence
tg "delegate: not_bound (8)" 8 "rejected: not_bound (EINVAL): not_bound:" "$CF" delegate "$T41" --pid $$
tg "delegate: no_task (8)" 8 "rejected: no_task (ESRCH)" "$CF" delegate "$T41" --pid 999999
tg "delegate: class_denied, deny rule (4)" 4 "rejected: class_denied (EACCES): class_denied:" "$CF" delegate "$T41w" --pid "$P1"
tg "delegate: class_denied, constraint (4)" 4 "not inside the epoch's rule" "$CF" delegate "$T41x" --pid "$P1"
tg "delegate: forged, wrong MAC (5)" 5 "rejected: forged (EBADMSG): forged: token MAC does not verify" "$CF" delegate "$TF" --pid "$P1"
tg "delegate: forged, unknown key (5)" 5 "key that is not installed" "$CF" delegate "$T41k5" --pid "$P1"
tg "delegate: malformed token (5)" 5 "malformed token" "$CF" delegate cf1_AAAA --pid "$P1"
tg "delegate: not_held, unbound delegator (9)" 9 "rejected: not_held (ENOKEY)" "$CF" delegate "$T41" --pid "$P1b" --from $$
T41n=$("$CF" mint --key "$W/k1" --class net:connect --epoch 41 --constraint 10.2.0.0/16)
tg "delegate: not_held, delegator lacks the cap (9)" 9 "not_held" "$CF" delegate "$T41n" --pid "$P1b" --from "$P1"
tg "delegate --from a holder: ok" 0 "^ok:" "$CF" delegate "$T41" --pid "$P1b" --from "$P1"
tg "task: delegator recorded" 0 " $P1 " "$CF" task "$P1b"
tg "check --pid: not_held (9)" 9 "rejected: not_held" "$CF" check "$T41n" --pid "$P1b" --from "$P1"

# ---- revoke ----------------------------------------------------------------------
T41r=$("$CF" mint --key "$W/k1" --class net:connect --epoch 41 --constraint 10.3.0.0/16)
"$CF" delegate "$T41r" --pid "$P1" >/dev/null 2>&1
tg "revoke: prints the fence" 0 "revoked cap_id $(capid "$T41r") (fence [0-9]*)" "$CF" revoke "$(capid "$T41r")"
tg "task: revoked state" 0 "revoked" "$CF" task "$P1"
tg "delegate: revoked (6)" 6 "rejected: revoked (EKEYREVOKED): revoked:" "$CF" delegate "$T41r" --pid "$P1b"
tg "check --pid: revoked (6)" 6 "rejected: revoked" "$CF" check "$T41r" --pid "$P1b"
t "revoke --json" 0 "$CF" revoke "0x$(capid "$T41r")" --json
json "revoke --json keys" cap_id fence

# ---- exec refuses to run anything on failure ---------------------------------------
# the would-be command prints RAN on stdout (no file needed: fs:write is deny)
tx() {
	tg "$@"
	if grep -q RAN "$W/out"; then nok "$1: but the command ran"; else ok "$1: the command did not run"; fi
}
tx "exec: revoked token (6), nothing run" 6 "nothing was run" "$CF" exec --epoch 41 --token "$T41r" -- echo RAN
tx "exec: forged token (5), nothing run" 5 "nothing was run" "$CF" exec --epoch 41 --token "$TF" -- echo RAN
tx "exec: token of another epoch (3), nothing run" 3 "epoch_mismatch" "$CF" exec --epoch 41 --token "$T42" -- echo RAN
tx "exec: class_denied (4), nothing run" 4 "class_denied" "$CF" exec --epoch 41 --token "$T41w" -- echo RAN
tx "exec: unknown epoch (1), nothing run" 1 "not installed" "$CF" exec --epoch 999 -- echo RAN
tx "exec: malformed token (5), nothing run" 5 "token 1: malformed token: .*nothing was run" "$CF" exec --epoch 41 --token cf1_AAAA -- echo RAN
tg "exec: success runs the command" 0 "^RAN$" "$CF" exec --epoch 41 --token "$T41b" -- echo RAN
tg "exec: missing program (127)" 127 "cannot run '/nonexistent/prog'" "$CF" exec --epoch 41 -- /nonexistent/prog
tg "exec: bound capfence cannot mutate (EPERM)" 1 "bound to an epoch" "$CF" exec --epoch 41 -- "$CF" epoch install 100 net:connect=open
tg "exec: the command sees its binding" 0 "bound to epoch 41" "$CF" exec --epoch 41 -- sh -c "$CF task \$\$"
# status: a bound task sees its own epoch and sandbox, not the host's
tg "exec: status of a bound task is its own" 0 "^bound to epoch        41 " "$CF" exec --epoch 41 -- "$CF" status
grep -q "^fence\|^max epoch\|^fleet" "$W/out" && nok "exec: a bound task's status has no host value" ||
	ok "exec: a bound task's status has no host value"
t "exec: status --json of a bound task" 0 "$CF" exec --epoch 41 -- "$CF" status --json
json "exec: status --json of a bound task, keys" module_version abi hooks_attached epoch_id \
	sandbox id creds cred_limit records not_recorded
grep -q '"fence":' "$W/out" && nok "exec: status --json of a bound task has no fence" ||
	ok "exec: status --json of a bound task has no fence"

# ---- the roll to 42: epoch_mismatch, --remint, fenced ---------------------------------
if spawn 42; then ok "exec binds a child to epoch 42"; else nok "exec binds a child to epoch 42"; fi
P2=$P
tg "epoch show: 41 net:connect fenced when 42 binds" 0 "^net:connect=token:10.0.0.0/8,127.0.0.0/8 *# fenced_at [1-9]" "$CF" epoch show 41
tg "epoch show: 41 fs:read not fenced" 0 "^fs:read=open *# not fenced" "$CF" epoch show 41
tg "epoch list: FENCED column" 0 "net:connect@[1-9]" "$CF" epoch list
tg "delegate 41 token to 42 child: epoch_mismatch (3)" 3 \
	"rejected: epoch_mismatch (ESTALE): epoch_mismatch: token minted under another epoch" \
	"$CF" delegate "$T41" --pid "$P2"
tg "check --pid: epoch_mismatch (3)" 3 "rejected: epoch_mismatch (ESTALE)" "$CF" check "$T41" --pid "$P2"
tg "delegate --remint: both steps reported" 0 "^step 2: re-minted net:connect 127.0.0.1/32 under epoch 42" \
	"$CF" delegate "$T41L" --pid "$P2" --remint --key "$W/k1"
grep -q "^step 1: .*epoch_mismatch" "$W/out" && ok "delegate --remint: step 1 is the mismatch" || nok "delegate --remint: step 1 is the mismatch"
NT=$(tail -n 1 "$W/out")
case $NT in cf1_*) ok "delegate --remint prints the new token" ;; *) nok "delegate --remint prints the new token" ;; esac
tg "remint: new token under epoch 42" 0 '"epoch_id":42' "$CF" inspect "$NT" --json
if [ "$(capid "$NT")" != "$(capid "$T41L")" ]; then ok "remint: new random cap_id"; else nok "remint: new random cap_id"; fi
tg "remint: child holds the new cap" 0 "$(capid "$NT")" "$CF" task "$P2"
tg "delegate --remint: re-minted token outside 42 (4)" 4 "^step 2: .*class_denied" \
	"$CF" delegate "$T41" --pid "$P2" --remint --key "$W/k1"
t "delegate --remint --json" 0 "$CF" delegate "$T41L" --pid "$P2" --remint --key "$W/k1" --json
json "delegate --remint --json keys" steps action old_cap_id token reason
grep -q '"action":"remint"' "$W/out" && ok "remint --json has a remint step" || nok "remint --json has a remint step"
tg "delegate 41 token to 41 task after the roll: fenced (7)" 7 \
	"rejected: fenced (EKEYEXPIRED): fenced:" "$CF" delegate "$T41" --pid "$P1b"
tg "check --pid: fenced (7)" 7 "rejected: fenced" "$CF" check "$T41b" --pid "$P1b"
tg "check --epoch: fenced (7)" 7 "rejected: fenced" "$CF" check "$T41" --epoch 41 --key "$W/k1"
tx "exec: fenced token (7), nothing run" 7 "nothing was run" "$CF" exec --epoch 41 --token "$T41" -- echo RAN
tg "task: parent's 41 capability is fenced" 0 "fenced" "$CF" task "$P1"
tg "delegate 42 token to 42 child: ok" 0 "^ok:" "$CF" delegate "$T42" --pid "$P2"
tg "epoch activate 43" 0 "epoch 43 active" "$CF" epoch activate 43
tg "epoch show: 43 active" 0 "# active yes" "$CF" epoch show 43

# ---- key removal makes tokens forged -------------------------------------------------
T42b=$("$CF" mint --key "$W/k1" --class net:connect --epoch 42 --constraint 127.0.0.1/32)
tg "key remove 1" 0 "key 1 removed" "$CF" key remove 1
tg "delegate after key removal: forged (5)" 5 "rejected: forged" "$CF" delegate "$T42b" --pid "$P2"
tg "key install 1 again" 0 "key 1 installed" "$CF" key install "$W/k1"

# ---- monitor -------------------------------------------------------------------------
sleep 1
kill "$MON" "$MONJ" 2>/dev/null
wait "$MON" "$MONJ" 2>/dev/null
MON=
if grep -q "^delegate_reject *reason=epoch_mismatch errno=ESTALE epoch_id=42 " "$W/mon"; then
	ok "monitor: delegate_reject line"
else
	nok "monitor: delegate_reject line"; sed 's/^/#   /' "$W/mon" | head -n 5
fi
for ev in delegate_ok revoke key_change epoch_install epoch_activate; do
	grep -q "^$ev " "$W/mon" && ok "monitor: $ev event" || nok "monitor: $ev event"
done
if grep -q '^{"event":"delegate_reject","reason":"forged","errno":"EBADMSG","epoch_id":[0-9]*,"cap_id":"[0-9a-f]\{16\}","pid":[0-9]*,"fence":[0-9]*}$' "$W/monj"; then
	ok "monitor --json: one JSON object per line"
else
	nok "monitor --json: one JSON object per line"; head -n 3 "$W/monj" | sed 's/^/#   /'
fi

# ---- syscall policy (an OCI seccomp profile with the epoch) ----------------------------
PROF=/usr/share/capfence/seccomp-default.json
tg "epoch install --seccomp: one line per rewritten rule" 0 \
	'^seccomp: rewritten defaultAction: SCMP_ACT_ERRNO(EPERM) -> SCMP_ACT_ERRNO(EACCES)$' \
	"$CF" epoch install 1000 --seccomp "$PROF" fs:read=open fs:write=open
cp "$W/out" "$W/sc-install"
tg "epoch install --seccomp: KILL_PROCESS rewritten" 0 \
	'^seccomp: rewritten syscalls\[1\] (ptrace, ...): SCMP_ACT_KILL_PROCESS -> SCMP_ACT_ERRNO(EACCES)$' \
	cat "$W/sc-install"
tg "epoch install --seccomp: capfence records the refusals, within the budget" 0 \
	'^seccomp: sha256:[0-9a-f]\{64\} insns [0-9]*: every denial is EACCES (ENOSYS where kept) with a capfence op=syscall record, within the sandbox.s audit budget$' \
	cat "$W/sc-install"
tg "epoch show: the program's digest" 0 '^# seccomp sha256:[0-9a-f]\{64\} insns [0-9]*$' \
	"$CF" epoch show 1000
tg "epoch show --json: seccomp" 0 '"seccomp":{"sha256":"[0-9a-f]\{64\}","insns":[0-9]*}}$' \
	"$CF" epoch show 1000 --json
tg "exec under a default-deny profile: busybox works" 0 '^hi$' \
	"$CF" exec --epoch 1000 -- busybox sh -c 'echo hi > /tmp/cf-sc; cat /tmp/cf-sc; ls / >/dev/null'
tg "exec under a default-deny profile: a refused call is EACCES, no signal" 1 'Permission denied' \
	"$CF" exec --epoch 1000 -- busybox sh -c 'busybox swapoff /tmp/cf-sc'
tg "epoch install --seccomp: bad JSON is one line, nothing installed" 2 \
	'profile: bad JSON at byte' sh -c "echo '{' > $W/bad.json; $CF epoch install 1001 --seccomp $W/bad.json fs:read=open"
t "  ... and epoch 1001 is not installed" 1 "$CF" epoch show 1001
tg "epoch install --seccomp: a profile denying a granted class's call" 2 \
	'denies connect, which class net:connect needs, and epoch 1001 grants net:connect (open)' \
	sh -c "echo '{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"connect\"],\"action\":\"SCMP_ACT_KILL\"}]}' > $W/c.json; $CF epoch install 1001 --seccomp $W/c.json net:connect=open"
tg "epoch install --seccomp: unsupported architecture" 2 "unsupported architecture 'SCMP_ARCH_ARM'" \
	sh -c "echo '{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_ARM\"]}' > $W/a.json; $CF epoch install 1001 --seccomp $W/a.json fs:read=open"
t "  ... and still nothing installed" 1 "$CF" epoch show 1001

# the container engines' profiles as Debian ships them
PODMAN=/usr/share/capfence/profiles/containers-seccomp.json
DOCKER=/usr/share/capfence/profiles/moby-default.json
tg "epoch install --seccomp: Podman's profile as shipped, its ENOSYS default kept" 0 \
	'^seccomp: defaultAction: SCMP_ACT_ERRNO(ENOSYS) kept (no such call: libc falls back)$' \
	"$CF" epoch install 1002 --seccomp "$PODMAN" net:connect=token:127.0.0.0/8 fs:read=open fs:write=open
cp "$W/out" "$W/podman.out"
tg "  ... a rule for a capability outside the default set is left out" 0 \
	'^seccomp: syscalls\[12\] (open_by_handle_at): left out (needs CAP_DAC_READ_SEARCH)$' cat "$W/podman.out"
tg "  ... other architectures' names are left out" 0 \
	'^seccomp: syscalls\[1\]: 67 names left out (not x86_64 system calls: _llseek, ...)$' cat "$W/podman.out"
tg "epoch install --seccomp: Docker's profile as shipped, clone3's ENOSYS kept" 0 \
	'^seccomp: syscalls\[16\] (clone3): SCMP_ACT_ERRNO(ENOSYS) kept (no such call: libc falls back)$' \
	"$CF" epoch install 1003 --seccomp "$DOCKER" net:connect=token:127.0.0.0/8 fs:read=open fs:write=open
tg "epoch install --seccomp-caps: CAP_SYS_ADMIN takes Docker's rule allowing clone3" 0 \
	'^seccomp: syscalls\[16\] (clone3): left out (excluded with CAP_SYS_ADMIN)$' \
	"$CF" epoch install 1004 --seccomp "$DOCKER" --seccomp-caps CAP_SYS_ADMIN fs:read=open
tg "epoch install --seccomp-kernel: minKernel judged against it" 0 \
	'^seccomp: syscalls\[1\] (ptrace): left out (needs kernel 4.8)$' \
	"$CF" epoch install 1005 --seccomp "$DOCKER" --seccomp-kernel 4.4 fs:read=open
tg "epoch install --seccomp-kernel: not a version" 2 "kernel version 'new' is not MAJOR.MINOR" \
	"$CF" epoch install 1006 --seccomp "$DOCKER" --seccomp-kernel new fs:read=open
tg "epoch install --seccomp-caps without --seccomp" 2 "need --seccomp PROFILE" \
	"$CF" epoch install 1006 --seccomp-caps CAP_KILL fs:read=open
tg "epoch install --seccomp-caps: a misspelt capability" 2 "'CAP_SYS_ADMN' is not a capability name" \
	"$CF" epoch install 1006 --seccomp "$DOCKER" --seccomp-caps CAP_KILL,CAP_SYS_ADMN fs:read=open
tg "epoch install --seccomp: architectures and archMap both" 2 "both architectures and archMap" \
	sh -c "echo '{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86\"],\"archMap\":[]}' > $W/m.json; $CF epoch install 1006 --seccomp $W/m.json fs:read=open"
tg "epoch install --seccomp: an errno name that disagrees with its number" 2 "errno must name an errno (EPERM, ENOSYS, ...) that agrees with its number" \
	sh -c "echo '{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1,\"errno\":\"ENOSYS\"}]}' > $W/n.json; $CF epoch install 1006 --seccomp $W/n.json fs:read=open"
tg "epoch install --seccomp: an unknown includes key" 2 "includes must be an object of arches, caps and minKernel" \
	sh -c "echo '{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{\"os\":[\"linux\"]}}]}' > $W/i.json; $CF epoch install 1006 --seccomp $W/i.json fs:read=open"
t "  ... and nothing installed" 1 "$CF" epoch show 1006
tg "epoch install --seccomp: io_uring refused when the profile refuses a call an opcode performs" 0 \
	'^seccomp: io_uring refused (ENOSYS): the profile refuses socket (IORING_OP_SOCKET)$' \
	sh -c "echo '{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"}]}]}' > $W/u.json; $CF epoch install 1006 --seccomp $W/u.json fs:read=open"

# new filters of a bound task: stacked by default, refused on request
tg "epoch install --seccomp: a bound task may stack its own filters by default" 0 \
	'^seccomp: new filters allowed: a bound task may stack its own above the epoch' \
	"$CF" epoch install 1007 --seccomp "$PROF" fs:read=open
tg "epoch install --seccomp-no-new-filters: new filters refused" 0 \
	'^seccomp: new filters refused (--seccomp-no-new-filters)' \
	"$CF" epoch install 1008 --seccomp "$PROF" --seccomp-no-new-filters fs:read=open
tg "  ... another program than the default's" 0 "sha256:" sh -c \
	"$CF epoch show 1007 | grep '^# seccomp' > $W/a; $CF epoch show 1008 | grep '^# seccomp' > $W/b; ! cmp -s $W/a $W/b && cat $W/a"
tg "epoch install --seccomp-no-new-filters without --seccomp" 2 "need --seccomp PROFILE" \
	"$CF" epoch install 1009 --seccomp-no-new-filters fs:read=open
tg "epoch install --seccomp-no-new-filters with a value" 2 "option '--seccomp-no-new-filters' takes no value" \
	"$CF" epoch install 1009 --seccomp "$PROF" --seccomp-no-new-filters=yes fs:read=open
t "  ... and nothing installed" 1 "$CF" epoch show 1009


# ---- epoch retire (ids above every other install here) ---------------------
tg "epoch retire: an unused epoch" 0 "^epoch 2000 retired$" \
	sh -c "$CF epoch install 2000 fs:read=open >/dev/null && $CF epoch retire 2000"
tg "epoch retire: retired, not installed (1)" 1 "not installed (retired" "$CF" epoch retire 2000
tg "epoch retire: never installed (1)" 1 "epoch retire: capfence: epoch is not installed" "$CF" epoch retire 99999
tg "epoch retire: its id is not installed again (10)" 10 "retired ones count" "$CF" epoch install 2000 fs:read=open
t "epoch retire --json" 0 sh -c "$CF epoch install 2001 fs:read=open >/dev/null && $CF epoch retire 2001 --json"
json "epoch retire --json keys" epoch retired
# ---- learn: a policy from a run, proved by rerunning it ----------------------
tg "usage: learn missing COMMAND" 2 "learn: missing COMMAND" "$CF" learn --
tg "usage: learn --open an unknown class" 2 'learn: unknown class "fs:exec"' "$CF" learn --open fs:exec -- true
tg "usage: learn --verify with -o" 2 "learn: --verify takes neither -o, --open" "$CF" learn --verify "$W/x" -o "$W/y" -- true
tg "usage: learn --verify with --any-port" 2 "learn: --verify takes neither -o, --open, --prefix4, --prefix6, --any-port nor --depth" "$CF" learn --verify "$W/x" --any-port -- true
tg "usage: learn --prefix4 33" 2 "learn: bad --prefix4 '33' (1 to 32)" "$CF" learn --prefix4 33 -- true
tg "usage: learn --prefix6 0" 2 "learn: bad --prefix6 '0' (1 to 128)" "$CF" learn --prefix6 0 -- true
tg "usage: learn --depth x" 2 "learn: bad --depth 'x' (1 to 64 names)" "$CF" learn --depth x -- true
tg "usage: learn --key without --verify" 2 "learn: --key is --verify's" "$CF" learn --key "$W/k1" -- true
tg "usage: learn --wait 0" 2 "learn: bad --wait '0'" "$CF" learn --wait 0 -- true
tg "usage: learn --verify an unreadable file" 2 "learn --verify: $W/nonexistent" "$CF" learn --verify "$W/nonexistent" -- true
mkdir -p "$W/job" "$W/other"
(while :; do nc -l -p 18080 </dev/null >/dev/null 2>&1; done) &
pids="$pids $!"
sleep 1
JOB="echo result > $W/job/out.txt && nc 127.0.0.1 18080 </dev/null"
tg "learn: a job bound to a complain epoch, its epoch file written" 0 \
	"^learn: epoch [0-9]*, sandbox [0-9]*, command exit 0; records [0-9]* (learned [0-9]*, refused 0), without a record 0 (over budget 0, over ceiling 0, lost 0), not received 0$" \
	"$CF" learn -o "$W/learned" --open fs:read -- sh -c "$JOB"
cp "$W/learned" "$W/out"
tg "  ... fs:write: the directory written in" 0 "^fs:write=token:$W/job$" cat "$W/learned"
tg "  ... net:connect: the peer, host/32 and port" 0 "^net:connect=token:127.0.0.1/32:18080$" cat "$W/learned"
tg "  ... fs:read: open, as learned" 0 "^fs:read=open$" cat "$W/learned"
tg "  ... a class not exercised: deny" 0 "^vsock:connect=deny$" cat "$W/learned"
tg "  ... the mint line of each token rule" 0 \
	"^# mint: capfence mint --key KEY --epoch ID --class fs:write --constraint $W/job$" cat "$W/learned"
tg "  ... the complain epoch is retired" 0 "epoch is not installed" sh -c \
	"e=\$(sed -n 's/^# ran bound to complain epoch \([0-9]*\) .*/\1/p' $W/learned); $CF epoch show \$e 2>&1; true"
t "learn: the epoch file installs (epoch install ID -f)" 0 "$CF" epoch install 3000 -f "$W/learned"
tg "learn --verify: the job reruns with no denial" 0 \
	"^verify: epoch [0-9]*, sandbox [0-9]*, command exit 0; records 0 (learned 0, refused 0), without a record 0" \
	"$CF" learn --verify "$W/learned" --key "$W/k1" -- sh -c "$JOB"
tg "learn --verify: a step not seen while learning is refused (14)" 14 \
	"^denied: lsm=capfence op=exercise reason=constraint errno=13 pid=[0-9]* comm=\"sh\" epoch=[0-9]* class=fs:write target=\"$W/other/x\" cap_id=[0-9a-f]\{16\} " \
	"$CF" learn --verify "$W/learned" --key "$W/k1" -- sh -c "$JOB; echo x > $W/other/x; true"
tg "learn --verify: a peer not seen while learning is refused (14)" 14 \
	"^denied: lsm=capfence op=exercise reason=constraint errno=13 .* class=net:connect target=127.0.0.1:18081 " \
	"$CF" learn --verify "$W/learned" --key "$W/k1" -- sh -c "$JOB; nc 127.0.0.1 18081 </dev/null; true"
tg "learn --verify: token rules need --key" 2 "has token rules: --key FILE mints their tokens" \
	"$CF" learn --verify "$W/learned" -- true
t "learn --json" 0 "$CF" learn --json --open fs:read -- sh -c "$JOB"
json "learn --json keys" epoch_id sandbox exit records received learned denied over_budget over_ceiling lost missing complete file seccomp syscalls rules mint notes
t "learn --verify --json" 0 "$CF" learn --verify "$W/learned" --key "$W/k1" --json -- sh -c "$JOB"
json "learn --verify --json keys" epoch_id sandbox records denials complete notes
# coarser suggestions: peers as their network and any port, paths cut
tg "learn --prefix4 24 --any-port: the peer as its /24, any port" 0 "^net:connect=token:127.0.0.0/24$" \
	"$CF" learn --prefix4 24 --any-port --open fs:read -- sh -c "$JOB"
D2=$(printf %s "$W/job" | cut -d/ -f1-3)
tg "learn --depth 2: the path cut to its first two names" 0 "^fs:write=token:$D2$" \
	"$CF" learn --depth 2 --open fs:read -- sh -c "$JOB"
# the system calls: a profile of the calls made, proved by the rerun too
# (no network: the restarting nc listener would make runs differ; ls is
# forked, as every step but the last)
SJOB="echo result > $W/job/out.txt; ls $W/job > /dev/null; echo done"
tg "learn --seccomp: the job learned with its system calls" 0 \
	"^learn: epoch [0-9]*, sandbox [0-9]*, command exit 0; records [0-9]* (learned [0-9]*, refused 0)" \
	"$CF" learn -o "$W/learned2" --seccomp "$W/prof.json" --open fs:read -- sh -c "$SJOB"
cp "$W/out" "$W/out.learn2"
tg "  ... and says how many calls it saw" 0 "^learn: [1-9][0-9]* system calls seen; their profile is $W/prof.json$" cat "$W/out.learn2"
tg "  ... the profile denies every call not seen with ENOSYS" 0 '"defaultErrnoRet": 38' cat "$W/prof.json"
tg "  ... its architecture" 0 '"architectures": \[ *"SCMP_ARCH_X86_64" *\]' tr -d '\n' < "$W/prof.json"
tg "  ... allows execve (the command's exec)" 0 '"execve",' cat "$W/prof.json"
tg "  ... and clone (the shell's fork)" 0 '"clone",' cat "$W/prof.json"
t "  ... and no call nobody made (reboot, sync)" 1 grep -q -e '"reboot"' -e '"sync"' "$W/prof.json"
tg "  ... the epoch file names the profile" 0 \
	"^# install: capfence epoch install ID -f FILE --seccomp $W/prof.json$" cat "$W/learned2"
tg "  ... epoch install takes both" 0 "^seccomp: sha256:[0-9a-f]* insns [0-9]*: " \
	"$CF" epoch install 9001 -f "$W/learned2" --seccomp "$W/prof.json"
tg "learn --verify --seccomp: the job reruns with no denial" 0 \
	"^verify: epoch [0-9]*, sandbox [0-9]*, command exit 0; records 1 (learned 0, refused 0), without a record 0 (over budget 0, over ceiling 0, lost 0), not received 0$" \
	"$CF" learn --verify "$W/learned2" --seccomp "$W/prof.json" --key "$W/k1" -- sh -c "$SJOB"
t "  ... and prints no denial (the bind's record is none)" 1 grep -q "^denied:" "$W/out"
tg "learn --verify --seccomp: a call not made while learning is ENOSYS with its record (14)" 14 \
	"^denied: lsm=capfence op=syscall reason=seccomp errno=38 pid=[0-9]* comm=\"sync\" epoch=[0-9]* syscall=162 arch=c000003e " \
	"$CF" learn --verify "$W/learned2" --seccomp "$W/prof.json" --key "$W/k1" -- sh -c "$SJOB; sync"
tg "learn --verify --seccomp: a profile that does not parse installs nothing (2)" 2 \
	"learn --verify: .*; nothing was installed" \
	"$CF" learn --verify "$W/learned2" --seccomp "$W/learned2" --key "$W/k1" -- true
tg "learn --seccomp: an unwritable profile path, before anything runs (1)" 1 "learn: cannot write /nonexistent/p.json" \
	"$CF" learn --seccomp /nonexistent/p.json --open fs:read -- touch $W/job/ran
t "  ... nothing ran" 1 test -e $W/job/ran
tg "learn --seccomp: a command that cannot run fails, nothing hangs (1)" 1 \
	"^capfence: learn: cannot run /nonexistent/prog bound to epoch [0-9]*: " \
	timeout 60 "$CF" learn --seccomp "$W/p2.json" --open fs:read -- /nonexistent/prog
tg "learn: a flood over the sandbox's budget is counted, not hidden (13)" 13 \
	"^learn: .* without a record [1-9][0-9]* (over budget [1-9][0-9]*, " \
	"$CF" learn -o "$W/flood" --open fs:read -- sh -c "i=0; while [ \$i -lt 60 ]; do : > $W/job/f\$i; i=\$((i + 1)); done"
tg "  ... and the file says so" 0 "^# note: incomplete: exercises without a record were seen (over budget [1-9]" cat "$W/flood"
# the whole epoch in complain mode
t "epoch install --complain: what it would deny, it logs" 0 \
	"$CF" epoch install 9200 --complain fs:read=open net:bind=deny fs:write=token:/srv
tg "  ... a deny rule given is log" 0 "^net:bind=log" "$CF" epoch show 9200
tg "  ... a class not given is log" 0 "^vsock:connect=log" "$CF" epoch show 9200
tg "  ... open and token rules stay" 0 "^fs:write=token:/srv" "$CF" epoch show 9200
tg "  ... open stays open" 0 "^fs:read=open" "$CF" epoch show 9200

finish
