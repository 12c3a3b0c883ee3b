# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel (included by the top Makefile).
#
#   make check-debug   build a kernel from linux-source-6.1 (tinyconfig +
#                      selftests/debug/debug.config: KASAN, lockdep/PROVE_RCU,
#                      DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS, KMEMLEAK, BPF-LSM with
#                      module BTF) into build/debug-kernel, capfence.ko against
#                      it into build/debug-module, then boot it and run every VM
#                      test, the stress test (CFT_STRESS_SECONDS, 60), the
#                      netlink fuzzer, load/attach/detach/unload cycles and a
#                      kmemleak scan. Log: build/logs/debug.log (+ the console
#                      in build/logs/debug-console.log).
#
# Separate from `make check`: the first kernel build alone takes ~20 minutes
# on two cores (ccache, when installed, makes a rebuild in a fresh clone
# much shorter; with the kernel config unchanged only the module is built).
#
# DEBUG_TIMEOUT_SCALE is the one factor by which every time budget of the
# debug and fault-injection runs is multiplied (CAPFENCE_TIMEOUT_SCALE:
# each VM test's, the guest scripts' waits and the VM's own timeout,
# DEBUG_VM_TIMEOUT / FAULTS_VM_TIMEOUT seconds at scale 1): the debug kernel
# under TCG is several times slower than the stock one, and the machine
# may be busy. A timeout that still trips names the test and what it was
# waiting for.

# the kernel tree may live outside the clone (.ci/scheduled keeps one per
# machine); the module is always built in $(B)/debug-module
DEBUG_DIR          ?= $(B)/debug-kernel
DEBUG_STRESS_SECONDS ?= 60
DEBUG_NL_MESSAGES  ?= 20000
DEBUG_TIMEOUT_SCALE ?= 10
DEBUG_VM_TIMEOUT   ?= 900

.PHONY: debug-kernel check-debug

debug-kernel: | deps
	@mkdir -p $(B)/logs
	@selftests/debug/build-kernel $(DEBUG_DIR) $(B)/debug-module

check-debug: module cli tests
	@mkdir -p $(B)/logs
	@rm -f $(B)/logs/debug.log
	@t0=$$(date +%s); \
	selftests/debug/build-kernel $(DEBUG_DIR) $(B)/debug-module 2>&1 | tee -a $(B)/logs/debug.log; \
	[ $${PIPESTATUS[0]} -eq 0 ] || { echo "FAIL: debug kernel build" >> $(B)/logs/debug.log; exit 1; }; \
	t1=$$(date +%s); \
	CAPFENCE_VM_KERNEL=$(DEBUG_DIR)/bzImage \
	CAPFENCE_VM_MODULE=$(B)/debug-module/capfence.ko \
	CAPFENCE_VM_APPEND="acpi=off" CAPFENCE_VM_MEM=3072 \
	CAPFENCE_VM_LOG=$(CURDIR)/$(B)/logs/debug-console.log \
	CAPFENCE_TIMEOUT_SCALE=$(DEBUG_TIMEOUT_SCALE) \
	$(VMRUN) --timeout $(DEBUG_VM_TIMEOUT) --add selftests/debug/guest-check:/root/guest-check -- \
		env CFT_STRESS_SECONDS=$(DEBUG_STRESS_SECONDS) \
		CFT_DEBUG_NL_MESSAGES=$(DEBUG_NL_MESSAGES) sh /root/guest-check \
		>> $(B)/logs/debug.log 2>&1; \
	rc=$$?; t2=$$(date +%s); \
	[ $$rc -lt 125 ] || echo "FAIL: the debug VM failed (exit $$rc)" >> $(B)/logs/debug.log; \
	echo "# check-debug: kernel+module $$((t1 - t0)) s, VM $$((t2 - t1)) s, total $$((t2 - t0)) s (timeout scale $(DEBUG_TIMEOUT_SCALE), load $$(cut -d' ' -f1-3 /proc/loadavg))" | tee -a $(B)/logs/debug.log; \
	grep -E '^(not ok|# Totals)|^FAIL|^run:|KernelAddressSanitizer' $(B)/logs/debug.log; \
	selftests/summary debug $(B)/logs/debug.log
