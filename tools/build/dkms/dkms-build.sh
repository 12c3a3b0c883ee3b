#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# DKMS build command of capfence.ko:  dkms-build.sh KERNELVER [KERNEL_SOURCE_DIR]
# Run in the module's source directory (DKMS's build directory).
#
# capfence.ko must carry module BTF: its kfuncs are invisible to the BPF-LSM
# programs without it, and Kbuild only prints "Skipping BTF generation" and
# succeeds when it cannot make it. Kbuild makes module BTF with pahole
# (package dwarves) when the objtree holds
#   vmlinux                                   the kernel ELF (or raw BTF)
#   tools/bpf/resolve_btfids/resolve_btfids   a host binary
# and Debian's linux-headers packages ship neither. This script finds or
# makes both, in this order, then builds through a private shadow of the
# headers directory (symlinks, plus the two files), never writing to it:
#   vmlinux:  KERNEL_SOURCE_DIR/vmlinux; /usr/lib/debug/boot/vmlinux-KVER
#             (linux-image-KVER-dbg); extracted from /boot/vmlinuz-KVER with
#             linux-source's scripts/extract-vmlinux; for the running kernel
#             only, /sys/kernel/btf/vmlinux (raw BTF is enough for pahole
#             and resolve_btfids).
#   resolve_btfids: CAPFENCE_RESOLVE_BTFIDS; KERNEL_SOURCE_DIR/tools/...;
#             built from /usr/src/linux-source-*.tar.xz (linux-source-6.1).
# Packages: dwarves, linux-headers-KVER, linux-source-6.1 (unless both files
# are already present), libelf-dev, zlib1g-dev, xz-utils (the source
# tarball), and the decompressor of the kernel image (Debian 12's 6.1
# kernels are LZ4: lz4).
set -eu
kver=${1:?usage: dkms-build.sh KERNELVER [KERNEL_SOURCE_DIR]}
kdir=${2:-/lib/modules/$kver/build}
boot=${CAPFENCE_BOOT_DIR:-/boot}
here=$(pwd)
work=$here/.btf
say() { echo "capfence-dkms: $*"; }
die() { echo "capfence-dkms: error: $*" >&2; exit 1; }

[ -f "$kdir/Makefile" ] || die "no kernel headers at $kdir (apt-get install linux-headers-$kver)"
command -v pahole >/dev/null || die "pahole is missing (apt-get install dwarves)"
rm -rf "$work"
mkdir -p "$work"

has_btf() { readelf -S "$1" 2>/dev/null | grep -q '\.BTF ' || head -c 2 "$1" | od -An -tx1 | grep -q '9f eb'; }

srctar=""
for t in /usr/src/linux-source-*.tar.xz; do [ -f "$t" ] && srctar=$t; done
unpack_source() {
	[ -d "$work/src" ] && return 0
	[ -n "$srctar" ] || die "need $1 from the kernel sources: apt-get install linux-source-6.1"
	mkdir -p "$work/src"
	tar xf "$srctar" -C "$work/src" --strip-components=1 --wildcards \
		'*/tools' '*/scripts' '*/include/uapi' '*/include/linux/btf_ids.h' \
		'*/Makefile' '*/kernel/bpf/disasm.c' '*/kernel/bpf/disasm.h' 2>/dev/null ||
		die "cannot unpack $srctar"
}

vmlinux=""
for c in "$kdir/vmlinux" "/usr/lib/debug/boot/vmlinux-$kver" "/usr/lib/debug/lib/modules/$kver/vmlinux"; do
	if [ -f "$c" ] && has_btf "$c"; then vmlinux=$c; break; fi
done
if [ -z "$vmlinux" ] && [ -f "$boot/vmlinuz-$kver" ]; then
	x=""
	[ -x "$kdir/scripts/extract-vmlinux" ] && x=$kdir/scripts/extract-vmlinux
	if [ -z "$x" ] && [ -n "$srctar" ]; then
		unpack_source extract-vmlinux
		x=$work/src/scripts/extract-vmlinux
	fi
	if [ -n "$x" ]; then
		say "extracting vmlinux from $boot/vmlinuz-$kver"
		sh "$x" "$boot/vmlinuz-$kver" > "$work/vmlinux" 2>/dev/null || true
		has_btf "$work/vmlinux" && vmlinux=$work/vmlinux
		# extract-vmlinux tries the decompressors it finds: name a missing one
		if [ -z "$vmlinux" ] && [ -f "$boot/config-$kver" ]; then
			c=$(sed -n 's/^CONFIG_KERNEL_\(LZ4\|ZSTD\|LZO\)=y$/\1/p' "$boot/config-$kver")
			case $c in
			LZ4) t=lz4 p=lz4 ;; ZSTD) t=unzstd p=zstd ;; LZO) t=lzop p=lzop ;; *) t="" ;;
			esac
			if [ -n "$t" ] && ! command -v "$t" >/dev/null; then
				die "$boot/vmlinuz-$kver is $c-compressed and $t is missing (apt-get install $p)"
			fi
		fi
	fi
fi
if [ -z "$vmlinux" ] && [ "$kver" = "$(uname -r)" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	say "using the running kernel's /sys/kernel/btf/vmlinux"
	cp /sys/kernel/btf/vmlinux "$work/vmlinux"
	vmlinux=$work/vmlinux
fi
[ -n "$vmlinux" ] || die "no vmlinux with BTF for $kver: install linux-source-6.1 (to extract it from $boot/vmlinuz-$kver) or linux-image-$kver-dbg"

rbtf=${CAPFENCE_RESOLVE_BTFIDS:-}
[ -z "$rbtf" ] && [ -x "$kdir/tools/bpf/resolve_btfids/resolve_btfids" ] &&
	rbtf=$kdir/tools/bpf/resolve_btfids/resolve_btfids
if [ -z "$rbtf" ]; then
	unpack_source resolve_btfids
	say "building resolve_btfids from $(basename "$srctar")"
	mkdir -p "$work/rbtf"
	# the kernel's own compiler (gcc-12 on Debian 12): DKMS needs no "gcc"
	hcc=gcc
	command -v gcc >/dev/null ||
		hcc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$kdir/.config" 2>/dev/null)
	command -v "$hcc" >/dev/null 2>&1 || die "no C compiler for resolve_btfids (apt-get install gcc)"
	make -s -C "$work/src/tools/bpf/resolve_btfids" OUTPUT="$work/rbtf/" CC="$hcc" HOSTCC="$hcc" >/dev/null ||
		die "building resolve_btfids failed (apt-get install libelf-dev zlib1g-dev)"
	rbtf=$work/rbtf/resolve_btfids
fi

# the shadow objtree: every entry of the headers directory, plus vmlinux
shadow=$work/objtree
mkdir -p "$shadow"
for e in "$kdir"/* "$kdir"/.[!.]*; do
	[ -e "$e" ] || continue
	[ "$(basename "$e")" = vmlinux ] && continue
	ln -s "$e" "$shadow/$(basename "$e")"
done
ln -s "$vmlinux" "$shadow/vmlinux"

rm -f "$here/capfence.ko"
say "building capfence.ko for $kver"
make -C "$shadow" M="$here" RESOLVE_BTFIDS="$rbtf" modules 2>&1 | tee "$work/build.log"
[ -f "$here/capfence.ko" ] || die "the build made no capfence.ko"
if grep -q 'Skipping BTF generation' "$work/build.log" ||
   ! readelf -S "$here/capfence.ko" | grep -q '\.BTF '; then
	rm -f "$here/capfence.ko"
	die "capfence.ko has no module BTF; its kfuncs would be unusable"
fi
say "capfence.ko for $kver carries module BTF"
