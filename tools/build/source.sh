#!/bin/sh
# Unpack the parts of Debian's linux-source-6.1 that capfence builds with:
# extract-vmlinux, checkpatch, resolve_btfids' sources and the kselftest
# harness. Usage: source.sh OUTDIR
set -eu
out=$1
tarball=${CAPFENCE_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
[ -f "$out/.stamp" ] && exit 0
[ -f "$tarball" ] || { echo "source.sh: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
echo "source: unpacking $(basename "$tarball")"
tar xf "$tarball" -C "$out" --strip-components=1 \
	linux-source-6.1/tools linux-source-6.1/scripts \
	linux-source-6.1/include/uapi linux-source-6.1/include/linux/btf_ids.h \
	linux-source-6.1/Makefile linux-source-6.1/kernel/bpf/disasm.c \
	linux-source-6.1/kernel/bpf/disasm.h
touch "$out/.stamp"
