/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the grants of tracked files are kept: the front end's. This is
 * the module's (file_store.c): a loadable module owns no file security
 * blob, so the grants live in a fixed table of small buckets keyed by the
 * file pointer (256 KiB), and in an rhashtable for files whose bucket is
 * full. The built-in LSM keeps them in the file blob instead and brings
 * its own file_store.h with the same functions.
 *
 * Locking: a slot is claimed with cmpxchg() in file_open, before the file
 * is visible to any other user, and forgotten in file_free_security, when
 * it has no user left: only the file's own users read a slot's grants, so
 * slots need no RCU. The overflow table is read under RCU (BPF programs
 * hold it) and its entries are freed after a grace period.
 */
#ifndef _CAPFENCE_FILE_STORE_H
#define _CAPFENCE_FILE_STORE_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/hash.h>
#include "file.h"

/*
 * 2^CF_FILE_BITS buckets of CF_FILE_WAYS slots: the open and close of a
 * file under a capability cost a claim and a release, not an allocation
 * and a hash insert.
 */
#define CF_FILE_BITS	11
#define CF_FILE_WAYS	4

struct cf_file_slot {
	const struct file *file;	/* NULL: free */
	struct cf_file_grants g;
};

struct cf_file_bucket {
	struct cf_file_slot slot[CF_FILE_WAYS];
};

extern struct cf_file_bucket *cf_file_buckets;
extern atomic_long_t cf_nr_file_overflow;

struct cf_file_grants *cf_file_store_find_overflow(const struct file *file);

static inline struct cf_file_bucket *cf_file_bucket(const struct file *file)
{
	return &cf_file_buckets[hash_ptr((void *)file, CF_FILE_BITS)];
}

/**
 * cf_file_store_find() - the grants of a tracked file
 * @file: the file
 *
 * Inline: every tracked open and every use of a tracked file asks.
 *
 * Return: its grants, valid while the file lives, or NULL.
 */
static __always_inline struct cf_file_grants *
cf_file_store_find(const struct file *file)
{
	struct cf_file_slot *s = cf_file_bucket(file)->slot;
	struct cf_file_slot *end = s + CF_FILE_WAYS;

	for (; s < end; s++)
		if (READ_ONCE(s->file) == file)
			return &s->g;
	if (!atomic_long_read(&cf_nr_file_overflow))
		return NULL;
	return cf_file_store_find_overflow(file);
}

struct cf_file_grants *cf_file_store_claim(struct file *file);
bool cf_file_store_forget(const struct file *file);
int cf_file_store_init(void);
void cf_file_store_exit(void (*release)(struct cf_file_grants *g));

#endif /* _CAPFENCE_FILE_STORE_H */
