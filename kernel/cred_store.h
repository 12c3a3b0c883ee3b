/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where per-credential state is kept: the front end's. This is the
 * module's (cred_store.c): a loadable module owns no credential blob, so
 * the state lives in a fixed table keyed by the cred pointer, behind a
 * counting filter. The built-in LSM keeps it in the cred blob instead and
 * brings its own cred_store.h with the same functions.
 *
 * Locking: cf_cred_store_add() and cf_cred_store_del() are called with
 * cred.c's cf_cred_lock held (a _bh spinlock), between
 * cf_cred_store_reserve() and cf_cred_store_unreserve(), which run
 * outside it; lookups run under RCU.
 */
#ifndef _CAPFENCE_CRED_STORE_H
#define _CAPFENCE_CRED_STORE_H

#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/hash.h>

struct cf_cred;

/*
 * Counting filter in front of the credential table: counter
 * hash_ptr(cred) counts the entries whose key hashes there. It is raised
 * before an entry is inserted and lowered after it is removed, so a zero
 * counter means @cred has no entry.
 */
#define CF_CRED_HINT_BITS	14
extern atomic_t cf_cred_hint[1 << CF_CRED_HINT_BITS];

static inline atomic_t *cf_cred_hint_of(const struct cred *cred)
{
	return &cf_cred_hint[hash_ptr(cred, CF_CRED_HINT_BITS)];
}

/* false: @cred certainly has no entry (nearly every unbound credential) */
static inline bool cf_cred_maybe(const struct cred *cred)
{
	return atomic_read(cf_cred_hint_of(cred));
}

/**
 * cf_cred_store_reserve() - announce an entry for @cred before it is added
 * @cred: the credential an entry is about to be added for
 *
 * Raises its filter counter, so that whoever finds the entry sees it.
 */
static inline void cf_cred_store_reserve(const struct cred *cred)
{
	atomic_inc(cf_cred_hint_of(cred));
}

/**
 * cf_cred_store_unreserve() - undo cf_cred_store_reserve()
 * @cred: the credential whose entry was not added, or is removed
 */
static inline void cf_cred_store_unreserve(const struct cred *cred)
{
	atomic_dec(cf_cred_hint_of(cred));
}

struct cf_cred *cf_cred_find(const struct cred *cred);
bool cf_cred_store_add(struct cf_cred *e);
bool cf_cred_store_del(struct cf_cred *e);
void cf_cred_store_exit(void (*release)(struct cf_cred *e));

#endif /* _CAPFENCE_CRED_STORE_H */
