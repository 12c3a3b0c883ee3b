/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-credential state (cred.c). Where it is kept is the front end's
 * (cred_store.h): cf_cred_maybe() and cf_cred_find() come from there.
 */
#ifndef _CAPFENCE_CRED_H
#define _CAPFENCE_CRED_H

#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/rhashtable.h>
#include "cap.h"
#include "class.h"
#include "cred_store.h"
#include "sandbox.h"

/*
 * The last net decision a bound credential was allowed (decide.c): the
 * target, the fence value and holdings it was judged at, and the grant
 * that admitted it, and the last socket tracked under a grant. A seqcount
 * with a try-lock for writers: seq is odd while one writes, and a reader
 * that sees it odd or changed misses.
 */
struct cf_net_memo {
	unsigned int seq;
	u8 class_id;
	u8 family;
	u16 port;
	u8 addr[16];
	u64 fence;
	const struct cf_holdings *held;
	struct cf_grant *grant;
	/* the last socket tracked under sk_grant, at cf_sock_gen() sk_gen */
	const struct sock *sk;
	struct cf_grant *sk_grant;
	unsigned long sk_gen;
};

/*
 * How many subtrees the open memo remembers: agents open files beneath a
 * few granted places in turn (a workspace, /tmp, a cache); eight at 64
 * bytes each.
 */
#define CF_FS_MEMO_DIRS	8

/* One remembered subtree of cf_fs_memo, its root @dir; NULL: empty. */
struct cf_fs_memo_dir {
	const struct vfsmount *mnt;
	const struct dentry *dir;
	const struct inode *inode;
	unsigned long ino;
	u32 gen;			/* the directory inode's generation */
	u32 classes;			/* BIT(class id) admitted beneath */
	unsigned long until;		/* jiffies: used only before it */
	struct cf_grant *grant[CF_OPEN_SLOTS];	/* by open_keep: fs:read, fs:write */
};

/* the memo's class masks are u32: every class id must fit, or one would fail open */
static_assert(__CAPFENCE_CLASS_MAX <= 32,
	      "a class id does not fit the open memo's u32 masks");

/*
 * The subtrees a bound credential's rules and grants admit whole, as its
 * allowed opens showed (fsmemo.c), and the state all of them were judged
 * at: what a name and the grants depended on. Same seqcount protocol as cf_net_memo; a fill
 * at another state empties every entry. Pointers are only compared.
 */
struct cf_fs_memo {
	unsigned int seq;
	unsigned int rename_seq;	/* rename_lock's sequence */
	u64 ns_id, ns_event;		/* the mount namespace and its tree */
	const struct vfsmount *root_mnt;	/* the task's root */
	const struct dentry *root;
	u64 fence;
	const struct cf_holdings *held;
	unsigned int next;		/* the entry a full memo replaces */
	struct cf_fs_memo_dir dir[CF_FS_MEMO_DIRS];
};

/* Per-credential state; exists only for bound or pending credentials. */
struct cf_cred {
	struct hlist_node node;		/* in its bucket of the module's table */
	const struct cred *cred;	/* whose state */
	struct cf_epoch *epoch;		/* bound epoch; NULL = unbound */
	struct cf_epoch *pending;	/* epoch the next execve binds */
	struct cf_holdings __rcu *held;
	struct cf_holdings *pending_held;	/* fixed once pending is set */
	struct cf_sandbox *sb;		/* its sandbox (sandbox.c), or NULL;
					 * fixed once bound
					 */
	spinlock_t lock;		/* orders writers of held */
	struct cf_net_memo memo;	/* lock-free, see cf_net_memo */
	struct cf_fs_memo fs_memo;	/* lock-free, see cf_fs_memo */
	struct rcu_head rcu;
};

int cf_cred_init(void);
void cf_cred_exit(void);
struct cf_cred *cf_cred_lookup(const struct cred *cred);
int cf_cred_prepare(struct cred *new, const struct cred *old, gfp_t gfp);
int cf_cred_alloc_blank(struct cred *cred);
void cf_cred_transfer(struct cred *new, const struct cred *old);
void cf_cred_free(struct cred *cred);
int cf_cred_bind_exec(struct linux_binprm *bprm);
int cf_cred_set_pending(const struct cred *cred, struct cf_epoch *e,
			struct cf_holdings *h, struct cf_sandbox *sb);
bool cf_current_bound(void);
bool cf_current_control_plane(void);

/**
 * cf_subject() - the bound state of a credential the filter may know
 * @cred: a credential cf_cred_maybe() did not rule out
 *
 * Caller holds RCU.
 *
 * Return: the state when @cred is bound, else NULL.
 */
static inline struct cf_cred *cf_subject(const struct cred *cred)
{
	struct cf_cred *e = cf_cred_find(cred);

	return e && e->epoch ? e : NULL;
}

struct cf_cred *cf_tracer_subject(void);
struct cf_sandbox *cf_current_sandbox(void);
long cf_nr_creds(void);
long cf_creds_close(void);
void cf_creds_reopen(void);
long cf_nr_bound(void);

#endif /* _CAPFENCE_CRED_H */
