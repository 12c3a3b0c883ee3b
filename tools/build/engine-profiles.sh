#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The container engines' seccomp profiles as Debian ships them, for the
# tests that install them as epochs' syscall policies:
#   engine-profiles.sh OUTDIR -> OUTDIR/containers-seccomp.json
#     (golang-github-containers-common: Podman's and CRI-O's default) and
#     OUTDIR/moby-default.json (golang-github-docker-docker-dev: Docker's)
# The packages are downloaded from the host's apt sources, never installed.
set -eu
out=$1
[ -s "$out/containers-seccomp.json" ] && [ -s "$out/moby-default.json" ] && exit 0
tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
for pkg in golang-github-containers-common golang-github-docker-docker-dev; do
	(cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
		{ apt-get update -q >/dev/null 2>&1 || true
		  (cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1); } ||
		{ echo "engine-profiles.sh: apt-get download $pkg failed" >&2; rm -rf "$tmp"; exit 1; }
	dpkg-deb -x "$tmp/$pkg"_*.deb "$tmp/x"
done
mkdir -p "$out"
cp "$tmp/x/usr/share/containers/seccomp.json" "$out/containers-seccomp.json"
cp "$tmp/x/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json" \
	"$out/moby-default.json"
rm -rf "$tmp"
