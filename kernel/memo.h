/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one sequence protocol of a credential's decision memos (the net memo
 * in decide.c, the open memo in fsmemo.c). A writer takes the sequence
 * from even to odd with one cmpxchg() or gives up (another task of the
 * credential is writing), stores, and releases it at the next even value;
 * a reader loads it with acquire, reads, and keeps what it read only if
 * the sequence is still the even value it began with. Neither side waits
 * or loops: a writer that loses skips, a reader that loses misses and
 * judges. Any context, BPF program context included; never sleeps.
 */
#ifndef _CAPFENCE_MEMO_H
#define _CAPFENCE_MEMO_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/types.h>

/* Take *@seqp for writing (*@seq: its even value), or false: skip. */
static __always_inline bool cf_memo_write_begin(unsigned int *seqp,
						unsigned int *seq)
{
	unsigned int s = READ_ONCE(*seqp);

	if ((s & 1) || cmpxchg(seqp, s, s + 1) != s)
		return false;
	/* cmpxchg()'s full barrier orders the writer's accesses after it */
	*seq = s;
	return true;
}

/* The writer's stores, then the next even value (cf_memo_read_begin()). */
static __always_inline void cf_memo_write_end(unsigned int *seqp,
					      unsigned int seq)
{
	/* release: pairs with the acquire in cf_memo_read_begin() */
	smp_store_release(seqp, seq + 2);
}

/* Begin a read (*@seq: the value to check), or false: a writer is in. */
static __always_inline bool cf_memo_read_begin(const unsigned int *seqp,
					       unsigned int *seq)
{
	/* acquire: pairs with the release in cf_memo_write_end() */
	*seq = smp_load_acquire(seqp);
	return !(*seq & 1);
}

/* Were the fields read since cf_memo_read_begin() one writer's? */
static __always_inline bool cf_memo_read_done(const unsigned int *seqp,
					      unsigned int seq)
{
	/* the fields' loads before the sequence's second load */
	smp_rmb();
	return READ_ONCE(*seqp) == seq;
}

#endif /* _CAPFENCE_MEMO_H */
