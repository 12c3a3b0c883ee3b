// SPDX-License-Identifier: GPL-2.0
/*
 * Revalidation of files opened under a capability. A file opened by a
 * bound task through a token rule remembers the grants that admitted it
 * (fs:read, fs:write or both); every later read checks the read grant and
 * every later write the write grant again, so a revocation or a fence move
 * takes effect on already-open files too, not only on the next open. Files
 * opened under "open" rules carry nothing; while no file is tracked the
 * hooks (kfunc.c) do not call in here at all.
 *
 * Mappings: a new mapping of a tracked file reads it, so it is checked
 * against the read grant like a read. Stores through a shared writable
 * mapping reach the file without any hook, and a mapping made before a
 * revocation cannot be stopped after it; so a file whose writes are
 * admitted by a grant is never mapped shared and writable (mmap and
 * mprotect are refused, reason "bypass"). Private mappings never reach the
 * file.
 *
 * Locking: an rhashtable keyed by the file pointer; entries are added in
 * file_open, removed in file_free_security (the file is dying, no other
 * user), read under RCU (BPF programs hold it). Grant validity is read in
 * a fence read section. Never sleeps: BPF program context.
 */
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include "capfence.h"

struct cf_file {
	struct rhash_head node;
	const struct file *file;	/* key */
	struct cf_grant *read;		/* fs:read grant or NULL; reference held */
	struct cf_grant *write;		/* fs:write grant or NULL; reference held */
	struct rcu_head rcu;
};

static struct rhashtable cf_files;
atomic_long_t cf_nr_files = ATOMIC_LONG_INIT(0);

static const struct rhashtable_params cf_file_params =
	CF_PTR_TABLE_PARAMS(struct cf_file, file, node);

static void cf_file_release(struct cf_file *f)
{
	if (f->read)
		cf_grant_put(f->read);
	if (f->write)
		cf_grant_put(f->write);
}

/**
 * cf_file_track() - remember the grants that admitted an open
 * @file: the file being opened
 * @rg: the fs:read grant, or NULL (not opened for reading, or an open rule)
 * @wg: the fs:write grant, or NULL; at least one of @rg and @wg is set
 *
 * A reference is taken on each grant. Entries leave in file_free_security,
 * so a file already in the table can only be a stale entry for a reused
 * pointer: that fails the open.
 *
 * Return: 0, -ENOMEM or -EACCES (the open then fails: fail closed).
 */
int cf_file_track(struct file *file, struct cf_grant *rg, struct cf_grant *wg)
{
	struct cf_file *f;
	int err;

	f = kzalloc(sizeof(*f), GFP_ATOMIC | __GFP_NOWARN);
	if (!f)
		return -ENOMEM;
	f->file = file;
	if (rg) {
		refcount_inc(&rg->ref);
		f->read = rg;
	}
	if (wg) {
		refcount_inc(&wg->ref);
		f->write = wg;
	}
	/* one walk of the bucket: the insert itself finds a duplicate */
	err = rhashtable_lookup_insert_fast(&cf_files, &f->node, cf_file_params);
	if (err) {
		cf_file_release(f);
		kfree(f);
		return WARN_ON_ONCE(err == -EEXIST) ? -EACCES : -ENOMEM;
	}
	atomic_long_inc(&cf_nr_files);
	return 0;
}

/* The grant behind @f for @mask, rechecked; see cf_file_revalidate(). */
static int cf_file_check(struct cf_file *f, struct file *file, int mask)
{
	struct cf_target t = {};
	enum capfence_reason r;
	struct cf_grant *g;
	unsigned int seq;
	char *buf;
	u64 fence;

	if (mask & MAY_WRITE) {
		g = f->write;
		t.class_id = CAPFENCE_CLASS_FS_WRITE;
	} else {
		g = f->read;
		t.class_id = CAPFENCE_CLASS_FS_READ;
	}
	/* no grant: this kind of access was admitted by an open rule */
	if (!g)
		return 0;
	do {
		seq = read_seqbegin(&cf_fence);
		r = cf_grant_state(g);
		fence = cf_fence_value_locked();
	} while (read_seqretry(&cf_fence, seq));
	if (r == CAPFENCE_R_OK)
		return 0;
	cf_stats_exercise(r);
	/* the path costs an allocation, paid only when denying */
	buf = kmalloc(PATH_MAX, GFP_ATOMIC | __GFP_NOWARN);
	t.path = buf ? d_path(&file->f_path, buf, PATH_MAX) : ERR_PTR(-ENOMEM);
	if (IS_ERR(t.path))
		t.path = "?";
	t.path_len = strlen(t.path);
	cf_audit_exercise(&t, g->epoch->id, r, g->capid->cap_id, fence);
	kfree(buf);
	return -EACCES;
}

/**
 * cf_file_revalidate() - is the grant behind a read or write still valid?
 * @file: file being read or written
 * @mask: MAY_READ or MAY_WRITE (file_permission)
 *
 * The caller has tested cf_nr_tracked_files().
 *
 * Return: 0, or -EACCES (audited) when the grant that admitted this kind
 * of access at open was revoked or fenced since.
 */
int cf_file_revalidate(struct file *file, int mask)
{
	struct cf_file *f;

	f = rhashtable_lookup(&cf_files, &file, cf_file_params);
	return f ? cf_file_check(f, file, mask) : 0;
}

/**
 * cf_file_map() - may a tracked file get a new mapping, or a new protection?
 * @file: the mapped file
 * @prot: the mapping's protection (PROT_*)
 * @shared: stores through the mapping reach the file (MAP_SHARED)
 * @what: "mmap" or "mprotect", for the audit record
 *
 * The caller has tested cf_nr_tracked_files(). A shared writable mapping
 * of a file whose writes a grant admitted is refused outright: a later
 * revocation could not stop its stores. Any other mapping reads the file
 * and rechecks the read grant.
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_file_map(struct file *file, unsigned long prot, bool shared,
		const char *what)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_FS_WRITE,
			       .what = what };
	struct cf_file *f;

	f = rhashtable_lookup(&cf_files, &file, cf_file_params);
	if (!f)
		return 0;
	if (shared && (prot & PROT_WRITE) && f->write) {
		cf_stats_exercise(CAPFENCE_R_BYPASS);
		cf_audit_exercise(&t, f->write->epoch->id, CAPFENCE_R_BYPASS,
				  f->write->capid->cap_id, cf_fence_value());
		return -EACCES;
	}
	return cf_file_check(f, file, MAY_READ);
}

/**
 * cf_file_free() - forget a file that is being freed
 * @file: the file
 *
 * The caller has tested cf_nr_tracked_files().
 */
void cf_file_free(struct file *file)
{
	struct cf_file *f;

	f = rhashtable_lookup(&cf_files, &file, cf_file_params);
	if (!f || rhashtable_remove_fast(&cf_files, &f->node, cf_file_params))
		return;
	atomic_long_dec(&cf_nr_files);
	cf_file_release(f);
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

	cf_file_release(f);
	kfree(f);
}

/**
 * cf_file_exit() - destroy the table at module exit (empty by then)
 */
void cf_file_exit(void)
{
	rhashtable_free_and_destroy(&cf_files, cf_file_free_entry, NULL);
}
