// SPDX-License-Identifier: LGPL-2.1-or-later
/* Do not edit: generated from docs/netlink/capfence.yaml by
 * tools/build/attrs-gen.py (make netlink-gen). */
#include <linux/capfence.h>
#include "cf_attrs.h"

static const struct cf_attr_type capfence_types[CAPFENCE_A_MAX + 1] = {
	[CAPFENCE_A_VERSION] = { .type = MNL_TYPE_NUL_STRING },
	[CAPFENCE_A_ABI] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_A_HOOKS_ATTACHED] = { .type = MNL_TYPE_U8 },
	[CAPFENCE_A_FENCE] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_A_KEY_ID] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_A_KEY] = { .type = MNL_TYPE_BINARY, .len = CAPFENCE_KEY_LEN },
	[CAPFENCE_A_EPOCH_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_A_ACTIVE] = { .type = MNL_TYPE_U8 },
	[CAPFENCE_A_TOKEN] = { .type = MNL_TYPE_BINARY },
	[CAPFENCE_A_PID] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_A_FROM_PID] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_A_DRY_RUN] = { .type = MNL_TYPE_FLAG },
	[CAPFENCE_A_REASON] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_A_CAP_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_A_STATS] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_A_GENERATION] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_A_CLASS] = { .type = MNL_TYPE_U8 },
	[CAPFENCE_A_EVENT] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_A_MAX_EPOCH_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_A_ACTIVE_EPOCH_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_A_PENDING_EPOCH_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_A_FLEET_REV] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_A_FLEET] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_A_LINK_FDS] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_A_RULES] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_A_TOKENS] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_A_CAPS] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_A_SANDBOX] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_A_SECCOMP_PROG] = { .type = MNL_TYPE_BINARY },
	[CAPFENCE_A_SECCOMP_DIGEST] = { .type = MNL_TYPE_BINARY },
	[CAPFENCE_A_SECCOMP_LEN] = { .type = MNL_TYPE_U32 },
};

static const struct cf_attr_type rule_types[CAPFENCE_RULE_A_MAX + 1] = {
	[CAPFENCE_RULE_A_CLASS] = { .type = MNL_TYPE_U8 },
	[CAPFENCE_RULE_A_KIND] = { .type = MNL_TYPE_U8 },
	[CAPFENCE_RULE_A_NET] = { .type = MNL_TYPE_BINARY, .len = sizeof(struct capfence_net_range) },
	[CAPFENCE_RULE_A_PATH] = { .type = MNL_TYPE_NUL_STRING },
	[CAPFENCE_RULE_A_FENCED_AT] = { .type = MNL_TYPE_U64 },
};

static const struct cf_attr_type cap_types[CAPFENCE_CAP_A_MAX + 1] = {
	[CAPFENCE_CAP_A_CAP_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_CAP_A_CLASS] = { .type = MNL_TYPE_U8 },
	[CAPFENCE_CAP_A_EPOCH_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_CAP_A_KEY_ID] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_CAP_A_FROM_PID] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_CAP_A_STATE] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_CAP_A_NET] = { .type = MNL_TYPE_BINARY, .len = sizeof(struct capfence_net_range) },
	[CAPFENCE_CAP_A_PATH] = { .type = MNL_TYPE_NUL_STRING },
	[CAPFENCE_CAP_A_FLEET_REV] = { .type = MNL_TYPE_U64 },
};

static const struct cf_attr_type fleet_types[CAPFENCE_FLEET_A_MAX + 1] = {
	[CAPFENCE_FLEET_A_STALE_MS] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_FLEET_A_DENY_MS] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_FLEET_A_FRESH] = { .type = MNL_TYPE_FLAG },
	[CAPFENCE_FLEET_A_AGE_MS] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_FLEET_A_STATE] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_FLEET_A_APPLIED] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_FLEET_A_ASKED_NS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_FLEET_A_SEQ] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_FLEET_A_PREV] = { .type = MNL_TYPE_BINARY, .len = CAPFENCE_FLEET_LINK_LEN },
	[CAPFENCE_FLEET_A_LINK] = { .type = MNL_TYPE_BINARY, .len = CAPFENCE_FLEET_LINK_LEN },
};

static const struct cf_attr_type stats_types[CAPFENCE_STATS_A_MAX + 1] = {
	[CAPFENCE_STATS_A_BOUND_CREDS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_HELD_CAPS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_DELEGATE_OK] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_DELEGATE_REJECT] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_STATS_A_EXERCISE_ALLOW] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_EXERCISE_DENY] = { .type = MNL_TYPE_NESTED },
	[CAPFENCE_STATS_A_CRED_BYTES] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_CAP_BYTES] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_OPEN_MEMO_HIT] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_OPEN_MEMO_MISS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_FOREIGN_CALLS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_STATS_A_EXERCISE_LEARN] = { .type = MNL_TYPE_U64 },
};

static const struct cf_attr_type reason_counts_types[CAPFENCE_R_SECCOMP + 1] = {
	[CAPFENCE_R_NO_TASK] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_NOT_BOUND] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_FORGED] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_EPOCH_MISMATCH] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_CLASS_DENIED] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_REVOKED] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_FENCED] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_NOT_HELD] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_NO_CAPABILITY] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_CONSTRAINT] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_BYPASS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_BORROW] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_FLEET_STALE] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_R_SECCOMP] = { .type = MNL_TYPE_U64 },
};

static const struct cf_attr_type sandbox_types[CAPFENCE_SANDBOX_A_MAX + 1] = {
	[CAPFENCE_SANDBOX_A_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_PID] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_SANDBOX_A_EPOCH_ID] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_CREDS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_CRED_LIMIT] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_SANDBOX_A_CRED_REFUSED] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_RECORDS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_OVER_BUDGET] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_OVER_CEILING] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_LOST] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_REPORTS] = { .type = MNL_TYPE_U64 },
	[CAPFENCE_SANDBOX_A_WINDOW_MS] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_SANDBOX_A_BUDGET] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_SANDBOX_A_FLOOR] = { .type = MNL_TYPE_U32 },
	[CAPFENCE_SANDBOX_A_CEILING] = { .type = MNL_TYPE_U32 },
};

const struct cf_attr_set cf_attrs_capfence = {
	"capfence", sizeof(capfence_types) / sizeof(capfence_types[0]) - 1, capfence_types
};
const struct cf_attr_set cf_attrs_rule = {
	"rule", sizeof(rule_types) / sizeof(rule_types[0]) - 1, rule_types
};
const struct cf_attr_set cf_attrs_cap = {
	"cap", sizeof(cap_types) / sizeof(cap_types[0]) - 1, cap_types
};
const struct cf_attr_set cf_attrs_fleet = {
	"fleet", sizeof(fleet_types) / sizeof(fleet_types[0]) - 1, fleet_types
};
const struct cf_attr_set cf_attrs_stats = {
	"stats", sizeof(stats_types) / sizeof(stats_types[0]) - 1, stats_types
};
const struct cf_attr_set cf_attrs_reason_counts = {
	"reason-counts", sizeof(reason_counts_types) / sizeof(reason_counts_types[0]) - 1, reason_counts_types
};
const struct cf_attr_set cf_attrs_sandbox = {
	"sandbox", sizeof(sandbox_types) / sizeof(sandbox_types[0]) - 1, sandbox_types
};
