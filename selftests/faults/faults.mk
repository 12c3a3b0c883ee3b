# SPDX-License-Identifier: GPL-2.0
#
# Fault injection (included by the top Makefile).
#
#   make check-faults  the debug kernel of `make check-debug` (which has
#                      failslab, fail_page_alloc and fail-nth), booted once:
#                      every control operation and every hook path of a
#                      bound task with its Nth allocation failing, for
#                      N = 1, 2, ... until one completes; then the module
#                      is unloaded and kmemleak scanned. The table of
#                      injection points per operation, the allocation sites
#                      of kernel/ each reaches, and the summary line.
#                      Logs: build/logs/faults.log, build/logs/faults-sites.txt
#                      (+ the console in build/logs/faults-console.log).

# seconds at scale 1: multiplied by DEBUG_TIMEOUT_SCALE (selftests/debug/debug.mk)
FAULTS_VM_TIMEOUT ?= 900

GUEST_EXTRA += $(B)/guest/bin/cf-faults $(B)/guest/bin/cf-faults-probe

$(B)/guest/bin/cf-faults: selftests/faults/faults.c $(VMT_COMMON) $(wildcard selftests/kernel/*.h) $(LIB_SRCS) $(NL_SRCS) $(B)/ksft/kselftest_harness.h
	@mkdir -p $(B)/guest/bin
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -Iselftests/kernel -DCF_VECTORS='"/usr/share/capfence/tokens.txt"' $< $(VMT_COMMON) $(LIB_SRCS) $(NL_SRCS) -lsodium -lmnl $(NET_LIBS) -lpthread -o $@

# static and without libc: as little as possible happens between its
# execve and its report, and nothing of a C library's own failure paths
$(B)/guest/bin/cf-faults-probe: selftests/faults/probe.c
	@mkdir -p $(B)/guest/bin
	$(CC) $(CFLAGS_USR) -static -nostdlib -ffreestanding -fno-stack-protector -fno-pie -no-pie $< -o $@

.PHONY: check-faults

check-faults: module cli tests
	@mkdir -p $(B)/logs
	@rm -f $(B)/logs/faults.log $(B)/logs/faults-sites.txt
	@t0=$$(date +%s); \
	selftests/debug/build-kernel $(DEBUG_DIR) $(B)/debug-module 2>&1 | tee -a $(B)/logs/faults.log; \
	[ $${PIPESTATUS[0]} -eq 0 ] || { echo "FAIL: debug kernel build" >> $(B)/logs/faults.log; exit 1; }; \
	t1=$$(date +%s); \
	CAPFENCE_VM_KERNEL=$(DEBUG_DIR)/bzImage \
	CAPFENCE_VM_MODULE=$(B)/debug-module/capfence.ko \
	CAPFENCE_VM_APPEND="acpi=off" CAPFENCE_VM_MEM=3072 \
	CAPFENCE_VM_LOG=$(CURDIR)/$(B)/logs/faults-console.log \
	CAPFENCE_TIMEOUT_SCALE=$(DEBUG_TIMEOUT_SCALE) \
	$(VMRUN) --timeout $(FAULTS_VM_TIMEOUT) --add selftests/faults/guest-faults:/root/guest-faults -- \
		sh /root/guest-faults >> $(B)/logs/faults.log 2>&1; \
	rc=$$?; t2=$$(date +%s); \
	[ $$rc -lt 125 ] || echo "FAIL: the fault-injection VM failed (exit $$rc)" >> $(B)/logs/faults.log; \
	selftests/faults/sites $(B)/debug-module/capfence.ko $(DEBUG_DIR)/linux-source-6.1 \
		< $(B)/logs/faults.log > $(B)/logs/faults-sites.txt 2>&1 || \
		echo "FAIL: an allocation site of kernel/ was not reached" >> $(B)/logs/faults.log; \
	sed -n '/^# operation /,/^# site /p' $(B)/logs/faults.log | grep -v '^# site '; \
	cat $(B)/logs/faults-sites.txt; \
	echo "# check-faults: kernel+module $$((t1 - t0)) s, VM $$((t2 - t1)) s, total $$((t2 - t0)) s (timeout scale $(DEBUG_TIMEOUT_SCALE), load $$(cut -d' ' -f1-3 /proc/loadavg))" | tee -a $(B)/logs/faults.log; \
	grep -E '^(not ok|# Totals)|^FAIL|^run:|KernelAddressSanitizer' $(B)/logs/faults.log; \
	selftests/summary faults $(B)/logs/faults.log
