#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Write capfence as a git format-patch series against Debian 13's
# linux-source-6.12, and run the tree's checkpatch.pl --strict on each:
#   patches.sh BUILDDIR   -> BUILDDIR/patches/*.patch, BUILDDIR/patches/checkpatch.log
# BUILDDIR is make kernel-builtin's (its linux-source-6.12 has
# security/capfence/ made from kernel/ and lsm/builtin/). The series is
# made in a scratch repository holding only the files it changes, at
# their pristine contents from the source tarball, so it applies to the
# whole tree (git am, or patch -p1).
set -eu
out=$(cd "$1" && pwd -P)
top=$(cd "$(dirname "$0")/../.." && pwd)
tarball=${CAPFENCE_LINUX_SOURCE:-/usr/src/linux-source-6.12.tar.xz}
src=$out/linux-source-6.12
[ -d "$src/security/capfence" ] || { echo "patches.sh: run make kernel-builtin first" >&2; exit 1; }
r=$out/series-git
p=$out/patches
rm -rf "$r" "$p"
mkdir -p "$r" "$p"
hookfiles="include/linux/lsm_hook_defs.h include/linux/security.h security/security.c kernel/seccomp.c"
touched="security/Kconfig security/Makefile include/linux/lsm_count.h MAINTAINERS Makefile
	Documentation/admin-guide/LSM/index.rst tools/testing/selftests/Makefile $hookfiles"
# the pristine files, taken from the tarball once (each one missing)
missing=
for f in $touched; do
	[ -f "$out/pristine/$f" ] || missing="$missing linux-source-6.12/$f"
done
if [ -n "$missing" ]; then
	mkdir -p "$out/pristine"
	# shellcheck disable=SC2086
	tar -C "$out/pristine" --strip-components=1 -xf "$tarball" $missing
fi
for f in $touched; do
	mkdir -p "$r/$(dirname "$f")"
	cp "$out/pristine/$f" "$r/$f"
done
ver=$(awk '/^VERSION =/{v=$3} /^PATCHLEVEL =/{p=$3} /^SUBLEVEL =/{s=$3} END{print v"."p"."s}' "$r/Makefile")
cd "$r"
git init -q
git config user.name "$(git -C "$top" config user.name)"
git config user.email "$(git -C "$top" config user.email)"
git add -A
git commit -qm "linux-source-6.12 (Debian 13), upstream v$ver"
sob="Signed-off-by: $(git config user.name) <$(git config user.email)>"
commit() {
	git add -A
	git commit -q -F - <<MSG
$1

$2

$sob
MSG
}

mkdir -p include/uapi/linux security/capfence
cp "$src/include/uapi/linux/capfence.h" include/uapi/linux/
# a MAINTAINERS entry, in its alphabetical place
CF_EMAIL=$(git config user.email) awk '
/^CC2520 / && !done { print "CAPFENCE SECURITY MODULE"; print "M:\tcapfence maintainers <" ENVIRON["CF_EMAIL"] ">"; print "S:\tMaintained"; print "F:\tinclude/uapi/linux/capfence.h"; print ""; done = 1 }
{ print }' MAINTAINERS > MAINTAINERS.new
mv MAINTAINERS.new MAINTAINERS
commit "capfence: add the generic netlink uapi" \
"capfence binds sandboxed tasks' credentials to a policy epoch, mediates
capability classes by delegated tokens and holds each bound task to its
epoch's seccomp program. Its control plane is the generic netlink family
\"capfence\": this header is the one ABI between the kernel and user space
(commands, attributes, classes, reasons, the token encoding)."

for f in "$src"/security/capfence/*; do
	case ${f##*/} in
	lsm.c|cred_store.h|file_store.h|sock_store.h|seccomp_offsets.c|Kconfig|Makefile) continue ;;
	esac
	cp "$f" security/capfence/
done
sed -i 's|^F:\tinclude/uapi/linux/capfence.h$|&\nF:\tsecurity/capfence/|' MAINTAINERS
commit "capfence: add the decision core" \
"The state and decisions of capfence: epochs, keys, tokens, the capability
graph and its fence, per-credential bindings, the network and filesystem
edges that gather an operation's target, audit records within
per-sandbox budgets, and the generic netlink family. The same files are
built out of tree as a module whose hooks are BPF-LSM programs; what
differs lives in the front end (next patch). Nothing is built yet."

patch -p1 -s --no-backup-if-mismatch < "$top/lsm/builtin/seccomp-hook.patch"
commit "lsm: add the seccomp_skipped hook" \
"A call that a task's seccomp filters skip (an errno, a trap, a kill, a
trace or user notification that skipped it) is invisible to an LSM: the
kernel's own record of it, AUDIT_SECCOMP, is written only for filters
loaded with SECCOMP_FILTER_FLAG_LOG and for kills, outside any budget an
LSM keeps. An LSM that binds a task to a seccomp program needs to know
of its refusals to record them itself.

security_seccomp_skipped() is called from __secure_computing() after the
filters answered with an action that skips the call, in the context of
the task, with the number of the system call they judged. It is a void
hook: the call is skipped already, whatever the LSM does. Tasks without
a filter never reach it; with no LSM on the hook it is a static call
that is not taken."

for f in lsm.c cred_store.h file_store.h sock_store.h seccomp_offsets.c Kconfig Makefile; do
	cp "$src/security/capfence/$f" security/capfence/
done
for f in security/Kconfig security/Makefile include/linux/lsm_count.h; do
	cp "$src/$f" "$f"
done
# a security module now: its reviews go to the LSM list
sed -i 's|^M:\tcapfence maintainers .*|&\nL:\tlinux-security-module@vger.kernel.org|' MAINTAINERS
commit "capfence: add the LSM" \
"CONFIG_SECURITY_CAPFENCE: the hooks register with security_add_hooks()
under their own lsm_id; a credential's state is a pointer in its
credential blob, so a bound task's hook reads it without a lookup and an
unbound task's costs one load. The state and the genetlink family come
up at device_initcall, before which no credential can be bound. Enable
it with lsm=...,capfence."

mkdir -p Documentation/admin-guide/LSM
cp "$top/lsm/builtin/capfence.rst" Documentation/admin-guide/LSM/
sed -i 's|^   ipe$|&\n   capfence|' Documentation/admin-guide/LSM/index.rst
grep -qx '   capfence' Documentation/admin-guide/LSM/index.rst ||
	{ echo "patches.sh: could not add capfence to the LSM index" >&2; exit 1; }
sed -i 's|^F:\tinclude/uapi/linux/capfence.h$|F:\tDocumentation/admin-guide/LSM/capfence.rst\n&|' MAINTAINERS
commit "Documentation: admin-guide: add capfence" \
"What capfence is, how to enable it (CONFIG_SECURITY_CAPFENCE and lsm=),
its parameters and its generic netlink family, whose ABI is
include/uapi/linux/capfence.h."

mkdir -p tools/testing/selftests/capfence
for f in Makefile config .gitignore capfence_test.c; do
	cp "$top/lsm/builtin/selftests/$f" tools/testing/selftests/capfence/
done
sed -i 's|^TARGETS += capabilities$|&\nTARGETS += capfence|' tools/testing/selftests/Makefile
grep -qx 'TARGETS += capfence' tools/testing/selftests/Makefile ||
	{ echo "patches.sh: could not add capfence to the selftests' TARGETS" >&2; exit 1; }
sed -i 's|^F:\tsecurity/capfence/$|&\nF:\ttools/testing/selftests/capfence/|' MAINTAINERS
commit "selftests: capfence: add the control plane's tests" \
"Through the uapi header alone, with kselftest_harness.h: capfence is
among the active LSMs, its generic netlink family resolves at the
header's ABI version, the host's status answers CAP_MAC_ADMIN only
(EPERM without it), and a command given an attribute it does not take
(a revoke marked dry-run) is refused with EINVAL before it acts.
The config fragment names what CONFIG_SECURITY_CAPFENCE needs."

git format-patch -q --cover-letter -o "$p" HEAD~6 \
	--subject-prefix="RFC PATCH" >/dev/null
sed -i "s/\*\*\* SUBJECT HERE \*\*\*/capfence: capability delegation fenced by syscall-policy epochs/;
s/\*\*\* BLURB HERE \*\*\*/A security module that binds sandboxed tasks' credentials to a policy\nepoch. The series applies to v$ver (Debian 13's linux-source-6.12)./" "$p"/0000-cover-letter.patch
cd "$src"
: > "$p/checkpatch.log"
bad=0
for f in "$p"/0*.patch; do
	case $f in *0000-cover-letter.patch) continue ;; esac
	if ! scripts/checkpatch.pl --strict "$f" >> "$p/checkpatch.log" 2>&1; then
		bad=1
	fi
done
grep -E '^total:' "$p/checkpatch.log"
ls "$p"
exit $bad
