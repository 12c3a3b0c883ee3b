// SPDX-License-Identifier: GPL-2.0
/*
 * Epoch tables: install (strictly increasing ids, all or nothing),
 * activation (explicit, or by the first bind) and the narrowing fence.
 *
 * Locking: cf_epochs is an RCU list in ascending id order. Additions and
 * activations happen under the fence lock; installs also hold cf_mutex so
 * the monotonicity check and the insertion are one step. Epochs are never
 * removed while the module is loaded, so a pointer to one obtained under
 * RCU stays valid for the module's lifetime. Activation never sleeps: it
 * also runs from the exec hook in BPF program context.
 */
#include <linux/list.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "constraint.h"
#include "epoch.h"
#include "fence.h"
#include "seccomp.h"

static LIST_HEAD(cf_epochs);
/* epochs activated by a bind whose event is not sent yet; each once */
static LLIST_HEAD(cf_bind_activated);

/*
 * The exec hook cannot send netlink messages; a work item does it, one
 * event per activated epoch, in activation order.
 */
static void cf_activation_event(struct work_struct *work)
{
	struct llist_node *n = llist_reverse_order(llist_del_all(&cf_bind_activated));
	struct cf_epoch *e, *tmp;

	llist_for_each_entry_safe(e, tmp, n, activated)
		cf_notify(CAPFENCE_EV_EPOCH_ACTIVATE, e->id, 0, CAPFENCE_R_OK, 0);
}

static DECLARE_WORK(cf_activation_work, cf_activation_event);

static u64 cf_max_epoch;	/* fence lock */
static u64 cf_active_epoch;	/* fence lock */

/**
 * cf_epoch_alloc() - allocate an epoch whose classes all deny
 * @id: epoch id
 *
 * Return: the epoch, or NULL.
 */
struct cf_epoch *cf_epoch_alloc(u64 id)
{
	struct cf_epoch *e = kzalloc(sizeof(*e), GFP_KERNEL);

	if (e)
		e->id = id;
	return e;
}

/**
 * cf_epoch_free() - free an epoch that was never installed
 * @e: epoch, may be NULL
 */
void cf_epoch_free(struct cf_epoch *e)
{
	int i;

	if (!e)
		return;
	for (i = 0; i < __CAPFENCE_CLASS_MAX; i++)
		kfree(e->rules[i].c);
	cf_seccomp_free(e->sc);
	kfree(e);
}

/**
 * cf_epoch_find() - look an installed epoch up by id
 * @id: epoch id
 *
 * Caller holds rcu_read_lock() or cf_mutex; the result stays valid until
 * module exit.
 *
 * Return: the epoch or NULL.
 */
struct cf_epoch *cf_epoch_find(u64 id)
{
	struct cf_epoch *e;

	list_for_each_entry_rcu(e, &cf_epochs, node, lockdep_is_held(&cf_mutex))
		if (e->id == id)
			return e;
	return NULL;
}

/**
 * cf_epoch_list() - the epoch list, for RCU walks in id order
 *
 * Return: the list head.
 */
struct list_head *cf_epoch_list(void)
{
	return &cf_epochs;
}

/**
 * cf_epoch_install() - publish a fully built epoch
 * @e: epoch from cf_epoch_alloc() with its rules filled in
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex. On success @e belongs to the epoch list.
 *
 * Return: 0, or -ERANGE when @e->id is not above every installed id.
 */
int cf_epoch_install(struct cf_epoch *e, struct netlink_ext_ack *extack)
{
	lockdep_assert_held(&cf_mutex);
	if (e->id <= READ_ONCE(cf_max_epoch)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "epoch id is not above the highest installed epoch");
		return -ERANGE;
	}
	write_seqlock(&cf_fence);
	list_add_tail_rcu(&e->node, &cf_epochs);
	WRITE_ONCE(cf_max_epoch, e->id);
	cf_generation_bump();
	write_sequnlock(&cf_fence);
	return 0;
}

/**
 * cf_epoch_activate_locked() - activate @e and fence what it narrows
 * @e: installed epoch
 *
 * For every older epoch and every class that @e narrows relative to it,
 * tokens of that class minted under the older epoch become fenced at the
 * new fence value. Caller holds the fence lock. Never sleeps.
 *
 * Return: 1 when @e became active now, 0 when it already was.
 */
static int cf_epoch_activate_locked(struct cf_epoch *e)
{
	struct cf_epoch *old;
	u64 fence;
	int c;

	lockdep_assert_held(&cf_fence.lock);
	if (e->active)
		return 0;
	fence = cf_fence_advance_locked();
	list_for_each_entry(old, &cf_epochs, node) {
		if (old->id >= e->id)
			break;
		for (c = 1; c < __CAPFENCE_CLASS_MAX; c++) {
			if (old->fenced_at[c])
				continue;
			if (cf_rule_narrows(&old->rules[c], &e->rules[c]))
				WRITE_ONCE(old->fenced_at[c], fence);
		}
	}
	WRITE_ONCE(e->active, true);
	if (e->id > cf_active_epoch)
		WRITE_ONCE(cf_active_epoch, e->id);
	return 1;
}

/* Activate @e under the fence write lock. */
static int cf_epoch_activate_fenced(struct cf_epoch *e)
{
	int ret;

	write_seqlock(&cf_fence);
	ret = cf_epoch_activate_locked(e);
	write_sequnlock(&cf_fence);
	return ret;
}

/**
 * cf_epoch_bind_activate() - activate @e at the first bind to it
 * @e: the epoch an execve is binding
 *
 * Never sleeps (exec hook, BPF program context). The event is published
 * from a work item.
 */
void cf_epoch_bind_activate(struct cf_epoch *e)
{
	int now;

	/* the usual case: already active (it never goes back), no writer */
	if (READ_ONCE(e->active))
		return;
	now = cf_epoch_activate_fenced(e);
	/* an epoch activates once: its node is queued at most once */
	if (now) {
		llist_add(&e->activated, &cf_bind_activated);
		schedule_work(&cf_activation_work);
	}
}

/**
 * cf_epoch_activate() - explicit activation from the control plane
 * @id: epoch id
 * @extack: netlink extended ack
 *
 * Return: 1 when activated now, 0 when already active, or -ENOENT for an
 * unknown epoch.
 */
int cf_epoch_activate(u64 id, struct netlink_ext_ack *extack)
{
	struct cf_epoch *e;

	lockdep_assert_held(&cf_mutex);
	e = cf_epoch_find(id);
	if (!e) {
		NL_SET_ERR_MSG_MOD(extack, "epoch is not installed");
		return -ENOENT;
	}
	return cf_epoch_activate_fenced(e);
}

/**
 * cf_epoch_max_id() - highest installed epoch id, 0 when none
 *
 * Return: the id.
 */
u64 cf_epoch_max_id(void)
{
	return READ_ONCE(cf_max_epoch);
}

/**
 * cf_epoch_active_id() - highest activated epoch id, 0 when none
 *
 * Return: the id.
 */
u64 cf_epoch_active_id(void)
{
	return READ_ONCE(cf_active_epoch);
}

/**
 * cf_epoch_events_stop() - finish activation events before netlink goes
 *
 * Module exit: no hook can run any more, so no event is queued after this.
 */
void cf_epoch_events_stop(void)
{
	cancel_work_sync(&cf_activation_work);
}

/**
 * cf_epoch_exit() - free every epoch at module exit
 *
 * No reader can exist: hooks are detached and netlink is unregistered.
 */
void cf_epoch_exit(void)
{
	struct cf_epoch *e, *tmp;

	list_for_each_entry_safe(e, tmp, &cf_epochs, node) {
		list_del(&e->node);
		cf_epoch_free(e);
	}
}
