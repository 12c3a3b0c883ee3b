#!/bin/sh
# The Debian packages of the ecosystem tests (issue 7): genl (iproute2),
# the audit daemon and tools (auditd), libauparse for cfaudit, pahole for
# DKMS builds. Installs them as root, or prints the exact apt-get line.
set -eu
PKGS="iproute2 auditd libauparse-dev dwarves python3"
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
