// SPDX-License-Identifier: GPL-2.0
/*
 * The module's store of per-credential state (cred_store.h): a loadable
 * module cannot own a credential security blob, so entries live in a
 * fixed table of 2^CF_CRED_HINT_BITS RCU chains keyed by the cred
 * pointer, indexed like the filter's counters: a lookup is one multiply,
 * one load and a short chain (an rhashtable lookup cost every bound hook
 * ~40 instructions more). A cred's entry is removed in cred_free, before
 * the cred's memory can be reused, so a pointer key never aliases a newer
 * cred.
 *
 * Locking: lookups run under RCU (BPF programs hold it); the chains are
 * written under cred.c's cf_cred_lock. The filter counter of an entry is
 * raised (cf_cred_store_reserve()) before the entry is inserted, and the
 * insert publishes the entry with rcu_assign_pointer (a release), so
 * whoever can find the entry also sees its counter raised; it is lowered
 * only after the entry is removed. A cred whose counter is zero (nearly
 * every unbound one) skips the table.
 */
#include <linux/rculist.h>
#include "cred.h"
#include "cred_store.h"

static struct hlist_head cf_creds[1 << CF_CRED_HINT_BITS];
atomic_t cf_cred_hint[1 << CF_CRED_HINT_BITS];

/**
 * cf_cred_find() - state of @cred, without the filter test
 * @cred: credential that cf_cred_maybe() already let through
 *
 * For the hooks, which test the filter themselves first. Caller holds
 * rcu_read_lock().
 *
 * Return: the entry or NULL.
 */
struct cf_cred *cf_cred_find(const struct cred *cred)
{
	struct cf_cred *e;

	hlist_for_each_entry_rcu(e, &cf_creds[hash_ptr(cred, CF_CRED_HINT_BITS)],
				 node)
		if (e->cred == cred)
			return e;
	return NULL;
}

/**
 * cf_cred_store_add() - publish @e under its cred
 * @e: new entry; its cred's counter is reserved
 *
 * Caller holds cf_cred_lock.
 *
 * Return: false, adding nothing, when its cred has an entry already.
 */
bool cf_cred_store_add(struct cf_cred *e)
{
	struct hlist_head *b = &cf_creds[hash_ptr(e->cred, CF_CRED_HINT_BITS)];
	struct cf_cred *o;

	hlist_for_each_entry(o, b, node)
		if (o->cred == e->cred)
			return false;
	hlist_add_head_rcu(&e->node, b);
	return true;
}

/**
 * cf_cred_store_del() - unpublish @e
 * @e: an entry cf_cred_store_add() published
 *
 * Caller holds cf_cred_lock; readers may still hold @e until a grace
 * period ends.
 *
 * Return: false when @e was removed already.
 */
bool cf_cred_store_del(struct cf_cred *e)
{
	if (hlist_unhashed(&e->node))
		return false;
	hlist_del_init_rcu(&e->node);
	return true;
}

/**
 * cf_cred_store_exit() - release every entry left, at module exit
 * @release: what frees one entry
 *
 * Hooks are detached only while no entry exists, so this frees nothing in
 * normal operation.
 */
void cf_cred_store_exit(void (*release)(struct cf_cred *e))
{
	struct hlist_node *tmp;
	struct cf_cred *e;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cf_creds); i++)
		hlist_for_each_entry_safe(e, tmp, &cf_creds[i], node) {
			hlist_del_init(&e->node);
			release(e);
		}
}
