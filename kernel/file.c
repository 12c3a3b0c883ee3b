// SPDX-License-Identifier: GPL-2.0
/*
 * Revalidation of files opened under a capability. A file opened by a
 * bound task through a token rule remembers the grant that admitted it;
 * every later read or write (file_permission) checks that grant again, so
 * a revocation or a fence move takes effect on already-open files too, not
 * only on the next open. Files opened under an "open" rule carry nothing
 * and cost one atomic read.
 *
 * Locking: an rhashtable keyed by the file pointer; entries are added in
 * file_open, removed in file_free_security (the file is dying, no other
 * user), read under RCU (BPF programs hold it). Grant validity is read in
 * a fence read section. Never sleeps: BPF program context.
 */
#include <linux/fs.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include "capfence.h"

struct cf_file {
	struct rhash_head node;
	const struct file *file;	/* key */
	struct cf_grant *grant;		/* reference held */
	u8 class_id;
	struct rcu_head rcu;
};

static struct rhashtable cf_files;
atomic_long_t cf_nr_files = ATOMIC_LONG_INIT(0);

/* pointer keys: compare them as pointers, not as bytes */
static int cf_file_cmpfn(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct cf_file *f = obj;

	return *(const struct file *const *)arg->key != f->file;
}

static const struct rhashtable_params cf_file_params = {
	.key_len = sizeof(const struct file *),
	.key_offset = offsetof(struct cf_file, file),
	.head_offset = offsetof(struct cf_file, node),
	.automatic_shrinking = true,
	.hashfn = cf_ptr_hashfn,
	.obj_cmpfn = cf_file_cmpfn,
};

/**
 * cf_file_track() - remember the grant that admitted an open
 * @file: the file being opened
 * @g: the grant; a reference is taken
 * @class_id: fs:read or fs:write
 *
 * A file opened for reading and writing is tracked under the write grant
 * first; the read grant is checked at open time like any other.
 *
 * A file already tracked stays tracked under its first grant.
 *
 * Return: 0, or -ENOMEM (the open then fails: fail closed).
 */
int cf_file_track(struct file *file, struct cf_grant *g, u8 class_id)
{
	struct cf_file *f;
	int err;

	f = kzalloc(sizeof(*f), GFP_ATOMIC | __GFP_NOWARN);
	if (!f)
		return -ENOMEM;
	f->file = file;
	f->grant = g;
	f->class_id = class_id;
	refcount_inc(&g->ref);
	/* one walk of the bucket: the insert itself finds a duplicate */
	err = rhashtable_lookup_insert_fast(&cf_files, &f->node, cf_file_params);
	if (err) {
		cf_grant_put(g);
		kfree(f);
		return err == -EEXIST ? 0 : -ENOMEM;
	}
	atomic_long_inc(&cf_nr_files);
	return 0;
}

/**
 * cf_file_revalidate() - is the grant behind an open file still valid?
 * @file: file being read or written
 *
 * Return: 0, or -EACCES (audited) when its grant was revoked or fenced.
 */
int cf_file_revalidate(struct file *file)
{
	struct cf_target t = {};
	enum capfence_reason r;
	struct cf_file *f;
	unsigned int seq;
	char *buf;
	u64 fence;

	if (!atomic_long_read(&cf_nr_files))
		return 0;
	f = rhashtable_lookup(&cf_files, &file, cf_file_params);
	if (!f)
		return 0;
	do {
		seq = read_seqbegin(&cf_fence);
		r = cf_grant_state(f->grant);
		fence = cf_fence_value_locked();
	} while (read_seqretry(&cf_fence, seq));
	if (r == CAPFENCE_R_OK)
		return 0;
	cf_stats_exercise(r);
	t.class_id = f->class_id;
	/* the path costs an allocation, paid only when denying */
	buf = kmalloc(PATH_MAX, GFP_ATOMIC | __GFP_NOWARN);
	t.path = buf ? d_path(&file->f_path, buf, PATH_MAX) : ERR_PTR(-ENOMEM);
	if (IS_ERR(t.path))
		t.path = "?";
	t.path_len = strlen(t.path);
	cf_audit_exercise(&t, f->grant->epoch->id, r, f->grant->capid->cap_id,
			  fence);
	kfree(buf);
	return -EACCES;
}

/**
 * cf_file_free() - forget a file that is being freed
 * @file: the file
 */
void cf_file_free(struct file *file)
{
	struct cf_file *f;

	if (!atomic_long_read(&cf_nr_files))
		return;
	f = rhashtable_lookup(&cf_files, &file, cf_file_params);
	if (!f || rhashtable_remove_fast(&cf_files, &f->node, cf_file_params))
		return;
	atomic_long_dec(&cf_nr_files);
	cf_grant_put(f->grant);
	kfree_rcu(f, rcu);
}

/**
 * cf_file_init() - create the table
 *
 * Return: 0 or -ENOMEM.
 */
int cf_file_init(void)
{
	return rhashtable_init(&cf_files, &cf_file_params);
}

static void cf_file_free_entry(void *ptr, void *arg)
{
	struct cf_file *f = ptr;

	cf_grant_put(f->grant);
	kfree(f);
}

/**
 * cf_file_exit() - destroy the table at module exit (empty by then)
 */
void cf_file_exit(void)
{
	rhashtable_free_and_destroy(&cf_files, cf_file_free_entry, NULL);
}
