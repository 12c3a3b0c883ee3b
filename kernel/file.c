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
 * Locking: the grants of a tracked file are kept by the front end
 * (file_store.h: the module's table keyed by the file pointer, or the
 * built-in LSM's file blob). They are claimed in file_open, before the
 * file is visible to any other user, and forgotten in file_free_security,
 * when it has no user left: only the file's own users read them. The list of exec files is under
 * cf_exec_lock (a spinlock, never held across a decision); an exec file
 * leaves it at its exec's commit or when it is freed, whichever is first,
 * and its record is freed with its slot. Grant validity is judged,
 * counted and audited by decide.c (cf_exercise_recheck()). Never sleeps:
 * BPF program context.
 */
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "cap.h"
#include "compat.h"
#include "constraint.h"
#include "decide.h"
#include "file.h"
#include "file_store.h"

/* a file an exec opened under a read grant (see "Exec" above) */
struct cf_file_exec {
	struct list_head node;		/* on cf_execs until committed */
	const struct task_struct *task;	/* the task that opened it */
	struct file *file;
};

static LIST_HEAD(cf_execs);
static DEFINE_SPINLOCK(cf_exec_lock);
static atomic_t cf_nr_execs = ATOMIC_INIT(0);
atomic_long_t cf_nr_files = ATOMIC_LONG_INIT(0);

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
	struct cf_file_grants *had = cf_file_store_find(file), *g;
	struct cf_file_exec *x = NULL;

	if (had)
		return WARN_ON_ONCE(had->read != rg || had->write != wg) ?
		       -EACCES : 0;
	if (rg && cf_exec_open(file)) {
		x = kmalloc(sizeof(*x), GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
		if (!x)
			return -ENOMEM;
		x->task = current;
		x->file = file;
	}
	/* nobody else can see @file yet: claim, then fill */
	g = cf_file_store_claim(file);
	if (IS_ERR(g)) {
		kfree(x);
		return PTR_ERR(g);
	}
	cf_file_hold(g, rg, wg, x);
	atomic_long_inc(&cf_nr_files);
	return 0;
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
	const struct cf_file_grants *f = cf_file_store_find(file);

	if (!f || (!(mask & MAY_WRITE) && cf_file_in_exec(f)))
		return 0;
	return cf_file_check(f, file, mask);
}

/**
 * cf_file_ioctl() - may an ioctl reach a tracked file?
 * @file: the file the ioctl is on
 *
 * An ioctl can read or change a file without read() or write(): XFS's
 * SWAPEXT swaps its extents with another file's, ext4's MOVE_EXT moves
 * them, and neither calls file_permission. An ioctl on a file opened
 * under a capability rechecks every grant the file holds, whoever calls
 * (a passed descriptor too). The caller has tested cf_nr_tracked_files().
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_file_ioctl(struct file *file)
{
	const struct cf_file_grants *f = cf_file_store_find(file);

	if (!f)
		return 0;
	return cf_file_check(f, file, MAY_READ) ?:
	       cf_file_check(f, file, MAY_WRITE);
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
	const struct cf_file_grants *f = cf_file_store_find(file);
	struct cf_target t = { .what = what };

	if (!f)
		return 0;
	if (shared && f->write) {
		t.class_id = f->write->class_id;
		return cf_exercise_refuse(&t, f->write);
	}
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
			const struct cf_file_grants *f = cf_file_store_find(mine[i]);

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
	struct cf_file_grants g, *f = cf_file_store_find(file);

	if (!f)
		return;
	/* off the exec list before the slot can be claimed again */
	if (f->exec)
		cf_file_exec_unlist(f->exec);
	/* the file has no user left: nobody reads the grants */
	g = *f;
	if (!cf_file_store_forget(file))
		return;
	atomic_long_dec(&cf_nr_files);
	cf_file_release(&g);
}

/**
 * cf_file_init() - create the front end's store of tracked files
 *
 * Return: 0 or -ENOMEM.
 */
int cf_file_init(void)
{
	return cf_file_store_init();
}

/**
 * cf_file_exit() - destroy the store at module exit
 *
 * The programs are detached: files still open forget their grants here.
 */
void cf_file_exit(void)
{
	cf_file_store_exit(cf_file_release);
}
