# SPDX-License-Identifier: GPL-2.0
#
# capfence in the ecosystem, included by the top Makefile:
#
#   make install     [DESTDIR=] [PREFIX=/usr/local]   module, CLI, capfenced
#                    (the fleet agent) and its unit (not enabled), capfence(8),
#                    bash completion, modprobe.d entry, systemd unit,
#                    libcapfence (.so, .a, headers, capfence.pc,
#                    libcapfence(3)) and the Python package; LIBDIR= and
#                    PYTHONDIR= move those two
#   make uninstall   [DESTDIR=] [PREFIX=/usr/local]   removes exactly that
#   make dkms-source [DESTDIR=]   lays out /usr/src/capfence-VERSION for DKMS
#   make netlink-gen   kernel/netlink_gen.[ch] and tools/lib/cf_attrs_gen.c
#                      from docs/netlink/capfence.yaml
#   make spec-check    docs/netlink/capfence.yaml against the uapi header and
#                      kernel/netlink.c, and netlink_gen.[ch] current (host)
#   make install-check selftests/install/install-test.sh (host, no VM)
#   make ecotest       one VM boot: genl ctrl vs the YAML spec, capfence
#                      --version, a denial read by auditd/ausearch/auparse
#
# The module is never built here: install takes the capfence.ko that
# `make` built for INSTALL_KERNEL (6.1 or 6.12; default: the series of the
# running kernel, else 6.1), for the release its vermagic names.

PREFIX     ?= /usr/local
INSTALL_KERNEL ?= $(if $(filter 6.12.%,$(shell uname -r)),6.12,6.1)
CF_VERSION := $(shell sed -n 's/^\#define CAPFENCE_VERSION "\(.*\)"/\1/p' kernel/version.h)
CF_ECO     := $(B)/guest/share/capfence
CF_FINDBIN  = $(firstword $(wildcard /usr/sbin/$(1) /sbin/$(1) /usr/bin/$(1) /bin/$(1)))

.PHONY: install uninstall dkms-source netlink-gen threat-table spec-check install-check ecotest eco-deps

# one apt-get at a time: make -j would run two installs into dpkg's lock
eco-deps: deps

install: $(B)/tools/capfence $(B)/tools/capfenced $(LIB_SO) $(LIB_A)
	@LIBDIR="$(LIBDIR)" PYTHONDIR="$(PYTHONDIR)" tools/build/install.sh install "$(DESTDIR)" "$(PREFIX)" \
		$(call KO,$(INSTALL_KERNEL)) $(B)/tools/capfence $(LIB_OUT) $(B)/tools/capfenced

uninstall:
	@tools/build/install.sh uninstall "$(DESTDIR)" "$(PREFIX)"

CF_DKMS := $(DESTDIR)/usr/src/capfence-$(CF_VERSION)
dkms-source:
	@rm -rf "$(CF_DKMS)"
	@mkdir -p "$(CF_DKMS)/kernel" "$(CF_DKMS)/include/uapi/linux"
	@sed 's|@VERSION@|$(CF_VERSION)|g' tools/build/dkms/dkms.conf.in > "$(CF_DKMS)/dkms.conf"
	@install -m 0755 tools/build/dkms/dkms-build.sh "$(CF_DKMS)/dkms-build.sh"
	@cp Kbuild "$(CF_DKMS)/"
	@cp kernel/*.c kernel/*.h "$(CF_DKMS)/kernel/"
	@cp include/uapi/linux/capfence.h "$(CF_DKMS)/include/uapi/linux/"
	@echo "capfence: DKMS source in $(CF_DKMS); then: dkms install capfence/$(CF_VERSION)"

# The kernel's generic netlink tooling (tools/net/ynl) and its schemas,
# from Debian 13's linux-source-6.12: the spec is validated with the
# schema here and drives the module through ynl's cli.py in the VM.
# Debian's python3, with python3-yaml and python3-jsonschema (deps.sh)
SPEC_PY ?= /usr/bin/python3

$(YNL)/version: tools/build/ynl.sh tools/build/trixie-apt.sh | deps
	@tools/build/ynl.sh $(YNL)

# The kernel's policies and op table, generated from the spec: after a
# change to docs/netlink/capfence.yaml, make netlink-gen and commit both.
netlink-gen: $(YNL)/version
	@tools/build/netlink-gen.sh $(YNL) $(SPEC_PY) kernel tools/lib

# The threat model's tables generated from the VM tests' variant tables:
# after changing a row, make threat-table and commit docs/threat-model.md.
threat-table:
	@$(SPEC_PY) selftests/kernel/path-table.py --write

spec-check: $(YNL)/version
	@mkdir -p $(B)/logs
	@{ $(SPEC_PY) selftests/netlink/check-spec.py --schema $(YNL)/schemas/genetlink-legacy.yaml; \
		selftests/netlink/check-spec-test.sh $(SPEC_PY) $(YNL)/schemas/genetlink-legacy.yaml; \
		selftests/netlink/gen-check.sh $(YNL) $(SPEC_PY); \
		$(SPEC_PY) selftests/kernel/path-table.py --check; \
		selftests/kernel/path-table-test.sh; } \
		> $(B)/logs/spec.log 2>&1; \
		grep -E '^(not ok|# )' $(B)/logs/spec.log; \
		selftests/summary spec $(B)/logs/spec.log

# per kernel of KERNEL: build/logs/install-<series>.log
install-check: $(B)/tools/capfence $(B)/tools/capfenced $(LIB_SO) $(LIB2_SO) $(LIB_A)
	@mkdir -p $(B)/logs
	@for k in $(KERNEL); do \
		CAPFENCE_KERNEL=$$k selftests/install/install-test.sh > $(B)/logs/install-$$k.log 2>&1; \
		grep -E '^(not ok|# )' $(B)/logs/install-$$k.log; \
		selftests/summary "install $$k" $(B)/logs/install-$$k.log; \
	done

# ---- guest side: programs and files for selftests/vm/run ----
$(B)/guest/bin/genl: | eco-deps
	@mkdir -p $(dir $@)
	cp -L $(or $(call CF_FINDBIN,genl),/usr/sbin/genl) $@

$(B)/guest/bin/auditd $(B)/guest/bin/ausearch: | eco-deps
	@mkdir -p $(dir $@)
	cp -L $(or $(call CF_FINDBIN,$(notdir $@)),/sbin/$(notdir $@)) $@

$(B)/guest/bin/cfaudit: selftests/audit/cfaudit.c | eco-deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) $< -lauparse -o $@

# CLIs that pretend to be another version / ABI, for the mismatch report
$(B)/guest/bin/capfence-vtest-ver: $(CLI_SRCS) $(LIB_A) $(wildcard tools/capfence/*.h) $(LIB_HDRS) $(B)/lsm/capfence.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -DCF_TEST_CLI_VERSION='"9.9.9-test"' $(CLI_SRCS) $(LIB_A) $(LIBS) -o $@

$(B)/guest/bin/capfence-vtest-abi: $(CLI_SRCS) $(LIB_A) $(wildcard tools/capfence/*.h) $(LIB_HDRS) $(B)/lsm/capfence.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -DCF_TEST_CLI_ABI=99 $(CLI_SRCS) $(LIB_A) $(LIBS) -o $@

$(CF_ECO)/genl-expect: docs/netlink/capfence.yaml selftests/netlink/check-spec.py
	@mkdir -p $(dir $@)
	$(SPEC_PY) selftests/netlink/check-spec.py --genl-expect $@

$(CF_ECO)/%.sh: selftests/netlink/%.sh
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

$(CF_ECO)/%.sh: selftests/audit/%.sh
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

$(CF_ECO)/auditd.conf: selftests/audit/auditd.conf
	@mkdir -p $(dir $@)
	cp $< $@

CF_ECO_FILES := $(B)/guest/bin/genl $(B)/guest/bin/auditd $(B)/guest/bin/ausearch \
	$(B)/guest/bin/cfaudit $(B)/guest/bin/capfence-vtest-ver $(B)/guest/bin/capfence-vtest-abi \
	$(CF_ECO)/genl-expect $(CF_ECO)/genl-test.sh $(CF_ECO)/version-test.sh \
	$(CF_ECO)/audit-test.sh $(CF_ECO)/auditd.conf $(CF_ECO)/eco-tests.sh
GUEST_EXTRA += $(CF_ECO_FILES)

# One boot for the four guest scripts (with the Python overlay, for ynl).
# Needs the module (make module).
ecotest: $(B)/tools/capfence $(CF_ECO_FILES) $(PYROOT)/.stamp
	@mkdir -p $(B)/logs
	-@for k in $(KERNEL); do ( \
		t0=$$(date +%s); \
		$(VMRUN) --kernel $$k --timeout 600 --overlay $(PYROOT) -- sh /usr/share/capfence/eco-tests.sh > $(B)/logs/eco-$$k.log 2>&1; \
		rc=$$?; grep -E '^(not ok|# Totals)|^run:' $(B)/logs/eco-$$k.log; \
		[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/eco-$$k.log; \
		echo "# time: eco $$k $$(( $$(date +%s) - t0 )) s" >> $(B)/logs/eco-$$k.log; \
		selftests/summary "eco $$k" $(B)/logs/eco-$$k.log ) $(KPAR) \
	done; wait
