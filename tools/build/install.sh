#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make install / make uninstall (tools/build/install.mk):
#   install.sh install   DESTDIR PREFIX KO CLI LIBOUT [AGENT]
#   install.sh uninstall DESTDIR PREFIX
# LIBOUT is the build's lib directory (libcapfence.so.N.N.N, .a). LIBDIR
# (default PREFIX/lib) and PYTHONDIR (default: the dist-packages directory
# Debian's python3 searches under PREFIX) may be set in the environment.
# install records every file (f), symbolic link (l) it writes and every
# directory it creates (d) in
# PREFIX/share/capfence/install-manifest; uninstall removes exactly those
# (files, then the directories if empty), so run it with the same DESTDIR
# and PREFIX. Installing over an earlier install uninstalls that one first.
set -eu
action=$1
destdir=$2
prefix=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
sbindir=$prefix/sbin
manifest=$prefix/share/capfence/install-manifest
say() { echo "  $*"; }
die() { echo "capfence: $*" >&2; exit 1; }

uninstall() {
	m=$destdir$manifest
	[ -f "$m" ] || { echo "capfence: nothing to uninstall ($m not found)"; return 0; }
	ldc=$(grep -c '^ldconfig' "$m" || true)
	# newest first: files before the directories that hold them
	tac "$m" | while read -r kind path; do
		case $kind in
		f|l) rm -f "$destdir$path" && say "RM    $path" ;;
		d) rmdir "$destdir$path" 2>/dev/null && say "RMDIR $path" || true ;;
		enable) [ -z "$destdir" ] && systemctl disable --quiet "$path" 2>/dev/null || true ;;
		depmod) [ -z "$destdir" ] && depmod -a "$path" 2>/dev/null || true ;;
		pycache) rm -rf "$destdir$path/__pycache__" ;;
		esac
	done
	# after the libraries are gone
	[ -z "$destdir" ] && [ "$ldc" -gt 0 ] && ldconfig 2>/dev/null || true
}

if [ "$action" = uninstall ]; then
	uninstall
	exit 0
fi

ko=$4
cli=$5
libout=$6
agent=${7:-}
[ -f "$ko" ] || die "$ko is missing: build the module first (make module)"
[ -x "$cli" ] || die "$cli is missing: build the CLI first (make cli)"
[ -z "$agent" ] || [ -x "$agent" ] || die "$agent is missing: build the agent first (make agent)"
# the version libcapfence.so.1 names: an older build's file may lie beside it
so=$libout/$(readlink "$libout/libcapfence.so.1" 2>/dev/null)
so2=$libout/$(readlink "$libout/libcapfence.so.2" 2>/dev/null)
[ -f "$so" ] && [ -f "$so2" ] && [ -f "$libout/libcapfence.a" ] ||
	die "libcapfence is missing in $libout: build it first (make lib)"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
libdir=${LIBDIR:-$prefix/lib}
includedir=$prefix/include
if [ -z "${PYTHONDIR:-}" ]; then
	# Debian's python3 searches /usr/lib/python3/dist-packages and
	# /usr/local/lib/python3.X/dist-packages
	if [ "$prefix" = /usr ]; then
		PYTHONDIR=/usr/lib/python3/dist-packages
	else
		pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)
		PYTHONDIR=$prefix/lib/python$pyver/dist-packages
	fi
fi
release=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
[ -n "$release" ] || die "cannot read the kernel release capfence.ko was built for (modinfo -F vermagic)"
version=$(sed -n 's/^#define CAPFENCE_VERSION "\(.*\)"/\1/p' "$top/kernel/version.h")

[ -f "$destdir$manifest" ] && uninstall
[ -z "$destdir" ] || mkdir -p "$destdir"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

mkdirs() {	# create $1 and its missing parents, recording each
	d=$1 missing=""
	while [ "$d" != / ] && [ ! -d "$destdir$d" ]; do
		missing="$d $missing"
		d=$(dirname "$d")
	done
	for d in $missing; do
		mkdir "$destdir$d"
		echo "d $d" >> "$log"
	done
}
put() {		# put MODE SRC DST [sed-subst]
	mkdirs "$(dirname "$3")"
	if [ $# -ge 4 ]; then
		sed "$4" "$2" > "$destdir$3"
		chmod "$1" "$destdir$3"
	else
		install -m "$1" "$2" "$destdir$3"
	fi
	echo "f $3" >> "$log"
	say "INSTALL $3"
}
link() {	# link TARGET NAME
	mkdirs "$(dirname "$2")"
	ln -sfn "$1" "$destdir$2"
	echo "l $2" >> "$log"
	say "LINK    $2 -> $1"
}

subst="s|@SBINDIR@|$sbindir|g; s|@VERSION@|$version|g"
put 0644 "$ko" "/lib/modules/$release/updates/capfence.ko"
put 0755 "$cli" "$sbindir/capfence"
put 0644 "$top/docs/capfence.8" "$prefix/share/man/man8/capfence.8"
# the netlink spec, for the kernel's ynl (tools/net/ynl/cli.py --spec)
put 0644 "$top/docs/netlink/capfence.yaml" "$prefix/share/capfence/netlink/capfence.yaml"
put 0644 "$top/tools/capfence/capfence.bash-completion" \
	"$prefix/share/bash-completion/completions/capfence"
put 0644 "$top/tools/build/capfence-modprobe.conf.in" /etc/modprobe.d/capfence.conf "$subst"
put 0644 "$top/tools/build/capfence.service.in" /lib/systemd/system/capfence.service "$subst"
# the fleet agent and its unit (not enabled: it needs the endpoints)
if [ -n "$agent" ]; then
	put 0755 "$agent" "$sbindir/capfenced"
	put 0644 "$top/tools/build/capfenced.service.in" /lib/systemd/system/capfenced.service "$subst"
fi
# libcapfence: shared and static library, headers, pkg-config, man page
put 0755 "$so" "$libdir/$(basename "$so")"
link "$(basename "$so")" "$libdir/$soname"
link "$soname" "$libdir/libcapfence.so"
put 0644 "$libout/libcapfence.a" "$libdir/libcapfence.a"
# the 2 interface beside it (no development link: pkg-config capfence-2)
put 0755 "$so2" "$libdir/$(basename "$so2")"
link "$(basename "$so2")" "$libdir/libcapfence.so.2"
put 0644 "$top/include/capfence/capfence.h" "$includedir/capfence/capfence.h"
put 0644 "$top/include/uapi/linux/capfence.h" "$includedir/linux/capfence.h"
libversion=$(sed -n 's/^#define CAPFENCE_LIB_VERSION_STRING[[:space:]]*"\(.*\)"/\1/p' "$top/include/capfence/capfence.h")
put 0644 "$top/tools/lib/capfence.pc.in" "$libdir/pkgconfig/capfence.pc" \
	"s|@PREFIX@|$prefix|; s|@LIBDIR@|$libdir|; s|@VERSION@|$libversion|; s|@REQUIRES@|libsodium libmnl|"
put 0644 "$libout/capfence-2.pc" "$libdir/pkgconfig/capfence-2.pc" \
	"s|^prefix=.*|prefix=$prefix|; s|^libdir=.*|libdir=$libdir|"
put 0644 "$top/docs/libcapfence.3" "$prefix/share/man/man3/libcapfence.3"
# the Python package (pure Python: it loads $soname)
for f in "$top"/python/capfence/*.py "$top"/python/capfence/py.typed; do
	put 0644 "$f" "$PYTHONDIR/capfence/$(basename "$f")"
done
# the bytecode python3 writes there on import goes with the package
echo "pycache $PYTHONDIR/capfence" >> "$log"
if [ -z "$destdir" ]; then
	if command -v ldconfig >/dev/null; then
		ldconfig && echo "ldconfig -" >> "$log"
	fi
	if command -v depmod >/dev/null; then
		depmod -a "$release" && echo "depmod $release" >> "$log"
	fi
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
		systemctl daemon-reload
		systemctl enable --quiet capfence.service && echo "enable capfence.service" >> "$log" &&
			say "ENABLE capfence.service (attaches at boot)"
	fi
fi
mkdirs "$(dirname "$manifest")"
echo "f $manifest" >> "$log"
cp "$log" "$destdir$manifest"
chmod 0644 "$destdir$manifest"
say "INSTALL $manifest"
echo "capfence $version and libcapfence $libversion installed (module for $release); make uninstall DESTDIR=$destdir PREFIX=$prefix removes it"
