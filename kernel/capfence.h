/* SPDX-License-Identifier: GPL-2.0 */
/*
 * capfence internal interfaces shared by the files of capfence.ko.
 *
 * Locking, in one place:
 * - cf_fence (fence.c) is a seqlock. Its spinlock is THE fence lock: every
 *   epoch activation, revocation and key change publishes under it and
 *   advances the fence. Decisions read a consistent snapshot with
 *   read_seqbegin()/read_seqretry(); nothing under it sleeps.
 * - cf_mutex (fence.c) serializes control-plane mutations that allocate
 *   (netlink handlers). It is taken before the fence lock, never inside it,
 *   and never from BPF program context.
 * - Credential state (cred.c) lives in an rhashtable keyed by the cred
 *   pointer; lookups run under RCU, which BPF programs already hold. A
 *   counting filter (atomic counters) in front of it lets a credential
 *   without state skip the lookup.
 * - Objects reachable from RCU readers (epochs, keys, grants, holdings) are
 *   freed only after a grace period.
 */
#ifndef _CAPFENCE_INTERNAL_H
#define _CAPFENCE_INTERNAL_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/llist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rhashtable.h>
#include <linux/seqlock.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <uapi/linux/capfence.h>

#define CAPFENCE_VERSION "0.1.0"

struct cred;
struct file;
struct sk_buff;
struct genl_info;
struct linux_binprm;
struct socket;
struct sockaddr;

/* A constraint in host order; see struct capfence_net_range. */
struct cf_constraint {
	u8 kind;			/* enum capfence_constraint_kind */
	u8 path_len;
	struct capfence_net_range net;	/* ports in host order */
	char path[CAPFENCE_PATH_MAX + 1];
};

/* A rule of one class in an epoch; an immutable part of struct cf_epoch. */
struct cf_rule {
	u8 kind;			/* enum capfence_rule_kind */
	u8 n;
	struct cf_constraint *c;	/* n entries, NULL when unconstrained */
};

/* An installed epoch. Never freed before module exit. */
struct cf_epoch {
	struct list_head node;		/* cf_epochs, ascending ids, RCU */
	struct llist_node activated;	/* queued for its activation event */
	u64 id;
	bool active;			/* written under the fence lock */
	u64 fenced_at[__CAPFENCE_CLASS_MAX];	/* fence lock; 0 = not fenced */
	struct cf_rule rules[__CAPFENCE_CLASS_MAX];
};

/* One decoded token, MAC not yet checked. */
struct cf_token {
	u8 class_id;
	u16 flags;
	u32 key_id;
	u64 cap_id;
	u64 epoch_id;
	u8 n;
	struct cf_constraint c[CAPFENCE_MAX_CONSTRAINTS];
	u8 mac[CAPFENCE_MAC_LEN];
	size_t signed_len;		/* bytes covered by the MAC */
};

/* Revocation state of one cap_id; shared by every grant of that id. */
struct cf_capid {
	struct hlist_node node;		/* cf_capids, RCU */
	u64 cap_id;
	u64 revoked_at;			/* fence lock; 0 = live */
	refcount_t ref;
	struct rcu_head rcu;
};

/*
 * Removal state of one installed key, shared by every grant accepted under
 * it: removing the key fences them all in one store.
 */
struct cf_keycell {
	refcount_t ref;
	u64 removed_at;			/* fence lock; 0 = installed */
};

/* An accepted token: immutable once created. */
struct cf_grant {
	refcount_t ref;
	struct cf_capid *capid;
	struct cf_keycell *key;		/* the key that authenticated it */
	struct cf_epoch *epoch;		/* the token's (= holder's) epoch */
	u8 class_id;
	u8 n;
	u32 key_id;
	pid_t from_pid;			/* delegator, 0 for the orchestrator */
	struct rcu_head rcu;
	struct cf_constraint c[];
};

/* An immutable set of grants held by a credential (copy on write). */
struct cf_holdings {
	refcount_t ref;
	u32 n;
	struct rcu_head rcu;
	struct cf_grant *g[];
};

/* Per-credential state; exists only for bound or pending credentials. */
struct cf_cred {
	struct rhash_head node;
	const struct cred *cred;	/* key */
	struct cf_epoch *epoch;		/* bound epoch; NULL = unbound */
	struct cf_epoch *pending;	/* epoch the next execve binds */
	struct cf_holdings __rcu *held;
	struct cf_holdings *pending_held;	/* fixed once pending is set */
	spinlock_t lock;		/* orders writers of held */
	struct rcu_head rcu;
};

/* A target of an exercise decision. */
struct cf_target {
	u8 class_id;
	u8 family;			/* 4 or 6 for net classes */
	u16 port;
	u8 addr[16];
	const char *path;		/* fs classes */
	size_t path_len;
	const char *what;		/* refusals: the operation, e.g. "mount" */
	int seen;			/* errno the task sees, 0: EACCES */
};

/* fence.c */
extern seqlock_t cf_fence;
extern struct mutex cf_mutex;
extern u64 cf_fence_val;
u64 cf_fence_value(void);

/**
 * cf_fence_value_locked() - read the fence inside a read section or lock
 *
 * Inline: decisions read it in their fence read section.
 *
 * Return: the fence value.
 */
static inline u64 cf_fence_value_locked(void)
{
	return READ_ONCE(cf_fence_val);
}

u64 cf_fence_advance_locked(void);
u64 cf_generation(void);
void cf_generation_bump(void);

/* constraint.c */
bool cf_constraints_contain(const struct cf_constraint *outer, u8 nouter,
			    const struct cf_constraint *inner, u8 ninner);
bool cf_constraints_admit(const struct cf_constraint *c, u8 n,
			  const struct cf_target *t);
bool cf_rule_narrows(const struct cf_rule *old, const struct cf_rule *new);
int cf_net_range_from_wire(struct capfence_net_range *r,
			   const struct capfence_net_range *wire, bool le);
int cf_path_check(const char *path, size_t len);

/* epoch.c */
void cf_epoch_exit(void);
void cf_epoch_events_stop(void);
struct cf_epoch *cf_epoch_find(u64 id);
struct list_head *cf_epoch_list(void);
int cf_epoch_install(struct cf_epoch *e, struct netlink_ext_ack *extack);
int cf_epoch_activate(u64 id, struct netlink_ext_ack *extack);
void cf_epoch_bind_activate(struct cf_epoch *e);
struct cf_epoch *cf_epoch_alloc(u64 id);
void cf_epoch_free(struct cf_epoch *e);
u64 cf_epoch_max_id(void);
u64 cf_epoch_active_id(void);

/* key.c */
void cf_key_exit(void);
int cf_key_install(u32 id, const u8 *key, struct netlink_ext_ack *extack);
int cf_key_remove(u32 id, struct netlink_ext_ack *extack);
int cf_key_verify(u32 key_id, const u8 *msg, size_t len, const u8 *mac);
struct cf_keycell *cf_keycell_get(u32 key_id);
void cf_keycell_put(struct cf_keycell *c);

/* token.c */
int cf_token_decode(struct cf_token *t, const u8 *buf, size_t len,
		    const char **why);

/* cap.c */
void cf_cap_exit(void);
void cf_cap_drain(void);
struct cf_grant *cf_grant_from_token(const struct cf_token *t,
				     struct cf_epoch *e, pid_t from,
				     gfp_t gfp);
void cf_grant_put(struct cf_grant *g);
struct cf_holdings *cf_holdings_add(const struct cf_holdings *old,
				    struct cf_grant *g, gfp_t gfp);
void cf_holdings_put(struct cf_holdings *h);
struct cf_holdings *cf_holdings_get(struct cf_holdings *h);

/**
 * cf_grant_state() - is a grant valid under the current fence?
 * @g: grant
 *
 * Call inside a fence read section (or under the fence lock) to get a
 * consistent answer together with other fence-protected state. Inline:
 * every allowed exercise asks it.
 *
 * Return: CAPFENCE_R_OK, CAPFENCE_R_REVOKED or CAPFENCE_R_FENCED.
 */
static inline enum capfence_reason cf_grant_state(const struct cf_grant *g)
{
	if (READ_ONCE(g->capid->revoked_at))
		return CAPFENCE_R_REVOKED;
	if (READ_ONCE(g->epoch->fenced_at[g->class_id]) ||
	    READ_ONCE(g->key->removed_at))
		return CAPFENCE_R_FENCED;
	return CAPFENCE_R_OK;
}

int cf_revoke(u64 cap_id, u64 *fence);
u64 cf_nr_held(void);

/**
 * cf_ptr_hashfn() - rhashtable hash of a pointer key
 * @data: the key, a pointer
 * @len: key length, sizeof(void *) (unused: the key is one pointer)
 * @seed: the table's random seed
 *
 * The credential and file tables are keyed by pointers: one multiply
 * instead of jhash over the key bytes. The high half is folded in before
 * the multiply because rhashtable uses the low bits of the result, and the
 * seed is mixed into every bit a bucket index depends on.
 *
 * Return: the hash.
 */
static inline u32 cf_ptr_hashfn(const void *data, u32 len, u32 seed)
{
	u64 k = (u64)*(const unsigned long *)data;

	k ^= k >> 32;
	return hash_64(k ^ seed, 32);
}

/**
 * cf_ptr_cmpfn() - rhashtable compare of a pointer key
 * @arg: the lookup (key and table)
 * @obj: an entry whose key is at the table's key_offset
 *
 * Return: 0 when @obj's key is the pointer looked up.
 */
static inline int cf_ptr_cmpfn(struct rhashtable_compare_arg *arg,
			       const void *obj)
{
	const void *key = (const char *)obj + arg->ht->p.key_offset;

	return *(const void *const *)arg->key != *(const void *const *)key;
}

/* Parameters of a table of @type entries keyed by the pointer @key. */
#define CF_PTR_TABLE_PARAMS(type, key, node) {				\
	.key_len = sizeof(void *),					\
	.key_offset = offsetof(type, key),				\
	.head_offset = offsetof(type, node),				\
	.automatic_shrinking = true,					\
	.hashfn = cf_ptr_hashfn,					\
	.obj_cmpfn = cf_ptr_cmpfn,					\
}

/* cred.c */

/*
 * Counting filter in front of the credential table: counter
 * hash_ptr(cred) counts the entries whose key hashes there. It is raised
 * before an entry is inserted and lowered after it is removed, so a zero
 * counter means @cred has no entry.
 */
#define CF_CRED_HINT_BITS	14
extern atomic_t cf_cred_hint[1 << CF_CRED_HINT_BITS];

static inline atomic_t *cf_cred_hint_of(const struct cred *cred)
{
	return &cf_cred_hint[hash_ptr(cred, CF_CRED_HINT_BITS)];
}

/* false: @cred certainly has no entry (nearly every unbound credential) */
static inline bool cf_cred_maybe(const struct cred *cred)
{
	return atomic_read(cf_cred_hint_of(cred));
}

int cf_cred_init(void);
void cf_cred_exit(void);
struct cf_cred *cf_cred_find(const struct cred *cred);
struct cf_cred *cf_cred_lookup(const struct cred *cred);
int cf_cred_prepare(struct cred *new, const struct cred *old, gfp_t gfp);
int cf_cred_alloc_blank(struct cred *cred);
void cf_cred_transfer(struct cred *new, const struct cred *old);
void cf_cred_free(struct cred *cred);
int cf_cred_bind_exec(struct linux_binprm *bprm);
int cf_cred_set_pending(const struct cred *cred, struct cf_epoch *e,
			struct cf_holdings *h);
bool cf_current_bound(void);

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

long cf_nr_creds(void);
long cf_nr_bound(void);

/* decide.c */
struct cf_delegation {
	const u8 *tok;			/* canonical token bytes */
	size_t len;
	pid_t pid;			/* target */
	pid_t from;			/* delegator, 0 = none */
	bool dry_run;			/* check only */
	/* results */
	enum capfence_reason reason;
	bool already_held;		/* the target holds this very token */
	struct cf_token token;
	u64 target_epoch;
	u64 fence;
};

const struct cred *cf_get_task_cred(pid_t pid);
int cf_delegate(struct cf_delegation *d, struct netlink_ext_ack *extack);
int cf_check_token(const struct cf_token *t, const char *why, const u8 *buf,
		   struct cf_epoch *e, enum capfence_reason *reason,
		   struct netlink_ext_ack *extack);
int cf_exercise(struct cf_cred *e, struct cf_target *t,
		struct cf_grant **admitted);
int cf_refuse_mediated(struct cf_cred *e, u8 class_id, const char *what);
bool cf_admits(const struct cf_cred *e, const struct cf_target *t);

/* file.c */
int cf_file_init(void);
void cf_file_exit(void);
int cf_file_track(struct file *file, struct cf_grant *rg, struct cf_grant *wg);
int cf_file_revalidate(struct file *file, int mask);
void cf_file_free(struct file *file);
int cf_file_map(struct file *file, unsigned long prot, bool shared,
		const char *what);

extern atomic_long_t cf_nr_files;

/**
 * cf_nr_tracked_files() - files whose grant is rechecked on use
 *
 * Inline: the file hooks (kfunc.c) test it before calling into file.c,
 * which relies on that.
 *
 * Return: the count; hooks stay attached while it is non-zero.
 */
static inline long cf_nr_tracked_files(void)
{
	return atomic_long_read(&cf_nr_files);
}

/* net.c */
struct msghdr;
struct sock;
int cf_net_connect(struct cf_cred *e, struct socket *sock,
		   struct sockaddr *sa, int len);
int cf_net_bind(struct cf_cred *e, struct socket *sock, struct sockaddr *sa,
		int len);
int cf_net_listen(struct cf_cred *e, struct socket *sock);
int cf_net_sendmsg(struct cf_cred *e, struct socket *sock, struct msghdr *msg);
int cf_net_create(struct cf_cred *e, int family, int type);
int cf_net_setsockopt(struct cf_cred *e, struct socket *sock, int level,
		      int optname);
int cf_net_sctp(struct cf_cred *e, struct sock *sk, int optname,
		struct sockaddr *sa, int len);
void cf_net_peer(const struct sock *sk, struct cf_target *t);
void cf_net_bound(const struct sock *sk, struct cf_target *t);

/* sock.c */
int cf_sock_init(void);
void cf_sock_exit(void);
int cf_sock_track(struct sock *sk, struct cf_grant *g);
int cf_sock_revalidate(struct sock *sk);
void cf_sock_clone(const struct sock *sk, struct sock *newsk);
void cf_sock_free(struct sock *sk);

extern atomic_long_t cf_nr_socks;

/**
 * cf_nr_tracked_socks() - sockets whose grants are rechecked on use
 *
 * Return: the count; hooks stay attached while it is non-zero.
 */
static inline long cf_nr_tracked_socks(void)
{
	return atomic_long_read(&cf_nr_socks);
}

/* borrow.c */
struct task_struct;
int cf_borrow_attach(struct cf_cred *tracer, struct task_struct *tracee);
bool cf_borrow_denied(const struct cf_target *t);

/* fspath.c */
struct path;
struct dentry;
int cf_fs_file_open(const struct cred *cred, struct file *file);
int cf_fs_entry(const struct cred *cred, const struct path *dir,
		struct dentry *dentry);
int cf_fs_attr(const struct cred *cred, const struct path *path);
int cf_fs_link(const struct cred *cred, struct dentry *old_dentry,
	       const struct path *new_dir, struct dentry *new_dentry);
int cf_fs_rename(const struct cred *cred, const struct path *old_dir,
		 struct dentry *old_dentry, const struct path *new_dir,
		 struct dentry *new_dentry, unsigned int flags);
int cf_fs_view(const struct cred *cred, const char *what);
int cf_fs_xattr(const struct cred *cred, const char *what);

/* audit.c */
void cf_audit_exercise(const struct cf_target *t, u64 epoch,
		       enum capfence_reason r, u64 cap_id, u64 fence);
void cf_audit_delegate(pid_t pid, u64 epoch, u64 token_epoch, u8 class_id,
		       enum capfence_reason r, u64 cap_id, u64 fence);
int cf_reason_errno(enum capfence_reason r);

/* stats.c */
void cf_stats_delegate(enum capfence_reason r);
void cf_stats_exercise(enum capfence_reason r);
void cf_stats_exercise_failed(void);
int cf_stats_fill(struct sk_buff *skb);

/* hooks.c */
int cf_hooks_attach(const u32 *fds, int n, struct netlink_ext_ack *extack);
int cf_hooks_detach(struct netlink_ext_ack *extack);
bool cf_hooks_attached(void);
void cf_hooks_exit(void);

/* kfunc.c */
int cf_kfunc_init(void);

/* netlink.c */
int cf_netlink_init(void);
void cf_netlink_exit(void);
void cf_event(enum capfence_event ev, u64 epoch, u64 cap_id,
	      enum capfence_reason r, pid_t pid);

#endif /* _CAPFENCE_INTERNAL_H */
