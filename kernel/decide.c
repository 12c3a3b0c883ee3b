// SPDX-License-Identifier: GPL-2.0
/*
 * Decisions: delegation (SPEC order: target, MAC, epoch, class, revoked or
 * fenced, delegator) atomically with installing the held capability, and
 * exercise at the LSM hooks.
 *
 * Locking: delegation runs in process context under cf_mutex; rows 5 and 6
 * and the publication of the new holdings happen under the fence lock, so
 * a delegation is ordered against every revocation and activation.
 * Exercise runs in BPF program context (RCU held, must not sleep) and reads
 * revocation and fencing state inside one fence read section.
 */
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include "capfence.h"

/* extack messages chosen at run time; all are static strings */
static void cf_extack(struct netlink_ext_ack *extack, const char *msg)
{
	if (extack)
		extack->_msg = msg;
}

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

/**
 * cf_check_token() - rows 2 to 4 of the delegation table against @e
 * @t: the token as cf_token_decode() left it
 * @why: cf_token_decode()'s reason when it failed, NULL when it decoded
 * @buf: the canonical token bytes @t was decoded from
 * @e: the receiver's epoch
 * @reason: the typed result
 * @extack: netlink extended ack, set on rejection
 *
 * Process context.
 *
 * Return: 0 (see @reason), or a negative errno for a system failure.
 */
int cf_check_token(const struct cf_token *t, const char *why, const u8 *buf,
		   struct cf_epoch *e, enum capfence_reason *reason,
		   struct netlink_ext_ack *extack)
{
	const struct cf_rule *rule;
	int err;

	if (why) {
		cf_extack(extack, why);
		*reason = CAPFENCE_R_FORGED;
		return 0;
	}
	err = cf_key_verify(t->key_id, buf, t->signed_len, t->mac);
	if (err == -ENOKEY || err == -EBADMSG) {
		cf_extack(extack, err == -ENOKEY ?
			  "forged: token names a key that is not installed" :
			  "forged: token MAC does not verify");
		*reason = CAPFENCE_R_FORGED;
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
	if (rule->kind != CAPFENCE_RULE_TOKEN ||
	    !cf_constraints_contain(rule->c, rule->n, t->c, t->n)) {
		cf_extack(extack, rule->kind != CAPFENCE_RULE_TOKEN ?
			  "class_denied: the receiver's epoch does not grant this class by token" :
			  "class_denied: token constraint is not inside the epoch's rule");
		*reason = CAPFENCE_R_CLASS_DENIED;
		return 0;
	}
	*reason = CAPFENCE_R_OK;
	return 0;
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
 * Return: 0, or a negative errno for a system failure (-ENOMEM).
 */
int cf_delegate(struct cf_delegation *d, struct netlink_ext_ack *extack)
{
	const struct cred *tcred, *fcred = NULL;
	struct cf_holdings *old, *new = NULL;
	struct cf_cred *target, *from = NULL;
	struct cf_grant *g;
	const char *why;
	int err = 0;

	lockdep_assert_held(&cf_mutex);
	d->fence = cf_fence_value();
	/*
	 * Decoded once, up front, so every reply can name the cap_id; @why
	 * stays NULL when it decoded. The checks still run in table order.
	 */
	cf_token_decode(&d->token, d->tok, d->len, &why);
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
	err = cf_check_token(&d->token, why, d->tok, target->epoch,
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
	g = cf_grant_from_token(&d->token, target->epoch, d->from, GFP_KERNEL);
	if (!g) {
		err = -ENOMEM;
		goto out;
	}
	/* delegations are the only writers of a published cred's holdings */
	old = rcu_dereference_protected(target->held,
					lockdep_is_held(&cf_mutex));
	new = cf_holdings_add(old, g, GFP_KERNEL);
	if (!new) {
		cf_grant_put(g);
		err = -ENOMEM;
		goto out;
	}

	write_seqlock(&cf_fence);
	d->fence = cf_fence_value_locked();
	if (g->capid->revoked_at) {
		d->reason = CAPFENCE_R_REVOKED;
	} else if (target->epoch->fenced_at[g->class_id]) {
		d->reason = CAPFENCE_R_FENCED;
	} else if (d->from && (!from || !cf_holds_valid(from, g->capid->cap_id))) {
		d->reason = CAPFENCE_R_NOT_HELD;
	} else if (!d->dry_run && !d->already_held) {
		spin_lock(&target->lock);
		rcu_assign_pointer(target->held, new);
		spin_unlock(&target->lock);
		swap(old, new);
	}
	write_sequnlock(&cf_fence);

	if (d->reason == CAPFENCE_R_REVOKED)
		NL_SET_ERR_MSG(extack, "revoked: this capability was revoked");
	else if (d->reason == CAPFENCE_R_FENCED)
		NL_SET_ERR_MSG(extack,
			       "fenced: a newer epoch narrowed this class; tokens of this epoch are fenced");
	else if (d->reason == CAPFENCE_R_NOT_HELD)
		NL_SET_ERR_MSG(extack,
			       "not_held: the delegator does not validly hold this capability");
	/* on success @new now holds the replaced set */
	if (new != old)
		cf_holdings_put(new);
out:
	if (fcred)
		put_cred(fcred);
	put_cred(tcred);
	return err;
}

/*
 * The held grants' answer for @t, inside one fence read section: the
 * reason, the admitting grant (@ok) or the capability that came closest
 * (@cap_id), and the fence the answer was read at.
 */
static enum capfence_reason cf_held_admit(struct cf_cred *e,
					  const struct cf_target *t,
					  struct cf_grant **ok, u64 *cap_id,
					  u64 *fence)
{
	enum capfence_reason r;
	struct cf_holdings *h;
	unsigned int seq;
	u32 i;

	do {
		seq = read_seqbegin(&cf_fence);
		*cap_id = 0;
		*ok = NULL;
		*fence = cf_fence_value_locked();
		r = CAPFENCE_R_NO_CAPABILITY;
		h = rcu_dereference(e->held);
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
			if (st == CAPFENCE_R_OK) {
				r = st;
				*ok = g;
				break;
			}
			r = st;
			*cap_id = g->capid->cap_id;
		}
	} while (read_seqretry(&cf_fence, seq));
	return r;
}

/**
 * cf_exercise() - may bound task @e perform @t?
 * @e: the calling task's bound state (kfunc.c)
 * @t: the mediated operation
 * @admitted: if not NULL, set to the grant that allowed @t (NULL when the
 *	      rule is open); valid while the caller holds RCU
 *
 * BPF program context: never sleeps. A denial is counted and audited.
 *
 * Return: 0 to allow, -EACCES to deny.
 */
int cf_exercise(struct cf_cred *e, struct cf_target *t,
		struct cf_grant **admitted)
{
	const struct cf_rule *rule = &e->epoch->rules[t->class_id];
	enum capfence_reason r;
	struct cf_grant *ok;
	u64 cap_id, fence;

	if (admitted)
		*admitted = NULL;
	if (rule->kind == CAPFENCE_RULE_OPEN)
		return 0;
	/* rules are immutable: only grant state needs the fence snapshot */
	if (rule->kind == CAPFENCE_RULE_DENY ||
	    !cf_constraints_admit(rule->c, rule->n, t)) {
		r = rule->kind == CAPFENCE_RULE_DENY ? CAPFENCE_R_CLASS_DENIED :
						       CAPFENCE_R_CONSTRAINT;
		cap_id = 0;
		fence = cf_fence_value();
		goto deny;
	}
	r = cf_held_admit(e, t, &ok, &cap_id, &fence);
	if (r == CAPFENCE_R_OK) {
		cf_stats_exercise(r);
		if (admitted)
			*admitted = ok;
		return 0;
	}
deny:
	cf_stats_exercise(r);
	cf_audit_exercise(t, e->epoch->id, r, cap_id, fence);
	return -EACCES;
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
	cf_stats_exercise(CAPFENCE_R_BYPASS);
	cf_audit_exercise(&t, e->epoch->id, CAPFENCE_R_BYPASS, 0,
			  cf_fence_value());
	return -EACCES;
}

/**
 * cf_exercise_admits() - would cf_exercise() allow @t now?
 * @e: the calling task's bound state
 * @t: the operation
 *
 * The same decision, neither counted nor audited: for a question asked on
 * the way to another decision (would a new name make a file readable?).
 * BPF program context: never sleeps.
 *
 * Return: true when @t would be allowed.
 */
bool cf_exercise_admits(struct cf_cred *e, const struct cf_target *t)
{
	const struct cf_rule *rule = &e->epoch->rules[t->class_id];
	struct cf_grant *ok;
	u64 cap_id, fence;

	if (rule->kind == CAPFENCE_RULE_OPEN)
		return true;
	if (rule->kind == CAPFENCE_RULE_DENY ||
	    !cf_constraints_admit(rule->c, rule->n, t))
		return false;
	return cf_held_admit(e, t, &ok, &cap_id, &fence) == CAPFENCE_R_OK;
}
