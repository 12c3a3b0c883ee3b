// SPDX-License-Identifier: GPL-2.0
/*
 * Per-reason counters for delegation and exercise.
 *
 * Locking: per-CPU counters bumped with this_cpu_inc() (and lowered with
 * this_cpu_dec() to take an allowed exercise back), safe from BPF
 * program context; readers sum them without a lock (a snapshot may be a
 * few events stale, never torn per counter).
 */
#include <linux/percpu.h>
#include <net/genetlink.h>
#include "capfence.h"

DEFINE_PER_CPU(struct cf_counters, cf_counters);

/**
 * cf_stats_delegate() - count a delegation result
 * @r: reason, CAPFENCE_R_OK for an accepted delegation
 */
void cf_stats_delegate(enum capfence_reason r)
{
	if (r <= CAPFENCE_R_MAX)
		this_cpu_inc(cf_counters.delegate[r]);
}

/**
 * cf_stats_exercise() - count an exercise decision
 * @r: reason, CAPFENCE_R_OK for an allowed exercise
 */
void cf_stats_exercise(enum capfence_reason r)
{
	if (r <= CAPFENCE_R_MAX)
		this_cpu_inc(cf_counters.exercise[r]);
}

/**
 * cf_stats_exercise_failed() - take back an allowed exercise
 *
 * For an operation whose exercise was allowed and counted but that then
 * failed because its file or socket could not be tracked: it was not
 * allowed after all. Per-CPU counters are summed, so the CPU that lowers
 * the count need not be the one that raised it.
 */
void cf_stats_exercise_failed(void)
{
	this_cpu_dec(cf_counters.exercise[CAPFENCE_R_OK]);
}

static u64 cf_sum(size_t off)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(u64 *)((char *)per_cpu_ptr(&cf_counters, cpu) + off);
	return sum;
}

static int cf_put_reasons(struct sk_buff *skb, int type, size_t base)
{
	struct nlattr *nest = nla_nest_start(skb, type);
	int r;

	if (!nest)
		return -EMSGSIZE;
	for (r = 1; r <= CAPFENCE_R_MAX; r++)
		if (nla_put_u64_64bit(skb, r, cf_sum(base + r * sizeof(u64)),
				      CAPFENCE_STATS_A_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/**
 * cf_stats_fill() - put CAPFENCE_A_STATS into a netlink message
 * @skb: message being built
 *
 * Return: 0 or -EMSGSIZE.
 */
int cf_stats_fill(struct sk_buff *skb)
{
	struct nlattr *nest = nla_nest_start(skb, CAPFENCE_A_STATS);

	if (!nest ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_BOUND_CREDS, cf_nr_bound(),
			      CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_HELD_CAPS, cf_nr_held(),
			      CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_DELEGATE_OK,
			      cf_sum(offsetof(struct cf_counters, delegate)),
			      CAPFENCE_STATS_A_PAD) ||
	    cf_put_reasons(skb, CAPFENCE_STATS_A_DELEGATE_REJECT,
			   offsetof(struct cf_counters, delegate)) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_EXERCISE_ALLOW,
			      cf_sum(offsetof(struct cf_counters, exercise)),
			      CAPFENCE_STATS_A_PAD) ||
	    cf_put_reasons(skb, CAPFENCE_STATS_A_EXERCISE_DENY,
			   offsetof(struct cf_counters, exercise)) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_CRED_BYTES,
			      sizeof(struct cf_cred), CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_CAP_BYTES,
			      sizeof(struct cf_grant) +
			      sizeof(struct cf_constraint) +
			      sizeof(struct cf_grant *),
			      CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_OPEN_MEMO_HIT,
			      cf_sum(offsetof(struct cf_counters,
					      open_memo[1])),
			      CAPFENCE_STATS_A_PAD) ||
	    nla_put_u64_64bit(skb, CAPFENCE_STATS_A_OPEN_MEMO_MISS,
			      cf_sum(offsetof(struct cf_counters,
					      open_memo[0])),
			      CAPFENCE_STATS_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}
