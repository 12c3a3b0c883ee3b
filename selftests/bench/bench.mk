# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks and the rolling-update simulator (included by the top Makefile).
#
#   make rollsim       both modes of rollsim at full scale in the VM; writes
#                      build/bench/rollsim.{md,csv,png} and the raw JSON
#   make bench         host figures (libcapfence vs libsodium, the design
#                      note's Python reference), the hook figures (one boot,
#                      -icount) and the netlink, activation and memory
#                      figures (another boot), and delegations per second
#                      through libcapfence, the Python package and the CLI
#                      (a third boot, with the Python overlay), and the
#                      fleet figures (make bench-fleet: etcd and up to 10,000
#                      simulated hosts; make bench-fleet-vm: 2-3 VMs)
#   make bench-check   rollsim at reduced scale in the VM, kselftest output
#   make bench-hooks-icount  the hook figures, the activation figure,
#                      an unbound task's hook cost with the credential table
#                      empty vs full and exec and exercise with 10,000
#                      installed epochs vs 1 (part of make bench), per
#                      kernel of KERNEL (6.1, 6.12):
#                      guest time counts instructions (QEMU -icount, 1 vCPU),
#                      deterministic per-op costs, no TCG noise
#   make bench-epochs  the epochs figure alone, the same way
#   make bench-builtin the built-in LSM (make kernel-builtin), the same
#                      way: each hook figure with capfence left out of lsm=
#                      and built in (unbound, bound), the Landlock
#                      comparison and the memory figure, against the module
#                      on Debian 13's 6.12 (bench-vm hooks, same loops);
#                      writes build/bench/builtin.md
#
# BENCH_PREREQ is what the VM targets build first (default: the module, the
# CLI and the guest programs, like `make demo`).

BENCH_DIR    := selftests/bench
BENCH_OUT    := $(B)/bench
BENCH_PREREQ ?= all
ROLLSIM_N    ?= 4000
ROLLSIM_MEM  ?= 3072
BENCH_COMMON := selftests/kernel/common.c
BENCH_HDRS   := $(wildcard $(BENCH_DIR)/*.h selftests/kernel/common.h) $(LIB_HDRS)

GUEST_EXTRA += $(B)/guest/bin/rollsim $(B)/guest/bin/rollsim-sandbox \
	$(B)/guest/bin/rollsim-check $(B)/guest/bin/bench-vm \
	$(B)/guest/bin/bench-vm-run

$(B)/guest/bin/rollsim: $(BENCH_DIR)/rollsim.c $(BENCH_COMMON) $(LIB_A) $(BENCH_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -Iselftests/kernel $< $(BENCH_COMMON) $(LIB_A) -lsodium -lmnl $(SC_LIBS) -lpthread -o $@

# Static and allocation-free: thousands of these must fit in the guest.
$(B)/guest/bin/rollsim-sandbox: $(BENCH_DIR)/rollsim-sandbox.c $(BENCH_DIR)/rollsim.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) -Os -static $< -o $@

# The BPF-LSM floor: no-op programs on capfence's hooks (bench-vm hooks).
$(BENCH_OUT)/noop-lsm.bpf.o: $(BENCH_DIR)/noop-lsm.bpf.c $(B)/lsm/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 -I$(B)/lsm -c $< -o $@.full
	llvm-strip -g $@.full -o $@

$(BENCH_OUT)/noop-lsm.skel.h: $(BENCH_OUT)/noop-lsm.bpf.o
	bpftool gen skeleton $< name noop_lsm_bpf > $@

$(B)/guest/bin/bench-vm: $(BENCH_DIR)/bench-vm.c $(BENCH_COMMON) $(LIB_A) $(BENCH_HDRS) $(BENCH_OUT)/noop-lsm.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -Iselftests/kernel -I$(BENCH_OUT) $< $(BENCH_COMMON) $(LIB_A) -lsodium -lmnl $(SC_LIBS) -lbpf -lelf -lz -lpthread -o $@

$(B)/guest/bin/rollsim-check: $(BENCH_DIR)/rollsim-check
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

$(B)/guest/bin/bench-vm-run: $(BENCH_DIR)/bench-vm-run
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

$(BENCH_OUT)/bench-host: $(BENCH_DIR)/bench-host.c $(LIB_A) $(BENCH_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) $< $(LIB_A) -lsodium -lmnl $(SC_LIBS) -lpthread -o $@

.PHONY: rollsim bench bench-check bench-progs bench-hooks-icount bench-deleg bench-epochs bench-builtin

bench-progs: $(GUEST_EXTRA) $(BENCH_OUT)/bench-host

# gnuplot from Debian's registry, installed when missing (as root).
bench-gnuplot:
	@command -v gnuplot >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then apt-get install -y gnuplot-nox >/dev/null; \
		else echo "rollsim: gnuplot is missing; run: sudo apt-get install -y gnuplot-nox" >&2; exit 1; fi; }

rollsim: $(BENCH_PREREQ) bench-progs bench-gnuplot
	@mkdir -p $(BENCH_OUT)
	CAPFENCE_VM_MEM=$${CAPFENCE_VM_MEM:-$(ROLLSIM_MEM)} $(VMRUN) --timeout 3000 -- \
		sh -c 'rollsim --mode naive --sandboxes $(ROLLSIM_N) --json > /tmp/naive.json && \
		       rollsim --mode capfence --sandboxes $(ROLLSIM_N) --json > /tmp/capfence.json && \
		       echo "@@naive $$(cat /tmp/naive.json)" && echo "@@capfence $$(cat /tmp/capfence.json)"' \
		> $(BENCH_OUT)/rollsim.log 2>&1; rc=$$?; \
		[ $$rc = 0 ] || { tail -30 $(BENCH_OUT)/rollsim.log; echo "rollsim: the VM run failed (exit $$rc)" >&2; exit 1; }
	@sed -n 's/^@@naive //p' $(BENCH_OUT)/rollsim.log | tr -d '\r' > $(BENCH_OUT)/rollsim-naive.json
	@sed -n 's/^@@capfence //p' $(BENCH_OUT)/rollsim.log | tr -d '\r' > $(BENCH_OUT)/rollsim-capfence.json
	@$(BENCH_DIR)/rollsim-report $(BENCH_OUT)/rollsim-naive.json $(BENCH_OUT)/rollsim-capfence.json $(BENCH_OUT)/rollsim

bench-check: $(BENCH_PREREQ) bench-progs
	$(VMRUN) --timeout 1200 -- rollsim-check

# The hook figures run in a boot of their own in which guest time counts
# instructions (-icount shift=2: 4 ns per guest instruction, sleep=off: no
# warp while idle; 1 vCPU). Wall time under TCG spreads by 10-35 % between
# rounds of the same case, far wider than the 2 % budgets; instruction
# counts repeat to within 0.3 %. `selftests/vm/run -- bench-vm hooks` gives
# the wall-time figures.
BENCH_ICOUNT := CAPFENCE_VM_SMP=1 CAPFENCE_VM_QEMU="-icount shift=2,sleep=off"
# The activation figure (epoch activation with 1 vs BENCH_ACT_TASKS bound
# tasks) runs in the same boot, after the hooks: under plain TCG its wall
# time measured 0.92 in one run and 2.75 in another; guest instruction
# counts repeat.
BENCH_ACT_TASKS ?= 4000
# The epochs figure: exec (the first into an epoch, which activates it) and
# a held token's exercise with 1, BENCH_EPOCHS and 1 again installed epochs.
BENCH_EPOCHS ?= 10000

# The VM figures run on each kernel of KERNEL; their names carry the kernel
# (figure@6.1, figure@6.12) in build/bench/bench-{hooks,vm}-<series>.txt.
BENCH_TAG := sed 's/^\(bench: [^ ]*\)/\1@'"$$k"'/'

bench: $(BENCH_PREREQ) bench-progs
	@mkdir -p $(BENCH_OUT)
	@$(BENCH_OUT)/bench-host $(BENCH_DIR)/seed-reference.py | tee $(BENCH_OUT)/bench-host.txt
	@$(MAKE) -s bench-hooks-icount
	@for k in $(KERNEL); do \
		$(VMRUN) --kernel $$k --timeout 2400 -- bench-vm-run > $(BENCH_OUT)/bench-vm-$$k.log 2>&1; rc=$$?; \
		{ echo "# kernel $$k"; grep -E '^(bench:|#)' $(BENCH_OUT)/bench-vm-$$k.log | tr -d '\r' | $(BENCH_TAG); } \
			> $(BENCH_OUT)/bench-vm-$$k.txt; \
		cat $(BENCH_OUT)/bench-vm-$$k.txt; \
		[ $$rc = 0 ] || { tail -20 $(BENCH_OUT)/bench-vm-$$k.log; echo "bench: the VM run failed (exit $$rc)" >&2; exit 1; }; \
	done
	@$(MAKE) -s bench-deleg
	@$(MAKE) -s bench-fleet
	@$(MAKE) -s bench-fleet-vm
	@$(BENCH_DIR)/bench-table $(BENCH_OUT)/bench-host.txt \
		$(foreach k,$(KERNEL),$(BENCH_OUT)/bench-hooks-$(k).txt $(BENCH_OUT)/bench-vm-$(k).txt \
			$(BENCH_OUT)/bench-deleg-$(k).txt) | tee $(BENCH_OUT)/bench.md

# Delegations per second, per kernel, all three paths in one boot.
bench-deleg: $(BENCH_PREREQ) pyroot
	@mkdir -p $(BENCH_OUT)
	@for k in $(KERNEL); do \
		$(VMRUN) --kernel $$k --timeout 900 --overlay $(PYROOT) -- sh /usr/share/capfence/bench/bench-deleg.sh \
			> $(BENCH_OUT)/bench-deleg-$$k.log 2>&1; rc=$$?; \
		{ echo "# delegations per second on $$k (TCG wall time)"; \
		  grep -E '^(bench:|#)' $(BENCH_OUT)/bench-deleg-$$k.log | tr -d '\r' | $(BENCH_TAG); } \
			> $(BENCH_OUT)/bench-deleg-$$k.txt; cat $(BENCH_OUT)/bench-deleg-$$k.txt; \
		[ $$rc = 0 ] || { tail -20 $(BENCH_OUT)/bench-deleg-$$k.log; echo "bench: the VM run failed (exit $$rc)" >&2; exit 1; }; \
	done

bench-hooks-icount: $(BENCH_PREREQ) bench-progs
	@mkdir -p $(BENCH_OUT)
	@for k in $(KERNEL); do \
		$(BENCH_ICOUNT) $(VMRUN) --kernel $$k --timeout 900 -- \
			sh -c 'bench-vm hooks 2 50 0 && bench-vm activate $(BENCH_ACT_TASKS) && bench-vm credtable && bench-vm epochs $(BENCH_EPOCHS)' \
			> $(BENCH_OUT)/bench-hooks-icount-$$k.log 2>&1; rc=$$?; \
		{ echo "# hooks on $$k: guest time = 4 ns per guest instruction (QEMU -icount shift=2), 1 vCPU"; \
		  grep -E '^(bench:|#)' $(BENCH_OUT)/bench-hooks-icount-$$k.log | tr -d '\r' | $(BENCH_TAG); } \
			> $(BENCH_OUT)/bench-hooks-$$k.txt; cat $(BENCH_OUT)/bench-hooks-$$k.txt; \
		[ $$rc = 0 ] || { tail -20 $(BENCH_OUT)/bench-hooks-icount-$$k.log; echo "bench: the VM run failed (exit $$rc)" >&2; exit 1; }; \
	done

bench-epochs: $(BENCH_PREREQ) bench-progs
	@mkdir -p $(BENCH_OUT)
	@for k in $(KERNEL); do \
		$(BENCH_ICOUNT) $(VMRUN) --kernel $$k --timeout 1800 -- bench-vm epochs $(BENCH_EPOCHS) \
			> $(BENCH_OUT)/bench-epochs-$$k.log 2>&1; rc=$$?; \
		{ echo "# epochs on $$k: guest time = 4 ns per guest instruction (QEMU -icount shift=2), 1 vCPU"; \
		  grep -E '^(bench:|#)' $(BENCH_OUT)/bench-epochs-$$k.log | tr -d '\r' | $(BENCH_TAG); } \
			> $(BENCH_OUT)/bench-epochs-$$k.txt; cat $(BENCH_OUT)/bench-epochs-$$k.txt; \
		[ $$rc = 0 ] || { tail -20 $(BENCH_OUT)/bench-epochs-$$k.log; echo "bench: the VM run failed (exit $$rc)" >&2; exit 1; }; \
	done

# The built-in LSM: three -icount boots, one make run. capfence cannot be
# unloaded from a kernel it is built into, so "left out" is the same image
# booted with lsm=landlock; "in" with lsm=landlock,capfence (the default);
# the module's figures come from bench-vm hooks on the stock 6.12.
BENCH_BI_ROUNDS ?= 3
BENCH_BI_MS     ?= 50
bench-builtin: $(BENCH_PREREQ) bench-progs kernel-builtin
	@mkdir -p $(BENCH_OUT)
	@for c in out:landlock in:landlock,capfence; do \
		$(BENCH_ICOUNT) $(VMRUN) --kernel builtin --lsm $${c#*:} --timeout 2400 -- \
			bench-vm builtin $(BENCH_BI_ROUNDS) $(BENCH_BI_MS) \
			> $(BENCH_OUT)/bench-builtin-$${c%%:*}.log 2>&1; rc=$$?; \
		{ echo "# built-in LSM, lsm=$${c#*:}: guest time = 4 ns per guest instruction (QEMU -icount shift=2), 1 vCPU"; \
		  grep -E '^(bench:|#)' $(BENCH_OUT)/bench-builtin-$${c%%:*}.log | tr -d '\r'; } \
			> $(BENCH_OUT)/bench-builtin-$${c%%:*}.txt; cat $(BENCH_OUT)/bench-builtin-$${c%%:*}.txt; \
		[ $$rc = 0 ] || { tail -20 $(BENCH_OUT)/bench-builtin-$${c%%:*}.log; echo "bench: the VM run failed (exit $$rc)" >&2; exit 1; }; \
	done
	@$(BENCH_ICOUNT) $(VMRUN) --kernel 6.12 --timeout 2400 -- bench-vm hooks $(BENCH_BI_ROUNDS) $(BENCH_BI_MS) 0 \
		> $(BENCH_OUT)/bench-builtin-module.log 2>&1; rc=$$?; \
	{ echo "# capfence.ko on Debian 13's 6.12, the same loops (-icount shift=2, 1 vCPU)"; \
	  grep -E '^(bench:|#)' $(BENCH_OUT)/bench-builtin-module.log | tr -d '\r'; } > $(BENCH_OUT)/bench-builtin-module.txt; \
	cat $(BENCH_OUT)/bench-builtin-module.txt; \
	[ $$rc = 0 ] || { tail -20 $(BENCH_OUT)/bench-builtin-module.log; echo "bench: the VM run failed (exit $$rc)" >&2; exit 1; }
	@$(BENCH_DIR)/bench-builtin-table $(BENCH_OUT)/bench-builtin-out.txt $(BENCH_OUT)/bench-builtin-in.txt \
		$(BENCH_OUT)/bench-builtin-module.txt | tee $(BENCH_OUT)/builtin.md
