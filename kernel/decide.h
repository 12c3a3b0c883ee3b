/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every decision (decide.c): delegation, exec binding, exercise.
 */
#ifndef _CAPFENCE_DECIDE_H
#define _CAPFENCE_DECIDE_H

#include <linux/netlink.h>
#include "cred.h"
#include "stats.h"
#include "token.h"

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

/* an exec binding: the epoch and tokens the caller's next exec binds */
struct cf_exec_binding {
	u64 epoch_id;
	u32 n;				/* tokens */
	const u8 *tok[CAPFENCE_MAX_TOKENS];	/* canonical token bytes */
	size_t len[CAPFENCE_MAX_TOKENS];
	/* results */
	enum capfence_reason reason;
	struct cf_token token;		/* the token rejected, if any */
	u64 fence;
};

const struct cred *cf_get_task_cred(pid_t pid);
int cf_delegate(struct cf_delegation *d, struct netlink_ext_ack *extack);
int cf_exec_bind(struct cf_exec_binding *b, struct netlink_ext_ack *extack);
void cf_decision_publish(enum capfence_reason r, const struct cf_token *t,
			 pid_t pid, u64 epoch, u64 fence, bool dry_run);
struct sock;
void cf_memo_sock_note(struct cf_cred *e, const struct sock *sk,
		       struct cf_grant *g, unsigned long gen);
int cf_exercise(struct cf_cred *e, struct cf_target *t,
		struct cf_grant **admitted);
int cf_refuse_mediated(struct cf_cred *e, u8 class_id, const char *what);
union bpf_attr;
int cf_bpf_refuse_skipper(int cmd, const union bpf_attr *attr,
			  bool lsm_prog_skips);

/* names a tracked object in @t for an audit record; @buf: PATH_MAX or NULL */
typedef void (*cf_name_fn)(struct cf_target *t, const void *obj, char *buf);
int cf_exercise_recheck(struct cf_grant *const *g, u32 n, cf_name_fn name,
			const void *obj);
int cf_exercise_refuse(const struct cf_target *t, const struct cf_grant *g);
int cf_exercise_attach(struct cf_cred *tracer, const struct cf_cred *tracee,
		       int seen);
int cf_exercise_personality(struct cf_cred *mine, const struct cf_cred *theirs);
void cf_syscall_skipped(const struct cred *cred);
bool cf_admits(const struct cf_cred *e, const struct cf_target *t);

/**
 * cf_exercise_admitted() - count allowed exercises whose object is tracked
 * @n: how many (an open for reading and writing is two)
 *
 * An exercise judged with cf_target.tracks set is not counted when it is
 * allowed: its edge counts it here once the file or socket it admitted is
 * tracked, so an operation that then fails closed (tracking failed) is
 * never counted allowed, and no count is ever taken back. What the open
 * memo (fsmemo.c) answers without judging is counted here too. Inline:
 * one per-CPU add.
 */
static inline void cf_exercise_admitted(unsigned int n)
{
	cf_stats_exercises_ok(n);
}

/**
 * cf_exercise_admitted_if() - count an operation's allows if it proceeds
 * @err: the operation's result so far
 * @n: the exercises under a grant it was allowed (cf_target.tracks)
 *
 * An operation judged several times (an open for reading and writing, a
 * dual-stack bind, an unspecified peer) is counted allowed only when
 * every judgement allowed it.
 *
 * Return: @err.
 */
static inline int cf_exercise_admitted_if(int err, unsigned int n)
{
	if (!err)
		cf_exercise_admitted(n);
	return err;
}

#endif /* _CAPFENCE_DECIDE_H */
