// SPDX-License-Identifier: GPL-2.0
/*
 * The capability graph: revocation cells per cap_id, grants (accepted
 * tokens with their delegator) and the immutable holdings sets credentials
 * point to.
 *
 * Locking: cf_capids is an RCU hash table; cells are added under cf_mutex
 * and the fence lock, and live until module exit (a revocation must be
 * remembered so the cap_id can never be delegated again). revoked_at is
 * written under the fence lock and read inside a fence read section.
 * Grants and holdings are immutable and reference counted; the last put
 * frees them after an RCU grace period, so readers under RCU never see
 * freed memory. A grant is counted in its epoch until then (e->grants):
 * an epoch a grant names is not retired. Nothing here sleeps except
 * cf_revoke().
 */
#include <linux/hashtable.h>
#include <linux/slab.h>
#include "cap.h"
#include "epoch.h"
#include "fence.h"
#include "fleet.h"
#include "key.h"
#include "token.h"

static DEFINE_HASHTABLE(cf_capids, 10);
static atomic_long_t cf_held_count = ATOMIC_LONG_INIT(0);

/**
 * cf_capid_find() - look up the cell of @cap_id
 * @cap_id: capability id
 *
 * Caller holds rcu_read_lock() or cf_mutex.
 *
 * Return: the cell or NULL.
 */
static struct cf_capid *cf_capid_find(u64 cap_id)
{
	struct cf_capid *c;

	hash_for_each_possible_rcu(cf_capids, c, node, cap_id,
				   lockdep_is_held(&cf_mutex))
		if (c->cap_id == cap_id)
			return c;
	return NULL;
}

/**
 * cf_capid_get_or_create() - reference the cell of @cap_id, creating it
 * @cap_id: capability id
 *
 * Caller holds cf_mutex. May sleep.
 *
 * Return: a referenced cell, or NULL on allocation failure.
 */
static struct cf_capid *cf_capid_get_or_create(u64 cap_id)
{
	struct cf_capid *c;

	lockdep_assert_held(&cf_mutex);
	c = cf_capid_find(cap_id);
	if (c) {
		refcount_inc(&c->ref);
		return c;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return NULL;
	c->cap_id = cap_id;
	/* one reference for the table, one for the caller */
	refcount_set(&c->ref, 2);
	write_seqlock(&cf_fence);
	hash_add_rcu(cf_capids, &c->node, cap_id);
	write_sequnlock(&cf_fence);
	return c;
}

/**
 * cf_capid_put() - drop a reference to a cell
 * @c: cell
 *
 * The table keeps its own reference until module exit, so this never
 * frees a cell that is still hashed.
 */
static void cf_capid_put(struct cf_capid *c)
{
	if (refcount_dec_and_test(&c->ref))
		kfree_rcu(c, rcu);
}

/**
 * cf_grant_from_token() - create a grant for an accepted token
 * @t: decoded, verified token
 * @e: the epoch the token was minted under (installed)
 * @from: delegator pid, 0 for the orchestrator
 * @gfp: allocation flags
 *
 * Caller holds cf_mutex (for the cap_id cell and the key, which the caller
 * has just verified the token under).
 *
 * Return: a grant with one reference, or NULL.
 */
struct cf_grant *cf_grant_from_token(const struct cf_token *t,
				     struct cf_epoch *e, pid_t from,
				     gfp_t gfp)
{
	struct cf_grant *g;

	g = kzalloc(struct_size(g, c, t->n), gfp);
	if (!g)
		return NULL;
	g->key = cf_keycell_get(t->key_id);
	if (!g->key) {
		kfree(g);
		return NULL;
	}
	g->capid = cf_capid_get_or_create(t->cap_id);
	if (!g->capid) {
		cf_keycell_put(g->key);
		kfree(g);
		return NULL;
	}
	refcount_set(&g->ref, 1);
	/* under cf_mutex: no retire between the caller's find and here */
	atomic_inc(&e->grants);
	g->epoch = e;
	g->class_id = t->class_id;
	g->key_id = t->key_id;
	g->from_pid = from;
	g->fleet_rev = cf_fleet_rev();
	g->n = t->n;
	memcpy(g->c, t->c, t->n * sizeof(t->c[0]));
	atomic_long_inc(&cf_held_count);
	return g;
}

/*
 * RCU callbacks of this module that are still queued. A holdings callback
 * queues grant callbacks, so one rcu_barrier() at exit is not enough:
 * cf_cap_drain() waits until none is left.
 */
static atomic_t cf_rcu_queued = ATOMIC_INIT(0);

static void cf_call_rcu(struct rcu_head *head, rcu_callback_t fn)
{
	atomic_inc(&cf_rcu_queued);
	call_rcu(head, fn);
}

static void cf_grant_free_rcu(struct rcu_head *h)
{
	struct cf_grant *g = container_of(h, struct cf_grant, rcu);

	cf_capid_put(g->capid);
	cf_keycell_put(g->key);
	/* after the grace period: no reader can reach @g, nor by it the epoch */
	atomic_dec(&g->epoch->grants);
	kfree(g);
	atomic_dec(&cf_rcu_queued);
}

/**
 * cf_grant_put() - drop a reference to a grant
 * @g: grant, may be NULL
 *
 * Safe in any context; the grant is freed after a grace period.
 */
void cf_grant_put(struct cf_grant *g)
{
	if (g && refcount_dec_and_test(&g->ref)) {
		atomic_long_dec(&cf_held_count);
		cf_call_rcu(&g->rcu, cf_grant_free_rcu);
	}
}

/**
 * cf_holdings_add() - a new holdings set: @old plus @g
 * @old: current set, may be NULL
 * @g: grant; the new set takes over the caller's reference
 * @gfp: allocation flags
 *
 * Return: the new set with one reference, or NULL (then @g is untouched).
 */
struct cf_holdings *cf_holdings_add(const struct cf_holdings *old,
				    struct cf_grant *g, gfp_t gfp)
{
	u32 n = old ? old->n : 0, i;
	struct cf_holdings *h;

	h = kzalloc(struct_size(h, g, n + 1), gfp);
	if (!h)
		return NULL;
	refcount_set(&h->ref, 1);
	for (i = 0; i < n; i++) {
		h->g[i] = old->g[i];
		refcount_inc(&h->g[i]->ref);
	}
	h->g[n] = g;
	h->n = n + 1;
	return h;
}

static void cf_holdings_free_rcu(struct rcu_head *head)
{
	struct cf_holdings *h = container_of(head, struct cf_holdings, rcu);
	u32 i;

	for (i = 0; i < h->n; i++)
		cf_grant_put(h->g[i]);
	kfree(h);
	atomic_dec(&cf_rcu_queued);
}

/**
 * cf_cap_drain() - wait until no callback of this module is queued
 *
 * Module exit, after every user of grants and holdings is gone: callbacks
 * queue further callbacks, so wait for grace periods until none is left.
 */
void cf_cap_drain(void)
{
	do
		rcu_barrier();
	while (atomic_read(&cf_rcu_queued));
}

/**
 * cf_holdings_get() - take a reference to a holdings set
 * @h: set, may be NULL
 *
 * Return: @h.
 */
struct cf_holdings *cf_holdings_get(struct cf_holdings *h)
{
	if (h)
		refcount_inc(&h->ref);
	return h;
}

/**
 * cf_holdings_put() - drop a reference to a holdings set
 * @h: set, may be NULL
 *
 * Safe in any context, including RCU callbacks; freeing is deferred.
 */
void cf_holdings_put(struct cf_holdings *h)
{
	if (h && refcount_dec_and_test(&h->ref))
		cf_call_rcu(&h->rcu, cf_holdings_free_rcu);
}

/**
 * cf_revoke() - revoke @cap_id for every holder and descendant
 * @cap_id: capability id
 * @fence: set to the fence value that orders the revocation
 *
 * Every grant of @cap_id, however it was delegated, shares one cell, so
 * marking the cell under the fence lock revokes all of them at once: once
 * this returns, no exercise or delegation can see the capability as valid.
 * Revoking an unknown cap_id records it, so it can never be delegated.
 * Caller holds cf_mutex.
 *
 * Return: 0, or -ENOMEM.
 */
int cf_revoke(u64 cap_id, u64 *fence)
{
	struct cf_capid *c = cf_capid_get_or_create(cap_id);

	if (!c)
		return -ENOMEM;
	write_seqlock(&cf_fence);
	if (!c->revoked_at)
		WRITE_ONCE(c->revoked_at, cf_fence_advance_locked());
	*fence = c->revoked_at;
	write_sequnlock(&cf_fence);
	cf_capid_put(c);
	return 0;
}

/**
 * cf_nr_held() - number of live grants
 *
 * Return: the count.
 */
u64 cf_nr_held(void)
{
	return atomic_long_read(&cf_held_count);
}

/**
 * cf_cap_exit() - free every cell at module exit
 *
 * Runs after rcu_barrier(), so every grant is gone.
 */
void cf_cap_exit(void)
{
	struct hlist_node *tmp;
	struct cf_capid *c;
	int bkt;

	hash_for_each_safe(cf_capids, bkt, tmp, c, node) {
		hash_del(&c->node);
		kfree(c);
	}
}
