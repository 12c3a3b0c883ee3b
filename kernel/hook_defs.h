/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one list of capfence's hooks, included with CF_KFUNC and CF_HOOK
 * defined (as the kernel's lsm_hook_defs.h is): no include guard.
 *
 * CF_KFUNC(fn) names every kfunc the BPF programs of lsm/ call (kfunc.c
 * defines capfence_<fn>; the list becomes the BTF kfunc set). CF_HOOK(hook,
 * fn) names every LSM hook capfence attaches to and the kfunc its program
 * calls: the module requires exactly these links at attach, and checks
 * that each link's program calls that kfunc (hooks.c). The CLI attaches
 * every program of the BPF object whose hook the running kernel has.
 * Adding a hook: a CF_HOOK line, its kfunc (and a CF_KFUNC line if it is
 * new), its program in lsm/, and "used" in its row of the hook inventory
 * in docs/threat-model.md (inventory_test holds the attached hooks to it).
 * CF_KFUNC_UNTRUSTED(fn) is a kfunc of a hook whose arguments the kernel
 * does not vouch for (6.12's untrusted_lsm_hooks): CF_KFUNC unless the
 * includer defines it. Lines under #ifdef depend on compat.h, which the
 * includer (hooklist.h) includes first. CF_FEXIT(func, fn) names a kernel
 * function capfence's BPF fexit (tracing) program runs after, and the
 * kfunc it calls: required at attach like a hook, with its row in the
 * same inventory (every includer defines CF_FEXIT).
 */
#ifndef CF_KFUNC_UNTRUSTED
#define CF_KFUNC_UNTRUSTED(fn) CF_KFUNC(fn)
#endif
CF_KFUNC(cred_prepare)
CF_KFUNC(cred_alloc_blank)
CF_KFUNC(cred_transfer)
CF_KFUNC(cred_free)
CF_KFUNC(bprm_creds_for_exec)
CF_KFUNC(socket_connect)
CF_KFUNC(socket_bind)
CF_KFUNC(socket_sendmsg)
CF_KFUNC(socket_recvmsg)
CF_KFUNC(socket_listen)
CF_KFUNC(socket_accept)
CF_KFUNC(socket_getsockopt)
CF_KFUNC(socket_setsockopt)
CF_KFUNC(socket_create)
CF_KFUNC(sctp_bind_connect)
CF_KFUNC(sk_clone_security)
CF_KFUNC_UNTRUSTED(sk_free_security)
CF_KFUNC(sctp_sk_clone)
CF_KFUNC(socket_sock_rcv_skb)
CF_KFUNC(ptrace_access_check)
CF_KFUNC(ptrace_traceme)
CF_KFUNC(file_open)
CF_KFUNC(file_permission)
CF_KFUNC_UNTRUSTED(file_free_security)
CF_KFUNC(path_entry)
CF_KFUNC(path_attr)
CF_KFUNC(file_truncate)
CF_KFUNC(file_ioctl)
CF_KFUNC(inode_setattr)
CF_KFUNC(path_link)
CF_KFUNC(path_rename)
CF_KFUNC(path_chroot)
CF_KFUNC(sb_mount)
CF_KFUNC(sb_umount)
CF_KFUNC(sb_remount)
CF_KFUNC(sb_pivotroot)
CF_KFUNC(move_mount)
CF_KFUNC(inode_setxattr)
CF_KFUNC(inode_removexattr)
CF_KFUNC(inode_create)
CF_KFUNC(inode_unlink)
CF_KFUNC(mmap_file)
CF_KFUNC(file_mprotect)
CF_KFUNC(bprm_creds_from_file)
CF_KFUNC(seccomp_skipped)
CF_KFUNC(uring_override_creds)
CF_KFUNC(bpf)

CF_HOOK(cred_prepare, cred_prepare)
CF_HOOK(cred_alloc_blank, cred_alloc_blank)
CF_HOOK(cred_transfer, cred_transfer)
CF_HOOK(cred_free, cred_free)
CF_HOOK(bprm_creds_for_exec, bprm_creds_for_exec)
CF_HOOK(socket_connect, socket_connect)
CF_HOOK(socket_bind, socket_bind)
CF_HOOK(socket_sendmsg, socket_sendmsg)
CF_HOOK(socket_recvmsg, socket_recvmsg)
CF_HOOK(socket_listen, socket_listen)
CF_HOOK(socket_accept, socket_accept)
CF_HOOK(socket_getsockopt, socket_getsockopt)
CF_HOOK(socket_setsockopt, socket_setsockopt)
CF_HOOK(socket_create, socket_create)
CF_HOOK(sctp_bind_connect, sctp_bind_connect)
CF_HOOK(sk_clone_security, sk_clone_security)
CF_HOOK(sk_free_security, sk_free_security)
CF_HOOK(sctp_sk_clone, sctp_sk_clone)
CF_HOOK(socket_sock_rcv_skb, socket_sock_rcv_skb)
CF_HOOK(ptrace_access_check, ptrace_access_check)
CF_HOOK(ptrace_traceme, ptrace_traceme)
CF_HOOK(file_open, file_open)
CF_HOOK(file_permission, file_permission)
CF_HOOK(file_free_security, file_free_security)
CF_HOOK(path_mknod, path_entry)
CF_HOOK(path_mkdir, path_entry)
CF_HOOK(path_rmdir, path_entry)
CF_HOOK(path_unlink, path_entry)
CF_HOOK(path_symlink, path_entry)
CF_HOOK(path_truncate, path_attr)
#ifdef CF_HAVE_FILE_TRUNCATE
CF_HOOK(file_truncate, file_truncate)
#else
CF_HOOK(inode_setattr, inode_setattr)
#endif
/* ioctl(): the file's grants rechecked (compat: 32-bit callers) */
CF_HOOK(file_ioctl, file_ioctl)
CF_HOOK(file_ioctl_compat, file_ioctl)
CF_HOOK(path_chmod, path_attr)
CF_HOOK(path_chown, path_attr)
CF_HOOK(path_link, path_link)
CF_HOOK(path_rename, path_rename)
CF_HOOK(path_chroot, path_chroot)
CF_HOOK(sb_mount, sb_mount)
CF_HOOK(sb_umount, sb_umount)
CF_HOOK(sb_remount, sb_remount)
CF_HOOK(sb_pivotroot, sb_pivotroot)
CF_HOOK(move_mount, move_mount)
CF_HOOK(inode_setxattr, inode_setxattr)
CF_HOOK(inode_removexattr, inode_removexattr)
#ifdef CF_HAVE_INODE_SET_ACL
CF_HOOK(inode_set_acl, inode_setxattr)
CF_HOOK(inode_remove_acl, inode_removexattr)
#endif
/* POSIX message queue names: mq_open(O_CREAT), mq_unlink() */
CF_HOOK(inode_create, inode_create)
CF_HOOK(inode_unlink, inode_unlink)
CF_HOOK(mmap_file, mmap_file)
CF_HOOK(file_mprotect, file_mprotect)
CF_HOOK(bprm_creds_from_file, bprm_creds_from_file)
CF_HOOK(uring_override_creds, uring_override_creds)
/* a BPF program that would skip every LSM: refused at load */
CF_HOOK(bpf, bpf)
/* a call seccomp skipped: the epoch's refusals, recorded within the budgets */
CF_FEXIT(__secure_computing, seccomp_skipped)

#undef CF_KFUNC_UNTRUSTED
