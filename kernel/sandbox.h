/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sandboxes (sandbox.c): what one EXEC_SET binds, shared by every
 * credential descended from it, with the budgets that keep one sandbox
 * from costing the others their audit records or their lookups.
 */
#ifndef _CAPFENCE_SANDBOX_H
#define _CAPFENCE_SANDBOX_H

#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/types.h>

/*
 * Why a denial has no audit record: over its sandbox's budget, over the
 * host's ceiling, or the audit subsystem could not take it.
 */
enum cf_audit_miss {
	CF_AUDIT_BUDGET,
	CF_AUDIT_CEILING,
	CF_AUDIT_LOST,
	CF_AUDIT_NR_MISS
};

/*
 * A sandbox: made by EXEC_SET (process context) and carried by the
 * pending credential, then by every credential the exec binds and its
 * descendants (fork, setuid, capset, keyctl session-to-parent). A bound
 * task can never make another one. Counters are atomics, written from
 * BPF program context; @reported is the report work's alone.
 */
struct cf_sandbox {
	refcount_t ref;			/* credential entries, the report list */
	u64 id;				/* from 1; 0 is the host (unbound tasks) */
	u64 epoch_id;			/* the epoch EXEC_SET named */
	pid_t pid;			/* the task that asked (its tgid) */
	atomic_t creds;			/* live credential entries */
	atomic64_t cred_refused;	/* credential copies refused at the limit */
	atomic64_t window;		/* audit: window start << 32 | count */
	atomic64_t records;		/* denial records written or queued */
	atomic_t waiting;		/* of them, queued (audit.c) */
	atomic64_t missed[CF_AUDIT_NR_MISS];	/* denials without a record */
	u64 reported[CF_AUDIT_NR_MISS];	/* of missed[], already reported */
	unsigned long flags;		/* CF_SB_QUEUED */
	struct llist_node report;	/* on the report list */
	struct rcu_head rcu;
};

#define CF_SB_QUEUED	0		/* bit: on the report list */

extern struct cf_sandbox cf_host_sandbox;

struct cf_sandbox *cf_sandbox_new(u64 epoch_id, gfp_t gfp);
void cf_sandbox_put(struct cf_sandbox *sb);

/**
 * cf_sandbox_get() - take a reference
 * @sb: a sandbox the caller holds a reference to, or NULL
 *
 * Return: @sb.
 */
static inline struct cf_sandbox *cf_sandbox_get(struct cf_sandbox *sb)
{
	if (sb)
		refcount_inc(&sb->ref);
	return sb;
}

bool cf_sandbox_cred_charge(struct cf_sandbox *sb, bool enforce);
void cf_sandbox_cred_uncharge(struct cf_sandbox *sb);
unsigned int cf_sandbox_cred_limit(void);
bool cf_sandbox_audit_admit(struct cf_sandbox *sb);
bool cf_sandbox_audit_hold(struct cf_sandbox *sb);
void cf_sandbox_audit_release(struct cf_sandbox *sb);
void cf_sandbox_audit_written(struct cf_sandbox *sb);
void cf_sandbox_audit_lost(struct cf_sandbox *sb, bool counted);
int cf_sandbox_init(void);
void cf_sandbox_exit(void);

/*
 * The module's ordered workqueue that writes the records audit.c queues
 * and the sandboxes' reports (never system_wq: both wait for room in the
 * audit backlog).
 */
extern struct workqueue_struct *cf_records_wq;
/* what STATUS_GET and TASK_GET say of a sandbox (cf_sandbox_view()) */
struct cf_sandbox_view {
	u32 cred_limit;
	u64 cred_refused;
	u64 records;
	u64 over_budget;
	u64 over_ceiling;
	u64 lost;
	u32 budget;
	u32 floor;
	u32 ceiling;
	u32 window_ms;
	bool one;			/* a task's sandbox: the four below */
	u64 id;
	pid_t pid;
	u64 epoch_id;
	u64 creds;
	u64 reports;			/* the host's: reports written */
};

void cf_sandbox_view(const struct cf_sandbox *sb, struct cf_sandbox_view *v);

#endif /* _CAPFENCE_SANDBOX_H */
