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

/* genetlink's pre_doit takes the split op since 6.2 */
#if CF_KSERIES >= 602
#define cf_genl_pre_ops genl_split_ops
#else
#define cf_genl_pre_ops genl_ops
#endif

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
