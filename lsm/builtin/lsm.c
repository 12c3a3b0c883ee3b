// SPDX-License-Identifier: GPL-2.0
/*
 * capfence built into the kernel: the LSM front end of the same core as
 * capfence.ko. Where the module's BPF-LSM programs call its kfuncs
 * (kernel/kfunc.c), the LSM framework calls the hooks here, which find
 * the caller's bound state in the credential blob (cred_store.h), keep
 * tracked files and sockets in their blobs (file_store.h, sock_store.h)
 * and hand the operation to the same edges (net.c, sock.c, file.c, fspath.c,
 * borrow.c) and cred.c. No decision is made here.
 *
 * The hooks are registered at security_init(), before any state can
 * exist; the state and the genetlink family come up at device_initcall,
 * and until then every hook answers 0 (no credential has an entry, no
 * file or socket is tracked). The hooks are always attached: there are
 * no links to hold, so HOOKS_ATTACH finds them attached and HOOKS_DETACH
 * is refused.
 *
 * Locking and context: each hook runs in the context of its LSM hook;
 * like the kfuncs they replace, none sleeps (allocations are GFP_ATOMIC
 * in the core) and lookups are made under RCU, which the hooks that may
 * be called without it take here. cred_free runs from an RCU callback.
 * The credential slot is written under cred.c's cf_cred_lock.
 */
#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/lsm_hooks.h>
#include <linux/mman.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/ptrace.h>
#include <net/sock.h>
#include <uapi/linux/lsm.h>
#include <uapi/linux/capfence.h>
#include "../../fs/mount.h"
#include "audit.h"
#include "borrow.h"
#include "class.h"
#include "cred.h"
#include "decide.h"
#include "fence.h"
#include "file.h"
#include "fspath.h"
#include "hooks.h"
#include "net.h"
#include "netlink.h"
#include "sock.h"
#include "sock_store.h"
#include "version.h"

/* until <uapi/linux/lsm.h> allocates capfence's id */
#ifndef LSM_ID_CAPFENCE
#define LSM_ID_CAPFENCE		114
#endif

struct lsm_blob_sizes capfence_blob_sizes __ro_after_init = {
	.lbs_cred = sizeof(struct cf_cred __rcu *),
	.lbs_file = sizeof(struct cf_file_grants),
	.lbs_sock = sizeof(struct cf_sock __rcu *),
};

static const struct lsm_id capfence_lsmid = {
	.name = "capfence",
	.id = LSM_ID_CAPFENCE,
};

static bool capfence_enabled __ro_after_init;

/**
 * cf_cred_store_add() - publish @e in its cred's blob
 * @e: new entry
 *
 * Caller holds cf_cred_lock.
 *
 * Return: false, publishing nothing, when the cred has an entry already.
 */
bool cf_cred_store_add(struct cf_cred *e)
{
	struct cf_cred __rcu **slot = cf_cred_slot(e->cred);

	if (rcu_access_pointer(*slot))
		return false;
	rcu_assign_pointer(*slot, e);
	return true;
}

/**
 * cf_cred_store_del() - unpublish @e
 * @e: an entry cf_cred_store_add() published
 *
 * Caller holds cf_cred_lock; readers may hold @e until a grace period
 * ends.
 *
 * Return: false when @e was removed already.
 */
bool cf_cred_store_del(struct cf_cred *e)
{
	struct cf_cred __rcu **slot = cf_cred_slot(e->cred);

	if (rcu_access_pointer(*slot) != e)
		return false;
	RCU_INIT_POINTER(*slot, NULL);
	return true;
}

/**
 * cf_cred_store_exit() - nothing to release: built in, never unloaded
 * @release: unused
 */
void cf_cred_store_exit(void (*release)(struct cf_cred *e))
{
}

/**
 * cf_hooks_attach() - the hooks of a built-in LSM are always attached
 * @fds: unused
 * @n: unused
 * @extack: the reason
 *
 * Return: -EALREADY, as for a module whose hooks are attached.
 */
int cf_hooks_attach(const u32 *fds, int n, struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG(extack, "capfence is built into this kernel: its hooks are always attached");
	return -EALREADY;
}

/**
 * cf_hooks_detach() - refused: built-in hooks cannot be removed
 * @extack: the reason
 *
 * Return: -EOPNOTSUPP.
 */
int cf_hooks_detach(struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG(extack, "capfence is built into this kernel: its hooks cannot be detached");
	return -EOPNOTSUPP;
}

/**
 * cf_hooks_exit() - nothing held
 */
void cf_hooks_exit(void)
{
}

/* the bound state of the calling task, or NULL; caller holds RCU */
static struct cf_cred *cf_current_subject(void)
{
	const struct cred *cred = current_cred();

	return cf_cred_maybe(cred) ? cf_subject(cred) : NULL;
}

static int capfence_cred_prepare(struct cred *new, const struct cred *old,
				 gfp_t gfp)
{
	int err;

	if (!cf_cred_maybe(old))
		return 0;
	rcu_read_lock();
	err = cf_cred_prepare(new, old, gfp);
	rcu_read_unlock();
	return err;
}

static int capfence_cred_alloc_blank(struct cred *cred, gfp_t gfp)
{
	int err;

	rcu_read_lock();
	err = cf_cred_alloc_blank(cred);
	rcu_read_unlock();
	return err;
}

static void capfence_cred_transfer(struct cred *new, const struct cred *old)
{
	rcu_read_lock();
	cf_cred_transfer(new, old);
	rcu_read_unlock();
}

static void capfence_cred_free(struct cred *cred)
{
	if (!cf_cred_maybe(cred))
		return;
	rcu_read_lock();
	cf_cred_free(cred);
	rcu_read_unlock();
}

static int capfence_bprm_creds_for_exec(struct linux_binprm *bprm)
{
	int err;

	if (!cf_cred_maybe(bprm->cred))
		return 0;
	rcu_read_lock();
	err = cf_cred_bind_exec(bprm);
	rcu_read_unlock();
	return err;
}

/*
 * The socket hooks: the usual case, a task capfence does not mediate,
 * costs one load of its credential's slot.
 */
#define CF_SUBJECT_HOOK(call)					\
({								\
	struct cf_cred *e;					\
	int err = 0;						\
								\
	if (cf_cred_maybe(current_cred())) {			\
		rcu_read_lock();				\
		e = cf_current_subject();			\
		if (e)						\
			err = (call);				\
		rcu_read_unlock();				\
	}							\
	err;							\
})

static int capfence_socket_connect(struct socket *sock,
				   struct sockaddr *address, int addrlen)
{
	return CF_SUBJECT_HOOK(cf_net_connect(e, sock, address, addrlen));
}

static int capfence_socket_bind(struct socket *sock, struct sockaddr *address,
				int addrlen)
{
	return CF_SUBJECT_HOOK(cf_net_bind(e, sock, address, addrlen));
}

static int capfence_socket_sendmsg(struct socket *sock, struct msghdr *msg,
				   int size)
{
	return CF_SUBJECT_HOOK(cf_net_sendmsg(e, sock, msg));
}

static int cf_sock_use(struct socket *sock)
{
	return CF_SUBJECT_HOOK(sock->sk ? cf_sock_revalidate(sock->sk) : 0);
}

static int capfence_socket_recvmsg(struct socket *sock, struct msghdr *msg,
				   int size, int flags)
{
	return cf_sock_use(sock);
}

/* TCP_ZEROCOPY_RECEIVE receives through getsockopt, not recvmsg */
static int capfence_socket_getsockopt(struct socket *sock, int level,
				      int optname)
{
	return cf_sock_use(sock);
}

static int capfence_socket_setsockopt(struct socket *sock, int level,
				      int optname)
{
	return CF_SUBJECT_HOOK(cf_net_setsockopt(e, sock, level, optname));
}

static int capfence_socket_accept(struct socket *sock, struct socket *newsock)
{
	return cf_sock_use(sock);
}

static int cf_listen(struct cf_cred *e, struct socket *sock)
{
	int err = cf_net_listen(e, sock);

	return err ?: (sock->sk ? cf_sock_revalidate(sock->sk) : 0);
}

static int capfence_socket_listen(struct socket *sock, int backlog)
{
	return CF_SUBJECT_HOOK(cf_listen(e, sock));
}

static int capfence_socket_create(int family, int type, int protocol,
				  int kern)
{
	/* sockets the kernel makes for itself are not the task's */
	if (kern)
		return 0;
	return CF_SUBJECT_HOOK(cf_net_create(e, family, type, protocol));
}

static int capfence_sctp_bind_connect(struct sock *sk, int optname,
				      struct sockaddr *address, int addrlen)
{
	/* an address change a peer asks for in softirq is no task's act */
	if (!in_task())
		return 0;
	return CF_SUBJECT_HOOK(cf_net_sctp(e, sk, optname, address, addrlen));
}

/* every socket cloned or freed: no call while none is tracked */
static void capfence_sk_clone_security(const struct sock *sk,
				       struct sock *newsk)
{
	if (cf_nr_tracked_socks())
		cf_sock_clone(sk, newsk);
}

static void capfence_sctp_sk_clone(struct sctp_association *asoc,
				   struct sock *sk, struct sock *newsk)
{
	if (cf_nr_tracked_socks())
		cf_sock_clone(sk, newsk);
}

static void capfence_sk_free_security(struct sock *sk)
{
	if (cf_nr_tracked_socks())
		cf_sock_free(sk);
}

/* every packet queued to a socket, in softirq (sock.c) */
static int capfence_socket_sock_rcv_skb(struct sock *sk, struct sk_buff *skb)
{
	int err;

	if (!cf_sock_maybe(sk))
		return 0;
	rcu_read_lock();
	err = cf_sock_rcv(sk, skb);
	rcu_read_unlock();
	return err;
}

static int cf_ptrace(const struct cred *cred, struct task_struct *child,
		     unsigned int mode)
{
	struct cf_cred *e;
	int err = 0;

	rcu_read_lock();
	e = cf_subject(cred);
	if (e)
		err = cf_borrow_attach(e, child, mode);
	rcu_read_unlock();
	return err;
}

/* a bound tracer: ptrace attach, /proc/PID/mem, process_vm_*, pidfd_getfd */
static int capfence_ptrace_access_check(struct task_struct *child,
					unsigned int mode)
{
	const struct cred *cred = current_cred();

	if (!(mode & PTRACE_MODE_ATTACH) || !cf_cred_maybe(cred))
		return 0;
	return cf_ptrace(cred, child, mode);
}

/* PTRACE_TRACEME: @parent becomes the tracer of the calling task */
static int capfence_ptrace_traceme(struct task_struct *parent)
{
	const struct cred *cred;
	int err = 0;

	rcu_read_lock();
	cred = __task_cred(parent);
	if (cf_cred_maybe(cred) && cf_subject(cred))
		err = cf_borrow_attach(cf_subject(cred), current, 0);
	rcu_read_unlock();
	return err;
}

/* An io_uring request run under a personality its ring holds */
#ifdef CONFIG_BPF_SYSCALL
/*
 * A BPF program that would skip every LSM's hooks is not loaded. A BPF-LSM
 * program is: its int return, bounded by the verifier, reaches this LSM's
 * list as any other LSM's would, and cannot end it before capfence.
 */
static int capfence_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return cf_bpf_refuse_skipper(cmd, attr, false);
}
#endif

static int capfence_uring_override_creds(const struct cred *new)
{
	const struct cred *cred = current_cred();

	if (new == cred || (!cf_cred_maybe(cred) && !cf_cred_maybe(new)))
		return 0;
	return cf_borrow_personality(cred, new);
}

/*
 * A call of current that its seccomp filters skipped (an errno, a trap,
 * a kill): the epoch's refusal is recorded here, as the module records it
 * after __secure_computing() returns. Every other task pays one load.
 */
static void capfence_seccomp_skipped(int syscall)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return;
	rcu_read_lock();
	cf_syscall_skipped(cred);
	rcu_read_unlock();
}

/*
 * The opener's mount namespace's id and the count of changes of its
 * tree, for the open memo (fsmemo.c).
 */
static int capfence_file_open(struct file *file)
{
	const struct cred *cred = current_cred();
	struct mnt_namespace *ns;
	int err;

	if (!cf_cred_maybe(cred))
		return 0;
	ns = current->nsproxy ? current->nsproxy->mnt_ns : NULL;
	rcu_read_lock();
	err = cf_fs_file_open(cred, file, ns ? ns->seq : 0,
			      ns ? READ_ONCE(ns->event) : 0);
	rcu_read_unlock();
	return err;
}

/* a socket used as a file: sendfile() and splice() */
static int cf_sock_file(struct file *file)
{
	struct socket *sock = sock_from_file(file);

	if (!sock || !sock->sk)
		return 0;
	return CF_SUBJECT_HOOK(cf_sock_revalidate(sock->sk));
}

/* every read and write: no call while nothing is tracked */
static int capfence_file_permission(struct file *file, int mask)
{
	int err = 0;

	if (!cf_nr_tracked_files() && !cf_nr_tracked_socks())
		return 0;
	rcu_read_lock();
	if (cf_nr_tracked_files())
		err = cf_file_revalidate(file, mask);
	rcu_read_unlock();
	if (!err && cf_nr_tracked_socks())
		err = cf_sock_file(file);
	return err;
}

static void capfence_file_free_security(struct file *file)
{
	if (cf_nr_tracked_files())
		cf_file_free(file);
}

/* fs:write beneath a path, and the task's filesystem view (fspath.c) */
#define CF_FS_HOOK(call)					\
({								\
	const struct cred *cred = current_cred();		\
	int err = 0;						\
								\
	if (cf_cred_maybe(cred)) {				\
		rcu_read_lock();				\
		err = (call);					\
		rcu_read_unlock();				\
	}							\
	err;							\
})

static int capfence_path_mknod(const struct path *dir, struct dentry *dentry,
			       umode_t mode, unsigned int dev)
{
	return CF_FS_HOOK(cf_fs_entry(cred, dir, dentry));
}

static int capfence_path_mkdir(const struct path *dir, struct dentry *dentry,
			       umode_t mode)
{
	return CF_FS_HOOK(cf_fs_entry(cred, dir, dentry));
}

static int capfence_path_rmdir(const struct path *dir, struct dentry *dentry)
{
	return CF_FS_HOOK(cf_fs_entry(cred, dir, dentry));
}

static int capfence_path_unlink(const struct path *dir, struct dentry *dentry)
{
	return CF_FS_HOOK(cf_fs_entry(cred, dir, dentry));
}

static int capfence_path_symlink(const struct path *dir,
				 struct dentry *dentry, const char *old_name)
{
	return CF_FS_HOOK(cf_fs_entry(cred, dir, dentry));
}

static int capfence_path_truncate(const struct path *path)
{
	return CF_FS_HOOK(cf_fs_attr(cred, path));
}

static int capfence_path_chmod(const struct path *path, umode_t mode)
{
	return CF_FS_HOOK(cf_fs_attr(cred, path));
}

static int capfence_path_chown(const struct path *path, kuid_t uid, kgid_t gid)
{
	return CF_FS_HOOK(cf_fs_attr(cred, path));
}

/* ioctl(): a file opened under a capability rechecks its grants */
static int capfence_file_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	int err;

	if (!cf_nr_tracked_files())
		return 0;
	rcu_read_lock();
	err = cf_file_ioctl(file);
	rcu_read_unlock();
	return err;
}

/*
 * ftruncate() and open(O_TRUNC): a file opened under a capability
 * rechecks its write grant whoever truncates it (a passed descriptor),
 * then the caller is judged as at path_truncate.
 */
static int capfence_file_truncate(struct file *file)
{
	int err = 0;

	if (cf_nr_tracked_files()) {
		rcu_read_lock();
		err = cf_file_revalidate(file, MAY_WRITE);
		rcu_read_unlock();
	}
	return err ?: CF_FS_HOOK(cf_fs_attr(cred, &file->f_path));
}

static int capfence_path_link(struct dentry *old_dentry,
			      const struct path *new_dir,
			      struct dentry *new_dentry)
{
	return CF_FS_HOOK(cf_fs_link(cred, old_dentry, new_dir, new_dentry));
}

static int capfence_path_rename(const struct path *old_dir,
				struct dentry *old_dentry,
				const struct path *new_dir,
				struct dentry *new_dentry, unsigned int flags)
{
	return CF_FS_HOOK(cf_fs_rename(cred, old_dir, old_dentry, new_dir,
				       new_dentry, flags));
}

static int capfence_path_chroot(const struct path *path)
{
	return CF_FS_HOOK(cf_fs_view(cred, "chroot"));
}

static int capfence_sb_mount(const char *dev_name, const struct path *path,
			     const char *type, unsigned long flags, void *data)
{
	return CF_FS_HOOK(cf_fs_view(cred, "mount"));
}

static int capfence_sb_umount(struct vfsmount *mnt, int flags)
{
	return CF_FS_HOOK(cf_fs_view(cred, "umount"));
}

static int capfence_sb_remount(struct super_block *sb, void *mnt_opts)
{
	return CF_FS_HOOK(cf_fs_view(cred, "remount"));
}

static int capfence_sb_pivotroot(const struct path *old_path,
				 const struct path *new_path)
{
	return CF_FS_HOOK(cf_fs_view(cred, "pivot_root"));
}

static int capfence_move_mount(const struct path *from_path,
			       const struct path *to_path)
{
	return CF_FS_HOOK(cf_fs_view(cred, "move_mount"));
}

static int capfence_inode_setxattr(struct mnt_idmap *idmap,
				   struct dentry *dentry, const char *name,
				   const void *value, size_t size, int flags)
{
	return CF_FS_HOOK(cf_fs_xattr(cred, "setxattr"));
}

static int capfence_inode_removexattr(struct mnt_idmap *idmap,
				      struct dentry *dentry, const char *name)
{
	return CF_FS_HOOK(cf_fs_xattr(cred, "removexattr"));
}

/* POSIX ACL changes reach these hooks instead, with the same answer */
static int capfence_inode_set_acl(struct mnt_idmap *idmap,
				  struct dentry *dentry, const char *acl_name,
				  struct posix_acl *kacl)
{
	return CF_FS_HOOK(cf_fs_xattr(cred, "setxattr"));
}

static int capfence_inode_remove_acl(struct mnt_idmap *idmap,
				     struct dentry *dentry,
				     const char *acl_name)
{
	return CF_FS_HOOK(cf_fs_xattr(cred, "removexattr"));
}

/* POSIX message queue names: mq_open(O_CREAT), mq_unlink() (fspath.c) */
static int capfence_inode_create(struct inode *dir, struct dentry *dentry,
				 umode_t mode)
{
	return CF_FS_HOOK(cf_fs_mqueue(cred, dir, "mq_create"));
}

static int capfence_inode_unlink(struct inode *dir, struct dentry *dentry)
{
	return CF_FS_HOOK(cf_fs_mqueue(cred, dir, "mq_unlink"));
}

/* mappings of files opened under a capability (file.c) */
static int capfence_mmap_file(struct file *file, unsigned long reqprot,
			      unsigned long prot, unsigned long flags)
{
	int err;

	if (!cf_nr_tracked_files() || !file)
		return 0;
	rcu_read_lock();
	err = cf_file_map(file, prot, (flags & MAP_TYPE) != MAP_PRIVATE,
			  "mmap");
	rcu_read_unlock();
	return err;
}

static int capfence_file_mprotect(struct vm_area_struct *vma,
				  unsigned long reqprot, unsigned long prot)
{
	int err;

	/* taking permissions away reaches nothing new (kfunc.c) */
	if (!cf_nr_tracked_files() || !vma->vm_file ||
	    !(prot & ~vma->vm_flags & (PROT_READ | PROT_WRITE | PROT_EXEC)))
		return 0;
	rcu_read_lock();
	err = cf_file_map(vma->vm_file, prot, vma->vm_flags & VM_SHARED,
			  "mprotect");
	rcu_read_unlock();
	return err;
}

/* the last hook before an exec's point of no return (file.c) */
static int capfence_bprm_creds_from_file(struct linux_binprm *bprm,
					 const struct file *file)
{
	int err;

	if (!cf_nr_tracked_files() || !cf_file_exec_pending())
		return 0;
	rcu_read_lock();
	err = cf_file_exec_commit();
	rcu_read_unlock();
	return err;
}

static struct security_hook_list capfence_hooks[] __ro_after_init = {
	LSM_HOOK_INIT(cred_prepare, capfence_cred_prepare),
	LSM_HOOK_INIT(cred_alloc_blank, capfence_cred_alloc_blank),
	LSM_HOOK_INIT(cred_transfer, capfence_cred_transfer),
	LSM_HOOK_INIT(cred_free, capfence_cred_free),
	LSM_HOOK_INIT(bprm_creds_for_exec, capfence_bprm_creds_for_exec),
	LSM_HOOK_INIT(socket_connect, capfence_socket_connect),
	LSM_HOOK_INIT(socket_bind, capfence_socket_bind),
	LSM_HOOK_INIT(socket_sendmsg, capfence_socket_sendmsg),
	LSM_HOOK_INIT(socket_recvmsg, capfence_socket_recvmsg),
	LSM_HOOK_INIT(socket_listen, capfence_socket_listen),
	LSM_HOOK_INIT(socket_accept, capfence_socket_accept),
	LSM_HOOK_INIT(socket_getsockopt, capfence_socket_getsockopt),
	LSM_HOOK_INIT(socket_setsockopt, capfence_socket_setsockopt),
	LSM_HOOK_INIT(socket_create, capfence_socket_create),
	LSM_HOOK_INIT(sctp_bind_connect, capfence_sctp_bind_connect),
	LSM_HOOK_INIT(sk_clone_security, capfence_sk_clone_security),
	LSM_HOOK_INIT(sk_free_security, capfence_sk_free_security),
	LSM_HOOK_INIT(sctp_sk_clone, capfence_sctp_sk_clone),
	LSM_HOOK_INIT(socket_sock_rcv_skb, capfence_socket_sock_rcv_skb),
	LSM_HOOK_INIT(ptrace_access_check, capfence_ptrace_access_check),
	LSM_HOOK_INIT(ptrace_traceme, capfence_ptrace_traceme),
	LSM_HOOK_INIT(uring_override_creds, capfence_uring_override_creds),
#ifdef CONFIG_BPF_SYSCALL
	LSM_HOOK_INIT(bpf, capfence_bpf),
#endif
	LSM_HOOK_INIT(seccomp_skipped, capfence_seccomp_skipped),
	LSM_HOOK_INIT(file_open, capfence_file_open),
	LSM_HOOK_INIT(file_permission, capfence_file_permission),
	LSM_HOOK_INIT(file_free_security, capfence_file_free_security),
	LSM_HOOK_INIT(path_mknod, capfence_path_mknod),
	LSM_HOOK_INIT(path_mkdir, capfence_path_mkdir),
	LSM_HOOK_INIT(path_rmdir, capfence_path_rmdir),
	LSM_HOOK_INIT(path_unlink, capfence_path_unlink),
	LSM_HOOK_INIT(path_symlink, capfence_path_symlink),
	LSM_HOOK_INIT(path_truncate, capfence_path_truncate),
	LSM_HOOK_INIT(file_truncate, capfence_file_truncate),
	LSM_HOOK_INIT(file_ioctl, capfence_file_ioctl),
	LSM_HOOK_INIT(file_ioctl_compat, capfence_file_ioctl),
	LSM_HOOK_INIT(path_chmod, capfence_path_chmod),
	LSM_HOOK_INIT(path_chown, capfence_path_chown),
	LSM_HOOK_INIT(path_link, capfence_path_link),
	LSM_HOOK_INIT(path_rename, capfence_path_rename),
	LSM_HOOK_INIT(path_chroot, capfence_path_chroot),
	LSM_HOOK_INIT(sb_mount, capfence_sb_mount),
	LSM_HOOK_INIT(sb_umount, capfence_sb_umount),
	LSM_HOOK_INIT(sb_remount, capfence_sb_remount),
	LSM_HOOK_INIT(sb_pivotroot, capfence_sb_pivotroot),
	LSM_HOOK_INIT(move_mount, capfence_move_mount),
	LSM_HOOK_INIT(inode_setxattr, capfence_inode_setxattr),
	LSM_HOOK_INIT(inode_removexattr, capfence_inode_removexattr),
	LSM_HOOK_INIT(inode_set_acl, capfence_inode_set_acl),
	LSM_HOOK_INIT(inode_remove_acl, capfence_inode_remove_acl),
	LSM_HOOK_INIT(inode_create, capfence_inode_create),
	LSM_HOOK_INIT(inode_unlink, capfence_inode_unlink),
	LSM_HOOK_INIT(mmap_file, capfence_mmap_file),
	LSM_HOOK_INIT(file_mprotect, capfence_file_mprotect),
	LSM_HOOK_INIT(bprm_creds_from_file, capfence_bprm_creds_from_file),
};

static int __init capfence_lsm_init(void)
{
	security_add_hooks(capfence_hooks, ARRAY_SIZE(capfence_hooks),
			   &capfence_lsmid);
	capfence_enabled = true;
	return 0;
}

DEFINE_LSM(capfence) = {
	.name = "capfence",
	.init = capfence_lsm_init,
	.blobs = &capfence_blob_sizes,
};

/*
 * The state and the control plane, once workqueues, the crypto API and
 * genetlink are up. Failing here leaves capfence without a control
 * plane: nothing can be bound, every hook answers 0.
 */
static int __init capfence_core_init(void)
{
	int err;

	if (!capfence_enabled)
		return 0;
	/* in capfence_init()'s order (main.c): the records' workqueue first */
	err = cf_class_init() ?: cf_audit_init() ?: cf_cred_init() ?:
	      cf_file_init() ?: cf_sock_init();
	if (!err)
		err = cf_netlink_init();
	if (err) {
		pr_err("capfence: initialization failed (%d)\n", err);
		return err;
	}
	mutex_lock(&cf_mutex);
	cf_attached_set(1);
	cf_creds_reopen();
	mutex_unlock(&cf_mutex);
	pr_info("capfence: version %s built in, hooks attached\n",
		CAPFENCE_VERSION);
	return 0;
}
device_initcall(capfence_core_init);
