// SPDX-License-Identifier: GPL-2.0
/*
 * The monotonic fence and the control-plane mutex.
 *
 * Locking: cf_fence is a seqlock; holding its spinlock (write_seqlock) is
 * the only way to advance the fence, activate an epoch, revoke a cap_id or
 * change a key. Readers never block writers and retry on change, so every
 * decision sees one consistent snapshot. cf_mutex is taken by netlink
 * handlers before the fence lock, never while holding it, and never from
 * BPF program context.
 */
#include <linux/atomic.h>
#include "capfence.h"

/* the fence lock: orders activations, revocations and key changes */
DEFINE_SEQLOCK(cf_fence);
/* serializes control-plane mutations that allocate; taken first */
DEFINE_MUTEX(cf_mutex);

u64 cf_fence_val;	/* read with cf_fence_value_locked() (capfence.h) */
static atomic64_t cf_gen = ATOMIC64_INIT(1);

/**
 * cf_fence_value() - read the current fence value
 *
 * Return: the fence, read consistently with other fence-protected state.
 */
u64 cf_fence_value(void)
{
	unsigned int seq;
	u64 v;

	do {
		seq = read_seqbegin(&cf_fence);
		v = READ_ONCE(cf_fence_val);
	} while (read_seqretry(&cf_fence, seq));
	return v;
}

/**
 * cf_fence_advance_locked() - advance the fence by one
 *
 * Caller holds the fence lock (write_seqlock(&cf_fence)).
 *
 * Return: the new fence value.
 */
u64 cf_fence_advance_locked(void)
{
	lockdep_assert_held(&cf_fence.lock);
	WRITE_ONCE(cf_fence_val, cf_fence_val + 1);
	cf_generation_bump();
	return cf_fence_val;
}

/**
 * cf_generation() - state generation for consistent netlink dumps
 *
 * Return: a counter bumped by every change a dump can show.
 */
u64 cf_generation(void)
{
	return atomic64_read(&cf_gen);
}

/**
 * cf_generation_bump() - record that dumpable state changed
 */
void cf_generation_bump(void)
{
	atomic64_inc(&cf_gen);
}
