/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the built-in LSM keeps the grants of a tracked file: in the file's
 * security blob, whole (three pointers). No table, no lookup and no
 * allocation at a tracked open. The module keeps them in a table instead
 * (kernel/file_store.h).
 *
 * Locking: the blob is zeroed when the file is allocated, filled by
 * file_open before the file is visible to any other user, and cleared in
 * file_free_security, when it has no user left: only the file's own users
 * read it, so it needs no lock and no RCU.
 */
#ifndef _CAPFENCE_FILE_STORE_H
#define _CAPFENCE_FILE_STORE_H

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/lsm_hooks.h>
#include <linux/string.h>
#include "file.h"

extern struct lsm_blob_sizes capfence_blob_sizes;

/* @file's grants in its blob; NULL only before the LSM is initialised */
static inline struct cf_file_grants *cf_file_blob(const struct file *file)
{
	return file->f_security ?
	       file->f_security + capfence_blob_sizes.lbs_file : NULL;
}

/**
 * cf_file_store_find() - the grants of a tracked file
 * @file: the file
 *
 * Return: its grants (an admitted open sets one of read and write), or
 * NULL when it is not tracked.
 */
static inline struct cf_file_grants *cf_file_store_find(const struct file *file)
{
	struct cf_file_grants *g = cf_file_blob(file);

	return g && (g->read || g->write) ? g : NULL;
}

/**
 * cf_file_store_claim() - the blob's grants, for file_open to fill
 * @file: a file being opened, not tracked yet
 *
 * Return: the grants, all NULL; ERR_PTR(-EACCES) for a file without a
 * blob (fail closed).
 */
static inline struct cf_file_grants *cf_file_store_claim(struct file *file)
{
	struct cf_file_grants *g = cf_file_blob(file);

	return g ? g : ERR_PTR(-EACCES);
}

/**
 * cf_file_store_forget() - clear the grants of a file being freed
 * @file: the file; the caller copied its grants out
 *
 * Return: false when @file was not tracked.
 */
static inline bool cf_file_store_forget(const struct file *file)
{
	struct cf_file_grants *g = cf_file_store_find(file);

	if (!g)
		return false;
	memset(g, 0, sizeof(*g));
	return true;
}

/* no table to create */
static inline int cf_file_store_init(void)
{
	return 0;
}

/* built in, never unloaded */
static inline void cf_file_store_exit(void (*release)(struct cf_file_grants *g))
{
}

#endif /* _CAPFENCE_FILE_STORE_H */
