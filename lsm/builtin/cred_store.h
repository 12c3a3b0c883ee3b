/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where per-credential state is kept by the built-in LSM: a pointer to
 * the credential's entry in its security blob. No table and no lookup: a
 * hook reads the pointer of the credential it has. The module keeps the
 * same entries in a table instead (kernel/cred_store.h).
 *
 * Locking: the pointer is published with rcu_assign_pointer() and read
 * with rcu_dereference() under RCU; it is written under cred.c's
 * cf_cred_lock. An entry is unpublished in cred_free, before the blob
 * and the cred are freed, and the entry itself after a grace period.
 */
#ifndef _CAPFENCE_CRED_STORE_H
#define _CAPFENCE_CRED_STORE_H

#include <linux/cred.h>
#include <linux/lsm_hooks.h>
#include <linux/rcupdate.h>

struct cf_cred;

extern struct lsm_blob_sizes capfence_blob_sizes;

/* the slot of @cred's blob that points to its entry */
static inline struct cf_cred __rcu **cf_cred_slot(const struct cred *cred)
{
	return cred->security + capfence_blob_sizes.lbs_cred;
}

/* false: @cred has no entry (every unbound credential) */
static inline bool cf_cred_maybe(const struct cred *cred)
{
	return cred->security && rcu_access_pointer(*cf_cred_slot(cred));
}

/**
 * cf_cred_find() - state of @cred
 * @cred: credential
 *
 * Caller holds rcu_read_lock().
 *
 * Return: the entry or NULL.
 */
static inline struct cf_cred *cf_cred_find(const struct cred *cred)
{
	return cred->security ? rcu_dereference(*cf_cred_slot(cred)) : NULL;
}

/* nothing to announce: the blob is the cred's own */
static inline void cf_cred_store_reserve(const struct cred *cred)
{
}

static inline void cf_cred_store_unreserve(const struct cred *cred)
{
}

bool cf_cred_store_add(struct cf_cred *e);
bool cf_cred_store_del(struct cf_cred *e);
void cf_cred_store_exit(void (*release)(struct cf_cred *e));

#endif /* _CAPFENCE_CRED_STORE_H */
