# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The capfence Python package (python/capfence, ctypes over
# libcapfence.so.2), included by the top Makefile:
#
#   make pytest      its host tests (no kernel), with Debian's python3-pytest
#   (make vmtest)    one more boot per kernel: the host tests and the tests
#                    against the module, in the guest (build/logs/py-*.log)

PY_SRCS    := $(wildcard python/capfence/*.py) python/capfence/py.typed
PY_TESTS   := $(wildcard python/tests/*.py) python/tests/run-vm-tests
PYROOT     := $(B)/pyroot
HOST_PY    := /usr/bin/python3

.PHONY: pytest

pytest: $(LIB2_SO)
	@mkdir -p $(B)/logs
	@CAPFENCE_LIBRARY=$(CURDIR)/$(LIB2_SO) PYTHONPATH=$(CURDIR)/python \
		$(HOST_PY) -m pytest -q -p no:cacheprovider python/tests/test_host.py \
		> $(B)/logs/pytest.log 2>&1; rc=$$?; \
	tail -n 1 $(B)/logs/pytest.log; \
	p=$$(tail -n 1 $(B)/logs/pytest.log | grep -o '[0-9]* passed' | cut -d' ' -f1); \
	f=$$(tail -n 1 $(B)/logs/pytest.log | grep -o '[0-9]* failed' | cut -d' ' -f1); \
	[ $$rc -ne 0 ] && [ -z "$$f" ] && f=1; \
	echo "# Totals: pass:$${p:-0} fail:$${f:-0} xfail:0 xpass:0 skip:0 error:0" >> $(B)/logs/pytest.log; \
	exit $$rc

# An install as a distribution would make it (PREFIX=/usr) in build/sdk,
# the examples built against it with pkg-config only, and the guest
# overlay: python3, pytest, the installed libcapfence.so.1 and .so.2 and package,
# the tests and the examples.
SDK        := $(B)/sdk
SDK_KO      = $(call KO,$(firstword $(KERNEL)))

$(SDK)/.stamp: $(LIB_SO) $(LIB2_SO) $(LIB_A) $(LIB_HDRS) $(PY_SRCS) tools/lib/capfence.pc.in docs/libcapfence.3 \
		tools/build/install.sh $(B)/tools/capfence $(SDK_KO)
	@rm -rf $(SDK)
	@tools/build/install.sh install $(SDK) /usr $(SDK_KO) $(B)/tools/capfence $(LIB_OUT) > /dev/null
	@touch $@

$(B)/examples/orchestrator: examples/orchestrator.c examples/Makefile $(SDK)/.stamp
	@mkdir -p $(B)/examples && rm -f $(B)/examples/orchestrator $(B)/examples/orchestrator.c $(B)/examples/Makefile
	@cp examples/orchestrator.c examples/Makefile $(B)/examples/
	PKG_CONFIG_PATH=$(CURDIR)/$(SDK)/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(CURDIR)/$(SDK) \
		$(MAKE) -s -C $(B)/examples orchestrator

# the 2 interface's program (selftests/abi/abi-2.c), with pkg-config capfence-2
$(B)/abi-2/abi-2: selftests/abi/abi-2.c $(SDK)/.stamp
	@mkdir -p $(dir $@)
	PKG_CONFIG_PATH=$(CURDIR)/$(SDK)/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(CURDIR)/$(SDK) sh -c \
		'$(CC) $(CFLAGS_USR) $$(pkg-config --cflags capfence-2) $< $$(pkg-config --libs capfence-2) -o $@'

# make bench's delegation rates, built the same way
$(B)/examples/bench-deleg: selftests/bench/bench-deleg.c $(SDK)/.stamp
	@mkdir -p $(dir $@)
	PKG_CONFIG_PATH=$(CURDIR)/$(SDK)/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(CURDIR)/$(SDK) sh -c \
		'$(CC) $(CFLAGS_USR) $$(pkg-config --cflags capfence) $< $$(pkg-config --libs capfence) -o $@'

$(PYROOT)/.stamp: $(PY_TESTS) $(SDK)/.stamp $(B)/examples/orchestrator examples/orchestrator.py examples/tutorial.py tools/build/pyroot.sh \
		$(B)/examples/bench-deleg selftests/bench/bench_deleg.py selftests/bench/bench-deleg.sh \
		$(YNL)/version docs/netlink/capfence.yaml selftests/netlink/ynl-test.py \
		$(B)/abi-1.3/abi-1.3 $(B)/abi-2/abi-2
	@tools/build/pyroot.sh $(PYROOT) $(SDK)
	@mkdir -p $(PYROOT)/usr/share/capfence/python-tests $(PYROOT)/usr/share/capfence/examples
	@cp python/tests/*.py python/tests/run-vm-tests $(PYROOT)/usr/share/capfence/python-tests/
	@# a program built against libcapfence 1.3, run against this one, and
	@# one of the 2 interface
	@cp $(B)/abi-1.3/abi-1.3 $(B)/abi-2/abi-2 $(PYROOT)/usr/share/capfence/python-tests/
	@cp $(B)/examples/orchestrator examples/orchestrator.py examples/tutorial.py $(PYROOT)/usr/share/capfence/examples/
	@mkdir -p $(PYROOT)/usr/share/capfence/bench
	@cp $(B)/examples/bench-deleg selftests/bench/bench_deleg.py selftests/bench/bench-deleg.sh \
		$(PYROOT)/usr/share/capfence/bench/
	@# the kernel's ynl, the spec and the test that drives the module with them
	@mkdir -p $(PYROOT)/usr/share/capfence/ynl
	@cp -a $(YNL)/cli.py $(YNL)/lib $(PYROOT)/usr/share/capfence/ynl/
	@cp docs/netlink/capfence.yaml selftests/netlink/ynl-test.py $(PYROOT)/usr/share/capfence/
	@touch $@

pyroot: $(PYROOT)/.stamp
