// SPDX-License-Identifier: GPL-2.0
/*
 * Epoch tables: install (strictly increasing ids, all or nothing, at most
 * epochs_max of them), activation (explicit, or by the first bind), the
 * narrowing fence, and retirement. A complain epoch (one with a log rule)
 * takes no part in the fence: it narrows nothing, and its activation
 * neither fences nor moves the active epoch.
 *
 * Locking: cf_epochs is an RCU list in ascending id order, cf_epoch_ids
 * the same epochs by id (an xarray: lookups under RCU). Installs and
 * retirements hold cf_mutex, and change the list under the fence lock;
 * activations hold the fence lock (the exec hook's without cf_mutex).
 * Activation never sleeps: it also runs from the exec hook in BPF program
 * context. It walks only the list of older epochs the epoch narrows,
 * computed at install (no rule is compared under the fence lock).
 *
 * Lifetime: an epoch is referred to by pointer only from credential
 * entries (bound or pending) and from grants, each counted in it
 * (e->creds, e->grants). A count goes from 0 to 1 only under cf_mutex
 * (exec-set and grant creation hold it; a credential copy or a grant
 * exists only while a counted reference does), so cf_epoch_retire(),
 * under cf_mutex, sees zero and unlinks the epoch; a reader that still
 * holds a pointer found it before the last reference went, under RCU, and
 * the epoch is freed after synchronize_rcu(). The highest id ever
 * installed stays the floor for new ids: a retired id never returns.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "constraint.h"
#include "epoch.h"
#include "fence.h"
#include "seccomp.h"

static unsigned int epochs_max = 1024;
module_param(epochs_max, uint, 0644);
MODULE_PARM_DESC(epochs_max,
		 "epochs installed at once; another install fails with ENOSPC (0: none)");

static unsigned int epochs_keep;
module_param(epochs_keep, uint, 0644);
MODULE_PARM_DESC(epochs_keep,
		 "install retires the oldest unreferenced epochs down to this many (0: never)");

static LIST_HEAD(cf_epochs);
static DEFINE_XARRAY(cf_epoch_ids);
static u32 cf_nr_epochs;	/* cf_mutex; read with READ_ONCE() */
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
 * cf_epoch_free() - free an epoch that is not (or no longer) installed
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
	kvfree(e->narrows);
	kfree(e);
}

/**
 * cf_epoch_find() - look an installed epoch up by id
 * @id: epoch id
 *
 * Caller holds rcu_read_lock() or cf_mutex; the result stays valid until
 * the caller leaves that section, or for as long as the caller holds a
 * counted reference (a credential entry or a grant naming it).
 *
 * Return: the epoch or NULL (never installed, or retired).
 */
struct cf_epoch *cf_epoch_find(u64 id)
{
	BUILD_BUG_ON(sizeof(unsigned long) < sizeof(u64));
	return xa_load(&cf_epoch_ids, id);
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

/*
 * The older installed epochs @e narrows, class by class, leaving out the
 * classes already fenced (a fence is never lifted): what activating @e
 * will fence. Caller holds cf_mutex. May sleep.
 */
static int cf_epoch_find_narrowed(struct cf_epoch *e)
{
	struct cf_narrow *tmp;
	struct cf_epoch *old;
	u32 n = 0;
	int c;

	lockdep_assert_held(&cf_mutex);
	/* learning never narrows (nor widens) a policy that enforces */
	if (!cf_nr_epochs || e->complain)
		return 0;
	tmp = kvmalloc_array(cf_nr_epochs, sizeof(*tmp), GFP_KERNEL);
	if (!tmp)
		return -ENOMEM;
	list_for_each_entry(old, &cf_epochs, node) {
		u32 classes = 0;

		for (c = 1; c < __CAPFENCE_CLASS_MAX; c++) {
			/*
			 * a deny rule is narrowed by nothing: the common case;
			 * a log rule holds no token to fence
			 */
			if (old->rules[c].kind == CAPFENCE_RULE_DENY ||
			    old->rules[c].kind == CAPFENCE_RULE_LOG ||
			    READ_ONCE(old->fenced_at[c]))
				continue;
			if (cf_rule_narrows(&old->rules[c], &e->rules[c]))
				classes |= BIT(c);
		}
		if (classes) {
			tmp[n].id = old->id;
			tmp[n].classes = classes;
			n++;
		}
	}
	if (n) {
		e->narrows = kvmalloc_array(n, sizeof(*tmp), GFP_KERNEL);
		if (!e->narrows) {
			kvfree(tmp);
			return -ENOMEM;
		}
		memcpy(e->narrows, tmp, n * sizeof(*tmp));
		e->nr_narrows = n;
	}
	kvfree(tmp);
	return 0;
}

/*
 * Can @e go? Not while it is the active epoch (the highest activated) or
 * anything names it. Caller holds cf_mutex.
 */
static int cf_epoch_retirable(const struct cf_epoch *e,
			      struct netlink_ext_ack *extack)
{
	if (e->id == READ_ONCE(cf_active_epoch)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "epoch is the active epoch; activate a newer one first");
		return -EBUSY;
	}
	if (atomic_read(&e->grants)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "capabilities granted under the epoch are still held (by a task, or an open file or socket)");
		return -EBUSY;
	}
	if (atomic_read(&e->creds)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "tasks are bound to the epoch, or an exec is set to bind it");
		return -EBUSY;
	}
	return 0;
}

/*
 * A task that exited a moment ago still names its epoch until its last
 * context switch has dropped the task and the RCU callbacks that free its
 * credential, holdings and grants have run, each queued by the one before.
 * cf_epoch_settle() gives them up to this long.
 */
#define CF_RETIRE_SETTLE_MS	500
#define CF_RETIRE_SETTLE_STEP_MS	10

/* Does anything but cf_mutex's holder stop @id's retirement for now? */
static bool cf_epoch_named(u64 id)
{
	struct cf_epoch *e;
	bool named;

	rcu_read_lock();
	e = cf_epoch_find(id);
	named = e && id != READ_ONCE(cf_active_epoch) &&
		(atomic_read(&e->grants) || atomic_read(&e->creds));
	rcu_read_unlock();
	return named;
}

/**
 * cf_epoch_settle() - let the state of exited tasks go before a retire
 * @id: epoch id
 *
 * While credentials or grants name @id (and it is not the active epoch),
 * wait for RCU callbacks and context switches, up to CF_RETIRE_SETTLE_MS,
 * so that stopping the agents and then retiring their epoch succeeds
 * without a retry. Takes no lock: the caller must not hold cf_mutex.
 * Sleeps.
 */
void cf_epoch_settle(u64 id)
{
	unsigned long until = jiffies + msecs_to_jiffies(CF_RETIRE_SETTLE_MS);

	while (cf_epoch_named(id) && time_before(jiffies, until)) {
		rcu_barrier();
		if (cf_epoch_named(id))
			msleep(CF_RETIRE_SETTLE_STEP_MS);
	}
}

/* Unlink retirable @e onto @gone. Caller holds cf_mutex. */
static void cf_epoch_unlink(struct cf_epoch *e, struct list_head *gone)
{
	lockdep_assert_held(&cf_mutex);
	/* its activation event, if queued, names it: send it first */
	if (READ_ONCE(e->active))
		flush_work(&cf_activation_work);
	write_seqlock(&cf_fence);
	list_del_rcu(&e->node);
	xa_erase(&cf_epoch_ids, e->id);
	WRITE_ONCE(cf_nr_epochs, cf_nr_epochs - 1);
	cf_generation_bump();
	write_sequnlock(&cf_fence);
	list_add_tail(&e->gone, gone);
}

/* Free the epochs on @gone once no reader can hold one. */
static void cf_epoch_free_gone(struct list_head *gone)
{
	struct cf_epoch *e, *tmp;

	if (list_empty(gone))
		return;
	synchronize_rcu();
	list_for_each_entry_safe(e, tmp, gone, gone) {
		cf_notify(CAPFENCE_EV_EPOCH_RETIRE, e->id, 0, CAPFENCE_R_OK, 0);
		cf_epoch_free(e);
	}
}

/*
 * epochs_keep: retire the oldest retirable epochs until fewer than @keep
 * remain, making room for one more. Caller holds cf_mutex.
 */
static void cf_epoch_auto_retire(u32 keep, struct list_head *gone)
{
	struct cf_epoch *e, *tmp;

	list_for_each_entry_safe(e, tmp, &cf_epochs, node) {
		if (cf_nr_epochs < keep)
			break;
		if (!cf_epoch_retirable(e, NULL))
			cf_epoch_unlink(e, gone);
	}
}

/**
 * cf_epoch_install() - publish a fully built epoch
 * @e: epoch from cf_epoch_alloc() with its rules filled in
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex. With epochs_keep set, the oldest epochs nothing
 * refers to are retired first, down to epochs_keep - 1. An epoch with a
 * log rule is marked complain here. On success @e belongs to the epoch
 * list.
 *
 * Return: 0, -ERANGE when @e->id is not above every id installed so far
 * (retired ones included), -ENOSPC at epochs_max installed epochs, or
 * -ENOMEM.
 */
int cf_epoch_install(struct cf_epoch *e, struct netlink_ext_ack *extack)
{
	u32 keep = READ_ONCE(epochs_keep), max = READ_ONCE(epochs_max);
	LIST_HEAD(gone);
	int err, i;

	lockdep_assert_held(&cf_mutex);
	for (i = 1; i < __CAPFENCE_CLASS_MAX; i++)
		if (e->rules[i].kind == CAPFENCE_RULE_LOG)
			e->complain = true;
	if (e->id <= READ_ONCE(cf_max_epoch)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "epoch id is not above the highest installed epoch (retired ones count)");
		return -ERANGE;
	}
	if (keep)
		cf_epoch_auto_retire(keep, &gone);
	cf_epoch_free_gone(&gone);
	if (cf_nr_epochs >= max) {
		NL_SET_ERR_MSG_MOD(extack,
				   "as many epochs are installed as the module's epochs_max; retire unused ones (capfence epoch retire)");
		return -ENOSPC;
	}
	err = cf_epoch_find_narrowed(e);
	if (err)
		return err;
	err = xa_insert(&cf_epoch_ids, e->id, e, GFP_KERNEL);
	if (err) {
		/* the id is above every installed one: only -ENOMEM */
		kvfree(e->narrows);
		e->narrows = NULL;
		e->nr_narrows = 0;
		return -ENOMEM;
	}
	write_seqlock(&cf_fence);
	list_add_tail_rcu(&e->node, &cf_epochs);
	WRITE_ONCE(cf_max_epoch, e->id);
	WRITE_ONCE(cf_nr_epochs, cf_nr_epochs + 1);
	cf_generation_bump();
	write_sequnlock(&cf_fence);
	return 0;
}

/**
 * cf_epoch_retire() - retire an epoch nothing refers to
 * @id: epoch id
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex (and called cf_epoch_settle() before taking it).
 * Sleeps (a grace period). The id stays used: a new epoch still needs an
 * id above it.
 *
 * Return: 0, -ENOENT for an id not installed (or already retired), or
 * -EBUSY for the active epoch or one that credentials or grants name.
 */
int cf_epoch_retire(u64 id, struct netlink_ext_ack *extack)
{
	struct cf_epoch *e;
	LIST_HEAD(gone);
	int err;

	lockdep_assert_held(&cf_mutex);
	e = cf_epoch_find(id);
	if (!e) {
		if (id && id <= READ_ONCE(cf_max_epoch))
			NL_SET_ERR_MSG_MOD(extack,
					   "epoch is not installed (retired, or its id was never used)");
		else
			NL_SET_ERR_MSG_MOD(extack, "epoch is not installed");
		return -ENOENT;
	}
	err = cf_epoch_retirable(e, extack);
	if (err)
		return err;
	cf_epoch_unlink(e, &gone);
	cf_epoch_free_gone(&gone);
	return 0;
}

/**
 * cf_epoch_activate_locked() - activate @e and fence what it narrows
 * @e: installed epoch
 *
 * For every older epoch and every class that @e narrows relative to it,
 * tokens of that class minted under the older epoch become fenced at the
 * new fence value. Which those are was found at install (@e->narrows):
 * no rule is compared here. Caller holds the fence lock. Never sleeps.
 *
 * Return: 1 when @e became active now, 0 when it already was.
 */
static int cf_epoch_activate_locked(struct cf_epoch *e)
{
	struct cf_epoch *old;
	u64 fence;
	u32 i;
	int c;

	lockdep_assert_held(&cf_fence.lock);
	if (e->active)
		return 0;
	fence = cf_fence_advance_locked();
	for (i = 0; i < e->nr_narrows; i++) {
		/* retired since: nothing of it is left to fence */
		old = xa_load(&cf_epoch_ids, e->narrows[i].id);
		if (!old)
			continue;
		for (c = 1; c < __CAPFENCE_CLASS_MAX; c++)
			if ((e->narrows[i].classes & BIT(c)) && !old->fenced_at[c])
				WRITE_ONCE(old->fenced_at[c], fence);
	}
	WRITE_ONCE(e->active, true);
	/* the active epoch is the host's policy: a complain one never is */
	if (e->id > cf_active_epoch && !e->complain)
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
 * cf_epoch_count() - number of installed epochs
 *
 * Return: the count.
 */
u32 cf_epoch_count(void)
{
	return READ_ONCE(cf_nr_epochs);
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
	xa_destroy(&cf_epoch_ids);
}
