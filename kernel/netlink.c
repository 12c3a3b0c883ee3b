// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "capfence": strict attribute policies, one
 * handler per command, consistent dumps and the events multicast group.
 * docs/netlink/capfence.yaml documents it.
 *
 * The contract is generated: netlink_gen.c (make netlink-gen, from the
 * spec, by the kernel's ynl-gen-c.py) holds each operation's policy and
 * the op table, so a command accepts exactly its request attributes. Every
 * command is validated strictly (resv_start_op 0): an attribute the
 * command does not take, unknown attributes, trailing bytes and a non-zero
 * reserved header field are refused with EINVAL by the kernel's validator
 * ("Unknown attribute type" or "Unsupported attribute", the offset naming
 * the attribute) before any of this file runs. What the generator cannot
 * say is checked here: the members of lists (nested arrays, a member's
 * type is its index, ignored on input) by cf_scalar_array() and
 * cf_nl_rules(), a token's length, and the output-only attributes of the
 * fleet and rule nests, whose generated policies name every attribute of
 * the set.
 *
 * Permissions: operations whose spec marks their do "pre: cf-nl-pre-admin"
 * need CAP_MAC_ADMIN in the initial user namespace (netlink_capable(): the
 * sender, and the socket opener too when the message is written without a
 * destination address) and an unbound caller; a bound task can use no
 * mutating operation. EPOCH_GET and its dump show an unbound admin every
 * epoch, a bound task its own, anyone else nothing (EPERM); STATUS_GET
 * likewise shows the host's values to an unbound admin only, a bound task
 * its own epoch and sandbox (cf_nl_scope()); TASK_GET of another task
 * needs CAP_MAC_ADMIN.
 *
 * Locking: the family runs its handlers in parallel (parallel_ops), not
 * under the genetlink mutex: mutating handlers take cf_mutex, which orders
 * them; the fence lock is taken inside the helpers they call. Reads (status,
 * task and epoch queries, dumps) take no mutex: they read under RCU, and
 * dumps flag NLM_F_DUMP_INTR when the generation moves. A reply that shows
 * fence-protected state (a task's fence and capabilities, an epoch's
 * activation and fenced classes) fills it in one fence read section,
 * emptied and filled again when a writer intervened: one snapshot each.
 * Decisions, with what they count, audit and announce, are decide.c's;
 * this file parses, calls and replies.
 */
#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include "audit.h"
#include "cap.h"
#include "class.h"
#include "constraint.h"
#include "cred.h"
#include "decide.h"
#include "epoch.h"
#include "fence.h"
#include "fleet.h"
#include "hooks.h"
#include "key.h"
#include "netlink.h"
#include "sandbox.h"
#include "seccomp.h"
#include "stats.h"
#include "token.h"
#include "version.h"
#include "hooklist.h"
#include "compat.h"
#include "netlink_gen.h"

static struct genl_family cf_family;

/*
 * The op's own attribute @type, or NULL when the op does not take it:
 * info->attrs has room for the op's policy only (its maxattr), and the
 * helpers below serve ops of different policies.
 */
static struct nlattr *cf_nl_attr(const struct genl_info *info, int type)
{
	const struct genl_split_ops *op;
	int i;

	for (i = 0; i < ARRAY_SIZE(capfence_nl_ops); i++) {
		op = &capfence_nl_ops[i];
		if (op->cmd == info->genlhdr->cmd &&
		    (op->flags & GENL_CMD_CAP_DO))
			return type <= op->maxattr ? info->attrs[type] : NULL;
	}
	return NULL;
}

static const struct genl_multicast_group cf_mcgrps[] = {
	/* events name tasks, capabilities and epochs: privileged listeners only */
	{ .name = CAPFENCE_GENL_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN },
};

static void *cf_put_hdr(struct sk_buff *skb, struct genl_info *info, u8 cmd)
{
	return genlmsg_put(skb, info->snd_portid, info->snd_seq, &cf_family,
			   0, cmd);
}

static int cf_put_u64(struct sk_buff *skb, int type, u64 v)
{
	return nla_put_u64_64bit(skb, type, v, CAPFENCE_A_PAD);
}

/* CAPFENCE_A_FLEET_REV and the CAPFENCE_A_FLEET nest (fleet.c's view) */
static int cf_put_fleet(struct sk_buff *skb)
{
	struct cf_fleet_view v;
	struct nlattr *nest;

	cf_fleet_view(&v);
	if (cf_put_u64(skb, CAPFENCE_A_FLEET_REV, v.rev))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, CAPFENCE_A_FLEET);
	if (!nest ||
	    nla_put_u32(skb, CAPFENCE_FLEET_A_STALE_MS, v.stale_ms) ||
	    nla_put_u32(skb, CAPFENCE_FLEET_A_DENY_MS, v.deny_ms) ||
	    nla_put_u32(skb, CAPFENCE_FLEET_A_STATE, v.state) ||
	    nla_put_u64_64bit(skb, CAPFENCE_FLEET_A_APPLIED, v.applied,
			      CAPFENCE_FLEET_A_PAD) ||
	    (v.confirmed &&
	     nla_put_u32(skb, CAPFENCE_FLEET_A_AGE_MS, v.age_ms)) ||
	    (v.seq &&
	     (nla_put_u64_64bit(skb, CAPFENCE_FLEET_A_SEQ, v.seq,
				CAPFENCE_FLEET_A_PAD) ||
	      nla_put(skb, CAPFENCE_FLEET_A_LINK, sizeof(v.link), v.link))))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int cf_put_sb_u64(struct sk_buff *skb, int type, u64 v)
{
	return nla_put_u64_64bit(skb, type, v, CAPFENCE_SANDBOX_A_PAD);
}

/*
 * CAPFENCE_A_SANDBOX: a task's sandbox @sb (TASK_GET), or with NULL the
 * host's totals and the limits (STATUS_GET). Caller holds RCU.
 */
static int cf_put_sandbox(struct sk_buff *skb, const struct cf_sandbox *sb)
{
	struct nlattr *nest = nla_nest_start(skb, CAPFENCE_A_SANDBOX);
	struct cf_sandbox_view v;

	cf_sandbox_view(sb, &v);
	if (!nest ||
	    nla_put_u32(skb, CAPFENCE_SANDBOX_A_CRED_LIMIT, v.cred_limit) ||
	    cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_CRED_REFUSED, v.cred_refused) ||
	    cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_RECORDS, v.records) ||
	    cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_OVER_BUDGET, v.over_budget) ||
	    cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_OVER_CEILING, v.over_ceiling) ||
	    cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_LOST, v.lost) ||
	    nla_put_u32(skb, CAPFENCE_SANDBOX_A_BUDGET, v.budget) ||
	    nla_put_u32(skb, CAPFENCE_SANDBOX_A_FLOOR, v.floor) ||
	    nla_put_u32(skb, CAPFENCE_SANDBOX_A_CEILING, v.ceiling) ||
	    nla_put_u32(skb, CAPFENCE_SANDBOX_A_WINDOW_MS, v.window_ms))
		return -EMSGSIZE;
	if (v.one && (cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_ID, v.id) ||
		      nla_put_u32(skb, CAPFENCE_SANDBOX_A_PID, v.pid) ||
		      cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_EPOCH_ID,
				    v.epoch_id) ||
		      cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_CREDS, v.creds)))
		return -EMSGSIZE;
	if (!v.one && cf_put_sb_u64(skb, CAPFENCE_SANDBOX_A_REPORTS, v.reports))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int cf_put_reasons(struct sk_buff *skb, int type, const u64 *by)
{
	struct nlattr *nest = nla_nest_start(skb, type);
	int r;

	if (!nest)
		return -EMSGSIZE;
	for (r = 1; r <= CAPFENCE_R_MAX; r++)
		if (nla_put_u64_64bit(skb, r, by[r], CAPFENCE_STATS_A_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* CAPFENCE_A_STATS: the counters (stats.c) and what the state holds */
static int cf_put_stats(struct sk_buff *skb)
{
	struct nlattr *nest = nla_nest_start(skb, CAPFENCE_A_STATS);
	struct cf_counters sum;

	cf_stats_sum(&sum);
	if (!nest ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_BOUND_CREDS, cf_nr_bound(),
			      CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_HELD_CAPS, cf_nr_held(),
			      CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_DELEGATE_OK,
			      sum.delegate[CAPFENCE_R_OK], CAPFENCE_STATS_A_PAD) ||
	    cf_put_reasons(skb, CAPFENCE_STATS_A_DELEGATE_REJECT, sum.delegate) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_EXERCISE_ALLOW,
			      sum.exercise[CAPFENCE_R_OK], CAPFENCE_STATS_A_PAD) ||
	    cf_put_reasons(skb, CAPFENCE_STATS_A_EXERCISE_DENY, sum.exercise) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_CRED_BYTES,
			      sizeof(struct cf_cred), CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_CAP_BYTES,
			      sizeof(struct cf_grant) +
			      sizeof(struct cf_constraint) +
			      sizeof(struct cf_grant *),
			      CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_OPEN_MEMO_HIT,
			      sum.open_memo[1], CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_OPEN_MEMO_MISS,
			      sum.open_memo[0], CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_FOREIGN_CALLS,
			      sum.foreign_calls, CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_EXERCISE_LEARN,
			      sum.learn, CAPFENCE_STATS_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * Who may read what (STATUS_GET, EPOCH_GET): a bound task its own epoch
 * (*@own is its id), an unbound task with CAP_MAC_ADMIN in the initial
 * user namespace the host's (*@own is 0), anyone else nothing (-EPERM):
 * epochs name other tenants' paths and networks, the host's counters and
 * fence follow their work. The capability check runs outside RCU.
 */
static int cf_nl_scope(struct sk_buff *skb, u64 *own)
{
	struct cf_cred *c;

	rcu_read_lock();
	c = cf_cred_lookup(current_cred());
	*own = c && c->epoch ? c->epoch->id : 0;
	rcu_read_unlock();
	if (*own || netlink_capable(skb, CAP_MAC_ADMIN))
		return 0;
	return -EPERM;
}

/*
 * A bound caller's status: its epoch @own and its sandbox (the counters
 * of its sandbox, as TASK_GET of itself has them); the host's fence,
 * epochs, fleet and counters are an admin's.
 */
static int cf_status_own(struct sk_buff *msg, u64 own)
{
	struct cf_sandbox *sb;
	struct cf_cred *c;
	int err;

	if (cf_put_u64(msg, CAPFENCE_A_EPOCH_ID, own))
		return -EMSGSIZE;
	rcu_read_lock();
	c = cf_cred_lookup(current_cred());
	sb = c ? READ_ONCE(c->sb) : NULL;
	err = sb ? cf_put_sandbox(msg, sb) : 0;
	rcu_read_unlock();
	return err;
}

/* The host's status: an unbound admin's (cf_put_fleet() takes cf_mutex). */
static int cf_status_host(struct sk_buff *msg)
{
	if (cf_put_u64(msg, CAPFENCE_A_FENCE, cf_fence_value()) ||
	    cf_put_u64(msg, CAPFENCE_A_MAX_EPOCH_ID, cf_epoch_max_id()) ||
	    cf_put_u64(msg, CAPFENCE_A_ACTIVE_EPOCH_ID, cf_epoch_active_id()) ||
	    cf_put_u64(msg, CAPFENCE_A_GENERATION, cf_generation()) ||
	    cf_put_fleet(msg) ||
	    cf_put_stats(msg) ||
	    cf_put_sandbox(msg, NULL))
		return -EMSGSIZE;
	return 0;
}

int capfence_nl_status_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	u64 own;
	int err;

	if (cf_nl_scope(skb, &own)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "CAP_MAC_ADMIN in the initial user namespace is needed to read the status of the host");
		return -EPERM;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = cf_put_hdr(msg, info, CAPFENCE_CMD_STATUS_GET);
	if (!hdr ||
	    nla_put_string(msg, CAPFENCE_A_VERSION, CAPFENCE_VERSION) ||
	    nla_put_u32(msg, CAPFENCE_A_ABI, CAPFENCE_GENL_VERSION) ||
	    nla_put_u8(msg, CAPFENCE_A_HOOKS_ATTACHED, cf_hooks_attached()))
		err = -EMSGSIZE;
	else
		err = own ? cf_status_own(msg, own) : cf_status_host(msg);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * Check the nested array of scalars @arr as its policy would check one
 * attribute: each member not nested, of exactly @len bytes (else EINVAL, as
 * a fixed-size type) or, if !@exact, of at most @len (else ERANGE, as
 * NLA_BINARY); at most @limit members (E2BIG), no trailing bytes (EINVAL).
 * Return: the number of members, or a negative errno.
 */
static int cf_scalar_array(const struct nlattr *arr, int len, bool exact,
			   int limit, struct netlink_ext_ack *extack)
{
	const struct nlattr *m;
	int rem, n = 0;

	nla_for_each_nested(m, arr, rem) {
		if ((m->nla_type & NLA_F_NESTED) ||
		    (exact && nla_len(m) != len)) {
			NL_SET_ERR_MSG_ATTR(extack, m, "array member of the wrong type");
			return -EINVAL;
		}
		if (nla_len(m) > len) {
			NL_SET_ERR_MSG_ATTR(extack, m, "array member too long");
			return -ERANGE;
		}
		if (++n > limit) {
			NL_SET_ERR_MSG_ATTR(extack, m, "too many array members");
			return -E2BIG;
		}
	}
	if (rem) {
		NL_SET_ERR_MSG_ATTR(extack, arr, "trailing bytes in array");
		return -EINVAL;
	}
	return n;
}

int capfence_nl_hooks_attach_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *arr = info->attrs[CAPFENCE_A_LINK_FDS];
	u32 fds[CF_NR_HOOKS];
	struct nlattr *nla;
	int n = 0, rem, err;

	if (arr) {
		err = cf_scalar_array(arr, sizeof(u32), true, ARRAY_SIZE(fds),
				      info->extack);
		if (err < 0)
			return err;
		nla_for_each_nested(nla, arr, rem)
			fds[n++] = nla_get_u32(nla);
	}
	mutex_lock(&cf_mutex);
	err = cf_hooks_attach(fds, n, info->extack);
	mutex_unlock(&cf_mutex);
	return err;
}

int capfence_nl_hooks_detach_doit(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	mutex_lock(&cf_mutex);
	err = cf_hooks_detach(info->extack);
	mutex_unlock(&cf_mutex);
	return err;
}

/*
 * cf_event() - publish an event on the events multicast group
 * @ev: event
 * @epoch: epoch concerned, or 0
 * @cap_id: capability concerned, or 0
 * @r: reason of a rejection, CAPFENCE_R_OK otherwise
 * @pid: task concerned, or 0
 *
 * Process context.
 */
static void cf_event(enum capfence_event ev, u64 epoch, u64 cap_id,
		     enum capfence_reason r, pid_t pid)
{
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&cf_family, &init_net, 0))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &cf_family, 0, CAPFENCE_CMD_EVENT);
	if (!hdr ||
	    nla_put_u32(msg, CAPFENCE_A_EVENT, ev) ||
	    nla_put_u32(msg, CAPFENCE_A_REASON, r) ||
	    cf_put_u64(msg, CAPFENCE_A_EPOCH_ID, epoch) ||
	    cf_put_u64(msg, CAPFENCE_A_CAP_ID, cap_id) ||
	    nla_put_u32(msg, CAPFENCE_A_PID, pid) ||
	    cf_put_u64(msg, CAPFENCE_A_FENCE, cf_fence_value()) ||
	    (ev == CAPFENCE_EV_FLEET_STATE ? cf_put_fleet(msg) :
	     cf_put_u64(msg, CAPFENCE_A_FLEET_REV, cf_fleet_rev()))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&cf_family, msg, 0, 0, GFP_KERNEL);
}

/* the fleet revision a change command carries, 0 for none */
static u64 cf_nl_fleet_rev(struct genl_info *info)
{
	struct nlattr *nla = cf_nl_attr(info, CAPFENCE_A_FLEET_REV);

	return nla ? nla_get_u64(nla) : 0;
}

/*
 * The chain position a change command carries in its fleet nest: SEQ,
 * PREV and LINK together, nothing else of the nest. @chain->seq 0: none.
 */
static int cf_nl_fleet_link(struct genl_info *info, struct cf_fleet_link *chain)
{
	struct nlattr *tb[CAPFENCE_FLEET_A_MAX + 1] = {};
	struct nlattr *nest = cf_nl_attr(info, CAPFENCE_A_FLEET);
	int err, a;

	memset(chain, 0, sizeof(*chain));
	if (!nest)
		return 0;
	err = nla_parse_nested(tb, CAPFENCE_FLEET_A_MAX, nest,
			       capfence_fleet_nl_policy,
			       info->extack);
	if (err)
		return err;
	for (a = 1; a <= CAPFENCE_FLEET_A_MAX; a++) {
		if (!tb[a] || a == CAPFENCE_FLEET_A_SEQ ||
		    a == CAPFENCE_FLEET_A_PREV || a == CAPFENCE_FLEET_A_LINK)
			continue;
		NL_SET_ERR_MSG_ATTR(info->extack, tb[a],
				    "a change command's fleet nest takes SEQ, PREV and LINK only");
		return -EINVAL;
	}
	if (!tb[CAPFENCE_FLEET_A_SEQ] || !tb[CAPFENCE_FLEET_A_PREV] ||
	    !tb[CAPFENCE_FLEET_A_LINK]) {
		NL_SET_ERR_MSG_ATTR(info->extack, nest,
				    "a fleet chain position is SEQ, PREV and LINK together");
		return -EINVAL;
	}
	chain->seq = nla_get_u64(tb[CAPFENCE_FLEET_A_SEQ]);
	nla_memcpy(chain->prev, tb[CAPFENCE_FLEET_A_PREV], sizeof(chain->prev));
	nla_memcpy(chain->link, tb[CAPFENCE_FLEET_A_LINK], sizeof(chain->link));
	return 0;
}

/*
 * The fleet guard of every change command (key install and removal,
 * epoch install and activation, revoke), in one place: take cf_mutex and
 * refuse a revision the module has applied already, or a chain position
 * that is not the next link. On 0 the caller makes its change and passes
 * the result to cf_nl_change_end().
 */
static int cf_nl_change_begin(struct genl_info *info)
	__cond_acquires(&cf_mutex)
{
	struct cf_fleet_link chain;
	int err;

	err = cf_nl_fleet_link(info, &chain);
	if (err)
		return err;
	mutex_lock(&cf_mutex);
	err = cf_fleet_begin(cf_nl_fleet_rev(info), &chain, info->extack);
	if (err)
		mutex_unlock(&cf_mutex);
	return err;
}

/*
 * Close what cf_nl_change_begin() opened: a change made (@err >= 0) moves
 * the module to the command's fleet revision and chain position. Returns
 * @err.
 */
static int cf_nl_change_end(struct genl_info *info, int err)
	__releases(&cf_mutex)
{
	struct cf_fleet_link chain;

	/* parsed by cf_nl_change_begin() already: cannot fail now */
	if (err >= 0 && !cf_nl_fleet_link(info, &chain))
		cf_fleet_commit(cf_nl_fleet_rev(info), &chain);
	mutex_unlock(&cf_mutex);
	return err;
}

int capfence_nl_key_install_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *key = info->attrs[CAPFENCE_A_KEY];
	int err = -EINVAL;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_KEY_ID) ||
	    GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_KEY))
		goto out;
	err = cf_nl_change_begin(info);
	if (!err)
		err = cf_nl_change_end(info,
				       cf_key_install(nla_get_u32(info->attrs[CAPFENCE_A_KEY_ID]),
						      nla_data(key), info->extack));
	if (!err)
		cf_event(CAPFENCE_EV_KEY_CHANGE, 0, 0, CAPFENCE_R_OK, 0);
out:
	/* the request skb is ours: leave no key bytes behind, on any path */
	if (key)
		memzero_explicit(nla_data(key), nla_len(key));
	return err;
}

int capfence_nl_key_remove_doit(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_KEY_ID))
		return -EINVAL;
	err = cf_nl_change_begin(info);
	if (!err)
		err = cf_nl_change_end(info,
				       cf_key_remove(nla_get_u32(info->attrs[CAPFENCE_A_KEY_ID]),
						     info->extack));
	if (!err)
		cf_event(CAPFENCE_EV_KEY_CHANGE, 0, 0, CAPFENCE_R_OK, 0);
	return err;
}

static int cf_parse_rule(struct cf_epoch *e, const struct nlattr *nest,
			 unsigned long *seen, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[CAPFENCE_RULE_A_MAX + 1];
	struct cf_constraint *c;
	struct cf_rule *rule;
	struct nlattr *nla;
	int rem, err, n = 0;
	u8 class_id;

	err = nla_parse_nested(tb, CAPFENCE_RULE_A_MAX, nest,
			       capfence_rule_nl_policy,
			       extack);
	if (err)
		return err;
	/* output only: the generated policy names every attribute of the set */
	if (tb[CAPFENCE_RULE_A_FENCED_AT]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CAPFENCE_RULE_A_FENCED_AT],
				    "FENCED_AT is output only");
		return -EINVAL;
	}
	if (!tb[CAPFENCE_RULE_A_CLASS] || !tb[CAPFENCE_RULE_A_KIND]) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "rule needs a class and a kind");
		return -EINVAL;
	}
	class_id = nla_get_u8(tb[CAPFENCE_RULE_A_CLASS]);
	rule = &e->rules[class_id];
	if (__test_and_set_bit(class_id, seen)) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "duplicate class in epoch");
		return -EINVAL;
	}
	rule->kind = nla_get_u8(tb[CAPFENCE_RULE_A_KIND]);
	nla_for_each_nested(nla, nest, rem) {
		int type = nla_type(nla);
		u8 kind = type == CAPFENCE_RULE_A_NET ? CAPFENCE_CONSTRAINT_NET :
			  CAPFENCE_CONSTRAINT_PATH;

		if (type != CAPFENCE_RULE_A_NET && type != CAPFENCE_RULE_A_PATH)
			continue;
		if (rule->kind != CAPFENCE_RULE_TOKEN) {
			NL_SET_ERR_MSG_ATTR(extack, nla,
					    "only token rules take constraints");
			return -EINVAL;
		}
		if (cf_class(class_id)->constraint != kind) {
			NL_SET_ERR_MSG_ATTR(extack, nla,
					    "constraint kind does not fit the class");
			return -EINVAL;
		}
		n++;
	}
	if (n > CAPFENCE_MAX_CONSTRAINTS) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "too many constraints in rule");
		return -E2BIG;
	}
	if (!n)
		return 0;
	rule->c = kcalloc(n, sizeof(*rule->c), GFP_KERNEL);
	if (!rule->c)
		return -ENOMEM;
	nla_for_each_nested(nla, nest, rem) {
		int type = nla_type(nla);

		c = &rule->c[rule->n];
		if (type == CAPFENCE_RULE_A_NET) {
			c->kind = CAPFENCE_CONSTRAINT_NET;
			if (cf_net_range_from_wire(&c->net, nla_data(nla),
						   false, class_id)) {
				NL_SET_ERR_MSG_ATTR(extack, nla,
						    "malformed or non-canonical network constraint");
				return -EINVAL;
			}
		} else if (type == CAPFENCE_RULE_A_PATH) {
			c->kind = CAPFENCE_CONSTRAINT_PATH;
			c->path_len = strnlen(nla_data(nla), CAPFENCE_PATH_MAX);
			memcpy(c->path, nla_data(nla), c->path_len);
			if (cf_path_check(c->path, c->path_len)) {
				NL_SET_ERR_MSG_ATTR(extack, nla,
						    "path constraint must be absolute and normalized");
				return -EINVAL;
			}
		} else {
			continue;
		}
		rule->n++;
	}
	return 0;
}

/*
 * The members of CAPFENCE_A_RULES as NLA_POLICY_NESTED_ARRAY would check
 * them (the generated policy has no member policy): each a nest or empty
 * (ERANGE), no trailing bytes, at most one per class. Each member's
 * content is cf_parse_rule()'s. Returns the number of members.
 */
static int cf_nl_rules(const struct nlattr *rules,
		       struct netlink_ext_ack *extack)
{
	const struct nlattr *nla;
	int rem, n = 0;

	nla_for_each_nested(nla, rules, rem) {
		if (nla_len(nla) && nla_len(nla) < NLA_HDRLEN) {
			NL_SET_ERR_MSG_ATTR(extack, nla, "a rule is a nest");
			return -ERANGE;
		}
		n++;
	}
	if (rem) {
		NL_SET_ERR_MSG_ATTR(extack, rules, "trailing bytes in array");
		return -EINVAL;
	}
	if (n > CAPFENCE_CLASS_MAX) {
		NL_SET_ERR_MSG_ATTR(extack, rules, "more rules than classes");
		return -E2BIG;
	}
	return n;
}

int capfence_nl_epoch_install_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *rules = info->attrs[CAPFENCE_A_RULES];
	DECLARE_BITMAP(seen, __CAPFENCE_CLASS_MAX) = {};
	struct cf_epoch *e;
	struct nlattr *nla;
	int rem, n = 0, err = 0;
	u64 id;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_EPOCH_ID))
		return -EINVAL;
	id = nla_get_u64(info->attrs[CAPFENCE_A_EPOCH_ID]);
	if (!id) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[CAPFENCE_A_EPOCH_ID],
				    "epoch id 0 means unbound and cannot be installed");
		return -EINVAL;
	}
	if (rules) {
		n = cf_nl_rules(rules, info->extack);
		if (n < 0)
			return n;
	}
	e = cf_epoch_alloc(id);
	if (!e)
		return -ENOMEM;
	if (info->attrs[CAPFENCE_A_SECCOMP_PROG]) {
		err = cf_seccomp_parse(&e->sc, info->attrs[CAPFENCE_A_SECCOMP_PROG],
				       info->extack);
		if (err)
			goto fail;
	}
	if (rules) {
		nla_for_each_nested(nla, rules, rem) {
			err = cf_parse_rule(e, nla, seen, info->extack);
			if (err)
				goto fail;
		}
	}
	err = cf_nl_change_begin(info);
	if (!err)
		err = cf_nl_change_end(info, cf_epoch_install(e, info->extack));
	if (err)
		goto fail;
	cf_event(CAPFENCE_EV_EPOCH_INSTALL, id, 0, CAPFENCE_R_OK, 0);
	return 0;
fail:
	cf_epoch_free(e);
	return err;
}

int capfence_nl_epoch_activate_doit(struct sk_buff *skb, struct genl_info *info)
{
	u64 id;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_EPOCH_ID))
		return -EINVAL;
	id = nla_get_u64(info->attrs[CAPFENCE_A_EPOCH_ID]);
	err = cf_nl_change_begin(info);
	if (!err)
		err = cf_nl_change_end(info, cf_epoch_activate(id, info->extack));
	if (err > 0)
		cf_event(CAPFENCE_EV_EPOCH_ACTIVATE, id, 0, CAPFENCE_R_OK, 0);
	return err < 0 ? err : 0;
}

int capfence_nl_epoch_retire_doit(struct sk_buff *skb, struct genl_info *info)
{
	u64 id;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_EPOCH_ID))
		return -EINVAL;
	id = nla_get_u64(info->attrs[CAPFENCE_A_EPOCH_ID]);
	/* the agents just reaped: their credentials and grants go first */
	cf_epoch_settle(id);
	err = cf_nl_change_begin(info);
	if (!err)
		err = cf_nl_change_end(info, cf_epoch_retire(id, info->extack));
	/* the event is cf_epoch_retire()'s, as for epochs_keep's retirements */
	return err;
}

static int cf_put_constraints(struct sk_buff *skb, const struct cf_constraint *c,
			      u8 n, int net_type, int path_type)
{
	u8 i;

	for (i = 0; i < n; i++) {
		if (c[i].kind == CAPFENCE_CONSTRAINT_NET) {
			if (nla_put(skb, net_type, sizeof(c[i].net), &c[i].net))
				return -EMSGSIZE;
		} else if (nla_put_string(skb, path_type, c[i].path)) {
			return -EMSGSIZE;
		}
	}
	return 0;
}

/* Caller holds RCU and is inside one fence read section (cf_fill_epoch()). */
static int cf_fill_epoch_locked(struct sk_buff *skb, const struct cf_epoch *e,
				bool prog)
{
	const struct cf_seccomp *sc;
	struct nlattr *arr, *nest;
	int c;

	if (cf_put_u64(skb, CAPFENCE_A_EPOCH_ID, e->id) ||
	    nla_put_u8(skb, CAPFENCE_A_ACTIVE, READ_ONCE(e->active)))
		return -EMSGSIZE;
	arr = nla_nest_start(skb, CAPFENCE_A_RULES);
	if (!arr)
		return -EMSGSIZE;
	for (c = 1; c <= CAPFENCE_CLASS_MAX; c++) {
		const struct cf_rule *r = &e->rules[c];

		/* members are numbered from 1: class ids, here */
		nest = nla_nest_start(skb, c);
		if (!nest ||
		    nla_put_u8(skb, CAPFENCE_RULE_A_CLASS, c) ||
		    nla_put_u8(skb, CAPFENCE_RULE_A_KIND, r->kind) ||
		    cf_put_constraints(skb, r->c, r->n, CAPFENCE_RULE_A_NET,
				       CAPFENCE_RULE_A_PATH) ||
		    nla_put_u64_64bit(skb, CAPFENCE_RULE_A_FENCED_AT,
				      READ_ONCE(e->fenced_at[c]),
				      CAPFENCE_RULE_A_PAD))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	nla_nest_end(skb, arr);
	/* the epoch's syscall policy: its digest, and by id the program */
	sc = e->sc;
	if (!sc)
		return 0;
	if (nla_put(skb, CAPFENCE_A_SECCOMP_DIGEST, sizeof(sc->digest),
		    sc->digest) ||
	    nla_put_u32(skb, CAPFENCE_A_SECCOMP_LEN, sc->len))
		return -EMSGSIZE;
	if (prog && nla_put(skb, CAPFENCE_A_SECCOMP_PROG,
			    sc->len * sizeof(struct sock_filter), sc->insns))
		return -EMSGSIZE;
	return 0;
}

/*
 * Epoch @e into @skb, its activation and the fence values of its classes
 * read in one fence read section (an activation fences classes and marks
 * the epoch active together). Caller holds RCU.
 */
static int cf_fill_epoch(struct sk_buff *skb, const struct cf_epoch *e,
			 bool prog)
{
	unsigned char *mark = skb_tail_pointer(skb);
	unsigned int seq;
	int err;

	do {
		nlmsg_trim(skb, mark);
		seq = read_seqbegin(&cf_fence);
		err = cf_fill_epoch_locked(skb, e, prog);
	} while (!err && read_seqretry(&cf_fence, seq));
	return err;
}

/*
 * The largest epoch message cf_fill_epoch() can write: every class with the
 * most constraints, each of the longest kind. An epoch is larger than
 * NLMSG_GOODSIZE at most, so replies and dumps are sized by this.
 */
static size_t cf_epoch_msg_max(void)
{
	size_t c = max(nla_total_size(CAPFENCE_PATH_MAX + 1),
		       nla_total_size(sizeof(struct capfence_net_range)));
	size_t rule = nla_total_size(0) + 2 * nla_total_size(1) +
		      CAPFENCE_MAX_CONSTRAINTS * c + nla_total_size_64bit(8);

	return GENL_HDRLEN + nla_total_size_64bit(8) + nla_total_size(1) +
	       nla_total_size(0) + CAPFENCE_CLASS_MAX * rule;
}

/* Which epochs the sender of @skb may read: cf_nl_scope(), with its error. */
static int cf_nl_epoch_scope(struct sk_buff *skb, u64 *own,
			     struct netlink_ext_ack *extack)
{
	int err = cf_nl_scope(skb, own);

	if (err)
		NL_SET_ERR_MSG_MOD(extack,
				   "CAP_MAC_ADMIN in the initial user namespace is needed to read epochs");
	return err;
}

int capfence_nl_epoch_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct cf_epoch *e;
	u64 id, own;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_EPOCH_ID))
		return -EINVAL;
	err = cf_nl_epoch_scope(skb, &own, info->extack);
	if (err)
		return err;
	id = nla_get_u64(info->attrs[CAPFENCE_A_EPOCH_ID]);
	if (own && id != own) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a task bound to an epoch can read only its own");
		return -EPERM;
	}
	msg = genlmsg_new(cf_epoch_msg_max() + cf_seccomp_msg_max(true),
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = cf_put_hdr(msg, info, CAPFENCE_CMD_EPOCH_GET);
	rcu_read_lock();
	e = cf_epoch_find(id);
	err = e ? cf_fill_epoch(msg, e, true) : -ENOENT;
	rcu_read_unlock();
	if (err || !hdr) {
		if (err == -ENOENT)
			NL_SET_ERR_MSG_MOD(info->extack, "epoch is not installed");
		nlmsg_free(msg);
		return err ?: -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * Every dump skb must hold the largest epoch, or the dump would end early.
 * Who may read what is decided here, once, for the requester (later parts
 * of a dump run in whichever task reads the socket): cb->args[1] is the
 * only epoch a bound requester sees, 0 for all.
 */
int cf_nl_epoch_dump_start(struct netlink_callback *cb)
{
	const struct nlattr *nla = nlmsg_attrdata(cb->nlh, GENL_HDRLEN);
	u64 own;
	int err;

	/*
	 * The dump takes no attribute: its generated op has no policy (6.12
	 * parses nothing), and 6.1 validates it with the do's (compat.h).
	 */
	if (nlmsg_attrlen(cb->nlh, GENL_HDRLEN) > 0) {
		NL_SET_ERR_MSG_ATTR(cb->extack, nla,
				    "a dump of epochs takes no attribute");
		return -EINVAL;
	}
	err = cf_nl_epoch_scope(cb->skb, &own, cb->extack);
	if (err)
		return err;
	cb->args[1] = own;
	cb->min_dump_alloc = nlmsg_total_size(cf_epoch_msg_max() +
					      cf_seccomp_msg_max(false));
	return 0;
}

int capfence_nl_epoch_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u64 after = cb->args[0], own = cb->args[1], id;
	int count = 0;
	void *hdr;

	cb->seq = cf_generation();
	for (;;) {
		struct cf_epoch *e = NULL, *it;

		/* epochs only grow; resume after the last id sent */
		rcu_read_lock();
		list_for_each_entry_rcu(it, cf_epoch_list(), node)
			if (it->id > after && (!own || it->id == own)) {
				e = it;
				break;
			}
		if (!e) {
			rcu_read_unlock();
			break;
		}
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &cf_family, NLM_F_MULTI,
				  CAPFENCE_CMD_EPOCH_GET);
		if (!hdr) {
			rcu_read_unlock();
			break;
		}
		genl_dump_check_consistent(cb, hdr);
		id = e->id;
		if (cf_fill_epoch(skb, e, false)) {
			rcu_read_unlock();
			genlmsg_cancel(skb, hdr);
			/* never end silently: an empty skb here is a bug */
			if (WARN_ON_ONCE(!count))
				return -EMSGSIZE;
			break;
		}
		rcu_read_unlock();
		genlmsg_end(skb, hdr);
		after = id;
		count++;
	}
	cb->args[0] = after;
	return count ? skb->len : 0;
}

/*
 * The reply of a decision is allocated before the decision is taken: once a
 * delegation or a revocation is applied, nothing may fail and report an
 * error for a change that was made. Out of line, so that an allocation
 * failure injected here (make check-faults) is seen at this call site.
 */
static noinline struct sk_buff *cf_reply_new(void)
{
	return genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
}

/* Fill and send @msg (consumed). Queueing it fails only on a full socket. */
static int cf_reply_reason(struct sk_buff *msg, struct genl_info *info, u8 cmd,
			   enum capfence_reason r, u64 cap_id, u64 epoch,
			   u64 fence)
{
	void *hdr;

	hdr = cf_put_hdr(msg, info, cmd);
	if (!hdr ||
	    nla_put_u32(msg, CAPFENCE_A_REASON, r) ||
	    cf_put_u64(msg, CAPFENCE_A_CAP_ID, cap_id) ||
	    cf_put_u64(msg, CAPFENCE_A_EPOCH_ID, epoch) ||
	    cf_put_u64(msg, CAPFENCE_A_FENCE, fence)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * Publish one delegation-style decision and answer it; @msg is the reply
 * from cf_reply_new() (consumed), or NULL for a rejection, whose reply is
 * then allocated here (it changes nothing, so it may fail). An applied
 * decision returns 0 even when its reply cannot be queued: the change was
 * made, and the ACK says so.
 */
static int cf_finish_decision(struct genl_info *info, struct sk_buff *msg,
			      u8 cmd, enum capfence_reason r,
			      const struct cf_token *t, pid_t pid, u64 epoch,
			      u64 fence, bool dry_run)
{
	cf_decision_publish(r, t, pid, epoch, fence, dry_run);
	if (!msg)
		msg = cf_reply_new();
	if (msg)
		cf_reply_reason(msg, info, cmd, r, t->cap_id, epoch, fence);
	return r ? cf_reason_errno(r) : 0;
}

int capfence_nl_delegate_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct cf_delegation *d;
	struct sk_buff *msg;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_TOKEN) ||
	    GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_PID))
		return -EINVAL;
	/* the spec's max-len, which the generator cannot express for binary */
	if (nla_len(info->attrs[CAPFENCE_A_TOKEN]) > CAPFENCE_TOKEN_MAX_LEN) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[CAPFENCE_A_TOKEN],
				    "token longer than CAPFENCE_TOKEN_MAX_LEN");
		return -ERANGE;
	}
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	msg = cf_reply_new();
	if (!d || !msg) {
		kfree(d);
		nlmsg_free(msg);
		return -ENOMEM;
	}
	d->tok = nla_data(info->attrs[CAPFENCE_A_TOKEN]);
	d->len = nla_len(info->attrs[CAPFENCE_A_TOKEN]);
	d->pid = nla_get_u32(info->attrs[CAPFENCE_A_PID]);
	if (info->attrs[CAPFENCE_A_FROM_PID])
		d->from = nla_get_u32(info->attrs[CAPFENCE_A_FROM_PID]);
	d->dry_run = nla_get_flag(info->attrs[CAPFENCE_A_DRY_RUN]);
	mutex_lock(&cf_mutex);
	err = cf_delegate(d, info->extack);
	mutex_unlock(&cf_mutex);
	if (!err)
		err = cf_finish_decision(info, msg, CAPFENCE_CMD_DELEGATE,
					 d->reason, &d->token, d->pid,
					 d->target_epoch, d->fence, d->dry_run);
	else
		nlmsg_free(msg);
	kfree(d);
	return err;
}

int capfence_nl_exec_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *arr = info->attrs[CAPFENCE_A_TOKENS];
	struct cf_exec_binding *b;
	struct nlattr *nla;
	int rem, err;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_EPOCH_ID))
		return -EINVAL;
	if (arr) {
		err = cf_scalar_array(arr, CAPFENCE_TOKEN_MAX_LEN, false,
				      CAPFENCE_MAX_TOKENS, info->extack);
		if (err < 0)
			return err;
	}
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->epoch_id = nla_get_u64(info->attrs[CAPFENCE_A_EPOCH_ID]);
	if (arr) {
		nla_for_each_nested(nla, arr, rem) {
			b->tok[b->n] = nla_data(nla);
			b->len[b->n++] = nla_len(nla);
		}
	}
	mutex_lock(&cf_mutex);
	err = cf_exec_bind(b, info->extack);
	mutex_unlock(&cf_mutex);
	if (!err && b->reason)
		err = cf_finish_decision(info, NULL, CAPFENCE_CMD_EXEC_SET,
					 b->reason, &b->token,
					 task_tgid_nr(current), b->epoch_id,
					 b->fence, false);
	kfree(b);
	return err;
}

int capfence_nl_revoke_doit(struct sk_buff *skb, struct genl_info *info)
{
	u64 cap_id, fence = 0;
	struct sk_buff *msg;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_CAP_ID))
		return -EINVAL;
	cap_id = nla_get_u64(info->attrs[CAPFENCE_A_CAP_ID]);
	if (!cap_id) {
		NL_SET_ERR_MSG_MOD(info->extack, "cap_id 0 is never issued");
		return -EINVAL;
	}
	msg = cf_reply_new();
	if (!msg)
		return -ENOMEM;
	err = cf_nl_change_begin(info);
	if (!err)
		err = cf_nl_change_end(info, cf_revoke(cap_id, &fence));
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	cf_event(CAPFENCE_EV_REVOKE, 0, cap_id, CAPFENCE_R_OK, 0);
	/* revoked: a reply that cannot be queued does not undo that */
	cf_reply_reason(msg, info, CAPFENCE_CMD_REVOKE, CAPFENCE_R_OK, cap_id, 0,
			fence);
	return 0;
}

int capfence_nl_fleet_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[CAPFENCE_FLEET_A_MAX + 1] = {};
	struct cf_fleet_req req = { .rev = cf_nl_fleet_rev(info) };
	struct nlattr *nest = info->attrs[CAPFENCE_A_FLEET];
	int err;

	if (nest) {
		err = nla_parse_nested(tb, CAPFENCE_FLEET_A_MAX, nest,
				       capfence_fleet_nl_policy, info->extack);
		if (err)
			return err;
	}
	/* output only: the generated policy names every attribute of the set */
	if (tb[CAPFENCE_FLEET_A_STATE] || tb[CAPFENCE_FLEET_A_APPLIED]) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    tb[CAPFENCE_FLEET_A_STATE] ?:
				    tb[CAPFENCE_FLEET_A_APPLIED],
				    "STATE and APPLIED are output only");
		return -EINVAL;
	}
	if (!!tb[CAPFENCE_FLEET_A_STALE_MS] != !!tb[CAPFENCE_FLEET_A_DENY_MS]) {
		NL_SET_ERR_MSG_ATTR(info->extack, nest,
				    "STALE_MS and DENY_MS come together");
		return -EINVAL;
	}
	if (tb[CAPFENCE_FLEET_A_AGE_MS] && !tb[CAPFENCE_FLEET_A_FRESH]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[CAPFENCE_FLEET_A_AGE_MS],
				    "AGE_MS is the age of a FRESH confirmation");
		return -EINVAL;
	}
	if (tb[CAPFENCE_FLEET_A_STALE_MS]) {
		req.bounds = true;
		req.stale_ms = nla_get_u32(tb[CAPFENCE_FLEET_A_STALE_MS]);
		req.deny_ms = nla_get_u32(tb[CAPFENCE_FLEET_A_DENY_MS]);
	}
	if (tb[CAPFENCE_FLEET_A_ASKED_NS] &&
	    (!tb[CAPFENCE_FLEET_A_FRESH] || tb[CAPFENCE_FLEET_A_AGE_MS])) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[CAPFENCE_FLEET_A_ASKED_NS],
				    "ASKED_NS dates a FRESH confirmation, without AGE_MS");
		return -EINVAL;
	}
	req.fresh = nla_get_flag(tb[CAPFENCE_FLEET_A_FRESH]);
	if (tb[CAPFENCE_FLEET_A_AGE_MS])
		req.age_ms = nla_get_u32(tb[CAPFENCE_FLEET_A_AGE_MS]);
	if (tb[CAPFENCE_FLEET_A_ASKED_NS])
		req.asked_ns = nla_get_u64(tb[CAPFENCE_FLEET_A_ASKED_NS]);
	if (tb[CAPFENCE_FLEET_A_PREV]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[CAPFENCE_FLEET_A_PREV],
				    "PREV is a change command's: FLEET_SET takes SEQ and LINK");
		return -EINVAL;
	}
	if (!!tb[CAPFENCE_FLEET_A_SEQ] != !!tb[CAPFENCE_FLEET_A_LINK]) {
		NL_SET_ERR_MSG_ATTR(info->extack, nest,
				    "SEQ and LINK come together");
		return -EINVAL;
	}
	if (tb[CAPFENCE_FLEET_A_SEQ]) {
		req.chain.seq = nla_get_u64(tb[CAPFENCE_FLEET_A_SEQ]);
		nla_memcpy(req.chain.link, tb[CAPFENCE_FLEET_A_LINK],
			   sizeof(req.chain.link));
	}
	mutex_lock(&cf_mutex);
	err = cf_fleet_set(&req, info->extack);
	mutex_unlock(&cf_mutex);
	return err;
}

/* Caller holds RCU and is inside the reply's one fence read section. */
static int cf_fill_caps(struct sk_buff *skb, struct cf_holdings *h)
{
	struct nlattr *arr, *nest;
	u32 i;

	arr = nla_nest_start(skb, CAPFENCE_A_CAPS);
	if (!arr)
		return -EMSGSIZE;
	for (i = 0; h && i < h->n; i++) {
		const struct cf_grant *g = h->g[i];
		enum capfence_reason st = cf_grant_state(g);

		nest = nla_nest_start(skb, i + 1);
		if (!nest ||
		    nla_put_u64_64bit(skb, CAPFENCE_CAP_A_CAP_ID,
				      g->capid->cap_id, CAPFENCE_CAP_A_PAD) ||
		    nla_put_u8(skb, CAPFENCE_CAP_A_CLASS, g->class_id) ||
		    nla_put_u64_64bit(skb, CAPFENCE_CAP_A_EPOCH_ID, g->epoch->id,
				      CAPFENCE_CAP_A_PAD) ||
		    nla_put_u32(skb, CAPFENCE_CAP_A_KEY_ID, g->key_id) ||
		    nla_put_u32(skb, CAPFENCE_CAP_A_FROM_PID, g->from_pid) ||
		    nla_put_u32(skb, CAPFENCE_CAP_A_STATE, st) ||
		    nla_put_u64_64bit(skb, CAPFENCE_CAP_A_FLEET_REV, g->fleet_rev,
				      CAPFENCE_CAP_A_PAD) ||
		    cf_put_constraints(skb, g->c, g->n, CAPFENCE_CAP_A_NET,
				       CAPFENCE_CAP_A_PATH))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	nla_nest_end(skb, arr);
	return 0;
}

/* The room one capability takes in a TASK_GET reply (cf_fill_caps()). */
static size_t cf_cap_size(const struct cf_grant *g)
{
	/* the nest; cap_id, epoch id, fleet revision; class, key, from, state */
	size_t n = nla_total_size(0) + 3 * nla_total_size_64bit(sizeof(u64)) +
		   4 * nla_total_size(sizeof(u32));
	u8 i;

	for (i = 0; i < g->n; i++)
		n += nla_total_size(g->c[i].kind == CAPFENCE_CONSTRAINT_NET ?
				    sizeof(g->c[i].net) :
				    strlen(g->c[i].path) + 1);
	return n;
}

/*
 * The TASK_GET reply for the task whose credential is @cred, into @msg:
 * -EMSGSIZE when it does not fit (the holdings grew since it was sized).
 * Caller holds RCU and is inside one fence read section: the fence the
 * reply names and every capability's state are one snapshot. The fence is
 * the host's, named to an unbound admin (@host) only: it moves with every
 * tenant's activations, revocations and key changes.
 */
static int cf_task_fill_locked(struct sk_buff *msg, struct genl_info *info,
			       pid_t pid, const struct cred *cred, bool host)
{
	struct cf_cred *c = cf_cred_lookup(cred);
	struct cf_sandbox *sb;
	void *hdr;

	hdr = cf_put_hdr(msg, info, CAPFENCE_CMD_TASK_GET);
	if (!hdr || nla_put_u32(msg, CAPFENCE_A_PID, pid) ||
	    cf_put_u64(msg, CAPFENCE_A_EPOCH_ID,
		       c && c->epoch ? c->epoch->id : 0) ||
	    (host && cf_put_u64(msg, CAPFENCE_A_FENCE, cf_fence_value_locked())))
		return -EMSGSIZE;
	if (c && c->pending &&
	    cf_put_u64(msg, CAPFENCE_A_PENDING_EPOCH_ID, c->pending->id))
		return -EMSGSIZE;
	/* always present: empty for a task that holds nothing */
	if (cf_fill_caps(msg, c ? rcu_dereference(c->held) : NULL))
		return -EMSGSIZE;
	sb = c ? READ_ONCE(c->sb) : NULL;
	if (sb && cf_put_sandbox(msg, sb))
		return -EMSGSIZE;
	genlmsg_end(msg, hdr);
	return 0;
}

/*
 * cf_task_fill_locked() in one fence read section: a revocation or
 * activation during the filling empties @msg and fills it again. Caller
 * holds RCU.
 */
static int cf_task_fill(struct sk_buff *msg, struct genl_info *info, pid_t pid,
			const struct cred *cred, bool host)
{
	unsigned char *mark = skb_tail_pointer(msg);
	unsigned int seq;
	int err;

	do {
		nlmsg_trim(msg, mark);
		seq = read_seqbegin(&cf_fence);
		err = cf_task_fill_locked(msg, info, pid, cred, host);
	} while (!err && read_seqretry(&cf_fence, seq));
	return err;
}

/*
 * The size of the TASK_GET reply for @cred: the fixed part (NLMSG_GOODSIZE
 * covers the task's ids and its sandbox) and the room each capability it
 * holds takes, at most CF_HELD_MAX of them.
 */
static size_t cf_task_size(const struct cred *cred)
{
	size_t n = NLMSG_GOODSIZE + nla_total_size(0);
	struct cf_holdings *h;
	struct cf_cred *c;
	u32 i;

	rcu_read_lock();
	c = cf_cred_lookup(cred);
	h = c ? rcu_dereference(c->held) : NULL;
	for (i = 0; h && i < h->n; i++)
		n += cf_cap_size(h->g[i]);
	rcu_read_unlock();
	return n;
}

int capfence_nl_task_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	/* the control plane's own: unbound, CAP_MAC_ADMIN (as EPOCH_GET) */
	bool host = netlink_capable(skb, CAP_MAC_ADMIN) && !cf_current_bound();
	const struct cred *cred;
	struct sk_buff *msg;
	int err, tries = 0;
	pid_t pid;

	if (GENL_REQ_ATTR_CHECK(info, CAPFENCE_A_PID))
		return -EINVAL;
	pid = nla_get_u32(info->attrs[CAPFENCE_A_PID]);
	/* @pid is resolved in the caller's pid namespace: compare it there */
	if (pid != task_tgid_vnr(current) && !host) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "an unbound caller with CAP_MAC_ADMIN is needed to inspect another task");
		return -EPERM;
	}
	cred = cf_get_task_cred(pid);
	if (!cred) {
		NL_SET_ERR_MSG_MOD(info->extack, "no task with this pid");
		return -ESRCH;
	}
	/*
	 * Sized from what the task holds; a delegation between sizing and
	 * filling (holdings only grow) sizes it again.
	 */
	do {
		msg = genlmsg_new(cf_task_size(cred), GFP_KERNEL);
		if (!msg) {
			err = -ENOMEM;
			break;
		}
		rcu_read_lock();
		err = cf_task_fill(msg, info, pid, cred, host);
		rcu_read_unlock();
		if (err)
			nlmsg_free(msg);
	} while (err == -EMSGSIZE && ++tries < 3);
	put_cred(cred);
	return err ? err : genlmsg_reply(msg, info);
}

/*
 * An op whose spec lists no request has no generated policy, and 6.12
 * parses nothing for it (6.1 gives it a reject-all policy): refuse what
 * it was sent rather than ignore it.
 */
static int cf_nl_no_attrs(const struct genl_split_ops *ops,
			  struct genl_info *info)
{
	if (ops->policy || nlmsg_attrlen(info->nlhdr, GENL_HDRLEN) <= 0)
		return 0;
	NL_SET_ERR_MSG_ATTR(info->extack,
			    nlmsg_attrdata(info->nlhdr, GENL_HDRLEN),
			    "this command takes no attribute");
	return -EINVAL;
}

/**
 * cf_nl_pre_bare() - the pre_doit of an operation that takes no attribute
 * @ops: the operation (its spec's do says "pre: cf-nl-pre-bare")
 * @skb: the request
 * @info: its attributes and extack
 *
 * Return: 0, or -EINVAL when the request carries an attribute.
 */
int cf_nl_pre_bare(const struct genl_split_ops *ops, struct sk_buff *skb,
		   struct genl_info *info)
{
	return cf_nl_no_attrs(ops, info);
}

/**
 * cf_nl_pre_admin() - the pre_doit of the control operations
 * @ops: the operation (its spec's do marks it "pre: cf-nl-pre-admin")
 * @skb: the request
 * @info: its attributes and extack
 *
 * Control operations need CAP_MAC_ADMIN in the initial user namespace and
 * a caller that is not bound to an epoch (GENL_ADMIN_PERM would be
 * CAP_NET_ADMIN, and cannot see the binding).
 *
 * Return: 0, -EINVAL for an attribute sent to one that takes none
 * (cf_nl_pre_bare()), or -EPERM with the extack saying which of the two
 * failed.
 */
int cf_nl_pre_admin(const struct genl_split_ops *ops, struct sk_buff *skb,
		    struct genl_info *info)
{
	int err = cf_nl_no_attrs(ops, info);

	if (err)
		return err;
	if (!netlink_capable(skb, CAP_MAC_ADMIN)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "CAP_MAC_ADMIN in the initial user namespace is required");
		return -EPERM;
	}
	if (cf_current_bound()) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a task bound to an epoch cannot use control operations");
		return -EPERM;
	}
	return 0;
}

#if CF_KSERIES < 602
/* 6.1: the generated split ops as full ops (compat.h) */
static struct genl_ops cf_genl_full[ARRAY_SIZE(capfence_nl_ops)];

static int cf_genl_pre_doit(const struct genl_ops *full, struct sk_buff *skb,
			    struct genl_info *info)
{
	return cf_genl_split_pre_doit(capfence_nl_ops,
				      ARRAY_SIZE(capfence_nl_ops), full, skb,
				      info);
}
#endif

/* ops and policies are netlink_gen.c's, generated from the spec */
static struct genl_family cf_family __ro_after_init = {
	.name = CAPFENCE_GENL_NAME,
	.version = CAPFENCE_GENL_VERSION,
	.module = THIS_MODULE,
	CF_GENL_FAMILY_OPS,
	.resv_start_op = 0,
	.parallel_ops = true,
	.mcgrps = cf_mcgrps,
	.n_mcgrps = ARRAY_SIZE(cf_mcgrps),
};

/**
 * cf_netlink_init() - register the capfence family
 *
 * Return: 0 or an error from genl_register_family().
 */
int cf_netlink_init(void)
{
	int err;

#if CF_KSERIES < 602
	cf_family.ops = cf_genl_full;
	cf_family.n_ops = cf_genl_split_to_full(capfence_nl_ops,
						ARRAY_SIZE(capfence_nl_ops),
						cf_genl_full);
#endif
	err = genl_register_family(&cf_family);
	/* the core's events go out through the family from here on */
	if (!err)
		cf_notify_register(cf_event);
	return err;
}

/**
 * cf_netlink_exit() - unregister the family
 */
void cf_netlink_exit(void)
{
	cf_notify_register(NULL);
	genl_unregister_family(&cf_family);
}
