// SPDX-License-Identifier: GPL-2.0
/*
 * capfence task PID: a task's binding (epoch, pending exec epoch) and its
 * held capabilities with their delegators, from CAPFENCE_CMD_TASK_GET.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include "cli.h"

static const char task_usage[] = "capfence task PID [--json]";

struct task_cap {
	uint64_t cap_id, epoch_id;
	uint32_t key_id, from_pid, state;
	int class_id;
	size_t n;
	struct cf_constraint c[CAPFENCE_MAX_CONSTRAINTS];
};

struct task_info {
	uint32_t pid;
	uint64_t epoch_id, pending, fence;
	struct task_cap *caps;
	size_t n, cap;
};

static int parse_cap(const struct nlattr *nest, struct task_cap *c)
{
	const struct nlattr *a;

	memset(c, 0, sizeof(*c));
	c->class_id = -1;
	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case CAPFENCE_CAP_A_CAP_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U64))
				return -EBADMSG;
			c->cap_id = mnl_attr_get_u64(a);
			break;
		case CAPFENCE_CAP_A_CLASS:
			if (mnl_attr_validate(a, MNL_TYPE_U8))
				return -EBADMSG;
			c->class_id = mnl_attr_get_u8(a);
			break;
		case CAPFENCE_CAP_A_EPOCH_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U64))
				return -EBADMSG;
			c->epoch_id = mnl_attr_get_u64(a);
			break;
		case CAPFENCE_CAP_A_KEY_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U32))
				return -EBADMSG;
			c->key_id = mnl_attr_get_u32(a);
			break;
		case CAPFENCE_CAP_A_FROM_PID:
			if (mnl_attr_validate(a, MNL_TYPE_U32))
				return -EBADMSG;
			c->from_pid = mnl_attr_get_u32(a);
			break;
		case CAPFENCE_CAP_A_STATE:
			if (mnl_attr_validate(a, MNL_TYPE_U32))
				return -EBADMSG;
			c->state = mnl_attr_get_u32(a);
			break;
		case CAPFENCE_CAP_A_NET:
		case CAPFENCE_CAP_A_PATH:
			if (c->n == CAPFENCE_MAX_CONSTRAINTS ||
			    cf_nl_get_constraint(a, mnl_attr_get_type(a) ==
						 CAPFENCE_CAP_A_NET, &c->c[c->n]))
				return -EBADMSG;
			c->n++;
			break;
		}
	}
	return 0;
}

static int task_cb(const struct nlmsghdr *nlh, void *data)
{
	struct task_info *ti = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		int type = mnl_attr_get_type(a);

		if (type == CAPFENCE_A_CAP) {
			if (ti->n == ti->cap) {
				size_t cap = ti->cap ? ti->cap * 2 : 8;
				struct task_cap *v = realloc(ti->caps,
							     cap * sizeof(*v));

				if (!v) {
					errno = ENOMEM;
					return MNL_CB_ERROR;
				}
				ti->caps = v;
				ti->cap = cap;
			}
			if (parse_cap(a, &ti->caps[ti->n])) {
				errno = EBADMSG;
				return MNL_CB_ERROR;
			}
			ti->n++;
			continue;
		}
		if (type == CAPFENCE_A_PID &&
		    !mnl_attr_validate(a, MNL_TYPE_U32))
			ti->pid = mnl_attr_get_u32(a);
		else if (type == CAPFENCE_A_EPOCH_ID &&
			 !mnl_attr_validate(a, MNL_TYPE_U64))
			ti->epoch_id = mnl_attr_get_u64(a);
		else if (type == CAPFENCE_A_PENDING_EPOCH_ID &&
			 !mnl_attr_validate(a, MNL_TYPE_U64))
			ti->pending = mnl_attr_get_u64(a);
		else if (type == CAPFENCE_A_FENCE &&
			 !mnl_attr_validate(a, MNL_TYPE_U64))
			ti->fence = mnl_attr_get_u64(a);
	}
	return MNL_CB_OK;
}

static const char *state_name(uint32_t st)
{
	return st ? cf_reason_name((int)st) : "valid";
}

static void print_json(const struct task_info *ti)
{
	size_t i;

	printf("{\"pid\":%u,\"bound\":%s,\"epoch_id\":%" PRIu64
	       ",\"pending_epoch_id\":%" PRIu64 ",\"fence\":%" PRIu64
	       ",\"caps\":[", ti->pid, ti->epoch_id ? "true" : "false",
	       ti->epoch_id, ti->pending, ti->fence);
	for (i = 0; i < ti->n; i++) {
		const struct task_cap *c = &ti->caps[i];

		printf("%s{\"cap_id\":\"%016" PRIx64 "\",\"class\":",
		       i ? "," : "", c->cap_id);
		cf_json_str(stdout, cf_class_name(c->class_id) ?: "?");
		printf(",\"epoch_id\":%" PRIu64 ",\"key_id\":%u,\"from_pid\":%u,\"state\":",
		       c->epoch_id, c->key_id, c->from_pid);
		cf_json_str(stdout, state_name(c->state));
		printf(",\"constraint\":");
		cf_json_constraints(stdout, c->c, c->n);
		printf("}");
	}
	printf("]}\n");
}

static void print_text(const struct task_info *ti)
{
	size_t i;

	if (ti->epoch_id)
		printf("pid %u: bound to epoch %" PRIu64 "\n", ti->pid, ti->epoch_id);
	else
		printf("pid %u: not bound (capfence does not mediate it)\n", ti->pid);
	if (ti->pending)
		printf("pending exec epoch: %" PRIu64 "\n", ti->pending);
	printf("fence: %" PRIu64 "\n", ti->fence);
	printf("held capabilities: %zu\n", ti->n);
	if (!ti->n)
		return;
	printf("  %-16s  %-11s  %-8s  %-5s  %-7s  %-14s  %s\n", "CAP_ID",
	       "CLASS", "EPOCH", "KEY", "FROM", "STATE", "CONSTRAINT");
	for (i = 0; i < ti->n; i++) {
		const struct task_cap *c = &ti->caps[i];
		char from[16];

		if (c->from_pid)
			snprintf(from, sizeof(from), "%u", c->from_pid);
		else
			snprintf(from, sizeof(from), "-");
		printf("  %016" PRIx64 "  %-11s  %-8" PRIu64 "  %-5u  %-7s  %-14s  ",
		       c->cap_id, cf_class_name(c->class_id) ?: "?",
		       c->epoch_id, c->key_id, from, state_name(c->state));
		cf_print_constraints(stdout, c->c, c->n);
		putchar('\n');
	}
}

int cf_cmd_task(int argc, char **argv)
{
	struct task_info ti;
	struct nlmsghdr *nlh;
	uint32_t pid = 0;
	bool json = false;
	struct cf_nl nl;
	int i, ret;

	if (cf_want_help(argc, argv, task_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!pid && argv[i][0] != '-') {
			if (cf_arg_pid(argv[i], &pid))
				return cf_usage(task_usage, "task: bad pid '%s'", argv[i]);
		} else {
			return cf_usage(task_usage, "task: unknown argument '%s'", argv[i]);
		}
	}
	if (!pid)
		return cf_usage(task_usage, "task: missing PID");
	ret = cf_nl_open_or_die(&nl);
	if (ret)
		return ret;
	memset(&ti, 0, sizeof(ti));
	ti.pid = pid;
	nlh = cf_nl_req(&nl, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, pid);
	ret = cf_nl_talk(&nl, nlh, task_cb, &ti);
	if (ret == -ESRCH) {
		cf_nl_fail(&nl, "task", ret);
		ret = CF_EXIT_NOT_BOUND;	/* no_task */
	} else if (ret) {
		ret = cf_nl_fail(&nl, "task", ret);
	} else if (json) {
		print_json(&ti);
	} else {
		print_text(&ti);
	}
	cf_nl_close(&nl);
	free(ti.caps);
	return ret;
}
