// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The capfence family's attributes as the client reads them (cf_attrs.h):
 * one table per attribute set of docs/netlink/capfence.yaml, checked
 * against it by `make spec-check`. Read-only data; no locks.
 */
#include <errno.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/capfence.h>
#include "cf_attrs.h"

#define T(t)		{ .type = MNL_TYPE_##t }
#define BIN(l)		{ .type = MNL_TYPE_BINARY, .len = (l) }

static const struct cf_attr_type capfence_types[CAPFENCE_A_MAX + 1] = {
	[CAPFENCE_A_VERSION]		= T(NUL_STRING),
	[CAPFENCE_A_ABI]		= T(U32),
	[CAPFENCE_A_HOOKS_ATTACHED]	= T(U8),
	[CAPFENCE_A_FENCE]		= T(U64),
	[CAPFENCE_A_KEY_ID]		= T(U32),
	[CAPFENCE_A_KEY]		= BIN(CAPFENCE_KEY_LEN),
	[CAPFENCE_A_EPOCH_ID]		= T(U64),
	[CAPFENCE_A_ACTIVE]		= T(U8),
	[CAPFENCE_A_TOKEN]		= T(BINARY),
	[CAPFENCE_A_PID]		= T(U32),
	[CAPFENCE_A_FROM_PID]		= T(U32),
	[CAPFENCE_A_DRY_RUN]		= T(FLAG),
	[CAPFENCE_A_REASON]		= T(U32),
	[CAPFENCE_A_CAP_ID]		= T(U64),
	[CAPFENCE_A_STATS]		= T(NESTED),
	[CAPFENCE_A_GENERATION]		= T(U64),
	[CAPFENCE_A_CLASS]		= T(U8),
	[CAPFENCE_A_EVENT]		= T(U32),
	[CAPFENCE_A_MAX_EPOCH_ID]	= T(U64),
	[CAPFENCE_A_ACTIVE_EPOCH_ID]	= T(U64),
	[CAPFENCE_A_PENDING_EPOCH_ID]	= T(U64),
	[CAPFENCE_A_FLEET_REV]		= T(U64),
	[CAPFENCE_A_FLEET]		= T(NESTED),
	[CAPFENCE_A_LINK_FDS]		= T(NESTED),
	[CAPFENCE_A_RULES]		= T(NESTED),
	[CAPFENCE_A_TOKENS]		= T(NESTED),
	[CAPFENCE_A_CAPS]		= T(NESTED),
	[CAPFENCE_A_SANDBOX]		= T(NESTED),
	[CAPFENCE_A_SECCOMP_PROG]	= T(BINARY),
	[CAPFENCE_A_SECCOMP_DIGEST]	= T(BINARY),
	[CAPFENCE_A_SECCOMP_LEN]	= T(U32),
};

static const struct cf_attr_type rule_types[CAPFENCE_RULE_A_MAX + 1] = {
	[CAPFENCE_RULE_A_CLASS]		= T(U8),
	[CAPFENCE_RULE_A_KIND]		= T(U8),
	[CAPFENCE_RULE_A_NET]		= BIN(sizeof(struct capfence_net_range)),
	[CAPFENCE_RULE_A_PATH]		= T(NUL_STRING),
	[CAPFENCE_RULE_A_FENCED_AT]	= T(U64),
};

static const struct cf_attr_type cap_types[CAPFENCE_CAP_A_MAX + 1] = {
	[CAPFENCE_CAP_A_CAP_ID]		= T(U64),
	[CAPFENCE_CAP_A_CLASS]		= T(U8),
	[CAPFENCE_CAP_A_EPOCH_ID]	= T(U64),
	[CAPFENCE_CAP_A_KEY_ID]		= T(U32),
	[CAPFENCE_CAP_A_FROM_PID]	= T(U32),
	[CAPFENCE_CAP_A_STATE]		= T(U32),
	[CAPFENCE_CAP_A_NET]		= BIN(sizeof(struct capfence_net_range)),
	[CAPFENCE_CAP_A_PATH]		= T(NUL_STRING),
	[CAPFENCE_CAP_A_FLEET_REV]	= T(U64),
};

static const struct cf_attr_type fleet_types[CAPFENCE_FLEET_A_MAX + 1] = {
	[CAPFENCE_FLEET_A_STALE_MS]	= T(U32),
	[CAPFENCE_FLEET_A_DENY_MS]	= T(U32),
	[CAPFENCE_FLEET_A_FRESH]	= T(FLAG),
	[CAPFENCE_FLEET_A_AGE_MS]	= T(U32),
	[CAPFENCE_FLEET_A_STATE]	= T(U32),
	[CAPFENCE_FLEET_A_APPLIED]	= T(U64),
	[CAPFENCE_FLEET_A_ASKED_NS]	= T(U64),
	[CAPFENCE_FLEET_A_SEQ]		= T(U64),
	[CAPFENCE_FLEET_A_PREV]		= BIN(CAPFENCE_FLEET_LINK_LEN),
	[CAPFENCE_FLEET_A_LINK]		= BIN(CAPFENCE_FLEET_LINK_LEN),
};

static const struct cf_attr_type stats_types[CAPFENCE_STATS_A_MAX + 1] = {
	[CAPFENCE_STATS_A_BOUND_CREDS]		= T(U64),
	[CAPFENCE_STATS_A_HELD_CAPS]		= T(U64),
	[CAPFENCE_STATS_A_DELEGATE_OK]		= T(U64),
	[CAPFENCE_STATS_A_DELEGATE_REJECT]	= T(NESTED),
	[CAPFENCE_STATS_A_EXERCISE_ALLOW]	= T(U64),
	[CAPFENCE_STATS_A_EXERCISE_DENY]	= T(NESTED),
	[CAPFENCE_STATS_A_CRED_BYTES]		= T(U64),
	[CAPFENCE_STATS_A_CAP_BYTES]		= T(U64),
	[CAPFENCE_STATS_A_OPEN_MEMO_HIT]	= T(U64),
	[CAPFENCE_STATS_A_OPEN_MEMO_MISS]	= T(U64),
	[CAPFENCE_STATS_A_FOREIGN_CALLS]	= T(U64),
	[CAPFENCE_STATS_A_EXERCISE_LEARN]	= T(U64),
};

/* a counter per reason, the reason its type */
static const struct cf_attr_type reason_types[CAPFENCE_R_MAX + 1] = {
	[CAPFENCE_R_NO_TASK]		= T(U64),
	[CAPFENCE_R_NOT_BOUND]		= T(U64),
	[CAPFENCE_R_FORGED]		= T(U64),
	[CAPFENCE_R_EPOCH_MISMATCH]	= T(U64),
	[CAPFENCE_R_CLASS_DENIED]	= T(U64),
	[CAPFENCE_R_REVOKED]		= T(U64),
	[CAPFENCE_R_FENCED]		= T(U64),
	[CAPFENCE_R_NOT_HELD]		= T(U64),
	[CAPFENCE_R_NO_CAPABILITY]	= T(U64),
	[CAPFENCE_R_CONSTRAINT]		= T(U64),
	[CAPFENCE_R_BYPASS]		= T(U64),
	[CAPFENCE_R_BORROW]		= T(U64),
	[CAPFENCE_R_FLEET_STALE]	= T(U64),
	[CAPFENCE_R_SECCOMP]		= T(U64),
};

static const struct cf_attr_type sandbox_types[CAPFENCE_SANDBOX_A_MAX + 1] = {
	[CAPFENCE_SANDBOX_A_ID]			= T(U64),
	[CAPFENCE_SANDBOX_A_PID]		= T(U32),
	[CAPFENCE_SANDBOX_A_EPOCH_ID]		= T(U64),
	[CAPFENCE_SANDBOX_A_CREDS]		= T(U64),
	[CAPFENCE_SANDBOX_A_CRED_LIMIT]		= T(U32),
	[CAPFENCE_SANDBOX_A_CRED_REFUSED]	= T(U64),
	[CAPFENCE_SANDBOX_A_RECORDS]		= T(U64),
	[CAPFENCE_SANDBOX_A_OVER_BUDGET]	= T(U64),
	[CAPFENCE_SANDBOX_A_OVER_CEILING]	= T(U64),
	[CAPFENCE_SANDBOX_A_LOST]		= T(U64),
	[CAPFENCE_SANDBOX_A_REPORTS]		= T(U64),
	[CAPFENCE_SANDBOX_A_WINDOW_MS]		= T(U32),
	[CAPFENCE_SANDBOX_A_BUDGET]		= T(U32),
	[CAPFENCE_SANDBOX_A_FLOOR]		= T(U32),
	[CAPFENCE_SANDBOX_A_CEILING]		= T(U32),
};

#define SET(var, yaml, tbl) \
	const struct cf_attr_set var = { yaml, sizeof(tbl) / sizeof(tbl[0]) - 1, tbl }

SET(cf_attrs_capfence, "capfence", capfence_types);
SET(cf_attrs_rule, "rule", rule_types);
SET(cf_attrs_cap, "cap", cap_types);
SET(cf_attrs_fleet, "fleet", fleet_types);
SET(cf_attrs_stats, "stats", stats_types);
SET(cf_attrs_reason_counts, "reason-counts", reason_types);
SET(cf_attrs_sandbox, "sandbox", sandbox_types);

bool capfence__attr_valid(const struct cf_attr_set *set, const struct nlattr *a)
{
	unsigned int type = mnl_attr_get_type(a);
	const struct cf_attr_type *t;

	if (type > set->max || !set->types[type].type)
		return true;	/* newer than this library: not read */
	t = &set->types[type];
	if (t->len)
		return !mnl_attr_validate2(a, t->type, t->len) &&
		       mnl_attr_get_payload_len(a) == t->len;
	return !mnl_attr_validate(a, t->type);
}

struct attrs_walk {
	const struct cf_attr_set *set;
	const struct nlattr **tb;
};

static int walk_attr(const struct nlattr *a, void *data)
{
	struct attrs_walk *w = data;
	unsigned int type = mnl_attr_get_type(a);

	if (!capfence__attr_valid(w->set, a))
		return MNL_CB_ERROR;
	/* repeated attributes are walked by their users; keep the first */
	if (type <= w->set->max && !w->tb[type])
		w->tb[type] = a;
	return MNL_CB_OK;
}

int capfence__attrs_parse_msg(const struct cf_attr_set *set, const struct nlmsghdr *nlh,
			      const struct nlattr **tb)
{
	struct attrs_walk w = { set, tb };

	memset(tb, 0, sizeof(*tb) * (set->max + 1));
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), walk_attr, &w) == MNL_CB_ERROR ?
	       -EBADMSG : 0;
}

int capfence__attrs_parse_nest(const struct cf_attr_set *set, const struct nlattr *nest,
			       const struct nlattr **tb)
{
	struct attrs_walk w = { set, tb };

	memset(tb, 0, sizeof(*tb) * (set->max + 1));
	if (mnl_attr_validate(nest, MNL_TYPE_NESTED))
		return -EBADMSG;
	return mnl_attr_parse_nested(nest, walk_attr, &w) == MNL_CB_ERROR ? -EBADMSG : 0;
}
