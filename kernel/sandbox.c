// SPDX-License-Identifier: GPL-2.0
/*
 * Sandboxes: what one EXEC_SET binds. The pending credential carries a new
 * sandbox, and every credential the exec binds and its descendants (fork,
 * setuid, capset, keyctl session-to-parent) carry the same one. Two
 * budgets per sandbox keep one sandbox from costing the others:
 *
 * - Audit records. An exercise denial, or a call the epoch's syscall
 *   policy refused, is recorded within its sandbox's
 *   budget of records per window, and within the host's ceiling, except
 *   that a sandbox's first records of a window (the floor) are written
 *   whatever the ceiling: however many others flood, a sandbox's first
 *   denials keep their records. A denial without a record is counted, for
 *   its sandbox and for the host, by why (over its budget, over the
 *   ceiling, lost by the audit subsystem), and a work item reports every
 *   sandbox that missed records in a record of its own (op=suppressed)
 *   within a second (or a window, if shorter): at most one per sandbox
 *   per second. Writing an audit parameter starts a new host window.
 *   An admitted record waits in audit.c's queue for room in the audit
 *   backlog; the queue holds at most a sandbox's budget of its records,
 *   and at most the ceiling's in all except each sandbox's floor (one
 *   host window's worth): past that a record is counted lost.
 *   Denials of unbound tasks (a passed file rechecked) count against the
 *   host sandbox (id 0): the ceiling, no budget.
 * - Credentials. A sandbox may have at most cred_limit live credentials:
 *   in the module each one costs an entry in the credential table that
 *   every hook of every task, bound or not, may have to walk past.
 *
 * Why per sandbox, not per credential or per epoch: a bound task makes
 * credentials at will (fork, capset, setuid, io_uring personalities), so
 * a budget per credential is one it multiplies; every tenant bound to the
 * same policy shares an epoch, so a budget per epoch is one a tenant
 * exhausts for the others. Only EXEC_SET, the orchestrator's, makes a
 * sandbox.
 *
 * Locking: no locks. A sandbox is reference counted by the credential
 * entries that carry it and by the report list, and freed after an RCU
 * grace period: BPF programs reach it through a credential entry under
 * RCU. Its counters are atomics; a window is one atomic64 (start << 32 |
 * count) advanced by cmpxchg, so nobody waits and no contended lock drops
 * a record uncounted. The report list is an llist (added to from any
 * context, taken whole by the work item); a sandbox is on it at most once
 * (CF_SB_QUEUED). reported[] is the report work's only: one work item,
 * never concurrent with itself (on the ordered cf_records_wq, never
 * system_wq: it waits for room in the backlog), and drained at exit after
 * it is cancelled.
 */
#include <linux/audit.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "fleet.h"
#include "sandbox.h"

/*
 * The default is the front end's (its build file defines it): the
 * module's credential table is walked by unbound tasks' hooks, so it is
 * bounded (8192); a built-in LSM's credential blob has no table, and its
 * default is no limit (0).
 */
static unsigned int cred_limit = CF_CRED_LIMIT_DEFAULT;
module_param(cred_limit, uint, 0644);
MODULE_PARM_DESC(cred_limit,
		 "live credentials one sandbox may have; more fail with ENOMEM (0: no limit)");

static atomic64_t cf_host_window = ATOMIC64_INIT(0);

/* a new audit limit starts a new window for the host's ceiling */
static int cf_audit_param_set(const char *val, const struct kernel_param *kp)
{
	int err = param_set_uint(val, kp);

	if (!err)
		atomic64_set(&cf_host_window, 0);
	return err;
}

static const struct kernel_param_ops cf_audit_param_ops = {
	.set = cf_audit_param_set,
	.get = param_get_uint,
};

/*
 * Half the kernel's default audit backlog (64): a sandbox spends its
 * budget at once when it floods, and that burst must leave the backlog
 * room for the other sandboxes' records.
 */
static unsigned int audit_budget = 32;
module_param_cb(audit_budget, &cf_audit_param_ops, &audit_budget, 0644);
MODULE_PARM_DESC(audit_budget, "denial records per sandbox per window");

static unsigned int audit_floor = 10;
module_param_cb(audit_floor, &cf_audit_param_ops, &audit_floor, 0644);
MODULE_PARM_DESC(audit_floor,
		 "of a sandbox's records per window, those written whatever the ceiling");

static unsigned int audit_ceiling = 1000;
module_param_cb(audit_ceiling, &cf_audit_param_ops, &audit_ceiling, 0644);
MODULE_PARM_DESC(audit_ceiling, "denial records per host per window");

static unsigned int audit_window_ms = 5000;
module_param_cb(audit_window_ms, &cf_audit_param_ops, &audit_window_ms, 0644);
MODULE_PARM_DESC(audit_window_ms, "the budget window, in milliseconds");

/* the sandbox of unbound tasks' denials: never freed */
struct cf_sandbox cf_host_sandbox = {
	.ref = REFCOUNT_INIT(1),
};

static atomic64_t cf_sandbox_ids = ATOMIC64_INIT(0);

/* the host's totals, every sandbox's and the host sandbox's */
static atomic64_t cf_total_records = ATOMIC64_INIT(0);
static atomic64_t cf_total_missed[CF_AUDIT_NR_MISS];
static atomic64_t cf_total_reports = ATOMIC64_INIT(0);
static atomic64_t cf_total_reports_lost = ATOMIC64_INIT(0);
static atomic64_t cf_total_cred_refused = ATOMIC64_INIT(0);
/* records admitted and not yet taken by the audit subsystem */
static atomic_t cf_total_waiting = ATOMIC_INIT(0);

struct workqueue_struct *cf_records_wq;
static LLIST_HEAD(cf_reports);
static void cf_sandbox_report(struct work_struct *work);
static DECLARE_DELAYED_WORK(cf_report_work, cf_sandbox_report);

/**
 * cf_sandbox_new() - a sandbox for an EXEC_SET
 * @epoch_id: the epoch it binds
 * @gfp: allocation flags
 *
 * Return: the sandbox with one reference (the caller's), or NULL.
 */
struct cf_sandbox *cf_sandbox_new(u64 epoch_id, gfp_t gfp)
{
	struct cf_sandbox *sb = kzalloc(sizeof(*sb), gfp);

	if (!sb)
		return NULL;
	refcount_set(&sb->ref, 1);
	sb->id = atomic64_inc_return(&cf_sandbox_ids);
	sb->epoch_id = epoch_id;
	sb->pid = task_tgid_nr(current);
	return sb;
}

/**
 * cf_sandbox_put() - drop a reference
 * @sb: sandbox, or NULL
 *
 * Any context; the last reference frees it after a grace period.
 */
void cf_sandbox_put(struct cf_sandbox *sb)
{
	if (sb && refcount_dec_and_test(&sb->ref))
		kfree_rcu(sb, rcu);
}

/**
 * cf_sandbox_cred_limit() - live credentials one sandbox may have
 *
 * Return: the limit, 0 for none.
 */
unsigned int cf_sandbox_cred_limit(void)
{
	return READ_ONCE(cred_limit);
}

/**
 * cf_sandbox_cred_charge() - count a credential entry that carries @sb
 * @sb: the sandbox
 * @enforce: refuse past the limit (a bound credential's copy); a pending
 *	     launcher's copies and cred_transfer, which cannot fail, are
 *	     only counted
 *
 * Never sleeps.
 *
 * Return: true when counted, false when refused (counted as refused).
 */
bool cf_sandbox_cred_charge(struct cf_sandbox *sb, bool enforce)
{
	unsigned int limit = READ_ONCE(cred_limit);
	int n = atomic_read(&sb->creds);

	do {
		if (enforce && limit && (unsigned int)n >= limit) {
			atomic64_inc(&sb->cred_refused);
			atomic64_inc(&cf_total_cred_refused);
			return false;
		}
	} while (!atomic_try_cmpxchg(&sb->creds, &n, n + 1));
	return true;
}

/**
 * cf_sandbox_cred_uncharge() - a credential entry that carried @sb is gone
 * @sb: the sandbox
 */
void cf_sandbox_cred_uncharge(struct cf_sandbox *sb)
{
	atomic_dec(&sb->creds);
}

static unsigned long cf_audit_window(void)
{
	return max_t(unsigned long, msecs_to_jiffies(READ_ONCE(audit_window_ms)), 1);
}

/*
 * One more event in the window @w of @len jiffies, at @now: the events of
 * the current window, this one included. A window starts at its first
 * event; the start is kept in 32 bits of jiffies (it compares modulo
 * 2^32: a window idle for exactly a multiple of 2^32 jiffies is taken as
 * still open, and ends @len later).
 */
static u32 cf_window_inc(atomic64_t *w, unsigned long now, unsigned long len)
{
	s64 old = atomic64_read(w), new;
	u32 start, n;

	do {
		start = (u64)old >> 32;
		n = (u32)old;
		if (!n || (u32)((u32)now - start) >= len) {
			start = (u32)now;
			n = 1;
		} else if (n < U32_MAX) {
			n++;
		}
		new = (s64)(((u64)start << 32) | n);
	} while (!atomic64_try_cmpxchg(w, &old, new));
	return n;
}

/* Report @sb's missed records within a second: put it on the list. */
static void cf_sandbox_queue(struct cf_sandbox *sb)
{
	if (test_and_set_bit(CF_SB_QUEUED, &sb->flags))
		return;
	/* the caller's credential holds @sb: never the last reference */
	if (!refcount_inc_not_zero(&sb->ref)) {
		clear_bit(CF_SB_QUEUED, &sb->flags);
		return;
	}
	if (llist_add(&sb->report, &cf_reports))
		queue_delayed_work(cf_records_wq, &cf_report_work,
				   min_t(unsigned long, cf_audit_window(), HZ));
}

static void cf_sandbox_miss(struct cf_sandbox *sb, enum cf_audit_miss why)
{
	atomic64_inc(&sb->missed[why]);
	atomic64_inc(&cf_total_missed[why]);
	cf_sandbox_queue(sb);
}

/**
 * cf_sandbox_audit_admit() - may a denial of @sb have its record?
 * @sb: the denied task's sandbox, or &cf_host_sandbox
 *
 * Within @sb's budget for the window, and either within its floor or
 * under the host's ceiling. A refusal is counted and will be reported.
 * After an admission the caller holds a place in the queue
 * (cf_sandbox_audit_hold()) and queues the record, then calls
 * cf_sandbox_audit_written(), or cf_sandbox_audit_lost() when it could
 * not. Any context; never waits.
 *
 * Return: true when the record is to be written.
 */
bool cf_sandbox_audit_admit(struct cf_sandbox *sb)
{
	unsigned long now = jiffies, len = cf_audit_window();
	u32 n = 0;

	if (sb != &cf_host_sandbox) {
		n = cf_window_inc(&sb->window, now, len);
		if (n > READ_ONCE(audit_budget)) {
			cf_sandbox_miss(sb, CF_AUDIT_BUDGET);
			return false;
		}
	}
	if (cf_window_inc(&cf_host_window, now, len) > READ_ONCE(audit_ceiling) &&
	    (sb == &cf_host_sandbox || n > READ_ONCE(audit_floor))) {
		cf_sandbox_miss(sb, CF_AUDIT_CEILING);
		return false;
	}
	return true;
}

/**
 * cf_sandbox_audit_hold() - a place in the queue of records waiting for room
 * @sb: the sandbox of a record cf_sandbox_audit_admit() let by
 *
 * The queue holds at most @sb's budget of its records, and at most the
 * host's ceiling in all, except that a sandbox's first floor of records
 * waiting always have their place: a window's admitted records fit, and
 * one sandbox's waiting records cannot take another's place. Refused:
 * counted lost (and reported). Release it with cf_sandbox_audit_release()
 * once the record is written or dropped. Any context; never waits.
 *
 * Return: true when held.
 */
bool cf_sandbox_audit_hold(struct cf_sandbox *sb)
{
	int mine = atomic_inc_return(&sb->waiting);
	int all = atomic_inc_return(&cf_total_waiting);
	bool host = sb == &cf_host_sandbox;

	if ((!host && mine > (int)max(READ_ONCE(audit_budget), READ_ONCE(audit_floor))) ||
	    (all > (int)READ_ONCE(audit_ceiling) &&
	     (host || mine > (int)READ_ONCE(audit_floor)))) {
		cf_sandbox_audit_release(sb);
		cf_sandbox_miss(sb, CF_AUDIT_LOST);
		return false;
	}
	return true;
}

/**
 * cf_sandbox_audit_release() - a record of @sb left the queue
 * @sb: its sandbox
 */
void cf_sandbox_audit_release(struct cf_sandbox *sb)
{
	atomic_dec(&sb->waiting);
	atomic_dec(&cf_total_waiting);
}

/**
 * cf_sandbox_audit_written() - count a record cf_sandbox_audit_admit() let by
 * @sb: its sandbox
 *
 * Counted when it is queued: a denial's counts are final when it is
 * judged; one the audit subsystem then refuses moves to lost.
 */
void cf_sandbox_audit_written(struct cf_sandbox *sb)
{
	atomic64_inc(&sb->records);
	atomic64_inc(&cf_total_records);
}

/**
 * cf_sandbox_audit_lost() - a record admitted for @sb was not written
 * @sb: its sandbox (the caller holds a reference)
 * @counted: it was counted written (queued), and the audit subsystem
 *	     refused it: its backlog stayed full for audit_backlog_wait_time
 *
 * Counted and reported like a record over a budget.
 */
void cf_sandbox_audit_lost(struct cf_sandbox *sb, bool counted)
{
	if (counted) {
		atomic64_dec(&sb->records);
		atomic64_dec(&cf_total_records);
	}
	cf_sandbox_miss(sb, CF_AUDIT_LOST);
}

/*
 * Record the denials of @sb that have no record
 * (&cf_host_sandbox: unbound tasks): @missed since its last report, by
 * enum cf_audit_miss, and the budget window @window_ms. The report work,
 * on the module's own workqueue: it waits for room in a full backlog as
 * the kernel's own records do (holding up nothing but capfence's records,
 * which wait too), and is lost only when that wait expires. Not itself
 * within a budget: at most one per sandbox per second. Returns true when
 * written.
 */
static bool cf_sandbox_report_record(const struct cf_sandbox *sb,
				     const u64 *missed, unsigned int window_ms)
{
	struct audit_buffer *ab;

	ab = audit_log_start(NULL, GFP_KERNEL, CAPFENCE_AUDIT_TYPE);
	if (!ab)
		return false;
	audit_log_format(ab, "lsm=capfence op=suppressed sandbox=%llu pid=%d epoch=%llu",
			 sb->id, sb->pid, sb->epoch_id);
	audit_log_format(ab,
			 " records=%llu budget=%llu ceiling=%llu lost=%llu window_ms=%u reports_lost=%lld fleet_rev=%llu",
			 missed[CF_AUDIT_BUDGET] + missed[CF_AUDIT_CEILING] +
			 missed[CF_AUDIT_LOST], missed[CF_AUDIT_BUDGET],
			 missed[CF_AUDIT_CEILING], missed[CF_AUDIT_LOST],
			 window_ms, atomic64_read(&cf_total_reports_lost),
			 cf_fleet_rev());
	audit_log_end(ab);
	return true;
}

/*
 * Every queued sandbox's records missed since its last report, in one
 * record each; a sandbox that misses more is queued again. A report the
 * audit subsystem cannot take (its backlog stayed full past
 * audit_backlog_wait_time) is counted (reports_lost= of the next report)
 * and tried again within a second while the sandbox lives; a gone
 * sandbox's is left to the totals.
 */
static void cf_sandbox_report(struct work_struct *work)
{
	struct llist_node *n = llist_reverse_order(llist_del_all(&cf_reports));
	struct cf_sandbox *sb, *tmp;
	u64 m[CF_AUDIT_NR_MISS];
	bool any;
	int i;

	llist_for_each_entry_safe(sb, tmp, n, report) {
		clear_bit(CF_SB_QUEUED, &sb->flags);
		/*
		 * A miss from now on queues it again: the bit is clear before
		 * the counts are read (pairs with the full barrier of the
		 * value-returning test_and_set_bit() after a count's
		 * increment in cf_sandbox_queue()), so a count this report
		 * does not see is reported by the next.
		 */
		smp_mb__after_atomic();
		any = false;
		for (i = 0; i < CF_AUDIT_NR_MISS; i++) {
			m[i] = atomic64_read(&sb->missed[i]) - sb->reported[i];
			any |= m[i] != 0;
		}
		if (any &&
		    cf_sandbox_report_record(sb, m, READ_ONCE(audit_window_ms))) {
			for (i = 0; i < CF_AUDIT_NR_MISS; i++)
				sb->reported[i] += m[i];
			atomic64_inc(&cf_total_reports);
		} else if (any) {
			atomic64_inc(&cf_total_reports_lost);
			/* the list's reference is not the last: it lives */
			if (refcount_read(&sb->ref) > 1)
				cf_sandbox_queue(sb);
		}
		cf_sandbox_put(sb);
	}
}

/**
 * cf_sandbox_init() - make the workqueue of records and reports
 *
 * Before any hook can run (cf_audit_init()). Return: 0 or -ENOMEM.
 */
int cf_sandbox_init(void)
{
	/*
	 * Ordered: records are written in the order they were made. High
	 * priority: the tasks whose records wait may keep every CPU busy
	 * (a flood), and the work is bounded by what the budgets admit.
	 */
	cf_records_wq = alloc_ordered_workqueue("capfence_audit", WQ_HIGHPRI);
	return cf_records_wq ? 0 : -ENOMEM;
}

/**
 * cf_sandbox_exit() - stop reporting, free the workqueue (module exit)
 *
 * No hook runs any more and audit.c's queue is written (cf_audit_exit()):
 * nothing queues. Queued sandboxes are dropped unreported; their counts
 * went with the module's state.
 */
void cf_sandbox_exit(void)
{
	struct llist_node *n;
	struct cf_sandbox *sb, *tmp;

	cancel_delayed_work_sync(&cf_report_work);
	n = llist_del_all(&cf_reports);
	llist_for_each_entry_safe(sb, tmp, n, report)
		cf_sandbox_put(sb);
	destroy_workqueue(cf_records_wq);
}

/**
 * cf_sandbox_view() - a sandbox's counters and the limits, for a reply
 * @sb: a task's sandbox (TASK_GET), or NULL for the host's totals and the
 *	limits (STATUS_GET)
 * @v: filled; each counter read once, without a lock
 *
 * Caller holds RCU (the credential entry that carries @sb).
 */
void cf_sandbox_view(const struct cf_sandbox *sb, struct cf_sandbox_view *v)
{
	const atomic64_t *missed = sb ? sb->missed : cf_total_missed;

	memset(v, 0, sizeof(*v));
	v->cred_limit = READ_ONCE(cred_limit);
	v->cred_refused = atomic64_read(sb ? &sb->cred_refused :
					&cf_total_cred_refused);
	v->records = atomic64_read(sb ? &sb->records : &cf_total_records);
	v->over_budget = atomic64_read(&missed[CF_AUDIT_BUDGET]);
	v->over_ceiling = atomic64_read(&missed[CF_AUDIT_CEILING]);
	v->lost = atomic64_read(&missed[CF_AUDIT_LOST]);
	v->budget = READ_ONCE(audit_budget);
	v->floor = READ_ONCE(audit_floor);
	v->ceiling = READ_ONCE(audit_ceiling);
	v->window_ms = READ_ONCE(audit_window_ms);
	if (sb) {
		v->one = true;
		v->id = sb->id;
		v->pid = sb->pid;
		v->epoch_id = sb->epoch_id;
		v->creds = atomic_read(&sb->creds);
	} else {
		v->reports = atomic64_read(&cf_total_reports);
	}
}
