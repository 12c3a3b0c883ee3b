# SPDX-License-Identifier: LGPL-2.1-or-later
#
# libcapfence, included by the top Makefile:
#
#   make lib        build/lib/libcapfence.so.1 (SONAME, version script),
#                   build/lib/libcapfence.a and build/lib/capfence.pc; and
#                   libcapfence.so.2 (the 2 interface: CAPFENCE_API 2,
#                   libcapfence-2.map, capfence-2.pc), from the same sources
#                   but cf_compat.c, until 2 replaces 1 (docs/libcapfence.3)
#   make abi-check  the exported symbols are exactly the version script's;
#                   the uapi header compiles as C++ and as -std=c99 -pedantic,
#                   the public header as C++ (host, no build of the module)
#
# The CLI, the VM tests, rollsim and the benchmarks link libcapfence.a; the
# Python package and the examples load libcapfence.so.2, programs built
# against 1 libcapfence.so.1.

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
LIB2_VERSION := $(shell sed -n 's/^#define CAPFENCE__LIB2_VERSION_STRING[[:space:]]*"\(.*\)"/\1/p' include/capfence/capfence.h)
LIB2_SO     := $(LIB_OUT)/libcapfence.so.$(LIB2_VERSION)
LIB2_MAP    := tools/lib/libcapfence-2.map
LIB2_PC     := $(LIB_OUT)/capfence-2.pc
LIB2_OBJS   := $(patsubst tools/lib/%.c,$(LIB_OUT)/obj2/%.o,$(filter-out tools/lib/cf_compat.c,$(LIB_SRCS)))

.PHONY: abi-check

# -DCF_SYMVER: the symbol versions of functions that have more than one
# (cf_internal.h, cf_compat.c)
$(LIB_OUT)/obj/%.o: tools/lib/%.c $(LIB_HDRS) tools/lib/lib.mk | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) -fPIC -DCF_SYMVER -DCAPFENCE_LIBRARY_BUILD $(CPPFLAGS_USR) -c $< -o $@

# exported: exactly the version script's list (internals are hidden too)
$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=$(LIB_MAP) \
		-Wl,-z,defs -Wl,-z,relro -Wl,-z,now \
		$(LIB_OBJS) -lsodium -lmnl $(NET_LIBS) -lpthread -o $@
	@find $(LIB_OUT) -maxdepth 1 -name 'libcapfence.so.$(LIB_MAJOR).*.*' ! -name $(notdir $@) -delete
	ln -sf $(notdir $@) $(LIB_OUT)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(LIB_OUT)/libcapfence.so

# libcapfence.so.2: no symbol versions of 1 (no -DCF_SYMVER, no cf_compat.c)
$(LIB_OUT)/obj2/%.o: tools/lib/%.c $(LIB_HDRS) tools/lib/lib.mk | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) -fPIC -DCAPFENCE_API=2 -DCAPFENCE_LIBRARY_BUILD $(CPPFLAGS_USR) -c $< -o $@

$(LIB2_SO): $(LIB2_OBJS) $(LIB2_MAP)
	$(CC) -shared -Wl,-soname,libcapfence.so.2 -Wl,--version-script=$(LIB2_MAP) \
		-Wl,-z,defs -Wl,-z,relro -Wl,-z,now \
		$(LIB2_OBJS) -lsodium -lmnl $(NET_LIBS) -lpthread -o $@
	ln -sf $(notdir $@) $(LIB_OUT)/libcapfence.so.2

$(LIB2_PC): tools/lib/capfence.pc.in tools/lib/lib.mk
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(or $(PREFIX),/usr/local)|' -e 's|@LIBDIR@|$(or $(LIBDIR),$${prefix}/lib)|' \
		-e 's|@VERSION@|$(LIB2_VERSION)|' -e 's|@REQUIRES@|$(LIB_REQUIRES)|' \
		-e 's|-lcapfence|-l:libcapfence.so.2|' -e 's|^Cflags: .*|& -DCAPFENCE_API=2|' \
		-e 's|^Name: .*|& (the 2 interface)|' $< > $@

$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIB_PC): tools/lib/capfence.pc.in tools/lib/lib.mk
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(or $(PREFIX),/usr/local)|' -e 's|@LIBDIR@|$(or $(LIBDIR),$${prefix}/lib)|' \
		-e 's|@VERSION@|$(LIB_VERSION)|' -e 's|@REQUIRES@|$(LIB_REQUIRES)|' $< > $@

lib: $(LIB_SO) $(LIB_A) $(LIB_PC) $(LIB2_SO) $(LIB2_PC)

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
	@{ tools/lib/abi-check $(LIB_SO) $(LIB_MAP); \
	   tools/lib/abi-check --api 2 $(LIB2_SO) $(LIB2_MAP); } > $(B)/logs/abi.log 2>&1; \
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
