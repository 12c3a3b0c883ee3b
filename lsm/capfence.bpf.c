// SPDX-License-Identifier: GPL-2.0
/*
 * capfence BPF-LSM programs: one program per LSM hook, each forwarding its
 * arguments to a capfence.ko kfunc, and one fexit program after seccomp's
 * check of a call. No policy lives here.
 *
 * Context: LSM programs are non-sleepable and run under RCU; the kfuncs
 * they call never sleep. A non-zero `ret` means an earlier BPF program on
 * the same hook already denied: keep its verdict.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

extern int capfence_cred_prepare(struct cred *new, const struct cred *old) __ksym;
extern int capfence_cred_alloc_blank(struct cred *cred) __ksym;
extern void capfence_cred_transfer(struct cred *new, const struct cred *old) __ksym;
extern void capfence_cred_free(struct cred *cred) __ksym;
extern int capfence_bprm_creds_for_exec(struct linux_binprm *bprm) __ksym;
extern int capfence_socket_connect(struct socket *sock, struct sockaddr *address,
				   int addrlen) __ksym;
extern int capfence_socket_bind(struct socket *sock, struct sockaddr *address,
				int addrlen) __ksym;
extern int capfence_socket_sendmsg(struct socket *sock, struct msghdr *msg,
				   int size) __ksym;
extern int capfence_socket_recvmsg(struct socket *sock, struct msghdr *msg,
				   int size, int flags) __ksym;
extern int capfence_socket_listen(struct socket *sock, int backlog) __ksym;
extern int capfence_socket_accept(struct socket *sock,
				  struct socket *newsock) __ksym;
extern int capfence_socket_getsockopt(struct socket *sock, int level,
				      int optname) __ksym;
extern int capfence_socket_setsockopt(struct socket *sock, int level,
				      int optname) __ksym;
extern int capfence_bpf(int cmd, union bpf_attr *attr, unsigned int size) __ksym;
extern int capfence_socket_create(int family, int type, int protocol,
				  int kern) __ksym;
extern int capfence_sctp_bind_connect(struct sock *sk, int optname,
				      struct sockaddr *address,
				      int addrlen) __ksym;
extern void capfence_sk_clone_security(const struct sock *sk,
				       struct sock *newsk) __ksym;
extern void capfence_sk_free_security(struct sock *sk) __ksym;
extern void capfence_sctp_sk_clone(struct sock *sk, struct sock *newsk) __ksym;
extern int capfence_socket_sock_rcv_skb(struct sock *sk, struct sk_buff *skb) __ksym;
extern int capfence_ptrace_access_check(struct task_struct *child,
					unsigned int mode) __ksym;
extern int capfence_ptrace_traceme(struct task_struct *parent) __ksym;
extern int capfence_file_open(struct file *file, u64 ns_id, u64 ns_event) __ksym;
extern int capfence_file_permission(struct file *file, int mask) __ksym;
extern void capfence_file_free_security(struct file *file) __ksym;
extern int capfence_path_entry(const struct path *dir, struct dentry *dentry) __ksym;
extern int capfence_path_attr(const struct path *path) __ksym;
extern int capfence_file_truncate(struct file *file) __ksym;
extern int capfence_file_ioctl(struct file *file) __ksym;
extern int capfence_inode_setattr(struct iattr *attr) __ksym;
extern int capfence_path_link(struct dentry *old_dentry, const struct path *new_dir,
			      struct dentry *new_dentry) __ksym;
extern int capfence_path_rename(const struct path *old_dir, struct dentry *old_dentry,
				const struct path *new_dir, struct dentry *new_dentry,
				unsigned int flags) __ksym;
extern int capfence_path_chroot(void)
	__ksym;
extern int capfence_sb_mount(void)
	__ksym;
extern int capfence_sb_umount(void)
	__ksym;
extern int capfence_sb_remount(void)
	__ksym;
extern int capfence_sb_pivotroot(void)
	__ksym;
extern int capfence_move_mount(void)
	__ksym;
extern int capfence_inode_setxattr(void)
	__ksym;
extern int capfence_inode_removexattr(void)
	__ksym;
extern int capfence_inode_create(struct inode *dir) __ksym;
extern int capfence_inode_unlink(struct inode *dir) __ksym;
extern int capfence_mmap_file(struct file *file, unsigned long prot,
			      unsigned long flags) __ksym;
extern int capfence_file_mprotect(struct vm_area_struct *vma,
				  unsigned long prot) __ksym;
extern int capfence_bprm_creds_from_file(void)
	__ksym;
extern void capfence_seccomp_skipped(void)
	__ksym;
extern int capfence_uring_override_creds(const struct cred *new) __ksym;

char LICENSE[] SEC("license") = "GPL";

/*
 * Every verdict goes through cf_verdict(): 6.12's verifier refuses an LSM
 * program whose return value it cannot bound to [-MAX_ERRNO, 0] (6.1
 * accepted any), and a kfunc's int or the verdict read from the context is
 * unbounded. Out of range (never returned by capfence.ko) fails closed.
 */
#define CF_MAX_ERRNO 4095
#define CF_EACCES 13

static __always_inline int cf_verdict(int err)
{
	long e = err;

	/* test and return the same sign-extended register, in two signed tests */
	barrier_var(e);
	if (e > 0)
		return -CF_EACCES;
	barrier_var(e);
	if (e < -CF_MAX_ERRNO)
		return -CF_EACCES;
	return e;
}

SEC("lsm/cred_prepare")
int BPF_PROG(cf_cred_prepare, struct cred *new, const struct cred *old,
	     gfp_t gfp, int ret)
{
	return cf_verdict(ret ?: capfence_cred_prepare(new, old));
}

SEC("lsm/cred_alloc_blank")
int BPF_PROG(cf_cred_alloc_blank, struct cred *cred, gfp_t gfp, int ret)
{
	return cf_verdict(ret ?: capfence_cred_alloc_blank(cred));
}

SEC("lsm/cred_transfer")
int BPF_PROG(cf_cred_transfer, struct cred *new, const struct cred *old)
{
	capfence_cred_transfer(new, old);
	return 0;
}

SEC("lsm/cred_free")
int BPF_PROG(cf_cred_free, struct cred *cred)
{
	capfence_cred_free(cred);
	return 0;
}

/* capfence.ko reads the exec'ing task's seccomp filter itself */
SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(cf_bprm_creds_for_exec, struct linux_binprm *bprm, int ret)
{
	if (ret)
		return cf_verdict(ret);
	return cf_verdict(capfence_bprm_creds_for_exec(bprm));
}

SEC("lsm/socket_connect")
int BPF_PROG(cf_socket_connect, struct socket *sock, struct sockaddr *address,
	     int addrlen, int ret)
{
	return cf_verdict(ret ?: capfence_socket_connect(sock, address, addrlen));
}

SEC("lsm/socket_bind")
int BPF_PROG(cf_socket_bind, struct socket *sock, struct sockaddr *address,
	     int addrlen, int ret)
{
	return cf_verdict(ret ?: capfence_socket_bind(sock, address, addrlen));
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(cf_socket_sendmsg, struct socket *sock, struct msghdr *msg,
	     int size, int ret)
{
	return cf_verdict(ret ?: capfence_socket_sendmsg(sock, msg, size));
}

SEC("lsm/socket_recvmsg")
int BPF_PROG(cf_socket_recvmsg, struct socket *sock, struct msghdr *msg,
	     int size, int flags, int ret)
{
	return cf_verdict(ret ?: capfence_socket_recvmsg(sock, msg, size, flags));
}

SEC("lsm/socket_listen")
int BPF_PROG(cf_socket_listen, struct socket *sock, int backlog, int ret)
{
	return cf_verdict(ret ?: capfence_socket_listen(sock, backlog));
}

SEC("lsm/socket_accept")
int BPF_PROG(cf_socket_accept, struct socket *sock, struct socket *newsock,
	     int ret)
{
	return cf_verdict(ret ?: capfence_socket_accept(sock, newsock));
}

SEC("lsm/socket_getsockopt")
int BPF_PROG(cf_socket_getsockopt, struct socket *sock, int level, int optname,
	     int ret)
{
	return cf_verdict(ret ?: capfence_socket_getsockopt(sock, level, optname));
}

SEC("lsm/socket_setsockopt")
int BPF_PROG(cf_socket_setsockopt, struct socket *sock, int level, int optname,
	     int ret)
{
	return cf_verdict(ret ?: capfence_socket_setsockopt(sock, level, optname));
}

SEC("lsm/socket_create")
int BPF_PROG(cf_socket_create, int family, int type, int protocol, int kern,
	     int ret)
{
	return cf_verdict(ret ?: capfence_socket_create(family, type, protocol, kern));
}

SEC("lsm/sctp_bind_connect")
int BPF_PROG(cf_sctp_bind_connect, struct sock *sk, int optname,
	     struct sockaddr *address, int addrlen, int ret)
{
	return cf_verdict(ret ?: capfence_sctp_bind_connect(sk, optname, address, addrlen));
}

SEC("lsm/sk_clone_security")
int BPF_PROG(cf_sk_clone_security, const struct sock *sk, struct sock *newsk)
{
	capfence_sk_clone_security(sk, newsk);
	return 0;
}

SEC("lsm/sk_free_security")
int BPF_PROG(cf_sk_free_security, struct sock *sk)
{
	capfence_sk_free_security(sk);
	return 0;
}

SEC("lsm/sctp_sk_clone")
int BPF_PROG(cf_sctp_sk_clone, struct sctp_association *asoc, struct sock *sk,
	     struct sock *newsk)
{
	capfence_sctp_sk_clone(sk, newsk);
	return 0;
}

/* every packet queued to a socket, in softirq: the kfunc never sleeps */
SEC("lsm/socket_sock_rcv_skb")
int BPF_PROG(cf_socket_sock_rcv_skb, struct sock *sk, struct sk_buff *skb,
	     int ret)
{
	return cf_verdict(ret ?: capfence_socket_sock_rcv_skb(sk, skb));
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(cf_ptrace_access_check, struct task_struct *child,
	     unsigned int mode, int ret)
{
	return cf_verdict(ret ?: capfence_ptrace_access_check(child, mode));
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(cf_ptrace_traceme, struct task_struct *parent, int ret)
{
	return cf_verdict(ret ?: capfence_ptrace_traceme(parent));
}

/*
 * Every open goes to the kfunc: one that neither reads nor writes can
 * still modify (O_TRUNC, O_CREAT, access mode 3). Reading a field makes
 * clang emit the full struct file type, which libbpf needs to match the
 * kfunc's prototype.
 */
SEC("lsm/file_open")
int BPF_PROG(cf_file_open, struct file *file, int ret)
{
	struct mnt_namespace *ns;

	/*
	 * Not f_mode: a device opened with access mode 3 (ioctls only) has
	 * none at open, and needs fs:write like any other file.
	 */
	if (ret || !file->f_inode)
		return cf_verdict(ret);
	/*
	 * The mount namespace's id and change count, for the module's open
	 * memo: struct mnt_namespace is private to fs/, BTF knows its layout.
	 */
	ns = bpf_get_current_task_btf()->nsproxy->mnt_ns;
	return cf_verdict(capfence_file_open(file, ns->seq, ns->event));
}

SEC("lsm/file_permission")
int BPF_PROG(cf_file_permission, struct file *file, int mask, int ret)
{
	return cf_verdict(ret ?: capfence_file_permission(file, mask));
}

SEC("lsm/file_free_security")
int BPF_PROG(cf_file_free_security, struct file *file)
{
	capfence_file_free_security(file);
	return 0;
}

/*
 * libbpf matches a kfunc's prototype with the kernel's only when each
 * struct it points to is complete in this object's BTF, and clang emits
 * struct dentry completely only when a program uses the type: a CO-RE
 * existence check (always true on the target kernel) is the cheapest use.
 */
#define CF_DENTRY_TYPED bpf_core_type_exists(struct dentry)

/* fs:write beneath a path: create and remove (fspath.c) */
SEC("lsm/path_mknod")
int BPF_PROG(cf_path_mknod, const struct path *dir, struct dentry *dentry,
	     umode_t mode, unsigned int dev, int ret)
{
	if (ret || !CF_DENTRY_TYPED)
		return cf_verdict(ret);
	return cf_verdict(capfence_path_entry(dir, dentry));
}

SEC("lsm/path_mkdir")
int BPF_PROG(cf_path_mkdir, const struct path *dir, struct dentry *dentry,
	     umode_t mode, int ret)
{
	if (ret || !CF_DENTRY_TYPED)
		return cf_verdict(ret);
	return cf_verdict(capfence_path_entry(dir, dentry));
}

SEC("lsm/path_rmdir")
int BPF_PROG(cf_path_rmdir, const struct path *dir, struct dentry *dentry,
	     int ret)
{
	if (ret || !CF_DENTRY_TYPED)
		return cf_verdict(ret);
	return cf_verdict(capfence_path_entry(dir, dentry));
}

SEC("lsm/path_unlink")
int BPF_PROG(cf_path_unlink, const struct path *dir, struct dentry *dentry,
	     int ret)
{
	if (ret || !CF_DENTRY_TYPED)
		return cf_verdict(ret);
	return cf_verdict(capfence_path_entry(dir, dentry));
}

SEC("lsm/path_symlink")
int BPF_PROG(cf_path_symlink, const struct path *dir, struct dentry *dentry,
	     const char *old_name, int ret)
{
	if (ret || !CF_DENTRY_TYPED)
		return cf_verdict(ret);
	return cf_verdict(capfence_path_entry(dir, dentry));
}

/*
 * truncate (also ftruncate and O_TRUNC before 6.2), chmod, chown (kuid_t
 * and kgid_t are one u32 each)
 */
SEC("lsm/path_truncate")
int BPF_PROG(cf_path_truncate, const struct path *path, int ret)
{
	return cf_verdict(ret ?: capfence_path_attr(path));
}

/*
 * An ioctl can read or change a file without read() or write() (XFS
 * SWAPEXT, ext4 MOVE_EXT): a tracked file's grants are rechecked.
 */
SEC("lsm/file_ioctl")
int BPF_PROG(cf_file_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg, int ret)
{
	return cf_verdict(ret ?: capfence_file_ioctl(file));
}

SEC("lsm/file_ioctl_compat")
int BPF_PROG(cf_file_ioctl_compat, struct file *file, unsigned int cmd,
	     unsigned long arg, int ret)
{
	return cf_verdict(ret ?: capfence_file_ioctl(file));
}

/*
 * Since 6.2 ftruncate() and open(O_TRUNC) call file_truncate instead; the
 * CLI loads this program only where the kernel has the hook.
 */
SEC("lsm/file_truncate")
int BPF_PROG(cf_file_truncate, struct file *file, int ret)
{
	return cf_verdict(ret ?: capfence_file_truncate(file));
}

/*
 * Before 6.2 the file of an ftruncate() is seen only here (ATTR_FILE).
 * This is 6.1's signature; from 6.3 the hook takes an idmap first, and
 * there ftruncate() reaches file_truncate: the CLI loads this program only
 * where the kernel has no file_truncate.
 */
SEC("lsm/inode_setattr")
int BPF_PROG(cf_inode_setattr, struct dentry *dentry, struct iattr *attr,
	     int ret)
{
	return cf_verdict(ret ?: capfence_inode_setattr(attr));
}

SEC("lsm/path_chmod")
int BPF_PROG(cf_path_chmod, const struct path *path, umode_t mode, int ret)
{
	return cf_verdict(ret ?: capfence_path_attr(path));
}

SEC("lsm/path_chown")
int BPF_PROG(cf_path_chown, const struct path *path, __u32 uid, __u32 gid,
	     int ret)
{
	return cf_verdict(ret ?: capfence_path_attr(path));
}

/* new names: both ends */
SEC("lsm/path_link")
int BPF_PROG(cf_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	if (ret || !CF_DENTRY_TYPED)
		return cf_verdict(ret);
	return cf_verdict(capfence_path_link(old_dentry, new_dir, new_dentry));
}

SEC("lsm/path_rename")
int BPF_PROG(cf_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry,
	     unsigned int flags, int ret)
{
	if (ret || !CF_DENTRY_TYPED)
		return cf_verdict(ret);
	return cf_verdict(capfence_path_rename(old_dir, old_dentry, new_dir,
					      new_dentry, flags));
}

/* changes of the filesystem view */
SEC("lsm/path_chroot")
int BPF_PROG(cf_path_chroot, const struct path *path, int ret)
{
	return cf_verdict(ret ?: capfence_path_chroot());
}

SEC("lsm/sb_mount")
int BPF_PROG(cf_sb_mount, const char *dev_name, const struct path *path,
	     const char *type, unsigned long flags, void *data, int ret)
{
	return cf_verdict(ret ?: capfence_sb_mount());
}

SEC("lsm/sb_umount")
int BPF_PROG(cf_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	return cf_verdict(ret ?: capfence_sb_umount());
}

SEC("lsm/sb_remount")
int BPF_PROG(cf_sb_remount, struct super_block *sb, void *mnt_opts, int ret)
{
	return cf_verdict(ret ?: capfence_sb_remount());
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(cf_sb_pivotroot, const struct path *old_path,
	     const struct path *new_path, int ret)
{
	return cf_verdict(ret ?: capfence_sb_pivotroot());
}

SEC("lsm/move_mount")
int BPF_PROG(cf_move_mount, const struct path *from_path,
	     const struct path *to_path, int ret)
{
	return cf_verdict(ret ?: capfence_move_mount());
}

/* extended attributes: no mount to name the file by */
SEC("lsm/inode_setxattr")
int BPF_PROG(cf_inode_setxattr, struct user_namespace *mnt_userns,
	     struct dentry *dentry, const char *name, const void *value,
	     size_t size, int flags, int ret)
{
	return cf_verdict(ret ?: capfence_inode_setxattr());
}

SEC("lsm/inode_removexattr")
int BPF_PROG(cf_inode_removexattr, struct user_namespace *mnt_userns,
	     struct dentry *dentry, const char *name, int ret)
{
	return cf_verdict(ret ?: capfence_inode_removexattr());
}

/*
 * POSIX ACLs since 6.2: setxattr()/removexattr() of system.posix_acl_*
 * reach these hooks instead of the two above, and get the same answer.
 * The CLI loads them only where the kernel has the hooks; this object is
 * built against 6.1's types, which have no struct mnt_idmap.
 */
SEC("lsm/inode_set_acl")
int BPF_PROG(cf_inode_set_acl, void *idmap, struct dentry *dentry,
	     const char *acl_name, void *kacl, int ret)
{
	return cf_verdict(ret ?: capfence_inode_setxattr());
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(cf_inode_remove_acl, void *idmap, struct dentry *dentry,
	     const char *acl_name, int ret)
{
	return cf_verdict(ret ?: capfence_inode_removexattr());
}

/*
 * POSIX message queue names: mq_open(O_CREAT) and mq_unlink() reach only
 * these two hooks. Every create and unlink of the system passes here, so
 * only a name in an mqueue mount is handed on (the kfunc checks again);
 * reading the superblock also makes clang emit the full struct inode,
 * which libbpf needs to match the kfunc's prototype.
 */
#define CF_MQUEUE_MAGIC 0x19800202

SEC("lsm/inode_create")
int BPF_PROG(cf_inode_create, struct inode *dir, struct dentry *dentry,
	     umode_t mode, int ret)
{
	if (ret || dir->i_sb->s_magic != CF_MQUEUE_MAGIC)
		return cf_verdict(ret);
	return cf_verdict(capfence_inode_create(dir));
}

SEC("lsm/inode_unlink")
int BPF_PROG(cf_inode_unlink, struct inode *dir, struct dentry *dentry,
	     int ret)
{
	if (ret || dir->i_sb->s_magic != CF_MQUEUE_MAGIC)
		return cf_verdict(ret);
	return cf_verdict(capfence_inode_unlink(dir));
}

/* mappings of files opened under a capability (file.c) */
SEC("lsm/mmap_file")
int BPF_PROG(cf_mmap_file, struct file *file, unsigned long reqprot,
	     unsigned long prot, unsigned long flags, int ret)
{
	return cf_verdict(ret ?: capfence_mmap_file(file, prot, flags));
}

/*
 * Reading vm_file makes clang emit the full struct vm_area_struct, which
 * libbpf needs to match the kfunc's prototype; an anonymous mapping has
 * no file to recheck.
 */
SEC("lsm/file_mprotect")
int BPF_PROG(cf_file_mprotect, struct vm_area_struct *vma,
	     unsigned long reqprot, unsigned long prot, int ret)
{
	if (ret || !vma->vm_file)
		return cf_verdict(ret);
	return cf_verdict(capfence_file_mprotect(vma, prot));
}

/*
 * In begin_new_exec(), before the point of no return: the exec's own
 * files are rechecked, so a revoke during an exec fails it with EACCES
 * rather than killing the task at its mappings.
 */
SEC("lsm/bprm_creds_from_file")
int BPF_PROG(cf_bprm_creds_from_file, struct linux_binprm *bprm,
	     struct file *file, int ret)
{
	return cf_verdict(ret ?: capfence_bprm_creds_from_file());
}

/*
 * An io_uring request submitted under a personality its ring holds: the
 * credential it would run as must be the submitter's sandbox's own.
 */
SEC("lsm/uring_override_creds")
int BPF_PROG(cf_uring_override_creds, const struct cred *new, int ret)
{
	return cf_verdict(ret ?: capfence_uring_override_creds(new));
}

/*
 * After seccomp's check of every call of a task with a seccomp filter: a
 * call it skipped (-1) may be the epoch's refusal, which capfence.ko
 * records within the sandbox's budgets; any other call costs one compare.
 */
SEC("fexit/__secure_computing")
int BPF_PROG(cf_secure_computing, const struct seccomp_data *sd, int ret)
{
	if (ret == -1)
		capfence_seccomp_skipped();
	return 0;
}

/* bpf(2): a program that would skip every LSM is refused at load */
SEC("lsm/bpf")
int BPF_PROG(cf_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	return cf_verdict(ret ?: capfence_bpf(cmd, attr, size));
}
