#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest overlay with the real programs of the compatibility matrix
# (selftests/matrix/matrix-test.sh), taken from Debian 12's packages:
#   matrix-root.sh OUT
# OUT gets curl, git (git, git-daemon, upload-pack, templates), ssh,
# ssh-keygen, sshd, bwrap and qemu-system-x86_64 (with the TCG accelerator
# module only: -machine none starts no firmware, no display, no device),
# each with the shared libraries it loads. python3 comes from the Python
# overlay (tools/build/pyroot.sh); selftests/vm/run takes both.
# The packages are downloaded from the host's apt sources and unpacked,
# never installed; so are the libraries they need that the host lacks.
# The libraries the host has (Debian 12 as well) are copied from it.
set -euo pipefail
out=$1
PKGS="curl git openssh-client openssh-server bubblewrap qemu-system-x86 qemu-system-common"
# libraries built from the same source as a program: the registry's, never
# an older one of the host's
PKGS="$PKGS libcurl4"
tmp=$out.tmp
stage=$tmp/stage
rm -rf "$tmp"
mkdir -p "$tmp/debs" "$stage" "$tmp/root"

# the libraries among the packages' dependencies that this host lacks
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
libs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances $PKGS 2>/dev/null |
	sed -n 's/^\(lib[a-z0-9.+-]*\|zlib1g\)$/\1/p' | sort -u)
want=$PKGS
for p in $libs; do installed "$p" || want="$want $p"; done

fetch() { (cd "$tmp/debs" && apt-get download -q $want >/dev/null 2>&1); }
fetch || { apt-get update -q >/dev/null 2>&1 || true; fetch; } ||
	{ echo "matrix-root.sh: apt-get download failed for: $want" >&2; exit 1; }
for d in "$tmp"/debs/*.deb; do dpkg-deb -x "$d" "$stage"; done

r=$tmp/root
libpath=$stage/lib/x86_64-linux-gnu:$stage/usr/lib/x86_64-linux-gnu
# deps FILE: the shared libraries FILE loads, at their guest paths; the
# unpacked packages' first, else the host's
deps() {
	local l g out
	out=$(LD_LIBRARY_PATH=$libpath ldd "$1" 2>&1) ||
		{ echo "matrix-root.sh: ldd $1: $out" >&2; exit 1; }
	if grep -q 'not found' <<<"$out"; then
		echo "matrix-root.sh: $1 needs libraries neither the packages nor this host have:" \
			"$(grep 'not found' <<<"$out" | awk '{print $1}' | xargs)" >&2
		exit 1
	fi
	for l in $(awk '/=> \//{print $3} /^\t\/lib/{print $1}' <<<"$out"); do
		g=${l#"$stage"}
		[ -e "$r$g" ] && continue
		mkdir -p "$r$(dirname "$g")"
		cp -L "$l" "$r$g"
	done
}
# prog PATH [GUESTPATH]: a program of the unpacked packages and its libraries
prog() {
	local src=$stage$1 dst=${2:-$1}
	[ -f "$src" ] || { echo "matrix-root.sh: $1 is not in $PKGS" >&2; exit 1; }
	mkdir -p "$r$(dirname "$dst")"
	cp -L "$src" "$r$dst"
	deps "$src"
}

prog /usr/bin/curl
prog /usr/bin/git
prog /usr/lib/git-core/git-daemon
mkdir -p "$r/usr/lib/git-core"
for b in git git-upload-pack git-receive-pack git-upload-archive; do
	ln -sf ../../bin/git "$r/usr/lib/git-core/$b"
done
mkdir -p "$r/usr/share/git-core"
cp -a "$stage/usr/share/git-core/templates" "$r/usr/share/git-core/"
prog /usr/bin/ssh
prog /usr/bin/ssh-keygen
prog /usr/sbin/sshd
prog /usr/bin/bwrap
prog /usr/bin/qemu-system-x86_64
prog /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so
# what each program is, for the test's log
mkdir -p "$r/usr/share/capfence/matrix"
for p in $PKGS; do
	dpkg-deb -W --showformat='${Package} ${Version}\n' "$tmp"/debs/"$p"_*.deb
done > "$r/usr/share/capfence/matrix/versions"
rm -rf "$out"
mv "$r" "$out"
rm -rf "$tmp"
