// SPDX-License-Identifier: GPL-2.0
/*
 * Decisions: delegation (in the order of the table in docs/errors.md:
 * target, fleet freshness, MAC, epoch, class, revoked or fenced,
 * delegator) atomically with
 * installing the held capability, exec bindings, and exercise at the LSM
 * hooks.
 *
 * Locking: delegation runs in process context under cf_mutex; rows 5 and 6
 * and the publication of the new holdings happen under the fence lock, so
 * a delegation is ordered against every revocation and activation.
 * Exercise runs in BPF program context (RCU held, must not sleep) and reads
 * revocation and fencing state inside one fence read section (a ptrace
 * attach judges every grant of tracer and tracee in one). The net
 * decision memo of a credential (cf_net_memo, cred.h) is a seqcount whose
 * writers take it with one cmpxchg() or skip it, neither side ever waiting
 * (memo.h, shared with the open memo of fsmemo.c).
 */
#include <linux/bpf.h>
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/seccomp.h>
#include <asm/syscall.h>
#include "audit.h"
#include "cap.h"
#include "constraint.h"
#include "cred.h"
#include "decide.h"
#include "epoch.h"
#include "fence.h"
#include "fleet.h"
#include "key.h"
#include "memo.h"
#include "sandbox.h"
#include "seccomp.h"
#include "stats.h"
#include "token.h"
#include "compat.h"

/**
 * cf_get_task_cred() - referenced credential of the task @pid
 * @pid: pid in the caller's namespace
 *
 * Return: the credential (put_cred() it), or NULL.
 */
const struct cred *cf_get_task_cred(pid_t pid)
{
	struct task_struct *task;
	const struct cred *cred = NULL;

	if (pid <= 0)
		return NULL;
	rcu_read_lock();
	task = get_pid_task(find_vpid(pid), PIDTYPE_PID);
	rcu_read_unlock();
	if (task) {
		cred = get_task_cred(task);
		put_task_struct(task);
	}
	return cred;
}

/*
 * Rows 2 to 4 of the delegation table for @t against the receiver's epoch
 * @e: the typed result in @reason, the message in @extack. @fault is what
 * cf_token_decode() found in the canonical bytes @buf. Process context.
 * Returns 0, or a negative errno for a system failure.
 */
static int cf_check_token(const struct cf_token *t, enum cf_token_fault fault,
			  const u8 *buf, struct cf_epoch *e,
			  enum capfence_reason *reason,
			  struct netlink_ext_ack *extack)
{
	const struct cf_rule *rule;
	int err;

	*reason = CAPFENCE_R_FORGED;
	if (fault) {
		cf_token_fault_msg(extack, fault);
		return 0;
	}
	err = cf_key_verify(t->key_id, buf, t->signed_len, t->mac);
	if (err == -ENOKEY) {
		NL_SET_ERR_MSG(extack,
			       "forged: token names a key that is not installed");
		return 0;
	}
	if (err == -EBADMSG) {
		NL_SET_ERR_MSG(extack, "forged: token MAC does not verify");
		return 0;
	}
	if (err)
		return err;
	if (t->epoch_id != e->id) {
		NL_SET_ERR_MSG(extack,
			       "epoch_mismatch: token minted under another epoch than the receiver's; re-mint required");
		*reason = CAPFENCE_R_EPOCH_MISMATCH;
		return 0;
	}
	rule = &e->rules[t->class_id];
	*reason = CAPFENCE_R_CLASS_DENIED;
	/* nothing granted while learning is valid where a policy enforces */
	if ((t->flags & CAPFENCE_TOKEN_F_COMPLAIN) && !e->complain) {
		NL_SET_ERR_MSG(extack,
			       "class_denied: the token is marked complain (minted for a complain epoch); an enforcing epoch refuses it");
		return 0;
	}
	if (!(t->flags & CAPFENCE_TOKEN_F_COMPLAIN) && e->complain) {
		NL_SET_ERR_MSG(extack,
			       "class_denied: the receiver's epoch is a complain epoch; it takes only tokens marked complain");
		return 0;
	}
	if (rule->kind != CAPFENCE_RULE_TOKEN) {
		NL_SET_ERR_MSG(extack,
			       "class_denied: the receiver's epoch does not grant this class by token");
		return 0;
	}
	if (!cf_constraints_contain(rule->c, rule->n, t->c, t->n)) {
		NL_SET_ERR_MSG(extack,
			       "class_denied: token constraint is not inside the epoch's rule");
		return 0;
	}
	*reason = CAPFENCE_R_OK;
	return 0;
}

/*
 * @old plus the grant token @t makes in epoch @e, delegated by @from (0:
 * the orchestrator): the new set, with one reference, and the grant in
 * @g; NULL when either cannot be allocated. Process context.
 */
static struct cf_holdings *cf_holdings_grant(const struct cf_holdings *old,
					     const struct cf_token *t,
					     struct cf_epoch *e, pid_t from,
					     struct cf_grant **g)
{
	struct cf_holdings *h;

	*g = cf_grant_from_token(t, e, from, GFP_KERNEL);
	if (!*g)
		return NULL;
	h = cf_holdings_add(old, *g, GFP_KERNEL);
	if (!h)
		cf_grant_put(*g);
	return h;
}

/* the message of row 2, a host stale with its fleet */
#define CF_MSG_FLEET_STALE \
	"fleet_stale: this host has not confirmed it is current with its fleet within the bound"

/*
 * Rows 5 and 6 of the delegation table for the grant @g a token makes:
 * revoked, or fenced (its class narrowed, or its key removed, since the
 * token was minted). The one home of both rows, for delegations and exec
 * bindings alike. Call under the fence lock (written or read): the answer
 * is ordered against every revocation and activation. The message goes in
 * @extack.
 */
static enum capfence_reason cf_check_live(const struct cf_grant *g,
					  struct netlink_ext_ack *extack)
{
	enum capfence_reason r = cf_grant_state(g);

	if (r == CAPFENCE_R_REVOKED)
		NL_SET_ERR_MSG(extack, "revoked: this capability was revoked");
	else if (r == CAPFENCE_R_FENCED)
		NL_SET_ERR_MSG(extack,
			       "fenced: a newer epoch narrowed this class; tokens of this epoch are fenced");
	else if (r == CAPFENCE_R_FLEET_STALE)
		NL_SET_ERR_MSG(extack, CF_MSG_FLEET_STALE);
	return r;
}

static bool cf_holds_valid(struct cf_cred *c, u64 cap_id)
{
	struct cf_holdings *h;
	u32 i;

	h = rcu_dereference_protected(c->held, lockdep_is_held(&cf_mutex));
	for (i = 0; h && i < h->n; i++)
		if (h->g[i]->capid->cap_id == cap_id &&
		    cf_grant_state(h->g[i]) == CAPFENCE_R_OK)
			return true;
	return false;
}

static bool cf_holds_same(struct cf_cred *c, const struct cf_token *t)
{
	struct cf_holdings *h;
	u32 i;

	h = rcu_dereference_protected(c->held, lockdep_is_held(&cf_mutex));
	for (i = 0; h && i < h->n; i++) {
		const struct cf_grant *g = h->g[i];

		if (g->capid->cap_id == t->cap_id && g->class_id == t->class_id &&
		    g->epoch->id == t->epoch_id && g->n == t->n &&
		    !memcmp(g->c, t->c, t->n * sizeof(t->c[0])))
			return true;
	}
	return false;
}

/**
 * cf_delegate() - check a delegation and, unless dry run, install it
 * @d: the request; results are written back into it
 * @extack: netlink extended ack, carries the rejection message
 *
 * Caller holds cf_mutex. A rejection is a typed result in @d->reason, not
 * an error return.
 *
 * Return: 0, -E2BIG when the target holds CF_HELD_MAX capabilities
 * already, or -ENOMEM.
 */
int cf_delegate(struct cf_delegation *d, struct netlink_ext_ack *extack)
{
	const struct cred *tcred, *fcred = NULL;
	struct cf_holdings *old, *new = NULL;
	struct cf_cred *target, *from = NULL;
	enum cf_token_fault fault;
	struct cf_grant *g;
	int err = 0;

	lockdep_assert_held(&cf_mutex);
	d->fence = cf_fence_value();
	/*
	 * Decoded once, up front, so every reply can name the cap_id. The
	 * checks still run in table order.
	 */
	fault = cf_token_decode(&d->token, d->tok, d->len);
	tcred = cf_get_task_cred(d->pid);
	if (!tcred) {
		NL_SET_ERR_MSG(extack, "no_task: no task with this pid");
		d->reason = CAPFENCE_R_NO_TASK;
		return 0;
	}
	rcu_read_lock();
	target = cf_cred_lookup(tcred);
	rcu_read_unlock();
	if (!target || !target->epoch) {
		NL_SET_ERR_MSG(extack, "not_bound: the target task is not bound to an epoch");
		d->reason = CAPFENCE_R_NOT_BOUND;
		goto out;
	}
	d->target_epoch = target->epoch->id;
	if (cf_fleet_stale()) {
		NL_SET_ERR_MSG(extack, CF_MSG_FLEET_STALE);
		d->reason = CAPFENCE_R_FLEET_STALE;
		goto out;
	}
	err = cf_check_token(&d->token, fault, d->tok, target->epoch,
			     &d->reason, extack);
	if (err || d->reason != CAPFENCE_R_OK)
		goto out;
	if (d->from) {
		fcred = cf_get_task_cred(d->from);
		if (fcred) {
			rcu_read_lock();
			from = cf_cred_lookup(fcred);
			rcu_read_unlock();
		}
	}
	/* delegating a held token again changes nothing */
	d->already_held = cf_holds_same(target, &d->token);
	/* delegations are the only writers of a published cred's holdings */
	old = rcu_dereference_protected(target->held,
					lockdep_is_held(&cf_mutex));
	if (!d->already_held && old && old->n >= CF_HELD_MAX) {
		NL_SET_ERR_MSG_MOD(extack,
				   "the target holds the most capabilities a task may hold");
		err = -E2BIG;
		goto out;
	}
	new = cf_holdings_grant(old, &d->token, target->epoch, d->from, &g);
	if (!new) {
		err = -ENOMEM;
		goto out;
	}

	write_seqlock(&cf_fence);
	d->fence = cf_fence_value_locked();
	d->reason = cf_check_live(g, extack);
	if (d->reason == CAPFENCE_R_OK && d->from &&
	    (!from || !cf_holds_valid(from, g->capid->cap_id))) {
		d->reason = CAPFENCE_R_NOT_HELD;
		NL_SET_ERR_MSG(extack,
			       "not_held: the delegator does not validly hold this capability");
	} else if (d->reason == CAPFENCE_R_OK && !d->dry_run &&
		   !d->already_held) {
		spin_lock(&target->lock);
		rcu_assign_pointer(target->held, new);
		spin_unlock(&target->lock);
		swap(old, new);
	}
	write_sequnlock(&cf_fence);

	/* on success @new now holds the replaced set */
	if (new != old)
		cf_holdings_put(new);
out:
	if (fcred)
		put_cred(fcred);
	put_cred(tcred);
	return err;
}

/**
 * cf_exec_bind() - check an exec binding and make it pending
 * @b: the request; the typed result and the rejected token are written
 *     back into it
 * @extack: netlink extended ack, carries the message
 *
 * The caller's next exec binds it to epoch @b->epoch_id holding @b's
 * tokens. None is accepted on a host that is stale with its fleet; each
 * token passes rows 2 to 4 against that epoch and must be
 * neither revoked nor fenced now; the first that does not is the typed
 * result and nothing becomes pending. The exec makes a new sandbox
 * (sandbox.c) that the task and everything it forks share. Caller holds
 * cf_mutex (which detach takes too, so the hooks stay attached until the
 * binding is pending).
 *
 * Return: 0 (see @b->reason), -ENOLINK when the hooks are not attached,
 * -ENOENT for an epoch that is not installed, or -ENOMEM.
 */
int cf_exec_bind(struct cf_exec_binding *b, struct netlink_ext_ack *extack)
{
	struct cf_holdings *h = NULL, *nh;
	enum cf_token_fault fault;
	struct cf_sandbox *sb;
	struct cf_epoch *e;
	struct cf_grant *g;
	int err = 0;
	u32 i;

	lockdep_assert_held(&cf_mutex);
	b->reason = CAPFENCE_R_OK;
	b->fence = cf_fence_value();
	if (!cf_hooks_attached()) {
		NL_SET_ERR_MSG_MOD(extack,
				   "hooks are not attached; run `capfence attach` first");
		return -ENOLINK;
	}
	e = cf_epoch_find(b->epoch_id);
	if (!e) {
		NL_SET_ERR_MSG_MOD(extack, "epoch is not installed");
		return -ENOENT;
	}
	if (b->n && cf_fleet_stale()) {
		cf_token_decode(&b->token, b->tok[0], b->len[0]);
		NL_SET_ERR_MSG(extack, CF_MSG_FLEET_STALE);
		b->reason = CAPFENCE_R_FLEET_STALE;
		return 0;
	}
	for (i = 0; i < b->n; i++) {
		fault = cf_token_decode(&b->token, b->tok[i], b->len[i]);
		err = cf_check_token(&b->token, fault, b->tok[i], e, &b->reason,
				     extack);
		if (err || b->reason)
			goto out;
		nh = cf_holdings_grant(h, &b->token, e, 0, &g);
		if (!nh) {
			err = -ENOMEM;
			goto out;
		}
		cf_holdings_put(h);
		h = nh;
		read_seqlock_excl(&cf_fence);
		b->reason = cf_check_live(g, extack);
		b->fence = cf_fence_value_locked();
		read_sequnlock_excl(&cf_fence);
		if (b->reason)
			goto out;
	}
	sb = cf_sandbox_new(e->id, GFP_KERNEL);
	if (!sb) {
		err = -ENOMEM;
		goto out;
	}
	err = cf_cred_set_pending(current_cred(), e, h, sb);
	h = NULL;
out:
	cf_holdings_put(h);
	return err;
}

/**
 * cf_decision_publish() - count, audit and announce a delegation decision
 * @r: the typed result
 * @t: the token judged (its cap_id and class, as far as it decoded)
 * @pid: the receiving task
 * @epoch: the receiver's epoch
 * @fence: the fence value the decision was made at
 * @dry_run: a check only: nothing is counted or announced
 *
 * What each result leaves behind: every real decision is counted and
 * multicast as an event; a forged token and an epoch mismatch, the two
 * results that say something is wrong upstream, are also audited.
 */
void cf_decision_publish(enum capfence_reason r, const struct cf_token *t,
			 pid_t pid, u64 epoch, u64 fence, bool dry_run)
{
	if (!dry_run) {
		cf_stats_delegate(r);
		cf_notify(r ? CAPFENCE_EV_DELEGATE_REJECT : CAPFENCE_EV_DELEGATE_OK,
			  epoch, t->cap_id, r, pid);
	}
	if (r == CAPFENCE_R_FORGED || r == CAPFENCE_R_EPOCH_MISMATCH)
		cf_audit_delegate(pid, epoch, t->epoch_id, t->class_id, r,
				  t->cap_id, fence);
}

/*
 * The exercise decision without its side effects: the reason, the grant
 * that admits @t (NULL for an open rule), and for a denial the capability
 * that came closest and the fence value it was judged at.
 */
static enum capfence_reason cf_judge(const struct cf_cred *e,
				     const struct cf_target *t,
				     struct cf_grant **admitted,
				     const struct cf_holdings **held,
				     u64 *cap_id, u64 *fence)
{
	const struct cf_rule *rule = &e->epoch->rules[t->class_id];
	enum capfence_reason r;
	struct cf_holdings *h;
	unsigned int seq;
	u32 i;

	*admitted = NULL;
	*held = NULL;
	*cap_id = 0;
	/* a log rule allows (cf_exercise() records it) */
	if (rule->kind == CAPFENCE_RULE_OPEN || rule->kind == CAPFENCE_RULE_LOG)
		return CAPFENCE_R_OK;
	/* rules are immutable: only grant state needs the fence snapshot */
	if (rule->kind == CAPFENCE_RULE_DENY ||
	    !cf_constraints_admit(rule->c, rule->n, t)) {
		*fence = cf_fence_value();
		return rule->kind == CAPFENCE_RULE_DENY ?
		       CAPFENCE_R_CLASS_DENIED : CAPFENCE_R_CONSTRAINT;
	}
	do {
		seq = read_seqbegin(&cf_fence);
		*cap_id = 0;
		*admitted = NULL;
		*fence = cf_fence_value_locked();
		r = CAPFENCE_R_NO_CAPABILITY;
		h = rcu_dereference(e->held);
		*held = h;
		for (i = 0; h && i < h->n; i++) {
			struct cf_grant *g = h->g[i];
			enum capfence_reason st;

			if (g->class_id != t->class_id)
				continue;
			if (!cf_constraints_admit(g->c, g->n, t)) {
				/* name the capability that came closest */
				if (r == CAPFENCE_R_NO_CAPABILITY) {
					r = CAPFENCE_R_CONSTRAINT;
					*cap_id = g->capid->cap_id;
				}
				continue;
			}
			st = cf_grant_state(g);
			r = st;
			if (st == CAPFENCE_R_OK) {
				*admitted = g;
				break;
			}
			*cap_id = g->capid->cap_id;
		}
	} while (read_seqretry(&cf_fence, seq));
	return r;
}

/**
 * cf_admits() - would bound task @e be allowed @t? (no count, no audit)
 * @e: bound state
 * @t: the operation
 *
 * BPF program context: never sleeps.
 *
 * Return: true when @e's epoch and holdings admit @t now.
 */
bool cf_admits(const struct cf_cred *e, const struct cf_target *t)
{
	const struct cf_holdings *h;
	struct cf_grant *g;
	u64 cap_id, fence;

	return cf_judge(e, t, &g, &h, &cap_id, &fence) == CAPFENCE_R_OK;
}

/*
 * The net decision memo: a bound credential remembers the last net target
 * (class, family, address, port) a grant admitted, with the fence value and
 * the holdings it was judged at, and answers the same target again without
 * judging it, as long as the fence has not moved and the holdings are the
 * same. That is sound because an allowed net decision depends on nothing
 * else the fence does not cover: the credential's epoch never changes once
 * bound and its rules are immutable, holdings are immutable arrays replaced
 * on change (compared by pointer; a credential's holdings only grow, so the
 * remembered grant is still held even if a later set reuses the address),
 * a grant's constraints are immutable, and each of a grant's states
 * (revoked_at, fenced_at, removed_at) is written only under the fence lock
 * in a section that advances the fence. Two
 * things are not fenced and are tested on every use instead: a host past
 * its fleet deny bound (a deadline, cf_fleet_denies()) and a tracer (per
 * task, current->ptrace); a traced task neither uses nor fills the memo.
 * Denials are never remembered. Names (fs classes) are not memoized: a
 * rename or a mount change moves a name without moving the fence.
 */
static bool cf_memo_same(const struct cf_net_memo *m,
			 const struct cf_target *t)
{
	const u8 *a = m->addr, *b = t->addr;

	return m->class_id == t->class_id && m->family == t->family &&
	       m->port == t->port &&
	       get_unaligned((const u32 *)a) == get_unaligned((const u32 *)b) &&
	       (t->family == 4 ||
		(get_unaligned((const u32 *)(a + 4)) ==
		 get_unaligned((const u32 *)(b + 4)) &&
		 get_unaligned((const u64 *)(a + 8)) ==
		 get_unaligned((const u64 *)(b + 8))));
}

/* The grant the memo of @e remembers for @t, or NULL: judge it. */
static struct cf_grant *cf_memo_find(const struct cf_cred *e,
				     const struct cf_target *t)
{
	const struct cf_net_memo *m = &e->memo;
	struct cf_grant *g;
	unsigned int seq;

	if (!cf_memo_read_begin(&m->seq, &seq) || !cf_memo_same(m, t))
		return NULL;
	/*
	 * The fence is read once, outside a read section: a value equal to
	 * the remembered one means no section that changes a grant's state
	 * has advanced it yet, and the decision is ordered before it.
	 */
	if (m->fence != cf_fence_value_locked() ||
	    m->held != rcu_access_pointer(e->held))
		return NULL;
	g = m->grant;
	return cf_memo_read_done(&m->seq, seq) ? g : NULL;
}

/* Remember that @g in holdings @h admitted @t at fence @fence. */
static void cf_memo_fill(struct cf_cred *e, const struct cf_target *t,
			 const struct cf_holdings *h, struct cf_grant *g,
			 u64 fence)
{
	struct cf_net_memo *m = &e->memo;
	unsigned int seq;

	/* another task of the credential is writing it: leave it */
	if (!cf_memo_write_begin(&m->seq, &seq))
		return;
	m->class_id = t->class_id;
	m->family = t->family;
	m->port = t->port;
	memcpy(m->addr, t->addr, sizeof(m->addr));
	m->fence = fence;
	m->held = h;
	m->grant = g;
	cf_memo_write_end(&m->seq, seq);
}

/**
 * cf_memo_sock_note() - remember that @sk carries @g
 * @e: the calling task's bound state
 * @sk: the socket just tracked
 * @g: the grant it now carries
 * @gen: cf_sock_gen() read before it was tracked
 */
void cf_memo_sock_note(struct cf_cred *e, const struct sock *sk,
		       struct cf_grant *g, unsigned long gen)
{
	struct cf_net_memo *m = &e->memo;
	unsigned int seq;

	if (!cf_memo_write_begin(&m->seq, &seq))
		return;
	m->sk = sk;
	m->sk_grant = g;
	m->sk_gen = gen;
	cf_memo_write_end(&m->seq, seq);
}

/*
 * The outcome of an exercise, the one place it is counted and audited:
 * every allow and deny of an exercise, from every hook, ends here (through
 * cf_exercise(), cf_exercise_recheck(), cf_exercise_refuse(),
 * cf_refuse_mediated(), cf_exercise_attach() and cf_exercise_personality()).
 * A denial is audited with @t, the epoch and the capability it concerns
 * and the fence value it was judged at. Inline: an allowed exercise pays one per-CPU increment.
 */
static __always_inline int cf_exercise_settle(enum capfence_reason r,
					      const struct cf_target *t,
					      u64 epoch, u64 cap_id, u64 fence)
{
	if (likely(r == CAPFENCE_R_OK)) {
		/* counted by the edge once the object is tracked */
		if (!t->tracks)
			cf_stats_exercise_ok();
		return 0;
	}
	cf_stats_exercise(r);
	rcu_read_lock();
	cf_audit_exercise(cf_current_sandbox(), t, epoch, r, cap_id, fence,
			  false);
	rcu_read_unlock();
	return -EACCES;
}

/*
 * Would the tracer of the calling (bound, traced) task be denied @t? A
 * task traced by a bound tracer is allowed only what the tracer would be
 * allowed too.
 */
static bool cf_borrow_denied(const struct cf_target *t)
{
	struct cf_cred *tracer = cf_tracer_subject();

	return tracer && !cf_admits(tracer, t);
}

/*
 * An exercise of a class whose rule is log: allowed, counted as learned
 * (never as a denial) and recorded op=learn with the refusal a deny rule
 * would give, within the sandbox's budget like a denial. Nothing is
 * remembered (no grant, no memo): every exercise is judged and recorded.
 * A task traced by a bound tracer the tracer's rule would refuse is still
 * refused (borrow). Out of line: enforcing epochs pay nothing for it.
 */
static noinline int cf_exercise_learn(struct cf_cred *e,
				      const struct cf_target *t, bool traced)
{
	if (unlikely(traced) && cf_borrow_denied(t))
		return cf_exercise_settle(CAPFENCE_R_BORROW, t, e->epoch->id, 0,
					  cf_fence_value());
	cf_stats_learn();
	rcu_read_lock();
	cf_audit_exercise(cf_current_sandbox(), t, e->epoch->id,
			  CAPFENCE_R_CLASS_DENIED, 0, cf_fence_value(), true);
	rcu_read_unlock();
	return 0;
}

/*
 * cf_exercise() without the memo: judge @t, settle it, and fill the memo
 * with an allowed net target. Out of line, so that a memo hit pays for
 * none of its locals.
 */
static noinline int cf_exercise_judged(struct cf_cred *e, struct cf_target *t,
				       struct cf_grant **admitted, bool traced)
{
	const struct cf_holdings *h;
	enum capfence_reason r;
	struct cf_grant *ok;
	u64 cap_id, fence = 0;

	r = cf_judge(e, t, &ok, &h, &cap_id, &fence);
	if (r == CAPFENCE_R_OK && unlikely(traced) && cf_borrow_denied(t)) {
		r = CAPFENCE_R_BORROW;
		cap_id = ok ? ok->capid->cap_id : 0;
		fence = cf_fence_value();
	}
	if (r == CAPFENCE_R_OK) {
		if (ok && t->family && !traced)
			cf_memo_fill(e, t, h, ok, fence);
		if (admitted)
			*admitted = ok;
	}
	return cf_exercise_settle(r, t, e->epoch->id, cap_id, fence);
}

/**
 * cf_exercise() - may bound task @e perform @t?
 * @e: the calling task's bound state (kfunc.c)
 * @t: the mediated operation
 * @admitted: if not NULL, set to the grant that allowed @t (NULL when the
 *	      rule is open); valid while the caller holds RCU
 *
 * A task traced by a bound tracer is allowed only what the tracer would
 * be allowed too. A net target the credential was allowed last,
 * at the same fence value and holdings, is answered from its memo (see
 * cf_memo_find()), counted like any allowed exercise. BPF program context:
 * never sleeps. A denial is counted and audited; so is an exercise of a
 * class whose rule is log, allowed (op=learn, see cf_exercise_learn()).
 *
 * Return: 0 to allow, -EACCES to deny.
 */
int cf_exercise(struct cf_cred *e, struct cf_target *t,
		struct cf_grant **admitted)
{
	struct cf_grant *ok;
	bool traced;

	if (admitted)
		*admitted = NULL;
	if (e->epoch->rules[t->class_id].kind == CAPFENCE_RULE_OPEN)
		return 0;
	traced = READ_ONCE(current->ptrace);
	if (unlikely(e->epoch->rules[t->class_id].kind == CAPFENCE_RULE_LOG))
		return cf_exercise_learn(e, t, traced);
	/* a net target allowed before, nothing moved since: the memo */
	if (t->family && likely(!traced) && !cf_fleet_denies()) {
		ok = cf_memo_find(e, t);
		if (ok) {
			if (admitted)
				*admitted = ok;
			return cf_exercise_settle(CAPFENCE_R_OK, t, 0, 0, 0);
		}
	}
	return cf_exercise_judged(e, t, admitted, traced);
}

/**
 * cf_refuse_mediated() - refuse what would escape the mediation of a class
 * @e: the calling task's bound state
 * @class_id: the class the operation would escape
 * @what: the operation, a static string for the audit record's target
 *
 * An operation capfence cannot judge against a class's rule (a raw
 * socket's hand-built header, a change of the task's filesystem view) is
 * refused while the task's epoch mediates that class, and allowed when
 * the rule is open: an all-open epoch changes nothing a task can do.
 * BPF program context: never sleeps.
 *
 * Return: 0 to allow, -EACCES (counted and audited as "bypass") to deny.
 */
int cf_refuse_mediated(struct cf_cred *e, u8 class_id, const char *what)
{
	struct cf_target t = { .class_id = class_id, .what = what };

	if (e->epoch->rules[class_id].kind == CAPFENCE_RULE_OPEN)
		return 0;
	return cf_exercise_settle(CAPFENCE_R_BYPASS, &t, e->epoch->id, 0,
				  cf_fence_value());
}

/*
 * The denial of cf_exercise_recheck(): @bad is not valid (@r) at @fence.
 * Out of line, so that a use that is still admitted pays for none of the
 * target's locals.
 */
static noinline int cf_exercise_recheck_denied(enum capfence_reason r,
					       const struct cf_grant *bad,
					       u64 fence, cf_name_fn name,
					       const void *obj)
{
	struct cf_target t = { .class_id = bad->class_id };
	char *buf;
	int err;

	/* naming costs an allocation, paid only when denying */
	buf = kmalloc(PATH_MAX, GFP_ATOMIC | __GFP_NOWARN);
	name(&t, obj, buf);
	err = cf_exercise_settle(r, &t, bad->epoch->id, bad->capid->cap_id,
				 fence);
	kfree(buf);
	return err;
}

/**
 * cf_exercise_recheck() - are the grants behind a tracked object valid?
 * @g: the grants that admitted the object (a file's or a socket's)
 * @n: how many
 * @name: names the object in the audit record's target; called only for
 *	  a denial, with the target's class set and a PATH_MAX buffer @buf
 *	  (NULL when it could not be allocated)
 * @obj: the object, passed to @name
 *
 * A use of a file or socket opened, connected or bound under a capability
 * is an exercise of the grants that admitted it: judged again at every
 * use, so that a revocation or a fence move reaches it. A use they still
 * admit was counted when the object was admitted and is not counted again.
 * BPF program context: never sleeps.
 *
 * Return: 0, or -EACCES (counted and audited, reason revoked, fenced or
 * fleet_stale).
 */
int cf_exercise_recheck(struct cf_grant *const *g, u32 n, cf_name_fn name,
			const void *obj)
{
	enum capfence_reason r;
	struct cf_grant *bad;
	u64 fence;

	r = cf_grants_state(g, n, &bad, &fence);
	if (likely(r == CAPFENCE_R_OK))
		return 0;
	return cf_exercise_recheck_denied(r, bad, fence, name, obj);
}

/**
 * cf_exercise_refuse() - refuse what a grant cannot cover
 * @t: the operation (its class and what)
 * @g: the grant the operation would escape
 *
 * An operation on an object tracked under @g that no later recheck could
 * stop (a shared mapping of a file opened for writing) is refused as
 * "bypass". BPF program context: never sleeps.
 *
 * Return: -EACCES (counted and audited).
 */
int cf_exercise_refuse(const struct cf_target *t, const struct cf_grant *g)
{
	return cf_exercise_settle(CAPFENCE_R_BYPASS, t, g->epoch->id,
				  g->capid->cap_id, cf_fence_value());
}

/*
 * Does holdings @h have a valid grant of @g's cap_id and class? Caller is
 * inside a fence read section.
 */
static bool cf_holds_like(const struct cf_holdings *h, const struct cf_grant *g)
{
	u32 i;

	for (i = 0; h && i < h->n; i++)
		if (h->g[i]->capid == g->capid &&
		    h->g[i]->class_id == g->class_id &&
		    cf_grant_state(h->g[i]) == CAPFENCE_R_OK)
			return true;
	return false;
}

/*
 * The rule of borrowing: may bound @tracer act as @tracee (@t names how,
 * for the record)? Only when its epoch mediates no class, or @tracee is
 * bound to the same epoch and holds no capability @tracer does not
 * validly hold too.
 */
static int cf_exercise_borrow(struct cf_cred *tracer,
			      const struct cf_cred *tracee,
			      const struct cf_target *t)
{
	enum capfence_reason r = CAPFENCE_R_OK;
	struct cf_holdings *h, *mine;
	unsigned int seq;
	u64 fence;
	int c;
	u32 i;

	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++)
		if (tracer->epoch->rules[c].kind != CAPFENCE_RULE_OPEN)
			break;
	/* an all-open epoch: nothing to borrow */
	if (c > CAPFENCE_CLASS_MAX)
		return 0;
	if (!tracee || tracee->epoch != tracer->epoch)
		return cf_exercise_settle(CAPFENCE_R_BORROW, t, tracer->epoch->id,
					  0, cf_fence_value());
	h = rcu_dereference(tracee->held);
	mine = rcu_dereference(tracer->held);
	/* every grant of both, judged at one fence: a revocation retries */
	do {
		seq = read_seqbegin(&cf_fence);
		fence = cf_fence_value_locked();
		r = CAPFENCE_R_OK;
		for (i = 0; h && i < h->n && !r; i++)
			if (!cf_holds_like(mine, h->g[i]))
				r = CAPFENCE_R_BORROW;
	} while (read_seqretry(&cf_fence, seq));
	if (r == CAPFENCE_R_OK)
		return 0;
	return cf_exercise_settle(r, t, tracer->epoch->id, 0, fence);
}

/**
 * cf_exercise_attach() - may bound @tracer act through another task?
 * @tracer: the tracer's bound state
 * @tracee: the bound state of the task to be traced, read or written, or
 *	    NULL when it is not bound
 * @seen: the errno the tracer will see for a refusal, 0 for EACCES
 *
 * A tracer whose epoch mediates any class attaches only to a task bound
 * to the same epoch that holds no capability the tracer does not validly
 * hold too. BPF program context: never sleeps.
 *
 * Return: 0, or -EACCES (counted and audited, reason borrow, target
 * "ptrace").
 */
int cf_exercise_attach(struct cf_cred *tracer, const struct cf_cred *tracee,
		       int seen)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_NONE,
			       .what = "ptrace", .seen = seen };

	return cf_exercise_borrow(tracer, tracee, &t);
}

/**
 * cf_exercise_personality() - may the calling task submit as @theirs?
 * @mine: the calling task's bound state, or NULL when it is unbound
 * @theirs: the bound state of the credential of an io_uring personality,
 *	    or NULL when it is not bound
 *
 * A request under a personality runs as its credential: it exercises
 * that credential's grants, and its denials are recorded under and
 * counted against that credential's sandbox. So only a credential of the
 * submitter's own sandbox may be used, under the rule of borrowing
 * (cf_exercise_attach()). An unbound submitter may not act as a sandbox,
 * nor a bound one as a credential outside it (an unbound one included).
 * BPF program context: never sleeps.
 *
 * Return: 0, or -EACCES (counted and audited in the submitter's sandbox,
 * the host's for an unbound one: reason borrow, target
 * "io_uring:personality").
 */
int cf_exercise_personality(struct cf_cred *mine, const struct cf_cred *theirs)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_NONE,
			       .what = "io_uring:personality" };

	if (!mine && !theirs)
		return 0;
	if (mine && theirs && mine->sb && mine->sb == theirs->sb)
		return cf_exercise_borrow(mine, theirs, &t);
	return cf_exercise_settle(CAPFENCE_R_BORROW, &t,
				  mine ? mine->epoch->id : 0, 0,
				  cf_fence_value());
}

/**
 * cf_syscall_skipped() - record the epoch's refusal of a call seccomp skipped
 * @cred: current's credential, which may have an entry
 *
 * After seccomp skipped a call of current (the module's fexit of
 * __secure_computing(), the built-in LSM's seccomp_skipped hook). The
 * epoch's own filter of current's chain is run on the call again: the
 * refusal is capfence's to record (within the sandbox's budgets) only
 * when that filter refuses it, not when a filter the task stacked itself
 * does. RCU held, never sleeps.
 */
void cf_syscall_skipped(const struct cred *cred)
{
	struct cf_cred *e = cf_subject(cred);
	struct seccomp_data sd;
	u32 answer;

	if (!e || !e->epoch->sc)
		return;
	answer = cf_seccomp_epoch_answer(e->epoch->sc, &sd);
	switch (answer & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG:
		return;		/* not the epoch's refusal: the task's own filter */
	}
	/*
	 * A filter the task stacked above the epoch's answers first among
	 * equal ERRNO answers: a call that got another errno was refused by
	 * the task's own filter, not capfence's to record.
	 */
	if ((answer & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO &&
	    syscall_get_error(current, task_pt_regs(current)) !=
	    -(long)(answer & SECCOMP_RET_DATA))
		return;
	cf_audit_syscall(e->sb ?: &cf_host_sandbox, e->epoch->id, &sd, answer);
}

/**
 * cf_bpf_refuse_skipper() - refuse a BPF program that would skip the LSMs
 * @cmd: the bpf(2) command
 * @attr: its attributes, the kernel's own copy (what the load will use)
 * @lsm_prog_skips: capfence's checks run as BPF-LSM programs (the module),
 *	so another BPF-LSM program on the same hook can end their run
 *
 * Two kinds of program can end a hook's run before capfence's program or
 * function has judged, with a value no verifier bounds: a
 * BPF_MODIFY_RETURN tracing program on a security_* function skips the
 * whole function, every LSM's hook on it, when it returns non-zero (on
 * Debian's kernels, without function error injection, security_*
 * functions are its only targets); a BPF_LSM_CGROUP program's shim runs
 * on the hook's trampoline ahead of capfence's program and returns what
 * bpf_set_retval() set. Neither needs more than CAP_BPF and CAP_PERFMON:
 * while capfence enforces, neither is loaded. With @lsm_prog_skips, a
 * plain BPF-LSM (BPF_LSM_MAC) program is a third: the programs on a hook's
 * trampoline run newest first and the first non-zero return, compared on
 * all 64 bits, ends the run, capfence's program unrun. 6.1's verifier
 * bounds no BPF-LSM return; 6.12's checks only the low 32 bits, so
 * 0x100000000 passes as 0 and the hook then reads 0, allowed. Only the
 * control plane (unbound, CAP_MAC_ADMIN in the initial user namespace,
 * which can detach capfence anyway) loads one then. Any context; never
 * sleeps.
 *
 * Return: 0, or -EACCES (with an op=bpf record) for such a load.
 */
int cf_bpf_refuse_skipper(int cmd, const union bpf_attr *attr,
			  bool lsm_prog_skips)
{
	const char *what;

	if (cmd != BPF_PROG_LOAD)
		return 0;
	if (attr->prog_type == BPF_PROG_TYPE_TRACING &&
	    attr->expected_attach_type == BPF_MODIFY_RETURN)
		what = "prog_type=tracing attach=modify_return";
	else if (attr->prog_type == BPF_PROG_TYPE_LSM &&
		 attr->expected_attach_type == BPF_LSM_CGROUP)
		what = "prog_type=lsm attach=lsm_cgroup";
	else if (lsm_prog_skips && attr->prog_type == BPF_PROG_TYPE_LSM &&
		 attr->expected_attach_type == BPF_LSM_MAC &&
		 !cf_current_control_plane())
		what = "prog_type=lsm attach=lsm_mac";
	else
		return 0;
	cf_audit_bpf(what, attr->attach_btf_id);
	return -EACCES;
}
