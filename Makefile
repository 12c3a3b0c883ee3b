# SPDX-License-Identifier: GPL-2.0
#
# capfence: top-level build.
#
#   make            modules, BPF programs, libcapfence, CLI, the fleet agent
#                   capfenced, test programs
#   make check      host unit tests (ASan/UBSan, and the Python package's),
#                   ABI, spec, layer, install and fuzz checks, then the VM, CLI,
#                   Python and ecosystem tests and the compatibility matrix
#                   of real programs on each kernel, and the
#                   fleet tests (etcd and several VMs, on 6.1)
#   make cli-check  the CLI tests alone in the VM, on each kernel of KERNEL
#   make matrix-check real Debian programs bound, in the VM, on each kernel
#                   (selftests/matrix/matrix.mk)
#   make demo       boot the VM (newest kernel) and play the seed scenario
#   make check-fresh make demo and make check in a fresh minimal Debian 12 root
#   make bench      benchmarks (figures, side by side)
#   make bench-builtin the built-in LSM's hook figures against capfence left
#                   out of lsm=, Landlock and the module (docs/benchmarks.md)
#   make checkpatch checkpatch.pl --strict on kernel/ and lsm/ (not the
#                   generated kernel/netlink_gen.[ch]: the generator's)
#   make kernel-builtin a small QEMU kernel (Debian 13's linux-source-6.12)
#                   with capfence built in, CONFIG_SECURITY_CAPFENCE; boot
#                   it with selftests/vm/run --kernel builtin
#   make check-builtin the VM test programs on that kernel (not in check)
#   make patches    the same as a git format-patch series against it,
#                   checkpatch.pl --strict on each patch
#   make layer-check the module's files only point down their layers
#                   (docs/design.md), and each header of kernel/ compiles
#                   alone
#   make agent-check capfenced against the module, etcd in the guest
#
# Kernels: Debian 12's stock cloud kernel (6.1) and Debian 13's (6.12),
# each fetched into build/kernel-<series> (never installed). KERNEL picks
# them (default both: make check KERNEL=6.12 runs one).
# CAPFENCE_KABI_6_1=6.1.0-NN-cloud-amd64 and
# CAPFENCE_KABI_6_12=6.12.NN+deb13-cloud-amd64 pin their ABIs.

.DEFAULT_GOAL := all
SHELL      := /bin/bash
B          := build
# the kernel's ynl and netlink schemas (tools/build/ynl.sh, install.mk)
YNL        := $(B)/ynl
LSRC       := $(B)/linux-src
KERNELS    := 6.1 6.12
KERNEL     ?= $(KERNELS)
override KERNEL := $(strip $(KERNEL))
ifneq ($(filter-out $(KERNELS),$(KERNEL)),)
$(error KERNEL=$(KERNEL): supported kernels are $(KERNELS))
endif
ifeq ($(KERNEL),)
$(error KERNEL is empty: supported kernels are $(KERNELS))
endif
KNEWEST    := $(lastword $(filter $(KERNEL),$(KERNELS)))
# per kernel: fetched kernel, and capfence.ko built out of the source tree
KB          = $(B)/kernel-$(1)
KO          = $(B)/kernel-$(1)/module/capfence.ko
# Debian 13's headers need its toolchain: a Debian 13 root in build/
TRIXIE     := $(B)/root-trixie
TRIXIE_PKGS := make gcc-14 libc6-dev pahole libelf1t64 libssl3t64 zlib1g
CC         := gcc
CLANG      ?= clang
CFLAGS_USR := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g
CPPFLAGS_USR := -Iinclude -Iinclude/uapi -Itools/lib -Itools/capfence -I$(B)/lsm -isystem $(B)/ksft
SAN        := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# the library's fleet client (cf_etcd.c, cf_fleet.c): libcurl and json-c;
# its syscall policy compiler (cf_seccomp.c): json-c and libseccomp
NET_LIBS   := -lcurl -ljson-c -lseccomp
# what a program linking libcapfence.a without the fleet client needs
# besides libsodium and libmnl (the syscall policy: cf_seccomp.c)
SC_LIBS    := -ljson-c -lseccomp
LIBS       := -lsodium -lmnl $(NET_LIBS) -lbpf -lelf -lz -lpthread
VMRUN      := selftests/vm/run
# The VM stages boot each kernel of KERNEL side by side (every boot has its
# own temporary root, so two guests share nothing); VM_SERIAL=1 boots them
# one after the other. Used as: for k in $(KERNEL); do ( ... ) $(KPAR) done; wait
KPAR       := $(if $(filter 1,$(VM_SERIAL)),;,&)
# jobs for the build of make check and make demo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# (and for the makes the build scripts start themselves: module.sh, hdr-check.sh)
export JOBS
export CAPFENCE_BUILD := $(CURDIR)/$(B)

LIB_SRCS   := $(wildcard tools/lib/*.c)
# the part of the library that never talks to the kernel (fuzzers)
# (cf_compat.c: the 1.3 layout wrappers, of the client calls too)
LIB_PURE_SRCS := $(filter-out tools/lib/cf_api2.c tools/lib/cf_attrs.c tools/lib/cf_attrs_gen.c tools/lib/cf_client.c tools/lib/cf_learn.c tools/lib/cf_compat.c tools/lib/cf_etcd.c tools/lib/cf_fleet.c tools/lib/cf_metrics.c,$(LIB_SRCS))
LIB_HDRS   := include/capfence/capfence.h include/uapi/linux/capfence.h $(wildcard tools/lib/*.h)
CLI_SRCS   := $(wildcard tools/capfence/*.c)
KSRCS      := $(wildcard kernel/*.c kernel/*.h) Kbuild include/uapi/linux/capfence.h
UNIT_SRCS  := $(wildcard selftests/unit/test_*.c)
UNIT_BINS  := $(patsubst selftests/unit/%.c,$(B)/unit/%,$(UNIT_SRCS))
VMT_SRCS   := $(wildcard selftests/kernel/*_test.c)
VMT_BINS   := $(patsubst selftests/kernel/%.c,$(B)/guest/bin/%,$(VMT_SRCS))
VMT_COMMON := $(wildcard selftests/kernel/common.c)
BENCH_SRCS := $(wildcard selftests/bench/*.c)

# Feature makefiles: each adds its own targets and, through GUEST_EXTRA,
# programs for the VM image.
-include tools/lib/lib.mk
-include python/python.mk
-include selftests/bench/bench.mk
-include selftests/fuzz/fuzz.mk
-include tools/build/install.mk
-include tools/build/deb.mk
-include selftests/debug/debug.mk
-include selftests/faults/faults.mk
-include selftests/agent/agent.mk
-include selftests/fleet/fleet.mk
-include selftests/matrix/matrix.mk

.PHONY: all build deps module bpf lib pyroot cli agent tests check check-fresh unit vmtest cli-check demo checkpatch layer-check kernel-builtin check-builtin patches clean distclean

# deps first, then the build: under -j a rule without '| deps' (a guest
# program, say) would otherwise race the compiler's installation (the
# build itself then skips deps.sh: it has run)
all: deps
	@$(MAKE) --no-print-directory CAPFENCE_NO_DEPS=1 build

build: module lib cli agent tests pyroot

# CAPFENCE_NO_DEPS=1: the Debian package build (debian/rules), whose build
# dependencies come from debian/control, installs nothing
deps:
	@$(if $(filter 1,$(CAPFENCE_NO_DEPS)),:,tools/build/deps.sh)

$(LSRC)/.stamp: | deps
	@tools/build/source.sh $(LSRC)

$(B)/kernel-%/release: $(LSRC)/.stamp
	@tools/build/kernel.sh $(B)/kernel-$* $(LSRC) $*

$(TRIXIE)/.key: | deps
	@tools/build/buildroot.sh make trixie $(TRIXIE) $(TRIXIE_PKGS)

$(B)/ksft/kselftest_harness.h: $(LSRC)/.stamp
	@mkdir -p $(B)/ksft
	@cp $(LSRC)/tools/testing/selftests/kselftest_harness.h $(LSRC)/tools/testing/selftests/kselftest.h $(B)/ksft/

# capfence.ko per kernel, in build/kernel-<series>/module; module.sh fails
# a build without module BTF (Kbuild only says "Skipping BTF generation").
$(call KO,6.1): $(KSRCS) $(call KB,6.1)/release
	@tools/build/module.sh $(call KB,6.1)

$(call KO,6.12): $(KSRCS) $(call KB,6.12)/release $(TRIXIE)/.key
	@tools/build/module.sh $(call KB,6.12) $(TRIXIE)

module: $(foreach k,$(KERNEL),$(call KO,$(k)))

# The test-only module (selftests/kernel/seqwrap) per kernel, for the VM.
TESTMOD = $(B)/kernel-$(1)/testmod/seqwrap.ko
$(call TESTMOD,6.1): selftests/kernel/seqwrap/seqwrap.c $(call KB,6.1)/release
	@tools/build/testmod.sh $(call KB,6.1)

$(call TESTMOD,6.12): selftests/kernel/seqwrap/seqwrap.c $(call KB,6.12)/release $(TRIXIE)/.key
	@tools/build/testmod.sh $(call KB,6.12) $(TRIXIE)

# One BPF object for every kernel: compiled against the oldest supported
# kernel's types (CO-RE), it loads on the newer ones unchanged.
# VMLINUX_H=FILE takes those types from FILE instead (the Debian source
# package ships the ones of Debian 12's kernel: it fetches no kernel)
ifdef VMLINUX_H
$(B)/lsm/vmlinux.h: $(VMLINUX_H)
	@mkdir -p $(B)/lsm
	cp $< $@
else
$(B)/lsm/vmlinux.h: $(call KB,6.1)/release
	@mkdir -p $(B)/lsm
	bpftool btf dump file $(call KB,6.1)/vmlinux format c > $@
endif

$(B)/lsm/capfence.bpf.o: lsm/capfence.bpf.c $(B)/lsm/vmlinux.h
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 -I$(B)/lsm -c $< -o $@.full
	llvm-strip -g $@.full -o $@

$(B)/lsm/capfence.skel.h: $(B)/lsm/capfence.bpf.o
	bpftool gen skeleton $< name capfence_bpf > $@

bpf: $(B)/lsm/capfence.skel.h

$(B)/tools/capfence: $(CLI_SRCS) $(LIB_A) $(wildcard tools/capfence/*.h) $(LIB_HDRS) $(B)/lsm/capfence.skel.h | deps
	@mkdir -p $(B)/tools
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) $(CLI_SRCS) $(LIB_A) $(LIBS) -o $@

cli: $(B)/tools/capfence

# the fleet agent; the guest gets it too (multi-host tests)
AGENT_SRCS := $(wildcard tools/capfenced/*.c)
$(B)/tools/capfenced: $(AGENT_SRCS) $(wildcard tools/capfenced/*.h) $(LIB_A) $(LIB_HDRS) | deps
	@mkdir -p $(B)/tools
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) $(AGENT_SRCS) $(LIB_A) -lsodium -lmnl $(NET_LIBS) -lsystemd -lpthread -o $@

$(B)/guest/bin/capfenced: $(B)/tools/capfenced
	@mkdir -p $(B)/guest/bin
	cp $< $@

GUEST_EXTRA += $(B)/guest/bin/capfenced

agent: $(B)/tools/capfenced

# Host unit tests: libcapfence under AddressSanitizer and UBSan (the etcd
# client against an etcd each test starts), the fleet CLI and agent's
# input checks (selftests/cli/fleet-tests.sh), and the metrics text under
# promtool and capfenced.service under systemd-analyze
# (selftests/cli/metrics-tests.sh).
# The library is compiled under the sanitizers once, into $(B)/unit/lib/,
# and every test links those objects (not an archive: each test gets the
# whole library, as when it compiled the sources itself).
UNIT_SAN   := $(CFLAGS_USR) -O1 $(SAN) $(CPPFLAGS_USR)
UNIT_LIB   := $(patsubst tools/lib/%.c,$(B)/unit/lib/%.o,$(LIB_SRCS))
$(B)/unit/lib/%.o: tools/lib/%.c $(LIB_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(UNIT_SAN) -c $< -o $@

$(B)/unit/%: selftests/unit/%.c $(UNIT_LIB) $(LIB_HDRS) $(wildcard selftests/unit/*.h) $(B)/ksft/kselftest_harness.h
	@mkdir -p $(B)/unit
	$(CC) $(UNIT_SAN) -DCF_VECTORS='"$(CURDIR)/selftests/vectors/tokens.txt"' -DCF_SC_DEFAULT='"$(CURDIR)/selftests/vectors/seccomp-default.json"' -DCF_PROFILES='"$(CURDIR)/$(B)/guest/share/capfence/profiles"' $< $(UNIT_LIB) -lsodium -lmnl $(NET_LIBS) -lpthread -o $@

# capfenced's state machine against the module model and a fake store
$(B)/unit/test_agent: selftests/unit/test_agent.c tools/capfenced/agent_core.c tools/capfenced/agent_core.h \
		selftests/fleet/module_model.c selftests/fleet/module_model.h $(UNIT_LIB) $(LIB_HDRS) \
		$(wildcard selftests/unit/*.h) $(B)/ksft/kselftest_harness.h
	@mkdir -p $(B)/unit
	$(CC) $(UNIT_SAN) -Itools/capfenced -Iselftests/fleet $< tools/capfenced/agent_core.c selftests/fleet/module_model.c $(UNIT_LIB) -lsodium -lmnl $(NET_LIBS) -lpthread -o $@

# VM tests: kselftest-harness programs run in the guest.
$(B)/guest/bin/%: selftests/kernel/%.c $(VMT_COMMON) $(wildcard selftests/kernel/*.h) $(LIB_A) $(LIB_HDRS) $(B)/ksft/kselftest_harness.h
	@mkdir -p $(B)/guest/bin
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -Iselftests/kernel -I$(B)/bench -DCF_VECTORS='"/usr/share/capfence/tokens.txt"' $< $(VMT_COMMON) $(LIB_A) -lsodium -lmnl $(SC_LIBS) -luring -lbpf -lelf -lz -lpthread -o $@

# The built-in LSM's in-tree selftest (tools/testing/selftests/capfence/ in
# make patches' series), built as the kernel tree would: the uapi header
# and the harness one directory up; it runs on every kernel (the family's
# tests on the module too)
$(B)/guest/bin/capfence_test: lsm/builtin/selftests/capfence_test.c $(B)/ksft/kselftest_harness.h include/uapi/linux/capfence.h
	@mkdir -p $(B)/guest/bin $(B)/intree/capfence
	@cp $(B)/ksft/kselftest_harness.h $(B)/ksft/kselftest.h $(B)/intree/
	@cp $< $(B)/intree/capfence/
	$(CC) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror -O2 -Iinclude/uapi $(B)/intree/capfence/capfence_test.c -o $@
VMT_BINS += $(B)/guest/bin/capfence_test

# the lifecycle test offers the no-op BPF-LSM programs as hooks
$(B)/guest/bin/lifecycle_test: $(B)/bench/noop-lsm.skel.h

# a BPF-LSM program that is not capfence's, calling its kfuncs
$(B)/lsm/foreign.bpf.o: selftests/kernel/foreign.bpf.c $(B)/lsm/vmlinux.h
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 -I$(B)/lsm -c $< -o $@.full
	llvm-strip -g $@.full -o $@

$(B)/lsm/foreign.skel.h: $(B)/lsm/foreign.bpf.o
	bpftool gen skeleton $< name foreign_bpf > $@

# and one that reads the module's cookie and forges a call with it
$(B)/lsm/forger.bpf.o: selftests/kernel/forger.bpf.c $(B)/lsm/vmlinux.h
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 -I$(B)/lsm -c $< -o $@.full
	llvm-strip -g $@.full -o $@

$(B)/lsm/forger.skel.h: $(B)/lsm/forger.bpf.o
	bpftool gen skeleton $< name forger_bpf > $@

# and one that would skip every LSM's file_permission (fmod_ret)
$(B)/lsm/skipper.bpf.o: selftests/kernel/skipper.bpf.c $(B)/lsm/vmlinux.h
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 -I$(B)/lsm -c $< -o $@.full
	llvm-strip -g $@.full -o $@

$(B)/lsm/skipper.skel.h: $(B)/lsm/skipper.bpf.o
	bpftool gen skeleton $< name skipper_bpf > $@

$(B)/guest/bin/privilege_test: $(B)/lsm/foreign.skel.h $(B)/lsm/forger.skel.h $(B)/lsm/skipper.skel.h

$(B)/guest/share/capfence/%: selftests/vectors/%
	@mkdir -p $(dir $@)
	cp $< $@

# the hook inventory, which inventory_test holds against the running kernel
$(B)/guest/share/capfence/threat-model.md: docs/threat-model.md
	@mkdir -p $(dir $@)
	cp $< $@

$(B)/guest/share/capfence/cli-tests.sh: selftests/cli/cli-tests.sh
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

# Every program built from the shared ABI is rebuilt when it changes.
$(B)/tools/capfence $(B)/tools/capfenced $(UNIT_BINS) $(VMT_BINS) $(GUEST_EXTRA): include/uapi/linux/capfence.h

$(B)/guest/bin/run-vm-tests: selftests/kernel/run-vm-tests
	@mkdir -p $(B)/guest/bin
	cp $< $@

# the container engines' seccomp profiles as Debian ships them (seccomp_test)
ENGINE_PROFILES := $(B)/guest/share/capfence/profiles/containers-seccomp.json \
	$(B)/guest/share/capfence/profiles/moby-default.json
# one run makes both (&: a grouped target: make -j would run it twice at once)
$(ENGINE_PROFILES) &: tools/build/engine-profiles.sh
	tools/build/engine-profiles.sh $(B)/guest/share/capfence/profiles

$(B)/unit/test_seccomp: $(ENGINE_PROFILES)

GUEST_FILES := $(B)/guest/bin/run-vm-tests $(B)/guest/share/capfence/tokens.txt \
	$(B)/guest/share/capfence/seccomp-default.json $(ENGINE_PROFILES) \
	$(B)/guest/share/capfence/threat-model.md \
	$(if $(wildcard selftests/cli/cli-tests.sh),$(B)/guest/share/capfence/cli-tests.sh)

tests: $(UNIT_BINS) $(VMT_BINS) $(GUEST_FILES) $(GUEST_EXTRA) $(foreach k,$(KERNEL),$(call TESTMOD,$(k)))

unit: $(UNIT_BINS) $(B)/tools/capfence $(B)/tools/capfenced
	@mkdir -p $(B)/logs
	@rm -f $(B)/logs/unit.log
	@for t in $(UNIT_BINS); do \
		ASAN_OPTIONS=detect_leaks=1 $$t >> $(B)/logs/unit.log 2>&1 || echo "FAIL: $$t" >> $(B)/logs/unit.log; \
	done; \
	CAPFENCE=$(B)/tools/capfence CAPFENCED=$(B)/tools/capfenced sh selftests/cli/fleet-tests.sh \
		>> $(B)/logs/unit.log 2>&1 || echo "FAIL: selftests/cli/fleet-tests.sh" >> $(B)/logs/unit.log; \
	CAPFENCE=$(B)/tools/capfence CAPFENCED=$(B)/tools/capfenced UNIT_METRICS=$(B)/unit/test_metrics \
		sh selftests/cli/metrics-tests.sh \
		>> $(B)/logs/unit.log 2>&1 || echo "FAIL: selftests/cli/metrics-tests.sh" >> $(B)/logs/unit.log; \
	$(MAKE) -s pytest >/dev/null 2>&1; cat $(B)/logs/pytest.log >> $(B)/logs/unit.log; \
	selftests/summary unit $(B)/logs/unit.log

# One boot of the CLI tests (selftests/cli/cli-tests.sh) on kernel $$k, a
# shell fragment for the loops of vmtest and cli-check.
CLI_BOOT = t0=$$(date +%s); \
	$(VMRUN) --kernel $$k --timeout 600 -- sh /usr/share/capfence/cli-tests.sh > $(B)/logs/cli-$$k.log 2>&1; \
	rc=$$?; grep -E '^(not ok|\# Totals)|^run:' $(B)/logs/cli-$$k.log; \
	[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/cli-$$k.log; \
	echo "\# time: cli $$k $$(( $$(date +%s) - t0 )) s" >> $(B)/logs/cli-$$k.log; \
	selftests/summary "cli $$k" $(B)/logs/cli-$$k.log

# Per kernel, two boots: the kernel tests, then the CLI tests on a fresh
# module (they use the seed's fixed epoch ids 41 and 42). Logs:
# build/logs/{vm,cli}-<series>.log. The kernel tests run with the stock
# protocol modules loaded whose rows the protocol inventory tries
# (docs/threat-model.md; SCTP for net_mediation_test too).
VM_KMODS := sctp vsock_loopback l2tp_ip l2tp_ip6 dccp_ipv4 dccp_ipv6 tipc rds kcm smc af_key af_alg
vmtest: all
	@mkdir -p $(B)/logs
	-@for k in $(KERNEL); do ( \
		t0=$$(date +%s); \
		$(VMRUN) --kernel $$k --timeout 900 $(addprefix --kmod ,$(VM_KMODS)) -- run-vm-tests > $(B)/logs/vm-$$k.log 2>&1; \
		rc=$$?; grep -E '^(not ok|# (FAIL|Totals))|^FAIL|^run:' $(B)/logs/vm-$$k.log; \
		[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/vm-$$k.log; \
		echo "# time: vm $$k $$(( $$(date +%s) - t0 )) s" >> $(B)/logs/vm-$$k.log; \
		selftests/summary "vm $$k" $(B)/logs/vm-$$k.log; \
		[ -f selftests/cli/cli-tests.sh ] || exit 0; \
		$(CLI_BOOT); \
		t0=$$(date +%s); \
		$(VMRUN) --kernel $$k --timeout 600 --overlay $(PYROOT) -- sh /usr/share/capfence/python-tests/run-vm-tests > $(B)/logs/py-$$k.log 2>&1; \
		rc=$$?; grep -E ' (FAILED|ERROR)|^# Totals|^run:' $(B)/logs/py-$$k.log; \
		[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/py-$$k.log; \
		echo "# time: python $$k $$(( $$(date +%s) - t0 )) s" >> $(B)/logs/py-$$k.log; \
		selftests/summary "python $$k" $(B)/logs/py-$$k.log ) $(KPAR) \
	done; wait
	@cd $(B)/logs && $(CURDIR)/selftests/summary vm+cli+python $(foreach k,$(KERNEL),vm-$(k).log cli-$(k).log py-$(k).log) >/dev/null

# The CLI tests alone (selftests/cli/cli-tests.sh), one boot per kernel of
# KERNEL, on a fresh module: make cli-check KERNEL=6.1. Log:
# build/logs/cli-<series>.log.
cli-check: all
	@mkdir -p $(B)/logs
	-@for k in $(KERNEL); do \
		$(CLI_BOOT); \
	done

# The layers of kernel/ (tools/build/layer-check.py, and its test: each
# deliberate violation fails), and each header of kernel/ compiled alone
# against the oldest kernel of KERNEL. Log: build/logs/layer.log.
HDRK := $(firstword $(KERNEL))
layer-check: $(call KB,$(HDRK))/release $(if $(filter 6.12,$(HDRK)),$(TRIXIE)/.key)
	@mkdir -p $(B)/logs
	@{ selftests/layers/layer-check-test.sh; \
		tools/build/hdr-check.sh $(call KB,$(HDRK)) $(if $(filter 6.12,$(HDRK)),$(TRIXIE)); } \
		> $(B)/logs/layer.log 2>&1; \
		grep -E '^(not ok|# )' $(B)/logs/layer.log; \
		selftests/summary layer $(B)/logs/layer.log

# The host stages once, the VM stages on each kernel of KERNEL; one line
# "N passed, N failed" at the end covers them all.
# The build uses every core (JOBS). Then two lanes side by side: the host
# stages (and class-check, which is mostly builds) beside the first VM
# stages, whose guests leave about a third of the CPU idle; the host
# lane's lines are printed when both are done. The other VM stages follow,
# one after the other, each booting its kernels side by side.
check:
	@$(MAKE) -j$(JOBS) all
	@mkdir -p $(B)/logs && rm -f $(B)/logs/*.log $(B)/logs/times.txt $(B)/logs/host-lane.out
	@stage() { local s=$$(date +%s); $(MAKE) -s $$1; \
		echo "$$1 $$(( $$(date +%s) - s )) s" >> $(B)/logs/times.txt; }; \
		{ stage layer-check; stage spec-check; stage unit; stage abi-check; stage install-check; \
		  $(if $(filter 6.1,$(KERNEL)),stage class-check;) } > $(B)/logs/host-lane.out 2>&1 & \
		stage fuzz-check; stage vmtest; wait; cat $(B)/logs/host-lane.out; \
		stage ecotest; stage matrix-check; stage agent-check; \
		$(if $(filter 6.1,$(KERNEL)),stage check-fleet;) \
		echo "# time: $$(paste -sd, $(B)/logs/times.txt | sed 's/,/, /g')"; \
		cd $(B)/logs && for k in $(KERNEL); do \
			$(CURDIR)/selftests/summary "kernel $$k" vm-$$k.log cli-$$k.log py-$$k.log eco-$$k.log matrix-$$k.log nlfuzz-$$k.log agent-$$k.log; \
		done; \
		$(CURDIR)/selftests/failures *.log; \
		$(CURDIR)/selftests/summary total unit.log abi.log spec.log layer.log $(foreach k,$(KERNEL),install-$(k).log) fuzz.log \
			$(foreach k,$(KERNEL),vm-$(k).log cli-$(k).log py-$(k).log eco-$(k).log matrix-$(k).log agent-$(k).log) \
			$(if $(filter 6.1,$(KERNEL)),class.log fleet.log)

# The README's quick start (make demo, make check) in a fresh minimal
# Debian 12 root built with debootstrap; as root.
check-fresh:
	@selftests/fresh/check-fresh

demo:
	@$(MAKE) -j$(JOBS) all
	@$(VMRUN) --kernel $(KNEWEST) --timeout 600 --add selftests/demo/seed-scenario:/root/seed-scenario -- sh /root/seed-scenario

# security/capfence/ made from kernel/ and lsm/builtin/, built into a
# minimal kernel with ccache (tools/build/kernel-builtin.sh)
kernel-builtin: deps
	@$(if $(filter 1,$(CAPFENCE_NO_DEPS)),:,tools/build/deps.sh linux-source-6.12)
	@tools/build/kernel-builtin.sh $(B)/kernel-builtin

# The VM test programs on the built-in kernel, one boot (run-vm-tests),
# then the CLI tests in a second: a test about the module's front end
# (loading, attaching, detaching, unloading, BPF attach points) skips
# saying why, the isolation check gives way to the netlink fuzzer alone.
# Not part of make check (its time budget): run on demand. Logs:
# build/logs/vm-builtin.log, build/logs/cli-builtin.log.
check-builtin: all kernel-builtin
	@mkdir -p $(B)/logs
	-@t0=$$(date +%s); \
	$(VMRUN) --kernel builtin --timeout 1800 -- run-vm-tests > $(B)/logs/vm-builtin.log 2>&1; \
	rc=$$?; grep -E '^(not ok|# (FAIL|Totals))|^FAIL|^run:' $(B)/logs/vm-builtin.log; \
	[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/vm-builtin.log; \
	echo "# skipped on the built-in kernel:"; \
	awk '/^# running /{p=$$3} /^#  RUN /{t=$$3} /^ok [0-9]+ .*# SKIP /{sub(/^.*# SKIP /, ""); print "#   " p " " t ": " $$0} \
		/^# isolation: skipped/{print "#   " substr($$0, 3)}' $(B)/logs/vm-builtin.log; \
	echo "# time: vm builtin $$(( $$(date +%s) - t0 )) s" | tee -a $(B)/logs/vm-builtin.log; \
	selftests/summary "vm builtin" $(B)/logs/vm-builtin.log; \
	k=builtin; $(CLI_BOOT); \
	grep -E '^ok [0-9]+ - .* # SKIP ' $(B)/logs/cli-builtin.log | sed 's/^ok [0-9]* - /#   cli: /'
	@cd $(B)/logs && $(CURDIR)/selftests/summary "builtin (vm+cli)" vm-builtin.log cli-builtin.log

# the same as a format-patch series against linux-source-6.12, each patch
# checked by checkpatch.pl --strict (tools/build/patches.sh)
patches: kernel-builtin
	@tools/build/patches.sh $(B)/kernel-builtin

checkpatch: $(LSRC)/.stamp
	$(LSRC)/scripts/checkpatch.pl --strict --no-tree --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f $(filter-out kernel/netlink_gen.%,$(wildcard kernel/*.c kernel/*.h)) lsm/*.c lsm/builtin/*.c lsm/builtin/*.h include/uapi/linux/capfence.h \
		selftests/kernel/seqwrap/seqwrap.c

clean:
	rm -rf $(B)/tools $(B)/lib $(B)/lsm $(B)/unit $(B)/guest $(B)/logs $(B)/kernel-*/module \
		$(B)/kernel-*/testmod \
		$(B)/sdk $(B)/pyroot $(B)/examples

distclean: clean
	rm -rf $(B)
