#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build the small QEMU kernel with capfence built in (CONFIG_SECURITY_CAPFENCE):
#   kernel-builtin.sh OUTDIR   -> OUTDIR/bzImage, OUTDIR/build-times
# From Debian 13's linux-source-6.12 (/usr/src/linux-source-6.12.tar.xz,
# package linux-source-6.12), extracted once into OUTDIR/linux-source-6.12.
# security/capfence/ is made from the core (kernel/, the files capfence.ko
# is built from, less the module's front end) and the built-in front end
# (lsm/builtin/); a file is copied only when it changed, so a rebuild
# compiles only what changed. The configuration is allnoconfig plus
# tools/build/kernel-builtin.config; compiles go through ccache
# (OUTDIR/ccache). CAPFENCE_JOBS (default: the number of CPUs) sets -j.
set -eu
out=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
tarball=${CAPFENCE_LINUX_SOURCE:-/usr/src/linux-source-6.12.tar.xz}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
src=$out/linux-source-6.12
obj=$out/obj
jobs=${CAPFENCE_JOBS:-$(nproc)}

for c in ccache gcc make flex bison bc; do
	command -v $c >/dev/null || { echo "kernel-builtin.sh: $c is missing; run tools/build/deps.sh (as root)" >&2; exit 1; }
done
# extracted once, into a fresh directory renamed into place when complete
if [ ! -d "$src" ]; then
	[ -f "$tarball" ] || { echo "kernel-builtin.sh: $tarball is missing; apt-get install linux-source-6.12" >&2; exit 1; }
	rm -rf "$out/extract"
	mkdir "$out/extract"
	tar -C "$out/extract" -xf "$tarball"
	mv "$out/extract/linux-source-6.12" "$src"
	rmdir "$out/extract"
fi

# cp only when different: unchanged files keep their time
put() {
	mkdir -p "$(dirname "$2")"
	cmp -s "$1" "$2" || cp "$1" "$2"
}

# the kernel's own files that name the LSM (idempotent)
grep -q 'security/capfence/Kconfig' "$src/security/Kconfig" ||
	sed -i 's|^source "security/landlock/Kconfig"$|&\nsource "security/capfence/Kconfig"|' "$src/security/Kconfig"
grep -q 'CONFIG_SECURITY_CAPFENCE' "$src/security/Makefile" ||
	sed -i 's|^obj-$(CONFIG_SECURITY_LANDLOCK)\t\t+= landlock/$|&\nobj-$(CONFIG_SECURITY_CAPFENCE)\t\t+= capfence/|' "$src/security/Makefile"
grep -q 'CAPFENCE_ENABLED' "$src/include/linux/lsm_count.h" || {
	sed -i 's|^#if IS_ENABLED(CONFIG_IMA)$|#if IS_ENABLED(CONFIG_SECURITY_CAPFENCE)\n#define CAPFENCE_ENABLED 1,\n#else\n#define CAPFENCE_ENABLED\n#endif\n\n&|' "$src/include/linux/lsm_count.h"
	sed -i 's|^\t\tLANDLOCK_ENABLED\t\\$|&\n\t\tCAPFENCE_ENABLED\t\\|' "$src/include/linux/lsm_count.h"
}
# the LSM hook after a call seccomp skipped, where the module has its
# fexit program (lsm/builtin/seccomp-hook.patch); applied once
hook=$top/lsm/builtin/seccomp-hook.patch
patch -d "$src" -p1 -R -s -f --dry-run < "$hook" >/dev/null 2>&1 ||
	patch -d "$src" -p1 -N -s --no-backup-if-mismatch < "$hook" || {
		echo "kernel-builtin.sh: $hook does not apply to $src" >&2; exit 1; }
for f in security/Kconfig security/Makefile include/linux/lsm_count.h; do
	grep -qi capfence "$src/$f" || { echo "kernel-builtin.sh: could not add capfence to $f" >&2; exit 1; }
done

# security/capfence: the core and the built-in front end
d=$src/security/capfence
for f in "$top"/kernel/*.c "$top"/kernel/*.h; do
	case ${f##*/} in
	# the module's front end: entry, kfuncs, BPF links, the cred table
	# (hooklist.h stays: netlink.c sizes HOOKS_ATTACH by its hook count)
	main.c|kfunc.[ch]|hooks.c|cred_store.[ch]|file_store.[ch]|sock_store.[ch]) continue ;;
	esac
	put "$f" "$d/${f##*/}"
done
for f in lsm.c cred_store.h file_store.h sock_store.h seccomp_offsets.c Kconfig Makefile; do
	put "$top/lsm/builtin/$f" "$d/$f"
done
put "$top/include/uapi/linux/capfence.h" "$src/include/uapi/linux/capfence.h"

export CCACHE_DIR=${CCACHE_DIR:-$out/ccache}
mk() { make -C "$src" O="$obj" CC="ccache gcc" -j"$jobs" "$@"; }
mkdir -p "$obj"
cfg=$top/tools/build/kernel-builtin.config
if [ ! -f "$obj/.config" ] || [ "$cfg" -nt "$obj/.config" ] ||
   ! grep -q '^CONFIG_SECURITY_CAPFENCE=y' "$obj/.config"; then
	{ cat "$cfg"; echo CONFIG_SECURITY_CAPFENCE=y; } > "$out/allno.config"
	mk -s allnoconfig KCONFIG_ALLCONFIG="$out/allno.config"
	grep -v '^#' "$out/allno.config" | grep . | while read -r l; do
		grep -qx "$l" "$obj/.config" || { echo "kernel-builtin.sh: $l did not stick in .config" >&2; exit 1; }
	done
fi
t0=$(date +%s)
mk bzImage
t1=$(date +%s)
cp "$obj/arch/x86/boot/bzImage" "$out/bzImage"
echo "$(date -u +%FT%TZ) bzImage built in $((t1 - t0)) s, -j$jobs, $(ccache -s 2>/dev/null | grep -i 'hits' | head -1 | tr -s ' ')" >> "$out/build-times"
tail -n1 "$out/build-times"
