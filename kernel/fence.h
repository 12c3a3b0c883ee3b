/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fence (fence.c): the one seqlock every activation, revocation and
 * key change publishes under, and the control-plane mutex. The fence value
 * is read through cf_fence_value() or, inside a read section,
 * cf_fence_value_locked(); only fence.c writes it.
 */
#ifndef _CAPFENCE_FENCE_H
#define _CAPFENCE_FENCE_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>

extern seqlock_t cf_fence;
extern struct mutex cf_mutex;
extern u64 cf_fence_val;
u64 cf_fence_value(void);

/**
 * cf_fence_value_locked() - read the fence inside a read section or lock
 *
 * Inline: decisions read it in their fence read section.
 *
 * Return: the fence value.
 */
static inline u64 cf_fence_value_locked(void)
{
	return READ_ONCE(cf_fence_val);
}

u64 cf_fence_advance_locked(void);
u64 cf_generation(void);
void cf_generation_bump(void);

#endif /* _CAPFENCE_FENCE_H */
