#!/bin/sh
# In the VM of make check-deb: a host upgraded from one package version to
# the next but not rebooted. The old module (capfence.ko, loaded by the VM)
# and the old CLI (capfence) bind a task; then the new CLI
# (capfence-new) drives the old module with that task bound, detach and
# unload are refused, and once the task is gone the operator's reload
# (detach, rmmod, insmod the new module, attach) brings the new version.
#   upgrade-guest.sh OLD_VERSION NEW_VERSION
set -u
old=$1 new=$2
W=/tmp/upgrade
mkdir -p $W
pass=0 fail=0 n=0
t() {
	d=$1; shift
	n=$((n + 1))
	if "$@" > $W/out 2>&1; then pass=$((pass + 1)); echo "ok $n $d"
	else fail=$((fail + 1)); echo "not ok $n $d"; sed 's/^/#   /' $W/out; fi
}
bound() { capfence-new task "$1" --json | grep -q '"bound":true'; }

t "old CLI: key and epoch 41 installed" sh -c \
	"capfence key generate --id 1 -o $W/k && capfence key install $W/k && capfence epoch install 41 fs:read=open"
capfence exec --epoch 41 -- sleep 600 &
task=$!
sleep 1
t "old CLI: a task bound to epoch 41" sh -c "capfence task $task --json | grep -q '\"bound\":true'"

# the packages are upgraded here: the files change, the module stays
t "new CLI: capfence-new --version names $new and the loaded module $old" sh -c "
	capfence-new --version > $W/v 2> $W/e; cat $W/v $W/e
	grep -qx 'capfence $new (abi [0-9]*)' $W/v && grep -qx 'module $old (abi [0-9]*)' $W/v &&
	grep -q 'version mismatch: CLI $new, module $old' $W/e"
t "new CLI: status of the old module (1 bound credential)" sh -c "capfence-new status | grep -q '^bound credentials *[1-9]'"
t "new CLI: the task is still bound" bound $task
t "new CLI: detach refused while the task is bound" sh -c "! capfence-new detach"
t "rmmod capfence refused while the task is bound" sh -c "! rmmod capfence"
t "the task is still bound, hooks attached" sh -c "capfence-new task $task --json | grep -q '\"bound\":true' &&
	capfence-new status | grep -q '^hooks *attached'"

# the operator's reload once no task is bound
kill $task; wait $task 2>/dev/null
t "after the task ends: detach" capfence-new detach
t "rmmod capfence (once its programs are freed)" sh -c \
	'i=0; until rmmod capfence 2>/dev/null; do i=$((i + 1)); [ $i -lt 100 ] || exit 1; sleep 0.2; done'
t "insmod the new module, attach with the new CLI" sh -c "insmod /root/capfence-new.ko && capfence-new attach"
t "capfence-new --version: module $new, no mismatch" sh -c "
	capfence-new --version > $W/v 2> $W/e; cat $W/v $W/e
	grep -qx 'module $new (abi [0-9]*)' $W/v && ! [ -s $W/e ]"
t "new module: key, epoch, a command run bound to it" sh -c "
	capfence-new key install $W/k && capfence-new epoch install 41 fs:read=open &&
	capfence-new exec --epoch 41 -- true"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
