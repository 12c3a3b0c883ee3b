// SPDX-License-Identifier: GPL-2.0
/*
 * Audit records for exercise denials and delegation rejections, and the
 * names of classes and reasons as they appear in records and messages.
 *
 * Records have type CAPFENCE_AUDIT_TYPE and key=value fields, starting with
 * lsm=capfence; untrusted strings (comm, paths) are escaped here.
 * Exercise denials, the epoch's syscall-policy refusals (op=syscall: the
 * kernel writes none of its own for them) and credential-limit refusals
 * are recorded within the
 * budgets of sandbox.c, per sandbox and per host, so that no sandbox can
 * use up another's records; every denial left without a record is counted
 * and reported in a record of its own (op=suppressed).
 *
 * Why a queue: the audit core drops a record made without sleeping
 * (GFP_ATOMIC, as BPF program context must) whenever its backlog is over
 * audit_backlog_limit, while the kernel's own records (AUDIT_SECCOMP of a
 * task's logging filter, AUDIT_USER sent with CAP_AUDIT_WRITE) wait for
 * room; so one sandbox flooding those cost another its records. A record
 * is formatted at the event (an atomic allocation, charged to the task's
 * memory cgroup) into the module's queue, and written by the module's own
 * ordered workqueue with GFP_KERNEL, which waits for room up to
 * audit_backlog_wait_time like the kernel's records: a flood delays
 * capfence's records, and only that wait expiring loses one (lost=). The
 * queue's bound is sandbox.c's (cf_sandbox_audit_hold()).
 *
 * Locking: none of our own. The queue is an llist: records are added from
 * any context and taken whole by the one work item (never concurrent with
 * itself), which writes them in order; each record holds a reference on
 * its sandbox. Callable from BPF program context, except
 * cf_audit_delegate() (process context, written at once). The report of
 * records not written is sandbox.c's own (its report work, on the same
 * workqueue).
 */
#include <linux/audit.h>
#include <linux/llist.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "audit.h"
#include "class.h"
#include "constraint.h"
#include "epoch.h"
#include "fleet.h"
#include "sandbox.h"
#include "seccomp.h"
#include "compat.h"

static const char *const cf_reason_names[] = {
	[CAPFENCE_R_OK] = "ok",
	[CAPFENCE_R_NO_TASK] = "no_task",
	[CAPFENCE_R_NOT_BOUND] = "not_bound",
	[CAPFENCE_R_FORGED] = "forged",
	[CAPFENCE_R_EPOCH_MISMATCH] = "epoch_mismatch",
	[CAPFENCE_R_CLASS_DENIED] = "class_denied",
	[CAPFENCE_R_REVOKED] = "revoked",
	[CAPFENCE_R_FENCED] = "fenced",
	[CAPFENCE_R_NOT_HELD] = "not_held",
	[CAPFENCE_R_NO_CAPABILITY] = "no_capability",
	[CAPFENCE_R_CONSTRAINT] = "constraint",
	[CAPFENCE_R_BYPASS] = "bypass",
	[CAPFENCE_R_BORROW] = "borrow",
	[CAPFENCE_R_FLEET_STALE] = "fleet_stale",
	[CAPFENCE_R_SECCOMP] = "seccomp",
};

static const int cf_reason_errnos[] = {
	[CAPFENCE_R_OK] = 0,
	[CAPFENCE_R_NO_TASK] = ESRCH,
	[CAPFENCE_R_NOT_BOUND] = EINVAL,
	[CAPFENCE_R_FORGED] = EBADMSG,
	[CAPFENCE_R_EPOCH_MISMATCH] = ESTALE,
	[CAPFENCE_R_CLASS_DENIED] = EACCES,
	[CAPFENCE_R_REVOKED] = EKEYREVOKED,
	[CAPFENCE_R_FENCED] = EKEYEXPIRED,
	[CAPFENCE_R_NOT_HELD] = ENOKEY,
	[CAPFENCE_R_NO_CAPABILITY] = EACCES,
	[CAPFENCE_R_CONSTRAINT] = EACCES,
	[CAPFENCE_R_BYPASS] = EACCES,
	[CAPFENCE_R_BORROW] = EACCES,
	[CAPFENCE_R_FLEET_STALE] = ENOLINK,
	[CAPFENCE_R_SECCOMP] = EACCES,
};

static_assert(ARRAY_SIZE(cf_reason_names) == __CAPFENCE_R_MAX);
static_assert(ARRAY_SIZE(cf_reason_errnos) == __CAPFENCE_R_MAX);

/**
 * cf_reason_name() - stable name of a reason
 * @r: reason
 *
 * Return: the name used in audit records, events and the CLI.
 */
static const char *cf_reason_name(enum capfence_reason r)
{
	return r <= CAPFENCE_R_MAX ? cf_reason_names[r] : "unknown";
}

/**
 * cf_reason_errno() - the errno a rejection or denial returns
 * @r: reason
 *
 * Return: a negative errno, 0 for CAPFENCE_R_OK.
 */
int cf_reason_errno(enum capfence_reason r)
{
	return r <= CAPFENCE_R_MAX ? -cf_reason_errnos[r] : -EINVAL;
}

/*
 * A record formatted at the event, waiting for room in the audit backlog.
 * CF_AUDIT_REC_BASE holds every record's fixed fields (under 400 bytes);
 * a path adds twice its length (hex).
 */
struct cf_audit_rec {
	struct llist_node node;
	struct cf_sandbox *sb;		/* a reference */
	unsigned int len, size;
	char text[];
};

#define CF_AUDIT_REC_BASE	512

static LLIST_HEAD(cf_audit_queue);
static bool cf_audit_stopping;
static void cf_audit_write(struct work_struct *work);
static DECLARE_WORK(cf_audit_work, cf_audit_write);

static __printf(2, 3) void cf_rec_printf(struct cf_audit_rec *r,
					 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->len += vscnprintf(r->text + r->len, r->size - r->len, fmt, ap);
	va_end(ap);
}

/*
 * The calling task's name without task_lock(): hooks run with other
 * tasks' locks held (ptrace_attach holds the tracee's task_lock across
 * security_ptrace_access_check), and taking ours there would order two
 * task locks against each other. comm is always NUL-terminated; a
 * concurrent rename can at worst mix old and new bytes.
 */
static void cf_current_comm(char comm[TASK_COMM_LEN])
{
	memcpy(comm, current->comm, TASK_COMM_LEN);
	comm[TASK_COMM_LEN - 1] = '\0';
}

/*
 * The audit core's escaping helper is not exported: quote plain strings,
 * hex-encode any with spaces, quotes or control bytes, as auditd expects.
 */
static void cf_audit_str(struct cf_audit_rec *r, const char *key,
			 const char *s, size_t len)
{
	size_t i, chunk;

	for (i = 0; i < len; i++)
		if (s[i] == '"' || s[i] < 0x21 || s[i] > 0x7e)
			break;
	if (i == len) {
		cf_rec_printf(r, " %s=\"%.*s\"", key, (int)len, s);
		return;
	}
	cf_rec_printf(r, " %s=", key);
	for (i = 0; i < len; i += chunk) {
		chunk = min_t(size_t, len - i, 32);
		cf_rec_printf(r, "%*phN", (int)chunk, s + i);
	}
}

static void cf_audit_target(struct cf_audit_rec *r, const struct cf_target *t)
{
	if (t->what)
		cf_rec_printf(r, " target=%s", t->what);
	else if (t->path)
		cf_audit_str(r, "target", t->path, t->path_len);
	else if (t->family == 4)
		cf_rec_printf(r, " target=%pI4:%u", t->addr, t->port);
	else if (t->family == CAPFENCE_FAMILY_VSOCK)
		cf_rec_printf(r, " target=cid:%u:%u",
			      get_unaligned_be32(t->addr),
			      get_unaligned_be32(t->addr + 4));
	else
		cf_rec_printf(r, " target=[%pI6c]:%u", t->addr, t->port);
}

/*
 * Start a record of the calling task's sandbox @sb, within its budgets and
 * the queue's bound (sandbox.c), with room for @extra bytes past the fixed
 * fields: NULL when it is not to be written, counted either way. Never
 * sleeps.
 */
static struct cf_audit_rec *cf_audit_begin(struct cf_sandbox *sb, size_t extra)
{
	size_t size = CF_AUDIT_REC_BASE + extra;
	struct cf_audit_rec *r;

	if (!cf_sandbox_audit_admit(sb) || !cf_sandbox_audit_hold(sb))
		return NULL;
	/* the caller's credential holds @sb: the reference never fails */
	r = kmalloc(struct_size(r, text, size),
		    GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!r || !refcount_inc_not_zero(&sb->ref)) {
		kfree(r);
		cf_sandbox_audit_release(sb);
		cf_sandbox_audit_lost(sb, false);
		return NULL;
	}
	r->sb = sb;
	r->len = 0;
	r->size = size;
	r->text[0] = '\0';
	return r;
}

/* Queue @r for the audit workqueue; counted as written from now on. */
static void cf_audit_commit(struct cf_audit_rec *r)
{
	cf_sandbox_audit_written(r->sb);
	llist_add(&r->node, &cf_audit_queue);
	queue_work(cf_records_wq, &cf_audit_work);
}

/*
 * The work item: every queued record, oldest first, each waiting for room
 * in the backlog as the kernel's own records do (never at module exit). A
 * record the audit subsystem refuses is moved from the sandbox's written
 * records to its lost ones, and reported.
 */
static void cf_audit_write(struct work_struct *work)
{
	struct llist_node *n = llist_reverse_order(llist_del_all(&cf_audit_queue));
	struct cf_audit_rec *r, *tmp;
	struct audit_buffer *ab;

	llist_for_each_entry_safe(r, tmp, n, node) {
		ab = audit_log_start(NULL, READ_ONCE(cf_audit_stopping) ?
				     GFP_NOWAIT | __GFP_NOWARN : GFP_KERNEL,
				     CAPFENCE_AUDIT_TYPE);
		if (ab) {
			audit_log_format(ab, "%s", r->text);
			audit_log_end(ab);
		} else {
			cf_sandbox_audit_lost(r->sb, true);
		}
		cf_sandbox_audit_release(r->sb);
		cf_sandbox_put(r->sb);
		kfree(r);
		cond_resched();
	}
}

/**
 * cf_audit_init() - make the workqueue that writes the records
 *
 * Before any hook can run. Return: 0 or -ENOMEM.
 */
int cf_audit_init(void)
{
	return cf_sandbox_init();
}

/**
 * cf_audit_exit() - write what is queued, stop reporting, free the queue
 *
 * Module exit, after the hooks are gone: nothing queues records any more.
 * What is queued is written without waiting for room (a record already
 * waiting keeps waiting, at most audit_backlog_wait_time); then the report
 * work is cancelled and the workqueue destroyed (cf_sandbox_exit()).
 */
void cf_audit_exit(void)
{
	WRITE_ONCE(cf_audit_stopping, true);
	flush_work(&cf_audit_work);
	/* nothing is left; should anything be, the work frees it */
	cf_audit_write(&cf_audit_work);
	cf_sandbox_exit();
}

/**
 * cf_audit_exercise() - record an exercise denial, within the budgets
 * @sb: the calling task's sandbox
 * @t: the denied operation
 * @epoch: the task's bound epoch
 * @r: reason
 * @cap_id: the capability that was closest to admitting @t, or 0
 * @fence: fence value the decision was made at
 * @learn: a log rule allowed it: op=learn, @r and errno what a refusal
 *	   would have been
 *
 * The record names the calling task's sandbox @sb (cf_current_sandbox());
 * a denial left without a record is counted for it and reported
 * (sandbox.c).
 */
void cf_audit_exercise(struct cf_sandbox *sb, const struct cf_target *t,
		       u64 epoch, enum capfence_reason r, u64 cap_id, u64 fence,
		       bool learn)
{
	char comm[TASK_COMM_LEN];
	struct cf_audit_rec *rec;

	rec = cf_audit_begin(sb, t->path && !t->what ? 2 * t->path_len : 0);
	if (!rec)
		return;
	cf_rec_printf(rec, "lsm=capfence op=%s reason=%s errno=%d pid=%d",
		      learn ? "learn" : "exercise",
		      cf_reason_name(r), t->seen ?: EACCES,
		      task_tgid_nr(current));
	cf_current_comm(comm);
	cf_audit_str(rec, "comm", comm, strnlen(comm, sizeof(comm)));
	cf_rec_printf(rec, " epoch=%llu class=%s", epoch,
		      cf_class(t->class_id)->name);
	cf_audit_target(rec, t);
	cf_rec_printf(rec, " cap_id=%016llx fence=%llu sandbox=%llu fleet_rev=%llu",
		      cap_id, fence, sb->id, cf_fleet_rev());
	cf_audit_commit(rec);
}

/**
 * cf_audit_cred_limit() - record a credential change refused at the limit
 * @sb: the sandbox at its limit (the calling task's)
 * @limit: the limit
 *
 * Within @sb's budgets, as exercise denials. BPF program context.
 */
void cf_audit_cred_limit(struct cf_sandbox *sb, unsigned int limit)
{
	char comm[TASK_COMM_LEN];
	struct cf_audit_rec *rec;

	rec = cf_audit_begin(sb, 0);
	if (!rec)
		return;
	cf_rec_printf(rec, "lsm=capfence op=cred_limit errno=%d pid=%d",
		      ENOMEM, task_tgid_nr(current));
	cf_current_comm(comm);
	cf_audit_str(rec, "comm", comm, strnlen(comm, sizeof(comm)));
	cf_rec_printf(rec, " epoch=%llu sandbox=%llu creds=%d limit=%u fleet_rev=%llu",
		      sb->epoch_id, sb->id, atomic_read(&sb->creds), limit,
		      cf_fleet_rev());
	cf_audit_commit(rec);
}

/**
 * cf_audit_syscall() - record a call the epoch's syscall policy refused
 * @sb: the calling task's sandbox
 * @epoch: its bound epoch
 * @sd: the call
 * @answer: the epoch's program's answer (SECCOMP_RET_ERRNO and the errno)
 *
 * Within @sb's budgets, as exercise denials: the epoch's program is loaded
 * without SECCOMP_FILTER_FLAG_LOG, so this record is the refusal's only
 * one. BPF program context.
 */
void cf_audit_syscall(struct cf_sandbox *sb, u64 epoch,
		      const struct seccomp_data *sd, u32 answer)
{
	char comm[TASK_COMM_LEN];
	struct cf_audit_rec *rec;

	rec = cf_audit_begin(sb, 0);
	if (!rec)
		return;
	cf_rec_printf(rec, "lsm=capfence op=syscall reason=%s errno=%u pid=%d",
		      cf_reason_name(CAPFENCE_R_SECCOMP),
		      (answer & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO ?
		      answer & SECCOMP_RET_DATA : EACCES,
		      task_tgid_nr(current));
	cf_current_comm(comm);
	cf_audit_str(rec, "comm", comm, strnlen(comm, sizeof(comm)));
	cf_rec_printf(rec, " epoch=%llu syscall=%d arch=%x ip=0x%llx code=0x%x",
		      epoch, sd->nr, sd->arch, sd->instruction_pointer, answer);
	cf_rec_printf(rec, " sandbox=%llu fleet_rev=%llu", sb->id,
		      cf_fleet_rev());
	cf_audit_commit(rec);
}

/**
 * cf_audit_bind() - record an exec binding to or bound to a syscall policy
 * @sb: the sandbox the exec makes or runs in, or NULL
 * @e: the epoch
 * @r: CAPFENCE_R_OK (bound) or CAPFENCE_R_SECCOMP (exec refused)
 * @depth: where the epoch's program is in the task's filter chain (0: the
 *	   newest filter), or a negative errno when it is not found
 *
 * Names the epoch, its program's digest and its depth: a depth above 0
 * says the task stacked filters of its own above it, whose answers are
 * theirs (capfence's op=syscall records are the epoch's program's only).
 * Within @sb's budgets. BPF program context.
 */
void cf_audit_bind(struct cf_sandbox *sb, const struct cf_epoch *e,
		   enum capfence_reason r, int depth)
{
	char comm[TASK_COMM_LEN];
	struct cf_audit_rec *rec;

	sb = sb ?: &cf_host_sandbox;
	rec = cf_audit_begin(sb, 0);
	if (!rec)
		return;
	cf_rec_printf(rec, "lsm=capfence op=bind reason=%s errno=%d pid=%d",
		      cf_reason_name(r), -cf_reason_errno(r),
		      task_tgid_nr(current));
	cf_current_comm(comm);
	cf_audit_str(rec, "comm", comm, strnlen(comm, sizeof(comm)));
	cf_rec_printf(rec, " epoch=%llu", e->id);
	if (e->sc)
		cf_rec_printf(rec, " seccomp=%*phN insns=%u", 32,
			      e->sc->digest, e->sc->len);
	else
		cf_rec_printf(rec, " seccomp=none");
	if (depth >= 0)
		cf_rec_printf(rec, " depth=%d", depth);
	else
		cf_rec_printf(rec, " depth=none");
	cf_rec_printf(rec, " sandbox=%llu fleet_rev=%llu", sb->id,
		      cf_fleet_rev());
	cf_audit_commit(rec);
}

/*
 * A record outside every sandbox's budget, begun: "lsm=capfence op=@op
 * reason=@reason errno=@err pid= comm=", in a buffer of its own that
 * cf_host_rec_end() writes and frees. NULL when it cannot be allocated.
 */
static struct cf_audit_rec *cf_host_rec_begin(gfp_t gfp, const char *op,
					      const char *reason, int err)
{
	char comm[TASK_COMM_LEN];
	struct cf_audit_rec *rec;

	rec = kmalloc(struct_size(rec, text, CF_AUDIT_REC_BASE), gfp);
	if (!rec)
		return NULL;
	rec->len = 0;
	rec->size = CF_AUDIT_REC_BASE;
	cf_rec_printf(rec, "lsm=capfence op=%s reason=%s errno=%d pid=%d",
		      op, reason, err, task_tgid_nr(current));
	cf_current_comm(comm);
	cf_audit_str(rec, "comm", comm, strnlen(comm, sizeof(comm)));
	return rec;
}

/* Write @rec, begun by cf_host_rec_begin() with @gfp, and free it. */
static void cf_host_rec_end(struct cf_audit_rec *rec, gfp_t gfp)
{
	struct audit_buffer *ab;

	ab = audit_log_start(audit_context(), gfp, CAPFENCE_AUDIT_TYPE);
	if (ab) {
		audit_log_format(ab, "%s", rec->text);
		audit_log_end(ab);
	}
	kfree(rec);
}

/**
 * cf_audit_delegate() - record a forged or cross-epoch delegation
 * @pid: target task (the record's pid and comm are the caller's)
 * @epoch: the target's bound epoch
 * @token_epoch: the token's epoch (0 when it could not be decoded)
 * @class_id: the token's class (0 when unknown)
 * @r: reason
 * @cap_id: the token's cap_id (0 when unknown)
 * @fence: fence value the decision was made at
 *
 * Process context: the orchestrator's request, outside every budget,
 * written at once (waiting for room like the kernel's own records).
 */
void cf_audit_delegate(pid_t pid, u64 epoch, u64 token_epoch, u8 class_id,
		       enum capfence_reason r, u64 cap_id, u64 fence)
{
	struct cf_audit_rec *rec;

	rec = cf_host_rec_begin(GFP_KERNEL, "delegate", cf_reason_name(r),
				-cf_reason_errno(r));
	if (!rec)
		return;
	cf_rec_printf(rec, " target_pid=%d epoch=%llu token_epoch=%llu",
		      pid, epoch, token_epoch);
	cf_rec_printf(rec, " class=%s cap_id=%016llx fence=%llu fleet_rev=%llu",
		      cf_class(class_id)->name, cap_id, fence, cf_fleet_rev());
	cf_host_rec_end(rec, GFP_KERNEL);
}

/**
 * cf_audit_bpf() - record a refused BPF program load
 * @what: its type and attach type, "prog_type=... attach=..."
 * @btf_id: the BTF id of the function or hook it was to attach to
 *
 * BPF program context (no sleeping): written at once, GFP_ATOMIC, outside
 * every sandbox's budget (only a task that may load tracing programs can
 * cause it).
 */
void cf_audit_bpf(const char *what, u32 btf_id)
{
	struct cf_audit_rec *rec;

	rec = cf_host_rec_begin(GFP_ATOMIC, "bpf", "bypass", EACCES);
	if (!rec)
		return;
	cf_rec_printf(rec, " %s", what);
	cf_rec_printf(rec, " attach_btf_id=%u fleet_rev=%llu", btf_id,
		      cf_fleet_rev());
	cf_host_rec_end(rec, GFP_ATOMIC);
}
