// SPDX-License-Identifier: GPL-2.0
/*
 * Borrowing: a bound task must not act through another task that may do
 * what it may not. Attaching (ptrace attach and seize, PTRACE_TRACEME from
 * the other side, /proc/PID/mem, process_vm_readv/writev, pidfd_getfd: all
 * ask for PTRACE_MODE_ATTACH) by a bound tracer whose epoch mediates any
 * class is allowed only to a task bound to the same epoch that holds no
 * capability the tracer does not validly hold too. Holdings change after
 * an attach (a delegation to the tracee), so while traced, a bound task is
 * allowed an exercise only when its bound tracer would be allowed the same
 * (decide.c, cf_exercise()).
 *
 * This file gathers what the decision needs (the tracee's bound state,
 * what the tracer will see); cf_exercise_attach() decides, counts and
 * audits.
 *
 * Locking and context: BPF program context (RCU read lock held), never
 * sleeps.
 */
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <asm/syscall.h>
#include <asm/unistd.h>
#include "borrow.h"
#include "cred.h"
#include "decide.h"

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

/**
 * cf_borrow_attach() - may bound @tracer attach to @tracee?
 * @tracer: the tracer's bound state
 * @tracee: the task to be traced (or read, or written)
 *
 * Gathers the tracee's bound state and what the tracer would see; the
 * decision is cf_exercise_attach()'s.
 *
 * Return: 0, or -EACCES (audited, reason borrow, target "ptrace").
 */
int cf_borrow_attach(struct cf_cred *tracer, struct task_struct *tracee)
{
	const struct cred *cred = __task_cred(tracee);
	struct cf_cred *e = cf_cred_maybe(cred) ? cf_subject(cred) : NULL;

	return cf_exercise_attach(tracer, e, cf_borrow_seen());
}
