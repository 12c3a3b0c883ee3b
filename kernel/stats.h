/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU counters (stats.c).
 */
#ifndef _CAPFENCE_STATS_H
#define _CAPFENCE_STATS_H

#include <uapi/linux/capfence.h>

struct sk_buff;

void cf_stats_delegate(enum capfence_reason r);
void cf_stats_exercise(enum capfence_reason r);
void cf_stats_exercise_failed(void);
int cf_stats_fill(struct sk_buff *skb);

#endif /* _CAPFENCE_STATS_H */
