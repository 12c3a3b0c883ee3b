#!/bin/sh
# Prepare Debian's stock cloud kernel for building and booting capfence,
# without installing anything into /boot:
#   kernel.sh OUTDIR   -> OUTDIR/{vmlinuz,vmlinux,headers,release,config}
# CAPFENCE_KABI (e.g. 6.1.0-56-cloud-amd64) overrides the discovered ABI.
# Module BTF needs a vmlinux ELF in the headers directory and a
# resolve_btfids binary; Debian ships neither, so both are made here.
set -eu
out=$1
src=$2		# partial linux-source tree (tools/, scripts/)
mkdir -p "$out"
out=$(cd "$out" && pwd)

abi=${CAPFENCE_KABI:-}
if [ -z "$abi" ]; then
	abi=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
	      awk '/Depends: linux-image-[0-9]/ { sub("linux-image-", "", $2); print $2; exit }')
	if [ -z "$abi" ]; then
		apt-get update -q >/dev/null 2>&1 || true
		abi=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
		      awk '/Depends: linux-image-[0-9]/ { sub("linux-image-", "", $2); print $2; exit }')
	fi
fi
[ -n "$abi" ] || { echo "kernel.sh: cannot discover the cloud kernel ABI; set CAPFENCE_KABI" >&2; exit 1; }
if [ -f "$out/release" ] && [ "$(cat "$out/release")" = "$abi" ] &&
   [ -x "$out/headers/tools/bpf/resolve_btfids/resolve_btfids" ]; then
	exit 0
fi
ver=${abi%-cloud-amd64}
echo "kernel: preparing $abi"
rm -rf "$out/debs" "$out/root"
mkdir -p "$out/debs" "$out/root"
(cd "$out/debs" && apt-get download -q "linux-image-$abi" "linux-headers-$abi" \
	"linux-headers-$ver-common" linux-kbuild-6.1 >/dev/null 2>&1) ||
	{ echo "kernel.sh: apt-get download of the $abi packages failed" >&2; exit 1; }
for d in "$out"/debs/*.deb; do dpkg-deb -x "$d" "$out/root"; done
hdr="$out/root/usr/src/linux-headers-$abi"
echo "include $out/root/usr/src/linux-headers-$ver-common/Makefile" > "$hdr/Makefile"
"$src/scripts/extract-vmlinux" "$out/root/boot/vmlinuz-$abi" > "$hdr/vmlinux"
readelf -S "$hdr/vmlinux" | grep -q '\.BTF ' ||
	{ echo "kernel.sh: extracted vmlinux carries no .BTF" >&2; exit 1; }
mkdir -p "$out/rbtf"
make -s -C "$src/tools/bpf/resolve_btfids" OUTPUT="$out/rbtf/" >/dev/null
# headers/tools is a symlink into the unpacked kbuild package
mkdir -p "$hdr/tools/bpf/resolve_btfids"
cp "$out/rbtf/resolve_btfids" "$hdr/tools/bpf/resolve_btfids/"
ln -sfn "$hdr" "$out/headers"
ln -sf "root/boot/vmlinuz-$abi" "$out/vmlinuz"
ln -sf "headers/vmlinux" "$out/vmlinux"
echo "$abi" > "$out/release"
