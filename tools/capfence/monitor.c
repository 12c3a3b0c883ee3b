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

static void print_event(const struct capfence_event_info *e, bool json)
{
	const char *ev = capfence_event_name(e->type);
	char evbuf[24];
	int r = e->reason;

	if (!strcmp(ev, "?")) {
		snprintf(evbuf, sizeof(evbuf), "event_%d", e->type);
		ev = evbuf;
	}
	if (json) {
		printf("{\"event\":\"%s\",\"reason\":", ev);
		cf_json_str(stdout, capfence_reason_name(r));
		printf(",\"errno\":");
		if (r)
			cf_json_str(stdout, cf_errno_name(capfence_reason_errno(r)));
		else
			printf("null");
		printf(",\"epoch_id\":%" PRIu64 ",\"cap_id\":\"%016" PRIx64
		       "\",\"pid\":%u,\"fence\":%" PRIu64 "}\n",
		       e->epoch_id, e->cap_id, e->pid, e->fence);
	} else {
		printf("%-16s reason=%s", ev, capfence_reason_name(r));
		if (r)
			printf(" errno=%s", cf_errno_name(capfence_reason_errno(r)));
		printf(" epoch_id=%" PRIu64 " cap_id=%016" PRIx64 " pid=%u fence=%" PRIu64 "\n",
		       e->epoch_id, e->cap_id, e->pid, e->fence);
	}
	fflush(stdout);
}

static int cf_cmd_monitor(int argc, char **argv)
{
	struct sigaction sa;
	bool json = false;
	struct capfence_events *ev = NULL;
	struct capfence_event_info e;
	char msg[CAPFENCE_ERR_MAX] = "";
	int ret;

	if (cf_want_help(argc, argv, monitor_usage))
		return 0;
	ret = cf_opts_simple("monitor", monitor_usage, argc, argv, &json);
	if (ret >= 0)
		return ret;
	ret = capfence_events_open(&ev, msg, sizeof(msg));
	if (ret) {
		if (ret == -ENOENT && strstr(msg, "not loaded"))
			cf_err("the capfence module is not loaded (modprobe capfence)");
		else
			cf_err("monitor: %s", msg);
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
		ret = capfence_events_next(ev, &e, -1);
		if (!ret) {
			print_event(&e, json);
			continue;
		}
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
	capfence_events_close(ev);
	return ret;
}

const struct cf_cmd cf_monitor_cmd = { .name = "monitor", .run = cf_cmd_monitor, .usage = monitor_usage };
