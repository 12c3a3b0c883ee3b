# SPDX-License-Identifier: GPL-2.0
#
# capfenced against the real module in one VM, included by the top Makefile:
#
#   make agent-check   per kernel of KERNEL: selftests/agent/agent-vm-test.sh
#                      with the host's etcd binary staged into the guest
#                      (etcd on the guest's loopback), then, in the same boot,
#                      selftests/agent/agent-metrics-test.sh (/metrics,
#                      /healthz, sd_notify READY=1 and WATCHDOG=1 read by
#                      notify-sink, promtool staged when the host has it);
#                      build/logs/agent-<series>.log
#
# The multi-host scenarios (several VMs, one etcd on the host) are not here.

AGENT_ETCD = $(firstword $(wildcard /usr/bin/etcd /usr/local/bin/etcd))
AGENT_PROMTOOL = $(firstword $(wildcard /usr/bin/promtool))

# systemd's notification socket, as a test reads it
$(B)/guest/bin/notify-sink: selftests/agent/notify-sink.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USR) $< -o $@

GUEST_EXTRA += $(B)/guest/bin/notify-sink

.PHONY: agent-check

# A soft lockup prints every CPU's stack (at warning level, which the
# default loglevel=4 hides) and ends the guest at once: a hang of 6.1's
# guest once in 11 runs (capfenced's CPU and an idle one stuck, no trace
# printed) waited out the 900 s limit.
AGENT_VM_APPEND := loglevel=5 softlockup_all_cpu_backtrace=1 softlockup_panic=1
agent-check: $(B)/tools/capfence $(B)/guest/bin/capfenced $(B)/guest/bin/notify-sink module
	@mkdir -p $(B)/logs
	@[ -n "$(AGENT_ETCD)" ] || { echo "agent-check: no etcd binary (apt-get install etcd-server)"; exit 1; }
	@rm -rf $(B)/agent-tls && sh selftests/fleet/make-certs.sh $(B)/agent-tls
	-@for k in $(KERNEL); do ( \
		CAPFENCE_VM_APPEND="$(AGENT_VM_APPEND)" \
		$(VMRUN) --kernel $$k --timeout 900 --add $(AGENT_ETCD):/usr/bin/etcd \
			--add $(B)/agent-tls:/root/tls \
			--add selftests/agent/agent-vm-test.sh:/root/agent-vm-test.sh \
			--add selftests/agent/agent-metrics-test.sh:/root/agent-metrics-test.sh \
			$(if $(AGENT_PROMTOOL),--add $(AGENT_PROMTOOL):/usr/bin/promtool) \
			-- sh -c 'sh /root/agent-vm-test.sh; a=$$?; sh /root/agent-metrics-test.sh && exit $$a' \
			> $(B)/logs/agent-$$k.log 2>&1; \
		rc=$$?; grep -E '^(not ok|# Totals)|^run:' $(B)/logs/agent-$$k.log; \
		[ $$rc -lt 125 ] || echo "FAIL: the VM failed (exit $$rc)" >> $(B)/logs/agent-$$k.log; \
		selftests/summary "agent $$k" $(B)/logs/agent-$$k.log ) $(KPAR) \
	done; wait
