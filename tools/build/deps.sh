#!/bin/sh
# Install the Debian packages capfence needs to build and test (and the
# packages named as arguments), or print the
# exact apt-get line when not root. Quick when everything is present.
# Packages are installed without their Recommends, so everything the build
# and the tests run is named here (make check-fresh proves the list on a
# minimal Debian 12 root): libclang-rt-dev is clang's sanitizer and
# libFuzzer runtime, which clang only recommends; prometheus brings
# promtool, which checks the metrics text.
set -eu
PKGS="make gcc-12 gcc g++ clang libclang-rt-dev llvm lld libbpf-dev bpftool dwarves libelf-dev zlib1g-dev
libsodium-dev libmnl-dev liburing-dev python3-pytest qemu-system-x86 busybox-static cpio lz4 xz-utils
linux-source-6.1 debootstrap kmod bc bison flex libssl-dev pkg-config python3 iproute2
auditd libauparse-dev libcurl4-openssl-dev libjson-c-dev libseccomp-dev etcd-server etcd-client socat ccache openssl
python3-yaml python3-jsonschema libsystemd-dev prometheus"
# deps.sh PKG...: those too (make kernel-builtin: linux-source-6.12)
[ $# -eq 0 ] || PKGS="$PKGS $*"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "capfence: missing packages; run as root:" >&2
	echo "  apt-get install -y$missing" >&2
	exit 1
fi
echo "capfence: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends $missing >/dev/null
