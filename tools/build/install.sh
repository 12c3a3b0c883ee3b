#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make install / make uninstall (tools/build/install.mk):
#   install.sh install   DESTDIR PREFIX KO CLI
#   install.sh uninstall DESTDIR PREFIX
# install records every file it writes and every directory it creates in
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
	# newest first: files before the directories that hold them
	tac "$m" | while read -r kind path; do
		case $kind in
		f) rm -f "$destdir$path" && say "RM    $path" ;;
		d) rmdir "$destdir$path" 2>/dev/null && say "RMDIR $path" || true ;;
		enable) [ -z "$destdir" ] && systemctl disable --quiet "$path" 2>/dev/null || true ;;
		depmod) [ -z "$destdir" ] && depmod -a "$path" 2>/dev/null || true ;;
		esac
	done
}

if [ "$action" = uninstall ]; then
	uninstall
	exit 0
fi

ko=$4
cli=$5
[ -f "$ko" ] || die "$ko is missing: build the module first (make module)"
[ -x "$cli" ] || die "$cli is missing: build the CLI first (make cli)"
release=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
[ -n "$release" ] || die "cannot read the kernel release capfence.ko was built for (modinfo -F vermagic)"
version=$(sed -n 's/^#define CAPFENCE_VERSION "\(.*\)"/\1/p' "$top/kernel/capfence.h")

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

subst="s|@SBINDIR@|$sbindir|g; s|@VERSION@|$version|g"
put 0644 "$ko" "/lib/modules/$release/updates/capfence.ko"
put 0755 "$cli" "$sbindir/capfence"
put 0644 "$top/docs/capfence.8" "$prefix/share/man/man8/capfence.8"
put 0644 "$top/tools/capfence/capfence.bash-completion" \
	"$prefix/share/bash-completion/completions/capfence"
put 0644 "$top/tools/build/capfence-modprobe.conf.in" /etc/modprobe.d/capfence.conf "$subst"
put 0644 "$top/tools/build/capfence.service.in" /lib/systemd/system/capfence.service "$subst"
if [ -z "$destdir" ]; then
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
echo "capfence $version installed (module for $release); make uninstall DESTDIR=$destdir PREFIX=$prefix removes it"
