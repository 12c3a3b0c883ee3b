/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fence (fence.c): the one seqlock every activation, revocation and
 * key change publishes under, the control-plane mutex, the attach state
 * and the notification callback events go out through. The fence value
 * is read through cf_fence_value() or, inside a read section,
 * cf_fence_value_locked(); only fence.c writes it.
 *
 * Locking, in one place:
 * - cf_fence (fence.c) is a seqlock. Its spinlock is THE fence lock: every
 *   epoch activation, revocation and key change publishes under it and
 *   advances the fence. Decisions read a consistent snapshot with
 *   read_seqbegin()/read_seqretry(); nothing under it sleeps.
 * - cf_mutex (fence.c) serializes control-plane mutations that allocate
 *   (netlink handlers). It is taken before the fence lock, never inside it,
 *   and never from BPF program context.
 * - Credential state (cred.c) lives in a fixed table of RCU hash chains
 *   keyed by the cred pointer, written under one _bh spinlock; lookups
 *   run under RCU, which BPF programs already hold. A counting filter
 *   (atomic counters) in front of it lets a credential without state skip
 *   the lookup.
 * - The attach state (fence.c) is written under cf_mutex and read
 *   locklessly. Events leave through the notification callback of
 *   fence.c, in process context; netlink.c alone builds and sends them.
 * - A bound credential's net decision memo (decide.c) is a seqcount
 *   taken by writers with one cmpxchg() or skipped; readers retry nothing,
 *   they miss. It is valid only at the fence value it remembers.
 * - A sandbox (sandbox.c) is reference counted by the credential entries
 *   that carry it and freed after a grace period; its counters and budget
 *   windows are atomics advanced by cmpxchg, never a lock, so a denial's
 *   record is never dropped uncounted.
 * - The fleet revision and its deadlines (fleet.c) are written under
 *   cf_mutex and read locklessly, one u64 at a time.
 * - Objects reachable from RCU readers (epochs, keys, grants, holdings) are
 *   freed only after a grace period.
 */
#ifndef _CAPFENCE_FENCE_H
#define _CAPFENCE_FENCE_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>
#include <asm/barrier.h>
#include <uapi/linux/capfence.h>

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
void cf_attached_set(u64 cookie);
bool cf_hooks_attached(void);

extern u64 cf_cookie;

/**
 * cf_attach_cookie() - the cookie of the links of capfence's programs
 *
 * Any context. The trampoline running one of capfence's programs holds it
 * in current->bpf_ctx (kfunc.c). Acquire: the programs' images
 * (cf_images) are the ones published with it.
 *
 * Return: the cookie, 0 while the hooks are not attached.
 */
static inline u64 cf_attach_cookie(void)
{
	/* pairs with cf_attached_set()'s release: the images come with it */
	return smp_load_acquire(&cf_cookie);
}

/*
 * The machine code of one of capfence's attached programs, [start, end),
 * and the kernel function whose trampoline runs it (the LSM hook's
 * bpf_lsm_<hook>, or the fexit's function).
 */
struct cf_image {
	unsigned long start;
	unsigned long end;
	unsigned long hook;
};

/* by kfunc, CF_KFUNC_HOOKS_MAX each (hooks.c, kfunc.c; hooklist.h) */
extern const struct cf_image *cf_images;
void cf_images_set(const struct cf_image *images);

/* publishes one event (netlink.c's sender); process context */
typedef void (*cf_notify_fn)(enum capfence_event ev, u64 epoch, u64 cap_id,
			     enum capfence_reason r, pid_t pid);
void cf_notify_register(cf_notify_fn fn);
void cf_notify(enum capfence_event ev, u64 epoch, u64 cap_id,
	       enum capfence_reason r, pid_t pid);

#endif /* _CAPFENCE_FENCE_H */
