/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The open memo (fsmemo.c).
 */
#ifndef _CAPFENCE_FSMEMO_H
#define _CAPFENCE_FSMEMO_H

#include <linux/fs_struct.h>
#include <linux/path.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <uapi/linux/capfence.h>
#include "class.h"

struct cf_cred;
struct cf_grant;
struct cf_holdings;
struct cf_target;
struct file;

/*
 * What an open's decision started from (cf_fs_memo_begin()), with the
 * opener's mount namespace as the BPF program read it: its unique id and
 * its tree's event count.
 */
struct cf_fs_memo_start {
	unsigned int rename_seq;
	u64 fence;
	const struct cf_holdings *held;
	u64 ns_id;
	u64 ns_event;
};

/**
 * cf_task_root() - the calling task's root, read as d_path() reads it
 * @root: set to the root (no reference is taken: RCU keeps it alive)
 *
 * Inline: the open memo reads it on every hit. Caller holds RCU.
 *
 * Return: false for a task without a filesystem state.
 */
static __always_inline bool cf_task_root(struct path *root)
{
	struct fs_struct *fs = current->fs;
	unsigned int seq;

	if (!fs)
		return false;
	do {
		seq = read_seqcount_begin(&fs->seq);
		*root = fs->root;
	} while (read_seqcount_retry(&fs->seq, seq));
	return true;
}

extern bool cf_open_memo;

/**
 * cf_fs_memo_enabled() - is the open memo on (module parameter open_memo)?
 *
 * Inline: every mediated open asks.
 *
 * Return: false when an operator turned it off.
 */
static inline bool cf_fs_memo_enabled(void)
{
	return READ_ONCE(cf_open_memo);
}

bool cf_fs_memo_find(const struct cf_cred *e, const struct file *file,
		     u64 ns_id, u64 ns_event, u32 need, struct cf_grant *g[CF_OPEN_SLOTS]);
void cf_fs_memo_begin(const struct cf_cred *e, u64 ns_id, u64 ns_event,
		      struct cf_fs_memo_start *s);
void cf_fs_memo_fill(struct cf_cred *e, const struct cf_fs_memo_start *s,
		     const struct file *file, const struct cf_target *t,
		     struct cf_grant *g[CF_OPEN_SLOTS]);

#endif /* _CAPFENCE_FSMEMO_H */
