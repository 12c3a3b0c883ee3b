# SPDX-License-Identifier: GPL-2.0
#
# The fleet tests (included by the top Makefile).
#
#   make check-fleet   a three-member etcd cluster on loopback and
#                      FLEET_HOSTS test VMs (6.1 guests) running capfenced;
#                      selftests/fleet/fleet-test's harness tests, the fleet
#                      scenarios and the linearizability check of each
#                      scenario's history; log: build/logs/fleet.log
#
# FLEET_HOSTS (default 2) is the number of VMs; each gets one vCPU.

FLEET_HOSTS ?= 2
FLEET_PREREQ := $(call KO,6.1) cli tests $(B)/etcd-3.5/version

# etcd 3.5 from Debian 13, for the restore with --bump-revision (fleet-test)
$(B)/etcd-3.5/version: tools/build/etcd35.sh tools/build/trixie-apt.sh | deps
	@tools/build/etcd35.sh $(B)/etcd-3.5

.PHONY: check-fleet

check-fleet: $(FLEET_PREREQ)
	@mkdir -p $(B)/logs
	-@t0=$$(date +%s); \
		selftests/fleet/fleet-test --kernel 6.1 --hosts $(FLEET_HOSTS) > $(B)/logs/fleet.log 2>&1; \
		awk '/^# Totals/{print; next} /^# /{d[n++ % 8] = $$0; next} \
			/^not ok/{for (i = n > 8 ? n - 8 : 0; i < n; i++) print d[i % 8]} \
			/^(not ok|FAIL)/{print} {n = 0}' $(B)/logs/fleet.log; \
		echo "# time: fleet $$(( $$(date +%s) - t0 )) s" >> $(B)/logs/fleet.log
	@selftests/summary fleet $(B)/logs/fleet.log

# The fleet at scale (part of make bench): one etcd on loopback (TLS with
# client certificates) and FLEET_SIM_HOSTS simulated hosts (each running
# capfenced's state machine, tools/capfenced/agent_core.c, on an in-memory
# module model, no kernel, no VM; as many processes as their descriptors
# need) per row, N or N:heartbeat-ms; etcd's steady-state writes and bytes,
# the reconciles' full-log reads, the connections opened, watch events per
# revoke, revoke to applied everywhere, `fleet revoke --wait`;
# build/bench/fleet-scale.md.
FLEET_SIM_HOSTS ?= 100,1000,10000,10000:10000
FLEET_SIM_ARGS ?=

$(B)/fleet/fleet-log: $(B)/fleet/%: selftests/fleet/%.c $(LIB_A) $(LIB_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) $< $(LIB_A) -lsodium -lmnl $(NET_LIBS) -lpthread -o $@

# the simulator runs capfenced's state machine on a module model
SIM_SRCS := selftests/fleet/fleet-sim.c tools/capfenced/agent_core.c selftests/fleet/module_model.c
$(B)/fleet/fleet-sim: $(SIM_SRCS) tools/capfenced/agent_core.h selftests/fleet/module_model.h $(LIB_A) $(LIB_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USR) $(CPPFLAGS_USR) -Itools/capfenced -Iselftests/fleet $(SIM_SRCS) $(LIB_A) -lsodium -lmnl $(NET_LIBS) -lpthread -o $@

.PHONY: bench-fleet bench-fleet-vm
bench-fleet: $(B)/fleet/fleet-sim $(B)/fleet/fleet-log $(B)/tools/capfence
	@selftests/fleet/fleet-scale --hosts $(FLEET_SIM_HOSTS) $(FLEET_SIM_ARGS)

# Fleet figures with the module (part of make bench): revoke-to-enforced
# on every host, fleet against single host, agent apply rate, 2 and 3
# hosts (VMs); build/bench/fleet.md.
bench-fleet-vm: $(FLEET_PREREQ)
	@selftests/fleet/fleet-bench --kernel 6.1 --hosts 2,3
