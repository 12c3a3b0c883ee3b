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
#include <linux/string.h>
#include "stats.h"

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
 * cf_stats_sum() - every counter, summed over the CPUs
 * @sum: filled with the totals
 *
 * Lockless: a snapshot may be a few events stale, never torn per counter.
 */
void cf_stats_sum(struct cf_counters *sum)
{
	const u64 *c;
	u64 *out = (u64 *)sum;
	size_t i;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		c = (const u64 *)per_cpu_ptr(&cf_counters, cpu);
		for (i = 0; i < sizeof(*sum) / sizeof(u64); i++)
			out[i] += READ_ONCE(c[i]);
	}
}
