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
 * against the read grant like a read. Stores through a shared mapping
 * reach the file without any hook, and a mapping made before a revocation
 * cannot be stopped after it; a shared mapping need not even be writable
 * for that: userfaultfd's UFFDIO_COPY fills a hole of a shmem file through
 * a read-only shared mapping of a file open for writing. So a file whose
 * writes are admitted by a grant is never mapped shared (mmap and mprotect
 * are refused, reason "bypass"). Private mappings never reach the file.
 * Truncation through the file (ftruncate, and on 6.1 any setattr that
 * carries the file) rechecks its write grant, whoever calls it.
 *
 * Exec: an execve is one exercise. The executable and the interpreters it
 * opens (__FMODE_EXEC) under a read grant are judged at open and listed
 * with the exec's task; while that task is in execve their reads and
 * mappings are not rechecked one by one (a refused read there is ENOEXEC,
 * a refused mapping after the point of no return is SIGSEGV), and
 * begin_new_exec() rechecks them all at bprm_creds_from_file, the last
 * hook before the point of no return, where a refusal is the exec's
 * EACCES (cf_file_exec_commit()).
 *
 * Locking: a fixed table of small buckets keyed by the file pointer, and
 * an rhashtable for files whose bucket is full. A slot is claimed with
 * cmpxchg() in file_open, before the file is visible to any other user,
 * and released in file_free_security, when it has no user left: only
 * the file's own users read a slot's grants, so slots need no RCU. The
 * overflow table is read under RCU (BPF programs hold it) and its entries
 * are freed after a grace period. The list of exec files is under
 * cf_exec_lock (a spinlock, never held across a decision); an exec file
 * leaves it at its exec's commit or when it is freed, whichever is first,
 * and its record is freed with its slot. Grant validity is judged,
 * counted and audited by decide.c (cf_exercise_recheck()). Never sleeps:
 * BPF program context.
 */
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/mman.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include "cap.h"
#include "constraint.h"
#include "decide.h"
#include "file.h"
#include "ptrtable.h"

/* a file an exec opened under a read grant (see "Exec" above) */
struct cf_file_exec {
	struct list_head node;		/* on cf_execs until committed */
	const struct task_struct *task;	/* the task that opened it */
	struct file *file;
};

/* the grants that admitted an open; a reference is held on each */
struct cf_file_grants {
	struct cf_grant *read;		/* fs:read grant or NULL */
	struct cf_grant *write;		/* fs:write grant or NULL */
	struct cf_file_exec *exec;	/* an exec's file, or NULL */
};

static LIST_HEAD(cf_execs);
static DEFINE_SPINLOCK(cf_exec_lock);
static atomic_t cf_nr_execs = ATOMIC_INIT(0);

/*
 * 2^CF_FILE_BITS buckets of CF_FILE_WAYS slots (256 KiB): the open and
 * close of a file under a capability cost a claim and a release, not an
 * allocation and a hash insert.
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

/* a file whose bucket was full */
struct cf_file {
	struct rhash_head node;
	const struct file *file;	/* key */
	struct cf_file_grants g;
	struct rcu_head rcu;
};

static struct cf_file_bucket *cf_file_buckets;
static struct rhashtable cf_files;
static atomic_long_t cf_nr_overflow = ATOMIC_LONG_INIT(0);
atomic_long_t cf_nr_files = ATOMIC_LONG_INIT(0);

static const struct rhashtable_params cf_file_params =
	CF_PTR_TABLE_PARAMS(struct cf_file, file, node);

static struct cf_file_bucket *cf_file_bucket(const struct file *file)
{
	return &cf_file_buckets[hash_ptr((void *)file, CF_FILE_BITS)];
}

/* Take @x off the list of exec files, if it is still on it. */
static void cf_file_exec_unlist(struct cf_file_exec *x)
{
	spin_lock(&cf_exec_lock);
	if (!list_empty(&x->node)) {
		list_del_init(&x->node);
		atomic_dec(&cf_nr_execs);
	}
	spin_unlock(&cf_exec_lock);
}

static void cf_file_release(struct cf_file_grants *g)
{
	if (g->read)
		cf_grant_put(g->read);
	if (g->write)
		cf_grant_put(g->write);
	if (g->exec) {
		cf_file_exec_unlist(g->exec);
		kfree(g->exec);
	}
}

static void cf_file_hold(struct cf_file_grants *g, struct cf_grant *rg,
			 struct cf_grant *wg, struct cf_file_exec *x)
{
	if (rg)
		refcount_inc(&rg->ref);
	if (wg)
		refcount_inc(&wg->ref);
	g->read = rg;
	g->write = wg;
	g->exec = x;
	if (x) {
		spin_lock(&cf_exec_lock);
		list_add(&x->node, &cf_execs);
		atomic_inc(&cf_nr_execs);
		spin_unlock(&cf_exec_lock);
	}
}

/* The grants of @file in the overflow table, or NULL. */
static noinline struct cf_file_grants *cf_file_find_overflow(const struct file *file)
{
	struct cf_file *f = rhashtable_lookup(&cf_files, &file, cf_file_params);

	return f ? &f->g : NULL;
}

/*
 * The grants of a tracked file, or NULL; valid while the file lives.
 * Inline: every tracked open and every use of a tracked file asks.
 */
static __always_inline struct cf_file_grants *
cf_file_find(const struct file *file)
{
	struct cf_file_slot *s = cf_file_bucket(file)->slot;
	struct cf_file_slot *end = s + CF_FILE_WAYS;

	for (; s < end; s++)
		if (READ_ONCE(s->file) == file)
			return &s->g;
	if (!atomic_long_read(&cf_nr_overflow))
		return NULL;
	return cf_file_find_overflow(file);
}

static int cf_file_track_overflow(struct file *file, struct cf_grant *rg,
				  struct cf_grant *wg, struct cf_file_exec *x)
{
	struct cf_file *f;
	int err;

	f = kzalloc(sizeof(*f), GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!f) {
		kfree(x);
		return -ENOMEM;
	}
	f->file = file;
	cf_file_hold(&f->g, rg, wg, x);
	/* one walk of the bucket: the insert itself finds a duplicate */
	err = rhashtable_lookup_insert_fast(&cf_files, &f->node, cf_file_params);
	if (err) {
		cf_file_release(&f->g);
		kfree(f);
		return WARN_ON_ONCE(err == -EEXIST) ? -EACCES : -ENOMEM;
	}
	atomic_long_inc(&cf_nr_overflow);
	atomic_long_inc(&cf_nr_files);
	return 0;
}

/**
 * cf_file_track() - remember the grants that admitted an open
 * @file: the file being opened
 * @rg: the fs:read grant, or NULL (not opened for reading, or an open rule)
 * @wg: the fs:write grant, or NULL; at least one of @rg and @wg is set
 *
 * A reference is taken on each grant. Entries leave in file_free_security,
 * so a file already tracked is either a second run of file_open for the
 * same open (two sets of capfence's programs attached at once,
 * docs/design.md "Hooks"), which finds the grants the first run tracked
 * and changes nothing, or a stale entry for a reused pointer: that fails
 * the open. A file an exec opens (__FMODE_EXEC) under a read grant is also
 * listed as the calling task's exec file until cf_file_exec_commit().
 *
 * Return: 0, -ENOMEM or -EACCES (the open then fails: fail closed).
 */
int cf_file_track(struct file *file, struct cf_grant *rg, struct cf_grant *wg)
{
	struct cf_file_slot *s = cf_file_bucket(file)->slot;
	struct cf_file_slot *end = s + CF_FILE_WAYS;
	struct cf_file_grants *had = cf_file_find(file);
	struct cf_file_exec *x = NULL;

	if (had)
		return WARN_ON_ONCE(had->read != rg || had->write != wg) ?
		       -EACCES : 0;
	if (rg && (file->f_flags & __FMODE_EXEC)) {
		x = kmalloc(sizeof(*x), GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
		if (!x)
			return -ENOMEM;
		x->task = current;
		x->file = file;
	}
	for (; s < end; s++) {
		/* nobody else can see @file yet: claim, then fill */
		if (!READ_ONCE(s->file) && !cmpxchg(&s->file, NULL, file)) {
			cf_file_hold(&s->g, rg, wg, x);
			atomic_long_inc(&cf_nr_files);
			return 0;
		}
	}
	return cf_file_track_overflow(file, rg, wg, x);
}

/* Name @obj, a file, for the record of a denied recheck. */
static void cf_file_name(struct cf_target *t, const void *obj, char *buf)
{
	const struct file *file = obj;

	t->path = buf ? d_path(&file->f_path, buf, PATH_MAX) : ERR_PTR(-ENOMEM);
	if (IS_ERR(t->path))
		t->path = "?";
	t->path_len = strlen(t->path);
}

/*
 * Is @f a file of the exec the calling task is in? Its reads and mappings
 * by that exec are the exec's exercise, rechecked at its commit.
 */
static bool cf_file_in_exec(const struct cf_file_grants *f)
{
	return f->exec && f->exec->task == current && current->in_execve;
}

/* The grant behind @f for @mask, rechecked; see cf_file_revalidate(). */
static int cf_file_check(const struct cf_file_grants *f, struct file *file,
			 int mask)
{
	struct cf_grant *g = mask & MAY_WRITE ? f->write : f->read;

	/* no grant: this kind of access was admitted by an open rule */
	if (!g)
		return 0;
	return cf_exercise_recheck(&g, 1, cf_file_name, file);
}

/**
 * cf_file_revalidate() - is the grant behind a read or write still valid?
 * @file: file being read or written
 * @mask: MAY_READ or MAY_WRITE (file_permission)
 *
 * The caller has tested cf_nr_tracked_files(). An exec's reads of its own
 * files are rechecked at its commit instead (cf_file_exec_commit()).
 *
 * Return: 0, or -EACCES (audited) when the grant that admitted this kind
 * of access at open was revoked or fenced since.
 */
int cf_file_revalidate(struct file *file, int mask)
{
	const struct cf_file_grants *f = cf_file_find(file);

	if (!f || (!(mask & MAY_WRITE) && cf_file_in_exec(f)))
		return 0;
	return cf_file_check(f, file, mask);
}

/**
 * cf_file_map() - may a tracked file get a new mapping, or a new protection?
 * @file: the mapped file
 * @prot: the mapping's protection (PROT_*)
 * @shared: stores through the mapping reach the file (MAP_SHARED)
 * @what: "mmap" or "mprotect", for the audit record
 *
 * The caller has tested cf_nr_tracked_files(). A shared mapping of a file
 * whose writes a grant admitted is refused outright, writable or not: a
 * later revocation could not stop stores through it (mprotect, or
 * userfaultfd's UFFDIO_COPY on a read-only one). Any other mapping reads
 * the file and rechecks the read grant, except an exec's private mappings
 * of its own files: they come after its commit, which rechecked them.
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_file_map(struct file *file, unsigned long prot, bool shared,
		const char *what)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_FS_WRITE,
			       .what = what };
	const struct cf_file_grants *f = cf_file_find(file);

	if (!f)
		return 0;
	if (shared && f->write)
		return cf_exercise_refuse(&t, f->write);
	if (!shared && cf_file_in_exec(f))
		return 0;
	return cf_file_check(f, file, MAY_READ);
}

/* how many exec files one commit takes off the list at a time */
#define CF_EXEC_BATCH	8

/**
 * cf_file_exec_commit() - recheck an exec's files before its point of no return
 *
 * Called at bprm_creds_from_file, in begin_new_exec(): every file the
 * calling task's exec opened under a read grant (the executable, the
 * interpreters) leaves the list and has its read grant rechecked. The
 * exec holds each of them, so none is freed meanwhile. A refusal here
 * fails the execve with EACCES; after it, the exec's mappings of these
 * files are not judged again (cf_file_map()).
 *
 * Return: 0, or -EACCES (audited) when a grant was revoked or fenced
 * since the file was opened.
 */
int cf_file_exec_commit(void)
{
	struct file *mine[CF_EXEC_BATCH];
	struct cf_file_exec *x, *tmp;
	int i, n, err = 0;

	do {
		n = 0;
		spin_lock(&cf_exec_lock);
		list_for_each_entry_safe(x, tmp, &cf_execs, node) {
			if (x->task != current)
				continue;
			list_del_init(&x->node);
			atomic_dec(&cf_nr_execs);
			mine[n++] = x->file;
			if (n == CF_EXEC_BATCH)
				break;
		}
		spin_unlock(&cf_exec_lock);
		for (i = 0; i < n && !err; i++) {
			const struct cf_file_grants *f = cf_file_find(mine[i]);

			if (f)
				err = cf_file_check(f, mine[i], MAY_READ);
		}
	} while (n == CF_EXEC_BATCH && !err);
	return err;
}

/**
 * cf_file_exec_pending() - is any exec file waiting for its commit?
 *
 * Return: false when bprm_creds_from_file has nothing to recheck.
 */
bool cf_file_exec_pending(void)
{
	return atomic_read(&cf_nr_execs);
}

/**
 * cf_file_free() - forget a file that is being freed
 * @file: the file
 *
 * The caller has tested cf_nr_tracked_files().
 */
void cf_file_free(struct file *file)
{
	struct cf_file_slot *s = cf_file_bucket(file)->slot;
	struct cf_file_slot *end = s + CF_FILE_WAYS;
	struct cf_file_grants g;
	struct cf_file *f;

	for (; s < end; s++) {
		if (READ_ONCE(s->file) != file)
			continue;
		/* the file has no user left: nobody reads the grants */
		g = s->g;
		/* off the exec list before the slot can be claimed again */
		if (g.exec)
			cf_file_exec_unlist(g.exec);
		s->g.read = NULL;
		s->g.write = NULL;
		s->g.exec = NULL;
		/* the grants are cleared before the slot can be claimed */
		smp_store_release(&s->file, NULL);
		atomic_long_dec(&cf_nr_files);
		cf_file_release(&g);
		return;
	}
	if (!atomic_long_read(&cf_nr_overflow))
		return;
	f = rhashtable_lookup(&cf_files, &file, cf_file_params);
	if (!f || rhashtable_remove_fast(&cf_files, &f->node, cf_file_params))
		return;
	atomic_long_dec(&cf_nr_overflow);
	atomic_long_dec(&cf_nr_files);
	cf_file_release(&f->g);
	kfree_rcu(f, rcu);
}

/**
 * cf_file_init() - create the tables
 *
 * Return: 0 or -ENOMEM.
 */
int cf_file_init(void)
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

static void cf_file_free_entry(void *ptr, void *arg)
{
	struct cf_file *f = ptr;

	cf_file_release(&f->g);
	kfree(f);
}

/**
 * cf_file_exit() - destroy the tables at module exit
 *
 * The programs are detached: files still open forget their grants here.
 */
void cf_file_exit(void)
{
	unsigned int i;
	int w;

	for (i = 0; i < 1U << CF_FILE_BITS; i++)
		for (w = 0; w < CF_FILE_WAYS; w++)
			if (cf_file_buckets[i].slot[w].file)
				cf_file_release(&cf_file_buckets[i].slot[w].g);
	kvfree(cf_file_buckets);
	rhashtable_free_and_destroy(&cf_files, cf_file_free_entry, NULL);
}
