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
FLEET_PREREQ := $(call KO,6.1) cli tests

.PHONY: check-fleet

check-fleet: $(FLEET_PREREQ)
	@mkdir -p $(B)/logs
	-@t0=$$(date +%s); \
		selftests/fleet/fleet-test --kernel 6.1 --hosts $(FLEET_HOSTS) > $(B)/logs/fleet.log 2>&1; \
		grep -E '^(not ok|FAIL|# Totals)' $(B)/logs/fleet.log; \
		echo "# time: fleet $$(( $$(date +%s) - t0 )) s" >> $(B)/logs/fleet.log
	@selftests/summary fleet $(B)/logs/fleet.log

# Fleet figures (part of make bench): revoke-to-enforced on every host,
# fleet against single host, agent apply rate, 2 and 3 hosts;
# build/bench/fleet.md.
.PHONY: bench-fleet
bench-fleet: $(FLEET_PREREQ)
	@selftests/fleet/fleet-bench --kernel 6.1 --hosts 2,3
