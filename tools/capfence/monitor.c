// SPDX-License-Identifier: GPL-2.0
/*
 * capfence monitor [--json]: one line per event of the "events" multicast
 * group (delegations, activations, revocations, key and epoch changes),
 * flushed as it arrives, until interrupted.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const char monitor_usage[] = "capfence monitor [--json]";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *const event_names[] = {
	[CAPFENCE_EV_NONE] = "none",
	[CAPFENCE_EV_DELEGATE_REJECT] = "delegate_reject",
	[CAPFENCE_EV_DELEGATE_OK] = "delegate_ok",
	[CAPFENCE_EV_EPOCH_ACTIVATE] = "epoch_activate",
	[CAPFENCE_EV_REVOKE] = "revoke",
	[CAPFENCE_EV_KEY_CHANGE] = "key_change",
	[CAPFENCE_EV_EPOCH_INSTALL] = "epoch_install",
};

static uint64_t u64_of(const struct nlattr *a)
{
	return a && !mnl_attr_validate(a, MNL_TYPE_U64) ? mnl_attr_get_u64(a) : 0;
}

static uint32_t u32_of(const struct nlattr *a)
{
	return a && !mnl_attr_validate(a, MNL_TYPE_U32) ? mnl_attr_get_u32(a) : 0;
}

static int event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const bool *json = data;
	char evbuf[24];
	const char *ev;
	uint32_t e, r, pid;
	uint64_t epoch, cap_id, fence;

	if (cf_nl_parse(nlh, tb))
		return MNL_CB_OK;	/* skip what we cannot read */
	if (!tb[CAPFENCE_A_EVENT])
		return MNL_CB_OK;
	e = u32_of(tb[CAPFENCE_A_EVENT]);
	r = u32_of(tb[CAPFENCE_A_REASON]);
	pid = u32_of(tb[CAPFENCE_A_PID]);
	epoch = u64_of(tb[CAPFENCE_A_EPOCH_ID]);
	cap_id = u64_of(tb[CAPFENCE_A_CAP_ID]);
	fence = u64_of(tb[CAPFENCE_A_FENCE]);
	if (e < sizeof(event_names) / sizeof(event_names[0])) {
		ev = event_names[e];
	} else {
		snprintf(evbuf, sizeof(evbuf), "event_%u", e);
		ev = evbuf;
	}
	if (*json) {
		printf("{\"event\":\"%s\",\"reason\":", ev);
		cf_json_str(stdout, cf_reason_name((int)r));
		printf(",\"errno\":");
		if (r)
			cf_json_str(stdout, cf_errno_name(cf_reason_errno((int)r)));
		else
			printf("null");
		printf(",\"epoch_id\":%" PRIu64 ",\"cap_id\":\"%016" PRIx64
		       "\",\"pid\":%u,\"fence\":%" PRIu64 "}\n",
		       epoch, cap_id, pid, fence);
	} else {
		printf("%-16s reason=%s", ev, cf_reason_name((int)r));
		if (r)
			printf(" errno=%s", cf_errno_name(cf_reason_errno((int)r)));
		printf(" epoch_id=%" PRIu64 " cap_id=%016" PRIx64 " pid=%u fence=%" PRIu64 "\n",
		       epoch, cap_id, pid, fence);
	}
	fflush(stdout);
	return MNL_CB_OK;
}

int cf_cmd_monitor(int argc, char **argv)
{
	struct sigaction sa;
	bool json = false;
	struct cf_nl nl;
	int i, ret;

	if (cf_want_help(argc, argv, monitor_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			return cf_usage(monitor_usage, "monitor: unknown argument '%s'", argv[i]);
	}
	ret = cf_nl_open_or_die(&nl);
	if (ret)
		return ret;
	ret = cf_nl_subscribe(&nl);
	if (ret) {
		cf_err("monitor: cannot join the \"%s\" group: %s",
		       CAPFENCE_GENL_MCGRP_EVENTS, strerror(-ret));
		cf_nl_close(&nl);
		return CF_EXIT_SYSTEM;
	}
	/* no SA_RESTART: a signal ends the blocking receive */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ret = 0;
	while (!stop) {
		ret = cf_nl_recv_events(&nl, event_cb, &json);
		if (ret == -EINTR || stop) {
			ret = 0;
			continue;
		}
		if (ret == -ENOBUFS) {
			cf_err("monitor: events were lost (receive buffer overrun)");
			ret = 0;
			continue;
		}
		if (ret) {
			cf_err("monitor: %s", strerror(-ret));
			ret = CF_EXIT_SYSTEM;
			break;
		}
	}
	cf_nl_close(&nl);
	return ret;
}
