// SPDX-License-Identifier: GPL-2.0
/*
 * Token MAC keys: installed by id, never readable back, HMAC-SHA256 through
 * the kernel crypto API, MACs compared in constant time.
 *
 * Locking: cf_keys is an RCU list. Install and remove hold cf_mutex and
 * publish under the fence lock, advancing the fence (a key change orders
 * against revocations and activations). Removal waits for a grace period
 * before freeing the transform, whose memory the crypto API wipes.
 */
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include "fence.h"
#include "key.h"

struct cf_key {
	struct list_head node;
	u32 id;
	struct cf_keycell *cell;	/* one reference */
	struct crypto_shash *tfm;	/* keyed hmac(sha256) */
};

static LIST_HEAD(cf_keys);

static struct cf_key *cf_key_find(u32 id)
{
	struct cf_key *k;

	list_for_each_entry_rcu(k, &cf_keys, node, lockdep_is_held(&cf_mutex))
		if (k->id == id)
			return k;
	return NULL;
}

/**
 * cf_key_install() - install a 32-byte MAC key under @id
 * @id: key id, non-zero
 * @key: CAPFENCE_KEY_LEN bytes; the caller wipes its copy
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex.
 *
 * Return: 0, -EINVAL for id 0, -EEXIST when @id is installed, -ENOMEM,
 * or an error from the crypto API.
 */
int cf_key_install(u32 id, const u8 *key, struct netlink_ext_ack *extack)
{
	struct cf_key *k;
	int err;

	lockdep_assert_held(&cf_mutex);
	if (!id) {
		NL_SET_ERR_MSG_MOD(extack, "key id 0 is reserved");
		return -EINVAL;
	}
	if (cf_key_find(id)) {
		NL_SET_ERR_MSG_MOD(extack, "a key with this id is installed; remove it first");
		return -EEXIST;
	}
	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return -ENOMEM;
	k->id = id;
	k->cell = kzalloc(sizeof(*k->cell), GFP_KERNEL);
	if (!k->cell) {
		kfree(k);
		return -ENOMEM;
	}
	refcount_set(&k->cell->ref, 1);
	k->tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(k->tfm)) {
		err = PTR_ERR(k->tfm);
		kfree(k->cell);
		kfree(k);
		NL_SET_ERR_MSG_MOD(extack, "hmac(sha256) is not available");
		return err;
	}
	err = crypto_shash_setkey(k->tfm, key, CAPFENCE_KEY_LEN);
	if (err) {
		crypto_free_shash(k->tfm);
		kfree(k->cell);
		kfree(k);
		return err;
	}
	write_seqlock(&cf_fence);
	list_add_tail_rcu(&k->node, &cf_keys);
	cf_fence_advance_locked();
	write_sequnlock(&cf_fence);
	return 0;
}

/**
 * cf_key_remove() - remove the key @id; tokens under it become forged
 * @id: key id
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex. Sleeps for an RCU grace period.
 *
 * Return: 0 or -ENOENT.
 */
int cf_key_remove(u32 id, struct netlink_ext_ack *extack)
{
	struct cf_key *k;

	lockdep_assert_held(&cf_mutex);
	k = cf_key_find(id);
	if (!k) {
		NL_SET_ERR_MSG_MOD(extack, "no key with this id is installed");
		return -ENOENT;
	}
	/* every grant accepted under this key is fenced at this instant */
	write_seqlock(&cf_fence);
	list_del_rcu(&k->node);
	WRITE_ONCE(k->cell->removed_at, cf_fence_advance_locked());
	write_sequnlock(&cf_fence);
	synchronize_rcu();
	cf_keycell_put(k->cell);
	crypto_free_shash(k->tfm);
	kfree(k);
	return 0;
}

/**
 * cf_keycell_get() - the removal cell of an installed key
 * @key_id: key id
 *
 * Caller holds cf_mutex, so the key cannot go away meanwhile.
 *
 * Return: the cell with a new reference, or NULL when no such key is
 * installed.
 */
struct cf_keycell *cf_keycell_get(u32 key_id)
{
	struct cf_key *k;

	lockdep_assert_held(&cf_mutex);
	k = cf_key_find(key_id);
	if (!k)
		return NULL;
	refcount_inc(&k->cell->ref);
	return k->cell;
}

/**
 * cf_keycell_put() - drop a reference to a key's removal cell
 * @c: the cell
 *
 * Grants drop theirs from their RCU callback, after which no reader can
 * reach the cell: it is freed at once, never through another callback.
 */
void cf_keycell_put(struct cf_keycell *c)
{
	if (refcount_dec_and_test(&c->ref))
		kfree(c);
}

/**
 * cf_key_verify() - check a MAC in constant time
 * @key_id: key the token names
 * @msg: canonical token bytes covered by the MAC
 * @len: length of @msg
 * @mac: CAPFENCE_MAC_LEN bytes to check
 *
 * Process context. An unknown key and a wrong MAC are both failures: the
 * caller reports them as forged.
 *
 * Return: 0 when the MAC is right, -ENOKEY for an unknown key, -EBADMSG
 * for a wrong MAC, or a crypto API error.
 */
int cf_key_verify(u32 key_id, const u8 *msg, size_t len, const u8 *mac)
{
	u8 out[CAPFENCE_MAC_LEN];
	struct cf_key *k;
	int err;

	rcu_read_lock();
	k = cf_key_find(key_id);
	if (!k) {
		rcu_read_unlock();
		return -ENOKEY;
	}
	err = crypto_shash_tfm_digest(k->tfm, msg, len, out);
	rcu_read_unlock();
	if (!err && crypto_memneq(out, mac, CAPFENCE_MAC_LEN))
		err = -EBADMSG;
	memzero_explicit(out, sizeof(out));
	return err;
}

/**
 * cf_key_exit() - drop every key at module exit
 */
void cf_key_exit(void)
{
	struct cf_key *k, *tmp;

	list_for_each_entry_safe(k, tmp, &cf_keys, node) {
		list_del(&k->node);
		cf_keycell_put(k->cell);
		crypto_free_shash(k->tfm);
		kfree(k);
	}
}
