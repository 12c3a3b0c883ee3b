# SPDX-License-Identifier: GPL-2.0
#
# Debian packages, included by the top Makefile:
#
#   make deb        the source package and capfence-dkms, capfence,
#                   libcapfence1, libcapfence2, libcapfence-dev,
#                   python3-capfence, built
#                   with dpkg-buildpackage in a clean Debian 12 root, lintian
#                   clean: build/deb/bookworm/ (DEB_SUITES="bookworm trixie"
#                   adds Debian 13's in build/deb/trixie/)
#   make check-deb  selftests/deb/check-deb: the packages installed with apt
#                   into a fresh minimal root of each suite, DKMS building
#                   capfence.ko for its stock cloud kernel, then a VM boot
#                   of that kernel on that module playing the seed scenario
# Both run as root (debootstrap, chroot).

DEB_SUITES ?= bookworm

.PHONY: deb check-deb

deb: $(B)/lsm/vmlinux.h
	@for s in $(DEB_SUITES); do \
		tools/build/deb.sh $$s $(B)/deb/$$s $(B)/lsm/vmlinux.h || exit 1; \
	done

check-deb: deb
	@mkdir -p $(B)/logs
	@for s in $(DEB_SUITES); do \
		selftests/deb/check-deb $$s $(B)/deb/$$s > $(B)/logs/deb-$$s.log 2>&1; \
		grep -aE '^(not ok|# )|^check-deb:' $(B)/logs/deb-$$s.log; \
		selftests/summary "deb $$s" $(B)/logs/deb-$$s.log; \
	done
