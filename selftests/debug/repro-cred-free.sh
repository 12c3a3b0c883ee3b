#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Reproducer: credential state must be forgotten when a bound task's
# credentials are freed. capfence forgets it in the cred_free LSM hook, but
# security_cred_free() skips every cred_free hook when cred->security is
# NULL, i.e. when no active LSM reserves a credential blob (lbs_cred == 0):
# boot with lsm=bpf (or lockdown,yama,bpf; the debug kernel without
# landlock) and the entries leak, the bound count never drops, detach and
# rmmod stay refused, and once a freed cred's memory is reused the stale
# entry makes an unrelated cred look bound, or cf_cred_prepare()'s insert
# collides and fails fork/exec/setuid with ENOMEM -- init included.
#
#   CAPFENCE_VM_APPEND=lsm=bpf selftests/vm/run \
#       --add selftests/debug/repro-cred-free.sh -- sh repro-cred-free.sh
#
# Passes (exit 0) on a kernel whose LSM stack has a cred blob (Debian's
# default: apparmor, landlock, selinux...). Since the fix (22cb86f) the
# module refuses `capfence attach` without one, so under lsm=bpf the VM
# runner stops at its "capfence attach" setup step instead (exit 125).
echo "# active LSMs: $(cat /sys/kernel/security/lsm)"
capfence epoch install 1 fs:read=open fs:write=open >/dev/null || exit 1
before=$(capfence status --json | sed -n 's/.*"bound_creds":*\([0-9]*\).*/\1/p')
i=0
while [ $i -lt 20 ]; do capfence exec --epoch 1 -- true; i=$((i + 1)); done
for t in 1 2 3 4 5 6 7 8 9 10; do
	sleep 0.5
	now=$(capfence status --json | sed -n 's/.*"bound_creds":*\([0-9]*\).*/\1/p')
	[ "$now" = "$before" ] && break
done
echo "# bound credentials: before $before, 5 s after 20 bound tasks exited: $now"
if [ "$now" != "$before" ]; then
	echo "not ok 1 - bound credentials are forgotten when their tasks exit"
	exit 1
fi
echo "ok 1 - bound credentials are forgotten when their tasks exit"
