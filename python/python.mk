# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The capfence Python package (python/capfence, ctypes over
# libcapfence.so.1), included by the top Makefile:
#
#   make pytest      its host tests (no kernel), with Debian's python3-pytest
#   (make vmtest)    one more boot per kernel: the host tests and the tests
#                    against the module, in the guest (build/logs/py-*.log)

PY_SRCS    := $(wildcard python/capfence/*.py)
PY_TESTS   := $(wildcard python/tests/*.py) python/tests/run-vm-tests
PYROOT     := $(B)/pyroot
HOST_PY    := /usr/bin/python3

.PHONY: pytest

pytest: $(LIB_SO)
	@mkdir -p $(B)/logs
	@CAPFENCE_LIBRARY=$(CURDIR)/$(LIB_SO) PYTHONPATH=$(CURDIR)/python \
		$(HOST_PY) -m pytest -q -p no:cacheprovider python/tests/test_host.py \
		> $(B)/logs/pytest.log 2>&1; rc=$$?; \
	tail -n 1 $(B)/logs/pytest.log; \
	p=$$(tail -n 1 $(B)/logs/pytest.log | grep -o '[0-9]* passed' | cut -d' ' -f1); \
	f=$$(tail -n 1 $(B)/logs/pytest.log | grep -o '[0-9]* failed' | cut -d' ' -f1); \
	[ $$rc -ne 0 ] && [ -z "$$f" ] && f=1; \
	echo "# Totals: pass:$${p:-0} fail:$${f:-0} xfail:0 xpass:0 skip:0 error:0" >> $(B)/logs/pytest.log; \
	exit $$rc

# the guest overlay: python3, pytest, libcapfence.so.1, the package, tests
$(PYROOT)/.stamp: $(PY_SRCS) $(PY_TESTS) $(LIB_SO) tools/build/pyroot.sh
	@tools/build/pyroot.sh $(PYROOT) $(LIB_SO)
	@mkdir -p $(PYROOT)/usr/share/capfence/python-tests
	@cp python/tests/*.py python/tests/run-vm-tests $(PYROOT)/usr/share/capfence/python-tests/
	@touch $@

pyroot: $(PYROOT)/.stamp
