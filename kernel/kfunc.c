// SPDX-License-Identifier: GPL-2.0
/*
 * The kfuncs the BPF-LSM programs in lsm/ call, one per hook: the
 * programs only forward their hook arguments, and each kfunc finds the
 * caller's bound state and hands the operation to the edge that gathers
 * its target (net.c, sock.c, file.c, fspath.c, borrow.c), which asks
 * decide.c. No decision is made here.
 *
 * Callers: only capfence's own programs. The kfunc set is offered to every
 * BPF-LSM program, so each kfunc first asks cf_ours(): the call must come
 * from the machine code of the programs of the links the module holds
 * (hooks.c), and the trampoline that runs a program puts its link's
 * cookie in current->bpf_ctx, which must be the one the module took at
 * attach. Any other program's call changes nothing, is answered 0 (no
 * opinion: it is that program's own verdict) and counted while the module
 * is attached (detached, every call is ignored: capfence's own run then
 * too). From 6.9 the verifier also
 * refuses a program of another type or on another hook than capfence's,
 * or loaded by a task the control plane would refuse (cf_kfunc_filter).
 * Arguments are the hook's own, checked by the verifier (trusted on 6.12);
 * none is an integer turned into a pointer.
 *
 * Locking and context: every function runs in BPF program context (RCU
 * read lock held, migration disabled, may be preempted), so nothing here
 * sleeps: allocations are GFP_ATOMIC and the fence is only ever taken as a
 * spinlock. capfence_cred_free() runs from an RCU callback.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/net.h>
#include <linux/ptrace.h>
#include <linux/seccomp.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <asm/asm.h>
#include <asm/syscall.h>
#include "borrow.h"
#include "cred.h"
#include "decide.h"
#include "file.h"
#include "fsmemo.h"
#include "fspath.h"
#include "kfunc.h"
#include "net.h"
#include "sock.h"
#include "sock_store.h"
#include "fence.h"
#include "stats.h"
#include "audit.h"
#include "epoch.h"
#include "sandbox.h"
#include "seccomp.h"
#include "compat.h"
#include "hooklist.h"

/* A call by another program than capfence's: counted, said once a while. */
static noinline void cf_foreign_call(const char *fn)
{
	cf_stats_foreign_call();
	pr_warn_ratelimited("capfence: %s called by a BPF program that is not capfence's (%s[%d]); ignored\n",
			    fn, current->comm, task_pid_nr(current));
}

/*
 * How far above a kfunc's stack pointer the run context of the program
 * that called it lies: the trampoline's frame, then the program's (at most
 * 512 bytes of BPF stack), then the kfunc's own.
 */
#define CF_RUN_CTX_REACH 1024

/*
 * Is the running BPF program one of capfence's, calling its one kfunc?
 * Cheap enough for every bound path. The kfunc's return address must lie
 * in the machine code of capfence's attached programs (hooks.c): a loader
 * that reads the cookie still cannot put its call there; and that program
 * must be run by its own hook's trampoline (cf_run_by()), not tail-called
 * from another hook's program. Nothing can
 * stand between the caller and the kfunc to change that address: this
 * file is built without ftrace (Kbuild: no fentry/fexit trampoline, which
 * also could read the run context) and the kfuncs are NOKPROBE (no
 * kretprobe). Then the cookie of the link being run against the
 * module's, so that the program runs on its own link. The run context
 * is current's while a program that sets none runs (6.1's raw tracepoint
 * programs), so it must also be on this stack just above this call (not
 * an interrupted task's, under an interrupt's program), and is used up by
 * the call (each of capfence's programs calls one kfunc once; the
 * trampoline writes it anew for every run): a program run inside this
 * kfunc finds it spent.
 */
/*
 * The image of the program of one of @kid's hooks that @ip lies in, or
 * NULL: one or two compares (at most CF_KFUNC_HOOKS_MAX), whatever the
 * number of hooks.
 */
static __always_inline const struct cf_image *
cf_image_of(int kid, unsigned long ip)
{
	const struct cf_image *img = READ_ONCE(cf_images) +
				     kid * CF_KFUNC_HOOKS_MAX;
	int i;

	for (i = 0; i < CF_KFUNC_HOOKS_MAX && img[i].start; i++)
		if (ip >= img[i].start && ip < img[i].end)
			return &img[i];
	return NULL;
}

/* how far past a function's start its trampoline's call returns to */
#define CF_FENTRY_REACH 16

/* Is @fp a frame pointer on this stack just above @below? */
static __always_inline bool cf_frame_above(unsigned long fp,
					   unsigned long below)
{
	return fp > below && fp - below < CF_RUN_CTX_REACH;
}

/*
 * Was the program that called this kfunc (the one of @img) run by its own
 * hook's trampoline? Walk up two frame pointers: the program's (the JIT
 * always keeps one), then the trampoline's (which keeps one too), whose
 * return address lies just after the call at the hook's entry that runs
 * it. A trampoline on capfence's program itself (an fexit program on it,
 * or bpftool prog profile) runs the program from there: its frame returns
 * into the program's entry, and the frame above it is the hook's
 * trampoline's. A tail call into capfence's program from another program
 * runs in that program's frame, under its trampoline, on its hook:
 * another hook with the same argument types passes the kernel's own tail
 * call check.
 */
static __always_inline bool cf_run_by(const struct cf_image *img)
{
	unsigned long fp = (unsigned long)__builtin_frame_address(0);
	unsigned long prog_fp, tramp_fp, ret;

	prog_fp = *(unsigned long *)fp;
	if (!cf_frame_above(prog_fp, fp))
		return false;
	tramp_fp = *(unsigned long *)prog_fp;
	if (!cf_frame_above(tramp_fp, prog_fp))
		return false;
	ret = *(unsigned long *)(tramp_fp + sizeof(long));
	if (ret > img->start && ret - img->start <= CF_FENTRY_REACH) {
		fp = tramp_fp;
		tramp_fp = *(unsigned long *)fp;
		if (!cf_frame_above(tramp_fp, fp))
			return false;
		ret = *(unsigned long *)(tramp_fp + sizeof(long));
	}
	return ret > img->hook && ret - img->hook <= CF_FENTRY_REACH;
}

#define cf_ours(fn) cf_ours_id(CF_KFUNC_ID_##fn)
#define cf_ours_id(kid) \
	__cf_ours(__func__, kid, (unsigned long)__builtin_return_address(0))
static __always_inline bool __cf_ours(const char *fn, int kid, unsigned long ip)
{
	struct bpf_run_ctx *rc = current->bpf_ctx;
	u64 want = cf_attach_cookie();
	const struct cf_image *img;
	struct bpf_tramp_run_ctx *t;

	/*
	 * Not attached: between the links' creation and HOOKS_ATTACH, or
	 * after HOOKS_DETACH until the links go, capfence's own programs run
	 * with a cookie the module does not hold yet or any more. No task is
	 * bound then; every call is ignored, and none is called foreign.
	 */
	if (unlikely(!want))
		return false;
	img = cf_image_of(kid, ip);
	if (likely(img && cf_run_by(img) && rc &&
		   (unsigned long)rc - current_stack_pointer < CF_RUN_CTX_REACH)) {
		t = container_of(rc, struct bpf_tramp_run_ctx, run_ctx);
		if (likely(t->bpf_cookie == want)) {
			t->bpf_cookie = 0;
			return true;
		}
	}
	cf_foreign_call(fn);
	return false;
}

__diag_push();
__diag_ignore_all("-Wmissing-prototypes",
		  "kfuncs are called from BPF programs and found through BTF");

noinline int capfence_cred_prepare(struct cred *new, const struct cred *old)
{
	if (!cf_ours(cred_prepare))
		return 0;
	return cf_cred_prepare(new, old, GFP_ATOMIC);
}

noinline int capfence_cred_alloc_blank(struct cred *cred)
{
	if (!cf_ours(cred_alloc_blank))
		return 0;
	return cf_cred_alloc_blank(cred);
}

noinline void capfence_cred_transfer(struct cred *new, const struct cred *old)
{
	if (cf_ours(cred_transfer))
		cf_cred_transfer(new, old);
}

/* every credential freed in the system */
noinline void capfence_cred_free(struct cred *cred)
{
	if (cf_cred_maybe(cred) && cf_ours(cred_free))
		cf_cred_free(cred);
}

/* the exec'ing task's seccomp filter is read by the module (seccomp.c) */
noinline int capfence_bprm_creds_for_exec(struct linux_binprm *bprm)
{
	if (!cf_ours(bprm_creds_for_exec))
		return 0;
	return cf_cred_bind_exec(bprm);
}

/* Out of line: the kfuncs' unbound path (the filter test) needs no frame. */
static noinline int cf_connect_hook(const struct cred *cred,
				    struct socket *sock,
				    struct sockaddr *address, int addrlen)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_connect(e, sock, address, addrlen) : 0;
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

	if (!cf_cred_maybe(cred) || !cf_ours(socket_connect))
		return 0;
	return cf_connect_hook(cred, sock, address, addrlen);
}

static noinline int cf_bind_hook(const struct cred *cred, struct socket *sock,
				 struct sockaddr *address, int addrlen)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_bind(e, sock, address, addrlen) : 0;
}

noinline int capfence_socket_bind(struct socket *sock,
				  struct sockaddr *address, int addrlen)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(socket_bind))
		return 0;
	return cf_bind_hook(cred, sock, address, addrlen);
}

static noinline int cf_sendmsg_hook(const struct cred *cred,
				    struct socket *sock, struct msghdr *msg)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_sendmsg(e, sock, msg) : 0;
}

/* every send in the system: the unbound path is the filter test */
noinline int capfence_socket_sendmsg(struct socket *sock, struct msghdr *msg,
				     int size)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(socket_sendmsg))
		return 0;
	return cf_sendmsg_hook(cred, sock, msg);
}

static noinline int cf_sock_use_hook(const struct cred *cred,
				     struct socket *sock)
{
	struct cf_cred *e = cf_subject(cred);

	return e && sock->sk ? cf_sock_revalidate(sock->sk) : 0;
}

/* every receive in the system: the same */
noinline int capfence_socket_recvmsg(struct socket *sock, struct msghdr *msg,
				     int size, int flags)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(socket_recvmsg))
		return 0;
	return cf_sock_use_hook(cred, sock);
}

/* TCP_ZEROCOPY_RECEIVE receives through getsockopt, not recvmsg */
noinline int capfence_socket_getsockopt(struct socket *sock, int level,
					int optname)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(socket_getsockopt))
		return 0;
	return cf_sock_use_hook(cred, sock);
}

static noinline int cf_setsockopt_hook(const struct cred *cred,
				       struct socket *sock, int level,
				       int optname)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_setsockopt(e, sock, level, optname) : 0;
}

noinline int capfence_socket_setsockopt(struct socket *sock, int level,
					int optname)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(socket_setsockopt))
		return 0;
	return cf_setsockopt_hook(cred, sock, level, optname);
}

noinline int capfence_socket_accept(struct socket *sock,
				    struct socket *newsock)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(socket_accept))
		return 0;
	return cf_sock_use_hook(cred, sock);
}

static noinline int cf_listen_hook(const struct cred *cred,
				   struct socket *sock)
{
	struct cf_cred *e = cf_subject(cred);
	int err;

	if (!e)
		return 0;
	err = cf_net_listen(e, sock);
	return err ?: (sock->sk ? cf_sock_revalidate(sock->sk) : 0);
}

noinline int capfence_socket_listen(struct socket *sock, int backlog)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(socket_listen))
		return 0;
	return cf_listen_hook(cred, sock);
}

static noinline int cf_create_hook(const struct cred *cred, int family,
				   int type, int protocol)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_create(e, family, type, protocol) : 0;
}

noinline int capfence_socket_create(int family, int type, int protocol,
				    int kern)
{
	const struct cred *cred = current_cred();

	/* sockets the kernel makes for itself are not the task's */
	if (kern || !cf_cred_maybe(cred) || !cf_ours(socket_create))
		return 0;
	return cf_create_hook(cred, family, type, protocol);
}

static noinline int cf_sctp_hook(const struct cred *cred, struct sock *sk,
				 int optname, struct sockaddr *address,
				 int addrlen)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_sctp(e, sk, optname, address, addrlen) : 0;
}

noinline int capfence_sctp_bind_connect(struct sock *sk, int optname,
					struct sockaddr *address, int addrlen)
{
	const struct cred *cred;

	/* an address change a peer asks for in softirq is no task's act */
	if (!in_task())
		return 0;
	cred = current_cred();
	if (!cf_cred_maybe(cred) || !cf_ours(sctp_bind_connect))
		return 0;
	return cf_sctp_hook(cred, sk, optname, address, addrlen);
}

/* every socket cloned or freed in the system: no call while none is tracked */
noinline void capfence_sk_clone_security(const struct sock *sk,
					 struct sock *newsk)
{
	if (cf_nr_tracked_socks() && cf_ours(sk_clone_security))
		cf_sock_clone(sk, newsk);
}

/* an accepted or peeled-off SCTP association: a socket of its own */
noinline void capfence_sctp_sk_clone(struct sock *sk, struct sock *newsk)
{
	if (cf_nr_tracked_socks() && cf_ours(sctp_sk_clone))
		cf_sock_clone(sk, newsk);
}

noinline void capfence_sk_free_security(struct sock *sk)
{
	if (cf_nr_tracked_socks() && cf_ours(sk_free_security))
		cf_sock_free(sk);
}

/*
 * Every packet the stack queues to a socket, in softirq (sock.c): a socket
 * connected or bound under a grant that was revoked or fenced takes no
 * more. Any other socket pays the socket filter, one multiply and one load.
 */
noinline int capfence_socket_sock_rcv_skb(struct sock *sk, struct sk_buff *skb)
{
	if (!cf_sock_maybe(sk) || !cf_ours(socket_sock_rcv_skb))
		return 0;
	return cf_sock_rcv(sk, skb);
}

static noinline int cf_ptrace_hook(const struct cred *cred,
				   struct task_struct *child, unsigned int mode)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_borrow_attach(e, child, mode) : 0;
}

/* a bound tracer: ptrace attach, /proc/PID/mem, process_vm_*, pidfd_getfd */
noinline int capfence_ptrace_access_check(struct task_struct *child,
					  unsigned int mode)
{
	const struct cred *cred = current_cred();

	if (!(mode & PTRACE_MODE_ATTACH) || !cf_cred_maybe(cred) ||
	    !cf_ours(ptrace_access_check))
		return 0;
	return cf_ptrace_hook(cred, child, mode);
}

/* PTRACE_TRACEME: @parent becomes the tracer of the calling task */
noinline int capfence_ptrace_traceme(struct task_struct *parent)
{
	const struct cred *cred = __task_cred(parent);

	if (!cf_cred_maybe(cred) || !cf_ours(ptrace_traceme))
		return 0;
	return cf_ptrace_hook(cred, current, 0);
}

/*
 * @ns_id and @ns_event: the opener's mount namespace's id and the count
 * of changes of its tree, for the open memo (fsmemo.c).
 */
noinline int capfence_file_open(struct file *file, u64 ns_id, u64 ns_event)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(file_open))
		return 0;
	/* a tail call: the arguments go on in registers, no frame */
	return cf_fs_file_open(cred, file, ns_id, ns_event);
}

/*
 * A socket used as a file: sendfile() and splice() reach a socket through
 * its file operations, not through sendmsg.
 */
static noinline int cf_sock_file_hook(struct file *file)
{
	const struct cred *cred = current_cred();
	struct socket *sock;

	/* the file type (one compare) before the credential table */
	sock = sock_from_file(file);
	if (!sock || !sock->sk || !cf_cred_maybe(cred) || !cf_subject(cred))
		return 0;
	return cf_sock_revalidate(sock->sk);
}

/* every read and write in the system: no call while nothing is tracked */
noinline int capfence_file_permission(struct file *file, int mask)
{
	int err = 0;

	if (!cf_nr_tracked_files() && !cf_nr_tracked_socks())
		return 0;
	if (!cf_ours(file_permission))
		return 0;
	if (cf_nr_tracked_files())
		err = cf_file_revalidate(file, mask);
	if (!err && cf_nr_tracked_socks())
		err = cf_sock_file_hook(file);
	return err;
}

/* every file freed in the system: the same */
noinline void capfence_file_free_security(struct file *file)
{
	if (cf_nr_tracked_files() && cf_ours(file_free_security))
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

	if (!cf_cred_maybe(cred) || !cf_ours(path_entry))
		return 0;
	return cf_fs_entry(cred, dir, dentry);
}

noinline int capfence_path_attr(const struct path *path)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(path_attr))
		return 0;
	return cf_fs_attr(cred, path);
}

/*
 * ftruncate() and open(O_TRUNC) since 6.2 (CF_HAVE_FILE_TRUNCATE): a file
 * opened under a capability rechecks its write grant whoever truncates it
 * (a passed descriptor), then the caller is judged as at path_truncate.
 */
noinline int capfence_file_truncate(struct file *file)
{
	const struct cred *cred = current_cred();
	int err = 0;

	if (!cf_nr_tracked_files() && !cf_cred_maybe(cred))
		return 0;
	if (!cf_ours(file_truncate))
		return 0;
	if (cf_nr_tracked_files())
		err = cf_file_revalidate(file, MAY_WRITE);
	if (err || !cf_cred_maybe(cred))
		return err;
	return cf_fs_attr(cred, &file->f_path);
}

/*
 * ioctl() and its 32-bit path: a file opened under a capability rechecks
 * its grants whoever calls (cf_file_ioctl()). No call while no file is
 * tracked.
 */
noinline int capfence_file_ioctl(struct file *file)
{
	if (!cf_nr_tracked_files() || !cf_ours(file_ioctl))
		return 0;
	return cf_file_ioctl(file);
}

/*
 * Before 6.2 ftruncate() reaches only path_truncate, which has no file:
 * the file comes with the attribute change (ATTR_FILE) at inode_setattr.
 * A file opened under a capability rechecks its write grant, whoever
 * truncates it. No call while no file is tracked.
 */
noinline int capfence_inode_setattr(struct iattr *attr)
{
	if (!cf_nr_tracked_files() || !(attr->ia_valid & ATTR_FILE) ||
	    !attr->ia_file || !cf_ours(inode_setattr))
		return 0;
	return cf_file_revalidate(attr->ia_file, MAY_WRITE);
}

noinline int capfence_path_link(struct dentry *old_dentry,
				const struct path *new_dir,
				struct dentry *new_dentry)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(path_link))
		return 0;
	return cf_fs_link(cred, old_dentry, new_dir, new_dentry);
}

noinline int capfence_path_rename(const struct path *old_dir,
				  struct dentry *old_dentry,
				  const struct path *new_dir,
				  struct dentry *new_dentry, unsigned int flags)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(path_rename))
		return 0;
	return cf_fs_rename(cred, old_dir, old_dentry, new_dir, new_dentry,
			    flags);
}

/* inline: cf_ours_id() judges the kfunc's own return address */
static __always_inline int cf_view(const char *what, int kid)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours_id(kid))
		return 0;
	return cf_fs_view(cred, what);
}

noinline int capfence_path_chroot(void)
{
	return cf_view("chroot", CF_KFUNC_ID_path_chroot);
}

noinline int capfence_sb_mount(void)
{
	return cf_view("mount", CF_KFUNC_ID_sb_mount);
}

noinline int capfence_sb_umount(void)
{
	return cf_view("umount", CF_KFUNC_ID_sb_umount);
}

noinline int capfence_sb_remount(void)
{
	return cf_view("remount", CF_KFUNC_ID_sb_remount);
}

noinline int capfence_sb_pivotroot(void)
{
	return cf_view("pivot_root", CF_KFUNC_ID_sb_pivotroot);
}

noinline int capfence_move_mount(void)
{
	return cf_view("move_mount", CF_KFUNC_ID_move_mount);
}

/*
 * Also the kfuncs of inode_set_acl and inode_remove_acl (6.2 and later,
 * CF_HAVE_INODE_SET_ACL): POSIX ACL changes by setxattr() and
 * removexattr() reach those hooks instead, and get the same answer.
 */
noinline int capfence_inode_setxattr(void)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(inode_setxattr))
		return 0;
	return cf_fs_xattr(cred, "setxattr");
}

noinline int capfence_inode_removexattr(void)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(inode_removexattr))
		return 0;
	return cf_fs_xattr(cred, "removexattr");
}

/*
 * Every create and unlink in the system: a name in an mqueue mount is
 * judged (fspath.c); any other reached path_mknod or path_unlink first.
 */
noinline int capfence_inode_create(struct inode *dir)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(inode_create))
		return 0;
	return cf_fs_mqueue(cred, dir, "mq_create");
}

noinline int capfence_inode_unlink(struct inode *dir)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred) || !cf_ours(inode_unlink))
		return 0;
	return cf_fs_mqueue(cred, dir, "mq_unlink");
}

/* every mmap() in the system: no call while no file is tracked */
noinline int capfence_mmap_file(struct file *file, unsigned long prot,
				unsigned long flags)
{
	if (!cf_nr_tracked_files() || !file || !cf_ours(mmap_file))
		return 0;
	return cf_file_map(file, prot, (flags & MAP_TYPE) != MAP_PRIVATE,
			   "mmap");
}

noinline int capfence_file_mprotect(struct vm_area_struct *vma,
				    unsigned long prot)
{
	/*
	 * Taking permissions away reaches nothing new: a program's loader
	 * making its relocated pages read-only is never refused (it would
	 * die of it after its exec's point of no return). PROT_READ,
	 * _WRITE and _EXEC are VM_READ, _WRITE and _EXEC.
	 */
	if (!cf_nr_tracked_files() || !vma->vm_file ||
	    !(prot & ~vma->vm_flags & (PROT_READ | PROT_WRITE | PROT_EXEC)) ||
	    !cf_ours(file_mprotect))
		return 0;
	return cf_file_map(vma->vm_file, prot, vma->vm_flags & VM_SHARED,
			   "mprotect");
}

/*
 * The last hook before an exec's point of no return (begin_new_exec()):
 * the files the exec opened under a read grant are rechecked here, where
 * a refusal is the execve's EACCES (file.c). Every exec in the system: no
 * call while no exec file waits.
 */
noinline int capfence_bprm_creds_from_file(void)
{
	if (!cf_nr_tracked_files() || !cf_file_exec_pending() || !cf_ours(bprm_creds_from_file))
		return 0;
	return cf_file_exec_commit();
}

/*
 * An io_uring request submitted under a registered personality, before it
 * runs as @new (borrow.c). The same credential, or two unbound ones (the
 * counting filter says so for nearly every unbound task), pass here.
 */
noinline int capfence_uring_override_creds(const struct cred *new)
{
	const struct cred *cred = current_cred();

	if (new == cred || (!cf_cred_maybe(cred) && !cf_cred_maybe(new)) ||
	    !cf_ours(uring_override_creds))
		return 0;
	return cf_borrow_personality(cred, new);
}

/*
 * Every bpf(2) command: a program that could skip the LSMs' hooks, or
 * capfence's programs on their trampolines (another BPF-LSM program), is
 * not loaded while capfence enforces (decide.c). The attributes are the
 * kernel's own copy, the one the load uses.
 */
noinline int capfence_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	if (cmd != BPF_PROG_LOAD || !cf_ours(bpf))
		return 0;
	return cf_bpf_refuse_skipper(cmd, attr, true);
}

/*
 * After every call of a task with a seccomp filter; the program calls
 * only when seccomp skipped the call (it returned -1). A bound task's
 * call is recorded when the epoch's own program refused it.
 */
noinline void capfence_seccomp_skipped(void)
{
	const struct cred *cred = current_cred();

	if (cf_cred_maybe(cred) && cf_ours(seccomp_skipped))
		cf_syscall_skipped(cred);
}

const struct cf_hook cf_hooks[CF_NR_HOOKS] = {
#define CF_KFUNC(fn)
#define CF_HOOK(hook, fn) \
	{ "bpf_lsm_" #hook, capfence_##fn, CF_KFUNC_ID_##fn, \
	  BPF_PROG_TYPE_LSM, BPF_LSM_MAC },
#define CF_FEXIT(func, fn) \
	{ #func, capfence_##fn, CF_KFUNC_ID_##fn, \
	  BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT },
#include "hook_defs.h"
#undef CF_FEXIT
#undef CF_HOOK
#undef CF_KFUNC
};

__diag_pop();

#define CF_KFUNC(fn) NOKPROBE_SYMBOL(capfence_##fn)
#define CF_HOOK(hook, fn)
#define CF_FEXIT(func, fn)
#include "hook_defs.h"
#undef CF_FEXIT
#undef CF_HOOK
#undef CF_KFUNC_UNTRUSTED
#undef CF_KFUNC

/*
 * Hook arguments are trusted pointers (CF_KF_TRUSTED, compat.h) except on
 * the hooks of CF_KFUNC_UNTRUSTED (6.12's untrusted_lsm_hooks).
 */
BTF_KFUNCS_START(capfence_kfunc_ids)
#define CF_KFUNC(fn) BTF_ID_FLAGS(func, capfence_##fn, CF_KF_TRUSTED)
#define CF_KFUNC_UNTRUSTED(fn) BTF_ID_FLAGS(func, capfence_##fn)
#define CF_HOOK(hook, fn)
#define CF_FEXIT(func, fn)
#include "hook_defs.h"
#undef CF_FEXIT
#undef CF_HOOK
#undef CF_KFUNC_UNTRUSTED
#undef CF_KFUNC
BTF_KFUNCS_END(capfence_kfunc_ids)

#ifdef CF_HAVE_KFUNC_FILTER
/*
 * The verifier asks before it lets @prog call one of these kfuncs: only a
 * program of the type and attach type of one of capfence's hooks, on that
 * hook (the set is offered to every tracing program), loaded by a task the control plane would obey
 * (unbound, with CAP_MAC_ADMIN in the initial user namespace). Which
 * kfunc of which hook is the cookie's to say at run time: a module's BTF
 * ids are relocated when it loads, so @kfunc_id is not this file's.
 * Process context (the loader's bpf()); attach_func_name is not yet set
 * when the verifier first looks (check_cfg), which only costs that look.
 */
static int cf_kfunc_filter(const struct bpf_prog *prog, u32 kfunc_id)
{
	const char *name = prog->aux->attach_func_name;
	int i;

	if (!name || !cf_current_control_plane())
		return -EACCES;
	for (i = 0; i < CF_NR_HOOKS; i++)
		if (prog->type == cf_hooks[i].type &&
		    prog->expected_attach_type == cf_hooks[i].attach &&
		    !strcmp(name, cf_hooks[i].name))
			return 0;
	return -EACCES;
}
#endif

static const struct btf_kfunc_id_set capfence_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &capfence_kfunc_ids,
#ifdef CF_HAVE_KFUNC_FILTER
	.filter = cf_kfunc_filter,
#endif
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
