#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The compatibility matrix (make matrix-check), one VM boot per kernel, with
# the Python overlay (tools/build/pyroot.sh) and the matrix overlay
# (tools/build/matrix-root.sh): real Debian 12 programs each do a real job
# against a local server or file tree, once unbound and once bound
# (`capfence exec`) to the least epoch the job needs, whose syscall policy
# is Podman's and CRI-O's default profile as Debian ships it
# (containers-common's seccomp.json, installed as shipped). A job passes
# when the bound run prints what the unbound one printed, ends with the
# same exit status and no signal, and every audit record of the bound run
# is explained by the epoch's rules or its profile (explain.py): a
# capfence denial by a rule that refuses its target, an op=syscall
# record (capfence's record of the epoch's program's refusal: the kernel
# writes no AUDIT_SECCOMP record for it) by a call the profile does not
# allow outright, never a signal.
# Then the ENOSYS answers programs rely on: a profile answering clone3
# with ENOSYS (one written here, and Docker's default.json as shipped) and
# one answering every call it does not list with ENOSYS, where the newer
# calls (clone3, rseq, close_range, faccessat2, statx, epoll_pwait2) are
# left unlisted: threads start and the fallbacks work, bound.
# Prints kselftest-style lines and a Totals line.

CF=${CAPFENCE:-capfence}
S=/usr/share/capfence/matrix
P=/usr/share/capfence/profiles
PODMAN=$P/containers-seccomp.json
DOCKER=$P/moby-default.json
W=/tmp/m
LOG=/tmp/audit/audit.log
PORT_HTTP=8080 PORT_GIT=9418 PORT_SSH=2222
n=0 pass=0 fail=0 skip=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "#   $2"; }
note() { sed 's/^/#   /' "$@"; }
PIDS=
finish() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	[ $fail -eq 0 ]
	exit $?
}
# wait_until CMD...: up to 60 s, until CMD succeeds
wait_until() {
	i=0
	while [ $i -lt 600 ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
listening() { netstat -ltn 2>/dev/null | grep -q "127.0.0.1:$1 "; }

echo "TAP version 13"
sed 's/^/# /' $S/versions
echo "# $(python3 -c 'import sys; print("python3", sys.version.split()[0])')"

# ---- auditd: the bound runs' records ----
mkdir -p /etc/audit/plugins.d /tmp/audit /var/run /var/log/audit
cp /usr/share/capfence/auditd.conf /etc/audit/auditd.conf
chmod 0640 /etc/audit/auditd.conf
auditd -n > /tmp/auditd.out 2>&1 &
PIDS="$PIDS $!"
wait_until grep -q DAEMON_START "$LOG" || { nok "auditd started" "$(head -3 /tmp/auditd.out)"; finish; }

# ---- the epochs' key, the marker epoch ----
mkdir -p $W/srv $W/u $W/b
# (op=bind is logged for an epoch with a syscall policy: one that allows all)
echo '{"defaultAction":"SCMP_ACT_ALLOW"}' > $W/srv/allow.json
"$CF" key generate --id 1 -o $W/key > /dev/null && "$CF" key install $W/key > /dev/null &&
	"$CF" epoch install 1 --seccomp $W/srv/allow.json fs:read=open fs:write=open > /dev/null ||
	{ nok "key and marker epoch installed"; finish; }
# mark: a bound no-op whose op=bind record closes (or opens) a window of
# the log; records are delivered in order, so once it is logged every
# record before it is too. Prints the record's line number.
mark() {
	"$CF" exec --epoch 1 -- true &
	mp=$!
	wait $mp
	wait_until grep -q "op=bind .* pid=$mp " "$LOG" || { echo 0; return; }
	grep -n "op=bind .* pid=$mp " "$LOG" | head -1 | cut -d: -f1
}

# ---- local servers and file trees (unbound) ----
python3 -c 'import sys
for i in range(2000): sys.stdout.write("line %d of the served file\n" % i)' > $W/srv/data.txt
(cd $W/srv && python3 -m http.server $PORT_HTTP --bind 127.0.0.1 > $W/http.log 2>&1) &
PIDS="$PIDS $!"
export HOME=$W/srv
git init -q -b main $W/srv/work && cd $W/srv/work &&
	printf 'capfence matrix\n' > README && cp $W/srv/data.txt . &&
	git add README data.txt && git -c user.name=m -c user.email=m@localhost commit -q -m "first" &&
	printf 'second\n' >> README &&
	git -c user.name=m -c user.email=m@localhost commit -q -a -m "second" &&
	git clone -q --bare $W/srv/work $W/srv/repo.git || { nok "git repository made"; finish; }
cd /root
git daemon --reuseaddr --base-path=$W/srv --export-all --listen=127.0.0.1 --port=$PORT_GIT \
	> $W/gitd.log 2>&1 &
PIDS="$PIDS $!"
wait_until listening $PORT_HTTP && wait_until listening $PORT_GIT ||
	{ nok "HTTP server and git daemon listening"; note $W/http.log $W/gitd.log; finish; }

# ---- one job: unbound, then bound ----
E=10
# install_epoch PROFILE [--seccomp-caps C] RULE...: the next epoch; sets E,
# EPOCH_RULES and TOKS (a token per token rule, its constraints the rule's)
install_epoch() {
	prof=$1 PROF=$1
	shift
	E=$((E + 1))
	"$CF" epoch install $E --seccomp "$prof" "$@" > $W/epoch-$E.out 2>&1 ||
		{ note $W/epoch-$E.out; return 1; }
	EPOCH_RULES="$*"
	TOKS=
	for r in "$@"; do
		case $r in
		--seccomp-caps) continue ;;
		*=token:*) ;;
		*) continue ;;
		esac
		cls=${r%%=*}
		cs=
		for c in $(echo "${r#*=token:}" | tr ',' ' '); do cs="$cs --constraint $c"; done
		t=$("$CF" mint --key $W/key --class "$cls" --epoch $E $cs) || return 1
		TOKS="$TOKS --token $t"
	done
}
# explain FROM TO PROFILE [ARGS...]: explain.py on the log lines between
# two marks (exclusive), for the epochs in EXPLAIN_EPOCHS
explain() {
	from=$1 to=$2 prof=$3
	shift 3
	sed -n "$((from + 1)),$((to - 1))p" "$LOG" |
		grep -E '^type=(UNKNOWN\[1460\]|SECCOMP|ANOM_)' > $W/records
	# shellcheck disable=SC2086
	python3 $S/explain.py --profile "$prof" $EXPLAIN_EPOCHS "$@" < $W/records > $W/explained
}
# job NAME WHAT [--setup CMD] [--check CMD] [--stdin FILE] [--root DIR] [--expect-logged NAMES] -- COMMAND...:
# COMMAND in $W/u/NAME unbound, then in $W/b/NAME bound to epoch E (the
# last install_epoch) with TOKS, each under a timeout; HOME is the job's
# directory; --root: both in a chroot to DIR (at its /). --setup CMD
# (a shell line) runs unbound in both directories before, --check CMD
# after: its output is compared too.
RUN_TIMEOUT=300
job() {
	name=$1 what=$2
	shift 2
	check= expect= in=/dev/null root= setup=
	while [ "$1" != "--" ]; do
		case $1 in
		--setup) setup=$2; shift 2 ;;
		--check) check=$2; shift 2 ;;
		--root) root="chroot $2"; shift 2 ;;
		--stdin) in=$2; shift 2 ;;
		--expect-logged) expect=$2; shift 2 ;;
		*) echo "job: $1?"; return 1 ;;
		esac
	done
	shift
	mkdir -p $W/u/$name $W/b/$name
	if [ -n "$setup" ]; then
		(cd $W/u/$name && HOME=$PWD sh -c "$setup") && (cd $W/b/$name && HOME=$PWD sh -c "$setup") ||
			{ nok "$name: setup"; return 0; }
	fi
	# shellcheck disable=SC2086
	(cd $W/u/$name && HOME=$PWD exec timeout $RUN_TIMEOUT $root "$@") > $W/u/$name.out 2>&1 < "$in"
	urc=$?
	m0=$(mark)
	# shellcheck disable=SC2086
	(cd $W/b/$name && HOME=$PWD exec timeout $RUN_TIMEOUT $root "$CF" exec --epoch $E $TOKS -- "$@") \
		> $W/b/$name.out 2>&1 < "$in"
	brc=$?
	m1=$(mark)
	if [ -n "$check" ]; then
		(cd $W/u/$name && HOME=$PWD sh -c "$check") >> $W/u/$name.out 2>&1
		(cd $W/b/$name && HOME=$PWD sh -c "$check") >> $W/b/$name.out 2>&1
	fi
	EXPLAIN_EPOCHS="--epoch $E $EPOCH_RULES"
	explain "$m0" "$m1" "$PROF" ${expect:+--expect-logged "$expect"}
	xrc=$?
	verdict "$name" "$what" $urc $brc $xrc $W/u/$name.out $W/b/$name.out "epoch $E: $EPOCH_RULES"
}
# verdict NAME WHAT URC BRC XRC UOUT BOUT EPOCHS
verdict() {
	why=
	[ "$4" -lt 128 ] || why="$why bound run exit $4 (above 128: a signal?);"
	[ "$3" = 0 ] || why="$why unbound run exit $3;"
	[ "$3" = "$4" ] || why="$why exit $3 unbound, $4 bound;"
	cmp -s "$6" "$7" || why="$why output differs;"
	[ "$5" = 0 ] || why="$why audit records not explained;"
	[ "$m0" != 0 ] && [ "$m1" != 0 ] || why="$why a marker record missing;"
	if [ -z "$why" ]; then
		ok "$1: $2 ($8, profile $(basename "$PROF"))"
	else
		nok "$1: $2 ($8, profile $(basename "$PROF"))" "$why"
		echo "#   unbound:"; head -20 "$6" | note
		echo "#   bound:"; head -20 "$7" | note
	fi
	head -40 $W/explained | note
	[ "$(wc -l < $W/explained)" -le 40 ] || echo "#   ... $(wc -l < $W/explained) records"
}

# What every job reads: the programs and their libraries, /etc; the
# shared paths of the test (its scripts and profiles).
SYS=/usr,/lib,/lib64,/etc
HTTP=http://127.0.0.1:$PORT_HTTP/data.txt

# ---- python3: threads, a subprocess, an HTTP client ----
install_epoch $PODMAN net:connect=token:127.0.0.1/32:$PORT_HTTP fs:read=token:$SYS,/bin &&
	job python3 "threads, a subprocess, urllib GET of a local HTTP server" \
		-- python3 $S/py-job.py $HTTP || nok "python3: epoch installed"

# ---- curl: GET into a file ----
install_epoch $PODMAN net:connect=token:127.0.0.1/32:$PORT_HTTP fs:read=token:$SYS \
	fs:write=token:$W/b/curl &&
	job curl "GET of a local HTTP server into a file" --check "sha256sum data.txt" \
		-- curl -sS -o data.txt -w '%{http_code} %{size_download}\n' $HTTP ||
	nok "curl: epoch installed"

# ---- git: clone from the git daemon, and over file:// ----
GITCHECK="git -C clone log --format='%H %s' && git -C clone status --short && sha256sum clone/*"
install_epoch $PODMAN net:connect=token:127.0.0.1/32:$PORT_GIT \
	fs:read=token:$SYS,/dev/null,/dev/urandom,$W/b/git-daemon fs:write=token:/dev/null,$W/b/git-daemon &&
	job git-daemon "clone from a local git daemon (git://)" --check "$GITCHECK" \
		-- git clone -q git://127.0.0.1:$PORT_GIT/repo.git clone ||
	nok "git-daemon: epoch installed"
# (the repository in the job's own tree: a rule has at most 8 constraints)
GITSETUP="git clone -q --bare $W/srv/work repo.git"
install_epoch $PODMAN fs:read=token:$SYS,/bin,/dev/null,/dev/urandom,$W/b/git-file \
	fs:write=token:/dev/null,$W/b/git-file &&
	job git-file "clone of a local repository over the git transport (--no-local: upload-pack through sh)" --setup "$GITSETUP" --check "$GITCHECK" \
		-- git clone -q --no-local repo.git clone ||
	nok "git-file: epoch installed"

# ---- sshd and ssh: a key login over loopback, sshd's seccomp sandbox on ----
SSH=$W/ssh
mkdir -p $SSH /run/sshd && chmod 0755 /run/sshd
grep -q '^sshd:' /etc/passwd || echo 'sshd:x:100:65534::/run/sshd:/usr/sbin/nologin' >> /etc/passwd
ssh-keygen -q -t ed25519 -N '' -f $SSH/host_key && ssh-keygen -q -t ed25519 -N '' -f $SSH/id &&
	cp $SSH/id.pub $SSH/authorized_keys &&
	echo "[127.0.0.1]:$PORT_SSH $(cut -d' ' -f1,2 $SSH/host_key.pub)" > $SSH/known_hosts
printf '%s\n' "ListenAddress 127.0.0.1:$PORT_SSH" "HostKey $SSH/host_key" \
	"AuthorizedKeysFile $SSH/authorized_keys" "PermitRootLogin prohibit-password" \
	"PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" \
	"StrictModes no" "PrintMotd no" "PrintLastLog no" "PidFile none" "LogLevel DEBUG3" \
	> $SSH/sshd_config
printf '%s\n' "Host *" "  IdentityFile $SSH/id" "  UserKnownHostsFile $SSH/known_hosts" \
	"  StrictHostKeyChecking yes" "  BatchMode yes" "  LogLevel ERROR" > $SSH/ssh_config
# ssh_round DIR: sshd in the foreground (its log in DIR/sshd.log) started
# by SSHD_LAUNCH, one login by ssh started by SSH_LAUNCH, sshd stopped;
# prints the login's output (its diagnostics in DIR/ssh.err: the session's
# own debug lines interleave), returns ssh's exit status (90: sshd died
# before it was stopped, 91: it never listened)
ssh_round() {
	d=$1
	# shellcheck disable=SC2086
	timeout $RUN_TIMEOUT $SSHD_LAUNCH /usr/sbin/sshd -D -e -f $SSH/sshd_config 2> $d/sshd.log &
	sp=$!
	wait_until listening $PORT_SSH || { kill $sp; wait $sp; return 91; }
	# shellcheck disable=SC2086
	timeout $RUN_TIMEOUT $SSH_LAUNCH ssh -F $SSH/ssh_config -p $PORT_SSH root@127.0.0.1 \
		'echo hello from $(id -un), uid $(id -u), in $PWD' < /dev/null 2> $d/ssh.err
	r=$?
	kill -0 $sp 2>/dev/null || r=90
	kill $sp
	wait $sp
	wait_until sh -c "! netstat -ltn | grep -q 127.0.0.1:$PORT_SSH"
	return $r
}
# One epoch for both, each holding only its own token (sshd the bind, ssh
# the connect): a client bound to one epoch does not reach a listener
# bound to another (its connect waits out the handshake). fs is open:
# sshd's privilege-separated child chroots, which a bound task may not
# while fs:read or fs:write is mediated.
install_epoch $PODMAN net:bind=token:127.0.0.1/32:$PORT_SSH net:connect=token:127.0.0.1/32:$PORT_SSH \
	fs:read=open fs:write=open && {
	SSHD_E=$E SSHD_RULES=$EPOCH_RULES
	SSHD_TOKS=$(echo $TOKS | cut -d' ' -f1,2)
	TOKS=$(echo $TOKS | cut -d' ' -f3,4)
} && {
	mkdir -p $W/u/ssh $W/b/ssh
	SSHD_LAUNCH= SSH_LAUNCH= ssh_round $W/u/ssh > $W/u/ssh.out 2>&1
	urc=$?
	m0=$(mark)
	SSHD_LAUNCH="$CF exec --epoch $SSHD_E $SSHD_TOKS --" SSH_LAUNCH="$CF exec --epoch $E $TOKS --" \
		ssh_round $W/b/ssh > $W/b/ssh.out 2>&1
	brc=$?
	m1=$(mark)
	# sshd's own sandbox: its privilege-separated child attached its
	# seccomp filter (sandbox-seccomp-filter.c logs a refusal at debug)
	for d in u b; do
		grep -q 'ssh_sandbox_child: attaching seccomp filter program' $W/$d/ssh/sshd.log &&
			! grep -q 'prctl(PR_SET_SECCOMP)' $W/$d/ssh/sshd.log &&
			echo "sshd: seccomp sandbox attached" >> $W/$d/ssh.out
		grep 'prctl\|seccomp' $W/$d/ssh/sshd.log | sed "s/^/# sshd ($d): /"
	done
	EXPLAIN_EPOCHS="--epoch $E $EPOCH_RULES"
	explain "$m0" "$m1" "$PODMAN"
	verdict ssh "key login to a local sshd over loopback, sshd's seccomp sandbox on" \
		$urc $brc $? $W/u/ssh.out $W/b/ssh.out \
		"epoch $E: $EPOCH_RULES, sshd holding the net:bind token, ssh the net:connect one"
} || nok "ssh: epochs installed"

# ---- bubblewrap with its own seccomp filter ----
# The filter (classic BPF, read by bwrap from its stdin: --seccomp 0)
# answers mkdir and mkdirat with EPERM and allows the rest.
python3 -c '
import struct, sys
LD, JEQ, RET = 0x20, 0x15, 0x06
ALLOW, EPERM = 0x7fff0000, 0x00050001
prog = [(LD, 0, 0, 4), (JEQ, 1, 0, 0xc000003e), (RET, 0, 0, EPERM),
        (LD, 0, 0, 0), (JEQ, 2, 0, 83), (JEQ, 1, 0, 258), (RET, 0, 0, ALLOW),
        (RET, 0, 0, EPERM)]
open(sys.argv[1], "wb").write(b"".join(struct.pack("=HBBI", *i) for i in prog))
' $W/srv/no-mkdir.bpf
# pivot_root(2) cannot move this VM's root, the initramfs (rootfs): bwrap
# runs in a chroot to a bind mount of it, a root as a real system has.
mkdir -p /mnt/root && mount -o rbind / /mnt/root
install_epoch $PODMAN fs:read=open fs:write=open &&
	job bwrap "a sandbox of its own: new mount, pid, ipc and uts namespaces, its --seccomp filter" \
		--stdin $W/srv/no-mkdir.bpf --root /mnt/root \
		-- bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-pid \
		--unshare-ipc --unshare-uts --die-with-parent --seccomp 0 \
		-- /bin/busybox sh -c 'echo in the sandbox, pid $$; grep ^Seccomp: /proc/self/status;
			mkdir /tmp/x || echo mkdir refused by the filter' ||
	nok "bwrap: epoch installed"

# ---- QEMU: -sandbox on, start and quit ----
printf 'info status\nquit\n' > $W/srv/qemu.in
install_epoch $PODMAN fs:read=token:$SYS,/dev/null fs:write=token:/dev/null &&
	job qemu "qemu-system-x86_64 -machine none -sandbox on: start, monitor 'info status', quit" \
		--stdin $W/srv/qemu.in \
		-- qemu-system-x86_64 -machine none -accel tcg,tb-size=16 -sandbox on -nodefaults \
		-display none -monitor stdio -S ||
	nok "qemu: epoch installed"

# ---- the ENOSYS answers programs rely on ----
# clone3 answered ENOSYS: glibc's pthread_create falls back to clone
echo '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["clone3"],"action":"SCMP_ACT_ERRNO","errnoRet":38}]}' \
	> $W/srv/clone3-enosys.json
install_epoch $W/srv/clone3-enosys.json net:connect=token:127.0.0.1/32:$PORT_HTTP \
	fs:read=token:$SYS,/bin &&
	job python3-clone3-enosys "threads, a subprocess, urllib GET; clone3 answered ENOSYS" \
		--expect-logged clone3 -- python3 $S/py-job.py $HTTP ||
	nok "python3-clone3-enosys: epoch installed"
install_epoch $DOCKER net:connect=token:127.0.0.1/32:$PORT_HTTP fs:read=token:$SYS,/bin &&
	job python3-docker "threads, a subprocess, urllib GET; Docker's profile (clone3: ENOSYS)" \
		--expect-logged clone3 -- python3 $S/py-job.py $HTTP ||
	nok "python3-docker: epoch installed"
# every call a profile does not list answered ENOSYS, the newer calls
# among them: containers-common's profile without them (openat2 too: a
# class's newer call answered ENOSYS falls back to the older one)
python3 -c '
import json, sys
NEWER = {"clone3", "rseq", "close_range", "faccessat2", "statx", "epoll_pwait2", "openat2"}
p = json.load(open(sys.argv[1]))
for r in p["syscalls"]:
    r["names"] = [n for n in r["names"] if n not in NEWER]
p["syscalls"] = [r for r in p["syscalls"] if r["names"]]
json.dump(p, open(sys.argv[2], "w"), indent=1)
' $PODMAN $W/srv/podman-unlisted-newer.json
install_epoch $W/srv/podman-unlisted-newer.json net:connect=token:127.0.0.1/32:$PORT_HTTP \
	fs:read=token:$SYS,/bin &&
	job python3-unlisted-enosys "threads, a subprocess, urllib GET; newer calls unlisted (ENOSYS)" \
		--expect-logged clone3,rseq -- python3 $S/py-job.py $HTTP ||
	nok "python3-unlisted-enosys: epoch installed"
install_epoch $W/srv/podman-unlisted-newer.json \
	fs:read=token:$SYS,/bin,/dev/null,/dev/urandom,$W/b/git-unlisted-enosys \
	fs:write=token:/dev/null,$W/b/git-unlisted-enosys &&
	job git-unlisted-enosys "clone over the git transport (--no-local); newer calls unlisted (ENOSYS)" --setup "$GITSETUP" \
		--check "$GITCHECK" --expect-logged rseq -- git clone -q --no-local repo.git clone ||
	nok "git-unlisted-enosys: epoch installed"

# ---- capfence learn: the python job's epoch and profile from one run ----
# learned bound to a complain epoch, installed as the suggestion says,
# proved by rerunning the job (twice: a profile must not depend on one
# run's timing), and a step it did not take while learning refused
L=$W/b/learn
mkdir -p $L
if "$CF" learn -o $W/learn.epoch --seccomp $W/learn.json --open fs:read -- \
	python3 $S/py-job.py $HTTP $L/result > $W/learn.out 2>&1 &&
	grep -q "^fs:write=token:$L$" $W/learn.epoch &&
	grep -q "^net:connect=token:127.0.0.1/32:$PORT_HTTP$" $W/learn.epoch; then
	ok "python3-learn: learned $(grep -c . $W/learn.json) profile lines, $(sed -n 's/^learn: \([0-9]*\) system calls seen.*/\1/p' $W/learn.out) calls; $(grep -v '^#' $W/learn.epoch | tr '\n' ' ')"
else
	nok "python3-learn: learned" "$(tr '\n' ' ' < $W/learn.out)"
	note $W/learn.epoch
fi
for round in 1 2; do
	rm -f $L/result
	if "$CF" learn --verify $W/learn.epoch --seccomp $W/learn.json --key $W/key -- \
		python3 $S/py-job.py $HTTP $L/result > $W/verify.out 2>&1 &&
		! grep -q "^denied:" $W/verify.out && [ -s $L/result ]; then
		ok "python3-learn: rerun $round under the learned epoch and profile, no denial"
	else
		nok "python3-learn: rerun $round under the learned epoch and profile, no denial"
		note $W/verify.out
	fi
done
"$CF" learn --verify $W/learn.epoch --seccomp $W/learn.json --key $W/key -- \
	python3 $S/py-job.py $HTTP $W/b/elsewhere > $W/verify2.out 2>&1
rc=$?
if [ $rc = 14 ] && [ ! -e $W/b/elsewhere ] &&
	grep -q "^denied: lsm=capfence op=exercise reason=constraint errno=13 .* comm=\"python3\" .* class=fs:write target=\"$W/b/elsewhere\" " $W/verify2.out; then
	ok "python3-learn: a result written elsewhere is refused (exit 14, reason=constraint)"
else
	nok "python3-learn: a result written elsewhere is refused (exit $rc)"
	note $W/verify2.out
fi

finish
