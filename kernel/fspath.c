// SPDX-License-Identifier: GPL-2.0
/*
 * fs:read and fs:write by name: what an open can do, every change beneath
 * a path (create, remove, rename and link on both ends, symlink, mknod,
 * truncate, chmod/chown, xattrs), and the refusal of every change of a
 * bound task's filesystem view.
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
#include "constraint.h"
#include "cred.h"
#include "decide.h"
#include "file.h"
#include "fleet.h"
#include "fsmemo.h"
#include "fspath.h"
#include "stats.h"

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
	/* on the root's own mount no mount is crossed: skip mount_lock */
	if (path->mnt == root.mnt ? !is_subdir(path->dentry, root.dentry) :
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
 * Judge @class_id for the name of @path (or of its child @child). With
 * @quiet, only answer: nothing is counted or audited.
 */
static int cf_fs_judge(struct cf_cred *e, u8 class_id,
		       const struct path *path, const struct dentry *child,
		       bool quiet)
{
	struct cf_target t = { .class_id = class_id };
	int err;

	if (!cf_fs_mediated(e, class_id))
		return 0;
	t.path = cf_fs_name(path, child, *get_cpu_ptr(&cf_path_buf),
			    &t.path_len);
	if (!t.path)
		err = quiet ? -EACCES :
			cf_refuse_mediated(e, class_id, "unreachable");
	else if (quiet)
		err = cf_admits(e, &t) ? 0 : -EACCES;
	else
		err = cf_exercise(e, &t, NULL);
	put_cpu_ptr(&cf_path_buf);
	return err;
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

/* An open that can change the file, or create one, needs fs:write. */
static bool cf_open_modifies(const struct file *file)
{
	return (file->f_mode & FMODE_WRITE) ||
	       (file->f_flags & (O_TRUNC | O_CREAT)) ||
	       (file->f_flags & O_ACCMODE) == O_ACCMODE;
}

/*
 * The open the memo did not answer: name the file, judge each class, fill
 * the memo (with @memo) and track the file. Out of line, so that a memo
 * hit pays for none of its locals.
 */
static noinline int cf_fs_open_named(struct cf_cred *e, struct file *file,
				     u64 ns_id, u64 ns_event, bool rd, bool wr,
				     bool memo)
{
	struct cf_grant *rg = NULL, *wg = NULL, *g[2];
	struct cf_target t = { .tracks = true };
	struct cf_fs_memo_start s;
	int err = 0;

	if (memo) {
		cf_stats_open_memo(false);
		cf_fs_memo_begin(e, ns_id, ns_event, &s);
	}
	t.path = cf_fs_name(&file->f_path, NULL, *get_cpu_ptr(&cf_path_buf),
			    &t.path_len);
	if (!t.path) {
		err = cf_refuse_mediated(e, rd ? CAPFENCE_CLASS_FS_READ :
					 CAPFENCE_CLASS_FS_WRITE,
					 "unreachable");
		goto out;
	}
	if (rd) {
		t.class_id = CAPFENCE_CLASS_FS_READ;
		err = cf_exercise(e, &t, &rg);
	}
	if (!err && wr) {
		t.class_id = CAPFENCE_CLASS_FS_WRITE;
		/* refused: the open fails, its allowed read is not counted */
		err = cf_exercise(e, &t, &wg);
	}
	if (!err && memo) {
		g[0] = rg;
		g[1] = wg;
		cf_fs_memo_fill(e, &s, file, &t, g);
	}
	/* each grant here stands for an allowed exercise, counted */
	if (!err)
		err = cf_fs_track(file, rg, wg, !!rg + !!wg);
out:
	put_cpu_ptr(&cf_path_buf);
	return err;
}

/**
 * cf_fs_file_open() - fs:read and fs:write at open
 * @cred: the opener's credential, already found in the filter
 * @file: the file being opened
 * @ns_id: the opener's mount namespace's id, as the BPF program read it
 * @ns_event: the count of changes of that namespace's tree
 *
 * Reading needs fs:read; writing, O_APPEND, O_TRUNC (even with O_RDONLY),
 * O_CREAT and access mode 3 (neither read nor write, ioctls only) need
 * fs:write. A file opened under a capability is tracked (file.c), so its
 * reads and writes are rechecked against the grants that admitted them.
 * An open beneath a subtree that the credential's recent allowed opens
 * showed its rules and grants admit whole is answered by the open memo
 * (fsmemo.c) while nothing it depended on moved.
 *
 * Return: 0, -EACCES (audited) or -ENOMEM (tracking failed; fail closed).
 */
int cf_fs_file_open(const struct cred *cred, struct file *file, u64 ns_id,
		    u64 ns_event)
{
	struct cf_cred *e = cf_subject(cred);
	struct cf_grant *g[2] = {};
	bool rd, wr, memo;
	u32 need = 0;

	if (!e)
		return 0;
	rd = (file->f_mode & FMODE_READ) &&
	     cf_fs_mediated(e, CAPFENCE_CLASS_FS_READ);
	wr = cf_open_modifies(file) &&
	     cf_fs_mediated(e, CAPFENCE_CLASS_FS_WRITE);
	/* naming the file is the expensive part: skip it for open rules */
	if ((!rd && !wr) || cf_fs_process_handle(file))
		return 0;
	if (rd)
		need |= BIT(CAPFENCE_CLASS_FS_READ);
	if (wr)
		need |= BIT(CAPFENCE_CLASS_FS_WRITE);
	/* as cf_exercise(): a traced task or a host past its deny bound judges */
	memo = likely(!READ_ONCE(current->ptrace)) && !cf_fleet_denies() &&
	       cf_fs_memo_enabled();
	if (memo && cf_fs_memo_find(e, file, ns_id, ns_event, need, g)) {
		cf_stats_open_memo(true);
		return cf_fs_track(file, rd ? g[0] : NULL, wr ? g[1] : NULL,
				   rd + wr);
	}
	return cf_fs_open_named(e, file, ns_id, ns_event, rd, wr, memo);
}

/**
 * cf_fs_entry() - create or remove the entry @dentry of @dir
 * @cred: the caller's credential, already found in the filter
 * @dir: the parent directory
 * @dentry: the entry (negative when being created)
 *
 * mknod (and O_CREAT), mkdir, symlink, unlink and rmdir need fs:write on
 * the entry's name.
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_fs_entry(const struct cred *cred, const struct path *dir,
		struct dentry *dentry)
{
	struct cf_cred *e = cf_subject(cred);

	if (!e)
		return 0;
	return cf_fs_judge(e, CAPFENCE_CLASS_FS_WRITE, dir, dentry, false);
}

/**
 * cf_fs_attr() - change the file at @path (truncate, chmod, chown)
 * @cred: the caller's credential, already found in the filter
 * @path: the file; for ftruncate(), fchmod() and fchown() the open file's
 *	  path, judged again now
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_fs_attr(const struct cred *cred, const struct path *path)
{
	struct cf_cred *e = cf_subject(cred);

	if (!e)
		return 0;
	return cf_fs_judge(e, CAPFENCE_CLASS_FS_WRITE, path, NULL, false);
}

/*
 * The object named (@sdir, @src) gets the name (@ddir, @dst): fs:write on
 * both ends, and the new name may not make anything readable that was not
 * (Landlock's REFER, for capfence's classes). A file gains only its new
 * name: if fs:read would admit it, fs:read must admit the old one. A
 * directory gives new names to its whole subtree, which a grant beneath
 * the new name could admit even when the name itself is not: moving one
 * needs fs:read on its old name, which (prefixes) covers the subtree.
 * @src may be NULL when @sdir names the object itself.
 */
static int cf_fs_move(struct cf_cred *e, const struct path *sdir,
		      const struct dentry *src, const struct path *ddir,
		      const struct dentry *dst, bool write)
{
	const struct dentry *obj = src ?: sdir->dentry;
	int err = 0;

	if (write)
		err = cf_fs_judge(e, CAPFENCE_CLASS_FS_WRITE, sdir, src, false) ?:
		      cf_fs_judge(e, CAPFENCE_CLASS_FS_WRITE, ddir, dst, false);
	if (!err && cf_fs_mediated(e, CAPFENCE_CLASS_FS_READ) &&
	    (d_is_dir(obj) ||
	     !cf_fs_judge(e, CAPFENCE_CLASS_FS_READ, ddir, dst, true)))
		err = cf_fs_judge(e, CAPFENCE_CLASS_FS_READ, sdir, src, false);
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

	if (!e)
		return 0;
	return cf_fs_move(e, &old, NULL, new_dir, new_dentry, true);
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
	int err;

	if (!e)
		return 0;
	err = cf_fs_move(e, old_dir, old_dentry, new_dir, new_dentry, true);
	/* an exchange moves the target to the source's name as well */
	if (!err && (flags & RENAME_EXCHANGE))
		err = cf_fs_move(e, new_dir, new_dentry, old_dir, old_dentry,
				 false);
	return err;
}

/**
 * cf_fs_view() - refuse a change of the task's filesystem view
 * @cred: the caller's credential, already found in the filter
 * @what: the operation ("mount", "chroot", ...), for the audit record
 *
 * Names are judged from the task's root and namespace, so a task whose
 * epoch mediates fs:read or fs:write may not change them; an epoch with
 * both open changes nothing. The record names fs:read when that class is
 * mediated, fs:write otherwise.
 *
 * Return: 0 or -EACCES (audited, reason "bypass").
 */
int cf_fs_view(const struct cred *cred, const char *what)
{
	struct cf_cred *e = cf_subject(cred);

	if (!e)
		return 0;
	return cf_refuse_mediated(e, cf_fs_mediated(e, CAPFENCE_CLASS_FS_READ) ?
				  CAPFENCE_CLASS_FS_READ :
				  CAPFENCE_CLASS_FS_WRITE, what);
}

/**
 * cf_fs_xattr() - refuse an extended attribute change
 * @cred: the caller's credential, already found in the filter
 * @what: "setxattr" or "removexattr", for the audit record
 *
 * The inode_*xattr hooks, and inode_set_acl/inode_remove_acl that POSIX
 * ACL changes reach instead since 6.2, get a dentry without its mount, so
 * the file cannot be named from the task's root: changes are refused
 * while fs:write is mediated (POSIX ACLs and security labels included).
 *
 * Return: 0 or -EACCES (audited, reason "bypass").
 */
int cf_fs_xattr(const struct cred *cred, const char *what)
{
	struct cf_cred *e = cf_subject(cred);

	if (!e)
		return 0;
	return cf_refuse_mediated(e, CAPFENCE_CLASS_FS_WRITE, what);
}
