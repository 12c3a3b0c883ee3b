// SPDX-License-Identifier: GPL-2.0
/*
 * fs:read and fs:write by name: what an open can do, every change beneath
 * a path (create, remove, rename and link on both ends, symlink, mknod,
 * truncate, chmod/chown, xattrs, POSIX message queue names), and the
 * refusal of every change of a bound task's filesystem view.
 *
 * Names. A file is judged by the name it has from the task's root, built
 * by d_path(), and only when it is reachable from that root:
 * path_is_under() must place it beneath the root, otherwise (a mount of
 * another namespace reached through /proc/PID/root, a detached tree from
 * open_tree(OPEN_TREE_CLONE) or fsmount(), a pseudo file system) the
 * operation is refused as "unreachable": fail closed. The kernel does not
 * export d_absolute_path() to modules, so the root is the task's own; the
 * name stays the file's identity because a task whose epoch mediates
 * fs:read or fs:write may not change its view: chroot, pivot_root, mount,
 * umount, remount and move_mount are refused ("bypass"), as Landlock
 * refuses them to its domains. A new mount namespace (unshare, clone) is a
 * copy of the same view, and with mounts refused it stays one. Links and
 * renames must not give a file a name that admits more than its old one
 * (see cf_fs_move()).
 *
 * Locking and context: every function runs in BPF program context (RCU
 * read lock held, migration disabled, preemptible) and never sleeps.
 * Names are built in a per-CPU buffer used with preemption disabled
 * (get_cpu_ptr()). The task's root is read under its fs_struct seqcount
 * without taking a reference, as d_path() itself does: mounts and dentries
 * are freed only after an RCU grace period. path_is_under() walks the
 * mount tree under mount_lock (a spinlock, briefly) and the dentries under
 * rename_lock. The last component of a (dir, dentry) pair is read from the
 * dentry while the VFS holds the parent's i_rwsem, which it does across
 * every path_* hook that passes such a pair, so it cannot change under us.
 */
#include <linux/bitops.h>
#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/path.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/string.h>
#include "compat.h"
#include "cap.h"
#include "class.h"
#include "constraint.h"
#include "cred.h"
#include "decide.h"
#include "file.h"
#include "fleet.h"
#include "fsmemo.h"
#include "fspath.h"
#include "stats.h"

/* ipc/mqueue.c's MQUEUE_MAGIC, private to that file (6.1 and 6.12) */
#define CF_MQUEUE_MAGIC	0x19800202

/* The name of the file being judged; see the locking rules above. */
static DEFINE_PER_CPU(char [PATH_MAX], cf_path_buf);

static bool cf_fs_mediated(const struct cf_cred *e, u8 class_id)
{
	return e->epoch->rules[class_id].kind != CAPFENCE_RULE_OPEN;
}

/*
 * The name of @path, or of its child @child when not NULL, seen from the
 * task's root, built in @buf (PATH_MAX bytes). NULL when it cannot be
 * named: not reachable from the root, or too long.
 */
static const char *cf_fs_name(const struct path *path,
			      const struct dentry *child, char *buf,
			      size_t *len)
{
	size_t clen = child ? child->d_name.len : 0, n;
	struct path root;
	char *p;

	if (clen + 2 > PATH_MAX || !cf_task_root(&root))
		return NULL;
	/*
	 * On the root's own mount no mount is crossed: skip mount_lock. On
	 * another, path_is_under() checks the mounts only: a dentry moved out
	 * of its mount's root (a directory renamed out of a bind mount's
	 * tree by someone else) has no name there, and d_path() would give
	 * it "/" and its own name.
	 */
	if (path->mnt == root.mnt ? !is_subdir(path->dentry, root.dentry) :
	    !is_subdir(path->dentry, path->mnt->mnt_root) ||
	    !path_is_under(path, &root))
		return NULL;
	/* leave room behind the directory's name for "/" and the child's */
	p = d_path(path, buf, PATH_MAX - clen - 1);
	if (IS_ERR(p))
		return NULL;
	n = strlen(p);
	if (child) {
		if (n == 1)	/* the root: "/" + child */
			n = 0;
		p[n++] = '/';
		memcpy(p + n, child->d_name.name, clen);
		n += clen;
		p[n] = '\0';
	}
	*len = n;
	return p;
}

/*
 * Judge @class_id for the name of @path (or of its child @child). An allow
 * under a grant is not counted but added to *@allowed: the operation,
 * which may judge several names, counts its allows once all of them allow
 * (cf_exercise_admitted_if()). With @allowed NULL, only answer: nothing is
 * counted or audited.
 */
static int cf_fs_judge(struct cf_cred *e, u8 class_id,
		       const struct path *path, const struct dentry *child,
		       unsigned int *allowed)
{
	struct cf_target t = { .class_id = class_id, .tracks = true };
	struct cf_grant *ok;
	int err;

	if (!cf_fs_mediated(e, class_id))
		return 0;
	t.path = cf_fs_name(path, child, *get_cpu_ptr(&cf_path_buf),
			    &t.path_len);
	if (!t.path) {
		err = allowed ? cf_refuse_mediated(e, class_id, "unreachable") :
				-EACCES;
	} else if (!allowed) {
		err = cf_admits(e, &t) ? 0 : -EACCES;
	} else {
		err = cf_exercise(e, &t, &ok);
		if (!err && ok)
			(*allowed)++;
	}
	put_cpu_ptr(&cf_path_buf);
	return err;
}

/*
 * Judge each class of @classes (BIT(class id), table order) for the name
 * of @path or its child @child, adding allows to *@allowed as
 * cf_fs_judge() does; the first refusal ends it.
 */
static int cf_fs_judge_each(struct cf_cred *e, u32 classes,
			    const struct path *path,
			    const struct dentry *child, unsigned int *allowed)
{
	int err = 0;

	for (; classes && !err; classes &= classes - 1)
		err = cf_fs_judge(e, __ffs(classes), path, child, allowed);
	return err;
}

/*
 * Refuse @what under the first mediated class of @classes (table order),
 * which the record names; 0 when none of them is mediated.
 */
static int cf_fs_refuse_first(struct cf_cred *e, u32 classes,
			      const char *what)
{
	for (; classes; classes &= classes - 1)
		if (cf_fs_mediated(e, __ffs(classes)))
			return cf_refuse_mediated(e, __ffs(classes), what);
	return 0;
}

/*
 * A FIFO moves data without asking file_permission: splice() between two
 * pipes, tee() and vmsplice() never call rw_verify_area(), so no recheck
 * could stop them after a revoke. Under a grant it is refused at open,
 * as a shared mapping of a file opened for writing is (file.c); under an
 * open rule nothing is tracked and it opens.
 */
static int cf_fs_refuse_fifo(struct cf_grant *rg, struct cf_grant *wg)
{
	struct cf_target t = { .what = "fifo" };
	struct cf_grant *g = wg ? wg : rg;

	t.class_id = g->class_id;
	return cf_exercise_refuse(&t, g);
}

/*
 * Track @file under its grants; only a file that can be written carries
 * its write grant along. @allowed exercises were allowed and not counted
 * yet (cf_target.tracks): they are counted once the file is tracked, and
 * not at all when tracking fails, and the open with it.
 */
static int cf_fs_track(struct file *file, struct cf_grant *rg,
		       struct cf_grant *wg, unsigned int allowed)
{
	if (!(file->f_mode & FMODE_WRITE))
		wg = NULL;
	if (!wg && !rg)
		return cf_exercise_admitted_if(0, allowed);
	if (S_ISFIFO(file_inode(file)->i_mode))
		return cf_fs_refuse_fifo(rg, wg);
	return cf_exercise_admitted_if(cf_file_track(file, rg, wg), allowed);
}

/*
 * A pidfd: from 6.9 pidfd_open(), clone(CLONE_PIDFD) and pidfd reopens
 * open a file of pidfs, which passes file_open. It names a process, not a
 * file beneath a path: what it can do to the process is judged where it
 * is done (pidfd_getfd as a borrow, signals by the kernel's own rules).
 * Judged as an unreachable path, every pidfd of a task whose epoch
 * mediates fs:read or fs:write was refused.
 */
static bool cf_fs_process_handle(const struct file *file)
{
	return file->f_path.mnt->mnt_sb->s_magic == CF_PID_FS_MAGIC;
}

/*
 * The open the memo did not answer: name the file, judge each class in
 * @need (table order), fill the memo (with @memo) and track the file. Out
 * of line, so that a memo hit pays for none of its locals.
 */
static noinline int cf_fs_open_named(struct cf_cred *e, struct file *file,
				     u64 ns_id, u64 ns_event, u32 need,
				     bool memo)
{
	struct cf_grant *g[CF_OPEN_SLOTS] = {}, *ok;
	struct cf_target t = { .tracks = true };
	struct cf_fs_memo_start s;
	unsigned int allowed = 0;
	u32 bits;
	u8 keep;
	int err = 0;

	if (memo) {
		cf_stats_open_memo(false);
		cf_fs_memo_begin(e, ns_id, ns_event, &s);
	}
	t.path = cf_fs_name(&file->f_path, NULL, *get_cpu_ptr(&cf_path_buf),
			    &t.path_len);
	if (!t.path) {
		err = cf_refuse_mediated(e, __ffs(need), "unreachable");
		goto out;
	}
	/* one refused: the open fails, and no class of it is counted */
	for (bits = need; bits && !err; bits &= bits - 1) {
		t.class_id = __ffs(bits);
		err = cf_exercise(e, &t, &ok);
		if (err || !ok)
			continue;
		allowed++;
		keep = cf_class(t.class_id)->open_keep;
		if (keep)
			g[keep - 1] = ok;
	}
	if (!err && memo)
		cf_fs_memo_fill(e, &s, file, &t, g);
	/* each grant here stands for an allowed exercise, counted */
	if (!err)
		err = cf_fs_track(file, g[CF_KEEP_READ - 1],
				  g[CF_KEEP_WRITE - 1], allowed);
out:
	put_cpu_ptr(&cf_path_buf);
	return err;
}

/*
 * The memo's grant in slot @i if the open needs the class keeping it (an
 * entry may hold a class this open does not need).
 */
static struct cf_grant *cf_fs_memo_needed(struct cf_grant *g[], int i,
					  u32 need)
{
	return need & cf_class_sets.keeps[i] ? g[i] : NULL;
}

/**
 * cf_fs_file_open() - the path classes at open
 * @cred: the opener's credential, already found in the filter
 * @file: the file being opened
 * @ns_id: the opener's mount namespace's id, as the BPF program read it
 * @ns_event: the count of changes of that namespace's tree
 *
 * An open needs each mediated path class whose row (class.c) says so:
 * reading needs fs:read; writing, O_APPEND, O_TRUNC (even with O_RDONLY),
 * O_CREAT and access mode 3 (neither read nor write, ioctls only) need
 * fs:write. A file opened under a capability is tracked (file.c), so its
 * reads and writes are rechecked against the grants that admitted them.
 * An open beneath a subtree that the credential's recent allowed opens
 * showed its rules and grants admit whole is answered by the open memo
 * (fsmemo.c) while nothing it depended on moved; an open that needs a
 * class whose grant an open does not keep is always judged. A POSIX
 * message queue is refused while any path class is mediated (no recheck
 * reaches its messages).
 *
 * Return: 0, -EACCES (audited) or -ENOMEM (tracking failed; fail closed).
 */
int cf_fs_file_open(const struct cred *cred, struct file *file, u64 ns_id,
		    u64 ns_event)
{
	const struct cf_class_sets *p = &cf_class_sets;
	struct cf_cred *e = cf_subject(cred);
	struct cf_grant *g[CF_OPEN_SLOTS] = {};
	const struct cf_open_test *o;
	unsigned int n = 0;
	u32 need = 0;
	bool memo;

	if (!e)
		return 0;
	for (o = p->open; o < p->open + p->n_open; o++) {
		if (cf_open_needs(o, file->f_mode, file->f_flags) &&
		    cf_fs_mediated(e, o->class_id)) {
			need |= BIT(o->class_id);
			n++;
		}
	}
	/*
	 * A POSIX message queue (a regular file of an mqueue mount; its
	 * directory is judged as any other) moves its messages by
	 * mq_timedsend(), mq_timedreceive() and mq_notify(), which no
	 * recheck sees, whatever the open's mode: a receive takes a message
	 * from its owner, mq_notify() its one notification slot. A queue
	 * opens only while no path class is mediated, whatever grant or
	 * name the task has for it.
	 */
	if (file_inode(file)->i_sb->s_magic == CF_MQUEUE_MAGIC &&
	    S_ISREG(file_inode(file)->i_mode))
		return cf_fs_refuse_first(e, cf_class_sets.path, "mqueue");
	/* naming the file is the expensive part: skip it for open rules */
	if (!need || cf_fs_process_handle(file))
		return 0;
	/* as cf_exercise(): a traced task or a host past its deny bound judges */
	memo = likely(!READ_ONCE(current->ptrace)) && !cf_fleet_denies() &&
	       !(need & p->unkept) && cf_fs_memo_enabled();
	if (memo && cf_fs_memo_find(e, file, ns_id, ns_event, need, g)) {
		cf_stats_open_memo(true);
		return cf_fs_track(file,
				   cf_fs_memo_needed(g, CF_KEEP_READ - 1, need),
				   cf_fs_memo_needed(g, CF_KEEP_WRITE - 1, need), n);
	}
	return cf_fs_open_named(e, file, ns_id, ns_event, need, memo);
}

/**
 * cf_fs_entry() - create or remove the entry @dentry of @dir
 * @cred: the caller's credential, already found in the filter
 * @dir: the parent directory
 * @dentry: the entry (negative when being created), or NULL for @dir itself
 *
 * mknod (and O_CREAT), mkdir, symlink, unlink and rmdir need each class
 * that judges changes (CF_PATH_CHANGE: fs:write) on the entry's name.
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_fs_entry(const struct cred *cred, const struct path *dir,
		struct dentry *dentry)
{
	struct cf_cred *e = cf_subject(cred);
	unsigned int n = 0;

	if (!e)
		return 0;
	return cf_exercise_admitted_if(cf_fs_judge_each(e, cf_class_sets.change,
							dir, dentry, &n), n);
}

/**
 * cf_fs_attr() - change the file at @path (truncate, chmod, chown): each
 * class that judges changes (CF_PATH_CHANGE)
 * @cred: the caller's credential, already found in the filter
 * @path: the file; for ftruncate(), fchmod() and fchown() the open file's
 *	  path, judged again now
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_fs_attr(const struct cred *cred, const struct path *path)
{
	/* the name of @path itself */
	return cf_fs_entry(cred, path, NULL);
}

/*
 * The object named (@sdir, @src) gets the name (@ddir, @dst): each class
 * that judges changes (fs:write) on both ends, and for each class that
 * judges names (CF_PATH_NAMES: fs:read) the new name may not admit
 * anything the old one did not (Landlock's REFER, for capfence's classes).
 * A file gains only its new name: if the class would admit it, it must
 * admit the old one. A directory gives new names to its whole subtree,
 * which a grant beneath the new name could admit even when the name itself
 * is not: moving one needs the class on its old name, which (prefixes)
 * covers the subtree.
 * @src may be NULL when @sdir names the object itself. Allows under a grant
 * are added to *@n (cf_fs_judge()).
 */
static int cf_fs_move(struct cf_cred *e, const struct path *sdir,
		      const struct dentry *src, const struct path *ddir,
		      const struct dentry *dst, bool write, unsigned int *n)
{
	const struct dentry *obj = src ?: sdir->dentry;
	u32 bits, change = cf_class_sets.change;
	int err = 0;
	u8 c;

	if (write)
		err = cf_fs_judge_each(e, change, sdir, src, n) ?:
		      cf_fs_judge_each(e, change, ddir, dst, n);
	for (bits = cf_class_sets.names; bits && !err; bits &= bits - 1) {
		c = __ffs(bits);
		if (cf_fs_mediated(e, c) &&
		    (d_is_dir(obj) || !cf_fs_judge(e, c, ddir, dst, NULL)))
			err = cf_fs_judge(e, c, sdir, src, n);
	}
	return err;
}

/**
 * cf_fs_link() - a new name @new_dentry in @new_dir for @old_dentry
 * @cred: the caller's credential, already found in the filter
 * @old_dentry: the existing file, on @new_dir's mount (the VFS refuses
 *		links across mounts)
 * @new_dir: the directory of the new name
 * @new_dentry: the new name
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_fs_link(const struct cred *cred, struct dentry *old_dentry,
	       const struct path *new_dir, struct dentry *new_dentry)
{
	struct path old = { .mnt = new_dir->mnt, .dentry = old_dentry };
	struct cf_cred *e = cf_subject(cred);
	unsigned int n = 0;

	if (!e)
		return 0;
	return cf_exercise_admitted_if(cf_fs_move(e, &old, NULL, new_dir,
						  new_dentry, true, &n), n);
}

/**
 * cf_fs_rename() - rename, or exchange with RENAME_EXCHANGE
 * @cred: the caller's credential, already found in the filter
 * @old_dir: the source's directory
 * @old_dentry: the source
 * @new_dir: the target's directory
 * @new_dentry: the target (replaced, or swapped with the source)
 * @flags: RENAME_* flags
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_fs_rename(const struct cred *cred, const struct path *old_dir,
		 struct dentry *old_dentry, const struct path *new_dir,
		 struct dentry *new_dentry, unsigned int flags)
{
	struct cf_cred *e = cf_subject(cred);
	unsigned int n = 0;
	int err;

	if (!e)
		return 0;
	err = cf_fs_move(e, old_dir, old_dentry, new_dir, new_dentry, true,
			 &n);
	/* an exchange moves the target to the source's name as well */
	if (!err && (flags & RENAME_EXCHANGE))
		err = cf_fs_move(e, new_dir, new_dentry, old_dir, old_dentry,
				 false, &n);
	return cf_exercise_admitted_if(err, n);
}

/**
 * cf_fs_view() - refuse a change of the task's filesystem view
 * @cred: the caller's credential, already found in the filter
 * @what: the operation ("mount", "chroot", ...), for the audit record
 *
 * Names are judged from the task's root and namespace, so a task whose
 * epoch mediates a path class (fs:read, fs:write) may not change them; an
 * epoch with every path class open changes nothing. The record names the
 * first mediated path class in table order (fs:read, then fs:write).
 *
 * Return: 0 or -EACCES (audited, reason "bypass").
 */
int cf_fs_view(const struct cred *cred, const char *what)
{
	struct cf_cred *e = cf_subject(cred);

	if (!e)
		return 0;
	return cf_fs_refuse_first(e, cf_class_sets.path, what);
}

/**
 * cf_fs_xattr() - refuse an extended attribute change
 * @cred: the caller's credential, already found in the filter
 * @what: "setxattr" or "removexattr", for the audit record
 *
 * The inode_*xattr hooks, and inode_set_acl/inode_remove_acl that POSIX
 * ACL changes reach instead since 6.2, get a dentry without its mount, so
 * the file cannot be named from the task's root: changes are refused
 * while a class that judges changes (fs:write) is mediated (POSIX ACLs
 * and security labels included).
 *
 * Return: 0 or -EACCES (audited, reason "bypass").
 */
int cf_fs_xattr(const struct cred *cred, const char *what)
{
	struct cf_cred *e = cf_subject(cred);

	if (!e)
		return 0;
	return cf_fs_refuse_first(e, cf_class_sets.change, what);
}

/**
 * cf_fs_mqueue() - refuse a POSIX message queue's new or removed name
 * @cred: the caller's credential, already found in the filter
 * @dir: the directory of the name (inode_create, inode_unlink)
 * @what: "mq_create" or "mq_unlink", for the audit record
 *
 * mq_open(O_CREAT) and mq_unlink() change names in the IPC namespace's
 * internal mqueue mount through vfs_mkobj() and vfs_unlink(), which call
 * only inode_create and inode_unlink: no path_* hook and no mount to name
 * the queue by. As for extended attributes, the change is refused while
 * fs:write is mediated, through an mqueue mount the task can see too (its
 * path_mknod or path_unlink passed first). Other file systems' names reach
 * path_mknod and path_unlink, which judge them by name: nothing here.
 *
 * Return: 0 or -EACCES (audited, reason "bypass").
 */
int cf_fs_mqueue(const struct cred *cred, const struct inode *dir,
		 const char *what)
{
	struct cf_cred *e;

	if (dir->i_sb->s_magic != CF_MQUEUE_MAGIC)
		return 0;
	e = cf_subject(cred);
	if (!e)
		return 0;
	return cf_fs_refuse_first(e, cf_class_sets.change, what);
}
