// SPDX-License-Identifier: GPL-2.0
/*
 * Borrowing: a bound task must not act through another task that may do
 * what it may not. Attaching (ptrace attach and seize, PTRACE_TRACEME from
 * the other side, /proc/PID/mem, process_vm_readv/writev, pidfd_getfd: all
 * ask for PTRACE_MODE_ATTACH) by a bound tracer whose epoch mediates any
 * class is allowed only to a task bound to the same epoch that holds no
 * capability the tracer does not validly hold too. Holdings change after
 * an attach (a delegation to the tracee), so while traced, a bound task is
 * allowed an exercise only when its bound tracer would be allowed the same.
 *
 * Locking and context: BPF program context (RCU read lock held), never
 * sleeps; holdings and grant state are read as decide.c reads them.
 */
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <asm/syscall.h>
#include <asm/unistd.h>
#include "capfence.h"

static bool cf_epoch_all_open(const struct cf_epoch *e)
{
	int c;

	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++)
		if (e->rules[c].kind != CAPFENCE_RULE_OPEN)
			return false;
	return true;
}

/* does @e hold a valid grant of @g's cap_id and class? */
static bool cf_holds_like(const struct cf_cred *e, const struct cf_grant *g)
{
	struct cf_holdings *h = rcu_dereference(e->held);
	unsigned int seq;
	bool found;
	u32 i;

	do {
		seq = read_seqbegin(&cf_fence);
		found = false;
		for (i = 0; h && i < h->n && !found; i++)
			found = h->g[i]->capid == g->capid &&
				h->g[i]->class_id == g->class_id &&
				cf_grant_state(h->g[i]) == CAPFENCE_R_OK;
	} while (read_seqretry(&cf_fence, seq));
	return found;
}

/*
 * process_vm_readv/writev and pidfd_getfd turn any refusal into EPERM
 * themselves (mm/process_vm_access.c, kernel/pid.c): the record says what
 * the task will see.
 */
static int cf_borrow_seen(void)
{
	long nr;

	if (in_compat_syscall())
		return 0;
	nr = syscall_get_nr(current, task_pt_regs(current));
	return nr == __NR_process_vm_readv || nr == __NR_process_vm_writev ||
	       nr == __NR_pidfd_getfd ? EPERM : 0;
}

static int cf_borrow_refuse(struct cf_cred *tracer)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_NONE,
			       .what = "ptrace", .seen = cf_borrow_seen() };

	cf_stats_exercise(CAPFENCE_R_BORROW);
	cf_audit_exercise(&t, tracer->epoch->id, CAPFENCE_R_BORROW, 0,
			  cf_fence_value());
	return -EACCES;
}

/**
 * cf_borrow_attach() - may bound @tracer attach to @tracee?
 * @tracer: the tracer's bound state
 * @tracee: the task to be traced (or read, or written)
 *
 * Return: 0, or -EACCES (audited, reason borrow, target "ptrace").
 */
int cf_borrow_attach(struct cf_cred *tracer, struct task_struct *tracee)
{
	const struct cred *cred;
	struct cf_holdings *h;
	struct cf_cred *e;
	u32 i;

	if (cf_epoch_all_open(tracer->epoch))
		return 0;
	cred = __task_cred(tracee);
	e = cf_cred_maybe(cred) ? cf_subject(cred) : NULL;
	if (!e || e->epoch != tracer->epoch)
		return cf_borrow_refuse(tracer);
	h = rcu_dereference(e->held);
	for (i = 0; h && i < h->n; i++)
		if (!cf_holds_like(tracer, h->g[i]))
			return cf_borrow_refuse(tracer);
	return 0;
}

/**
 * cf_borrow_denied() - is the calling task's tracer denied @t?
 * @t: an operation the calling (bound, traced) task's own capabilities
 *     admit
 *
 * Return: true when a bound tracer would not be admitted @t itself.
 */
bool cf_borrow_denied(const struct cf_target *t)
{
	struct task_struct *tracer = ptrace_parent(current);
	const struct cred *cred;
	struct cf_cred *e;

	if (!tracer)
		return false;
	cred = __task_cred(tracer);
	if (!cf_cred_maybe(cred))
		return false;
	e = cf_subject(cred);
	return e && !cf_admits(e, t);
}
