/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU counters (stats.c).
 */
#ifndef _CAPFENCE_STATS_H
#define _CAPFENCE_STATS_H

#include <linux/percpu.h>
#include <uapi/linux/capfence.h>

struct cf_counters {
	u64 delegate[__CAPFENCE_R_MAX];
	u64 exercise[__CAPFENCE_R_MAX];
	u64 open_memo[2];	/* misses, hits */
	u64 foreign_calls;	/* kfunc calls by other BPF programs */
	u64 learn;		/* exercises a log rule allowed */
};

DECLARE_PER_CPU(struct cf_counters, cf_counters);

/**
 * cf_stats_exercises_ok() - count @n allowed exercises at once
 * @n: how many (an open for reading and writing is two)
 *
 * Inline: a memo hit (decide.c, fsmemo.c) counts on its short path.
 */
static inline void cf_stats_exercises_ok(unsigned int n)
{
	this_cpu_add(cf_counters.exercise[CAPFENCE_R_OK], n);
}

/* cf_stats_exercises_ok() for one */
static inline void cf_stats_exercise_ok(void)
{
	cf_stats_exercises_ok(1);
}

/**
 * cf_stats_open_memo() - count whether the open memo answered an open
 * @hit: true when it did
 */
static inline void cf_stats_open_memo(bool hit)
{
	this_cpu_inc(cf_counters.open_memo[hit]);
}

/**
 * cf_stats_foreign_call() - count a kfunc call by another BPF program
 */
static inline void cf_stats_foreign_call(void)
{
	this_cpu_inc(cf_counters.foreign_calls);
}

/**
 * cf_stats_learn() - count an exercise a log rule allowed (op=learn)
 */
static inline void cf_stats_learn(void)
{
	this_cpu_inc(cf_counters.learn);
}

void cf_stats_delegate(enum capfence_reason r);
void cf_stats_exercise(enum capfence_reason r);
void cf_stats_sum(struct cf_counters *sum);

#endif /* _CAPFENCE_STATS_H */
