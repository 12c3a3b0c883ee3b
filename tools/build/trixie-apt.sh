# SPDX-License-Identifier: GPL-2.0
# Sourced (sh): Debian 13's package lists, private to this build tree, so
# that Debian 13's packages can be downloaded on a Debian 12 host without
# touching its apt configuration. Needs $build (the build directory).
# Sets the positional parameters to the apt-get options that use them.
apt=$build/apt-trixie
mirror=${CAPFENCE_MIRROR:-$(apt-get indextargets --no-release-info --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk '$2 !~ /-security$/ { print $1; exit }')}
[ -n "$mirror" ] || { echo "capfence: no Debian mirror in the apt sources; set CAPFENCE_MIRROR" >&2; exit 1; }
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
# one user of these lists at a time (a parallel build fetches the kernel
# and ynl at once; apt's own lock would fail the second, not wait): held
# on fd 9 until the sourcing script exits
exec 9> "$apt/lock.capfence"
flock 9
# an empty package status: what the host has installed (a linux-source-6.12
# from bookworm-backports, say) must not stand in for Debian 13's versions
[ -f "$apt/status" ] || : > "$apt/status"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} trixie main" > "$apt/sources.list"
set -- -o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent \
	-o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status" \
	-o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root
