#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian build root for kernels whose headers this machine cannot build
# against, and a way to run a command in it:
#
#   buildroot.sh make SUITE ROOT PKG...   make ROOT (once; cached)
#   buildroot.sh run ROOT DIR CMD [ARG]...  run CMD in ROOT, in DIR
#
# Debian 13's kernel headers call gcc-14, pahole >= 1.26 options and
# objtool/modpost/resolve_btfids built against glibc 2.38: none of them run
# on Debian 12. So capfence.ko for that kernel is built in a minimal
# Debian 13 root (debootstrap --variant=minbase, from the Debian mirror this
# machine's apt sources name, or CAPFENCE_MIRROR) under build/; nothing is
# installed into the host's /. ROOT/.key records the suite, mirror and
# packages it was made with; a different key remakes it.
#
# `run` bind-mounts this source tree at the same path inside ROOT, so the
# paths Kbuild records are the host's, and runs CMD as root in a mount
# namespace of its own: every mount disappears with it on any exit.
# Both need root (debootstrap, chroot, mounts).
set -euo pipefail
die() { echo "buildroot: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"
top=$(cd "$(dirname "$0")/../.." && pwd)

mode=${1:-}
case $mode in
make)
	[ $# -ge 3 ] || die "usage: buildroot.sh make SUITE ROOT PKG..."
	suite=$2 root=$3
	shift 3
	pkgs=$(printf '%s\n' "$@" | sort -u | paste -sd,)
	mirror=${CAPFENCE_MIRROR:-$(apt-get indextargets --no-release-info --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk '$2 !~ /-security$/ { print $1; exit }')}
	mirror=${mirror%/}
	[ -n "$mirror" ] || die "no Debian mirror in the apt sources; set CAPFENCE_MIRROR=http://MIRROR/debian"
	key="$suite minbase $pkgs $mirror"
	[ -f "$root/.key" ] && [ "$(cat "$root/.key")" = "$key" ] && exit 0
	if ! command -v debootstrap >/dev/null; then
		echo "buildroot: installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null ||
			die "cannot install debootstrap (apt-get install debootstrap)"
	fi
	echo "buildroot: making a minimal $suite root in $root from $mirror"
	t0=$(date +%s)
	stage=$root.tmp
	rm -rf "$stage" "$root"
	mkdir -p "$(dirname "$root")"
	debootstrap --variant=minbase --include="$pkgs" "$suite" "$stage" "$mirror" \
		> "$root.log" 2>&1 || { tail -5 "$root.log" >&2; die "debootstrap failed (log $root.log)"; }
	chroot "$stage" apt-get clean
	echo "$key" > "$stage/.key"
	mv "$stage" "$root"
	echo "buildroot: $suite root ready in $(( $(date +%s) - t0 )) s ($(du -sm "$root" | cut -f1) MB)"
	;;
run)
	[ $# -ge 4 ] || die "usage: buildroot.sh run ROOT DIR CMD [ARG]..."
	root=$(cd "$2" && pwd) dir=$3
	shift 3
	[ -f "$root/.key" ] || die "$root is not a finished build root"
	# In a chroot whose / is not a mount point (make check-fresh's, which
	# itself runs in a private mount namespace) unshare cannot make the
	# mounts private; they then keep the enclosing namespace's propagation.
	prop=private
	mountpoint -q / || prop=unchanged
	exec unshare --mount --propagation "$prop" -- /bin/bash -c '
		set -e
		root=$1 top=$2 dir=$3
		shift 3
		mkdir -p "$root$top"
		mount --bind "$top" "$root$top"
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		exec chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$dir" "$@"
	' buildroot "$root" "$top" "$dir" "$@"
	;;
*)
	die "usage: buildroot.sh make SUITE ROOT PKG... | run ROOT DIR CMD [ARG]..."
	;;
esac
