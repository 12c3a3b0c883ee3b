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
 * (decide.c, cf_exercise()). Reads of /proc/PID/syscall, personality
 * and stack ask for PTRACE_MODE_ATTACH too.
 *
 * Some callers turn a refusal into EPERM (cf_borrow_seen()); the record
 * carries the errno the task sees.
 *
 * An io_uring request submitted under a personality its ring holds
 * (IORING_REGISTER_PERSONALITY) runs as that credential: using one of
 * another sandbox, or an unbound one, is acting through a credential
 * that is not the submitter's own (cf_borrow_personality()). A ring
 * reaches another task by inheritance, SCM_RIGHTS or pidfd_getfd.
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
 * Is the calling task in process_vm_readv/writev or pidfd_getfd, which turn
 * any refusal into EPERM (mm/process_vm_access.c, kernel/pid.c)? Native,
 * x32 (the common numbers with __X32_SYSCALL_BIT, and x32's own
 * process_vm_*) and ia32 (int $0x80 or a 32-bit task) have numbers of their
 * own.
 */
static bool cf_borrow_eperm_syscall(void)
{
	long nr = syscall_get_nr(current, task_pt_regs(current));

	if (in_ia32_syscall())
		return nr == __NR_ia32_process_vm_readv ||
		       nr == __NR_ia32_process_vm_writev ||
		       nr == __NR_ia32_pidfd_getfd;
	nr &= ~(long)__X32_SYSCALL_BIT;
	return nr == __NR_process_vm_readv || nr == __NR_process_vm_writev ||
	       nr == __NR_pidfd_getfd ||
	       nr == __NR_x32_process_vm_readv ||
	       nr == __NR_x32_process_vm_writev;
}

/*
 * The errno the task will see for a refusal of an attach in @mode, 0 for
 * EACCES: the record says what the task sees. An attach with the
 * filesystem credentials is /proc: opening /proc/PID/mem (during the
 * open's path walk, current->nameidata set) answers EACCES, while
 * lock_trace() (reads of /proc/PID/syscall, personality, stack) turns any
 * refusal into EPERM. With the real credentials: EPERM in the syscalls
 * above, EACCES in ptrace attach and PTRACE_TRACEME (@mode 0).
 */
static int cf_borrow_seen(unsigned int mode)
{
	if (mode & PTRACE_MODE_FSCREDS)
		return current->nameidata ? 0 : EPERM;
	return cf_borrow_eperm_syscall() ? EPERM : 0;
}

/**
 * cf_borrow_attach() - may bound @tracer attach to @tracee?
 * @tracer: the tracer's bound state
 * @tracee: the task to be traced (or read, or written)
 * @mode: the PTRACE_MODE_* of ptrace_access_check, 0 for PTRACE_TRACEME
 *
 * Gathers the tracee's bound state and what the tracer would see; the
 * decision is cf_exercise_attach()'s.
 *
 * Return: 0, or -EACCES (audited, reason borrow, target "ptrace", with the
 * errno the kernel turns it into).
 */
int cf_borrow_attach(struct cf_cred *tracer, struct task_struct *tracee,
		     unsigned int mode)
{
	const struct cred *cred = __task_cred(tracee);
	struct cf_cred *e = cf_cred_maybe(cred) ? cf_subject(cred) : NULL;

	return cf_exercise_attach(tracer, e, cf_borrow_seen(mode));
}

/**
 * cf_borrow_personality() - may the calling task submit as @new?
 * @cred: the calling task's credential (its submitting credential: an
 *	  SQPOLL thread's is its ring creator's)
 * @new: the credential of the personality the request names
 *
 * Called when one of them may be bound. The decision is
 * cf_exercise_personality()'s; a credential with only a pending exec
 * epoch counts as unbound.
 *
 * Return: 0, or -EACCES (audited in the caller's sandbox, reason borrow,
 * target "io_uring:personality"), which io_uring completes the request
 * with.
 */
int cf_borrow_personality(const struct cred *cred, const struct cred *new)
{
	struct cf_cred *mine = cf_cred_maybe(cred) ? cf_subject(cred) : NULL;
	struct cf_cred *theirs = cf_cred_maybe(new) ? cf_subject(new) : NULL;

	return cf_exercise_personality(mine, theirs);
}
