// SPDX-License-Identifier: GPL-2.0
/*
 * The monotonic fence, the control-plane mutex, whether the hooks are
 * attached, and the one notification callback through which the core
 * publishes events (netlink.c registers it: no file below the control
 * plane builds or sends a netlink message).
 *
 * Locking: cf_fence is a seqlock; holding its spinlock (write_seqlock) is
 * the only way to advance the fence, activate an epoch, revoke a cap_id or
 * change a key. Readers never block writers and retry on change, so every
 * decision sees one consistent snapshot. cf_mutex is taken by netlink
 * handlers before the fence lock, never while holding it, and never from
 * BPF program context. cf_cookie (the attached programs' mark, 0 while
 * detached) is written under cf_mutex (hooks.c) and read locklessly; the
 * programs' images are written under cf_mutex while it is 0, and
 * published by its store-release.
 * The notifier is set before the module's first event can be published
 * and cleared after its last (main.c's order); it is read with
 * READ_ONCE() and called in process context.
 */
#include <linux/atomic.h>
#include "fence.h"

/* the fence lock: orders activations, revocations and key changes */
DEFINE_SEQLOCK(cf_fence);
/* serializes control-plane mutations that allocate; taken first */
DEFINE_MUTEX(cf_mutex);

u64 cf_fence_val;	/* read with cf_fence_value_locked() (fence.h) */
static atomic64_t cf_gen = ATOMIC64_INIT(1);
u64 cf_cookie;	/* cf_mutex; read with cf_attach_cookie() (fence.h) */
/* the attached programs' images: written only while cf_cookie is 0 */
const struct cf_image *cf_images;
static cf_notify_fn cf_notifier;

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

/**
 * cf_attached_set() - record whether the hooks are attached
 * @cookie: the cookie of the links once every hook's link is held, 0
 *	    once they are released
 *
 * Caller holds cf_mutex (hooks.c).
 */
void cf_attached_set(u64 cookie)
{
	lockdep_assert_held(&cf_mutex);
	/* publishes the images cf_images_set() wrote (cf_attach_cookie()) */
	smp_store_release(&cf_cookie, cookie);
}

/**
 * cf_images_set() - record the machine code of the programs being attached
 * @images: the table kfunc.c reads (hooks.c); it must stay until the next
 *	    call
 *
 * Caller holds cf_mutex, before cf_attached_set() publishes the cookie
 * (hooks.c); the hooks are not attached, so no kfunc reads them.
 */
void cf_images_set(const struct cf_image *images)
{
	lockdep_assert_held(&cf_mutex);
	WARN_ON_ONCE(READ_ONCE(cf_cookie));
	WRITE_ONCE(cf_images, images);
}

/**
 * cf_hooks_attached() - are the capfence hooks attached?
 *
 * Return: true when the module holds every hook's link.
 */
bool cf_hooks_attached(void)
{
	return READ_ONCE(cf_cookie) != 0;
}

/**
 * cf_notify_register() - set the callback events are published through
 * @fn: the control plane's sender (netlink.c), or NULL to stop
 *
 * Module init and exit only.
 */
void cf_notify_register(cf_notify_fn fn)
{
	WRITE_ONCE(cf_notifier, fn);
}

/**
 * cf_notify() - publish an event
 * @ev: event
 * @epoch: epoch concerned, or 0
 * @cap_id: capability concerned, or 0
 * @r: reason of a rejection, CAPFENCE_R_OK otherwise
 * @pid: task concerned, or 0
 *
 * Process context (the sender allocates). Nothing happens before the
 * control plane registers its sender or after it leaves.
 */
void cf_notify(enum capfence_event ev, u64 epoch, u64 cap_id,
	       enum capfence_reason r, pid_t pid)
{
	cf_notify_fn fn = READ_ONCE(cf_notifier);

	if (fn)
		fn(ev, epoch, cap_id, r, pid);
}
