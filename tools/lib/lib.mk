# SPDX-License-Identifier: LGPL-2.1-or-later
#
# libcapfence, included by the top Makefile:
#
#   make lib        build/lib/libcapfence.so.1 (SONAME, version script),
#                   build/lib/libcapfence.a and build/lib/capfence.pc
#   make abi-check  the exported symbols are exactly the version script's;
#                   the uapi header compiles as C++ and as -std=c99 -pedantic,
#                   the public header as C++ (host, no build of the module)
#
# The CLI, the VM tests, rollsim and the benchmarks link libcapfence.a; the
# Python package and programs outside the tree load libcapfence.so.1.

LIB_MAJOR   := 1
LIB_VERSION := $(LIB_MAJOR).7.0
LIB_OUT     := $(B)/lib
LIB_SO      := $(LIB_OUT)/libcapfence.so.$(LIB_VERSION)
LIB_SONAME  := libcapfence.so.$(LIB_MAJOR)
LIB_A       := $(LIB_OUT)/libcapfence.a
LIB_PC      := $(LIB_OUT)/capfence.pc
LIB_MAP     := tools/lib/libcapfence.map
LIB_OBJS    := $(patsubst tools/lib/%.c,$(LIB_OUT)/obj/%.o,$(LIB_SRCS))
LIB_REQUIRES := libsodium libmnl

.PHONY: abi-check

# -DCF_SYMVER: the symbol versions of functions that have more than one
# (cf_internal.h, cf_compat.c)
$(LIB_OUT)/obj/%.o: tools/lib/%.c $(LIB_HDRS) tools/lib/lib.mk | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) -fPIC -DCF_SYMVER $(CPPFLAGS_USR) -c $< -o $@

# exported: exactly the version script's list (internals are hidden too)
$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=$(LIB_MAP) \
		-Wl,-z,defs -Wl,-z,relro -Wl,-z,now \
		$(LIB_OBJS) -lsodium -lmnl $(NET_LIBS) -lpthread -o $@
	@find $(LIB_OUT) -maxdepth 1 -name 'libcapfence.so.*.*.*' ! -name $(notdir $@) -delete
	ln -sf $(notdir $@) $(LIB_OUT)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(LIB_OUT)/libcapfence.so

$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIB_PC): tools/lib/capfence.pc.in tools/lib/lib.mk
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(or $(PREFIX),/usr/local)|' -e 's|@LIBDIR@|$(or $(LIBDIR),$${prefix}/lib)|' \
		-e 's|@VERSION@|$(LIB_VERSION)|' -e 's|@REQUIRES@|$(LIB_REQUIRES)|' $< > $@

lib: $(LIB_SO) $(LIB_A) $(LIB_PC)

# The program of make abi-check built against libcapfence 1.3
# (selftests/abi/), for the VM: the Python overlay carries it
# (python/python.mk) and python/tests/run-vm-tests runs it against the
# overlay's libcapfence.so.1 and the module.
$(B)/abi-1.3/abi-1.3: selftests/abi/abi-1.3.c selftests/abi/1.3/capfence/capfence.h \
		selftests/abi/1.3/linux/capfence.h selftests/abi/1.3/libcapfence.map tools/lib/abi-check
	@rm -rf $(B)/abi-1.3
	@tools/lib/abi-check --build-old $(B)/abi-1.3

abi-check: lib
	@mkdir -p $(B)/logs
	@tools/lib/abi-check $(LIB_SO) $(LIB_MAP) > $(B)/logs/abi.log 2>&1; \
		grep -E '^(not ok|# )' $(B)/logs/abi.log; \
		selftests/summary abi $(B)/logs/abi.log

# A class is an additive change, shown by adding one (selftests/abi/
# class-check): a test-only class in a copy of the tree touches the six
# files of docs/design.md's list; the copy's library, unit tests, spec and
# ABI checks pass; its capfence.ko builds for 6.1, and today's CLI runs the
# seed scenario against it in the VM. Log: build/logs/class.log, the diff:
# build/logs/class-diff.txt. Part of make check when KERNEL has 6.1.
.PHONY: class-check
class-check: lib cli tests $(call KO,6.1) $(YNL)/version
	@mkdir -p $(B)/logs
	@selftests/abi/class-check > $(B)/logs/class.log 2>&1; \
		grep -E '^(not ok|# )' $(B)/logs/class.log; \
		selftests/summary class $(B)/logs/class.log
