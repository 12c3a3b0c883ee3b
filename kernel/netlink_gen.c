// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	docs/netlink/capfence.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink_gen.h"

#include <uapi/linux/capfence.h>
#include <compat.h>

/* Integer value ranges */
static const struct netlink_range_validation capfence_fleet_a_stale_ms_range = {
	.max	= CAPFENCE_FLEET_MAX_MS,
};

static const struct netlink_range_validation capfence_fleet_a_deny_ms_range = {
	.max	= CAPFENCE_FLEET_MAX_MS,
};

static const struct netlink_range_validation capfence_fleet_a_age_ms_range = {
	.max	= CAPFENCE_FLEET_MAX_MS,
};

/* Common nested types */
const struct nla_policy capfence_fleet_nl_policy[CAPFENCE_FLEET_A_LINK + 1] = {
	[CAPFENCE_FLEET_A_STALE_MS] = NLA_POLICY_FULL_RANGE(NLA_U32,
							    &capfence_fleet_a_stale_ms_range),
	[CAPFENCE_FLEET_A_DENY_MS] = NLA_POLICY_FULL_RANGE(NLA_U32,
							   &capfence_fleet_a_deny_ms_range),
	[CAPFENCE_FLEET_A_FRESH] = { .type = NLA_FLAG, },
	[CAPFENCE_FLEET_A_AGE_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &capfence_fleet_a_age_ms_range),
	[CAPFENCE_FLEET_A_STATE] = NLA_POLICY_MAX(NLA_U32, 3),
	[CAPFENCE_FLEET_A_APPLIED] = { .type = NLA_U64, },
	[CAPFENCE_FLEET_A_ASKED_NS] = NLA_POLICY_MIN(NLA_U64, 1),
	[CAPFENCE_FLEET_A_SEQ] = NLA_POLICY_MIN(NLA_U64, 1),
	[CAPFENCE_FLEET_A_PREV] = NLA_POLICY_EXACT_LEN(CAPFENCE_FLEET_LINK_LEN),
	[CAPFENCE_FLEET_A_LINK] = NLA_POLICY_EXACT_LEN(CAPFENCE_FLEET_LINK_LEN),
};

const struct nla_policy capfence_rule_nl_policy[CAPFENCE_RULE_A_PAD + 1] = {
	[CAPFENCE_RULE_A_CLASS] = NLA_POLICY_RANGE(NLA_U8, 1, 5),
	[CAPFENCE_RULE_A_KIND] = NLA_POLICY_MAX(NLA_U8, 3),
	[CAPFENCE_RULE_A_NET] = NLA_POLICY_EXACT_LEN(24),
	[CAPFENCE_RULE_A_PATH] = { .type = NLA_NUL_STRING, .len = CAPFENCE_PATH_MAX, },
	[CAPFENCE_RULE_A_FENCED_AT] = { .type = NLA_U64, },
};

/* CAPFENCE_CMD_HOOKS_ATTACH - do */
static const struct nla_policy capfence_hooks_attach_nl_policy[CAPFENCE_A_LINK_FDS + 1] = {
	[CAPFENCE_A_LINK_FDS] = { .type = NLA_INDEXED_ARRAY, },
};

/* CAPFENCE_CMD_KEY_INSTALL - do */
static const struct nla_policy capfence_key_install_nl_policy[CAPFENCE_A_FLEET + 1] = {
	[CAPFENCE_A_KEY_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[CAPFENCE_A_KEY] = NLA_POLICY_EXACT_LEN(CAPFENCE_KEY_LEN),
	[CAPFENCE_A_FLEET_REV] = NLA_POLICY_MIN(NLA_U64, 1),
	[CAPFENCE_A_FLEET] = NLA_POLICY_NESTED(capfence_fleet_nl_policy),
};

/* CAPFENCE_CMD_KEY_REMOVE - do */
static const struct nla_policy capfence_key_remove_nl_policy[CAPFENCE_A_FLEET + 1] = {
	[CAPFENCE_A_KEY_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[CAPFENCE_A_FLEET_REV] = NLA_POLICY_MIN(NLA_U64, 1),
	[CAPFENCE_A_FLEET] = NLA_POLICY_NESTED(capfence_fleet_nl_policy),
};

/* CAPFENCE_CMD_EPOCH_INSTALL - do */
static const struct nla_policy capfence_epoch_install_nl_policy[CAPFENCE_A_SECCOMP_PROG + 1] = {
	[CAPFENCE_A_EPOCH_ID] = { .type = NLA_U64, },
	[CAPFENCE_A_RULES] = { .type = NLA_INDEXED_ARRAY, },
	[CAPFENCE_A_FLEET_REV] = NLA_POLICY_MIN(NLA_U64, 1),
	[CAPFENCE_A_FLEET] = NLA_POLICY_NESTED(capfence_fleet_nl_policy),
	[CAPFENCE_A_SECCOMP_PROG] = { .type = NLA_BINARY, },
};

/* CAPFENCE_CMD_EPOCH_ACTIVATE - do */
static const struct nla_policy capfence_epoch_activate_nl_policy[CAPFENCE_A_FLEET + 1] = {
	[CAPFENCE_A_EPOCH_ID] = { .type = NLA_U64, },
	[CAPFENCE_A_FLEET_REV] = NLA_POLICY_MIN(NLA_U64, 1),
	[CAPFENCE_A_FLEET] = NLA_POLICY_NESTED(capfence_fleet_nl_policy),
};

/* CAPFENCE_CMD_EPOCH_GET - do */
static const struct nla_policy capfence_epoch_get_nl_policy[CAPFENCE_A_EPOCH_ID + 1] = {
	[CAPFENCE_A_EPOCH_ID] = { .type = NLA_U64, },
};

/* CAPFENCE_CMD_EXEC_SET - do */
static const struct nla_policy capfence_exec_set_nl_policy[CAPFENCE_A_TOKENS + 1] = {
	[CAPFENCE_A_EPOCH_ID] = { .type = NLA_U64, },
	[CAPFENCE_A_TOKENS] = { .type = NLA_INDEXED_ARRAY, },
};

/* CAPFENCE_CMD_DELEGATE - do */
static const struct nla_policy capfence_delegate_nl_policy[CAPFENCE_A_DRY_RUN + 1] = {
	[CAPFENCE_A_TOKEN] = { .type = NLA_BINARY, },
	[CAPFENCE_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[CAPFENCE_A_FROM_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[CAPFENCE_A_DRY_RUN] = { .type = NLA_FLAG, },
};

/* CAPFENCE_CMD_REVOKE - do */
static const struct nla_policy capfence_revoke_nl_policy[CAPFENCE_A_FLEET + 1] = {
	[CAPFENCE_A_CAP_ID] = { .type = NLA_U64, },
	[CAPFENCE_A_FLEET_REV] = NLA_POLICY_MIN(NLA_U64, 1),
	[CAPFENCE_A_FLEET] = NLA_POLICY_NESTED(capfence_fleet_nl_policy),
};

/* CAPFENCE_CMD_TASK_GET - do */
static const struct nla_policy capfence_task_get_nl_policy[CAPFENCE_A_PID + 1] = {
	[CAPFENCE_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* CAPFENCE_CMD_FLEET_SET - do */
static const struct nla_policy capfence_fleet_set_nl_policy[CAPFENCE_A_FLEET + 1] = {
	[CAPFENCE_A_FLEET_REV] = NLA_POLICY_MIN(NLA_U64, 1),
	[CAPFENCE_A_FLEET] = NLA_POLICY_NESTED(capfence_fleet_nl_policy),
};

/* CAPFENCE_CMD_EPOCH_RETIRE - do */
static const struct nla_policy capfence_epoch_retire_nl_policy[CAPFENCE_A_FLEET_REV + 1] = {
	[CAPFENCE_A_EPOCH_ID] = { .type = NLA_U64, },
	[CAPFENCE_A_FLEET_REV] = NLA_POLICY_MIN(NLA_U64, 1),
};

/* Ops table for capfence */
const struct genl_split_ops capfence_nl_ops[15] = {
	{
		.cmd		= CAPFENCE_CMD_STATUS_GET,
		.pre_doit	= cf_nl_pre_bare,
		.doit		= capfence_nl_status_get_doit,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_HOOKS_ATTACH,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_hooks_attach_doit,
		.policy		= capfence_hooks_attach_nl_policy,
		.maxattr	= CAPFENCE_A_LINK_FDS,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_HOOKS_DETACH,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_hooks_detach_doit,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_KEY_INSTALL,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_key_install_doit,
		.policy		= capfence_key_install_nl_policy,
		.maxattr	= CAPFENCE_A_FLEET,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_KEY_REMOVE,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_key_remove_doit,
		.policy		= capfence_key_remove_nl_policy,
		.maxattr	= CAPFENCE_A_FLEET,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_EPOCH_INSTALL,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_epoch_install_doit,
		.policy		= capfence_epoch_install_nl_policy,
		.maxattr	= CAPFENCE_A_SECCOMP_PROG,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_EPOCH_ACTIVATE,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_epoch_activate_doit,
		.policy		= capfence_epoch_activate_nl_policy,
		.maxattr	= CAPFENCE_A_FLEET,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_EPOCH_GET,
		.doit		= capfence_nl_epoch_get_doit,
		.policy		= capfence_epoch_get_nl_policy,
		.maxattr	= CAPFENCE_A_EPOCH_ID,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= CAPFENCE_CMD_EPOCH_GET,
		.start	= cf_nl_epoch_dump_start,
		.dumpit	= capfence_nl_epoch_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= CAPFENCE_CMD_EXEC_SET,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_exec_set_doit,
		.policy		= capfence_exec_set_nl_policy,
		.maxattr	= CAPFENCE_A_TOKENS,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_DELEGATE,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_delegate_doit,
		.policy		= capfence_delegate_nl_policy,
		.maxattr	= CAPFENCE_A_DRY_RUN,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_REVOKE,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_revoke_doit,
		.policy		= capfence_revoke_nl_policy,
		.maxattr	= CAPFENCE_A_FLEET,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_TASK_GET,
		.doit		= capfence_nl_task_get_doit,
		.policy		= capfence_task_get_nl_policy,
		.maxattr	= CAPFENCE_A_PID,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_FLEET_SET,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_fleet_set_doit,
		.policy		= capfence_fleet_set_nl_policy,
		.maxattr	= CAPFENCE_A_FLEET,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CAPFENCE_CMD_EPOCH_RETIRE,
		.pre_doit	= cf_nl_pre_admin,
		.doit		= capfence_nl_epoch_retire_doit,
		.policy		= capfence_epoch_retire_nl_policy,
		.maxattr	= CAPFENCE_A_FLEET_REV,
		.flags		= GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group capfence_nl_mcgrps[] = {
	[CAPFENCE_NLGRP_EVENTS] = { "events", },
};
