/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rhashtables keyed by a pointer (the socket table, and the file table's
 * overflow); the credential table is a fixed array of RCU chains (cred.c).
 */
#ifndef _CAPFENCE_PTRTABLE_H
#define _CAPFENCE_PTRTABLE_H

#include <linux/hash.h>
#include <linux/rhashtable.h>

/**
 * cf_ptr_hashfn() - rhashtable hash of a pointer key
 * @data: the key, a pointer
 * @len: key length, sizeof(void *) (unused: the key is one pointer)
 * @seed: the table's random seed
 *
 * The socket and file tables are keyed by pointers: one multiply
 * instead of jhash over the key bytes. The high half is folded in before
 * the multiply because rhashtable uses the low bits of the result, and the
 * seed is mixed into every bit a bucket index depends on.
 *
 * Return: the hash.
 */
static inline u32 cf_ptr_hashfn(const void *data, u32 len, u32 seed)
{
	u64 k = (u64)*(const unsigned long *)data;

	k ^= k >> 32;
	return hash_64(k ^ seed, 32);
}

/**
 * cf_ptr_cmpfn() - rhashtable compare of a pointer key
 * @arg: the lookup (key and table)
 * @obj: an entry whose key is at the table's key_offset
 *
 * Return: 0 when @obj's key is the pointer looked up.
 */
static inline int cf_ptr_cmpfn(struct rhashtable_compare_arg *arg,
			       const void *obj)
{
	const void *key = (const char *)obj + arg->ht->p.key_offset;

	return *(const void *const *)arg->key != *(const void *const *)key;
}

/* Parameters of a table of @type entries keyed by the pointer @key. */
#define CF_PTR_TABLE_PARAMS(type, key, node) {				\
	.key_len = sizeof(void *),					\
	.key_offset = offsetof(type, key),				\
	.head_offset = offsetof(type, node),				\
	.automatic_shrinking = true,					\
	.hashfn = cf_ptr_hashfn,					\
	.obj_cmpfn = cf_ptr_cmpfn,					\
}

#endif /* _CAPFENCE_PTRTABLE_H */
