// SPDX-License-Identifier: GPL-2.0
/*
 * The module's store of the grants of tracked files (file_store.h): a
 * fixed table of small buckets keyed by the file pointer, and an
 * rhashtable for the files whose bucket is full. A file's slot is
 * forgotten in file_free_security, before its memory can be reused, so a
 * pointer key never aliases a newer file.
 *
 * Locking: a slot is claimed with cmpxchg() by file_open, before the file
 * is visible to any other user, and released with a store-release once
 * its grants are cleared; only the file's own users read a slot's grants.
 * The overflow table is read under RCU (BPF programs hold it) and its
 * entries are freed after a grace period. Never sleeps, except init and
 * exit.
 */
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "file_store.h"
#include "ptrtable.h"

/* a file whose bucket was full */
struct cf_file {
	struct rhash_head node;
	const struct file *file;	/* key */
	struct cf_file_grants g;
	struct rcu_head rcu;
};

struct cf_file_bucket *cf_file_buckets;
atomic_long_t cf_nr_file_overflow = ATOMIC_LONG_INIT(0);
static struct rhashtable cf_files;

static const struct rhashtable_params cf_file_params =
	CF_PTR_TABLE_PARAMS(struct cf_file, file, node);

/**
 * cf_file_store_find_overflow() - the grants of @file in the overflow table
 * @file: a file that is in none of its bucket's slots
 *
 * Return: the grants or NULL.
 */
noinline struct cf_file_grants *cf_file_store_find_overflow(const struct file *file)
{
	struct cf_file *f = rhashtable_lookup(&cf_files, &file, cf_file_params);

	return f ? &f->g : NULL;
}

/**
 * cf_file_store_claim() - a slot for the grants of @file
 * @file: a file being opened, not tracked yet, visible to nobody else
 *
 * Return: the slot's grants, all NULL, for the caller to fill; or
 * ERR_PTR(-ENOMEM), or ERR_PTR(-EACCES) for a stale entry of a reused
 * pointer (the open then fails: fail closed).
 */
struct cf_file_grants *cf_file_store_claim(struct file *file)
{
	struct cf_file_slot *s = cf_file_bucket(file)->slot;
	struct cf_file_slot *end = s + CF_FILE_WAYS;
	struct cf_file *f;
	int err;

	for (; s < end; s++)
		if (!READ_ONCE(s->file) && !cmpxchg(&s->file, NULL, file))
			return &s->g;
	f = kzalloc(sizeof(*f), GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->file = file;
	/* one walk of the bucket: the insert itself finds a duplicate */
	err = rhashtable_lookup_insert_fast(&cf_files, &f->node, cf_file_params);
	if (err) {
		kfree(f);
		return ERR_PTR(WARN_ON_ONCE(err == -EEXIST) ? -EACCES : -ENOMEM);
	}
	atomic_long_inc(&cf_nr_file_overflow);
	return &f->g;
}

/**
 * cf_file_store_forget() - free the slot of a file that is being freed
 * @file: the file; the caller copied its grants out
 *
 * Return: false when @file had no slot.
 */
bool cf_file_store_forget(const struct file *file)
{
	struct cf_file_slot *s = cf_file_bucket(file)->slot;
	struct cf_file_slot *end = s + CF_FILE_WAYS;
	struct cf_file *f;

	for (; s < end; s++) {
		if (READ_ONCE(s->file) != file)
			continue;
		memset(&s->g, 0, sizeof(s->g));
		/* the grants are cleared before the slot can be claimed */
		smp_store_release(&s->file, NULL);
		return true;
	}
	if (!atomic_long_read(&cf_nr_file_overflow))
		return false;
	f = rhashtable_lookup(&cf_files, &file, cf_file_params);
	if (!f || rhashtable_remove_fast(&cf_files, &f->node, cf_file_params))
		return false;
	atomic_long_dec(&cf_nr_file_overflow);
	kfree_rcu(f, rcu);
	return true;
}

/**
 * cf_file_store_init() - create the tables
 *
 * Return: 0 or -ENOMEM.
 */
int cf_file_store_init(void)
{
	int err;

	cf_file_buckets = kvcalloc(1 << CF_FILE_BITS, sizeof(*cf_file_buckets),
				   GFP_KERNEL);
	if (!cf_file_buckets)
		return -ENOMEM;
	err = rhashtable_init(&cf_files, &cf_file_params);
	if (err)
		kvfree(cf_file_buckets);
	return err;
}

struct cf_file_releaser {
	void (*release)(struct cf_file_grants *g);
};

static void cf_file_free_entry(void *ptr, void *arg)
{
	const struct cf_file_releaser *r = arg;
	struct cf_file *f = ptr;

	r->release(&f->g);
	kfree(f);
}

/**
 * cf_file_store_exit() - destroy the tables at module exit
 * @release: what drops one file's grants
 *
 * The programs are detached: files still open forget their grants here.
 */
void cf_file_store_exit(void (*release)(struct cf_file_grants *g))
{
	struct cf_file_releaser r = { release };
	unsigned int i;
	int w;

	for (i = 0; i < 1U << CF_FILE_BITS; i++)
		for (w = 0; w < CF_FILE_WAYS; w++)
			if (cf_file_buckets[i].slot[w].file)
				release(&cf_file_buckets[i].slot[w].g);
	kvfree(cf_file_buckets);
	rhashtable_free_and_destroy(&cf_files, cf_file_free_entry, &r);
}
