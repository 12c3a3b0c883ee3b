# SPDX-License-Identifier: GPL-2.0
#
# Fuzzing (included by the top Makefile).
#
#   make fuzz        every libFuzzer target for FUZZ_SECONDS (60) each, then
#                    the netlink fuzzer in the VM with FUZZ_NL_MESSAGES
#                    (100000) random messages over four identities,
#                    plus an invalid burst and the 2^64-1 epoch id
#   make fuzz-check  the same briefly: FUZZ_CHECK_SECONDS (5) per target and
#                    FUZZ_CHECK_NL_MESSAGES (5000); kselftest lines and
#                    "# Totals:" in build/logs/fuzz.log
#
# libFuzzer targets are host programs (clang, ASan + UBSan + libFuzzer) over
# libcapfence; the netlink fuzzer (nlfuzz) is a guest program.

FUZZ_CC              ?= clang
FUZZ_SECONDS         ?= 60
FUZZ_CHECK_SECONDS   ?= 5
FUZZ_NL_MESSAGES     ?= 100000
FUZZ_CHECK_NL_MESSAGES ?= 5000
FUZZ_TARGETS := $(patsubst selftests/fuzz/fuzz_%.c,%,$(wildcard selftests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

GUEST_EXTRA += $(if $(wildcard selftests/fuzz/nlfuzz.c),$(B)/guest/bin/nlfuzz)

.PHONY: fuzz fuzz-build fuzz-check

$(B)/fuzz/fuzz_%: selftests/fuzz/fuzz_%.c selftests/fuzz/fuzz.h $(LIB_PURE_SRCS) $(LIB_HDRS) | deps
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(CPPFLAGS_USR) $< $(LIB_PURE_SRCS) -lsodium $(SC_LIBS) -o $@

$(B)/guest/bin/nlfuzz: selftests/fuzz/nlfuzz.c $(VMT_COMMON) $(wildcard selftests/kernel/*.h) $(LIB_A)
	@mkdir -p $(B)/guest/bin
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -Iselftests/kernel $< $(VMT_COMMON) $(LIB_A) -lsodium -lmnl $(SC_LIBS) -lpthread -o $@

fuzz-build: $(FUZZ_BINS) $(B)/guest/bin/nlfuzz

# One VM boot per kernel for the netlink fuzzer (build/logs/nlfuzz-<series>.log);
# its output joins the libFuzzer lines.
define fuzz_run
	@mkdir -p $(B)/logs
	@rm -f $(B)/logs/fuzz.log
	@selftests/fuzz/run-fuzz $(B) $(1) $(FUZZ_TARGETS) 2>&1 | tee -a $(B)/logs/fuzz.log | \
		grep -E '^(not ok|ok|# Totals)|^# .*(fails|invariant|ERROR)'
	@for k in $(KERNEL); do ( \
		t0=$$(date +%s); \
		$(VMRUN) --kernel $$k --timeout $(3) -- nlfuzz --messages $(2) $(4) > $(B)/logs/nlfuzz-$$k.log 2>&1; \
		rc=$$?; [ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/nlfuzz-$$k.log; \
		echo "# time: nlfuzz $$k $$(( $$(date +%s) - t0 )) s" >> $(B)/logs/nlfuzz-$$k.log ) $(KPAR) \
	done; wait; \
	for k in $(KERNEL); do \
		cat $(B)/logs/nlfuzz-$$k.log >> $(B)/logs/fuzz.log; \
		grep -E '^(not ok|ok|# Totals)|^run:|^FAIL' $(B)/logs/nlfuzz-$$k.log | sed "s/^/[$$k] /"; \
	done
	@selftests/summary fuzz $(B)/logs/fuzz.log
endef

fuzz: module cli tests fuzz-build
	$(call fuzz_run,$(FUZZ_SECONDS),$(FUZZ_NL_MESSAGES),3000,--max-epoch)

fuzz-check: module cli tests fuzz-build
	$(call fuzz_run,$(FUZZ_CHECK_SECONDS),$(FUZZ_CHECK_NL_MESSAGES),900,)
