#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make install / make uninstall / make dkms-source into a scratch DESTDIR,
# on the host (no VM, nothing outside the scratch directory is touched):
# install lays out the module under /lib/modules/<vermagic release>/updates,
# the CLI, capfence(8), the bash completion, the modprobe.d entry and the
# systemd unit, with PREFIX honoured; uninstall removes exactly that and
# leaves nothing. Needs capfence.ko and the CLI built (make); the module
# is the one built for CAPFENCE_KERNEL (6.1 or 6.12, default 6.1).
# Prints kselftest-style lines and a Totals line.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
K=${CAPFENCE_KERNEL:-6.1}
# 6.12's DKMS build runs in the Debian 13 build root, which sees this tree only
if [ "$K" = 6.12 ]; then
	mkdir -p build/tmp
	D=$(mktemp -d "$top/build/tmp/cf-install.XXXXXX")
else
	D=$(mktemp -d "${TMPDIR:-/tmp}/cf-install.XXXXXX")
fi
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "#   $2"; }
t() { name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }
finish() {
	rm -rf "$D"
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
	[ $fail -eq 0 ]
	exit $?
}
echo "TAP version 13"
KO=build/kernel-$K/module/capfence.ko
echo "# kernel $K: $KO"
[ -f "$KO" ] || { nok "$KO is built (make)"; finish; }
rel=$(modinfo -F vermagic "$KO" | cut -d' ' -f1)
mk() { make -s --no-print-directory INSTALL_KERNEL="$K" "$@" > "$D/make.out" 2>&1 || { sed 's/^/#   /' "$D/make.out"; return 1; }; }

# --- default PREFIX (/usr/local)
X=$D/x
t "make install DESTDIR=$X succeeds" mk install DESTDIR="$X"
t "module in /lib/modules/$rel/updates/capfence.ko" cmp -s "$KO" "$X/lib/modules/$rel/updates/capfence.ko"
t "module vermagic release is $rel" [ "$(modinfo -F vermagic "$X/lib/modules/$rel/updates/capfence.ko" | cut -d' ' -f1)" = "$rel" ]
t "CLI /usr/local/sbin/capfence, executable" [ -x "$X/usr/local/sbin/capfence" ]
t "installed CLI runs: --version" sh -c "'$X/usr/local/sbin/capfence' --version | grep -q '^capfence '"
t "CLI embeds the BPF objects (no separate .bpf.o installed)" \
	sh -c "! find '$X' -name '*.bpf.o' | grep -q . && grep -qa capfence_bpf '$X/usr/local/sbin/capfence'"
t "man page /usr/local/share/man/man8/capfence.8" cmp -s docs/capfence.8 "$X/usr/local/share/man/man8/capfence.8"
t "man page renders" sh -c "! command -v man >/dev/null || MANWIDTH=80 man -l '$X/usr/local/share/man/man8/capfence.8' 2>/dev/null | grep -q capfence"
t "netlink spec /usr/local/share/capfence/netlink/capfence.yaml (for the kernel's ynl)" \
	cmp -s docs/netlink/capfence.yaml "$X/usr/local/share/capfence/netlink/capfence.yaml"
t "bash completion /usr/local/share/bash-completion/completions/capfence" \
	cmp -s tools/capfence/capfence.bash-completion "$X/usr/local/share/bash-completion/completions/capfence"
t "bash completion loads and completes 'capfence ep'" bash -c "
	. '$X/usr/local/share/bash-completion/completions/capfence' 2>/dev/null
	f=\$(complete -p capfence 2>/dev/null | sed -n 's/.*-F \([^ ]*\).*/\1/p')
	[ -n \"\$f\" ] || exit 1
	COMP_WORDS=(capfence ep); COMP_CWORD=1; COMP_LINE='capfence ep'; COMP_POINT=11
	\$f capfence ep capfence 2>/dev/null
	printf '%s\n' \"\${COMPREPLY[@]}\" | grep -qx epoch"
M=$X/etc/modprobe.d/capfence.conf
t "modprobe entry /etc/modprobe.d/capfence.conf" [ -f "$M" ]
t "modprobe entry: modprobe capfence also attaches the hooks" \
	grep -qx 'install capfence /sbin/modprobe --ignore-install capfence $CMDLINE_OPTS && /usr/local/sbin/capfence attach' "$M"
t "modprobe entry: modprobe -r capfence detaches first" \
	grep -qx 'remove capfence /usr/local/sbin/capfence detach && /sbin/modprobe -r --ignore-remove capfence' "$M"
t "modprobe accepts the entry (modprobe -C ... --showconfig)" sh -c \
	"! command -v modprobe >/dev/null || modprobe -C '$X/etc/modprobe.d' --showconfig 2>/dev/null | grep -q '^install capfence '"
U=$X/lib/systemd/system/capfence.service
t "systemd unit /lib/systemd/system/capfence.service" [ -f "$U" ]
t "unit: oneshot, RemainAfterExit, modprobe + attach at boot" sh -c "
	grep -qx 'Type=oneshot' '$U' && grep -qx 'RemainAfterExit=yes' '$U' &&
	grep -qx 'ExecStart=/sbin/modprobe --ignore-install capfence' '$U' &&
	grep -qx 'ExecStart=/usr/local/sbin/capfence attach' '$U' &&
	grep -q '^WantedBy=' '$U'"
G=$X/lib/systemd/system/capfenced.service
t "fleet agent /usr/local/sbin/capfenced and its unit (not enabled)" sh -c "
	[ -x '$X/usr/local/sbin/capfenced' ] && [ -f '$G' ] &&
	grep -q '^ExecStart=/usr/local/sbin/capfenced --foreground ' '$G' &&
	grep -qx 'EnvironmentFile=-/etc/default/capfenced' '$G'"
t "unit passes systemd-analyze verify (when available)" sh -c \
	"! command -v systemd-analyze >/dev/null || systemd-analyze verify --man=no '$U' >/dev/null 2>&1"
t "manifest lists every installed file and link" sh -c "
	cd '$X' && find . -type l | sed 's/^\.//' | sort > '$D/links' &&
	sed -n 's/^l //p' usr/local/share/capfence/install-manifest | sort | cmp -s - '$D/links'" 
t "manifest lists every installed file" sh -c "
	cd '$X' && find . -type f | sed 's/^\.//' | sort > '$D/files' &&
	sed -n 's/^f //p' usr/local/share/capfence/install-manifest | sort | cmp -s - '$D/files'"
# --- libcapfence and the Python package
L=$X/usr/local/lib
PYD=$L/python$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages
t "libcapfence.so.1.7.0, .so.1 -> it, .so -> .so.1, libcapfence.a" sh -c "
	cmp -s build/lib/libcapfence.so.1.7.0 '$L/libcapfence.so.1.7.0' &&
	[ \"\$(readlink '$L/libcapfence.so.1')\" = libcapfence.so.1.7.0 ] &&
	[ \"\$(readlink '$L/libcapfence.so')\" = libcapfence.so.1 ] &&
	cmp -s build/lib/libcapfence.a '$L/libcapfence.a'"
t "installed library's SONAME is libcapfence.so.1" sh -c \
	"readelf -d '$L/libcapfence.so.1' | grep -q 'SONAME.*\[libcapfence.so.1\]'"
t "libcapfence.so.2 beside it (SONAME libcapfence.so.2), capfence-2.pc links it" sh -c "
	cmp -s build/lib/libcapfence.so.2.0.0 '$L/libcapfence.so.2.0.0' &&
	[ \"\$(readlink '$L/libcapfence.so.2')\" = libcapfence.so.2.0.0 ] &&
	readelf -d '$L/libcapfence.so.2' | grep -q 'SONAME.*\[libcapfence.so.2\]' &&
	grep -qx 'prefix=/usr/local' '$L/pkgconfig/capfence-2.pc' &&
	env PKG_CONFIG_PATH='$L/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$X' pkg-config --libs capfence-2 | grep -q -- '-l:libcapfence.so.2' &&
	env PKG_CONFIG_PATH='$L/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$X' pkg-config --cflags capfence-2 | grep -q -- '-DCAPFENCE_API=2'"
t "headers: include/capfence/capfence.h and include/linux/capfence.h" sh -c "
	cmp -s include/capfence/capfence.h '$X/usr/local/include/capfence/capfence.h' &&
	cmp -s include/uapi/linux/capfence.h '$X/usr/local/include/linux/capfence.h'"
t "libcapfence(3) /usr/local/share/man/man3/libcapfence.3 renders" sh -c "
	cmp -s docs/libcapfence.3 '$X/usr/local/share/man/man3/libcapfence.3' &&
	{ ! command -v man >/dev/null || MANWIDTH=80 man -l '$X/usr/local/share/man/man3/libcapfence.3' 2>/dev/null | grep -q capfence_client_open; }"
PC="env PKG_CONFIG_PATH=$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$X pkg-config"
t "capfence.pc: prefix /usr/local, version $(sed -n 's/^#define CAPFENCE_LIB_VERSION_STRING[[:space:]]*"\(.*\)"/\1/p' include/capfence/capfence.h)" sh -c "
	grep -qx 'prefix=/usr/local' '$L/pkgconfig/capfence.pc' &&
	[ \"\$($PC --modversion capfence)\" = \"\$(sed -n 's/^#define CAPFENCE_LIB_VERSION_STRING[[:space:]]*\"\(.*\)\"/\\1/p' include/capfence/capfence.h)\" ]"
t "pkg-config --cflags --libs capfence names the installed tree" sh -c "
	$PC --cflags --libs capfence | grep -q -- '-I$X/usr/local/include' &&
	$PC --libs capfence | grep -q -- '-L$L -lcapfence' &&
	$PC --static --libs capfence | grep -q -- '-lsodium' &&
	$PC --static --libs capfence | grep -q -- '-lmnl'"
E=$D/examples
cp -r examples "$E"
t "examples/orchestrator builds outside the tree with pkg-config only (shared and static)" sh -c "
	$PC --exists capfence && make -s -C '$E' PKG_CONFIG='$PC' all static > '$D/ex.log' 2>&1 ||
	{ sed 's/^/#   /' '$D/ex.log'; exit 1; }"
t "orchestrator --local: the design note's decisions, through the installed .so" sh -c "
	LD_LIBRARY_PATH='$L' ldd '$E/orchestrator' | grep -q '$L/libcapfence.so.2' &&
	LD_LIBRARY_PATH='$L' '$E/orchestrator' --local > '$D/ex.out' 2>&1 &&
	grep -q '^libcapfence 2' '$D/ex.out' && [ \"\$(grep -c 'as expected' '$D/ex.out')\" -eq 4 ] ||
	{ sed 's/^/#   /' '$D/ex.out'; exit 1; }"
t "orchestrator-static --local: libcapfence.a linked in (no libcapfence.so needed)" sh -c "
	! ldd '$E/orchestrator-static' | grep -q libcapfence && '$E/orchestrator-static' --local >/dev/null"
t "orchestrator without the module: one line, exit 1" sh -c "
	LD_LIBRARY_PATH='$L' '$E/orchestrator' > '$D/ex2.out' 2>&1; [ \$? -eq 1 ] &&
	grep -qx 'capfence: the capfence module is not loaded (modprobe capfence)' '$D/ex2.out'" 
t "Python package in $(echo "$PYD" | sed "s|$X||") imports and loads the installed .so" sh -c "
	[ -f '$PYD/capfence/__init__.py' ] && [ -f '$PYD/capfence/_lib.py' ] && [ -f '$PYD/capfence/py.typed' ] &&
	CAPFENCE_LIBRARY='$L/libcapfence.so.2' PYTHONPATH='$PYD' /usr/bin/python3 -c '
import capfence, sys
sys.exit(capfence.library_version() != capfence.__version__ or not capfence.__file__.startswith(\"$PYD\"))'"
t "examples/orchestrator.py --local (imports only capfence) through the installed package" sh -c "
	CAPFENCE_LIBRARY='$L/libcapfence.so.2' PYTHONPATH='$PYD' /usr/bin/python3 examples/orchestrator.py --local > '$D/py.out' 2>&1 &&
	grep -q 'rejected at boundary' '$D/py.out' && grep -q 'class narrowed out' '$D/py.out' ||
	{ sed 's/^/#   /' '$D/py.out'; exit 1; }"
t "nothing else installed (21 files, 3 links; __pycache__ aside)" sh -c "
	[ \"\$(find '$X' -type f ! -path '*/__pycache__/*' | wc -l)\" -eq 21 ] && [ \"\$(find '$X' -type l | wc -l)\" -eq 3 ]"
t "make install twice succeeds (reinstall)" mk install DESTDIR="$X"
t "make uninstall DESTDIR=$X succeeds" mk uninstall DESTDIR="$X"
t "uninstall leaves nothing in DESTDIR" [ -z "$(find "$X" -mindepth 1 | head -1)" ]

# --- PREFIX=/usr, and a pre-existing directory survives uninstall
Y=$D/y
mkdir -p "$Y/etc/modprobe.d" && touch "$Y/etc/modprobe.d/other.conf"
t "make install PREFIX=/usr DESTDIR=$Y" mk install PREFIX=/usr DESTDIR="$Y"
t "PREFIX=/usr: /usr/sbin/capfence, man8, completion" sh -c "
	[ -x '$Y/usr/sbin/capfence' ] && [ -f '$Y/usr/share/man/man8/capfence.8' ] &&
	[ -f '$Y/usr/share/bash-completion/completions/capfence' ]"
t "PREFIX=/usr: /usr/lib/libcapfence.so.1, capfence.pc, the package in /usr/lib/python3/dist-packages" sh -c "
	[ -L '$Y/usr/lib/libcapfence.so.1' ] && grep -qx 'prefix=/usr' '$Y/usr/lib/pkgconfig/capfence.pc' &&
	[ -f '$Y/usr/lib/python3/dist-packages/capfence/__init__.py' ]"
t "PREFIX=/usr: modprobe entry and unit call /usr/sbin/capfence" sh -c "
	grep -q '&& /usr/sbin/capfence attach' '$Y/etc/modprobe.d/capfence.conf' &&
	grep -qx 'ExecStart=/usr/sbin/capfence attach' '$Y/lib/systemd/system/capfence.service'"
t "make uninstall PREFIX=/usr DESTDIR=$Y" mk uninstall PREFIX=/usr DESTDIR="$Y"
t "uninstall removes only what it installed" sh -c "
	[ -f '$Y/etc/modprobe.d/other.conf' ] &&
	[ \"\$(find '$Y' -mindepth 1 | sort | tr '\n' ' ')\" = '$Y/etc $Y/etc/modprobe.d $Y/etc/modprobe.d/other.conf ' ]"

# --- DKMS source tree
Z=$D/z
ver=$(sed -n 's/^#define CAPFENCE_VERSION "\(.*\)"/\1/p' kernel/version.h)
S=$Z/usr/src/capfence-$ver
t "make dkms-source DESTDIR=$Z" mk dkms-source DESTDIR="$Z"
t "dkms tree: dkms.conf, dkms-build.sh, Kbuild, kernel/, include/" sh -c "
	[ -f '$S/dkms.conf' ] && [ -x '$S/dkms-build.sh' ] && cmp -s Kbuild '$S/Kbuild' &&
	[ -f '$S/kernel/netlink.c' ] && [ -f '$S/kernel/version.h' ] &&
	cmp -s include/uapi/linux/capfence.h '$S/include/uapi/linux/capfence.h'"
t "dkms.conf: name, version $ver, module, build command" sh -c "
	grep -qx 'PACKAGE_NAME=\"capfence\"' '$S/dkms.conf' &&
	grep -qx 'PACKAGE_VERSION=\"$ver\"' '$S/dkms.conf' &&
	grep -qx 'BUILT_MODULE_NAME\[0\]=\"capfence\"' '$S/dkms.conf' &&
	grep -q '^MAKE\[0\]=\"sh ./dkms-build.sh \${kernelver} \${kernel_source_dir}\"' '$S/dkms.conf'"
t "every source Kbuild names is in the dkms tree" sh -c "
	for o in \$(sed -n 's/\\\\\$//; s/.*:= *//; /kernel\//p' Kbuild | tr ' ' '\n' | grep '^kernel/.*\.o\$'); do
		[ -f '$S/'\${o%.o}.c ] || { echo \"# missing \${o%.o}.c\"; exit 1; }
	done"
if [ "$K" = 6.12 ] && [ -f build/root-trixie/.key ]; then
	# a real DKMS-style build on Debian 13 (its build root) against the
	# headers make uses: they ship vmlinux and resolve_btfids, so it is quick
	kdir=$(readlink -f "build/kernel-$K/headers")
	t "dkms-build.sh builds capfence.ko with module BTF for $rel (Debian 13 root)" \
		tools/build/buildroot.sh run build/root-trixie "$S" sh -c \
		"sh ./dkms-build.sh '$rel' '$kdir' > '$D/dkms.log' 2>&1 && readelf -S capfence.ko | grep -q '\.BTF '" ||
		sed 's/^/#   /' "$D/dkms.log" | tail -20
elif [ -n "${CF_DKMS_BUILD:-}" ]; then
	# a real DKMS-style build against the headers make uses (slow: unpacks
	# linux-source to build resolve_btfids when the headers lack it)
	kdir=$(readlink -f "build/kernel-$K/headers")
	t "dkms-build.sh builds capfence.ko with module BTF for $rel" sh -c \
		"cd '$S' && sh ./dkms-build.sh '$rel' '$kdir' > '$D/dkms.log' 2>&1 && readelf -S capfence.ko | grep -q '\.BTF '" ||
		sed 's/^/#   /' "$D/dkms.log" | tail -20
fi
finish
