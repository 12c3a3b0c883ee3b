// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall policy of an epoch (seed condition 1: the token's epoch is
 * "the epoch bound to the receiving task's seccomp program"). An epoch may
 * carry a classic BPF seccomp program, compiled by the tools from an OCI
 * linux.seccomp profile; the module keeps the program and its SHA-256
 * digest. The exec that binds a task to the epoch, and every later exec of
 * a task bound to it, is refused unless the task's seccomp filter chain
 * holds exactly that program, loaded without SECCOMP_FILTER_FLAG_LOG: the
 * launcher installs it between EXEC_SET and execve, and the kernel, not
 * the launcher, says whether it did. The program need not be the newest
 * filter: a task may stack its own (sshd's, bwrap's, QEMU's sandboxes),
 * and seccomp answers with the most restrictive action of all filters, so
 * no filter above the epoch's can loosen its refusals. The kernel writes
 * no record of the program's refusals (its AUDIT_SECCOMP records would be
 * outside every sandbox's budget): capfence records them itself, within
 * the budgets. After seccomp skips a bound task's call, the module runs
 * the epoch's own filter of the task's chain on the call again
 * (cf_seccomp_epoch_answer()): a refusal is capfence's only when that
 * filter refuses, not when a filter the task stacked itself does.
 *
 * How the task's filter is read. struct seccomp_filter is private to the
 * kernel's seccomp.c, so the offsets of the members read here (log, prev,
 * prog) come from the running kernel's own BTF at build time (Kbuild
 * makes seccomp_layout.h with pahole from the vmlinux the module's BTF is
 * made against; a layout it cannot read fails the build). The module reads the
 * exec'ing task's filter itself: no BPF program hands it a pointer.
 * struct bpf_prog is public: its orig_prog is the filter as seccomp(2)
 * received it (kept when CONFIG_CHECKPOINT_RESTORE is set, as on Debian's
 * kernels; without it every such bind fails closed).
 *
 * Locking and context: an epoch's program is written before the epoch is
 * published (cf_epoch_install() under cf_mutex) and never changes, so
 * readers need only the epoch's lifetime (the module's). The match runs in
 * BPF program context (RCU read lock, never sleeps) and only reads the
 * calling task's own filter chain, which the task keeps alive (each filter
 * holds a reference on its prev); during an exec no other thread can
 * replace it (SECCOMP_FILTER_FLAG_TSYNC takes cred_guard_mutex, which the
 * exec holds). The answer after a skipped call (BPF program context too)
 * walks current's chain as seccomp's own run does: another thread's TSYNC
 * may publish a new head meanwhile, whose prev chain holds every filter of
 * the old one.
 */
#include <crypto/sha2.h>
#include <linux/filter.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "seccomp.h"
#include "seccomp_layout.h"
#include <asm/syscall.h>

/**
 * cf_seccomp_parse() - the program of CAPFENCE_A_SECCOMP_PROG
 * @out: set to the program (cf_seccomp_free() it), for the epoch being
 *	 built
 * @nla: the attribute
 * @extack: netlink extended ack
 *
 * Process context. The program is kept as it was sent, and its digest
 * computed.
 *
 * Return: 0, -EINVAL for a length that is not a whole number of
 * instructions, -E2BIG above CAPFENCE_SECCOMP_MAX_INSNS, -ENOMEM.
 */
int cf_seccomp_parse(struct cf_seccomp **out, const struct nlattr *nla,
		     struct netlink_ext_ack *extack)
{
	u32 bytes = nla_len(nla), len = bytes / sizeof(struct sock_filter);
	struct cf_seccomp *sc;

	if (!bytes || bytes % sizeof(struct sock_filter)) {
		NL_SET_ERR_MSG_ATTR(extack, nla,
				    "seccomp program is not a whole number of instructions");
		return -EINVAL;
	}
	if (len > CAPFENCE_SECCOMP_MAX_INSNS) {
		NL_SET_ERR_MSG_ATTR(extack, nla,
				    "seccomp program has more than 4096 instructions");
		return -E2BIG;
	}
	sc = kmalloc(struct_size(sc, insns, len), GFP_KERNEL);
	if (!sc)
		return -ENOMEM;
	sc->len = len;
	memcpy(sc->insns, nla_data(nla), bytes);
	sha256((const u8 *)sc->insns, bytes, sc->digest);
	*out = sc;
	return 0;
}

/**
 * cf_seccomp_free() - free a program
 * @sc: program, may be NULL
 */
void cf_seccomp_free(struct cf_seccomp *sc)
{
	kfree(sc);
}

/**
 * cf_seccomp_msg_max() - room an epoch's program takes in a message
 * @prog: with the program
 *
 * Return: bytes.
 */
size_t cf_seccomp_msg_max(bool prog)
{
	size_t n = nla_total_size(CAPFENCE_SECCOMP_DIGEST_LEN) +
		   nla_total_size(sizeof(u32));

	if (prog)
		n += nla_total_size(CAPFENCE_SECCOMP_MAX_INSNS *
				    sizeof(struct sock_filter));
	return n;
}

/* A member of a struct seccomp_filter, at its offset in this kernel. */
#define CF_SF_MEMBER(f, type, member) \
	READ_ONCE(*(type *)((const u8 *)(f) + CF_SECCOMP_OFF_##member))

/*
 * The most filters a walk down a chain visits. seccomp refuses a filter
 * that takes its chain past MAX_INSNS_PER_PATH (2^18 bytes of
 * instructions, 32768) counting each filter as its length plus 4, so no
 * chain holds more than 32768 / 5 filters; a walk that gets that far
 * anyway stops there and fails closed.
 */
#define CF_SECCOMP_MAX_DEPTH	(((1 << 18) / sizeof(struct sock_filter)) / 5)

/* Was @prog loaded from exactly the instructions of @sc? */
static bool cf_seccomp_same(const struct bpf_prog *prog,
			    const struct cf_seccomp *sc)
{
	const struct sock_fprog_kern *orig = prog ? READ_ONCE(prog->orig_prog) :
						    NULL;

	return orig && orig->len == sc->len && orig->filter &&
	       !memcmp(orig->filter, sc->insns,
		       sc->len * sizeof(struct sock_filter));
}

/* Is @f exactly the epoch's program @sc, loaded not to log? */
static bool cf_seccomp_is(const struct seccomp_filter *f,
			  const struct cf_seccomp *sc)
{
	return !CF_SF_MEMBER(f, const bool, log) &&
	       cf_seccomp_same(CF_SF_MEMBER(f, const struct bpf_prog *const, prog),
			       sc);
}

/**
 * cf_seccomp_match_current() - where in current's filter chain is the epoch's?
 * @sc: the epoch's program
 *
 * BPF program context (the exec's bprm_creds_for_exec); never sleeps. The
 * chain is walked from the newest filter down (prev), at most
 * CF_SECCOMP_MAX_DEPTH filters; a filter matches when it is exactly the
 * epoch's program, loaded not to log (its refusals are capfence's to
 * record, within the budgets): the instructions it was loaded from are
 * compared with the epoch's, all of them. Current's filter chain cannot
 * change under it: only current adds to it, or a thread of its group with
 * SECCOMP_FILTER_FLAG_TSYNC, which takes the cred_guard_mutex the exec
 * holds; filters are never removed.
 *
 * Return: the depth of the newest match (0: the newest filter), -ENOENT
 * when no filter of the chain matches, -ELOOP when the walk stops at
 * CF_SECCOMP_MAX_DEPTH without one.
 */
int cf_seccomp_match_current(const struct cf_seccomp *sc)
{
	const struct seccomp_filter *f = READ_ONCE(current->seccomp.filter);
	int depth;

	for (depth = 0; f; depth++) {
		if (depth >= CF_SECCOMP_MAX_DEPTH)
			return -ELOOP;
		if (cf_seccomp_is(f, sc))
			return depth;
		f = CF_SF_MEMBER(f, const struct seccomp_filter *const, prev);
	}
	return -ENOENT;
}

/**
 * cf_seccomp_epoch_answer() - the epoch's program's answer to current's call
 * @sc: the program of current's bound epoch
 * @sd: set to the call as seccomp saw it (current's syscall registers)
 *
 * BPF program context (after __secure_computing() skipped the call), never
 * sleeps. The epoch's filter is found in current's chain by its
 * instructions, wherever it is in the chain (a task may stack filters of
 * its own above it), and run alone: whatever the task's own filters
 * answer is theirs, not the epoch's. Only calls that were skipped come
 * here: a refused call pays one more run of the epoch's filter.
 *
 * Return: the epoch's filter's SECCOMP_RET_* value, or SECCOMP_RET_ALLOW
 * when current's chain does not hold it.
 */
u32 cf_seccomp_epoch_answer(const struct cf_seccomp *sc,
			    struct seccomp_data *sd)
{
	const struct seccomp_filter *f = READ_ONCE(current->seccomp.filter);
	struct pt_regs *regs = task_pt_regs(current);
	const struct bpf_prog *prog = NULL;
	unsigned long args[6];
	int i, depth;

	for (depth = 0; f && depth < CF_SECCOMP_MAX_DEPTH; depth++) {
		prog = CF_SF_MEMBER(f, const struct bpf_prog *const, prog);
		if (cf_seccomp_same(prog, sc))
			break;
		f = CF_SF_MEMBER(f, const struct seccomp_filter *const, prev);
	}
	if (!f || depth == CF_SECCOMP_MAX_DEPTH)
		return SECCOMP_RET_ALLOW;
	/* as the kernel's populate_seccomp_data() */
	sd->nr = syscall_get_nr(current, regs);
	sd->arch = syscall_get_arch(current);
	syscall_get_arguments(current, regs, args);
	for (i = 0; i < 6; i++)
		sd->args[i] = args[i];
	sd->instruction_pointer = KSTK_EIP(current);
	return bpf_prog_run(prog, sd);
}
