# SPDX-License-Identifier: GPL-2.0
#
# capfence: top-level build.
#
#   make            module, BPF programs, CLI, test programs
#   make check      host unit tests (ASan/UBSan), spec, install and fuzz
#                   checks, then the VM, CLI and ecosystem tests
#   make demo       boot the VM and play the seed scenario
#   make check-fresh make demo and make check in a fresh minimal Debian 12 root
#   make bench      benchmarks (figures, side by side)
#   make checkpatch checkpatch.pl --strict on kernel/ and lsm/
#
# Debian's stock cloud kernel is fetched into build/kernel (never installed);
# CAPFENCE_KABI=6.1.0-NN-cloud-amd64 pins its ABI.

.DEFAULT_GOAL := all
SHELL      := /bin/bash
B          := build
KDIR       := $(B)/kernel/headers
LSRC       := $(B)/linux-src
CC         := gcc
CLANG      ?= clang
CFLAGS_USR := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g
CPPFLAGS_USR := -Iinclude -Itools/lib -Itools/capfence -I$(B)/lsm -isystem $(B)/ksft
SAN        := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LIBS       := -lsodium -lmnl -lbpf -lelf -lz
VMRUN      := selftests/vm/run
export CAPFENCE_BUILD := $(CURDIR)/$(B)

LIB_SRCS   := $(wildcard tools/lib/*.c)
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
-include selftests/bench/bench.mk
-include selftests/fuzz/fuzz.mk
-include tools/build/install.mk
-include selftests/debug/debug.mk

.PHONY: all deps module bpf cli tests check check-fresh unit vmtest demo checkpatch clean distclean

all: module cli tests

deps:
	@tools/build/deps.sh

$(LSRC)/.stamp: | deps
	@tools/build/source.sh $(LSRC)

$(B)/kernel/release: $(LSRC)/.stamp
	@tools/build/kernel.sh $(B)/kernel $(LSRC)

$(B)/ksft/kselftest_harness.h: $(LSRC)/.stamp
	@mkdir -p $(B)/ksft
	@cp $(LSRC)/tools/testing/selftests/kselftest_harness.h $(LSRC)/tools/testing/selftests/kselftest.h $(B)/ksft/

# Module BTF is mandatory: kfuncs are invisible to libbpf without it, and
# Kbuild only says "Skipping BTF generation" before exiting 0.
capfence.ko: $(KSRCS) $(B)/kernel/release
	@$(MAKE) -s -C $(KDIR) M=$(CURDIR) modules 2>&1 | tee $(B)/module.log | \
		grep -v -e '^make\[' -e 'Entering directory' -e 'Leaving directory'; \
		test $${PIPESTATUS[0]} -eq 0
	@if grep -q 'Skipping BTF generation' $(B)/module.log; then \
		echo "error: module BTF was not generated; kfuncs would be unusable" >&2; \
		rm -f capfence.ko; exit 1; fi
	@readelf -S capfence.ko | grep -q '\.BTF ' || { echo "error: capfence.ko has no .BTF" >&2; exit 1; }

module: capfence.ko

$(B)/lsm/vmlinux.h: $(B)/kernel/release
	@mkdir -p $(B)/lsm
	bpftool btf dump file $(B)/kernel/vmlinux format c > $@

$(B)/lsm/capfence.bpf.o: lsm/capfence.bpf.c $(B)/lsm/vmlinux.h
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 -I$(B)/lsm -c $< -o $@.full
	llvm-strip -g $@.full -o $@

$(B)/lsm/capfence.skel.h: $(B)/lsm/capfence.bpf.o
	bpftool gen skeleton $< name capfence_bpf > $@

bpf: $(B)/lsm/capfence.skel.h

$(B)/tools/capfence: $(CLI_SRCS) $(LIB_SRCS) $(wildcard tools/capfence/*.h tools/lib/*.h) $(B)/lsm/capfence.skel.h | deps
	@mkdir -p $(B)/tools
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) $(CLI_SRCS) $(LIB_SRCS) $(LIBS) -o $@

cli: $(B)/tools/capfence

# Host unit tests: libcapfence under AddressSanitizer and UBSan.
$(B)/unit/%: selftests/unit/%.c $(LIB_SRCS) $(wildcard tools/lib/*.h selftests/unit/*.h) $(B)/ksft/kselftest_harness.h
	@mkdir -p $(B)/unit
	$(CC) $(CFLAGS_USR) -O1 $(SAN) $(CPPFLAGS_USR) -DCF_VECTORS='"$(CURDIR)/selftests/vectors/tokens.txt"' $< $(LIB_SRCS) -lsodium -o $@

# VM tests: kselftest-harness programs run in the guest.
NL_SRCS := tools/capfence/nl.c
$(B)/guest/bin/%: selftests/kernel/%.c $(VMT_COMMON) $(wildcard selftests/kernel/*.h) $(LIB_SRCS) $(NL_SRCS) $(B)/ksft/kselftest_harness.h
	@mkdir -p $(B)/guest/bin
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -Iselftests/kernel -I$(B)/bench -DCF_VECTORS='"/usr/share/capfence/tokens.txt"' $< $(VMT_COMMON) $(LIB_SRCS) $(NL_SRCS) -lsodium -lmnl -luring -lbpf -lelf -lz -lpthread -o $@

# the lifecycle test offers the no-op BPF-LSM programs as hooks
$(B)/guest/bin/lifecycle_test: $(B)/bench/noop-lsm.skel.h

$(B)/guest/share/capfence/%: selftests/vectors/%
	@mkdir -p $(dir $@)
	cp $< $@

$(B)/guest/share/capfence/cli-tests.sh: selftests/cli/cli-tests.sh
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

$(B)/guest/bin/run-vm-tests: selftests/kernel/run-vm-tests
	@mkdir -p $(B)/guest/bin
	cp $< $@

GUEST_FILES := $(B)/guest/bin/run-vm-tests $(B)/guest/share/capfence/tokens.txt \
	$(if $(wildcard selftests/cli/cli-tests.sh),$(B)/guest/share/capfence/cli-tests.sh)

tests: $(UNIT_BINS) $(VMT_BINS) $(GUEST_FILES) $(GUEST_EXTRA)

unit: $(UNIT_BINS)
	@mkdir -p $(B)/logs
	@rm -f $(B)/logs/unit.log
	@for t in $(UNIT_BINS); do \
		ASAN_OPTIONS=detect_leaks=1 $$t >> $(B)/logs/unit.log 2>&1 || echo "FAIL: $$t" >> $(B)/logs/unit.log; \
	done; \
	selftests/summary unit $(B)/logs/unit.log

# Two boots: the kernel tests, then the CLI tests on a fresh module (they
# use the seed's fixed epoch ids 41 and 42).
vmtest: all
	@mkdir -p $(B)/logs
	-@$(VMRUN) --timeout 900 --kmod sctp -- run-vm-tests > $(B)/logs/vm.log 2>&1; \
		rc=$$?; grep -E '^(not ok|# (FAIL|Totals))|^FAIL|^run:' $(B)/logs/vm.log; \
		[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/vm.log; \
		selftests/summary vm $(B)/logs/vm.log
	-@if [ -f selftests/cli/cli-tests.sh ]; then \
		$(VMRUN) --timeout 600 -- sh /usr/share/capfence/cli-tests.sh > $(B)/logs/cli.log 2>&1; \
		rc=$$?; grep -E '^(not ok|# Totals)|^run:' $(B)/logs/cli.log; \
		[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/cli.log; \
		selftests/summary cli $(B)/logs/cli.log; \
	fi
	@selftests/summary vm+cli $(B)/logs/vm.log $(B)/logs/cli.log >/dev/null

check: all
	@rm -f $(B)/logs/*.log
	@$(MAKE) -s unit; $(MAKE) -s spec-check; $(MAKE) -s install-check; \
		$(MAKE) -s fuzz-check; $(MAKE) -s vmtest; $(MAKE) -s ecotest; \
		cd $(B)/logs && $(CURDIR)/selftests/summary total unit.log spec.log \
			install.log fuzz.log vm.log cli.log eco.log

# The README's quick start (make demo, make check) in a fresh minimal
# Debian 12 root built with debootstrap; as root.
check-fresh:
	@selftests/fresh/check-fresh

demo: all
	@$(VMRUN) --timeout 600 --add selftests/demo/seed-scenario:/root/seed-scenario -- sh /root/seed-scenario

checkpatch: $(LSRC)/.stamp
	$(LSRC)/scripts/checkpatch.pl --strict --no-tree --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f kernel/*.c kernel/*.h lsm/*.c include/uapi/linux/capfence.h

clean:
	-$(MAKE) -s -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(B)/tools $(B)/lsm $(B)/unit $(B)/guest $(B)/logs

distclean: clean
	rm -rf $(B)
