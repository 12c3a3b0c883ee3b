// SPDX-License-Identifier: GPL-2.0
/*
 * The open memo: a bound credential remembers the last few directories
 * (CF_FS_MEMO_DIRS) whose names admitted its opens, and answers the next
 * open of a file in one of them without naming the file (d_path() and the
 * reachability walk are most of what a bound open costs).
 *
 * Why it is sound. A path constraint admits a name and everything beneath
 * it, so when the rule and a grant admit a directory's name, they admit
 * the name of every file in it. The answer stays right while nothing it
 * depended on has changed, and each of those is compared on every use:
 *  - the directory's name: a dentry's name and parent change only in
 *    d_move() and d_exchange(), inside rename_lock's write section, whose
 *    sequence is remembered; the mounts above it change only with the
 *    mount tree of the task's namespace, and every change of that tree
 *    advances the namespace's event counter (remembered with the
 *    namespace's unique id; the BPF program reads both, struct
 *    mnt_namespace being private to fs/); the task's root is compared by
 *    pointer;
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
 * against. Denials are never remembered, and a file that is the root of
 * its mount (whose parent is on another mount) is always named.
 *
 * Lifetime. rename_lock's sequence is 32 bits and comes back to the same
 * value after 2^31 renames, so an entry answers for one second
 * (CF_FS_MEMO_LIFE) after its directory was last judged by name; no
 * machine renames 2^31 times in a second (each rename is a write section
 * of the one global rename_lock; a tmpfs does about 700,000 a second, so a
 * wrap takes most of an hour). An open that finds its entry expired is
 * judged by name and renews it: the bound is on how old a judgement may
 * be, not on how long a directory stays fast. A renewal at the same
 * sequence less than a second after the entry's last judgement also
 * proves no rename came between, so the classes it already held stay
 * right and are renewed with it.
 *
 * Locking and context: BPF program context (RCU read lock held, never
 * sleeps). The memo is a seqcount whose writers take it with one
 * cmpxchg() or skip it, like the net memo; readers never wait, they miss.
 * Only the directory of the file being opened is dereferenced, and it is
 * pinned by the file's dentry; remembered pointers are only compared.
 */
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/jiffies.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include "capfence.h"

/* how long a filled memo answers: far shorter than a rename_lock wrap */
#define CF_FS_MEMO_LIFE	HZ

static unsigned int cf_rename_seq(void)
{
	return raw_read_seqcount(&rename_lock.seqcount);
}

/* the directory of @file on its own mount, or NULL for a mount's root */
static const struct dentry *cf_file_dir(const struct file *file)
{
	const struct dentry *d = file->f_path.dentry;

	if (d == file->f_path.mnt->mnt_root)
		return NULL;
	return READ_ONCE(d->d_parent);
}

/* the entry of @m for directory @dir on @mnt, or NULL */
static const struct cf_fs_memo_dir *
cf_fs_memo_entry(const struct cf_fs_memo *m, const struct vfsmount *mnt,
		 const struct dentry *dir)
{
	int i;

	for (i = 0; i < CF_FS_MEMO_DIRS; i++)
		if (m->dir[i].dir == dir && m->dir[i].mnt == mnt)
			return &m->dir[i];
	return NULL;
}

/**
 * cf_fs_memo_find() - answer an open from the credential's open memo
 * @e: the opener's bound state
 * @file: the file being opened
 * @mv: the opener's mount namespace, as the BPF program read it
 * @need: BIT(class id) of each class the open needs
 * @g: the admitting grant of each class, by cf_fs_memo_slot()
 *
 * The caller tests the tracer and the fleet deny bound first.
 *
 * Return: true when every class in @need is admitted by the grants of the
 * entry of the file's directory at the fence value and holdings now; @g is
 * then set.
 */
bool cf_fs_memo_find(const struct cf_cred *e, const struct file *file,
		     const struct cf_mnt_view *mv, u8 need,
		     struct cf_grant *g[2])
{
	const struct cf_fs_memo *m = &e->fs_memo;
	const struct cf_fs_memo_dir *d;
	const struct dentry *dir;
	const struct inode *inode;
	unsigned int seq, rs;
	struct path root;

	/* pairs with the release in cf_fs_memo_fill() */
	seq = smp_load_acquire(&m->seq);
	if ((seq & 1) || !mv->ns_id)
		return false;
	rs = cf_rename_seq();
	if (rs != m->rename_seq || mv->ns_id != m->ns_id ||
	    mv->ns_event != m->ns_event)
		return false;
	/* the parent and its name are the ones of sequence @rs */
	smp_rmb();
	dir = cf_file_dir(file);
	if (!dir)
		return false;
	d = cf_fs_memo_entry(m, file->f_path.mnt, dir);
	if (!d || (d->classes & need) != need ||
	    time_after_eq(jiffies, d->until))
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
	g[0] = d->grant[0];
	g[1] = d->grant[1];
	/* the fields above were one writer's, and no rename came between */
	smp_rmb();
	return READ_ONCE(m->seq) == seq && cf_rename_seq() == rs;
}

/**
 * cf_fs_memo_begin() - what a fill needs to know before the file is named
 * @e: the opener's bound state
 * @s: filled with rename_lock's sequence, the fence value and holdings
 *
 * Read before the name is built and the decision made, so that a rename,
 * a revocation or a delegation in between is seen by cf_fs_memo_fill().
 */
void cf_fs_memo_begin(const struct cf_cred *e, struct cf_fs_memo_start *s)
{
	s->rename_seq = cf_rename_seq();
	/* the sequence before what it guards, as read_seqbegin() orders it */
	smp_rmb();
	s->fence = cf_fence_value_locked();
	s->held = rcu_access_pointer(e->held);
}

/*
 * @c admitted the name @t; does it admit its first @len bytes, the
 * directory's name? A path constraint admits a name when it is a
 * component prefix of it, so one no longer than the directory's name that
 * admitted the file admits the directory as well: when every constraint
 * is that short, no name needs comparing again.
 */
static bool cf_admits_prefix(const struct cf_constraint *c, u8 n,
			     const struct cf_target *t, size_t len)
{
	struct cf_target dt = { .class_id = t->class_id, .path = t->path,
				.path_len = len };
	u8 i;

	for (i = 0; i < n; i++)
		if (c[i].path_len > len)
			return cf_constraints_admit(c, n, &dt);
	return true;
}

/* do @g and the rule of its class admit the first @len bytes of @t's name? */
static bool cf_admits_dir(const struct cf_cred *e, const struct cf_grant *g,
			  const struct cf_target *t, size_t len)
{
	const struct cf_rule *rule = &e->epoch->rules[g->class_id];

	return cf_admits_prefix(rule->c, rule->n, t, len) &&
	       cf_admits_prefix(g->c, g->n, t, len);
}

/* Is @m's state the one @s, @mv and @root describe? */
static bool cf_fs_memo_same_state(const struct cf_fs_memo *m,
				  const struct cf_fs_memo_start *s,
				  const struct cf_mnt_view *mv,
				  const struct path *root)
{
	return m->ns_id && m->rename_seq == s->rename_seq &&
	       m->ns_id == mv->ns_id && m->ns_event == mv->ns_event &&
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

	d = (struct cf_fs_memo_dir *)cf_fs_memo_entry(m, mnt, dir);
	if (d)
		return d;
	for (i = 0; i < CF_FS_MEMO_DIRS; i++)
		if (!m->dir[i].dir || time_after_eq(jiffies, m->dir[i].until))
			return &m->dir[i];
	d = &m->dir[m->next];
	m->next = (m->next + 1) % CF_FS_MEMO_DIRS;
	return d;
}

/**
 * cf_fs_memo_fill() - remember the directory of an allowed open
 * @e: the opener's bound state
 * @s: what cf_fs_memo_begin() read before the decision
 * @file: the file opened
 * @mv: the opener's mount namespace, as the BPF program read it
 * @t: the file's name, as judged
 * @g: the grant that admitted each class the open needed (by slot), NULL
 *     for a class it did not need
 *
 * Nothing is remembered unless every grant admits the directory's name
 * (the file's name up to its last '/') and nothing the decision depended
 * on moved while it was made. A directory already remembered at the same
 * state gains the classes of this open, and its lifetime starts again
 * (see "Lifetime" above); at another state the memo is emptied first.
 */
void cf_fs_memo_fill(struct cf_cred *e, const struct cf_fs_memo_start *s,
		     const struct file *file, const struct cf_mnt_view *mv,
		     const struct cf_target *t, struct cf_grant *g[2])
{
	struct cf_fs_memo *m = &e->fs_memo;
	const struct dentry *dir = cf_file_dir(file);
	struct cf_grant *ng[2] = { g[0], g[1] };
	struct cf_fs_memo_dir *d;
	struct inode *inode;
	struct path root;
	unsigned int seq;
	u8 classes = 0;
	size_t len, clen;
	int i;

	if (!dir || !mv->ns_id || (s->rename_seq & 1) ||
	    !cf_task_root(&root))
		return;
	inode = READ_ONCE(dir->d_inode);
	/*
	 * The directory's name is the file's up to its last '/'. A rename
	 * that makes d_name disagree with the name judged moves rename_lock,
	 * which is checked below before anything is stored.
	 */
	clen = READ_ONCE(file->f_path.dentry->d_name.len);
	if (!inode || clen + 1 >= t->path_len ||
	    t->path[t->path_len - clen - 1] != '/')
		return;
	len = t->path_len - clen - 1;
	if (!len)
		len = 1;	/* a file in "/" */
	for (i = 0; i < 2; i++) {
		if (!g[i])
			continue;
		if (!cf_admits_dir(e, g[i], t, len))
			return;
		classes |= BIT(g[i]->class_id);
	}
	seq = READ_ONCE(m->seq);
	/* another task of the credential is writing it: leave it */
	if ((seq & 1) || cmpxchg(&m->seq, seq, seq + 1) != seq)
		return;
	/* the full barrier of cmpxchg() orders the reads below after it */
	if (cf_rename_seq() != s->rename_seq ||
	    cf_fence_value_locked() != s->fence ||
	    rcu_access_pointer(e->held) != s->held) {
		/* nothing written: give the memo back unchanged */
		smp_store_release(&m->seq, seq + 2);
		return;
	}
	if (!cf_fs_memo_same_state(m, s, mv, &root)) {
		memset(m->dir, 0, sizeof(m->dir));
		m->next = 0;
		m->rename_seq = s->rename_seq;
		m->ns_id = mv->ns_id;
		m->ns_event = mv->ns_event;
		m->root_mnt = root.mnt;
		m->root = root.dentry;
		m->fence = s->fence;
		m->held = s->held;
	}
	d = cf_fs_memo_slot_for(m, file->f_path.mnt, dir);
	/* the same directory, not a new one at a reused address: keep */
	if (d->dir && d->inode == inode && d->ino == inode->i_ino &&
	    d->gen == inode->i_generation &&
	    time_before(jiffies, d->until)) {
		classes |= d->classes;
		for (i = 0; i < 2; i++)
			if (!ng[i])
				ng[i] = d->grant[i];
	}
	d->mnt = file->f_path.mnt;
	d->dir = dir;
	d->inode = inode;
	d->ino = inode->i_ino;
	d->gen = inode->i_generation;
	d->classes = classes;
	d->grant[0] = ng[0];
	d->grant[1] = ng[1];
	d->until = jiffies + CF_FS_MEMO_LIFE;
	/* pairs with the acquire in cf_fs_memo_find(): the fields, then even */
	smp_store_release(&m->seq, seq + 2);
}
