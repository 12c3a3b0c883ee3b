/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels capfence.ko builds for (Debian 12's 6.1,
 * Debian 13's 6.12), in one place. Each entry says why it exists.
 */
#ifndef _CAPFENCE_COMPAT_H
#define _CAPFENCE_COMPAT_H

#include <linux/version.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>

/* the kernel series built for, as one number: 601 for 6.1, 612 for 6.12 */
#define CF_KSERIES (LINUX_VERSION_MAJOR * 100 + LINUX_VERSION_PATCHLEVEL)

/*
 * An exec's open of its program or interpreter: __FMODE_EXEC. Before 6.8
 * uselib() set that flag too, and its library stays mapped long after any
 * exec (an outside round's stale entry refused the next exec of whichever
 * task reused the task_struct, unbound ones included); there every exec
 * opens its files with in_execve set (bprm_execve()). From 6.8 the program
 * is opened before in_execve is set, and uselib() no longer sets the flag.
 */
#if CF_KSERIES >= 608
#define cf_exec_open(file) (((file)->f_flags & __FMODE_EXEC) != 0)
#else
#define cf_exec_open(file) \
	(((file)->f_flags & __FMODE_EXEC) && current->in_execve)
#endif

/* 6.12 moved the unaligned accessors to <linux/unaligned.h> */
#if CF_KSERIES >= 612
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * pidfds are files of pidfs, opened through file_open, since 6.9 (before,
 * anonymous inodes that pass no open hook): its magic, from
 * <uapi/linux/magic.h> where the kernel has it.
 */
#include <uapi/linux/magic.h>
#ifdef PID_FS_MAGIC
#define CF_PID_FS_MAGIC PID_FS_MAGIC
#else
#define CF_PID_FS_MAGIC 0x50494446
#endif

/*
 * The family's ops are generated (netlink_gen.c's capfence_nl_ops, by
 * ynl-gen-c.py) as split ops: a command's do and dump are two entries,
 * each with its policy and its pre_doit (or start). Split ops are 6.2's:
 * 6.1 gets the same table as full ops (cf_genl_split_to_full(), at
 * registration), one entry per command with the do's policy, which then
 * validates the dump too (6.1 refuses validate flags with resv_start_op
 * 0): a dump that takes nothing refuses the rest in its start. The
 * family's pre_doit calls the op's (cf_genl_split_pre_doit()).
 */
#include <net/genetlink.h>
#if CF_KSERIES >= 602
#define CF_GENL_FAMILY_OPS \
	.split_ops = capfence_nl_ops, .n_split_ops = ARRAY_SIZE(capfence_nl_ops)
#else
struct genl_split_ops {
	union {
		struct {
			int (*pre_doit)(const struct genl_split_ops *ops,
					struct sk_buff *skb,
					struct genl_info *info);
			int (*doit)(struct sk_buff *skb,
				    struct genl_info *info);
			void (*post_doit)(const struct genl_split_ops *ops,
					  struct sk_buff *skb,
					  struct genl_info *info);
		};
		struct {
			int (*start)(struct netlink_callback *cb);
			int (*dumpit)(struct sk_buff *skb,
				      struct netlink_callback *cb);
			int (*done)(struct netlink_callback *cb);
		};
	};
	const struct nla_policy *policy;
	unsigned int maxattr;
	u8 cmd;
	u8 internal_flags;
	u8 flags;
	u8 validate;
};

/* the pre_doit of the do op of @full's command in @split[@n], if any */
static inline int cf_genl_split_pre_doit(const struct genl_split_ops *split,
					 int n, const struct genl_ops *full,
					 struct sk_buff *skb,
					 struct genl_info *info)
{
	int i;

	for (i = 0; i < n; i++)
		if (split[i].cmd == full->cmd &&
		    (split[i].flags & GENL_CMD_CAP_DO))
			return split[i].pre_doit ?
			       split[i].pre_doit(&split[i], skb, info) : 0;
	return 0;
}

/* @full (room for @n) made from @split[@n]; returns the entries made */
static inline int cf_genl_split_to_full(const struct genl_split_ops *split,
					int n, struct genl_ops *full)
{
	const struct genl_split_ops *s;
	struct genl_ops *f;
	int i, j, made = 0;

	for (i = 0; i < n; i++) {
		s = &split[i];
		for (j = 0; j < made && full[j].cmd != s->cmd; j++)
			;
		f = &full[j];
		if (j == made) {
			made++;
			f->cmd = s->cmd;
			f->internal_flags = s->internal_flags;
			f->flags = s->flags &
				   ~(GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP);
		}
		if (s->flags & GENL_CMD_CAP_DO) {
			f->doit = s->doit;
			f->policy = s->policy;
			f->maxattr = s->maxattr;
			continue;
		}
		f->start = s->start;
		f->dumpit = s->dumpit;
		f->done = s->done;
	}
	return made;
}

#define CF_GENL_FAMILY_OPS .pre_doit = cf_genl_pre_doit

/*
 * 6.1's range pointer is not const; the generated ranges are (the
 * validator only reads them).
 */
#undef NLA_POLICY_FULL_RANGE
#define NLA_POLICY_FULL_RANGE(tp, _range) {			\
	.type = NLA_ENSURE_UINT_OR_BINARY_TYPE(tp),		\
	.validation_type = NLA_VALIDATE_RANGE_PTR,		\
	.range = (struct netlink_range_validation *)(_range),	\
}
#endif

/*
 * ynl-gen-c.py of 6.12 names an indexed-array's policy type
 * NLA_INDEXED_ARRAY, which no kernel defines: it is NLA_NESTED_ARRAY
 * (without a member policy: members are checked by their handlers).
 */
#define NLA_INDEXED_ARRAY NLA_NESTED_ARRAY

/* kfunc sets are BTF_KFUNCS_START since 6.9; 6.12 refuses a BTF_SET8 set */
/* a kfunc set may refuse a program at verification (6.9) */
#if CF_KSERIES >= 609
#define CF_HAVE_KFUNC_FILTER 1
#endif

#ifndef BTF_KFUNCS_START
#define BTF_KFUNCS_START(name) BTF_SET8_START(name)
#define BTF_KFUNCS_END(name) BTF_SET8_END(name)
#endif

/*
 * LSM hook arguments are trusted pointers on 6.12 (except the hooks in its
 * untrusted_lsm_hooks), so those kfuncs can demand them; 6.1 refuses
 * KF_TRUSTED_ARGS on hook arguments ("R1 must be referenced").
 */
#if CF_KSERIES >= 612
#define CF_KF_TRUSTED KF_TRUSTED_ARGS
#else
#define CF_KF_TRUSTED 0
#endif

/* ftruncate() and open(O_TRUNC) reach file_truncate, not path_truncate, since 6.2 */
#if CF_KSERIES >= 602
#define CF_HAVE_FILE_TRUNCATE 1
#endif

/*
 * POSIX ACL changes reach vfs_set_acl()/vfs_remove_acl() and the
 * inode_set_acl/inode_remove_acl hooks since 6.2, no longer
 * inode_setxattr/inode_removexattr
 */
#if CF_KSERIES >= 602
#define CF_HAVE_INODE_SET_ACL 1
#endif

/* bpf_link_get_from_fd() is exported in namespace BPF_INTERNAL on 6.12 */
#if CF_KSERIES >= 612
#define CF_IMPORT_BPF_INTERNAL 1
#endif

#endif /* _CAPFENCE_COMPAT_H */
