// SPDX-License-Identifier: GPL-2.0
/*
 * Per-credential state: the bound epoch, held capabilities and the pending
 * exec epoch, maintained by the cred_prepare, cred_alloc_blank,
 * cred_transfer and cred_free hooks. Where an entry is kept is the front
 * end's (cred_store.h): the module's table keyed by the cred pointer, or
 * the built-in LSM's cred blob. A cred's entry is removed in cred_free,
 * before the cred's memory can be reused.
 *
 * Locking: lookups run under RCU (BPF programs hold it). Entries are added
 * from cred hooks (atomic context, GFP_ATOMIC) and from netlink (cf_mutex),
 * removed from cred_free (an RCU callback, softirq) and freed after a
 * grace period; cf_cred_lock (a _bh spinlock: removal runs in softirq)
 * orders the writers of the store. e->lock orders writers of e->held, of
 * the pending fields and of e->sb while pending; readers copy the holdings
 * pointer under RCU, and read a bound entry's e->sb, which no longer
 * changes. An entry holds a reference on its sandbox and is counted in it
 * (sandbox.c): a bound credential's copy past the sandbox's limit fails.
 * e->memo, the net decision memo, is decide.c's: a seqcount whose writers
 * take it with cmpxchg() or skip it, never under e->lock; a new entry
 * starts empty.
 *
 * Blank reservations (cf_cred_alloc_blank(), from any task's keyctl) are
 * the one way an entry appears while none exists, so they are admitted
 * only while cf_creds_open (cf_cred_lock): a detach closes them and counts
 * the entries in one section of that lock (cf_creds_close()), and either
 * sees a reservation or the reservation sees it closed. An entry's count
 * is raised inside that section too.
 *
 * An entry's epoch and pending epoch are counted in them
 * (cf_epoch_cred_get()): an epoch a credential names is not retired.
 *
 * The store is reserved for a cred (cf_cred_store_reserve()) before its
 * entry is added and unreserved after it is removed: the module's filter
 * counter, which whoever finds the entry sees raised.
 */
#include <linux/binfmts.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "audit.h"
#include "cap.h"
#include "cred.h"
#include "epoch.h"
#include "fence.h"
#include "sandbox.h"
#include "seccomp.h"

static DEFINE_SPINLOCK(cf_cred_lock);
static atomic_long_t cf_nr_entries = ATOMIC_LONG_INIT(0);
static atomic_long_t cf_nr_bound_creds = ATOMIC_LONG_INIT(0);
static bool cf_creds_open;	/* cf_cred_lock: blank reservations admitted */

/**
 * cf_cred_lookup() - state of @cred
 * @cred: credential
 *
 * Caller holds rcu_read_lock(). Unbound, unpending credentials have no
 * entry: they cost one filter test, or one failed lookup when another
 * entry shares their counter.
 *
 * Return: the entry or NULL.
 */
struct cf_cred *cf_cred_lookup(const struct cred *cred)
{
	if (!cf_cred_maybe(cred))
		return NULL;
	return cf_cred_find(cred);
}

static struct cf_cred *cf_cred_alloc(const struct cred *cred, gfp_t gfp)
{
	struct cf_cred *e = kzalloc(sizeof(*e), gfp);

	if (!e)
		return NULL;
	e->cred = cred;
	spin_lock_init(&e->lock);
	return e;
}

/*
 * Insert @e; -EEXIST, inserting nothing, when its cred has an entry
 * already; -EAGAIN for a @blank reservation while they are closed. The
 * first is kept harmless (cf_cred_dup()) though it should no longer
 * happen: a second set of capfence's programs (a re-attach while the
 * previous set's links are still being freed, or `capfence attach` while
 * attached) runs with another cookie, and the kfuncs ignore it (kfunc.c).
 */
static int cf_cred_insert(struct cf_cred *e, bool blank)
{
	/* before the entry can be found: see the locking comment */
	cf_cred_store_reserve(e->cred);
	spin_lock_bh(&cf_cred_lock);
	if (blank && !cf_creds_open) {
		spin_unlock_bh(&cf_cred_lock);
		cf_cred_store_unreserve(e->cred);
		return -EAGAIN;
	}
	if (!cf_cred_store_add(e)) {
		spin_unlock_bh(&cf_cred_lock);
		cf_cred_store_unreserve(e->cred);
		return -EEXIST;
	}
	atomic_long_inc(&cf_nr_entries);
	spin_unlock_bh(&cf_cred_lock);
	if (e->epoch)
		atomic_long_inc(&cf_nr_bound_creds);
	return 0;
}

static void cf_cred_release(struct cf_cred *e)
{
	/* readers that found @e hold RCU: a retire waits for them */
	cf_epoch_cred_put(e->epoch);
	cf_epoch_cred_put(e->pending);
	cf_holdings_put(rcu_dereference_protected(e->held, true));
	cf_holdings_put(e->pending_held);
	if (e->sb) {
		cf_sandbox_cred_uncharge(e->sb);
		cf_sandbox_put(e->sb);
	}
	kfree_rcu(e, rcu);
}

/*
 * Did another run of the same hook already give @n's cred the state @n
 * carries (the same epoch, pending epoch and sandbox)? Then the -EEXIST
 * of cf_cred_insert() is that run's entry, and the cred has its state.
 * Anything else (an entry of a freed cred whose memory was reused) stays
 * an error: the credential change fails closed. Caller holds RCU (BPF
 * program context).
 */
static bool cf_cred_dup(const struct cf_cred *n)
{
	const struct cf_cred *x = cf_cred_find(n->cred);

	return x && x->epoch == n->epoch && x->pending == n->pending &&
	       x->sb == n->sb;
}

/*
 * Insert @n, made by a credential hook, or release it: 0 also when a
 * second run of the hook finds the first run's entry (cf_cred_dup()).
 */
static int cf_cred_insert_hook(struct cf_cred *n, bool blank)
{
	int err = cf_cred_insert(n, blank);

	if (err) {
		if (err == -EEXIST && cf_cred_dup(n))
			err = 0;
		cf_cred_release(n);
	}
	return err;
}

/*
 * Copy @o's state into the new entry @n. With @enforce, a bound @o's
 * sandbox refuses a copy past its credential limit: returns false and
 * copies nothing.
 */
static bool cf_cred_copy(struct cf_cred *n, struct cf_cred *o, bool enforce)
{
	struct cf_holdings *h;

	spin_lock(&o->lock);
	if (o->sb && !cf_sandbox_cred_charge(o->sb, enforce && o->epoch)) {
		spin_unlock(&o->lock);
		return false;
	}
	n->sb = cf_sandbox_get(o->sb);
	n->epoch = o->epoch;
	n->pending = o->pending;
	/* from @o's references: an epoch in use stays in use */
	cf_epoch_cred_get(n->epoch);
	cf_epoch_cred_get(n->pending);
	h = rcu_dereference_protected(o->held, lockdep_is_held(&o->lock));
	rcu_assign_pointer(n->held, cf_holdings_get(h));
	n->pending_held = cf_holdings_get(o->pending_held);
	spin_unlock(&o->lock);
	return true;
}

/**
 * cf_cred_prepare() - copy @old's state to @new (fork, exec, setuid...)
 * @new: credential being prepared
 * @old: credential it is copied from
 * @gfp: the hook's allocation flags (ignored: BPF context is atomic)
 *
 * Fails closed: if the copy cannot be made, the credential change fails
 * rather than producing an unbound copy of a bound task. A bound
 * credential's sandbox that has its limit of live credentials refuses
 * the copy (recorded, op=cred_limit): every entry costs a place in the
 * table every hook of every task may walk. The entry is charged to the
 * memory cgroup of the task that makes it.
 *
 * Return: 0 (also when another run of capfence's cred_prepare program
 * gave @new the same state already: two sets attached at once), -ENOMEM
 * (also at the limit: prepare_creds() has no other way to fail), or
 * -EEXIST when @new has an entry with other state.
 */
int cf_cred_prepare(struct cred *new, const struct cred *old, gfp_t gfp)
{
	struct cf_cred *o, *n;

	o = cf_cred_lookup(old);
	/* a blank entry that cred_transfer did not fill carries nothing */
	if (!o || (!o->epoch && !o->pending))
		return 0;
	n = cf_cred_alloc(new, GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!n)
		return -ENOMEM;
	if (!cf_cred_copy(n, o, true)) {
		cf_audit_cred_limit(o->sb, cf_sandbox_cred_limit());
		kfree(n);
		return -ENOMEM;
	}
	return cf_cred_insert_hook(n, false);
}

/**
 * cf_cred_alloc_blank() - reserve state for a blank credential
 * @cred: blank credential (keyctl session-to-parent)
 *
 * cred_transfer cannot fail, so the entry it may need is made here,
 * where failing is allowed. Always: the parent may gain state (a pending
 * epoch, a binding) before its task work transfers, and an entry missing
 * then would silently drop that state. A bound caller's parent is of its
 * own sandbox (a bound task cannot make another): the place the
 * transferred credential will take in that sandbox is reserved here, so
 * that session-to-parent cannot grow a sandbox past its limit either.
 *
 * Return: 0 (also when another run of the hook reserved it already),
 * -ENOMEM (also at the sandbox's limit), -EAGAIN while a detach is
 * counting the entries, or -EEXIST when @cred has an entry with other
 * state.
 */
int cf_cred_alloc_blank(struct cred *cred)
{
	struct cf_cred *n, *me = cf_cred_lookup(current_cred());
	struct cf_sandbox *sb = me && me->epoch ? me->sb : NULL;

	n = cf_cred_alloc(cred, GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!n)
		return -ENOMEM;
	if (sb) {
		if (!cf_sandbox_cred_charge(sb, true)) {
			cf_audit_cred_limit(sb, cf_sandbox_cred_limit());
			kfree(n);
			return -ENOMEM;
		}
		n->sb = cf_sandbox_get(sb);
	}
	return cf_cred_insert_hook(n, true);
}

/* Remove @e from the table and free it after a grace period. */
static void cf_cred_forget(struct cf_cred *e)
{
	spin_lock_bh(&cf_cred_lock);
	if (!cf_cred_store_del(e)) {
		spin_unlock_bh(&cf_cred_lock);
		return;
	}
	spin_unlock_bh(&cf_cred_lock);
	cf_cred_store_unreserve(e->cred);
	if (e->epoch)
		atomic_long_dec(&cf_nr_bound_creds);
	atomic_long_dec(&cf_nr_entries);
	cf_cred_release(e);
}

/**
 * cf_cred_transfer() - fill a blank credential's state from @old
 * @new: credential from cf_cred_alloc_blank()
 * @old: credential whose state it takes
 *
 * When @old has no state (no entry, or an entry with neither a binding
 * nor a pending epoch), the reserved entry goes: an empty entry would
 * only cost lookups and hold detach off. A second run (two sets of
 * capfence's programs attached at once) finds the entry gone or filled,
 * and changes nothing.
 */
void cf_cred_transfer(struct cred *new, const struct cred *old)
{
	struct cf_cred *o = cf_cred_lookup(old), *n = cf_cred_lookup(new);
	struct cf_sandbox *reserved;

	/* a blank entry has neither until it is filled here */
	if (!n || n->epoch || n->pending)
		return;
	if (!o || (!READ_ONCE(o->epoch) && !READ_ONCE(o->pending))) {
		cf_cred_forget(n);
		return;
	}
	/* the place reserved at cf_cred_alloc_blank() becomes the copy's */
	reserved = n->sb;
	WRITE_ONCE(n->sb, NULL);
	/* cannot fail: counted in the sandbox, never refused */
	cf_cred_copy(n, o, false);
	if (reserved) {
		cf_sandbox_cred_uncharge(reserved);
		cf_sandbox_put(reserved);
	}
	if (n->epoch)
		atomic_long_inc(&cf_nr_bound_creds);
}

/**
 * cf_cred_free() - forget @cred's state
 * @cred: credential being freed (called from an RCU callback)
 */
void cf_cred_free(struct cred *cred)
{
	struct cf_cred *e = cf_cred_lookup(cred);

	if (e)
		cf_cred_forget(e);
}

/*
 * An exec of a task already bound to an epoch with a syscall policy: the
 * epoch's program must still be in its filter chain, wherever the task's
 * own filters have put it. Recorded when refused, and when the program is
 * not the newest filter (depth > 0), so that the kernel's AUDIT_SECCOMP
 * records of the task can be told from its own filters' answers.
 */
static int cf_cred_exec_bound(const struct cf_cred *e)
{
	int depth;

	if (!e->epoch->sc)
		return 0;
	depth = cf_seccomp_match_current(e->epoch->sc);
	if (depth < 0) {
		cf_audit_bind(e->sb, e->epoch, CAPFENCE_R_SECCOMP, depth);
		return -EACCES;
	}
	if (depth > 0)
		cf_audit_bind(e->sb, e->epoch, CAPFENCE_R_OK, depth);
	return 0;
}

/**
 * cf_cred_bind_exec() - bind the new credential of an execve
 * @bprm: exec in progress; bprm->cred is not yet visible to anyone else
 *
 * A pending exec epoch becomes the bound epoch, its tokens become held
 * capabilities, and the first bind to an epoch activates it (fencing what
 * it narrows). A bound credential keeps its epoch and holdings.
 *
 * An epoch with a syscall policy is bound only when the exec'ing task's
 * seccomp filter chain holds that epoch's program (seccomp.c); else the
 * exec fails (reason seccomp, recorded). Its bind is recorded with the
 * program's digest and its depth in the chain. Every later exec of a task
 * bound to such an epoch is held to the same check.
 *
 * Return: 0, or -EACCES when a pending epoch cannot be bound, or a bound
 * task's chain has lost its epoch's program, which fails the exec.
 */
int cf_cred_bind_exec(struct linux_binprm *bprm)
{
	struct cf_cred *e = cf_cred_lookup(bprm->cred);
	struct cf_holdings *h;
	int depth = 0;

	if (e && e->epoch)
		return cf_cred_exec_bound(e);
	if (!e || !e->pending)
		return 0;
	if (!cf_hooks_attached())
		return -EACCES;
	if (e->pending->sc) {
		depth = cf_seccomp_match_current(e->pending->sc);
		cf_audit_bind(e->sb, e->pending, depth < 0 ?
			      CAPFENCE_R_SECCOMP : CAPFENCE_R_OK, depth);
		if (depth < 0)
			return -EACCES;
	}
	cf_epoch_bind_activate(e->pending);
	spin_lock(&e->lock);
	h = rcu_dereference_protected(e->held, lockdep_is_held(&e->lock));
	rcu_assign_pointer(e->held, e->pending_held);
	e->pending_held = NULL;
	e->epoch = e->pending;
	e->pending = NULL;
	spin_unlock(&e->lock);
	cf_holdings_put(h);
	atomic_long_inc(&cf_nr_bound_creds);
	return 0;
}

/**
 * cf_cred_set_pending() - set the pending exec epoch of @cred
 * @cred: the caller's credential (unbound)
 * @e: installed epoch
 * @h: holdings to hold after exec, may be NULL; ownership is taken
 * @sb: the sandbox the exec makes (cf_sandbox_new()); ownership is taken
 *
 * Caller holds cf_mutex; process context.
 *
 * Return: 0, -EPERM for a bound credential, -ENOMEM, or -EEXIST should
 * the entry made here collide with one (a bug, warned about).
 */
int cf_cred_set_pending(const struct cred *cred, struct cf_epoch *e,
			struct cf_holdings *h, struct cf_sandbox *sb)
{
	struct cf_sandbox *old_sb;
	struct cf_holdings *old;
	struct cf_cred *c;
	int err;

	lockdep_assert_held(&cf_mutex);
	rcu_read_lock();
	c = cf_cred_lookup(cred);
	rcu_read_unlock();
	/* an unbound caller has no entry yet: one carrying only the pending */
	if (!c) {
		c = cf_cred_alloc(cred, GFP_KERNEL);
		if (!c) {
			err = -ENOMEM;
			goto fail;
		}
		err = cf_cred_insert(c, false);
		if (err) {
			cf_cred_release(c);
			goto fail;
		}
	}
	/* the caller's own cred cannot be freed under us */
	spin_lock(&c->lock);
	if (c->epoch) {
		spin_unlock(&c->lock);
		err = -EPERM;
		goto fail;
	}
	old = c->pending_held;
	old_sb = c->sb;
	/* under cf_mutex: a retire cannot run between find and here */
	cf_epoch_cred_get(e);
	cf_epoch_cred_put(c->pending);
	c->pending = e;
	c->pending_held = h;
	cf_sandbox_cred_charge(sb, false);
	WRITE_ONCE(c->sb, sb);
	spin_unlock(&c->lock);
	cf_holdings_put(old);
	if (old_sb) {
		cf_sandbox_cred_uncharge(old_sb);
		cf_sandbox_put(old_sb);
	}
	return 0;
fail:
	cf_holdings_put(h);
	cf_sandbox_put(sb);
	return err;
}

/**
 * cf_current_bound() - is the calling task bound to an epoch?
 *
 * Return: true when bound.
 */
bool cf_current_bound(void)
{
	struct cf_cred *e;
	bool bound;

	rcu_read_lock();
	e = cf_cred_lookup(current_cred());
	bound = e && e->epoch;
	rcu_read_unlock();
	return bound;
}

/**
 * cf_current_control_plane() - would the control plane obey the caller?
 *
 * Unbound, with CAP_MAC_ADMIN in the initial user namespace (checked
 * without an audit record): the task that may load programs beside
 * capfence's own. Any context; never sleeps.
 *
 * Return: true for such a task.
 */
bool cf_current_control_plane(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_MAC_ADMIN) &&
	       !cf_current_bound();
}

/**
 * cf_nr_creds() - number of credentials with capfence state
 *
 * Return: the count; hooks cannot be detached while it is non-zero.
 */
long cf_nr_creds(void)
{
	return atomic_long_read(&cf_nr_entries);
}

/**
 * cf_creds_close() - stop blank reservations, and count the entries
 *
 * Caller holds cf_mutex (a detach). Until cf_creds_reopen(), a keyctl
 * session-to-parent fails with EAGAIN rather than make an entry the
 * detach would not see.
 *
 * Return: the number of entries when reservations stopped.
 */
long cf_creds_close(void)
{
	long n;

	lockdep_assert_held(&cf_mutex);
	spin_lock_bh(&cf_cred_lock);
	cf_creds_open = false;
	n = atomic_long_read(&cf_nr_entries);
	spin_unlock_bh(&cf_cred_lock);
	return n;
}

/**
 * cf_creds_reopen() - admit blank reservations (attach, or a refused detach)
 *
 * Caller holds cf_mutex.
 */
void cf_creds_reopen(void)
{
	lockdep_assert_held(&cf_mutex);
	spin_lock_bh(&cf_cred_lock);
	cf_creds_open = true;
	spin_unlock_bh(&cf_cred_lock);
}

/**
 * cf_nr_bound() - number of bound credentials
 *
 * Return: the count.
 */
long cf_nr_bound(void)
{
	return atomic_long_read(&cf_nr_bound_creds);
}

/**
 * cf_cred_init() - prepare the credential state
 *
 * Return: 0 or -ENOMEM.
 */
int cf_cred_init(void)
{
	return 0;
}

/**
 * cf_cred_exit() - release the entries left at module exit
 *
 * Hooks are detached only while no entry exists, so this frees nothing in
 * normal operation.
 */
void cf_cred_exit(void)
{
	cf_cred_store_exit(cf_cred_release);
}

/**
 * cf_tracer_subject() - the bound state of the calling task's tracer
 *
 * Caller holds RCU (BPF program context). Never sleeps.
 *
 * Return: the state when the calling task is traced by a bound task,
 * else NULL.
 */
struct cf_cred *cf_tracer_subject(void)
{
	struct task_struct *tracer = ptrace_parent(current);
	const struct cred *cred;

	if (!tracer)
		return NULL;
	cred = __task_cred(tracer);
	return cf_cred_maybe(cred) ? cf_subject(cred) : NULL;
}

/**
 * cf_current_sandbox() - the sandbox the calling task's denials count in
 *
 * Its credential's sandbox, or the host's for an unbound task (a file or
 * socket of a sandbox rechecked in its hands). Caller holds RCU; the
 * task's own credential keeps it alive.
 *
 * Return: the sandbox, never NULL.
 */
struct cf_sandbox *cf_current_sandbox(void)
{
	struct cf_cred *e = cf_cred_lookup(current_cred());

	return e && e->epoch && e->sb ? e->sb : &cf_host_sandbox;
}
