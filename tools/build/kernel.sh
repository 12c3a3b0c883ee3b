#!/bin/sh
# Prepare one of Debian's stock cloud kernels for building and booting
# capfence, without installing anything into /boot:
#   kernel.sh OUTDIR SRC SERIES  -> OUTDIR/{vmlinuz,vmlinux,headers,release,modules}
# SERIES is 6.1 (Debian 12's stock kernel) or 6.12 (Debian 13's). Its
# packages come from the Debian registry this machine's apt sources name;
# Debian 13's through private apt lists in build/apt-trixie (the host's apt
# configuration is untouched). CAPFENCE_KABI_6_1 (or CAPFENCE_KABI, e.g.
# 6.1.0-56-cloud-amd64) and CAPFENCE_KABI_6_12 (e.g.
# 6.12.117+deb13-cloud-amd64) override the discovered ABIs.
# Module BTF needs a vmlinux with BTF in the headers directory and a
# resolve_btfids binary: 6.12's headers and kbuild packages ship both; for
# 6.1 both are made here from SRC (a partial linux-source-6.1 tree).
set -eu
out=$1
src=$2
series=$3
mkdir -p "$out"
out=$(cd "$out" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CAPFENCE_BUILD:-$top/build}

case $series in
6.1)
	abi=${CAPFENCE_KABI_6_1:-${CAPFENCE_KABI:-}}
	set --
	;;
6.12)
	abi=${CAPFENCE_KABI_6_12:-}
	# Debian 13's lists, private to this build tree
	. "$top/tools/build/trixie-apt.sh"
	[ -n "$abi" ] || [ -n "$(ls "$apt/lists" 2>/dev/null | grep -v partial)" ] ||
		apt-get "$@" update -q >/dev/null 2>&1 || true
	;;
*)
	echo "kernel.sh: unknown kernel series '$series' (6.1 or 6.12)" >&2
	exit 1
	;;
esac

discover() {
	apt-cache "$@" depends linux-image-cloud-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { sub("linux-image-", "", $2); print $2; exit }'
}
if [ -z "$abi" ]; then
	abi=$(discover "$@")
	if [ -z "$abi" ]; then
		apt-get "$@" update -q >/dev/null 2>&1 || true
		abi=$(discover "$@")
	fi
fi
[ -n "$abi" ] || { echo "kernel.sh: cannot discover the $series cloud kernel ABI; set CAPFENCE_KABI_${series%%.*}_${series#*.}" >&2; exit 1; }
case $abi in
$series.*) ;;
*) echo "kernel.sh: ABI $abi is not a $series kernel" >&2; exit 1 ;;
esac
if [ -f "$out/release" ] && [ "$(cat "$out/release")" = "$abi" ] &&
   [ -x "$out/headers/tools/bpf/resolve_btfids/resolve_btfids" ]; then
	exit 0
fi
ver=${abi%-cloud-amd64}
case $series in
6.1) kbuild=linux-kbuild-6.1 ;;
*) kbuild=linux-kbuild-$ver ;;
esac
echo "kernel: preparing $abi"
rm -rf "$out/debs" "$out/root" "$out/release"
mkdir -p "$out/debs" "$out/root"
if ! (cd "$out/debs" && apt-get "$@" download -q "linux-image-$abi" "linux-headers-$abi" \
	"linux-headers-$ver-common" "$kbuild" >/dev/null 2>&1); then
	# the lists may name packages the registry no longer has: refresh once
	apt-get "$@" update -q >/dev/null 2>&1 || true
	(cd "$out/debs" && apt-get "$@" download -q "linux-image-$abi" "linux-headers-$abi" \
		"linux-headers-$ver-common" "$kbuild" >/dev/null 2>&1) ||
		{ echo "kernel.sh: apt-get download of the $abi packages failed" >&2; exit 1; }
fi
for d in "$out"/debs/*.deb; do dpkg-deb -x "$d" "$out/root"; done
hdr="$out/root/usr/src/linux-headers-$abi"
echo "include $out/root/usr/src/linux-headers-$ver-common/Makefile" > "$hdr/Makefile"
case $series in
6.1)
	"$src/scripts/extract-vmlinux" "$out/root/boot/vmlinuz-$abi" > "$hdr/vmlinux"
	mkdir -p "$out/rbtf"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j"${JOBS:-$(nproc)}" -C "$src/tools/bpf/resolve_btfids" OUTPUT="$out/rbtf/" >/dev/null
	# headers/tools is a symlink into the unpacked kbuild package
	mkdir -p "$hdr/tools/bpf/resolve_btfids"
	cp "$out/rbtf/resolve_btfids" "$hdr/tools/bpf/resolve_btfids/"
	;;
esac
# 6.12: the headers ship a BTF-only vmlinux, linux-kbuild resolve_btfids
readelf -S "$hdr/vmlinux" | grep -q '\.BTF ' ||
	{ echo "kernel.sh: $hdr/vmlinux carries no .BTF" >&2; exit 1; }
[ -x "$hdr/tools/bpf/resolve_btfids/resolve_btfids" ] ||
	{ echo "kernel.sh: no resolve_btfids for $abi" >&2; exit 1; }
ln -sfn "$hdr" "$out/headers"
ln -sf "root/boot/vmlinuz-$abi" "$out/vmlinuz"
ln -sf "headers/vmlinux" "$out/vmlinux"
# stock modules: /lib/modules on 6.1, /usr/lib/modules (merged /usr) on 6.12
mods=$(ls -d "$out"/root/lib/modules/"$abi" "$out"/root/usr/lib/modules/"$abi" 2>/dev/null | head -n1)
ln -sfn "${mods#"$out"/}" "$out/modules"
echo "$abi" > "$out/release"
