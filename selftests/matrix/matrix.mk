# SPDX-License-Identifier: GPL-2.0
#
# The compatibility matrix, included by the top Makefile:
#
#   make matrix-check  one VM boot per kernel of KERNEL: real Debian 12
#                      programs (python3, curl, git, sshd and ssh, bwrap,
#                      QEMU) each do a real job unbound and bound to the
#                      least epoch it needs, under container engines'
#                      profiles as Debian ships them
#                      (selftests/matrix/matrix-test.sh). Logs:
#                      build/logs/matrix-<series>.log.
#
# The programs come from Debian's packages, downloaded and unpacked into
# build/matrix-root (tools/build/matrix-root.sh), never installed.

MATRIXROOT := $(B)/matrix-root
MATRIX_FILES := $(addprefix $(B)/guest/share/capfence/matrix/,matrix-test.sh explain.py py-job.py)

$(MATRIXROOT)/.stamp: tools/build/matrix-root.sh | deps
	@tools/build/matrix-root.sh $(MATRIXROOT)
	@touch $@

$(B)/guest/share/capfence/matrix/%: selftests/matrix/%
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

GUEST_EXTRA += $(MATRIX_FILES)

.PHONY: matrix-root matrix-check
matrix-root: $(MATRIXROOT)/.stamp
all: matrix-root

matrix-check: all
	@mkdir -p $(B)/logs
	-@for k in $(KERNEL); do ( \
		t0=$$(date +%s); \
		$(VMRUN) --kernel $$k --timeout 900 --overlay $(PYROOT) --overlay $(MATRIXROOT) \
			-- sh /usr/share/capfence/matrix/matrix-test.sh > $(B)/logs/matrix-$$k.log 2>&1; \
		rc=$$?; grep -E '^(not ok|# Totals)|^run:' $(B)/logs/matrix-$$k.log; \
		[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/matrix-$$k.log; \
		echo "# time: matrix $$k $$(( $$(date +%s) - t0 )) s" >> $(B)/logs/matrix-$$k.log; \
		selftests/summary "matrix $$k" $(B)/logs/matrix-$$k.log ) $(KPAR) \
	done; wait
