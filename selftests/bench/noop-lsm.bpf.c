// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of any BPF-LSM design: one program on each hook capfence uses,
 * each doing nothing but keep the verdict it was given (and a no-op fexit
 * where capfence has its fexit after seccomp's check). `bench-vm hooks`
 * attaches it (capfence.ko not loaded) to measure what the BPF-LSM
 * mechanism itself costs (trampoline, program entry and exit) under the
 * same loops as capfence's programs in lsm/capfence.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* the same bound as capfence's cf_verdict(): 6.12 refuses an unbounded verdict */
static __always_inline int noop_verdict(int err)
{
	long e = err;

	barrier_var(e);
	if (e > 0)
		return -13;
	barrier_var(e);
	if (e < -4095)
		return -13;
	return e;
}

SEC("lsm/cred_prepare")
int BPF_PROG(noop_cred_prepare, struct cred *new, const struct cred *old,
	     gfp_t gfp, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/cred_alloc_blank")
int BPF_PROG(noop_cred_alloc_blank, struct cred *cred, gfp_t gfp, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/cred_transfer")
int BPF_PROG(noop_cred_transfer, struct cred *new, const struct cred *old)
{
	return 0;
}

SEC("lsm/cred_free")
int BPF_PROG(noop_cred_free, struct cred *cred)
{
	return 0;
}

SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(noop_bprm_creds_for_exec, struct linux_binprm *bprm, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_connect")
int BPF_PROG(noop_socket_connect, struct socket *sock,
	     struct sockaddr *address, int addrlen, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_bind")
int BPF_PROG(noop_socket_bind, struct socket *sock, struct sockaddr *address,
	     int addrlen, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(noop_socket_sendmsg, struct socket *sock, struct msghdr *msg,
	     int size, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_recvmsg")
int BPF_PROG(noop_socket_recvmsg, struct socket *sock, struct msghdr *msg,
	     int size, int flags, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_listen")
int BPF_PROG(noop_socket_listen, struct socket *sock, int backlog, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_accept")
int BPF_PROG(noop_socket_accept, struct socket *sock, struct socket *newsock,
	     int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_getsockopt")
int BPF_PROG(noop_socket_getsockopt, struct socket *sock, int level,
	     int optname, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_setsockopt")
int BPF_PROG(noop_socket_setsockopt, struct socket *sock, int level,
	     int optname, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/socket_create")
int BPF_PROG(noop_socket_create, int family, int type, int protocol, int kern,
	     int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/sctp_bind_connect")
int BPF_PROG(noop_sctp_bind_connect, struct sock *sk, int optname,
	     struct sockaddr *address, int addrlen, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/sk_clone_security")
int BPF_PROG(noop_sk_clone_security, const struct sock *sk, struct sock *newsk)
{
	return 0;
}

SEC("lsm/sk_free_security")
int BPF_PROG(noop_sk_free_security, struct sock *sk)
{
	return 0;
}

SEC("lsm/sctp_sk_clone")
int BPF_PROG(noop_sctp_sk_clone, struct sctp_association *asoc,
	     struct sock *sk, struct sock *newsk)
{
	return 0;
}

SEC("lsm/socket_sock_rcv_skb")
int BPF_PROG(noop_socket_sock_rcv_skb, struct sock *sk, struct sk_buff *skb,
	     int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(noop_ptrace_access_check, struct task_struct *child,
	     unsigned int mode, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(noop_ptrace_traceme, struct task_struct *parent, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/file_open")
int BPF_PROG(noop_file_open, struct file *file, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/file_permission")
int BPF_PROG(noop_file_permission, struct file *file, int mask, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/file_ioctl")
int BPF_PROG(noop_file_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg, int ret)
{
	return ret;
}

SEC("lsm/file_ioctl_compat")
int BPF_PROG(noop_file_ioctl_compat, struct file *file, unsigned int cmd,
	     unsigned long arg, int ret)
{
	return ret;
}

/* 6.2+ only: left out of the load on older kernels (lsm_hooks.h) */
SEC("lsm/file_truncate")
int BPF_PROG(noop_file_truncate, struct file *file, int ret)
{
	return noop_verdict(ret);
}

/* before 6.2 only: left out where file_truncate exists (lsm_hooks.h) */
SEC("lsm/inode_setattr")
int BPF_PROG(noop_inode_setattr, struct dentry *dentry, struct iattr *attr,
	     int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/file_free_security")
int BPF_PROG(noop_file_free_security, struct file *file)
{
	return 0;
}

SEC("lsm/path_mknod")
int BPF_PROG(noop_path_mknod, const struct path *dir, struct dentry *dentry,
	     umode_t mode, unsigned int dev, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_mkdir")
int BPF_PROG(noop_path_mkdir, const struct path *dir, struct dentry *dentry,
	     umode_t mode, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_rmdir")
int BPF_PROG(noop_path_rmdir, const struct path *dir, struct dentry *dentry,
	     int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_unlink")
int BPF_PROG(noop_path_unlink, const struct path *dir, struct dentry *dentry,
	     int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_symlink")
int BPF_PROG(noop_path_symlink, const struct path *dir, struct dentry *dentry,
	     const char *old_name, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_truncate")
int BPF_PROG(noop_path_truncate, const struct path *path, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_chmod")
int BPF_PROG(noop_path_chmod, const struct path *path, umode_t mode, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_chown")
int BPF_PROG(noop_path_chown, const struct path *path, __u32 uid, __u32 gid,
	     int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_link")
int BPF_PROG(noop_path_link, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_rename")
int BPF_PROG(noop_path_rename, const struct path *old_dir,
	     struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, unsigned int flags, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/path_chroot")
int BPF_PROG(noop_path_chroot, const struct path *path, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/sb_mount")
int BPF_PROG(noop_sb_mount, const char *dev_name, const struct path *path,
	     const char *type, unsigned long flags, void *data, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/sb_umount")
int BPF_PROG(noop_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/sb_remount")
int BPF_PROG(noop_sb_remount, struct super_block *sb, void *mnt_opts, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(noop_sb_pivotroot, const struct path *old_path,
	     const struct path *new_path, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/move_mount")
int BPF_PROG(noop_move_mount, const struct path *from_path,
	     const struct path *to_path, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/inode_setxattr")
int BPF_PROG(noop_inode_setxattr, struct user_namespace *mnt_userns,
	     struct dentry *dentry, const char *name, const void *value,
	     size_t size, int flags, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(noop_inode_removexattr, struct user_namespace *mnt_userns,
	     struct dentry *dentry, const char *name, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/inode_create")
int BPF_PROG(noop_inode_create, struct inode *dir, struct dentry *dentry,
	     umode_t mode, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/inode_unlink")
int BPF_PROG(noop_inode_unlink, struct inode *dir, struct dentry *dentry,
	     int ret)
{
	return noop_verdict(ret);
}

/* 6.2 and later only: left out where the kernel lacks them */
SEC("lsm/inode_set_acl")
int BPF_PROG(noop_inode_set_acl, void *idmap, struct dentry *dentry,
	     const char *acl_name, void *kacl, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(noop_inode_remove_acl, void *idmap, struct dentry *dentry,
	     const char *acl_name, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/mmap_file")
int BPF_PROG(noop_mmap_file, struct file *file, unsigned long reqprot,
	     unsigned long prot, unsigned long flags, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/file_mprotect")
int BPF_PROG(noop_file_mprotect, struct vm_area_struct *vma,
	     unsigned long reqprot, unsigned long prot, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/bprm_creds_from_file")
int BPF_PROG(noop_bprm_creds_from_file, struct linux_binprm *bprm,
	     struct file *file, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/uring_override_creds")
int BPF_PROG(noop_uring_override_creds, const struct cred *new, int ret)
{
	return noop_verdict(ret);
}

SEC("lsm/bpf")
int BPF_PROG(noop_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	return noop_verdict(ret);
}

/* the twin of capfence's fexit after seccomp's check of a call */
SEC("fexit/__secure_computing")
int BPF_PROG(noop_secure_computing, const struct seccomp_data *sd, int ret)
{
	return 0;
}
