// SPDX-License-Identifier: GPL-2.0
/*
 * The kfuncs the BPF-LSM programs in lsm/ call, one per hook. All policy is
 * here; the programs only forward their hook arguments.
 *
 * Locking and context: every function runs in BPF program context (RCU
 * read lock held, migration disabled, may be preempted), so nothing here
 * sleeps: allocations are GFP_ATOMIC and the fence is only ever taken as a
 * spinlock. capfence_cred_free() runs from an RCU callback.
 */
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include "capfence.h"

__diag_push();
__diag_ignore_all("-Wmissing-prototypes",
		  "kfuncs are called from BPF programs and found through BTF");

noinline int capfence_cred_prepare(struct cred *new, const struct cred *old)
{
	return cf_cred_prepare(new, old, GFP_ATOMIC);
}

noinline int capfence_cred_alloc_blank(struct cred *cred)
{
	return cf_cred_alloc_blank(cred);
}

noinline void capfence_cred_transfer(struct cred *new, const struct cred *old)
{
	cf_cred_transfer(new, old);
}

noinline void capfence_cred_free(struct cred *cred)
{
	cf_cred_free(cred);
}

noinline int capfence_bprm_creds_for_exec(struct linux_binprm *bprm)
{
	return cf_cred_bind_exec(bprm);
}

static int cf_sock_target(struct socket *sock, struct sockaddr *address,
			  int addrlen, struct cf_target *t)
{
	if (!sock || !sock->sk || !address ||
	    (sock->sk->sk_family != AF_INET && sock->sk->sk_family != AF_INET6))
		return -ENOENT;
	if (address->sa_family == AF_INET &&
	    addrlen >= (int)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (void *)address;

		t->family = 4;
		memcpy(t->addr, &sin->sin_addr, 4);
		t->port = ntohs(sin->sin_port);
		return 0;
	}
	if (address->sa_family == AF_INET6 &&
	    addrlen >= SIN6_LEN_RFC2133) {
		const struct sockaddr_in6 *sin6 = (void *)address;

		/* a v4-mapped address reaches the IPv4 host: judge it so */
		if (ipv6_addr_v4mapped(&sin6->sin6_addr)) {
			t->family = 4;
			memcpy(t->addr, &sin6->sin6_addr.s6_addr32[3], 4);
		} else {
			t->family = 6;
			memcpy(t->addr, &sin6->sin6_addr, 16);
		}
		t->port = ntohs(sin6->sin6_port);
		return 0;
	}
	/* AF_UNSPEC disconnects; malformed lengths fail in the stack */
	return -ENOENT;
}

/*
 * The calling task's bound state. The kfunc has already found the
 * credential in the filter (cf_cred_maybe), so this goes to the table.
 */
static struct cf_cred *cf_subject(const struct cred *cred)
{
	struct cf_cred *e = cf_cred_find(cred);

	return e && e->epoch ? e : NULL;
}

/* Out of line: the kfuncs' unbound path (the filter test) needs no frame. */
static noinline int cf_sock_hook(const struct cred *cred, u8 class_id,
				 struct socket *sock, struct sockaddr *address,
				 int addrlen)
{
	struct cf_cred *e = cf_subject(cred);
	struct cf_target t;

	if (!e)
		return 0;
	t = (struct cf_target){ .class_id = class_id };
	if (cf_sock_target(sock, address, addrlen, &t))
		return 0;
	return cf_exercise(e, &t, NULL);
}

/*
 * The usual case, a task capfence does not mediate, costs one counter read
 * of the credential filter in the kfunc itself, which then needs no stack
 * frame; everything else is a tail call.
 */
noinline int capfence_socket_connect(struct socket *sock,
				     struct sockaddr *address, int addrlen)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_sock_hook(cred, CAPFENCE_CLASS_NET_CONNECT, sock, address,
			    addrlen);
}

noinline int capfence_socket_bind(struct socket *sock,
				  struct sockaddr *address, int addrlen)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_sock_hook(cred, CAPFENCE_CLASS_NET_BIND, sock, address,
			    addrlen);
}

noinline int capfence_file_open(struct file *file)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_fs_file_open(cred, file);
}

/* every read and write in the system: no call while no file is tracked */
noinline int capfence_file_permission(struct file *file, int mask)
{
	return cf_nr_tracked_files() ? cf_file_revalidate(file, mask) : 0;
}

/* every file freed in the system: the same */
noinline void capfence_file_free_security(struct file *file)
{
	if (cf_nr_tracked_files())
		cf_file_free(file);
}

/*
 * fs:write beneath a path and the task's filesystem view (fspath.c), and
 * the mappings of tracked files (file.c). Every task crosses these hooks:
 * an unbound one pays the credential filter, or the tracked-file count.
 */
noinline int capfence_path_entry(const struct path *dir, struct dentry *dentry)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_fs_entry(cred, dir, dentry);
}

noinline int capfence_path_attr(const struct path *path)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_fs_attr(cred, path);
}

noinline int capfence_path_link(struct dentry *old_dentry,
				const struct path *new_dir,
				struct dentry *new_dentry)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_fs_link(cred, old_dentry, new_dir, new_dentry);
}

noinline int capfence_path_rename(const struct path *old_dir,
				  struct dentry *old_dentry,
				  const struct path *new_dir,
				  struct dentry *new_dentry, unsigned int flags)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_fs_rename(cred, old_dir, old_dentry, new_dir, new_dentry,
			    flags);
}

static noinline int cf_view(const char *what)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_fs_view(cred, what);
}

noinline int capfence_path_chroot(void)
{
	return cf_view("chroot");
}

noinline int capfence_sb_mount(void)
{
	return cf_view("mount");
}

noinline int capfence_sb_umount(void)
{
	return cf_view("umount");
}

noinline int capfence_sb_remount(void)
{
	return cf_view("remount");
}

noinline int capfence_sb_pivotroot(void)
{
	return cf_view("pivot_root");
}

noinline int capfence_move_mount(void)
{
	return cf_view("move_mount");
}

noinline int capfence_inode_setxattr(void)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_fs_xattr(cred, "setxattr");
}

noinline int capfence_inode_removexattr(void)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_fs_xattr(cred, "removexattr");
}

/* every mmap() in the system: no call while no file is tracked */
noinline int capfence_mmap_file(struct file *file, unsigned long prot,
				unsigned long flags)
{
	if (!cf_nr_tracked_files() || !file)
		return 0;
	return cf_file_map(file, prot, (flags & MAP_TYPE) != MAP_PRIVATE,
			   "mmap");
}

noinline int capfence_file_mprotect(struct vm_area_struct *vma,
				    unsigned long prot)
{
	if (!cf_nr_tracked_files() || !vma->vm_file)
		return 0;
	return cf_file_map(vma->vm_file, prot, vma->vm_flags & VM_SHARED,
			   "mprotect");
}

__diag_pop();

BTF_SET8_START(capfence_kfunc_ids)
BTF_ID_FLAGS(func, capfence_cred_prepare)
BTF_ID_FLAGS(func, capfence_cred_alloc_blank)
BTF_ID_FLAGS(func, capfence_cred_transfer)
BTF_ID_FLAGS(func, capfence_cred_free)
BTF_ID_FLAGS(func, capfence_bprm_creds_for_exec)
BTF_ID_FLAGS(func, capfence_socket_connect)
BTF_ID_FLAGS(func, capfence_socket_bind)
BTF_ID_FLAGS(func, capfence_file_open)
BTF_ID_FLAGS(func, capfence_file_permission)
BTF_ID_FLAGS(func, capfence_file_free_security)
BTF_ID_FLAGS(func, capfence_path_entry)
BTF_ID_FLAGS(func, capfence_path_attr)
BTF_ID_FLAGS(func, capfence_path_link)
BTF_ID_FLAGS(func, capfence_path_rename)
BTF_ID_FLAGS(func, capfence_path_chroot)
BTF_ID_FLAGS(func, capfence_sb_mount)
BTF_ID_FLAGS(func, capfence_sb_umount)
BTF_ID_FLAGS(func, capfence_sb_remount)
BTF_ID_FLAGS(func, capfence_sb_pivotroot)
BTF_ID_FLAGS(func, capfence_move_mount)
BTF_ID_FLAGS(func, capfence_inode_setxattr)
BTF_ID_FLAGS(func, capfence_inode_removexattr)
BTF_ID_FLAGS(func, capfence_mmap_file)
BTF_ID_FLAGS(func, capfence_file_mprotect)
BTF_SET8_END(capfence_kfunc_ids)

static const struct btf_kfunc_id_set capfence_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &capfence_kfunc_ids,
};

/**
 * cf_kfunc_init() - register the kfuncs for BPF_PROG_TYPE_LSM programs
 *
 * 6.1 cannot unregister a kfunc set; the BPF programs that use it hold a
 * reference on this module, which keeps it loaded while they exist.
 *
 * Return: 0 or an error from the BTF core.
 */
int cf_kfunc_init(void)
{
	return register_btf_kfunc_id_set(BPF_PROG_TYPE_LSM, &capfence_kfunc_set);
}
