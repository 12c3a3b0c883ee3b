// SPDX-License-Identifier: GPL-2.0
/*
 * The open memo: a bound credential remembers a few subtrees
 * (CF_FS_MEMO_DIRS) that its epoch's rules and its grants admit whole, and
 * answers an open of any file beneath one of them without naming the file
 * (d_path() and the reachability walk are most of what a bound open
 * costs); a walk up the file's parents on its own mount finds the subtree.
 *
 * Why it is sound. A path constraint admits a name and everything beneath
 * it. When an open is allowed by name, the shallowest constraint of the
 * rule and of the grant that admit the file name an ancestor of it (the
 * deeper of the two, for each class the open needed): every name beneath
 * that ancestor is admitted by both. The memo keeps that ancestor, or the
 * root of the file's mount when the ancestor lies above it (everything on
 * the mount is then beneath it too), as a directory on a mount. A later
 * file is beneath it when walking up its d_parent chain from the file, on
 * the file's own mount and without passing the mount's root, reaches the
 * directory: its name is then the directory's name followed by the names
 * walked. The answer stays right while nothing it depended on has
 * changed, and each of those is compared on every use:
 *  - the names: a dentry's name and parent change only in d_move() and
 *    d_exchange(), inside rename_lock's write section, whose sequence is
 *    remembered and read again after the walk; the mounts above the
 *    directory change only with the mount tree of the task's namespace,
 *    and every change of that tree advances the namespace's event counter
 *    (remembered with the namespace's unique id; the BPF program reads
 *    both, struct mnt_namespace being private to fs/); the task's root is
 *    compared by pointer;
 *  - the directory itself: the memo holds no reference, so a freed
 *    dentry's address may be reused; it is compared with its mount, its
 *    inode's address, inode number and generation (what the kernel's own
 *    file handles identify an inode by);
 *  - the grants: the fence value and the holdings pointer, as in the net
 *    decision memo (decide.c); the fleet deny bound and the tracer are
 *    the caller's to test, as cf_exercise() does.
 * The state (rename_lock's sequence, the namespace, the root, the fence
 * and holdings) is one for all entries: a fill at another state empties
 * the memo first, so no entry is ever older than the state it is compared
 * against. Denials are never remembered, a file that is the root of its
 * mount or that was unlinked is always named, and a file on another mount
 * than the entry's (a mount beneath the subtree) is named.
 *
 * Lifetime. rename_lock's sequence is 32 bits and comes back to the same
 * value after 2^31 renames, so an entry answers for one second
 * (CF_FS_MEMO_LIFE) after its subtree was last judged by name; no machine
 * renames 2^31 times in a second (each rename is a write section of the
 * one global rename_lock; a tmpfs does about 700,000 a second, so a wrap
 * takes most of an hour). An open that finds its entry expired is judged
 * by name and renews it: the bound is on how old a judgement may be, not
 * on how long a subtree stays fast. A renewal at the same sequence less
 * than a second after the entry's last judgement also proves no rename
 * came between, so the classes it already held stay right and are renewed
 * with it.
 *
 * open_memo=0 (a module parameter, writable at run time) turns the memo
 * off: every open is judged by name. It exists to measure what a miss
 * costs and as a switch for an operator who suspects it; it can only make
 * decisions slower, never different.
 *
 * Locking and context: BPF program context (RCU read lock held, never
 * sleeps). The memo is a seqcount whose writers take it with one
 * cmpxchg() or skip it, like the net memo; readers never wait, they miss.
 * The d_parent chain is walked under RCU, which keeps every dentry on it
 * allocated; the rename_lock sequence read before and after the walk
 * proves it was one consistent chain. Remembered pointers are only
 * compared.
 */
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/jiffies.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include "cap.h"
#include "constraint.h"
#include "cred.h"
#include "fence.h"
#include "fsmemo.h"
#include "memo.h"

/* how long a filled entry answers: far shorter than a rename_lock wrap */
#define CF_FS_MEMO_LIFE	HZ
/* how many parents a lookup walks up before it gives up and names */
#define CF_FS_MEMO_DEPTH	64

bool cf_open_memo = true;
module_param_named(open_memo, cf_open_memo, bool, 0644);
MODULE_PARM_DESC(open_memo,
		 "answer opens beneath recently judged subtrees without naming the file (default on)");

static unsigned int cf_rename_seq(void)
{
	return raw_read_seqcount(&rename_lock.seqcount);
}

/**
 * cf_fs_memo_find() - answer an open from the credential's open memo
 * @e: the opener's bound state
 * @file: the file being opened
 * @ns_id: the opener's mount namespace's id, as the BPF program read it
 * @ns_event: the count of changes of that namespace's tree
 * @need: BIT(class id) of each class the open needs
 * @g: the admitting grant of each class the open keeps, by its row's
 *     open_keep (class.h)
 *
 * The caller tests the tracer and the fleet deny bound first.
 *
 * Return: true when the file is beneath a subtree whose entry admits every
 * class in @need at the fence value and holdings now; @g is then set.
 */
bool cf_fs_memo_find(const struct cf_cred *e, const struct file *file,
		     u64 ns_id, u64 ns_event, u32 need, struct cf_grant *g[CF_OPEN_SLOTS])
{
	const struct cf_fs_memo *m = &e->fs_memo;
	const struct vfsmount *mnt = file->f_path.mnt;
	const struct dentry *dir = file->f_path.dentry;
	const struct cf_fs_memo_dir *d = NULL;
	unsigned long now = jiffies, bits;
	const struct inode *inode;
	unsigned int seq, rs, i;
	struct path root;
	u8 cand = 0;	/* BIT(i): m->dir[i] may answer; no array to clear */

	BUILD_BUG_ON(CF_FS_MEMO_DIRS > 8);
	if (!cf_memo_read_begin(&m->seq, &seq) || !ns_id)
		return false;
	rs = cf_rename_seq();
	if (rs != m->rename_seq || ns_id != m->ns_id ||
	    ns_event != m->ns_event || dir == mnt->mnt_root)
		return false;
	for (i = 0; i < CF_FS_MEMO_DIRS; i++) {
		const struct cf_fs_memo_dir *c = &m->dir[i];

		if (c->dir && c->mnt == mnt && (c->classes & need) == need &&
		    time_before(now, c->until))
			cand |= BIT(i);
	}
	if (!cand)
		return false;
	/* the parents and their names are the ones of sequence @rs */
	smp_rmb();
	for (i = 0; i < CF_FS_MEMO_DEPTH && !d; i++) {
		dir = READ_ONCE(dir->d_parent);
		for (bits = cand; bits; bits &= bits - 1) {
			if (m->dir[__ffs(bits)].dir == dir) {
				d = &m->dir[__ffs(bits)];
				break;
			}
		}
		if (dir == mnt->mnt_root && !d)
			return false;
	}
	if (!d)
		return false;
	inode = READ_ONCE(dir->d_inode);
	if (!inode || inode != d->inode || inode->i_ino != d->ino ||
	    inode->i_generation != d->gen)
		return false;
	/* as in the net memo: an equal fence means nothing was revoked yet */
	if (m->fence != cf_fence_value_locked() ||
	    m->held != rcu_access_pointer(e->held))
		return false;
	if (!cf_task_root(&root) || root.mnt != m->root_mnt ||
	    root.dentry != m->root)
		return false;
	for (i = 0; i < CF_OPEN_SLOTS; i++)
		g[i] = d->grant[i];
	/* the fields above were one writer's, and no rename came between */
	return cf_memo_read_done(&m->seq, seq) && cf_rename_seq() == rs;
}

/**
 * cf_fs_memo_begin() - what a fill needs to know before the file is named
 * @e: the opener's bound state
 * @ns_id: the opener's mount namespace's id, as the BPF program read it
 * @ns_event: the count of changes of that namespace's tree
 * @s: filled with rename_lock's sequence, the fence value, the holdings
 *     and the mount namespace
 *
 * Read before the name is built and the decision made, so that a rename,
 * a revocation or a delegation in between is seen by cf_fs_memo_fill().
 */
void cf_fs_memo_begin(const struct cf_cred *e, u64 ns_id, u64 ns_event,
		      struct cf_fs_memo_start *s)
{
	s->ns_id = ns_id;
	s->ns_event = ns_event;
	s->rename_seq = cf_rename_seq();
	/* the sequence before what it guards, as read_seqbegin() orders it */
	smp_rmb();
	s->fence = cf_fence_value_locked();
	s->held = rcu_access_pointer(e->held);
}

/* the number of components of the absolute name @p ("/" has none) */
static size_t cf_name_depth(const char *p, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += p[i] == '/';
	return len == 1 ? 0 : n;
}

/*
 * How deep beneath the root the subtree is that @c (n constraints, none:
 * unconstrained) admits whole around @t, a name it admitted: the depth of
 * its shallowest constraint that admits @t.
 */
static size_t cf_admitting_depth(const struct cf_constraint *c, u8 n,
				 const struct cf_target *t)
{
	size_t k = SIZE_MAX, dk;
	u8 i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		if (!cf_constraints_admit(&c[i], 1, t))
			continue;
		dk = cf_name_depth(c[i].path, c[i].path_len);
		if (dk < k)
			k = dk;
	}
	return k;
}

/* Is @m's state the one @s and @root describe? */
static bool cf_fs_memo_same_state(const struct cf_fs_memo *m,
				  const struct cf_fs_memo_start *s,
				  const struct path *root)
{
	return m->ns_id && m->rename_seq == s->rename_seq &&
	       m->ns_id == s->ns_id && m->ns_event == s->ns_event &&
	       m->fence == s->fence && m->held == s->held &&
	       m->root_mnt == root->mnt && m->root == root->dentry;
}

/*
 * The entry @dir on @mnt gets: the entry it already has, else an empty or
 * expired one, else the one after the last replaced (first in, first out:
 * a hit writes nothing, so that readers share the memo's cache lines).
 */
static struct cf_fs_memo_dir *cf_fs_memo_slot_for(struct cf_fs_memo *m,
						  const struct vfsmount *mnt,
						  const struct dentry *dir)
{
	struct cf_fs_memo_dir *d;
	int i;

	for (i = 0; i < CF_FS_MEMO_DIRS; i++)
		if (m->dir[i].dir == dir && m->dir[i].mnt == mnt)
			return &m->dir[i];
	for (i = 0; i < CF_FS_MEMO_DIRS; i++)
		if (!m->dir[i].dir || time_after_eq(jiffies, m->dir[i].until))
			return &m->dir[i];
	d = &m->dir[m->next];
	m->next = (m->next + 1) % CF_FS_MEMO_DIRS;
	return d;
}

/**
 * cf_fs_memo_fill() - remember the subtree an allowed open was admitted in
 * @e: the opener's bound state
 * @s: what cf_fs_memo_begin() read before the decision
 * @file: the file opened
 * @t: the file's name, as judged
 * @g: the grant that admitted each class the open needed (by slot), NULL
 *     for a class it did not need
 *
 * The subtree is the ancestor of the file named by the deepest of the
 * shallowest constraints that admitted it (rule and grant, each class),
 * or the root of the file's mount when that ancestor lies above it.
 * Nothing is remembered when a constraint names the file itself or
 * nothing the decision depended on moved while it was made. A subtree
 * already remembered at the same state gains the classes of this open,
 * and its lifetime starts again (see "Lifetime" above); at another state
 * the memo is emptied first.
 */
void cf_fs_memo_fill(struct cf_cred *e, const struct cf_fs_memo_start *s,
		     const struct file *file, const struct cf_target *t,
		     struct cf_grant *g[CF_OPEN_SLOTS])
{
	const struct vfsmount *mnt = file->f_path.mnt;
	const struct dentry *dir = file->f_path.dentry;
	struct cf_grant *ng[CF_OPEN_SLOTS];
	struct cf_fs_memo *m = &e->fs_memo;
	size_t depth, k = 0, up;
	struct cf_fs_memo_dir *d;
	struct inode *inode;
	struct path root;
	unsigned int seq;
	u32 classes = 0;
	int i;

	if (dir == mnt->mnt_root || d_unlinked(dir) || !s->ns_id ||
	    (s->rename_seq & 1) || !cf_task_root(&root))
		return;
	for (i = 0; i < CF_OPEN_SLOTS; i++) {
		const struct cf_rule *rule;

		ng[i] = g[i];
		if (!g[i])
			continue;
		rule = &e->epoch->rules[g[i]->class_id];
		k = max3(k, cf_admitting_depth(rule->c, rule->n, t),
			 cf_admitting_depth(g[i]->c, g[i]->n, t));
		classes |= BIT(g[i]->class_id);
	}
	depth = cf_name_depth(t->path, t->path_len);
	if (!classes || k >= depth)
		return;
	/*
	 * Up to the subtree's root, not past the mount's. The chain is the
	 * one d_path() named while rename_lock's sequence stays the one read
	 * before it, which is checked below before anything is stored.
	 */
	for (up = depth - k; up && dir != mnt->mnt_root; up--)
		dir = READ_ONCE(dir->d_parent);
	inode = READ_ONCE(dir->d_inode);
	if (!inode)
		return;
	/* another task of the credential is writing it: leave it */
	if (!cf_memo_write_begin(&m->seq, &seq))
		return;
	if (cf_rename_seq() != s->rename_seq ||
	    cf_fence_value_locked() != s->fence ||
	    rcu_access_pointer(e->held) != s->held) {
		/* nothing written: give the memo back unchanged */
		cf_memo_write_end(&m->seq, seq);
		return;
	}
	if (!cf_fs_memo_same_state(m, s, &root)) {
		memset(m->dir, 0, sizeof(m->dir));
		m->next = 0;
		m->rename_seq = s->rename_seq;
		m->ns_id = s->ns_id;
		m->ns_event = s->ns_event;
		m->root_mnt = root.mnt;
		m->root = root.dentry;
		m->fence = s->fence;
		m->held = s->held;
	}
	d = cf_fs_memo_slot_for(m, mnt, dir);
	/* the same directory, not a new one at a reused address: keep */
	if (d->dir && d->inode == inode && d->ino == inode->i_ino &&
	    d->gen == inode->i_generation &&
	    time_before(jiffies, d->until)) {
		classes |= d->classes;
		for (i = 0; i < CF_OPEN_SLOTS; i++)
			if (!ng[i])
				ng[i] = d->grant[i];
	}
	d->mnt = mnt;
	d->dir = dir;
	d->inode = inode;
	d->ino = inode->i_ino;
	d->gen = inode->i_generation;
	d->classes = classes;
	memcpy(d->grant, ng, sizeof(d->grant));
	d->until = jiffies + CF_FS_MEMO_LIFE;
	/* pairs with the acquire in cf_fs_memo_find(): the fields, then even */
	cf_memo_write_end(&m->seq, seq);
}
