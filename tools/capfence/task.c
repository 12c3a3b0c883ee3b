// SPDX-License-Identifier: GPL-2.0
/*
 * capfence task PID: a task's binding (epoch, pending exec epoch), its
 * sandbox (audit records, credentials) and its held capabilities with
 * their delegators, from CAPFENCE_CMD_TASK_GET.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char task_usage[] = "capfence task PID [--json]";

static const char *state_name(uint32_t st)
{
	return st ? capfence_reason_name((int)st) : "valid";
}

static void print_json(const struct capfence_task_info *ti,
		       const struct capfence_sandbox_info *sb)
{
	size_t i;

	printf("{\"pid\":%u,\"bound\":%s,\"epoch_id\":%" PRIu64
	       ",\"pending_epoch_id\":%" PRIu64 ",\"fence\":%" PRIu64,
	       ti->pid, ti->epoch_id ? "true" : "false",
	       ti->epoch_id, ti->pending_epoch_id, ti->fence);
	printf(",\"sandbox\":");
	if (sb->id)
		printf("{\"id\":%" PRIu64 ",\"pid\":%u,\"epoch_id\":%" PRIu64
		       ",\"creds\":%" PRIu64 ",\"cred_limit\":%u"
		       ",\"cred_refused\":%" PRIu64 ",\"audit_records\":%" PRIu64
		       ",\"audit_over_budget\":%" PRIu64
		       ",\"audit_over_ceiling\":%" PRIu64
		       ",\"audit_lost\":%" PRIu64 "}",
		       sb->id, sb->pid, sb->epoch_id, sb->creds, sb->cred_limit,
		       sb->cred_refused, sb->records, sb->over_budget,
		       sb->over_ceiling, sb->lost);
	else
		printf("null");
	printf(",\"caps\":[");
	for (i = 0; i < ti->n; i++) {
		const struct capfence_cap_info *c = &ti->caps[i];

		printf("%s{\"cap_id\":\"%016" PRIx64 "\",\"class\":",
		       i ? "," : "", c->cap_id);
		cf_json_str(stdout, capfence_class_name(c->class_id) ?: "?");
		printf(",\"epoch_id\":%" PRIu64 ",\"key_id\":%u,\"from_pid\":%u,\"state\":",
		       c->epoch_id, c->key_id, c->from_pid);
		cf_json_str(stdout, state_name(c->state));
		printf(",\"constraint\":");
		cf_json_constraints(stdout, c->constraints, c->n);
		printf("}");
	}
	printf("]}\n");
}

static void print_text(const struct capfence_task_info *ti,
		       const struct capfence_sandbox_info *sb)
{
	size_t i;

	if (ti->epoch_id)
		printf("pid %u: bound to epoch %" PRIu64 "\n", ti->pid, ti->epoch_id);
	else
		printf("pid %u: not bound (capfence does not mediate it)\n", ti->pid);
	if (ti->pending_epoch_id)
		printf("pending exec epoch: %" PRIu64 "\n", ti->pending_epoch_id);
	printf("fence: %" PRIu64 "\n", ti->fence);
	if (sb->id) {
		printf("sandbox: %" PRIu64 " (exec set by pid %u, epoch %" PRIu64
		       "), %" PRIu64 " credentials (limit %u, %" PRIu64 " refused)\n",
		       sb->id, sb->pid, sb->epoch_id, sb->creds, sb->cred_limit,
		       sb->cred_refused);
		printf("denial records: %" PRIu64 " written, %" PRIu64
		       " not (over its budget %" PRIu64 ", over the host's ceiling %"
		       PRIu64 ", lost %" PRIu64 ")\n", sb->records,
		       sb->over_budget + sb->over_ceiling + sb->lost,
		       sb->over_budget, sb->over_ceiling, sb->lost);
	}
	printf("held capabilities: %zu\n", ti->n);
	if (!ti->n)
		return;
	printf("  %-16s  %-11s  %-8s  %-5s  %-7s  %-14s  %s\n", "CAP_ID",
	       "CLASS", "EPOCH", "KEY", "FROM", "STATE", "CONSTRAINT");
	for (i = 0; i < ti->n; i++) {
		const struct capfence_cap_info *c = &ti->caps[i];
		char from[16];

		if (c->from_pid)
			snprintf(from, sizeof(from), "%u", c->from_pid);
		else
			snprintf(from, sizeof(from), "-");
		printf("  %016" PRIx64 "  %-11s  %-8" PRIu64 "  %-5u  %-7s  %-14s  ",
		       c->cap_id, capfence_class_name(c->class_id) ?: "?",
		       c->epoch_id, c->key_id, from, state_name(c->state));
		cf_print_constraints(stdout, c->constraints, c->n);
		putchar('\n');
	}
}

static int cf_cmd_task(int argc, char **argv)
{
	struct capfence_sandbox_info sb = {};
	struct capfence_task_info ti;
	uint32_t pid = 0;
	bool json = false;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "task", .usage = task_usage, .longopts = lo };
	int c, ret;

	if (cf_want_help(argc, argv, task_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == CF_OPT_ARG && !pid) {
			if (cf_arg_pid(optarg, &pid))
				return cf_usage(task_usage, "task: bad pid '%s'", optarg);
		} else if (c == CF_OPT_ARG) {
			return cf_opt_unexpected(&o, optarg);
		} else {
			return o.exit;
		}
	}
	if (!pid)
		return cf_usage(task_usage, "task: missing PID");
	ret = cf_client_open_or_die(&nl);
	if (ret)
		return ret;
	ret = capfence_client_task_get(nl, pid, &ti, msg, sizeof(msg));
	if (!ret)
		ret = capfence_client_task_sandbox(nl, pid, &sb, msg, sizeof(msg));
	if (ret == -ESRCH) {
		cf_client_fail("task", ret, msg);
		ret = CF_EXIT_NOT_BOUND;	/* no_task */
	} else if (ret) {
		ret = cf_client_fail("task", ret, msg);
	} else if (json) {
		print_json(&ti, &sb);
	} else {
		print_text(&ti, &sb);
	}
	capfence_client_close(nl);
	capfence_task_release(&ti);
	return ret;
}

const struct cf_cmd cf_task_cmd = { .name = "task", .run = cf_cmd_task, .usage = task_usage };
